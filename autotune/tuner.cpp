#include "autotune/tuner.h"

#include <algorithm>
#include <ctime>
#include <numeric>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

#include "autotune/progress.h"
#include "core/error.h"
#include "ops/spmm_segment_algorithm.h"
#include "schedules/spmm_segments.h"

namespace gsparse::autotune {

SearchMode parse_search_mode(const std::string &s) {
    if (s == "genetic") return SearchMode::Genetic;
    if (s == "exhaustive") return SearchMode::Exhaustive;
    if (s == "random") return SearchMode::Random;
    fail<Error>("unknown search mode '", s, "' (expected genetic, random or exhaustive)");
}

const char *search_mode_name(SearchMode m) {
    switch (m) {
    case SearchMode::Genetic: return "genetic";
    case SearchMode::Random: return "random";
    case SearchMode::Exhaustive: return "exhaustive";
    }
    return "?";
}

TuneResult TuneResult::of(const TuningProblem &p, SearchMode mode) {
    TuneResult r;
    r.op = p.op_name();
    r.graph = p.graph_name;
    r.device = p.device_label();
    r.mode = search_mode_name(mode);
    r.stats = p.graph.stats();
    r.lhs_feat = p.lhs_feat;
    r.rhs_feat = p.rhs_feat;
    return r;
}

void TuneResult::set_space(const SearchSpace &space) {
    space_size = space.space.size();
    valid_size = space.valid.size();
    alias_size = space.aliases;
}

void TuneResult::account(const Measurement &m) {
    phases.compile_wait_s += m.compile_ms / 1000;
    phases.load_s += m.load_ms / 1000;
    phases.warmup_s += m.warmup_ms / 1000;
    for (double t : m.run_ms) phases.timed_s += t / 1000;
}

void TuneResult::add(const Measurement &m) {
    if (!(m.schedule == expert_default.schedule)) account(m);  // the default is measured once, first
    // A cut-off candidate ran once, slower than the fastest median so far: it is never the best,
    // even where an outlier run raised the fastest candidate's mean above that single run.
    if (m.ok && !m.cut_off && (!best.ok || m.mean_ms < best.mean_ms)) best = m;
    candidates.push_back(m);
}

double TuneResult::speedup_over_default() const {
    return expert_default.ok && best.ok && best.mean_ms > 0 ? expert_default.mean_ms / best.mean_ms : 0.0;
}

static nlohmann::json measurement_json(const Measurement &m) {
    nlohmann::json j = m.schedule.to_json();
    j["ok"] = m.ok;
    if (!m.ok) j["error"] = m.error;
    j["compile_ms"] = m.compile_ms;
    j["load_ms"] = m.load_ms;
    j["warmup_ms"] = m.warmup_ms;
    j["median_ms"] = m.median_ms;
    j["mean_ms"] = m.mean_ms;
    j["min_ms"] = m.min_ms;
    j["run_ms"] = m.run_ms;
    if (m.cut_off) j["cut_off"] = true;
    if (m.recorded) j["recorded"] = true;
    return j;
}

nlohmann::json TuneResult::to_json() const {
    nlohmann::json j;
    j["op"] = op;
    j["graph"] = {{"name", graph},
                  {"nodes", stats.num_rows},
                  {"edges", stats.nnz},
                  {"avg_row_length", stats.avg_row_length},
                  {"max_row_length", stats.max_row_length},
                  {"row_length_cov", stats.row_length_cov}};
    j["lhs_feat"] = lhs_feat;
    j["rhs_feat"] = rhs_feat;
    j["device"] = device;
    j["mode"] = mode;
    j["space_size"] = space_size;
    j["valid_size"] = valid_size;
    j["alias_size"] = alias_size;
    if (mode == "exhaustive") {
        // A sweep stopped at its time limit is not an exhaustive result: its best is not the space's.
        j["complete"] = unmeasured == 0;
        j["unmeasured_points"] = unmeasured;
        j["screened_points"] = screened;
    }
    j["kernels_compiled"] = kernels_compiled;
    j["expert_default"] = measurement_json(expert_default);
    j["best"] = measurement_json(best);
    j["speedup_over_default"] = speedup_over_default();
    j["wall_s"] = wall_s;
    j["phases_s"] = {{"space", phases.space_s}, {"rank", phases.rank_s}, {"compile_wait", phases.compile_wait_s},
                     {"load", phases.load_s}, {"warmup", phases.warmup_s}, {"timed_runs", phases.timed_s}};
    j["from_cache"] = from_cache;
    j["candidates"] = nlohmann::json::array();
    for (const auto &m : candidates) j["candidates"].push_back(measurement_json(m));
    return j;
}

namespace {

std::string utc_date() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

/// The points the cost model ranks best (lower score first), or random points without a model.
std::vector<ScheduleParams> seeds(const SearchSpace &space, const TuneOptions &o, std::mt19937_64 &rng) {
    std::vector<ScheduleParams> points = space.valid;
    const size_t keep = std::min(std::max<size_t>(o.keep, 1), points.size());
    if (o.rank) {
        std::vector<double> score = o.rank(points);
        if (score.size() != points.size()) fail<Error>("the cost model returned ", score.size(), " scores for ", points.size(), " points");
        std::vector<size_t> order(points.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
        // The best-ranked points with distinct scores first: points the model cannot tell apart (the
        // same features, e.g. knobs that do not matter in that corner of the space) would fill the
        // population with one kernel; the ties fill what is left.
        std::vector<ScheduleParams> best;
        std::vector<double> kept;
        std::vector<size_t> ties;
        for (size_t i : order) {
            if (best.size() == keep) break;
            const bool tie = std::any_of(kept.begin(), kept.end(), [&](double k) {
                return std::abs(k - score[i]) <= 1e-9 * std::max(1.0, std::abs(k));
            });
            if (tie) {
                ties.push_back(i);
                continue;
            }
            best.push_back(points[i]);
            kept.push_back(score[i]);
        }
        for (size_t j = 0; best.size() < keep && j < ties.size(); j++) best.push_back(points[ties[j]]);
        return best;
    }
    std::shuffle(points.begin(), points.end(), rng);
    points.resize(keep);
    return points;
}

}  // namespace

TuneResult tune(TuningProblem &problem, const TuneOptions &options) {
    auto t0 = std::chrono::steady_clock::now();
    TuneResult r = TuneResult::of(problem, options.mode);

    const std::string cache_key = TuningCache::key(problem);
    if (options.cache && options.read_cache) {
        if (auto hit = options.cache->lookup(cache_key)) {
            r.from_cache = true;
            r.best.schedule = hit->schedule;
            r.best.ok = true;
            r.best.mean_ms = r.best.median_ms = hit->time_ms;
            r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return r;
        }
    }

    auto since = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    };
    auto ts = std::chrono::steady_clock::now();
    SearchSpace space = build_search_space(problem);
    r.phases.space_s = since(ts);
    if (space.valid.empty()) fail<ScheduleError>("no valid schedule point for ", problem.op_name());
    r.set_space(space);

