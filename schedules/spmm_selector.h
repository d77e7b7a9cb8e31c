// The learned default of gpu_spmm: the schedule point a graph gets without tuning, chosen from its
// statistics by small decision trees (one per swept feature length) grown on the training part of
// the graph zoo (autotune/selector/train_selector.py, table in spmm_selector_table.inc).
//
// A tree's leaf ranks a few schedule points; the first one valid for the problem is taken. A leaf may
// name the expert rules instead (where no fixed point beat them), and a graph whose statistics lie
// outside what the trees were grown on (average row length beyond 2x the range seen, fewer rows than
// half the smallest graph, a source / destination ratio beyond 2x the range) is left to the expert
// rules too. Problems without statistics (ahead-of-time kernels, graph views) never reach it.
//
// The trees were measured with copy_lhs + sum. Feature lengths between the swept ones take the
// nearest swept length (in log scale) whose leaf holds a point valid for them.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "schedules/schedule.h"

namespace gsparse {

/// The statistics the trees split on, in the order of kSelectorFeatures: log2 average row length,
/// row-length COV, log2 (longest row / average), log2 nonzeros, log2 rows, log2 (sources / rows),
/// column-length COV, share of empty rows.
inline constexpr size_t kSelectorFeatureCount = 8;
std::array<double, kSelectorFeatureCount> selector_features(const GraphStats &stats);

/// The learned default point of gpu_spmm for problem p, or nullopt where the expert rules decide
/// (no statistics, outside the trees' support, an "expert" leaf, no ranked point valid for p, or the
/// selector turned off with GSPARSE_SPMM_SELECTOR=0). `invalid_reason` is gpu_spmm's validity rule.
std::optional<ScheduleParams> select_spmm_default(
    const Problem &p, const std::function<std::optional<std::string>(const ScheduleParams &, const Problem &)> &invalid_reason);

/// The segment gate: spmm_segments{run=R, tile=K} (g-SpMM by nonzeros, schedules/spmm_segments.h)
/// where its trees send problem p instead of the row schedule, else nullopt. The trees (one per swept
/// feature length, table spmm_segments_gate_table.inc from autotune/selector/train_segment_gate.py)
/// were grown on the zoo's training part from the default row schedule and the segment points (run
/// lengths, and feature tiles from F = 16) measured in one process, and take the segment form only
/// where it won by more than 5%: heavy-tailed graphs (a leaf's first point whose tile fits p's
/// feature length). Never for order-sensitive reductions (max / min), problems without statistics, outside the
/// trees' support, with the selector off, or with GSPARSE_SPMM_SEGMENTS=0 (the segment form adds with
/// atomics, so the order of a row's additions varies between calls; the row schedules' does not).
/// Before the trees, one rule: rows of one feature element (out_len 1) of float32 on a graph of at
/// least kSegmentWarpLanesMinEdges edges (the smallest graph it was measured on) whose row lengths
/// spread (row_length_cov >= kSegmentWarpLanesCov) and are short on average (avg_row_length <
/// kSegmentWarpLanesMaxAverage) take warp lanes over consecutive edges,
/// spmm_segments{run=kSegmentWarpLanesRun, lanes=32}. Grown on the zoo's training graphs at F = 1,
/// copy_lhs and u_mul_e (H200, 2026-11-28, benchmarks/results/2026-11-28-nvidia-h200-segment-warp-lanes):
/// 1.04x-1.68x faster than the previous default on every graph with a row-length COV from 1.6 to
/// 20.6 and an average row of 3 to 100 (Chung-Lu, R-MAT, bipartite, the products twins); slower on
/// the reddit and proteins twins (average rows of 492 and 597: the COO's second index array is
/// most of what the kernel reads there, 0.61x-0.99x) and on every graph with a COV up to 0.5
/// (lattices, batches, k-NN, Erdos-Renyi), where the rows' lanes read whole short rows. Runs of 4
/// steps were the fastest or within 2% of it on every graph taken. GSPARSE_SPMM_SEGMENT_LANES=0
/// turns the rule off (the trees decide).
std::optional<ScheduleParams> select_spmm_segments(const Problem &p);

/// The warp-lane rule of select_spmm_segments: its least edge count and row-length COV, the average
/// row length it stays below, and its run (steps a warp).
inline constexpr int64_t kSegmentWarpLanesMinEdges = 1000000;
inline constexpr double kSegmentWarpLanesCov = 1.0;
inline constexpr double kSegmentWarpLanesMaxAverage = 256;
inline constexpr int64_t kSegmentWarpLanesRun = 4;

/// From this innermost feature length on, a g-SpMM whose row default runs in the row-tail form
/// (gpu_spmm rowTails = 1) takes it instead of the segment gate's point: on the zoo's heavy-tailed
/// training graphs at F = 64, 128 and 256 the row-tail default was 1.02x-1.32x faster than the
/// previous default in all 12 cases (H100, 2026-11-27,
/// benchmarks/results/2026-11-27-nvidia-h100-80gb-hbm3-row-tails); below it the gate stands.
inline constexpr int64_t kRowTailsOverSegmentsFeatures = 64;

/// Whether defaults may take the row-tail form (gpu_spmm rowTails = 1); GSPARSE_SPMM_ROW_TAILS=0
/// turns it off (a long row's tails add atomically, so the last bits of its sum vary between calls;
/// without them every row schedule adds in the same order each call).
bool row_tails_defaults_enabled();

/// Whether gpu_spmm kernels may carry a register limit (gpu_spmm_register_limit);
/// GSPARSE_SPMM_REGISTER_LIMITS=0 leaves every kernel at the CUDA runtime's cap.
bool register_limits_enabled();

/// The feature lengths the selector has trees for (ascending).
std::vector<int64_t> selector_anchor_features();

/// Every point named by the selector's tables for feature length `anchor` (for tests).
std::vector<ScheduleParams> selector_points(int64_t anchor);

}  // namespace gsparse
