// Table verification: the public minimax helpers, the database handle, and
// the --sample check (every child valued through tbf_probe). The full check
// streams the table in windows: table_stream.cpp.

#include "tbforge/verify/tables.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <unordered_set>

#include "movegen.hpp"
#include "table_stream.hpp"
#include "table_support.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/storage/database.hpp"

namespace tbf::verify {

std::string_view wdl_name(Wdl wdl) {
    switch (wdl) {
        case Wdl::Win: return "win";
        case Wdl::Loss: return "loss";
        case Wdl::Draw: break;
    }
    return "draw";
}

std::string to_string(const DtcValue& v) {
    if (v.wdl == Wdl::Draw) return v.dtc == 0 ? "draw" : "draw " + std::to_string(v.dtc);
    return std::string(wdl_name(v.wdl)) + " " + std::to_string(v.dtc);
}

DtcValue terminal_value(Outcome outcome) {
    switch (outcome) {
        case Outcome::Win: return {Wdl::Win, 0};
        case Outcome::Loss: return {Wdl::Loss, 0};
        case Outcome::Draw:
        case Outcome::NotTerminal: break;
    }
    return {};
}

DtcValue move_score(const DtcValue& child, bool conversion) {
    if (child.wdl == Wdl::Draw) return {};
    const Wdl wdl = child.wdl == Wdl::Win ? Wdl::Loss : Wdl::Win;
    return {wdl, conversion ? 1u : child.dtc + 1};
}

bool better(const DtcValue& a, const DtcValue& b) {
    if (a.wdl != b.wdl) return static_cast<int>(a.wdl) > static_cast<int>(b.wdl);
    if (a.wdl == Wdl::Win) return a.dtc < b.dtc;
    if (a.wdl == Wdl::Loss) return a.dtc > b.dtc;
    return false;
}

std::optional<DtcValue> derive_value(const Board& board, const ChildValue& child_value) {
    detail::MoveList moves;
    detail::generate_legal(board, moves);
    if (moves.empty()) return terminal_value(board.outcome());
    std::optional<DtcValue> best;
    for (const Move& m : moves) {
        DtcValue child;
        if (!child_value(board.after(m), child)) return std::nullopt;
        const DtcValue score = move_score(child, board.is_conversion(m));
        if (!best || better(score, *best)) best = score;
    }
    return best;
}

namespace {

using detail::CheckState;
using detail::Failure;
using detail::Tally;

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// --sample: positions drawn at random, each decoded with
// tbf_table_position and every child valued through tbf_probe (no table is
// held in memory).
class SampleCheck {
public:
    SampleCheck(tbf_db* db, const tbf_table_info& info, Variant variant, CheckState& state)
        : db_(db), info_(info), variant_(variant), options_(state.options()), state_(state) {
        // Slots decode to the stored colour orientation; either is accepted.
        const std::string material = info.material;
        const std::size_t v = material.find('v');
        materials_[0] = material;
        materials_[1] = v == std::string::npos
                            ? material
                            : material.substr(v + 1) + "v" + material.substr(0, v);
    }

    void run();

private:
    struct Worker {
        Worker(tbf_db* db, Variant variant) : valuer(db, variant) {}
        detail::ProbeValuer valuer;
        Tally tally;
        std::uint64_t shown = 0;
    };

    void check_slot(std::uint64_t slot, const tbf_value& stored, Worker& worker);
    void check_position(std::uint64_t slot, const tbf_position& pos, const DtcValue& stored,
                        Worker& worker);
    void record(Tally& tally, PositionError error) const { state_.record(tally, std::move(error)); }

