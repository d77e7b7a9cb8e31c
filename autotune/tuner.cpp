#include "autotune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "autotune/progress.h"
#include "core/error.h"

namespace gsparse::autotune {

SearchMode parse_search_mode(const std::string &s) {
    if (s == "exhaustive") return SearchMode::Exhaustive;
    if (s == "random") return SearchMode::Random;
    fail<Error>("unknown search mode '", s, "' (expected exhaustive or random)");
}

const char *search_mode_name(SearchMode m) { return m == SearchMode::Exhaustive ? "exhaustive" : "random"; }

double TuneResult::speedup_over_default() const {
    return expert_default.ok && best.ok && best.median_ms > 0 ? expert_default.median_ms / best.median_ms : 0.0;
}

static nlohmann::json measurement_json(const Measurement &m) {
    nlohmann::json j = m.schedule.to_json();
    j["ok"] = m.ok;
    if (!m.ok) j["error"] = m.error;
    j["compile_ms"] = m.compile_ms;
    j["median_ms"] = m.median_ms;
    j["mean_ms"] = m.mean_ms;
    j["min_ms"] = m.min_ms;
    j["run_ms"] = m.run_ms;
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
    j["expert_default"] = measurement_json(expert_default);
    j["best"] = measurement_json(best);
    j["speedup_over_default"] = speedup_over_default();
    j["wall_s"] = wall_s;
    j["candidates"] = nlohmann::json::array();
    for (const auto &m : candidates) j["candidates"].push_back(measurement_json(m));
    return j;
}

TuneResult tune(TuningProblem &problem, const TuneOptions &options) {
    auto t0 = std::chrono::steady_clock::now();
    SearchSpace space = build_search_space(problem);
    if (space.valid.empty()) fail<ScheduleError>("no valid schedule point for ", problem.op_name());

    std::vector<ScheduleParams> picks = space.valid;
    if (options.mode == SearchMode::Random) {
        size_t budget = options.budget ? options.budget : std::max<size_t>(3, picks.size() / 4);
        std::mt19937_64 rng(options.seed);
        std::shuffle(picks.begin(), picks.end(), rng);
        picks.resize(std::min(budget, picks.size()));
    }

    TuneResult r;
    r.op = problem.op_name();
    r.graph = problem.graph_name;
    r.device = device_name(problem.device);
    r.mode = search_mode_name(options.mode);
    r.stats = problem.graph.stats();
    r.lhs_feat = problem.lhs_feat;
    r.rhs_feat = problem.rhs_feat;
    r.space_size = space.space.size();
    r.valid_size = space.valid.size();

    Measurer measurer(problem, options.runs, options.warmup);
    r.expert_default = measurer.measure(space.expert_default);
    if (!r.expert_default.ok)
        fail<KernelError>("the expert default schedule ", space.expert_default.str(), " failed: ", r.expert_default.error);
    r.best = r.expert_default;

    ProgressBar bar("measuring", picks.size());
    for (size_t i = 0; i < picks.size(); i++) {
        Measurement m = picks[i] == space.expert_default ? r.expert_default : measurer.measure(picks[i]);
        if (m.ok && m.median_ms < r.best.median_ms) r.best = m;
        r.candidates.push_back(m);
        if (options.progress) {
            char status[96];
            std::snprintf(status, sizeof status, "best %.3f ms", r.best.median_ms);
            bar.update(i + 1, status);
        }
    }
    if (options.progress) bar.finish();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace gsparse::autotune
