#pragma once
// The files of an out-of-core build (docs/generation.md, "Out-of-core"):
// one directory per table holding chunk files (the working words of a
// contiguous slot range, both sides to move), per-chunk
// auxiliary lists written once by the initial pass, per-chunk update buckets
// (append-only, in checksummed frames) and a manifest naming the last
// completed step. Every file except the buckets is written to a temporary
// name, synced and renamed, so a killed run leaves either the old or the new
// version; bucket files are cut back to the length the manifest recorded.
//
// Errors are thrown as a StatusError holding the Status to report: IoError
// when the file system refuses, Corruption for a damaged or truncated file.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "status_error.hpp"

namespace tbf::gen::ooc {

// Throws Corruption "damaged work file <file> (<why>)".
[[noreturn]] void damaged(const std::string& file, std::string_view why);

// Bytes moved through the work files (what the benchmark reports).
struct IoCounters {
    std::uint64_t read = 0;
    std::uint64_t written = 0;
};

// One table's work directory.
class WorkDir {
public:
    // durable = false skips every fsync: a killed process still leaves
    // consistent files, a power loss may not (tests, scratch disks).
    WorkDir(std::string path, IoCounters& io, bool durable = true);

    const std::string& path() const { return path_; }
    std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

    // Creates the directory (and its parents) if missing.
    void create() const;
    // Removes the directory and everything in it.
    void remove_all() const;
    bool exists(std::string_view name) const;
    void remove(std::string_view name) const;
    // Every file name in the directory.
    std::vector<std::string> list() const;

    // Whole-file write through a temporary name, fsync and rename; the
    // directory itself is synced unless the caller leaves that to a later
    // write_atomic in the same directory.
    void write_atomic(std::string_view name, std::span<const std::uint8_t> bytes,
                      bool sync_directory = true) const;
    // The same for a file made of several pieces, written in order without
    // first copying them into one buffer.
    void write_atomic(std::string_view name, std::span<const std::span<const std::uint8_t>> parts,
                      bool sync_directory = true) const;
    // Whole-file read; StatusError if missing or unreadable.
    std::vector<std::uint8_t> read(std::string_view name) const;
    // `size` bytes from `offset`; StatusError if the file is shorter.
    void read_at(std::string_view name, std::uint64_t offset, std::span<std::uint8_t> out) const;
    // Appends to a file (created if missing); not synced until sync().
    void append(std::string_view name, std::span<const std::uint8_t> bytes) const;
    // Makes appended data durable.
    void sync(std::string_view name) const;
    // Makes everything written on the directory's file system durable: one
    // call instead of an fsync per file when a step touched many buckets.
    void sync_all() const;
    // Cuts a file back to `size` bytes; StatusError if it is shorter (a file
    // the manifest counts on has lost data). A missing file counts as empty.
    void truncate(std::string_view name, std::uint64_t size) const;
    std::uint64_t size(std::string_view name) const;
    // Bytes free for this process on the directory's file system.
    std::uint64_t free_bytes() const;

private:
    std::string path_;
    IoCounters& io_;
    bool durable_;
};

// ---- Chunk state ----

// Working state of the slots [first, first + count) of both sides to move:
// one 16-bit word per slot and side, the state word of table_moves.hpp: a
// final value code, or an open position's move counter with its symmetric
// flag. Two bytes per position keep a 6-unit table's chunk files
// within a single disk.
struct ChunkState {
    std::array<std::vector<std::uint16_t>, 2> words;

