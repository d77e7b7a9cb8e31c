// g-SpMM on the GPU: every ⊕ × Φ on fresh random graphs and on the real graphs, across a grid of
// gpu_spmm schedules (nonzero lanes for small feature lengths included), against the C++ reference
// (sum within 1e-5 of Σ|message|, max/min and their arg ids exact, ties included). Skipped, and
// reported as skipped, without a CUDA device.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpu/gpu_fixture.h"
#include "schedules/gpu_schedules.h"
#include "schedules/spmm_segments.h"
#include "schedules/spmm_selector.h"
#include "schedules/schedule.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

class GpuSpmm : public test::GpuTest {
protected:
    /// Runs spec on the GPU with schedule (default when null) and compares with the reference.
    ::testing::AssertionResult check(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                                     const ScheduleParams *schedule) {
        const auto shape = gspmm_output_shape(g, spec, lhs, rhs);
        Tensor dl = uses_lhs(spec.op) ? to_device(lhs) : Tensor();
        Tensor dr = uses_rhs(spec.op) ? to_device(rhs) : Tensor();
        Tensor out = device_empty(shape, lhs.defined() ? lhs.dtype() : rhs.dtype());
        const bool args = has_arg_outputs(spec.reduce);
        Tensor au = args ? device_empty(shape, DType::I32) : Tensor();
        Tensor ae = args ? device_empty(shape, DType::I32) : Tensor();
        gspmm_into(g, spec, dl, dr, out, args ? &au : nullptr, args ? &ae : nullptr, options(schedule));
        Tensor ho = to_host(out), hu, he;
        if (args) {
            hu = to_host(au);
            he = to_host(ae);
        }
        return test::matches_reference(ho, reference_spmm(g, spec, lhs, rhs), 1e-5, 1e-6, args ? &hu : nullptr,
                                       args ? &he : nullptr);
    }
};

const BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::CopyLhs, BinaryOp::CopyRhs};
const ReduceOp kReduces[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min};

Tensor features(int64_t rows, std::vector<int64_t> feat, uint64_t seed, bool positive = false) {
    feat.insert(feat.begin(), rows);
    return positive ? test::random_tensor(feat, seed, DType::F32, 0.5, 2.0) : test::random_tensor(feat, seed);
}

TEST_F(GpuSpmm, EveryOpAndReduceWithDefaultSchedule) {
    for (int64_t F : {1, 47, 64}) {
        Graph g = test::random_graph(100 + F);
        for (BinaryOp op : kOps)
            for (ReduceOp r : kReduces) {
                Tensor x = features(g.num_src(), {F}, 1);
                Tensor w = features(g.num_edges(), {F}, 2, op == BinaryOp::Div);
                EXPECT_TRUE(check(g, SpmmSpec{op, r}, x, w, nullptr)) << SpmmSpec{op, r}.name() << " F=" << F;
            }
    }
}

TEST_F(GpuSpmm, BroadcastHeadsWithEdgeScalars) {
    Graph g = test::random_graph(7);
    Tensor x = features(g.num_src(), {4, 16}, 3);
    Tensor w = features(g.num_edges(), {4, 1}, 4);
    for (ReduceOp r : kReduces) EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, r}, x, w, nullptr)) << reduce_op_name(r);
}

TEST_F(GpuSpmm, EveryLearnedDefaultPointMatchesTheReference) {
    // Every point the learned selector can answer (schedules/spmm_selector_table.inc), at its feature
    // length, on a random graph with empty rows, a very long row, duplicates, self-loops and shuffled
    // edge ids: copy_lhs + sum for all, u_mul_e + mean and max for every third.
    Graph g = test::random_graph(4242);
    const auto &def = spmm_schedule("gpu_spmm");
    int n = 0;
    for (int64_t F : selector_anchor_features()) {
        Tensor x = features(g.num_src(), {F}, 21);
        Tensor w = features(g.num_edges(), {1}, 22);
        for (const ScheduleParams &p : selector_points(F)) {
            try {
                EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, &p)) << p.str() << " F=" << F;
                if (n++ % 3 == 0) {
                    for (ReduceOp r : {ReduceOp::Mean, ReduceOp::Max}) {
                        const SpmmSpec spec{BinaryOp::Mul, r};
                        if (!def.invalid_reason(p, spmm_problem(spec, plan_features(spec.op, {F}, {1}), g.stats()))) {
                            EXPECT_TRUE(check(g, spec, x, w, &p)) << p.str() << " F=" << F << " " << spec.name();
                        }
                    }
                }
            } catch (const std::exception &e) {
                FAIL() << p.str() << " F=" << F << ": " << e.what();
            }
        }
    }
    EXPECT_GT(n, 50);
}

