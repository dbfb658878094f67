// Helper process for the storage tests (started by fork + exec, so that it
// owns fresh RocksDB state): writes that the parent kills part-way, and
// readers running beside a writer in another process.
//
//   storage_child write <db> <name> <width> <seed> <fd> <blocks> <replace 0|1>
//       Writes a table with far more slots than it will ever reach; after
//       <blocks> blocks it writes one byte to <fd> and keeps writing until
//       killed.
//   storage_child churn <db> <fd> <first>
//       Commits tables churn-<first>, churn-<first + 2>, ... and replaces
//       churn-base in between, over and over; writes one byte to <fd> after
//       the first commit.
//   storage_child read <db> <name> <seed> <times>
//       <times> times: opens read-only and checks every value of a synthetic
//       table.
// Exit status: 0 success, 1 wrong values, 2 storage error, 3 usage.

#include <unistd.h>

#include <cstdio>
#include <string>

#include "storage_support.hpp"

namespace {

using namespace tbf;
using namespace tbf::storage;
using tbf::test::append_synthetic;
using tbf::test::synthetic_spec;

int fail(const Status& s) {
    std::fprintf(stderr, "storage_child: %s\n", s.to_string().c_str());
    return 2;
}

void signal_parent(int fd) {
    const char byte = 1;
    if (write(fd, &byte, 1) != 1) std::_Exit(4);
}

Result<Database> open_rw(const std::string& path) {
    DatabaseOptions o;
    o.mode = OpenMode::ReadWrite;
    return Database::open(path, o);
}

int write_forever(const std::string& path, const std::string& name, std::uint32_t width,
                  std::uint64_t seed, int fd, std::uint64_t signal_blocks, bool replace) {
    auto db = open_rw(path);
    if (!db.ok()) return fail(db.status());
    TableWriteOptions options;
    options.replace = replace;
    auto writer = db->create_table(synthetic_spec(name, std::uint64_t{1} << 40, width), options);
    if (!writer.ok()) return fail(writer.status());
    const std::uint64_t per_block = options.slots_per_block;
    for (std::uint64_t b = 0;; ++b) {
        if (Status s = append_synthetic(*writer, seed, b * per_block, per_block); !s.ok()) {
            return fail(s);
        }
        if (b + 1 == signal_blocks) signal_parent(fd);
    }
}

int churn(const std::string& path, int fd, std::uint64_t first) {
    auto db = open_rw(path);
    if (!db.ok()) return fail(db.status());
    for (std::uint64_t i = first;; ++i) {
        const std::uint64_t slots = 40000 + (i * 7919) % 90000;
        TableWriteOptions options;
        options.slots_per_block = 4096;
        std::string name = "churn-" + std::to_string(i);
        if (i % 2 == 1) {
            name = "churn-base";
            options.replace = true;
        }
        // The seed is the slot count, so the parent can check any version.
        if (Status s = tbf::test::write_synthetic(*db, name, slots, 2, slots, options); !s.ok()) {
            return fail(s);
        }
        if (i == first) signal_parent(fd);
    }
}

int read_all(const std::string& path, const std::string& name, std::uint64_t seed, int times) {
    for (int i = 0; i < times; ++i) {
        auto db = Database::open(path);
        if (!db.ok()) return fail(db.status());
        auto reader = db->open_table(name);
        if (!reader.ok()) return fail(reader.status());
        auto bad = tbf::test::count_mismatches(*reader, seed);
        if (!bad.ok()) return fail(bad.status());
        if (Status s = reader->verify(); !s.ok()) return fail(s);
        if (*bad != 0) return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // Never outlive a test that forgot us.
    alarm(300);
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 8 && a[0] == "write") {
        return write_forever(a[1], a[2], static_cast<std::uint32_t>(std::stoul(a[3])),
                             std::stoull(a[4]), std::stoi(a[5]), std::stoull(a[6]), a[7] == "1");
    }
    if (a.size() == 4 && a[0] == "churn") return churn(a[1], std::stoi(a[2]), std::stoull(a[3]));
    if (a.size() == 5 && a[0] == "read") {
        return read_all(a[1], a[2], std::stoull(a[3]), std::stoi(a[4]));
    }
    std::fprintf(stderr, "storage_child: bad arguments\n");
    return 3;
}
