// g-SDDMM on the CPU target: every ⊕ × lhs target × rhs target, with and without broadcasting, on
// fresh random graphs, against the plain C++ reference.
#include <gtest/gtest.h>

#include "api/gsparse.h"
#include "ops/reference.h"
#include "schedules/schedule.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

struct Shapes {
    const char *name;
    std::vector<int64_t> lhs, rhs;
};

const std::vector<Shapes> kShapes = {
    {"F1", {1}, {1}},
    {"F47", {47}, {47}},
    {"heads", {4, 6}, {4, 1}},      // dot: 4 heads, last dim reduced -> shapes {4,6} . {4,1} invalid for dot
    {"head_bcast", {1, 10}, {3, 10}},
};

const BinaryOp kOps[] = {BinaryOp::Add,  BinaryOp::Sub,     BinaryOp::Mul,    BinaryOp::Div,
                         BinaryOp::Dot,  BinaryOp::CopyLhs, BinaryOp::CopyRhs};
const OperandTarget kTargets[] = {OperandTarget::Src, OperandTarget::Dst, OperandTarget::Edge};

int64_t rows_for(const Graph &g, OperandTarget t) {
    return t == OperandTarget::Src ? g.num_src() : t == OperandTarget::Dst ? g.num_dst() : g.num_edges();
}

using Param = std::tuple<BinaryOp, OperandTarget, OperandTarget, size_t>;

class SddmmTest : public ::testing::TestWithParam<Param> {};

TEST_P(SddmmTest, MatchesReference) {
    auto [op, lt, rt, shape_index] = GetParam();
    Shapes sh = kShapes[shape_index];
    if (op == BinaryOp::Dot && sh.lhs.back() != sh.rhs.back()) sh.rhs.back() = sh.lhs.back();
    const uint64_t seed = 5000 + static_cast<uint64_t>(op) * 131 + static_cast<uint64_t>(lt) * 17 +
                          static_cast<uint64_t>(rt) * 5 + shape_index;
    test::RandomGraphOptions opt;
    opt.num_nodes = 200;
    opt.num_src = 170;  // bipartite: source and destination counts differ
    Graph g = test::random_graph(seed, opt);
    auto ls = sh.lhs, rs = sh.rhs;
    ls.insert(ls.begin(), rows_for(g, lt));
    rs.insert(rs.begin(), rows_for(g, rt));
    Tensor lhs = test::random_tensor(ls, seed + 1);
    Tensor rhs = op == BinaryOp::Div ? test::random_tensor(rs, seed + 2, DType::F32, 0.5, 2.0)
                                     : test::random_tensor(rs, seed + 2);
    SddmmSpec spec{op, lt, rt};
    Tensor got = gsddmm(g, spec, lhs, rhs);
    EXPECT_TRUE(test::matches_reference(got, reference_sddmm(g, spec, lhs, rhs), 1e-5));
}

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
    auto [op, lt, rt, s] = info.param;
    return std::string(target_name(lt)) + "_" + binary_op_name(op) + "_" + target_name(rt) + "_" + kShapes[s].name;
}

