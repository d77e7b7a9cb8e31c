#include "autotune/sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "autotune/progress.h"
#include "autotune/replay.h"
#include "core/error.h"

namespace gsparse::autotune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool recorded_earlier(const SweepProblem &sp, const ScheduleParams &q) { return sp.recorded && sp.recorded(q); }

/// Whether sp's screen leaves q out: never its expert default (`fallback`), nor a point measured
/// earlier (its recorded time costs nothing).
bool left_out(const SweepProblem &sp, const ScheduleParams &fallback, const ScheduleParams &q) {
    return sp.screened && !(q == fallback) && !recorded_earlier(sp, q) && sp.screened(q);
}

}  // namespace

SweepScreen screen_by_records(const std::vector<MeasurementRecord> &records, const TuningProblem &p, double factor) {
    if (!(factor >= 1)) fail<Error>("the screen factor must be >= 1, got ", factor);
    const ScheduleSpace space = schedule_space(p);
    const std::string device = p.device_label(), op = p.op_name();
    const uint64_t fingerprint = p.graph.fingerprint();
    // The latest record of a point wins (as in recorded_measurements); one feature length only.
    auto times = std::make_shared<std::map<std::string, double>>();
    SweepScreen out;
    out.best_ms = std::numeric_limits<double>::infinity();
    for (const auto &r : records) {
        if (r.device != device || r.op != op || r.graph_fingerprint != fingerprint || r.schedule.schedule != space.schedule)
            continue;
        if (out.feat == 0) out.feat = r.feat;
        if (r.feat != out.feat)
            fail<Error>("the screen's records of ", p.graph_name, " hold two feature lengths (", out.feat, " and ", r.feat,
                        "); screen by one sweep");
        if (!(r.time_ms > 0)) fail<Error>("a screen record of ", p.graph_name, " has time ", r.time_ms, " ms");
        (*times)[space.complete(r.schedule).str()] = r.time_ms;
    }
    if (times->empty())
        fail<Error>("the screen's records hold no ", op, " of ", p.graph_name, " (fingerprint ", p.graph.fingerprint(),
                    ") on ", device, " with schedule ", space.schedule);
    for (const auto &[point, ms] : *times) out.best_ms = std::min(out.best_ms, ms);
    out.recorded = times->size();
    const double limit = factor * out.best_ms;
    out.screened = [times, space, limit](const ScheduleParams &q) {
        auto it = times->find(space.complete(q).str());
        return it != times->end() && it->second > limit;
    };
    return out;
}