TEST_F(GpuSpmm, LearnedDefaultsOnAGraphWithinTheSelectorsSupport) {
    // 120 k nodes, ~6 nonzeros a row (over 500 k nonzeros: within the trees' support), so the
    // default comes from the selector; every op family it serves matches the reference.
    test::RandomGraphOptions opt;
    opt.num_nodes = 120000;
    opt.long_row = 5000;
    Graph g = test::random_graph(77, opt);
    const auto &def = spmm_schedule("gpu_spmm");
    for (int64_t F : {1, 3, 8, 47, 64, 130, 256}) {
        const Problem problem = spmm_problem(SpmmSpec{}, plan_features(BinaryOp::CopyLhs, {F}, {F}), g.stats());
        ASSERT_TRUE(select_spmm_default(problem, def.invalid_reason).has_value()) << "F=" << F;
        Tensor x = features(g.num_src(), {F}, 31);
        Tensor w = features(g.num_edges(), {1}, 32);
        for (const SpmmSpec &spec : {SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, SpmmSpec{BinaryOp::Mul, ReduceOp::Sum},
                                     SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}})
            EXPECT_TRUE(check(g, spec, x, w, nullptr)) << spec.name() << " F=" << F;
    }
}

TEST_F(GpuSpmm, SegmentGateSendsHeavyTailedGraphsToTheSegmentForm) {
    // 120 k nodes, a fifth of the rows empty and one row of 5,000: the segment gate's heavy-tailed
    // side at small F. The default then runs spmm_segments for sum and mean (checked against the
    // reference, edge weights in shuffled edge-id order included) and the row schedule for max.
    test::RandomGraphOptions opt;
    opt.num_nodes = 120000;
    opt.long_row = 5000;
    Graph g = test::random_graph(78, opt);
    for (int64_t F : {1, 4, 8}) {
        Tensor x = features(g.num_src(), {F}, 41);
        Tensor w = features(g.num_edges(), {1}, 42);
        const ScheduleParams chosen = gspmm_default_schedule(g, SpmmSpec{}, to_device(x), Tensor(), Device::CUDA);
        EXPECT_TRUE(is_segment_point(chosen)) << "F=" << F << ": " << chosen.str();
        EXPECT_FALSE(is_segment_point(gspmm_row_default_schedule(g, SpmmSpec{}, to_device(x), Tensor(), Device::CUDA)));
        for (const SpmmSpec &spec : {SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, SpmmSpec{BinaryOp::Mul, ReduceOp::Mean},
                                     SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}})
            EXPECT_TRUE(check(g, spec, x, w, nullptr)) << spec.name() << " F=" << F;
        const ScheduleParams for_max =
            gspmm_default_schedule(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}, to_device(x), Tensor(), Device::CUDA);
        EXPECT_FALSE(is_segment_point(for_max)) << for_max.str();
    }
}

TEST_F(GpuSpmm, SegmentFeatureTilesMatchTheReference) {
    // Every feature tile of g-SpMM by nonzeros on a graph with a very long row, empty rows and
    // shuffled edge ids: F = 1 (tile 1 only), odd, wider than a block's 128 feature threads, and
    // heads x features with an edge weight per head; sum and mean; runs of 8 to 64 edges.
    Graph g = test::random_graph(79);
    for (const std::vector<int64_t> &feat : std::vector<std::vector<int64_t>>{{1}, {7}, {130}, {3, 5}}) {
        int64_t len = 1;
        for (int64_t d : feat) len *= d;
        Tensor x = features(g.num_src(), feat, 51);
        std::vector<int64_t> wf = feat;
        wf.back() = 1;
        Tensor w = features(g.num_edges(), wf, 52);
        for (int64_t tile : kSegmentTileChoices) {
            if (!segment_tile_invalid_reason(tile, len).empty()) continue;
            const ScheduleParams p = segment_params(SegmentPoint{8 * tile, tile});
            for (const SpmmSpec &spec : {SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, SpmmSpec{BinaryOp::Mul, ReduceOp::Mean}})
                EXPECT_TRUE(check(g, spec, x, w, &p)) << p.str() << " " << spec.name() << " F=" << len;
        }
    }
}

TEST_F(GpuSpmm, SegmentWarpLanesMatchTheReference) {
    // g-SpMM by nonzeros on warp lanes (lanes=32): the lanes' segmented scan over shuffles, rows
    // carried across steps and warps, the last chunk padded. Edge ids in CSR order (rows on
    // neighbouring lanes) and shuffled (every lane its own row), a long row spanning many warps,
    // empty rows, duplicate edges, a bipartite graph; F = 1, 2 and 4 (tile = F), sum and mean,
    // runs of 4 to 64 steps.
    for (bool shuffled : {false, true}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = 20000;
        opt.shuffle_edge_ids = shuffled;
        opt.num_src = shuffled ? 9000 : -1;
        Graph g = test::random_graph(shuffled ? 83 : 82, opt);
        for (int64_t F : {1, 2, 4}) {
            Tensor x = features(g.num_src(), {F}, 53);
            Tensor w = features(g.num_edges(), {1}, 54);
            Tensor wf = features(g.num_edges(), {F}, 55);
            for (int64_t run : {4, 64}) {
                const ScheduleParams p = segment_params(SegmentPoint{run, F, 32});
                EXPECT_TRUE(check(g, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, Tensor(), &p)) << p.str() << " F=" << F;
                EXPECT_TRUE(check(g, {BinaryOp::Mul, ReduceOp::Sum}, x, w, &p)) << p.str() << " F=" << F;
                EXPECT_TRUE(check(g, {BinaryOp::Add, ReduceOp::Mean}, x, wf, &p)) << p.str() << " F=" << F;
            }
        }
    }
    // A graph without edges gives zeros; a graph of two edges, one chunk padded with 510 positions.
    const ScheduleParams p = segment_params(SegmentPoint{16, 1, 32});
    EXPECT_TRUE(check(Graph::from_edges(5, {}, {}), {BinaryOp::CopyLhs, ReduceOp::Sum}, features(5, {1}, 8), Tensor(), &p));
    EXPECT_TRUE(check(Graph::from_edges(3, {0, 1}, {2, 2}), {BinaryOp::CopyLhs, ReduceOp::Sum}, features(3, {1}, 9),
                      Tensor(), &p));
}

