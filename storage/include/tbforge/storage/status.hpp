#pragma once
// Error reporting for the storage library: a Status (code + message) that must
// be read, and Result<T> holding either a value or a failed Status. No
// function of the public API throws; failures, including allocation failure,
// come back as a Status.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace tbf::storage {

enum class ErrorCode : std::uint8_t {
    Ok = 0,
    NotFound,            // missing directory, table, strategy or block
    AlreadyExists,       // creating a table or strategy that exists without `replace`
    InvalidArgument,     // bad name, width, slot, order of entries, ...
    NotADatabase,        // the directory is not a tbforge database
    UnsupportedVersion,  // written by a newer format version
    Corruption,          // undecodable record, truncated or damaged files
    ChecksumMismatch,    // a block or record whose checksum does not match
    IoError,             // the file system refused (permissions, disk full, ...)
    Busy,                // another process holds the database open for writing
    ReadOnly,            // a write through a read-only open
    Aborted,             // a writer used after it failed or was committed
    ResourceExhausted,   // out of memory
    Internal,            // an unexpected failure inside RocksDB or LZ4
};

// "ok", "not-found", "checksum-mismatch", ... (stable, for --json output).
[[nodiscard]] std::string_view error_code_name(ErrorCode code);

class [[nodiscard]] Status {
public:
    Status() = default;  // ok
    Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

    [[nodiscard]] bool ok() const { return code_ == ErrorCode::Ok; }
    [[nodiscard]] ErrorCode code() const { return code_; }
    [[nodiscard]] const std::string& message() const { return message_; }
    // "checksum-mismatch: table 'x' block 3: ..." or "ok".
    [[nodiscard]] std::string to_string() const;

private:
    ErrorCode code_ = ErrorCode::Ok;
    std::string message_;
};

template <class T>
class [[nodiscard]] Result {
    static_assert(!std::is_same_v<std::remove_cv_t<T>, Status>, "use Status directly");

public:
    Result(T value)
        : data_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
    Result(Status status) : data_(std::in_place_index<1>, std::move(status)) {  // NOLINT
        if (std::get<1>(data_).ok()) {
            // A Result built from a Status must carry an error; an ok Status
            // without a value would leave nothing to return.
            std::get<1>(data_) = Status(ErrorCode::Internal, "Result built from an ok status");
        }
    }

    [[nodiscard]] bool ok() const { return data_.index() == 0; }
    explicit operator bool() const { return ok(); }

    // The error (an ok Status when a value is held).
    [[nodiscard]] Status status() const { return ok() ? Status{} : std::get<1>(data_); }

    // Precondition: ok().
    [[nodiscard]] T& value() & { return std::get<0>(data_); }
    [[nodiscard]] const T& value() const& { return std::get<0>(data_); }
    [[nodiscard]] T&& value() && { return std::get<0>(std::move(data_)); }

    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    std::variant<T, Status> data_;
};

}  // namespace tbf::storage
