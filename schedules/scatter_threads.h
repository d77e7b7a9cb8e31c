// What the GPU schedules of atomic scatters (spmm_push, spmm_segments) share: the output's feature
// dimensions fused into one, and threads over it.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gsparse {

/// Threads over a fused feature dimension of `len` elements: len rounded up to a power of two, at
/// most 128.
inline int scatter_feature_threads(int64_t len) {
    int t = 1;
    while (t < len && t < 128) t *= 2;
    return t;
}

/// The feature dimensions f (innermost first) of a Func or a Stage fused into one; the fused
/// Vars are named prefix1, prefix2, ...
template <typename S>
Halide::Var fuse_feature_dims(S &stage, const std::vector<Halide::Var> &f, const std::string &prefix) {
    Halide::Var fused = f[0];
    for (size_t d = 1; d < f.size(); d++) {
        Halide::Var next(prefix + std::to_string(d));
        stage.fuse(fused, f[d], next);
        fused = next;
    }
    return fused;
}

}  // namespace gsparse
