// Chunked parallel loops for the host-side graph work (conversions and orders of large graphs).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace gsparse {

/// Threads a host loop over `items` uses: one per hardware thread, at most one per `min_items`
/// items (small inputs stay on the calling thread), at least one.
inline size_t host_threads(size_t items, size_t min_items = size_t(1) << 20) {
    const size_t hw = std::max(1u, std::thread::hardware_concurrency());
    return std::max<size_t>(1, std::min(hw, items / std::max<size_t>(1, min_items)));
}

/// Calls fn(chunk, begin, end) for `chunks` contiguous, near-equal ranges covering [0, n), each on
/// its own thread (chunk 0 on the caller's), and returns when all are done. The first exception a
/// chunk throws is rethrown after every thread has joined.
template <typename Fn>
void parallel_chunks(size_t n, size_t chunks, Fn &&fn) {
    chunks = std::max<size_t>(1, chunks);
    auto range = [&](size_t k) { return std::make_pair(n * k / chunks, n * (k + 1) / chunks); };
    std::vector<std::exception_ptr> errors(chunks);
    std::vector<std::thread> threads;
    threads.reserve(chunks - 1);
    for (size_t k = 1; k < chunks; k++)
        threads.emplace_back([&, k] {
            try {
                auto [b, e] = range(k);
                fn(k, b, e);
            } catch (...) {
                errors[k] = std::current_exception();
            }
        });
    try {
        auto [b, e] = range(0);
        fn(size_t(0), b, e);
    } catch (...) {
        errors[0] = std::current_exception();
    }
    for (auto &t : threads) t.join();
    for (auto &err : errors)
        if (err) std::rethrow_exception(err);
}

}  // namespace gsparse
