// The C API over Tablebase: plain structs in, status codes out, messages
// kept per thread. No C++ exception may cross into C, so every entry point
// runs inside guarded().
#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/probe/tablebase.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/rules/fen.hpp"

struct tbf_db {
    explicit tbf_db(tbf::probe::Tablebase tb) : tablebase(std::move(tb)) {}

    tbf::probe::Tablebase tablebase;
    // The catalogue, read once: a read-only open sees a fixed database, and
    // callers walk it with tbf_table_info_at(i) for every i.
    std::once_flag tables_once;
    tbf::Status tables_status;
    std::vector<tbf::storage::TableInfo> tables;
};

namespace {

thread_local std::string g_last_error;

tbf_status fail(tbf_status status, std::string message) {
    g_last_error = std::move(message);
    return status;
}

// The documented C error codes from the probe Status codes.
tbf_status fail(const tbf::Status& status) {
    switch (status.code()) {
        case tbf::StatusCode::InvalidArgument:
            return fail(TBF_ERR_BAD_INPUT, status.message());
        case tbf::StatusCode::NotFound:
            return fail(TBF_ERR_MISSING_TABLE, status.message());
        case tbf::StatusCode::Corruption:
        case tbf::StatusCode::ChecksumMismatch:
        case tbf::StatusCode::NotADatabase:
        case tbf::StatusCode::UnsupportedVersion:
            return fail(TBF_ERR_CORRUPT, status.message());
        default:
            break;
    }
    return fail(TBF_ERR_IO, status.message());
}

tbf_status ok() {
    g_last_error.clear();
    return TBF_OK;
}

template <class F>
tbf_status guarded(F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(TBF_ERR_INTERNAL, "out of memory");
    } catch (const std::exception& e) {
        return fail(TBF_ERR_INTERNAL, e.what());
    } catch (...) {
        return fail(TBF_ERR_INTERNAL, "unknown failure");
    }
}

tbf_status load_tables(tbf_db* db) {
    std::call_once(db->tables_once, [db] {
        auto tables = db->tablebase.database().list_tables();
        if (tables.ok()) {
            db->tables = std::move(*tables);
        } else {
            db->tables_status = tables.status();
        }
    });
    if (!db->tables_status.ok()) return fail(tbf::probe::probe_status(db->tables_status));
    return TBF_OK;
}

// The table named "variant/material" (either colour orientation names it).
tbf::probe::ProbeResult<std::shared_ptr<const tbf::probe::Table>> open_table(tbf_db* db,
                                                                              const char* name) {
    auto id = tbf::probe::parse_table_name(name);
    if (!id.ok()) return id.status();
    return db->tablebase.table(id->variant, id->material);
}

tbf_value to_c(tbf::probe::Value v) { return {static_cast<int>(v.wdl), v.dtc}; }

void to_c(const tbf::Position& pos, tbf_position* out) {
    std::memset(out, 0, sizeof *out);
    tbf::Bitboard occ = pos.occupied();
    while (occ) {
        const tbf::Square s = tbf::pop_lsb(occ);
        const tbf::Unit u = pos.unit_on(s);
        out->units[out->unit_count++] = {s, static_cast<uint8_t>(tbf::unit_type(u)),
                                         static_cast<uint8_t>(tbf::unit_color(u))};
    }
    out->side_to_move = static_cast<uint8_t>(pos.side_to_move());
    out->ep_square = pos.ep_square();
}

