#pragma once
// What tbserve answers, without the sockets: a request's method and target
// in, an HTTP status, headers and body out. The server (server.hpp) only
// carries these over HTTP, so every answer can be tested in-process.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tbforge/base/status.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/serve/query.hpp"

namespace tbf::serve {

struct HttpAnswer {
    int status = 200;
    std::string content_type;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;  // Cache-Control and others
    // The header value of `name`, or "" (for tests).
    std::string header(std::string_view name) const;
};

// The files of the web explorer, read into memory once at start-up so a
// request never touches the disk nor a path outside the folder.
class WebFiles {
public:
    struct File {
        std::string content_type;
        std::string body;
    };
    // At most kMaxFiles files and kMaxBytes bytes in all, else an error.
    static constexpr std::size_t kMaxFiles = 512;
    static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

    WebFiles() = default;  // no explorer: "/" answers 404
    // Every regular file under `dir`, by its path relative to `dir` ("a/b.js").
    static Result<WebFiles> load(const std::string& dir);

    const File* find(std::string_view path) const;
    std::size_t size() const { return files_.size(); }

private:
    std::map<std::string, File, std::less<>> files_;
};

class Service {
public:
    // `tb` must outlive the Service; `table_count` is reported by /health.
    Service(const probe::Tablebase& tb, WebFiles web, std::size_t table_count);

    // GET and HEAD are answered; other methods get 405. Never throws for
    // bad input: errors are 4xx answers with a JSON body {"error": "..."}.
    HttpAnswer answer(std::string_view method, std::string_view target) const;

private:
    HttpAnswer api_answer(const Query& query) const;

    const probe::Tablebase* tb_;
    WebFiles web_;
    std::size_t table_count_;
};

// {"error": message} with `status`, uncached.
HttpAnswer error_answer(int status, std::string_view message);

}  // namespace tbf::serve