TEST_F(GpuSpmm, GridOfSchedules) {
    // Every valid point of a deterministic sample of the space, on two feature lengths.
    const auto &def = spmm_schedule("gpu_spmm");
    for (int64_t F : {32, 128}) {
        Graph g = test::random_graph(200 + F);
        Tensor x = features(g.num_src(), {F}, 5);
        FeatureLayout layout = plan_features(BinaryOp::CopyLhs, {F}, {F});
        Problem problem{layout, g.stats()};
        ScheduleSpace space = def.space(problem);
        std::vector<ScheduleParams> valid;
        for (size_t i = 0; i < space.size(); i++)
            if (!def.invalid_reason(space.at(i), problem)) valid.push_back(space.at(i));
        // 16 points spread evenly over the valid ones (each compiles two kernels).
        int tried = 0;
        for (size_t n = 0; n < 16 && !valid.empty(); n++) {
            const ScheduleParams &p = valid[n * valid.size() / 16];
            tried++;
            try {
                EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, &p)) << p.str();
                // Points valid for sum only (the relabeled graph re-sorts neighbours) skip max.
                const Problem max_problem = spmm_problem(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}, layout, g.stats());
                if (!def.invalid_reason(p, max_problem)) {
                    EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}, x, {}, &p)) << p.str();
                }
            } catch (const std::exception &e) {
                // A kernel fault leaves the CUDA context unusable: name the point and stop.
                FAIL() << p.str() << " F=" << F << ": " << e.what();
            }
        }
        EXPECT_EQ(tried, 16);
    }
}

TEST_F(GpuSpmm, RowBalanceAndRowSplitKeepResultsInRowOrder) {
    Graph g = test::random_graph(300);  // shuffled edge ids, a very long row, empty rows
    const ScheduleParams points[] = {
        ScheduleParams::parse("gpu_spmm{kMTile=4, kNRegTile=2, kNTile=32, kNnzTile=32, kRowSplit=0, rowBalance=1, smemColIdx=1, kNnzLanes=1, kVecWidth=1}"),
        ScheduleParams::parse("gpu_spmm{kMTile=8, kNRegTile=1, kNTile=16, kNnzTile=32, kRowSplit=0, rowBalance=1, smemColIdx=0, kNnzLanes=1, kVecWidth=1}"),
        ScheduleParams::parse("gpu_spmm{kMTile=4, kNRegTile=2, kNTile=32, kNnzTile=32, kRowSplit=256, rowBalance=0, smemColIdx=1, kNnzLanes=1, kVecWidth=1}"),
        // The locality order (rowBalance = 2) with shared tiles, direct ids and 2-wide loads.
        ScheduleParams::parse("gpu_spmm{kMTile=4, kNRegTile=2, kNTile=32, kNnzTile=32, kRowSplit=0, rowBalance=2, smemColIdx=1, kNnzLanes=1, kVecWidth=1}"),
        ScheduleParams::parse("gpu_spmm{kMTile=8, kNRegTile=1, kNTile=16, kNnzTile=32, kRowSplit=0, rowBalance=2, smemColIdx=0, kNnzLanes=1, kVecWidth=1}"),
        ScheduleParams::parse("gpu_spmm{kMTile=8, kNRegTile=1, kNTile=16, kNnzTile=32, kRowSplit=0, rowBalance=2, smemColIdx=1, kNnzLanes=1, kVecWidth=2}"),
    };
    for (const ScheduleParams &p : points)
        for (ReduceOp r : kReduces) {
            Tensor x = features(g.num_src(), {64}, 11);
            Tensor w = features(g.num_edges(), {64}, 12);
            EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, r}, x, w, &p)) << p.str() << " " << reduce_op_name(r);
        }
}

