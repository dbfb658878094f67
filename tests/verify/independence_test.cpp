// verify/ must share no code with the generator: no file under verify/ may
// include a rules/ or gen/ header, and its build may not link those libraries
// (docs/ARCHITECTURE.md section 2). It links tbf::probe for the C API, which brings the
// rules headers onto its include path, so this scan is the guard: of probe/
// only the C header tbforge.h is allowed (the C++ headers expose rules types).
//
// The link closure is checked too, from the link map of the tbverify
// executable (GNU ld -Map with --cref, written by verify/CMakeLists.txt):
// nothing of gen/ or solve/ is linked, verify/'s own objects refer to no
// symbol of rules/ or index/ and to nothing of probe/ but its C API, and the
// rules/ objects the probe library pulls in are exactly the ones
// docs/verify.md lists with the reason they cannot mislead the check.

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
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

// ---- The link closure -------------------------------------------------------

// One symbol of the cross-reference table: the file defining it first, then
// the files referring to it.
struct CrossReference {
    std::string symbol;
    std::vector<std::string> files;
};

// The cross-reference table of a GNU ld map: a line per symbol (name, then
// its defining file as the last word), then a line per referring file,
// indented. Empty when the map has no such table.
std::vector<CrossReference> cross_references(std::istream& map) {
    std::vector<CrossReference> out;
    std::string line;
    while (std::getline(map, line) && line.rfind("Cross Reference Table", 0) != 0) {
    }
    bool header = true;
    while (std::getline(map, line)) {
        if (line.empty()) continue;
        if (header) {  // "Symbol   File"
            header = false;
            continue;
        }
        const std::size_t last = line.find_last_of(' ');
        const std::string file = last == std::string::npos ? line : line.substr(last + 1);
        if (line[0] == ' ') {
            if (!out.empty()) out.back().files.push_back(file);
        } else {
            const std::size_t end = line.find_last_not_of(' ', last);
            out.push_back({line.substr(0, end == std::string::npos ? 0 : end + 1), {file}});
        }
    }
    return out;
}

// The tbforge library a linked file belongs to ("rules" for
// rules/libtbf_rules.a(fen.cpp.o), "verify" for tbverify's own main object),
// or "" for system libraries.
std::string library_of(const std::string& file) {
    const std::size_t lib = file.find("libtbf_");
    if (lib != std::string::npos && file.find(".a(", lib) != std::string::npos) {
        return file.substr(lib + 7, file.find(".a(", lib) - lib - 7);
    }
    if (file.find("tbverify.dir") != std::string::npos) return "verify";
    return "";
}

// The source file of an archive member: "fen.cpp" for rules/libtbf_rules.a(fen.cpp.o).
std::string member_source(const std::string& file) {
    const std::size_t open = file.find(".a(");
    if (open == std::string::npos) return "";
    std::string member = file.substr(open + 3, file.size() - open - 4);
    if (member.ends_with(".o")) member.resize(member.size() - 2);
    return member;
}

bool c_api_symbol(const std::string& symbol) {
    return symbol.starts_with("tbf_") &&
           symbol.find_first_of(":( ") == std::string::npos;
}

struct LinkFindings {
    std::vector<std::string> problems;        // forbidden links, one line each
    std::set<std::string> rules_sources;      // rules/src/*.cpp linked
    std::set<std::string> c_api_used;         // tbf_* functions verify/ calls
};

LinkFindings check_links(const std::vector<CrossReference>& refs) {
    LinkFindings found;
    for (const CrossReference& r : refs) {
        const std::string owner = library_of(r.files.front());
        for (const std::string& file : r.files) {
            const std::string lib = library_of(file);
            if (lib == "gen" || lib == "solve") {
                found.problems.push_back(file + " is linked (" + r.symbol + ")");
            }
        }
        if (owner == "rules") found.rules_sources.insert(member_source(r.files.front()));
        // Only tbforge's own functions and data belong to the library that
        // defines them. Template instances of the standard library, and
        // inline functions of shared headers, are defined by whichever object
        // the linker met first; verify/'s objects come first in the link, so
        // those it uses are its own copies (the include scan above keeps
        // rules/ and gen/ headers out of them).
        if (!r.symbol.starts_with("tbf")) continue;
        for (std::size_t i = 1; i < r.files.size(); ++i) {
            const std::string user = library_of(r.files[i]);
            if (user != "verify") {
                // rules/ and index/ are reached only from the probe and index
                // libraries, never from base/ or storage/ either.
                if ((owner == "rules" || owner == "index") && user != "probe" &&
                    user != "index" && user != "rules") {
                    found.problems.push_back(r.files[i] + " refers to " + owner + "/ (" +
                                             r.symbol + ")");
                }
                continue;
            }
            if (owner == "rules" || owner == "index" || owner == "gen" || owner == "solve") {
                found.problems.push_back(r.files[i] + " refers to " + owner + "/ (" + r.symbol +
                                         ")");
            } else if (owner == "probe") {
                if (c_api_symbol(r.symbol)) {
                    found.c_api_used.insert(r.symbol);
                } else {
                    found.problems.push_back(r.files[i] + " refers to probe/ beyond the C API (" +
                                             r.symbol + ")");
                }
            }
        }
    }
    return found;
}

