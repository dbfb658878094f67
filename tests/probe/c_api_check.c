/* The C API used from C: built as C11 with -Wall -Wextra -Werror, run by
 * run_c_api_check.cmake on a database of KQvK and PvP (with their
 * sub-tables) that tbgen has just built. Each expected value is derived by
 * hand in the comment beside it. Exits 0 when every check holds. */
#include <stdio.h>
#include <string.h>

#include "tbforge/probe/tbforge.h"

static int failures = 0;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, \
                    #cond, tbf_last_error());                                                 \
            ++failures;                                                                       \
        }                                                                                     \
    } while (0)

static int value_is(tbf_value v, int wdl, unsigned dtc) { return v.wdl == wdl && v.dtc == dtc; }

int main(int argc, char** argv) {
    tbf_db* db = NULL;
    tbf_value v;
    tbf_position pos;
    tbf_move_value moves[TBF_MAX_MOVES];
    size_t count = 0;
    char missing[4096];

    if (argc != 2) {
        fprintf(stderr, "usage: c_api_check DB\n");
        return 2;
    }
    CHECK(tbf_api_version() == TBF_API_VERSION);
    snprintf(missing, sizeof missing, "%s/no-such-db", argv[1]);
    CHECK(tbf_open(missing, 0, &db) == TBF_ERR_IO);
    CHECK(db == NULL);
    CHECK(strstr(tbf_last_error(), "no-such-db") != NULL);
    if (tbf_open(argv[1], 1 << 20, &db) != TBF_OK) {
        fprintf(stderr, "cannot open %s: %s\n", argv[1], tbf_last_error());
        return 1;
    }

    /* Black's Kf1 steps to e1 or g1, onto the queen's rank: White must take
     * it and Black, without units, has won. Win in 2 plies. */
    CHECK(tbf_probe_fen(db, "antichess", "8/8/8/8/8/8/8/KQ3k2 b - - 0 1", &v) == TBF_OK);
    CHECK(value_is(v, 1, 2));
    CHECK(tbf_probe_moves_fen(db, "antichess", "8/8/8/8/8/8/8/KQ3k2 b - - 0 1", moves,
                              TBF_MAX_MOVES, &count) == TBF_OK);
    CHECK(count == 5);
    CHECK(strcmp(moves[0].uci, "f1e1") == 0); /* best first, ties by UCI */
    CHECK(moves[0].from == 5 && moves[0].to == 4 && moves[0].promotion == TBF_NO_PROMOTION);
    CHECK(value_is(moves[0].child, -1, 1));
    CHECK(value_is(moves[0].for_mover, 1, 2));
    CHECK(strcmp(moves[1].uci, "f1g1") == 0);
    CHECK(value_is(moves[4].for_mover, 0, 0));

    /* The struct: White Ka1, Qd1, Black Kd8, White to move. Qxd8 is the only
     * capture and compulsory; Black is then without units: loss in 1. */
    memset(&pos, 0, sizeof pos);
    pos.unit_count = 3;
    pos.units[0].square = 59; /* d8 */
    pos.units[0].type = TBF_KING;
    pos.units[0].color = TBF_BLACK;
    pos.units[1].square = 3; /* d1 */
    pos.units[1].type = TBF_QUEEN;
    pos.units[1].color = TBF_WHITE;
    pos.units[2].square = 0; /* a1 */
    pos.units[2].type = TBF_KING;
    pos.units[2].color = TBF_WHITE;
    pos.side_to_move = TBF_WHITE;
    pos.ep_square = TBF_NO_SQUARE;
    CHECK(tbf_probe(db, "antichess", &pos, &v) == TBF_OK);
    CHECK(value_is(v, -1, 1));
    CHECK(tbf_probe_moves(db, "antichess", &pos, moves, TBF_MAX_MOVES, &count) == TBF_OK);
    CHECK(count == 1 && strcmp(moves[0].uci, "d1d8") == 0 && moves[0].conversion == 1);

    /* Colour-flipped (KvKQ, stored as KQvK): the same loss in 1. */
    CHECK(tbf_probe_fen(db, "antichess", "k2q4/8/8/8/8/8/8/3K4 b - - 0 1", &v) == TBF_OK);
    CHECK(value_is(v, -1, 1));

    /* Pawns blocking each other: stalemate, which the stalemated side wins. */
    CHECK(tbf_probe_fen(db, "antichess", "8/8/8/8/8/p7/P7/8 w - - 0 1", &v) == TBF_OK);
    CHECK(value_is(v, 1, 0));

    /* En passant in the struct: e5xd6 is White's only move and takes Black's
     * last unit: loss in 1. */
    CHECK(tbf_parse_fen("antichess", "8/8/8/3pP3/8/8/8/8 w - d6 0 1", &pos) == TBF_OK);
    CHECK(pos.unit_count == 2 && pos.ep_square == 43);
    CHECK(tbf_probe(db, "antichess", &pos, &v) == TBF_OK);
    CHECK(value_is(v, -1, 1));

    /* Errors: missing table named, bad FEN, too small a buffer. */
    CHECK(tbf_probe_fen(db, "antichess", "8/8/8/8/8/8/8/KR3k2 b - - 0 1", &v) ==
          TBF_ERR_MISSING_TABLE);
    CHECK(strcmp(tbf_last_error(), "missing table antichess/KRvK") == 0);
    CHECK(tbf_probe_fen(db, "antichess", "8/8/8/8/8/8/8/KQ3k2 b - - 0 1 junk", &v) ==
          TBF_ERR_BAD_INPUT);
    CHECK(tbf_probe_moves_fen(db, "antichess", "8/8/8/8/8/8/8/KQ3k2 b - - 0 1", moves, 2, &count) ==
          TBF_ERR_BUFFER);
    CHECK(count == 5);
    CHECK(strcmp(tbf_status_string(TBF_ERR_CORRUPT), "corrupt database") == 0);

    CHECK(tbf_table_count(db, &count) == TBF_OK);
    CHECK(count == 22); /* the 21 two-unit tables PvP needs, and KQvK */

    tbf_close(db);
    if (failures) fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
