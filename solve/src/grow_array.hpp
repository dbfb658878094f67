#pragma once
// A growable array of trivially copyable values for the explorations'
// per-position arrays, which grow to hundreds of megabytes one push at a
// time. A std::vector copies itself on every doubling (and touches every
// page of the new block); this array keeps a large block in its own
// mapping and grows it with mremap, which moves page tables, not bytes.
// Arrays under 32 MiB live on the heap as usual: a search runs thousands
// of small explorations, and fresh mappings for them cost more in page
// faults than the copies they save (measured: 1.2 times the CPU of a
// search with a threshold of 4 MiB).

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace tbf::solve::detail {

template <class T>
class GrowArray {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    GrowArray() = default;
    GrowArray(const GrowArray&) = delete;
    GrowArray& operator=(const GrowArray&) = delete;
    ~GrowArray() { release(); }

    std::size_t size() const { return size_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }

    void push_back(const T& value) {
        if (size_ == capacity_) grow(size_ + 1);
        data_[size_++] = value;
    }
    // Shrinks, or grows with value-initialized elements.
    void resize(std::size_t n) {
        if (n <= size_) {
            size_ = n;
            return;
        }
        if (n > capacity_) grow(n);
        for (std::size_t i = size_; i < n; ++i) data_[i] = T{};
        size_ = n;
    }

private:
    // Blocks of at least this size get a mapping of their own.
    static constexpr std::size_t kMappedBytes = std::size_t{32} << 20;

    void grow(std::size_t wanted) {
        std::size_t capacity = capacity_ ? capacity_ * 2 : 1024;
        while (capacity < wanted) capacity *= 2;
        const std::size_t bytes = capacity * sizeof(T);
        if (bytes < kMappedBytes) {
            void* p = std::realloc(data_, bytes);
            if (!p) throw std::bad_alloc();
            data_ = static_cast<T*>(p);
        } else if (!mapped_) {
            void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            if (size_) std::memcpy(p, static_cast<const void*>(data_), size_ * sizeof(T));
            std::free(data_);
            data_ = static_cast<T*>(p);
            mapped_ = true;
        } else {
            void* p = mremap(data_, capacity_ * sizeof(T), bytes, MREMAP_MAYMOVE);
            if (p == MAP_FAILED) throw std::bad_alloc();
            data_ = static_cast<T*>(p);
        }
        capacity_ = capacity;
    }
    void release() {
        if (mapped_) {
            munmap(data_, capacity_ * sizeof(T));
        } else {
            std::free(data_);
        }
    }

    T* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
    bool mapped_ = false;
};

}  // namespace tbf::solve::detail
