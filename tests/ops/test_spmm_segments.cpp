// g-SpMM by nonzeros (api: gspmm_segments_into) against the C++ reference (ops/reference.h), on fresh
// random graphs with empty rows, a very long row, duplicate edges, self-loops, edge ids that are
// not CSR positions and a bipartite case; F = 1, odd F, heads x features; every op with sum and
// mean. The CUDA schedule's lowering (no GPU needed): runs accumulated in registers, one atomic
// add per change of row, as red/atom adds without a compare-and-swap loop.
#include <gtest/gtest.h>

#include <sstream>

#include "api/gsparse.h"
#include "halide_ext/accumulate_atomic_runs.h"
#include "halide_ext/segmented_lane_atomics.h"
#include "ops/reference.h"
#include "runtime/lowered_stmt.h"
#include "runtime/spmm_segment_kernel.h"
#include "runtime/target.h"
#include "schedules/spmm_segments.h"
#include "support/compare.h"
#include "support/graph_view_of.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

using test::HostView;
using test::view_of;

/// The C++ reference (ops/reference.h) agrees with out within 1e-5 of each sum's magnitude.
::testing::AssertionResult matches(const Graph &g, const SpmmSpec &spec, const Tensor &x, const Tensor &w,
                                   const Tensor &out) {
    return test::matches_reference(out, reference_spmm(g, spec, x, w), 1e-5, 1e-6);
}

TEST(SpmmSegments, MatchesTheReferenceForEveryOpSumAndMean) {
    const BinaryOp ops[] = {BinaryOp::CopyLhs, BinaryOp::CopyRhs, BinaryOp::Add,
                            BinaryOp::Sub,     BinaryOp::Mul,     BinaryOp::Div};
    for (uint64_t seed : {31u, 32u}) {
        test::RandomGraphOptions opt;
        opt.num_src = seed == 32 ? 150 : -1;  // one bipartite graph
        Graph g = test::random_graph(seed, opt);
        HostView h = view_of(g);
        for (int64_t f : {1, 7, 32})
            for (BinaryOp op : ops)
                for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean}) {
                    const SpmmSpec spec{op, r};
                    Tensor x = test::random_tensor({g.num_src(), f}, seed * 7 + f, DType::F32, 0.5, 1.5);
                    Tensor w = test::random_tensor({g.num_edges(), f}, seed * 11 + f, DType::F32, 0.5, 1.5);
                    Tensor out = test::random_tensor({g.num_dst(), f}, 3);  // overwritten, rows without edges too
                    gspmm_segments_into(h.view, spec, x, w, out);
                    EXPECT_TRUE(matches(g, spec, x, w, out)) << spec.name() << " F=" << f << " seed " << seed;
                }
    }
}

TEST(SpmmSegments, HeadsBroadcastAndGivenRuns) {
    Graph g = test::random_graph(33);
    HostView h = view_of(g);
    const int64_t H = 3, F = 5;
    const SpmmSpec spec{BinaryOp::Mul, ReduceOp::Sum};
    Tensor x = test::random_tensor({g.num_src(), H, F}, 4, DType::F32, 0.5, 1.5);
    Tensor a = test::random_tensor({g.num_edges(), H, 1}, 5, DType::F32, 0.5, 1.5);
    for (int64_t run : {4, 256}) {
        Tensor out = Tensor::empty({g.num_dst(), H, F}, DType::F32);
        OpOptions o;
        o.schedule = ScheduleParams::parse("spmm_segments{run=" + std::to_string(run) + "}");
        gspmm_segments_into(h.view, spec, x, a, out, o);
        EXPECT_TRUE(matches(g, spec, x, a, out)) << "run " << run;
    }
}