// Every op and target pair with odd F; broadcasting and F = 1 for every op with (u, v) and (u, e).
INSTANTIATE_TEST_SUITE_P(AllTargets, SddmmTest,
                         ::testing::Combine(::testing::ValuesIn(kOps), ::testing::ValuesIn(kTargets),
                                            ::testing::ValuesIn(kTargets), ::testing::Values<size_t>(1)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Shapes, SddmmTest,
                         ::testing::Combine(::testing::ValuesIn(kOps), ::testing::Values(OperandTarget::Src),
                                            ::testing::Values(OperandTarget::Dst, OperandTarget::Edge),
                                            ::testing::Values<size_t>(0, 2, 3)),
                         param_name);

TEST(Sddmm, DotOutputShapeEndsInOne) {
    Graph g = test::random_graph(9);
    Tensor h = test::random_tensor({g.num_src(), 8, 16}, 10);
    Tensor out = gsddmm(g, "dot", h, h, "u", "v");
    EXPECT_EQ(out.shape(), (std::vector<int64_t>{g.num_edges(), 8, 1}));
}

TEST(Sddmm, CopyOfEitherOperandOnTheSameTargetAreDistinctKernels) {
    // copy_lhs and copy_rhs on u share the DGL name copy_u; at F = 1 their layouts coincide too.
    Graph g = test::random_graph(14);
    Tensor x = test::random_tensor({g.num_src(), 1}, 15), y = test::random_tensor({g.num_src(), 1}, 16);
    Tensor out = Tensor::empty({g.num_edges(), 1}, DType::F32);
    for (BinaryOp op : {BinaryOp::CopyLhs, BinaryOp::CopyRhs}) {
        SddmmSpec spec{op, OperandTarget::Src, OperandTarget::Src};
        gsddmm_into(g, spec, x, y, out);
        EXPECT_TRUE(test::matches_reference(out, reference_sddmm(g, spec, x, y), 0.0, 0.0)) << binary_op_name(op);
    }
}

TEST(Sddmm, UnusedOperandMayBeUndefined) {
    for (int64_t F : {1, 5}) {
    Graph g = test::random_graph(11);
    Tensor x = test::random_tensor({g.num_src(), F}, 12);
    Tensor out = Tensor::empty({g.num_edges(), F}, DType::F32);
    gsddmm_into(g, SddmmSpec{BinaryOp::CopyLhs, OperandTarget::Src, OperandTarget::Dst}, x, Tensor(), out);
    EXPECT_TRUE(test::matches_reference(out, reference_sddmm(g, SddmmSpec{BinaryOp::CopyLhs, OperandTarget::Src,
                                                                           OperandTarget::Dst}, x, x), 0.0, 0.0));
    Tensor y = test::random_tensor({g.num_edges(), F}, 13);
    gsddmm_into(g, SddmmSpec{BinaryOp::CopyRhs, OperandTarget::Src, OperandTarget::Edge}, Tensor(), y, out);
    EXPECT_TRUE(test::matches_reference(out, reference_sddmm(g, SddmmSpec{BinaryOp::CopyRhs, OperandTarget::Src,
                                                                           OperandTarget::Edge}, y, y), 0.0, 0.0));
    }
}

TEST(Sddmm, GroupedByDestinationEveryOpAndTarget) {
    // groupByDst: edges computed in destination order, results stored at their ids. With shuffled
    // ids a store left at its position would land on another edge's row.
    for (bool shuffled : {true, false}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = 150;
        opt.num_src = 120;
        opt.shuffle_edge_ids = shuffled;
        Graph g = test::random_graph(shuffled ? 31 : 32, opt);
        for (BinaryOp op : kOps)
            for (OperandTarget lt : kTargets)
                for (OperandTarget rt : kTargets) {
                    const std::vector<int64_t> feat = op == BinaryOp::Dot ? std::vector<int64_t>{3, 7}
                                                                          : std::vector<int64_t>{5};
                    auto ls = feat, rs = feat;
                    ls.insert(ls.begin(), rows_for(g, lt));
                    rs.insert(rs.begin(), rows_for(g, rt));
                    Tensor lhs = test::random_tensor(ls, 40), rhs = test::random_tensor(rs, 41, DType::F32, 0.5, 2.0);
                    SddmmSpec spec{op, lt, rt};
                    OpOptions o;
                    // kSrcTile = 64 regroups the 120 sources' edges into two tiles.
                    for (int64_t tile : {0, 64}) {
                        o.schedule = ScheduleParams{"cpu_sddmm", {{"vector_width", 4},
                                                                  {"edges_per_task", 64},
                                                                  {"groupByDst", 1},
                                                                  {"kSrcTile", tile}}};
                        Tensor got = gsddmm(g, spec, lhs, rhs, o);
                        EXPECT_TRUE(test::matches_reference(got, reference_sddmm(g, spec, lhs, rhs), 1e-5))
                            << binary_op_name(op) << " " << target_name(lt) << " " << target_name(rt)
                            << (shuffled ? " shuffled ids" : " identity ids") << " kSrcTile " << tile;
                    }
                }
    }
}

TEST(Sddmm, EveryCpuSchedulePointMatches) {
    Graph g = test::random_graph(11);
    for (std::vector<int64_t> feat : {std::vector<int64_t>{37}, std::vector<int64_t>{2, 20}}) {
        auto s = feat;
        s.insert(s.begin(), g.num_src());
        Tensor x = test::random_tensor(s, 12);
        for (BinaryOp op : {BinaryOp::Dot, BinaryOp::Mul}) {
            SddmmSpec spec{op, OperandTarget::Src, OperandTarget::Dst};
            ReferenceResult ref = reference_sddmm(g, spec, x, x);
            const auto &def = default_sddmm_schedule(Device::CPU);
            Problem problem{plan_features(op, feat, feat), g.stats()};
            ScheduleSpace space = def.space(problem);
            int valid = 0;
            for (size_t i = 0; i < space.size(); i++) {
                ScheduleParams p = space.at(i);
                if (def.invalid_reason(p, problem)) continue;
                // Dot at every valid point, mul at every second one (keep CI short).
                if (op == BinaryOp::Mul && valid++ % 2 == 1) continue;
                if (op != BinaryOp::Mul) valid++;
                OpOptions o;
                o.schedule = p;
                EXPECT_TRUE(test::matches_reference(gsddmm(g, spec, x, x, o), ref, 1e-5)) << p.str();
            }
            EXPECT_GT(valid, 4);
        }
    }
}

}  // namespace
}  // namespace gsparse
