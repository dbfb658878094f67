#include "work_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <tuple>

#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"

namespace tbf::gen::ooc {

void damaged(const std::string& file, std::string_view why) {
    throw StatusError(corruption("damaged work file " + file + " (" + std::string(why) + ")"));
}

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const std::string& file) {
    throw StatusError(io_error(what + " " + file + ": " + std::strerror(errno)));
}

class Fd {
public:
    Fd(const std::string& file, int flags, mode_t mode = 0644) : file_(file), fd_(::open(file.c_str(), flags, mode)) {
        if (fd_ < 0) fail("cannot open", file);
    }
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    void write_all(const std::uint8_t* data, std::size_t n) {
        while (n > 0) {
            const ssize_t w = ::write(fd_, data, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) fail("cannot write", file_);
            data += w;
            n -= static_cast<std::size_t>(w);
        }
    }
    // False if the file ends first.
    bool read_all_at(std::uint8_t* data, std::size_t n, std::uint64_t offset) {
        while (n > 0) {
            const ssize_t r = ::pread(fd_, data, n, static_cast<off_t>(offset));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) fail("cannot read", file_);
            if (r == 0) return false;
            data += r;
            n -= static_cast<std::size_t>(r);
            offset += static_cast<std::uint64_t>(r);
        }
        return true;
    }
    void sync() {
        if (::fsync(fd_) != 0) fail("cannot sync", file_);
    }
    int get() const { return fd_; }

private:
    std::string file_;
    int fd_;
};

void sync_directory(const std::string& dir) {
    Fd fd(dir, O_RDONLY | O_DIRECTORY);
    fd.sync();
}

// The bytes of a record built by ByteWriter, for WorkDir's writes.
std::span<const std::uint8_t> bytes_of(std::string_view record) {
    return {reinterpret_cast<const std::uint8_t*>(record.data()), record.size()};
}

// What a sealed record holds before its trailer; Corruption naming `file`
// if the trailer does not match.
std::string_view unsealed(std::span<const std::uint8_t> record, const std::string& file) {
    auto payload = unseal(std::string_view(reinterpret_cast<const char*>(record.data()), record.size()));
    if (!payload.ok()) damaged(file, payload.status().message());
    return *payload;
}

// The fields of a sealed record after its magic; Corruption naming `file` if
// the trailer does not match or the magic is not `magic` (it is not a `what`).
ByteReader open_record(std::span<const std::uint8_t> record, const std::string& file, const char (&magic)[8],
                       const char* what) {
    ByteReader r(unsealed(record, file));
    if (r.bytes(8) != std::string_view(magic, 8)) damaged(file, std::string("not ") + what);
    return r;
}

// A reader that has consumed a whole record, or Corruption naming `file`.
void expect_done(const ByteReader& r, const std::string& file) {
    if (r.failed()) damaged(file, "truncated");
    if (!r.done()) damaged(file, "trailing bytes");
}

// The 16-bit words of a chunk section are stored little-endian; on a
// little-endian host that is their memory, written and read without a copy.
constexpr bool kWordsAsInMemory = std::endian::native == std::endian::little;

constexpr char kChunkMagic[8] = {'T', 'B', 'F', 'C', 'H', 'N', 'K', '2'};
constexpr char kAuxMagic[8] = {'T', 'B', 'F', 'A', 'U', 'X', '0', '1'};
constexpr char kManifestMagic[8] = {'T', 'B', 'F', 'M', 'A', 'N', '0', '1'};
constexpr std::uint32_t kFrameMagic = 0x5A464254;  // "TBFZ"
constexpr std::size_t kChunkHeaderBytes = 64;

struct ChunkHeader {
    std::uint64_t chunk = 0;
    std::uint64_t count = 0;
    std::array<std::uint64_t, 2> sums{};
};

ChunkHeader read_chunk_header(const WorkDir& dir, std::string_view name, std::uint64_t chunk,
                              std::uint64_t count) {
    std::array<std::uint8_t, kChunkHeaderBytes> raw{};
    dir.read_at(name, 0, raw);
    const std::string file = dir.file(name);
    ByteReader r = open_record(raw, file, kChunkMagic, "a chunk file");
    ChunkHeader h;
    h.chunk = r.u64();
    h.count = r.u64();
    h.sums = {r.u64(), r.u64()};
    if (h.chunk != chunk || h.count != count) damaged(file, "belongs to another chunk");
    return h;
}