TEST(SpmmSegments, WarpLanesMatchTheReference) {
    // The warp-lane form (lanes=32): edges in chunks of 32 x run, the last chunk padded with
    // positions that add 0. Rows of one feature thread (F <= tile), every op, sum and mean, graphs
    // with edge ids in CSR order and shuffled, a bipartite graph, runs shorter and longer than rows.
    const BinaryOp ops[] = {BinaryOp::CopyLhs, BinaryOp::CopyRhs, BinaryOp::Mul, BinaryOp::Div};
    for (uint64_t seed : {41u, 42u}) {
        test::RandomGraphOptions opt;
        opt.num_src = seed == 42 ? 170 : -1;
        Graph g = test::random_graph(seed, opt);
        HostView h = view_of(g);
        for (int64_t f : {1, 4})
            for (BinaryOp op : ops)
                for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean})
                    for (int64_t run : {4, 64}) {
                        const SpmmSpec spec{op, r};
                        Tensor x = test::random_tensor({g.num_src(), f}, seed * 7 + f, DType::F32, 0.5, 1.5);
                        Tensor w = test::random_tensor({g.num_edges(), f}, seed * 11 + f, DType::F32, 0.5, 1.5);
                        Tensor out = test::random_tensor({g.num_dst(), f}, 3);
                        OpOptions o;
                        o.schedule = ScheduleParams::parse("spmm_segments{run=" + std::to_string(run) +
                                                           ", tile=" + std::to_string(f) + ", lanes=32}");
                        gspmm_segments_into(h.view, spec, x, w, out, o);
                        EXPECT_TRUE(matches(g, spec, x, w, out))
                            << spec.name() << " F=" << f << " run " << run << " seed " << seed;
                    }
    }
}

TEST(SpmmSegments, WarpLanesRefuseRowsOfSeveralThreadsAndOtherLaneCounts) {
    EXPECT_EQ(segment_lanes_invalid_reason(0, 1, 64), "");
    EXPECT_EQ(segment_lanes_invalid_reason(32, 1, 1), "");
    EXPECT_EQ(segment_lanes_invalid_reason(32, 8, 8, 32), "");
    EXPECT_NE(segment_lanes_invalid_reason(16, 1, 1).find("not one of 0, 32"), std::string::npos);
    EXPECT_NE(segment_lanes_invalid_reason(32, 1, 2).find("one feature thread"), std::string::npos);
    EXPECT_NE(segment_lanes_invalid_reason(32, 1, 1, 64).find("32-bit"), std::string::npos);
    EXPECT_THROW(segment_point_of(ScheduleParams::parse("spmm_segments{lanes=8}")), ScheduleError);
    EXPECT_EQ(segment_point_of(ScheduleParams::parse("spmm_segments{run=8, lanes=32}")).lanes, 32);
    EXPECT_EQ(segment_params(SegmentPoint{8, 1, 32}).str(), "spmm_segments{lanes=32, run=8}");
    // On a graph: F = 2 with tile 1 is two feature threads.
    Graph g = test::random_graph(43);
    HostView h = view_of(g);
    Tensor x = test::random_tensor({g.num_src(), 2}, 1);
    Tensor out = Tensor::empty({g.num_dst(), 2}, DType::F32);
    OpOptions o;
    o.schedule = ScheduleParams::parse("spmm_segments{run=8, lanes=32}");
    try {
        gspmm_segments_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, out, o);
        ADD_FAILURE() << "two feature threads with lanes = 32 were accepted";
    } catch (const ScheduleError &e) {
        EXPECT_NE(std::string(e.what()).find("one feature thread"), std::string::npos) << e.what();
    }
}

TEST(SpmmSegments, Float64) {
    Graph g = test::random_graph(38);
    HostView h = view_of(g);
    const SpmmSpec spec{BinaryOp::Mul, ReduceOp::Sum};
    Tensor x = test::random_tensor({g.num_src(), 5}, 9, DType::F64, 0.5, 1.5);
    Tensor w = test::random_tensor({g.num_edges(), 5}, 10, DType::F64, 0.5, 1.5);
    Tensor out = Tensor::empty({g.num_dst(), 5}, DType::F64);
    gspmm_segments_into(h.view, spec, x, w, out);
    EXPECT_TRUE(test::matches_reference(out, reference_spmm(g, spec, x, w), 1e-12, 1e-12));
}

