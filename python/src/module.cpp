// tbforge._core: the C++ probe API for the Python package tbforge
// (python/tbforge/__init__.py holds the public API and its documentation).
//
// Probes run without the GIL: tbf::probe::Tablebase is safe to probe from
// many threads at once. Each call takes its own reference to the open
// Tablebase before releasing the GIL, so close() from another thread never
// destroys it under a running probe: the last call in flight frees it.
// Errors come back as Python exceptions; the mapping from Status codes is in
// raise_status() alone.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tbforge/probe/strategy.hpp"
#include "tbforge/probe/tablebase.hpp"
#include "tbforge/probe/tbforge.h"
#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/uci.hpp"
#include "tbforge/rules/variant.hpp"

namespace py = pybind11;

namespace {

// Created at import; the module object keeps them alive.
PyObject* g_missing_table_error = nullptr;
PyObject* g_corrupt_table_error = nullptr;

[[noreturn]] void raise_status(const tbf::Status& status) {
    PyObject* type = PyExc_OSError;
    switch (status.code()) {
        case tbf::StatusCode::InvalidArgument:
            type = PyExc_ValueError;
            break;
        case tbf::StatusCode::NotFound:
            type = g_missing_table_error;
            break;
        case tbf::StatusCode::Corruption:
        case tbf::StatusCode::ChecksumMismatch:
        case tbf::StatusCode::NotADatabase:
        case tbf::StatusCode::UnsupportedVersion:
            type = g_corrupt_table_error;
            break;
        case tbf::StatusCode::ResourceExhausted:
            type = PyExc_MemoryError;
            break;
        default:
            break;
    }
    PyErr_SetString(type, status.message().c_str());
    throw py::error_already_set();
}

tbf::VariantId variant_of(const std::string& name) {
    auto id = tbf::parse_variant(name);
    if (!id) raise_status(tbf::invalid_argument("unknown variant '" + name + "'"));
    return *id;
}

// The open database, shared by the Tablebase object, its strategies and
// their iterators. `tablebase` is null once closed; it changes only under the GIL.
struct Handle {
    std::shared_ptr<const tbf::probe::Tablebase> tablebase;

    std::shared_ptr<const tbf::probe::Tablebase> use() const {
        if (!tablebase) throw py::value_error("the tablebase is closed");
        return tablebase;
    }
};

// (wdl, dtc): wdl 1 / 0 / -1 for the side to move, dtc in plies.
py::tuple value_tuple(tbf::probe::Value v) {
    return py::make_tuple(static_cast<int>(v.wdl), static_cast<int>(v.dtc));
}

struct ProbeOutcome {
    tbf::Status status;
    std::string fen;
    tbf::probe::Value value;
    std::vector<tbf::probe::MoveValue> moves;
};

class CoreStrategy;

class CoreTablebase {
public:
    CoreTablebase(const std::string& path, std::size_t cache_bytes)
        : handle_(std::make_shared<Handle>()) {
        std::optional<tbf::probe::ProbeResult<tbf::probe::Tablebase>> opened;
        {
            py::gil_scoped_release release;
            opened.emplace(tbf::probe::Tablebase::open(path, {.cache_bytes = cache_bytes}));
        }
        if (!opened->ok()) raise_status(opened->status());
        handle_->tablebase =
            std::make_shared<const tbf::probe::Tablebase>(std::move(*opened).value());
    }

    py::tuple value(const std::string& variant_name, const std::string& fen) const {
        const tbf::VariantId variant = variant_of(variant_name);
        const auto tablebase = handle_->use();
        tbf::Status status;
        tbf::probe::Value value;
        {
            py::gil_scoped_release release;
            auto pos = tbf::parse_fen(fen, variant);
            if (!pos.ok()) {
                status = pos.status();
            } else {
                auto probed = tablebase->probe(variant, *pos);
                if (probed.ok()) value = *probed;
                else status = probed.status();
            }
        }
        if (!status.ok()) raise_status(status);
        return value_tuple(value);
    }

