#pragma once
// The out-of-core builder's failures deep inside its passes (OpenMP regions,
// file helpers several frames down) cannot return a Status through every
// frame: they throw one, whole, from the place that knows what went wrong,
// and the builder's caller (generate.cpp) catches it and returns it.

#include <exception>
#include <utility>

#include "tbforge/base/status.hpp"

namespace tbf::gen {

class StatusError : public std::exception {
public:
    explicit StatusError(Status status) : status_(std::move(status)) {}
    [[nodiscard]] const Status& status() const { return status_; }
    [[nodiscard]] const char* what() const noexcept override { return status_.message().c_str(); }

private:
    Status status_;
};

}  // namespace tbf::gen
