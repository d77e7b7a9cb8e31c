// CUDA schedules of g-SpMM (and, later, g-SDDMM).
#pragma once

#include "schedules/schedule.h"

namespace gsparse {

/// gpu_spmm: the paper's g-SpMM schedule. Knobs:
///   kMTile     rows per thread block (one row per thread row)
///   kNTile     threads along the innermost feature dimension
///   kNRegTile  outputs per thread, at stride kNTile (1-D stride register tiling)
///   kNnzTile   nonzeros of a row staged per step when smemColIdx = 1
///   smemColIdx stage the kNnzTile x kMTile tile of neighbour ids in shared memory
SpmmScheduleDef gpu_spmm_schedule();

}  // namespace gsparse
