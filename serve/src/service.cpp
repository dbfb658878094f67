#include "tbforge/serve/service.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "tbforge/base/json.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/serve/lichess.hpp"
#include "tbforge/serve/query.hpp"

namespace tbf::serve {

namespace {

// Values of a database never change for a position (tables are only ever
// added), so answers may be cached for a day; errors are not cached, since
// a missing table may be added later.
constexpr const char* kCacheAnswer = "public, max-age=86400";
constexpr const char* kCacheNever = "no-store";
constexpr const char* kJson = "application/json";

std::string_view content_type_of(std::string_view path) {
    const auto dot = path.rfind('.');
    const std::string_view ext = dot == std::string_view::npos ? "" : path.substr(dot + 1);
    if (ext == "html") return "text/html; charset=utf-8";
    if (ext == "js" || ext == "mjs") return "text/javascript; charset=utf-8";
    if (ext == "css") return "text/css; charset=utf-8";
    if (ext == "json" || ext == "map") return "application/json";
    if (ext == "svg") return "image/svg+xml";
    if (ext == "png") return "image/png";
    if (ext == "ico") return "image/x-icon";
    if (ext == "txt") return "text/plain; charset=utf-8";
    return "application/octet-stream";
}

int http_status_of(const Status& status) {
    switch (status.code()) {
        case StatusCode::InvalidArgument: return 400;
        case StatusCode::NotFound: return 404;
        default: return 500;
    }
}

HttpAnswer json_answer(const Json& body) {
    HttpAnswer a;
    a.content_type = kJson;
    a.body = to_json_line(body);
    a.headers = {{"Cache-Control", kCacheAnswer}, {"Access-Control-Allow-Origin", "*"}};
    return a;
}

}  // namespace

std::string HttpAnswer::header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
        if (key == name) return value;
    }
    return {};
}

HttpAnswer error_answer(int status, std::string_view message) {
    HttpAnswer a;
    a.status = status;
    a.content_type = kJson;
    a.body = to_json_line(Json{{"error", std::string(message)}});
    a.headers = {{"Cache-Control", kCacheNever}, {"Access-Control-Allow-Origin", "*"}};
    return a;
}

Result<WebFiles> WebFiles::load(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return not_found("web folder " + dir + " does not exist");
    WebFiles web;
    std::size_t bytes = 0;
    fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec);
    if (ec) return io_error("cannot read web folder " + dir + ": " + ec.message());
    for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
        if (ec) return io_error("cannot read web folder " + dir + ": " + ec.message());
        if (!it->is_regular_file(ec)) continue;
        const std::string relative = fs::relative(it->path(), dir, ec).generic_string();
        if (ec) return io_error("cannot read " + it->path().string() + ": " + ec.message());
        std::ifstream in(it->path(), std::ios::binary);
        std::ostringstream body;
        body << in.rdbuf();
        if (!in) return io_error("cannot read " + it->path().string());
        bytes += body.str().size();
        if (web.files_.size() + 1 > kMaxFiles || bytes > kMaxBytes) {
            return invalid_argument("web folder " + dir + " holds more than " +
                                    std::to_string(kMaxFiles) + " files or " +
                                    std::to_string(kMaxBytes >> 20) + " MiB");
        }
        web.files_[relative] = File{std::string(content_type_of(relative)), body.str()};
    }
    return web;
}

const WebFiles::File* WebFiles::find(std::string_view path) const {
    const auto it = files_.find(path);
    return it == files_.end() ? nullptr : &it->second;
}

Service::Service(const probe::Tablebase& tb, WebFiles web, std::size_t table_count)
    : tb_(&tb), web_(std::move(web)), table_count_(table_count) {}

HttpAnswer Service::api_answer(const Query& query) const {
    auto pos = parse_fen(query.fen, query.variant);
    if (!pos.ok()) return error_answer(400, pos.status().message());
    auto body = query.route == Route::Probe ? probe_answer(*tb_, query.variant, *pos)
                                            : mainline_answer(*tb_, query.variant, *pos);
    if (!body.ok()) return error_answer(http_status_of(body.status()), body.status().message());
    return json_answer(*body);
}

HttpAnswer Service::answer(std::string_view method, std::string_view target) const {
    if (method != "GET" && method != "HEAD") {
        HttpAnswer a = error_answer(405, "method " + std::string(method) + " not allowed");
        a.headers.emplace_back("Allow", "GET, HEAD");
        return a;
    }
    auto parsed = parse_target(target);
    if (const auto* error = std::get_if<QueryError>(&parsed)) {
        return error_answer(error->http_status, error->message);
    }
    const Query& query = std::get<Query>(parsed);
    switch (query.route) {
        case Route::Probe:
        case Route::Mainline: return api_answer(query);
        case Route::Health: {
            HttpAnswer a = json_answer(Json{{"status", "ok"},
                                            {"tables", table_count_},
                                            {"web", web_.size() > 0}});
            a.headers = {{"Cache-Control", kCacheNever}};
            return a;
        }
        case Route::File: break;
    }
    const std::string path = query.file.empty() ? "index.html" : query.file;
    const WebFiles::File* file = web_.find(path);
    if (file == nullptr) {
        if (query.file.empty()) {
            return error_answer(404, "no web explorer: build it (web/) or pass --web DIR");
        }
        return error_answer(404, "not found: /" + printable_text(query.file) + " (API: /{variant}?fen=..., " +
                                     "variants: " + std::string(variant_list()) + ")");
    }
    HttpAnswer a;
    a.content_type = file->content_type;
    a.body = file->body;
    // The page itself is revalidated so a rebuilt explorer shows at once.
    a.headers = {{"Cache-Control", path == "index.html" ? "no-cache" : "public, max-age=3600"}};
    return a;
}

}  // namespace tbf::serve
