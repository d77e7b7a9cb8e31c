// Timing of GPU work with CUDA events.
//
// EventTimer::time(fn) calls fn `warmup` times, then `runs` times with a pair of CUDA events
// recorded on the stream around each call, and returns every run's time plus the median, minimum,
// mean and maximum. fn must enqueue its work on the timer's stream (or on the legacy default
// stream, which orders with it); the events measure from when the stream reaches the start event to
// when it reaches the stop event, so host-side work inside fn that delays the launch is included.
//
// L2 flushing. The H100's L2 holds 50 MB. Graph index arrays of the large twins (hundreds of MB)
// and feature matrices with large F (reddit: 233k rows x 512 x 4 B = 477 MB) do not fit in it, so
// nothing useful survives in L2 from one run to the next for them. For small graphs or small F,
// however, X, Z and parts of the index arrays fit and a back-to-back run would find them warm.
// With flush_l2 (the default) the timer writes a scratch buffer of twice the L2 size on the stream
// before every warm-up and timed run, outside the timed interval, so every competitor starts each
// run from a cold L2. The same flag applies identically to every competitor timed with it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "device_buffer.h"

namespace gsparse::bench {

struct TimingOptions {
    int warmup = 3;        ///< untimed calls before the timed ones (the first may include compilation)
    int runs = 10;         ///< individually timed calls; at least 1 (the harness asks for >= 10)
    bool flush_l2 = true;  ///< write 2 x L2 bytes of scratch before every call, outside the timed interval
};

struct TimingResult {
    std::vector<double> times_ms;  ///< one per timed run, in run order
    double median_ms = 0;          ///< the middle value (mean of the two middle values for even counts)
    double min_ms = 0;
    double mean_ms = 0;
    double max_ms = 0;
};

/// Median, minimum, mean and maximum of times (which must not be empty).
TimingResult summarize_times(std::vector<double> times_ms);

/// The device's L2 size in bytes (cudaDevAttrL2CacheSize of the current device).
size_t l2_cache_bytes();

class EventTimer {
public:
    /// Creates the events and, with options.flush_l2, the scratch buffer (2 x L2 bytes) on the current device.
    EventTimer(cudaStream_t stream, TimingOptions options);
    ~EventTimer();
    EventTimer(const EventTimer &) = delete;
    EventTimer &operator=(const EventTimer &) = delete;

    /// Times fn as described above. Exceptions thrown by fn propagate (after the stream is synchronized).
    TimingResult time(const std::function<void()> &fn);

    /// Enqueues the L2 flush (a no-op without flush_l2).
    void flush_l2();

    const TimingOptions &options() const { return options_; }
    cudaStream_t stream() const { return stream_; }
    size_t flush_bytes() const { return scratch_.bytes(); }

private:
    cudaStream_t stream_;
    TimingOptions options_;
    DeviceBuffer<unsigned char> scratch_;
    std::vector<cudaEvent_t> start_, stop_;
};

}  // namespace gsparse::bench
