#include "tbforge/base/record.hpp"

#include <cinttypes>
#include <cstdio>

#include "tbforge/base/xxh64.hpp"

namespace tbf {

void seal(std::string& record) { put_le<std::uint64_t>(record, xxh64(std::string_view(record))); }

void ByteWriter::seal() { tbf::seal(out_); }

std::string hex64(std::uint64_t value) {
    char buf[19];
    std::snprintf(buf, sizeof buf, "0x%016" PRIx64, value);
    return buf;
}

Result<std::string_view> unseal(std::string_view record) {
    if (record.size() < kSealBytes) return corruption("truncated");
    const std::size_t sealed = record.size() - kSealBytes;
    const auto stored = get_le<std::uint64_t>(record.data() + sealed);
    const std::uint64_t computed = xxh64(record.substr(0, sealed));
    if (stored != computed) {
        return Status(StatusCode::ChecksumMismatch, "checksum mismatch (stored " + hex64(stored) +
                                                        ", computed " + hex64(computed) + ")");
    }
    return record.substr(0, sealed);
}

Result<std::span<const std::uint8_t>> unseal(std::span<const std::uint8_t> record) {
    auto body = unseal(std::string_view(reinterpret_cast<const char*>(record.data()), record.size()));
    if (!body.ok()) return body.status();
    return record.first(body->size());
}

}  // namespace tbf
