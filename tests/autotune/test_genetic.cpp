// The genetic search's operators, validity repair and convergence, and the tuning cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "autotune/genetic.h"
#include "autotune/tuner.h"
#include "autotune/tuning_cache.h"
#include "core/error.h"
#include "support/random_graph.h"

namespace gsparse::autotune {
namespace {

/// A 3-knob space with a hole: points with a + b > 6 are invalid.
SearchSpace toy_space() {
    SearchSpace s;
    s.schedule = "toy";
    s.space = {"toy", {{"a", {0, 1, 2, 3, 4}, ""}, {"b", {0, 1, 2, 3, 4}, ""}, {"c", {1, 2}, ""}}};
    for (size_t i = 0; i < s.space.size(); i++) {
        ScheduleParams p = s.space.at(i);
        if (p.get("a") + p.get("b") > 6) s.rejected.emplace_back(p, "a + b > 6");
        else s.valid.push_back(p);
    }
    s.expert_default = s.valid.front();
    return s;
}

TEST(Genetic, EncodeDecodeRoundTrip) {
    SearchSpace s = toy_space();
    GeneticSearch g(s, {});
    for (const auto &p : s.valid) EXPECT_EQ(g.decode(g.encode(p)), p);
    EXPECT_THROW(g.encode(ScheduleParams{"toy", {{"a", 7}, {"b", 0}, {"c", 1}}}), ScheduleError);
}

TEST(Genetic, RepairPicksTheNearestValidPoint) {
    SearchSpace s = toy_space();
    GeneticSearch g(s, {});
    GeneticSearch::Genes bad = {4, 4, 0};  // a + b = 8
    ASSERT_FALSE(g.valid(bad));
    GeneticSearch::Genes fixed = g.repair(bad);
    EXPECT_TRUE(g.valid(fixed));
    // The nearest valid points differ in one knob by one step ({3,4,*} / {4,3,*} would still be
    // invalid; {4,2,0} and {2,4,0} are 2 steps away, {3,3,0} is 1+1).
    const int dist = std::abs(fixed[0] - 4) + std::abs(fixed[1] - 4) + std::abs(fixed[2] - 0);
    EXPECT_EQ(dist, 2);
    EXPECT_EQ(fixed[2], 0);
    GeneticSearch::Genes ok = {1, 1, 1};
    EXPECT_EQ(g.repair(ok), ok);
}

TEST(Genetic, RepairTakesAChildToItsCanonicalFormFirst) {
    // Knob c is unused where a = 0: such points are listed only with c = 1 (their canonical form).
    SearchSpace s = toy_space();
    s.canonical = [](const ScheduleParams &p) {
        ScheduleParams c = p;
        if (p.get("a") == 0) c.values["c"] = 1;
        return c;
    };
    std::vector<ScheduleParams> kept;
    for (const auto &p : s.valid)
        if (s.canonical(p) == p) kept.push_back(p);
        else s.aliases++;
    s.valid = kept;
    GeneticSearch g(s, {});
    // {a=0, b=3, c=2}: its canonical form {0, 3, 1} is listed, though {1, 3, 2} is as near.
    EXPECT_EQ(g.repair({0, 3, 1}), (GeneticSearch::Genes{0, 3, 0}));
    EXPECT_EQ(s.aliases, 5u);
    // A point that is not an alias still goes to its nearest listed point.
    EXPECT_EQ(g.repair({2, 2, 1}), (GeneticSearch::Genes{2, 2, 1}));
}

TEST(Genetic, CrossoverTakesEachKnobFromAParentAndMutationRespectsTheRate) {
    SearchSpace s = toy_space();
    GeneticOptions o;
    o.mutation = 0.0;
    GeneticSearch none(s, o);
    std::mt19937_64 rng(3);
    GeneticSearch::Genes a = {0, 0, 0}, b = {4, 2, 1};
    std::set<GeneticSearch::Genes> children;
    for (int i = 0; i < 200; i++) {
        auto c = none.crossover(a, b, rng);
        for (size_t k = 0; k < c.size(); k++) EXPECT_TRUE(c[k] == a[k] || c[k] == b[k]);
        children.insert(c);
        EXPECT_EQ(none.mutate(c, rng), c);  // rate 0
    }
    EXPECT_EQ(children.size(), 8u);  // all 2^3 combinations appear
    o.mutation = 1.0;
    GeneticSearch all(s, o);
    int changed = 0;
    for (int i = 0; i < 200; i++) changed += all.mutate(a, rng) != a;
    EXPECT_GT(changed, 150);
}

TEST(Genetic, RouletteFollowsFitness) {
    std::mt19937_64 rng(5);
    std::vector<double> fitness = {1.0, 0.0, 3.0};
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 4000; i++) counts[GeneticSearch::roulette(fitness, rng)]++;
    EXPECT_EQ(counts[1], 0);
    EXPECT_NEAR(counts[2] / double(counts[0]), 3.0, 0.4);
}

TEST(Genetic, FindsTheOptimumOfASmoothObjectiveAndEvaluatesEachPointOnce) {
    SearchSpace s = toy_space();
    GeneticOptions o;
    o.population = 8;
    o.elite = 3;
    o.generations = 6;
    o.seed = 11;
    GeneticSearch g(s, o);
    std::map<ScheduleParams, int> calls;
    // Fastest at a = 3, b = 3, c = 2 (a valid point).
    auto fitness = [&](const ScheduleParams &p) {
        calls[p]++;
        double t = 1 + std::abs(p.get("a") - 3) + std::abs(p.get("b") - 3) + (p.get("c") == 2 ? 0 : 1);
        return 1.0 / t;
    };
    auto evaluated = g.run({s.valid.front()}, fitness);
    for (const auto &[p, n] : calls) EXPECT_EQ(n, 1) << p.str();
    double best = 0;
    for (const auto &[p, f] : evaluated) best = std::max(best, f);
    EXPECT_DOUBLE_EQ(best, 1.0);
    EXPECT_LT(evaluated.size(), s.valid.size() + 1);
}

TEST(Genetic, PrepareSeesEachGenerationBeforeItIsEvaluatedAndChangesNothing) {
    SearchSpace s = toy_space();
    auto fitness_of = [](const ScheduleParams &p) {
        return 1.0 / (1 + std::abs(p.get("a") - 3) + std::abs(p.get("b") - 1) + p.get("c"));
    };
    GeneticSearch plain(s, {});
    auto without = plain.run({s.valid.front()}, fitness_of);

    std::set<ScheduleParams> prepared;
    int batches = 0;
    GeneticSearch hooked(s, {});
    auto with = hooked.run(
        {s.valid.front()},
        [&](const ScheduleParams &p) {
            EXPECT_TRUE(prepared.count(p)) << p.str() << " evaluated before it was prepared";
            return fitness_of(p);
        },
        [&](const std::vector<ScheduleParams> &batch) {
            batches++;
            for (const auto &p : batch) EXPECT_TRUE(prepared.insert(p).second) << p.str() << " prepared twice";
        });
    EXPECT_EQ(with, without);
    EXPECT_GE(batches, 2);  // the initial population and at least one generation of children
    EXPECT_EQ(prepared.size(), with.size());
}

TEST(Genetic, PolishWalksFromTheBestPointToABetterNeighbourWithinItsBudget) {
    // No generations and a population of the two given points: only the polish moves. The optimum
    // (a = 3, b = 3, c = 2) is three knob steps from the best start (a = 1, b = 3, c = 1).
    SearchSpace s = toy_space();
    auto fitness = [](const ScheduleParams &p) {
        return 1.0 / (1 + std::abs(p.get("a") - 3) + std::abs(p.get("b") - 3) + (p.get("c") == 2 ? 0 : 1));
    };
    const std::vector<ScheduleParams> start = {ScheduleParams{"toy", {{"a", 1}, {"b", 3}, {"c", 1}}},
                                               ScheduleParams{"toy", {{"a", 0}, {"b", 0}, {"c", 1}}}};
    auto best_of = [&](const std::vector<std::pair<ScheduleParams, double>> &run) {
        double b = 0;
        for (const auto &[p, f] : run) b = std::max(b, f);
        return b;
    };
    GeneticOptions o;
    o.population = 2;
    o.elite = 1;
    o.generations = 0;
    o.polish = 0;
    EXPECT_DOUBLE_EQ(best_of(GeneticSearch(s, o).run(start, fitness)), 1.0 / 4);
    o.polish = 16;
    const auto polished = GeneticSearch(s, o).run(start, fitness);
    EXPECT_DOUBLE_EQ(best_of(polished), 1.0);
    EXPECT_LE(polished.size(), 2u + 16u);
    std::set<ScheduleParams> once;
    for (const auto &[p, f] : polished) EXPECT_TRUE(once.insert(p).second) << "evaluated twice: " << p.str();
    // A budget of 2 measures two neighbours and stops.
    o.polish = 2;
    EXPECT_EQ(GeneticSearch(s, o).run(start, fitness).size(), 4u);
}

TEST(Genetic, RejectsBadOptions) {
    SearchSpace s = toy_space();
    GeneticOptions o;
    o.elite = 16;
    EXPECT_THROW(GeneticSearch(s, o), Error);
    o = {};
    o.mutation = 1.5;
    EXPECT_THROW(GeneticSearch(s, o), Error);
    o = {};
    o.polish = -1;
    EXPECT_THROW(GeneticSearch(s, o), Error);
}

TEST(TuningCacheTest, RepeatedTuneIsACacheHitAndNoCacheTunesAfresh) {
    const auto path = std::filesystem::temp_directory_path() / ("gsparse_cache_test_" + std::to_string(::getpid()) + ".json");
    std::filesystem::remove(path);
    TuningProblem p;
    p.graph = test::random_graph(41);
    p.graph_name = "random";
    p.lhs_feat = p.rhs_feat = {16};
    p.prepare();
    TuningCache cache(path.string());
    TuneOptions o;
    o.mode = SearchMode::Random;
    o.budget = 2;
    o.runs = 1;
    o.progress = false;
    o.cache = &cache;
    TuneResult first = tune(p, o);
    EXPECT_FALSE(first.from_cache);
    EXPECT_EQ(cache.size(), 1u);
    TuneResult second = tune(p, o);
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(second.best.schedule, first.best.schedule);
    EXPECT_TRUE(second.candidates.empty());
    // Survives a reload from disk.
    TuningCache reloaded(path.string());
    ASSERT_TRUE(reloaded.lookup(TuningCache::key(p)).has_value());
    // Another feature length is another key.
    TuningProblem q = p;
    q.lhs_feat = q.rhs_feat = {8};
    q.prepare();
    EXPECT_NE(TuningCache::key(p), TuningCache::key(q));
    o.read_cache = false;
    EXPECT_FALSE(tune(p, o).from_cache);
    std::filesystem::remove(path);
}

TEST(TuningCacheTest, MalformedFileIsReportedAndIgnored) {
    const auto path = std::filesystem::temp_directory_path() / ("gsparse_cache_bad_" + std::to_string(::getpid()) + ".json");
    std::ofstream(path) << "{\"entries\": [1, 2]}";
    TuningCache c(path.string());
    EXPECT_EQ(c.size(), 0u);
    ASSERT_EQ(c.warnings().size(), 1u);
    EXPECT_NE(c.warnings()[0].find("entries"), std::string::npos) << c.warnings()[0];
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace gsparse::autotune
