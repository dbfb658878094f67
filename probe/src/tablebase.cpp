#include "tbforge/probe/tablebase.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <utility>

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

ProbeResult<bool> Table::read_codes(std::uint64_t first, std::size_t n, std::uint16_t* out) const {
    const auto& info = reader_.info();
    if (first > info.spec.slot_count || n > info.spec.slot_count - first) {
        return invalid_argument("slot range outside table " + info.spec.name);
    }
    if (!resident_.empty()) {
        std::copy_n(resident_.begin() + static_cast<long>(first), n, out);
        return true;
    }
    const std::uint64_t per_block = info.slots_per_block;
    std::uint64_t slot = first;
    const std::uint64_t end = first + n;
    while (slot < end) {
        auto block = reader_.read_block(slot / per_block, storage::CacheUse::Bypass);
        if (!block.ok()) return probe_status(block.status());
        const storage::Block& b = **block;
        const std::uint64_t stop = std::min<std::uint64_t>(end, b.first_slot() + b.size());
        for (; slot < stop; ++slot)
            *out++ = static_cast<std::uint16_t>(b.value(slot - b.first_slot()));
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
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 32) & mask_;
    }

    std::size_t mask_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> keys_;
    std::unique_ptr<std::atomic<Entry>[]> entries_;
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

}  // namespace

struct Tablebase::State {
    explicit State(storage::Database db) : database(std::move(db)) {
        indexes.push_back(std::make_unique<TableIndex>(16));
        index.store(indexes.back().get());
    }

    // Publishes `table` under `key` (writers hold `mutex`).
    const std::shared_ptr<const Table>& publish(std::uint64_t key,
                                                std::shared_ptr<const Table> table) {
        TableIndex* current = indexes.back().get();  // the one readers see
        owned.push_back(std::move(table));
        const bool is_new = current->find(key) == nullptr;
        if (is_new && 2 * (count + 1) > current->capacity()) {
            // Grow: readers keep using the old array until they see the new one.
            auto bigger = std::make_unique<TableIndex>(2 * current->capacity());
            current->for_each([&](std::uint64_t k, TableIndex::Entry e) { bigger->put(k, e); });
            indexes.push_back(std::move(bigger));
            current = indexes.back().get();
        }
        current->put(key, &owned.back());
        index.store(current, std::memory_order_release);
        count += is_new;
        return owned.back();
    }

    storage::Database database;
    std::atomic<const TableIndex*> index{nullptr};
    std::mutex mutex;                                  // writers: opening and publishing tables
    std::vector<std::unique_ptr<TableIndex>> indexes;  // the current one and every older one
    std::deque<std::shared_ptr<const Table>> owned;    // stable addresses for the index entries
    std::size_t count = 0;
};

namespace {

// The table of a canonical material if it is open already.
const std::shared_ptr<const Table>* find_open(const TableIndex& index, VariantId variant,
                                              const index::Material& material) {
    return index.find(table_key(variant, material));
}

}  // namespace

Tablebase::Tablebase(storage::Database database)
    : state_(std::make_unique<State>(std::move(database))) {}
Tablebase::Tablebase(Tablebase&&) noexcept = default;
Tablebase& Tablebase::operator=(Tablebase&&) noexcept = default;
Tablebase::~Tablebase() = default;

ProbeResult<Tablebase> Tablebase::open(const std::string& path, const TablebaseOptions& options) {
    storage::DatabaseOptions db_options;
    db_options.mode = storage::OpenMode::ReadOnly;
    db_options.block_cache_bytes = options.cache_bytes;
    auto db = storage::Database::open(path, db_options);
    if (!db.ok()) {
        // No directory, or a directory that is no database, is a path the
        // caller got wrong; a damaged database stays Corruption.
        const auto code = db.status().code();
        const bool wrong_path = code == StatusCode::NotFound || code == StatusCode::NotADatabase;
        return Status(wrong_path ? StatusCode::IoError : probe_status(db.status()).code(),
                      "cannot open database " + path + ": " + db.status().to_string());
    }
    return Tablebase(std::move(*db));
}

const storage::Database& Tablebase::database() const { return state_->database; }
storage::Database& Tablebase::database() { return state_->database; }

ProbeResult<std::shared_ptr<const Table>> Tablebase::table(VariantId variant,
                                                           const index::Material& material) const {
    if (auto* open = find_open(*state_->index.load(std::memory_order_acquire), variant, material))
        return *open;
    // Opening builds the indexer, which can take a while for large tables:
    // once, under the writers' lock.
    std::lock_guard lock(state_->mutex);
    if (auto* open = find_open(*state_->index.load(), variant, material)) return *open;
    const std::string name = table_name(variant, material);
    auto reader = state_->database.open_table(name);
    if (!reader.ok()) {
        if (reader.status().code() == StatusCode::NotFound) return missing_table(name);
        return probe_status(reader.status());
    }
    auto indexer = index::Indexer::create(variant, material);
    if (!indexer.ok()) return indexer.status();
    const auto& spec = reader->info().spec;
    if (spec.value_encoding != kValueEncoding || spec.slot_count != 2 * indexer->size() ||
        spec.value_width > 2 || spec.variant != variant_name(variant)) {
        return corruption("table " + name + " does not match this version's index or value encoding");
    }
    std::shared_ptr<const Table> table(new Table(std::move(*reader), std::move(*indexer)));
    return state_->publish(table_key(variant, material), std::move(table));
}