TEST(SpmmSegments, StaticGraphsTakeTheSchedulePoint) {
    // gspmm_into on a Graph with a spmm_segments point runs on the graph's own COO (edge ids that
    // are not CSR positions included); a graph without edges gives zeros.
    test::RandomGraphOptions none;
    none.avg_degree = 0;
    none.long_row = 0;
    for (const Graph &g : {test::random_graph(36), test::random_graph(37, none)}) {
        const SpmmSpec spec{BinaryOp::Div, ReduceOp::Mean};
        Tensor x = test::random_tensor({g.num_src(), 9}, 6, DType::F32, 0.5, 1.5);
        Tensor w = test::random_tensor({g.num_edges(), 1}, 7, DType::F32, 0.5, 1.5);
        Tensor out = test::random_tensor({g.num_dst(), 9}, 8);
        OpOptions o;
        o.schedule = ScheduleParams::parse("spmm_segments{run=8}");
        gspmm_into(g, spec, x, w, out, nullptr, nullptr, o);
        EXPECT_TRUE(matches(g, spec, x, w, out)) << g.num_edges() << " edges";
        // The warp-lane form, rows of one element.
        Tensor x1 = test::random_tensor({g.num_src(), 1}, 16, DType::F32, 0.5, 1.5);
        Tensor out1 = test::random_tensor({g.num_dst(), 1}, 18);
        o.schedule = ScheduleParams::parse("spmm_segments{run=8, lanes=32}");
        gspmm_into(g, spec, x1, w, out1, nullptr, nullptr, o);
        EXPECT_TRUE(matches(g, spec, x1, w, out1)) << g.num_edges() << " edges, lanes";
    }
}

TEST(SpmmSegments, GraphWithoutEdgesGivesZeros) {
    test::RandomGraphOptions opt;
    opt.avg_degree = 0;
    opt.long_row = 0;
    Graph g = test::random_graph(34, opt);
    ASSERT_EQ(g.num_edges(), 0);
    HostView h = view_of(g);
    const index_t zero = 0;  // views hold at least one col_idx and COO entry
    h.view.col_idx = h.view.coo_src = h.view.coo_dst = &zero;
    h.view.coo_len = 1;
    Tensor x = test::random_tensor({g.num_src(), 4}, 1);
    Tensor out = test::random_tensor({g.num_dst(), 4}, 2);
    gspmm_segments_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, out);
    for (int64_t i = 0; i < out.numel(); i++) ASSERT_EQ(out.data_as<float>()[i], 0.0f) << i;
}

TEST(SpmmSegments, RejectsWhatItCannotCompute) {
    Graph g = test::random_graph(35);
    HostView h = view_of(g);
    Tensor x = test::random_tensor({g.num_src(), 4}, 1);
    Tensor out = Tensor::empty({g.num_dst(), 4}, DType::F32);
    EXPECT_THROW(gspmm_segments_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Max}, x, {}, out), ScheduleError);
    OpOptions bad_run;
    bad_run.schedule = ScheduleParams::parse("spmm_segments{run=3}");
    try {
        gspmm_segments_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, out, bad_run);
        ADD_FAILURE() << "run = 3 must be rejected";
    } catch (const ScheduleError &e) {
        EXPECT_NE(std::string(e.what()).find("run = 3"), std::string::npos) << e.what();
    }
    OpOptions other;
    other.schedule = ScheduleParams::parse("gpu_spmm{kMTile=4}");
    EXPECT_THROW(gspmm_segments_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, out, other), ScheduleError);
    HostView no_coo = view_of(g);
    no_coo.view.coo_src = no_coo.view.coo_dst = nullptr;
    EXPECT_THROW(gspmm_segments_into(no_coo.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, out), GraphError);
    Tensor short_out = Tensor::empty({g.num_dst() - 1, 4}, DType::F32);
    EXPECT_THROW(gspmm_segments_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, x, {}, short_out), ShapeError);
}

