// Move generation, make/unmake and attacks, written straight from
// docs/ARCHITECTURE.md section 3: walk each unit's precomputed step and ray
// lists, then apply the variant's filters (compulsory captures, or
// royal-king legality). No bitboards on purpose.

#include "movegen.hpp"

#include <cstdlib>

namespace tbf::verify {
namespace {

int color_index(Color c) { return c == Color::White ? 0 : 1; }

// Targets of a leaper, or the squares of a ray in walking order, from one square.
struct SquareList {
    std::int8_t count = 0;
    std::array<std::int8_t, 8> squares{};
};

struct Step {
    int file;
    int rank;
};

constexpr Step kKnightSteps[] = {{1, 2},   {2, 1},   {2, -1}, {1, -2},
                                 {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
constexpr Step kKingSteps[] = {{1, 0},  {1, 1},   {0, 1},  {-1, 1},
                               {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
// Rook directions first (0-3), then bishop directions (4-7).
constexpr Step kRaySteps[] = {{1, 0},  {0, 1},   {-1, 0}, {0, -1},
                              {1, 1},  {-1, 1},  {-1, -1}, {1, -1}};

constexpr bool on_board(int file, int rank) {
    return file >= 0 && file < 8 && rank >= 0 && rank < 8;
}

// The step and ray lists of every square, computed once.
struct Geometry {
    std::array<SquareList, 64> knight{};
    std::array<SquareList, 64> king{};
    std::array<std::array<SquareList, 8>, 64> ray{};

    constexpr Geometry() {
        for (int sq = 0; sq < 64; ++sq) {
            for (const Step& s : kKnightSteps) add(knight[sq], sq, s);
            for (const Step& s : kKingSteps) add(king[sq], sq, s);
            for (int d = 0; d < 8; ++d) {
                int file = file_of(sq) + kRaySteps[d].file;
                int rank = rank_of(sq) + kRaySteps[d].rank;
                for (; on_board(file, rank); file += kRaySteps[d].file, rank += kRaySteps[d].rank) {
                    SquareList& r = ray[sq][d];
                    r.squares[r.count++] = static_cast<std::int8_t>(square_at(file, rank));
                }
            }
        }
    }

private:
    static constexpr void add(SquareList& list, int sq, const Step& s) {
        const int file = file_of(sq) + s.file;
        const int rank = rank_of(sq) + s.rank;
        if (on_board(file, rank)) list.squares[list.count++] = static_cast<std::int8_t>(square_at(file, rank));
    }
};

constexpr Geometry kGeometry{};

constexpr Piece kLosingPromotions[] = {Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight,
                                       Piece::King};
constexpr Piece kChessPromotions[] = {Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight};

Move make_move(int from, int to, Piece promotion = Piece::None) {
    return Move{static_cast<std::int8_t>(from), static_cast<std::int8_t>(to), promotion};
}

// Four File: a move may end only on files a, c, e, g (even squares); the
// b, d, f, h squares are always empty and are passed over.
bool landable(const Ruleset& rules, int square) { return !rules.four_files || (square & 1) == 0; }

// Pseudo-legal moves of the side to move: captures into one list, quiet
// moves into the other.
class Generator {
public:
    Generator(const Board& board, detail::MoveList& captures, detail::MoveList& quiet)
        : board_(board),
          captures_(captures),
          quiet_(quiet),
          rules_(ruleset(board.variant())),
          us_(board.side_to_move()) {}

    void run() {
        const std::int8_t* squares = detail::BoardEditor::squares(board_, us_);
        const int count = board_.unit_count(us_);
        for (int i = 0; i < count; ++i) {
            const int from = squares[i];
            switch (board_.unit_on(from).piece) {
                case Piece::Pawn: pawn(from); break;
                case Piece::Knight: leaper(from, kGeometry.knight[static_cast<std::size_t>(from)]); break;
                case Piece::King: leaper(from, kGeometry.king[static_cast<std::size_t>(from)]); break;
                case Piece::Bishop: slider(from, 4, 8); break;
                case Piece::Rook: slider(from, 0, 4); break;
                case Piece::Queen: slider(from, 0, 8); break;
                case Piece::None: break;
            }
        }
    }

private:
    void target(int from, int to) {
        const Unit target = board_.unit_on(to);
        if (target.empty()) {
            quiet_.push(make_move(from, to));
        } else if (target.color != us_) {
            captures_.push(make_move(from, to));
        }
    }

    void leaper(int from, const SquareList& targets) {
        for (int i = 0; i < targets.count; ++i) {
            const int to = targets.squares[static_cast<std::size_t>(i)];
            if (landable(rules_, to)) target(from, to);
        }
    }

    void slider(int from, int first_direction, int end_direction) {
        const auto& rays = kGeometry.ray[static_cast<std::size_t>(from)];
        for (int d = first_direction; d < end_direction; ++d) {
            const SquareList& ray = rays[static_cast<std::size_t>(d)];
            for (int i = 0; i < ray.count; ++i) {
                const int to = ray.squares[static_cast<std::size_t>(i)];
                const Unit u = board_.unit_on(to);
                if (u.empty()) {
                    if (landable(rules_, to)) quiet_.push(make_move(from, to));
                    continue;
                }
                if (u.color != us_) captures_.push(make_move(from, to));
                break;
            }
        }
    }

    void pawn_move(detail::MoveList& list, int from, int to) {
        const int last_rank = us_ == Color::White ? 7 : 0;
        if (rank_of(to) != last_rank) {
            list.push(make_move(from, to));
        } else if (rules_.promote_to_king) {
            for (Piece p : kLosingPromotions) list.push(make_move(from, to, p));
        } else {
            for (Piece p : kChessPromotions) list.push(make_move(from, to, p));
        }
    }

    void pawn(int from) {
        const int forward = us_ == Color::White ? 8 : -8;
        const int start_rank = us_ == Color::White ? 1 : 6;
        // Pushes: one square, or two from the start rank over an empty square.
        const int one = from + forward;
        if (board_.unit_on(one).empty()) {
            pawn_move(quiet_, from, one);
            if (rank_of(from) == start_rank && board_.unit_on(one + forward).empty()) {
                quiet_.push(make_move(from, one + forward));
            }
        }
        if (!rules_.pawns_capture) return;
        const int file = file_of(from);
        for (int side : {-1, 1}) {
            if (file + side < 0 || file + side > 7) continue;
            const int to = one + side;
            const Unit target = board_.unit_on(to);
            if (!target.empty() && target.color != us_) {
                pawn_move(captures_, from, to);
            } else if (target.empty() && rules_.en_passant && to == board_.ep_square()) {
                captures_.push(make_move(from, to));
            }
        }
    }

    const Board& board_;
    detail::MoveList& captures_;
    detail::MoveList& quiet_;
    Ruleset rules_;
    Color us_;
};

// Pseudo-legal moves with the compulsory-capture rule applied; true when the
// variant's kings are royal and the moves still need the check test.
bool pseudo_legal(const Board& board, detail::MoveList& moves) {
    moves.clear();
    // A side without units has won: nobody moves any more.
    if (board.unit_count(Color::White) == 0 || board.unit_count(Color::Black) == 0) return false;
    detail::MoveList quiet;
    Generator(board, moves, quiet).run();
    const Ruleset rules = ruleset(board.variant());
    // Under compulsory captures any capture leaves only the captures.
    if (!rules.captures_compulsory || moves.empty()) {
        for (const Move& m : quiet) moves.push(m);
    }
    return rules.royal_king;
}

}  // namespace

// Attacks use the same lists, walked outwards from the attacked square: a
// unit that could move to it along a step, or slide to it, attacks it.
bool Board::is_attacked(int square, Color by) const {
    const auto holds = [&](const SquareList& from, Piece piece) {
        for (int i = 0; i < from.count; ++i) {
            if (unit_on(from.squares[static_cast<std::size_t>(i)]) == Unit{piece, by}) return true;
        }
        return false;
    };
    const auto sq = static_cast<std::size_t>(square);
    if (holds(kGeometry.knight[sq], Piece::Knight) || holds(kGeometry.king[sq], Piece::King)) {
        return true;
    }
    for (int d = 0; d < 8; ++d) {
        const Piece slider = d < 4 ? Piece::Rook : Piece::Bishop;
        const SquareList& ray = kGeometry.ray[sq][static_cast<std::size_t>(d)];
        for (int i = 0; i < ray.count; ++i) {
            const Unit u = unit_on(ray.squares[static_cast<std::size_t>(i)]);
            if (u.empty()) continue;
            if (u.color == by && (u.piece == slider || u.piece == Piece::Queen)) return true;
            break;
        }
    }
    if (rules_.pawns_capture) {
        // A pawn attacks diagonally forward, so an attacker stands one rank behind.
        const int behind = by == Color::White ? -1 : 1;
        for (int side : {-1, 1}) {
            const int file = file_of(square) + side;
            const int rank = rank_of(square) + behind;
            if (on_board(file, rank) && unit_on(square_at(file, rank)) == Unit{Piece::Pawn, by}) {
                return true;
            }
        }
    }
    return false;
}

bool Board::in_check(Color c) const {
    if (!rules_.royal_king) return false;
    const auto& list = squares_[static_cast<std::size_t>(color_index(c))];
    for (int i = 0; i < counts_[static_cast<std::size_t>(color_index(c))]; ++i) {
        const int sq = list[static_cast<std::size_t>(i)];
        if (unit_on(sq).piece == Piece::King) return is_attacked(sq, opposite(c));
    }
    return false;
}

void Board::put(int square, Unit u) {
    const auto c = static_cast<std::size_t>(color_index(u.color));
    cells_[static_cast<std::size_t>(square)] = u;
    place_[static_cast<std::size_t>(square)] = static_cast<std::int8_t>(counts_[c]);
    squares_[c][static_cast<std::size_t>(counts_[c]++)] = static_cast<std::int8_t>(square);
}

namespace detail {

void BoardEditor::clear(Board& board, Variant variant, Color side) {
    // Only the occupied squares need emptying: cheaper than a new board.
    for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < board.counts_[static_cast<std::size_t>(c)]; ++i) {
            board.cells_[static_cast<std::size_t>(
                board.squares_[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)])] = Unit{};
        }
        board.counts_[static_cast<std::size_t>(c)] = 0;
    }
    board.variant_ = variant;
    board.rules_ = ruleset(variant);
    board.side_ = side;
    board.ep_ = kNoSquare;
}

bool BoardEditor::gives_en_passant(const Board& b, const Move& m) {
    if (!b.rules_.en_passant || std::abs(m.to - m.from) != 16) return false;
    const Unit mover = b.cells_[static_cast<std::size_t>(m.from)];
    if (mover.piece != Piece::Pawn) return false;
    const Unit enemy_pawn{Piece::Pawn, opposite(mover.color)};
    const int file = file_of(m.to);
    const auto to = static_cast<std::size_t>(m.to);
    return (file > 0 && b.cells_[to - 1] == enemy_pawn) ||
           (file < 7 && b.cells_[to + 1] == enemy_pawn);
}

Undo BoardEditor::make(Board& b, const Move& m) {
    const bool en_passant_right = gives_en_passant(b, m);
    Undo undo;
    undo.ep = static_cast<std::int8_t>(b.ep_);
    const auto from = static_cast<std::size_t>(m.from);
    const auto to = static_cast<std::size_t>(m.to);
    const Unit mover = b.cells_[from];
    const auto us = static_cast<std::size_t>(color_index(mover.color));
    const std::size_t them = 1 - us;

    int captured = -1;
    if (!b.cells_[to].empty()) {
        captured = m.to;
    } else if (mover.piece == Piece::Pawn && m.to == b.ep_ && file_of(m.from) != file_of(m.to)) {
        // En passant: the captured pawn stands beside the mover, not on the target.
        captured = square_at(file_of(m.to), rank_of(m.from));
    }
    if (captured >= 0) {
        const auto c = static_cast<std::size_t>(captured);
        undo.captured = b.cells_[c];
        undo.captured_square = static_cast<std::int8_t>(captured);
        // The last square of the list takes the captured unit's place.
        const int last = b.squares_[them][static_cast<std::size_t>(--b.counts_[them])];
        b.squares_[them][static_cast<std::size_t>(b.place_[c])] = static_cast<std::int8_t>(last);
        b.place_[static_cast<std::size_t>(last)] = b.place_[c];
        b.cells_[c] = Unit{};
    }
    b.squares_[us][static_cast<std::size_t>(b.place_[from])] = m.to;
    b.place_[to] = b.place_[from];
    b.cells_[to] = m.promotion == Piece::None ? mover : Unit{m.promotion, mover.color};
    b.cells_[from] = Unit{};
    b.side_ = opposite(b.side_);
    b.ep_ = kNoSquare;

    // A double push sets the en-passant square only when an enemy pawn can
    // use it, so equal positions have equal boards and FENs.
    if (en_passant_right) b.ep_ = (m.from + m.to) / 2;
    return undo;
}

void BoardEditor::unmake(Board& b, const Move& m, const Undo& undo) {
    const auto from = static_cast<std::size_t>(m.from);
    const auto to = static_cast<std::size_t>(m.to);
    Unit mover = b.cells_[to];
    if (m.promotion != Piece::None) mover.piece = Piece::Pawn;
    const auto us = static_cast<std::size_t>(color_index(mover.color));
    b.squares_[us][static_cast<std::size_t>(b.place_[to])] = m.from;
    b.place_[from] = b.place_[to];
    b.cells_[from] = mover;
    b.cells_[to] = Unit{};
    if (undo.captured_square >= 0) b.put(undo.captured_square, undo.captured);
    b.side_ = opposite(b.side_);
    b.ep_ = undo.ep;
}

void BoardEditor::generate_legal(Board& board, MoveList& moves) {
    if (!pseudo_legal(board, moves)) return;
    // Royal kings: drop the moves that leave one's own king attacked.
    const Color us = board.side_to_move();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < moves.size(); ++i) {
        const Move m = moves[i];
        const Undo undo = make(board, m);
        const bool legal = !board.in_check(us);
        unmake(board, m, undo);
        if (legal) moves[kept++] = m;
    }
    moves.truncate(kept);
}

void generate_legal(const Board& board, MoveList& moves) {
    if (!ruleset(board.variant()).royal_king) {
        pseudo_legal(board, moves);
        return;
    }
    Board scratch = board;
    BoardEditor::generate_legal(scratch, moves);
}

bool BoardEditor::is_position(const Board& b) {
    std::array<int, 2> kings{};
    for (int c = 0; c < 2; ++c) {
        for (int i = 0; i < b.counts_[static_cast<std::size_t>(c)]; ++i) {
            const int sq = b.squares_[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)];
            const Piece p = b.cells_[static_cast<std::size_t>(sq)].piece;
            if (p == Piece::Pawn && (rank_of(sq) == 0 || rank_of(sq) == 7)) return false;
            if (b.rules_.four_files && (sq & 1) != 0) return false;
            if (p == Piece::King) {
                ++kings[static_cast<std::size_t>(c)];
                if (b.rules_.four_files && file_of(sq) != 4) return false;
            }
        }
    }
    if (!b.rules_.royal_king) return true;
    return kings[0] == 1 && kings[1] == 1 && !b.in_check(opposite(b.side_));
}

}  // namespace detail
}  // namespace tbf::verify
