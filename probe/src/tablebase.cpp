#include "tbforge/probe/tablebase.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "resolved_cache.hpp"
#include "tbforge/base/mix64.hpp"
#include "tbforge/probe/slot_kind.hpp"
#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"

namespace tbf::probe {

namespace {

Status missing_table(const std::string& name) { return not_found("missing table " + name); }

}  // namespace

Status probe_status(const Status& status) {
    switch (status.code()) {
        // A missing table is recognised where tables are looked up; anything
        // else not found (a block of a published table) is damage.
        case StatusCode::NotFound:
        case StatusCode::ChecksumMismatch:
        case StatusCode::Corruption:
        case StatusCode::NotADatabase:
        case StatusCode::UnsupportedVersion:
            return corruption(status.to_string());
        case StatusCode::InvalidArgument:
            return invalid_argument(status.to_string());
        default:
            break;
    }
    return io_error(status.to_string());
}

std::string table_name(VariantId variant, const index::Material& material) {
    return std::string(variant_name(variant)) + "/" + material.name();
}

Result<TableId> parse_table_name(std::string_view name) {
    const auto slash = name.find('/');
    if (slash == std::string_view::npos) {
        return invalid_argument("table name '" + std::string(name) +
                                                   "' is not of the form variant/material");
    }
    auto variant = parse_variant(name.substr(0, slash));
    if (!variant) {
        return invalid_argument("unknown variant in table name '" + std::string(name) + "'");
    }
    auto material = index::parse_table(name.substr(slash + 1), *variant);
    if (!material.ok()) return material.status();
    return TableId{*variant, index::canonical(*material)};
}

namespace {

// Tables by (variant, canonical material), read on every probe without a
// lock: an open-addressing array of atomic slots that only grows. Entries
// point at shared_ptrs owned by the State for its whole life, so a reader
// never sees a freed table, and load_resident can swap an entry in place.
class TableIndex {
public:
    using Entry = const std::shared_ptr<const Table>*;

    explicit TableIndex(std::size_t capacity)
        : mask_(capacity - 1),
          keys_(std::make_unique<std::atomic<std::uint64_t>[]>(capacity)),
          entries_(std::make_unique<std::atomic<Entry>[]>(capacity)) {}

    std::size_t capacity() const { return mask_ + 1; }

    Entry find(std::uint64_t key) const {
        for (std::size_t i = start(key);; i = (i + 1) & mask_) {
            const std::uint64_t k = keys_[i].load(std::memory_order_acquire);
            if (k == key) return entries_[i].load(std::memory_order_acquire);
            if (k == 0) return nullptr;
        }
    }
    // Writers only (one at a time); the entry is visible before its key.
    void put(std::uint64_t key, Entry entry) {
        for (std::size_t i = start(key);; i = (i + 1) & mask_) {
            const std::uint64_t k = keys_[i].load(std::memory_order_relaxed);
            if (k == key || k == 0) {
                entries_[i].store(entry, std::memory_order_release);
                keys_[i].store(key, std::memory_order_release);
                return;
            }
        }
    }
    template <class F>
    void for_each(F&& f) const {
        for (std::size_t i = 0; i <= mask_; ++i) {
            if (const std::uint64_t k = keys_[i].load(std::memory_order_relaxed))
                f(k, entries_[i].load());
        }
    }

private:
    std::size_t start(std::uint64_t key) const {
        return static_cast<std::size_t>((key * kGoldenGamma) >> 32) & mask_;
    }

    std::size_t mask_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> keys_;
    std::unique_ptr<std::atomic<Entry>[]> entries_;
};

// Without a decoded-block cache, one probe decodes a block it reads again
// once (storage::ReadScope) and searches a position it meets again once
// (ProbeMemo, when no answers are kept either).
struct UncachedScope {
    storage::ReadScope blocks;
    detail::ProbeMemo::Scope answers;
};

// Nonzero key of a table: the variant, then 4 bits per (colour, unit type)
// count; materials of more than kMaxUnits units never get this far.
std::uint64_t table_key(VariantId variant, const index::Material& m) {
    std::uint64_t key = static_cast<std::uint64_t>(variant) + 1;
    for (Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            key = key << 4 | static_cast<std::uint64_t>(m.count(c, static_cast<UnitType>(t)));
        }
    }
    return key;
}

// table_key of a position's material in its own colour orientation, from
// its unit counts (at most kMaxUnits units, so each fits 4 bits).
std::uint64_t position_key(VariantId variant, const Position& pos) {
    std::uint64_t key = static_cast<std::uint64_t>(variant) + 1;
    for (Color c : {Color::White, Color::Black}) {
        for (int t = 0; t < kUnitTypeCount; ++t) {
            key = key << 4 | static_cast<std::uint64_t>(popcount(pos.units(c, static_cast<UnitType>(t))));
        }
    }
    return key;
}

}  // namespace

// What a probe needs of a value: the WDL alone, or the DTC too.
enum class Need : std::uint8_t { Wdl, Full };

struct detail::TablebaseState {
    TablebaseState(storage::Database db, std::size_t resolved_bytes)
        : database(std::move(db)), uncached(database.block_cache_stats().capacity == 0), resolved(resolved_bytes) {
        indexes.push_back(std::make_unique<TableIndex>(16));
        index.store(indexes.back().get());
    }

