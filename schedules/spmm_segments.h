// Schedules of g-SpMM by nonzeros (ops/spmm_segment_algorithm.h).
//
// CUDA: the zero fill is one flat loop over the output, 256 threads a block. The scatter is atomic
// and divided into runs of `run` consecutive edges: a thread owns `tile` feature elements of one run
// (T apart, so that a warp's loads of one edge stay contiguous) and walks the run's edges in order,
// reading an edge's indices once for its `tile` loads; threads (feature, run) with T feature threads
// (the feature length over `tile`, rounded up, at most 128: F = 100 with tile 4 is 25 threads, none
// idle) and 256 / T runs a block, blocks over runs and feature chunks. AccumulateAtomicRuns (halide_ext) keeps the run's sum
// of a row in a register per feature element and adds it to the output once per row the run
// touches, so a row costs one atomic add per run that holds part of it: long rows are split over
// many threads, short rows share one.
// Warp lanes (`lanes = 32`, the algorithm's warp-lane form, rows of at most `tile` elements: one
// feature thread): a warp takes 32 x `run` consecutive edges, 32 a step, one a lane, reading the
// edge arrays coalesced; each lane adds up its edge's `tile` elements and SegmentedLaneAtomics
// (halide_ext) combines the lanes of a step that hit one row through warp shuffles, carrying a
// row that continues into the next step, so that a row costs about one atomic add per step it
// starts in (long rows: one per warp). 8 warps a block.
// CPU: the zero fill serial; the scatter's runs in parallel tasks (atomic adds), each feature of a
// run walking its edges in order under the same register accumulation (`tile` is a GPU knob: the
// CPU schedule is the same for every tile).
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"
#include "ops/spmm_segment_algorithm.h"
#include "schedules/schedule_params.h"

namespace gsparse {

/// The schedule's name in schedule points: spmm_segments{run=R}.
inline constexpr const char *kSegmentSchedule = "spmm_segments";

/// The run lengths (edges a GPU thread adds up in order) the schedule takes.
inline constexpr int64_t kSegmentRunChoices[] = {4, 8, 16, 32, 64, 128, 256};
/// The default run length.
inline constexpr int64_t kSegmentRunDefault = 32;
/// The feature elements a GPU thread owns (its register tile) the schedule takes.
inline constexpr int64_t kSegmentTileChoices[] = {1, 2, 4, 8};
/// The default tile.
inline constexpr int64_t kSegmentTileDefault = 1;

/// The lane values: 0 (a thread walks a run of edges) or 32 (a warp's lanes take consecutive edges).
inline constexpr int64_t kSegmentLaneChoices[] = {0, 32};

/// A point of the schedule: spmm_segments{run=R, tile=K, lanes=L} (any knob may be left out).
struct SegmentPoint {
    int64_t run = kSegmentRunDefault;
    int64_t tile = kSegmentTileDefault;
    int64_t lanes = 0;
};

/// Why `run` is not a run length of the schedule ("" when it is).
std::string segment_run_invalid_reason(int64_t run);

/// Why `tile` is not a tile of the schedule for an output of `feature_len` elements a row ("" when
/// it is): one of kSegmentTileChoices, and no more than the feature length (feature_len < 0: not
/// checked against it).
std::string segment_tile_invalid_reason(int64_t tile, int64_t feature_len = -1);

/// Why `lanes` is not valid for rows of `feature_len` elements with a tile of `tile` ("" when it is):
/// 0 or 32, and with 32 one feature thread (the tile covers the row: F <= tile) of a 32-bit dtype
/// (dtype_bits, 0: not checked; the lanes combine through warp shuffles of 32 bits).
std::string segment_lanes_invalid_reason(int64_t lanes, int64_t tile, int64_t feature_len = -1, int dtype_bits = 0);

/// The most feature threads of a run (a block's feature chunk is this many threads x the tile).
inline constexpr int64_t kSegmentMaxFeatureThreads = 128;

/// The feature threads T of a run for rows of `feature_len` elements and a tile of `tile`: the
/// length over the tile, rounded up, at most kSegmentMaxFeatureThreads.
int segment_feature_threads(int64_t feature_len, int64_t tile);

/// Whether a tile of `tile` elements keeps every feature thread busy on rows of `feature_len`
/// elements: the row's length is a multiple of the tile times the feature threads
/// (schedule_spmm_segments): every tile that divides a length of at most 128 x the tile, and tile 1
/// up to 128 elements. Tiles that do not cover rows exactly leave lanes idle (F = 47 and 100 with
/// tile 8, 32 and 16 threads of a power of two, were slower than the row schedules on the zoo's
/// heavy-tailed graphs, H100, 2026-11-27).
bool segment_tile_covers_rows(int64_t tile, int64_t feature_len);

/// The largest tile of kSegmentTileChoices, at most `tile`, that covers rows of `feature_len`
/// elements exactly; 1 when none does.
int64_t segment_tile_for_rows(int64_t tile, int64_t feature_len);

/// Whether the point names this schedule.
inline bool is_segment_point(const ScheduleParams &p) { return p.schedule == kSegmentSchedule; }

/// The knobs of a spmm_segments point (defaults for those it leaves out); ScheduleError for a point
/// of another schedule, another knob or an invalid value.
SegmentPoint segment_point_of(const ScheduleParams &p);

/// The point as schedule parameters (the tile left out when it is the default).
ScheduleParams segment_params(const SegmentPoint &point);

/// Applies the schedule (ScheduleError for an invalid run, or a tile invalid for the layout).
void schedule_spmm_segments(SpmmSegmentAlgorithm &a, Device device, const SegmentPoint &point = {});

}  // namespace gsparse
