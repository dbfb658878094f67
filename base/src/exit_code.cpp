#include "tbforge/base/exit_code.hpp"

namespace tbf {

int exit_code(StatusCode code) {
    switch (code) {
        case StatusCode::Ok:
            return kExitOk;
        case StatusCode::CheckFailed:
            return kExitCheckFailed;
        case StatusCode::InvalidArgument:
        case StatusCode::AlreadyExists:
            return kExitUsage;
        case StatusCode::NotFound:
        case StatusCode::NotADatabase:
        case StatusCode::UnsupportedVersion:
        case StatusCode::Corruption:
        case StatusCode::ChecksumMismatch:
        case StatusCode::IoError:
        case StatusCode::Busy:
        case StatusCode::ReadOnly:
        case StatusCode::Aborted:
        case StatusCode::ResourceExhausted:
        case StatusCode::Internal:
            break;
    }
    return kExitDatabase;
}

const Status& worse(const Status& a, const Status& b) {
    return exit_code(b) > exit_code(a) ? b : a;
}

int report(std::ostream& err, std::string_view program, const Status& status) {
    if (!status.ok() && !status.message().empty()) err << program << ": error: " << status.message() << '\n' << std::flush;
    return exit_code(status);
}

}  // namespace tbf