    // (fen, (wdl, dtc), [(uci, conversion, (wdl, dtc) after the move,
    // (wdl, dtc) for the mover), ...]) with the moves best first.
    py::tuple probe(const std::string& variant_name, const std::string& fen) const {
        const tbf::VariantId variant = variant_of(variant_name);
        const auto tablebase = handle_->use();
        ProbeOutcome out;
        {
            py::gil_scoped_release release;
            out = probe_position(*tablebase, variant, fen);
        }
        if (!out.status.ok()) raise_status(out.status);
        py::list moves;
        for (const auto& m : out.moves) {
            moves.append(py::make_tuple(m.uci, m.conversion, value_tuple(m.child),
                                        value_tuple(m.for_mover)));
        }
        return py::make_tuple(out.fen, value_tuple(out.value), moves);
    }

    // One tuple per table in name order: (variant, material, slots, stored
    // bytes, values checksum, value width, generator, format, bytes per
    // position, values and index bytes, statistics JSON text, value
    // encoding, DTC side or "", index order or "", WDL and DTC bytes or -1).
    // The WDL and DTC bytes only with `split` (tbprobe info --split), -1
    // for a table that has no such split.
    py::list tables(bool split_values) const {
        const auto tablebase = handle_->use();
        std::optional<tbf::Result<std::vector<tbf::storage::TableInfo>>> listed;
        std::vector<std::optional<tbf::probe::WdlDtcSplit>> wdl_dtc;
        tbf::Status failure;
        {
            py::gil_scoped_release release;
            listed.emplace(tablebase->database().list_tables());
            if (listed->ok() && split_values) {
                for (const auto& t : **listed) {
                    auto measured = tbf::probe::wdl_dtc_split(tablebase->database(), t);
                    if (measured.ok()) {
                        wdl_dtc.emplace_back(*measured);
                    } else if (measured.status().code() == tbf::StatusCode::InvalidArgument) {
                        wdl_dtc.emplace_back();
                    } else {
                        failure = measured.status();
                        break;
                    }
                }
            }
        }
        if (!listed->ok()) raise_status(tbf::probe::probe_status(listed->status()));
        if (!failure.ok()) raise_status(failure);
        py::list out;
        for (std::size_t i = 0; i < (*listed)->size(); ++i) {
            const auto& t = (**listed)[i];
            const tbf::probe::ByteSplit split = tbf::probe::byte_split(t);
            const bool measured = i < wdl_dtc.size() && wdl_dtc[i];
            out.append(py::make_tuple(
                t.spec.variant, t.spec.material, t.spec.slot_count, t.stored_bytes, t.values_checksum,
                t.spec.value_width, t.spec.generator_version, t.format_version, split.per_position,
                split.values, split.index, t.statistics.json, t.spec.value_encoding,
                tbf::probe::dtc_side_name(t), tbf::probe::index_order_name(t),
                tbf::probe::knight_colouring_name(t),
                measured ? static_cast<std::int64_t>(wdl_dtc[i]->wdl) : std::int64_t{-1},
                measured ? static_cast<std::int64_t>(wdl_dtc[i]->dtc) : std::int64_t{-1}));
        }
        return out;
    }

    py::list strategies() const;
    CoreStrategy strategy(const std::string& name) const;

    void close() { handle_->tablebase.reset(); }
    bool closed() const { return !handle_->tablebase; }

private:
    static ProbeOutcome probe_position(const tbf::probe::Tablebase& tablebase,
                                       tbf::VariantId variant, const std::string& fen) {
        ProbeOutcome out;
        auto pos = tbf::parse_fen(fen, variant);
        if (!pos.ok()) {
            out.status = pos.status();
            return out;
        }
        auto moves = tablebase.probe_moves(variant, *pos);
        if (!moves.ok()) {
            out.status = moves.status();
            return out;
        }
        auto value = tablebase.probe(variant, *pos);
        if (!value.ok()) {
            out.status = value.status();
            return out;
        }
        out.fen = tbf::to_fen(*pos);
        out.value = *value;
        out.moves = std::move(*moves);
        return out;
    }

