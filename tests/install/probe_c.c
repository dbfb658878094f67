/* Built outside the tree against an installed prefix, with nothing but
 * `pkg-config --cflags --libs tbforge`: for each FEN argument after the
 * database, one line "category dtc moves best" (best "-" when there is no
 * move), for tests/install/run_install_test.cmake to compare with tbprobe. */
#include <stdio.h>

#include <tbforge/probe/tbforge.h>

static const char* category(int wdl) { return wdl > 0 ? "win" : wdl < 0 ? "loss" : "draw"; }

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: probe_c DB FEN...\n");
        return 2;
    }
    if (tbf_api_version() != TBF_API_VERSION) {
        fprintf(stderr, "header API %d, library API %d\n", TBF_API_VERSION, tbf_api_version());
        return 1;
    }
    tbf_db* db = NULL;
    if (tbf_open(argv[1], 0, &db) != TBF_OK) {
        fprintf(stderr, "%s\n", tbf_last_error());
        return 3;
    }
    static tbf_move_value moves[TBF_MAX_MOVES];
    int rc = 0;
    for (int i = 2; i < argc; ++i) {
        tbf_value v;
        size_t n = 0;
        if (tbf_probe_fen(db, "antichess", argv[i], &v) != TBF_OK ||
            tbf_probe_moves_fen(db, "antichess", argv[i], moves, TBF_MAX_MOVES, &n) != TBF_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], tbf_last_error());
            rc = 3;
            continue;
        }
        printf("%s %u %zu %s\n", category(v.wdl), v.dtc, n, n > 0 ? moves[0].uci : "-");
    }
    tbf_close(db);
    return rc;
}
