#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tbforge/base/cli.hpp"

using tbf::cli::Command;

namespace {

constexpr const char* kUsage = "Usage: tool perft --variant V --depth N [--divide]\n";

// Commands are not copied: options point into them.
void declare(Command& c) {
    c.value("variant");
    c.value("depth");
    c.value("cache");
    c.values("root");
    c.flag("divide");
}

// The error message of parsing `args`, or "" when it parses.
std::string parse_error(const std::vector<std::string>& args, bool positionals = false) {
    Command c(kUsage);
    declare(c);
    if (positionals) c.positionals();
    std::ostringstream out;
    auto r = c.parse(args, out);
    if (r.ok()) return "";
    CHECK(r.status().code() == tbf::StatusCode::InvalidArgument);
    return r.status().message();
}

}  // namespace

TEST_CASE("cli: values in both spellings, flags, repeated options") {
    Command c(kUsage);
    declare(c);
    std::ostringstream out;
    auto r = c.parse({"--variant", "antichess", "--depth=3", "--divide", "--root", "a", "--root=b c"}, out);
    REQUIRE(r.ok());
    CHECK(*r);
    CHECK(out.str().empty());
    CHECK(c.get("variant") == "antichess");
    CHECK(c.get("depth") == "3");
    CHECK(c.flag_set("divide"));
    CHECK_FALSE(c.has("cache"));
    CHECK(c.optional("cache") == std::nullopt);
    CHECK(c.all("root") == std::vector<std::string>{"a", "b c"});
    auto depth = c.number("depth", 0, 64);
    REQUIRE(depth.ok());
    CHECK(**depth == 3);
    CHECK(c.required("cache").status().message() == "missing --cache");
}

TEST_CASE("cli: --help and -h print the usage text") {
    for (const char* help : {"--help", "-h"}) {
        Command c(kUsage);
    declare(c);
        std::ostringstream out;
        auto r = c.parse({"--variant", "x", help}, out);
        REQUIRE(r.ok());
        CHECK_FALSE(*r);
        CHECK(out.str() == c.usage());
    }
}

TEST_CASE("cli: mistakes in one wording") {
    CHECK(parse_error({"--colour", "white"}) == "unknown option \"--colour\"");
    CHECK(parse_error({"--colour=white"}) == "unknown option \"--colour\"");
    CHECK(parse_error({"stray"}) == "unexpected argument \"stray\"");
    CHECK(parse_error({"--variant"}) == "option --variant needs a value");
    CHECK(parse_error({"--divide=yes"}) == "option --divide takes no value");
    CHECK(parse_error({"--depth", "1", "--depth", "2"}) == "option --depth given twice");
    CHECK(parse_error({"--variant", "v", "--depth", "1"}).empty());
}

TEST_CASE("cli: positional words where the command takes them") {
    Command c(kUsage);
    declare(c);
    c.positionals();
    std::ostringstream out;
    auto parsed = c.parse({"KQvK", "--variant", "v", "KRvK"}, out);
    INFO((parsed.ok() ? std::string() : parsed.status().message()));
    REQUIRE(parsed.ok());
    CHECK(c.positional() == std::vector<std::string>{"KQvK", "KRvK"});
    CHECK(parse_error({"KQvK", "--bogus"}, true) == "unknown option \"--bogus\"");
}

TEST_CASE("cli: numbers and byte sizes") {
    CHECK(tbf::cli::parse_number("depth", "64", 0, 64).value() == 64);
    for (const char* bad : {"65", "-1", "three", "", "1x", "99999999999999999999999"}) {
        auto r = tbf::cli::parse_number("depth", bad, 0, 64);
        REQUIRE_FALSE(r.ok());
        CHECK(r.status().message() ==
              "bad --depth \"" + std::string(bad) + "\" (expected an integer from 0 to 64)");
    }
    // The same byte-size forms for every size option.
    for (const char* form : {"4G", "4GiB", "4096M", "4294967296"}) {
        Command c(kUsage);
    declare(c);
        std::ostringstream out;
        REQUIRE(c.parse({"--cache", form}, out).ok());
        auto bytes = c.byte_size("cache");
        REQUIRE(bytes.ok());
        CHECK(**bytes == 4ull << 30);
    }
    Command c(kUsage);
    declare(c);
    std::ostringstream out;
    REQUIRE(c.parse({"--cache", "4X"}, out).ok());
    CHECK(c.byte_size("cache").status().message() ==
          "bad --cache \"4X\" (e.g. 4G, 4GiB, 512M, 1048576)");
}
