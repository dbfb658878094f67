#include "table_writer.hpp"

#include <bit>
#include <algorithm>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <thread>
#include <filesystem>

#include <omp.h>

#include "records.hpp"
#include "tbforge/base/release.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::storage {
namespace detail {

TableWriterImpl::TableWriterImpl(std::shared_ptr<DbState> db, TableSpec spec,
                                 TableWriteOptions options, std::uint64_t storage_id)
    : db_(std::move(db)),
      spec_(std::move(spec)),
      options_(options),
      storage_id_(storage_id),
      blocks_file_(db_->staging_dir + "/" + std::to_string(storage_id) + ".blocks.sst"),
      catalog_file_(db_->staging_dir + "/" + std::to_string(storage_id) + ".catalog.sst") {
    const std::size_t block_bytes = std::size_t{options_.slots_per_block} * spec_.value_width;
    pending_.reserve(block_bytes);
    // With several threads, blocks are compressed in batches of many per
    // thread: each batch ends in a barrier where the threads wait for the
    // slowest block and the caller fills the next batch alone, so few large
    // batches keep the threads busier than many small ones. The batch bounds
    // the writer's memory (32 blocks a thread: 0.5-1 MB each).
    const auto threads = static_cast<std::size_t>(std::max(1, options_.compression_threads));
    const std::size_t batch = threads == 1 ? 1 : std::size_t{32} * threads;
    if (batch > 1) batch_.resize(batch * block_bytes);
    records_.resize(batch);
    scratch_.resize(threads);
    encoding_ = block_encoding(options_);
    if (options_.compression == Compression::Zstd) {
        for (std::size_t i = 0; i < threads; ++i) {
            cctx_.emplace_back(ZSTD_createCCtx());
            if (!cctx_.back()) throw std::bad_alloc();
        }
        dictionaries_ready_ = options_.dictionary_bytes == 0;
        // The grammar is built over the whole table, so the writer holds it
        // (the generator holds its values anyway); a dictionary is not used.
        hold_table_ = options_.pair_coding != PairCoding::Off && options_.blocks_per_record > 1;
        if (hold_table_) dictionaries_ready_ = true;
    }
}

TableWriterImpl::~TableWriterImpl() { abort(); }

Status TableWriterImpl::check_open(std::uint32_t width) const {
    if (state_ != State::Open) {
        return {StatusCode::Aborted, "writer of table '" + spec_.name + "' is " +
                                        (state_ == State::Done ? "committed" : "failed")};
    }
    if (width != spec_.value_width) {
        return {StatusCode::InvalidArgument, "table '" + spec_.name + "' has " +
                                                std::to_string(spec_.value_width) +
                                                "-byte values, not " + std::to_string(width)};
    }
    return {};
}

Status TableWriterImpl::fail(Status status) {
    abort();
    state_ = State::Failed;
    return status;
}

void TableWriterImpl::remove_files() {
    std::error_code ec;
    std::filesystem::remove(blocks_file_, ec);
    std::filesystem::remove(catalog_file_, ec);
}

void TableWriterImpl::abort() {
    if (state_ != State::Open) return;
    state_ = State::Failed;
    sst_.reset();
    remove_files();
}

Status TableWriterImpl::put_record(const std::string& key, const std::string& record,
                                   std::span<const std::uint8_t> values) {
    values_hash_.update(values);
    ++blocks_written_;
    if (options_.blocks_per_record == 1) return store(key, record);
    group_.push_back(record);
    return group_.size() == options_.blocks_per_record ? flush_group() : Status{};
}

Status TableWriterImpl::flush_group() {
    if (group_.empty()) return {};
    const std::uint64_t record_no = (blocks_written_ - group_.size()) / options_.blocks_per_record;
    const std::string key = block_key(storage_id_, record_no);
    payload_bytes_ += encode_group(key, group_, spec_.value_width, group_record_, encoding_.fills_in_directory);
    group_.clear();
    return store(key, group_record_);
}

Status TableWriterImpl::store(const std::string& key, const std::string& record) {
    if (!sst_) {
        sst_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(), db_->blocks_options,
                                                        db_->blocks_family);
        const rocksdb::Status s = sst_->Open(blocks_file_);
        if (!s.ok()) return from_rocksdb(s, "staging table '" + spec_.name + "'");
    }
    const rocksdb::Status s = sst_->Put(key, record);
    if (!s.ok()) return from_rocksdb(s, "staging table '" + spec_.name + "'");
    stored_bytes_ += record.size();
    return {};
}

