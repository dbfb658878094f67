#pragma once
// Probing tables (C++ API): open a database, ask for the value of a position
// and of each of its moves. Positions are rules/ Positions here; the C API in
// tbforge.h takes FEN strings or plain structs instead.
//
// Layout of a stored table: 2 N slots, the N slots of the indexer with White
// to move first, then the N slots with Black to move. Value encoding
// "wdl-dtc/1": each value is probe::encode_value (1 or 2 bytes). Encoding
// "wdl-dtc/2" (docs/values.md) stores the same codes for the positions that
// need them only, so some values are found by a one-ply search: every
// method below answers the wdl-dtc/1 values either way.
//
// Thread safety: all const methods may be called from many threads at once
// (a table is opened once, under a lock, on first use; after that probes take
// no lock of this library, only the block cache's shard lock). Moving or
// destroying a Tablebase must not race with its use.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tbforge/index/indexer.hpp"
#include "tbforge/index/material.hpp"
#include "tbforge/probe/derived_slots.hpp"
#include "tbforge/probe/value.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::probe {

// The value encodings this version reads and writes (docs/values.md).
inline constexpr std::string_view kValueEncoding = "wdl-dtc/1";
inline constexpr std::string_view kCompactValueEncoding = "wdl-dtc/2";
// The table counter naming a wdl-dtc/2 table's DTC side: 0 White, 1 Black.
inline constexpr std::string_view kDtcSideCounter = "dtc_side";
// The counter holding a wdl-dtc/2 table's values checksum as wdl-dtc/1 would
// store its values (docs/storage-format.md section 15).
inline constexpr std::string_view kResolvedChecksumCounter = "wdl-dtc/1.checksum";
// "wdl-dtc/3": the codes of wdl-dtc/2, in the slots of the index group order
// the table names in the counter kIndexOrderCounter (chosen per table for
// the smallest blocks). Its kResolvedChecksumCounter is in that order, like
// every checksum of the table; kRuleOrderChecksumCounter holds the checksum
// of the same wdl-dtc/1 codes in the rule's order, which is what a
// wdl-dtc/1 build of the table records.
inline constexpr std::string_view kOrderedCompactValueEncoding = "wdl-dtc/3";
inline constexpr std::string_view kIndexOrderCounter = "index_order";
inline constexpr std::string_view kRuleOrderChecksumCounter = "wdl-dtc/1.rule_order_checksum";
// "wdl-dtc/4": wdl-dtc/3, except that a table whose two sides have the same
// units (KPvKP, BBvBB) stores its DTC side alone. A position with the other
// side to move has the value of its colour-swapped image, a position of the
// DTC side in the same table, so that side's free slots are read there and
// stored as the slots no reader reads (docs/values.md).
inline constexpr std::string_view kMirroredCompactValueEncoding = "wdl-dtc/4";
// "wdl-dtc/5": wdl-dtc/4, every table storing its DTC side alone. A free
// slot off the DTC side is valued by one ply of moves, each quiet one
// leading to the DTC side of the same table (or, where both sides have the
// same units, read at its colour-swapped image as in wdl-dtc/4).
inline constexpr std::string_view kOneSideCompactValueEncoding = "wdl-dtc/5";
// "wdl-dtc/6": wdl-dtc/5, except that a table whose two sides have the same
// units stores a won free position of its DTC side as its WDL alone (code 1,
// which no free position has as a value). Its DTC is one ply over the moves
// of its colour-swapped image, whose quiet moves lead to the DTC side's
// losses, stored with their DTC.
inline constexpr std::string_view kSearchedWinsCompactValueEncoding = "wdl-dtc/6";
// "wdl-dtc/7" (kDerivedStructuresCompactValueEncoding, derived_slots.hpp):
// wdl-dtc/6, except that a table whose side off the DTC side has pawns alone
// stores nothing in the DTC side's free slots of derived pawn structures;
// each is valued by a search of its moves, whose in-table children are
// valued by one ply over stored structures.
// "wdl-dtc/8" (kDerivedKnightsCompactValueEncoding, derived_slots.hpp):
// wdl-dtc/7, the side off the DTC side allowed knights beside its pawns in
// tables with a pawn, a knight's square counted like a pawn's steps.
// "wdl-dtc/9" (kChosenColouringCompactValueEncoding): wdl-dtc/8, the
// knights' worth chosen per table and named in kKnightColouringCounter.
// Every value encoding this version reads, oldest first.
inline constexpr std::string_view kValueEncodings[] = {
    kValueEncoding,           kCompactValueEncoding,         kOrderedCompactValueEncoding,
    kMirroredCompactValueEncoding, kOneSideCompactValueEncoding, kSearchedWinsCompactValueEncoding,
    kDerivedStructuresCompactValueEncoding, kDerivedKnightsCompactValueEncoding,
    kChosenColouringCompactValueEncoding};
