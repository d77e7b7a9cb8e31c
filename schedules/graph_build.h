// Schedules of the graph-build pipelines (ops/graph_build_algorithm.h).
//
// CUDA: one thread per output entry, 128 (statistics) or 256 (row offsets, narrowing) a block; a
// statistics thread keeps its five partial values in registers and walks its edges (or partials)
// with a stride of the thread count, so that a warp's loads are contiguous, four steps unrolled so
// that their loads are in flight together; a row-offset thread runs its binary search in registers;
// the narrowing of a pair is one kernel; the self-loop graph's offsets and COO take one thread an
// entry, 256 a block, a COO thread running its binary search in registers; the loop graph's degree
// counters take one thread an edge adding atomically (only the counted edges add), GCN's weights
// one thread an edge. CPU: the same loops, serial (the pipelines' CPU form serves
// the C++ API on host arrays and the tests).
#pragma once

#include "core/tensor.h"
#include "ops/graph_build_algorithm.h"

namespace gsparse {

void schedule_coo_stats(CooStatsAlgorithm &a, Device device);
void schedule_stats_combine(StatsCombineAlgorithm &a, Device device);
void schedule_row_offsets(RowOffsetsAlgorithm &a, Device device);
void schedule_narrow_index(NarrowIndexAlgorithm &a, Device device);
void schedule_narrow_pair(NarrowPairAlgorithm &a, Device device);
void schedule_loop_row_ptr(LoopRowPtrAlgorithm &a, Device device);
void schedule_loop_coo(LoopCooAlgorithm &a, Device device);
void schedule_loop_coo_append(LoopCooAppendAlgorithm &a, Device device);
void schedule_loop_degrees(LoopDegreesAlgorithm &a, Device device);
void schedule_gcn_weights(GcnWeightsAlgorithm &a, Device device);

}  // namespace gsparse