Status TableWriterImpl::add_block(const std::uint8_t* raw, std::uint32_t slots) {
    if (hold_table_) {
        held_.insert(held_.end(), raw, raw + std::size_t{slots} * spec_.value_width);
        held_slots_.push_back(slots);
        return {};
    }
    if (dictionaries_ready_) return encode_and_add(raw, slots);
    held_.insert(held_.end(), raw, raw + std::size_t{slots} * spec_.value_width);
    held_slots_.push_back(slots);
    return held_.size() >= options_.dictionary_sample_bytes ? release_held() : Status{};
}

Status TableWriterImpl::release_held() {
    const std::uint32_t width = spec_.value_width;
    const std::size_t block_bytes = std::size_t{options_.slots_per_block} * width;
    // Whole blocks spread evenly over what is held, about a hundred times
    // the dictionary in raw bytes (zstd's advice for training).
    const std::size_t wanted = std::max<std::size_t>(
        8, std::size_t{100} * options_.dictionary_bytes / std::max<std::size_t>(block_bytes, 1));
    const std::size_t held = held_slots_.size();
    const std::size_t step = std::max<std::size_t>(1, held / wanted);
    std::vector<std::string> samples;
    for (std::size_t b = 0; b < held; b += step) {
        const std::size_t size = std::size_t{held_slots_[b]} * width;
        std::string& sample = samples.emplace_back(size, '\0');
        to_planes({held_.data() + b * block_bytes, size}, width,
                  reinterpret_cast<std::uint8_t*>(sample.data()));
    }
    dictionary_ = train_dictionary(samples, options_.dictionary_bytes);
    if (!dictionary_.empty()) {
        cdict_ = make_cdict(dictionary_, encoding_);
    }
    encoding_.cdict = cdict_.get();
    dictionaries_ready_ = true;
    for (std::size_t b = 0; b < held; ++b) {
        if (Status s = encode_and_add(held_.data() + b * block_bytes, held_slots_[b]); !s.ok()) {
            return s;
        }
    }
    release_memory(held_);
    release_memory(held_slots_);
    return {};
}

namespace {

// What a member adds to its group record: its payload, or nothing for a
// fill (format 5 keeps its value in the directory).
std::uint64_t member_payload_bytes(const std::string& member) {
    return static_cast<MemberCodec>(member[0]) == MemberCodec::Fill ? 0 : member.size() - kBlockHeaderBytes;
}

}  // namespace

