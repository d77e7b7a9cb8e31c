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

/// The layout of gpu_spmm's tails' kernel (rowTails = 1): V features a thread (4, 2 or 1; at most
/// the rows' own vector width max_vec where the rows load vectors, else 0), T threads over a row's
/// feature groups (the largest divisor of f0 / V up to 32: the tiles cover the rows exactly, since a
/// thread's tail sum is computed for its whole group outside any guard), M tails a block. The user
/// schedule builtin_gpu_spmm (dsl/builtin_schedules.h) takes the same.
struct RowTailLayout {
    int V = 1, T = 1, M = 128;
};
RowTailLayout row_tail_layout(int64_t f0, int64_t max_vec);
/// The fewest feature threads a tails' kernel may run unless they cover a row's feature groups:
/// below it (groups without a divisor from 8 to 32, e.g. the prime 47) few threads walk a tail's
/// whole row of features, and the kernel ran 5.5x slower than cuSPARSE (bip-h-8m, F = 47, H100,
/// 2026-11-28).
inline constexpr int kRowTailsMinThreads = 8;

/// The row-tail form of a gpu_spmm row point that does not split rows: the same tile with rows cut
/// after kRowTailsGateSplit nonzeros and their tails added by the tails' kernel (rowTails = 1);
/// nullopt where that point is invalid, the problem has no graph statistics, or row tails are off
/// for defaults (GSPARSE_SPMM_ROW_TAILS=0). The graph default (src/api/operators.cpp) runs it from
/// kRowTailsOverSegmentsFeatures on where the segment gate would take the segment form.
std::optional<ScheduleParams> gpu_spmm_row_tails_form(const ScheduleParams &rows, const Problem &p);
inline constexpr int64_t kRowTailsGateSplit = 128;

/// The register limit gpu_spmm gives a point's kernels (SpmmAlgorithm::max_registers; 0: none):
/// kRegisterLimitScalarEdgeRows for sum and mean of a message that reads an edge operand, on whole
/// rows (kRowSplit = 0, no row tails, no staged ids, no source tiles, rows in graph order) with
/// scalar loads (kVecWidth = 1). Those kernels took 56 registers a thread under the CUDA runtime's
/// cap of 64 (28 resident warps of 64 an SM on an H200); at 32 they run at full occupancy without
/// spilling. Placed from the zoo's training graphs (H200, 2026-11-28,
/// benchmarks/results/2026-11-28-nvidia-h200-register-limit): u_mul_e at F = 1 and 4 on lattices,
/// batches and k-NN graphs 1.07x-1.51x faster; the same process-wide limit slowed split rows, the
/// segment form and 4-wide loads (0.4x-0.9x), and left copy_lhs unchanged. Off with
/// GSPARSE_SPMM_REGISTER_LIMITS=0 (register_limits_enabled).
int gpu_spmm_register_limit(const SpmmSpec &spec, const ScheduleParams &s);
inline constexpr int kRegisterLimitScalarEdgeRows = 32;

/// gpu_spmm's default takes a thread per row for rows of one element without an edge operand on
/// graphs whose rows average at most this many nonzeros with a row-length COV below 1
/// (short_even_rows_default in schedules/gpu_spmm.cpp).
inline constexpr double kThreadRowsMaxAverage = 4.0;

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
