#include "autotune/measure.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <numeric>

#include "core/error.h"
#include "api/gsparse.h"
#include "runtime/sddmm_kernel.h"
#include "runtime/spmm_kernel.h"
#include "runtime/spmm_segment_kernel.h"
#include "schedules/spmm_segments.h"

namespace gsparse::autotune {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Measurer::Measurer(TuningProblem &problem, int runs, int warmup, KernelCache *kernels)
    : problem_(problem), runs_(runs), warmup_(warmup), cache_(kernels ? kernels : &own_cache_) {
    if (runs < 1) fail<Error>("the number of timed runs must be >= 1, got ", runs);
    if (warmup < 0) fail<Error>("the number of warm-up runs must be >= 0, got ", warmup);
}

void Measurer::set_cutoff(double factor, double slack_ms) {
    if (!(factor == 0 || factor >= 1)) fail<Error>("the measurement cutoff must be 0 (off) or >= 1, got ", factor);
    if (!(slack_ms >= 0)) fail<Error>("the measurement cutoff's slack must be >= 0 ms, got ", slack_ms);
    cutoff_ = factor;
    cutoff_slack_ms_ = slack_ms;
}

void Measurer::note_reference(const Measurement &m) {
    if (m.ok && !m.cut_off && m.median_ms > 0 && (best_median_ms_ == 0 || m.median_ms < best_median_ms_))
        best_median_ms_ = m.median_ms;
}

Measurer::~Measurer() { join_background(); }

void Measurer::join_background() {
    // Workers stop taking candidates, then finish the compile they are in.
    background_next_ = background_queue_.size();
    for (auto &t : background_) t.join();
    background_.clear();
}

void Measurer::precompile(const std::vector<ScheduleParams> &schedules, int threads, bool background) {
    join_background();
    background_queue_ = schedules;
    background_next_ = 0;
    auto worker = [this] {
        for (size_t i = background_next_++; i < background_queue_.size(); i = background_next_++) {
            try {
                compile(background_queue_[i]);
            } catch (const std::exception &) {
                // measure() compiles again and records the error.
            }
        }
    };
    // In the background, threads - 1 workers (at least one) compile while the caller measures;
    // otherwise the caller is one of the `threads` compilers and waits for the others.
    for (int t = 1; t < (background ? std::max(threads, 2) : threads); t++) background_.emplace_back(worker);
    if (background) return;
    worker();
    join_background();
}

SpmmKernelKey measured_spmm_key(const TuningProblem &p, const ScheduleParams &schedule) {
    SpmmKernelKey key;
    key.spec = p.spmm;
    key.layout = p.layout;
    key.dtype = DType::F32;
    key.identity_edge_ids = spmm_identity_edge_ids(p.spmm, p.graph);
    key.schedule = schedule;
    key.device = p.device;
    return key;
}

SddmmKernelKey measured_sddmm_key(const TuningProblem &p, const ScheduleParams &schedule) {
    SddmmKernelKey key;
    key.spec = p.sddmm;
    key.layout = p.layout;
    key.dtype = DType::F32;
    key.schedule = schedule;
    key.device = p.device;
    // The indexing the operator API picks for the same tensors: gpu_sddmm's register form (edge
    // register tiles, vector loads) exists only with 32-bit indexing, so the default 64-bit key
    // would time a different kernel from the one users run.
    key.fit_indexing({&p.lhs, &p.rhs, &p.out});
    return key;
}

void Measurer::prepare_also(const Graph &g, std::function<bool(const ScheduleParams &)> wants) {
    join_background();
    prepare_also_.push_back({&g, std::move(wants)});
}

template <typename Kernel>
void Measurer::prepare_graphs(const Kernel &kernel, const ScheduleParams &schedule) const {
    kernel.prepare(problem_.graph);
    for (const OtherGraph &o : prepare_also_)
        if (o.wants(schedule)) kernel.prepare(*o.graph);
}

Measurer::Compiled Measurer::compile(const ScheduleParams &schedule) {
    // The host side of the candidate's graph arrays (its edge or row order, the relabeled graph:
    // seconds on a large graph) is built here, in the background compile workers, rather than in the
    // candidate's load step on the measuring thread.
    TuningProblem &p = problem_;
    if (p.kind == OpKind::Spmm && is_segment_point(schedule)) {
        // g-SpMM by nonzeros: compiled here, run through the operator API (which builds the graph's
        // view on its COO and device copies on the first call, the load step).
        SpmmSegmentKernelKey key;
        key.spec = p.spmm;
        key.layout = p.layout;
        key.dtype = DType::F32;
        key.point = segment_point_of(schedule);
        key.device = p.device;
        SpmmSegmentKernel::get(key, *cache_);
        KernelCache *cache = cache_;
        auto run = [schedule, cache](TuningProblem &q) {
            OpOptions o;
            o.schedule = schedule;
            o.cache = cache;
            gspmm_into(q.graph, q.spmm, q.lhs, q.rhs, q.out, nullptr, nullptr, o);
        };
        return {run, [](const Graph &) {}};
    }
    if (p.kind == OpKind::Spmm) {
        auto kernel = SpmmKernel::get(measured_spmm_key(p, schedule), *cache_);
        prepare_graphs(*kernel, schedule);
        const bool args = has_arg_outputs(p.spmm.reduce);
        return {[kernel, args](TuningProblem &q) {
                    kernel->run(q.graph, q.lhs, q.rhs, q.out, args ? &q.arg_u : nullptr, args ? &q.arg_e : nullptr);
                },
                [kernel](const Graph &g) { kernel->upload(g); }};
    }
    auto kernel = SddmmKernel::get(measured_sddmm_key(p, schedule), *cache_);
    prepare_graphs(*kernel, schedule);
    return {[kernel](TuningProblem &q) { kernel->run(q.graph, q.lhs, q.rhs, q.out); },
            [kernel](const Graph &g) { kernel->upload(g); }};
}

Measurement Measurer::measure(const ScheduleParams &schedule) {
    Measurement m;
    m.schedule = schedule;
    try {
        auto t0 = std::chrono::steady_clock::now();
        Compiled kernel = compile(schedule);
        m.compile_ms = ms_since(t0);
        // The first call of a kernel (on a GPU it loads the module) and the first call on a graph
        // (its device arrays) do work that later calls do not: both happen before the warm-up.
        auto tl = std::chrono::steady_clock::now();
        if (!load_) load_ = std::make_unique<TuningProblem>(problem_.load_problem());
        kernel.run(*load_);
        load_->sync();
        kernel.upload(problem_.graph);
        problem_.sync();
        m.load_ms = ms_since(tl);
        auto timed_run = [&] {
            auto t = std::chrono::steady_clock::now();
            kernel.run(problem_);
            problem_.sync();
            return ms_since(t);
        };
        auto too_slow = [&](double ms) {
            return cutoff_ > 0 && best_median_ms_ > 0 && ms > cutoff_ * best_median_ms_ + cutoff_slack_ms_;
        };
        double last_warmup = 0;
        for (int i = 0; i < warmup_; i++) {
            last_warmup = timed_run();
            m.warmup_ms += last_warmup;
        }
        if (warmup_ > 0 && too_slow(last_warmup)) {
            m.cut_off = true;
            m.warmup_ms -= last_warmup;
            m.run_ms.push_back(last_warmup);
        }
        for (int i = 0; i < runs_ && !m.cut_off; i++) {
            m.run_ms.push_back(timed_run());
            if (i == 0 && too_slow(m.run_ms[0])) m.cut_off = true;
        }
        std::vector<double> sorted = m.run_ms;
        std::sort(sorted.begin(), sorted.end());
        size_t n = sorted.size();
        m.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        m.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
        m.min_ms = sorted.front();
        m.ok = true;
        note_reference(m);
    } catch (const std::exception &e) {
        m.ok = false;
        m.error = e.what();
    }
    return m;
}

}  // namespace gsparse::autotune