    // Publishes `table` under the keys of both colour orientations of its
    // material (writers hold `mutex`), so a probe finds it from a position's
    // unit counts alone.
    const std::shared_ptr<const Table>& publish(std::shared_ptr<const Table> table) const {
        const std::uint64_t keys[2] = {table->key_, table_key(table->indexer().variant(),
                                                              table->indexer().material().flipped())};
        const std::size_t key_count = keys[1] == keys[0] ? 1 : 2;
        TableIndex* current = indexes.back().get();  // the one readers see
        owned.push_back(std::move(table));
        std::size_t added = 0;
        for (std::size_t k = 0; k < key_count; ++k) added += current->find(keys[k]) == nullptr;
        if (added != 0 && 2 * (count + added) > current->capacity()) {
            // Grow: readers keep using the old array until they see the new one.
            auto bigger = std::make_unique<TableIndex>(2 * current->capacity());
            current->for_each([&](std::uint64_t k, TableIndex::Entry e) { bigger->put(k, e); });
            indexes.push_back(std::move(bigger));
            current = indexes.back().get();
        }
        for (std::size_t k = 0; k < key_count; ++k) current->put(keys[k], &owned.back());
        index.store(current, std::memory_order_release);
        count += added;
        return owned.back();
    }

    ProbeResult<std::shared_ptr<const Table>> table(VariantId variant, const index::Material& material) const;
    // The same among this database's own tables only (writers hold `mutex`).
    ProbeResult<std::shared_ptr<const Table>> own_table(VariantId variant, const index::Material& material) const;
    ProbeResult<Value> probe(VariantId variant, const Position& pos, Need need) const;
    // Value of the slot (canonical side `side`, index `idx`) that holds pos
    // in either colour orientation; `stored` is its stored code when the
    // caller has read it already.
    ProbeResult<Value> slot_value(const Table& t, Color side, std::uint64_t idx, const Position& pos, Need need,
                                  const std::uint16_t* stored = nullptr) const;
    // The same for a compact table, past the cache of resolved values.
    ProbeResult<Value> resolve_slot(const Table& t, Color side, std::uint64_t idx, const Position& pos,
                                    Need need, const std::uint16_t* stored) const;
    // The best move value of pos over its legal moves (at least one): a
    // conversion needs only the WDL of the position it reaches. Stops at the
    // first move nothing can beat (a win in 1, or any win when only the WDL
    // is needed).
    ProbeResult<Value> best_move(VariantId variant, const Position& pos, const MoveList& moves, Need need) const;
    // wdl-dtc/2: the best move of a free position `pos` of table t off its
    // DTC side (canonical side `side`) whose stored WDL is decided, or
    // (wdl-dtc/5) not stored at all, found as best_move() would for `need`,
    // with in-table children read straight from t and the search cut where
    // no later move can be better.
    template <Ruleset R>
    ProbeResult<Value> dtc_search(const Table& t, Color side, const Position& pos, const MoveList& moves,
                                  Need need = Need::Full) const;

    storage::Database database;
    // No decoded-block cache: a probe keeps the blocks it reads in a
    // storage::ReadScope (with a cache that would only cost time).
    bool uncached = false;
    // Values of compact tables' slots found by search or read from
    // sub-tables, so a warm probe of such a slot costs one lookup.
    mutable ResolvedCache resolved;
    // Tables open lazily from const probes: what opening changes is mutable.
    mutable std::atomic<const TableIndex*> index{nullptr};
    mutable std::mutex mutex;                                  // writers: opening and publishing tables
    mutable std::vector<std::unique_ptr<TableIndex>> indexes;  // the current one and every older one
    mutable std::deque<std::shared_ptr<const Table>> owned;    // stable addresses for the index entries
    mutable std::size_t count = 0;
    // Tablebase::look_also_in: where tables this database lacks are found,
    // and those found there (not published: they belong to their own state,
    // which may go before this one).
    mutable std::vector<const TablebaseState*> fallbacks;
    mutable std::map<std::uint64_t, std::shared_ptr<const Table>> found_elsewhere;
};

namespace {

// The table of a canonical material if it is open already.
const std::shared_ptr<const Table>* find_open(const TableIndex& index, VariantId variant,
                                              const index::Material& material) {
    return index.find(table_key(variant, material));
}

}  // namespace

Tablebase::Tablebase(storage::Database database, std::size_t resolved_bytes)
    : state_(std::make_unique<detail::TablebaseState>(std::move(database), resolved_bytes)) {}

Tablebase::Tablebase(storage::Database database) {
    const std::size_t resolved_bytes = database.block_cache_stats().capacity / 8;
    state_ = std::make_unique<detail::TablebaseState>(std::move(database), resolved_bytes);
}
Tablebase::Tablebase(Tablebase&&) noexcept = default;
Tablebase& Tablebase::operator=(Tablebase&&) noexcept = default;
Tablebase::~Tablebase() = default;

ProbeResult<Tablebase> Tablebase::open(const std::string& path, const TablebaseOptions& options) {
    storage::DatabaseOptions db_options;
    db_options.mode = storage::OpenMode::ReadOnly;
    const std::size_t resolved_bytes = options.cache_bytes / 8;
    db_options.block_cache_bytes = options.cache_bytes - resolved_bytes;
    db_options.kept_record_bytes = options.kept_record_bytes;
    auto db = storage::Database::open(path, db_options);
    if (!db.ok()) {
        // No directory, or a directory that is no database, is a path the
        // caller got wrong; a damaged database stays Corruption.
        const auto code = db.status().code();
        const bool wrong_path = code == StatusCode::NotFound || code == StatusCode::NotADatabase;
        return Status(wrong_path ? StatusCode::IoError : probe_status(db.status()).code(),
                      "cannot open database " + path + ": " + db.status().to_string());
    }
    return Tablebase(std::move(*db), resolved_bytes);
}

void Tablebase::look_also_in(const std::vector<const Tablebase*>& others) const {
    std::lock_guard lock(state_->mutex);
    state_->fallbacks.clear();
    for (const Tablebase* other : others) {
        if (other != nullptr && other != this) state_->fallbacks.push_back(other->state_.get());
    }
    state_->found_elsewhere.clear();
}

