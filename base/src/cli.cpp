#include "tbforge/base/cli.hpp"

#include <algorithm>

#include "tbforge/base/byte_size.hpp"

namespace tbf::cli {

Command::Command(std::string usage) : usage_(std::move(usage)) {
    // Words after a `--` stay words; nothing else of CLI11's defaults changes.
    app_.allow_extras(false);
}

void Command::value(const std::string& name) {
    Slot& s = slots_[name];
    s.option = app_.add_option("--" + name, s.values)->expected(1)->allow_extra_args(false)->multi_option_policy(
        CLI::MultiOptionPolicy::Throw);
}

void Command::values(const std::string& name) {
    Slot& s = slots_[name];
    s.option = app_.add_option("--" + name, s.values)->expected(1)->allow_extra_args(false)->multi_option_policy(
        CLI::MultiOptionPolicy::TakeAll);
}

void Command::flag(const std::string& name) {
    Slot& s = slots_[name];
    s.option = app_.add_flag("--" + name, s.flag)->disable_flag_override();
}

void Command::positionals() { app_.add_option("words", positional_); }

Result<bool> Command::parse(const std::vector<std::string>& args, std::ostream& out) {
    // CLI11 takes the words last first.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app_.parse(reversed);
    } catch (const CLI::CallForHelp&) {
        out << usage_;
        return false;
    } catch (const CLI::ParseError& e) {
        return translate(e);
    }
    return true;
}

Status Command::translate(const CLI::ParseError& error) const {
    const std::string what = error.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
        const std::vector<std::string> extras = app_.remaining();
        for (const std::string& word : extras) {
            if (word.size() > 1 && word[0] == '-') {
                return invalid_argument("unknown option \"" + word.substr(0, word.find('=')) + "\"");
            }
        }
        if (!extras.empty()) return invalid_argument("unexpected argument \"" + extras.front() + "\"");
    }
    // CLI11 2.x words: "--x: 1 required TEXT missing", "x was given a
    // disallowed flag override", "--x: At Most 1 required but received 2".
    std::string name = what.substr(0, what.find_first_of(": "));
    if (!name.starts_with("--")) name = "--" + name;
    if (what.find("required TEXT missing") != std::string::npos) {
        return invalid_argument("option " + name + " needs a value");
    }
    if (what.find("flag override") != std::string::npos) {
        return invalid_argument("option " + name + " takes no value");
    }
    if (what.find("At Most 1") != std::string::npos) {
        return invalid_argument("option " + name + " given twice");
    }
    return invalid_argument(what);
}

const Command::Slot& Command::slot(std::string_view name) const {
    const auto it = slots_.find(name);
    // An option the command never declared is a programming error.
    if (it == slots_.end()) throw std::logic_error("undeclared option --" + std::string(name));
    return it->second;
}

bool Command::has(std::string_view name) const { return slot(name).option->count() > 0; }

const std::string& Command::get(std::string_view name) const { return slot(name).values.back(); }

std::optional<std::string> Command::optional(std::string_view name) const {
    if (!has(name)) return std::nullopt;
    return get(name);
}

Result<std::string> Command::required(std::string_view name) const {
    if (!has(name)) return invalid_argument("missing --" + std::string(name));
    return get(name);
}

const std::vector<std::string>& Command::all(std::string_view name) const { return slot(name).values; }

Result<std::optional<std::uint64_t>> Command::number(std::string_view name, std::uint64_t min,
                                                     std::uint64_t max) const {
    if (!has(name)) return std::optional<std::uint64_t>();
    auto n = parse_number(name, get(name), min, max);
    if (!n.ok()) return n.status();
    return std::optional<std::uint64_t>(*n);
}

Result<std::optional<std::uint64_t>> Command::byte_size(std::string_view name) const {
    if (!has(name)) return std::optional<std::uint64_t>();
    auto bytes = parse_byte_size(get(name));
    if (!bytes.ok()) {
        return invalid_argument("bad --" + std::string(name) + " \"" + get(name) +
                                "\" (e.g. 4G, 4GiB, 512M, 1048576)");
    }
    return std::optional<std::uint64_t>(*bytes);
}

Result<std::uint64_t> parse_number(std::string_view option, std::string_view text, std::uint64_t min,
                                   std::uint64_t max) {
    std::uint64_t n = 0;
    bool ok = !text.empty();
    for (char c : text) {
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (c < '0' || c > '9' || n > (~std::uint64_t{0} - digit) / 10) {
            ok = false;
            break;
        }
        n = n * 10 + digit;
    }
    if (!ok || n < min || n > max) {
        return invalid_argument("bad --" + std::string(option) + " \"" + std::string(text) +
                                "\" (expected an integer from " + std::to_string(min) + " to " +
                                std::to_string(max) + ")");
    }
    return n;
}

}  // namespace tbf::cli