std::uint64_t section_offset(int side, std::uint64_t count) {
    return kChunkHeaderBytes + 2 * count * static_cast<std::uint64_t>(side);
}

}  // namespace

// ---- WorkDir ----

WorkDir::WorkDir(std::string path, IoCounters& io, bool durable)
    : path_(std::move(path)), io_(io), durable_(durable) {}

void WorkDir::create() const {
    std::error_code ec;
    fs::create_directories(path_, ec);
    if (ec) throw StatusError(io_error("cannot create work directory " + path_ + ": " + ec.message()));
}

void WorkDir::remove_all() const {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (ec) throw StatusError(io_error("cannot remove work directory " + path_ + ": " + ec.message()));
}

bool WorkDir::exists(std::string_view name) const { return ::access(file(name).c_str(), F_OK) == 0; }

void WorkDir::remove(std::string_view name) const {
    if (::unlink(file(name).c_str()) != 0 && errno != ENOENT) fail("cannot remove", file(name));
}

std::vector<std::string> WorkDir::list() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(path_, ec)) names.push_back(entry.path().filename().string());
    if (ec) throw StatusError(io_error("cannot list work directory " + path_ + ": " + ec.message()));
    return names;
}

void WorkDir::write_atomic(std::string_view name, std::span<const std::uint8_t> bytes, bool sync_directory_now) const {
    const std::span<const std::uint8_t> parts[1] = {bytes};
    write_atomic(name, parts, sync_directory_now);
}

void WorkDir::write_atomic(std::string_view name, std::span<const std::span<const std::uint8_t>> parts,
                           bool sync_directory_now) const {
    const std::string target = file(name);
    const std::string temp = target + ".tmp";
    {
        Fd fd(temp, O_WRONLY | O_CREAT | O_TRUNC);
        for (const auto& part : parts) {
            fd.write_all(part.data(), part.size());
            io_.written += part.size();
        }
        if (durable_) fd.sync();
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) fail("cannot rename", temp);
    if (durable_ && sync_directory_now) sync_directory(path_);
}

std::vector<std::uint8_t> WorkDir::read(std::string_view name) const {
    const std::string f = file(name);
    Fd fd(f, O_RDONLY);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) fail("cannot stat", f);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(st.st_size));
    if (!fd.read_all_at(bytes.data(), bytes.size(), 0)) damaged(f, "truncated");
    io_.read += bytes.size();
    return bytes;
}

void WorkDir::read_at(std::string_view name, std::uint64_t offset, std::span<std::uint8_t> out) const {
    const std::string f = file(name);
    Fd fd(f, O_RDONLY);
    if (!fd.read_all_at(out.data(), out.size(), offset)) damaged(f, "truncated");
    io_.read += out.size();
}

void WorkDir::append(std::string_view name, std::span<const std::uint8_t> bytes) const {
    Fd fd(file(name), O_WRONLY | O_CREAT | O_APPEND);
    fd.write_all(bytes.data(), bytes.size());
    io_.written += bytes.size();
}

void WorkDir::sync(std::string_view name) const {
    if (!durable_) return;
    Fd fd(file(name), O_WRONLY);
    fd.sync();
}

void WorkDir::sync_all() const {
    if (!durable_) return;
    Fd fd(path_, O_RDONLY | O_DIRECTORY);
    if (::syncfs(fd.get()) != 0) fail("cannot sync", path_);
}

void WorkDir::truncate(std::string_view name, std::uint64_t size) const {
    const std::string f = file(name);
    if (!exists(name)) {
        if (size == 0) return;
        damaged(f, "missing");
    }
    if (this->size(name) < size) damaged(f, "truncated");
    if (::truncate(f.c_str(), static_cast<off_t>(size)) != 0) fail("cannot truncate", f);
}

