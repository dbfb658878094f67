#pragma once
// A strict little JSON reader for checking tbprobe's output: the whole text
// must be one value, anything malformed throws.

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace tbf::test::json {

struct Value;
using Object = std::map<std::string, Value>;
using Array = std::vector<Value>;

struct Value {
    std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>,
                 std::shared_ptr<Object>>
        data;

    bool is_object() const { return data.index() == 5; }
    bool is_array() const { return data.index() == 4; }
    bool is_string() const { return data.index() == 3; }
    bool is_number() const { return data.index() == 2; }
    bool is_bool() const { return data.index() == 1; }
    const Object& object() const { return *std::get<5>(data); }
    const Array& array() const { return *std::get<4>(data); }
    const std::string& string() const { return std::get<3>(data); }
    double number() const { return std::get<2>(data); }
    bool boolean() const { return std::get<1>(data); }
    bool has(const std::string& key) const { return is_object() && object().count(key) != 0; }
    const Value& operator[](const std::string& key) const {
        auto it = object().find(key);
        if (it == object().end()) throw std::runtime_error("no key " + key);
        return it->second;
    }
};

class Parser {
public:
    explicit Parser(const std::string& text) : s_(text) {}

    Value document() {
        Value v = value();
        skip();
        if (i_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(i_));
    }
    void skip() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
            ++i_;
    }
    char peek() {
        skip();
        if (i_ >= s_.size()) fail("unexpected end");
        return s_[i_];
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("expected '") + c + "'");
        ++i_;
    }
    bool literal(const char* word) {
        const std::string w(word);
        if (s_.compare(i_, w.size(), w) != 0) return false;
        i_ += w.size();
        return true;
    }
    Value value() {
        const char c = peek();
        if (c == '{') return {std::make_shared<Object>(object())};
        if (c == '[') return {std::make_shared<Array>(array())};
        if (c == '"') return {string()};
        if (literal("true")) return {true};
        if (literal("false")) return {false};
        if (literal("null")) return {nullptr};
        return {number()};
    }
    Object object() {
        Object out;
        expect('{');
        if (peek() == '}') {
            ++i_;
            return out;
        }
        while (true) {
            if (peek() != '"') fail("expected a key");
            std::string key = string();
            if (out.count(key)) fail("duplicate key " + key);
            expect(':');
            out.emplace(std::move(key), value());
            if (peek() == ',') {
                ++i_;
                continue;
            }
            expect('}');
            return out;
        }
    }
    Array array() {
        Array out;
        expect('[');
        if (peek() == ']') {
            ++i_;
            return out;
        }
        while (true) {
            out.push_back(value());
            if (peek() == ',') {
                ++i_;
                continue;
            }
            expect(']');
            return out;
        }
    }
    std::string string() {
        expect('"');
        std::string out;
        while (true) {
            if (i_ >= s_.size()) fail("unterminated string");
            const auto c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"') return out;
            if (c < 0x20) fail("control character in string");
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated escape");
            const char e = s_[i_++];
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    out += e;
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    if (i_ + 4 > s_.size()) fail("short \\u escape");
                    const unsigned long cp = std::strtoul(s_.substr(i_, 4).c_str(), nullptr, 16);
                    i_ += 4;
                    // Kept as a marker; the tests only look at ASCII content.
                    out += cp < 0x80 ? static_cast<char>(cp) : '?';
                    break;
                }
                default:
                    fail("bad escape");
            }
        }
    }
    double number() {
        const std::size_t start = i_;
        if (i_ < s_.size() && s_[i_] == '-') ++i_;
        while (i_ < s_.size() &&
               ((s_[i_] >= '0' && s_[i_] <= '9') || s_[i_] == '.' || s_[i_] == 'e' ||
                s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-')) {
            ++i_;
        }
        if (i_ == start) fail("expected a value");
        return std::stod(s_.substr(start, i_ - start));
    }

    const std::string& s_;
    std::size_t i_ = 0;
};

inline Value parse(const std::string& text) { return Parser(text).document(); }

}  // namespace tbf::test::json