std::vector<TuneResult> sweep_together(const std::vector<SweepProblem> &problems, const TuneOptions &options,
                                       double time_limit_s) {
    const auto started = std::chrono::steady_clock::now();
    if (problems.empty()) fail<Error>("a sweep needs at least one problem");
    if (!(time_limit_s >= 0)) fail<Error>("the sweep's time limit must be >= 0 seconds (0: none), got ", time_limit_s);
    const TuningProblem &first = *problems.front().problem;
    for (const auto &sp : problems) {
        const TuningProblem &p = *sp.problem;
        if (p.op_name() != first.op_name() || p.lhs_feat != first.lhs_feat || p.rhs_feat != first.rhs_feat ||
            p.device != first.device)
            fail<Error>("problems swept together must share the operator, feature shapes and device: ", p.graph_name,
                        " has ", p.op_name(), " on ", p.device_label(), ", ", first.graph_name, " ", first.op_name(),
                        " on ", first.device_label());
    }
    KernelCache own;
    KernelCache &kernels = options.kernels ? *options.kernels : own;
    const size_t compiled_before = kernels.stats().misses;
    const int threads = options.compile_threads > 0 ? options.compile_threads
                                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const bool background = first.device == Device::CUDA;

    struct State {
        TuneResult r;
        SearchSpace space;
        std::set<ScheduleParams> points;  // the valid points of this problem's space
        std::unique_ptr<Measurer> measurer;
        double wall_s = 0;
    };
    std::vector<State> states(problems.size());
    std::vector<ScheduleParams> order;  // every problem's points, in enumeration order, each once
    std::set<ScheduleParams> listed;
    for (size_t i = 0; i < problems.size(); i++) {
        State &st = states[i];
        TuningProblem &p = *problems[i].problem;
        const auto ts = std::chrono::steady_clock::now();
        st.space = build_search_space(p);
        if (st.space.valid.empty()) fail<ScheduleError>("no valid schedule point for ", p.op_name(), " on ", p.graph_name);
        st.r = TuneResult::of(p, SearchMode::Exhaustive);
        st.r.set_space(st.space);
        st.r.phases.space_s = seconds_since(ts);
        st.measurer = std::make_unique<Measurer>(p, options.runs, options.warmup, &kernels);
        st.measurer->set_cutoff(options.cutoff, options.cutoff_slack_ms);
        st.points.insert(st.space.valid.begin(), st.space.valid.end());
        for (const auto &q : st.space.valid)
            if (listed.insert(q).second) order.push_back(q);
    }
    // The first measurer compiles for all problems; its workers prepare every graph that will run
    // the candidate. The predicate owns what it reads: the workers may outlive the other states.
    for (size_t i = 1; i < problems.size(); i++) {
        auto runs_here = [points = states[i].points, sp = problems[i],
                          fallback = states[i].space.expert_default](const ScheduleParams &q) {
            return points.count(q) && !recorded_earlier(sp, q) && !left_out(sp, fallback, q);
        };
        states.front().measurer->prepare_also(problems[i].problem->graph, runs_here);
    }
    auto measure = [&](size_t i, const ScheduleParams &q) {
        State &st = states[i];
        const auto ts = std::chrono::steady_clock::now();
        Measurement m;
        if (problems[i].recorded)
            if (auto rec = problems[i].recorded(q)) m = *rec;
        if (m.recorded)
            st.measurer->note_reference(m);  // a resumed sweep's cutoff starts from the times it has
        else
            m = st.measurer->measure(q);
        st.wall_s += seconds_since(ts);
        if (!m.recorded && problems[i].on_measurement) problems[i].on_measurement(m);
        return m;
    };
    auto screened_out = [&](size_t i, const ScheduleParams &q) {
        return left_out(problems[i], states[i].space.expert_default, q);
    };
    auto to_measure = [&](size_t i, const ScheduleParams &q) {
        return states[i].points.count(q) && !recorded_earlier(problems[i], q) && !screened_out(i, q);
    };
    // The expert defaults first (each problem's cutoff starts from it, as in tune()).
    for (size_t i = 0; i < problems.size(); i++) {
        State &st = states[i];
        st.r.expert_default = measure(i, st.space.expert_default);
        st.r.account(st.r.expert_default);
        if (!st.r.expert_default.ok)
            fail<KernelError>("the expert default schedule ", st.space.expert_default.str(), " of ",
                              problems[i].problem->graph_name, " failed: ", st.r.expert_default.error);
        st.r.best = st.r.expert_default;
    }
    ProgressBar bar("sweeping", order.size());
    const size_t chunk = 4 * static_cast<size_t>(threads);
    for (size_t at = 0; at < order.size(); at += chunk) {
        if (time_limit_s > 0 && seconds_since(started) >= time_limit_s) break;
        const size_t end = std::min(at + chunk, order.size());
        // The chunk's points that some problem still has to measure, compiled once for all of them.
        std::vector<ScheduleParams> fresh;
        for (size_t k = at; k < end; k++)
            for (size_t i = 0; i < problems.size(); i++)
                if (to_measure(i, order[k])) {
                    fresh.push_back(order[k]);
                    break;
                }
        if (!fresh.empty()) states.front().measurer->precompile(fresh, threads, background);
        for (size_t i = 0; i < problems.size(); i++) {
            State &st = states[i];
            for (size_t k = at; k < end; k++) {
                const ScheduleParams &q = order[k];
                if (!st.points.count(q)) continue;  // not a point of this problem's space
                if (screened_out(i, q)) {
                    st.r.screened++;
                    continue;
                }
                st.r.add(q == st.space.expert_default ? st.r.expert_default : measure(i, q));
            }
        }
        if (options.progress) {
            char status[64];
            std::snprintf(status, sizeof status, "%zu problems", problems.size());
            bar.update(end, status);
        }
    }
    if (options.progress) bar.finish();
    // The first problem's measurer compiles for all: its result counts the sweep's compiles.
    states.front().r.kernels_compiled = kernels.stats().misses - compiled_before;
    std::vector<TuneResult> out;
    for (size_t i = 0; i < states.size(); i++) {
        State &st = states[i];
        // A problem's wall time: enumerating its space and measuring its points (waits for the
        // shared compiles included); the sweep's whole time is the caller's to report.
        st.r.wall_s = st.wall_s + st.r.phases.space_s;
        // Every valid point is a candidate once reached; the expert default, when it is a point of
        // the space, was measured first even if the loop did not reach it.
        const bool default_pending =
            st.points.count(st.space.expert_default) &&
            std::none_of(st.r.candidates.begin(), st.r.candidates.end(),
                         [&](const Measurement &m) { return m.schedule == st.space.expert_default; });
        const size_t accounted = st.r.candidates.size() + st.r.screened + (default_pending ? 1 : 0);
        if (accounted > st.space.valid.size())
            fail<Error>("sweep of ", problems[i].problem->graph_name, ": ", accounted,
                        " points accounted for in a space of ", st.space.valid.size());
        st.r.unmeasured = st.space.valid.size() - accounted;
        out.push_back(std::move(st.r));
    }
    return out;
}

}  // namespace gsparse::autotune
