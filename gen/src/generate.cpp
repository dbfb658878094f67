#include "tbforge/gen/generate.hpp"

#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "tbforge/gen/table_build.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/rules/fen.hpp"

namespace tbf::gen {

namespace {

// 4 bits per (colour, unit type): a key for the material of a position.
std::uint64_t material_key(const Position& pos) {
    std::uint64_t key = 0;
    for (int c = 0; c < 2; ++c) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            key = key << 4 |
                  static_cast<std::uint64_t>(popcount(pos.units(static_cast<Color>(c), static_cast<UnitType>(t))));
        }
    }
    return key;
}

std::uint64_t material_key(const index::Material& m) {
    std::uint64_t key = 0;
    for (Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            key = key << 4 | static_cast<std::uint64_t>(m.count(c, static_cast<UnitType>(t)));
        }
    }
    return key;
}

// Sub-tables of one table, decoded in memory, found by the material of a
// child position in either colour orientation.
class SubtableValues {
public:
    void add(const index::Material& m, std::shared_ptr<const probe::Table> table) {
        tables_[material_key(m)] = table;
        tables_[material_key(m.flipped())] = std::move(table);
    }
    // Called from parallel loops, so failures are recorded, not thrown.
    probe::Value value(const probe::Tablebase& tb, const Position& pos) const {
        if (pos.units(pos.side_to_move()) == 0) return {Wdl::Win, 0};
        if (pos.units(~pos.side_to_move()) == 0) return {Wdl::Loss, 0};
        auto it = tables_.find(material_key(pos));
        if (it != tables_.end()) {
            auto v = tb.value_in(*it->second, pos);
            if (v.ok()) return *v;
        }
        std::lock_guard lock(mutex_);
        if (error_.empty()) error_ = "no sub-table value for " + to_fen(pos);
        return {};
    }
    const std::string& error() const { return error_; }

private:
    mutable std::mutex mutex_;
    mutable std::string error_;
    std::unordered_map<std::uint64_t, std::shared_ptr<const probe::Table>> tables_;
};

class ProgressLine {
public:
    ProgressLine(bool enabled, std::string table) : enabled_(enabled), table_(std::move(table)) {}
    void update(const char* pass, int level, std::uint64_t done, std::uint64_t total) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ < std::chrono::milliseconds(250)) return;
        last_ = now;
        const double elapsed = std::chrono::duration<double>(now - start_).count();
        char line[200];
        if (level < 0) {
            const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
            const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
            std::snprintf(line, sizeof line, "\r%s: %s %5.1f%%  %.2fM pos/s  ETA %.0fs   ",
                          table_.c_str(), pass, 100.0 * static_cast<double>(done) / static_cast<double>(total),
                          rate / 1e6, eta);
        } else {
            std::snprintf(line, sizeof line, "\r%s: level %d  %llu/%llu  %.0fs elapsed        ",
                          table_.c_str(), level, static_cast<unsigned long long>(done),
                          static_cast<unsigned long long>(total), elapsed);
        }
        std::fputs(line, stderr);
    }
    void finish() {
        if (enabled_) std::fputs("\r\033[K", stderr);
    }

private:
    bool enabled_;
    std::string table_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point last_{};
};

struct Statistics {
    storage::TableStatistics stored;
    int max_dtc = 0;
};

