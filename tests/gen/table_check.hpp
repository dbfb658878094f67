#pragma once
// Re-derives every stored value of a table from its children (docs/ARCHITECTURE.md
// section 4) with rules/ move generation and probe/ reads: the test suite's
// self-consistency check (tbverify does the same with its own generator).

#include <map>
#include <memory>
#include <string>

#include "tbforge/probe/tablebase.hpp"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/movegen.hpp"

namespace tbf::test {

struct TableCheck {
    std::uint64_t positions = 0;
    std::uint64_t errors = 0;
    std::string first_error;
};

// Probes through tables found by material, cached here: Tablebase::probe
// looks tables up by name, which would dominate this loop.
template <Ruleset R>
class FastProbe {
public:
    explicit FastProbe(const probe::Tablebase& tb) : tb_(tb) {}

    probe::ProbeResult<probe::Value> value(const Position& pos) {
        if (pos.ep_square() != kNoSquare) return tb_.probe(R::kId, pos);
        if constexpr (R::kCapturesCompulsory) {
            if (pos.units(pos.side_to_move()) == 0) return probe::Value{Wdl::Win, 0};
            if (pos.units(~pos.side_to_move()) == 0) return probe::Value{Wdl::Loss, 0};
        }
        const index::Material m = index::canonical(index::material_of(pos));
        auto it = tables_.find(m);
        if (it == tables_.end()) {
            auto table = tb_.load_resident(R::kId, m);
            if (!table.ok()) return table.status();
            it = tables_.emplace(m, *table).first;
        }
        return tb_.value_in(*it->second, pos);
    }

private:
    const probe::Tablebase& tb_;
    std::map<index::Material, std::shared_ptr<const probe::Table>> tables_;
};

template <Ruleset R>
TableCheck check_table(const probe::Tablebase& tb, const index::Material& material) {
    TableCheck out;
    FastProbe<R> fast(tb);
    auto table = tb.table(R::kId, material);
    if (!table.ok()) {
        out.errors = 1;
        out.first_error = table.status().message();
        return out;
    }
    const auto& ix = (*table)->indexer();
    for (Color side : {Color::White, Color::Black}) {
        for (std::uint64_t i = 0; i < ix.size(); ++i) {
            auto pos = ix.position(i, side);
            if (!pos) continue;
            ++out.positions;
            auto stored = fast.value(*pos);
            MoveList list;
            generate_legal<R>(*pos, list);
            probe::Value derived;
            if (list.empty()) {
                derived = {*terminal_value<R>(*pos, false), 0};
            } else {
                derived = {Wdl::Loss, 0};
                for (Move m : list) {
                    auto child = fast.value(pos->after(m));
                    if (!child.ok()) {
                        derived = {Wdl::Draw, 0xFFFF};
                        break;
                    }
                    const auto v = probe::move_value(*child, pos->is_conversion(m));
                    if (probe::better_for_mover(v, derived)) derived = v;
                }
            }
            if (!stored.ok() || *stored != derived) {
                if (out.errors++ == 0) {
                    out.first_error = to_fen(*pos) + " stored " +
                                      (stored.ok() ? std::to_string(probe::encode_value(*stored))
                                                   : stored.status().message()) +
                                      " derived " + std::to_string(probe::encode_value(derived));
                }
            }
        }
    }
    return out;
}

}  // namespace tbf::test
