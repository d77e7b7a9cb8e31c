#include "event_timer.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace gsparse::bench {

TimingResult summarize_times(std::vector<double> times_ms) {
    if (times_ms.empty()) throw gsparse::Error("summarize_times: no times");
    TimingResult r;
    r.times_ms = times_ms;
    std::sort(times_ms.begin(), times_ms.end());
    const size_t n = times_ms.size();
    r.median_ms = n % 2 ? times_ms[n / 2] : 0.5 * (times_ms[n / 2 - 1] + times_ms[n / 2]);
    r.min_ms = times_ms.front();
    r.max_ms = times_ms.back();
    r.mean_ms = std::accumulate(times_ms.begin(), times_ms.end(), 0.0) / static_cast<double>(n);
    return r;
}

size_t l2_cache_bytes() {
    int device = 0;
    GSPARSE_CUDA_CHECK(cudaGetDevice(&device));
    int bytes = 0;
    GSPARSE_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
    return static_cast<size_t>(std::max(bytes, 0));
}

EventTimer::EventTimer(cudaStream_t stream, TimingOptions options) : stream_(stream), options_(options) {
    if (options_.runs < 1) throw gsparse::Error("EventTimer: runs must be at least 1, got " + std::to_string(options_.runs));
    if (options_.warmup < 0)
        throw gsparse::Error("EventTimer: warmup must not be negative, got " + std::to_string(options_.warmup));
    if (options_.flush_l2) {
        // At least 1 MiB so that a device reporting no L2 size still gets a flush.
        scratch_.allocate(std::max<size_t>(2 * l2_cache_bytes(), size_t(1) << 20));
    }
    try {
        for (int i = 0; i < options_.runs; ++i) {
            cudaEvent_t a = nullptr, b = nullptr;
            GSPARSE_CUDA_CHECK(cudaEventCreate(&a));
            start_.push_back(a);
            GSPARSE_CUDA_CHECK(cudaEventCreate(&b));
            stop_.push_back(b);
        }
    } catch (...) {
        for (auto e : start_) cudaEventDestroy(e);
        for (auto e : stop_) cudaEventDestroy(e);
        throw;
    }
}

EventTimer::~EventTimer() {
    for (auto e : start_) cudaEventDestroy(e);
    for (auto e : stop_) cudaEventDestroy(e);
}

void EventTimer::flush_l2() {
    // A memset writes through L2 and evicts what was cached; twice the L2 size replaces every line.
    if (options_.flush_l2 && !scratch_.empty())
        GSPARSE_CUDA_CHECK(cudaMemsetAsync(scratch_.data(), 0, scratch_.bytes(), stream_));
}

TimingResult EventTimer::time(const std::function<void()> &fn) {
    try {
        for (int i = 0; i < options_.warmup; ++i) {
            flush_l2();
            fn();
        }
        GSPARSE_CUDA_CHECK(cudaStreamSynchronize(stream_));
        for (int i = 0; i < options_.runs; ++i) {
            flush_l2();
            GSPARSE_CUDA_CHECK(cudaEventRecord(start_[i], stream_));
            fn();
            GSPARSE_CUDA_CHECK(cudaEventRecord(stop_[i], stream_));
        }
        GSPARSE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    } catch (...) {
        cudaStreamSynchronize(stream_);  // leave no work of a failed measurement in flight
        throw;
    }
    std::vector<double> times(options_.runs);
    for (int i = 0; i < options_.runs; ++i) {
        float ms = 0;
        GSPARSE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
        times[i] = ms;
    }
    return summarize_times(std::move(times));
}

}  // namespace gsparse::bench
