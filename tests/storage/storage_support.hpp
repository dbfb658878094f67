#pragma once
// Shared by the storage tests and the storage_child helper program: scratch
// directories, synthetic tables whose every value is a known function of the
// slot, and child processes.

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tbforge/storage/database.hpp"
#include "tbforge/base/mix64.hpp"

namespace tbf::test {

// A fresh directory, removed with everything in it at scope exit.
class TempDir {
public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "tbf-storage-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) std::abort();
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string sub(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// prefix + decimal n (spelled out so that GCC 12 does not warn, PR 105329).
template <class N>
std::string numbered(std::string prefix, N n) {
    prefix += std::to_string(n);
    return prefix;
}

inline std::uint64_t scramble(std::uint64_t x) { return tbf::mix64(x + tbf::kGoldenGamma); }

// Value of `slot` in synthetic table `seed`: even seeds give runs of small
// values (compressible), odd seeds noise (stored raw).
inline std::uint32_t synthetic_value(std::uint64_t seed, std::uint64_t slot, std::uint32_t width) {
    const std::uint64_t mask = width == 4 ? 0xFFFFFFFFULL : (1ULL << (8 * width)) - 1;
    if (seed % 2 == 0) {
        const std::uint64_t run = slot / (3 + seed % 29);
        return static_cast<std::uint32_t>((scramble(run ^ (seed << 40)) % 11 + slot % 3) & mask);
    }
    return static_cast<std::uint32_t>(scramble(slot ^ (seed << 40)) & mask);
}

// Appends values [first, first + count) of synthetic table `seed`.
inline Status append_synthetic(storage::TableWriter& writer, std::uint64_t seed,
                                        std::uint64_t first, std::uint64_t count) {
    const std::uint32_t width = writer.spec().value_width;
    if (width == 1) {
        std::vector<std::uint8_t> v(count);
        for (std::uint64_t i = 0; i < count; ++i) {
            v[i] = static_cast<std::uint8_t>(synthetic_value(seed, first + i, 1));
        }
        return writer.append(std::span<const std::uint8_t>(v));
    }
    if (width == 2) {
        std::vector<std::uint16_t> v(count);
        for (std::uint64_t i = 0; i < count; ++i) {
            v[i] = static_cast<std::uint16_t>(synthetic_value(seed, first + i, 2));
        }
        return writer.append(std::span<const std::uint16_t>(v));
    }
    std::vector<std::uint32_t> v(count);
    for (std::uint64_t i = 0; i < count; ++i) v[i] = synthetic_value(seed, first + i, 4);
    return writer.append(std::span<const std::uint32_t>(v));
}

inline storage::TableSpec synthetic_spec(const std::string& name, std::uint64_t slots,
                                         std::uint32_t width) {
    storage::TableSpec spec;
    spec.name = name;
    spec.variant = "antichess";
    spec.material = "KQvK";
    spec.slot_count = slots;
    spec.value_width = width;
    spec.value_encoding = "synthetic/1";
    spec.generator_version = "storage-test";
    return spec;
}

// Writes a whole synthetic table in uneven chunks (so that appends straddle
// block boundaries) and commits it.
inline Status write_synthetic(storage::Database& db, const std::string& name,
                                       std::uint64_t slots, std::uint32_t width, std::uint64_t seed,
                                       const storage::TableWriteOptions& options = {},
                                       const storage::TableStatistics& stats = {}) {
    auto writer = db.create_table(synthetic_spec(name, slots, width), options);
    if (!writer.ok()) return writer.status();
    constexpr std::uint64_t kChunk = 10007;
    for (std::uint64_t first = 0; first < slots; first += kChunk) {
        const std::uint64_t n = std::min(kChunk, slots - first);
        if (auto s = append_synthetic(*writer, seed, first, n); !s.ok()) return s;
    }
    return writer->commit(stats);
}

// Number of slots whose value differs from the synthetic one (reading every
// block once); an error if a read fails.
inline Result<std::uint64_t> count_mismatches(const storage::TableReader& reader,
                                                       std::uint64_t seed) {
    const auto& info = reader.info();
    std::uint64_t bad = 0;
    for (std::uint64_t b = 0; b < info.block_count; ++b) {
        auto block = reader.read_block(b, storage::CacheUse::Bypass);
        if (!block.ok()) return block.status();
        const storage::Block& blk = **block;
        for (std::uint32_t i = 0; i < blk.size(); ++i) {
            if (blk.value(i) !=
                synthetic_value(seed, blk.first_slot() + i, info.spec.value_width)) {
                ++bad;
            }
        }
    }
    return bad;
}

// Slots whose value get() returns wrong, over the first and last slot of
// every block and every `stride`-th slot between: with the cache off each
// get() decodes and checksums its whole block, so reading every slot this
// way costs a block per slot (count_mismatches reads each block once).
inline Result<std::uint64_t> count_single_read_mismatches(const storage::TableReader& reader,
                                                          std::uint64_t seed, std::uint64_t stride = 61) {
    const auto& info = reader.info();
    const std::uint64_t per_block = info.slots_per_block;
    std::uint64_t bad = 0;
    for (std::uint64_t slot = 0; slot < info.spec.slot_count; ++slot) {
        const std::uint64_t offset = slot % per_block;
        const bool block_edge = offset == 0 || offset + 1 == per_block || slot + 1 == info.spec.slot_count;
        if (!block_edge && slot % stride != 0) continue;
        auto v = reader.get(slot);
        if (!v.ok()) return v.status();
        if (*v != synthetic_value(seed, slot, info.spec.value_width)) ++bad;
    }
    return bad;
}

#ifdef TBF_STORAGE_CHILD
// fork + exec of the storage_child helper; returns its pid.
inline pid_t spawn_child(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    static std::string program = TBF_STORAGE_CHILD;
    argv.push_back(program.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}
#endif

// Exit status of a finished child, or -signal if it was killed.
inline int wait_child(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1000;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return -WTERMSIG(status);
    return -1001;
}

}  // namespace tbf::test
