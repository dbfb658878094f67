#pragma once
// A value or a one-line error message; the library's way to report bad input
// without exceptions crossing its interface.

#include <string>
#include <utility>
#include <variant>

namespace tbf {

struct Error {
    std::string message;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : data_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
    Result(Error error) : data_(std::move(error)) {}      // NOLINT(google-explicit-constructor)

    bool ok() const { return data_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T& value() const& { return std::get<0>(data_); }
    T& value() & { return std::get<0>(data_); }
    T&& value() && { return std::get<0>(std::move(data_)); }
    const T& operator*() const& { return value(); }
    const T* operator->() const { return &value(); }
    const std::string& error() const { return std::get<1>(data_).message; }

private:
    std::variant<T, Error> data_;
};

}  // namespace tbf
