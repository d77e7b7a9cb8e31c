// The tuner: measures the expert default schedule and a set of candidates chosen by a search mode,
// and returns the fastest valid one.
//
// Modes: exhaustive (every valid point; for evaluation and small spaces) and random (a uniform
// sample of `budget` valid points, without replacement, seeded).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autotune/measure.h"
#include "autotune/search_space.h"
#include "autotune/tuning_problem.h"

namespace gsparse::autotune {

enum class SearchMode { Exhaustive, Random };
SearchMode parse_search_mode(const std::string &s);  ///< throws Error listing the modes
const char *search_mode_name(SearchMode m);

struct TuneOptions {
    SearchMode mode = SearchMode::Exhaustive;
    size_t budget = 0;  ///< random: candidates to measure (0: a quarter of the space, at least 3)
    int runs = 10;
    int warmup = 1;
    uint64_t seed = 1;
    bool progress = true;
};

struct TuneResult {
    std::string op, graph, device, mode;
    GraphStats stats;
    std::vector<int64_t> lhs_feat, rhs_feat;
    size_t space_size = 0, valid_size = 0;
    Measurement expert_default;
    std::vector<Measurement> candidates;  ///< in measurement order
    Measurement best;                     ///< fastest by median among default and candidates
    double wall_s = 0;

    double speedup_over_default() const;
    nlohmann::json to_json() const;
};

TuneResult tune(TuningProblem &problem, const TuneOptions &options);

}  // namespace gsparse::autotune