    std::uint64_t count() const { return words[0].size(); }
    void resize(std::uint64_t count) {
        for (auto& side : words) side.assign(count, 0);
    }
};

// Header (64 bytes) + words of White + words of Black; each section has its
// own checksum so that one side can be read alone.
void write_chunk(const WorkDir& dir, std::string_view name, std::uint64_t chunk, const ChunkState& state);
void read_chunk(const WorkDir& dir, std::string_view name, std::uint64_t chunk, std::uint64_t count,
                ChunkState& state);
// The words of one side only (section 0 White, 1 Black).
void read_chunk_words(const WorkDir& dir, std::string_view name, std::uint64_t chunk, std::uint64_t count,
                      int side, std::vector<std::uint16_t>& out);

// Lists fixed by the initial pass, in local packed ids (local index * 2 +
// side), sorted: wins worth two plies through an en-passant double push,
// losses whose longest known move takes two plies, and positions with a
// non-trivial stabiliser (id << 3 | stabiliser size).
struct ChunkAux {
    std::vector<std::uint32_t> late_wins;
    std::vector<std::uint32_t> late_losses;
    std::vector<std::uint64_t> symmetric;
};
void write_aux(const WorkDir& dir, std::string_view name, const ChunkAux& aux);
ChunkAux read_aux(const WorkDir& dir, std::string_view name);

// ---- Updates ----

// One visit from a decided child to a predecessor in another chunk.
struct Update {
    std::uint32_t slot;     // local packed id of the predecessor in its chunk
    std::uint16_t level;    // distance of the child: the level pass that sent it
    std::uint8_t repeats;   // un-moves from the child into this predecessor
    std::uint8_t child;     // kLossChild | stabiliser size of the child
};
static_assert(sizeof(Update) == 8);
inline constexpr std::uint8_t kLossChild = 0x80;

// Sorts by (level, slot, repeats, child) in place: a most-significant-digit
// radix sort over the bits where the keys differ. A 6-unit table's flush
// sorts 1e8 updates; comparison sorting them took most of a level pass.
void sort_updates(std::span<Update> updates);
// The checksummed frames of `updates`, one per level: sorted by slot
// (updates of one level commute) and delta-coded, about two bytes an update
// instead of eight, which keeps the buckets of a 6-unit table's big levels
// on the disk. Reorders `updates`.
std::vector<std::uint8_t> encode_update_frames(std::vector<Update>& updates);
// Appends encode_update_frames(updates) to a bucket file; returns the bytes
// appended.
std::uint64_t append_updates(const WorkDir& dir, std::string_view name, std::vector<Update>& updates);
// Decodes the frame at `offset` of a bucket file whose valid length is
// `length` into `out`; returns the offset after it. StatusError if the frame
// is truncated or damaged.
std::uint64_t read_update_frame(const WorkDir& dir, std::string_view name, std::uint64_t offset,
                                std::uint64_t length, std::vector<Update>& out, std::vector<std::uint8_t>& scratch);
// The same on bucket bytes held in memory (the first `length` bytes of a
// file named `file` in errors); what tests and fuzzing call.
std::uint64_t decode_update_frame(std::span<const std::uint8_t> bucket, std::uint64_t offset,
                                  const std::string& file, std::vector<Update>& out);
// Reads the frames of a bucket file's first `length` bytes one at a time,
// calling `apply` with each frame's updates (in the order they were sent,
// level by level).
template <class F>
void for_each_update_frame(const WorkDir& dir, std::string_view name, std::uint64_t length, F&& apply) {
    std::vector<Update> updates;
    std::vector<std::uint8_t> scratch;
    for (std::uint64_t at = 0; at < length;) {
        at = read_update_frame(dir, name, at, length, updates, scratch);
        apply(std::span<const Update>(updates));
    }
}

// ---- Manifest ----

// Sparse: the level passes run in memory on the positions still open (see
// out_of_core.hpp); WriteBack: their values go back into the chunk files.
enum class Phase : std::uint8_t { Initial = 0, Levels = 1, Finished = 2, Sparse = 3, WriteBack = 4 };

struct ChunkEntry {
    std::uint64_t generation = 0;     // chunk-<c>.<generation> holds the state; 0: not written yet
    std::uint64_t bucket_bytes = 0;   // valid bytes of bucket-<c>
    std::uint16_t max_code = 0;       // largest final value code in the chunk
    std::uint64_t late_wins = 0;      // late wins not yet claimed
    std::map<int, std::uint64_t> pending;  // level -> positions decided there, not yet visited
    std::array<std::uint64_t, 2> tracked{};  // per side: positions the sparse phase holds
};

struct Manifest {
    static constexpr std::uint32_t kFormat = 3;
    std::uint32_t format = kFormat;  // of the file read; an older one is not resumed
    std::string generator_version;
    std::string table;
    std::uint64_t index_size = 0;   // slots per side to move
    std::uint64_t chunk_slots = 0;  // slots per chunk (the last one may be shorter)
    Phase phase = Phase::Initial;
    int level = 0;                  // level pass in progress (Phase::Levels)
    std::uint64_t next_chunk = 0;   // first chunk of that pass (or of the initial pass) not done
    std::uint64_t valid_positions = 0;
    std::uint64_t passes = 0;       // passes completed (the initial one included)
    std::uint64_t updates_local = 0;
    std::uint64_t updates_cross = 0;
    IoCounters io;                  // bytes moved by earlier steps, runs before a restart included
    std::vector<ChunkEntry> chunks;
    std::uint64_t undecided = 0;    // valid positions not decided yet (after the initial pass)
    int sparse_level = -1;          // the level pass the sparse phase began with, -1 before it
    std::uint64_t sparse_words = 0;     // entries of the sparse words file of `level`
    std::uint64_t sparse_checksum = 0;  // its XXH64

    std::uint64_t chunk_count() const { return chunks.size(); }
};

inline constexpr std::string_view kManifestName = "manifest";

void write_manifest(const WorkDir& dir, const Manifest& manifest);
// nullopt if the directory holds no manifest; StatusError if it is damaged.
std::optional<Manifest> read_manifest(const WorkDir& dir);
// The manifest record itself, as write_manifest stores it and read_manifest
// checks it; `file` names it in errors (StatusError, Corruption).
std::string encode_manifest(const Manifest& manifest);
Manifest decode_manifest(std::span<const std::uint8_t> record, const std::string& file);

}  // namespace tbf::gen::ooc
