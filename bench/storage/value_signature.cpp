// The value signature of a database (not run in CI): the XXH64 of its
// tables' wdl-dtc/1 values checksums in name order, each as 16 hex digits
// and a newline. A wdl-dtc/1 table gives its values checksum, a wdl-dtc/2
// table its counter `wdl-dtc/1.checksum` (the checksum its values would have
// as wdl-dtc/1), so two databases of the same tables have the same
// signature in either encoding exactly when every value is the same.
//
// Usage: value_signature DB

#include <cstdio>
#include <string>

#include "tbforge/base/xxh64.hpp"
#include "tbforge/probe/tablebase.hpp"

int main(int argc, char** argv) {
    using namespace tbf;
    if (argc != 2) {
        std::fprintf(stderr, "usage: value_signature DB\n");
        return 2;
    }
    auto db = storage::Database::open(argv[1]);
    if (!db.ok()) {
        std::fprintf(stderr, "value_signature: %s\n", db.status().to_string().c_str());
        return 3;
    }
    auto tables = db->list_tables();
    if (!tables.ok()) {
        std::fprintf(stderr, "value_signature: %s\n", tables.status().to_string().c_str());
        return 3;
    }
    Xxh64 signature;
    std::size_t count = 0;
    for (const storage::TableInfo& info : *tables) {
        std::uint64_t checksum = info.values_checksum;
        if (probe::is_compact_encoding(info.spec.value_encoding)) {
            // wdl-dtc/3, /4 and /5 tables keep the checksum of their values in
            // the rule's slot order apart from the one in their own.
            const std::string_view counter = probe::is_ordered_encoding(info.spec.value_encoding)
                                                 ? probe::kRuleOrderChecksumCounter
                                                 : probe::kResolvedChecksumCounter;
            bool found = false;
            for (const auto& c : info.statistics.counters) {
                if (c.name == counter) checksum = c.value, found = true;
            }
            if (!found) {
                std::fprintf(stderr, "value_signature: %s has no counter %s\n", info.spec.name.c_str(),
                             std::string(counter).c_str());
                return 3;
            }
        }
        char line[24];
        std::snprintf(line, sizeof line, "%016llx\n", static_cast<unsigned long long>(checksum));
        signature.update(std::string_view(line, 17));
        ++count;
    }
    std::printf("%zu tables, value signature %016llx\n", count,
                static_cast<unsigned long long>(signature.digest()));
    return 0;
}
