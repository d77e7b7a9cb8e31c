// Measurement of schedule candidates: compile the kernel for a candidate, call it once on a small
// load graph (on a GPU that call loads the kernel's module) and build the problem graph's device
// arrays, run it once on the problem to warm up, then time `runs` runs. Every run is timed with the
// steady clock around the call and a device synchronization. With a cutoff, a candidate whose
// warm-up run (or, without warm-up, first timed run) is far slower than the fastest one measured so
// far is not timed further, that run its one time: a tuner learns all it needs from one run of a
// kernel far off the pace, and a sweep spends most of its time on such kernels.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "autotune/tuning_problem.h"
#include "runtime/kernel_cache.h"
#include "runtime/sddmm_kernel.h"
#include "runtime/spmm_kernel.h"
#include "schedules/schedule_params.h"

namespace gsparse::autotune {

struct Measurement {
    ScheduleParams schedule;
    bool ok = false;
    std::string error;           ///< why compiling or running failed (ok == false)
    double compile_ms = 0;       ///< waiting for the kernel (0 when compiled in the background)
    double load_ms = 0;          ///< the call on the load graph (module load) and the graph's device arrays
    double warmup_ms = 0;        ///< the warm-up runs (less the one that cut the candidate off, if one did)
    std::vector<double> run_ms;  ///< every timed run
    double median_ms = 0, mean_ms = 0, min_ms = 0;
    bool cut_off = false;  ///< timed once only (run_ms has one run): slower than the cutoff allows
    bool recorded = false;  ///< taken from earlier measurement records (TuneOptions::recorded), not timed now
};

/// The kernel keys a candidate is measured with: the kernels the operator API runs for the
/// problem's tensors (prepare() first: the indexing width follows the tensors' sizes).
SpmmKernelKey measured_spmm_key(const TuningProblem &p, const ScheduleParams &schedule);
SddmmKernelKey measured_sddmm_key(const TuningProblem &p, const ScheduleParams &schedule);

class Measurer {
public:
    /// kernels: a cache of compiled kernels shared with other measurers (nullptr: its own).
    explicit Measurer(TuningProblem &problem, int runs = 10, int warmup = 1, KernelCache *kernels = nullptr);
    /// Never throws for a failing candidate: the failure is recorded in the Measurement.
    Measurement measure(const ScheduleParams &schedule);
    /// Compiles the kernels of several candidates on `threads` threads (failures are left for
    /// measure() to report). With `background`, returns at once: threads - 1 workers compile the
    /// candidates in order while the caller measures them (measure() waits for a kernel being
    /// compiled, or compiles one not yet started itself). Only for GPU problems: on the CPU the
    /// compiles would share the cores that the timed runs measure.
    void precompile(const std::vector<ScheduleParams> &schedules, int threads, bool background = false);
    ~Measurer();
    Measurer(const Measurer &) = delete;
    Measurer &operator=(const Measurer &) = delete;
    /// factor > 0: stop timing a candidate whose last warm-up run (first timed run without warm-up)
    /// exceeds factor x the fastest median measured so far, plus slack_ms; that run is its one time.
    /// The slack keeps short kernels, whose first runs vary most (launch, clocks), from being cut by
    /// noise; on long ones the factor decides. 0 (the default) times every candidate `runs` times.
    void set_cutoff(double factor, double slack_ms = 0);
    /// A measurement not timed by this measurer (one recorded earlier, as a resumed sweep or tune
    /// reads it): the cutoff compares later candidates against it as against one timed here, so a
    /// resumed run cuts off the same slow kernels as an uninterrupted one.
    void note_reference(const Measurement &m);
    /// compile() also builds the host-side arrays of g (SpmmKernel::prepare, SddmmKernel::prepare) for
    /// the candidates `wants` accepts: a sweep's other problems, whose measurers use the kernels this
    /// one compiles in the background, get their graphs prepared there too. g must outlive the measurer.
    void prepare_also(const Graph &g, std::function<bool(const ScheduleParams &)> wants);
    /// The compiled kernels (shared or its own).
    KernelCache &kernels() { return *cache_; }

private:
    /// A compiled candidate: runs on a problem, and builds a graph's device arrays.
    struct Compiled {
        std::function<void(TuningProblem &)> run;
        std::function<void(const Graph &)> upload;
    };
    /// The kernel of a candidate (compiled once, kept in the measurer's cache).
    Compiled compile(const ScheduleParams &schedule);
    /// The host-side arrays of the candidate's kernel on the problem's graph and on prepare_also()'s.
    template <typename Kernel>
    void prepare_graphs(const Kernel &kernel, const ScheduleParams &schedule) const;

    TuningProblem &problem_;
    struct OtherGraph {
        const Graph *graph;
        std::function<bool(const ScheduleParams &)> wants;
    };
    std::vector<OtherGraph> prepare_also_;
    /// problem_.load_problem(), made on the first measurement.
    std::unique_ptr<TuningProblem> load_;
    int runs_, warmup_;
    double cutoff_ = 0, cutoff_slack_ms_ = 0;
    double best_median_ms_ = 0;  ///< fastest median of a fully timed candidate, 0 before the first
    KernelCache own_cache_;
    KernelCache *cache_;
    /// The compile workers of the last precompile() (still running after a background one).
    void join_background();
    std::vector<std::thread> background_;
    std::vector<ScheduleParams> background_queue_;
    std::atomic<size_t> background_next_{0};
};

}  // namespace gsparse::autotune