// Their names for messages: "wdl-dtc/1, wdl-dtc/2, ...".
inline std::string value_encoding_names() {
    std::string names;
    for (const std::string_view e : kValueEncodings) names += (names.empty() ? "" : ", ") + std::string(e);
    return names;
}
// The number of a value encoding this version reads (wdl-dtc/N: N, from 1
// on), 0 for any other name. Each encoding keeps what the ones before it
// do, so a property that holds from some encoding on is a comparison.
inline int value_encoding_number(std::string_view encoding) {
    int number = 0;
    for (const std::string_view e : kValueEncodings) {
        ++number;
        if (e == encoding) return number;
    }
    return 0;
}
// wdl-dtc/2 on: only some slots hold their value.
inline bool is_compact_encoding(std::string_view encoding) { return value_encoding_number(encoding) >= 2; }
// wdl-dtc/3 on: the table's index is in the group order its counter
// kIndexOrderCounter names.
inline bool is_ordered_encoding(std::string_view encoding) { return value_encoding_number(encoding) >= 3; }
// Whether a table of `material` in `encoding` stores its DTC side alone:
// wdl-dtc/5 on, wdl-dtc/4 where both sides have the same units.
inline bool stores_dtc_side_alone(std::string_view encoding, const index::Material& material) {
    const int number = value_encoding_number(encoding);
    return number >= 5 || (number == 4 && material == material.flipped());
}
// Whether a table of `material` in `encoding` stores its DTC side's won free
// positions as their WDL alone (wdl-dtc/6 on, the same units on both sides).
inline bool stores_wins_as_wdl(std::string_view encoding, const index::Material& material) {
    return value_encoding_number(encoding) >= 6 && material == material.flipped();
}
// A group order in one counter: 4 bits per group (its Unit), the high digit
// in the low bits; nullopt for a value that is no such list.
std::uint64_t pack_group_order(std::span<const Unit> order);
std::optional<std::vector<Unit>> unpack_group_order(std::uint64_t packed);

namespace detail {
struct TablebaseState;
}  // namespace detail

// Errors are tbf::Status codes (tbforge/base/status.hpp), one line each:
//   InvalidArgument  malformed FEN, illegal position, unknown variant
//   NotFound         the table of the position (or of a child) is not in the
//                    database ("missing table antichess/KQvR")
//   Corruption       a damaged block or metadata record
//   IoError          the database could not be read
// ProbeResult<T> is a tbf::Result<T>: read status() for the code and message.

// A probe answers a value or a Status: NotFound for a missing table,
// InvalidArgument for a position that is not one, Corruption or IoError.
template <class T>
using ProbeResult = Result<T>;

// "antichess/KQvR": the storage name of a table (material in canonical orientation).
std::string table_name(VariantId variant, const index::Material& material);

struct TableId {
    VariantId variant;
    index::Material material;  // canonical
};
// Parses "antichess/KQvR" (either colour orientation of the material).
Result<TableId> parse_table_name(std::string_view name);

// One legal move and what it leads to.
struct MoveValue {
    Move move;
    std::string uci;
    bool conversion = false;
    Value child;      // value of the position after the move, for the side then to move
    Value for_mover;  // the same move scored for the side making it (docs/ARCHITECTURE.md section 4)
};