    std::shared_ptr<Handle> handle_;
};

// Metadata of a strategy: (name, variant, side, kind, roots, entries, json).
py::tuple strategy_tuple(const tbf::storage::StrategyInfo& info) {
    const auto& spec = info.spec;
    return py::make_tuple(spec.name, spec.variant, std::string(tbf::storage::side_name(spec.side)),
                          std::string(tbf::storage::strategy_kind_name(spec.kind)), spec.roots,
                          info.entry_count, spec.json);
}

// The entry of a strategy as (FEN, uci), or a Corruption status.
tbf::Result<std::pair<std::string, std::string>> decode_entry(std::string_view key,
                                                              std::string_view value) {
    auto plain = tbf::storage::decode_position_key(key);
    if (!plain.ok()) return tbf::probe::probe_status(plain.status());
    auto move = tbf::storage::decode_move_value(value);
    if (!move.ok()) return tbf::probe::probe_status(move.status());
    return std::pair{tbf::to_fen(tbf::probe::position_from_plain(*plain)),
                     tbf::to_uci(tbf::probe::move_from_plain(*move))};
}

// Walks a strategy's entries in key order. Python calls next() with the GIL
// held, so one iterator is never advanced by two threads at once.
class CoreStrategyIterator {
public:
    CoreStrategyIterator(std::shared_ptr<Handle> handle, tbf::storage::StrategyReader reader,
                         tbf::storage::StrategyIterator it)
        : handle_(std::move(handle)), reader_(std::move(reader)), it_(std::move(it)) {
        it_.seek_to_first();
    }

    py::tuple next() {
        handle_->use();  // raises once the tablebase is closed
        if (!it_.valid()) {
            if (!it_.status().ok()) raise_status(tbf::probe::probe_status(it_.status()));
            throw py::stop_iteration();
        }
        auto entry = decode_entry(it_.key(), it_.value());
        if (!entry.ok()) {
            raise_status(tbf::corruption("strategy '" + reader_.info().spec.name +
                                         "': " + entry.status().message()));
        }
        it_.next();
        return py::make_tuple(entry->first, entry->second);
    }

private:
    std::shared_ptr<Handle> handle_;
    tbf::storage::StrategyReader reader_;  // keeps the strategy's view alive
    tbf::storage::StrategyIterator it_;
};

class CoreStrategy {
public:
    CoreStrategy(std::shared_ptr<Handle> handle, tbf::storage::StrategyReader reader)
        : handle_(std::move(handle)), reader_(std::move(reader)) {
        auto variant = tbf::parse_variant(reader_.info().spec.variant);
        if (!variant) {
            raise_status(tbf::corruption("strategy '" + reader_.info().spec.name +
                                         "' has unknown variant '" +
                                         reader_.info().spec.variant + "'"));
        }
        variant_ = *variant;
        if (reader_.info().spec.entry_encoding != tbf::storage::kPositionMoveEncoding) {
            raise_status(tbf::corruption("strategy '" + reader_.info().spec.name +
                                         "' has entry encoding '" +
                                         reader_.info().spec.entry_encoding + "'"));
        }
    }

    py::tuple info() const { return strategy_tuple(reader_.info()); }

    // The stored move (uci) for the position, or None when it is no entry.
    std::optional<std::string> move(const std::string& fen) const {
        handle_->use();
        tbf::Status status;
        std::optional<std::string> uci;
        {
            py::gil_scoped_release release;
            auto pos = tbf::parse_fen(fen, variant_);
            if (!pos.ok()) {
                status = pos.status();
            } else {
                auto stored = reader_.get(tbf::probe::position_key(*pos));
                if (!stored.ok()) {
                    status = tbf::probe::probe_status(stored.status());
                } else if (stored->has_value()) {
                    auto move = tbf::storage::decode_move_value(**stored);
                    if (move.ok()) uci = tbf::to_uci(tbf::probe::move_from_plain(*move));
                    else status = tbf::probe::probe_status(move.status());
                }
            }
        }
        if (!status.ok()) raise_status(status);
        return uci;
    }

