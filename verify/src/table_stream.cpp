// The full check of one table, a window of slots at a time:
//
//  A. (parallel, batches of consecutive slots) decode each slot's placement
//     through the probe's index, build the verifier's own board, generate
//     its moves, and write each child's placement into the queue of the
//     table it belongs to (a "lane": the table itself for quiet moves, a
//     sub-table in either colour orientation for conversions). Each queue is
//     located in one tbf_table_encode call; a child whose value block is in
//     memory is folded into its parent's best score at once, the others wait.
//  B. the blocks the waiting children need are read (as many at a time as
//     the memory budget holds) and the waiting children folded in.
//  C. every position's best score is compared with its stored value, a
//     sample is checked again through tbf_probe alone, and the window's
//     stored bytes are hashed for the table checksum, in slot order.
//
// A table and its sub-tables that fit in the budget are read whole first, so
// that nothing ever waits.

#include "table_stream.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>

#include "fork_join.hpp"
#include "movegen.hpp"
#include "tbforge/base/mix64.hpp"
#include "tbforge/base/xxh64.hpp"

namespace tbf::verify::detail {
namespace {

// ---- Scores ---------------------------------------------------------------
// A move's score for the side making it as one number, larger is better, so
// that a position's best move is a maximum. 0 and 1 are not scores: a node
// not to be compared, and one whose moves are not valued yet.
constexpr std::uint32_t kSkip = 0;
constexpr std::uint32_t kOpen = 1;
constexpr std::uint32_t kLossBase = 0x40000000;
constexpr std::uint32_t kDrawKey = 0x80000000;
constexpr std::uint32_t kWinBase = 0xC0000000;
constexpr std::uint32_t kMaxKeyDtc = 0x3FFFFFFF;

std::uint32_t key_of(const DtcValue& v) {
    const std::uint32_t d = std::min<std::uint32_t>(v.dtc, kMaxKeyDtc);
    switch (v.wdl) {
        case Wdl::Win: return kWinBase + (kMaxKeyDtc - d);
        case Wdl::Loss: return kLossBase + d;
        case Wdl::Draw: break;
    }
    return kDrawKey;
}

DtcValue value_of_key(std::uint32_t key) {
    if (key >= kWinBase) return {Wdl::Win, kMaxKeyDtc - (key - kWinBase)};
    if (key >= kDrawKey) return {};
    return {Wdl::Loss, key - kLossBase};
}

// move_score (docs/ARCHITECTURE.md section 4) of a child with stored code
// `code`, as a key.
std::uint32_t move_key(std::uint32_t code, bool conversion) {
    if (code == 0) return kDrawKey;
    const std::uint32_t d =
        conversion ? 1 : std::min<std::uint32_t>((code - 1) / 2, kMaxKeyDtc - 1) + 1;
    // An odd code is a win for the child's side to move: the mover loses.
    return (code & 1) != 0 ? kLossBase + d : kWinBase + (kMaxKeyDtc - d);
}

// ---- Material -------------------------------------------------------------
// Unit counts per colour and type, 4 bits each (type = TBF_KING..TBF_PAWN).
using MaterialKey = std::uint64_t;

int type_index(Piece p) { return static_cast<int>(p) - 1; }
int color_index(Color c) { return c == Color::White ? 0 : 1; }

MaterialKey unit_key(int color, int type) {
    return MaterialKey{1} << (4 * (6 * color + type));
}
MaterialKey unit_key(Unit u) { return unit_key(color_index(u.color), type_index(u.piece)); }

int count_in(MaterialKey key, int color, int type) {
    return static_cast<int>((key >> (4 * (6 * color + type))) & 15);
}

MaterialKey flipped(MaterialKey key) {
    return (key >> 24) | ((key & 0xFFFFFF) << 24);
}

std::string material_name(MaterialKey key) {
    std::string out;
    for (int c = 0; c < 2; ++c) {
        if (c == 1) out += 'v';
        for (int t = 0; t < 6; ++t) {
            out.append(static_cast<std::size_t>(count_in(key, c, t)), "KQRBNP"[t]);
        }
    }
    return out;
}

int unit_total(MaterialKey key) {
    int n = 0;
    for (int i = 0; i < 12; ++i) n += static_cast<int>((key >> (4 * i)) & 15);
    return n;
}

// Every material one conversion away: a capture, a promotion, or both.
std::vector<MaterialKey> conversion_materials(MaterialKey key, bool promote_to_king) {
    std::vector<MaterialKey> out;
    const auto add = [&](MaterialKey k) {
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    };
    for (int c = 0; c < 2; ++c) {
        const int them = 1 - c;
        for (int t = 0; t < 6; ++t) {
            if (count_in(key, them, t) > 0) add(key - unit_key(them, t));
        }
        if (count_in(key, c, TBF_PAWN) == 0) continue;
        for (int p = promote_to_king ? TBF_KING : TBF_QUEEN; p <= TBF_KNIGHT; ++p) {
            const MaterialKey promoted = key - unit_key(c, TBF_PAWN) + unit_key(c, p);
            add(promoted);
            for (int t = 0; t < 6; ++t) {
                if (count_in(key, them, t) > 0) add(promoted - unit_key(them, t));
            }
        }
    }
    return out;
}

// ---- Lanes ----------------------------------------------------------------
// A table the check reads children from, in one colour orientation.
struct Lane {
    MaterialKey key = 0;    // the material as it stands on the verifier's board
    std::string table;      // the stored table ("antichess/KQvK")
    bool flipped = false;   // the board's material is the table's colour-flipped
    bool missing = false;   // no such table in the database
    TableValues* values = nullptr;
    std::uint64_t index_size = 0;
    int unit_count = 0;
    // Where the units of each board colour and type start in a placement.
    std::array<std::array<std::int8_t, 6>, 2> first{};
};

// Request flags.
constexpr std::uint8_t kConversion = 1;
constexpr std::uint8_t kEpNode = 2;      // the node is an en-passant child, not a position
constexpr std::uint8_t kSelf = 4;        // the position itself: its index must be its slot's
constexpr std::uint8_t kBlackStored = 8;  // the stored side to move is Black

struct Request {
    std::uint32_t node;
    std::uint8_t flags;
};

// A placement is at most this many squares (index::kMaxUnits).
constexpr std::size_t kPlacementBytes = 8;

// Bytes appended without being zeroed first (a std::vector would).
class ByteQueue {
public:
    // Room for `n` bytes, and kPlacementBytes - 1 more past them that a
    // word-sized copy may touch.
    std::uint8_t* append(std::size_t n) {
        if (size_ + n + kPlacementBytes > capacity_) grow(size_ + n + kPlacementBytes);
        std::uint8_t* at = data_.get() + size_;
        size_ += n;
        return at;
    }
    void append(const std::uint8_t* bytes, std::size_t n) { std::memcpy(append(n), bytes, n); }
    void clear() { size_ = 0; }
    [[nodiscard]] const std::uint8_t* data() const { return data_.get(); }

private:
    void grow(std::size_t wanted) {
        const std::size_t capacity = std::max<std::size_t>(wanted, 2 * capacity_ + 4096);
        auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(capacity);
        if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_);
        data_ = std::move(bigger);
        capacity_ = capacity;
    }

