// Encode and decode speed of the indexers, fast path (square arrays) and
// Position path, on 4-, 5- and 6-unit tables. Inputs are random slots
// (fixed seed); encode inputs are random symmetric images of their
// placements, so canonicalisation is part of the measured work. The
// neighbour benchmarks find the slots of every quiet move of both sides from
// random slots, by full encodes and by Indexer::Neighbours.

#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "tbforge/index/indexer.hpp"
#include "tbforge/rules/bitboard.hpp"
#include "tbforge/rules/symmetry.hpp"

namespace {

using namespace tbf;
using namespace tbf::index;

constexpr std::size_t kInputs = 1 << 14;

struct Case {
    VariantId variant;
    const char* table;
};

constexpr Case kCases[] = {
    {VariantId::Antichess, "KRvKB"},   {VariantId::Antichess, "BBvBB"},
    {VariantId::Antichess, "KPvKP"},   {VariantId::Antichess, "KQRvKB"},
    {VariantId::Antichess, "RBNvKN"},  {VariantId::Antichess, "KRPvKP"},
    {VariantId::Antichess, "KQRvKBN"}, {VariantId::Antichess, "KKvKKN"},
    {VariantId::FourFile, "KRPvKP"},
};

struct Inputs {
    Indexer indexer;
    std::vector<Index> slots;
    std::vector<Placement> images;  // a symmetric image of each slot's placement
    std::vector<Position> positions;
};

Inputs make_inputs(const Case& c) {
    auto material = parse_table(c.table, c.variant);
    Inputs in{*Indexer::create(c.variant, canonical(*material)), {}, {}, {}};
    std::mt19937_64 rng(12345);
    const Indexer& ix = in.indexer;
    std::uniform_int_distribution<Index> slot(0, ix.size() - 1);
    const int syms = ix.symmetry_count();
    while (in.slots.size() < kInputs) {
        const Index i = slot(rng);
        auto pos = ix.position(i, Color::White);
        if (!pos) pos = ix.position(i, Color::Black);
        if (!pos) continue;
        // Symmetries used: all 8, the file mirror (1), or none.
        const int sym = syms == 1 ? 0 : static_cast<int>(rng() % static_cast<unsigned>(syms));
        const Position image = transform(*pos, sym);
        Placement p{};
        ix.placement_of(image, p.data());
        in.slots.push_back(i);
        in.images.push_back(p);
        in.positions.push_back(image);
    }
    return in;
}

void encode_fast(benchmark::State& state, const Case& c) {
    const Inputs in = make_inputs(c);
    std::size_t k = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(in.indexer.encode(in.images[k].data()));
        k = (k + 1) & (kInputs - 1);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void decode_fast(benchmark::State& state, const Case& c) {
    const Inputs in = make_inputs(c);
    std::size_t k = 0;
    Placement p{};
    for (auto _ : state) {
        benchmark::DoNotOptimize(in.indexer.decode(in.slots[k], p.data()));
        benchmark::DoNotOptimize(p);
        k = (k + 1) & (kInputs - 1);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void encode_position(benchmark::State& state, const Case& c) {
    const Inputs in = make_inputs(c);
    std::size_t k = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(in.indexer.index(in.positions[k]));
        k = (k + 1) & (kInputs - 1);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void decode_position(benchmark::State& state, const Case& c) {
    const Inputs in = make_inputs(c);
    std::size_t k = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(in.indexer.position(in.slots[k], Color::Black));
        k = (k + 1) & (kInputs - 1);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// Sequential decoding, as a retrograde pass walks a table.
void decode_sequential(benchmark::State& state, const Case& c) {
    auto material = parse_table(c.table, c.variant);
    const Indexer ix = *Indexer::create(c.variant, canonical(*material));
    Index i = 0;
    Placement p{};
    for (auto _ : state) {
        benchmark::DoNotOptimize(ix.decode(i, p.data()));
        benchmark::DoNotOptimize(p);
        if (++i == ix.size()) i = 0;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

constexpr Case kNeighbourCases[] = {
    {VariantId::Antichess, "KQRvKBN"}, {VariantId::Antichess, "KQQQQvK"},
    {VariantId::Antichess, "KQQQvK"},  {VariantId::Antichess, "RBNvKN"},
    {VariantId::Antichess, "KRPvKBN"}, {VariantId::Antichess, "KKvKKN"},
    {VariantId::FourFile, "KRPvKP"},
};

struct Move {
    std::uint8_t unit;
    Square to;
};

// Slots with every quiet move of either side's units: non-pawn units to
// the empty squares they attack, pawns one step forward short of the last
// rank. Random slots, or a run of consecutive ones as a pass scans them
// (neighbouring slots share their root, and so the root lookups).
struct MoveInputs {
    Indexer indexer;
    std::vector<Index> slots;
    std::vector<Placement> placements;
    std::vector<std::uint32_t> first;  // per slot, into moves; one more at the end
    std::vector<Move> moves;
};

MoveInputs make_move_inputs(const Case& c, bool sequential) {
    auto material = parse_table(c.table, c.variant);
    MoveInputs in{*Indexer::create(c.variant, canonical(*material)), {}, {}, {}, {}};
    const Indexer& ix = in.indexer;
    const Bitboard board = variant_traits(c.variant).board;
    std::mt19937_64 rng(12345);
    std::uniform_int_distribution<Index> slot(0, ix.size() - 1);
    constexpr std::size_t kSlots = 1 << 12;
    Index next = slot(rng) % (ix.size() - std::min<Index>(ix.size(), kSlots) + 1);
    while (in.slots.size() < kSlots && next < ix.size()) {
        const Index i = sequential ? next++ : slot(rng);
        Placement p{};
        ix.decode(i, p.data());
        Bitboard occ = 0;
        for (int u = 0; u < ix.unit_count(); ++u) occ |= bit(p[static_cast<std::size_t>(u)]);
        in.slots.push_back(i);
        in.placements.push_back(p);
        in.first.push_back(static_cast<std::uint32_t>(in.moves.size()));
        for (int u = 0; u < ix.unit_count(); ++u) {
            const Unit unit = ix.unit(u);
            const Square from = p[static_cast<std::size_t>(u)];
            Bitboard to = 0;
            if (unit_type(unit) == UnitType::Pawn) {
                const int step = unit_color(unit) == Color::White ? 8 : -8;
                const int one = from + step;
                if (one >= 8 && one < 56) to = bit(static_cast<Square>(one));
            } else {
                to = unit_attacks(unit_type(unit), from, occ);
            }
            for (to &= ~occ & board; to;) in.moves.push_back({static_cast<std::uint8_t>(u), pop_lsb(to)});
        }
    }
    in.first.push_back(static_cast<std::uint32_t>(in.moves.size()));
    return in;
}

// Items are moves: ns per item is the cost of one neighbour's slot.
void neighbours_encode(benchmark::State& state, const Case& c, bool sequential) {
    const MoveInputs in = make_move_inputs(c, sequential);
    std::size_t k = 0;
    std::int64_t moves = 0;
    for (auto _ : state) {
        Placement p = in.placements[k];
        for (std::uint32_t m = in.first[k]; m < in.first[k + 1]; ++m) {
            const Move move = in.moves[m];
            const Square from = p[move.unit];
            p[move.unit] = move.to;
            benchmark::DoNotOptimize(in.indexer.encode(p.data()));
            p[move.unit] = from;
        }
        moves += in.first[k + 1] - in.first[k];
        k = (k + 1) % in.slots.size();
    }
    state.SetItemsProcessed(moves);
}

void neighbours_moved(benchmark::State& state, const Case& c, bool sequential) {
    const MoveInputs in = make_move_inputs(c, sequential);
    std::size_t k = 0;
    std::int64_t moves = 0;
    for (auto _ : state) {
        Indexer::Neighbours neighbours(in.indexer, in.slots[k], in.placements[k].data());
        for (std::uint32_t m = in.first[k]; m < in.first[k + 1]; ++m) {
            benchmark::DoNotOptimize(neighbours.moved(in.moves[m].unit, in.moves[m].to));
        }
        moves += in.first[k + 1] - in.first[k];
        k = (k + 1) % in.slots.size();
    }
    state.SetItemsProcessed(moves);
}

const bool kRegistered = [] {
    const std::pair<const char*, void (*)(benchmark::State&, const Case&)> kinds[] = {
        {"BM_Index_Encode", encode_fast},
        {"BM_Index_Encode", encode_position},
        {"BM_Index_Decode", decode_fast},
        {"BM_Index_Decode", decode_sequential},
        {"BM_Index_Decode", decode_position}};
    const char* paths[] = {"fast", "position", "fast", "sequential", "position"};
    for (const Case& c : kCases) {
        for (std::size_t k = 0; k < std::size(kinds); ++k) {
            std::string name = kinds[k].first;
            name.append("/").append(variant_name(c.variant)).append("/").append(c.table);
            name.append("/").append(paths[k]);
            benchmark::RegisterBenchmark(name.c_str(), kinds[k].second, c);
        }
    }
    for (const Case& c : kNeighbourCases) {
        for (const bool sequential : {false, true}) {
            std::string name = "BM_Index_Neighbours/";
            name.append(variant_name(c.variant)).append("/").append(c.table).append("/");
            const std::string order = sequential ? "/sequential" : "/random";
            benchmark::RegisterBenchmark((name + "encode" + order).c_str(), neighbours_encode, c,
                                         sequential);
            benchmark::RegisterBenchmark((name + "moved" + order).c_str(), neighbours_moved, c,
                                         sequential);
        }
    }
    return true;
}();

}  // namespace
