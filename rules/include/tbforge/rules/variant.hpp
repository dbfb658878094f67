#pragma once
// Rulesets as bundles of compile-time constants (DESIGN.md section 3). Hot
// loops are templates on a ruleset; the command line picks one at run time
// through with_variant().

#include <concepts>
#include <optional>
#include <string_view>

#include "tbforge/rules/types.hpp"

namespace tbf {

// What a stalemate (side to move has units but no legal move) is worth.
enum class Stalemate {
    SideToMoveWins,  // international antichess
    FewerUnitsWins,  // FICS suicide: fewer units wins, equal counts draw
    JointRule,       // side to move wins with fewer units, otherwise draw
    Draw,            // orthodox chess
};

enum class VariantId { Antichess, AntichessFics, AntichessJoint, FourFile };

inline constexpr Bitboard kAllSquares = ~Bitboard{0};
// Files a, c, e and g: the only squares a Four File unit may stand on.
inline constexpr Bitboard kFourFileSquares = 0x5555555555555555ULL;

struct LosingRules {
    static constexpr bool kCapturesCompulsory = true;
    static constexpr bool kRoyalKing = false;
    static constexpr bool kPromoteToKing = true;
    static constexpr bool kPawnsCapture = true;
    static constexpr Bitboard kBoard = kAllSquares;
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
// would always land on a forbidden file, so pawns never capture.
struct FourFile {
    static constexpr VariantId kId = VariantId::FourFile;
    static constexpr std::string_view kName = "fourfile";
    static constexpr bool kCapturesCompulsory = false;
    static constexpr bool kRoyalKing = true;
    static constexpr bool kPromoteToKing = false;
    static constexpr bool kPawnsCapture = false;
    static constexpr Bitboard kBoard = kFourFileSquares;
    static constexpr Stalemate kStalemate = Stalemate::Draw;
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
    { R::kStalemate } -> std::convertible_to<Stalemate>;
};

std::optional<VariantId> parse_variant(std::string_view name);
std::string_view variant_name(VariantId id);
// "antichess, antichess-fics, antichess-joint, fourfile" for error messages.
std::string_view variant_list();

// Calls f.template operator()<R>() with the ruleset type for id.
template <class F>
decltype(auto) with_variant(VariantId id, F&& f) {
    switch (id) {
        case VariantId::Antichess: return f.template operator()<Antichess>();
        case VariantId::AntichessFics: return f.template operator()<AntichessFics>();
        case VariantId::AntichessJoint: return f.template operator()<AntichessJoint>();
        case VariantId::FourFile: break;
    }
    return f.template operator()<FourFile>();
}

constexpr bool is_losing(VariantId id) { return id != VariantId::FourFile; }
constexpr Bitboard board_squares(VariantId id) {
    return id == VariantId::FourFile ? kFourFileSquares : kAllSquares;
}

}  // namespace tbf