Status TableWriterImpl::store_held_table() {
    const std::uint32_t width = spec_.value_width;
    const std::size_t block_bytes = std::size_t{options_.slots_per_block} * width;
    const std::size_t blocks = held_slots_.size();
    const auto raw_block = [&](std::size_t b) {
        return std::span<const std::uint8_t>(held_.data() + b * block_bytes, std::size_t{held_slots_[b]} * width);
    };
    std::optional<Result<PairEncoding>> pairs;
    std::vector<std::string> pair_members;
    std::uint64_t pair_bytes = 0;
    const auto code_pairs = [&] {
        pairs.emplace(pair_encode(held_, width, options_.slots_per_block));
        if (!pairs->ok()) return;
        pair_members.resize(blocks);
        for (std::size_t b = 0; b < blocks; ++b) {
            if (!fill_member(raw_block(b), width, pair_members[b])) {
                pair_coded_member((*pairs)->members[b], raw_block(b), width, pair_members[b]);
            }
            pair_bytes += member_payload_bytes(pair_members[b]);
        }
        pair_bytes += (*pairs)->model.serialized().size();
    };
    std::vector<std::string> zstd_members;
    std::uint64_t zstd_bytes = 0;
    const auto code_zstd = [&] {
        zstd_members.resize(blocks);
#pragma omp parallel for num_threads(options_.compression_threads) schedule(dynamic, 1) reduction(+ : zstd_bytes)
        for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(blocks); ++b) {
            const auto i = static_cast<std::size_t>(b);
            encode("", raw_block(i), static_cast<std::size_t>(omp_get_thread_num()), zstd_members[i]);
            zstd_bytes += member_payload_bytes(zstd_members[i]);
        }
    };
    if (options_.pair_coding == PairCoding::Auto) {
        // Both codes to compare: the grammar (one thread) is built while
        // zstd compresses the blocks on the writer's threads, not after.
        std::exception_ptr grammar_failure;
        std::thread grammar([&] {
            try {
                code_pairs();
            } catch (...) {
                grammar_failure = std::current_exception();
            }
        });
        try {
            code_zstd();
        } catch (...) {
            grammar.join();
            throw;
        }
        grammar.join();
        if (grammar_failure) std::rethrow_exception(grammar_failure);
    } else {
        code_pairs();
    }
    // Too many distinct values for the code: zstd blocks.
    if (!pairs->ok() && pairs->status().code() != StatusCode::InvalidArgument) return pairs->status();
    if (!pairs->ok() && zstd_members.empty()) code_zstd();
    const bool use_pairs =
        pairs->ok() && (zstd_members.empty() ||
                        static_cast<double>(pair_bytes) <= (1.0 + options_.pair_size_tolerance) * static_cast<double>(zstd_bytes));
    if (use_pairs) pair_model_ = (*pairs)->model.serialized();
    const std::vector<std::string>& members = use_pairs ? pair_members : zstd_members;
    for (std::size_t b = 0; b < blocks; ++b) {
        if (Status s = put_record("", members[b], raw_block(b)); !s.ok()) return s;
    }
    release_memory(held_);
    release_memory(held_slots_);
    return {};
}

void TableWriterImpl::encode(const std::string& key, std::span<const std::uint8_t> raw, std::size_t thread,
                             std::string& record) {
    if (options_.blocks_per_record > 1 && fill_member(raw, spec_.value_width, record)) return;
    encode_block(key, raw, spec_.value_width, encoding_, cctx_.empty() ? nullptr : cctx_[thread].get(),
                 scratch_[thread], record);
}

Status TableWriterImpl::encode_and_add(const std::uint8_t* raw, std::uint32_t slots) {
    const std::size_t size = std::size_t{slots} * spec_.value_width;
    if (options_.compression_threads <= 1) {
        const std::string key = block_key(storage_id_, blocks_written_);
        encode(key, {raw, size}, 0, records_[0]);
        return put_record(key, records_[0], {raw, size});
    }
    const std::size_t block_bytes = std::size_t{options_.slots_per_block} * spec_.value_width;
    std::memcpy(batch_.data() + batch_slots_.size() * block_bytes, raw, size);
    batch_slots_.push_back(slots);
    return batch_slots_.size() == records_.size() ? flush_batch() : Status{};
}

Status TableWriterImpl::flush_batch() {
    const auto n = static_cast<std::ptrdiff_t>(batch_slots_.size());
    const std::size_t block_bytes = std::size_t{options_.slots_per_block} * spec_.value_width;
    std::vector<std::string> keys(batch_slots_.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        keys[i] = block_key(storage_id_, blocks_written_ + i);
    }
    // Blocks are independent: compress them side by side, store in order.
#pragma omp parallel for num_threads(options_.compression_threads) schedule(dynamic, 1)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        const std::span<const std::uint8_t> raw(batch_.data() + i * block_bytes,
                                                std::size_t{batch_slots_[i]} * spec_.value_width);
        // A context and scratch per thread: the frame depends only on the
        // block and the encoding, never on which context made it.
        encode(keys[i], raw, static_cast<std::size_t>(omp_get_thread_num()), records_[i]);
    }
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        const std::span<const std::uint8_t> raw(batch_.data() + i * block_bytes,
                                                std::size_t{batch_slots_[i]} * spec_.value_width);
        if (Status s = put_record(keys[i], records_[i], raw); !s.ok()) return s;
    }
    batch_slots_.clear();
    return {};
}

