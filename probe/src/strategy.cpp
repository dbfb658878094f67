// Strategy entries between rules/ types and the storage codec, and the text
// export (docs/strategy.md).

#include "tbforge/probe/strategy.hpp"

#include <ostream>

#include "tbforge/rules/fen.hpp"
#include "tbforge/rules/uci.hpp"

namespace tbf::probe {

storage::PlainPosition plain_position(const Position& pos) {
    storage::PlainPosition plain;
    // rules/ numbers units 1 + colour * 8 + type, exactly the codec's unit codes.
    for (int sq = 0; sq < 64; ++sq) {
        plain.units[static_cast<std::size_t>(sq)] =
            static_cast<std::uint8_t>(pos.unit_on(static_cast<Square>(sq)));
    }
    plain.side_to_move = static_cast<std::uint8_t>(to_index(pos.side_to_move()));
    plain.ep_square = pos.ep_square() == kNoSquare ? storage::kNoEpSquare : pos.ep_square();
    return plain;
}

Position position_from_plain(const storage::PlainPosition& plain) {
    Position pos;
    for (int sq = 0; sq < 64; ++sq) {
        const std::uint8_t code = plain.units[static_cast<std::size_t>(sq)];
        if (code != storage::kEmptySquare)
            pos.put(static_cast<Square>(sq), static_cast<Unit>(code));
    }
    pos.set_side_to_move(plain.side_to_move == 0 ? Color::White : Color::Black);
    pos.set_ep_square(plain.ep_square == storage::kNoEpSquare ? kNoSquare : plain.ep_square);
    return pos;
}

storage::PlainMove plain_move(Move m) {
    // The codec's promotion code 1 + type is rules' Move bits 12..14 as well.
    return {m.from(), m.to(),
            static_cast<std::uint8_t>(m.is_promotion() ? to_index(m.promotion()) + 1 : 0)};
}

Move move_from_plain(const storage::PlainMove& m) {
    if (m.promotion == 0) return {m.from, m.to};
    return {m.from, m.to, static_cast<UnitType>(m.promotion - 1)};
}

std::string position_key(const Position& pos) {
    auto key = storage::encode_position_key(plain_position(pos));
    // A Position holds valid unit codes and squares by construction.
    return key.ok() ? std::move(key).value() : std::string();
}

std::string move_value_bytes(Move m) {
    auto value = storage::encode_move_value(plain_move(m));
    return value.ok() ? std::move(value).value() : std::string();
}

Result<std::uint64_t> export_strategy(const storage::Database& db, std::string_view name,
                                      std::ostream& out) {
    auto reader = db.open_strategy(name);
    if (!reader.ok()) {
        if (reader.status().code() == StatusCode::NotFound) {
            return not_found("no strategy '" + std::string(name) + "' in database " + db.path());
        }
        return probe_status(reader.status());
    }
    const storage::StrategySpec& spec = reader->info().spec;
    if (spec.entry_encoding != storage::kPositionMoveEncoding) {
        return corruption("strategy '" + spec.name + "' has entry encoding '" +
                                                  spec.entry_encoding + "', expected '" +
                                                  std::string(storage::kPositionMoveEncoding) +
                                                  "'");
    }
    out << "# tbforge strategy\n"
        << "# name: " << spec.name << '\n'
        << "# variant: " << spec.variant << '\n'
        << "# side: " << storage::side_name(spec.side) << '\n'
        << "# kind: " << storage::strategy_kind_name(spec.kind) << '\n';
    for (const std::string& root : spec.roots) out << "# root: " << root << '\n';
    out << "# entries: " << reader->info().entry_count << '\n';

    auto iterator = reader->iterator();
    if (!iterator.ok()) return probe_status(iterator.status());
    storage::StrategyIterator& it = *iterator;
    std::uint64_t written = 0;
    std::string line;
    for (it.seek_to_first(); it.valid(); it.next()) {
        auto plain = storage::decode_position_key(it.key());
        auto move = storage::decode_move_value(it.value());
        if (!plain.ok() || !move.ok()) {
            const Status& bad = !plain.ok() ? plain.status() : move.status();
            return corruption("strategy '" + spec.name + "' entry " +
                                                      std::to_string(written) + ": " +
                                                      bad.message());
        }
        line = to_fen(position_from_plain(*plain));
        line += '\t';
        line += to_uci(move_from_plain(*move));
        line += '\n';
        out << line;
        ++written;
    }
    if (!it.status().ok()) return probe_status(it.status());
    out.flush();
    if (!out) return io_error("cannot write the output");
    return written;
}

}  // namespace tbf::probe
