// The tuner: measures the expert default schedule and a set of candidates chosen by a search mode,
// and returns the fastest valid one (fitness: 1 / mean time of the timed runs).
//
// Modes: genetic (the default: the cost model ranks the space when one is given, its best `keep`
// points seed a genetic search, see genetic.h; without a model the seeds are random), random (a
// uniform sample of `budget` valid points, 3 by default, seeded) and exhaustive (every valid point,
// for evaluation). A tuning cache makes a repeated tune of the same problem instant.
#pragma once

#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "autotune/genetic.h"
#include "autotune/measure.h"
#include "autotune/tuning_cache.h"
#include "autotune/search_space.h"
#include "autotune/tuning_problem.h"

namespace gsparse::autotune {

enum class SearchMode { Genetic, Random, Exhaustive };
SearchMode parse_search_mode(const std::string &s);  ///< throws Error listing the modes
const char *search_mode_name(SearchMode m);

struct TuneOptions {
    SearchMode mode = SearchMode::Genetic;
    size_t budget = 0;  ///< random: candidates to measure (0: 3)
    int runs = 10;
    int warmup = 1;
    uint64_t seed = 1;
    bool progress = true;
    GeneticOptions genetic;
    /// Cost model: a score per point, lower = predicted faster. Empty: no model.
    std::function<std::vector<double>(const std::vector<ScheduleParams> &)> rank;
    size_t keep = 16;  ///< genetic: ranked points that seed the population (5..20)
    TuningCache *cache = nullptr;
    bool read_cache = true;  ///< false: tune afresh (the result is still stored)
    /// Candidates compiled in parallel before they are timed (0: one per hardware thread).
    int compile_threads = 0;
    /// A candidate whose first run is slower than cutoff x the fastest median so far plus
    /// cutoff_slack_ms is timed no further (its Measurement has one run and cut_off set); cutoff 0
    /// times every candidate fully. See Measurer::set_cutoff and docs/tuner.md ("Measuring").
    double cutoff = 1.25;
    double cutoff_slack_ms = 0.5;
    /// g-SpMM with sum or mean: after the search, also measure g-SpMM by nonzeros (schedule
    /// spmm_segments, schedules/spmm_segments.h) at every run length (on CUDA with its feature tiles, and on
    /// warp lanes where one thread holds a whole row); the fastest of all wins.
    bool segments = false;
    /// Called with every measurement (for measurement records).
    std::function<void(const Measurement &)> on_measurement;
    /// Replaces compiling and timing (a replay of recorded measurements, see gsparse-tune --replay):
    /// the measurement of a point. Empty: candidates are compiled and timed on the problem's device.
    std::function<Measurement(const ScheduleParams &)> measure;
    /// Measurements taken earlier (gsparse-tune --resume, see recorded_measurements): a point found
    /// here is neither compiled nor timed again; its Measurement has `recorded` set. Empty: none.
    std::function<std::optional<Measurement>(const ScheduleParams &)> recorded;
    /// Compiled kernels shared with other tunes of the same operator and feature shape (sweeps of
    /// several graphs, see gsparse-sweep): a kernel compiled and loaded for one graph is reused on
    /// the next. nullptr: the tune compiles its own (what a user's tune pays).
    KernelCache *kernels = nullptr;
};

struct TuneResult {
    std::string op, graph, device, mode;
    GraphStats stats;
    std::vector<int64_t> lhs_feat, rhs_feat;
    size_t kernels_compiled = 0;  ///< kernels this tune compiled (the rest came from TuneOptions::kernels)
    size_t space_size = 0, valid_size = 0, alias_size = 0;  ///< alias_size: valid points named by another (SearchSpace::aliases)
    /// Exhaustive mode: valid points left unmeasured because a sweep stopped at its time limit
    /// (sweep_together); 0 for a complete sweep and for the other modes.
    size_t unmeasured = 0;
    /// Exhaustive mode: valid points a screened sweep left out (SweepProblem::screened); its best is
    /// then the best of the points measured, not the space's.
    size_t screened = 0;
    Measurement expert_default;
    std::vector<Measurement> candidates;  ///< in measurement order
    Measurement best;                     ///< fastest by median among default and candidates
    double wall_s = 0;
    /// Where the wall time went: enumerating the space, ranking it with the cost model, waiting
    /// for compiles, first calls (kernel loads, the graph's device arrays), warm-up runs and timed runs.
    struct Phases {
        double space_s = 0, rank_s = 0, compile_wait_s = 0, load_s = 0, warmup_s = 0, timed_s = 0;
    } phases;
    bool from_cache = false;

    double speedup_over_default() const;
    nlohmann::json to_json() const;
    /// The result of a tune of p in `mode`, before anything is measured: operator, graph, device,
    /// shapes and mode.
    static TuneResult of(const TuningProblem &p, SearchMode mode);
    /// Sets the space's sizes (all points, valid kernels, aliases left out).
    void set_space(const SearchSpace &space);
    /// Adds m's compile wait, warm-up and timed runs to the phases.
    void account(const Measurement &m);
    /// Adds a candidate's measurement (after expert_default is set): its phases (unless it is the
    /// default, accounted when it was measured), the best so far, the candidates.
    void add(const Measurement &m);
};

TuneResult tune(TuningProblem &problem, const TuneOptions &options);

}  // namespace gsparse::autotune