    Measurer measurer(problem, options.runs, options.warmup, options.kernels);
    const size_t compiled_before = measurer.kernels().stats().misses;
    measurer.set_cutoff(options.cutoff, options.cutoff_slack_ms);
    auto measure = [&](const ScheduleParams &p) {
        if (options.recorded)
            if (auto m = options.recorded(p)) {
                measurer.note_reference(*m);  // a resumed tune's cutoff starts from the times it has
                return *m;
            }
        return options.measure ? options.measure(p) : measurer.measure(p);
    };
    // On the GPU the kernels compile in the background while the candidates before them are timed.
    const bool background = problem.device == Device::CUDA;
    auto precompile = [&](const std::vector<ScheduleParams> &points, int n) {
        if (options.measure) return;
        std::vector<ScheduleParams> fresh;
        for (const auto &p : points)
            if (!options.recorded || !options.recorded(p)) fresh.push_back(p);
        if (!fresh.empty()) measurer.precompile(fresh, n, background);
    };
    const int threads = options.compile_threads > 0 ? options.compile_threads
                                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::mt19937_64 rng(options.seed);
    ProgressBar bar("measuring", std::min(space.valid.size(),
                                          static_cast<size_t>(options.genetic.population * (options.genetic.generations + 1) +
                                                              options.genetic.polish)));
    size_t measured = 0;
    auto record = [&](const Measurement &m) {
        r.add(m);
        // The default was reported when it was measured, first; a search that picks it again reuses
        // that measurement and does not report it twice.
        if (options.on_measurement && !(m.schedule == r.expert_default.schedule)) options.on_measurement(m);
        if (options.progress) {
            char status[96];
            std::snprintf(status, sizeof status, "best %.3f ms", r.best.mean_ms);
            bar.update(++measured, status);
        }
    };