TEST_F(GpuSpmm, RowTailsEveryOpSumAndMean) {
    // The row-tail form (rowTails = 1): rows reduce their first kRowSplit nonzeros and store them, a
    // second kernel adds the tails atomically. On graphs with empty rows, a very long row, duplicate
    // edges, self-loops and shuffled edge ids; every op, sum and mean, F = 1, odd F, vector loads,
    // register tiles, broadcast heads with edge scalars, and a graph without any long row (only the
    // padded empty tail).
    Graph g = test::random_graph(301);
    test::RandomGraphOptions short_rows;
    short_rows.long_row = 0;
    Graph flat = test::random_graph(302, short_rows);
    struct Case {
        int64_t F;
        const char *point;
    };
    const Case cases[] = {
        {1, "gpu_spmm{kMTile=64, kNRegTile=1, kNTile=1, kNnzTile=16, kRowSplit=256, rowBalance=0, smemColIdx=0, kNnzLanes=1, kVecWidth=1, rowTails=1}"},
        {7, "gpu_spmm{kMTile=16, kNRegTile=1, kNTile=4, kNnzTile=16, kRowSplit=256, rowBalance=0, smemColIdx=0, kNnzLanes=1, kVecWidth=1, rowTails=1}"},
        {32, "gpu_spmm{kMTile=8, kNRegTile=1, kNTile=8, kNnzTile=16, kRowSplit=256, rowBalance=0, smemColIdx=0, kNnzLanes=1, kVecWidth=4, rowTails=1}"},
        {64, "gpu_spmm{kMTile=4, kNRegTile=2, kNTile=16, kNnzTile=16, kRowSplit=1024, rowBalance=0, smemColIdx=0, kNnzLanes=1, kVecWidth=2, rowTails=1}"},
        {128, "gpu_spmm{kMTile=4, kNRegTile=1, kNTile=32, kNnzTile=16, kRowSplit=256, rowBalance=0, smemColIdx=0, kNnzLanes=1, kVecWidth=4, rowTails=1}"},
    };
    for (const Case &c : cases) {
        const ScheduleParams p = ScheduleParams::parse(c.point);
        for (const Graph *graph : {&g, &flat})
            for (BinaryOp op : kOps)
                for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean}) {
                    Tensor x = features(graph->num_src(), {c.F}, 13);
                    Tensor w = features(graph->num_edges(), {c.F}, 14, op == BinaryOp::Div);
                    EXPECT_TRUE(check(*graph, SpmmSpec{op, r}, x, w, &p))
                        << p.str() << " " << SpmmSpec{op, r}.name() << (graph == &flat ? " (no long row)" : "");
                }
    }
    // Heads with one scalar per edge and head (broadcast).
    const ScheduleParams heads = ScheduleParams::parse(cases[2].point);
    Tensor x = features(g.num_src(), {4, 32}, 15);
    Tensor w = features(g.num_edges(), {4, 1}, 16);
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean})
        EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, r}, x, w, &heads)) << reduce_op_name(r);
}

TEST_F(GpuSpmm, BalancedDefaultsOnUnsplitGraphsOfVaryingRowLength) {
    // Rows of widely varying length (60% empty) and no row long enough to be split: the defaults
    // take rows longest first from F = 8 (lanes below 16, shared tiles above, 2-wide loads for even F),
    // in the locality order except at F = 16..31, or run on the graph relabeled in that order.
    test::RandomGraphOptions opt;
    opt.num_nodes = 3000;
    opt.avg_degree = 12;
    opt.empty_row_share = 0.6;
    opt.long_row = 30;  // under 8x the average row (4.8): COV 1.3, unsplit
    Graph g = test::random_graph(310, opt);
    for (int64_t F : {8, 16, 32, 33, 64, 130}) {
        const ScheduleParams d = gpu_spmm_expert_default(spmm_problem(SpmmSpec{}, plan_features(BinaryOp::Mul, {F}, {F}), g.stats()));
        // Up to 63 features (F % 4 == 0 from 16) copy_lhs runs on the relabeled graph (rowBalance 3).
        const int64_t want = F == 8 || F == 16 || F == 32 ? 3 : 2;
        ASSERT_EQ(d.get("rowBalance"), want) << "F=" << F << ": " << d.str() << " (COV " << g.stats().row_length_cov << ")";
        for (BinaryOp op : {BinaryOp::Mul, BinaryOp::CopyLhs})
            for (ReduceOp r : kReduces) {
                Tensor x = features(g.num_src(), {F}, 13);
                Tensor w = features(g.num_edges(), {F}, 14);
                EXPECT_TRUE(check(g, SpmmSpec{op, r}, x, w, nullptr)) << SpmmSpec{op, r}.name() << " F=" << F;
            }
    }
}