// The rules/src/*.cpp files docs/verify.md lists under its heading "What of
// rules/ the link reaches".
std::set<std::string> documented_rules_sources() {
    std::ifstream in(fs::path(TBF_SOURCE_DIR) / "docs" / "verify.md");
    std::set<std::string> out;
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.starts_with("#")) inside = line.find("What of rules/ the link reaches") != std::string::npos;
        if (!inside) continue;
        for (std::size_t at = line.find("`rules/src/"); at != std::string::npos;
             at = line.find("`rules/src/", at + 1)) {
            const std::size_t end = line.find('`', at + 1);
            out.insert(line.substr(at + 11, end - at - 11));
        }
    }
    return out;
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

TEST_CASE("the link closure of tbverify reaches rules/ only through the probe library") {
    std::ifstream map(TBF_TBVERIFY_MAP);
    REQUIRE_MESSAGE(map, "no link map at ", TBF_TBVERIFY_MAP);
    const std::vector<CrossReference> refs = cross_references(map);
    REQUIRE_MESSAGE(refs.size() > 1000, "no cross-reference table in ", TBF_TBVERIFY_MAP);
    const LinkFindings found = check_links(refs);
    for (const std::string& p : found.problems) FAIL_CHECK("forbidden link: ", p);
    CHECK(found.problems.empty());
    // The map is the one of this verifier: it calls the index lookup of the C API.
    for (const char* f : {"tbf_table_decode", "tbf_table_encode", "tbf_table_layout", "tbf_probe"}) {
        CHECK_MESSAGE(found.c_api_used.count(f) == 1, f, " is not called from verify/");
    }
    // What of rules/ is linked is what docs/verify.md explains.
    const std::set<std::string> documented = documented_rules_sources();
    CHECK_FALSE(documented.empty());
    for (const std::string& src : found.rules_sources) {
        CHECK_MESSAGE(documented.count(src) == 1, "rules/src/", src,
                      " is linked but not listed in docs/verify.md");
    }
    for (const std::string& src : documented) {
        CHECK_MESSAGE(found.rules_sources.count(src) == 1, "docs/verify.md lists rules/src/", src,
                      ", which is not linked");
    }
}

TEST_CASE("the link check catches what it should") {
    const std::string map =
        "Memory map\n\nCross Reference Table\n\n"
        "Symbol                                            File\n"
        "tbf_probe                                         probe/libtbf_probe.a(c_api.cpp.o)\n"
        "                                                  verify/libtbf_verify.a(tables.cpp.o)\n"
        "tbf::parse_fen(std::basic_string_view<char, std::char_traits<char> >, tbf::VariantId) "
        "rules/libtbf_rules.a(fen.cpp.o)\n"
        "                                                  probe/libtbf_probe.a(c_api.cpp.o)\n";
    std::istringstream clean(map);
    const LinkFindings ok = check_links(cross_references(clean));
    CHECK(ok.problems.empty());
    CHECK(ok.rules_sources == std::set<std::string>{"fen.cpp"});
    CHECK(ok.c_api_used == std::set<std::string>{"tbf_probe"});

    const std::string bad =
        map +
        "                                                  verify/libtbf_verify.a(board.cpp.o)\n"
        "tbf::probe::Tablebase::probe(tbf::VariantId, tbf::Position const&) const "
        "probe/libtbf_probe.a(tablebase.cpp.o)\n"
        "                                                  verify/libtbf_verify.a(tables.cpp.o)\n"
        "tbf::gen::generate()                              gen/libtbf_gen.a(generate.cpp.o)\n"
        "tbf::index::Indexer::encode(unsigned char const*) const "
        "index/libtbf_index.a(indexer.cpp.o)\n"
        "                                                  storage/libtbf_storage.a(table.cpp.o)\n"
        "                                                  CMakeFiles/tbverify.dir/tbverify_main.cpp.o\n";
    std::istringstream broken(bad);
    const LinkFindings found = check_links(cross_references(broken));
    // verify/ calling the rules FEN parser, the C++ probe API, a gen/ object
    // linked, storage/ and tbverify's main reaching the index.
    CHECK(found.problems.size() == 5);
    CHECK(library_of("CMakeFiles/tbverify.dir/tbverify_main.cpp.o") == "verify");
    CHECK(member_source("rules/libtbf_rules.a(bitboard.cpp.o)") == "bitboard.cpp");
}
