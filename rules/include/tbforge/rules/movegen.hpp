#pragma once
// Legal move generation and game-end detection, templated on the ruleset so
// the hot loops carry no run-time variant checks.

#include <array>
#include <cstddef>
#include <new>
#include <optional>
#include <type_traits>

#include "tbforge/rules/bitboard.hpp"
#include "tbforge/rules/position.hpp"
#include "tbforge/rules/variant.hpp"

namespace tbf {

// Positions hold at most 16 units a side (FEN validation enforces it), which
// bounds the move count well below this capacity.
class MoveList {
public:
    static constexpr std::size_t kCapacity = 512;

    MoveList() {}  // storage left uninitialised: a list is built per position in hot loops

    void push(Move m) { new (data() + size_++) Move(m); }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    void clear() { size_ = 0; }
    void resize(std::size_t n) { size_ = n; }
    Move operator[](std::size_t i) const { return data()[i]; }
    Move& operator[](std::size_t i) { return data()[i]; }
    const Move* begin() const { return data(); }
    const Move* end() const { return data() + size_; }
    Move* begin() { return data(); }
    Move* end() { return data() + size_; }

private:
    static_assert(std::is_trivially_copyable_v<Move> && std::is_trivially_destructible_v<Move>);
    Move* data() { return std::launder(reinterpret_cast<Move*>(storage_)); }
    const Move* data() const { return std::launder(reinterpret_cast<const Move*>(storage_)); }

    alignas(Move) std::byte storage_[kCapacity * sizeof(Move)];
    std::size_t size_ = 0;
};

inline constexpr int kMaxUnitsPerSide = 16;

// True if a unit of colour `by` attacks square s (pawns only where the
// ruleset lets pawns capture).
template <Ruleset R>
bool is_attacked(const Position& pos, Square s, Color by) {
    const Bitboard occ = pos.occupied();
    const Bitboard them = pos.units(by);
    if constexpr (R::kPawnsCapture) {
        if (pawn_attacks(~by, s) & them & pos.units(UnitType::Pawn)) return true;
    }
    if (knight_attacks(s) & them & pos.units(UnitType::Knight)) return true;
    if (king_attacks(s) & them & pos.units(UnitType::King)) return true;
    const Bitboard queens = pos.units(UnitType::Queen);
    if (rook_attacks(s, occ) & them & (pos.units(UnitType::Rook) | queens)) return true;
    if (bishop_attacks(s, occ) & them & (pos.units(UnitType::Bishop) | queens)) return true;
    return false;
}

// Is the king of colour c attacked? Only meaningful for royal-king rulesets.
template <Ruleset R>
bool king_attacked(const Position& pos, Color c) {
    const Bitboard kings = pos.units(c, UnitType::King);
    return kings != 0 && is_attacked<R>(pos, lsb(kings), ~c);
}

template <Ruleset R>
bool in_check(const Position& pos) {
    if constexpr (R::kRoyalKing) {
        return king_attacked<R>(pos, pos.side_to_move());
    } else {
        return false;
    }
}

namespace detail {

template <Ruleset R>
void push_pawn_move(MoveList& list, Square from, Square to) {
    const int last_rank = 7;
    const bool promotes = rank_of(to) == last_rank || rank_of(to) == 0;
    if (!promotes) {
        list.push(Move(from, to));
        return;
    }
    list.push(Move(from, to, UnitType::Queen));
    list.push(Move(from, to, UnitType::Rook));
    list.push(Move(from, to, UnitType::Bishop));
    list.push(Move(from, to, UnitType::Knight));
    if constexpr (R::kPromoteToKing) list.push(Move(from, to, UnitType::King));
}

// Moves of units other than pawns onto `targets`.
template <Ruleset R>
void piece_moves(const Position& pos, Bitboard targets, MoveList& list) {
    const Color us = pos.side_to_move();
    const Bitboard occ = pos.occupied();
    Bitboard knights = pos.units(us, UnitType::Knight);
    while (knights) {
        const Square from = pop_lsb(knights);
        Bitboard to = knight_attacks(from) & targets;
        while (to) list.push(Move(from, pop_lsb(to)));
    }
    Bitboard diagonal = pos.units(us, UnitType::Bishop) | pos.units(us, UnitType::Queen);
    while (diagonal) {
        const Square from = pop_lsb(diagonal);
        Bitboard to = bishop_attacks(from, occ) & targets;
        while (to) list.push(Move(from, pop_lsb(to)));
    }
    Bitboard straight = pos.units(us, UnitType::Rook) | pos.units(us, UnitType::Queen);
    while (straight) {
        const Square from = pop_lsb(straight);
        Bitboard to = rook_attacks(from, occ) & targets;
        while (to) list.push(Move(from, pop_lsb(to)));
    }
    Bitboard kings = pos.units(us, UnitType::King);
    while (kings) {
        const Square from = pop_lsb(kings);
        Bitboard to = king_attacks(from) & targets;
        while (to) list.push(Move(from, pop_lsb(to)));
    }
}

template <Ruleset R>
void capture_moves(const Position& pos, MoveList& list) {
    const Color us = pos.side_to_move();
    const Bitboard targets = pos.units(~us) & R::kBoard;
    piece_moves<R>(pos, targets, list);
    if constexpr (R::kPawnsCapture) {
        Bitboard pawns = pos.units(us, UnitType::Pawn);
        const Square ep = pos.ep_square();
        const Bitboard ep_bb = ep == kNoSquare ? 0 : bit(ep);
        while (pawns) {
            const Square from = pop_lsb(pawns);
            Bitboard to = pawn_attacks(us, from) & (targets | ep_bb);
            while (to) push_pawn_move<R>(list, from, pop_lsb(to));
        }
    }
}

template <Ruleset R>
void quiet_moves(const Position& pos, MoveList& list) {
    const Color us = pos.side_to_move();
    const Bitboard empty = ~pos.occupied() & R::kBoard;
    piece_moves<R>(pos, empty, list);
    Bitboard pawns = pos.units(us, UnitType::Pawn);
    const int forward = us == Color::White ? 8 : -8;
    const int start_rank = us == Color::White ? 1 : 6;
    while (pawns) {
        const Square from = pop_lsb(pawns);
        const auto one = static_cast<Square>(from + forward);
        if (!(empty & bit(one))) continue;
        push_pawn_move<R>(list, from, one);
        if (rank_of(from) == start_rank) {
            const auto two = static_cast<Square>(one + forward);
            if (empty & bit(two)) list.push(Move(from, two));
        }
    }
}

}  // namespace detail

// All legal moves. In losing chess, a position where either side has no units
// is over and has none.
template <Ruleset R>
void generate_legal(const Position& pos, MoveList& list) {
    list.clear();
    const Color us = pos.side_to_move();
    if constexpr (R::kCapturesCompulsory) {
        if (pos.units(us) == 0 || pos.units(~us) == 0) return;
        detail::capture_moves<R>(pos, list);
        if (list.empty()) detail::quiet_moves<R>(pos, list);
    } else {
        detail::capture_moves<R>(pos, list);
        detail::quiet_moves<R>(pos, list);
    }
    if constexpr (R::kRoyalKing) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (!king_attacked<R>(pos.after(list[i]), us)) list[kept++] = list[i];
        }
        list.resize(kept);
    }
}

