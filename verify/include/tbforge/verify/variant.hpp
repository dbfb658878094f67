#pragma once
// The four rule sets of docs/ARCHITECTURE.md section 3 as plain data. The verifier picks
// its rules at run time from this table: one obvious code path is worth more
// here than the speed of a template per variant.

#include <optional>
#include <string_view>

namespace tbf::verify {

enum class Variant : unsigned char { Antichess, AntichessFics, AntichessJoint, FourFile };

inline constexpr Variant kAllVariants[] = {Variant::Antichess, Variant::AntichessFics,
                                           Variant::AntichessJoint, Variant::FourFile};

// Who wins when the side to move has units but no legal move.
enum class StalemateRule : unsigned char {
    SideToMoveWins,      // antichess (international rules)
    FewerUnitsWins,      // antichess-fics: fewer units wins, equal counts draw
    FewerUnitsWinsOnly,  // antichess-joint: fewer units wins, otherwise draw
    Draw,                // fourfile (checkmate is handled separately)
};

struct Ruleset {
    bool captures_compulsory;  // antichess: any capture makes only captures legal
    bool royal_king;           // one king per side that may not be left attacked
    bool four_files;           // only files a, c, e, g can be landed on
    bool pawns_capture;        // Four File pawns only push
    bool en_passant;
    bool promote_to_king;
    StalemateRule stalemate;
};

constexpr Ruleset ruleset(Variant v) {
    switch (v) {
        case Variant::Antichess:
            return {true, false, false, true, true, true, StalemateRule::SideToMoveWins};
        case Variant::AntichessFics:
            return {true, false, false, true, true, true, StalemateRule::FewerUnitsWins};
        case Variant::AntichessJoint:
            return {true, false, false, true, true, true, StalemateRule::FewerUnitsWinsOnly};
        case Variant::FourFile: break;
    }
    return {false, true, true, false, false, false, StalemateRule::Draw};
}

// "antichess", "antichess-fics", "antichess-joint", "fourfile".
std::string_view variant_name(Variant v);
std::optional<Variant> variant_from_name(std::string_view name);

}  // namespace tbf::verify
