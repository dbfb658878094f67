# Adding a variant must fail to compile wherever a piece is missing, and
# compile once all are there. Each case edits a copy of the rules headers
# (variant.hpp) the way someone adding a variant would, compiles a small
# user of it and checks the outcome and the diagnostic.
#
# cmake -DCXX=compiler -DSOURCE_DIR=repo -DWORK_DIR=dir -P variant_compile.cmake

set(header_rel "rules/include/tbforge/rules/variant.hpp")
file(READ "${SOURCE_DIR}/${header_rel}" original)
set(user "${CMAKE_CURRENT_LIST_DIR}/variant_compile/uses_variants.cpp")

set(enum_line "enum class VariantId : std::uint8_t { Antichess, AntichessFics, AntichessJoint, FourFile };")
set(enum_plus "enum class VariantId : std::uint8_t { Antichess, AntichessFics, AntichessJoint, FourFile, Throwaway };")
set(list_line "using AllRulesets = RulesetList<Antichess, AntichessFics, AntichessJoint, FourFile>;")
set(list_plus "using AllRulesets = RulesetList<Antichess, AntichessFics, AntichessJoint, FourFile, Throwaway>;")
set(case_line "        case VariantId::FourFile: return detail::call_with<VariantId::FourFile, FourFile>(f);")
set(case_plus "${case_line}\n        case VariantId::Throwaway: return detail::call_with<VariantId::Throwaway, Throwaway>(f);")
set(concept_line "template <class R>\nconcept Ruleset = requires {")
set(ruleset "struct Throwaway : LosingRules {
    static constexpr VariantId kId = VariantId::Throwaway;
    static constexpr std::string_view kName = \"throwaway\";
    static constexpr Stalemate kStalemate = Stalemate::Draw;
};
")
set(ruleset_no_stalemate "struct Throwaway : LosingRules {
    static constexpr VariantId kId = VariantId::Throwaway;
    static constexpr std::string_view kName = \"throwaway\";
};
")
set(ruleset_bad_symmetry "struct Throwaway : LosingRules {
    static constexpr VariantId kId = VariantId::Throwaway;
    static constexpr std::string_view kName = \"throwaway\";
    static constexpr Stalemate kStalemate = Stalemate::Draw;
    static constexpr Bitboard kBoard = kFourFileSquares;
    static constexpr Bitboard kKingSquares = kFourFileSquares;
};
")
set(group_line "    None,        // identity only\n};")
set(group_plus "    None,        // identity only\n    RankFlip,\n};")

# Replaces `from` by `to` in `text`, failing if `from` is not there (so a
# case cannot pass because its edit silently did nothing).
function(edit text from to out)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "variant.hpp no longer contains:\n${from}\nUpdate variant_compile.cmake.")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Compiles `user`, and the further sources given, against the rules headers
# with variant.hpp replaced by `header` (-Werror=switch, as the libraries
# are built). expect: PASS, or a regular expression the errors must match.
function(check name header expect)
  set(dir "${WORK_DIR}/${name}")
  file(REMOVE_RECURSE "${dir}")
  file(COPY "${SOURCE_DIR}/rules/include/" DESTINATION "${dir}/include")
  file(WRITE "${dir}/include/tbforge/rules/variant.hpp" "${header}")
  set(failed FALSE)
  set(errors "")
  foreach(source IN ITEMS ${user} ${ARGN})
    execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -Werror=switch -I${dir}/include
                            -I${SOURCE_DIR}/index/include -I${SOURCE_DIR}/base/include ${source}
                    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT code EQUAL 0)
      set(failed TRUE)
      string(APPEND errors "${source}:\n${err}")
    endif()
  endforeach()
  if(expect STREQUAL "PASS")
    if(failed)
      message(FATAL_ERROR "${name}: expected to compile, failed:\n${errors}")
    endif()
  elseif(NOT failed)
    message(FATAL_ERROR "${name}: expected a compile error matching '${expect}', compiled")
  elseif(NOT errors MATCHES "${expect}")
    message(FATAL_ERROR "${name}: compile error does not match '${expect}':\n${errors}")
  endif()
  message(STATUS "${name}: as expected")
endfunction()

# The headers as they are.
check(unchanged "${original}" PASS)

# A new id and nothing else: with_variant() has no case for it.
edit("${original}" "${enum_line}" "${enum_plus}" h)
check(id_only "${h}" "Throwaway.*not handled in switch")

# Id, ruleset and case, but no row in AllRulesets.
edit("${original}" "${enum_line}" "${enum_plus}" h)
edit("${h}" "${concept_line}" "${ruleset}${concept_line}" h)
edit("${h}" "${case_line}" "${case_plus}" h)
check(not_listed "${h}" "missing from AllRulesets")

# Listed and dispatched, but the ruleset lacks a constant.
edit("${original}" "${enum_line}" "${enum_plus}" h)
edit("${h}" "${concept_line}" "${ruleset_no_stalemate}${concept_line}" h)
edit("${h}" "${case_line}" "${case_plus}" h)
edit("${h}" "${list_line}" "${list_plus}" h)
check(missing_constant "${h}" "R::kStalemate[^ ]* (is|would be) invalid")  # gcc, clang

# A symmetry group that does not map the ruleset's board onto itself.
edit("${original}" "${enum_line}" "${enum_plus}" h)
edit("${h}" "${concept_line}" "${ruleset_bad_symmetry}${concept_line}" h)
edit("${h}" "${case_line}" "${case_plus}" h)
edit("${h}" "${list_line}" "${list_plus}" h)
check(symmetry_off_board "${h}" "symmetry group maps its board")

# A new symmetry group: every switch over the groups must name it, in
# variant.hpp and then in index/ (the work index supports only some).
edit("${original}" "${group_line}" "${group_plus}" h)
check(new_symmetry_group "${h}" "RankFlip.*not handled in switch")
edit("${h}" "        case SymmetryGroup::None: return true;"
     "        case SymmetryGroup::None: return true;\n        case SymmetryGroup::RankFlip: return true;" h)
edit("${h}" "        case SymmetryGroup::None: return SymmetryGroup::None;"
     "        case SymmetryGroup::None: return SymmetryGroup::None;\n        case SymmetryGroup::RankFlip: return SymmetryGroup::None;" h)
edit("${h}" "        case SymmetryGroup::None: return 1;"
     "        case SymmetryGroup::None: return 1;\n        case SymmetryGroup::RankFlip: return 5;" h)
check(new_symmetry_group_in_index "${h}" "work_index.cpp.*RankFlip.*not handled in switch"
      "${SOURCE_DIR}/index/src/work_index.cpp")

# All four pieces: a fifth variant compiles, rules/ and index/ unchanged.
edit("${original}" "${enum_line}" "${enum_plus}" h)
edit("${h}" "${concept_line}" "${ruleset}${concept_line}" h)
edit("${h}" "${case_line}" "${case_plus}" h)
edit("${h}" "${list_line}" "${list_plus}" h)
file(GLOB sources "${SOURCE_DIR}/rules/src/*.cpp" "${SOURCE_DIR}/index/src/*.cpp")
check(complete "${h}" PASS ${sources})