TEST_F(GpuSpmm, SourceTilesEveryOpSumAndMean) {
    // Rows reduced in runs over tiles of 1024 source ids (5 tiles), alone, cut at 256 nonzeros,
    // with unrolled lanes, with the register tile and with the shared tile; every op with sum and
    // mean, on a graph with shuffled edge ids and one with identity ids.
    for (bool shuffled : {true, false}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = 5000;
        opt.shuffle_edge_ids = shuffled;
        Graph g = test::random_graph(shuffled ? 410 : 411, opt);
        for (int64_t F : {1, 3, 8}) {
            int64_t T = 1;
            while (T * 2 <= F) T *= 2;
            auto p = [&](int64_t M, int64_t Tn, int64_t R, int64_t L, int64_t split, int64_t smem, int64_t unroll) {
                return ScheduleParams{"gpu_spmm",
                                      {{"kMTile", M}, {"kNTile", Tn}, {"kNRegTile", R}, {"kNnzTile", 32},
                                       {"smemColIdx", smem}, {"kRowSplit", split}, {"rowBalance", 0},
                                       {"kNnzLanes", L}, {"kVecWidth", 1}, {"kNnzUnroll", unroll}, {"kSrcTile", 1024}}};
            };
            std::vector<ScheduleParams> points = {p(4, T, 1, 32 / T, 0, 0, 1), p(4, T, 1, 32 / T, 256, 0, 2)};
            if (F == 8) {
                points.push_back(p(8, 4, 2, 1, 256, 0, 1));
                points.push_back(p(4, 8, 1, 1, 0, 1, 1));
            }
            for (const ScheduleParams &pt : points)
                for (BinaryOp op : kOps)
                    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean}) {
                        Tensor x = features(g.num_src(), {F}, 21);
                        Tensor w = features(g.num_edges(), {F}, 22, op == BinaryOp::Div);
                        try {
                            EXPECT_TRUE(check(g, SpmmSpec{op, r}, x, w, &pt))
                                << pt.str() << " " << SpmmSpec{op, r}.name() << " F=" << F << (shuffled ? " shuffled" : "");
                        } catch (const std::exception &e) {
                            FAIL() << pt.str() << " " << SpmmSpec{op, r}.name() << " F=" << F << ": " << e.what();
                        }
                    }
        }
    }
}

TEST_F(GpuSpmm, RelabeledGraphEveryOpSumAndMean) {
    // rowBalance = 3: the kernel runs on the graph renumbered in its locality order, gathers its
    // source features into that order and stores rows back. Lanes (unrolled too), whole-row threads,
    // the shared tile, the register tile and vector loads; every op with sum and mean; shuffled and
    // identity edge ids (the relabeled graph always lists its edges with explicit ids); segments of the
    // relabeled rows; empty rows, a very long row, duplicates and self-loops; F = 1, odd F, and
    // broadcast heads. Every op but copy_rhs (which gathers no source features).
    for (bool shuffled : {true, false}) {
        test::RandomGraphOptions opt;
        opt.num_nodes = 2000;
        opt.shuffle_edge_ids = shuffled;
        Graph g = test::random_graph(shuffled ? 610 : 611, opt);
        auto p = [](int64_t M, int64_t T, int64_t R, int64_t L, int64_t smem, int64_t V, int64_t unroll,
                    int64_t split = 0) {
            return ScheduleParams{"gpu_spmm",
                                  {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", 32},
                                   {"smemColIdx", smem}, {"kRowSplit", split}, {"rowBalance", 3}, {"kNnzLanes", L},
                                   {"kVecWidth", V}, {"kNnzUnroll", unroll}, {"kSrcTile", 0}}};
        };
        struct Case {
            std::vector<int64_t> lhs, rhs;
            std::vector<ScheduleParams> points;
        };
        const Case cases[] = {
            {{1}, {1}, {p(4, 1, 1, 32, 0, 1, 1), p(8, 1, 1, 16, 0, 1, 2), p(4, 1, 1, 32, 0, 1, 1, 256)}},
            {{3}, {3}, {p(4, 2, 1, 16, 0, 1, 2), p(16, 2, 1, 1, 0, 1, 1)}},
            {{8}, {8}, {p(8, 8, 1, 2, 0, 1, 1), p(8, 8, 1, 1, 1, 1, 1), p(16, 2, 1, 1, 1, 4, 1), p(8, 4, 2, 1, 0, 1, 1, 256)}},
            // The default of even F from 16 to 31: 2-wide loads, staged ids, segments of 256.
            {{16}, {16}, {p(8, 8, 1, 1, 1, 2, 1, 256)}},
            {{18}, {18}, {p(8, 8, 1, 1, 1, 2, 1, 256)}},
            {{64}, {64}, {p(2, 16, 1, 1, 1, 4, 1), p(4, 32, 2, 1, 1, 1, 1), p(4, 16, 1, 1, 0, 2, 1), p(4, 16, 2, 1, 0, 1, 1, 256),
                         p(32, 8, 1, 1, 0, 4, 1, 1024), p(32, 16, 2, 1, 0, 2, 1, 1024)}},
            {{4, 16}, {4, 1}, {p(4, 16, 1, 1, 1, 1, 1), p(4, 4, 1, 8, 0, 1, 1)}},
        };
        for (const Case &c : cases)
            for (const ScheduleParams &pt : c.points)
                for (BinaryOp op : kOps)
                    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean}) {
                        if (op == BinaryOp::CopyRhs) continue;  // gathers no source features: invalid
                        Tensor x = features(g.num_src(), c.lhs, 31);
                        Tensor w = features(g.num_edges(), c.rhs, 32, op == BinaryOp::Div);
                        const std::string what = pt.str() + " " + SpmmSpec{op, r}.name() + " F=" +
                                                 std::to_string(c.lhs.back()) + (shuffled ? " shuffled" : "");
                        try {
                            EXPECT_TRUE(check(g, SpmmSpec{op, r}, x, w, &pt)) << what;
                        } catch (const std::exception &e) {
                            FAIL() << what << ": " << e.what();
                        }
                    }
    }
}

