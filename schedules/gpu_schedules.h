// CUDA schedules of g-SpMM and g-SDDMM.
#pragma once

#include <optional>

#include "schedules/schedule.h"

namespace gsparse {

/// gpu_spmm: the paper's g-SpMM schedule. Knobs:
///   kMTile     rows per thread block (one row per thread row)
///   kNTile     threads along the innermost feature dimension
///   kNRegTile  outputs per thread, at stride kNTile (1-D stride register tiling)
///   kNnzTile   nonzeros of a row staged per step when smemColIdx = 1
///   smemColIdx stage the kNnzTile x kMTile tile of neighbour ids in shared memory
SpmmScheduleDef gpu_spmm_schedule();

/// gpu_spmm's expert rules: the hand-written default per feature-length band, from H100 measurements
/// on the dataset twins. The schedule's default_params takes the learned selector's point
/// (spmm_selector.h) where it decides and these rules elsewhere (no graph statistics, graphs unlike
/// the zoo's training part).
ScheduleParams gpu_spmm_expert_default(const Problem &p);

/// The row-tail form of a gpu_spmm row point that does not split rows: the same tile with rows cut
/// after kRowTailsGateSplit nonzeros and their tails added by the tails' kernel (rowTails = 1);
/// nullopt where that point is invalid, the problem has no graph statistics, or row tails are off
/// for defaults (GSPARSE_SPMM_ROW_TAILS=0). The graph default (src/api/operators.cpp) runs it from
/// kRowTailsOverSegmentsFeatures on where the segment gate would take the segment form.
std::optional<ScheduleParams> gpu_spmm_row_tails_form(const ScheduleParams &rows, const Problem &p);
inline constexpr int64_t kRowTailsGateSplit = 128;

/// Whether a point runs on the graph relabeled in its locality order (gpu_spmm, rowBalance = 3):
/// its kernel reads the relabeled graph's CSR and edge ids, which emitted kernels cannot take.
inline bool runs_on_relabeled_graph(const ScheduleParams &s) {
    return s.schedule == "gpu_spmm" && s.get_or("rowBalance", 0) == 3;
}

/// gpu_sddmm: edge-parallel g-SDDMM (the paper's Fig. 7). Knobs:
///   kMTile      edges per thread block
///   kLaneWidth  lanes per edge; dot's reduction is split over them and combined with warp shuffles
SddmmScheduleDef gpu_sddmm_schedule();

/// The largest kMTile of gpu_sddmm: device copies of the COO arrays are padded to a multiple of it.
inline constexpr int64_t kMaxSddmmEdgeTile = 1024;

}  // namespace gsparse
