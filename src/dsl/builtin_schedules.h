// The built-in CUDA g-SpMM schedule (schedules/gpu_spmm.cpp) written with the public directives of
// user schedules (dsl/user_spmm.h): the same knobs under the same names, so that a point the
// built-in operator runs (gsparse::gspmm_default_schedule, Graph.default_schedule in Python) runs
// on the same algorithm as a user program (dsl/builtin_programs.h) through the public API.
//
//   rows   blocks of kMTile rows x kNTile * kNRegTile * kVecWidth features; thread ft owns kNRegTile
//          groups of kVecWidth consecutive features at stride kNTile * kVecWidth (aligned_rows for
//          vector loads), the block's accumulators in registers (register_tiles); one guarded
//          feature tile where it is wider than F
//   ids    smemColIdx = 1: each block's neighbour ids staged kNnzTile at a time in shared memory
//          (stage_neighbours)
//   lanes  kNnzLanes = L > 1: each feature thread of a row is L lanes of the warp (split_nnz_lanes,
//          kNnzUnroll positions a lane an iteration), merged through warp shuffles (int32_indexing)
//   split  kRowSplit > 0: rows split into segments (split_rows, with lanes where L > 1), a kernel of
//          its own, then the rows merging theirs
//   order  rowBalance = 1 / 2: rows in order of in-degree (balanced_rows) / the locality order
//          (locality_rows)
//   tails  rowTails = 1: rows keep their first kRowSplit positions and the rest comes in tails
//          added to them atomically by a kernel of its own (split_row_tails; sum without finalize)
//   tiles  kSrcTile = T > 0: rows reduced in runs within tiles of T source ids (split_rows(L, T))
//   relabel rowBalance = 3: the kernel on the graph relabeled in its locality order, the source
//          features gathered into the new order by a kernel of their own (relabel_sources)
// Not expressed (a ScheduleError names the knobs): ids staged together with split rows or source
// tiles (stage_neighbours does not combine with split_rows). The validity rule is the built-in's
// where the forms meet (threads a block, shared memory, lanes, vectors, row tails).
// CUDA only.
#pragma once

#include "dsl/user_spmm.h"

namespace gsparse::dsl {

/// The schedule "builtin_gpu_spmm" (see the header comment).
const ScheduleDef &builtin_gpu_spmm_schedule();

}  // namespace gsparse::dsl
