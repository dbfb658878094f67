#pragma once
// One database with tables of every variant, built once per test process by
// the generator and reopened read-only, as tbserve opens it; and the helpers
// the serve tests share.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "probe_fixture.hpp"
#include "tbforge/base/json.hpp"
#include "tbforge/serve/service.hpp"
#include "test_support.hpp"

namespace tbf::test {

class ServeDb {
public:
    static ServeDb& get() {
        if (!instance()) instance().reset(new ServeDb());
        return *instance();
    }
    // Closes the database at the end of the run, before static destruction.
    static void close() { instance().reset(); }

    const std::string& path() const { return path_; }
    const probe::Tablebase& tablebase() const { return *tablebase_; }
    const serve::Service& service() const { return *service_; }

    // Positions to ask about: a fixed-seed sample of each table named here.
    static std::vector<std::pair<VariantId, std::vector<std::string>>> sampled_tables() {
        return {{VariantId::Antichess, {"KvK", "KQvK", "KPvK", "BBvB", "PvP", "NvN"}},
                {VariantId::AntichessFics, {"PvP", "KvN", "RvB"}},
                {VariantId::AntichessJoint, {"PvP", "KvQ", "BvB"}},
                {VariantId::FourFile, {"KvK", "KRvK", "KNvK", "KPvK", "KvKB"}}};
    }

private:
    static std::unique_ptr<ServeDb>& instance() {
        static std::unique_ptr<ServeDb> db;
        return db;
    }

    ServeDb() : path_(dir_.sub("db")) {
        auto with = [](std::vector<index::Material> tables, VariantId v,
                       std::initializer_list<const char*> names) {
            for (const char* n : names) tables.push_back(table_material(v, n));
            return tables;
        };
        using V = VariantId;
        build_tables(path_, V::Antichess,
                     with(index::enumerate_tables(V::Antichess, 2), V::Antichess,
                          {"KQvK", "KPvK", "BBvB"}));
        build_tables(path_, V::AntichessFics,
                     with({}, V::AntichessFics, {"PvP", "KvN", "RvB"}));
        build_tables(path_, V::AntichessJoint,
                     with({}, V::AntichessJoint, {"PvP", "KvQ", "BvB"}));
        build_tables(path_, V::FourFile, index::enumerate_tables(V::FourFile, 3));
        auto tb = probe::Tablebase::open(path_);
        REQUIRE_MESSAGE(tb.ok(), tb.status().message());
        tablebase_ = std::make_unique<probe::Tablebase>(std::move(tb).value());
        auto tables = tablebase_->database().list_tables();
        REQUIRE(tables.ok());
        service_ = std::make_unique<serve::Service>(*tablebase_, serve::WebFiles{}, tables->size());
    }

    ScratchDir dir_;
    std::string path_;
    std::unique_ptr<probe::Tablebase> tablebase_;
    std::unique_ptr<serve::Service> service_;
};

// A FEN as a query value: underscores for spaces (the lichess form).
inline std::string fen_param(std::string fen) {
    for (char& c : fen) {
        if (c == ' ') c = '_';
    }
    return fen;
}

inline Json parse_json(const std::string& text) {
    Json j = Json::parse(text, nullptr, false);
    REQUIRE_MESSAGE(!j.is_discarded(), "not JSON: " << text);
    return j;
}

// The lichess API description the answers must keep to
// (tests/serve/lichess_api.json).
inline const Json& lichess_api() {
    static const Json api = [] {
        std::ifstream in(std::string(TBF_SOURCE_DIR) + "/tests/serve/lichess_api.json");
        std::ostringstream text;
        text << in.rdbuf();
        return parse_json(text.str());
    }();
    return api;
}

}  // namespace tbf::test
