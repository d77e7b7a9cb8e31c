// Internal to the feature files: the problem shape every schedule's metrics start from, the writer
// that puts named values into a feature vector, and the GPU limits the metrics use.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "schedules/schedule_params.h"

namespace gsparse::autotune::detail {

// H100 (SXM) limits used by the GPU metrics.
constexpr double kNumSMs = 132;               ///< streaming multiprocessors
constexpr double kThreadsPerSM = 2048;        ///< resident threads per SM
constexpr double kBlocksPerSM = 32;           ///< resident blocks per SM
constexpr double kSmemPerSM = 227.0 * 1024;   ///< shared memory per SM usable by blocks (bytes)
constexpr double kWarpLoadBytes = 128;        ///< bytes of a fully coalesced warp load (32 x 4 bytes)
constexpr double kBlockLow = 128, kBlockHigh = 512;  ///< thread-block sizes without a penalty

/// What every schedule's metrics start from (GraphStats and the feature layout, as doubles).
struct Shape {
    double rows, cols, nnz, avg_row, max_row, cov, empty_share;
    double feat, feat_inner, heads, reduce_len;
};

/// Position of a feature in feature_names(); throws Error for an unknown name.
size_t index_of(const char *name);

/// Writes named values into a feature vector.
struct Writer {
    std::vector<float> &out;
    void operator()(const char *name, double value) { out[index_of(name)] = static_cast<float>(value); }
};

inline double ceil_div(double a, double b) { return std::ceil(a / b); }

/// log2 of how far a block's thread count lies outside [kBlockLow, kBlockHigh] (0 inside).
inline double block_size_penalty(double threads) {
    if (threads < kBlockLow) return std::log2(kBlockLow / threads);
    if (threads > kBlockHigh) return std::log2(threads / kBlockHigh);
    return 0;
}

/// The metrics of a gpu_sddmm point (gpu_sddmm_features.cpp).
void gpu_sddmm_metrics(const Shape &s, const ScheduleParams &p, Writer &w);

}  // namespace gsparse::autotune::detail
