#pragma once
// The HTTP server of tbserve: a Service carried over HTTP/1.1 by
// cpp-httplib, on a fixed pool of worker threads, with limits so that no
// client can hold a worker for long (docs/serve.md, "Limits").

#include <cstddef>
#include <memory>
#include <string>

#include "tbforge/base/status.hpp"
#include "tbforge/serve/service.hpp"

namespace tbf::serve {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 9000;  // 0: any free port (bind() tells which)
    // Worker threads: each serves one connection at a time, so this many
    // clients are served at once and the others wait for a worker.
    std::size_t threads = 32;
    int read_timeout_seconds = 5;   // a request must arrive within this
    int write_timeout_seconds = 5;  // an answer must leave within this
    int keep_alive_seconds = 2;     // an idle connection is closed after this
    std::size_t keep_alive_requests = 1000;  // then the connection is closed
    bool log_requests = true;  // one line per request on standard error
};

class Server {
public:
    // `service` must outlive the Server.
    Server(const Service& service, ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds the listening socket; the port bound (the one asked for, or a
    // free one for port 0). IoError if the address cannot be bound.
    Result<int> bind();
    // Serves until stop(); call after bind().
    Status run();
    // Thread-safe; run() returns once the workers have finished.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tbf::serve
