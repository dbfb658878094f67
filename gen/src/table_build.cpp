#include "table_build.hpp"

#include <omp.h>

#include <chrono>

#include "instantiate.hpp"
#include "retrograde_impl.hpp"

namespace tbf::gen {

static_assert(TableIndexer<index::Indexer>);
static_assert(MoveIndexer<index::WorkIndex>);
static_assert(MoveIndexer<index::Indexer>);  // exact-index builds pull and index moves incrementally
static_assert(kNoSlot == index::kNoIndex);

namespace {

}  // namespace

// The work index where it applies and stays small: a group of k identical
// units takes k! times the exact index's slots there (QQQQ: 24 times), so
// beyond a pair the exact index is both smaller and faster to fill.
std::optional<index::WorkIndex> work_index_for(const index::Indexer& exact) {
    constexpr std::uint64_t kMaxGrowth = 4;
    auto work = index::WorkIndex::create(exact.variant(), exact.material());
    if (work && work->size() > kMaxGrowth * exact.size()) return std::nullopt;
    return work;
}

ExactValues::ExactValues(const index::Indexer& exact, TableValues built) : exact_(exact), built_(std::move(built)) {}

ExactValues::ExactValues(const index::Indexer& exact, const index::WorkIndex& work, TableValues built)
    : exact_(exact), work_(work), built_(std::move(built)) {}

unsigned ExactValues::code_width() const { return built_.code_width(); }

void ExactValues::set_stored_order(const index::Indexer& stored) { stored_ = stored; }

ExactValues::PlacedReader::PlacedReader(const ExactValues& values, const index::Indexer& from)
    : values_(values), units_(from.unit_count()) {
    std::array<bool, kMaxTableUnits> taken{};
    for (int k = 0; k < from.unit_count(); ++k) {
        for (int i = 0; i < units_; ++i) {
            const Unit built = values.work_ ? values.work_->unit(i) : values.exact_.unit(i);
            if (!taken[i] && built == from.unit(k)) {
                taken[i] = true;
                position_[k] = i;
                break;
            }
        }
    }
    if (values.work_) cursor_.emplace(*values.work_);
}

std::uint16_t ExactValues::PlacedReader::code(Color side, const Square* squares) {
    Square placed[kMaxTableUnits];
    for (int u = 0; u < units_; ++u) placed[position_[u]] = squares[u];
    const index::Index slot = cursor_ ? cursor_->encode(placed) : values_.exact_.encode(placed);
    return slot == index::kNoIndex ? 0 : values_.built_.code(side, slot);
}

void ExactValues::PlacedReader::codes_moved(Color side, Square* squares, int unit, const Square* next, int count,
                                            std::uint16_t* out) {
    const int built_unit = position_[unit];
    if (cursor_ && cursor_->moves_one_digit(built_unit)) {
        // One digit of the work slot follows the unit.
        for (int k = 0; k < count; ++k) out[k] = values_.built_.code(side, cursor_->moved(built_unit, next[k]));
        squares[unit] = next[count - 1];
        return;
    }
    for (int k = 0; k < count; ++k) {
        squares[unit] = next[k];
        out[k] = code(side, squares);
    }
}

void ExactValues::read(Color side, std::uint64_t first, std::span<std::uint16_t> out) {
    const TableValues& from = built_;
    if (!work_ && !stored_) {
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = from.code(side, first + k);
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    const index::Indexer& order = stored_ ? *stored_ : exact_;
    // Runs of consecutive slots, each decoded from its first
    // (Indexer::decode_next), the work slots following the moves of the
    // last unit (WorkIndex::Cursor).
    constexpr std::int64_t kRun = 1 << 12;
    const auto n = static_cast<std::int64_t>(out.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t run = 0; run < (n + kRun - 1) / kRun; ++run) {
        Square squares[kMaxTableUnits];
        PlacedReader reader(*this, order);
        const std::int64_t end = std::min(n, (run + 1) * kRun);
        const int last = order.unit_count() - 1;
        Square next[64];
        for (std::int64_t k = run * kRun; k < end; ++k) {
            const index::Index i = first + static_cast<std::uint64_t>(k);
            const bool decoded = k == run * kRun ? order.decode(i, squares) : order.decode_next(i, squares);
            out[static_cast<std::size_t>(k)] = decoded ? reader.code(side, squares) : 0;
            if (!decoded) continue;
            // The slots after it where only the last unit moves, together.
            const int more = order.last_unit_run(i, squares, next, static_cast<int>(end - k - 1));
            if (more == 0) continue;
            reader.codes_moved(side, squares, last, next, more, &out[static_cast<std::size_t>(k + 1)]);
            k += more;
        }
    }
    renumber_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <Ruleset R>
ExactValues build_table_values(const index::Indexer& exact, ChildValue child_value, BuildProgress progress) {
    if (auto work = work_index_for(exact)) {
        RetrogradeBuilder<R, index::WorkIndex> builder(*work, std::move(child_value), std::move(progress));
        return ExactValues(exact, *work, builder.build());
    }
    RetrogradeBuilder<R, index::Indexer> builder(exact, std::move(child_value), std::move(progress));
    return ExactValues(exact, builder.build());
}

#define TBF_BUILD_INSTANTIATE(R)                                   \
    template class RetrogradeBuilder<R, index::Indexer>;           \
    template class RetrogradeBuilder<R, index::WorkIndex>;         \
    template ExactValues build_table_values<R>(const index::Indexer&, ChildValue, BuildProgress);
TBF_GEN_FOR_EACH_RULESET(TBF_BUILD_INSTANTIATE)
#undef TBF_BUILD_INSTANTIATE

}  // namespace tbf::gen
