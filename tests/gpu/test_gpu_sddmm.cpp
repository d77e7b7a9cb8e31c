// g-SDDMM on the GPU: every ⊕ and every operand target (u, v, e) on fresh random graphs and on the
// real graphs, dot across every lane width of gpu_sddmm (shuffle and shared-memory combines, odd and
// tiny feature lengths, multi-head broadcasting), against the C++ reference (fp64; relative error
// within 1e-5 of Σ|terms| for dot, exact for the element-wise ops). Skipped, and reported as skipped,
// without a CUDA device.
#include <gtest/gtest.h>

#include <filesystem>

#include "gpu/gpu_fixture.h"
#include "ops/reference.h"
#include "runtime/sddmm_kernel.h"
#include "schedules/schedule.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

class GpuSddmm : public test::GpuTest {
protected:
    ::testing::AssertionResult check(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs,
                                     const ScheduleParams *schedule) {
        const auto shape = gsddmm_output_shape(g, spec, lhs, rhs);
        Tensor dl = uses_lhs(spec.op) ? to_device(lhs) : Tensor();
        Tensor dr = uses_rhs(spec.op) ? to_device(rhs) : Tensor();
        Tensor out = device_empty(shape, DType::F32);
        gsddmm_into(g, spec, dl, dr, out, options(schedule));
        const double rtol = spec.op == BinaryOp::Dot ? 1e-5 : 0.0;
        return test::matches_reference(to_host(out), reference_sddmm(g, spec, lhs, rhs), rtol, rtol > 0 ? 1e-6 : 0.0);
    }

    /// Rows of an operand for a target of g.
    static int64_t rows(const Graph &g, OperandTarget t) {
        return t == OperandTarget::Src ? g.num_src() : t == OperandTarget::Dst ? g.num_dst() : g.num_edges();
    }
};

const BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                         BinaryOp::Dot, BinaryOp::CopyLhs, BinaryOp::CopyRhs};
const OperandTarget kTargets[] = {OperandTarget::Src, OperandTarget::Dst, OperandTarget::Edge};

Tensor features(int64_t rows, std::vector<int64_t> feat, uint64_t seed, bool positive = false) {
    feat.insert(feat.begin(), rows);
    return positive ? test::random_tensor(feat, seed, DType::F32, 0.5, 2.0) : test::random_tensor(feat, seed);
}

ScheduleParams point(int64_t M, int64_t L, int64_t V = 1) {
    return ScheduleParams{"gpu_sddmm", {{"kMTile", M}, {"kLaneWidth", L}, {"kVecWidth", V}}};
}

TEST_F(GpuSddmm, EveryOpAndTargetWithDefaultSchedule) {
    Graph g = test::random_graph(41, {.num_nodes = 200, .num_src = 170});  // bipartite: u and v differ
    for (int64_t F : {1, 5, 64})
        for (BinaryOp op : kOps)
            for (OperandTarget lt : kTargets)
                for (OperandTarget rt : kTargets) {
                    if (lt == rt && op != BinaryOp::Dot) continue;
                    SddmmSpec spec{op, lt, rt};
                    SCOPED_TRACE(spec.name() + " F=" + std::to_string(F));
                    Tensor x = features(rows(g, lt), {F}, 1);
                    Tensor y = features(rows(g, rt), {F}, 2, op == BinaryOp::Div);
                    try {
                        EXPECT_TRUE(check(g, spec, x, y, nullptr));
                    } catch (const std::exception &e) {
                        ADD_FAILURE() << e.what();
                    }
                }
}

