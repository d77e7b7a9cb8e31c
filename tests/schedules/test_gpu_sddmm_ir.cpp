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
           const ScheduleParams &p, bool large_buffers = false, DType dtype = DType::F32) {
    FeatureLayout layout = plan_features(spec.op, lhs_feat, rhs_feat);
    const SddmmScheduleDef &def = sddmm_schedule("gpu_sddmm");
    check_schedule(def, p, sddmm_problem(layout, {}, dtype));
    SddmmAlgorithm algo = build_sddmm_algorithm(spec, layout, dtype);
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

TEST(GpuSddmmIR, LanesCombineThroughAButterfly) {
    // log2(L) butterfly shuffles per edge, no lane-by-lane gather.
    for (int L : {2, 4, 8, 16, 32}) {
        Stmt s = lower(kDot, {128}, {128}, point(256 / L, L, 4));
        EXPECT_EQ(ext::count_calls(s, "llvm.nvvm.shfl.sync.idx*"), 0u) << "kLaneWidth " << L;
        auto bfly = ext::find_calls(s, "llvm.nvvm.shfl.sync.bfly*");
        ASSERT_EQ(bfly.size(), static_cast<size_t>(__builtin_ctz(L))) << ext::stmt_text(s);
        for (const auto &call : bfly) {
            EXPECT_FALSE(call.under_thread_dependent_condition) << "shuffles run in every lane";
            EXPECT_LT(*Halide::Internal::as_const_int(call.args[2]), L) << "partners stay in the edge's lanes";
        }
    }
}

ScheduleParams reg_tile(int M, int L, int V, int R) {
    ScheduleParams p = point(M, L, V);
    p.values["kMRegTile"] = R;
    return p;
}

/// The text of each kernel (from one gpu_block loop over edge blocks to the next).
std::vector<std::string> kernels(const Stmt &s) {
    const std::string text = ext::stmt_text(s);
    const std::regex mark(R"(gpu_block<CUDA> \(sddmm_out(\$\d+)?\.s0\.e\.eo)");
    std::vector<size_t> starts;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), mark); it != std::sregex_iterator(); ++it)
        starts.push_back(static_cast<size_t>(it->position()));
    std::vector<std::string> out;
    for (size_t i = 0; i < starts.size(); i++)
        out.push_back(text.substr(starts[i], i + 1 < starts.size() ? starts[i + 1] - starts[i] : std::string::npos));
    return out;
}

/// Whether the text holds an edge guard (a comparison with the output's edge extent).
bool has_edge_guard(const std::string &text) {
    return std::regex_search(text, std::regex(R"(<= sddmm_out(\$\d+)?\.extent\.1)"));
}

TEST(GpuSddmmIR, EdgeRegisterTilesComputeSeveralEdgesPerThread) {
    // kMRegTile = R: R edges per thread at stride kMTile. Two kernels: graphs with a full block of
    // edges take the one without edge guards (the last block shifted inwards), smaller ones the guarded.
    for (int R : {2, 4}) {
        const int M = 32, L = 4;
        Stmt s = lower(kDot, {16}, {16}, reg_tile(M, L, 4, R));
        auto ks = kernels(s);
        ASSERT_EQ(ks.size(), 2u) << ext::stmt_text(s);
        EXPECT_TRUE(std::regex_search(ext::stmt_text(s),
                                      std::regex("if \\(" + std::to_string(M * R) + R"( <= sddmm_out(\$\d+)?\.extent\.1)")))
            << "the full-block specialization is chosen by the edge count";
        EXPECT_FALSE(has_edge_guard(ks[0])) << "no edge guards:\n" << ks[0];
        EXPECT_TRUE(has_edge_guard(ks[1])) << "guarded:\n" << ks[1];
        // Threads as for one edge each, and R stores per thread in each kernel.
        EXPECT_EQ(threads_per_block(s), (M * L) * (M * L)) << "two kernels of M * L threads";
        EXPECT_EQ(ext::find_stores(s, "sddmm_out*").size(), static_cast<size_t>(2 * R));
        EXPECT_EQ(ext::count_calls(s, "llvm.nvvm.shfl.sync.bfly*"), static_cast<size_t>(2 * R * 2));
        EXPECT_EQ(ext::count_calls(s, "gpu_thread_barrier"), 0u);
    }
    // Element-wise ops take the tile too.
    Stmt s = lower(SddmmSpec{BinaryOp::Mul, OperandTarget::Src, OperandTarget::Edge}, {8}, {8}, reg_tile(64, 4, 1, 2));
    EXPECT_EQ(kernels(s).size(), 2u);
    EXPECT_EQ(ext::find_stores(s, "sddmm_out*").size(), 2u * 2u) << ext::stmt_text(s);
    // The 64-bit form keeps one edge per thread.
    Stmt large = lower(kDot, {64}, {64}, reg_tile(32, 8, 1, 4), /*large_buffers=*/true);
    EXPECT_EQ(kernels(large).size(), 1u);
}

