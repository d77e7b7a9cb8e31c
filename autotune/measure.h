// Measurement of schedule candidates: compile the kernel for a candidate, run it once to warm up,
// then time `runs` runs. On the CPU every run is timed with the steady clock around the call. With
// a cutoff, a candidate whose first timed run is far slower than the fastest one measured so far is
// not timed further: a tuner learns all it needs from one run of a kernel 3x off the pace.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autotune/tuning_problem.h"
#include "runtime/kernel_cache.h"
#include "schedules/schedule_params.h"

namespace gsparse::autotune {

struct Measurement {
    ScheduleParams schedule;
    bool ok = false;
    std::string error;           ///< why compiling or running failed (ok == false)
    double compile_ms = 0;
    std::vector<double> run_ms;  ///< every timed run
    double median_ms = 0, mean_ms = 0, min_ms = 0;
    bool cut_off = false;  ///< timed once only: slower than the cutoff allows
};

class Measurer {
public:
    explicit Measurer(TuningProblem &problem, int runs = 10, int warmup = 1);
    /// Never throws for a failing candidate: the failure is recorded in the Measurement.
    Measurement measure(const ScheduleParams &schedule);
    /// Compiles the kernels of several candidates on `threads` threads (failures are left for
    /// measure() to report).
    void precompile(const std::vector<ScheduleParams> &schedules, int threads);
    /// factor > 0: stop timing a candidate whose first timed run exceeds factor x the fastest
    /// median measured so far. 0 (the default) times every candidate `runs` times.
    void set_cutoff(double factor);

private:
    /// The kernel of a candidate (compiled once, kept in the measurer's cache) as a callable run.
    std::function<void()> compile(const ScheduleParams &schedule);

    TuningProblem &problem_;
    int runs_, warmup_;
    double cutoff_ = 0;
    double best_median_ms_ = 0;  ///< fastest median of a fully timed candidate, 0 before the first
    KernelCache cache_;
};

}  // namespace gsparse::autotune
