#pragma once
// The one error vocabulary of tbforge: a Status (a code and a one-line
// message) that must be read, and Result<T> holding a value or a failed
// Status. Library code returns these and never exits or throws across its
// interface; only the run_cli functions turn a Status into an exit code
// (exit_code.hpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace tbf {

enum class StatusCode : std::uint8_t {
    Ok = 0,
    InvalidArgument,     // bad input or usage: a malformed FEN, name, option, width, ...
    NotFound,            // a missing directory, table, strategy or block
    AlreadyExists,       // creating something that exists, without `replace`
    NotADatabase,        // the directory is not a tbforge database
    UnsupportedVersion,  // written by a newer format version
    Corruption,          // undecodable record, truncated or damaged files
    ChecksumMismatch,    // a block or record whose checksum does not match
    IoError,             // the file system refused (permissions, disk full, ...)
    Busy,                // another process holds the database open for writing
    ReadOnly,            // a write through a read-only open
    Aborted,             // a writer used after it failed or was committed
    ResourceExhausted,   // out of memory, or more than a configured cap
    Internal,            // an unexpected failure inside a dependency
    CheckFailed,         // a verification found errors, or a claim is not proven
};

// "ok", "not-found", "checksum-mismatch", ... (stable: --json output uses them).
[[nodiscard]] std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
public:
    Status() = default;  // ok
    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

    [[nodiscard]] bool ok() const { return code_ == StatusCode::Ok; }
    [[nodiscard]] StatusCode code() const { return code_; }
    [[nodiscard]] const std::string& message() const { return message_; }
    // "checksum-mismatch: table 'x' block 3: ..." or "ok".
    [[nodiscard]] std::string to_string() const;
    // The same code, the message prefixed by "<context>: ".
    [[nodiscard]] Status with_context(std::string_view context) const;

private:
    StatusCode code_ = StatusCode::Ok;
    std::string message_;
};

[[nodiscard]] inline Status invalid_argument(std::string message) {
    return {StatusCode::InvalidArgument, std::move(message)};
}
[[nodiscard]] inline Status not_found(std::string message) {
    return {StatusCode::NotFound, std::move(message)};
}
[[nodiscard]] inline Status corruption(std::string message) {
    return {StatusCode::Corruption, std::move(message)};
}
[[nodiscard]] inline Status io_error(std::string message) {
    return {StatusCode::IoError, std::move(message)};
}
[[nodiscard]] inline Status check_failed(std::string message) {
    return {StatusCode::CheckFailed, std::move(message)};
}

template <class T>
class [[nodiscard]] Result {
    static_assert(!std::is_same_v<std::remove_cv_t<T>, Status>, "use Status directly");

public:
    Result(T value) : data_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
    Result(Status status) : data_(std::in_place_index<1>, std::move(status)) {  // NOLINT
        if (std::get<1>(data_).ok()) {
            // A Result built from a Status must carry an error; an ok Status
            // without a value would leave nothing to return.
            std::get<1>(data_) = Status(StatusCode::Internal, "Result built from an ok status");
        }
    }

    [[nodiscard]] bool ok() const { return data_.index() == 0; }
    explicit operator bool() const { return ok(); }

    // The error, or an ok Status when a value is held.
    [[nodiscard]] const Status& status() const {
        static const Status kOk;
        return ok() ? kOk : std::get<1>(data_);
    }
    // Precondition: ok().
    [[nodiscard]] T& value() & { return std::get<0>(data_); }
    [[nodiscard]] const T& value() const& { return std::get<0>(data_); }
    [[nodiscard]] T&& value() && { return std::get<0>(std::move(data_)); }

    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    std::variant<T, Status> data_;
};

}  // namespace tbf
