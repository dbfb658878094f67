#include "tbforge/serve/query.hpp"

#include <algorithm>

namespace tbf::serve {

namespace {

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

QueryError bad_request(std::string message) { return {400, std::move(message)}; }

QueryError not_found(std::string_view path) { return {404, "not found: " + printable_text(path)}; }

// Only the variant names, "health" and "mainline" are words of the API;
// every other path names a file of the web explorer.
std::variant<Query, QueryError> parse_path(const std::string& path) {
    Query q;
    if (path == "/health") {
        q.route = Route::Health;
        return q;
    }
    std::string_view rest(path);
    rest.remove_prefix(1);  // the leading '/'
    const auto slash = rest.find('/');
    const std::string_view first = rest.substr(0, slash);
    const std::optional<VariantId> variant = parse_variant(first);
    if (slash != std::string_view::npos && rest.substr(slash) == "/mainline") {
        if (!variant) {
            return QueryError{404, "unknown variant '" + printable_text(first) + "' (known: " +
                                       std::string(variant_list()) + ")"};
        }
        q.route = Route::Mainline;
        q.variant = *variant;
        return q;
    }
    if (variant && slash == std::string_view::npos) {
        q.route = Route::Probe;
        q.variant = *variant;
        return q;
    }
    // A file: no empty, "." or ".." segment, so it stays inside the web folder.
    std::size_t start = 0;
    while (start < rest.size()) {
        const auto end = std::min(rest.find('/', start), rest.size());
        const std::string_view segment = rest.substr(start, end - start);
        if (segment.empty() || segment == "." || segment == ".." ||
            segment.find('\\') != std::string_view::npos) {
            return not_found(path);
        }
        start = end + 1;
    }
    if (!rest.empty() && rest.back() == '/') return not_found(path);
    q.route = Route::File;
    q.file = std::string(rest);
    return q;
}

}  // namespace

std::string printable_text(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte <= 0x7e && c != '\\') {
            out += c;
        } else {
            out += "\\x";
            out += kHex[byte >> 4];
            out += kHex[byte & 15];
        }
    }
    return out;
}

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '%') {
            if (i + 2 >= text.size()) return std::nullopt;
            const int hi = hex_digit(text[i + 1]);
            const int lo = hex_digit(text[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

std::variant<Query, QueryError> parse_target(std::string_view target) {
    if (target.size() > kMaxTargetBytes) {
        return QueryError{414, "request target longer than " + std::to_string(kMaxTargetBytes) +
                                   " bytes"};
    }
    if (target.empty() || target.front() != '/') {
        return bad_request("request target must start with '/'");
    }
    // A target is printable ASCII without spaces (RFC 3986); other bytes
    // arrive only %-encoded, so a raw one is a malformed request.
    for (const char c : target) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte <= 0x20 || byte > 0x7e) {
            return bad_request("request target holds a byte outside printable ASCII");
        }
    }
    const auto question = target.find('?');
    const auto raw_path = target.substr(0, question);
    const auto raw_query =
        question == std::string_view::npos ? std::string_view{} : target.substr(question + 1);
    const auto path = percent_decode(raw_path, false);
    if (!path) return bad_request("bad percent-encoding in the path");
    if (path->find('?') != std::string::npos) return not_found(*path);

    auto parsed = parse_path(*path);
    if (auto* error = std::get_if<QueryError>(&parsed)) return *error;
    Query q = std::get<Query>(std::move(parsed));

    std::optional<std::string> fen;
    std::size_t start = 0;
    while (start <= raw_query.size() && !raw_query.empty()) {
        const auto end = std::min(raw_query.find('&', start), raw_query.size());
        const std::string_view pair = raw_query.substr(start, end - start);
        start = end + 1;
        if (pair.empty()) continue;
        const auto equals = pair.find('=');
        const auto key = percent_decode(pair.substr(0, equals), true);
        if (!key) return bad_request("bad percent-encoding in the query");
        const auto value = percent_decode(
            equals == std::string_view::npos ? std::string_view{} : pair.substr(equals + 1), true);
        if (!value) return bad_request("bad percent-encoding in the query");
        if (*key != "fen") continue;
        if (fen) return bad_request("fen given more than once");
        fen = *value;
    }
    if (q.route != Route::Probe && q.route != Route::Mainline) return q;

    if (!fen) return bad_request("missing fen parameter");
    if (fen->size() > kMaxFenBytes) {
        return bad_request("FEN longer than " + std::to_string(kMaxFenBytes) + " bytes");
    }
    for (char& c : *fen) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte > 0x7e) {
            return bad_request("FEN holds a byte outside printable ASCII");
        }
        if (c == '_') c = ' ';
    }
    const auto first = fen->find_first_not_of(' ');
    if (first == std::string::npos) return bad_request("empty fen parameter");
    const auto last = fen->find_last_not_of(' ');
    q.fen = fen->substr(first, last - first + 1);
    return q;
}

}  // namespace tbf::serve
