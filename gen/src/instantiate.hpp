#pragma once
// The rulesets the builders are compiled for. Their member definitions live
// in .cpp files that end by instantiating them explicitly for each ruleset
// (X(R) once per ruleset), so callers see declarations only and a ruleset
// missing here fails at link time, not at run time.

#include "tbforge/rules/variant.hpp"

//
// An explicit instantiation must name its type, so AllRulesets cannot drive
// it; the list is checked against it instead (a ruleset named twice is an
// error of its own: a duplicate explicit instantiation).
#define TBF_GEN_FOR_EACH_RULESET(X) \
    X(Antichess)                    \
    X(AntichessFics)                \
    X(AntichessJoint)               \
    X(FourFile)

#define TBF_GEN_COUNT_RULESET(R) +1
static_assert(0 TBF_GEN_FOR_EACH_RULESET(TBF_GEN_COUNT_RULESET) == tbf::kVariantCount,
              "TBF_GEN_FOR_EACH_RULESET must name every ruleset of AllRulesets");
#undef TBF_GEN_COUNT_RULESET