const storage::Database& Tablebase::database() const { return state_->database; }
storage::Database& Tablebase::database() { return state_->database; }

ProbeResult<std::shared_ptr<const Table>> detail::TablebaseState::table(VariantId variant,
                                                                      const index::Material& material) const {
    if (auto* open = find_open(*index.load(std::memory_order_acquire), variant, material)) return *open;
    // Opening builds the indexer, which can take a while for large tables:
    // once, under the writers' lock.
    const std::uint64_t key = table_key(variant, material);
    std::vector<const TablebaseState*> others;
    std::optional<ProbeResult<std::shared_ptr<const Table>>> own;
    {
        std::lock_guard lock(mutex);
        if (auto* open = find_open(*index.load(), variant, material)) return *open;
        if (fallbacks.empty()) return own_table(variant, material);
        if (auto it = found_elsewhere.find(key); it != found_elsewhere.end()) return it->second;
        own = own_table(variant, material);
        if (own->ok() || own->status().code() != StatusCode::NotFound) return *own;
        others = fallbacks;
    }
    // Without this state's lock: states may be each other's fallbacks.
    for (const TablebaseState* other : others) {
        std::optional<ProbeResult<std::shared_ptr<const Table>>> elsewhere;
        {
            std::lock_guard other_lock(other->mutex);
            elsewhere = other->own_table(variant, material);
        }
        if (elsewhere->ok()) {
            std::lock_guard lock(mutex);
            return found_elsewhere.emplace(key, **elsewhere).first->second;
        }
        if (elsewhere->status().code() != StatusCode::NotFound) return *elsewhere;
    }
    return *own;
}

ProbeResult<std::shared_ptr<const Table>> detail::TablebaseState::own_table(VariantId variant,
                                                                          const index::Material& material) const {
    if (auto* open = find_open(*index.load(), variant, material)) return *open;
    const std::string name = table_name(variant, material);
    auto reader = database.open_table(name);
    if (!reader.ok()) {
        if (reader.status().code() == StatusCode::NotFound) return missing_table(name);
        return probe_status(reader.status());
    }
    const auto& info = reader->info();
    const auto& spec = info.spec;
    const bool compact = is_compact_encoding(spec.value_encoding);
    if (!compact && spec.value_encoding != kValueEncoding) {
        return corruption("table " + name + " has value encoding \"" + spec.value_encoding +
                          "\", which this version does not read (it reads " + value_encoding_names() + ")");
    }
    Color dtc_side = Color::White;
    if (compact) {
        auto counter = std::find_if(info.statistics.counters.begin(), info.statistics.counters.end(),
                                    [](const storage::Counter& c) { return c.name == kDtcSideCounter; });
        if (counter == info.statistics.counters.end() || counter->value > 1) {
            return corruption("table " + name + " (" + spec.value_encoding + ") has no valid counter " +
                              std::string(kDtcSideCounter));
        }
        dtc_side = counter->value == 0 ? Color::White : Color::Black;
    }
    KnightColouring knight_colouring = KnightColouring::PawnFrame;
    if (chooses_knight_colouring(spec.value_encoding, material, dtc_side)) {
        auto counter = std::find_if(info.statistics.counters.begin(), info.statistics.counters.end(),
                                    [](const storage::Counter& c) { return c.name == kKnightColouringCounter; });
        if (counter == info.statistics.counters.end() || counter->value > 1) {
            return corruption("table " + name + " (" + spec.value_encoding + ") has no valid counter " +
                              std::string(kKnightColouringCounter));
        }
        knight_colouring = static_cast<KnightColouring>(counter->value);
    }
    std::vector<Unit> group_order;
    if (is_ordered_encoding(spec.value_encoding)) {
        auto counter = std::find_if(info.statistics.counters.begin(), info.statistics.counters.end(),
                                    [](const storage::Counter& c) { return c.name == kIndexOrderCounter; });
        auto order = counter == info.statistics.counters.end() ? std::nullopt : unpack_group_order(counter->value);
        if (!order) {
            return corruption("table " + name + " (" + spec.value_encoding + ") has no valid counter " +
                              std::string(kIndexOrderCounter));
        }
        group_order = std::move(*order);
    }
    auto indexer = group_order.empty() ? index::Indexer::create(variant, material)
                                       : index::Indexer::create(variant, material, group_order);
    if (!indexer.ok()) {
        return corruption("table " + name + " (" + spec.value_encoding + "): its counter " +
                          std::string(kIndexOrderCounter) + " is no index of the table: " + indexer.status().message());
    }
    if (spec.slot_count != 2 * indexer->size() || spec.value_width > 2 || spec.variant != variant_name(variant)) {
        return corruption("table " + name + " does not match this version's index or value encoding");
    }
    std::shared_ptr<Table> table(new Table(std::move(*reader), std::move(*indexer), this));
    table->compact_ = compact;
    table->dtc_side_ = dtc_side;
    table->dtc_side_alone_ = stores_dtc_side_alone(spec.value_encoding, material);
    table->wins_as_wdl_ = stores_wins_as_wdl(spec.value_encoding, material);
    table->derived_worths_ = derived_worths(spec.value_encoding, material, dtc_side);
    table->knight_colouring_ = knight_colouring;
    table->same_units_ = material == material.flipped();
    table->key_ = table_key(variant, material);
    table->ordinal_ = ResolvedCache::next_ordinal();
    return publish(std::move(table));
}

ProbeResult<Value> detail::TablebaseState::best_move(VariantId variant, const Position& pos,
                                                     const MoveList& moves, Need need) const {
    Value best{Wdl::Loss, 0};
    for (Move m : moves) {
        const bool conversion = pos.is_conversion(m);
        auto child = probe(variant, pos.after(m), conversion ? Need::Wdl : need);
        if (!child.ok()) return child.status();
        const Value v = move_value(*child, conversion);
        if (better_for_mover(v, best)) best = v;
        // A move is worth a win in 1 at best (in 1 too when the DTC is not asked for).
        if (best.wdl == Wdl::Win && (need == Need::Wdl || best.dtc <= 1)) break;
    }
    if (need == Need::Wdl) best.dtc = 0;  // only the WDL was asked for
    return best;
}

