// tbverify's command line, driven through run_cli with string streams.

#include "tbforge/verify/cli.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>
#include "test_support.hpp"

namespace {

struct Run {
    int code;
    std::string out;
    std::string err;
};

Run run(const std::vector<std::string>& args) {
    std::ostringstream out;
    std::ostringstream err;
    const int code = tbf::verify::run_cli(args, out, err);
    return {code, out.str(), err.str()};
}

constexpr const char* kStart = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
using tbf::test::kFourFileStart;

// A usage error: exit 2, nothing on stdout, one line on stderr naming `part`.
void check_usage_error(const std::vector<std::string>& args, const std::string& part) {
    const Run r = run(args);
    INFO("stderr: ", r.err);
    CHECK(r.code == tbf::verify::kExitUsage);
    CHECK(r.out.empty());
    CHECK(r.err.starts_with("tbverify: error: "));
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(r.err.find(part) != std::string::npos);
}

}  // namespace

TEST_CASE("tbverify perft prints the node count") {
    const Run r = run({"perft", "--variant", "antichess", "--fen", kStart, "--depth", "3"});
    CHECK(r.code == 0);
    CHECK(r.out == "8067\n");
    CHECK(r.err.empty());
    // --name=value works too.
    CHECK(run({"perft", "--variant=fourfile", "--fen=" + std::string(kFourFileStart), "--depth=4"})
              .out == "12910\n");
    CHECK(run({"perft", "--variant", "antichess", "--fen", kStart, "--depth", "0"}).out == "1\n");
}

TEST_CASE("tbverify perft --divide: sorted root moves, then the total") {
    const Run r = run(
        {"perft", "--divide", "--variant", "fourfile", "--fen", kFourFileStart, "--depth", "2"});
    CHECK(r.code == 0);
    CHECK(r.out ==
          "a2a3: 11\na2a4: 11\nc1a3: 11\nc1e3: 11\nc1g5: 10\nc2c3: 11\nc2c4: 11\n"
          "e2e3: 11\ne2e4: 11\ng2g3: 11\ng2g4: 11\n120\n");
    // A terminal root has no moves: just the total.
    CHECK(run({"perft", "--divide", "--variant", "antichess", "--fen",
               "8/8/8/8/8/p7/P7/8 w - - 0 1", "--depth", "3"})
              .out == "0\n");
}

TEST_CASE("tbverify perft --json") {
    const Run r = run({"perft", "--json", "--divide", "--variant", "antichess", "--fen",
                       "8/4P3/8/8/8/8/3p4/8 w - - 0 1", "--depth", "1"});
    CHECK(r.code == 0);
    CHECK(r.out ==
          "{\"variant\":\"antichess\",\"fen\":\"8/4P3/8/8/8/8/3p4/8 w - - 0 1\",\"depth\":1,"
          "\"nodes\":5,\"divide\":[{\"move\":\"e7e8b\",\"nodes\":1},{\"move\":\"e7e8k\","
          "\"nodes\":1},{\"move\":\"e7e8n\",\"nodes\":1},{\"move\":\"e7e8q\",\"nodes\":1},"
          "{\"move\":\"e7e8r\",\"nodes\":1}]}\n");
}

TEST_CASE("tbverify help") {
    for (const char* flag : {"--help", "-h", "help"}) {
        const Run r = run({flag});
        CHECK(r.code == 0);
        CHECK(r.out.starts_with("Usage: tbverify <command>"));
        CHECK(r.out.find("perft") != std::string::npos);
    }
    const Run perft = run({"perft", "--help"});
    CHECK(perft.code == 0);
    CHECK(perft.out.starts_with("Usage: tbverify perft --variant V --fen FEN --depth N"));
    // No arguments: usage on stderr and a usage exit code.
    const Run none = run({});
    CHECK(none.code == tbf::verify::kExitUsage);
    CHECK(none.out.empty());
    CHECK(none.err.starts_with("Usage:"));
}

TEST_CASE("tbverify errors name the bad input and exit with 2") {
    check_usage_error({"frobnicate"}, "unknown command \"frobnicate\"");
    check_usage_error({"perft", "--variant", "suicide", "--fen", kStart, "--depth", "1"},
                      "unknown variant \"suicide\"");
    check_usage_error({"perft", "--variant", "antichess", "--fen", kStart, "--depth", "-1"},
                      "bad --depth \"-1\"");
    check_usage_error({"perft", "--variant", "antichess", "--fen", kStart, "--depth", "three"},
                      "bad --depth \"three\"");
    check_usage_error({"perft", "--variant", "antichess", "--fen", kStart, "--depth", "65"},
                      "bad --depth \"65\"");
    check_usage_error(
        {"perft", "--variant", "antichess", "--fen", "8/8/8 w - - 0 1", "--depth", "1"},
        "bad FEN \"8/8/8 w - - 0 1\"");
    check_usage_error({"perft", "--variant", "fourfile", "--fen", kStart, "--depth", "1"},
                      "unit on b1");
    check_usage_error({"perft", "--variant", "antichess", "--fen", kStart}, "missing --depth");
    check_usage_error({"perft", "--variant", "antichess", "--depth", "1"}, "missing --fen");
    check_usage_error({"perft", "--fen", kStart, "--depth", "1"}, "missing --variant");
    check_usage_error(
        {"perft", "--variant", "antichess", "--fen", kStart, "--depth", "1", "--depth", "2"},
        "--depth given twice");
    check_usage_error({"perft", "--colour", "white"}, "unknown option \"--colour\"");
    check_usage_error({"perft", "--variant"}, "--variant needs a value");
    check_usage_error({"perft", "--divide=yes"}, "--divide takes no value");
    check_usage_error({"perft", "stray"}, "unexpected argument \"stray\"");
}
