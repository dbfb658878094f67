#include "strategy_writer.hpp"

#include <rocksdb/sst_file_reader.h>

#include <algorithm>
#include <filesystem>
#include <queue>

#include "records.hpp"
#include "tbforge/storage/database.hpp"

namespace tbf::storage {

std::string_view side_name(Side side) { return side == Side::White ? "white" : "black"; }

std::string_view strategy_kind_name(StrategyKind kind) {
    return kind == StrategyKind::NonLoss ? "non-loss" : "winning";
}

std::optional<Side> parse_side(std::string_view text) {
    if (text == "white") return Side::White;
    if (text == "black") return Side::Black;
    return std::nullopt;
}

std::optional<StrategyKind> parse_strategy_kind(std::string_view text) {
    if (text == "non-loss") return StrategyKind::NonLoss;
    if (text == "winning") return StrategyKind::Winning;
    return std::nullopt;
}

namespace detail {
namespace {

// Bookkeeping charged per buffered entry (two std::string objects and the
// vector slot) on top of the key and value bytes.
constexpr std::size_t kEntryOverhead = 2 * sizeof(std::string);

}  // namespace

StrategyWriterImpl::StrategyWriterImpl(std::shared_ptr<DbState> db, StrategySpec spec,
                                       StrategyWriteOptions options, std::uint64_t storage_id)
    : db_(std::move(db)),
      spec_(std::move(spec)),
      options_(options),
      storage_id_(storage_id),
      prefix_(id_prefix(storage_id)),
      stem_(db_->staging_dir + "/" + std::to_string(storage_id)) {}

StrategyWriterImpl::~StrategyWriterImpl() { abort(); }

std::string StrategyWriterImpl::entries_file() const { return stem_ + ".entries.sst"; }
std::string StrategyWriterImpl::catalog_file() const { return stem_ + ".catalog.sst"; }

Status StrategyWriterImpl::check_open() const {
    if (state_ != State::Open) {
        return {StatusCode::Aborted, "writer of strategy '" + spec_.name + "' is " +
                                        (state_ == State::Done ? "committed" : "failed")};
    }
    return {};
}

Status StrategyWriterImpl::fail(Status status) {
    abort();
    return status;
}

void StrategyWriterImpl::abort() {
    if (state_ != State::Open) return;
    state_ = State::Failed;
    remove_files();
}

void StrategyWriterImpl::remove_files() {
    out_.reset();
    std::error_code ec;
    std::filesystem::remove(entries_file(), ec);
    std::filesystem::remove(catalog_file(), ec);
    for (const std::string& run : runs_) std::filesystem::remove(run, ec);
    runs_.clear();
}

Status StrategyWriterImpl::duplicate(std::string_view key) const {
    return {StatusCode::InvalidArgument, "strategy '" + spec_.name + "': key added twice (" +
                                            std::to_string(key.size()) + " bytes)"};
}

Status StrategyWriterImpl::emit(std::string_view key, std::string_view value) {
    if (!out_) {
        out_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(), db_->entries_options,
                                                        db_->entries_family);
        const rocksdb::Status s = out_->Open(entries_file());
        if (!s.ok()) return from_rocksdb(s, "staging strategy '" + spec_.name + "'");
    }
    full_key_.assign(prefix_);
    full_key_.append(key);
    const rocksdb::Status s = out_->Put(full_key_, value);
    if (!s.ok()) return from_rocksdb(s, "staging strategy '" + spec_.name + "'");
    ++entry_count_;
    entry_bytes_ += key.size() + value.size();
    return {};
}

Status StrategyWriterImpl::add(std::string_view key, std::string_view value) {
    if (Status s = check_open(); !s.ok()) return s;
    if (key.empty()) {
        return fail({StatusCode::InvalidArgument, "strategy '" + spec_.name + "': empty key"});
    }
    ++added_;
    if (options_.sorted_input) {
        if (added_ > 1 && key <= std::string_view(last_key_)) {
            if (key == last_key_) return fail(duplicate(key));
            return fail({StatusCode::InvalidArgument,
                         "strategy '" + spec_.name +
                             "': keys must be added in strictly increasing order (entry " +
                             std::to_string(added_) + ")"});
        }
        last_key_.assign(key);
        if (Status s = emit(key, value); !s.ok()) return fail(s);
        return {};
    }
    run_.emplace_back(std::string(key), std::string(value));
    run_bytes_ += key.size() + value.size() + kEntryOverhead;
    if (run_bytes_ >= options_.sort_buffer_bytes) {
        if (Status s = spill_run(); !s.ok()) return fail(s);
    }
    return {};
}

Status StrategyWriterImpl::sort_run() {
    std::sort(run_.begin(), run_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    const auto dup = std::adjacent_find(
        run_.begin(), run_.end(), [](const auto& a, const auto& b) { return a.first == b.first; });
    if (dup != run_.end()) return duplicate(dup->first);
    return {};
}

Status StrategyWriterImpl::spill_run() {
    if (Status s = sort_run(); !s.ok()) return s;
    const std::string path = stem_ + ".run" + std::to_string(runs_.size()) + ".sst";
    runs_.push_back(path);
    rocksdb::SstFileWriter run(rocksdb::EnvOptions(), db_->entries_options);
    rocksdb::Status s = run.Open(path);
    for (std::size_t i = 0; s.ok() && i < run_.size(); ++i) {
        s = run.Put(run_[i].first, run_[i].second);
    }
    if (s.ok()) s = run.Finish();
    if (!s.ok()) return from_rocksdb(s, "spilling entries of strategy '" + spec_.name + "'");
    run_.clear();
    run_.shrink_to_fit();
    run_bytes_ = 0;
    return {};
}

Status StrategyWriterImpl::merge_runs() {
    // k-way merge of the sorted runs into the output, smallest key first.
    std::vector<std::unique_ptr<rocksdb::SstFileReader>> readers;
    std::vector<std::unique_ptr<rocksdb::Iterator>> its;
    for (const std::string& path : runs_) {
        auto reader = std::make_unique<rocksdb::SstFileReader>(db_->entries_options);
        const rocksdb::Status s = reader->Open(path);
        if (!s.ok()) {
            return from_rocksdb(s, "reading a sorted run of strategy '" + spec_.name + "'");
        }
        its.emplace_back(reader->NewIterator(rocksdb::ReadOptions()));
        its.back()->SeekToFirst();
        readers.push_back(std::move(reader));
    }
    const auto greater = [&](std::size_t a, std::size_t b) {
        return its[a]->key().compare(its[b]->key()) > 0;
    };
    std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(greater)> heap(greater);
    for (std::size_t i = 0; i < its.size(); ++i) {
        if (its[i]->Valid()) heap.push(i);
    }
    std::string previous;
    bool first = true;
    while (!heap.empty()) {
        const std::size_t i = heap.top();
        heap.pop();
        const std::string_view key = its[i]->key().ToStringView();
        if (!first && key == previous) return duplicate(key);
        first = false;
        previous.assign(key);
        if (Status s = emit(key, its[i]->value().ToStringView()); !s.ok()) return s;
        its[i]->Next();
        if (its[i]->Valid()) heap.push(i);
    }
    for (const auto& it : its) {
        if (!it->status().ok()) {
            return from_rocksdb(it->status(),
                                "reading a sorted run of strategy '" + spec_.name + "'");
        }
    }
    return {};
}

Status StrategyWriterImpl::commit() {
    if (Status s = check_open(); !s.ok()) return s;
    if (!options_.sorted_input) {
        if (runs_.empty()) {
            // Everything fits in memory: one sort, no spill.
            if (Status s = sort_run(); !s.ok()) return fail(s);
            for (const auto& [key, value] : run_) {
                if (Status s = emit(key, value); !s.ok()) return fail(s);
            }
            run_.clear();
        } else {
            if (!run_.empty()) {
                if (Status s = spill_run(); !s.ok()) return fail(s);
            }
            if (Status s = merge_runs(); !s.ok()) return fail(s);
        }
    }
    if (out_) {
        const rocksdb::Status s = out_->Finish();
        out_.reset();
        if (!s.ok()) return fail(from_rocksdb(s, "staging strategy '" + spec_.name + "'"));
    }

    StrategyInfo info;
    info.spec = spec_;
    info.entry_count = entry_count_;
    info.entry_bytes = entry_bytes_;
    info.format_version = kFormatVersion;
    info.storage_id = storage_id_;
    Publication pub{kStrategyTag,
                    spec_.name,
                    encode_strategy_info(info),
                    db_->entries_family,
                    entry_count_ > 0 ? entries_file() : std::string(),
                    catalog_file(),
                    options_.replace};
    if (Status s = db_->publish(pub); !s.ok()) return fail(s);
    state_ = State::Done;
    remove_files();
    return {};
}

// Iteration over one storage id's key range.
class StrategyIteratorImpl {
public:
    StrategyIteratorImpl(std::shared_ptr<DbState> db, std::uint64_t storage_id)
        : db_(std::move(db)), prefix_(id_prefix(storage_id)), upper_(id_prefix(storage_id + 1)) {
        upper_slice_ = rocksdb::Slice(upper_);
        rocksdb::ReadOptions ro;
        // The last id has no successor prefix; its range ends with the family.
        if (storage_id != UINT64_MAX) ro.iterate_upper_bound = &upper_slice_;
        it_.reset(db_->db->NewIterator(ro, db_->entries_family));
    }

    std::shared_ptr<DbState> db_;  // first member: destroyed after it_
    std::string prefix_;
    std::string upper_;
    rocksdb::Slice upper_slice_;
    std::unique_ptr<rocksdb::Iterator> it_;
    std::string seek_key_;
    Status error_;  // a failure of our own (allocation) during seek()
};

}  // namespace detail

StrategyWriter::StrategyWriter(std::unique_ptr<detail::StrategyWriterImpl> impl)
    : impl_(std::move(impl)) {}
StrategyWriter::StrategyWriter(StrategyWriter&&) noexcept = default;
StrategyWriter& StrategyWriter::operator=(StrategyWriter&&) noexcept = default;
StrategyWriter::~StrategyWriter() = default;

const StrategySpec& StrategyWriter::spec() const { return impl_->spec(); }
std::uint64_t StrategyWriter::entries_added() const { return impl_->entries_added(); }

Status StrategyWriter::add(std::string_view key, std::string_view value) {
    if (!impl_) return {StatusCode::Aborted, "moved-from strategy writer"};
    return detail::guarded([&] { return impl_->add(key, value); });
}

Status StrategyWriter::commit() {
    if (!impl_) return {StatusCode::Aborted, "moved-from strategy writer"};
    return detail::guarded([&] { return impl_->commit(); });
}

void StrategyWriter::abort() {
    if (impl_) impl_->abort();
}

StrategyIterator::StrategyIterator(std::unique_ptr<detail::StrategyIteratorImpl> impl)
    : impl_(std::move(impl)) {}
StrategyIterator::StrategyIterator(StrategyIterator&&) noexcept = default;
StrategyIterator& StrategyIterator::operator=(StrategyIterator&&) noexcept = default;
StrategyIterator::~StrategyIterator() = default;

void StrategyIterator::seek_to_first() { impl_->it_->Seek(impl_->prefix_); }

void StrategyIterator::seek(std::string_view key) {
    impl_->error_ = detail::guarded([&] {
        impl_->seek_key_.assign(impl_->prefix_);
        impl_->seek_key_.append(key);
        impl_->it_->Seek(impl_->seek_key_);
        return Status{};
    });
}

void StrategyIterator::next() { impl_->it_->Next(); }

bool StrategyIterator::valid() const {
    const rocksdb::Iterator& it = *impl_->it_;
    return impl_->error_.ok() && it.Valid() && it.key().starts_with(impl_->prefix_);
}

std::string_view StrategyIterator::key() const {
    return impl_->it_->key().ToStringView().substr(impl_->prefix_.size());
}

std::string_view StrategyIterator::value() const { return impl_->it_->value().ToStringView(); }

Status StrategyIterator::status() const {
    if (!impl_->error_.ok()) return impl_->error_;
    return detail::from_rocksdb(impl_->it_->status(), "iterating a strategy");
}

StrategyReader::StrategyReader(std::shared_ptr<detail::DbState> db,
                               std::shared_ptr<const StrategyInfo> info)
    : db_(std::move(db)), info_(std::move(info)) {}

Result<std::optional<std::string>> StrategyReader::get(std::string_view key) const {
    return detail::guarded([&]() -> Result<std::optional<std::string>> {
        std::string full = detail::id_prefix(info_->storage_id);
        full.append(key);
        std::string value;
        const rocksdb::Status s =
            db_->db->Get(rocksdb::ReadOptions(), db_->entries_family, full, &value);
        if (s.IsNotFound()) return std::optional<std::string>();
        if (!s.ok()) {
            return detail::from_rocksdb(s, "reading strategy '" + info_->spec.name + "'");
        }
        return std::optional<std::string>(std::move(value));
    });
}

Result<StrategyIterator> StrategyReader::iterator() const {
    return detail::guarded([&]() -> Result<StrategyIterator> {
        return StrategyIterator(
            std::make_unique<detail::StrategyIteratorImpl>(db_, info_->storage_id));
    });
}

}  // namespace tbf::storage