std::uint64_t WorkDir::free_bytes() const {
    struct statvfs st {};
    if (::statvfs(path_.c_str(), &st) != 0) fail("cannot query free space of", path_);
    return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

std::uint64_t WorkDir::size(std::string_view name) const {
    struct stat st {};
    if (::stat(file(name).c_str(), &st) != 0) return 0;
    return static_cast<std::uint64_t>(st.st_size);
}

// ---- Chunks ----

void write_chunk(const WorkDir& dir, std::string_view name, std::uint64_t chunk, const ChunkState& state) {
    const std::uint64_t count = state.count();
    // Header, then the sections straight from the state where the host's
    // order is the file's: no second copy of the chunk in memory.
    std::array<std::span<const std::uint8_t>, 3> parts;
    std::array<std::string, 2> converted;
    std::array<std::uint64_t, 2> sums{};
    for (std::size_t side = 0; side < 2; ++side) {
        const std::span<const std::uint16_t> words(state.words[side]);
        if constexpr (kWordsAsInMemory) {
            parts[side + 1] = {reinterpret_cast<const std::uint8_t*>(words.data()), words.size_bytes()};
        } else {
            ByteWriter(converted[side]).array(words);
            parts[side + 1] = bytes_of(converted[side]);
        }
        sums[side] = xxh64(parts[side + 1]);
    }
    std::string header;
    ByteWriter w(header);
    w.bytes(std::string_view(kChunkMagic, 8));
    w.u64(chunk);
    w.u64(count);
    w.u64(sums[0]);
    w.u64(sums[1]);
    w.u64(0);  // reserved
    w.u64(0);
    w.seal();
    parts[0] = bytes_of(header);
    // The manifest's rename syncs the directory before anything names this file.
    dir.write_atomic(name, parts, false);
}

namespace {

void read_side(const WorkDir& dir, std::string_view name, const ChunkHeader& h, std::uint64_t count, int side,
               std::uint16_t* out) {
    const std::span<std::uint8_t> bytes(reinterpret_cast<std::uint8_t*>(out), 2 * count);
    dir.read_at(name, section_offset(side, count), bytes);
    if (xxh64(std::span<const std::uint8_t>(bytes)) != h.sums[static_cast<std::size_t>(side)]) {
        damaged(dir.file(name), "checksum mismatch");
    }
    if constexpr (!kWordsAsInMemory) {
        for (std::uint64_t k = 0; k < count; ++k) {
            out[k] = get_le<std::uint16_t>(reinterpret_cast<const char*>(bytes.data() + 2 * k));
        }
    }
}

}  // namespace

void read_chunk(const WorkDir& dir, std::string_view name, std::uint64_t chunk, std::uint64_t count,
                ChunkState& state) {
    const ChunkHeader h = read_chunk_header(dir, name, chunk, count);
    for (int side = 0; side < 2; ++side) {
        auto& words = state.words[static_cast<std::size_t>(side)];
        words.resize(count);
        read_side(dir, name, h, count, side, words.data());
    }
}

void read_chunk_words(const WorkDir& dir, std::string_view name, std::uint64_t chunk, std::uint64_t count,
                      int side, std::vector<std::uint16_t>& out) {
    const ChunkHeader h = read_chunk_header(dir, name, chunk, count);
    out.resize(count);
    read_side(dir, name, h, count, side, out.data());
}

void write_aux(const WorkDir& dir, std::string_view name, const ChunkAux& aux) {
    std::string record;
    ByteWriter w(record);
    w.bytes(std::string_view(kAuxMagic, 8));
    w.u64(aux.late_wins.size());
    w.u64(aux.late_losses.size());
    w.u64(aux.symmetric.size());
    w.array(std::span<const std::uint32_t>(aux.late_wins));
    w.array(std::span<const std::uint32_t>(aux.late_losses));
    w.array(std::span<const std::uint64_t>(aux.symmetric));
    w.seal();
    dir.write_atomic(name, bytes_of(record), false);
}

ChunkAux read_aux(const WorkDir& dir, std::string_view name) {
    const std::string file = dir.file(name);
    const auto bytes = dir.read(name);
    ByteReader r = open_record(bytes, file, kAuxMagic, "an auxiliary chunk file");
    ChunkAux aux;
    const std::uint64_t wins = r.u64(), losses = r.u64(), symmetric = r.u64();
    if (wins > bytes.size() || losses > bytes.size() || symmetric > bytes.size()) damaged(file, "bad counts");
    aux.late_wins.resize(wins);
    aux.late_losses.resize(losses);
    aux.symmetric.resize(symmetric);
    r.array(std::span(aux.late_wins));
    r.array(std::span(aux.late_losses));
    r.array(std::span(aux.symmetric));
    expect_done(r, file);
    return aux;
}

// ---- Updates ----

namespace {

// Frame header: magic, update count, payload bytes, level, reserved, XXH64
// of the payload.
constexpr std::uint64_t kFrameHeaderBytes = 24;
// Per update: varint(slot delta << 2 | tag), then for kExplicit the repeats
// and child bytes. Nearly every update is one un-move from an asymmetric
// child.
enum FrameTag : std::uint64_t { kPlainWin = 0, kPlainLoss = 1, kExplicit = 2 };

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<std::uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(v));
}

}  // namespace

