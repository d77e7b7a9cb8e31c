// Schedules of the transposed (push) g-SpMM (ops/spmm_push_algorithm.h).
//
// CUDA: the zero fill is one flat loop over the output, 256 threads a block. The scatter is made
// atomic; a thread owns one feature element of one destination row and walks the row's
// neighbours, adding to their rows: threads (feature, row) with T feature threads (the feature
// length rounded up to a power of two, at most 128) and min(256 / T, 32) rows a block (a graph
// view's row_ptr is padded to a multiple of 32 rows), blocks over rows and feature chunks.
// CPU: both stages serial (no atomics needed), the feature loop innermost.
#pragma once

#include "core/tensor.h"
#include "ops/spmm_push_algorithm.h"

namespace gsparse {

void schedule_spmm_push(SpmmPushAlgorithm &a, Device device);

}  // namespace gsparse
