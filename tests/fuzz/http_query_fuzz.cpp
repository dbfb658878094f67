// The request-target parser of tbserve (serve/src/query.cpp) on any bytes.
// An error is 400, 404 or 414 (414 exactly when the target is too long) with
// a one-line printable message; a probe or mainline query carries a
// non-empty printable FEN without underscores or surrounding spaces, no
// longer than kMaxFenBytes; a file query names a path inside the web folder;
// and the target rebuilt from an accepted query, percent-encoded, parses to
// the same query.

#include <string>
#include <variant>

#include "fuzz_support.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/serve/query.hpp"

namespace {

using tbf::serve::Query;
using tbf::serve::QueryError;
using tbf::serve::Route;

bool printable(std::string_view s) {
    for (const char c : s) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte > 0x7e) return false;
    }
    return true;
}

// %XX for the bytes parse_target reads as syntax ('%', '?', and in a query
// '&' and '+') and for those a request line cannot carry raw.
std::string percent_encode(std::string_view text, bool in_query) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        const bool syntax = c == '%' || c == '?' || (in_query && (c == '&' || c == '+'));
        if (!syntax && byte > 0x20 && byte <= 0x7e) {
            out += c;
        } else {
            out += '%';
            out += kHex[byte >> 4];
            out += kHex[byte & 15];
        }
    }
    return out;
}

std::string describe(const Query& q) {
    return "route " + std::to_string(static_cast<int>(q.route)) + " variant " +
           std::string(tbf::variant_name(q.variant)) + " fen \"" + q.fen + "\" file \"" + q.file + "\"";
}

std::string rebuild(const Query& q) {
    switch (q.route) {
        case Route::Health: return "/health";
        case Route::Probe:
            return "/" + std::string(tbf::variant_name(q.variant)) + "?fen=" + percent_encode(q.fen, true);
        case Route::Mainline:
            return "/" + std::string(tbf::variant_name(q.variant)) + "/mainline?fen=" +
                   percent_encode(q.fen, true);
        case Route::File: return "/" + percent_encode(q.file, false);
    }
    return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view target = tbf::fuzz::as_text(data, size);
    const auto context = [&] { return "target \"" + std::string(target) + "\""; };
    auto parsed = tbf::serve::parse_target(target);

    if (const auto* error = std::get_if<QueryError>(&parsed)) {
        FUZZ_CHECK(error->http_status == 400 || error->http_status == 404 || error->http_status == 414,
                   context());
        FUZZ_CHECK((error->http_status == 414) == (target.size() > tbf::serve::kMaxTargetBytes), context());
        FUZZ_CHECK(!error->message.empty() && printable(error->message),
                   context() + ": message \"" + error->message + "\"");
        return 0;
    }
    const Query& q = std::get<Query>(parsed);
    FUZZ_CHECK(target.size() <= tbf::serve::kMaxTargetBytes, context());
    if (q.route == Route::Probe || q.route == Route::Mainline) {
        FUZZ_CHECK(!q.fen.empty() && q.fen.size() <= tbf::serve::kMaxFenBytes && printable(q.fen) &&
                       q.fen.find('_') == std::string::npos && q.fen.front() != ' ' && q.fen.back() != ' ',
                   context() + ": " + describe(q));
    }
    if (q.route == Route::File) {
        // Inside the web folder: relative, and no empty, "." or ".." segment.
        const std::string wrapped = "/" + q.file + "/";
        FUZZ_CHECK(q.file.empty() || (wrapped.find("//") == std::string::npos &&
                                      wrapped.find("/./") == std::string::npos &&
                                      wrapped.find("/../") == std::string::npos &&
                                      q.file.find('\\') == std::string::npos),
                   context() + ": " + describe(q));
    }

    const std::string again_target = rebuild(q);
    auto again = tbf::serve::parse_target(again_target);
    if (again_target.size() > tbf::serve::kMaxTargetBytes) {
        const auto* error = std::get_if<QueryError>(&again);
        FUZZ_CHECK(error != nullptr && error->http_status == 414, context() + ", rebuilt as \"" + again_target + "\"");
        return 0;
    }
    const auto* same = std::get_if<Query>(&again);
    FUZZ_CHECK(same != nullptr && same->route == q.route && same->fen == q.fen && same->file == q.file &&
                   (q.route == Route::File || q.route == Route::Health || same->variant == q.variant),
               context() + ": " + describe(q) + ", rebuilt as \"" + again_target + "\"");
    return 0;
}