namespace {

// The stored codes of one table as one search reads them: the last block
// read stays pinned for the next child (the children of a position mostly
// share its block, docs/index.md). Lives for one probe only, so it can
// never hold a block of a replaced table.
class PinnedReader {
public:
    PinnedReader(const storage::TableReader& reader, const std::vector<std::uint16_t>& resident)
        : reader_(reader), resident_(resident), single_values_(reader.reads_single_values()) {}

    ProbeResult<std::uint16_t> code(std::uint64_t slot) {
        if (!resident_.empty()) return resident_[slot];
        if (single_values_) {
            auto value = reader_.get(slot);
            if (!value.ok()) return probe_status(value.status());
            return static_cast<std::uint16_t>(*value);
        }
        if (!block_ || slot - block_->first_slot() >= block_->size()) {
            auto block = reader_.read_block(slot / reader_.info().slots_per_block);
            if (!block.ok()) return probe_status(block.status());
            block_ = std::move(*block);
        }
        return static_cast<std::uint16_t>(block_->value(slot - block_->first_slot()));
    }

private:
    const storage::TableReader& reader_;
    const std::vector<std::uint16_t>& resident_;
    const bool single_values_;  // pair-coded, no cache: a sub-block a value
    storage::BlockRef block_;
};

// The placement of pos (its material that of ix, colour-flipped if `flip`)
// in the indexer's unit order, in the table's colour orientation.
void oriented_placement(const index::Indexer& ix, const Position& pos, bool flip, Square* squares) {
    Bitboard group = 0;
    for (int i = 0; i < ix.unit_count(); ++i) {
        const Unit u = ix.unit(i);
        // Units of a group are consecutive in the indexer's order.
        if (i == 0 || u != ix.unit(i - 1)) {
            group = flip ? pos.units(~unit_color(u), unit_type(u)) : pos.units(unit_color(u), unit_type(u));
        }
        const Square s = pop_lsb(group);
        squares[i] = flip ? static_cast<Square>(s ^ 56) : s;
    }
}

std::string slot_name(const Table& t, Color side, std::uint64_t idx) {
    return "table " + t.info().spec.name + " slot " + std::to_string(to_index(side) * t.indexer().size() + idx);
}

}  // namespace

template <Ruleset R>
ProbeResult<Value> detail::TablebaseState::dtc_search(const Table& t, Color side, const Position& pos,
                                                      const MoveList& moves, Need need) const {
    const VariantId variant = R::kId;
    Value best{Wdl::Loss, 0};
    // Nothing beats a win in 1, nor any win when only the WDL is asked for.
    const bool wdl_only = need == Need::Wdl;
    auto better = [&](Value v) {
        if (better_for_mover(v, best)) best = v;
        return best.wdl == Wdl::Win && (wdl_only || best.dtc <= 1);
    };
    auto result = [&] {
        if (wdl_only) best.dtc = 0;  // only the WDL was asked for
        return best;
    };
    // A quiet move scores a win in 1 only into a terminal position, and a
    // win in 2 into an outside-resolved one (its side to move wins or loses
    // in 1) or better than a free one (distance at least 1). So conversions
    // come first, outside-resolved and terminal children as they are met,
    // and the stored codes of free children are read last, only while no win
    // in 2 is found. Once one is, only a terminal child could still be
    // better, which needs a stalemate the side then to move loses. For the
    // WDL alone any win ends the search, in the same order: an opponent
    // bound to capture loses often enough that its children decide first
    // (measured: reading the stored codes first took 1.35x as long).
    const bool terminal_child_can_lose = [&] {
        if constexpr (R::kRoyalKing) return true;  // checkmate
        Position child = pos;
        child.set_side_to_move(~pos.side_to_move());  // a quiet move keeps every unit
        return stalemate_value<R>(child) == Wdl::Loss;
    }();
    auto won_in_two = [&] { return best.wdl == Wdl::Win && best.dtc <= 2; };
    for (Move m : moves) {
        if (stays_in_table(pos, m)) continue;
        const bool conversion = pos.is_conversion(m);
        auto child = probe(variant, pos.after(m), conversion ? Need::Wdl : need);
        if (!child.ok()) return child.status();
        if (better(move_value(*child, conversion))) return result();
    }
    MoveList free_moves;
    for (Move m : moves) {
        if (!stays_in_table(pos, m)) continue;
        if (won_in_two() && !terminal_child_can_lose) return result();
        std::optional<SlotKind> kind = quick_slot_kind_after<R>(pos, m);
        if (!kind) {
            MoveList child_moves;
            kind = slot_kind<R>(pos.after(m), child_moves);
        }
        if (*kind == SlotKind::Free) {
            free_moves.push(m);
        } else if (*kind == SlotKind::Terminal) {
            if (better(move_value({*terminal_value<R>(pos.after(m), false), 0}, false))) return result();
        } else if (*kind == SlotKind::OutsideResolved && !won_in_two()) {
            const Position child = pos.after(m);
            MoveList child_moves;
            generate_legal<R>(child, child_moves);
            auto v = best_move(variant, child, child_moves, need);
            if (!v.ok()) return v.status();
            if (better(move_value(*v, false))) return result();
        }
    }
    if (free_moves.empty()) return result();
    // Each child's placement is pos's with one square changed.
    const index::Indexer& ix = t.indexer();
    const bool flip = side != pos.side_to_move();
    const auto oriented = [flip](Square s) { return flip ? static_cast<Square>(s ^ 56) : s; };
    Square squares[index::kMaxUnits];
    oriented_placement(ix, pos, flip, squares);
    const std::uint64_t child_base = to_index(~side) * ix.size();
    PinnedReader reader(t.reader_, t.resident_);
    for (Move m : free_moves) {
        if (won_in_two()) return result();
        Square moved[index::kMaxUnits];
        std::copy_n(squares, ix.unit_count(), moved);
        *std::find(moved, moved + ix.unit_count(), oriented(m.from())) = oriented(m.to());
        const index::Index slot = ix.encode(moved);
        if (slot == index::kNoIndex) {
            return invalid_argument("a move of a position of table " + t.info().spec.name + " leaves its index");
        }
        if (t.derived_slot(~side, moved)) {
            // wdl-dtc/7 and /8: the child stores nothing; its own moves value it.
            auto child = slot_value(t, ~side, slot, pos.after(m), need);
            if (!child.ok()) return child.status();
            if (better(move_value(*child, false))) return result();
            continue;
        }
        auto code = reader.code(child_base + slot);
        if (!code.ok()) return code.status();
        if (better(move_value(decode_value(*code), false))) return result();
    }
    return result();
}

