#include <doctest/doctest.h>

#include <string>

#include "tbforge/base/json.hpp"

using tbf::Json;
using tbf::to_json_line;

TEST_CASE("json: one compact line, keys in the order they were set") {
    Json j;
    j["table"] = "KQvR";
    j["built"] = true;
    j["positions"] = std::uint64_t{18446744073709551615ull};
    j["phases"] = Json{{"initial", 1}, {"levels", 2}};
    j["list"] = Json::array({1, 2});
    j["none"] = nullptr;
    CHECK(to_json_line(j) ==
          "{\"table\":\"KQvR\",\"built\":true,\"positions\":18446744073709551615,"
          "\"phases\":{\"initial\":1,\"levels\":2},\"list\":[1,2],\"none\":null}");
}

TEST_CASE("json: strings are escaped, bytes that are not UTF-8 become U+FFFD") {
    CHECK(to_json_line(Json("a\"b\\c\n\x01")) == "\"a\\\"b\\\\c\\n\\u0001\"");
    CHECK(to_json_line(Json("caf\xc3\xa9")) == "\"caf\xc3\xa9\"");
    CHECK(to_json_line(Json("x\xff y")) == "\"x\xef\xbf\xbd y\"");
    // The text round-trips through the parser.
    const std::string line = to_json_line(Json{{"fen", "bad \xc3("}});
    CHECK(Json::parse(line)["fen"] == "bad \xef\xbf\xbd(");
}

TEST_CASE("json: timings rounded to milliseconds") {
    CHECK(tbf::rounded_seconds(1.23449) == doctest::Approx(1.234));
    CHECK(to_json_line(Json(tbf::rounded_seconds(0.1234567))) == "0.123");
    CHECK(to_json_line(Json(tbf::rounded_seconds(2.0))) == "2.0");
}
