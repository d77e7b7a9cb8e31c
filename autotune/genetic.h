// Genetic search over a schedule space (the paper's refinement step): a population of schedule
// points evolves for a few generations; parents are drawn by roulette wheel on fitness (1 / mean
// time), children take each knob from either parent and mutate each knob with a small probability,
// the fittest points survive as the elite, and a child that breaks the schedule's validity rules
// is replaced by the nearest valid point (Euclidean distance over the knobs' choice indices,
// normalized per knob). A final local search ("polish") then measures the valid neighbours of the
// best point (each knob one choice up or down), moving to a better one while its budget lasts: the
// generations find the region, the polish its best point.
#pragma once

#include <functional>
#include <map>
#include <random>
#include <vector>

#include "autotune/search_space.h"

namespace gsparse::autotune {

struct GeneticOptions {
    int population = 16;
    int elite = 6;
    int generations = 3;
    double mutation = 0.2;  ///< per-knob mutation probability
    int polish = 16;        ///< evaluations of the final local search around the best point (0: none)
    uint64_t seed = 1;
};

class GeneticSearch {
public:
    using Genes = std::vector<int>;  ///< choice index per knob

    /// Throws Error for options out of range or a space without valid points.
    GeneticSearch(const SearchSpace &space, const GeneticOptions &options);

    Genes encode(const ScheduleParams &p) const;
    ScheduleParams decode(const Genes &g) const;
    bool valid(const Genes &g) const;
    /// The valid point nearest to g: g's canonical form when that is listed (g itself when valid),
    /// else the listed point nearest to it by Euclidean distance over the knobs' choice indices.
    Genes repair(const Genes &g) const;
    /// Uniform crossover: each knob from a or b.
    Genes crossover(const Genes &a, const Genes &b, std::mt19937_64 &rng) const;
    /// Each knob re-drawn with probability options.mutation.
    Genes mutate(Genes g, std::mt19937_64 &rng) const;
    /// An index drawn with probability proportional to fitness (uniform when all are 0).
    static size_t roulette(const std::vector<double> &fitness, std::mt19937_64 &rng);

    /// Evolves from `initial` (filled up to the population with random valid points). fitness
    /// returns 1 / time, or 0 for a point that failed; each distinct point is evaluated once.
    /// `prepare`, when given, receives each generation's points that are about to be evaluated for
    /// the first time, before any of them is (to compile them in parallel, say); a generation's
    /// children are bred from the previous generation alone, so the search is the same with or
    /// without it. Returns the evaluated points in evaluation order with their fitness.
    std::vector<std::pair<ScheduleParams, double>> run(
        std::vector<ScheduleParams> initial, const std::function<double(const ScheduleParams &)> &fitness,
        const std::function<void(const std::vector<ScheduleParams> &)> &prepare = {});

private:
    /// The final local search (GeneticOptions::polish) from the best of `seen`.
    void polish(const std::map<Genes, double> &seen, const std::function<double(const Genes &)> &evaluate,
                const std::function<void(const std::vector<Genes> &, size_t)> &prepare) const;

    const SearchSpace &space_;
    GeneticOptions opt_;
    std::vector<Genes> valid_genes_;
};

}  // namespace gsparse::autotune