TEST(GpuSddmmIR, Float64DotDefaultsUseOneLaneAndLower) {
    // Halide 14's warp shuffles move 32 bits: 64-bit dot products must not combine lanes.
    const auto &def = sddmm_schedule("gpu_sddmm");
    for (int64_t F : {2, 16, 64, 256}) {
        const Problem problem = sddmm_problem(plan_features(BinaryOp::Dot, {F}, {F}), {}, DType::F64);
        const ScheduleParams p = def.default_params(problem);
        EXPECT_FALSE(def.invalid_reason(p, problem).has_value()) << p.str();
        EXPECT_EQ(p.get("kLaneWidth"), 1) << p.str();
        EXPECT_NO_THROW(lower(kDot, {F}, {F}, p, false, DType::F64)) << p.str();
    }
    const Problem f64 = sddmm_problem(plan_features(BinaryOp::Dot, {32}, {32}), {}, DType::F64);
    auto why = def.invalid_reason(point(32, 8), f64);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("32 bits"), std::string::npos) << *why;
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
    for (size_t ci = 0; ci < cases.size(); ci++) {
        const Case &c = cases[ci];
        FeatureLayout layout = plan_features(c.spec.op, c.lhs, c.rhs);
        Problem problem{layout, {}};
        ScheduleSpace space = def.space(problem);
        int kept = 0;
        ScheduleParams p;
        for (size_t i = 0; i < space.size(); i++) {
            space.at(i, p);
            if (def.invalid_reason(p, problem)) continue;
            if (p.get("kMTile") * p.get("kLaneWidth") != 256 && p.get("kMTile") != 32) continue;  // keep CI short
            if (p.get("kVecWidth") == 2) continue;
            // The knobs added later on a subset: edge grouping at 32 edges a block, chunks at V = 4.
            if (p.get_or("groupByDst", 0) && p.get("kMTile") != 32) continue;
            if (p.get_or("kSrcTile", 0)) continue;  // the kernel of kSrcTile = 0: only the arrays differ
            if (p.get_or("kFeatChunk", 0) && p.get("kVecWidth") != 4) continue;
            if (p.get_or("kMRegTile", 1) > 1 && (p.get("kMTile") != 32 || p.get_or("groupByDst", 0))) continue;
            // The first case compiles every second such point, the others every third one, each
            // case from another offset (keep CI short).
            if (kept++ % (ci > 0 ? 3 : 2) != ci % (ci > 0 ? 3 : 2)) continue;
            for (bool large : {false, true}) {
                // The shared-memory form of large buffers on the first case only (keep CI short).
                if (large && (ci > 0 || p.get("kMTile") != 32 || p.get_or("groupByDst", 0))) continue;
                SddmmKernelKey key{c.spec, layout, DType::F32, p, Device::CUDA, large};
                EXPECT_NO_THROW(SddmmKernel{key}) << key.str();
                compiled++;
            }
        }
    }
    EXPECT_GE(compiled, 8);
}

