// The manifest of an out-of-core build (gen/src/work_files.hpp,
// decode_manifest), which a resumed build trusts to find its files. Input: a
// byte whose bit 0 asks to "reseal" (the last 8 bytes are replaced by the
// XXH64 of the rest, so that the fuzzer reaches the fields behind the
// trailer), then the file. A damaged manifest is a Corruption StatusError,
// nothing else; an accepted one encodes to a manifest that decodes to the
// same bytes again.

#include <string>

#include "fuzz_support.hpp"
#include "tbforge/base/record.hpp"
#include "work_files.hpp"

namespace {

namespace ooc = tbf::gen::ooc;

// Corruption (damaged file), or the fuzz run stops.
template <class F>
bool decodes(F&& decode, const std::string& context) {
    try {
        decode();
        return true;
    } catch (const tbf::gen::StatusError& e) {
        FUZZ_CHECK(e.status().code() == tbf::StatusCode::Corruption,
                   context + ": " + e.status().to_string());
        return false;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::string record(reinterpret_cast<const char*>(data + 1), size - 1);
    if ((data[0] & 1) != 0 && record.size() >= tbf::kSealBytes) {
        record.resize(record.size() - tbf::kSealBytes);
        tbf::seal(record);
    }
    ooc::Manifest manifest;
    if (!decodes([&] { manifest = ooc::decode_manifest(tbf::fuzz::as_bytes(record), "manifest"); },
                 "manifest")) {
        return 0;
    }
    FUZZ_CHECK(tbf::unseal(record).ok(), "manifest accepted with a bad trailer");
    const std::string encoded = ooc::encode_manifest(manifest);
    ooc::Manifest again;
    FUZZ_CHECK(
        decodes([&] { again = ooc::decode_manifest(tbf::fuzz::as_bytes(encoded), "manifest"); },
                "re-encoded manifest"),
        "the re-encoded manifest does not decode");
    FUZZ_CHECK(ooc::encode_manifest(again) == encoded,
               "the manifest does not survive a round trip");
    return 0;
}