    tbf_db* db_;
    const tbf_table_info& info_;
    Variant variant_;
    std::array<std::string, 2> materials_;  // the table's material, both orientations
    const TableCheckOptions& options_;
    CheckState& state_;
};

void SampleCheck::check_position(std::uint64_t slot, const tbf_position& pos,
                                 const DtcValue& stored, Worker& worker) {
    ++worker.tally.positions;
    if (const std::string material = detail::material_of(pos);
        material != materials_[0] && material != materials_[1]) {
        record(worker.tally,
               {slot, detail::neutral_fen(pos), stored, std::nullopt,
                "the slot decodes to a position of " + material + ", not " + materials_[0]});
        return;
    }
    const Result<Board> board = detail::to_board(variant_, pos);
    if (!board) {
        record(worker.tally,
               {slot, detail::neutral_fen(pos), stored, std::nullopt,
                "the slot decodes to an impossible position: " + board.status().message()});
        return;
    }
    if (board->ep_square() != kNoSquare) {
        record(worker.tally, {slot, board->fen(), stored, std::nullopt,
                              "the slot decodes to a position with an en-passant right"});
        return;
    }
    Failure failure;
    const auto derived = worker.valuer.derive(*board, failure);
    if (!derived) {
        if (failure.kind == Failure::Kind::Database) {
            state_.fail(failure.message + " (needed by " + board->fen() + ")");
        } else {
            record(worker.tally, {slot, board->fen(), stored, std::nullopt, failure.message});
        }
        return;
    }
    if (*derived != stored) {
        record(worker.tally,
               {slot, board->fen(), stored, derived,
                "stored " + to_string(stored) + ", its moves give " + to_string(*derived)});
        return;
    }
    // Probing the position itself must find the same value: the probe's
    // lookup must be the inverse of the slot decoding that was checked.
    const auto answer = worker.valuer.probe(*board, failure);
    if (failure.kind == Failure::Kind::Database) {
        state_.fail(failure.message);
        return;
    }
    if (!answer || *answer != stored) {
        record(worker.tally,
               {slot, board->fen(), stored, derived,
                answer ? "probing the position answers " + to_string(*answer) +
                             ", its slot stores " + to_string(stored)
                       : failure.message});
    }
}

void SampleCheck::check_slot(std::uint64_t slot, const tbf_value& stored_c, Worker& worker) {
    const std::uint64_t n = info_.index_size;
    const int side = slot >= n ? 1 : 0;
    const std::uint64_t index = slot - static_cast<std::uint64_t>(side) * n;
    const std::optional<DtcValue> stored = detail::from_c(stored_c);
    tbf_position pos{};
    const tbf_status status = tbf_table_position(db_, info_.name, index, side, &pos);
    if (status == TBF_ERR_NOT_A_POSITION) {
        if (!stored || *stored != DtcValue{}) {
            record(worker.tally,
                   {slot, "", stored, DtcValue{},
                    "slot " + std::to_string(slot) + " holds no position but stores " +
                        (stored ? to_string(*stored) : "an invalid value")});
        }
        return;
    }
    if (status != TBF_OK) {
        state_.fail(tbf_last_error());
        return;
    }
    if (!stored) {
        record(worker.tally, {slot, detail::neutral_fen(pos), std::nullopt, std::nullopt,
                              "the stored value has wdl " + std::to_string(stored_c.wdl)});
        return;
    }
    worker.tally.add_stored(side, *stored);
    check_position(slot, pos, *stored, worker);
}

void SampleCheck::run() {
    state_.report().sampled = true;
    const std::uint64_t slots = info_.slots;
    const std::uint64_t n = info_.index_size;
    // A seed of its own per table, so that tables do not share one sample pattern.
    std::uint64_t mix = options_.seed;
    for (const char* p = info_.name; *p != '\0'; ++p) {
        mix = (mix ^ static_cast<unsigned char>(*p)) * 0x100000001b3ull;
    }
    std::mt19937_64 rng(mix);

    const auto is_position = [&](std::uint64_t slot, bool& ok) {
        tbf_position pos{};
        const int side = slot >= n ? 1 : 0;
        const tbf_status status = tbf_table_position(
            db_, info_.name, slot - static_cast<std::uint64_t>(side) * n, side, &pos);
        ok = status == TBF_OK || status == TBF_ERR_NOT_A_POSITION;
        if (!ok) state_.fail(tbf_last_error());
        return status == TBF_OK;
    };

    // Rejection sampling of distinct slots gives a uniform sample of the
    // positions; when the sample is a large part of the table (or the table
    // is mostly holes) every position is listed and a subset drawn instead.
    std::vector<std::uint64_t> chosen;
    bool ok = true;
    bool enumerate = options_.sample >= slots / 4;
    if (!enumerate) {
        std::unordered_set<std::uint64_t> tried;
        std::uniform_int_distribution<std::uint64_t> pick(0, slots - 1);
        const std::uint64_t limit = 16 * options_.sample + 4096;
        while (ok && chosen.size() < options_.sample && tried.size() < limit) {
            const std::uint64_t slot = pick(rng);
            if (!tried.insert(slot).second) continue;
            if (is_position(slot, ok)) chosen.push_back(slot);
        }
        if (chosen.size() < options_.sample) {
            enumerate = true;
            chosen.clear();
        }
    }
    if (enumerate) {
        for (std::uint64_t slot = 0; ok && slot < slots; ++slot) {
            if (is_position(slot, ok)) chosen.push_back(slot);
        }
        // Partial Fisher-Yates: the first `sample` entries are a uniform subset.
        const std::uint64_t take = std::min<std::uint64_t>(options_.sample, chosen.size());
        for (std::uint64_t i = 0; i < take; ++i) {
            std::uniform_int_distribution<std::uint64_t> pick(i, chosen.size() - 1);
            std::swap(chosen[i], chosen[pick(rng)]);
        }
        chosen.resize(take);
    }
    if (!ok) return;
    std::sort(chosen.begin(), chosen.end());

    const auto count = static_cast<std::int64_t>(chosen.size());
#pragma omp parallel num_threads(state_.threads())
    {
        std::unique_ptr<Worker> worker;
        try {
            worker = std::make_unique<Worker>(db_, variant_);
        } catch (const std::bad_alloc&) {
            state_.fail("out of memory");
        }
#pragma omp for schedule(dynamic, 16)
        for (std::int64_t i = 0; i < count; ++i) {
            if (state_.stopped() || !worker) continue;
            tbf_value value{};
            const std::uint64_t slot = chosen[static_cast<std::size_t>(i)];
            if (tbf_table_values(db_, info_.name, slot, 1, &value) != TBF_OK) {
                state_.fail(tbf_last_error());
                continue;
            }
            try {
                check_slot(slot, value, *worker);
            } catch (const std::bad_alloc&) {
                state_.fail("out of memory");
            }
            state_.progress(1, worker->tally.positions - worker->shown, chosen.size());
            worker->shown = worker->tally.positions;
        }
        if (worker) state_.merge(worker->tally);
    }
}

struct DbCloser {
    void operator()(tbf_db* db) const { tbf_close(db); }
};
using DbHandle = std::unique_ptr<tbf_db, DbCloser>;

// The probe's own block cache serves only the sampled tbf_probe checks: the
// full check reads values with tbf_table_values, which bypasses it, into its
// ValueCache.
constexpr std::size_t kProbeCacheBytes = std::size_t{32} << 20;

}  // namespace

struct TableDatabase::State {
    DbHandle db;
    // The values (through `db`), and a second read-only handle, through the
    // storage reader, for what the C API does not expose: the block geometry
    // and the generator's statistics counters.
    std::unique_ptr<detail::ValueCache> cache;
    // The C API lists every table on each tbf_table_info_at call; a read-only
    // open sees a fixed database, so the listing is read once.
    std::vector<tbf_table_info> infos;
    std::mutex check_mutex;  // one check at a time: they share the cache
};

TableDatabase::TableDatabase(std::unique_ptr<State> state) : state_(std::move(state)) {}
TableDatabase::TableDatabase(TableDatabase&&) noexcept = default;
TableDatabase& TableDatabase::operator=(TableDatabase&&) noexcept = default;
TableDatabase::~TableDatabase() = default;

Result<TableDatabase> TableDatabase::open(const std::string& path) {
    tbf_db* raw = nullptr;
    if (tbf_open(path.c_str(), kProbeCacheBytes, &raw) != TBF_OK) {
        return io_error(tbf_last_error());
    }
    DbHandle db(raw);
    storage::DatabaseOptions options;
    options.block_cache_bytes = 0;  // metadata only
    auto metadata = storage::Database::open(path, options);
    if (!metadata.ok()) {
        return io_error("cannot open database " + path + ": " + metadata.status().to_string());
    }
    std::size_t count = 0;
    if (tbf_table_count(db.get(), &count) != TBF_OK) {
        return io_error(tbf_last_error());
    }
    std::vector<tbf_table_info> infos(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (tbf_table_info_at(db.get(), i, &infos[i]) != TBF_OK) {
            return io_error(tbf_last_error());
        }
    }
    auto state = std::make_unique<State>();
    state->db = std::move(db);
    state->cache = std::make_unique<detail::ValueCache>(state->db.get(), std::move(metadata).value());
    state->infos = std::move(infos);
    return TableDatabase(std::move(state));
}

std::vector<TableListing> TableDatabase::tables() const {
    std::vector<TableListing> out;
    for (const tbf_table_info& info : state_->infos) {
        out.push_back({info.name, info.variant, info.material});
    }
    return out;
}

TableReport TableDatabase::check(const std::string& name, const TableCheckOptions& options) const {
    const auto start = std::chrono::steady_clock::now();
    TableReport report;
    report.name = name;
    const auto finish = [&]() -> TableReport {
        report.seconds = seconds_since(start);
        return report;
    };

    std::lock_guard lock(state_->check_mutex);
    tbf_db* db = state_->db.get();
    const auto it = std::find_if(state_->infos.begin(), state_->infos.end(),
                                 [&](const tbf_table_info& i) { return name == i.name; });
    if (it == state_->infos.end()) {
        report.database_error = "table " + name + " is not in the database";
        return finish();
    }
    const tbf_table_info& info = *it;
    report.variant = info.variant;
    report.slots = info.slots;
    report.index_size = info.index_size;
    const std::optional<Variant> variant = variant_from_name(info.variant);
    if (!variant) {
        report.database_error =
            "table " + name + " has variant \"" + info.variant + "\", which tbverify does not know";
        return finish();
    }

    std::map<std::string, std::uint64_t> counters;
    auto stored = state_->cache->database().table_info(name);
    if (!stored.ok()) {
        report.database_error = stored.status().to_string();
        return finish();
    }
    for (const storage::Counter& c : stored->statistics.counters) counters[c.name] = c.value;

    CheckState state(options, report);
    if (options.sample > 0) {
        SampleCheck(db, info, *variant, state).run();
    } else {
        detail::StreamInputs in;
        in.db = db;
        in.cache = state_->cache.get();
        in.info = &info;
        in.variant = *variant;
        in.tables = &state_->infos;
        in.counters = &counters;
        detail::check_table_streaming(in, state);
        report.valid = state.totals().valid;
    }
    Tally& totals = state.totals();
    report.positions = totals.positions;
    report.errors = totals.errors;
    report.first_errors = std::move(totals.listed);
    return finish();
}

}  // namespace tbf::verify
