#pragma once
// Reading an HTTP request target ("/antichess?fen=8/8/..._w_-_-_0_1") into
// what it asks for. A pure function of the target text: no sockets, no
// tables, so it can be unit-tested and fuzzed on its own (docs/serve.md,
// "Requests").

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "tbforge/rules/variant.hpp"

namespace tbf::serve {

// Longest request target (path and query) read; longer ones get 414.
inline constexpr std::size_t kMaxTargetBytes = 2048;
// Longest FEN after decoding; a FEN of any position fits in 100 bytes.
inline constexpr std::size_t kMaxFenBytes = 128;

enum class Route {
    Probe,     // GET /{variant}?fen=...
    Mainline,  // GET /{variant}/mainline?fen=...
    Health,    // GET /health
    File,      // anything else: a file of the web explorer ("" is the index page)
};

struct Query {
    Route route = Route::File;
    VariantId variant = VariantId::Antichess;  // Probe and Mainline
    std::string fen;                           // Probe and Mainline: spaces, not underscores
    std::string file;                          // File: decoded path without the leading '/'
};

// A request that cannot be answered: the HTTP status (400, 404, 414) and a
// one-line message for the JSON error body.
struct QueryError {
    int http_status = 400;
    std::string message;
};

// `text` for an error message: bytes outside printable ASCII, and the
// backslash, as \xHH, so a message echoing a request stays one printable line.
std::string printable_text(std::string_view text);

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in a
// query string). nullopt for a '%' not followed by two hex digits, or an
// escape of the NUL byte.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

// The request target of a GET: a path, optionally '?' and a query string of
// key=value pairs joined by '&'. Unknown query keys are ignored; `fen` must
// be given exactly once for Probe and Mainline, and underscores in it stand
// for spaces. Errors: 414 for a target over kMaxTargetBytes; 404 for
// "/{unknown}/mainline" and paths that cannot name a file ("..", empty
// segments); 400 for a raw byte outside printable ASCII or a space, bad
// percent-encoding, a missing, repeated, empty or
// overlong FEN, or one with bytes outside printable ASCII.
std::variant<Query, QueryError> parse_target(std::string_view target);

}  // namespace tbf::serve
