#pragma once
// Internal: runs a function on a number of threads and waits for all of them.
//
// The table check alternates short parallel phases with serial steps (reading
// blocks, hashing, the next table). OpenMP's threads spin while they wait for
// the next phase; on a machine shared with other work, that spinning took
// most of the CPU time of a check of many small tables (measured with perf:
// 60% of the cycles of the <=3-unit set in libgomp). These threads block
// instead; starting them costs some tens of microseconds per phase.

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tbf::verify::detail {

// Calls fn(t) for t = 0 .. threads - 1, fn(0) on the calling thread, and
// returns when every call has returned. An exception from any call is
// rethrown here (the first one) after all have finished.
template <typename Fn>
void run_on_threads(int threads, Fn&& fn) {
    if (threads <= 1) {
        fn(0);
        return;
    }
    std::exception_ptr error;
    std::mutex error_mutex;
    const auto guarded = [&](int t) {
        try {
            fn(t);
        } catch (...) {
            const std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    };
    {
        std::vector<std::jthread> others;
        others.reserve(static_cast<std::size_t>(threads - 1));
        for (int t = 1; t < threads; ++t) others.emplace_back(guarded, t);
        guarded(0);
    }  // joined here
    if (error) std::rethrow_exception(error);
}

}  // namespace tbf::verify::detail