/// The nonzero-lane points of a feature length: a warp per row (kNTile x kNnzLanes = 32) alone, with
/// bind_buffer and with row splitting, and fewer lanes with more rows per block.
std::vector<ScheduleParams> nnz_lane_points(int64_t F, int64_t unroll = 1) {
    int64_t T = 1;
    while (T * 2 <= F && T < 32) T *= 2;
    const int64_t warp = std::max<int64_t>(2, 32 / T);
    auto p = [&](int64_t M, int64_t L, int64_t split, int64_t balance) {
        return ScheduleParams{"gpu_spmm",
                              {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", 1}, {"kNnzTile", 32}, {"smemColIdx", 0},
                               {"kRowSplit", split}, {"rowBalance", balance}, {"kNnzLanes", L}, {"kVecWidth", 1},
                               {"kNnzUnroll", unroll}}};
    };
    return {p(4, warp, 0, 0), p(4, warp, 0, 1), p(4, warp, 0, 2), p(4, warp, 256, 0), p(32 / std::min<int64_t>(T * 2, 32), 2, 0, 0)};
}

TEST_F(GpuSpmm, NnzLanesEveryReduce) {
    // Random graphs with empty rows, a very long row, duplicate edges (equal messages: ties broken
    // by position across lanes) and shuffled edge ids.
    const auto &def = spmm_schedule("gpu_spmm");
    for (int64_t F : {1, 3, 8, 16, 32}) {
        Graph g = test::random_graph(500 + F);
        Tensor x = features(g.num_src(), {F}, 13);
        Tensor w = features(g.num_edges(), {F}, 14);
        Problem problem{plan_features(BinaryOp::Mul, {F}, {F}), g.stats()};
        for (const ScheduleParams &p : nnz_lane_points(F)) {
            ASSERT_FALSE(def.invalid_reason(p, problem).has_value()) << p.str();
            for (ReduceOp r : kReduces) {
                EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, r}, x, w, &p)) << p.str() << " " << reduce_op_name(r);
                EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, r}, x, {}, &p)) << p.str() << " " << reduce_op_name(r);
            }
        }
    }
}

TEST_F(GpuSpmm, NnzUnrollEveryOpAndReduce) {
    // Unrolled lanes (sum and mean if-converted by SpeculateGuardedUpdates, max and min left
    // guarded) on random graphs with empty rows, a very long row, duplicates and shuffled edge ids,
    // odd feature lengths included, and on a graph with a single edge (the steps past it read
    // element 0 of every array).
    const auto &def = spmm_schedule("gpu_spmm");
    for (int64_t F : {1, 17, 32})
        for (int64_t U : {2, 4}) {
            Graph g = test::random_graph(1100 + F + U);
            Tensor x = features(g.num_src(), {F}, 31);
            Tensor w = features(g.num_edges(), {F}, 32);
            Problem problem{plan_features(BinaryOp::Mul, {F}, {F}), g.stats()};
            const std::vector<ScheduleParams> points = nnz_lane_points(F, U);
            for (size_t i = 0; i < 4; i++) {  // a warp per row alone, with each bind_buffer order, with row splitting
                const ScheduleParams &p = points[i];
                ASSERT_FALSE(def.invalid_reason(p, problem).has_value()) << p.str();
                auto run = [&](BinaryOp op, ReduceOp r) {
                    try {
                        EXPECT_TRUE(check(g, SpmmSpec{op, r}, x, w, &p))
                            << p.str() << " " << binary_op_name(op) << " " << reduce_op_name(r);
                    } catch (const std::exception &e) {
                        FAIL() << p.str() << " " << binary_op_name(op) << " " << reduce_op_name(r) << ": " << e.what();
                    }
                };
                for (BinaryOp op : {BinaryOp::Mul, BinaryOp::CopyLhs})
                    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) run(op, r);
                if (i == 0)
                    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Div, BinaryOp::CopyRhs}) run(op, ReduceOp::Sum);
            }
        }
    Graph one = Graph::from_edges(4, {3}, {1});
    for (int64_t U : {2, 4}) {
        const ScheduleParams p = nnz_lane_points(8, U)[0];
        EXPECT_TRUE(check(one, SpmmSpec{BinaryOp::Mul, ReduceOp::Sum}, features(4, {8}, 33), features(1, {8}, 34), &p))
            << p.str();
    }
}

