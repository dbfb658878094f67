// The records storage/ reads back from a database (storage/src/records.hpp,
// the base/record.hpp codec; docs/storage-format.md): table and strategy
// metadata, the format marker, the storage id counter, and the strategy
// entry codec (position keys, move values). Input: one byte choosing the
// decoder (bits 0-2) and two options, then the record:
// - bit 3 "reseal": the last 8 bytes are replaced by the XXH64 of the rest,
//   so that the fuzzer reaches the fields behind the trailer;
// - bit 4: the metadata's expected name is the one the record itself holds
//   (as when the catalogue key and the record agree), else a fixed name.
// Every decoder is strict: what it accepts must have a matching trailer and
// must encode back to exactly the same bytes.

#include <string>

#include "fuzz_support.hpp"
#include "records.hpp"
#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"
#include "tbforge/storage/position_key.hpp"

namespace {

namespace storage = tbf::storage;
namespace detail = tbf::storage::detail;

enum Decoder { kTableInfo, kStrategyInfo, kMarker, kNextId, kPositionKey, kMoveValue, kDecoders };

void reseal(std::string& record) {
    if (record.size() < tbf::kSealBytes) return;
    record.resize(record.size() - tbf::kSealBytes);
    tbf::seal(record);
}

// The first string of a metadata record (magic, version, then the name).
std::string name_in(const std::string& record) {
    if (record.size() < 8) return {};
    tbf::ByteReader r(std::string_view(record).substr(8));
    std::string name = r.string32();
    return r.failed() ? std::string() : name;
}

void check_sealed(const std::string& record, const char* what) {
    FUZZ_CHECK(tbf::unseal(record).ok(), std::string(what) + " accepted with a bad trailer");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const int decoder = (data[0] & 7) % kDecoders;
    const bool resealed = (data[0] & 8) != 0;
    const bool own_name = (data[0] & 16) != 0;
    std::string record(reinterpret_cast<const char*>(data + 1), size - 1);
    if (resealed && decoder <= kNextId) reseal(record);

    switch (decoder) {
        case kTableInfo: {
            const std::string name = own_name ? name_in(record) : "antichess/KQvK";
            storage::TableInfo info;
            if (!detail::decode_table_info(name, record, info).ok()) return 0;
            check_sealed(record, "table metadata");
            FUZZ_CHECK(info.spec.name == name, name);
            FUZZ_CHECK(detail::encode_table_info(info) == record,
                       "table metadata re-encodes differently");
            break;
        }
        case kStrategyInfo: {
            const std::string name = own_name ? name_in(record) : "krkb-draw";
            storage::StrategyInfo info;
            if (!detail::decode_strategy_info(name, record, info).ok()) return 0;
            check_sealed(record, "strategy metadata");
            FUZZ_CHECK(info.spec.name == name, name);
            FUZZ_CHECK(detail::encode_strategy_info(info) == record,
                       "strategy metadata re-encodes differently");
            break;
        }
        case kMarker: {
            std::uint32_t version = 0;
            if (!detail::decode_marker(record, version).ok()) return 0;
            check_sealed(record, "format marker");
            FUZZ_CHECK(detail::encode_marker(version) == record, "marker re-encodes differently");
            break;
        }
        case kNextId: {
            std::uint64_t next = 0;
            if (!detail::decode_next_id(record, next).ok()) return 0;
            check_sealed(record, "storage id counter");
            FUZZ_CHECK(detail::encode_next_id(next) == record, "id counter re-encodes differently");
            break;
        }
        case kPositionKey: {
            auto position = storage::decode_position_key(record);
            if (!position.ok()) {
                FUZZ_CHECK(position.status().code() == tbf::StatusCode::Corruption,
                           position.status().to_string());
                return 0;
            }
            auto again = storage::encode_position_key(*position);
            FUZZ_CHECK(again.ok() && *again == record, "position key re-encodes differently");
            break;
        }
        case kMoveValue: {
            auto move = storage::decode_move_value(record);
            if (!move.ok()) {
                FUZZ_CHECK(move.status().code() == tbf::StatusCode::Corruption,
                           move.status().to_string());
                return 0;
            }
            auto again = storage::encode_move_value(*move);
            FUZZ_CHECK(again.ok() && *again == record, "move value re-encodes differently");
            break;
        }
        default: break;
    }
    return 0;
}
