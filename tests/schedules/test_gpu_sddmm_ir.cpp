// gpu_sddmm without a GPU: IR tests on the lowered statement (warp shuffles combine dot's lanes,
// threads per block as scheduled, no shared memory or barriers) and PTX emission for every valid point
// of the space on a few problems.
#include <gtest/gtest.h>

#include "halide_ext/ir_inspect.h"
#include "ops/sddmm_algorithm.h"
#include "runtime/sddmm_kernel.h"
#include "runtime/target.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"

namespace gsparse {
namespace {

using Halide::Internal::Stmt;

Stmt lower(const SddmmSpec &spec, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat,
           const ScheduleParams &p, bool large_buffers = false) {
    FeatureLayout layout = plan_features(spec.op, lhs_feat, rhs_feat);
    const SddmmScheduleDef &def = sddmm_schedule("gpu_sddmm");
    check_schedule(def, p, Problem{layout, {}});
    SddmmAlgorithm algo = build_sddmm_algorithm(spec, layout, DType::F32);
    algo.large_buffers = large_buffers;
    def.apply(algo, p);
    return ext::lowered_stmt(Halide::Pipeline(algo.out), algo.arguments(), jit_target(Device::CUDA, large_buffers));
}

ScheduleParams point(int M, int L, int V = 1) {
    return ScheduleParams{"gpu_sddmm", {{"kMTile", M}, {"kLaneWidth", L}, {"kVecWidth", V}}};
}

const SddmmSpec kDot{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};

/// The product of the constant extents of the GPU thread loops of the (single) kernel.
int64_t threads_per_block(const Stmt &s) {
    int64_t threads = 1;
    for (const auto &loop : ext::list_loops(s, "*"))
        if (loop.for_type == Halide::Internal::ForType::GPUThread || loop.for_type == Halide::Internal::ForType::GPULane) {
            auto extent = loop.constant_extent();
            EXPECT_TRUE(extent.has_value()) << loop.name;
            threads *= extent.value_or(1);
        }
    return threads;
}

TEST(GpuSddmmIR, DotLanesAreCombinedWithWarpShuffles) {
    for (int L : {2, 4, 8, 16, 32}) {
        Stmt s = lower(kDot, {64}, {64}, point(256 / L, L));
        EXPECT_GT(ext::count_calls(s, "*shfl*"), 0u) << "kLaneWidth " << L << "\n" << ext::stmt_text(s);
        EXPECT_EQ(threads_per_block(s), 256) << "kLaneWidth " << L;
        // The lanes' partial sums live in registers: no shared memory, no barriers.
        for (const auto &a : ext::find_allocations(s, "*"))
            EXPECT_NE(a.memory_type, Halide::MemoryType::GPUShared) << a.name;
        EXPECT_EQ(ext::count_calls(s, "gpu_thread_barrier"), 0u) << "kLaneWidth " << L;
    }
}

TEST(GpuSddmmIR, LargeBuffersCombineLanesInSharedMemory) {
    const int M = 32, L = 8;
    Stmt s = lower(kDot, {64}, {64}, point(M, L), /*large_buffers=*/true);
    EXPECT_EQ(ext::count_calls(s, "*shfl*"), 0u);
    EXPECT_EQ(threads_per_block(s), M * L) << ext::stmt_text(s);
    int shared = 0;
    for (const auto &a : ext::find_allocations(s, "*")) {
        if (a.memory_type != Halide::MemoryType::GPUShared) continue;
        shared++;
        EXPECT_EQ(a.elements_upper_bound().value_or(-1), M * L) << a.name;
    }
    EXPECT_EQ(shared, 1);
    for (const auto &b : ext::find_calls(s, "gpu_thread_barrier")) {
        EXPECT_FALSE(b.under_thread_dependent_condition);
        EXPECT_FALSE(b.under_thread_dependent_loop);
    }
}

TEST(GpuSddmmIR, VectorWidthGivesVectorLoadsOfAlignedRows) {
    for (int V : {2, 4}) {
        Stmt s = lower(kDot, {64}, {64}, point(32, 8, V));
        int vector_loads = 0;
        for (const char *operand : {"lhs", "rhs"})
            for (const auto &ld : ext::find_loads(s, operand)) {
                EXPECT_EQ(ld.type.lanes(), V) << operand;
                vector_loads += ld.type.lanes() == V;
            }
        EXPECT_EQ(vector_loads, 2) << "V=" << V;
        // Each lane first adds its own V partials; only the L lanes' sums are shuffled.
        EXPECT_GT(ext::count_calls(s, "*shfl*"), 0u);
    }
    // One lane per edge: the thread's own vector, no shuffles.
    Stmt one = lower(kDot, {64}, {64}, point(128, 1, 4));
    for (const auto &ld : ext::find_loads(one, "lhs")) EXPECT_EQ(ld.type.lanes(), 4);
    EXPECT_EQ(ext::count_calls(one, "*shfl*"), 0u);
    // Large buffers keep scalar loads (the register form needs 32-bit indexing).
    Stmt s = lower(kDot, {64}, {64}, point(32, 8, 4), /*large_buffers=*/true);
    for (const auto &ld : ext::find_loads(s, "lhs")) EXPECT_EQ(ld.type.lanes(), 1);
}

TEST(GpuSddmmIR, OneLanePerEdgeNeedsNoShuffles) {
    Stmt s = lower(kDot, {64}, {64}, point(128, 1));
    EXPECT_EQ(ext::count_calls(s, "*shfl*"), 0u);
    EXPECT_EQ(threads_per_block(s), 128);
}

TEST(GpuSddmmIR, ShuffleGroupMatchesTheLaneWidth) {
    // With 4 lanes per edge, the lane loop (the shuffles' lane group) has extent 4.
    Stmt s = lower(kDot, {32}, {32}, point(64, 4));
    bool found = false;
    for (const auto &loop : ext::list_loops(s, "*")) {
        if (loop.for_type != Halide::Internal::ForType::GPULane) continue;
        found = true;
        EXPECT_EQ(loop.constant_extent().value_or(-1), 4) << loop.name;
    }
    EXPECT_TRUE(found) << ext::stmt_text(s);
}

TEST(GpuSddmmIR, ElementwiseOpsSpreadFeaturesOverLanes) {
    Stmt s = lower(SddmmSpec{BinaryOp::Add, OperandTarget::Src, OperandTarget::Edge}, {16}, {16}, point(32, 8));
    EXPECT_EQ(threads_per_block(s), 256);
    EXPECT_EQ(ext::count_calls(s, "*shfl*"), 0u);
}

TEST(GpuSddmmIR, EveryValidPointCompilesToPTX) {
    const auto &def = sddmm_schedule("gpu_sddmm");
    struct Case {
        SddmmSpec spec;
        std::vector<int64_t> lhs, rhs;
    };
    const std::vector<Case> cases = {
        {kDot, {37}, {37}},                                                              // odd F, lane tails
        {kDot, {4, 16}, {4, 16}},                                                        // 4 heads
        {SddmmSpec{BinaryOp::Mul, OperandTarget::Src, OperandTarget::Edge}, {4, 8}, {4, 1}},  // broadcast
    };
    int compiled = 0;
    for (const auto &c : cases) {
        FeatureLayout layout = plan_features(c.spec.op, c.lhs, c.rhs);
        Problem problem{layout, {}};
        ScheduleSpace space = def.space(problem);
        for (size_t i = 0; i < space.size(); i++) {
            ScheduleParams p = space.at(i);
            if (def.invalid_reason(p, problem)) continue;
            if (p.get("kMTile") * p.get("kLaneWidth") != 256 && p.get("kMTile") != 32) continue;  // keep CI short
            if (p.get("kVecWidth") == 2) continue;
            for (bool large : {false, true}) {
                if (large && p.get("kMTile") != 32) continue;
                SddmmKernelKey key{c.spec, layout, DType::F32, p, Device::CUDA, large};
                EXPECT_NO_THROW(SddmmKernel{key}) << key.str();
                compiled++;
            }
        }
    }
    EXPECT_GE(compiled, 8);
}

TEST(GpuSddmmIR, InvalidPointsAreRejectedWithAReason) {
    const auto &def = sddmm_schedule("gpu_sddmm");
    Problem dot8{plan_features(BinaryOp::Dot, {8}, {8}), {}};
    auto why = [&](const ScheduleParams &p) { return def.invalid_reason(p, dot8).value_or(""); };
    EXPECT_NE(why(point(32, 16)).find("reduced feature length 8"), std::string::npos);
    EXPECT_NE(why(point(8, 2)).find("less than a warp"), std::string::npos);
    EXPECT_NE(why(point(256, 8)).find("1024"), std::string::npos);
    EXPECT_NE(why(point(48, 1)).find("power of two"), std::string::npos);
    EXPECT_NE(why(point(64, 3)).find("power of two"), std::string::npos);
    EXPECT_NE(why(point(2048, 1)).find("exceeds"), std::string::npos);
    EXPECT_NE(why(point(32, 4, 4)).find("kLaneWidth * kVecWidth = 16"), std::string::npos);
    EXPECT_NE(why(point(32, 1, 3)).find("kVecWidth must be"), std::string::npos);
    Problem dot6{plan_features(BinaryOp::Dot, {6}, {6}), {}};
    EXPECT_NE(def.invalid_reason(point(32, 1, 4), dot6).value_or("").find("does not divide"), std::string::npos);
    Problem add4{plan_features(BinaryOp::Add, {4}, {4}), {}};
    EXPECT_NE(def.invalid_reason(point(32, 8), add4).value_or("").find("innermost feature extent 4"),
              std::string::npos);
    for (int64_t F : {1, 8, 32, 128, 512, 1024}) {
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), {}};
        EXPECT_FALSE(def.invalid_reason(def.default_params(p), p).has_value()) << F;
    }
}

TEST(GpuSddmmIR, DefaultLaneWidthGrowsWithFeatureLength) {
    const auto &def = sddmm_schedule("gpu_sddmm");
    auto lanes = [&](int64_t F) {
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), {}};
        return def.default_params(p).get("kLaneWidth");
    };
    EXPECT_EQ(lanes(1), 1);
    EXPECT_EQ(lanes(8), 2);
    EXPECT_EQ(lanes(32), 4);
    EXPECT_EQ(lanes(128), 16);
    EXPECT_EQ(lanes(512), 32);
}

}  // namespace
}  // namespace gsparse
