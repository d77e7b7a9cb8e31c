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

#include "autotune/records.h"
#include "autotune/tuner.h"

namespace gsparse::autotune {

struct SweepProblem {
    TuningProblem *problem = nullptr;
    /// Measurements taken earlier (as TuneOptions::recorded); empty: none.
    std::function<std::optional<Measurement>(const ScheduleParams &)> recorded;
    /// Called with every new measurement of this problem (as TuneOptions::on_measurement).
    std::function<void(const Measurement &)> on_measurement;
    /// Points this problem's sweep leaves out (a screened sweep, see screen_by_records); empty: none.
    /// The expert default is always measured.
    std::function<bool(const ScheduleParams &)> screened;
};

/// A screen for a sweep of problem p built from another sweep's records of the same graph, operator
/// and device at another feature length (a smaller one, measured first): a point is left out when its
/// recorded time there is above factor x the fastest recorded there. Points without a record are
/// measured. In the g-SpMM sweeps of the H100 twins, every point within 10% of the best at one feature
/// length was within 1.8x of the best at the length before (F = 32 -> 64 -> 128 -> 256); docs/tuner.md
/// has the numbers. Throws Error when factor < 1 or no record is of p's graph, operator, device and
/// schedule.
struct SweepScreen {
    std::function<bool(const ScheduleParams &)> screened;
    size_t recorded = 0;     ///< points of p's graph in the records
    int64_t feat = 0;        ///< the records' feature length
    double best_ms = 0;      ///< the fastest recorded time
};
SweepScreen screen_by_records(const std::vector<MeasurementRecord> &records, const TuningProblem &p, double factor);

/// Exhaustive results of every problem (mode "exhaustive", as tune() would give each). The problems
/// must share the operator, feature shapes and device; each gets its own search space (it may depend
/// on the graph) and its own cutoff state. Uses options.runs, warmup, cutoff, compile_threads and
/// progress (options.kernels, when set, is the shared cache). The first problem's measurer compiles
/// for all, so the first result's kernels_compiled counts the sweep's compiles and the others' are 0.
/// With time_limit_s > 0 the sweep starts no chunk once that many seconds have passed (the chunk
/// running then finishes): each result's `unmeasured` counts the points it did not reach, and the
/// records written so far let a later sweep resume. The expert defaults are always measured. Points
/// a problem's screen leaves out are neither compiled for it nor measured; its result counts them
/// (`screened`), and its best is the best of the points measured.
/// Throws Error for problems of different operators, shapes or devices, or a negative time limit.
std::vector<TuneResult> sweep_together(const std::vector<SweepProblem> &problems, const TuneOptions &options,
                                       double time_limit_s = 0);

}  // namespace gsparse::autotune