    std::unique_ptr<std::uint8_t[]> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

// Requests appended in the generator's inner loop: a push is a compare and
// a store, always inlined (GCC stopped inlining std::vector's emplace_back
// here, which cost 7% of the check of 4-unit tables).
class RequestQueue {
public:
    [[gnu::always_inline]] void push_back(Request r) {
        if (size_ == capacity_) [[unlikely]] grow();
        data_[size_++] = r;
    }
    void clear() { size_ = 0; }
    [[nodiscard]] bool empty() const { return size_ == 0; }
    [[nodiscard]] std::size_t size() const { return size_; }
    const Request& operator[](std::size_t i) const { return data_[i]; }

private:
    [[gnu::noinline]] void grow() {
        const std::size_t capacity = std::max<std::size_t>(2 * capacity_, 4096);
        auto bigger = std::make_unique_for_overwrite<Request[]>(capacity);
        if (size_ > 0) std::memcpy(bigger.get(), data_.get(), size_ * sizeof(Request));
        data_ = std::move(bigger);
        capacity_ = capacity;
    }

    std::unique_ptr<Request[]> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

struct LaneQueue {
    ByteQueue squares;
    RequestQueue requests;
    std::vector<std::uint64_t> indices;
};

// A child waiting for its value block.
struct Waiting {
    std::uint64_t slot;
    std::uint32_t node;
    std::uint16_t lane;
    std::uint8_t flags;
};

// A child with an en-passant right: valued from its own moves (all
// captures), then scored for its parent as a quiet move.
struct EpNode {
    std::uint32_t parent;
    std::uint32_t best;
};

struct Worker {
    explicit Worker(std::size_t lanes) : queues(lanes) {}

    Board board;
    MoveList moves;
    MoveList replies;
    std::vector<std::uint8_t> decoded;
    std::vector<LaneQueue> queues;
    std::vector<Waiting> waiting;
    std::vector<EpNode> ep_nodes;
    std::vector<std::uint64_t> samples;  // slots to check again through tbf_probe
    std::optional<ProbeValuer> valuer;
    Tally tally;
    std::uint64_t shown_positions = 0;
};

std::uint64_t physical_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return std::uint64_t{8} << 30;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

// Positions also checked through tbf_probe alone: the first 64 slots of
// every table and about one in 4096 of the rest, spread by a hash.
bool sampled(std::uint64_t slot) {
    return slot < 64 || ((slot * kGoldenGamma) >> 52) == 0;
}

// Slots per batch: one decode call and one encode call per lane for them.
constexpr std::uint64_t kBatchSlots = 512;

class StreamCheck {
public:
    StreamCheck(const StreamInputs& in, CheckState& state)
        : in_(in),
          state_(state),
          info_(*in.info),
          rules_(ruleset(in.variant)),
          index_size_(in.info->index_size),
          slots_(in.info->slots) {}

    void run();

private:
    bool set_up();
    bool set_up_lane(Lane& lane);
    void plan_memory();
    bool preload_all();
    std::uint16_t lane_of(MaterialKey key) const {
        if (key == lanes_[0].key) return 0;
        for (std::size_t i = 1; i < lanes_.size(); ++i) {
            if (lanes_[i].key == key) return static_cast<std::uint16_t>(i);
        }
        return kNoLane;
    }

    bool load_window(std::uint64_t first, std::uint64_t last);
    void phase_a(std::uint64_t first, std::uint64_t last, std::uint64_t& end);
    void batch(Worker& w, std::uint64_t first_slot, std::uint64_t count);
    void position(Worker& w, std::uint64_t slot, const std::uint8_t* squares);
    void child(Worker& w, std::uint32_t node, std::uint8_t flags, MaterialKey key,
               std::uint64_t parent_slot);
    void emit(Worker& w, std::uint16_t lane, std::uint32_t node, std::uint8_t flags,
              std::uint64_t parent_slot);
    void emit_placed(Worker& w, std::uint16_t lane, std::uint32_t node, std::uint8_t flags,
                     const std::uint8_t* squares, int mover, const Move& m, int captured,
                     std::uint64_t parent_slot);
    void resolve_queues(Worker& w, std::uint64_t first_slot);
    void fold(Worker& w, std::uint32_t node, std::uint8_t flags, std::uint32_t key) {
        std::uint32_t& best = (flags & kEpNode) != 0 ? w.ep_nodes[node].best : acc_[node];
        if (best != kSkip && key > best) best = key;
    }
    // Threads for `work` items when each thread should get at least `least`:
    // starting a thread costs about as much as checking 100 positions.
    int threads_for(std::uint64_t work, std::uint64_t least = kBatchSlots) const {
        return static_cast<int>(std::clamp<std::uint64_t>(work / least, 1,
                                                          static_cast<std::uint64_t>(threads_)));
    }
    void phase_b();
    void phase_c(std::uint64_t first, std::uint64_t end);
    void finish();