ProbeResult<Value> detail::TablebaseState::slot_value(const Table& t, Color side, std::uint64_t idx,
                                                      const Position& pos, Need need,
                                                      const std::uint16_t* stored) const {
    // Without a block cache, blocks read again within this probe decode once.
    std::optional<UncachedScope> scope;
    if (uncached) scope.emplace();
    if (!t.compact_) {
        if (stored != nullptr) return decode_value(*stored);
        auto code = t.code(side, idx);
        if (!code.ok()) return code.status();
        return decode_value(*code);
    }
    const std::uint64_t slot = to_index(side) * t.indexer().size() + idx;
    if (auto kept = resolved.find(t.ordinal_, slot, need == Need::Full)) {
        if (need == Need::Wdl) kept->dtc = 0;
        return *kept;
    }
    auto value = resolve_slot(t, side, idx, pos, need, stored);
    if (value.ok()) resolved.keep(t.ordinal_, slot, *value, need == Need::Full);
    return value;
}

ProbeResult<Value> detail::TablebaseState::resolve_slot(const Table& t, Color side, std::uint64_t idx,
                                                        const Position& pos, Need need,
                                                        const std::uint16_t* stored) const {
    auto read_stored = [&]() -> ProbeResult<std::uint16_t> {
        if (stored != nullptr) return *stored;
        return t.code(side, idx);
    };
    const VariantId variant = t.indexer().variant();
    return with_variant(variant, [&]<class R>() -> ProbeResult<Value> {
        // Attack sets classify most positions; the move list only where needed.
        MoveList moves;
        bool listed = false;
        std::optional<SlotKind> kind = quick_slot_kind<R>(pos);
        if (!kind) {
            kind = slot_kind<R>(pos, moves);
            listed = true;
        }
        // wdl-dtc/6: a free slot's code 1 (a win in 0, which only a terminal
        // position is) is a win whose DTC is searched, unless the WDL is all
        // that was asked for.
        const auto searched_win = [&](std::uint16_t code) {
            return t.wins_as_wdl_ && code == 1 && need == Need::Full;
        };
        const auto checked_win_search = [&](Color search_side, const Position& at, const MoveList& at_moves,
                                             std::uint64_t stored_idx) -> ProbeResult<Value> {
            auto best = dtc_search<R>(t, search_side, at, at_moves);
            if (!best.ok()) return best.status();
            if (best->wdl != Wdl::Win) {
                return corruption(slot_name(t, t.dtc_side_, stored_idx) +
                                  ": a stored win that none of its moves wins");
            }
            return *best;
        };
        switch (*kind) {
            case SlotKind::NotAPosition:
                return Value{};
            case SlotKind::Terminal:
                return Value{*terminal_value<R>(pos, false), 0};
            case SlotKind::OutsideResolved:
                if (!listed) generate_legal<R>(pos, moves);
                return best_move(variant, pos, moves, need);
            case SlotKind::Free:
                break;
        }
        if (!t.stores_free_slots(side)) {
            if (!t.same_units_) {
                // wdl-dtc/5: nothing stored, one ply over the DTC side.
                if (!listed) generate_legal<R>(pos, moves);
                return dtc_search<R>(t, side, pos, moves, need);
            }
            // The colour-swapped image: the same units, the DTC side to
            // move, a free slot of this table with the same value. `pos`
            // is in the table's orientation when its side to move is `side`.
            const index::Indexer& ix = t.indexer();
            Square squares[index::kMaxUnits];
            oriented_placement(ix, pos, pos.side_to_move() == side, squares);
            const index::Index image = ix.encode(squares);
            if (image == index::kNoIndex) {
                return invalid_argument("the colour-swapped image of a position of table " + t.info().spec.name +
                                        " leaves its index");
            }
            if (t.derived_slot(t.dtc_side_, squares)) {
                // wdl-dtc/8, pawns alone on both sides: the image stores
                // nothing. This position's moves are pawn steps, to DTC-side
                // positions whose placements are stored.
                if (!listed) generate_legal<R>(pos, moves);
                return best_move(variant, pos, moves, need);
            }
            auto code = t.code(t.dtc_side_, image);
            if (!code.ok()) return code.status();
            if (!searched_win(*code)) return decode_value(*code);
            // wdl-dtc/6: a win stored as its WDL; this side's moves lead to
            // the DTC side, where the losses keep their DTC.
            if (!listed) generate_legal<R>(pos, moves);
            return checked_win_search(side, pos, moves, image);
        }
        if (t.derives_slots() && side == t.dtc_side_) {
            Square squares[index::kMaxUnits];
            oriented_placement(t.indexer(), pos, pos.side_to_move() != side, squares);
            if (t.derived_slot(side, squares)) {
                // wdl-dtc/7 and /8: a derived placement stores nothing. Its
                // in-table children (off the DTC side) search one ply over
                // placements that are stored.
                if (!listed) generate_legal<R>(pos, moves);
                return best_move(variant, pos, moves, need);
            }
        }
        auto code = read_stored();
        if (!code.ok()) return code.status();
        const Value value = decode_value(*code);
        if (side == t.dtc_side_) {
            if (!searched_win(*code)) return value;
            // wdl-dtc/6, the DTC side's win: one ply over the moves of the
            // colour-swapped image, whose side to move is off the DTC side.
            const Position image = pos.color_flipped();
            MoveList image_moves;
            generate_legal<R>(image, image_moves);
            return checked_win_search(~side, image, image_moves, idx);
        }
        if (*code > 2) {
            return corruption(slot_name(t, side, idx) + ": code " + std::to_string(*code) + " where a WDL is stored");
        }
        if (need == Need::Wdl || value.wdl == Wdl::Draw) return value;
        if (!listed) generate_legal<R>(pos, moves);
        auto best = dtc_search<R>(t, side, pos, moves);
        if (!best.ok()) return best.status();
        if (best->wdl != value.wdl) {
            return corruption(slot_name(t, side, idx) + ": the stored WDL disagrees with the values of its moves");
        }
        return *best;
    });
}

