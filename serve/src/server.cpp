#include "tbforge/serve/server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace tbf::serve {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kListenBacklog = 256;

// The request's start on the worker thread serving it (a worker serves one
// request at a time): the log line's duration.
thread_local Clock::time_point request_start{};

// The target as it may appear in a log line: bounded, printable.
std::string loggable(const std::string& text) {
    constexpr std::size_t kMax = 300;
    std::string out;
    for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        out += c >= 0x21 && c <= 0x7e ? static_cast<char>(c) : '?';
    }
    if (text.size() > kMax) out += "...";
    return out.empty() ? "-" : out;
}

void log_request(const httplib::Request& req, const httplib::Response& res) {
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
    char took[32] = "-";
    if (request_start != Clock::time_point{}) {
        const double ms =
            std::chrono::duration<double, std::milli>(Clock::now() - request_start).count();
        std::snprintf(took, sizeof took, "%.2fms", ms);
        request_start = {};
    }
    const std::string line = std::string(when) + ' ' + loggable(req.remote_addr) + ' ' +
                             loggable(req.method) + ' ' + loggable(req.target) + ' ' +
                             std::to_string(res.status) + ' ' + std::to_string(res.body.size()) +
                             "B " + took + '\n';
    // One write per line keeps lines of concurrent workers whole.
    std::fputs(line.c_str(), stderr);
}

const char* reason(int status) {
    switch (status) {
        case 400: return "bad request";
        case 404: return "not found";
        case 405: return "method not allowed";
        case 413: return "request body too large";
        case 414: return "request target too long";
        case 416: return "range not satisfiable";
        case 500: return "internal error";
        default: return "error";
    }
}

}  // namespace

// httplib listens with a backlog of 5 connections (a build-time constant
// of the library); bursts of new connections beyond it wait for a SYN
// retransmission (1 s). Listening again on the bound socket raises it.
class ListeningServer : public httplib::Server {
public:
    void raise_backlog(int backlog) {
        const auto sock = svr_sock_.load();
        if (sock != INVALID_SOCKET) ::listen(sock, backlog);
    }
};

struct Server::Impl {
    const Service* service;
    ServerOptions options;
    ListeningServer http;
    std::atomic<bool> stopped{false};
};

Server::Server(const Service& service, ServerOptions options)
    : impl_(std::make_unique<Impl>()) {
    impl_->service = &service;
    impl_->options = std::move(options);
    httplib::Server& http = impl_->http;
    const std::size_t threads = impl_->options.threads;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http.set_read_timeout(impl_->options.read_timeout_seconds, 0);
    http.set_write_timeout(impl_->options.write_timeout_seconds, 0);
    http.set_keep_alive_timeout(impl_->options.keep_alive_seconds);
    http.set_keep_alive_max_count(impl_->options.keep_alive_requests);
    // GET requests carry no body; a client sending one gets 413 past this.
    http.set_payload_max_length(4096);
    http.set_tcp_nodelay(true);

    const Service* svc = impl_->service;
    auto handle = [svc](const httplib::Request& req, httplib::Response& res) {
        const HttpAnswer a = svc->answer(req.method, req.target);
        res.status = a.status;
        for (const auto& [key, value] : a.headers) res.set_header(key, value);
        res.set_content(a.body, a.content_type);
    };
    http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
        request_start = Clock::now();
        return httplib::Server::HandlerResponse::Unhandled;
    });
    http.Get(".*", handle);
    http.Post(".*", handle);
    http.Put(".*", handle);
    http.Patch(".*", handle);
    http.Delete(".*", handle);
    http.Options(".*", handle);
    // Errors the library answers itself (malformed request line, 413, 414)
    // get a JSON body too.
    http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return;
        const HttpAnswer a = error_answer(res.status, reason(res.status));
        for (const auto& [key, value] : a.headers) res.set_header(key, value);
        res.set_content(a.body, a.content_type);
    });
    http.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
            const HttpAnswer a = error_answer(500, "internal error");
            res.status = a.status;
            res.set_content(a.body, a.content_type);
        });
    if (impl_->options.log_requests) http.set_logger(log_request);
}

Server::~Server() = default;

Result<int> Server::bind() {
    const ServerOptions& o = impl_->options;
    int port = o.port;
    if (port == 0) {
        port = impl_->http.bind_to_any_port(o.host);
        if (port <= 0) return io_error("cannot listen on " + o.host);
    } else if (!impl_->http.bind_to_port(o.host, port)) {
        return io_error("cannot listen on " + o.host + ":" + std::to_string(port));
    }
    impl_->http.raise_backlog(kListenBacklog);
    return port;
}

Status Server::run() {
    // listen_after_bind() also returns false when stop() closed the socket.
    if (!impl_->http.listen_after_bind() && !impl_->stopped) {
        return io_error("the listening socket failed");
    }
    return {};
}

void Server::stop() {
    impl_->stopped = true;
    impl_->http.stop();
}

}  // namespace tbf::serve