TEST_F(GpuSpmm, NnzLanesBreakTiesByPosition) {
    // Features from {0, 1}: most messages of a row tie, so the arg ids show whether the lanes'
    // partials are combined by position (the earliest neighbour wins) and not by lane.
    Graph g = test::random_graph(600);
    std::vector<float> values(static_cast<size_t>(g.num_src()) * 4);
    for (size_t i = 0; i < values.size(); i++) values[i] = static_cast<float>((i * 7919) % 3 == 0);
    Tensor x = Tensor::from_vector(values, {g.num_src(), 4});
    for (const ScheduleParams &p : nnz_lane_points(4))
        for (ReduceOp r : {ReduceOp::Max, ReduceOp::Min})
            EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, r}, x, {}, &p)) << p.str() << " " << reduce_op_name(r);
}

TEST_F(GpuSpmm, DefaultSchedulesBelowAWarpOfFeatures) {
    for (int64_t F : {1, 3, 8, 16, 31}) {
        Graph g = test::random_graph(700 + F);
        Tensor x = features(g.num_src(), {F}, 15);
        for (ReduceOp r : kReduces) EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, r}, x, {}, nullptr)) << F;
    }
}

TEST_F(GpuSpmm, VecWidthEveryReduce) {
    // Vector loads of feature rows with every reduce, shared ids or not, row split, bind_buffer and a
    // register tile, on random graphs with empty rows, a very long row and duplicates.
    auto p = [](int64_t M, int64_t T, int64_t R, int64_t V, int64_t smem, int64_t split, int64_t balance) {
        return ScheduleParams{"gpu_spmm",
                              {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", 32}, {"smemColIdx", smem},
                               {"kRowSplit", split}, {"rowBalance", balance}, {"kNnzLanes", 1}, {"kVecWidth", V}}};
    };
    for (int64_t F : {32, 128}) {
        Graph g = test::random_graph(900 + F);
        Tensor x = features(g.num_src(), {F}, 21);
        Tensor w = features(g.num_edges(), {F}, 22);
        // The last two keep their accumulator tile in the thread's local frame (AlignLocalAllocations).
        for (const ScheduleParams &q : {p(8, 8, 1, 4, 1, 0, 0), p(8, 8, 1, 4, 0, 256, 0), p(8, 4, 2, 4, 1, 0, 1),
                                        p(4, 8, 1, 2, 1, 0, 0), p(32, 1, 4, 2, 1, 0, 1), p(32, 2, 4, 4, 0, 1024, 0)})
            for (ReduceOp r : kReduces) try {
                    EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, r}, x, w, &q))
                        << q.str() << " " << reduce_op_name(r) << " F=" << F;
                } catch (const std::exception &e) {
                    FAIL() << q.str() << " " << reduce_op_name(r) << " F=" << F << ": " << e.what();
                }
    }
    // Two rows per block, a register tile and vector loads with shared ids (a point whose kernel
    // was once deleted by a lowering pass, leaving the output unwritten).
    Graph g = test::random_graph(1300);
    Tensor x = features(g.num_src(), {128}, 23);
    for (const ScheduleParams &q : {p(2, 16, 2, 4, 1, 0, 0), p(2, 32, 2, 2, 1, 0, 0), p(1, 32, 2, 2, 1, 0, 0)})
        EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, &q)) << q.str();
}

TEST_F(GpuSpmm, GuardedFeatureTilesEveryReduce) {
    // One feature tile wider than a feature length that is not a power of two (F = 100: 32 threads x
    // 4 features, 16 x 2 x 4; F = 47: 16 threads x 4 outputs, 32 x 2): the threads past the row's end
    // idle. Every reduce (arg ids included), shared ids or not, row split, row tails, balanced rows,
    // heads, on a random graph with empty rows, a very long row, duplicates and self-loops.
    auto p = [](int64_t M, int64_t T, int64_t R, int64_t V, int64_t smem, int64_t split, int64_t balance,
                int64_t tails = 0) {
        return ScheduleParams{"gpu_spmm",
                              {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", 32}, {"smemColIdx", smem},
                               {"kRowSplit", split}, {"rowBalance", balance}, {"kNnzLanes", 1}, {"kVecWidth", V},
                               {"rowTails", tails}}};
    };
    Graph g = test::random_graph(4700);
    struct Case {
        int64_t F;
        ScheduleParams q;
    };
    const Case cases[] = {{100, p(4, 32, 1, 4, 0, 0, 0)},    {100, p(4, 16, 2, 4, 1, 0, 1)},
                          {100, p(8, 32, 1, 4, 0, 256, 0)},  {100, p(4, 16, 8, 1, 0, 128, 0, 1)},
                          {47, p(4, 16, 4, 1, 1, 0, 0)},     {47, p(8, 32, 2, 1, 0, 128, 0)},
                          {47, p(2, 64, 1, 1, 1, 0, 1)}};
    for (const Case &c : cases) {
        ASSERT_FALSE(spmm_schedule("gpu_spmm").invalid_reason(
            c.q, spmm_problem(SpmmSpec{BinaryOp::Mul}, plan_features(BinaryOp::Mul, {c.F}, {c.F}), g.stats())))
            << c.q.str();
        Tensor x = features(g.num_src(), {c.F}, 31);
        Tensor w = features(g.num_edges(), {c.F}, 32);
        const bool tails = c.q.get("rowTails") != 0;
        for (ReduceOp r : kReduces) {
            if (tails && (r == ReduceOp::Max || r == ReduceOp::Min)) continue;  // row tails: sum and mean
            try {
                EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, r}, x, w, &c.q)) << c.q.str() << " " << reduce_op_name(r);
                EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, r}, x, {}, &c.q)) << c.q.str() << " " << reduce_op_name(r);
            } catch (const std::exception &e) {
                FAIL() << c.q.str() << " " << reduce_op_name(r) << " F=" << c.F << ": " << e.what();
            }
        }
    }
    // Heads: 4 x 25 features, one scalar per edge and head.
    const ScheduleParams heads = p(4, 32, 1, 1, 0, 0, 0);
    Tensor x = features(g.num_src(), {4, 25}, 33);
    Tensor w = features(g.num_edges(), {4, 1}, 34);
    EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, ReduceOp::Sum}, x, w, &heads)) << heads.str();
}