    CoreStrategyIterator iter() const {
        handle_->use();
        auto it = reader_.iterator();
        if (!it.ok()) raise_status(tbf::probe::probe_status(it.status()));
        return CoreStrategyIterator(handle_, reader_, std::move(*it));
    }

private:
    std::shared_ptr<Handle> handle_;
    tbf::storage::StrategyReader reader_;
    tbf::VariantId variant_ = tbf::VariantId::Antichess;
};

py::list CoreTablebase::strategies() const {
    const auto tablebase = handle_->use();
    auto listed = tablebase->database().list_strategies();
    if (!listed.ok()) raise_status(tbf::probe::probe_status(listed.status()));
    py::list out;
    for (const auto& s : *listed) out.append(strategy_tuple(s));
    return out;
}

CoreStrategy CoreTablebase::strategy(const std::string& name) const {
    const auto tablebase = handle_->use();
    auto reader = tablebase->database().open_strategy(name);
    if (!reader.ok()) {
        if (reader.status().code() == tbf::StatusCode::NotFound) {
            PyErr_SetString(PyExc_KeyError, ("no strategy '" + name + "' in the database").c_str());
            throw py::error_already_set();
        }
        raise_status(tbf::probe::probe_status(reader.status()));
    }
    return CoreStrategy(handle_, std::move(*reader));
}

}  // namespace

PYBIND11_MODULE(_core, m) {
    m.doc() = "tbforge's C++ probe API; use the package tbforge, not this module.";

    // MissingTableError is a KeyError, as python-chess's own is.
    g_missing_table_error = PyErr_NewExceptionWithDoc(
        "tbforge.MissingTableError",
        "The table of the position, or of a position one move away, is not in the\n"
        "database; the message names it (\"missing table antichess/KQRvK\").",
        PyExc_KeyError, nullptr);
    g_corrupt_table_error = PyErr_NewExceptionWithDoc(
        "tbforge.CorruptTableError",
        "Damaged data: a checksum mismatch, a truncated file, a record that does\n"
        "not decode. No value is ever returned from damaged data.",
        PyExc_Exception, nullptr);
    if (!g_missing_table_error || !g_corrupt_table_error) throw py::error_already_set();
    m.add_object("MissingTableError", py::handle(g_missing_table_error));
    m.add_object("CorruptTableError", py::handle(g_corrupt_table_error));

    py::class_<CoreStrategyIterator>(m, "StrategyIterator")
        .def("__iter__", [](py::object self) { return self; })
        .def("__next__", &CoreStrategyIterator::next);

    py::class_<CoreStrategy>(m, "Strategy")
        .def("info", &CoreStrategy::info)
        .def("move", &CoreStrategy::move, py::arg("fen"))
        .def("iter", &CoreStrategy::iter);

    py::class_<CoreTablebase>(m, "Tablebase")
        .def(py::init<const std::string&, std::size_t>(), py::arg("path"), py::arg("cache_bytes"))
        .def("value", &CoreTablebase::value, py::arg("variant"), py::arg("fen"))
        .def("probe", &CoreTablebase::probe, py::arg("variant"), py::arg("fen"))
        .def("tables", &CoreTablebase::tables, py::arg("split") = false)
        .def("strategies", &CoreTablebase::strategies)
        .def("strategy", &CoreTablebase::strategy, py::arg("name"))
        .def("close", &CoreTablebase::close)
        .def_property_readonly("closed", &CoreTablebase::closed);

    m.attr("__version__") = tbf_version_string();
    m.attr("VARIANTS") = [] {
        py::list names;
        for (const auto& traits : tbf::kVariantTraits) names.append(std::string(traits.name));
        return names;
    }();
}