// Builds and validates (by the FEN rules of the variant) a position from the struct.
tbf_status from_c(const tbf_position* in, tbf::VariantId variant, tbf::Position& out) {
    if (!in) return fail(TBF_ERR_BAD_INPUT, "null position");
    if (in->unit_count > TBF_MAX_UNITS) return fail(TBF_ERR_BAD_INPUT, "too many units");
    if (in->side_to_move > 1) return fail(TBF_ERR_BAD_INPUT, "side to move must be 0 or 1");
    tbf::Position pos;
    for (int i = 0; i < in->unit_count; ++i) {
        const tbf_unit& u = in->units[i];
        if (u.square > 63 || u.type > TBF_PAWN || u.color > 1) {
            return fail(TBF_ERR_BAD_INPUT, "unit " + std::to_string(i) + " is out of range");
        }
        if (pos.unit_on(u.square) != tbf::Unit::None) {
            return fail(TBF_ERR_BAD_INPUT, "two units on " + tbf::square_name(u.square));
        }
        pos.put(u.square, tbf::make_unit(static_cast<tbf::Color>(u.color),
                                         static_cast<tbf::UnitType>(u.type)));
    }
    if (in->ep_square != TBF_NO_SQUARE && in->ep_square > 63) {
        return fail(TBF_ERR_BAD_INPUT, "en-passant square out of range");
    }
    // Through a FEN, so that a struct is validated exactly like a FEN (unit
    // counts, pawn ranks, Four File files and checks, en-passant square).
    const std::string board = tbf::to_fen(pos);
    const std::string fen = board.substr(0, board.find(' ')) +
                            (in->side_to_move ? " b - " : " w - ") +
                            tbf::square_name(in->ep_square) + " 0 1";
    auto parsed = tbf::parse_fen(fen, variant);
    if (!parsed.ok()) {
        // The caller gave no FEN: name the problem as one of the position.
        std::string message = parsed.status().message();
        constexpr std::string_view kFenPrefix = "bad FEN: ";
        if (message.starts_with(kFenPrefix))
            message.replace(0, kFenPrefix.size(), "bad position: ");
        return fail(TBF_ERR_BAD_INPUT, message + " (as FEN " + fen + ")");
    }
    out = *parsed;
    return TBF_OK;
}

tbf_status variant_of(const char* name, tbf::VariantId& out) {
    if (!name) return fail(TBF_ERR_BAD_INPUT, "null variant");
    auto id = tbf::parse_variant(name);
    if (!id) return fail(TBF_ERR_BAD_INPUT, std::string("unknown variant '") + name + "'");
    out = *id;
    return TBF_OK;
}

tbf_status position_of_fen(const char* variant, const char* fen, tbf::VariantId& id,
                           tbf::Position& pos) {
    if (auto s = variant_of(variant, id); s != TBF_OK) return s;
    if (!fen) return fail(TBF_ERR_BAD_INPUT, "null FEN");
    auto parsed = tbf::parse_fen(fen, id);
    if (!parsed.ok()) return fail(TBF_ERR_BAD_INPUT, parsed.status().message());
    pos = *parsed;
    return TBF_OK;
}

void copy_text(char* dst, std::size_t size, const std::string& src) {
    const std::size_t n = std::min(size - 1, src.size());
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

void to_c(const tbf::probe::MoveValue& mv, tbf_move_value* out) {
    std::memset(out, 0, sizeof *out);
    copy_text(out->uci, sizeof out->uci, mv.uci);
    out->from = mv.move.from();
    out->to = mv.move.to();
    out->promotion = mv.move.is_promotion() ? static_cast<uint8_t>(mv.move.promotion())
                                            : static_cast<uint8_t>(TBF_NO_PROMOTION);
    out->conversion = mv.conversion ? 1 : 0;
    out->child = to_c(mv.child);
    out->for_mover = to_c(mv.for_mover);
}

tbf_status probe_moves(tbf_db* db, tbf::VariantId id, const tbf::Position& pos,
                       tbf_move_value* moves, size_t capacity, size_t* count) {
    auto list = db->tablebase.probe_moves(id, pos);
    if (!list.ok()) return fail(list.status());
    *count = list->size();
    if (list->size() > capacity) {
        return fail(TBF_ERR_BUFFER, "room for " + std::to_string(capacity) + " moves, " +
                                        std::to_string(list->size()) + " needed");
    }
    for (std::size_t i = 0; i < list->size(); ++i) to_c((*list)[i], &moves[i]);
    return ok();
}

tbf_status probe_value(tbf_db* db, tbf::VariantId id, const tbf::Position& pos, tbf_value* out) {
    auto v = db->tablebase.probe(id, pos);
    if (!v.ok()) return fail(v.status());
    *out = to_c(*v);
    return ok();
}

tbf_status probe_wdl(tbf_db* db, tbf::VariantId id, const tbf::Position& pos, int* out) {
    auto wdl = db->tablebase.probe_wdl(id, pos);
    if (!wdl.ok()) return fail(wdl.status());
    *out = static_cast<int>(*wdl);
    return ok();
}

}  // namespace

