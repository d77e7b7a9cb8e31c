// Nonzero lanes for gpu_spmm (knob kNnzLanes): the nonzeros of a row are split over L lanes of a
// warp, lane l reducing the positions k ≡ l (mod L) (consecutive lanes read consecutive col_idx
// entries, so the loads stay coalesced), and the L partial results are combined through warp
// shuffles.
//
//   lanes(f, v, l)  = Φ_{ko : ko * L + l < deg(v)} msg(f, v, k = ko * L + l)
//   acc(f, v)       = Φ_{l < L} lanes(f, v, l)
//
// sum and mean: Halide's rfactor of the algorithm's reduction (acc keeps its definition and out
// its finalization). max and min: rfactor cannot prove the first-message-wins arg reduction
// associative, and combining lanes in lane order would break ties by lane instead of by position,
// so the lane form is written out: each lane also keeps the position k of its best message, the
// combine takes the better value and on equal values the smaller k (ties keep the earliest
// neighbour in row order, as the sequential reduction does), and a.acc / a.out are replaced by the
// combining stage and a finalization that drops the position.
//
// The schedule maps l to gpu_lanes inside the row's thread, so Halide's warp-shuffle lowering
// stripes `lanes` across the lanes and turns the combine's loads into shfl.sync.
#pragma once

#include <Halide.h>

#include "ops/spmm_algorithm.h"

namespace gsparse {

struct NnzLanes {
    Halide::Func lanes;  ///< the per-lane partial results, computed inside the row's thread
    Halide::Var lane;    ///< the lane variable of `lanes` (pure)
    Halide::RVar ko;     ///< the reduction variable of lanes' update (position k / L)
    Halide::RVar combine;  ///< the reduction variable of a.acc's update over the L lanes
};

/// Splits the row reduction of a.acc over `lanes` lanes (>= 2). For max/min a.acc and a.out are
/// replaced (see above). Call before split_rows / bind_rows: they build on a.acc. Throws
/// ScheduleError when the algorithm's reduction does not have the form build_spmm_algorithm gives.
NnzLanes split_nnz_lanes(SpmmAlgorithm &a, int lanes);

}  // namespace gsparse
