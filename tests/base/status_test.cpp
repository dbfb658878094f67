#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>

#include "tbforge/base/exit_code.hpp"
#include "tbforge/base/status.hpp"

using namespace tbf;

namespace {

constexpr StatusCode kAllCodes[] = {
    StatusCode::Ok,           StatusCode::InvalidArgument,    StatusCode::NotFound,
    StatusCode::AlreadyExists, StatusCode::NotADatabase,      StatusCode::UnsupportedVersion,
    StatusCode::Corruption,   StatusCode::ChecksumMismatch,   StatusCode::IoError,
    StatusCode::Busy,         StatusCode::ReadOnly,           StatusCode::Aborted,
    StatusCode::ResourceExhausted, StatusCode::Internal,      StatusCode::CheckFailed,
};

}  // namespace

TEST_CASE("status: code names are distinct and stable") {
    std::set<std::string_view> names;
    for (StatusCode c : kAllCodes) names.insert(status_code_name(c));
    CHECK(names.size() == std::size(kAllCodes));
    CHECK(names.count("unknown") == 0);
    CHECK(status_code_name(StatusCode::ChecksumMismatch) == "checksum-mismatch");
    CHECK(status_code_name(StatusCode::NotADatabase) == "not-a-database");
    CHECK(status_code_name(StatusCode::CheckFailed) == "check-failed");
}

TEST_CASE("status: ok, message, to_string, context") {
    const Status ok;
    CHECK(ok.ok());
    CHECK(ok.to_string() == "ok");
    CHECK(ok.with_context("x").ok());
    const Status s = not_found("table 'a'");
    CHECK_FALSE(s.ok());
    CHECK(s.code() == StatusCode::NotFound);
    CHECK(s.to_string() == "not-found: table 'a'");
    const Status c = s.with_context("opening db");
    CHECK(c.code() == StatusCode::NotFound);
    CHECK(c.message() == "opening db: table 'a'");
}

TEST_CASE("result: holds a value or an error, never an ok status without a value") {
    Result<int> v = 7;
    REQUIRE(v.ok());
    CHECK(*v == 7);
    CHECK(v.status().ok());
    Result<int> e = invalid_argument("bad");
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().code() == StatusCode::InvalidArgument);
    CHECK(e.status().message() == "bad");
    Result<int> odd = Status();
    REQUIRE_FALSE(odd.ok());
    CHECK(odd.status().code() == StatusCode::Internal);
    Result<std::string> moved = std::string("abc");
    const std::string taken = std::move(moved).value();
    CHECK(taken == "abc");
}

TEST_CASE("exit codes: README's table, one mapping for every tool") {
    for (StatusCode c : kAllCodes) {
        const int code = exit_code(c);
        switch (c) {
            case StatusCode::Ok: CHECK(code == 0); break;
            case StatusCode::CheckFailed: CHECK(code == 1); break;
            case StatusCode::InvalidArgument:
            case StatusCode::AlreadyExists: CHECK(code == 2); break;
            default: CHECK(code == 3); break;
        }
    }
    CHECK(worse(invalid_argument("a"), io_error("b")).code() == StatusCode::IoError);
    CHECK(worse(io_error("b"), invalid_argument("a")).code() == StatusCode::IoError);
    CHECK(worse(Status(), check_failed("c")).code() == StatusCode::CheckFailed);
    CHECK(worse(corruption("first"), io_error("second")).message() == "first");
}

TEST_CASE("report: one line on the error stream, the exit code back") {
    std::ostringstream err;
    CHECK(report(err, "tbx", Status()) == 0);
    CHECK(err.str().empty());
    CHECK(report(err, "tbx", not_found("missing table antichess/KvK")) == 3);
    CHECK(err.str() == "tbx: error: missing table antichess/KvK\n");
    // Already reported where it happened: only the exit code.
    CHECK(report(err, "tbx", check_failed("")) == 1);
    CHECK(err.str() == "tbx: error: missing table antichess/KvK\n");
}