Statistics table_statistics(const index::Indexer& ix, const TableValues& values) {
    Statistics out;
    std::array<std::array<std::uint64_t, 3>, 2> wdl{};  // loss, draw, win
    std::vector<std::uint64_t> win_histogram, loss_histogram;
    int longest_win = -1;
    Color longest_side = Color::White;
    std::uint64_t longest_index = 0;
    for (int c = 0; c < 2; ++c) {
        const auto side = static_cast<Color>(c);
        const auto& v = values.values[c];
        for (std::uint64_t i = 0; i < v.size(); ++i) {
            const probe::Value value = probe::decode_value(v[i]);
            if (value.wdl == Wdl::Draw) continue;
            auto& histogram = value.wdl == Wdl::Win ? win_histogram : loss_histogram;
            if (histogram.size() <= value.dtc) histogram.resize(value.dtc + 1);
            ++histogram[value.dtc];
            ++wdl[c][value.wdl == Wdl::Win ? 2 : 0];
            out.max_dtc = std::max<int>(out.max_dtc, value.dtc);
            if (value.wdl == Wdl::Win && value.dtc > longest_win) {
                longest_win = value.dtc;
                longest_side = side;
                longest_index = i;
            }
        }
    }
    // Draws are what remains of the valid positions: stored zeros include
    // invalid slots.
    std::array<std::uint64_t, 2> valid_per_side{};
    for (int c = 0; c < 2; ++c) {
        std::uint64_t n = 0;
        const auto side = static_cast<Color>(c);
#pragma omp parallel for reduction(+ : n) schedule(static)
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(ix.size()); ++i) {
            n += ix.is_valid(static_cast<std::uint64_t>(i), side);
        }
        valid_per_side[c] = n;
        wdl[c][1] = n - wdl[c][0] - wdl[c][2];
    }
    const char* sides[2] = {"white", "black"};
    std::ostringstream json;
    json << "{";
    for (int c = 0; c < 2; ++c) {
        json << (c ? "," : "") << '"' << sides[c] << "\":{\"win\":" << wdl[c][2]
             << ",\"draw\":" << wdl[c][1] << ",\"loss\":" << wdl[c][0] << '}';
        out.stored.counters.push_back({std::string(sides[c]) + ".valid", valid_per_side[c]});
        out.stored.counters.push_back({std::string(sides[c]) + ".win", wdl[c][2]});
        out.stored.counters.push_back({std::string(sides[c]) + ".draw", wdl[c][1]});
        out.stored.counters.push_back({std::string(sides[c]) + ".loss", wdl[c][0]});
    }
    out.stored.counters.push_back({"max_dtc", static_cast<std::uint64_t>(out.max_dtc)});
    json << ",\"max_dtc\":" << out.max_dtc;
    auto histogram_json = [&](const char* name, const std::vector<std::uint64_t>& h) {
        json << ",\"" << name << "\":[";
        for (std::size_t i = 0; i < h.size(); ++i) json << (i ? "," : "") << h[i];
        json << ']';
    };
    histogram_json("win_dtc_histogram", win_histogram);
    histogram_json("loss_dtc_histogram", loss_histogram);
    if (longest_win >= 0) {
        auto pos = ix.position(longest_index, longest_side);
        json << ",\"longest_win\":{\"dtc\":" << longest_win << ",\"fen\":\""
             << (pos ? to_fen(*pos) : std::string()) << "\"}";
    }
    json << '}';
    out.stored.json = json.str();
    return out;
}

// Sub-tables decoded for the tables being built, each dropped after the last
// table of the run that converts into it.
class ResidentTables {
public:
    ResidentTables(VariantId variant, const std::vector<index::Material>& order) {
        for (std::size_t k = 0; k < order.size(); ++k) {
            for (const auto& sub : index::sub_tables(order[k], variant)) last_use_[sub.name()] = k;
        }
    }
    probe::ProbeResult<std::shared_ptr<const probe::Table>> get(const probe::Tablebase& tb, VariantId variant,
                                                                const index::Material& m) {
        auto it = tables_.find(m.name());
        if (it != tables_.end()) return it->second;
        auto table = tb.decode_table(variant, m);
        if (table.ok()) tables_.emplace(m.name(), *table);
        return table;
    }
    // Table k of the order is done.
    void done(std::size_t k) {
        std::erase_if(tables_, [&](const auto& entry) { return last_use_[entry.first] <= k; });
    }

private:
    std::unordered_map<std::string, std::size_t> last_use_;
    std::unordered_map<std::string, std::shared_ptr<const probe::Table>> tables_;
};