Status TableWriterImpl::append_bytes(const std::uint8_t* bytes, std::uint64_t count) {
    if (count > spec_.slot_count - slots_written_) {
        return fail({StatusCode::InvalidArgument, "table '" + spec_.name +
                                                     "': more values than its " +
                                                     std::to_string(spec_.slot_count) + " slots"});
    }
    const std::size_t width = spec_.value_width;
    const std::uint32_t per_block = options_.slots_per_block;
    while (count > 0) {
        const std::size_t pending_slots = pending_.size() / width;
        if (pending_slots == 0 && count >= per_block) {
            // Whole block straight from the caller's buffer: no copy.
            if (Status s = add_block(bytes, per_block); !s.ok()) return fail(s);
            bytes += std::size_t{per_block} * width;
            count -= per_block;
            slots_written_ += per_block;
            continue;
        }
        const std::uint64_t take = std::min<std::uint64_t>(count, per_block - pending_slots);
        pending_.insert(pending_.end(), bytes, bytes + take * width);
        bytes += take * width;
        count -= take;
        slots_written_ += take;
        if (pending_.size() == std::size_t{per_block} * width) {
            if (Status s = add_block(pending_.data(), per_block); !s.ok()) return fail(s);
            pending_.clear();
        }
    }
    return {};
}

Status TableWriterImpl::commit(const TableStatistics& statistics) {
    if (Status s = check_open(spec_.value_width); !s.ok()) return s;
    if (Status s = validate_statistics(statistics); !s.ok()) return fail(s);
    if (slots_written_ != spec_.slot_count) {
        return fail({StatusCode::InvalidArgument,
                     "table '" + spec_.name + "': " + std::to_string(slots_written_) + " of " +
                         std::to_string(spec_.slot_count) + " values written"});
    }
    if (!pending_.empty()) {
        const auto slots = static_cast<std::uint32_t>(pending_.size() / spec_.value_width);
        if (Status s = add_block(pending_.data(), slots); !s.ok()) return fail(s);
        pending_.clear();
    }
    if (hold_table_) {
        if (Status s = store_held_table(); !s.ok()) return fail(s);
    }
    if (!dictionaries_ready_) {
        if (Status s = release_held(); !s.ok()) return fail(s);
    }
    if (!batch_slots_.empty()) {
        if (Status s = flush_batch(); !s.ok()) return fail(s);
    }
    if (Status s = flush_group(); !s.ok()) return fail(s);
    if (sst_) {
        const rocksdb::Status s = sst_->Finish();
        sst_.reset();
        if (!s.ok()) return fail(from_rocksdb(s, "staging table '" + spec_.name + "'"));
    }

    TableInfo info;
    info.spec = spec_;
    info.statistics = statistics;
    info.values_checksum = values_hash_.digest();
    // Each table takes the oldest format that holds it: fills in the group
    // directory need format 5, grouped blocks with bare zstd frames format
    // 4, grouped blocks format 3, zstd blocks format 2; LZ4 and raw tables
    // are written exactly as format 1 was. Older libraries still read what
    // they can.
    info.format_version = !pair_model_.empty()                          ? 6
                          : encoding_.fills_in_directory                 ? 5
                          : encoding_.bare_frames                      ? 4
                          : options_.blocks_per_record > 1             ? 3
                          : options_.compression == Compression::Zstd ? 2
                                                                       : 1;
    info.slots_per_block = options_.slots_per_block;
    info.block_count = blocks_written_;
    info.stored_bytes = stored_bytes_ + pair_model_.size();
    info.storage_id = storage_id_;
    info.dictionary = dictionary_;
    info.blocks_per_record = options_.blocks_per_record;
    info.payload_bytes = options_.blocks_per_record > 1 ? payload_bytes_ : 0;
    info.pair_model = pair_model_;

    Publication pub{kTableTag,
                    spec_.name,
                    encode_table_info(info),
                    db_->blocks_family,
                    blocks_written_ > 0 ? blocks_file_ : std::string(),
                    catalog_file_,
                    options_.replace};
    if (Status s = db_->publish(pub); !s.ok()) return fail(s);
    state_ = State::Done;
    remove_files();  // links left behind if RocksDB copied instead of moving
    return {};
}

}  // namespace detail

