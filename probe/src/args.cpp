#include "tbforge/probe/args.hpp"

#include <charconv>
#include <cstdio>
#include <limits>

namespace tbf::cli {

namespace {

// Length of the well-formed UTF-8 sequence at text[i], or 0.
std::size_t utf8_length(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    std::size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // range of the second byte (no overlongs, no surrogates)
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
    for (std::size_t k = 2; k < n; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    }
    return n;
}

}  // namespace

// A JSON string literal. Input lines are echoed in error objects, so bytes
// that are not UTF-8 become U+FFFD to keep every output line valid JSON.
std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
        } else if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
        } else if (const std::size_t n = utf8_length(text, i); n != 0) {
            out.append(text, i, n);
            i += n;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    return out + "\"";
}

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& value_options,
           const std::set<std::string>& flag_options) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg.size() < 3 || arg.rfind("--", 0) != 0) {
            positional_.push_back(arg);
            continue;
        }
        std::string name = arg.substr(2);
        std::optional<std::string> inline_value;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inline_value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flag_options.count(name)) {
            if (inline_value) throw UsageError("option --" + name + " takes no value");
            flags_.insert(name);
        } else if (value_options.count(name)) {
            if (inline_value) {
                values_.emplace(name, *inline_value);
            } else if (i + 1 < argv.size()) {
                values_.emplace(name, argv[++i]);
            } else {
                throw UsageError("option --" + name + " needs a value");
            }
        } else {
            throw UsageError("unknown option --" + name);
        }
    }
}

std::optional<std::string> Args::value(const std::string& name) const {
    auto range = values_.equal_range(name);
    if (range.first == range.second) return std::nullopt;
    return std::prev(range.second)->second;
}

std::vector<std::string> Args::values(const std::string& name) const {
    std::vector<std::string> out;
    auto range = values_.equal_range(name);
    for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
    return out;
}

std::string Args::required(const std::string& name) const {
    auto v = value(name);
    if (!v) throw UsageError("missing required option --" + name);
    return *v;
}

std::optional<std::uint64_t> Args::number(const std::string& name) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    std::uint64_t n = 0;
    const char* end = v->data() + v->size();
    auto [ptr, ec] = std::from_chars(v->data(), end, n);
    if (ec != std::errc{} || ptr != end || v->empty()) {
        throw UsageError("option --" + name + " needs a non-negative integer, got '" + *v + "'");
    }
    return n;
}

std::optional<std::uint64_t> Args::bytes(const std::string& name) const {
    auto v = value(name);
    if (!v) return std::nullopt;
    std::string digits = *v;
    std::uint64_t scale = 1;
    if (!digits.empty()) {
        switch (digits.back()) {
            case 'K':
            case 'k':
                scale = 1ULL << 10;
                break;
            case 'M':
            case 'm':
                scale = 1ULL << 20;
                break;
            case 'G':
            case 'g':
                scale = 1ULL << 30;
                break;
            case 'T':
            case 't':
                scale = 1ULL << 40;
                break;
            default:
                break;
        }
        if (scale != 1) digits.pop_back();
    }
    std::uint64_t n = 0;
    const char* end = digits.data() + digits.size();
    auto [ptr, ec] = std::from_chars(digits.data(), end, n);
    if (ec != std::errc{} || ptr != end || digits.empty()) {
        throw UsageError("option --" + name + " needs a byte count such as 4G, got '" + *v + "'");
    }
    if (n > std::numeric_limits<std::uint64_t>::max() / scale) {
        throw UsageError("option --" + name + " is too large: '" + *v + "'");
    }
    return n * scale;
}

}  // namespace tbf::cli
