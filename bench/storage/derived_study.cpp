// Stored size of pawn tables when whole pawn structures of the DTC side are
// left to a two-ply search (not run in CI; the measurement behind
// docs/values.md's derived pawn structures).
//
// Where the side not stored has only pawns, each of its moves advances a
// pawn: a position of the DTC side whose every grandchild (its move, then
// the other side's) lies in a pawn structure that is stored can be answered
// by searching two plies instead of reading its code. A structure can be
// left out ("derived") when no structure its grandchildren reach is left out
// too; structures are decided from the most advanced down, each left out
// when all it reaches are kept. Tables with the same units on both sides
// read the other side at the colour-swapped image instead: there a
// structure is derived when the XOR of the step game's worths is 0 for the
// other side's pawns and not 0 for the side to move's (no child's image is
// then derived). Here the derived structures' slots of the DTC side are
// made don't-care (the previous free code repeated, as the
// generator fills) and the table is compressed block by block as stored.
//
// Usage: derived_study DB TABLE... [--other-side] [--slots N] [--units] [--knight-rank] [--knight-worth]

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "compact_study.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/storage/table.hpp"

namespace {

using namespace tbf;

// A pawn structure: each colour's pawn squares, sorted, the file mirror
// taken that sorts first (the table's symmetry for pawns).
using Structure = std::vector<int>;  // square + 64 * colour, sorted

Structure canonical(Structure s) {
    std::sort(s.begin(), s.end());
    Structure m = s;
    for (int& x : m) x = (x & ~7) | (7 - (x & 7));
    std::sort(m.begin(), m.end());
    return std::min(s, m);
}

int advancement(const Structure& s) {
    int a = 0;
    for (const int x : s) a += x >= 64 ? 7 - rank_of(static_cast<Square>(x - 64)) : rank_of(static_cast<Square>(x));
    return a;
}

// Structures one pawn step of `color` away (single or double step; steps
// onto another pawn are left out, promotions leave the table).
std::vector<Structure> steps(const Structure& s, int color) {
    std::vector<Structure> out;
    for (std::size_t k = 0; k < s.size(); ++k) {
        if (s[k] / 64 != color) continue;
        const int sq = s[k] % 64;
        const int dir = color == 0 ? 8 : -8;
        const int start = color == 0 ? 1 : 6;
        for (int n = 1; n <= (rank_of(static_cast<Square>(sq)) == start ? 2 : 1); ++n) {
            const int to = sq + dir * n;
            if (to < 8 || to >= 56) break;  // promotion: another table
            bool blocked = false;
            for (int step = 1; step <= n; ++step)
                for (const int x : s) blocked |= x % 64 == sq + dir * step;
            if (blocked) break;
            Structure t = s;
            t[k] = to + 64 * color;
            out.push_back(canonical(t));
        }
    }
    return out;
}


}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: derived_study DB TABLE...\n");
        return 2;
    }
    const probe::Tablebase tb = study::open_study_tablebase("derived_study", argv[1]);
    storage::TableWriteOptions options = study::compact_table_options();
    study::use_stored_compact_parser(options);
    // --other-side: the side the generator did not choose; --slots N: blocks of N slots.
    bool other_side = false, units_rule = false, knight_rank = false, knight_worth_rule = false;
    std::uint64_t slots_override = 0;
    std::vector<const char*> names;
    for (int a = 2; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--other-side") other_side = true;
        else if (arg == "--units") units_rule = true;
        else if (arg == "--knight-rank") units_rule = knight_rank = true;
        else if (arg == "--knight-worth") units_rule = knight_worth_rule = true;
        else if (arg == "--slots" && a + 1 < argc) slots_override = std::strtoull(argv[++a], nullptr, 10);
        else names.push_back(argv[a]);
    }
    for (const char* name : names) {
        const study::StudyTable opened = study::open_study_codes("derived_study", tb, name);
        const probe::Table& table = *opened.table;
        const std::vector<std::uint16_t>& codes = opened.codes;
        const index::Indexer& ix = table.indexer();
        const std::uint64_t n = ix.size();
        const int d = static_cast<int>(table.dtc_side()) ^ (other_side ? 1 : 0);
        bool other_pawns_only = true;
        for (int u = 0; u < ix.unit_count(); ++u)
            if (static_cast<int>(unit_color(ix.unit(u))) != d && unit_type(ix.unit(u)) != UnitType::Pawn) other_pawns_only = false;
        const std::vector<std::uint8_t> is_free = study::free_slots(ix);
        const std::uint64_t spb = slots_override != 0 ? slots_override : table.info().slots_per_block;

        std::vector<std::uint32_t> slice(n, 0);
        std::map<Structure, std::uint32_t> ids;
        std::vector<Structure> structures;
        for (std::uint64_t i = 0; i < n; ++i) {
            Square squares[index::kMaxUnits];
            if (!ix.decode(i, squares)) continue;
            Structure s;
            for (int u = 0; u < ix.unit_count(); ++u)
                if (unit_type(ix.unit(u)) == UnitType::Pawn) s.push_back(squares[u] + 64 * static_cast<int>(unit_color(ix.unit(u))));
            s = canonical(s);
            const auto [it, fresh] = ids.try_emplace(s, static_cast<std::uint32_t>(ids.size()));
            if (fresh) structures.push_back(s);
            slice[i] = it->second;
        }
        // Most advanced first; a structure is derived when every structure
        // its grandchildren reach is stored.
        std::vector<std::uint32_t> order(structures.size());
        for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
        std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
            return advancement(structures[x]) > advancement(structures[y]);
        });
        std::vector<std::uint8_t> derived(structures.size(), 0);
        std::size_t derived_count = 0;
        const bool same_units = ix.material() == ix.material().flipped();
        if (same_units) {
            // The same units on both sides: the other side is read at the
            // colour-swapped image, so a derived position needs only its
            // children's images stored. The step game's XOR of the other
            // side's pawns 0 and of the side to move's not 0 ensures it.
            for (std::uint32_t k = 0; k < structures.size(); ++k) {
                unsigned own = 0, off = 0;
                for (const int x : structures[k]) {
                    const int color = x / 64;
                    const unsigned worth = probe::pawn_step_value(static_cast<Color>(color), static_cast<Square>(x % 64));
                    (color == d ? own : off) ^= worth;
                }
                derived[k] = off == 0 && own != 0;
                derived_count += derived[k];
            }
        } else if (other_pawns_only) {
            for (const std::uint32_t k : order) {
                std::vector<Structure> first = steps(structures[k], d);
                first.push_back(structures[k]);
                bool all_stored = true;
                for (const Structure& f : first)
                    for (const Structure& g : steps(f, 1 - d)) {
                        const auto it = ids.find(g);
                        if (it != ids.end() && derived[it->second]) all_stored = false;
                    }
                derived[k] = all_stored;
                derived_count += all_stored;
            }
        }
        // --units: every unit off the DTC side, each square coloured so that
        // any move of it changes its colour (pawns by the step game, knights
        // by square colour, kings by file and rank parity, bishops by rank,
        // rooks by file plus rank mod 8), a position derived when the XOR
        // of the colours is 0. Sizes only: these colours are not kept by the
        // tables' symmetries (a mirror changes a square's colour), so a
        // reader could not rely on them as they stand. --knight-rank: a
        // knight's rank modulo 4 instead, which the file mirror keeps;
        // --knight-worth: wdl-dtc/8's knight worth (derived_slots.hpp).
        std::vector<std::uint8_t> position_derived;
        if (units_rule && !same_units) {
            position_derived.assign(n, 0);
            bool colourable = true;
            for (int u = 0; u < ix.unit_count(); ++u)
                if (static_cast<int>(unit_color(ix.unit(u))) != d && unit_type(ix.unit(u)) == UnitType::Queen) colourable = false;
            if (colourable) {
                for (std::uint64_t i = 0; i < n; ++i) {
                    Square sq[index::kMaxUnits];
                    if (!ix.decode(i, sq)) continue;
                    unsigned x = 0;
                    for (int u = 0; u < ix.unit_count(); ++u) {
                        const Unit unit = ix.unit(u);
                        if (static_cast<int>(unit_color(unit)) == d) continue;
                        const int f = file_of(sq[u]), r = rank_of(sq[u]);
                        switch (unit_type(unit)) {
                            case UnitType::Pawn: x ^= probe::pawn_step_value(unit_color(unit), sq[u]); break;
                            case UnitType::Knight:
                                x ^= knight_worth_rule ? probe::knight_worth(probe::pawn_files_frame(ix, sq), sq[u])
                                     : knight_rank ? static_cast<unsigned>(r & 3)
                                                   : static_cast<unsigned>((f + r) & 1);
                                break;
                            case UnitType::King: x ^= static_cast<unsigned>((f & 1) | ((r & 1) << 1)); break;
                            case UnitType::Bishop: x ^= static_cast<unsigned>(r); break;
                            case UnitType::Rook: x ^= static_cast<unsigned>((f + r) & 7); break;
                            default: break;
                        }
                    }
                    position_derived[i] = x == 0;
                }
            }
        }
        auto layout = [&](bool drop_derived) {
            std::vector<std::uint16_t> stored(2 * n, 0);
            std::uint16_t previous = 0;
            for (std::uint64_t i = 0; i < n; ++i) {
                const std::uint64_t s = static_cast<std::uint64_t>(d) * n + i;
                // Same units (wdl-dtc/6): a win stored as its WDL, code 1.
                const bool dropped = drop_derived && (position_derived.empty() ? derived[slice[i]] != 0 : position_derived[i] != 0);
                if (is_free[s] && !dropped) previous = same_units && (codes[s] & 1) ? 1 : codes[s];
                stored[s] = previous;
            }
            return stored;
        };
        std::uint64_t derived_slots = 0;
        for (std::uint64_t i = 0; i < n; ++i) derived_slots += position_derived.empty() ? derived[slice[i]] : position_derived[i];
        const std::uint64_t plain = study::compressed_bytes(layout(false), spb, options);
        const std::uint64_t dropped = study::compressed_bytes(layout(true), spb, options);
        std::printf("%-18s slots %9llu side %s stored %8llu plain %8llu structures %6zu derived %6zu (%.1f %% of slots) -> %8llu (%.3f)\n",
                    name, static_cast<unsigned long long>(n), d == 0 ? "white" : "black",
                    static_cast<unsigned long long>(table.info().stored_bytes), static_cast<unsigned long long>(plain),
                    structures.size(), derived_count, 100.0 * static_cast<double>(derived_slots) / static_cast<double>(n),
                    static_cast<unsigned long long>(dropped), static_cast<double>(dropped) / static_cast<double>(plain));
        std::fflush(stdout);
    }
    return 0;
}