template <Ruleset R>
bool has_legal_move(const Position& pos) {
    MoveList list;
    generate_legal<R>(pos, list);
    return !list.empty();
}

// What a stalemate is worth to the side to move under ruleset R.
template <Ruleset R>
Wdl stalemate_value(const Position& pos) {
    const int mine = pos.unit_count(pos.side_to_move());
    const int theirs = pos.unit_count(~pos.side_to_move());
    switch (R::kStalemate) {
        case Stalemate::SideToMoveWins: return Wdl::Win;
        case Stalemate::FewerUnitsWins:
            return mine < theirs ? Wdl::Win : (mine == theirs ? Wdl::Draw : Wdl::Loss);
        case Stalemate::JointRule: return mine < theirs ? Wdl::Win : Wdl::Draw;
        case Stalemate::Draw: break;
    }
    return Wdl::Draw;
}

// The value of a terminal position for the side to move, given whether it has
// a legal move; nullopt when the game goes on.
template <Ruleset R>
std::optional<Wdl> terminal_value(const Position& pos, bool has_move) {
    if constexpr (R::kCapturesCompulsory) {
        if (pos.units(pos.side_to_move()) == 0) return Wdl::Win;
        if (pos.units(~pos.side_to_move()) == 0) return Wdl::Loss;
    }
    if (has_move) return std::nullopt;
    if constexpr (R::kRoyalKing) {
        if (in_check<R>(pos)) return Wdl::Loss;
    }
    return stalemate_value<R>(pos);
}

template <Ruleset R>
std::optional<Wdl> terminal_value(const Position& pos) {
    return terminal_value<R>(pos, has_legal_move<R>(pos));
}

}  // namespace tbf
