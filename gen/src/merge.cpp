// tbgen merge: finished tables of per-table databases copied into one
// database, each atomically; conflicts refused before anything is copied.

#include <cstdio>
#include <map>

#include "tbforge/gen/plan.hpp"

namespace tbf::gen {

namespace {

std::string hex(std::uint64_t v) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
}

// What differs between two versions of one table, "" if they are the same
// table: same kind of values and the same values.
std::string difference(const storage::TableInfo& a, const storage::TableInfo& b) {
    const auto& x = a.spec;
    const auto& y = b.spec;
    if (x.variant != y.variant) return "variant " + x.variant + " against " + y.variant;
    if (x.material != y.material) return "material " + x.material + " against " + y.material;
    if (x.value_encoding != y.value_encoding) return "encoding " + x.value_encoding + " against " + y.value_encoding;
    if (x.slot_count != y.slot_count) {
        return std::to_string(x.slot_count) + " slots against " + std::to_string(y.slot_count);
    }
    if (x.value_width != y.value_width || a.values_checksum != b.values_checksum) {
        return "values checksum " + hex(a.values_checksum) + " against " + hex(b.values_checksum);
    }
    return {};
}

Result<storage::Database> open_source(const std::string& path) {
    storage::DatabaseOptions options;
    options.block_cache_bytes = 0;  // copies stream every block once
    auto db = storage::Database::open(path, options);
    if (!db.ok()) return db.status().with_context("source database " + path);
    return db;
}

struct Holder {
    storage::TableInfo info;
    std::string where;  // the database path
};

}  // namespace

Result<std::vector<MergedTable>> merge_databases(storage::Database& target, const std::vector<std::string>& sources,
                                                 const std::function<void(const MergedTable&)>& on_table) {
    if (sources.empty()) return invalid_argument("no source databases given");
    // First every source's catalog, so that a conflict anywhere is found
    // before anything is copied. Sources are opened one at a time: a merge
    // of thousands of per-table databases must not hold them all open.
    std::map<std::string, Holder> seen;
    auto existing = target.list_tables();
    if (!existing.ok()) return existing.status().with_context("reading " + target.path());
    for (auto& info : *existing) {
        const std::string name = info.spec.name;
        seen.emplace(name, Holder{std::move(info), target.path()});
    }
    std::vector<std::vector<storage::TableInfo>> to_copy(sources.size());
    std::vector<MergedTable> skipped;
    std::vector<std::string> conflicts;
    for (std::size_t k = 0; k < sources.size(); ++k) {
        auto db = open_source(sources[k]);
        if (!db.ok()) return db.status();
        auto tables = db->list_tables();
        if (!tables.ok()) return tables.status().with_context("reading source database " + sources[k]);
        for (auto& info : *tables) {
            auto it = seen.find(info.spec.name);
            if (it == seen.end()) {
                seen[info.spec.name] = Holder{info, sources[k]};
                to_copy[k].push_back(std::move(info));
                continue;
            }
            const std::string diff = difference(info, it->second.info);
            if (!diff.empty()) {
                conflicts.push_back("table " + info.spec.name + " differs: " + diff + " in " + sources[k] +
                                    " and " + it->second.where);
                continue;
            }
            skipped.push_back(MergedTable{info.spec.name, sources[k], false, info.values_checksum, info.stored_bytes});
        }
    }
    if (!conflicts.empty()) {
        std::string message = conflicts.front();
        if (conflicts.size() > 1) message += " (and " + std::to_string(conflicts.size() - 1) + " more conflicts)";
        return Status(StatusCode::CheckFailed, message + "; nothing merged");
    }

    std::vector<MergedTable> merged;
    for (auto& t : skipped) {
        if (on_table) on_table(t);
        merged.push_back(std::move(t));
    }
    for (std::size_t k = 0; k < sources.size(); ++k) {
        if (to_copy[k].empty()) continue;
        auto db = open_source(sources[k]);
        if (!db.ok()) return db.status();
        for (const auto& info : to_copy[k]) {
            auto reader = db->open_table(info.spec.name);
            if (!reader.ok()) return reader.status().with_context("reading source database " + sources[k]);
            auto copy = target.copy_table(*reader);
            if (!copy.ok()) return copy.status().with_context("merging into " + target.path());
            MergedTable t{info.spec.name, sources[k], true, copy->values_checksum, copy->stored_bytes};
            if (on_table) on_table(t);
            merged.push_back(std::move(t));
        }
    }
    return merged;
}

}  // namespace tbf::gen