TEST_F(GpuSpmm, DefaultsOfShortRowsAndOfSkewedRowsWithAnEdgeOperand) {
    // The default points of two graph shapes, run on a random graph with empty rows, a very long
    // row, duplicates and self-loops: a lattice's (average row 2.8) at F = 47 and 100 (one guarded
    // tile with the fewest idle slots) and the reddit twin's with an edge operand at F = 16, 64, 100
    // and 128 (rows in row order, vector loads, row tails from 64), sum and mean, u_mul_e, u_add_e
    // and (lattice) copy_lhs.
    GraphStats lattice;
    lattice.num_rows = lattice.num_cols = 4000000, lattice.nnz = 11200000, lattice.max_row_length = 6;
    lattice.avg_row_length = 2.8, lattice.row_length_cov = 0.3, lattice.col_length_cov = 0.3;
    GraphStats reddit;
    reddit.num_rows = reddit.num_cols = 232965, reddit.nnz = 114615892, reddit.max_row_length = 48535;
    reddit.avg_row_length = 492.0, reddit.row_length_cov = 1.6, reddit.col_length_cov = 1.0;
    Graph g = test::random_graph(4711);
    const auto &def = spmm_schedule("gpu_spmm");
    struct Case {
        const GraphStats *shape;
        int64_t F;
        BinaryOp op;
    };
    int n = 0;
    for (const Case c : {Case{&lattice, 47, BinaryOp::CopyLhs}, Case{&lattice, 47, BinaryOp::Mul},
                         Case{&lattice, 100, BinaryOp::CopyLhs}, Case{&lattice, 100, BinaryOp::Add},
                         Case{&reddit, 16, BinaryOp::Mul}, Case{&reddit, 64, BinaryOp::Mul},
                         Case{&reddit, 100, BinaryOp::Add}, Case{&reddit, 128, BinaryOp::Mul}}) {
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean}) {
            const SpmmSpec spec{c.op, r};
            const ScheduleParams d = def.default_params(spmm_problem(spec, plan_features(c.op, {c.F}, {1}), *c.shape));
            ASSERT_EQ(def.invalid_reason(d, spmm_problem(spec, plan_features(c.op, {c.F}, {1}), g.stats())), std::nullopt)
                << d.str();
            Tensor x = features(g.num_src(), {c.F}, 41);
            Tensor w = features(g.num_edges(), {1}, 42);
            try {
                EXPECT_TRUE(check(g, spec, x, w, &d)) << d.str() << " F=" << c.F << " " << spec.name();
                ++n;
            } catch (const std::exception &e) {
                FAIL() << d.str() << " F=" << c.F << " " << spec.name() << ": " << e.what();
            }
        }
    }
    EXPECT_EQ(n, 16);
}

TEST_F(GpuSpmm, RealGraphs) {
    for (const std::string &name : test::real_graph_names()) {
        const std::string path = test::real_graph_path(name);
        ASSERT_TRUE(std::filesystem::exists(path)) << path;
        Graph g = Graph::load(path);
        Tensor x = features(g.num_src(), {32}, 6);
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max})
            EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::CopyLhs, r}, x, {}, nullptr)) << name;
        if (g.has_values()) {
            Tensor w = Tensor::from_vector(g.values(), {g.num_edges(), 1});
            EXPECT_TRUE(check(g, SpmmSpec{BinaryOp::Mul, ReduceOp::Sum}, x, w, nullptr)) << name;
        }
    }
}

TEST_F(GpuSpmm, GraphWithoutEdgesAndTinyGraphs) {
    Graph empty = Graph::from_edges(5, {}, {});
    EXPECT_TRUE(check(empty, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}, features(5, {32}, 8), {}, nullptr));
    Graph tiny = Graph::from_edges(3, {0, 1}, {2, 2});
    EXPECT_TRUE(check(tiny, SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, features(3, {32}, 9), {}, nullptr));
}

}  // namespace
}  // namespace gsparse
