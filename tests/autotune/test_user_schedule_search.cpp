// The genetic search over a user schedule's knobs (autotune/user_schedule_search.h): the schedule's
// valid points as a search space, and a search that measures part of a larger space, starts from
// the default point and ranks what it measured, whose best point computes the program's result.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "autotune/user_schedule_search.h"
#include "dsl/user_spmm.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse::autotune {
namespace {

using dsl::At;

/// A CPU schedule of 5 x 4 x 3 knob choices (8 of them invalid at F = 8): rows split for parallel
/// tasks, features vectorised, the row loop unrolled.
dsl::ScheduleDef wide_space() {
    dsl::ScheduleDef d;
    d.name = "rows_vectors";
    d.knobs = {{"rows", {1, 4, 16, 64, 256}, 16}, {"vector", {1, 2, 4, 8}, 4}, {"unroll", {1, 2, 4}, 1}};
    d.why_invalid = [](const std::map<std::string, int64_t> &pt, int F, Device) -> std::string {
        if (pt.at("vector") > F) return "vector wider than the features";
        return pt.at("rows") == 1 && pt.at("unroll") > 1 ? "nothing to unroll in a task of one row" : "";
    };
    d.apply = [](dsl::ScheduleContext &c) {
        Halide::Var vo, vi;
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("rows")), Halide::TailStrategy::GuardWithIf).parallel(vo);
        if (c.knob("unroll") > 1) c.out.unroll(vi, static_cast<int>(c.knob("unroll")), Halide::TailStrategy::GuardWithIf);
        if (c.knob("vector") > 1)
            c.out.vectorize(c.f, static_cast<int>(c.knob("vector")), Halide::TailStrategy::GuardWithIf);
        c.acc.compute_at(c.out, vi);
    };
    return d;
}

TEST(UserScheduleSearch, SpaceListsTheSchedulesValidPointsWithItsDefault) {
    const dsl::ScheduleDef d = wide_space();
    const SearchSpace s = user_search_space(d, 4, Device::CPU);
    EXPECT_EQ(s.space.schedule, "rows_vectors");
    ASSERT_EQ(s.space.knobs.size(), 3u);
    EXPECT_EQ(s.space.size(), 60u);
    const auto points = d.space(4, Device::CPU);
    ASSERT_EQ(s.valid.size(), points.size());
    EXPECT_EQ(s.rejected_count, 60u - points.size());
    for (size_t i = 0; i < points.size(); i++) EXPECT_EQ(user_params_point(s.valid[i]), points[i]);
    EXPECT_EQ(user_params_point(s.expert_default), (std::map<std::string, int64_t>{{"rows", 16}, {"vector", 4}, {"unroll", 1}}));
    EXPECT_THROW(user_search_space(d, 0, Device::CPU), ScheduleError);  // every vector is wider than 0 features
}

TEST(UserScheduleSearch, GeneticSearchMeasuresPartOfTheSpaceAndRanksIt) {
    dsl::SpmmProgram p("weighted_sum");
    p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
    p.reduce(dsl::Monoid::sum());
    const dsl::ScheduleDef d = wide_space();
    const int F = 8;
    const Graph g = test::random_graph(5);
    const std::map<std::string, Tensor> operands = {{"x", test::random_tensor({g.num_src(), F}, 1)},
                                                    {"w", test::random_tensor({g.num_edges(), 1}, 2)}};
    Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
    GeneticOptions o;
    o.population = 6;
    o.elite = 2;
    o.generations = 2;
    o.polish = 4;
    o.seed = 7;
    const auto ranked = genetic_user_search(p, d, F, Device::CPU, g, operands, out, {}, 2, nullptr, o);
    const size_t valid = d.space(F, Device::CPU).size();
    ASSERT_FALSE(ranked.empty());
    EXPECT_LT(ranked.size(), valid);  // at most 6 x 3 + 4 of the 52 valid points at F = 8
    EXPECT_LE(ranked.size(), 22u);
    std::set<std::map<std::string, int64_t>> distinct;
    for (size_t i = 0; i < ranked.size(); i++) {
        EXPECT_TRUE(d.why_invalid(ranked[i].point, F, Device::CPU).empty());
        EXPECT_TRUE(distinct.insert(ranked[i].point).second) << "measured twice: " << dsl::point_str(d, ranked[i].point);
        if (i) {
            EXPECT_LE(ranked[i - 1].median_ms, ranked[i].median_ms);
        }
    }
    EXPECT_TRUE(distinct.count(d.complete({}, F, Device::CPU)));  // the search starts from the default
    // The best point computes what the default does.
    Tensor best = Tensor::empty({g.num_dst(), F}, DType::F32), dflt = Tensor::empty({g.num_dst(), F}, DType::F32);
    p.compile(F, Device::CPU, d, ranked.front().point).run(g, operands, best);
    p.compile(F).run(g, operands, dflt);
    for (int64_t i = 0; i < best.numel(); i++)
        ASSERT_NEAR(best.data_as<float>()[i], dflt.data_as<float>()[i], 1e-4 * (1 + std::abs(dflt.data_as<float>()[i])));
}

}  // namespace
}  // namespace gsparse::autotune
