#pragma once
// An allocator for the solver's large flat tables (the region and quiet
// caches, an exploration's index): their lookups land on random slots of
// gigabytes, so with 4 KiB pages nearly every one also misses the TLB and
// waits for a page walk. Blocks of 32 MiB or more are aligned to 2 MiB and
// marked for transparent huge pages, which the kernel grants where it is
// set to "madvise" (Debian's default) or "always"; elsewhere the hint is
// ignored and the block behaves as an ordinary one. Smaller blocks stay
// ordinary: their misses are few, and huge pages in the heap inflate the
// resident size (measured: 1.8 times the peak RSS of a search whose tables
// stay small, for no gain).

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace tbf::solve::detail {

template <class T>
struct HugePageAllocator {
    using value_type = T;
    static constexpr std::size_t kHugePage = std::size_t{2} << 20;
    static constexpr std::size_t kThreshold = std::size_t{32} << 20;

    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}

    T* allocate(std::size_t n) {
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kThreshold) return static_cast<T*>(::operator new(bytes));
        const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
        void* p = std::aligned_alloc(kHugePage, rounded);
        if (!p) throw std::bad_alloc();
        madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure changes nothing
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) {
        // The same size decides the same way as in allocate().
        if (n * sizeof(T) < kThreshold) {
            ::operator delete(p);
        } else {
            std::free(p);
        }
    }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const {
        return true;
    }
};

}  // namespace tbf::solve::detail