ProbeResult<std::shared_ptr<const Table>> Tablebase::load_resident(
    VariantId variant, const index::Material& material) const {
    auto copy = decode_table(variant, material);
    if (!copy.ok() || !(*copy)->resident()) return copy;
    std::lock_guard lock(state_->mutex);
    // Another thread may have made it resident meanwhile; either copy serves.
    return state_->publish(table_key(variant, material), std::move(*copy));
}

ProbeResult<std::shared_ptr<const Table>> Tablebase::decode_table(
    VariantId variant, const index::Material& material) const {
    auto opened = table(variant, material);
    if (!opened.ok() || (*opened)->resident()) return opened;
    const Table& source = **opened;
    std::shared_ptr<Table> copy(new Table(source.reader_, source.indexer_));
    const auto& info = source.info();
    copy->resident_.resize(info.spec.slot_count);
    for (std::uint64_t b = 0; b < info.block_count; ++b) {
        auto block = source.reader_.read_block(b, storage::CacheUse::Bypass);
        if (!block.ok()) return probe_status(block.status());
        const storage::Block& values = **block;
        for (std::uint32_t i = 0; i < values.size(); ++i) {
            copy->resident_[values.first_slot() + i] = static_cast<std::uint16_t>(values.value(i));
        }
    }
    return std::shared_ptr<const Table>(std::move(copy));
}

ProbeResult<Value> Tablebase::value_in(const Table& table, const Position& pos) const {
    auto slot = table.indexer().locate(pos);
    if (!slot) {
        return invalid_argument("position is not in table " + table.info().spec.name);
    }
    auto code = table.code(slot->side_to_move, slot->index);
    if (!code.ok()) return code.status();
    return decode_value(*code);
}

ProbeResult<Value> Tablebase::probe(VariantId variant, const Position& pos) const {
    // As terminal_value(): under compulsory captures a side without units has won.
    if (variant_traits(variant).captures_compulsory) {
        if (pos.units(pos.side_to_move()) == 0) return Value{Wdl::Win, 0};
        if (pos.units(~pos.side_to_move()) == 0) return Value{Wdl::Loss, 0};
    }
    if (pos.ep_square() != kNoSquare) {
        auto moves = probe_moves(variant, pos);
        if (!moves.ok()) return moves.status();
        if (moves->empty()) {
            return invalid_argument("position with en passant has no moves");
        }
        return moves->front().for_mover;
    }
    const index::Material material = index::material_of(pos);
    if (material.total() > index::kMaxUnits) {
        // A legal position, just beyond any table this library builds.
        return not_found("missing table " + table_name(variant, index::canonical(material)) +
                              " (more than " + std::to_string(index::kMaxUnits) + " units)");
    }
    if (auto why = index::material_error(material, variant)) {
        return invalid_argument(*why);
    }
    // A royal-king index holds such placements, but they are not positions:
    // their slots store no value.
    if (side_not_to_move_in_check(variant, pos)) {
        return invalid_argument("the side not to move is in check");
    }
    // Either orientation is found without building a flipped Position: the
    // placement is read off the bitboards in the indexer's unit order.
    const bool flip = index::needs_color_flip(material);
    const index::Material canonical = flip ? material.flipped() : material;
    const std::shared_ptr<const Table>* open =
        find_open(*state_->index.load(std::memory_order_acquire), variant, canonical);
    std::shared_ptr<const Table> opened;
    if (open == nullptr) {
        auto t = table(variant, canonical);
        if (!t.ok()) return t.status();
        opened = std::move(t).value();
    }
    const Table& t = open ? **open : *opened;
    const index::Indexer& ix = t.indexer();
    Square squares[index::kMaxUnits];
    Bitboard group = 0;
    for (int i = 0; i < ix.unit_count(); ++i) {
        const Unit u = ix.unit(i);
        // Units of a group are consecutive in the indexer's order.
        if (i == 0 || u != ix.unit(i - 1)) {
            group = flip ? pos.units(~unit_color(u), unit_type(u))
                         : pos.units(unit_color(u), unit_type(u));
        }
        const Square s = pop_lsb(group);
        squares[i] = flip ? static_cast<Square>(s ^ 56) : s;
    }
    const index::Index idx = ix.encode(squares);
    if (idx == index::kNoIndex) {
        return invalid_argument("position is not in table " + t.info().spec.name);
    }
    auto code = t.code(flip ? ~pos.side_to_move() : pos.side_to_move(), idx);
    if (!code.ok()) return code.status();
    return decode_value(*code);
}

ProbeResult<std::vector<MoveValue>> Tablebase::probe_moves(VariantId variant,
                                                           const Position& pos) const {
    if (side_not_to_move_in_check(variant, pos)) {
        return invalid_argument("the side not to move is in check");
    }
    return with_variant(variant, [&]<class R>() -> ProbeResult<std::vector<MoveValue>> {
        MoveList list;
        generate_legal<R>(pos, list);
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
    constexpr std::uint64_t kHeaderBytes = 16;  // per block record
    constexpr std::uint64_t kKeyBytes = 16;     // per block key
    ByteSplit split;
    const std::uint64_t headers = kHeaderBytes * t.block_count;
    split.values = t.stored_bytes > headers ? t.stored_bytes - headers : 0;
    split.index = t.stored_bytes - split.values + kKeyBytes * t.block_count + t.dictionary.size();
    split.per_position = t.spec.slot_count == 0
                             ? 0.0
                             : static_cast<double>(split.values + split.index) /
                                   static_cast<double>(t.spec.slot_count);
    return split;
}

}  // namespace tbf::probe
