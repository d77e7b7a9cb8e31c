// Exhaustive sweeps of several problems together (gsparse-sweep): one operator and feature shape on
// several graphs. The kernels do not depend on the graph, so the points go in chunks: a chunk is
// compiled once (in the background, by the first problem's measurer, into a shared kernel cache)
// and measured on every problem before the next chunk. A sweep cut short leaves every problem at the
// same point, and a resumed one (each problem's recorded measurements) compiles only the points that
// some problem still lacks.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "autotune/tuner.h"

namespace gsparse::autotune {

struct SweepProblem {
    TuningProblem *problem = nullptr;
    /// Measurements taken earlier (as TuneOptions::recorded); empty: none.
    std::function<std::optional<Measurement>(const ScheduleParams &)> recorded;
    /// Called with every new measurement of this problem (as TuneOptions::on_measurement).
    std::function<void(const Measurement &)> on_measurement;
};

/// Exhaustive results of every problem (mode "exhaustive", as tune() would give each). The problems
/// must share the operator, feature shapes and device; each gets its own search space (it may depend
/// on the graph) and its own cutoff state. Uses options.runs, warmup, cutoff, compile_threads and
/// progress (options.kernels, when set, is the shared cache). The first problem's measurer compiles
/// for all, so the first result's kernels_compiled counts the sweep's compiles and the others' are 0.
/// With time_limit_s > 0 the sweep starts no chunk once that many seconds have passed (the chunk
/// running then finishes): each result's `unmeasured` counts the points it did not reach, and the
/// records written so far let a later sweep resume. The expert defaults are always measured.
/// Throws Error for problems of different operators, shapes or devices, or a negative time limit.
std::vector<TuneResult> sweep_together(const std::vector<SweepProblem> &problems, const TuneOptions &options,
                                       double time_limit_s = 0);

}  // namespace gsparse::autotune
