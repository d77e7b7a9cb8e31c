// The compiled-kernel cache: JIT compilation of a pipeline takes 0.1-1 s, so every compiled kernel
// is kept, keyed by operator, feature layout (shapes and broadcast pattern), dtype, index layout,
// schedule and target. Concurrent requests for the same key compile once; others wait for it.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace gsparse {

class KernelCache {
public:
    struct Stats {
        size_t hits = 0, misses = 0, entries = 0;
    };

    /// The kernel for key, compiled by build() on the first request. If build throws, the error
    /// reaches every waiter and the key is not cached.
    std::shared_ptr<const void> get(const std::string &key, const std::function<std::shared_ptr<const void>()> &build);

    template <typename K>
    std::shared_ptr<const K> get(const std::string &key, const std::function<std::shared_ptr<const K>()> &build) {
        return std::static_pointer_cast<const K>(get(key, std::function<std::shared_ptr<const void>()>(build)));
    }

    Stats stats() const;
    void clear();

    /// The process-wide cache used by the C++ API.
    static KernelCache &global();

private:
    mutable std::mutex mu_;
    std::map<std::string, std::shared_future<std::shared_ptr<const void>>> entries_;
    Stats stats_;
};

}  // namespace gsparse
