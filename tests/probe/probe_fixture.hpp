#pragma once
// Databases built once per test process by the real generator, then
// reopened read-only through Tablebase::open as a user would.

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tbforge/gen/generate.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"
#include "scratch_db.hpp"
#include "test_support.hpp"

namespace tbf::test {

inline index::Material table_material(VariantId variant, const std::string& name) {
    auto m = index::parse_table(name, variant);
    REQUIRE_MESSAGE(m.ok(), name);
    return index::canonical(*m);
}

// Builds `tables` (and everything they convert into) into `path`, with the
// generator's default block compression and value encoding unless given.
inline void build_tables(const std::string& path, VariantId variant,
                         const std::vector<index::Material>& tables,
                         storage::Compression compression = gen::GenerateOptions{}.compression,
                         const std::string& encoding = gen::GenerateOptions{}.value_encoding, int threads = 2) {
    probe::Tablebase writer(test::open_rw(path));
    gen::GenerateOptions gen_options;
    gen_options.threads = threads;
    gen_options.compression = compression;
    gen_options.value_encoding = encoding;
    auto result = gen::generate(writer, variant, tables, gen_options);
    if (!result.ok()) FAIL(result.status().message());
}

inline void build_tables(const std::string& path, VariantId variant,
                         const std::vector<std::string>& names) {
    std::vector<index::Material> tables;
    for (const auto& n : names) tables.push_back(table_material(variant, n));
    build_tables(path, variant, tables);
}

class BuiltDb {
public:
    // antichess: every 2-unit table, KQvK and KPvK (with its promotions).
    static const BuiltDb& antichess() {
        static BuiltDb db(VariantId::Antichess, [](const std::string& path) {
            auto tables = index::enumerate_tables(VariantId::Antichess, 2);
            tables.push_back(table_material(VariantId::Antichess, "KQvK"));
            tables.push_back(table_material(VariantId::Antichess, "KPvK"));
            build_tables(path, VariantId::Antichess, tables);
        });
        return db;
    }
    // antichess-fics: the pawn endings of 2 units, for the stalemate rule.
    static const BuiltDb& fics() {
        static BuiltDb db(VariantId::AntichessFics, [](const std::string& path) {
            build_tables(path, VariantId::AntichessFics, std::vector<std::string>{"PvP"});
        });
        return db;
    }
    // fourfile: every table of up to 3 units.
    static const BuiltDb& fourfile() {
        static BuiltDb db(VariantId::FourFile, [](const std::string& path) {
            build_tables(path, VariantId::FourFile,
                         index::enumerate_tables(VariantId::FourFile, 3));
        });
        return db;
    }

    VariantId variant() const { return variant_; }
    const std::string& path() const { return path_; }
    const probe::Tablebase& tablebase() const { return *tablebase_; }

    Position fen(const std::string& text) const {
        auto pos = parse_fen(text, variant_);
        REQUIRE_MESSAGE(pos.ok(), text << ": " << pos.status().message());
        return *pos;
    }
    probe::Value value(const Position& pos) const {
        auto v = tablebase_->probe(variant_, pos);
        REQUIRE_MESSAGE(v.ok(), to_fen(pos) << ": " << v.status().message());
        return *v;
    }
    probe::Value value(const std::string& text) const { return value(fen(text)); }
    std::vector<probe::MoveValue> moves(const Position& pos) const {
        auto m = tablebase_->probe_moves(variant_, pos);
        REQUIRE_MESSAGE(m.ok(), to_fen(pos) << ": " << m.status().message());
        return *m;
    }

private:
    template <class Build>
    BuiltDb(VariantId variant, Build build) : variant_(variant), dir_(), path_(dir_.sub("db")) {
        build(path_);
        auto tb = probe::Tablebase::open(path_);
        REQUIRE_MESSAGE(tb.ok(), tb.status().message());
        tablebase_ = std::make_unique<probe::Tablebase>(std::move(tb).value());
    }

    VariantId variant_;
    ScratchDir dir_;
    std::string path_;
    std::unique_ptr<probe::Tablebase> tablebase_;
};

// Up to `count` positions of a table, both sides to move, spread by a fixed
// seed over its slots.
inline std::vector<Position> sample_positions(VariantId variant, const std::string& table,
                                              std::size_t count, std::uint64_t seed = 1) {
    auto ix = index::Indexer::create(variant, table_material(variant, table));
    REQUIRE(ix.ok());
    std::mt19937_64 rng(seed);
    std::vector<Position> out;
    for (std::size_t tries = 0; out.size() < count && tries < 20 * count; ++tries) {
        const auto side = static_cast<Color>(rng() & 1);
        if (auto pos = ix->position(rng() % ix->size(), side)) out.push_back(*pos);
    }
    return out;
}

inline probe::Value win(int dtc) { return {Wdl::Win, static_cast<std::uint16_t>(dtc)}; }
inline probe::Value loss(int dtc) { return {Wdl::Loss, static_cast<std::uint16_t>(dtc)}; }
inline probe::Value draw() { return {}; }

}  // namespace tbf::test

namespace doctest {
template <>
struct StringMaker<tbf::probe::Value> {
    static String convert(const tbf::probe::Value& v) {
        const char* w = v.wdl == tbf::Wdl::Win ? "win" : v.wdl == tbf::Wdl::Loss ? "loss" : "draw";
        return (std::string(w) + " " + std::to_string(v.dtc)).c_str();
    }
};
}  // namespace doctest
