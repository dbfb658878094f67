#include "tbforge/base/status.hpp"

namespace tbf {

std::string_view status_code_name(StatusCode code) {
    switch (code) {
        case StatusCode::Ok: return "ok";
        case StatusCode::InvalidArgument: return "invalid-argument";
        case StatusCode::NotFound: return "not-found";
        case StatusCode::AlreadyExists: return "already-exists";
        case StatusCode::NotADatabase: return "not-a-database";
        case StatusCode::UnsupportedVersion: return "unsupported-version";
        case StatusCode::Corruption: return "corruption";
        case StatusCode::ChecksumMismatch: return "checksum-mismatch";
        case StatusCode::IoError: return "io-error";
        case StatusCode::Busy: return "busy";
        case StatusCode::ReadOnly: return "read-only";
        case StatusCode::Aborted: return "aborted";
        case StatusCode::ResourceExhausted: return "resource-exhausted";
        case StatusCode::Internal: return "internal";
        case StatusCode::CheckFailed: return "check-failed";
    }
    return "unknown";
}

std::string Status::to_string() const {
    if (ok()) return "ok";
    std::string out(status_code_name(code_));
    out += ": ";
    out += message_;
    return out;
}

Status Status::with_context(std::string_view context) const {
    if (ok()) return *this;
    std::string message(context);
    message += ": ";
    message += message_;
    return {code_, std::move(message)};
}

}  // namespace tbf