namespace {

std::uint64_t sort_key(const Update& u) {
    return std::uint64_t{u.level} << 48 | std::uint64_t{u.slot} << 16 | std::uint64_t{u.repeats} << 8 | u.child;
}

// Small ranges: a comparison sort in cache.
constexpr std::size_t kRadixMinimum = 256;

void radix_sort(Update* first, Update* last) {
    const auto n = static_cast<std::size_t>(last - first);
    auto by_key = [](const Update& a, const Update& b) { return sort_key(a) < sort_key(b); };
    if (n <= kRadixMinimum) {
        std::sort(first, last, by_key);
        return;
    }
    const std::uint64_t base = sort_key(*first);
    std::uint64_t differ = 0;
    for (const Update* u = first; u != last; ++u) differ |= sort_key(*u) ^ base;
    if (differ == 0) return;
    // The digit is the highest eight bits where keys differ: 256 bins keep
    // the bins' write positions in cache while updates are swapped home.
    constexpr int kDigitBits = 8;
    constexpr std::size_t bins = std::size_t{1} << kDigitBits;
    const int shift = std::max(0, static_cast<int>(std::bit_width(differ)) - kDigitBits);
    auto digit = [&](const Update& u) { return static_cast<std::size_t>((sort_key(u) >> shift) & (bins - 1)); };
    std::array<std::size_t, bins + 1> head{};
    for (const Update* u = first; u != last; ++u) ++head[digit(*u) + 1];
    for (std::size_t b = 0; b < bins; ++b) head[b + 1] += head[b];
    std::array<std::size_t, bins> end{};
    std::array<std::size_t, bins> next{};
    std::copy(head.begin() + 1, head.end(), end.begin());
    std::copy(head.begin(), head.end() - 1, next.begin());
    // In place: each misplaced update is carried along its cycle of bins.
    for (std::size_t b = 0; b < bins; ++b) {
        while (next[b] < end[b]) {
            Update carried = first[next[b]];
            std::size_t d = digit(carried);
            while (d != b) {
                std::swap(carried, first[next[d]++]);
                d = digit(carried);
            }
            first[next[b]++] = carried;
        }
    }
    for (std::size_t b = 0; b < bins; ++b) {
        if (end[b] - head[b] > 1) radix_sort(first + head[b], first + end[b]);
    }
}

}  // namespace

void sort_updates(std::span<Update> updates) { radix_sort(updates.data(), updates.data() + updates.size()); }

std::vector<std::uint8_t> encode_update_frames(std::vector<Update>& updates) {
    sort_updates(updates);
    std::vector<std::uint8_t> frames;
    std::vector<std::uint8_t> payload;
    std::string header;
    for (std::size_t at = 0; at < updates.size();) {
        const std::uint16_t level = updates[at].level;
        std::size_t end = at;
        std::uint32_t previous = 0;
        payload.clear();
        // A frame's count and payload length must fit 32 bits.
        for (; end < updates.size() && updates[end].level == level && end - at < (1u << 28); ++end) {
            const Update& u = updates[end];
            const std::uint64_t delta = u.slot - previous;
            previous = u.slot;
            if (u.repeats == 1 && (u.child & 0x7F) == 1) {
                put_varint(payload, delta << 2 | ((u.child & kLossChild) ? kPlainLoss : kPlainWin));
            } else {
                put_varint(payload, delta << 2 | kExplicit);
                payload.push_back(u.repeats);
                payload.push_back(u.child);
            }
        }
        header.clear();
        ByteWriter w(header);
        w.u32(kFrameMagic);
        w.u32(static_cast<std::uint32_t>(end - at));
        w.u32(static_cast<std::uint32_t>(payload.size()));
        w.u32(level);
        w.u64(xxh64(payload));
        frames.insert(frames.end(), header.begin(), header.end());
        frames.insert(frames.end(), payload.begin(), payload.end());
        at = end;
    }
    return frames;
}