namespace {

template <class T>
Status append_values(detail::TableWriterImpl* impl, std::span<const T> values) {
    if (impl == nullptr) return {StatusCode::Aborted, "moved-from table writer"};
    return detail::guarded([&]() -> Status {
        if (Status s = impl->check_open(sizeof(T)); !s.ok()) return s;
        if constexpr (sizeof(T) == 1 || std::endian::native == std::endian::little) {
            return impl->append_bytes(reinterpret_cast<const std::uint8_t*>(values.data()),
                                      values.size());
        } else {
            // Big-endian hosts: blocks store little-endian values.
            for (T v : values) {
                std::uint8_t le[sizeof(T)];
                for (std::size_t i = 0; i < sizeof(T); ++i) {
                    le[i] = static_cast<std::uint8_t>(v >> (8 * i));
                }
                if (Status s = impl->append_bytes(le, 1); !s.ok()) return s;
            }
            return Status{};
        }
    });
}

}  // namespace

TableWriter::TableWriter(std::unique_ptr<detail::TableWriterImpl> impl) : impl_(std::move(impl)) {}
TableWriter::TableWriter(TableWriter&&) noexcept = default;
TableWriter& TableWriter::operator=(TableWriter&&) noexcept = default;
TableWriter::~TableWriter() = default;

const TableSpec& TableWriter::spec() const { return impl_->spec(); }
std::uint64_t TableWriter::slots_written() const { return impl_->slots_written(); }

Status TableWriter::append(std::span<const std::uint8_t> values) {
    return append_values(impl_.get(), values);
}
Status TableWriter::append(std::span<const std::uint16_t> values) {
    return append_values(impl_.get(), values);
}
Status TableWriter::append(std::span<const std::uint32_t> values) {
    return append_values(impl_.get(), values);
}

Status TableWriter::commit(const TableStatistics& statistics) {
    if (!impl_) return {StatusCode::Aborted, "moved-from table writer"};
    return detail::guarded([&] { return impl_->commit(statistics); });
}

void TableWriter::abort() {
    if (impl_) impl_->abort();
}

std::size_t block_record_bytes(std::span<const std::uint8_t> values, std::uint32_t value_width,
                               const TableWriteOptions& options) {
    detail::BlockEncoding encoding = detail::block_encoding(options);
    // A record of its own: a whole frame, whatever the options' grouping.
    encoding.bare_frames = false;
    detail::ZstdCCtx cctx(options.compression == Compression::Zstd ? ZSTD_createCCtx() : nullptr);
    std::string scratch, record;
    detail::encode_block("", values, value_width, encoding, cctx.get(), scratch, record);
    return record.size();
}

std::size_t block_payload_bytes(std::span<const std::uint8_t> values, std::uint32_t value_width,
                                const TableWriteOptions& options) {
    const detail::BlockEncoding encoding = detail::block_encoding(options);
    std::string record;
    if (options.blocks_per_record > 1 && detail::fill_member(values, value_width, record)) {
        return encoding.fills_in_directory ? 0 : value_width;
    }
    // One context a thread: a caller measures a table block by block, and a
    // context at the optimal parser's settings costs megabytes to set up.
    thread_local detail::ZstdCCtx cctx(ZSTD_createCCtx());
    if (options.compression == Compression::Zstd && !cctx) throw std::bad_alloc();
    std::string scratch;
    detail::encode_block("", values, value_width, encoding, cctx.get(), scratch, record);
    return record.size() - detail::kBlockHeaderBytes;
}

}  // namespace tbf::storage
