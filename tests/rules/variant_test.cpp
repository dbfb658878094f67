#include "tbforge/rules/variant.hpp"

#include <doctest/doctest.h>

#include <string>
#include <type_traits>

#include "tbforge/rules/movegen.hpp"
#include "tbforge/rules/uci.hpp"

using namespace tbf;

namespace {

// The variants as the rules describe them, written out here rather than read
// from the rulesets, so that a changed constant shows.
struct Expected {
    std::string_view name;
    Bitboard board;
    Bitboard king_squares;
    bool royal_king;
    bool captures_compulsory;
    bool pawns_capture;
    bool promote_to_king;
    Stalemate stalemate;
    SymmetryGroup symmetry;
};

constexpr Bitboard kFilesACEG = file_bb(0) | file_bb(2) | file_bb(4) | file_bb(6);

Expected expected(VariantId id) {
    switch (id) {
        case VariantId::Antichess:
            return {"antichess",
                    kAllSquares,
                    kAllSquares,
                    false,
                    true,
                    true,
                    true,
                    Stalemate::SideToMoveWins,
                    SymmetryGroup::Full};
        case VariantId::AntichessFics:
            return {
                "antichess-fics",          kAllSquares,        kAllSquares, false, true, true, true,
                Stalemate::FewerUnitsWins, SymmetryGroup::Full};
        case VariantId::AntichessJoint:
            return {"antichess-joint",    kAllSquares,        kAllSquares, false, true, true, true,
                    Stalemate::JointRule, SymmetryGroup::Full};
        case VariantId::FourFile:
            return {"fourfile", kFilesACEG,      file_bb(4),         true, false, false,
                    false,      Stalemate::Draw, SymmetryGroup::None};
    }
    FAIL("no expectation for variant " << static_cast<int>(id));
    return {};
}

Position place(std::initializer_list<std::pair<const char*, Unit>> units, Color side_to_move) {
    Position pos;
    for (const auto& [square, unit] : units)
        pos.put(make_square(square[0] - 'a', square[1] - '1'), unit);
    pos.set_side_to_move(side_to_move);
    return pos;
}

template <Ruleset R>
bool generates(const Position& pos, const std::string& uci) {
    MoveList list;
    generate_legal<R>(pos, list);
    for (Move m : list) {
        if (to_uci(m) == uci) return true;
    }
    return false;
}

constexpr Unit kWK = make_unit(Color::White, UnitType::King);
constexpr Unit kBK = make_unit(Color::Black, UnitType::King);
constexpr Unit kWR = make_unit(Color::White, UnitType::Rook);
constexpr Unit kBR = make_unit(Color::Black, UnitType::Rook);
constexpr Unit kWN = make_unit(Color::White, UnitType::Knight);
constexpr Unit kBN = make_unit(Color::Black, UnitType::Knight);
constexpr Unit kWP = make_unit(Color::White, UnitType::Pawn);

}  // namespace

TEST_CASE("the traits table has one row per variant, in id order") {
    CHECK(kVariantCount == 4);
    for (std::size_t i = 0; i < kVariantCount; ++i) {
        CHECK(static_cast<std::size_t>(kVariantTraits[i].id) == i);
    }
    CHECK(variant_list() == "antichess, antichess-fics, antichess-joint, fourfile");
    for (const VariantTraits& t : kVariantTraits) {
        CHECK(parse_variant(t.name) == t.id);
        CHECK(variant_name(t.id) == t.name);
    }
    CHECK_FALSE(parse_variant("chess").has_value());
    CHECK_FALSE(parse_variant("").has_value());
    CHECK_FALSE(parse_variant("Antichess").has_value());
}

TEST_CASE_TEMPLATE("a variant's traits are its ruleset's constants and what its rules say", R,
                   Antichess, AntichessFics, AntichessJoint, FourFile) {
    const VariantTraits& t = variant_traits(R::kId);
    const Expected e = expected(R::kId);
    CHECK(t.id == R::kId);
    CHECK(t.name == e.name);
    CHECK(t.board == e.board);
    CHECK(t.king_squares == e.king_squares);
    CHECK(t.royal_king == e.royal_king);
    CHECK(t.captures_compulsory == e.captures_compulsory);
    CHECK(t.pawns_capture == e.pawns_capture);
    CHECK(t.promote_to_king == e.promote_to_king);
    CHECK(t.stalemate == e.stalemate);
    CHECK(t.symmetry == e.symmetry);

    // The row is traits_of<R>(), and with_variant() reaches R from its id.
    constexpr VariantTraits direct = traits_of<R>();
    CHECK(direct.name == t.name);
    CHECK(direct.board == t.board);
    CHECK(direct.symmetry == t.symmetry);
    CHECK(with_variant(R::kId, []<class S>() { return std::is_same_v<S, R>; }));
}