std::uint64_t append_updates(const WorkDir& dir, std::string_view name, std::vector<Update>& updates) {
    const auto frames = encode_update_frames(updates);
    if (!frames.empty()) dir.append(name, frames);
    return frames.size();
}

namespace {

struct FrameHeader {
    std::uint32_t count = 0;
    std::uint32_t bytes = 0;  // of the payload
    std::uint16_t level = 0;
    std::uint64_t checksum = 0;
};

// The header of the frame at `offset` of a bucket whose valid length is
// `length`, once it fits there with its payload.
FrameHeader parse_frame_header(std::span<const std::uint8_t> raw, std::uint64_t offset,
                               std::uint64_t length, const std::string& file) {
    ByteReader header(raw);
    const std::uint32_t magic = header.u32(), count = header.u32(), bytes = header.u32(), level = header.u32();
    const std::uint64_t checksum = header.u64();
    if (magic != kFrameMagic || level > 0xFFFF) damaged(file, "bad update frame");
    if (length - offset - kFrameHeaderBytes < bytes) damaged(file, "truncated update frame");
    // Every update takes a payload byte at least: a larger count is damage,
    // and must not size the output (up to 32 GiB) before the payload says so.
    if (count > bytes) damaged(file, "update count exceeds the payload");
    return {count, bytes, static_cast<std::uint16_t>(level), checksum};
}

// The updates of a frame whose payload matched the header's checksum.
void decode_frame_payload(std::span<const std::uint8_t> payload, const FrameHeader& h, const std::string& file,
                          std::vector<Update>& out) {
    if (xxh64(payload) != h.checksum) damaged(file, "update frame checksum mismatch");
    out.resize(h.count);
    std::size_t at = 0;
    std::uint64_t slot = 0;
    for (std::uint32_t k = 0; k < h.count; ++k) {
        std::uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            if (at == payload.size() || shift > 63) damaged(file, "bad update frame");
            const std::uint8_t byte = payload[at++];
            v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
            if (!(byte & 0x80)) break;
        }
        slot += v >> 2;
        if (slot > 0xFFFFFFFFu) damaged(file, "bad update frame");
        Update& u = out[k];
        u.slot = static_cast<std::uint32_t>(slot);
        u.level = h.level;
        switch (v & 3) {
            case kPlainWin: u.repeats = 1, u.child = 1; break;
            case kPlainLoss: u.repeats = 1, u.child = kLossChild | 1; break;
            case kExplicit:
                if (payload.size() - at < 2) damaged(file, "bad update frame");
                u.repeats = payload[at];
                u.child = payload[at + 1];
                at += 2;
                break;
            default: damaged(file, "bad update frame");
        }
    }
    if (at != payload.size()) damaged(file, "bad update frame");
}

}  // namespace

std::uint64_t read_update_frame(const WorkDir& dir, std::string_view name, std::uint64_t offset,
                                std::uint64_t length, std::vector<Update>& out, std::vector<std::uint8_t>& scratch) {
    const std::string file = dir.file(name);
    if (offset > length || length - offset < kFrameHeaderBytes) damaged(file, "truncated update frame");
    std::array<std::uint8_t, kFrameHeaderBytes> raw{};
    dir.read_at(name, offset, raw);
    const FrameHeader h = parse_frame_header(raw, offset, length, file);
    scratch.resize(h.bytes);
    dir.read_at(name, offset + kFrameHeaderBytes, scratch);
    decode_frame_payload(scratch, h, file, out);
    return offset + kFrameHeaderBytes + h.bytes;
}

std::uint64_t decode_update_frame(std::span<const std::uint8_t> bucket, std::uint64_t offset,
                                  const std::string& file, std::vector<Update>& out) {
    const std::uint64_t length = bucket.size();
    if (offset > length || length - offset < kFrameHeaderBytes) damaged(file, "truncated update frame");
    const FrameHeader h = parse_frame_header(bucket.subspan(offset, kFrameHeaderBytes), offset, length, file);
    decode_frame_payload(bucket.subspan(offset + kFrameHeaderBytes, h.bytes), h, file, out);
    return offset + kFrameHeaderBytes + h.bytes;
}

