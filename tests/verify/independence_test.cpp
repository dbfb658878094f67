// verify/ must share no code with the generator: no file under verify/ may
// include a rules/ or gen/ header, and its build may not link those libraries
// (docs/ARCHITECTURE.md section 2). It links tbf::probe for the C API, which brings the
// rules headers onto its include path, so this scan is the guard: of probe/
// only the C header tbforge.h is allowed (the C++ headers expose rules types).

#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// The path of an #include line ("tbforge/rules/x.hpp"), or "" for other lines.
std::string included_path(const std::string& line) {
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#') return "";
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string::npos || (line[i] != '"' && line[i] != '<')) return "";
    const std::size_t close = line.find(line[i] == '"' ? '"' : '>', i + 1);
    return line.substr(i + 1, close == std::string::npos ? std::string::npos : close - i - 1);
}

bool forbidden_header(const std::string& path) {
    for (const char* dir : {"rules/", "gen/"}) {
        if (path.starts_with(dir) || path.find(std::string("/") + dir) != std::string::npos) {
            return true;
        }
    }
    const std::size_t probe = path.find("probe/");
    return probe != std::string::npos && (probe == 0 || path[probe - 1] == '/') &&
           path != "tbforge/probe/tbforge.h";
}

// A CMake line that links the rules or gen library.
bool links_rules_or_gen(const std::string& line) {
    for (const char* target : {"tbf::rules", "tbf_rules", "tbf::gen", "tbf_gen"}) {
        for (std::size_t at = line.find(target); at != std::string::npos;
             at = line.find(target, at + 1)) {
            const std::size_t after = at + std::string(target).size();
            const bool word_ends =
                after == line.size() ||
                !(std::isalnum(static_cast<unsigned char>(line[after])) || line[after] == '_');
            if (word_ends) return true;
        }
    }
    return false;
}

// "file:line: text" for every forbidden include or link under `root`.
std::vector<std::string> forbidden_uses(const fs::path& root) {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (!entry.is_regular_file()) continue;
        const bool cmake =
            entry.path().filename() == "CMakeLists.txt" || entry.path().extension() == ".cmake";
        std::ifstream in(entry.path());
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            if (forbidden_header(included_path(line)) || (cmake && links_rules_or_gen(line))) {
                found.push_back(entry.path().string() + ":" + std::to_string(number) + ": " + line);
            }
        }
    }
    return found;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

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
    write(dir / "src" / "ok.cpp",
          "#include \"tbforge/verify/board.hpp\"\n#include <vector>\n"
          "#include \"tbforge/probe/tbforge.h\"\n#include \"tbforge/storage/database.hpp\"\n");
    write(dir / "CMakeLists.txt", "target_link_libraries(x PRIVATE tbf::options tbf_generic)\n");
    write(dir / "src" / "d.cpp", "// #include \"tbforge/rules/x.hpp\" is not allowed\n");
    CHECK(forbidden_uses(dir).empty());

    write(dir / "src" / "a.cpp", "#include \"tbforge/rules/position.hpp\"\n");
    write(dir / "src" / "b.hpp", "  #  include <tbforge/gen/retro.hpp>\n");
    write(dir / "src" / "c.cpp", "#include \"../../rules/src/movegen.hpp\"\n");
    write(dir / "src" / "e.cpp", "#include \"tbforge/probe/tablebase.hpp\"\n");
    write(dir / "CMakeLists.txt", "target_link_libraries(x PRIVATE tbf::rules)\n");
    CHECK(forbidden_uses(dir).size() == 5);
    CHECK(included_path("#include <tbforge/gen/retro.hpp>") == "tbforge/gen/retro.hpp");
    fs::remove_all(dir);
}