    r.expert_default = measure(space.expert_default);
    r.account(r.expert_default);
    if (!r.expert_default.ok)
        fail<KernelError>("the expert default schedule ", space.expert_default.str(), " failed: ", r.expert_default.error);
    r.best = r.expert_default;
    if (options.on_measurement) options.on_measurement(r.expert_default);

    if (options.mode == SearchMode::Genetic) {
        ts = std::chrono::steady_clock::now();
        std::vector<ScheduleParams> initial = seeds(space, options, rng);
        r.phases.rank_s = since(ts);
        GeneticOptions g = options.genetic;
        g.seed = options.seed;
        GeneticSearch search(space, g);
        search.run(
            initial,
            [&](const ScheduleParams &p) {
                Measurement m = p == space.expert_default ? r.expert_default : measure(p);
                record(m);
                return m.ok && m.mean_ms > 0 ? 1.0 / m.mean_ms : 0.0;
            },
            [&](const std::vector<ScheduleParams> &batch) { precompile(batch, threads); });
    } else {
        std::vector<ScheduleParams> picks = space.valid;
        if (options.mode == SearchMode::Random) {
            const size_t budget = options.budget ? options.budget : 3;
            std::shuffle(picks.begin(), picks.end(), rng);
            picks.resize(std::min(budget, picks.size()));
        }
        bar = ProgressBar("measuring", picks.size());
        // In chunks of a few points per compile thread, so that measurements (and their records)
        // follow the compiles from the start of a long exhaustive sweep.
        const size_t chunk = 4 * static_cast<size_t>(threads);
        for (size_t at = 0; at < picks.size(); at += chunk) {
            std::vector<ScheduleParams> part(picks.begin() + static_cast<std::ptrdiff_t>(at),
                                             picks.begin() + static_cast<std::ptrdiff_t>(std::min(at + chunk, picks.size())));
            precompile(part, threads);
            for (const auto &p : part) record(p == space.expert_default ? r.expert_default : measure(p));
        }
    }
    if (options.segments && problem.kind == OpKind::Spmm && segments_supported(problem.spmm)) {
        // The other algorithm of the operator: its few points measured whole, outside the space
        // (every run length; on CUDA with every feature tile the feature length takes, and on warp
        // lanes where a thread holds a whole row).
        std::vector<ScheduleParams> points;
        for (int64_t run : kSegmentRunChoices)
            for (int64_t tile : kSegmentTileChoices) {
                if (tile != kSegmentTileDefault &&
                    (problem.device != Device::CUDA || !segment_tile_invalid_reason(tile, problem.layout.out_len()).empty()))
                    continue;
                points.push_back(segment_params(SegmentPoint{run, tile}));
                // Warp lanes over consecutive edges, where one thread holds a whole row (F <= tile).
                if (problem.device == Device::CUDA &&
                    segment_lanes_invalid_reason(32, tile, problem.layout.out_len(), 32).empty())
                    points.push_back(segment_params(SegmentPoint{run, tile, 32}));
            }
        precompile(points, threads);
        for (const auto &p : points) record(measure(p));
    }
    if (options.progress) bar.finish();
    r.kernels_compiled = measurer.kernels().stats().misses - compiled_before;
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (options.cache) options.cache->store(cache_key, CachedTune{r.best.schedule, r.best.mean_ms, utc_date()});
    return r;
}

}  // namespace gsparse::autotune
