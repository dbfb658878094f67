/* tbforge probing API for C and for other languages' foreign-function
 * interfaces (docs/probe.md). Positions are plain data (no engine types);
 * every function returns a tbf_status, and tbf_last_error() gives a one-line
 * message for the calling thread's last failure.
 *
 * Thread safety: a tbf_db may be used from many threads at once (every
 * function taking one is safe to call concurrently on the same handle);
 * tbf_close must not race with any other use of that handle. Several
 * processes may open the same database (read-only) at once.
 *
 * Values are for the side to move: wdl is 1 (win), 0 (draw) or -1 (loss);
 * dtc is the distance to conversion in plies (capture or promotion), 0 for
 * draws and for terminal positions. No function throws or aborts: a C++
 * exception (out of memory) comes back as TBF_ERR_INTERNAL. */
#ifndef TBFORGE_PROBE_TBFORGE_H
#define TBFORGE_PROBE_TBFORGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a declaration here changes incompatibly; compare with
 * tbf_api_version() to detect a header/library mismatch. */
#define TBF_API_VERSION 1

typedef enum tbf_status {
    TBF_OK = 0,
    /* Malformed FEN or struct, illegal position, unknown variant, null
     * argument, index out of range. */
    TBF_ERR_BAD_INPUT = 1,
    /* The position's table (or a child's) is not in the database;
     * tbf_last_error() names it, e.g. "missing table antichess/KQvKR". */
    TBF_ERR_MISSING_TABLE = 2,
    /* Damaged block, file or metadata (checksum mismatch): no value is returned. */
    TBF_ERR_CORRUPT = 3,
    /* The database could not be opened or read. */
    TBF_ERR_IO = 4,
    /* tbf_table_position: the slot holds no position. */
    TBF_ERR_NOT_A_POSITION = 5,
    /* An output buffer is too small. */
    TBF_ERR_BUFFER = 6,
    /* Out of memory or an unexpected failure. */
    TBF_ERR_INTERNAL = 7
} tbf_status;

/* Squares: 0 = a1, 1 = b1, ..., 7 = h1, 8 = a2, ..., 63 = h8. Unit types: */
enum { TBF_KING = 0, TBF_QUEEN = 1, TBF_ROOK = 2, TBF_BISHOP = 3, TBF_KNIGHT = 4, TBF_PAWN = 5 };
enum { TBF_WHITE = 0, TBF_BLACK = 1 };
#define TBF_NO_SQUARE 64
#define TBF_NO_PROMOTION 255
#define TBF_MAX_UNITS 32
/* More than the legal moves of any position with at most 32 units. */
#define TBF_MAX_MOVES 512

typedef struct tbf_unit {
    uint8_t square;
    uint8_t type;  /* TBF_KING .. TBF_PAWN */
    uint8_t color; /* TBF_WHITE or TBF_BLACK */
} tbf_unit;

/* A position: units in any order, no two on one square. */
typedef struct tbf_position {
    uint8_t unit_count; /* at most TBF_MAX_UNITS (16 a side) */
    tbf_unit units[TBF_MAX_UNITS];
    uint8_t side_to_move; /* TBF_WHITE or TBF_BLACK */
    uint8_t ep_square;    /* square skipped by a double push, or TBF_NO_SQUARE */
} tbf_position;

typedef struct tbf_value {
    int wdl;      /* 1 win, 0 draw, -1 loss, for the side to move */
    unsigned dtc; /* plies to conversion; 0 for draws and terminal positions */
} tbf_value;

typedef struct tbf_move_value {
    char uci[8];         /* "e2e4", "e7e8k" (antichess promotion to king) */
    uint8_t from;        /* square */
    uint8_t to;          /* square */
    uint8_t promotion;   /* TBF_QUEEN .. TBF_KNIGHT, TBF_KING, or TBF_NO_PROMOTION */
    int conversion;      /* 1 for a capture or promotion */
    tbf_value child;     /* the position after the move, for the side then to move */
    tbf_value for_mover; /* the move scored for the side making it */
} tbf_move_value;

typedef struct tbf_table_info {
    char name[64]; /* "antichess/KQvR" */
    char variant[32];
    char material[32]; /* canonical orientation */
    uint64_t slots;    /* 2 * index_size: White to move first, then Black */
    uint64_t index_size;
    uint64_t stored_bytes;
    /* XXH64 of the values in slot order as wdl-dtc/1 codes of value_width
     * bytes, little-endian (docs/values.md): what tbf_table_values answers.
     * For a wdl-dtc/2 table these are not its stored bytes: checksum is then
     * its counter wdl-dtc/1.checksum and value_width the width wdl-dtc/1
     * would choose. */
    uint64_t checksum;
    uint32_t value_width;
} tbf_table_info;

/* An open database; opaque. */
typedef struct tbf_db tbf_db;

/* TBF_API_VERSION of the library. */
int tbf_api_version(void);
const char* tbf_version_string(void);
/* Short constant text for a status code ("missing table"); an int, so that
 * any code a caller holds is valid input ("unknown status" if not a tbf_status). */
const char* tbf_status_string(int status);
/* The calling thread's last error message ("" after a success); valid until
 * the thread's next call into this API. */
const char* tbf_last_error(void);

/* Opens a database directory read-only; *out receives the handle (NULL on
 * failure). cache_bytes limits the caches shared by all threads using the
 * handle, decompressed blocks and (an eighth) values compact tables resolve
 * by search (0: the default of 256 MiB).
 * Errors: TBF_ERR_IO (no such directory, not a database, unreadable),
 * TBF_ERR_CORRUPT (truncated or damaged files), TBF_ERR_BAD_INPUT (null). */
