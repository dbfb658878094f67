#pragma once
// Rulesets as bundles of compile-time constants (docs/ARCHITECTURE.md section 3). Hot
// loops are templates on a ruleset; the command line picks one at run time
// through with_variant(). Code that holds only a VariantId asks
// variant_traits(id), a table built from the same rulesets, for the property
// it means (royal king? board? symmetries?), never compares ids.
//
// Adding a variant: a VariantId value, its ruleset struct, its row in
// AllRulesets and its case in with_variant(). Leaving out any of them, or a
// constant of the ruleset, fails to compile (tests/rules/variant_compile.cmake
// shows each).

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tbforge/rules/symmetry.hpp"
#include "tbforge/rules/types.hpp"

// Every switch over VariantId or SymmetryGroup in this header names each
// value (no default): a value added without its case is a compile error.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"

namespace tbf {

class Position;

// What a stalemate (side to move has units but no legal move) is worth.
enum class Stalemate {
    SideToMoveWins,  // international antichess
    FewerUnitsWins,  // FICS suicide: fewer units wins, equal counts draw
    JointRule,       // side to move wins with fewer units, otherwise draw
    Draw,            // orthodox chess
};

// The board symmetries a variant's pawnless tables may use (symmetry.hpp
// numbers them). Pawns move up the board, so tables with pawns keep only the
// file mirror of it: table_symmetry().
enum class SymmetryGroup {
    Full,        // all 8 symmetries of the square
    FileMirror,  // identity and a <-> h
    None,        // identity only
};

enum class VariantId : std::uint8_t { Antichess, AntichessFics, AntichessJoint, FourFile };

inline constexpr Bitboard kAllSquares = ~Bitboard{0};
// Files a, c, e and g: the only squares a Four File unit may stand on.
inline constexpr Bitboard kFourFileSquares = 0x5555555555555555ULL;

struct LosingRules {
    static constexpr bool kCapturesCompulsory = true;
    static constexpr bool kRoyalKing = false;
    static constexpr bool kPromoteToKing = true;
    static constexpr bool kPawnsCapture = true;
    static constexpr Bitboard kBoard = kAllSquares;
    static constexpr Bitboard kKingSquares = kAllSquares;
    static constexpr SymmetryGroup kSymmetry = SymmetryGroup::Full;
};

struct Antichess : LosingRules {
    static constexpr VariantId kId = VariantId::Antichess;
    static constexpr std::string_view kName = "antichess";
    static constexpr Stalemate kStalemate = Stalemate::SideToMoveWins;
};

struct AntichessFics : LosingRules {
    static constexpr VariantId kId = VariantId::AntichessFics;
    static constexpr std::string_view kName = "antichess-fics";
    static constexpr Stalemate kStalemate = Stalemate::FewerUnitsWins;
};

struct AntichessJoint : LosingRules {
    static constexpr VariantId kId = VariantId::AntichessJoint;
    static constexpr std::string_view kName = "antichess-joint";
    static constexpr Stalemate kStalemate = Stalemate::JointRule;
};

// Orthodox chess restricted to landing on files a, c, e, g. Pawn captures
// would always land on a forbidden file, so pawns never capture. A king
// steps only along its file, and both start on the e-file. The only board
// symmetry keeping files a, c, e, g is the rank flip, which the index does
// not use: no symmetry.
struct FourFile {
    static constexpr VariantId kId = VariantId::FourFile;
    static constexpr std::string_view kName = "fourfile";
    static constexpr bool kCapturesCompulsory = false;
    static constexpr bool kRoyalKing = true;
    static constexpr bool kPromoteToKing = false;
    static constexpr bool kPawnsCapture = false;
    static constexpr Bitboard kBoard = kFourFileSquares;
    static constexpr Bitboard kKingSquares = file_bb(4);
    static constexpr Stalemate kStalemate = Stalemate::Draw;
    static constexpr SymmetryGroup kSymmetry = SymmetryGroup::None;
};

template <class R>
concept Ruleset = requires {
    { R::kId } -> std::convertible_to<VariantId>;
    { R::kName } -> std::convertible_to<std::string_view>;
    { R::kCapturesCompulsory } -> std::convertible_to<bool>;
    { R::kRoyalKing } -> std::convertible_to<bool>;
    { R::kPromoteToKing } -> std::convertible_to<bool>;
    { R::kPawnsCapture } -> std::convertible_to<bool>;
    { R::kBoard } -> std::convertible_to<Bitboard>;
    { R::kKingSquares } -> std::convertible_to<Bitboard>;
    { R::kStalemate } -> std::convertible_to<Stalemate>;
    { R::kSymmetry } -> std::convertible_to<SymmetryGroup>;
};

// Every ruleset, in VariantId order.
template <Ruleset... Rs>
struct RulesetList {
    static constexpr std::size_t kSize = sizeof...(Rs);
};
using AllRulesets = RulesetList<Antichess, AntichessFics, AntichessJoint, FourFile>;
inline constexpr std::size_t kVariantCount = AllRulesets::kSize;

// A ruleset's constants as a value, for code that holds only a VariantId.
struct VariantTraits {
    VariantId id;
    std::string_view name;
    Bitboard board;         // squares a unit may stand on
    Bitboard king_squares;  // squares a king may stand on (within board)
    bool royal_king;        // one king a side, never captured, never left in check
    bool captures_compulsory;
    bool pawns_capture;    // en passant included
    bool promote_to_king;  // besides Q R B N
    Stalemate stalemate;
    SymmetryGroup symmetry;  // of pawnless tables: table_symmetry()
};

namespace detail {

constexpr Bitboard map_squares(Bitboard b, int symmetry) {
    Bitboard out = 0;
    for (int s = 0; s < 64; ++s) {
        if (b >> s & 1) out |= Bitboard{1} << transform_square(static_cast<Square>(s), symmetry);
    }
    return out;
}

// Does every symmetry of the group map the squares onto themselves?
constexpr bool keeps(SymmetryGroup group, Bitboard squares) {
    switch (group) {
        case SymmetryGroup::Full:
            return map_squares(squares, kTranspose) == squares &&
                   map_squares(squares, kFlipRanks) == squares &&
                   map_squares(squares, kMirrorFiles) == squares;
        case SymmetryGroup::FileMirror: return map_squares(squares, kMirrorFiles) == squares;
        case SymmetryGroup::None: return true;
    }
    return false;
}

}  // namespace detail

template <Ruleset R>
constexpr VariantTraits traits_of() {
    static_assert((R::kKingSquares & ~R::kBoard) == 0, "a ruleset's king squares lie on its board");
    static_assert(
        detail::keeps(R::kSymmetry, R::kBoard) && detail::keeps(R::kSymmetry, R::kKingSquares),
        "a ruleset's symmetry group maps its board and king squares onto themselves");
    return {.id = R::kId,
            .name = R::kName,
            .board = R::kBoard,
            .king_squares = R::kKingSquares,
            .royal_king = R::kRoyalKing,
            .captures_compulsory = R::kCapturesCompulsory,
            .pawns_capture = R::kPawnsCapture,
            .promote_to_king = R::kPromoteToKing,
            .stalemate = R::kStalemate,
            .symmetry = R::kSymmetry};
}

namespace detail {
template <Ruleset... Rs>
constexpr std::array<VariantTraits, sizeof...(Rs)> traits_table(RulesetList<Rs...>) {
    return {traits_of<Rs>()...};
}
}  // namespace detail

// Row i describes VariantId i.
inline constexpr std::array<VariantTraits, kVariantCount> kVariantTraits =
    detail::traits_table(AllRulesets{});

namespace detail {
constexpr bool rows_in_id_order() {
    for (std::size_t i = 0; i < kVariantCount; ++i) {
        if (static_cast<std::size_t>(kVariantTraits[i].id) != i) return false;
        if (kVariantTraits[i].name.empty()) return false;
        for (std::size_t j = 0; j < i; ++j) {
            if (kVariantTraits[j].name == kVariantTraits[i].name) return false;
        }
    }
    return true;
}
}  // namespace detail
static_assert(
    detail::rows_in_id_order(),
    "AllRulesets lists one ruleset per VariantId, in VariantId order, with distinct names");

// Within hot loops, use the ruleset's constants (R::kRoyalKing...) instead.
constexpr const VariantTraits& variant_traits(VariantId id) {
    return kVariantTraits[static_cast<std::size_t>(id)];
}

// The symmetries a table uses: the variant's group, less what pawns break.
constexpr SymmetryGroup table_symmetry(const VariantTraits& traits, bool has_pawns) {
    switch (traits.symmetry) {
        case SymmetryGroup::Full:
            return has_pawns ? SymmetryGroup::FileMirror : SymmetryGroup::Full;
        case SymmetryGroup::FileMirror: return SymmetryGroup::FileMirror;
        case SymmetryGroup::None: return SymmetryGroup::None;
    }
    return SymmetryGroup::None;
}

// The symmetries of a group as a bit set: bit s for symmetry s.
constexpr std::uint8_t symmetry_mask(SymmetryGroup group) {
    switch (group) {
        case SymmetryGroup::Full: return 0xFF;
        case SymmetryGroup::FileMirror: return 1U | 1U << kMirrorFiles;
        case SymmetryGroup::None: return 1;
    }
    return 1;
}

std::optional<VariantId> parse_variant(std::string_view name);
std::string_view variant_name(VariantId id);
// "antichess, antichess-fics, antichess-joint, fourfile" for error messages.
std::string_view variant_list();

namespace detail {
bool royal_king_attacked(VariantId id, const Position& pos);
}  // namespace detail

// Is the side not to move in check, so that pos is not a position? Always
// false without a royal king (decided inline: probes of losing chess pay no
// call for it).
inline bool side_not_to_move_in_check(VariantId id, const Position& pos) {
    return variant_traits(id).royal_king && detail::royal_king_attacked(id, pos);
}

namespace detail {
// One case of with_variant(): the ruleset must be the one of its id and
// listed in AllRulesets.
template <VariantId Id, Ruleset R, class F>
constexpr decltype(auto) call_with(F& f) {
    static_assert(R::kId == Id, "with_variant() calls a ruleset under another id");
    static_assert(static_cast<std::size_t>(Id) < kVariantCount &&
                      kVariantTraits[static_cast<std::size_t>(Id)].name == R::kName,
                  "the ruleset is missing from AllRulesets");
    return f.template operator()<R>();
}
[[noreturn]] void unknown_variant(VariantId id);
}  // namespace detail

// Calls f.template operator()<R>() with the ruleset type for id. A VariantId
// without a case here is a compile error (-Wswitch as an error).
template <class F>
constexpr decltype(auto) with_variant(VariantId id, F&& f) {
    switch (id) {
        case VariantId::Antichess: return detail::call_with<VariantId::Antichess, Antichess>(f);
        case VariantId::AntichessFics:
            return detail::call_with<VariantId::AntichessFics, AntichessFics>(f);
        case VariantId::AntichessJoint:
            return detail::call_with<VariantId::AntichessJoint, AntichessJoint>(f);
        case VariantId::FourFile: return detail::call_with<VariantId::FourFile, FourFile>(f);
    }
    detail::unknown_variant(id);
}

namespace detail {
template <Ruleset... Rs>
constexpr bool dispatch_matches(RulesetList<Rs...>) {
    return ((with_variant(Rs::kId, []<class S>() { return S::kName; }) == Rs::kName) && ...);
}
}  // namespace detail
static_assert(detail::dispatch_matches(AllRulesets{}), "with_variant() calls each listed ruleset");

}  // namespace tbf

#pragma GCC diagnostic pop
