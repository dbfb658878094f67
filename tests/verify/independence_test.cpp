// verify/ must share no code with the generator: no file under verify/ may
// include a rules/ or gen/ header, and its build may not link those libraries
// (DESIGN.md section 2).

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// "file:line: text" for every forbidden include or link under `root`.
std::vector<std::string> forbidden_uses(const fs::path& root) {
    // #include "tbforge/rules/..." or <rules/...>, and the same for gen/.
    const std::regex include(R"(^\s*#\s*include\s*[<"]([^">]*/)?(rules|gen)/)");
    const std::regex link(R"(tbf(::|_)(rules|gen)\b)");
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (!entry.is_regular_file()) continue;
        const std::string name = entry.path().filename().string();
        const bool cmake = name == "CMakeLists.txt" || entry.path().extension() == ".cmake";
        std::ifstream in(entry.path());
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            if (std::regex_search(line, include) || (cmake && std::regex_search(line, link))) {
                found.push_back(entry.path().string() + ":" + std::to_string(number) + ": " + line);
            }
        }
    }
    return found;
}

void write(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("verify/ includes nothing from rules/ or gen/ and links neither") {
    const fs::path root = fs::path(TBF_SOURCE_DIR) / "verify";
    REQUIRE(fs::is_directory(root));
    const std::vector<std::string> found = forbidden_uses(root);
    for (const std::string& f : found) FAIL_CHECK("forbidden dependency: ", f);
    CHECK(found.empty());
}

TEST_CASE("the dependency scan catches what it should") {
    // A unique name: sanitizer and release builds may run this at the same time.
    const fs::path dir = fs::temp_directory_path() /
                         ("tbf_verify_scan_test_" + std::to_string(std::random_device{}()));
    fs::remove_all(dir);
    fs::create_directories(dir / "src");
    write(dir / "src" / "ok.cpp", "#include \"tbforge/verify/board.hpp\"\n#include <vector>\n");
    write(dir / "CMakeLists.txt", "target_link_libraries(x PRIVATE tbf::options)\n");
    CHECK(forbidden_uses(dir).empty());

    write(dir / "src" / "a.cpp", "#include \"tbforge/rules/position.hpp\"\n");
    write(dir / "src" / "b.hpp", "  #  include <tbforge/gen/retro.hpp>\n");
    write(dir / "src" / "c.cpp", "#include \"../../rules/src/movegen.hpp\"\n");
    write(dir / "CMakeLists.txt", "target_link_libraries(x PRIVATE tbf::rules)\n");
    CHECK(forbidden_uses(dir).size() == 4);
    fs::remove_all(dir);
}