// ---- Manifest ----

std::string encode_manifest(const Manifest& m) {
    std::string record;
    ByteWriter w(record);
    w.bytes(std::string_view(kManifestMagic, 8));
    w.u32(Manifest::kFormat);
    w.string64(m.generator_version);
    w.string64(m.table);
    w.u64(m.index_size);
    w.u64(m.chunk_slots);
    w.u64(static_cast<std::uint64_t>(m.phase));
    w.u64(static_cast<std::uint64_t>(m.level));
    w.u64(m.next_chunk);
    w.u64(m.valid_positions);
    w.u64(m.passes);
    w.u64(m.updates_local);
    w.u64(m.updates_cross);
    w.u64(m.io.read);
    w.u64(m.io.written);
    w.u64(m.chunks.size());
    for (const auto& c : m.chunks) {
        w.u64(c.generation);
        w.u64(c.bucket_bytes);
        w.u64(c.max_code);
        w.u64(c.late_wins);
        w.u64(c.pending.size());
        for (const auto& [level, count] : c.pending) {
            w.u64(static_cast<std::uint64_t>(level));
            w.u64(count);
        }
    }
    w.u64(m.undecided);
    w.u64(static_cast<std::uint64_t>(m.sparse_level + 1));
    w.u64(m.sparse_words);
    w.u64(m.sparse_checksum);
    for (const auto& c : m.chunks) {
        w.u64(c.tracked[0]);
        w.u64(c.tracked[1]);
    }
    w.seal();
    return record;
}

void write_manifest(const WorkDir& dir, const Manifest& m) {
    dir.write_atomic(kManifestName, bytes_of(encode_manifest(m)));
}

std::optional<Manifest> read_manifest(const WorkDir& dir) {
    if (!dir.exists(kManifestName)) return std::nullopt;
    return decode_manifest(dir.read(kManifestName), dir.file(kManifestName));
}

Manifest decode_manifest(std::span<const std::uint8_t> bytes, const std::string& file) {
    ByteReader r = open_record(bytes, file, kManifestMagic, "a manifest");
    // Levels are ints written as u64 (the sparse one plus 1): past INT_MAX is damage.
    const auto level_field = [&] {
        const std::uint64_t v = r.u64();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) damaged(file, "bad level");
        return static_cast<int>(v);
    };
    Manifest m;
    m.format = r.u32();
    if (m.format != 1 && m.format != Manifest::kFormat) damaged(file, "unknown manifest format");
    m.generator_version = r.string64();
    m.table = r.string64();
    m.index_size = r.u64();
    m.chunk_slots = r.u64();
    const std::uint64_t phase = r.u64();
    if (phase > static_cast<std::uint64_t>(Phase::WriteBack)) damaged(file, "bad phase");
    m.phase = static_cast<Phase>(phase);
    m.level = level_field();
    m.next_chunk = r.u64();
    m.valid_positions = r.u64();
    m.passes = r.u64();
    m.updates_local = r.u64();
    m.updates_cross = r.u64();
    m.io.read = r.u64();
    m.io.written = r.u64();
    const std::uint64_t chunks = r.u64();
    if (chunks > bytes.size()) damaged(file, "bad chunk count");
    m.chunks.resize(chunks);
    for (auto& c : m.chunks) {
        c.generation = r.u64();
        c.bucket_bytes = r.u64();
        c.max_code = static_cast<std::uint16_t>(r.u64());
        c.late_wins = r.u64();
        const std::uint64_t pending = r.u64();
        if (pending > bytes.size()) damaged(file, "bad level count");
        for (std::uint64_t k = 0; k < pending; ++k) {
            const int level = level_field();
            c.pending[level] = r.u64();
        }
    }
    if (m.format >= 2) {
        m.undecided = r.u64();
        m.sparse_level = level_field() - 1;
        m.sparse_words = r.u64();
        m.sparse_checksum = r.u64();
        for (auto& c : m.chunks) {
            c.tracked[0] = r.u64();
            c.tracked[1] = r.u64();
        }
    }
    expect_done(r, file);
    return m;
}

}  // namespace tbf::gen::ooc