extern "C" {

int tbf_api_version(void) { return TBF_API_VERSION; }
const char* tbf_version_string(void) { return "tbforge 0.1.0"; }

const char* tbf_status_string(int status) {
    switch (status) {
        case TBF_OK:
            return "ok";
        case TBF_ERR_BAD_INPUT:
            return "bad input";
        case TBF_ERR_MISSING_TABLE:
            return "missing table";
        case TBF_ERR_CORRUPT:
            return "corrupt database";
        case TBF_ERR_IO:
            return "I/O error";
        case TBF_ERR_NOT_A_POSITION:
            return "not a position";
        case TBF_ERR_BUFFER:
            return "buffer too small";
        case TBF_ERR_INTERNAL:
            return "internal error";
    }
    return "unknown status";
}

const char* tbf_last_error(void) { return g_last_error.c_str(); }

tbf_status tbf_open(const char* path, size_t cache_bytes, tbf_db** out) {
    return guarded([&] {
        if (!out) return fail(TBF_ERR_BAD_INPUT, "null argument");
        *out = nullptr;
        if (!path) return fail(TBF_ERR_BAD_INPUT, "null argument");
        tbf::probe::TablebaseOptions options;
        if (cache_bytes) options.cache_bytes = cache_bytes;
        auto tb = tbf::probe::Tablebase::open(path, options);
        if (!tb.ok()) return fail(tb.status());
        *out = new tbf_db(std::move(tb).value());
        return ok();
    });
}

void tbf_close(tbf_db* db) { delete db; }

tbf_status tbf_probe(tbf_db* db, const char* variant, const tbf_position* pos, tbf_value* out) {
    return guarded([&] {
        if (!db || !out) return fail(TBF_ERR_BAD_INPUT, "null argument");
        tbf::VariantId id{};
        if (auto s = variant_of(variant, id); s != TBF_OK) return s;
        tbf::Position p;
        if (auto s = from_c(pos, id, p); s != TBF_OK) return s;
        return probe_value(db, id, p, out);
    });
}

tbf_status tbf_probe_fen(tbf_db* db, const char* variant, const char* fen, tbf_value* out) {
    return guarded([&] {
        if (!db || !out) return fail(TBF_ERR_BAD_INPUT, "null argument");
        tbf::VariantId id{};
        tbf::Position pos;
        if (auto s = position_of_fen(variant, fen, id, pos); s != TBF_OK) return s;
        return probe_value(db, id, pos, out);
    });
}

tbf_status tbf_probe_wdl(tbf_db* db, const char* variant, const tbf_position* pos, int* wdl) {
    return guarded([&] {
        if (!db || !wdl) return fail(TBF_ERR_BAD_INPUT, "null argument");
        tbf::VariantId id{};
        if (auto s = variant_of(variant, id); s != TBF_OK) return s;
        tbf::Position p;
        if (auto s = from_c(pos, id, p); s != TBF_OK) return s;
        return probe_wdl(db, id, p, wdl);
    });
}

tbf_status tbf_probe_wdl_fen(tbf_db* db, const char* variant, const char* fen, int* wdl) {
    return guarded([&] {
        if (!db || !wdl) return fail(TBF_ERR_BAD_INPUT, "null argument");
        tbf::VariantId id{};
        tbf::Position pos;
        if (auto s = position_of_fen(variant, fen, id, pos); s != TBF_OK) return s;
        return probe_wdl(db, id, pos, wdl);
    });
}

tbf_status tbf_probe_moves(tbf_db* db, const char* variant, const tbf_position* pos,
                           tbf_move_value* moves, size_t capacity, size_t* count) {
    return guarded([&] {
        if (!db || !count || (!moves && capacity)) return fail(TBF_ERR_BAD_INPUT, "null argument");
        *count = 0;
        tbf::VariantId id{};
        if (auto s = variant_of(variant, id); s != TBF_OK) return s;
        tbf::Position p;
        if (auto s = from_c(pos, id, p); s != TBF_OK) return s;
        return probe_moves(db, id, p, moves, capacity, count);
    });
}

tbf_status tbf_probe_moves_fen(tbf_db* db, const char* variant, const char* fen,
                               tbf_move_value* moves, size_t capacity, size_t* count) {
    return guarded([&] {
        if (!db || !count || (!moves && capacity)) return fail(TBF_ERR_BAD_INPUT, "null argument");
        *count = 0;
        tbf::VariantId id{};
        tbf::Position pos;
        if (auto s = position_of_fen(variant, fen, id, pos); s != TBF_OK) return s;
        return probe_moves(db, id, pos, moves, capacity, count);
    });
}

tbf_status tbf_parse_fen(const char* variant, const char* fen, tbf_position* out) {
    return guarded([&] {
        if (!out) return fail(TBF_ERR_BAD_INPUT, "null argument");
        tbf::VariantId id{};
        tbf::Position pos;
        if (auto s = position_of_fen(variant, fen, id, pos); s != TBF_OK) return s;
        to_c(pos, out);
        return ok();
    });
}

tbf_status tbf_table_count(tbf_db* db, size_t* count) {
    return guarded([&] {
        if (!db || !count) return fail(TBF_ERR_BAD_INPUT, "null argument");
        if (auto s = load_tables(db); s != TBF_OK) return s;
        *count = db->tables.size();
        return ok();
    });
}

tbf_status tbf_table_info_at(tbf_db* db, size_t i, tbf_table_info* out) {
    return guarded([&] {
        if (!db || !out) return fail(TBF_ERR_BAD_INPUT, "null argument");
        if (auto s = load_tables(db); s != TBF_OK) return s;
        if (i >= db->tables.size()) return fail(TBF_ERR_BAD_INPUT, "table number out of range");
        const auto& info = db->tables[i];
        std::memset(out, 0, sizeof *out);
        copy_text(out->name, sizeof out->name, info.spec.name);
        copy_text(out->variant, sizeof out->variant, info.spec.variant);
        copy_text(out->material, sizeof out->material, info.spec.material);
        out->slots = info.spec.slot_count;
        out->index_size = info.spec.slot_count / 2;
        out->stored_bytes = info.stored_bytes;
        out->checksum = info.values_checksum;
        out->value_width = info.spec.value_width;
        if (tbf::probe::is_compact_encoding(info.spec.value_encoding)) {
            // The table as tbf_table_values answers it: wdl-dtc/1 codes.
            std::uint64_t max_dtc = 0;
            bool recorded = false;
            for (const auto& c : info.statistics.counters) {
                if (c.name == "max_dtc") max_dtc = c.value;
                if (c.name == tbf::probe::kResolvedChecksumCounter) {
                    out->checksum = c.value;
                    recorded = true;
                }
            }
            if (!recorded) return fail(TBF_ERR_CORRUPT, "table " + info.spec.name + " has no counter " +
                                                            std::string(tbf::probe::kResolvedChecksumCounter));
            out->value_width = 2 + 2 * max_dtc <= 0xFF ? 1 : 2;
        }
        return ok();
    });
}

tbf_status tbf_table_position(tbf_db* db, const char* table, uint64_t index, int side_to_move,
                              tbf_position* out) {
    return guarded([&] {
        if (!db || !table || !out) return fail(TBF_ERR_BAD_INPUT, "null argument");
        if (side_to_move != 0 && side_to_move != 1) {
            return fail(TBF_ERR_BAD_INPUT, "side to move must be 0 or 1");
        }
        auto id = tbf::probe::parse_table_name(table);
        if (!id.ok()) return fail(id.status());
        auto t = db->tablebase.table(id->variant, id->material);
        if (!t.ok()) return fail(t.status());
        if (index >= (*t)->indexer().size()) return fail(TBF_ERR_BAD_INPUT, "index out of range");
        auto pos = (*t)->indexer().position(index, static_cast<tbf::Color>(side_to_move));
        if (!pos) return fail(TBF_ERR_NOT_A_POSITION, "slot holds no position");
        to_c(*pos, out);
        return ok();
    });
}

tbf_status tbf_table_values(tbf_db* db, const char* table, uint64_t first, size_t n,
                            tbf_value* out) {
    return guarded([&] {
        if (!db || !table || (!out && n)) return fail(TBF_ERR_BAD_INPUT, "null argument");
        auto id = tbf::probe::parse_table_name(table);
        if (!id.ok()) return fail(id.status());
        auto t = db->tablebase.table(id->variant, id->material);
        if (!t.ok()) return fail(t.status());
        std::vector<std::uint16_t> codes(n);
        auto read = (*t)->read_codes(first, n, codes.data());
        if (!read.ok()) return fail(read.status());
        for (std::size_t i = 0; i < n; ++i) out[i] = to_c(tbf::probe::decode_value(codes[i]));
        return ok();
    });
}

tbf_status tbf_table_layout(tbf_db* db, const char* table, tbf_unit* units, size_t capacity,
                            size_t* count) {
    return guarded([&] {
        if (!db || !table || !count || (!units && capacity)) {
            return fail(TBF_ERR_BAD_INPUT, "null argument");
        }
        *count = 0;
        auto t = open_table(db, table);
        if (!t.ok()) return fail(t.status());
        const tbf::index::Indexer& ix = (*t)->indexer();
        *count = static_cast<size_t>(ix.unit_count());
        if (*count > capacity) {
            return fail(TBF_ERR_BUFFER, "room for " + std::to_string(capacity) + " units, " +
                                            std::to_string(*count) + " needed");
        }
        for (int i = 0; i < ix.unit_count(); ++i) {
            const tbf::Unit u = ix.unit(i);
            units[i] = {TBF_NO_SQUARE, static_cast<uint8_t>(tbf::unit_type(u)),
                        static_cast<uint8_t>(tbf::unit_color(u))};
        }
        return ok();
    });
}

tbf_status tbf_table_decode(tbf_db* db, const char* table, uint64_t first, size_t n,
                            uint8_t* squares) {
    return guarded([&] {
        if (!db || !table || (!squares && n)) return fail(TBF_ERR_BAD_INPUT, "null argument");
        auto t = open_table(db, table);
        if (!t.ok()) return fail(t.status());
        const tbf::index::Indexer& ix = (*t)->indexer();
        if (first > ix.size() || n > ix.size() - first) {
            return fail(TBF_ERR_BAD_INPUT, "index range out of range");
        }
        const auto units = static_cast<std::size_t>(ix.unit_count());
        tbf::Square placement[tbf::index::kMaxUnits];
        for (std::size_t k = 0; k < n; ++k) {
            ix.decode(first + k, placement);
            std::copy_n(placement, units, squares + k * units);
        }
        return ok();
    });
}

tbf_status tbf_table_encode(tbf_db* db, const char* table, int color_flipped,
                            const uint8_t* squares, size_t n, uint64_t* indices) {
    return guarded([&] {
        if (!db || !table || (n && (!squares || !indices))) {
            return fail(TBF_ERR_BAD_INPUT, "null argument");
        }
        auto t = open_table(db, table);
        if (!t.ok()) return fail(t.status());
        const tbf::index::Indexer& ix = (*t)->indexer();
        const auto units = static_cast<std::size_t>(ix.unit_count());
        // As Tablebase::probe reads a colour-flipped position: mirrored ranks.
        const int mirror = color_flipped ? 56 : 0;
        tbf::Square placement[tbf::index::kMaxUnits];
        for (std::size_t k = 0; k < n; ++k) {
            const uint8_t* in = squares + k * units;
            std::uint64_t seen = 0;
            for (std::size_t i = 0; i < units; ++i) {
                const std::uint64_t bit = std::uint64_t{1} << (in[i] & 63);
                if (in[i] > 63 || (seen & bit)) {
                    return fail(TBF_ERR_BAD_INPUT, "placement " + std::to_string(k) +
                                                       ": square out of range or used twice");
                }
                seen |= bit;
                placement[i] = static_cast<tbf::Square>(in[i] ^ mirror);
            }
            const tbf::index::Index idx = ix.encode(placement);
            indices[k] = idx == tbf::index::kNoIndex ? TBF_NO_INDEX : idx;
        }
        return ok();
    });
}

}  // extern "C"