ProbeResult<Value> detail::TablebaseState::probe(VariantId variant, const Position& pos, Need need) const {
    std::optional<UncachedScope> scope;
    if (uncached) scope.emplace();
    // As terminal_value(): under compulsory captures a side without units has won.
    if (variant_traits(variant).captures_compulsory) {
        if (pos.units(pos.side_to_move()) == 0) return Value{Wdl::Win, 0};
        if (pos.units(~pos.side_to_move()) == 0) return Value{Wdl::Loss, 0};
    }
    if (pos.ep_square() != kNoSquare) {
        // Captures are compulsory and one exists: every move converts.
        return with_variant(variant, [&]<class R>() -> ProbeResult<Value> {
            if (side_not_to_move_in_check(variant, pos)) {
                return invalid_argument("the side not to move is in check");
            }
            MoveList moves;
            generate_legal<R>(pos, moves);
            if (moves.empty()) return invalid_argument("position with en passant has no moves");
            return best_move(variant, pos, moves, need);
        });
    }
    // An open table is found from the unit counts in either orientation;
    // the material is checked only when none is.
    const Table* open = nullptr;
    bool flip = false;
    if (popcount(pos.occupied()) <= index::kMaxUnits) {
        const std::uint64_t key = position_key(variant, pos);
        if (const auto* entry = index.load(std::memory_order_acquire)->find(key)) {
            open = entry->get();
            flip = key != open->key_;
        }
    }
    std::shared_ptr<const Table> opened;
    if (open == nullptr) {
        const index::Material material = index::material_of(pos);
        if (material.total() > index::kMaxUnits) {
            // A legal position, just beyond any table this library builds.
            return not_found("missing table " + table_name(variant, index::canonical(material)) +
                             " (more than " + std::to_string(index::kMaxUnits) + " units)");
        }
        if (auto why = index::material_error(material, variant)) {
            return invalid_argument(*why);
        }
        flip = index::needs_color_flip(material);
        auto t = table(variant, flip ? material.flipped() : material);
        if (!t.ok()) return t.status();
        opened = std::move(t).value();
        open = opened.get();
    }
    // A royal-king index holds such placements, but they are not positions:
    // their slots store no value.
    if (side_not_to_move_in_check(variant, pos)) {
        return invalid_argument("the side not to move is in check");
    }
    // Either orientation is read without building a flipped Position: the
    // placement is read off the bitboards in the indexer's unit order.
    const Table& t = *open;
    const index::Indexer& ix = t.indexer();
    Square squares[index::kMaxUnits];
    oriented_placement(ix, pos, flip, squares);
    const index::Index idx = ix.encode(squares);
    if (idx == index::kNoIndex) {
        return invalid_argument("position is not in table " + t.info().spec.name);
    }
    return slot_value(t, flip ? ~pos.side_to_move() : pos.side_to_move(), idx, pos, need);
}

ProbeResult<bool> Table::read_codes(std::uint64_t first, std::size_t n, std::uint16_t* out) const {
    const auto& info = reader_.info();
    if (first > info.spec.slot_count || n > info.spec.slot_count - first) {
        return invalid_argument("slot range outside table " + info.spec.name);
    }
    if (!resident_.empty()) {
        std::copy_n(resident_.begin() + static_cast<long>(first), n, out);
    } else {
        const std::uint64_t per_block = info.slots_per_block;
        std::uint64_t slot = first;
        std::uint16_t* at = out;
        const std::uint64_t end = first + n;
        while (slot < end) {
            auto block = reader_.read_block(slot / per_block, storage::CacheUse::Bypass);
            if (!block.ok()) return probe_status(block.status());
            const storage::Block& b = **block;
            const std::uint64_t stop = std::min<std::uint64_t>(end, b.first_slot() + b.size());
            for (; slot < stop; ++slot) *at++ = static_cast<std::uint16_t>(b.value(slot - b.first_slot()));
        }
    }
    if (!compact_) return true;
    // Stored codes become values slot by slot, each from its position.
    const std::uint64_t size = indexer_.size();
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t slot = first + k;
        const Color side = slot < size ? Color::White : Color::Black;
        const std::uint64_t idx = slot < size ? slot : slot - size;
        const auto pos = indexer_.position(idx, side);
        if (!pos) {
            out[k] = 0;
            continue;
        }
        const std::uint16_t stored = out[k];
        auto value = owner_->slot_value(*this, side, idx, *pos, Need::Full, &stored);
        if (!value.ok()) return value.status();
        out[k] = encode_value(*value);
    }
    return true;
}

