#pragma once
// A small option parser shared by the command lines tbprobe and tbgen:
// "--name value", "--name=value" and boolean "--flag".

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tbf::cli {

class UsageError {
public:
    explicit UsageError(std::string message) : message_(std::move(message)) {}
    const std::string& message() const { return message_; }

private:
    std::string message_;
};

// `text` as a JSON string literal, quotes included. Bytes that are not UTF-8
// become U+FFFD, so every output line stays valid JSON.
std::string json_string(const std::string& text);

class Args {
public:
    // Throws UsageError on an unknown option or a value missing after one.
    Args(const std::vector<std::string>& argv, const std::set<std::string>& value_options,
         const std::set<std::string>& flag_options);

    bool flag(const std::string& name) const { return flags_.count(name) != 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> values(const std::string& name) const;
    std::string required(const std::string& name) const;
    // Non-negative integer option; throws UsageError naming the option.
    std::optional<std::uint64_t> number(const std::string& name) const;
    // Byte count with optional K/M/G/T suffix (powers of 1024).
    std::optional<std::uint64_t> bytes(const std::string& name) const;
    const std::vector<std::string>& positional() const { return positional_; }

private:
    std::multimap<std::string, std::string> values_;
    std::set<std::string> flags_;
    std::vector<std::string> positional_;
};

}  // namespace tbf::cli