TEST(SpmmSegments, RunsOnACooViewWithoutCsr) {
    // A view of the COO alone (graphs whose CSR was never made): sum runs; mean, which reads the
    // in-degrees from row_ptr, is refused with a GraphError naming row_ptr; g-SDDMM runs too.
    Graph g = test::random_graph(36);
    HostView h = view_of(g);
    GraphView coo = h.view;
    coo.row_ptr = nullptr;
    coo.row_ptr_len = 0;
    coo.col_idx = nullptr;
    coo.edge_ids = nullptr;
    EXPECT_FALSE(coo.has_csr());
    EXPECT_THROW(coo.check(), GraphError);
    const SpmmSpec sum{BinaryOp::Mul, ReduceOp::Sum};
    Tensor x = test::random_tensor({g.num_src(), 5}, 1, DType::F32, 0.5, 1.5);
    Tensor w = test::random_tensor({g.num_edges(), 1}, 2, DType::F32, 0.5, 1.5);
    Tensor out = test::random_tensor({g.num_dst(), 5}, 3);
    gspmm_segments_into(coo, sum, x, w, out);
    EXPECT_TRUE(matches(g, sum, x, w, out));
    try {
        gspmm_segments_into(coo, {BinaryOp::CopyLhs, ReduceOp::Mean}, x, {}, out);
        ADD_FAILURE() << "mean on a view without row_ptr must be refused";
    } catch (const GraphError &e) {
        EXPECT_NE(std::string(e.what()).find("row_ptr"), std::string::npos) << e.what();
    }
    Tensor scores = Tensor::empty({g.num_edges(), 1}, DType::F32);
    Tensor y = test::random_tensor({g.num_dst(), 5}, 4);
    gsddmm_into(coo, {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst}, x, y, scores);
    Tensor want = Tensor::empty({g.num_edges(), 1}, DType::F32);
    gsddmm_into(h.view, {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst}, x, y, want);
    for (int64_t e = 0; e < g.num_edges(); e++) ASSERT_EQ(scores.data_as<float>()[e], want.data_as<float>()[e]) << e;
}

/// A custom lowering pass that keeps the text of the Stmt it is given (the pipeline after the
/// passes before it) and changes nothing.
class CaptureStmt : public Halide::Internal::IRMutator {
public:
    std::string text;
    Halide::Internal::Stmt mutate(const Halide::Internal::Stmt &s) override {
        std::ostringstream os;
        os << s;
        text = os.str();
        return s;
    }
    using Halide::Internal::IRMutator::mutate;
};

size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
    return n;
}