TEST_F(GpuSddmm, DotEveryLaneWidth) {
    // Odd, tiny and long feature lengths: lane tails, lanes beyond F rejected, full warps.
    Graph g = test::random_graph(42);
    const auto &def = sddmm_schedule("gpu_sddmm");
    SddmmSpec spec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    for (int64_t F : {1, 3, 8, 36, 37, 128, 300}) {
        Tensor x = features(g.num_src(), {F}, 3), y = features(g.num_dst(), {F}, 4);
        Problem problem{plan_features(BinaryOp::Dot, {F}, {F}), g.stats()};
        int tried = 0;
        for (int64_t L : {1, 2, 4, 8, 16, 32})
            for (auto [threads, V] : {std::pair<int64_t, int64_t>{32, 1}, {256, 1}, {128, 2}, {256, 4}}) {
                ScheduleParams p = point(threads / L, L, V);
                if (def.invalid_reason(p, problem)) continue;
                tried++;
                EXPECT_TRUE(check(g, spec, x, y, &p)) << p.str() << " F=" << F;
            }
        EXPECT_GT(tried, 0) << F;
    }
}

TEST_F(GpuSddmm, DotFeatureChunks) {
    // kFeatChunk: dot in passes over chunks of features, the chunk loop outside the kernel; every
    // lane and vector width, one and several heads, and the 64-bit (shared-memory) form.
    Graph g = test::random_graph(46);
    const auto &def = sddmm_schedule("gpu_sddmm");
    SddmmSpec spec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    int tried = 0;
    for (std::vector<int64_t> feat : {std::vector<int64_t>{64}, std::vector<int64_t>{256}, std::vector<int64_t>{3, 128}}) {
        Tensor x = features(g.num_src(), feat, 21), y = features(g.num_dst(), feat, 22);
        FeatureLayout layout = plan_features(BinaryOp::Dot, feat, feat);
        Problem problem{layout, g.stats()};
        for (int64_t C : {32, 64, 128})
            for (auto [L, V] : {std::pair<int64_t, int64_t>{1, 4}, {4, 4}, {8, 1}, {8, 4}, {32, 4}}) {
                ScheduleParams p = point(std::max<int64_t>(256 / L, 1), L, V);
                p.values["kFeatChunk"] = C;
                if (def.invalid_reason(p, problem)) continue;
                tried++;
                EXPECT_TRUE(check(g, spec, x, y, &p)) << p.str() << " " << layout.key();
                if (L == 1) continue;
                SddmmKernel kernel(SddmmKernelKey{spec, layout, DType::F32, p, Device::CUDA, true});
                Tensor out = device_empty(gsddmm_output_shape(g, spec, x, y), DType::F32);
                kernel.run(g, to_device(x), to_device(y), out, launch_);
                EXPECT_TRUE(test::matches_reference(to_host(out), reference_sddmm(g, spec, x, y), 1e-5, 1e-6))
                    << p.str() << " large buffers";
            }
    }
    EXPECT_GE(tried, 20);
}

