#include "runtime/kernel_cache.h"

namespace gsparse {

std::shared_ptr<const void> KernelCache::get(const std::string &key,
                                             const std::function<std::shared_ptr<const void>()> &build) {
    std::shared_future<std::shared_ptr<const void>> future;
    {
        // The common case, on every kernel call: a hit, without allocating.
        std::lock_guard<std::mutex> lock(mu_);
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            stats_.hits++;
            future = it->second;
        }
    }
    if (future.valid()) return future.get();
    std::promise<std::shared_ptr<const void>> promise;
    bool builder = false;
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = entries_.find(key);
        if (it != entries_.end()) {
            stats_.hits++;
            future = it->second;
        } else {
            stats_.misses++;
            builder = true;
            future = promise.get_future().share();
            entries_.emplace(key, future);
            stats_.entries = entries_.size();
        }
    }
    if (builder) {
        try {
            promise.set_value(build());
        } catch (...) {
            promise.set_exception(std::current_exception());
            std::lock_guard<std::mutex> lock(mu_);
            entries_.erase(key);
            stats_.entries = entries_.size();
        }
    }
    return future.get();
}

KernelCache::Stats KernelCache::stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
}

void KernelCache::clear() {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
    stats_ = Stats{};
}

KernelCache &KernelCache::global() {
    static KernelCache cache;
    return cache;
}

}  // namespace gsparse