TEST(SpmmSegments, CudaScheduleAccumulatesRunsInRegisters) {
    // No GPU needed: the CUDA schedule lowers (and its PTX is emitted) on any machine. One element a
    // thread (edge weights, sum and mean), and feature tiles of K elements a thread (unrolled), each
    // element with its run's register pair and flushes.
    struct Case {
        SpmmSpec spec;
        int64_t feat, tile;
    };
    const Case cases[] = {{{BinaryOp::Mul, ReduceOp::Sum}, 64, 1},      {{BinaryOp::Mul, ReduceOp::Mean}, 64, 1},
                          {{BinaryOp::CopyLhs, ReduceOp::Sum}, 100, 2}, {{BinaryOp::CopyLhs, ReduceOp::Sum}, 100, 4},
                          {{BinaryOp::CopyLhs, ReduceOp::Sum}, 100, 8}};
    for (const Case &c : cases) {
        const int64_t rhs_feat = c.spec.op == BinaryOp::Mul ? 1 : c.feat;
        SpmmSegmentAlgorithm a =
            build_spmm_segment_algorithm(c.spec, plan_features(c.spec.op, {c.feat}, {rhs_feat}), DType::F32);
        schedule_spmm_segments(a, Device::CUDA, SegmentPoint{32, c.tile});
        Halide::Pipeline p(a.out);
        for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
        CaptureStmt capture;
        p.add_custom_lowering_pass(&capture, nullptr);
        const std::string ptx = lowered_stmt_text(p, a.arguments(), jit_target(Device::CUDA));
        auto *pass = dynamic_cast<ext::AccumulateAtomicRuns *>(a.lowering_passes.back().get());
        ASSERT_NE(pass, nullptr);
        // Every copy of the run loop (Halide partitions it at the edge array's end) is rewritten:
        // per copy and feature element a register pair, and two flushes (on a change of row, after
        // the run), each an atomic add of the run's sum.
        const int loops = pass->rewritten();
        const std::string what = c.spec.name() + " tile " + std::to_string(c.tile) + "\n" + capture.text;
        EXPECT_GE(loops, 1) << what;
        const size_t pairs = static_cast<size_t>(loops * c.tile);
        EXPECT_EQ(count(capture.text, "allocate run_index$"), pairs) << what;
        EXPECT_EQ(count(capture.text, "allocate run_sum$"), pairs) << what;
        EXPECT_EQ(count(capture.text, "atomic"), 2 * pairs) << what;
        EXPECT_EQ(count(capture.text, "+ run_sum$"), 2 * pairs) << what;
        // Adds, not a compare-and-swap loop or a mutex.
        EXPECT_TRUE(ptx.find("red.global.add.f32") != std::string::npos ||
                    ptx.find("atom.global.add.f32") != std::string::npos) << ptx;
        EXPECT_EQ(ptx.find("atom.global.cas"), std::string::npos) << ptx;
        EXPECT_EQ(ptx.find("mutex"), std::string::npos) << ptx;
    }
}

TEST(SpmmSegments, CudaWarpLanesCombineThroughShuffles) {
    // No GPU needed: the warp-lane form lowers with its step loop rewritten by SegmentedLaneAtomics
    // (per atomic add: a carried row and sum, the segmented scan's shuffles, a flush per run and
    // one after the loop), coalesced lanes on thread x, and atomic adds without a CAS loop.
    struct Case {
        SpmmSpec spec;
        int64_t feat;
    };
    for (const Case &c : {Case{{BinaryOp::Mul, ReduceOp::Sum}, 1}, Case{{BinaryOp::CopyLhs, ReduceOp::Mean}, 1},
                          Case{{BinaryOp::CopyLhs, ReduceOp::Sum}, 4}}) {
        const int64_t rhs_feat = c.spec.op == BinaryOp::Mul ? 1 : c.feat;
        SpmmSegmentAlgorithm a =
            build_spmm_segment_algorithm(c.spec, plan_features(c.spec.op, {c.feat}, {rhs_feat}), DType::F32, 8);
        schedule_spmm_segments(a, Device::CUDA, SegmentPoint{8, c.feat, 32});
        Halide::Pipeline p(a.out);
        for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
        CaptureStmt capture;
        p.add_custom_lowering_pass(&capture, nullptr);
        const std::string ptx = lowered_stmt_text(p, a.arguments(), jit_target(Device::CUDA));
        auto *pass = dynamic_cast<ext::SegmentedLaneAtomics *>(a.lowering_passes.back().get());
        ASSERT_NE(pass, nullptr);
        const std::string what = c.spec.name() + " F=" + std::to_string(c.feat) + "\n" + capture.text;
        const int loops = pass->rewritten();
        EXPECT_GE(loops, 1) << what;
        const size_t adds = static_cast<size_t>(loops * c.feat);
        EXPECT_EQ(count(capture.text, "allocate carry_index$"), adds) << what;
        EXPECT_EQ(count(capture.text, "allocate carry_sum$"), adds) << what;
        // Per add: the previous lane's address, five steps of sum and flag, the next lane's
        // address, and the carried address and sum broadcast from lane 31 (an int64 address, as
        // the CUDA target's large buffers index, moves as two 32-bit halves).
        const size_t words = capture.text.find("allocate carry_index$0[int64") != std::string::npos ? 2 : 1;
        EXPECT_EQ(count(capture.text, "shfl.sync.up.i32"), (words + 5) * adds) << what;
        EXPECT_EQ(count(capture.text, "shfl.sync.up.f32"), 5 * adds) << what;
        EXPECT_EQ(count(capture.text, "shfl.sync.down.i32"), words * adds) << what;
        EXPECT_EQ(count(capture.text, "shfl.sync.idx"), (words + 1) * adds) << what;
        // Adds: the carried run where lane 0 starts another row, the last lane of each run, and
        // the carried run after the loop.
        EXPECT_EQ(count(capture.text, "atomic"), 3 * adds) << what;
        EXPECT_NE(ptx.find("shfl.sync.up.b32"), std::string::npos) << ptx;
        EXPECT_TRUE(ptx.find("red.global.add.f32") != std::string::npos ||
                    ptx.find("atom.global.add.f32") != std::string::npos) << ptx;
        EXPECT_EQ(ptx.find("atom.global.cas"), std::string::npos) << ptx;
    }
}

