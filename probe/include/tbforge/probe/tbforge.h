/* tbforge probing API for C and for other languages' foreign-function
 * interfaces. Positions are plain data (no engine types); every function
 * returns a tbf_status code, and tbf_last_error() gives a one-line message
 * for the calling thread's last failure.
 *
 * Thread safety: a tbf_db may be used from many threads at once; opening the
 * same database from several processes is fine (read-only).
 *
 * Values are for the side to move: wdl is 1 (win), 0 (draw) or -1 (loss);
 * dtc is the distance to conversion in plies (capture or promotion), 0 for
 * draws and for terminal positions. */
#ifndef TBFORGE_PROBE_TBFORGE_H
#define TBFORGE_PROBE_TBFORGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TBF_API_VERSION 1

typedef enum tbf_status {
    TBF_OK = 0,
    TBF_ERR_BAD_INPUT = 1,      /* malformed FEN or struct, illegal position, unknown variant */
    TBF_ERR_MISSING_TABLE = 2,  /* the position's table (or a child's) is not in the database */
    TBF_ERR_CORRUPT = 3,        /* damaged block or metadata: no value is returned */
    TBF_ERR_IO = 4,             /* the database could not be opened or read */
    TBF_ERR_NOT_A_POSITION = 5, /* tbf_table_position: the slot holds no position */
    TBF_ERR_BUFFER = 6          /* an output buffer is too small */
} tbf_status;

/* Squares: 0 = a1, 1 = b1, ..., 63 = h8. Unit types: */
enum { TBF_KING = 0, TBF_QUEEN = 1, TBF_ROOK = 2, TBF_BISHOP = 3, TBF_KNIGHT = 4, TBF_PAWN = 5 };
enum { TBF_WHITE = 0, TBF_BLACK = 1 };
#define TBF_NO_SQUARE 64
#define TBF_MAX_UNITS 32

typedef struct tbf_unit {
    uint8_t square;
    uint8_t type;  /* TBF_KING .. TBF_PAWN */
    uint8_t color; /* TBF_WHITE or TBF_BLACK */
} tbf_unit;

typedef struct tbf_position {
    uint8_t unit_count;
    tbf_unit units[TBF_MAX_UNITS];
    uint8_t side_to_move; /* TBF_WHITE or TBF_BLACK */
    uint8_t ep_square;    /* square skipped by a double push, or TBF_NO_SQUARE */
} tbf_position;

typedef struct tbf_value {
    int wdl;
    unsigned dtc;
} tbf_value;

typedef struct tbf_move_value {
    char uci[8];          /* "e7e8k" */
    int conversion;       /* 1 for a capture or promotion */
    tbf_value child;      /* the position after the move, for the side then to move */
    tbf_value for_mover;  /* the move scored for the side making it */
} tbf_move_value;

typedef struct tbf_table_info {
    char name[64];     /* "antichess/KQvR" */
    char variant[32];
    char material[32];
    uint64_t slots;    /* 2 * index size: White to move first, then Black */
    uint64_t index_size;
    uint64_t stored_bytes;
    uint64_t checksum; /* XXH64 of the values in slot order */
    uint32_t value_width;
} tbf_table_info;

typedef struct tbf_db tbf_db;

int tbf_api_version(void);
const char* tbf_version_string(void);
/* Short text for a status code. */
const char* tbf_status_string(tbf_status status);
/* The calling thread's last error message ("" if none); valid until its next call. */
const char* tbf_last_error(void);

/* Opens a database directory read-only. cache_bytes limits the
 * decompressed-block cache (0: the default of 256 MiB). */
tbf_status tbf_open(const char* path, size_t cache_bytes, tbf_db** out);
void tbf_close(tbf_db* db);

/* Variant names: "antichess", "antichess-fics", "antichess-joint", "fourfile". */
tbf_status tbf_probe(tbf_db* db, const char* variant, const tbf_position* pos, tbf_value* out);
tbf_status tbf_probe_fen(tbf_db* db, const char* variant, const char* fen, tbf_value* out);
/* Every legal move with its value, best first; *count receives the number of
 * moves (TBF_ERR_BUFFER if more than capacity). */
tbf_status tbf_probe_moves_fen(tbf_db* db, const char* variant, const char* fen,
                               tbf_move_value* moves, size_t capacity, size_t* count);
/* Parses a FEN into the neutral struct (validated for the variant). */
tbf_status tbf_parse_fen(const char* variant, const char* fen, tbf_position* out);

/* Tables in name order. */
tbf_status tbf_table_count(tbf_db* db, size_t* count);
tbf_status tbf_table_info_at(tbf_db* db, size_t i, tbf_table_info* out);
/* The canonical position of slot `index` (0 <= index < index_size) with
 * `side_to_move` to move, or TBF_ERR_NOT_A_POSITION. */
tbf_status tbf_table_position(tbf_db* db, const char* table, uint64_t index, int side_to_move,
                              tbf_position* out);
/* Stored values of slots [first, first + n) (slot = side * index_size + index). */
tbf_status tbf_table_values(tbf_db* db, const char* table, uint64_t first, size_t n,
                            tbf_value* out);

#ifdef __cplusplus
}
#endif

#endif