tbf_status tbf_open(const char* path, size_t cache_bytes, tbf_db** out);
/* Closes a handle from tbf_open; NULL is ignored. */
void tbf_close(tbf_db* db);

/* The value of a position for its side to move. variant: "antichess",
 * "antichess-fics", "antichess-joint" or "fourfile". A position where a
 * side has no units is terminal; one with an en-passant right is valued
 * from its moves. Errors: TBF_ERR_BAD_INPUT, TBF_ERR_MISSING_TABLE,
 * TBF_ERR_CORRUPT, TBF_ERR_IO. */
tbf_status tbf_probe(tbf_db* db, const char* variant, const tbf_position* pos, tbf_value* out);
/* The same for a FEN (castling rights ignored, counters optional). */
tbf_status tbf_probe_fen(tbf_db* db, const char* variant, const char* fen, tbf_value* out);

/* The WDL alone (1 win, 0 draw, -1 loss, for the side to move), without any
 * DTC lookup or search: the fast path for engines (docs/probe.md, "WDL-only
 * probes"). Equals tbf_probe's wdl; same errors. */
tbf_status tbf_probe_wdl(tbf_db* db, const char* variant, const tbf_position* pos, int* wdl);
tbf_status tbf_probe_wdl_fen(tbf_db* db, const char* variant, const char* fen, int* wdl);

/* Every legal move with its value, best first for the side to move (wins by
 * increasing DTC, draws, losses by decreasing DTC; ties by UCI), so moves[0]
 * is a best move. *count receives the number of moves (0 for a terminal
 * position) even when it exceeds capacity, which is TBF_ERR_BUFFER;
 * TBF_MAX_MOVES always suffices. moves may be NULL when capacity is 0.
 * Errors: as tbf_probe, plus TBF_ERR_BUFFER. */
tbf_status tbf_probe_moves(tbf_db* db, const char* variant, const tbf_position* pos,
                           tbf_move_value* moves, size_t capacity, size_t* count);
tbf_status tbf_probe_moves_fen(tbf_db* db, const char* variant, const char* fen,
                               tbf_move_value* moves, size_t capacity, size_t* count);

/* Parses a FEN into the neutral struct (validated for the variant; the
 * en-passant square is kept only when an en-passant capture is possible). */
tbf_status tbf_parse_fen(const char* variant, const char* fen, tbf_position* out);

/* Tables in name order, as of tbf_open. */
tbf_status tbf_table_count(tbf_db* db, size_t* count);
/* Errors: TBF_ERR_BAD_INPUT (i >= count), TBF_ERR_CORRUPT (bad metadata). */
tbf_status tbf_table_info_at(tbf_db* db, size_t i, tbf_table_info* out);
/* The canonical position of slot `index` (0 <= index < index_size) of table
 * `table` ("antichess/KQvR") with `side_to_move` to move, or
 * TBF_ERR_NOT_A_POSITION. */
tbf_status tbf_table_position(tbf_db* db, const char* table, uint64_t index, int side_to_move,
                              tbf_position* out);
/* Stored values of slots [first, first + n) (slot = side * index_size + index),
 * read without filling the cache; slots that hold no position read as draws. */
tbf_status tbf_table_values(tbf_db* db, const char* table, uint64_t first, size_t n,
                            tbf_value* out);

/* Index access, for programs that walk whole tables (tbverify): the
 * placement of an index and the index of a placement, by the same index the
 * probe reads. A placement is one square per unit of the table, in the
 * order tbf_table_layout gives, for the table's stored (canonical) colour
 * orientation; the slot of index i with side s to move is s * index_size + i.
 * Each call looks the table up by name once, so pass many placements at a
 * time. Errors: TBF_ERR_BAD_INPUT (null argument, bad range or square),
 * TBF_ERR_MISSING_TABLE, TBF_ERR_CORRUPT, TBF_ERR_IO. */
#define TBF_NO_INDEX UINT64_MAX
/* The units of `table` in its index order (squares set to TBF_NO_SQUARE).
 * *count receives their number even when it exceeds capacity, which is
 * TBF_ERR_BUFFER; TBF_MAX_UNITS always suffices. */
tbf_status tbf_table_layout(tbf_db* db, const char* table, tbf_unit* units, size_t capacity,
                            size_t* count);
/* The placements of indices [first, first + n), first + n <= index_size:
 * n * count squares, index after index, the units of one type and colour in
 * ascending square order. Every index has one; whether it is a position for
 * a side to move (Four File: not with the side not to move in check) is the
 * caller's to judge. */
tbf_status tbf_table_decode(tbf_db* db, const char* table, uint64_t first, size_t n,
                            uint8_t* squares);
/* The indices of n placements laid out as tbf_table_decode writes them
 * (units of one type and colour in any order): for each, the index tbf_probe
 * reads for a position with that placement, or TBF_NO_INDEX where a unit
 * stands on a square the table has none on (a pawn on rank 1 or 8, Four File
 * off its files). color_flipped != 0: each placement is of the
 * colour-flipped material (the square listed for a unit of the layout holds
 * a unit of the same type and the other colour), and is mirrored as
 * tbf_probe mirrors such positions; the stored side to move is then the
 * other one. Squares must be below 64 and distinct within a placement. */
tbf_status tbf_table_encode(tbf_db* db, const char* table, int color_flipped,
                            const uint8_t* squares, size_t n, uint64_t* indices);

#ifdef __cplusplus
}
#endif

#endif
