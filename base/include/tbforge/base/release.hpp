#pragma once
// Empties a container and hands its memory back. `v = {}` does not: for a
// std::vector it picks the initializer-list assignment, which clears the
// elements and keeps the capacity (an overflowed frontier list of RBPvKN's
// initial pass kept 32 MiB a thread that way).

#include <utility>

namespace tbf {

template <class Container>
void release_memory(Container& container) {
    Container().swap(container);
}

}  // namespace tbf
