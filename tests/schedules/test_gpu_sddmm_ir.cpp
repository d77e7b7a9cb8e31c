// gpu_sddmm without a GPU: IR tests on the lowered statement (warp shuffles combine dot's lanes,
// threads per block as scheduled, no shared memory or barriers) and PTX emission for every valid point
// of the space on a few problems.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

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
    Halide::Pipeline pipeline(algo.out);
    for (const auto &pass : algo.lowering_passes) pipeline.add_custom_lowering_pass(pass.get(), nullptr);
    return ext::lowered_stmt(pipeline, algo.arguments(), jit_target(Device::CUDA, large_buffers));
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

std::string text(const Halide::Expr &e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

TEST(GpuSddmmIR, FeatureChunksLoopOutsideTheKernel) {
    // kFeatChunk = 64 at F = 256: a serial host loop of 4 chunks encloses the kernel that adds a
    // chunk's partial dot products into the accumulator; the accumulator's zeroing and the copy to
    // the output are kernels of their own, outside it.
    ScheduleParams p = point(32, 4, 4);
    p.values["kFeatChunk"] = 64;
    Stmt s = lower(kDot, {256}, {256}, p);
    const auto chunks = ext::list_loops(s, "*.rc");
    ASSERT_EQ(chunks.size(), 1u) << ext::stmt_text(s);
    EXPECT_EQ(chunks[0].for_type, Halide::Internal::ForType::Serial);
    EXPECT_EQ(chunks[0].depth, 0);
    EXPECT_EQ(chunks[0].constant_extent().value_or(-1), 4);
    int outside = 0, inside = 0;
    for (const auto &loop : ext::list_loops(s, "*__block_id_y")) (loop.depth == 0 ? outside : inside)++;
    EXPECT_EQ(outside, 2);
    EXPECT_EQ(inside, 1);
    // Every operand load is inside the chunk loop, a 4-wide vector, and the lanes still shuffle.
    const auto loads = ext::find_loads(s, "lhs");
    ASSERT_FALSE(loads.empty());
    for (const auto &ld : loads) {
        EXPECT_EQ(ld.type.lanes(), 4);
        EXPECT_TRUE(std::any_of(ld.enclosing_loops.begin(), ld.enclosing_loops.end(),
                                [](const std::string &l) { return ext::name_matches(l, "*.rc"); }));
    }
    EXPECT_GT(ext::count_calls(s, "*shfl*"), 0u);
    // Without chunks there is one kernel and no host loop.
    Stmt plain = lower(kDot, {256}, {256}, point(32, 4, 4));
    EXPECT_TRUE(ext::list_loops(plain, "*.rc").empty());
    EXPECT_EQ(ext::list_loops(plain, "*__block_id_x").size(), 1u);
}

TEST(GpuSddmmIR, GroupByDstStoresAtEdgeIdsAndReadsTheCooByPosition) {
    for (const SddmmSpec &spec : {kDot, SddmmSpec{BinaryOp::Mul, OperandTarget::Src, OperandTarget::Edge}}) {
        ScheduleParams p = point(32, 8, spec.op == BinaryOp::Dot ? 4 : 1);
        p.values["groupByDst"] = 1;
        Stmt s = lower(spec, {64}, {64}, p);
        const auto stores = ext::find_stores(s, "sddmm_out*");
        ASSERT_FALSE(stores.empty());
        for (const auto &st : stores) EXPECT_NE(text(st.index).find("edge_of["), std::string::npos) << text(st.index);
        for (const char *coo : {"src_idx", "dst_idx"})
            for (const auto &ld : ext::find_loads(s, coo))
                EXPECT_EQ(text(ld.index).find("edge_of"), std::string::npos) << coo << ": " << text(ld.index);
        // The edge-indexed operand is read at the edge's id: its index loads edge_of, directly or
        // through a Let that does.
        if (spec.rhs == OperandTarget::Edge) {
            const std::string stmt = ext::stmt_text(s);
            std::set<std::string> id_lets;
            const std::regex let_of_id(R"(let (t[0-9]+) = [^\n]*edge_of\[)");
            for (auto it = std::sregex_iterator(stmt.begin(), stmt.end(), let_of_id); it != std::sregex_iterator(); ++it)
                id_lets.insert((*it)[1]);
            const auto loads = ext::find_loads(s, "rhs");
            ASSERT_FALSE(loads.empty());
            for (const auto &ld : loads) {
                const std::string index = text(ld.index);
                bool by_id = index.find("edge_of[") != std::string::npos;
                for (const auto &t : id_lets) by_id |= std::regex_search(index, std::regex("\\b" + t + "\\b"));
                EXPECT_TRUE(by_id) << index;
            }
        }
        // Without the knob nothing reads edge_of.
        Stmt plain = lower(spec, {64}, {64}, point(32, 8, spec.op == BinaryOp::Dot ? 4 : 1));
        EXPECT_TRUE(ext::find_loads(plain, "edge_of").empty());
    }
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
        {kDot, {2, 128}, {2, 128}},                                                      // feature chunks
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
            // The knobs added later on a subset: edge grouping at 32 edges a block, chunks at V = 4.
            if (p.get_or("groupByDst", 0) && p.get("kMTile") != 32) continue;
            if (p.get_or("kFeatChunk", 0) && p.get("kVecWidth") != 4) continue;
            for (bool large : {false, true}) {
                if (large && (p.get("kMTile") != 32 || p.get_or("groupByDst", 0))) continue;
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
    ScheduleParams chunked = point(32, 4, 4);
    Problem dot128{plan_features(BinaryOp::Dot, {128}, {128}), {}};
    for (auto [C, words] : {std::pair<int64_t, const char *>{48, "power of two"}, {128, "two or more chunks"},
                            {256, "two or more chunks"}, {8, "not a multiple of kLaneWidth * kVecWidth = 16"}}) {
        chunked.values["kFeatChunk"] = C;
        EXPECT_NE(def.invalid_reason(chunked, dot128).value_or("").find(words), std::string::npos) << C;
    }
    chunked.values["kFeatChunk"] = 32;
    EXPECT_FALSE(def.invalid_reason(chunked, dot128).has_value());
    Problem add128{plan_features(BinaryOp::Add, {128}, {128}), {}};
    EXPECT_NE(def.invalid_reason(chunked, add128).value_or("").find("dot only"), std::string::npos);
    ScheduleParams grouped = point(32, 4, 4);
    grouped.values["groupByDst"] = 2;
    EXPECT_NE(def.invalid_reason(grouped, dot128).value_or("").find("groupByDst must be 0 or 1"), std::string::npos);
    Problem add4{plan_features(BinaryOp::Add, {4}, {4}), {}};
    EXPECT_NE(def.invalid_reason(point(32, 8), add4).value_or("").find("innermost feature extent 4"),
              std::string::npos);
    for (int64_t F : {1, 8, 32, 128, 512, 1024}) {
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), {}};
        EXPECT_FALSE(def.invalid_reason(def.default_params(p), p).has_value()) << F;
    }
}

TEST(GpuSddmmIR, DefaultChunksLongRowsWhenTheChunkSliceFitsTheCache) {
    const auto &def = sddmm_schedule("gpu_sddmm");
    auto chunk = [&](int64_t F, int64_t nodes) {
        GraphStats stats;
        stats.num_rows = stats.num_cols = nodes;
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), stats};
        ScheduleParams d = def.default_params(p);
        EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
        return d.get_or("kFeatChunk", 0);
    };
    EXPECT_EQ(chunk(512, 232965), 64);    // reddit: 60 MB slices
    EXPECT_EQ(chunk(256, 132534), 64);    // ogbn-proteins
    EXPECT_EQ(chunk(1024, 132534), 64);
    EXPECT_EQ(chunk(128, 232965), 0);     // no gain measured at F = 128
    EXPECT_EQ(chunk(512, 2449029), 0);    // ogbn-products: slices far beyond the cache
    EXPECT_EQ(chunk(300, 232965), 0);     // F not a multiple of the chunk
    EXPECT_EQ(chunk(512, 0), 0);          // no statistics (ahead of time)
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