ProbeResult<std::uint16_t> Table::code(Color side, std::uint64_t index) const {
    const std::uint64_t slot = to_index(side) * indexer_.size() + index;
    if (!resident_.empty()) return resident_[slot];
    auto value = reader_.get(slot);
    if (!value.ok()) return probe_status(value.status());
    return static_cast<std::uint16_t>(*value);
}

ProbeResult<Value> Table::value(Color side, std::uint64_t index) const {
    if (!compact_) {
        auto code = this->code(side, index);
        if (!code.ok()) return code.status();
        return decode_value(*code);
    }
    const auto pos = indexer_.position(index, side);
    if (!pos) return Value{};
    return owner_->slot_value(*this, side, index, *pos, Need::Full);
}

ProbeResult<Wdl> Table::wdl(Color side, std::uint64_t index) const {
    if (!compact_) {
        auto code = this->code(side, index);
        if (!code.ok()) return code.status();
        return decode_value(*code).wdl;
    }
    const auto pos = indexer_.position(index, side);
    if (!pos) return Wdl::Draw;
    return wdl(side, index, *pos);
}

ProbeResult<Wdl> Table::wdl(Color side, std::uint64_t index, const Position& pos) const {
    auto value = owner_->slot_value(*this, side, index, pos, Need::Wdl);
    if (!value.ok()) return value.status();
    return value->wdl;
}

ProbeResult<Wdl> Table::position_wdl(const Position& pos) const {
    auto value = owner_->probe(indexer_.variant(), pos, Need::Wdl);
    if (!value.ok()) return value.status();
    return value->wdl;
}

ProbeResult<std::shared_ptr<const Table>> Tablebase::table(VariantId variant,
                                                           const index::Material& material) const {
    return state_->table(variant, material);
}

ProbeResult<std::shared_ptr<const Table>> Tablebase::load_resident(
    VariantId variant, const index::Material& material) const {
    auto copy = decode_table(variant, material);
    if (!copy.ok() || !(*copy)->resident()) return copy;
    std::lock_guard lock(state_->mutex);
    // Another thread may have made it resident meanwhile; either copy serves.
    return state_->publish(std::move(*copy));
}

Status Table::for_each_block(const std::function<void(const storage::Block&)>& visit) const {
    // Records decompress independently: on every thread (a 5-unit table is
    // about 13,000 blocks, 1.4 s on one core), each record fetched and
    // checked once for all its blocks. The error reported is the first
    // damaged record's, whatever the thread count.
    const auto records = static_cast<std::int64_t>(reader_.record_count());
    std::int64_t first_failed = records;
    Status failure;
    std::mutex failure_mutex;
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t r = 0; r < records; ++r) {
        auto blocks = reader_.read_record(static_cast<std::uint64_t>(r));
        if (!blocks.ok()) {
            std::lock_guard lock(failure_mutex);
            if (r < first_failed) {
                first_failed = r;
                failure = blocks.status();
            }
            continue;
        }
        for (const storage::BlockRef& block : *blocks) visit(*block);
    }
    return first_failed == records ? Status{} : probe_status(failure);
}

ProbeResult<std::shared_ptr<const Table>> Tablebase::decode_table(
    VariantId variant, const index::Material& material) const {
    auto opened = table(variant, material);
    if (!opened.ok() || (*opened)->resident()) return opened;
    const Table& source = **opened;
    std::shared_ptr<Table> copy(new Table(source.reader_, source.indexer_, state_.get()));
    copy->compact_ = source.compact_;
    copy->dtc_side_ = source.dtc_side_;
    copy->dtc_side_alone_ = source.dtc_side_alone_;
    copy->wins_as_wdl_ = source.wins_as_wdl_;
    copy->derived_worths_ = source.derived_worths_;
    copy->knight_colouring_ = source.knight_colouring_;
    copy->same_units_ = source.same_units_;
    copy->key_ = source.key_;
    copy->ordinal_ = source.ordinal_;  // the same values
    const auto& info = source.info();
    copy->resident_.resize(info.spec.slot_count);
    const Status read = source.for_each_block([&](const storage::Block& values) {
        for (std::uint32_t i = 0; i < values.size(); ++i) {
            copy->resident_[values.first_slot() + i] = static_cast<std::uint16_t>(values.value(i));
        }
    });
    if (!read.ok()) return read;
    return std::shared_ptr<const Table>(std::move(copy));
}

ProbeResult<Value> Tablebase::value_in(const Table& table, const Position& pos) const {
    auto slot = table.indexer().locate(pos);
    if (!slot) {
        return invalid_argument("position is not in table " + table.info().spec.name);
    }
    return state_->slot_value(table, slot->side_to_move, slot->index, pos, Need::Full);
}

ProbeResult<Value> Tablebase::probe(VariantId variant, const Position& pos) const {
    return state_->probe(variant, pos, Need::Full);
}

ProbeResult<Wdl> Tablebase::probe_wdl(VariantId variant, const Position& pos) const {
    auto value = state_->probe(variant, pos, Need::Wdl);
    if (!value.ok()) return value.status();
    return value->wdl;
}

