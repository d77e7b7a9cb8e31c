// g-SpMM on the CPU target: every ⊕ × Φ, with and without broadcasting, on fresh random graphs
// (empty rows, a very long row, duplicate edges, self-loops, shuffled edge ids), F = 1 and odd F,
// against the plain C++ reference.
#include <gtest/gtest.h>

#include "api/gsparse.h"
#include "support/compare.h"
#include "schedules/schedule.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

struct Shapes {
    const char *name;
    std::vector<int64_t> lhs, rhs;  // feature shapes
};

const std::vector<Shapes> kShapes = {
    {"F1", {1}, {1}},
    {"F47", {47}, {47}},
    {"F602", {602}, {602}},
    {"heads_edge_scalar", {4, 13}, {4, 1}},  // N x H x F with E x H x 1
    {"edge_scalar", {33}, {1}},              // a weight per edge
    {"lhs_broadcast", {1, 9}, {3, 9}},       // node features shared across heads
};

const BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::CopyLhs, BinaryOp::CopyRhs};
const ReduceOp kReduces[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min};

using Param = std::tuple<BinaryOp, ReduceOp, size_t>;

class SpmmTest : public ::testing::TestWithParam<Param> {};

TEST_P(SpmmTest, MatchesReference) {
    auto [op, reduce, shape_index] = GetParam();
    const Shapes &sh = kShapes[shape_index];
    const uint64_t seed = 1000 + static_cast<uint64_t>(op) * 97 + static_cast<uint64_t>(reduce) * 13 + shape_index;
    Graph g = test::random_graph(seed);
    // Division needs rhs away from 0; sums of positive and negative values test cancellation.
    auto ls = sh.lhs;
    ls.insert(ls.begin(), g.num_src());
    Tensor lhs = test::random_tensor(ls, seed + 1);
    auto rs = sh.rhs;
    rs.insert(rs.begin(), g.num_edges());
    Tensor rhs = op == BinaryOp::Div ? test::random_tensor(rs, seed + 2, DType::F32, 0.5, 2.0)
                                     : test::random_tensor(rs, seed + 2);
    SpmmSpec spec{op, reduce};
    SpmmResult got = gspmm(g, spec, lhs, rhs);
    ReferenceResult ref = reference_spmm(g, spec, lhs, rhs);
    const bool args = has_arg_outputs(reduce);
    EXPECT_TRUE(test::matches_reference(got.out, ref, 1e-5, 1e-6, args ? &got.arg_u : nullptr,
                                        args ? &got.arg_e : nullptr));
}

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
    auto [op, reduce, s] = info.param;
    return SpmmSpec{op, reduce}.name() + "_" + kShapes[s].name;
}

INSTANTIATE_TEST_SUITE_P(AllOps, SpmmTest,
                         ::testing::Combine(::testing::ValuesIn(kOps), ::testing::ValuesIn(kReduces),
                                            ::testing::Range<size_t>(0, kShapes.size())),
                         param_name);

TEST(Spmm, EmptyRowsGiveZeroAndArgMinusOne) {
    // Three nodes; only node 2 has in-edges.
    Graph g = Graph::from_edges(3, {0, 1}, {2, 2});
    Tensor x = Tensor::from_vector<float>({-5, -7, 3}, {3, 1});
    SpmmResult r = gspmm(g, "copy_lhs", "max", x, {});
    EXPECT_EQ(r.out.data_as<float>()[0], 0.0f);
    EXPECT_EQ(r.out.data_as<float>()[1], 0.0f);
    EXPECT_EQ(r.out.data_as<float>()[2], -5.0f);  // max of negatives is not clamped to 0
    EXPECT_EQ(r.arg_u.data_as<int32_t>()[0], -1);
    EXPECT_EQ(r.arg_u.data_as<int32_t>()[2], 0);
    EXPECT_EQ(r.arg_e.data_as<int32_t>()[2], 0);
}

TEST(Spmm, GraphWithoutEdges) {
    Graph g = Graph::from_edges(4, {}, {});
    Tensor x = test::random_tensor({4, 5}, 3);
    SpmmResult r = gspmm(g, "copy_lhs", "min", x, {});
    for (int64_t i = 0; i < r.out.numel(); i++) {
        EXPECT_EQ(r.out.data_as<float>()[i], 0.0f);
        EXPECT_EQ(r.arg_u.data_as<int32_t>()[i], -1);
    }
}

