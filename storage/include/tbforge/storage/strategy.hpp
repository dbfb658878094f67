#pragma once
// Strategy databases: a named set of entries (key bytes -> value bytes), e.g.
// an encoded position -> the move to play there, plus metadata. Entries are
// imported in one atomic step and read back by point lookup or in key order
// (bytewise) without loading them all.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tbforge/base/status.hpp"

namespace tbf::storage {

namespace detail {
struct DbState;
class StrategyWriterImpl;
class StrategyIteratorImpl;
}  // namespace detail

enum class Side : std::uint8_t { White, Black };
enum class StrategyKind : std::uint8_t { NonLoss, Winning };

[[nodiscard]] std::string_view side_name(Side side);                   // "white", "black"
[[nodiscard]] std::string_view strategy_kind_name(StrategyKind kind);  // "non-loss", "winning"
[[nodiscard]] std::optional<Side> parse_side(std::string_view text);
[[nodiscard]] std::optional<StrategyKind> parse_strategy_kind(std::string_view text);

struct StrategySpec {
    std::string name;  // unique among strategies; UTF-8, no NUL
    std::string variant;
    Side side = Side::White;
    StrategyKind kind = StrategyKind::NonLoss;
    std::vector<std::string> roots;  // root positions (FEN), as given
    std::string entry_encoding;      // names the key and value encodings, e.g. "pos/1 move/1"
    std::string json;                // free-form UTF-8 JSON text

    bool operator==(const StrategySpec&) const = default;
};

struct StrategyInfo {
    StrategySpec spec;
    std::uint64_t entry_count = 0;
    std::uint64_t entry_bytes = 0;  // sum of key and value sizes
    std::uint32_t format_version = 0;
    std::uint64_t storage_id = 0;  // key prefix of this version's entries

    bool operator==(const StrategyInfo&) const = default;
};

struct StrategyWriteOptions {
    bool replace = false;  // allow replacing an existing strategy of the same name
    // true: add() must receive strictly increasing keys (checked).
    // false: any order; entries are sorted in runs of about sort_buffer_bytes
    // spilled to staging files and merged at commit (bounded memory). A key
    // added twice is an error at commit.
    bool sorted_input = true;
    std::size_t sort_buffer_bytes = std::size_t{256} << 20;
};

// Imports the entries of one strategy; commit() publishes them all at once.
// Destroying a writer that was not committed discards everything it wrote.
class StrategyWriter {
public:
    StrategyWriter(StrategyWriter&&) noexcept;
    StrategyWriter& operator=(StrategyWriter&&) noexcept;
    ~StrategyWriter();

    [[nodiscard]] const StrategySpec& spec() const;
    [[nodiscard]] std::uint64_t entries_added() const;

    // Keys must be non-empty. After any error the writer is failed and later
    // calls return Aborted; nothing becomes visible.
    [[nodiscard]] Status add(std::string_view key, std::string_view value);
    [[nodiscard]] Status commit();
    void abort();

private:
    friend class Database;
    explicit StrategyWriter(std::unique_ptr<detail::StrategyWriterImpl> impl);

    std::unique_ptr<detail::StrategyWriterImpl> impl_;
};

// Walks the entries of one strategy in bytewise key order over a consistent
// view taken when it was created. Not thread-safe; use one per thread.
class StrategyIterator {
public:
    StrategyIterator(StrategyIterator&&) noexcept;
    StrategyIterator& operator=(StrategyIterator&&) noexcept;
    ~StrategyIterator();

    void seek_to_first();
    void seek(std::string_view key);  // first entry with key >= `key`
    void next();                      // precondition: valid()
    [[nodiscard]] bool valid() const;
    // Views stay valid until the iterator moves. Precondition: valid().
    [[nodiscard]] std::string_view key() const;
    [[nodiscard]] std::string_view value() const;
    // Ok at the end of the entries; the error if iteration stopped early.
    [[nodiscard]] Status status() const;

private:
    friend class StrategyReader;
    explicit StrategyIterator(std::unique_ptr<detail::StrategyIteratorImpl> impl);

    std::unique_ptr<detail::StrategyIteratorImpl> impl_;
};

// Read access to one published strategy; cheap to copy, thread-safe.
class StrategyReader {
public:
    [[nodiscard]] const StrategyInfo& info() const { return *info_; }

    // The value stored for `key`, or nullopt if the strategy has no such entry.
    [[nodiscard]] Result<std::optional<std::string>> get(std::string_view key) const;

    // A new iterator, not yet positioned (call seek_to_first() or seek()).
    [[nodiscard]] Result<StrategyIterator> iterator() const;

private:
    friend class Database;
    StrategyReader(std::shared_ptr<detail::DbState> db, std::shared_ptr<const StrategyInfo> info);

    std::shared_ptr<detail::DbState> db_;
    std::shared_ptr<const StrategyInfo> info_;
};

}  // namespace tbf::storage
