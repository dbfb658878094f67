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

index::Index ExactValues::PlacedReader::slot(const Square* squares) {
    Square placed[kMaxTableUnits];
    for (int u = 0; u < units_; ++u) placed[position_[u]] = squares[u];
    return cursor_ ? cursor_->encode(placed) : values_.exact_.encode(placed);
}

std::uint16_t ExactValues::PlacedReader::code(Color side, const Square* squares) {
    const index::Index at = slot(squares);
    return at == index::kNoIndex ? 0 : values_.built_.code(side, at);
}

void ExactValues::PlacedReader::slots_moved(Square* squares, int unit, const Square* next, int count,
                                            index::Index* out) {
    const int built_unit = position_[unit];
    if (cursor_ && cursor_->moves_one_digit(built_unit)) {
        // One digit of the work slot follows the unit.
        for (int k = 0; k < count; ++k) out[k] = cursor_->moved(built_unit, next[k]);
        squares[unit] = next[count - 1];
        return;
    }
    for (int k = 0; k < count; ++k) {
        squares[unit] = next[k];
        out[k] = slot(squares);
    }
}

template <class Visit>
void ExactValues::for_each_slot(std::uint64_t first, std::uint64_t count, Visit&& visit) {
    const auto start = std::chrono::steady_clock::now();
    const index::Indexer& order = stored_ ? *stored_ : exact_;
    // Runs of consecutive slots, each decoded from its first
    // (Indexer::decode_next), the work slots following the moves of the
    // last unit (WorkIndex::Cursor).
    constexpr std::int64_t kRun = 1 << 12;
    const auto n = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
    for (std::int64_t run = 0; run < (n + kRun - 1) / kRun; ++run) {
        Square squares[kMaxTableUnits];
        PlacedReader reader(*this, order);
        const std::int64_t end = std::min(n, (run + 1) * kRun);
        const int last = order.unit_count() - 1;
        Square next[64];
        index::Index moved[64];
        for (std::int64_t k = run * kRun; k < end; ++k) {
            const index::Index i = first + static_cast<std::uint64_t>(k);
            const bool decoded = k == run * kRun ? order.decode(i, squares) : order.decode_next(i, squares);
            visit(k, decoded ? reader.slot(squares) : index::kNoIndex);
            if (!decoded) continue;
            // The slots after it where only the last unit moves, together.
            const int more = order.last_unit_run(i, squares, next, static_cast<int>(std::min<std::int64_t>(end - k - 1, 64)));
            if (more == 0) continue;
            reader.slots_moved(squares, last, next, more, moved);
            for (int m = 0; m < more; ++m) visit(k + 1 + m, moved[m]);
            k += more;
        }
    }
    renumber_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ExactValues::read(Color side, std::uint64_t first, std::span<std::uint16_t> out) {
    const TableValues& from = built_;
    if (!work_ && !stored_) {
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = from.code(side, first + k);
        return;
    }
    for_each_slot(first, out.size(), [&](std::int64_t k, index::Index slot) {
        out[static_cast<std::size_t>(k)] = slot == index::kNoIndex ? 0 : from.code(side, slot);
    });
}

void ExactValues::read_both(std::uint64_t first, std::span<std::uint16_t> white, std::span<std::uint16_t> black) {
    const TableValues& from = built_;
    if (!work_ && !stored_) {
        for (std::size_t k = 0; k < white.size(); ++k) {
            white[k] = from.code(Color::White, first + k);
            black[k] = from.code(Color::Black, first + k);
        }
        return;
    }
    for_each_slot(first, white.size(), [&](std::int64_t k, index::Index slot) {
        const auto at = static_cast<std::size_t>(k);
        white[at] = slot == index::kNoIndex ? 0 : from.code(Color::White, slot);
        black[at] = slot == index::kNoIndex ? 0 : from.code(Color::Black, slot);
    });
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
