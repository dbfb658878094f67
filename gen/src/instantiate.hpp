#pragma once
// The rulesets the builders are compiled for. Their member definitions live
// in .cpp files that end by instantiating them explicitly for each ruleset
// (X(R) once per ruleset), so callers see declarations only and a ruleset
// missing here fails at link time, not at run time.

#include "tbforge/rules/variant.hpp"

#define TBF_GEN_FOR_EACH_RULESET(X) \
    X(Antichess)                    \
    X(AntichessFics)                \
    X(AntichessJoint)               \
    X(FourFile)