// A table opened for probing.
class Table {
public:
    const index::Indexer& indexer() const { return indexer_; }
    const storage::TableInfo& info() const { return reader_.info(); }
    // True for value encoding wdl-dtc/2, whose stored codes are not all values.
    bool compact() const { return compact_; }
    // wdl-dtc/2: the side to move whose free slots keep their DTC.
    Color dtc_side() const { return dtc_side_; }
    // wdl-dtc/4 with the same units on both sides, and every wdl-dtc/5
    // table: the free slots off the DTC side are not stored. Each is read
    // from its colour-swapped image where both sides have the same units,
    // else valued by one ply over the DTC side.
    bool dtc_side_alone() const { return dtc_side_alone_; }
    // wdl-dtc/6 with the same units on both sides: a won free slot of the
    // DTC side holds its WDL alone.
    bool wins_as_wdl() const { return wins_as_wdl_; }
    // Whether the free slots of `side` store their value (a compact
    // table's DTC side) or at least its WDL (the other side), which all do
    // but those off the DTC side of a table storing that side alone.
    bool stores_free_slots(Color side) const { return !dtc_side_alone_ || side == dtc_side_; }
    // wdl-dtc/7 to /9 where the side off the DTC side has pawns (from /8
    // on also knights) alone: the DTC side's free slots of derived
    // placements store nothing.
    bool derives_slots() const { return derived_worths_ != DerivedWorths::None; }
    // The knights' worth its derived placements use (wdl-dtc/9 names it;
    // the pawns' frame for every other table).
    KnightColouring knight_colouring() const { return knight_colouring_; }
    // Whether the free slot of `side` with placement `squares` (the
    // indexer's unit order) stores nothing: the DTC side, a derived
    // placement (derived_slots.hpp). Its value is a search of its moves.
    bool derived_slot(Color side, const Square* squares) const {
        return side == dtc_side_ && derived_placement(indexer_, derived_worths_, knight_colouring_, dtc_side_, squares);
    }
    // White's units are Black's (KPvKP): a colour swap stays in the table.
    bool same_units() const { return same_units_; }
    // Stored code of slot `index` with `side` to move (canonical orientation):
    // the value's code under wdl-dtc/1; under wdl-dtc/2 only where
    // docs/values.md says so.
    ProbeResult<std::uint16_t> code(Color side, std::uint64_t index) const;
    // Value of slot `index` with `side` to move, as wdl-dtc/1 stores it (a
    // slot holding no position: a draw). wdl-dtc/2 tables may probe their
    // sub-tables, through the Tablebase that opened this table, which must
    // still exist.
    ProbeResult<Value> value(Color side, std::uint64_t index) const;
    // The WDL alone of the same, without any DTC work.
    ProbeResult<Wdl> wdl(Color side, std::uint64_t index) const;
    // The same for a slot whose position the caller has decoded already
    // (`pos`, with `side` to move, canonical orientation).
    ProbeResult<Wdl> wdl(Color side, std::uint64_t index, const Position& pos) const;
    // The WDL of any position of this table's variant, probed through the
    // Tablebase that opened it (a child in a sub-table, say).
    ProbeResult<Wdl> position_wdl(const Position& pos) const;
    // wdl-dtc/1 codes of storage slots [first, first + n) (slot = side * N +
    // index), read block by block without filling the cache: for streaming.
    // A wdl-dtc/2 table resolves every slot as value() does.
    ProbeResult<bool> read_codes(std::uint64_t first, std::size_t n, std::uint16_t* out) const;
    // True when the whole table is decoded in memory.
    bool resident() const { return !resident_.empty(); }
    // Calls visit(block) once for every stored block, from several threads
    // at once and in no set order, without filling the cache: for passes
    // over a whole table. The stored codes, whatever the encoding. A
    // damaged table answers the error of its first damaged block (visit is
    // still called for the others).
    Status for_each_block(const std::function<void(const storage::Block&)>& visit) const;

private:
    friend class Tablebase;
    friend struct detail::TablebaseState;
    Table(storage::TableReader reader, index::Indexer indexer, const detail::TablebaseState* owner)
        : reader_(std::move(reader)), indexer_(std::move(indexer)), owner_(owner) {}

    storage::TableReader reader_;
    index::Indexer indexer_;
    const detail::TablebaseState* owner_;
    bool compact_ = false;
    Color dtc_side_ = Color::White;
    bool dtc_side_alone_ = false;
    bool wins_as_wdl_ = false;
    DerivedWorths derived_worths_ = DerivedWorths::None;
    KnightColouring knight_colouring_ = KnightColouring::PawnFrame;
    bool same_units_ = false;  // White's units are Black's: a colour swap stays in the table
    std::uint64_t key_ = 0;  // of its material in canonical orientation (TablebaseState)
    std::uint32_t ordinal_ = 0;  // names it in caches of resolved values (unique in the process)
    std::vector<std::uint16_t> resident_;
};

struct TablebaseOptions {
    // Byte limit of the caches shared by every table and thread of this
    // Tablebase (docs/probe.md, "Cache size"): an eighth for the values
    // compact tables resolve by search, the rest for decompressed blocks;
    // 0 disables both.
    std::size_t cache_bytes = std::size_t{256} << 20;
    // Byte limit of the records kept after their first read, found again
    // without a database lookup or a second checksum
    // (storage::DatabaseOptions::kept_record_bytes); 0: none kept.
    std::size_t kept_record_bytes = std::size_t{32} << 20;
};

class Tablebase {
public:
    // Opens a database read-only. Errors: IoError (no such directory, not a
    // tbforge database, unreadable), Corrupt (truncated or damaged files).
    static ProbeResult<Tablebase> open(const std::string& path,
                                       const TablebaseOptions& options = {});
    // Through a database already opened (e.g. read-write by the generator);
    // resolved values get an eighth of its block cache's size on top.
    explicit Tablebase(storage::Database database);

