#pragma once
// Helpers shared by the test executables: reading reference TSV files and
// scaling work down in sanitizer builds.

#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tbf::test {

// Sanitizer builds run ~20x slower; deep cases are capped there.
#ifdef TBF_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Whole-table comparisons visit every slot in Release builds; sanitizer
// builds, there to catch memory errors rather than wrong values, visit every
// kSlotStride-th slot (odd, so both halves of a two-sided range are sampled
// at shifting offsets).
inline constexpr std::uint64_t kSlotStride = kSanitized ? 13 : 1;

// Every table in Release builds; every third one (the first included) in
// sanitizer builds, for tests that build and decode a whole set of tables.
template <class T>
std::vector<T> sanitized_sample(const std::vector<T>& all) {
    if (!kSanitized) return all;
    std::vector<T> some;
    for (std::size_t i = 0; i < all.size(); i += 3) some.push_back(all[i]);
    return some;
}

// Four File's initial position.
inline constexpr const char* kFourFileStart = "r1b1k1n1/p1p1p1p1/8/8/8/8/P1P1P1P1/R1B1K1N1 w - - 0 1";

inline bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string_view::npos;
}

inline std::string reference_path(const std::string& relative) {
    return std::string(TBF_REFERENCE_DIR) + "/" + relative;
}

// A TSV file with a header row; rows as vectors of fields.
struct Tsv {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;

    [[nodiscard]] std::size_t column(const std::string& name) const {
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (header[i] == name) return i;
        }
        throw std::runtime_error("no column " + name);
    }
};

inline std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, '\t')) fields.push_back(field);
    return fields;
}

inline Tsv read_tsv(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    Tsv tsv;
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (first) {
            tsv.header = split_tabs(line);
            first = false;
        } else {
            tsv.rows.push_back(split_tabs(line));
        }
    }
    return tsv;
}

}  // namespace tbf::test

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace tbf::test {

// A fresh directory under $TMPDIR (or /tmp), removed when the object dies.
class ScratchDir {
public:
    ScratchDir() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base ? base : "/tmp") + "/tbforge-test-XXXXXX";
        if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }
    std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

}  // namespace tbf::test

#include <doctest/doctest.h>

namespace tbf::test {

// A doctest listener that calls OnEnd when the run ends, before static
// destruction: shared databases must close while RocksDB's globals live.
template <void (*OnEnd)()>
struct RunEndListener : doctest::IReporter {
    explicit RunEndListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override { OnEnd(); }
    void test_case_start(const doctest::TestCaseData&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace tbf::test