TEST_F(GpuSddmm, GroupedByDestinationEveryOpAndTarget) {
    // groupByDst: edges computed in destination order, results stored at their (shuffled) ids.
    Graph g = test::random_graph(47, {.num_nodes = 200, .num_src = 170});
    for (BinaryOp op : kOps)
        for (OperandTarget lt : kTargets)
            for (OperandTarget rt : kTargets) {
                SddmmSpec spec{op, lt, rt};
                const int64_t F = 37;
                Tensor x = features(rows(g, lt), {F}, 23), y = features(rows(g, rt), {F}, 24, op == BinaryOp::Div);
                for (ScheduleParams p : {point(256, 1), point(32, 8), point(16, 16, 1)})
                    for (int64_t tile : {0, 64}) {  // 170 sources: three tiles of 64
                        p.values["groupByDst"] = 1;
                        p.values["kSrcTile"] = tile;
                        SCOPED_TRACE(spec.name() + " " + p.str());
                        try {
                            EXPECT_TRUE(check(g, spec, x, y, &p));
                        } catch (const std::exception &e) {
                            ADD_FAILURE() << e.what();
                        }
                    }
            }
    // With feature chunks and vector loads.
    SddmmSpec dot{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    Tensor x = features(g.num_src(), {128}, 25), y = features(g.num_dst(), {128}, 26);
    ScheduleParams p = point(32, 8, 4);
    p.values["groupByDst"] = 1;
    p.values["kFeatChunk"] = 64;
    EXPECT_TRUE(check(g, dot, x, y, &p)) << p.str();
    // Source tiles with edges per thread, on a graph with a long row.
    Graph big = test::random_graph(50, {.num_nodes = 900, .num_src = 700, .long_row = 400});
    Tensor bx = features(big.num_src(), {128}, 29), by = features(big.num_dst(), {128}, 30);
    for (int64_t tile : {64, 512}) {
        ScheduleParams q = point(16, 8, 4);
        q.values["kMRegTile"] = 4;
        q.values["groupByDst"] = 1;
        q.values["kSrcTile"] = tile;
        EXPECT_TRUE(check(big, dot, bx, by, &q)) << q.str();
    }
}

TEST_F(GpuSddmm, EdgeRegisterTiles) {
    // kMRegTile: R edges per thread at stride kMTile. Graphs of at least M * R edges run the
    // unguarded specialization (the last block shifted inwards), smaller ones the guarded form; every
    // op and target, lanes with and without vectors, heads, destination order, 64-bit form.
    const auto &def = sddmm_schedule("gpu_sddmm");
    Graph big = test::random_graph(48, {.num_nodes = 900, .num_src = 700});
    Graph tiny = test::random_graph(49, {.num_nodes = 9, .avg_degree = 3, .long_row = 20});
    int tried = 0;
    for (const Graph *g : {&big, &tiny})
        for (BinaryOp op : kOps)
            for (auto [lt, rt] : {std::pair{OperandTarget::Src, OperandTarget::Dst},
                                  std::pair{OperandTarget::Edge, OperandTarget::Src}}) {
                SddmmSpec spec{op, lt, rt};
                for (std::vector<int64_t> feat : {std::vector<int64_t>{16}, std::vector<int64_t>{33},
                                                  std::vector<int64_t>{2, 8}}) {
                    Tensor x = features(rows(*g, lt), feat, 27), y = features(rows(*g, rt), feat, 28, op == BinaryOp::Div);
                    Problem problem{plan_features(op, feat, feat), g->stats()};
                    for (int64_t R : {2, 4})
                        for (auto [M, L, V] : {std::tuple<int64_t, int64_t, int64_t>{128, 1, 4}, {64, 4, 4},
                                               {32, 8, 1}, {16, 4, 1}}) {
                            ScheduleParams p = point(M, L, V);
                            p.values["kMRegTile"] = R;
                            if (def.invalid_reason(p, problem)) continue;
                            tried++;
                            SCOPED_TRACE(spec.name() + " " + p.str() + " edges=" + std::to_string(g->num_edges()));
                            try {
                                EXPECT_TRUE(check(*g, spec, x, y, &p));
                                p.values["groupByDst"] = 1;
                                EXPECT_TRUE(check(*g, spec, x, y, &p));
                            } catch (const std::exception &e) {
                                ADD_FAILURE() << e.what();
                            }
                        }
                }
            }
    EXPECT_GE(tried, 60);
    // The 64-bit form ignores the register tile (one edge per thread, shared-memory combine).
    SddmmSpec dot{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    Tensor x = features(big.num_src(), {64}, 29), y = features(big.num_dst(), {64}, 30);
    ScheduleParams p = point(64, 4, 4);
    p.values["kMRegTile"] = 4;
    SddmmKernel kernel(SddmmKernelKey{dot, plan_features(BinaryOp::Dot, {64}, {64}), DType::F32, p, Device::CUDA, true});
    Tensor out = device_empty({big.num_edges(), 1}, DType::F32);
    kernel.run(big, to_device(x), to_device(y), out, launch_);
    EXPECT_TRUE(test::matches_reference(to_host(out), reference_sddmm(big, dot, x, y), 1e-5, 1e-6)) << "large buffers";
}

TEST_F(GpuSddmm, SharedMemoryCombineUnderLargeBuffers) {
    // Kernels compiled with 64-bit indexing (tensors of 2^31 elements and more) combine the lanes
    // through shared memory; run that variant directly on a small graph.
    Graph g = test::random_graph(43);
    SddmmSpec spec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    for (int64_t F : {7, 64}) {
        Tensor x = features(g.num_src(), {F}, 5), y = features(g.num_dst(), {F}, 6);
        for (int64_t L : {2, 8, 32}) {
            if (L > F) continue;
            FeatureLayout layout = plan_features(BinaryOp::Dot, {F}, {F});
            SddmmKernel kernel(SddmmKernelKey{spec, layout, DType::F32, point(256 / L, L), Device::CUDA, true});
            Tensor dx = to_device(x), dy = to_device(y);
            Tensor out = device_empty({g.num_edges(), 1}, DType::F32);
            kernel.run(g, dx, dy, out, launch_);
            EXPECT_TRUE(test::matches_reference(to_host(out), reference_sddmm(g, spec, x, y), 1e-5, 1e-6))
                << "F=" << F << " L=" << L;
        }
    }
}

TEST_F(GpuSddmm, MisalignedOperandsAreRefusedByVectorSchedules) {
    Graph g = test::random_graph(45);
    SddmmSpec spec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    Tensor x = features(g.num_src() + 1, {8}, 18), y = features(g.num_dst(), {8}, 19);
    Tensor dx = to_device(x), dy = to_device(y);
    // Rows 1.. of x: 32-byte rows starting 32 bytes in are aligned; 4 bytes in are not.
    Tensor shifted = Tensor::wrap(static_cast<float *>(dx.data()) + 1, {g.num_src(), 8}, DType::F32, Device::CUDA);
    Tensor out = device_empty({g.num_edges(), 1}, DType::F32);
    ScheduleParams p = point(64, 2, 4);
    try {
        gsddmm_into(g, spec, shifted, dy, out, options(&p));
        ADD_FAILURE() << "misaligned operand accepted";
    } catch (const ShapeError &e) {
        EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
    }
}

TEST_F(GpuSddmm, MultiHeadDotAndBroadcast) {
    Graph g = test::random_graph(44);
    ScheduleParams p = point(64, 4, 4);
    Tensor x = features(g.num_src(), {4, 16}, 7), y = features(g.num_dst(), {4, 16}, 8);
    EXPECT_TRUE(check(g, SddmmSpec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst}, x, y, &p));
    Tensor h = features(g.num_src(), {4, 8}, 9), w = features(g.num_edges(), {4, 1}, 10);
    EXPECT_TRUE(check(g, SddmmSpec{BinaryOp::Mul, OperandTarget::Src, OperandTarget::Edge}, h, w, nullptr));
    ScheduleParams q = point(32, 8);
    EXPECT_TRUE(check(g, SddmmSpec{BinaryOp::Add, OperandTarget::Src, OperandTarget::Dst}, h,
                      features(g.num_dst(), {4, 8}, 11), &q));
}

TEST_F(GpuSddmm, RealGraphs) {
    for (const std::string &name : test::real_graph_names()) {
        const std::string path = test::real_graph_path(name);
        ASSERT_TRUE(std::filesystem::exists(path)) << path;
        Graph g = Graph::load(path);
        Tensor x = features(g.num_src(), {32}, 12), y = features(g.num_dst(), {32}, 13);
        EXPECT_TRUE(check(g, SddmmSpec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst}, x, y, nullptr)) << name;
        EXPECT_TRUE(check(g, SddmmSpec{BinaryOp::Add, OperandTarget::Src, OperandTarget::Dst}, x, y, nullptr)) << name;
    }
}

TEST_F(GpuSddmm, GraphWithoutEdgesAndTinyGraphs) {
    Graph empty = Graph::from_edges(5, {}, {});
    SddmmSpec dot{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    EXPECT_TRUE(check(empty, dot, features(5, {32}, 14), features(5, {32}, 15), nullptr));
    Graph tiny = Graph::from_edges(3, {0, 1}, {2, 2});
    EXPECT_TRUE(check(tiny, dot, features(3, {32}, 16), features(3, {32}, 17), nullptr));
}

}  // namespace
}  // namespace gsparse