template <Ruleset R>
std::variant<TableSummary, GenerateError> build_one(probe::Tablebase& tb, const index::Material& material,
                                                    const GenerateOptions& options, ResidentTables& resident) {
    const auto start = std::chrono::steady_clock::now();
    const std::string name = probe::table_name(R::kId, material);
    auto indexer = index::Indexer::create(R::kId, material);
    if (!indexer.ok()) return GenerateError{2, indexer.error()};
    SubtableValues subtables;
    for (const auto& sub : index::sub_tables(material, R::kId)) {
        auto table = resident.get(tb, R::kId, sub);
        if (!table.ok()) return GenerateError{3, "building " + name + ": " + table.error().message};
        subtables.add(sub, *table);
    }
    ProgressLine progress(options.progress, name);
    TableValues values = build_table_values<R>(
        *indexer, [&](const Position& child) { return subtables.value(tb, child); },
        [&](const char* pass, int level, std::uint64_t done, std::uint64_t total) {
            progress.update(pass, level, done, total);
        });
    progress.finish();
    if (!subtables.error().empty()) {
        return GenerateError{3, "building " + name + ": " + subtables.error()};
    }
    const Statistics stats = table_statistics(*indexer, values);

    storage::TableSpec spec;
    spec.name = name;
    spec.variant = std::string(R::kName);
    spec.material = material.name();
    spec.slot_count = 2 * indexer->size();
    spec.value_encoding = std::string(probe::kValueEncoding);
    spec.generator_version = std::string(kGeneratorVersion);
    std::uint16_t max_code = 0;
    for (const auto& side : values.values) {
        for (auto v : side) max_code = std::max(max_code, v);
    }
    spec.value_width = max_code <= 0xFF ? 1 : 2;
    storage::TableWriteOptions write_options;
    write_options.compression = options.compression;
    auto writer = tb.database().create_table(spec, write_options);
    if (!writer.ok()) return GenerateError{3, "writing " + name + ": " + writer.status().to_string()};
    for (const auto& side : values.values) {
        storage::Status status;
        if (spec.value_width == 1) {
            constexpr std::size_t kChunk = 1 << 16;
            std::vector<std::uint8_t> narrow;
            for (std::size_t at = 0; at < side.size() && status.ok(); at += kChunk) {
                const std::size_t n = std::min(kChunk, side.size() - at);
                narrow.assign(side.begin() + static_cast<long>(at), side.begin() + static_cast<long>(at + n));
                status = writer->append(std::span<const std::uint8_t>(narrow));
            }
        } else {
            status = writer->append(std::span<const std::uint16_t>(side));
        }
        if (!status.ok()) return GenerateError{3, "writing " + name + ": " + status.to_string()};
    }
    if (auto status = writer->commit(stats.stored); !status.ok()) {
        return GenerateError{3, "writing " + name + ": " + status.to_string()};
    }
    auto info = tb.database().table_info(name);
    TableSummary summary;
    summary.name = name;
    summary.built = true;
    summary.positions = values.stats.positions;
    summary.stored_bytes = info.ok() ? info->stored_bytes : 0;
    summary.max_dtc = stats.max_dtc;
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary;
}

}  // namespace

std::variant<std::vector<TableSummary>, GenerateError> generate(
    probe::Tablebase& tablebase, VariantId variant, const std::vector<index::Material>& tables,
    const GenerateOptions& options, const std::function<void(const TableSummary&)>& on_table) {
    if (options.threads > 0) omp_set_num_threads(options.threads);
    std::vector<TableSummary> summaries;
    const std::vector<index::Material> order = index::dependency_order(variant, tables);
    ResidentTables resident(variant, order);
    for (std::size_t k = 0; k < order.size(); resident.done(k), ++k) {
        const index::Material& material = order[k];
        const std::string name = probe::table_name(variant, material);
        auto existing = tablebase.database().table_info(name);
        if (existing.ok()) {
            TableSummary summary;
            summary.name = name;
            summary.stored_bytes = existing->stored_bytes;
            summaries.push_back(summary);
            if (on_table) on_table(summary);
            continue;
        }
        if (existing.status().code() != storage::ErrorCode::NotFound) {
            return GenerateError{3, "reading " + name + ": " + existing.status().to_string()};
        }
        auto built = with_variant(variant, [&]<class R>() { return build_one<R>(tablebase, material, options, resident); });
        if (auto* error = std::get_if<GenerateError>(&built)) return *error;
        summaries.push_back(std::get<TableSummary>(built));
        if (on_table) on_table(summaries.back());
    }
    return summaries;
}

}  // namespace tbf::gen