TEST_CASE_TEMPLATE("the move generator follows the traits", R, Antichess, AntichessFics,
                   AntichessJoint, FourFile) {
    const VariantTraits& t = variant_traits(R::kId);

    // A pawn on the seventh rank promotes to a king only where allowed.
    const Position promote = place({{"a7", kWP}, {"e1", kWK}, {"e8", kBK}}, Color::White);
    CHECK(generates<R>(promote, "a7a8q"));
    CHECK(generates<R>(promote, "a7a8k") == t.promote_to_king);

    // Ra1xa3 is a capture; the king and rook have quiet moves too.
    const Position capture =
        place({{"a1", kWR}, {"e1", kWK}, {"a3", kBR}, {"e8", kBK}}, Color::White);
    REQUIRE(generates<R>(capture, "a1a3"));
    CHECK(generates<R>(capture, "e1e2") == !t.captures_compulsory);

    // Ke1-e2 walks into the rook on a2: legal only without a royal king.
    const Position into_check = place({{"e1", kWK}, {"a2", kBR}, {"e8", kBK}}, Color::White);
    CHECK(generates<R>(into_check, "e1e2") == !t.royal_king);
    CHECK(side_not_to_move_in_check(R::kId, place({{"e1", kWK}, {"e4", kWR}, {"e8", kBK}},
                                                  Color::White)) == t.royal_king);
    CHECK_FALSE(side_not_to_move_in_check(R::kId, into_check));

    // A pawn attacks diagonally only where pawns capture.
    const Position pawn = place({{"c2", kWP}, {"e1", kWK}, {"e8", kBK}}, Color::White);
    CHECK(is_attacked<R>(pawn, make_square(3, 2), Color::White) == t.pawns_capture);

    // Every move lands on the board; a king on its squares stays there.
    const Position start =
        place({{"a1", kWR}, {"c1", kWN}, {"e1", kWK}, {"e8", kBK}, {"g8", kBN}}, Color::White);
    MoveList list;
    generate_legal<R>(start, list);
    CHECK(list.size() > 0);
    for (Move m : list) CHECK((bit(m.to()) & t.board) != 0);
    for (Bitboard b = t.king_squares; b;) {
        const Square s = pop_lsb(b);
        CHECK((king_attacks(s) & t.board & ~t.king_squares) == 0);
    }

    // Stalemate (no move, not in check) with fewer, as many and more units.
    const Position fewer = place({{"e1", kWK}, {"e8", kBK}, {"a8", kBN}}, Color::White);
    const Position equal = place({{"e1", kWK}, {"e8", kBK}}, Color::White);
    const Position more = place({{"e1", kWK}, {"a1", kWN}, {"e8", kBK}}, Color::White);
    const auto value = [](const Position& pos) { return terminal_value<R>(pos, false); };
    switch (t.stalemate) {
        case Stalemate::SideToMoveWins:
            CHECK(value(fewer) == Wdl::Win);
            CHECK(value(equal) == Wdl::Win);
            CHECK(value(more) == Wdl::Win);
            break;
        case Stalemate::FewerUnitsWins:
            CHECK(value(fewer) == Wdl::Win);
            CHECK(value(equal) == Wdl::Draw);
            CHECK(value(more) == Wdl::Loss);
            break;
        case Stalemate::JointRule:
            CHECK(value(fewer) == Wdl::Win);
            CHECK(value(equal) == Wdl::Draw);
            CHECK(value(more) == Wdl::Draw);
            break;
        case Stalemate::Draw:
            CHECK(value(fewer) == Wdl::Draw);
            CHECK(value(equal) == Wdl::Draw);
            CHECK(value(more) == Wdl::Draw);
            break;
    }
}

TEST_CASE("symmetry groups: members, and what pawns leave of them") {
    CHECK(symmetry_mask(SymmetryGroup::Full) == 0xFF);
    CHECK(symmetry_mask(SymmetryGroup::FileMirror) == (1U | 1U << kMirrorFiles));
    CHECK(symmetry_mask(SymmetryGroup::None) == 1);
    VariantTraits t = variant_traits(VariantId::Antichess);
    CHECK(table_symmetry(t, false) == SymmetryGroup::Full);
    CHECK(table_symmetry(t, true) == SymmetryGroup::FileMirror);
    t.symmetry = SymmetryGroup::FileMirror;
    CHECK(table_symmetry(t, false) == SymmetryGroup::FileMirror);
    CHECK(table_symmetry(t, true) == SymmetryGroup::FileMirror);
    t = variant_traits(VariantId::FourFile);
    CHECK(table_symmetry(t, false) == SymmetryGroup::None);
    CHECK(table_symmetry(t, true) == SymmetryGroup::None);

    // Each variant's group maps its board and king squares onto themselves.
    for (const VariantTraits& v : kVariantTraits) {
        for (int sym = 0; sym < kSymmetryCount; ++sym) {
            if (!(symmetry_mask(v.symmetry) >> sym & 1)) continue;
            Bitboard board = 0;
            Bitboard kings = 0;
            for (int s = 0; s < 64; ++s) {
                const Bitboard image = bit(transform_square(static_cast<Square>(s), sym));
                if (v.board & bit(static_cast<Square>(s))) board |= image;
                if (v.king_squares & bit(static_cast<Square>(s))) kings |= image;
            }
            CHECK(board == v.board);
            CHECK(kings == v.king_squares);
        }
    }
}
