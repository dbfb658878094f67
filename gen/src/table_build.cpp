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

// Values of work-index slots, renumbered in the exact index.
TableValues to_exact_index(const index::Indexer& exact, const index::WorkIndex& work, TableValues built) {
    // Unit k of the exact order is unit position[k] of the work order.
    std::array<int, kMaxTableUnits> position{};
    std::array<bool, kMaxTableUnits> taken{};
    for (int k = 0; k < exact.unit_count(); ++k) {
        for (int i = 0; i < work.unit_count(); ++i) {
            if (!taken[i] && work.unit(i) == exact.unit(k)) {
                taken[i] = true;
                position[k] = i;
                break;
            }
        }
    }
    TableValues out;
    out.stats = built.stats;
    const auto size = static_cast<std::int64_t>(exact.size());
    for (int c = 0; c < 2; ++c) {
        const std::vector<std::uint16_t>& from = built.values[c];
        std::vector<std::uint16_t>& to = out.values[c];
        to.resize(exact.size());
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < size; ++i) {
            Square squares[kMaxTableUnits];
            Square placed[kMaxTableUnits];
            std::uint16_t value = 0;
            if (exact.decode(static_cast<index::Index>(i), squares)) {
                for (int k = 0; k < exact.unit_count(); ++k) placed[position[k]] = squares[k];
                const index::Index slot = work.encode(placed);
                if (slot != index::kNoIndex) value = from[slot];
            }
            to[static_cast<std::size_t>(i)] = value;
        }
        built.values[c] = {};
    }
    return out;
}

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

template <Ruleset R>
TableValues build_table_values(const index::Indexer& exact, ChildValue child_value, BuildProgress progress) {
    if (auto work = work_index_for(exact)) {
        RetrogradeBuilder<R, index::WorkIndex> builder(*work, std::move(child_value), std::move(progress));
        const auto start = std::chrono::steady_clock::now();
        TableValues values = to_exact_index(exact, *work, builder.build());
        const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        values.stats.renumber_seconds = total - values.stats.seconds;
        return values;
    }
    RetrogradeBuilder<R, index::Indexer> builder(exact, std::move(child_value), std::move(progress));
    return builder.build();
}

#define TBF_BUILD_INSTANTIATE(R)                                   \
    template class RetrogradeBuilder<R, index::Indexer>;           \
    template class RetrogradeBuilder<R, index::WorkIndex>;         \
    template TableValues build_table_values<R>(const index::Indexer&, ChildValue, BuildProgress);
TBF_GEN_FOR_EACH_RULESET(TBF_BUILD_INSTANTIATE)
#undef TBF_BUILD_INSTANTIATE

}  // namespace tbf::gen