TEST(GpuSddmmIR, EdgeRegisterTilesOfOneEdgeBlocksAreRejectedForDot) {
    // The exhaustive sweeps at F = 128 (H100, 2026-11-23) met kMTile = 1 with kMRegTile > 1 as compile
    // errors inside Halide; dot rejects those points with the reason, and its neighbours compile.
    const auto &def = sddmm_schedule("gpu_sddmm");
    const FeatureLayout dot = plan_features(kDot.op, {128}, {128});
    for (int64_t R : {2, 4})
        for (int V : {1, 2, 4}) {
            ScheduleParams p = point(1, 32, V);
            p.values["kMRegTile"] = R;
            const auto why = def.invalid_reason(p, Problem{dot, {}});
            ASSERT_TRUE(why.has_value()) << p.str();
            EXPECT_NE(why->find("kMTile >= 2"), std::string::npos) << *why;
        }
    const SddmmSpec mul{BinaryOp::Mul, OperandTarget::Src, OperandTarget::Dst};
    const FeatureLayout elementwise = plan_features(mul.op, {128}, {128});
    int compiled = 0;
    struct Compiled {
        SddmmSpec spec;
        FeatureLayout layout;
        ScheduleParams p;
    };
    for (const Compiled &c : {Compiled{kDot, dot, point(1, 32, 4)}, Compiled{kDot, dot, point(2, 32, 4)},
                              Compiled{mul, elementwise, point(1, 32)}}) {
        for (int64_t R : {1, 2}) {
            ScheduleParams p = c.p;
            p.values["kMRegTile"] = R;
            if (def.invalid_reason(p, Problem{c.layout, {}})) continue;  // the dot point above
            SddmmKernelKey key{c.spec, c.layout, DType::F32, p, Device::CUDA, false};
            EXPECT_NO_THROW(SddmmKernel{key}) << key.str();
            compiled++;
        }
    }
    EXPECT_EQ(compiled, 5);  // all but the rejected dot point
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
    chunked.values["kMRegTile"] = 2;
    EXPECT_NE(def.invalid_reason(chunked, dot128).value_or("").find("single pass"), std::string::npos);
    for (auto [M, R, words] : {std::tuple<int, int64_t, const char *>{32, 3, "power of two in [1, 8]"},
                               {32, 16, "power of two in [1, 8]"}, {512, 4, "2048 edges per block exceed 1024"}}) {
        EXPECT_NE(def.invalid_reason(reg_tile(M, 1, 4, static_cast<int>(R)), dot128).value_or("").find(words),
                  std::string::npos)
            << words;
    }
    EXPECT_FALSE(def.invalid_reason(reg_tile(32, 4, 4, 4), dot128).has_value());
    Problem add128{plan_features(BinaryOp::Add, {128}, {128}), {}};
    EXPECT_NE(def.invalid_reason(chunked, add128).value_or("").find("dot only"), std::string::npos);
    ScheduleParams grouped = point(32, 4, 4);
    grouped.values["groupByDst"] = 2;
    EXPECT_NE(def.invalid_reason(grouped, dot128).value_or("").find("groupByDst must be 0 or 1"), std::string::npos);
    ScheduleParams tiled = point(32, 4, 4);
    tiled.values["kSrcTile"] = 4096;
    EXPECT_NE(def.invalid_reason(tiled, dot128).value_or("").find("needs groupByDst = 1"), std::string::npos);
    tiled.values["groupByDst"] = 1;
    EXPECT_FALSE(def.invalid_reason(tiled, dot128).has_value());
    for (int64_t bad : {int64_t{-1}, int64_t{32}, int64_t{1000}, int64_t{1} << 31}) {
        tiled.values["kSrcTile"] = bad;
        EXPECT_NE(def.invalid_reason(tiled, dot128).value_or("").find("kSrcTile must be 0 or a power of two"),
                  std::string::npos)
            << bad;
    }
    Problem add4{plan_features(BinaryOp::Add, {4}, {4}), {}};
    EXPECT_NE(def.invalid_reason(point(32, 8), add4).value_or("").find("innermost feature extent 4"),
              std::string::npos);
    for (int64_t F : {1, 8, 32, 128, 512, 1024}) {
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), {}};
        EXPECT_FALSE(def.invalid_reason(def.default_params(p), p).has_value()) << F;
    }
}

/// The expert default of dot over F features on a graph of this shape (rows = sources = nodes),
/// checked to be a valid point.
ScheduleParams dot_default(int64_t F, int64_t nodes, int64_t edges) {
    GraphStats stats;
    stats.num_rows = stats.num_cols = nodes;
    stats.nnz = edges;
    Problem p{plan_features(BinaryOp::Dot, {F}, {F}), stats};
    const auto &def = sddmm_schedule("gpu_sddmm");
    ScheduleParams d = def.default_params(p);
    EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
    return d;
}

TEST(GpuSddmmIR, DefaultChunksLongRowsWhenTheChunkSliceFitsTheCache) {
    auto chunk = [&](int64_t F, int64_t nodes) { return dot_default(F, nodes, 0).get_or("kFeatChunk", 0); };
    EXPECT_EQ(chunk(512, 232965), 64);    // reddit: 60 MB slices
    EXPECT_EQ(chunk(256, 132534), 64);    // ogbn-proteins
    EXPECT_EQ(chunk(1024, 132534), 64);
    EXPECT_EQ(chunk(128, 232965), 0);     // no gain measured at F = 128
    EXPECT_EQ(chunk(512, 2449029), 0);    // ogbn-products: slices far beyond the cache
    EXPECT_EQ(chunk(300, 232965), 0);     // F not a multiple of the chunk
    EXPECT_EQ(chunk(512, 0), 0);          // no statistics (ahead of time)
}

TEST(GpuSddmmIR, DefaultGroupsBySourceTilesWhenRowsExceedTheCacheOnDenseGraphs) {
    auto tile = [&](int64_t F, int64_t nodes, int64_t edges) {
        ScheduleParams d = dot_default(F, nodes, edges);
        EXPECT_EQ(d.get_or("groupByDst", 0), d.get_or("kSrcTile", 0) > 0 ? 1 : 0) << d.str();
        return d.get_or("kSrcTile", 0);
    };
    EXPECT_EQ(tile(128, 132534, 79122504), 4096);    // ogbn-proteins: 68 MB of source rows
    EXPECT_EQ(tile(512, 132534, 79122504), 4096);
    EXPECT_EQ(tile(256, 232965, 114615892), 4096);   // reddit
    EXPECT_EQ(tile(64, 132534, 79122504), 0);        // 34 MB: the rows fit the cache
    EXPECT_EQ(tile(512, 2449029, 123718280), 0);     // ogbn-products: about one edge per destination and tile
    EXPECT_EQ(tile(130, 132534, 79122504), 0);       // not a multiple of the 4-wide loads
    EXPECT_EQ(tile(512, 0, 0), 0);                   // no statistics (ahead of time)
}

