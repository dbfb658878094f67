#pragma once
// The values of one table in the exact index, built in RAM: on the faster
// work index (index/work_index.hpp) where it applies, then renumbered.
// Defined and instantiated for each ruleset in table_build.cpp.

#include <optional>

#include "retrograde.hpp"
#include "tbforge/index/indexer.hpp"
#include "tbforge/index/work_index.hpp"

namespace tbf::gen {

// The work index where it applies and stays small (nullopt: build on the
// exact index).
std::optional<index::WorkIndex> work_index_for(const index::Indexer& exact);

template <Ruleset R>
TableValues build_table_values(const index::Indexer& exact, ChildValue child_value, BuildProgress progress = {});

}  // namespace tbf::gen