TEST(SpmmSegments, CudaFeatureThreadsCoverRowsOfAnyLength) {
    // The feature threads of a run are the row length over the tile, not a power of two: F = 47 runs
    // 47 threads of one element, F = 100 with tile 4 runs 25 threads, and 256 / T runs fill a block.
    struct Case {
        int64_t feat, tile, threads;
    };
    for (const Case &c : {Case{47, 1, 47}, Case{100, 4, 25}, Case{64, 2, 32}, Case{300, 1, 128}}) {
        const SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
        SpmmSegmentAlgorithm a = build_spmm_segment_algorithm(spec, plan_features(spec.op, {c.feat}, {c.feat}), DType::F32);
        schedule_spmm_segments(a, Device::CUDA, SegmentPoint{32, c.tile});
        Halide::Pipeline p(a.out);
        for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
        CaptureStmt capture;
        p.add_custom_lowering_pass(&capture, nullptr);
        lowered_stmt_text(p, a.arguments(), jit_target(Device::CUDA));
        const std::string what = "F=" + std::to_string(c.feat) + " tile " + std::to_string(c.tile) + "\n" + capture.text;
        // The scatter's thread loops (feature, run); the zero fill runs 256 threads of its own.
        const std::string fi = "gpu_thread<CUDA> (.__thread_id_x, 0, " + std::to_string(c.threads) + ")";
        const std::string pt = "gpu_thread<CUDA> (.__thread_id_y, 0, " + std::to_string(256 / c.threads) + ")";
        EXPECT_NE(capture.text.find(fi), std::string::npos) << fi << "\n" << what;
        EXPECT_NE(capture.text.find(pt), std::string::npos) << pt << "\n" << what;
    }
}

