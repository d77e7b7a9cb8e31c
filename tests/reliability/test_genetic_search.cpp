// The tuner's genetic search on a schedule space of its own (no operator, no kernels): every point it
// evaluates is a valid point of the space, each once, and the search is deterministic for a seed.
// Built into the sanitizer build with the search's own sources.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "autotune/genetic.h"
#include "core/error.h"

namespace gsparse::autotune {
namespace {

/// Four knobs with a hole: points with a + b > 8 or c * d odd are invalid.
SearchSpace space_with_holes() {
    SearchSpace s;
    s.schedule = "toy";
    s.space = {"toy", {{"a", {0, 1, 2, 3, 4, 5}, ""}, {"b", {0, 2, 4, 6}, ""}, {"c", {1, 2, 3}, ""}, {"d", {1, 2}, ""}}};
    for (size_t i = 0; i < s.space.size(); i++) {
        ScheduleParams p = s.space.at(i);
        if (p.get("a") + p.get("b") > 8 || (p.get("c") * p.get("d")) % 2) s.rejected.emplace_back(p, "hole");
        else s.valid.push_back(p);
    }
    s.expert_default = s.valid.front();
    return s;
}

TEST(GeneticSearchProperties, EvaluatesOnlyValidPointsOnceAndIsDeterministic) {
    const SearchSpace s = space_with_holes();
    const std::set<ScheduleParams> valid(s.valid.begin(), s.valid.end());
    auto fitness = [](const ScheduleParams &p) { return 1.0 / (1.0 + std::abs(p.get("a") - 3) + std::abs(p.get("b") - 4)); };
    for (uint64_t seed : {1, 2, 3, 99}) {
        GeneticOptions o;
        o.seed = seed;
        o.generations = 5;
        GeneticSearch g(s, o);
        const auto run = g.run({}, fitness);
        std::set<ScheduleParams> seen;
        for (const auto &[p, f] : run) {
            EXPECT_TRUE(valid.count(p)) << p.str();
            EXPECT_TRUE(seen.insert(p).second) << "evaluated twice: " << p.str();
            EXPECT_DOUBLE_EQ(f, fitness(p));
        }
        GeneticSearch again(s, o);
        const auto run2 = again.run({}, fitness);
        ASSERT_EQ(run2.size(), run.size());
        for (size_t i = 0; i < run.size(); i++) EXPECT_EQ(run2[i].first, run[i].first);
    }
}

TEST(GeneticSearchProperties, RepairAndMutationStayInTheSpace) {
    const SearchSpace s = space_with_holes();
    GeneticSearch g(s, {});
    std::mt19937_64 rng(5);
    GeneticSearch::Genes genes = g.encode(s.valid.front());
    for (int i = 0; i < 2000; i++) {
        genes = g.repair(g.mutate(g.crossover(genes, g.encode(s.valid[i % s.valid.size()]), rng), rng));
        ASSERT_TRUE(g.valid(genes));
        for (size_t k = 0; k < genes.size(); k++) {
            ASSERT_GE(genes[k], 0);
            ASSERT_LT(genes[k], static_cast<int>(s.space.knobs[k].choices.size()));
        }
    }
    // Fitness values of zero everywhere (every point failed) still give a draw.
    EXPECT_LT(GeneticSearch::roulette({0, 0, 0}, rng), 3u);
}

TEST(GeneticSearchProperties, SpaceWithoutValidPointsIsAnError) {
    SearchSpace s = space_with_holes();
    s.valid.clear();
    EXPECT_THROW(GeneticSearch(s, {}), Error);
}

}  // namespace
}  // namespace gsparse::autotune
