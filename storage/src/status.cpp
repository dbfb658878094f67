#include "tbforge/storage/status.hpp"

namespace tbf::storage {

std::string_view error_code_name(ErrorCode code) {
    switch (code) {
        case ErrorCode::Ok: return "ok";
        case ErrorCode::NotFound: return "not-found";
        case ErrorCode::AlreadyExists: return "already-exists";
        case ErrorCode::InvalidArgument: return "invalid-argument";
        case ErrorCode::NotADatabase: return "not-a-database";
        case ErrorCode::UnsupportedVersion: return "unsupported-version";
        case ErrorCode::Corruption: return "corruption";
        case ErrorCode::ChecksumMismatch: return "checksum-mismatch";
        case ErrorCode::IoError: return "io-error";
        case ErrorCode::Busy: return "busy";
        case ErrorCode::ReadOnly: return "read-only";
        case ErrorCode::Aborted: return "aborted";
        case ErrorCode::ResourceExhausted: return "resource-exhausted";
        case ErrorCode::Internal: return "internal";
    }
    return "unknown";
}

std::string Status::to_string() const {
    if (ok()) return "ok";
    std::string out(error_code_name(code_));
    out += ": ";
    out += message_;
    return out;
}

}  // namespace tbf::storage