ProbeResult<std::vector<MoveValue>> Tablebase::probe_moves(VariantId variant,
                                                           const Position& pos) const {
    if (side_not_to_move_in_check(variant, pos)) {
        return invalid_argument("the side not to move is in check");
    }
    return with_variant(variant, [&]<class R>() -> ProbeResult<std::vector<MoveValue>> {
        MoveList list;
        generate_legal<R>(pos, list);
        std::optional<UncachedScope> scope;  // the children share blocks and answers
        if (state_->uncached) scope.emplace();
        std::vector<MoveValue> out;
        out.reserve(list.size());
        for (Move m : list) {
            MoveValue mv;
            mv.move = m;
            mv.uci = to_uci(m);
            mv.conversion = pos.is_conversion(m);
            auto child = probe(variant, pos.after(m));
            if (!child.ok()) return child.status();
            mv.child = *child;
            mv.for_mover = move_value(mv.child, mv.conversion);
            out.push_back(std::move(mv));
        }
        std::sort(out.begin(), out.end(), [](const MoveValue& a, const MoveValue& b) {
            if (better_for_mover(a.for_mover, b.for_mover)) return true;
            if (better_for_mover(b.for_mover, a.for_mover)) return false;
            return a.uci < b.uci;
        });
        return out;
    });
}

ByteSplit byte_split(const storage::TableInfo& t) {
    constexpr std::uint64_t kHeaderBytes = 16;  // per record
    constexpr std::uint64_t kKeyBytes = 16;     // per record key
    ByteSplit split;
    const std::uint64_t records = storage::record_count(t);
    if (t.blocks_per_record > 1) {
        // Format 3 records the payloads' bytes, to which format 6 adds the
        // pair model that codes them; the rest is headers and directories.
        split.values = t.payload_bytes + t.pair_model.size();
    } else {
        const std::uint64_t headers = kHeaderBytes * records;
        split.values = t.stored_bytes > headers ? t.stored_bytes - headers : 0;
    }
    split.index = t.stored_bytes - split.values + kKeyBytes * records + t.dictionary.size();
    split.per_position = t.spec.slot_count == 0
                             ? 0.0
                             : static_cast<double>(split.values + split.index) /
                                   static_cast<double>(t.spec.slot_count);
    return split;
}

Result<WdlDtcSplit> wdl_dtc_split(const storage::Database& database, const storage::TableInfo& t) {
    const bool known = std::find(std::begin(kValueEncodings), std::end(kValueEncodings),
                                 t.spec.value_encoding) != std::end(kValueEncodings);
    if (!known) {
        return Status(StatusCode::InvalidArgument,
                      "table '" + t.spec.name + "' has no WDL/DTC encoding (" + t.spec.value_encoding + ")");
    }
    if (t.format_version < 4 || t.blocks_per_record < 2) {
        return Status(StatusCode::InvalidArgument,
                      "table '" + t.spec.name + "' is not stored in groups of zstd frames (storage format " +
                          std::to_string(t.format_version) + ")");
    }
    storage::TableWriteOptions options = storage::compact_write_options();
    storage::set_parser(is_compact_encoding(t.spec.value_encoding) ? storage::kCompactCodesParser
                                                                    : storage::kCodesParser,
                        options);
    options.slots_per_block = t.slots_per_block;
    options.blocks_per_record = t.blocks_per_record;
    options.fills_in_directory = t.format_version >= 5;
    auto reader = database.open_table(t.spec.name);
    if (!reader.ok()) return probe_status(reader.status());
    std::vector<std::uint8_t> wdl;
    WdlDtcSplit split;
    for (std::uint64_t r = 0; r < reader->record_count(); ++r) {
        auto blocks = reader->read_record(r);
        if (!blocks.ok()) return probe_status(blocks.status());
        for (const storage::BlockRef& block : *blocks) {
            wdl.resize(block->size());
            for (std::uint32_t i = 0; i < block->size(); ++i) {
                const Wdl w = decode_value(static_cast<std::uint16_t>(block->value(i))).wdl;
                wdl[i] = w == Wdl::Draw ? 0 : w == Wdl::Win ? 1 : 2;
            }
            split.wdl += storage::block_payload_bytes(wdl, 1, options);
        }
    }
    const std::uint64_t values = byte_split(t).values;
    split.wdl = std::min(split.wdl, values);
    split.dtc = values - split.wdl;
    return split;
}

std::uint64_t pack_group_order(std::span<const Unit> order) {
    std::uint64_t packed = 0;
    for (std::size_t g = 0; g < order.size() && g < 16; ++g) {
        packed |= static_cast<std::uint64_t>(order[g]) << (4 * g);
    }
    return packed;
}

std::optional<std::vector<Unit>> unpack_group_order(std::uint64_t packed) {
    std::vector<Unit> order;
    for (; packed != 0; packed >>= 4) {
        const auto u = static_cast<Unit>(packed & 0xF);
        if (u == Unit::None || static_cast<int>(unit_type(u)) >= kUnitTypeCount) return std::nullopt;
        order.push_back(u);
    }
    if (order.empty()) return std::nullopt;
    return order;
}

std::string index_order_name(const storage::TableInfo& t) {
    if (!is_ordered_encoding(t.spec.value_encoding)) return {};
    for (const auto& c : t.statistics.counters) {
        if (c.name != kIndexOrderCounter) continue;
        std::string out;
        for (const Unit u : unpack_group_order(c.value).value_or(std::vector<Unit>{})) {
            out += (out.empty() ? "" : " ") + index::unit_label(u);
        }
        return out;
    }
    return {};
}

std::string knight_colouring_name(const storage::TableInfo& t) {
    if (t.spec.value_encoding != kChosenColouringCompactValueEncoding) return {};
    for (const auto& c : t.statistics.counters) {
        if (c.name == kKnightColouringCounter && c.value <= 1) return c.value == 0 ? "frame" : "mirror-kept";
    }
    return {};
}

std::string dtc_side_name(const storage::TableInfo& t) {
    if (!is_compact_encoding(t.spec.value_encoding)) return {};
    for (const auto& c : t.statistics.counters) {
        if (c.name == kDtcSideCounter && c.value <= 1) return c.value == 0 ? "white" : "black";
    }
    return {};
}

}  // namespace tbf::probe