TEST(GpuSddmmIR, DefaultGroupsSparseGraphsWithRowsBeyondTheCacheInTilesOfLongRuns) {
    // F >= 8 on a sparse graph whose source rows exceed the L2: tiles in which a destination keeps
    // runs of about 8 edges (ogbn-products: 524288 of 2.4 million sources) within 64 MiB of rows;
    // the dense twins stay in edge-id order at F < 128.
    auto order = [&](int64_t F, int64_t nodes, int64_t edges) {
        ScheduleParams d = dot_default(F, nodes, edges);
        EXPECT_EQ(d.get_or("groupByDst", 0), d.get_or("kSrcTile", 0) > 0 ? 1 : 0) << d.str();
        return std::pair{d.get_or("kSrcTile", 0), d.get("kLaneWidth")};
    };
    EXPECT_EQ(order(8, 2449029, 123718280), std::pair(int64_t{524288}, int64_t{1}));   // ogbn-products
    EXPECT_EQ(order(32, 2449029, 123718280), std::pair(int64_t{524288}, int64_t{8}));
    // Longer rows: at most 64 MiB of source rows a tile, while runs stay at one edge or more.
    EXPECT_EQ(order(64, 2449029, 123718280).first, 262144);
    EXPECT_EQ(order(128, 2449029, 123718280), std::pair(int64_t{131072}, int64_t{8}));
    EXPECT_EQ(order(256, 2449029, 123718280), std::pair(int64_t{65536}, int64_t{16}));
    EXPECT_EQ(order(512, 2449029, 123718280).first, 0);    // tiles of 32768: runs of 0.7
    EXPECT_EQ(order(16, 2449029, 123718280).first, 524288);
    EXPECT_EQ(order(4, 2449029, 123718280).first, 0);      // 39 MB of rows: they fit
    EXPECT_EQ(order(8, 232965, 114615892).first, 0);       // reddit: rows fit (and the graph is dense)
    EXPECT_EQ(order(64, 232965, 114615892).first, 0);      // reddit at 60 MB: dense, no gain measured
    EXPECT_EQ(order(32, 132534, 79122504).first, 0);       // ogbn-proteins
    EXPECT_EQ(order(12, 2449029, 123718280).first, 524288);
    // A graph too sparse for runs of 8 in any tile smaller than the whole graph keeps edge-id order.
    EXPECT_EQ(order(32, 4000000, 8000000).first, 0);
}

TEST(GpuSddmmIR, DefaultLaneWidthGrowsWithFeatureLength) {
    const auto &def = sddmm_schedule("gpu_sddmm");
    auto lanes = [&](int64_t F) {
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), {}};
        return def.default_params(p).get("kLaneWidth");
    };
    EXPECT_EQ(lanes(1), 1);
    EXPECT_EQ(lanes(8), 1);
    EXPECT_EQ(lanes(38), 4);   // not a multiple of 4: lanes by the general rule
    EXPECT_EQ(lanes(37), 4);
    EXPECT_EQ(lanes(301), 32);
}

TEST(GpuSddmmIR, DefaultLoadsUpToALinePerLaneGroupAndTilesEdgesForShortRows) {
    // dot over multiples of 4 features: 4-wide loads, L * 4 features a lane group (a 128-byte line
    // from F = 32), several edges per thread below F = 128.
    const auto &def = sddmm_schedule("gpu_sddmm");
    auto d = [&](int64_t F) {
        Problem p{plan_features(BinaryOp::Dot, {F}, {F}), {}};
        ScheduleParams s = def.default_params(p);
        EXPECT_FALSE(def.invalid_reason(s, p).has_value()) << s.str();
        return std::tuple{s.get("kLaneWidth"), s.get("kVecWidth"), s.get_or("kMRegTile", 1)};
    };
    EXPECT_EQ(d(8), std::make_tuple(1, 4, 1));
    EXPECT_EQ(d(16), std::make_tuple(4, 4, 4));
    EXPECT_EQ(d(32), std::make_tuple(8, 4, 4));
    EXPECT_EQ(d(64), std::make_tuple(8, 4, 2));
    EXPECT_EQ(d(128), std::make_tuple(8, 4, 1));
    EXPECT_EQ(d(512), std::make_tuple(16, 4, 2));
}

}  // namespace
}  // namespace gsparse