TEST(SpmmSegments, PointsNameRunAndTileAndInvalidOnesAreRefused) {
    const SegmentPoint p = segment_point_of(ScheduleParams::parse("spmm_segments{run=64,tile=4}"));
    EXPECT_EQ(p.run, 64);
    EXPECT_EQ(p.tile, 4);
    EXPECT_EQ(segment_point_of(ScheduleParams::parse("spmm_segments{run=8}")).tile, kSegmentTileDefault);
    EXPECT_EQ(segment_params(SegmentPoint{16, 1}).str(), ScheduleParams::parse("spmm_segments{run=16}").str());
    EXPECT_EQ(segment_point_of(segment_params(SegmentPoint{16, 8})).tile, 8);
    auto refused = [](const std::string &point, const std::string &words) {
        try {
            segment_point_of(ScheduleParams::parse(point));
            return ::testing::AssertionFailure() << point << " was accepted";
        } catch (const ScheduleError &e) {
            if (std::string(e.what()).find(words) == std::string::npos)
                return ::testing::AssertionFailure() << point << ": " << e.what();
            return ::testing::AssertionSuccess();
        }
    };
    EXPECT_TRUE(refused("spmm_segments{tile=3}", "tile = 3"));
    EXPECT_TRUE(refused("spmm_segments{run=5}", "run = 5"));
    EXPECT_TRUE(refused("spmm_segments{lanes=4}", "lanes"));

    // A tile wider than the output row is refused by the operator, with the feature length named;
    // a valid tile computes the same sums on the CPU (where the schedule is the same for every tile).
    Graph g = test::random_graph(34);
    HostView h = view_of(g);
    const SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
    Tensor x1 = test::random_tensor({g.num_src(), 1}, 6, DType::F32, 0.5, 1.5);
    Tensor out1 = Tensor::empty({g.num_dst(), 1}, DType::F32);
    OpOptions o;
    o.schedule = ScheduleParams::parse("spmm_segments{run=32,tile=2}");
    try {
        gspmm_segments_into(h.view, spec, x1, {}, out1, o);
        ADD_FAILURE() << "tile 2 on one feature must be refused";
    } catch (const ScheduleError &e) {
        EXPECT_NE(std::string(e.what()).find("exceeds the 1 feature"), std::string::npos) << e.what();
    }
    Tensor x = test::random_tensor({g.num_src(), 9}, 7, DType::F32, 0.5, 1.5);
    Tensor out = Tensor::empty({g.num_dst(), 9}, DType::F32);
    o.schedule = ScheduleParams::parse("spmm_segments{run=16,tile=8}");
    gspmm_segments_into(h.view, spec, x, {}, out, o);
    EXPECT_TRUE(matches(g, spec, x, {}, out));
}

TEST(SpmmSegments, CpuScheduleRunsTheSameAccumulation) {
    // The CPU schedule divides the edges into the same runs (parallel tasks, atomic adds), so the
    // reference tests above check the rewritten runs' numbers on any machine.
    SpmmSegmentAlgorithm a =
        build_spmm_segment_algorithm({BinaryOp::CopyLhs, ReduceOp::Sum}, plan_features(BinaryOp::CopyLhs, {8}, {8}),
                                     DType::F32);
    schedule_spmm_segments(a, Device::CPU, SegmentPoint{32, 1});
    Halide::Pipeline p(a.out);
    for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
    CaptureStmt capture;
    p.add_custom_lowering_pass(&capture, nullptr);
    lowered_stmt_text(p, a.arguments(), jit_target(Device::CPU));
    auto *pass = dynamic_cast<ext::AccumulateAtomicRuns *>(a.lowering_passes.back().get());
    ASSERT_NE(pass, nullptr);
    EXPECT_GE(pass->rewritten(), 1) << capture.text;
    EXPECT_NE(capture.text.find("run_sum$"), std::string::npos) << capture.text;
    EXPECT_NE(capture.text.find("parallel"), std::string::npos) << capture.text;
}

TEST(SpmmSegments, PassLeavesOtherLoopsAlone) {
    // The push scatter (rows walking their neighbours) has no loop of the run's name: unchanged.
    SpmmSegmentAlgorithm a =
        build_spmm_segment_algorithm({BinaryOp::CopyLhs, ReduceOp::Sum}, plan_features(BinaryOp::CopyLhs, {8}, {8}),
                                     DType::F32);
    schedule_spmm_segments(a, Device::CUDA, SegmentPoint{16, 1});
    Halide::Pipeline p(a.out);
    p.add_custom_lowering_pass(a.lowering_passes.front().get(), nullptr);  // AtomicAddStores only
    ext::AccumulateAtomicRuns other_name("not_a_loop");
    p.add_custom_lowering_pass(&other_name, nullptr);
    CaptureStmt capture;
    p.add_custom_lowering_pass(&capture, nullptr);
    lowered_stmt_text(p, a.arguments(), jit_target(Device::CUDA));
    EXPECT_EQ(other_name.rewritten(), 0);
    EXPECT_EQ(capture.text.find("run_index$"), std::string::npos) << capture.text;
    EXPECT_NE(capture.text.find("atomic"), std::string::npos) << capture.text;
}

}  // namespace
}  // namespace gsparse