TEST(Spmm, Float64) {
    Graph g = test::random_graph(77);
    Tensor x = test::random_tensor({g.num_src(), 6}, 78, DType::F64);
    Tensor w = test::random_tensor({g.num_edges(), 1}, 79, DType::F64);
    SpmmSpec spec{BinaryOp::Mul, ReduceOp::Sum};
    SpmmResult r = gspmm(g, spec, x, w);
    EXPECT_EQ(r.out.dtype(), DType::F64);
    EXPECT_TRUE(test::matches_reference(r.out, reference_spmm(g, spec, x, w), 1e-12, 1e-12));
}

TEST(Spmm, EveryCpuSchedulePointMatches) {
    Graph g = test::random_graph(5);
    Tensor x = test::random_tensor({g.num_src(), 19}, 6);
    SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
    ReferenceResult ref = reference_spmm(g, spec, x, {});
    FeatureLayout layout = plan_features(spec.op, {19}, {19});
    const auto &def = default_spmm_schedule(Device::CPU);
    Problem problem{layout, g.stats()};
    ScheduleSpace space = def.space(problem);
    int valid = 0;
    for (size_t i = 0; i < space.size(); i++) {
        ScheduleParams p = space.at(i);
        if (def.invalid_reason(p, problem)) continue;
        valid++;
        OpOptions opt;
        opt.schedule = p;
        EXPECT_TRUE(test::matches_reference(gspmm(g, spec, x, {}, opt).out, ref, 1e-5)) << p.str();
    }
    EXPECT_GT(valid, 4);
}

TEST(Spmm, SourceTilesMatchTheReferenceForSumAndMean) {
    // Rows reduced in runs over tiles of source ids (kSrcTile), then combined: every op with sum
    // and mean, shuffled and identity edge ids, F = 1 and odd F, tiles from one source to all.
    for (bool shuffled : {true, false}) {
        test::RandomGraphOptions gopt;
        gopt.shuffle_edge_ids = shuffled;
        Graph g = test::random_graph(shuffled ? 61 : 62, gopt);
        for (BinaryOp op : kOps)
            for (ReduceOp reduce : {ReduceOp::Sum, ReduceOp::Mean})
                for (int64_t F : {1, 7})
                    for (int64_t tile : {1, 64}) {
                        // Each op and reduction at both F, one tile each, the other tile with the
                        // other ids (keep CI short).
                        if ((tile == 64) != ((static_cast<int>(op) + F + shuffled + (reduce == ReduceOp::Mean)) % 2 == 0))
                            continue;
                        const uint64_t seed = 300 + static_cast<uint64_t>(op) * 7 + static_cast<uint64_t>(F);
                        Tensor x = test::random_tensor({g.num_src(), F}, seed);
                        Tensor w = op == BinaryOp::Div ? test::random_tensor({g.num_edges(), F}, seed + 1, DType::F32, 0.5, 2.0)
                                                       : test::random_tensor({g.num_edges(), F}, seed + 1);
                        SpmmSpec spec{op, reduce};
                        OpOptions opt;
                        opt.schedule = ScheduleParams{"cpu_spmm", {{"vector_width", F > 1 ? 4 : 1}, {"rows_per_task", 16},
                                                                   {"kSrcTile", tile}}};
                        SpmmResult got = gspmm(g, spec, x, w, opt);
                        EXPECT_TRUE(test::matches_reference(got.out, reference_spmm(g, spec, x, w), 1e-5, 1e-6))
                            << spec.name() << " F " << F << " kSrcTile " << tile << (shuffled ? " shuffled ids" : "");
                    }
    }
}

TEST(Spmm, SourceTilesRejectMaxAndMin) {
    Graph g = test::random_graph(63);
    Tensor x = test::random_tensor({g.num_src(), 3}, 64);
    OpOptions opt;
    opt.schedule = ScheduleParams{"cpu_spmm", {{"vector_width", 1}, {"rows_per_task", 16}, {"kSrcTile", 64}}};
    for (const char *reduce : {"max", "min"}) {
        try {
            gspmm(g, "copy_lhs", reduce, x, {}, opt);
            ADD_FAILURE() << reduce << " accepted kSrcTile";
        } catch (const ScheduleError &e) {
            EXPECT_NE(std::string(e.what()).find("max/min ties need row order"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace gsparse
