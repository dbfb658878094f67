// The update frames of an out-of-core bucket file (gen/src/work_files.hpp,
// decode_update_frame), read back frame by frame as a build's level pass
// does. Input: a byte whose bit 0 asks to "reseal" (every frame header that
// fits gets the XXH64 of its payload, so that the fuzzer reaches the
// delta-coded updates), then the bucket bytes. A damaged frame is a
// Corruption StatusError, nothing else; the updates of an accepted frame
// carry its level, come in slot order, and encode into frames that decode to
// the same updates.

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_support.hpp"
#include "tbforge/base/record.hpp"
#include "tbforge/base/xxh64.hpp"
#include "work_files.hpp"

namespace {

namespace ooc = tbf::gen::ooc;

constexpr std::size_t kHeaderBytes = 24;  // magic, count, payload bytes, level, XXH64

void reseal(std::vector<std::uint8_t>& bucket) {
    for (std::size_t at = 0; bucket.size() - at >= kHeaderBytes;) {
        const std::uint32_t bytes =
            tbf::get_le<std::uint32_t>(reinterpret_cast<const char*>(&bucket[at + 8]));
        if (bucket.size() - at - kHeaderBytes < bytes) return;
        const std::uint64_t sum =
            tbf::xxh64(std::span<const std::uint8_t>(bucket).subspan(at + kHeaderBytes, bytes));
        for (int i = 0; i < 8; ++i) bucket[at + 16 + i] = static_cast<std::uint8_t>(sum >> (8 * i));
        at += kHeaderBytes + bytes;
    }
}

auto key(const ooc::Update& u) { return std::tuple(u.level, u.slot, u.repeats, u.child); }

// Every frame of `bucket`; false at the first damaged one (Corruption, or
// the fuzz run stops).
bool decode_all(std::span<const std::uint8_t> bucket,
                std::vector<std::vector<ooc::Update>>& frames) {
    try {
        for (std::uint64_t at = 0; at < bucket.size();) {
            frames.emplace_back();
            at = ooc::decode_update_frame(bucket, at, "bucket", frames.back());
        }
        return true;
    } catch (const tbf::gen::StatusError& e) {
        FUZZ_CHECK(e.status().code() == tbf::StatusCode::Corruption, e.status().to_string());
        return false;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::vector<std::uint8_t> bucket(data + 1, data + size);
    if ((data[0] & 1) != 0) reseal(bucket);

    std::vector<std::vector<ooc::Update>> frames;
    if (!decode_all(bucket, frames)) frames.pop_back();  // the damaged one
    for (const auto& frame : frames) {
        for (std::size_t i = 1; i < frame.size(); ++i) {
            FUZZ_CHECK(frame[i].level == frame[0].level, "updates of one frame at two levels");
            FUZZ_CHECK(frame[i].slot >= frame[i - 1].slot, "updates out of slot order");
        }
        std::vector<ooc::Update> sorted = frame;
        std::sort(sorted.begin(), sorted.end(),
                  [](const auto& a, const auto& b) { return key(a) < key(b); });
        std::vector<ooc::Update> encoded_from = frame;
        const std::vector<std::uint8_t> encoded = ooc::encode_update_frames(encoded_from);
        std::vector<std::vector<ooc::Update>> again;
        FUZZ_CHECK(decode_all(encoded, again), "re-encoded frames do not decode");
        std::vector<ooc::Update> flat;
        for (const auto& f : again) flat.insert(flat.end(), f.begin(), f.end());
        FUZZ_CHECK(flat.size() == sorted.size() &&
                       std::equal(flat.begin(), flat.end(), sorted.begin(),
                                  [](const auto& a, const auto& b) { return key(a) == key(b); }),
                   "updates do not survive encoding again");
    }
    return 0;
}
