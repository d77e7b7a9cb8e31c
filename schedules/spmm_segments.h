// Schedules of g-SpMM by nonzeros (ops/spmm_segment_algorithm.h).
//
// CUDA: the zero fill is one flat loop over the output, 256 threads a block. The scatter is atomic
// and divided into runs of `run` consecutive edges: a thread owns one feature element of one run
// and walks the run's edges in order; threads (feature, run) with T feature threads (the feature
// length rounded up to a power of two, at most 128) and 256 / T runs a block, blocks over runs and
// feature chunks. AccumulateAtomicRuns (halide_ext) keeps the run's sum of a row in a register and
// adds it to the output once per row the run touches, so a row costs one atomic add per run that
// holds part of it: long rows are split over many threads, short rows share one.
// CPU: the zero fill serial; the scatter's runs in parallel tasks (atomic adds), each feature of a
// run walking its edges in order under the same register accumulation.
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

/// Why `run` is not a run length of the schedule ("" when it is).
std::string segment_run_invalid_reason(int64_t run);

/// Whether the point names this schedule.
inline bool is_segment_point(const ScheduleParams &p) { return p.schedule == kSegmentSchedule; }

/// The run length of a spmm_segments point (the default when it leaves it out); ScheduleError for a
/// point of another schedule, another knob or an invalid run.
int64_t segment_run_of(const ScheduleParams &p);

/// Applies the schedule (ScheduleError for an invalid run).
void schedule_spmm_segments(SpmmSegmentAlgorithm &a, Device device, int64_t run = kSegmentRunDefault);

}  // namespace gsparse
