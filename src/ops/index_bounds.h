// Index expressions of the sparse algorithms whose range Halide's (rectangular) bounds inference
// cannot derive: positions rowPtr(v) + k inside a row's ragged range, and node ids read from
// colIdx. Their ranges are guaranteed by graph validation (row_ptr is non-decreasing from 0 to nnz,
// every index lies in [0, num_nodes)), so the algorithms state them here, once, and bounds inference
// sizes the index and feature buffers from them.
#pragma once

#include <Halide.h>

namespace gsparse {

/// idx, known by validation to lie in [0, count).
inline Halide::Expr validated_index(const Halide::Expr &idx, const Halide::Expr &count) {
    return Halide::unsafe_promise_clamped(idx, 0, count - 1);
}

}  // namespace gsparse