    Tablebase(Tablebase&&) noexcept;
    Tablebase& operator=(Tablebase&&) noexcept;
    ~Tablebase();

    // Value of pos for its side to move. Positions where a side has no units
    // are terminal (distance 0); positions with an en-passant right are valued
    // from their moves (all captures there). Errors: MissingTable (naming the
    // table in canonical orientation, also for more than index::kMaxUnits
    // units), BadInput (e.g. a Four File position whose side not to move is
    // in check), Corrupt, IoError.
    ProbeResult<Value> probe(VariantId variant, const Position& pos) const;
    // The WDL of pos alone (docs/probe.md, "WDL-only probes"): no DTC is
    // looked up or searched for, so a wdl-dtc/2 table answers from its
    // stored WDL or a one-ply look at its sub-tables. Equals probe().wdl;
    // same errors.
    ProbeResult<Wdl> probe_wdl(VariantId variant, const Position& pos) const;
    // Every legal move with its value, best first for the side to move (wins by
    // increasing DTC, draws, losses by decreasing DTC; ties by UCI).
    ProbeResult<std::vector<MoveValue>> probe_moves(VariantId variant, const Position& pos) const;

    // The table of a canonical material, opened on first use; MissingTable if absent.
    ProbeResult<std::shared_ptr<const Table>> table(VariantId variant,
                                                    const index::Material& material) const;
    // Decodes a whole table into memory, for the generator's sub-table reads.
    // load_resident() keeps the decoded table for every later probe of this
    // Tablebase; decode_table() hands it to the caller alone, so the memory
    // goes when the caller drops it.
    ProbeResult<std::shared_ptr<const Table>> load_resident(VariantId variant,
                                                            const index::Material& material) const;
    ProbeResult<std::shared_ptr<const Table>> decode_table(VariantId variant,
                                                           const index::Material& material) const;
    // Value of a position (no en-passant right, both sides with units) that
    // belongs to `table` in either colour orientation.
    ProbeResult<Value> value_in(const Table& table, const Position& pos) const;

    // Tables this database lacks are looked up in `others` as well, in
    // order, each among its own tables only; an empty list ends that. A
    // wdl-dtc/2 table values some slots by probing its sub-tables, which
    // another database may hold (tbgen gen --tables-from). The others must
    // stay open while this one may look there, and tables found there
    // must not be used after they close.
    void look_also_in(const std::vector<const Tablebase*>& others) const;

    const storage::Database& database() const;
    storage::Database& database();

private:
    Tablebase(storage::Database database, std::size_t resolved_bytes);

    std::unique_ptr<detail::TablebaseState> state_;
};

// A storage failure in the probe vocabulary: NotFound (of a block: tables
// are looked up first), ChecksumMismatch, NotADatabase and
// UnsupportedVersion become Corruption; the message keeps the storage code.
Status probe_status(const Status& storage_status);

// Where a table's stored bytes go (docs/storage-format.md section 4), as
// tbprobe info and the Python module show it: the compressed values, the
// index metadata that finds and checks them (record headers, group
// directories and keys, the table's dictionary), and both per slot.
struct ByteSplit {
    std::uint64_t values = 0;
    std::uint64_t index = 0;
    double per_position = 0;
};
ByteSplit byte_split(const storage::TableInfo& t);

// The values' bytes of a table split between its WDL and its DTC, which
// are coded together (docs/probe.md, "tbprobe info"): `wdl` is what the WDL
// alone takes (every stored code reduced to draw, win or loss, slot for
// slot, one byte each) in the table's own blocks and records, compressed
// with the settings the generator stores the table's encoding with;
// `dtc` is the rest of ByteSplit::values. Reads and compresses the whole
// table. InvalidArgument for a table that is not of a WDL/DTC encoding or
// not stored in groups of zstd frames (storage format 4 on).
struct WdlDtcSplit {
    std::uint64_t wdl = 0;
    std::uint64_t dtc = 0;
};
Result<WdlDtcSplit> wdl_dtc_split(const storage::Database& database, const storage::TableInfo& t);

// "white" or "black": the DTC side of a wdl-dtc/2 table as its metadata
// records it; empty for other encodings (and a damaged record).
std::string dtc_side_name(const storage::TableInfo& t);
// "frame" or "mirror-kept": the knights' worth a wdl-dtc/9 table that
// derives knights' squares names (kKnightColouringCounter); empty otherwise.
std::string knight_colouring_name(const storage::TableInfo& t);
// The group order a wdl-dtc/3 table is stored in, e.g. "bN bK wR wK" (high
// digit first); empty for other encodings or no valid counter.
std::string index_order_name(const storage::TableInfo& t);

}  // namespace tbf::probe
