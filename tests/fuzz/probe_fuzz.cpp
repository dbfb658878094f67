// The C probe API (tbforge.h) with arbitrary input, against a small database
// of real tables named by the environment variable TBF_FUZZ_DB (CI builds it
// before fuzzing: docs/fuzzing.md). Input: one byte choosing the variant
// (bits 0-1) and the entry point (bit 2), then either the bytes of a
// tbf_position struct (missing bytes are 0) for tbf_probe and
// tbf_probe_moves, or a FEN for tbf_probe_fen, tbf_probe_moves_fen and
// tbf_parse_fen. On a sound database the only failures are bad input and a
// missing table; a value is well formed; the moves come best first, each
// scored from its child as docs/probe.md says, the first one's score being
// the position's value; and a FEN gives the value of the struct it parses to.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_support.hpp"
#include "tbforge/probe/tbforge.h"

namespace {

tbf_db* g_db = nullptr;

constexpr const char* kVariantNames[] = {"antichess", "antichess-fics", "antichess-joint",
                                         "fourfile"};

std::string describe(tbf_status s) {
    return std::string(tbf_status_string(s)) + ": " + tbf_last_error();
}

bool expected_failure(tbf_status s) { return s == TBF_ERR_BAD_INPUT || s == TBF_ERR_MISSING_TABLE; }

// Orders scores as docs/probe.md lists moves: wins by increasing DTC, draws,
// losses by decreasing DTC. Lower is better.
long rank(const tbf_value& v) {
    if (v.wdl > 0) return static_cast<long>(v.dtc);
    if (v.wdl == 0) return 1L << 40;
    return (2L << 40) - static_cast<long>(v.dtc);
}

void check_value(const tbf_value& v, const std::string& context) {
    FUZZ_CHECK(v.wdl >= -1 && v.wdl <= 1, context);
    FUZZ_CHECK(v.wdl != 0 || v.dtc == 0, context + ": a draw with a distance");
}

void check_moves(const tbf_value& value, const tbf_move_value* moves, std::size_t count,
                 const std::string& context) {
    FUZZ_CHECK(count <= TBF_MAX_MOVES, context);
    if (count == 0) {
        FUZZ_CHECK(value.dtc == 0, context + ": no moves but a distance");
        return;
    }
    FUZZ_CHECK(moves[0].for_mover.wdl == value.wdl && moves[0].for_mover.dtc == value.dtc,
               context + ": the best move's score is not the position's value");
    for (std::size_t i = 0; i < count; ++i) {
        const tbf_move_value& m = moves[i];
        const std::string at =
            context + " move " + std::string(m.uci, strnlen(m.uci, sizeof m.uci));
        FUZZ_CHECK(std::memchr(m.uci, '\0', sizeof m.uci) != nullptr, at);
        FUZZ_CHECK(m.from < 64 && m.to < 64 && m.from != m.to, at);
        check_value(m.child, at);
        check_value(m.for_mover, at);
        FUZZ_CHECK(m.for_mover.wdl == -m.child.wdl, at);
        if (m.for_mover.wdl != 0) {
            FUZZ_CHECK(m.for_mover.dtc == (m.conversion ? 1 : m.child.dtc + 1), at);
        }
        if (i > 0) {
            const tbf_move_value& before = moves[i - 1];
            const bool ordered = rank(before.for_mover) < rank(m.for_mover) ||
                                 (rank(before.for_mover) == rank(m.for_mover) &&
                                  std::strncmp(before.uci, m.uci, sizeof m.uci) < 0);
            FUZZ_CHECK(ordered, at + ": not in best-first order");
        }
    }
}

thread_local tbf_move_value g_moves[TBF_MAX_MOVES];

void probe_struct(const char* variant, const tbf_position& pos, const std::string& context) {
    tbf_value value{};
    const tbf_status s = tbf_probe(g_db, variant, &pos, &value);
    std::size_t count = 0;
    const tbf_status sm = tbf_probe_moves(g_db, variant, &pos, g_moves, TBF_MAX_MOVES, &count);
    FUZZ_CHECK(s == TBF_OK || expected_failure(s), context + ": " + describe(s));
    FUZZ_CHECK(sm == TBF_OK || expected_failure(sm), context + ": moves: " + describe(sm));
    // Both validate the struct alike.
    FUZZ_CHECK((s == TBF_ERR_BAD_INPUT) == (sm == TBF_ERR_BAD_INPUT), context);
    if (s != TBF_OK) return;
    check_value(value, context);
    if (sm == TBF_OK) check_moves(value, g_moves, count, context);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* path = std::getenv("TBF_FUZZ_DB");
    if (!path || !*path) {
        std::fprintf(stderr,
                     "probe_fuzz: set TBF_FUZZ_DB to a tbforge database (docs/fuzzing.md)\n");
        std::exit(2);
    }
    if (tbf_open(path, 64u << 20, &g_db) != TBF_OK) {
        std::fprintf(stderr, "probe_fuzz: cannot open %s: %s\n", path, tbf_last_error());
        std::exit(2);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const char* variant = kVariantNames[data[0] & 3];
    const bool fen_mode = (data[0] & 4) != 0;
    ++data;
    --size;
    if (!fen_mode) {
        tbf_position pos;
        std::memset(&pos, 0, sizeof pos);
        std::memcpy(&pos, data, std::min(size, sizeof pos));
        probe_struct(variant, pos, std::string(variant) + " struct");
        return 0;
    }
    const std::string fen(reinterpret_cast<const char*>(data), size);  // NUL-terminated
    const std::string context = std::string(variant) + " FEN \"" + fen + "\"";
    tbf_value value{};
    const tbf_status s = tbf_probe_fen(g_db, variant, fen.c_str(), &value);
    std::size_t count = 0;
    const tbf_status sm =
        tbf_probe_moves_fen(g_db, variant, fen.c_str(), g_moves, TBF_MAX_MOVES, &count);
    FUZZ_CHECK(s == TBF_OK || expected_failure(s), context + ": " + describe(s));
    FUZZ_CHECK(sm == TBF_OK || expected_failure(sm), context + ": moves: " + describe(sm));
    FUZZ_CHECK((s == TBF_ERR_BAD_INPUT) == (sm == TBF_ERR_BAD_INPUT), context);
    tbf_position pos;
    const tbf_status sp = tbf_parse_fen(variant, fen.c_str(), &pos);
    FUZZ_CHECK((sp == TBF_OK) == (s != TBF_ERR_BAD_INPUT), context + ": parse: " + describe(sp));
    if (s != TBF_OK) return 0;
    check_value(value, context);
    if (sm == TBF_OK) check_moves(value, g_moves, count, context);
    // The struct the FEN parses to has the FEN's value.
    tbf_value from_struct{};
    const tbf_status ss = tbf_probe(g_db, variant, &pos, &from_struct);
    FUZZ_CHECK(ss == TBF_OK && from_struct.wdl == value.wdl && from_struct.dtc == value.dtc,
               context + ": as a struct: " + describe(ss));
    return 0;
}
