// Running a test body on several threads released together, so that they reach shared state at once.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

namespace gsparse::test {

/// Runs fn(thread index) on n threads that start together; returns when all have finished.
template <typename Fn>
void on_threads(int n, Fn fn) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < n; t++)
        threads.emplace_back([&, t] {
            ready++;
            while (ready.load() < n) std::this_thread::yield();
            fn(t);
        });
    for (auto &th : threads) th.join();
}

}  // namespace gsparse::test