    std::uint32_t stored_code(std::uint64_t node) const {
        const std::uint8_t* p = codes_.data() + node * width_;
        switch (width_) {
            case 1: return p[0];
            case 2: return static_cast<std::uint32_t>(p[0] | (p[1] << 8));
            default: break;
        }
        return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
               (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
    }
    // The verifier's board of a slot, for naming it in an error.
    std::string fen_of_slot(std::uint64_t slot);
    void record(Worker& w, std::uint64_t slot, const std::string& fen,
                std::optional<DtcValue> stored, std::optional<DtcValue> derived,
                std::string message) {
        state_.record(w.tally, {slot, fen, stored, derived, std::move(message)});
    }

    static constexpr std::uint16_t kNoLane = 0xFFFF;

    const StreamInputs& in_;
    CheckState& state_;
    const tbf_table_info& info_;
    Ruleset rules_;
    std::uint64_t index_size_;
    std::uint64_t slots_;
    std::uint32_t width_ = 1;
    TableValues* values_ = nullptr;  // the table checked
    std::vector<Unit> layout_;       // its units in index order
    std::vector<Lane> lanes_;        // lane 0: the table itself
    std::vector<std::unique_ptr<Worker>> workers_;
    int threads_ = 1;

    // Memory plan.
    std::uint64_t window_slots_ = 0;
    std::uint64_t waiting_limit_ = 0;  // per thread
    bool everything_held_ = false;
    std::uint32_t stamp_ = 0;

    // The window: a best score per slot and the stored bytes.
    std::uint64_t window_first_ = 0;
    std::vector<std::uint32_t> acc_;
    std::vector<std::uint8_t> codes_;
    Xxh64 hasher_;
};

std::string StreamCheck::fen_of_slot(std::uint64_t slot) {
    const int side = slot >= index_size_ ? 1 : 0;
    std::vector<std::uint8_t> squares(layout_.size());
    if (tbf_table_decode(in_.db, info_.name, slot - static_cast<std::uint64_t>(side) * index_size_,
                         1, squares.data()) != TBF_OK) {
        return "";
    }
    std::array<Unit, 64> cells{};
    for (std::size_t k = 0; k < layout_.size(); ++k) cells[squares[k] & 63] = layout_[k];
    auto board = make_board(in_.variant, cells, side == 0 ? Color::White : Color::Black, kNoSquare);
    if (board) return board->fen();
    tbf_position pos{};
    for (std::size_t k = 0; k < layout_.size(); ++k) {
        pos.units[pos.unit_count++] = {squares[k], type_of_piece(layout_[k].piece),
                                       static_cast<std::uint8_t>(color_index(layout_[k].color))};
    }
    pos.side_to_move = static_cast<std::uint8_t>(side);
    pos.ep_square = TBF_NO_SQUARE;
    return neutral_fen(pos);
}

bool StreamCheck::set_up() {
    auto values = in_.cache->open(info_.name);
    if (!values.ok()) {
        state_.fail(values.status().to_string());
        return false;
    }
    values_ = *values;
    width_ = values_->width();

    tbf_unit units[TBF_MAX_UNITS];
    std::size_t count = 0;
    if (tbf_table_layout(in_.db, info_.name, units, TBF_MAX_UNITS, &count) != TBF_OK) {
        state_.fail(tbf_last_error());
        return false;
    }
    if (count == 0 || count > kPlacementBytes) {
        state_.fail("table " + std::string(info_.name) + " has " + std::to_string(count) +
                    " units, more than tbverify places");
        return false;
    }
    MaterialKey key = 0;
    for (std::size_t k = 0; k < count; ++k) {
        if (units[k].type > TBF_PAWN || units[k].color > TBF_BLACK) {
            state_.fail("table " + std::string(info_.name) + " lists an impossible unit");
            return false;
        }
        layout_.push_back(
            {kPieceOfType[units[k].type], units[k].color == TBF_WHITE ? Color::White : Color::Black});
        key += unit_key(units[k].color, units[k].type);
    }
    // The index's units must be the table's material: slots then decode to
    // positions of this table.
    if (material_name(key) != info_.material) {
        state_.fail("the index of table " + std::string(info_.name) + " places " +
                    material_name(key) + ", not " + info_.material);
        return false;
    }

    lanes_.push_back({});
    lanes_[0].key = key;
    for (MaterialKey k : conversion_materials(key, rules_.promote_to_king)) {
        // Conversions that leave a side without units end the game: no table.
        if (unit_total(k & 0xFFFFFF) == 0 || unit_total(k >> 24) == 0) continue;
        Lane lane;
        lane.key = k;
        lanes_.push_back(lane);
    }
    for (Lane& lane : lanes_) {
        if (!set_up_lane(lane)) return false;
    }
    return true;
}

bool StreamCheck::set_up_lane(Lane& lane) {
    const std::string variant(variant_name(in_.variant));
    const std::string as_is = variant + "/" + material_name(lane.key);
    const std::string other = variant + "/" + material_name(flipped(lane.key));
    const tbf_table_info* found = nullptr;
    for (const tbf_table_info& t : *in_.tables) {
        if (as_is == t.name) {
            found = &t;
            lane.flipped = false;
        } else if (other == t.name && found == nullptr) {
            found = &t;
            lane.flipped = true;
        }
    }
    if (found == nullptr) {
        lane.missing = true;
        return true;
    }
    lane.table = found->name;
    lane.index_size = found->index_size;
    auto values = in_.cache->open(lane.table);
    if (!values.ok()) {
        state_.fail(values.status().to_string());
        return false;
    }
    lane.values = *values;
    if (lane.values->slots() != 2 * lane.index_size) {
        state_.fail("table " + lane.table + " stores " + std::to_string(lane.values->slots()) +
                    " slots, not twice its index size " + std::to_string(lane.index_size));
        return false;
    }
    tbf_unit units[TBF_MAX_UNITS];
    std::size_t count = 0;
    if (tbf_table_layout(in_.db, lane.table.c_str(), units, TBF_MAX_UNITS, &count) != TBF_OK) {
        state_.fail(tbf_last_error());
        return false;
    }
    lane.unit_count = static_cast<int>(count);
    for (auto& row : lane.first) row.fill(-1);
    MaterialKey key = 0;
    for (std::size_t k = 0; k < count; ++k) {
        // The board's colour of a unit the table lists.
        const int color = units[k].color ^ (lane.flipped ? 1 : 0);
        if (units[k].type > TBF_PAWN || color > 1) {
            state_.fail("table " + lane.table + " lists an impossible unit");
            return false;
        }
        std::int8_t& first = lane.first[static_cast<std::size_t>(color)][units[k].type];
        if (first < 0) {
            first = static_cast<std::int8_t>(k);
        } else if (k == 0 || units[k - 1].type != units[k].type ||
                   units[k - 1].color != units[k].color) {
            // Placements are written group by group.
            state_.fail("the index of table " + lane.table + " does not list alike units together");
            return false;
        }
        key += unit_key(color, units[k].type);
    }
    if (key != lane.key) {
        state_.fail("the index of table " + lane.table + " places " + material_name(key) +
                    ", not " + material_name(lane.key));
        return false;
    }
    return true;
}

void StreamCheck::plan_memory() {
    const TableCheckOptions& options = state_.options();
    const std::uint64_t budget =
        options.memory_bytes > 0 ? options.memory_bytes : default_memory_budget();
    // A window costs 4 bytes of best score and the stored bytes per slot; the
    // children waiting for their blocks 16 bytes each; the rest holds blocks.
    const std::uint64_t per_slot = 4 + width_;
    window_slots_ = std::clamp<std::uint64_t>(budget / 32 / per_slot, kBatchSlots, 1u << 24);
    window_slots_ = window_slots_ / kBatchSlots * kBatchSlots;
    const std::uint64_t waiting_bytes = budget / 8;
    waiting_limit_ =
        std::max<std::uint64_t>(waiting_bytes / sizeof(Waiting) / static_cast<std::uint64_t>(threads_),
                                1024);
    // Per thread: the queues of one batch and a few move lists.
    const std::uint64_t per_thread = std::uint64_t{1} << 20;
    const std::uint64_t fixed = window_slots_ * per_slot + waiting_bytes +
                                per_thread * static_cast<std::uint64_t>(threads_);
    std::uint64_t blocks = budget > fixed ? budget - fixed : 0;
    // At least the blocks of one window in and around the table, so that a
    // tiny budget still makes progress.
    std::uint64_t largest_block = 0;
    for (const Lane& lane : lanes_) {
        if (lane.values != nullptr) {
            largest_block = std::max<std::uint64_t>(
                largest_block, lane.values->info().slots_per_block * lane.values->width());
        }
    }
    blocks = std::max(blocks, 4 * largest_block);
    in_.cache->set_budget(blocks);

    std::uint64_t all = 0;
    std::vector<const TableValues*> counted;
    for (const Lane& lane : lanes_) {
        if (lane.values == nullptr) continue;
        if (std::find(counted.begin(), counted.end(), lane.values) != counted.end()) continue;
        counted.push_back(lane.values);
        all += lane.values->bytes();
    }
    everything_held_ = all <= blocks;
    if (everything_held_) window_slots_ = std::max<std::uint64_t>(window_slots_, 1u << 24);
}

bool StreamCheck::preload_all() {
    std::vector<BlockId> wanted;
    std::vector<const TableValues*> seen;
    for (const Lane& lane : lanes_) {
        if (lane.values == nullptr) continue;
        if (std::find(seen.begin(), seen.end(), lane.values) != seen.end()) continue;
        seen.push_back(lane.values);
        for (std::uint64_t b = 0; b < lane.values->block_count(); ++b) {
            if (!lane.values->loaded(b)) wanted.push_back({lane.values, b});
        }
    }
    stamp_ = in_.cache->next_stamp();
    std::size_t done = 0;
    while (done < wanted.size()) {
        std::vector<BlockId> rest(wanted.begin() + static_cast<long>(done), wanted.end());
        auto loaded = in_.cache->load(rest, threads_);
        if (!loaded.ok()) {
            state_.fail(loaded.status().to_string());
            return false;
        }
        done += *loaded;
    }
    return true;
}

// Reads the stored bytes of slots [first, last) into the window, and, when
// not everything is held, the blocks of the same indices with the other side
// to move, where the children of most moves are.
bool StreamCheck::load_window(std::uint64_t first, std::uint64_t last) {
    const std::uint64_t n = last - first;
    codes_.resize(n * width_);
    std::uint64_t copied = first;
    while (copied < last) {
        std::vector<BlockId> wanted;
        for (std::uint64_t b = values_->block_of(copied); b <= values_->block_of(last - 1); ++b) {
            if (!values_->loaded(b)) wanted.push_back({values_, b});
        }
        if (!wanted.empty()) {
            auto loaded = in_.cache->load(wanted, threads_);
            if (!loaded.ok()) {
                state_.fail(loaded.status().to_string());
                return false;
            }
        }
        // Copy what is in memory now, from the front.
        while (copied < last && values_->loaded(values_->block_of(copied))) {
            const std::uint64_t block_end =
                std::min(last, (values_->block_of(copied) + 1) << std::countr_zero(
                                                                    values_->info().slots_per_block));
            values_->copy_bytes(copied, block_end - copied,
                                codes_.data() + (copied - first) * width_);
            values_->touch(values_->block_of(copied), stamp_);
            copied = block_end;
        }
    }
    if (everything_held_) return true;
    // The mirror range: quiet moves of most units keep the index close.
    const std::uint64_t side = first >= index_size_ ? 1 : 0;
    const std::uint64_t lo = first - side * index_size_;
    const std::uint64_t hi = std::min(last - side * index_size_, index_size_);
    const std::uint64_t base = (1 - side) * index_size_;
    std::vector<BlockId> mirror;
    if (lo < hi) {
        for (std::uint64_t b = values_->block_of(base + lo); b <= values_->block_of(base + hi - 1);
             ++b) {
            if (!values_->loaded(b)) mirror.push_back({values_, b});
        }
    }
    while (!mirror.empty()) {
        auto loaded = in_.cache->load(mirror, threads_);
        if (!loaded.ok()) {
            state_.fail(loaded.status().to_string());
            return false;
        }
        mirror.erase(mirror.begin(), mirror.begin() + static_cast<long>(*loaded));
        // Only what fits beside the window; the rest is read when asked for.
        if (in_.cache->held_bytes() >= in_.cache->budget()) break;
    }
    return true;
}

void StreamCheck::run() {
    const std::uint64_t blocks_read_before = in_.cache->blocks_read();
    threads_ = state_.threads();
    if (!set_up()) return;
    plan_memory();
    for (int t = 0; t < threads_; ++t) workers_.push_back(std::make_unique<Worker>(lanes_.size()));
    if (everything_held_ && !preload_all()) return;

    std::uint64_t first = 0;
    while (first < slots_ && !state_.stopped()) {
        // Windows stay on one side to move.
        const std::uint64_t side_end = first < index_size_ ? index_size_ : slots_;
        const std::uint64_t last = std::min(side_end, first + window_slots_);
        stamp_ = in_.cache->next_stamp();
        if (!load_window(first, last)) return;
        window_first_ = first;
        acc_.assign(last - first, kSkip);
        std::uint64_t end = last;
        phase_a(first, last, end);
        if (state_.stopped()) break;
        phase_b();
        if (state_.stopped()) break;
        phase_c(first, end);
        if (state_.stopped()) break;
        hasher_.update(std::span<const std::uint8_t>(codes_.data(), (end - first) * width_));
        ++state_.report().windows;
        first = end;
    }
    state_.report().blocks_read = in_.cache->blocks_read() - blocks_read_before;
    for (auto& w : workers_) state_.merge(w->tally);
    if (!state_.stopped()) finish();
}

void StreamCheck::phase_a(std::uint64_t first, std::uint64_t last, std::uint64_t& end) {
    const std::uint64_t batches = (last - first + kBatchSlots - 1) / kBatchSlots;
    std::atomic<std::uint64_t> next{0};
    std::atomic<bool> cut{false};
    // Two batches per thread at least, or one thread does it all.
    run_on_threads(threads_for(last - first, 2 * kBatchSlots), [&](int t) {
        Worker& w = *workers_[static_cast<std::size_t>(t)];
        try {
            while (!cut.load(std::memory_order_relaxed) && !state_.stopped()) {
                const std::uint64_t k = next.fetch_add(1);
                if (k >= batches) break;
                const std::uint64_t from = first + k * kBatchSlots;
                batch(w, from, std::min(kBatchSlots, last - from));
                // Too many children waiting: end the window here.
                if (w.waiting.size() > waiting_limit_) cut.store(true);
            }
        } catch (const std::bad_alloc&) {
            state_.fail("out of memory");
        }
    });
    // Every batch claimed was finished, and they were claimed in order.
    end = std::min(last, first + std::min(next.load(), batches) * kBatchSlots);
}

void StreamCheck::batch(Worker& w, std::uint64_t first_slot, std::uint64_t count) {
    const std::size_t units = layout_.size();
    const int side = first_slot >= index_size_ ? 1 : 0;
    const std::uint64_t first_index = first_slot - static_cast<std::uint64_t>(side) * index_size_;
    w.decoded.resize(count * units + kPlacementBytes);  // room for word-sized copies
    if (tbf_table_decode(in_.db, info_.name, first_index, count, w.decoded.data()) != TBF_OK) {
        state_.fail(tbf_last_error());
        return;
    }
    for (LaneQueue& q : w.queues) {
        q.squares.clear();
        q.requests.clear();
    }
    for (std::uint64_t i = 0; i < count && !state_.stopped(); ++i) {
        position(w, first_slot + i, w.decoded.data() + i * units);
    }
    if (state_.stopped()) return;
    resolve_queues(w, first_slot);
    state_.progress(count, w.tally.positions - w.shown_positions, slots_);
    w.shown_positions = w.tally.positions;
}

void StreamCheck::position(Worker& w, std::uint64_t slot, const std::uint8_t* squares) {
    const int side = slot >= index_size_ ? 1 : 0;
    const auto node = static_cast<std::uint32_t>(slot - window_first_);
    const std::uint32_t code = stored_code(node);
    Board& board = w.board;
    BoardEditor::clear(board, in_.variant, side == 0 ? Color::White : Color::Black);
    std::uint64_t seen = 0;
    for (std::size_t k = 0; k < layout_.size(); ++k) {
        const std::uint64_t bit = std::uint64_t{1} << (squares[k] & 63);
        if (squares[k] > 63 || (seen & bit) != 0) {
            record(w, slot, "", value_of_code(code), std::nullopt,
                   "slot " + std::to_string(slot) + " decodes to two units on one square");
            return;
        }
        seen |= bit;
        BoardEditor::place(board, squares[k], layout_[k]);
    }
    if (!BoardEditor::is_position(board)) {
        // A hole: no position for this side to move under the verifier's rules.
        if (code != 0) {
            record(w, slot, "", value_of_code(code), DtcValue{},
                   "slot " + std::to_string(slot) + " holds no position but stores " +
                       to_string(value_of_code(code)));
        }
        return;
    }
    const DtcValue stored = value_of_code(code);
    ++w.tally.positions;
    w.tally.add_stored(side, stored);
    if (sampled(slot)) w.samples.push_back(slot);
    // The position's own index must lead back to its slot (tbf_probe finds
    // its value there).
    LaneQueue& own = w.queues[0];
    std::memcpy(own.squares.append(layout_.size()), squares, kPlacementBytes);
    own.requests.push_back({node, kSelf});

    generate_legal(board, w.moves);
    if (w.moves.empty()) {
        const DtcValue derived = terminal_value(board.outcome());
        if (derived != stored) {
            record(w, slot, board.fen(), stored, derived,
                   "stored " + to_string(stored) + ", its moves give " + to_string(derived));
        }
        return;
    }
    acc_[node] = kOpen;
    // Children are placed from the parent's placement: the moving unit on
    // its target (promoted), the captured one left out. Only a double push
    // that gives an en-passant right is made on the board (its child is
    // valued from its own moves).
    std::array<std::int8_t, 64> unit_at;
    for (std::size_t k = 0; k < layout_.size(); ++k) unit_at[squares[k]] = static_cast<std::int8_t>(k);
    const MaterialKey key = lanes_[0].key;
    const int them_count = board.unit_count(opposite(board.side_to_move()));
    const std::uint8_t child_black =
        board.side_to_move() == Color::White ? kBlackStored : std::uint8_t{0};
    for (const Move& m : w.moves) {
        const int mover = unit_at[static_cast<std::size_t>(m.from)];
        int captured = -1;
        if (!board.unit_on(m.to).empty()) {
            captured = unit_at[static_cast<std::size_t>(m.to)];
        } else if (board.ep_square() != kNoSquare && board.is_capture(m)) {
            // En passant (a slot has no right to it, but the rules allow it).
            captured = unit_at[static_cast<std::size_t>(square_at(file_of(m.to), rank_of(m.from)))];
        }
        const bool conversion = captured >= 0 || m.promotion != Piece::None;
        if (captured >= 0 && them_count == 1) {
            // The opponent's last unit: the opponent, to move, has won.
            fold(w, node, 0, key_of(move_score({Wdl::Win, 0}, true)));
            continue;
        }
        if (BoardEditor::gives_en_passant(board, m)) {
            const Undo undo = BoardEditor::make(board, m);
            child(w, node, 0, key, slot);
            BoardEditor::unmake(board, m, undo);
        } else if (!conversion) {
            LaneQueue& q = w.queues[0];
            std::uint8_t* out = q.squares.append(layout_.size());
            // A whole word at once (the buffers have room): one move
            // instead of a call for a few bytes.
            std::memcpy(out, squares, kPlacementBytes);
            out[mover] = static_cast<std::uint8_t>(m.to);
            q.requests.push_back({node, child_black});
        } else {
            MaterialKey child_key = key;
            if (captured >= 0) child_key -= unit_key(layout_[static_cast<std::size_t>(captured)]);
            if (m.promotion != Piece::None) {
                const int c = color_index(board.side_to_move());
                child_key += unit_key(c, type_index(m.promotion)) - unit_key(c, TBF_PAWN);
            }
            emit_placed(w, lane_of(child_key), node, kConversion, squares, mover, m, captured,
                        slot);
        }
        if (acc_[node] == kSkip || state_.stopped()) break;
    }
}

// A conversion's child into its lane's queue, placed from the parent's
// placement.
void StreamCheck::emit_placed(Worker& w, std::uint16_t lane_id, std::uint32_t node,
                              std::uint8_t flags, const std::uint8_t* squares, int mover,
                              const Move& m, int captured, std::uint64_t parent_slot) {
    if (lane_id == kNoLane || lanes_[lane_id].missing) {
        const Undo undo = BoardEditor::make(w.board, m);
        emit(w, lane_id, node, flags, parent_slot);  // reports the missing table
        BoardEditor::unmake(w.board, m, undo);
        return;
    }
    const Lane& lane = lanes_[lane_id];
    // The child's side to move is the opponent of the parent's.
    const bool black = w.board.side_to_move() == Color::White;
    if (black != lane.flipped) flags |= kBlackStored;
    LaneQueue& q = w.queues[lane_id];
    std::uint8_t* out = q.squares.append(static_cast<std::size_t>(lane.unit_count));
    std::array<std::array<std::int8_t, 6>, 2> next = lane.first;
    for (std::size_t k = 0; k < layout_.size(); ++k) {
        const auto unit = static_cast<int>(k);
        if (unit == captured) continue;
        Unit u = layout_[k];
        std::uint8_t square = squares[k];
        if (unit == mover) {
            square = static_cast<std::uint8_t>(m.to);
            if (m.promotion != Piece::None) u.piece = m.promotion;
        }
        out[next[static_cast<std::size_t>(color_index(u.color))]
                [static_cast<std::size_t>(type_index(u.piece))]++] = square;
    }
    q.requests.push_back({node, flags});
}

// One child of a position (the move made on w.board).
void StreamCheck::child(Worker& w, std::uint32_t node, std::uint8_t flags, MaterialKey key,
                        std::uint64_t parent_slot) {
    Board& board = w.board;
    // A side without units has won (docs/ARCHITECTURE.md section 3).
    if (board.unit_count(Color::White) == 0 || board.unit_count(Color::Black) == 0) {
        fold(w, node, 0,
             key_of(move_score(terminal_value(board.outcome()), (flags & kConversion) != 0)));
        return;
    }
    if (board.ep_square() == kNoSquare) {
        emit(w, lane_of(key), node, flags, parent_slot);
        return;
    }
    // En passant: not stored (docs/ARCHITECTURE.md section 4); the child is
    // valued from its own moves, all captures, and scored as the quiet move
    // (a double push) that made it.
    generate_legal(board, w.replies);
    if (w.replies.empty()) {
        fold(w, node, 0, key_of(move_score(terminal_value(board.outcome()), false)));
        return;
    }
    const auto ep = static_cast<std::uint32_t>(w.ep_nodes.size());
    w.ep_nodes.push_back({node, kOpen});
    const MoveList replies = w.replies;
    for (const Move& r : replies) {
        const bool conversion = board.is_conversion(r);
        const Undo undo = BoardEditor::make(board, r);
        MaterialKey grandchild_key = key;
        if (undo.captured_square >= 0) grandchild_key -= unit_key(undo.captured);
        if (r.promotion != Piece::None) {
            const int c = color_index(opposite(board.side_to_move()));
            grandchild_key += unit_key(c, type_index(r.promotion)) - unit_key(c, TBF_PAWN);
        }
        if (board.unit_count(Color::White) == 0 || board.unit_count(Color::Black) == 0) {
            fold(w, ep, kEpNode, key_of(move_score(terminal_value(board.outcome()), conversion)));
        } else if (board.ep_square() != kNoSquare) {
            // A reply that is a double push into another en-passant right:
            // not a capture, which the rules do not allow here.
            const std::string fen = board.fen();
            BoardEditor::unmake(board, r, undo);
            record(w, parent_slot, fen_of_slot(parent_slot), std::nullopt, std::nullopt,
                   "an en-passant child has a reply that is no capture, reaching " + fen);
            acc_[node] = kSkip;
            return;
        } else {
            emit(w, lane_of(grandchild_key), ep,
                 static_cast<std::uint8_t>(kEpNode | (conversion ? kConversion : 0)), parent_slot);
        }
        BoardEditor::unmake(board, r, undo);
        if (state_.stopped()) return;
    }
}

void StreamCheck::emit(Worker& w, std::uint16_t lane_id, std::uint32_t node, std::uint8_t flags,
                       std::uint64_t parent_slot) {
    const Board& board = w.board;
    if (lane_id == kNoLane || lanes_[lane_id].missing) {
        // The probe names the table it lacks, in its canonical orientation.
        const tbf_position pos = to_neutral(board);
        tbf_value ignored{};
        const std::string variant(variant_name(in_.variant));
        const tbf_status status = tbf_probe(in_.db, variant.c_str(), &pos, &ignored);
        const std::string why = status != TBF_OK
                                    ? std::string(tbf_last_error())
                                    : "no table holds " + board.fen() + " in the listing";
        state_.fail(why + " (needed by " + fen_of_slot(parent_slot) + ")");
        return;
    }
    const Lane& lane = lanes_[lane_id];
    const bool black = board.side_to_move() == Color::Black;
    if (black != lane.flipped) flags |= kBlackStored;
    LaneQueue& q = w.queues[lane_id];
    std::uint8_t* out = q.squares.append(static_cast<std::size_t>(lane.unit_count));
    std::array<std::array<std::int8_t, 6>, 2> next = lane.first;
    for (int c = 0; c < 2; ++c) {
        const Color color = c == 0 ? Color::White : Color::Black;
        const std::int8_t* list = BoardEditor::squares(board, color);
        for (int i = 0; i < board.unit_count(color); ++i) {
            const int sq = list[i];
            const int t = type_index(board.unit_on(sq).piece);
            out[next[static_cast<std::size_t>(c)][static_cast<std::size_t>(t)]++] =
                static_cast<std::uint8_t>(sq);
        }
    }
    q.requests.push_back({node, flags});
}

void StreamCheck::resolve_queues(Worker& w, std::uint64_t first_slot) {
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
        LaneQueue& q = w.queues[l];
        if (q.requests.empty()) continue;
        const Lane& lane = lanes_[l];
        q.indices.resize(q.requests.size());
        if (tbf_table_encode(in_.db, lane.table.c_str(), lane.flipped ? 1 : 0, q.squares.data(),
                             q.requests.size(), q.indices.data()) != TBF_OK) {
            state_.fail(tbf_last_error());
            return;
        }
        TableValues& values = *lane.values;
        // Start fetching every child's value before the first is needed: the
        // lookups are independent, so their cache misses overlap.
        if (values.slots() > (std::uint64_t{1} << 20)) {
            for (std::size_t j = 0; j < q.requests.size(); ++j) {
                const std::uint64_t index = q.indices[j];
                if (index >= lane.index_size) continue;
                const std::uint64_t slot =
                    ((q.requests[j].flags & kBlackStored) != 0 ? lane.index_size : 0) + index;
                if (values.loaded(values.block_of(slot))) values.prefetch(slot);
            }
        }
        for (std::size_t j = 0; j < q.requests.size(); ++j) {
            const Request r = q.requests[j];
            const std::uint64_t index = q.indices[j];
            if ((r.flags & kSelf) != 0) {
                const std::uint64_t slot = window_first_ + r.node;
                const std::uint64_t own = slot >= index_size_ ? slot - index_size_ : slot;
                if (index != own) {
                    record(w, slot, fen_of_slot(slot), value_of_code(stored_code(r.node)),
                           std::nullopt,
                           index == TBF_NO_INDEX
                               ? std::string("the index finds no slot for the position it decoded")
                               : "the index locates the position at index " +
                                     std::to_string(index) + ", not at its slot's index " +
                                     std::to_string(own));
                    acc_[r.node] = kSkip;
                }
                continue;
            }
            const std::uint32_t parent =
                (r.flags & kEpNode) != 0 ? w.ep_nodes[r.node].parent : r.node;
            if (index == TBF_NO_INDEX || index >= lane.index_size) {
                const std::uint64_t slot = window_first_ + parent;
                if (acc_[parent] != kSkip) {
                    record(w, slot, fen_of_slot(slot), value_of_code(stored_code(parent)),
                           std::nullopt,
                           "the index of table " + lane.table + " has no slot for a child");
                }
                acc_[parent] = kSkip;
                continue;
            }
            const std::uint64_t slot = ((r.flags & kBlackStored) != 0 ? lane.index_size : 0) + index;
            const std::uint64_t block = values.block_of(slot);
            if (values.loaded(block)) {
                if (!everything_held_) values.touch(block, stamp_);
                fold(w, r.node, r.flags, move_key(values.code(slot), (r.flags & kConversion) != 0));
            } else {
                w.waiting.push_back({slot, r.node, static_cast<std::uint16_t>(l), r.flags});
            }
        }
    }
    (void)first_slot;
}

void StreamCheck::phase_b() {
    // The blocks the waiting children need, each once, table by table.
    std::vector<BlockId> wanted;
    for (const auto& w : workers_) {
        state_.report().waited += w->waiting.size();
        for (const Waiting& c : w->waiting) {
            TableValues* t = lanes_[c.lane].values;
            wanted.push_back({t, t->block_of(c.slot)});
        }
    }
    const auto order = [](const BlockId& a, const BlockId& b) {
        return a.table != b.table ? std::less<>()(a.table, b.table) : a.block < b.block;
    };
    std::sort(wanted.begin(), wanted.end(), order);
    wanted.erase(std::unique(wanted.begin(), wanted.end(),
                             [](const BlockId& a, const BlockId& b) {
                                 return a.table == b.table && a.block == b.block;
                             }),
                 wanted.end());
    while (!wanted.empty() && !state_.stopped()) {
        stamp_ = in_.cache->next_stamp();
        auto loaded = in_.cache->load(wanted, threads_);
        if (!loaded.ok()) {
            state_.fail(loaded.status().to_string());
            return;
        }
        wanted.erase(wanted.begin(), wanted.begin() + static_cast<long>(*loaded));
        // Each worker folds its own waiting children: the parents of one
        // worker's children are its own batches' nodes.
        run_on_threads(threads_, [&](int thread) {
            Worker& w = *workers_[static_cast<std::size_t>(thread)];
            std::size_t kept = 0;
            for (const Waiting& c : w.waiting) {
                TableValues& t = *lanes_[c.lane].values;
                if (t.loaded(t.block_of(c.slot))) {
                    fold(w, c.node, c.flags, move_key(t.code(c.slot), (c.flags & kConversion) != 0));
                } else {
                    w.waiting[kept++] = c;
                }
            }
            w.waiting.resize(kept);
        });
    }
    // En-passant children are complete: score them for their parents (few:
    // one thread).
    for (const auto& worker : workers_) {
        Worker& w = *worker;
        for (const EpNode& e : w.ep_nodes) {
            if (e.best == kSkip || e.best == kOpen) {
                acc_[e.parent] = kSkip;
                continue;
            }
            fold(w, e.parent, 0, key_of(move_score(value_of_key(e.best), false)));
        }
        w.ep_nodes.clear();
    }
}

void StreamCheck::phase_c(std::uint64_t first, std::uint64_t end) {
    const auto n = static_cast<std::int64_t>(end - first);
    const int threads = threads_for(end - first, std::uint64_t{1} << 16);
    run_on_threads(threads, [&](int t) {
        Worker& w = *workers_[static_cast<std::size_t>(t)];
        const std::int64_t from = n * t / threads;
        const std::int64_t to = n * (t + 1) / threads;
        for (std::int64_t i = from; i < to; ++i) {
            const std::uint32_t best = acc_[static_cast<std::size_t>(i)];
            if (best == kSkip) continue;
            const auto node = static_cast<std::uint64_t>(i);
            const DtcValue stored = value_of_code(stored_code(node));
            if (best == kOpen) continue;  // a child failed and was reported
            const DtcValue derived = value_of_key(best);
            if (derived != stored) {
                record(w, first + node, fen_of_slot(first + node), stored, derived,
                       "stored " + to_string(stored) + ", its moves give " + to_string(derived));
                acc_[node] = kSkip;
            }
        }
    });
    // The sample, again through the public probe alone: tbf_probe of every
    // child and of the position itself must give the same. The first 64
    // slots of a table all come from one batch: shared out again here so
    // that both threads take part.
    std::vector<std::uint64_t> samples;
    for (const auto& w : workers_) {
        samples.insert(samples.end(), w->samples.begin(), w->samples.end());
        w->samples.clear();
    }
    if (samples.empty()) return;
    std::atomic<std::size_t> next{0};
    run_on_threads(std::min<int>(threads_, static_cast<int>(samples.size())), [&](int t) {
        Worker& w = *workers_[static_cast<std::size_t>(t)];
        try {
            for (std::size_t k = next.fetch_add(1); k < samples.size(); k = next.fetch_add(1)) {
                const std::uint64_t slot = samples[k];
                const std::uint64_t node = slot - first;
                if (node >= static_cast<std::uint64_t>(n) || acc_[node] == kSkip || state_.stopped()) {
                    continue;
                }
                const DtcValue stored = value_of_code(stored_code(node));
                const int side = slot >= index_size_ ? 1 : 0;
                tbf_position pos{};
                const tbf_status status = tbf_table_position(
                    in_.db, info_.name, slot - static_cast<std::uint64_t>(side) * index_size_, side,
                    &pos);
                if (status != TBF_OK) {
                    record(w, slot, fen_of_slot(slot), stored, std::nullopt,
                           std::string("tbf_table_position rejects the slot: ") + tbf_last_error());
                    continue;
                }
                const Result<Board> board = to_board(in_.variant, pos);
                if (!board) {
                    record(w, slot, neutral_fen(pos), stored, std::nullopt,
                           "tbf_table_position gives an impossible position: " +
                               board.status().message());
                    continue;
                }
                if (!w.valuer) w.valuer.emplace(in_.db, in_.variant);
                Failure failure;
                const auto derived = w.valuer->derive(*board, failure);
                const auto probed = derived ? w.valuer->probe(*board, failure) : std::nullopt;
                if (failure.kind == Failure::Kind::Database) {
                    state_.fail(failure.message + " (needed by " + board->fen() + ")");
                    continue;
                }
                if (!derived || !probed || *derived != stored || *probed != stored) {
                    record(w, slot, board->fen(), stored, derived,
                           !derived ? failure.message
                           : *derived != stored
                               ? "through tbf_probe its moves give " + to_string(*derived) +
                                     ", the stored value is " + to_string(stored)
                           : !probed ? failure.message
                                     : "probing the position answers " + to_string(*probed) +
                                           ", its slot stores " + to_string(stored));
                }
            }
        } catch (const std::bad_alloc&) {
            state_.fail("out of memory");
        }
    });
}

void StreamCheck::finish() {
    TableReport& report = state_.report();
    const Tally& totals = state_.totals();
    if (info_.slots != 2 * info_.index_size) {
        report.metadata_errors.push_back("the table has " + std::to_string(info_.slots) +
                                         " slots, not twice its index size " +
                                         std::to_string(info_.index_size));
    }
    const std::uint64_t digest = hasher_.digest();
    report.checksum_ok = digest == info_.checksum;
    if (!*report.checksum_ok) {
        char text[80];
        std::snprintf(text, sizeof text, "stored checksum %016llx, values hash to %016llx",
                      static_cast<unsigned long long>(info_.checksum),
                      static_cast<unsigned long long>(digest));
        report.metadata_errors.emplace_back(text);
    }
    // The generator's statistics (storage counters "white.valid", "white.win",
    // ..., "max_dtc") must match the values just streamed. Tables written
    // without statistics have none to check.
    const auto expect = [&](const std::string& name, std::uint64_t counted, const char* what) {
        const auto it = in_.counters->find(name);
        if (it == in_.counters->end() || it->second == counted) return;
        report.metadata_errors.push_back("statistics counter " + name + " is " +
                                         std::to_string(it->second) + ", the table has " +
                                         std::to_string(counted) + " " + what);
    };
    const char* sides[] = {"white", "black"};
    for (int c = 0; c < 2; ++c) {
        const std::string side = sides[c];
        expect(side + ".valid", totals.valid[c], "positions");
        expect(side + ".win", totals.wdl[c][2], "wins");
        expect(side + ".draw", totals.wdl[c][1], "draws");
        expect(side + ".loss", totals.wdl[c][0], "losses");
    }
    expect("max_dtc", totals.max_dtc, "as longest distance");
}

}  // namespace

std::uint64_t default_memory_budget() { return physical_memory() / 2; }

void check_table_streaming(const StreamInputs& in, CheckState& state) {
    StreamCheck(in, state).run();
}

}  // namespace tbf::verify::detail
