// gpu_spmm without a GPU: IR tests on the lowered statement (shared tile size, one shared allocation
// per kernel, block-uniform barriers, register tile, balancedIdx loads, nonzero lanes as the
// innermost thread dimension) and PTX emission for a grid of schedule points (warp shuffles for
// kNnzLanes > 1).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "halide_ext/ir_inspect.h"
#include "support/text_count.h"
#include "halide_ext/speculate_guarded_updates.h"
#include "ops/spmm_algorithm.h"
#include "runtime/spmm_kernel.h"
#include "runtime/target.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"

namespace gsparse {
namespace {

using Halide::MemoryType;
using Halide::Internal::Stmt;

struct Lowered {
    SpmmAlgorithm algo;
    Stmt stmt;
};

/// The CUDA target a kernel of the algorithm is compiled for (as SpmmKernel does).
Halide::Target target_of(const SpmmAlgorithm &a) {
    Halide::Target t = jit_target(Device::CUDA);
    return a.large_buffers ? t : t.without_feature(Halide::Target::LargeBuffers);
}

Lowered lower(const SpmmSpec &spec, int64_t F, const ScheduleParams &p, bool identity_edge_ids = true,
              DType dtype = DType::F32) {
    Lowered l;
    FeatureLayout layout = plan_features(spec.op, {F}, {F});
    const SpmmScheduleDef &def = spmm_schedule("gpu_spmm");
    check_schedule(def, p, spmm_problem(spec, layout, {}, dtype));
    l.algo = build_spmm_algorithm(spec, layout, dtype, identity_edge_ids);
    def.apply(l.algo, p);
    Halide::Pipeline pipeline(l.algo.out);
    for (const auto &pass : l.algo.lowering_passes) pipeline.add_custom_lowering_pass(pass.get(), nullptr);
    l.stmt = ext::lowered_stmt(pipeline, l.algo.arguments(), target_of(l.algo));
    return l;
}

ScheduleParams point(int M, int T, int R, int KT, int smem, int split = 0, int balance = 0, int lanes = 1) {
    return ScheduleParams{"gpu_spmm",
                          {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", KT}, {"smemColIdx", smem},
                           {"kRowSplit", split}, {"rowBalance", balance}, {"kNnzLanes", lanes}, {"kVecWidth", 1}}};
}

/// The statistics of a square graph of `rows` rows and `nnz` nonzeros.
GraphStats square_stats(int64_t rows, int64_t nnz, int64_t longest, double cov, double col_cov = 0,
                        int64_t empty = 0) {
    GraphStats s;
    s.num_rows = s.num_cols = rows;
    s.nnz = nnz;
    s.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
    s.max_row_length = longest;
    s.row_length_cov = cov;
    s.col_length_cov = col_cov;
    s.empty_rows = empty;
    return s;
}

/// A point with kNnzLanes lanes (no shared tile, one output per thread).
ScheduleParams lanes_point(int M, int T, int lanes, int split = 0, int balance = 0) {
    return point(M, T, 1, 32, 0, split, balance, lanes);
}

/// The PTX of the pipeline's CUDA kernels (embedded in the host assembly Halide writes).
std::string ptx_of(const Lowered &l) {
    Halide::Pipeline pipeline(l.algo.out);
    for (const auto &pass : l.algo.lowering_passes) pipeline.add_custom_lowering_pass(pass.get(), nullptr);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("gsparse_spmm_ptx_" + std::to_string(::getpid()) + ".s")).string();
    pipeline.compile_to_assembly(path, l.algo.arguments(), "spmm_ptx", target_of(l.algo));
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(path);
    return text.str();
}

using test::count_of;

TEST(GpuSpmmIR, SharedTileIsMTileByNnzTileAndTheOnlySharedAllocation) {
    for (auto [M, KT] : {std::pair{4, 32}, {8, 64}, {2, 128}}) {
        Lowered l = lower(SpmmSpec{}, 64, point(M, 32, 2, KT, 1));
        auto shared = ext::find_allocations(l.stmt, "*");
        int n_shared = 0;
        for (const auto &a : shared) {
            if (a.memory_type != MemoryType::GPUShared) continue;
            n_shared++;
            EXPECT_TRUE(ext::name_matches(a.name, "spmm_nbr*")) << a.name;
            ASSERT_TRUE(a.elements_upper_bound().has_value()) << a.name;
            EXPECT_EQ(*a.elements_upper_bound(), int64_t(M) * KT) << "M=" << M << " KT=" << KT;
        }
        EXPECT_EQ(n_shared, 1);
    }
}

TEST(GpuSpmmIR, NoSharedTileWithoutSmemColIdx) {
    Lowered l = lower(SpmmSpec{}, 64, point(4, 32, 2, 32, 0));
    for (const auto &a : ext::find_allocations(l.stmt, "*")) EXPECT_NE(a.memory_type, MemoryType::GPUShared) << a.name;
    EXPECT_TRUE(ext::list_loops(l.stmt, "spmm_acc*.ko").empty());
    for (const auto &b : ext::find_calls(l.stmt, "gpu_thread_barrier")) {
        EXPECT_FALSE(b.under_thread_dependent_condition);
        EXPECT_FALSE(b.under_thread_dependent_loop);
    }
}

TEST(GpuSpmmIR, BarriersAreBlockUniform) {
    for (const ScheduleParams &p : {point(4, 32, 2, 32, 1), point(8, 8, 1, 32, 1), point(4, 32, 1, 64, 1, 1024),
                                    point(2, 32, 2, 64, 1, 0, 1)}) {
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max}) {
            Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, r}, 64, p);
            auto barriers = ext::find_calls(l.stmt, "gpu_thread_barrier");
            ASSERT_FALSE(barriers.empty()) << p.str();
            for (const auto &b : barriers) {
                EXPECT_FALSE(b.under_thread_dependent_condition) << p.str();
                EXPECT_FALSE(b.under_thread_dependent_loop) << p.str();
            }
            // The staged loop runs to the block's longest row: its extent reads row_ptr.
            auto ko = ext::list_loops(l.stmt, "spmm_acc*.ko");
            ASSERT_EQ(ko.size(), 1u) << p.str();
            EXPECT_FALSE(ext::expr_uses_var_matching(ko[0].expanded_extent, ext::kThreadIdPattern)) << p.str();
        }
    }
}

TEST(GpuSpmmIR, RegisterTileHasKNRegTileAccumulatorsPerThread) {
    for (int R : {1, 2, 4, 8}) {
        const int M = 2, T = 32;
        Lowered l = lower(SpmmSpec{}, 256, point(M, T, R, 32, 1));
        auto acc = ext::find_allocations(l.stmt, "spmm_acc*");
        ASSERT_EQ(acc.size(), 1u);
        EXPECT_EQ(acc[0].memory_type, MemoryType::Register);
        ASSERT_TRUE(acc[0].constant_elements().has_value());
        // Each thread's copy holds its own R outputs at stride T (CompactThreadAllocations), not the
        // block's M x T x R tile, and reads and writes them at constant indices.
        EXPECT_EQ(*acc[0].constant_elements(), (R - 1) * T + 1);
        for (const auto &a : ext::find_stores(l.stmt, acc[0].name))
            EXPECT_FALSE(ext::expr_uses_var_matching(a.index, "*")) << a.index;
        for (const auto &a : ext::find_loads(l.stmt, acc[0].name))
            EXPECT_FALSE(ext::expr_uses_var_matching(a.index, "*")) << a.index;
        // Each thread stores its kNRegTile outputs at stride kNTile: R unrolled stores.
        EXPECT_EQ(ext::find_stores(l.stmt, "spmm_out*").size(), size_t(R));
    }
}

/// The values of every Let and LetStmt of a Stmt, by name (lowered names are unique).
class LetValues : public Halide::Internal::IRVisitor {
public:
    std::map<std::string, Halide::Expr> values;
    Halide::Expr expand(Halide::Expr e) const {
        for (int round = 0; round < 8; round++)
            for (const auto &[name, value] : values) e = Halide::Internal::substitute(name, value, e);
        return e;
    }

private:
    using IRVisitor::visit;
    void visit(const Halide::Internal::LetStmt *op) override {
        values[op->name] = op->value;
        IRVisitor::visit(op);
    }
    void visit(const Halide::Internal::Let *op) override {
        values[op->name] = op->value;
        IRVisitor::visit(op);
    }
};

TEST(GpuSpmmIR, BalancedIdxIndexesRowsAndOutputStores) {
    Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Mean}, 64, point(4, 32, 2, 32, 1, 0, 1));
    LetValues lets;  // indices are often let-bound
    l.stmt.accept(&lets);
    EXPECT_FALSE(ext::find_loads(l.stmt, "row_order").empty());
    auto stores = ext::find_stores(l.stmt, "spmm_out*");
    ASSERT_FALSE(stores.empty());
    for (const auto &s : stores) {
        auto inner = ext::find_loads(Halide::Internal::Evaluate::make(lets.expand(s.index)), "row_order");
        EXPECT_EQ(inner.size(), 1u) << "store index does not remap the row through balancedIdx";
    }
    // row_ptr is read at remapped rows only.
    for (const auto &ld : ext::find_loads(l.stmt, "row_ptr")) {
        auto through = ext::find_loads(Halide::Internal::Evaluate::make(lets.expand(ld.index)), "row_order");
        std::string where;
        for (const auto &lp : ld.enclosing_loops) where += lp + " ";
        EXPECT_FALSE(through.empty()) << "row_ptr load not indexed through balancedIdx: " << ld.index << " in " << where;
    }
}

TEST(GpuSpmmIR, GridOfSchedulesCompilesToPTX) {
    const auto &def = spmm_schedule("gpu_spmm");
    size_t combo = 0;
    for (int64_t F : {1, 8, 47, 128}) {
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Min}) {
            SpmmSpec spec{BinaryOp::Mul, r};
            FeatureLayout layout = plan_features(spec.op, {F}, {F});
            Problem problem{layout, {}, has_arg_outputs(r)};
            ScheduleSpace space = def.space(problem);
            std::vector<ScheduleParams> valid;
            ScheduleParams point;
            for (size_t i = 0; i < space.size(); i++) {
                space.at(i, point);
                if (!def.invalid_reason(point, problem)) valid.push_back(point);
            }
            ASSERT_FALSE(valid.empty());
            // Three points a problem at alternating sixths of its valid space, so that the
            // problems together reach every sixth (keep CI short).
            for (size_t n = combo++ % 2; n < 6; n += 2) {
                SpmmKernelKey key{spec, layout, DType::F32, false, valid[n * valid.size() / 6], Device::CUDA};
                EXPECT_NO_THROW(SpmmKernel{key}) << key.str();
            }
        }
    }
}

const ReduceOp kAllReduces[] = {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min};

TEST(GpuSpmmIR, NnzLanesCombineThroughWarpShuffles) {
    // kNTile x kNnzLanes = a warp per row: lane 0 of a row reads the row's L partials (one value per
    // lane for sum/mean; value, arg ids and position for max/min) through shfl.sync.
    size_t combo = 0;
    for (ReduceOp r : kAllReduces) {
        for (auto [F, T, L] : {std::tuple{1, 1, 32}, {8, 8, 4}, {3, 2, 16}}) {
            if (combo++ % 2) continue;  // every reduction, every second shape (keep CI short)
            Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, r}, F, lanes_point(4, T, L));
            const std::string ptx = ptx_of(l);
            const size_t per_lane = has_arg_outputs(r) ? 4 : 1;
            EXPECT_GE(count_of(ptx, "shfl.sync.idx.b32"), per_lane * L) << reduce_op_name(r) << " F=" << F << " L=" << L;
            // Sub-warp shuffles: clamp of the segment width L ((32 - L) << 8 | 31).
            EXPECT_NE(ptx.find(", " + std::to_string(((32 - L) << 8) | 31) + ", -1;"), std::string::npos)
                << reduce_op_name(r) << " L=" << L;
        }
    }
    // Without lanes no shuffles.
    Lowered plain = lower(SpmmSpec{}, 8, point(8, 8, 1, 32, 1));
    EXPECT_EQ(count_of(ptx_of(plain), "shfl.sync"), 0u);
}

TEST(GpuSpmmIR, NnzLanesAreTheInnermostThreadDimension) {
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max}) {
        for (auto [M, T, L] : {std::tuple{4, 1, 32}, {8, 4, 8}, {2, 16, 2}}) {
            Lowered l = lower(SpmmSpec{BinaryOp::Mul, r}, 16, lanes_point(M, T, L));
            // Threads per block = L x kNTile x kMTile: the fused thread loops have those extents.
            for (auto [dim, extent] : {std::pair{"x", L}, {"y", T}, {"z", M}}) {
                auto loops = ext::list_loops(l.stmt, std::string("*.__thread_id_") + dim);
                ASSERT_FALSE(loops.empty()) << dim;
                for (const auto &lp : loops) {
                    ASSERT_TRUE(lp.extent_upper_bound().has_value()) << lp.name;
                    EXPECT_EQ(*lp.extent_upper_bound(), extent) << lp.name << " M=" << M << " T=" << T << " L=" << L;
                }
            }
            // No shared tile, so no barriers; the lane partials live in registers.
            EXPECT_EQ(ext::count_calls(l.stmt, "gpu_thread_barrier"), 0u);
            for (const auto &a : ext::find_allocations(l.stmt, "*"))
                EXPECT_NE(a.memory_type, MemoryType::GPUShared) << a.name;
            // The lane loop of the partials reads consecutive positions: col_idx is indexed by the lane.
            LetValues lets;
            l.stmt.accept(&lets);
            bool lane_indexed = false;
            for (const auto &ld : ext::find_loads(l.stmt, "col_idx"))
                lane_indexed |= ext::expr_uses_var_matching(lets.expand(ld.index), "*__thread_id_x");
            EXPECT_TRUE(lane_indexed);
        }
    }
}

TEST(GpuSpmmIR, NnzLanesComposeWithRowBalanceAndRowSplit) {
    for (ReduceOp r : kAllReduces) {
        // bind_buffer: the lanes read row_ptr at remapped rows, the stores go to remapped rows.
        Lowered b = lower(SpmmSpec{BinaryOp::Mul, r}, 8, lanes_point(4, 8, 4, 0, 1), false);
        EXPECT_FALSE(ext::find_loads(b.stmt, "row_order").empty()) << reduce_op_name(r);
        EXPECT_GE(count_of(ptx_of(b), "shfl.sync.idx.b32"), 4u) << reduce_op_name(r);
        // Row split: the segments' reduction is the one split over lanes.
        Lowered s = lower(SpmmSpec{BinaryOp::Mul, r}, 8, lanes_point(4, 8, 4, 256), false);
        EXPECT_GE(count_of(ptx_of(s), "shfl.sync.idx.b32"), 4u) << reduce_op_name(r);
    }
}

TEST(GpuSpmmIR, NnzLanesGridCompilesToPTX) {
    // The small-feature points the benchmark measures, every reduce, F = 1, 3, 8, 16, 32.
    for (int64_t F : {1, 3, 8, 16, 32}) {
        int T = 1;
        while (T * 2 <= F && T < 32) T *= 2;
        const int L = std::max(1, 32 / T);
        for (ReduceOp r : kAllReduces) {
            SpmmSpec spec{BinaryOp::Mul, r};
            FeatureLayout layout = plan_features(spec.op, {F}, {F});
            ScheduleParams p = lanes_point(4, T, L, F == 3 ? 1024 : 0, F == 16 ? 1 : 0);
            if (L == 1) p = lanes_point(4, T, 2);
            SpmmKernelKey key{spec, layout, DType::F32, false, p, Device::CUDA};
            EXPECT_NO_THROW(SpmmKernel{key}) << key.str();
        }
    }
}

TEST(GpuSpmmIR, DefaultsBelowAWarpOfFeaturesUseNnzLanes) {
    const auto &def = spmm_schedule("gpu_spmm");
    for (int64_t F : {1, 3, 8, 16, 31}) {
        Problem problem{plan_features(BinaryOp::CopyLhs, {F}, {F}), {}};
        ScheduleParams p = gpu_spmm_expert_default(problem);
        EXPECT_FALSE(def.invalid_reason(p, problem).has_value()) << p.str();
        EXPECT_EQ(p.get("kNTile") * p.get("kNnzLanes"), 32) << p.str();
    }
    Problem wide{plan_features(BinaryOp::CopyLhs, {64}, {64}), {}};
    EXPECT_EQ(gpu_spmm_expert_default(wide).get("kNnzLanes"), 1);
}

TEST(GpuSpmmIR, Float64DefaultsCombineNoLanesAndCompileToPTX) {
    // Halide 14's warp shuffles move 32 bits: 64-bit features must not get lane schedules.
    const auto &def = spmm_schedule("gpu_spmm");
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max}) {
        const SpmmSpec spec{BinaryOp::CopyLhs, r};
        for (int64_t F : {1, 16}) {
            const Problem problem = spmm_problem(spec, plan_features(BinaryOp::CopyLhs, {F}, {F}), {}, DType::F64);
            const ScheduleParams p = gpu_spmm_expert_default(problem);
            EXPECT_FALSE(def.invalid_reason(p, problem).has_value()) << p.str();
            EXPECT_EQ(p.get("kNnzLanes"), 1) << p.str();
            const std::string ptx = ptx_of(lower(spec, F, p, true, DType::F64));
            EXPECT_EQ(count_of(ptx, "shfl.sync"), 0u) << p.str();
            EXPECT_NE(ptx.find(".f64"), std::string::npos) << p.str();
        }
    }
    const Problem f64{plan_features(BinaryOp::CopyLhs, {8}, {8}), {}, false, false, true, DType::F64};
    auto why = def.invalid_reason(lanes_point(4, 8, 8), f64);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("32 bits"), std::string::npos) << *why;
}

ScheduleParams vec_point(int M, int T, int R, int V, int smem, int split = 0, int balance = 0) {
    ScheduleParams p = point(M, T, R, 32, smem, split, balance);
    p.values["kVecWidth"] = V;
    return p;
}

TEST(GpuSpmmIR, VecWidthGivesAlignedVectorLoadsOfFeatureRows) {
    // Every shape of the schedule: shared ids or not, row split, bind_buffer, register tile, max.
    for (const ScheduleParams &p : {vec_point(8, 8, 1, 4, 1), vec_point(8, 8, 1, 4, 0, 256), vec_point(4, 16, 2, 4, 1),
                                    vec_point(4, 16, 1, 2, 1, 0, 1)}) {
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max}) {
            Lowered l = lower(SpmmSpec{BinaryOp::Mul, r}, 128, p);
            const int V = static_cast<int>(p.get("kVecWidth"));
            auto loads = ext::find_loads(l.stmt, "lhs");
            ASSERT_FALSE(loads.empty()) << p.str();
            for (const auto &ld : loads) EXPECT_EQ(ld.type.lanes(), V) << p.str();
            const std::string ptx = ptx_of(l);
            EXPECT_GT(count_of(ptx, V == 4 ? "ld.global.nc.v4.f32" : "ld.global.nc.v2.f32"), 0u) << p.str();
            EXPECT_EQ(l.algo.operand_alignment, 4 * V) << p.str();
        }
    }
}

TEST(GpuSpmmIR, ScalarEdgeOperandRowsCarryARegisterLimit) {
    // Sum and mean of a message with an edge operand on whole rows with scalar loads: 32 registers
    // a thread. Copies, max / min, split rows, row tails, staged ids, row orders and vector loads:
    // none (the CUDA runtime's cap).
    const SpmmSpec mul{BinaryOp::Mul, ReduceOp::Sum};
    ScheduleParams two_lanes = lanes_point(64, 1, 2);
    two_lanes.values["kNnzUnroll"] = 2;
    EXPECT_EQ(lower(mul, 1, two_lanes).algo.max_registers, kRegisterLimitScalarEdgeRows);
    EXPECT_EQ(lower(SpmmSpec{BinaryOp::Div, ReduceOp::Mean}, 4, point(32, 4, 1, 16, 0)).algo.max_registers,
              kRegisterLimitScalarEdgeRows);
    EXPECT_EQ(lower(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, 1, two_lanes).algo.max_registers, 0);
    EXPECT_EQ(lower(SpmmSpec{BinaryOp::Mul, ReduceOp::Max}, 1, two_lanes).algo.max_registers, 0);
    EXPECT_EQ(lower(mul, 1, lanes_point(16, 1, 16, 1024)).algo.max_registers, 0);        // split rows
    EXPECT_EQ(lower(mul, 4, point(32, 4, 1, 16, 1)).algo.max_registers, 0);              // staged ids
    EXPECT_EQ(lower(mul, 4, point(32, 4, 1, 16, 0, 0, 1)).algo.max_registers, 0);        // row order
    ScheduleParams vec = point(32, 2, 2, 16, 0);
    vec.values["kVecWidth"] = 4;
    EXPECT_EQ(lower(mul, 16, vec).algo.max_registers, 0);

    // The kernel from the persistent cache carries the directive in its PTX.
    const SpmmKernel k(SpmmKernelKey{mul, plan_features(mul.op, {1}, {1}), DType::F32, true, two_lanes, Device::CUDA});
    ASSERT_NE(k.library(), nullptr) << "the kernel cache is off or cannot link";
    std::ifstream in(k.library()->path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    EXPECT_NE(bytes.str().find(".maxnreg 32"), std::string::npos) << k.library()->path();
}

TEST(GpuSpmmIR, VectorRegisterTilesStayInRegisters) {
    // Points whose accumulator tile Halide 14 gives each thread whole (M x T x R x V floats indexed
    // by the thread id), which LLVM kept in a local-memory frame of kilobytes per thread: a thread
    // per 8 features of 32 rows with bind_buffer and shared ids, row splits with a register tile,
    // and 4 rows x 32 threads x 4 groups of 2 or 4 features at F = 256. CompactThreadAllocations cuts
    // each thread's copy to its own outputs at constant indices, so no local frame is left; any
    // vector access of a frame that did remain would be no wider than its alignment.
    struct Case {
        ScheduleParams p;
        int64_t F;
    };
    std::vector<Case> cases = {{vec_point(32, 1, 4, 2, 1, 0, 1), 32}, {vec_point(32, 2, 4, 4, 0, 1024), 32},
                               {vec_point(32, 2, 8, 2, 1, 256), 32}, {vec_point(4, 32, 2, 4, 0, 0), 256},
                               {vec_point(4, 32, 4, 2, 0, 0), 256},  {vec_point(4, 16, 4, 4, 1, 256), 256}};
    for (size_t ci = 0; ci < cases.size(); ci++)
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Max}) {
            // Each case with one reduction, sum and max alternating (keep CI short).
            if ((ci % 2 == 0) != (r == ReduceOp::Sum)) continue;
            const Case &c = cases[ci];
            const std::string ptx = ptx_of(lower(SpmmSpec{BinaryOp::CopyLhs, r}, c.F, c.p));
            const size_t frame = ptx.find("__local_depot");
            EXPECT_EQ(frame, std::string::npos) << c.p.str() << " " << reduce_op_name(r) << " F=" << c.F << ": "
                                                << ptx.substr(frame == std::string::npos ? 0 : frame, 80);
            const std::regex depot(R"(\.local \.align (\d+) \.b8)"), access(R"((ld|st)\.local\.(v2|v4|u64|b64|f64))");
            std::smatch m;
            if (!std::regex_search(ptx, m, depot)) continue;
            const int align = std::stoi(m[1]);
            for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), access); it != std::sregex_iterator(); ++it) {
                const std::string kind = (*it)[2];
                EXPECT_LE(kind == "v4" ? 16 : 8, align) << c.p.str() << ": " << it->str();
            }
        }
}

ScheduleParams tails_point(ScheduleParams p) {
    p.values["rowTails"] = 1;
    return p;
}

TEST(GpuSpmmIR, TilesWiderThanTheFeaturesAreGuardedByGroup) {
    // F = 100 and 47 in one feature tile wider than the row (32 threads x 4 features, 25 busy; 32
    // threads x 2 outputs, 47 busy; with shared ids and balanced rows; the row-tail form's rows): one
    // block column, the guard on the thread's feature group outside its vector loads, the
    // accumulators in registers. A tile narrower than the row (16 threads x 4 at F = 100) keeps the
    // two overlapping tiles.
    struct Case {
        ScheduleParams p;
        int64_t F;
        int block_columns;
    };
    const std::vector<Case> cases = {{vec_point(4, 32, 1, 4, 0), 100, 1},     {vec_point(4, 16, 2, 4, 1, 0, 1), 100, 1},
                                     {vec_point(8, 32, 2, 1, 0, 128), 47, -1}, {vec_point(2, 64, 1, 1, 1, 0, 1), 47, -1},
                                     {tails_point(vec_point(4, 16, 8, 1, 0, 128)), 100, -1},
                                     {vec_point(8, 16, 1, 4, 0), 100, 2}};
    for (const Case &c : cases) {
        const Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, c.F, c.p);
        const std::string ptx = ptx_of(l);
        EXPECT_EQ(ptx.find("__local_depot"), std::string::npos) << c.p.str() << " F=" << c.F;
        if (c.p.get("kVecWidth") == 4) {
            EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << c.p.str();
        }
        if (c.block_columns < 0) continue;  // V = 1: the feature extent stays symbolic
        std::ostringstream stmt;
        stmt << l.stmt;
        const std::regex blocks(R"(gpu_block<CUDA> \([^,]*f0[^,]*__block_id_y, 0, (\d+)\))");
        std::smatch m;
        const std::string text = stmt.str();
        ASSERT_TRUE(std::regex_search(text, m, blocks)) << c.p.str();
        EXPECT_EQ(std::stoi(m[1]), c.block_columns) << c.p.str() << " F=" << c.F;
    }
}

TEST(GpuSpmmIR, InvalidPointsAreRejectedWithAReason) {
    const auto &def = spmm_schedule("gpu_spmm");
    Problem problem{plan_features(BinaryOp::CopyLhs, {16}, {16}), {}};
    Problem wide{plan_features(BinaryOp::CopyLhs, {128}, {128}), {}};
    auto why = [&](const ScheduleParams &p) { return def.invalid_reason(p, problem).value_or(""); };
    EXPECT_NE(why(point(32, 64, 1, 32, 1)).find("exceed 16, the next power of two"), std::string::npos);
    EXPECT_NE(def.invalid_reason(point(32, 64, 1, 32, 1), wide).value_or("").find("1024"), std::string::npos);
    EXPECT_NE(why(point(1, 16, 1, 32, 1)).find("less than a warp"), std::string::npos);
    EXPECT_NE(why(point(4, 16, 1, 24, 1)).find("power of two"), std::string::npos);
    EXPECT_NE(why(point(32, 16, 1, 512, 1)).find("48 KiB"), std::string::npos);
    EXPECT_NE(why(point(4, 16, 1, 32, 1, 1024, 1)).find("kRowSplit"), std::string::npos);
    EXPECT_NE(why(lanes_point(4, 4, 64)).find("kNnzLanes must be a power of two in 1..32"), std::string::npos);
    EXPECT_NE(why(lanes_point(4, 4, 3)).find("kNnzLanes must be a power of two"), std::string::npos);
    EXPECT_NE(why(point(4, 4, 1, 32, 1, 0, 0, 8)).find("smemColIdx"), std::string::npos);
    EXPECT_NE(why(point(4, 4, 2, 32, 0, 0, 0, 8)).find("kNRegTile = 1"), std::string::npos);
    EXPECT_NE(why(lanes_point(32, 16, 4)).find("kMTile * kNTile * kNnzLanes = 2048 threads exceed 1024"),
              std::string::npos);
    EXPECT_NE(why(lanes_point(1, 1, 16)).find("less than a warp"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(lanes_point(32, 1, 32, 1024, 0), problem).has_value());
    // Lane kernels put rows on the third thread dimension, capped at 64 by CUDA (a grid test on the
    // H100 hit CUDA_ERROR_INVALID_VALUE with 256 rows x 2 lanes); one-thread-per-row forms may take more.
    EXPECT_NE(why(lanes_point(128, 1, 2)).find("third thread dimension"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(lanes_point(64, 1, 2), problem).has_value());
    EXPECT_FALSE(def.invalid_reason(lanes_point(256, 1, 1), problem).has_value());
    // Lane kernels index with 32 bits: 200 M edges x 16 edge features do not fit.
    Problem huge{plan_features(BinaryOp::Mul, {16}, {16}), {}};
    huge.stats.num_rows = huge.stats.num_cols = 1000;
    huge.stats.nnz = 200'000'000;
    EXPECT_NE(def.invalid_reason(lanes_point(4, 4, 8), huge).value_or("").find("edge features"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(point(4, 16, 1, 32, 1), huge).has_value());
    EXPECT_NE(why(vec_point(4, 16, 1, 3, 1)).find("kVecWidth must be"), std::string::npos);
    EXPECT_NE(why(vec_point(4, 8, 1, 4, 1)).find("kNTile * kNRegTile = 8 feature groups of kVecWidth 4 exceed 4"),
              std::string::npos);
    // Tiles wider than a feature extent that is not a power of two are guarded, up to its next power
    // of two of groups; not where the last group would be one thread.
    Problem f100{plan_features(BinaryOp::CopyLhs, {100}, {100}), {}};
    EXPECT_FALSE(def.invalid_reason(vec_point(4, 32, 1, 4, 0), f100).has_value());
    EXPECT_FALSE(def.invalid_reason(vec_point(4, 16, 2, 4, 1), f100).has_value());
    EXPECT_NE(def.invalid_reason(vec_point(4, 64, 1, 4, 0), f100).value_or("").find("exceed 32"), std::string::npos);
    EXPECT_NE(def.invalid_reason(vec_point(4, 8, 4, 4, 0), f100).value_or("").find("one thread"), std::string::npos);
    Problem odd{plan_features(BinaryOp::CopyLhs, {18}, {18}), {}};
    EXPECT_NE(def.invalid_reason(vec_point(8, 4, 1, 4, 0), odd).value_or("").find("does not divide"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(gpu_spmm_expert_default(problem), problem).has_value());
    auto unrolled = [](ScheduleParams p, int64_t U) {
        p.values["kNnzUnroll"] = U;
        return p;
    };
    EXPECT_NE(why(unrolled(lanes_point(4, 4, 8), 3)).find("kNnzUnroll must be 1, 2 or 4"), std::string::npos);
    EXPECT_NE(why(unrolled(point(4, 16, 1, 32, 1), 2)).find("needs kNnzLanes > 1"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(unrolled(lanes_point(4, 4, 8), 4), problem).has_value());
}

TEST(GpuSpmmIR, VectorRegisterTilesWithSharedIdsKeepTheirKernel) {
    // Few rows per block, a register tile and vector loads with shared neighbour ids: the retyped
    // accumulator once met BlockUniformLoop's simplification, which deleted the whole kernel (the
    // output was never written). Every such point must still compute and store its output.
    const auto &def = spmm_schedule("gpu_spmm");
    const Problem problem{plan_features(BinaryOp::CopyLhs, {128}, {128}), {}};
    int points = 0;
    for (int M : {1, 2, 4})
        for (int R : {2, 4})
            for (int V : {2, 4}) {
                const ScheduleParams p = vec_point(M, M == 1 ? 32 : 16, R, V, 1);
                if (def.invalid_reason(p, problem)) continue;
                points++;
                Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, 128, p);
                bool kernel = false;
                for (const auto &loop : ext::list_loops(l.stmt, "*"))
                    kernel |= loop.for_type == Halide::Internal::ForType::GPUBlock;
                EXPECT_TRUE(kernel) << p.str();
                EXPECT_FALSE(ext::find_stores(l.stmt, "spmm_out*").empty()) << p.str();
                EXPECT_FALSE(ext::find_loads(l.stmt, "lhs").empty()) << p.str();
            }
    EXPECT_GE(points, 4);
}

TEST(GpuSpmmIR, DefaultsFollowTheGraphsShape) {
    const auto &def = spmm_schedule("gpu_spmm");
    auto problem = [](int64_t F, int64_t rows, int64_t nnz, int64_t longest, BinaryOp op = BinaryOp::CopyLhs) {
        Problem p{plan_features(op, {F}, {F}), {}};
        p.stats.num_rows = p.stats.num_cols = rows;
        p.stats.nnz = nnz;
        p.stats.max_row_length = longest;
        p.stats.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
        return p;
    };
    // The shapes of the reddit and ogbn-products twins.
    const Problem reddit8 = problem(8, 232965, 114615892, 48535), products8 = problem(8, 2449029, 123718280, 12047);
    EXPECT_EQ(gpu_spmm_expert_default(reddit8).get("kRowSplit"), 1024);
    EXPECT_EQ(gpu_spmm_expert_default(products8).get("kRowSplit"), 0);
    const Problem reddit32 = problem(32, 232965, 114615892, 48535), products32 = problem(32, 2449029, 123718280, 12047);
    EXPECT_EQ(gpu_spmm_expert_default(reddit32).get("smemColIdx"), 0);
    // ... on the relabeled graph: 32 rows of 4-wide loads in segments of 1024 (rowBalance 3); odd F
    // keeps the split point of 16 threads x 2 outputs, segments of 256.
    EXPECT_EQ(gpu_spmm_expert_default(reddit32).get("rowBalance"), 3);
    EXPECT_EQ(gpu_spmm_expert_default(reddit32).get("kVecWidth"), 4);
    EXPECT_EQ(gpu_spmm_expert_default(reddit32).get("kMTile"), 32);
    EXPECT_EQ(gpu_spmm_expert_default(reddit32).get("kRowSplit"), 1024);
    EXPECT_EQ(gpu_spmm_expert_default(problem(64, 232965, 114615892, 48535)).get("kRowSplit"), 1024);
    EXPECT_EQ(gpu_spmm_expert_default(problem(63, 232965, 114615892, 48535)).get("kRowSplit"), 256);
    EXPECT_EQ(gpu_spmm_expert_default(problem(63, 232965, 114615892, 48535)).get("kNRegTile"), 2);
    // Without graph statistics (ahead-of-time kernels) F = 32 keeps the shared tile.
    EXPECT_EQ(gpu_spmm_expert_default(Problem{plan_features(BinaryOp::CopyLhs, {32}, {32}), {}}).get("smemColIdx"), 1);
    EXPECT_EQ(gpu_spmm_expert_default(products32).get("kNnzLanes"), 2);
    EXPECT_EQ(gpu_spmm_expert_default(problem(128, 2449029, 123718280, 12047)).get("kRowSplit"), 0);
    // reddit at F = 128 runs on the relabeled graph, whole rows (copy_lhs); with an edge operand it
    // keeps split rows in row order, 32 threads of 4-wide loads (the default then adds row tails).
    EXPECT_EQ(gpu_spmm_expert_default(problem(128, 232965, 114615892, 48535)).get("rowBalance"), 3);
    Problem reddit128_e = problem(128, 232965, 114615892, 48535, BinaryOp::Mul);
    reddit128_e.edge_operand = true;
    EXPECT_EQ(gpu_spmm_expert_default(reddit128_e).get("kRowSplit"), 256);
    EXPECT_EQ(gpu_spmm_expert_default(reddit128_e).get("rowBalance"), 0);
    EXPECT_EQ(gpu_spmm_expert_default(reddit128_e).get("kVecWidth"), 4);
    EXPECT_EQ(gpu_spmm_expert_default(reddit128_e).get("kNTile"), 32);
    // Edge features of 200 M edges x 16 exceed the lane kernels' 32-bit indexing: the default falls
    // back to one thread per feature, and is valid.
    const Problem huge = problem(16, 1000000, 200000000, 5000, BinaryOp::Mul);
    const ScheduleParams d = gpu_spmm_expert_default(huge);
    EXPECT_FALSE(def.invalid_reason(d, huge).has_value()) << d.str();
    EXPECT_EQ(d.get("kNnzLanes"), 1);
    // Untiled lanes at F = 2..4 (ogbn-products) unroll two nonzeros; tiled lanes (reddit), F = 1 and
    // kernels without statistics do not.
    auto unroll = [&](const Problem &p) { return gpu_spmm_expert_default(p).get("kNnzUnroll"); };
    EXPECT_EQ(unroll(problem(2, 2449029, 123718280, 12047)), 2);
    EXPECT_EQ(unroll(problem(4, 2449029, 123718280, 12047)), 2);
    EXPECT_EQ(unroll(problem(1, 2449029, 123718280, 12047)), 1);
    EXPECT_EQ(unroll(problem(8, 2449029, 123718280, 12047)), 1);
    EXPECT_EQ(gpu_spmm_expert_default(problem(2, 232965, 114615892, 48535)).get_or("kSrcTile", 0), 32768);
    EXPECT_EQ(unroll(problem(2, 232965, 114615892, 48535)), 1);
    EXPECT_EQ(unroll(Problem{plan_features(BinaryOp::CopyLhs, {2}, {2}), {}}), 1);
    for (int64_t F : {1, 2, 4, 8, 31, 32, 48, 64, 512})
        for (const Problem &p : {problem(F, 232965, 114615892, 48535), problem(F, 2449029, 123718280, 12047),
                                 problem(F, 2708, 10556, 168)})
            EXPECT_FALSE(def.invalid_reason(gpu_spmm_expert_default(p), p).has_value()) << F;
}

TEST(GpuSpmmIR, WideEdgeOperandDefaultsCutRowsWhereTheSourcesFitAboutTwiceTheCache) {
    const auto &def = spmm_schedule("gpu_spmm");
    auto problem = [](int64_t F, int64_t rows, int64_t nnz, int64_t longest, BinaryOp op) {
        Problem p = spmm_problem({op, ReduceOp::Sum}, plan_features(op, {F}, {uses_rhs(op) && uses_lhs(op) ? 1 : F}));
        p.stats.num_rows = p.stats.num_cols = rows;
        p.stats.nnz = nnz;
        p.stats.max_row_length = longest;
        p.stats.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
        return p;
    };
    auto row_tails_form = [](const ScheduleParams &d) {
        return d.get_or("rowTails", 0) == 1 && d.get("kNTile") == 64 && d.get("kVecWidth") == 4 &&
               d.get("kRowSplit") == 128 && d.get("kMTile") == 2 && d.get("rowBalance") == 0;
    };
    // u_mul_e on the zoo's reddit-like graphs (23 k and 47 k nodes, skewed rows) at F = 256 and 512.
    for (int64_t F : {256, 512})
        for (const Problem &p : {problem(F, 23297, 11461589, 23297, BinaryOp::Mul),
                                 problem(F, 46593, 22923178, 32918, BinaryOp::Mul)}) {
            const ScheduleParams d = def.default_params(p);
            EXPECT_TRUE(row_tails_form(d)) << F << " " << d.str();
            EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
        }
    // Not: without an edge operand, below F = 256, on the reddit twin (238 MB of source rows at
    // F = 256), or on graphs without skewed rows (a k-nearest-neighbour graph).
    EXPECT_FALSE(row_tails_form(def.default_params(problem(256, 23297, 11461589, 23297, BinaryOp::CopyLhs))));
    EXPECT_FALSE(row_tails_form(def.default_params(problem(128, 23297, 11461589, 23297, BinaryOp::Mul))));
    EXPECT_FALSE(row_tails_form(def.default_params(problem(256, 232965, 114615892, 48535, BinaryOp::Mul))));
    EXPECT_FALSE(row_tails_form(def.default_params(problem(256, 500000, 5000000, 10, BinaryOp::Mul))));
    // max / min need the rows' order (no atomics): not them either.
    Problem maxed = problem(256, 23297, 11461589, 23297, BinaryOp::Mul);
    maxed.order_sensitive = true;
    EXPECT_FALSE(row_tails_form(def.default_params(maxed)));
}

TEST(GpuSpmmIR, EvenRowsTakeFourWideLoadsFrom256Features) {
    const auto &def = spmm_schedule("gpu_spmm");
    // A k-nearest-neighbour graph (the held-out knn-h-20m: 1 M nodes, every row 20 long).
    auto knn = [](int64_t F, BinaryOp op) {
        Problem p = spmm_problem({op, ReduceOp::Sum}, plan_features(op, {F}, {uses_rhs(op) && uses_lhs(op) ? 1 : F}));
        p.stats.num_rows = p.stats.num_cols = 1000000;
        p.stats.nnz = 20000000;
        p.stats.max_row_length = 20;
        p.stats.avg_row_length = 20.0;
        p.stats.row_length_cov = 0.0;
        p.edge_operand = op == BinaryOp::Mul;
        return p;
    };
    for (int64_t F : {256, 512})
        for (BinaryOp op : {BinaryOp::CopyLhs, BinaryOp::Mul}) {
            const Problem p = knn(F, op);
            const ScheduleParams d = gpu_spmm_expert_default(p);
            EXPECT_EQ(d.get("kMTile"), 4) << d.str();
            EXPECT_EQ(d.get("kNTile"), 32);
            EXPECT_EQ(d.get("kNRegTile"), 2);
            EXPECT_EQ(d.get("kVecWidth"), 4);
            EXPECT_EQ(d.get("kNnzTile"), 32);
            EXPECT_EQ(d.get("smemColIdx"), 1);
            EXPECT_EQ(d.get("kRowSplit"), 0);
            EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
        }
    // Not below 256 features, nor at widths that are not multiples of 256 (scalar loads there).
    EXPECT_EQ(gpu_spmm_expert_default(knn(128, BinaryOp::CopyLhs)).get("kVecWidth"), 1);
    EXPECT_EQ(gpu_spmm_expert_default(knn(260, BinaryOp::CopyLhs)).get("kVecWidth"), 1);
}

TEST(GpuSpmmIR, DefaultsBalanceRowsOfVaryingLengthOnUnsplitGraphs) {
    const auto &def = spmm_schedule("gpu_spmm");
    auto problem = [](int64_t F, int64_t rows, int64_t nnz, int64_t longest, double cov) {
        Problem p{plan_features(BinaryOp::CopyLhs, {F}, {F}), {}};
        p.stats.num_rows = p.stats.num_cols = rows;
        p.stats.nnz = nnz;
        p.stats.max_row_length = longest;
        p.stats.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
        p.stats.row_length_cov = cov;
        return p;
    };
    // The ogbn-products twin (unsplit, COV 1.88): up to 63 features (multiples of 4 from 16, of 2
    // from 16 to 31) on the graph relabeled in its locality order (rowBalance 3), even F of 16..31 in
    // segments of 256 nonzeros; otherwise longest rows first from F = 8, in the locality order except
    // at F = 16..31.
    auto products = [&](int64_t F) { return problem(F, 2449029, 123718280, 12047, 1.88); };
    struct Want {
        int64_t F, M, T, V, R, KT, L;
    };
    auto relabeled = [](int64_t F) { return F < 16 || (F < 32 && F % 2 == 0) || (F < 64 && F % 4 == 0); };
    for (const Want &w : {Want{1, 16, 1, 1, 1, 32, 8}, Want{2, 8, 2, 1, 1, 32, 8}, Want{4, 4, 4, 1, 1, 32, 8},
                          Want{8, 4, 8, 1, 1, 32, 4}, Want{15, 4, 8, 1, 1, 32, 4}, Want{16, 8, 8, 2, 1, 32, 1},
                          Want{18, 8, 8, 2, 1, 32, 1}, Want{31, 8, 16, 1, 1, 16, 1}, Want{32, 4, 8, 4, 1, 32, 1},
                          Want{33, 4, 32, 1, 1, 32, 1},
                          Want{64, 2, 16, 4, 1, 32, 1}, Want{65, 8, 32, 1, 2, 32, 1}, Want{66, 8, 32, 2, 1, 32, 1},
                          Want{512, 2, 16, 4, 1, 32, 1}}) {
        const Problem p = products(w.F);
        const ScheduleParams d = gpu_spmm_expert_default(p);
        EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << w.F << ": " << d.str();
        EXPECT_EQ(d.get("rowBalance"), relabeled(w.F) ? 3 : w.F >= 16 && w.F < 32 ? 1 : 2) << w.F;
        EXPECT_EQ(d.get("smemColIdx"), w.L == 1 ? 1 : 0) << w.F;  // lanes read ids directly
        EXPECT_EQ(d.get("kRowSplit"), w.F >= 16 && w.F < 32 && w.F % 2 == 0 ? 256 : 0) << w.F;
        EXPECT_EQ(std::vector<int64_t>({d.get("kMTile"), d.get("kNTile"), d.get("kVecWidth"), d.get("kNRegTile"),
                                        d.get("kNnzTile"), d.get("kNnzLanes")}),
                  std::vector<int64_t>({w.M, w.T, w.V, w.R, w.KT, w.L}))
            << w.F << ": " << d.str();
    }
    // A graph whose sources are other nodes than its rows (bipartite) keeps balancedIdx.
    Problem bipartite = products(64);
    bipartite.stats.num_cols = 1000000;
    EXPECT_EQ(gpu_spmm_expert_default(bipartite).get("rowBalance"), 1);
    // Skewed graphs keep split rows; on the relabeled graph at even F from 64 (32 rows a block,
    // 2-wide loads). Odd F from 128 keeps the split point without relabeling.
    auto reddit = [&](int64_t F) { return problem(F, 232965, 114615892, 48535, 1.63); };
    for (int64_t F : {256, 258, 512}) {
        const ScheduleParams d = gpu_spmm_expert_default(reddit(F));
        EXPECT_EQ(d.get("rowBalance"), 3) << d.str();
        EXPECT_EQ(d.get("kRowSplit"), 1024) << d.str();
        EXPECT_EQ(d.get("kVecWidth"), 2) << d.str();
    }
    EXPECT_EQ(gpu_spmm_expert_default(reddit(257)).get("rowBalance"), 0);
    for (int64_t F : {126, 255, 257, 127})
        EXPECT_GT(gpu_spmm_expert_default(reddit(F)).get("kRowSplit"), 0) << gpu_spmm_expert_default(reddit(F)).str();
    // Skewed square graphs at even F from 64 run on the relabeled graph: 32 rows x 16 threads of
    // 2-wide loads x 2 outputs, segments of 1024.
    auto proteins = [&](int64_t F) { return problem(F, 132534, 79122504, 19166, 1.04); };
    for (const Problem &p : {proteins(64), proteins(128), proteins(254), reddit(128)}) {
        const ScheduleParams d = gpu_spmm_expert_default(p);
        EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
        EXPECT_EQ(std::vector<int64_t>({d.get("rowBalance"), d.get("kRowSplit"), d.get("kMTile"), d.get("kNTile"),
                                        d.get("kVecWidth"), d.get("kNRegTile")}),
                  std::vector<int64_t>({3, 1024, 32, 16, 2, 2}))
            << d.str();
    }
    for (const Problem &p : {proteins(256), reddit(512)}) {
        const ScheduleParams d = gpu_spmm_expert_default(p);
        EXPECT_EQ(std::vector<int64_t>({d.get("rowBalance"), d.get("kRowSplit"), d.get("kMTile"), d.get("kNTile"),
                                        d.get("kVecWidth"), d.get("kNRegTile")}),
                  std::vector<int64_t>({3, 1024, 32, 16, 2, 2}))
            << d.str();
    }
    // With an edge operand (read scattered on a relabeled graph), a skewed graph whose longest row is
    // short against the work (ogbn-proteins) keeps whole rows, longest first: a warp of 4-wide loads,
    // 64-nonzero tiles.
    auto proteins_e = [&](int64_t F) {
        Problem p = proteins(F);
        p.edge_operand = true;
        return p;
    };
    for (int64_t F : {128, 252}) {
        const ScheduleParams d = gpu_spmm_expert_default(proteins_e(F));
        EXPECT_FALSE(def.invalid_reason(d, proteins_e(F)).has_value()) << d.str();
        EXPECT_EQ(std::vector<int64_t>({d.get("rowBalance"), d.get("kRowSplit"), d.get("kMTile"), d.get("kNTile"),
                                        d.get("kVecWidth"), d.get("kNnzTile"), d.get("smemColIdx")}),
                  std::vector<int64_t>({1, 0, 8, 32, 4, 64, 1}))
            << d.str();
    }
    for (int64_t F : {64, 126, 130})
        EXPECT_GT(gpu_spmm_expert_default(proteins(F)).get("kRowSplit"), 0) << gpu_spmm_expert_default(proteins(F)).str();
    EXPECT_EQ(gpu_spmm_expert_default(proteins(256)).get("rowBalance"), 3);
    EXPECT_EQ(gpu_spmm_expert_default(proteins(258)).get("rowBalance"), 3);
    // Below 8 features the ogbn-products twin runs on the relabeled graph; on skewed (split) graphs,
    // on rows of similar length and without statistics the rows stay in id order.
    EXPECT_EQ(gpu_spmm_expert_default(products(4)).get("rowBalance"), 3);
    EXPECT_EQ(gpu_spmm_expert_default(products(1)).get("rowBalance"), 3);
    EXPECT_EQ(gpu_spmm_expert_default(problem(32, 232965, 114615892, 48535, 1.9)).get("rowBalance"), 3);
    // Even F of 16..31 on skewed graphs too: 8 rows x 8 threads of 2-wide loads, ids staged,
    // segments of 256.
    for (int64_t F : {16, 30}) {
        const Problem p = problem(F, 232965, 114615892, 48535, 1.9);
        const ScheduleParams d = gpu_spmm_expert_default(p);
        EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
        EXPECT_EQ(std::vector<int64_t>({d.get("rowBalance"), d.get("kRowSplit"), d.get("kMTile"), d.get("kNTile"),
                                        d.get("kVecWidth"), d.get("smemColIdx")}),
                  std::vector<int64_t>({3, 256, 8, 8, 2, 1}))
            << d.str();
    }
    EXPECT_EQ(gpu_spmm_expert_default(problem(17, 232965, 114615892, 48535, 1.9)).get("rowBalance"), 0);
    for (const Problem &p : {problem(17, 232965, 114615892, 48535, 1.9),
                             problem(32, 2449029, 123718280, 120, 0.5),
                             Problem{plan_features(BinaryOp::CopyLhs, {32}, {32}), {}}})
        EXPECT_EQ(gpu_spmm_expert_default(p).get("rowBalance"), 0) << gpu_spmm_expert_default(p).str();
    // The balanced defaults lower to kernels that remap rows through row_order (src_order on the
    // relabeled graph), and compile to PTX.
    for (int64_t F : {1, 8, 16, 32, 65, 128}) {
        Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, F, gpu_spmm_expert_default(products(F)));
        EXPECT_FALSE(ext::find_loads(l.stmt, relabeled(F) ? "src_order" : "row_order").empty()) << F;
        EXPECT_NE(ptx_of(l).find(".entry"), std::string::npos) << F;
    }
}

TEST(GpuSpmmIR, SearchSpaceListsSourceTilesOnlyWhereRunsStayLong) {
    const auto &def = spmm_schedule("gpu_spmm");
    auto tiles = [&](int64_t F, int64_t rows, int64_t nnz) {
        Problem p{plan_features(BinaryOp::CopyLhs, {F}, {F}), {}};
        if (rows > 0) {
            p.stats.num_rows = p.stats.num_cols = rows;
            p.stats.nnz = nnz;
            p.stats.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
        }
        return def.space(p).knob("kSrcTile").choices;
    };
    // reddit (492 nonzeros a row over 232965 sources): runs of 69 / 138 nonzeros.
    EXPECT_EQ(tiles(4, 232965, 114615892), (std::vector<int64_t>{0, 32768, 65536}));
    // ogbn-products (51 over 2449029): 0.7 / 1.4, so none; 150 a row over 1M sources: only 65536.
    EXPECT_EQ(tiles(8, 2449029, 123718280), (std::vector<int64_t>{0}));
    EXPECT_EQ(tiles(1, 1000000, 150000000), (std::vector<int64_t>{0, 65536}));
    // Without statistics both; from F = 16 none.
    EXPECT_EQ(tiles(8, 0, 0), (std::vector<int64_t>{0, 32768, 65536}));
    EXPECT_EQ(tiles(16, 232965, 114615892), (std::vector<int64_t>{0}));
}

ScheduleParams with_src_tile(ScheduleParams p, int64_t tile) {
    p.values["kSrcTile"] = tile;
    return p;
}

TEST(GpuSpmmIR, SourceTilesReduceRunsAndCombineEachRowsListedRuns) {
    // Lanes and the register-tile form, with and without a further cut of the runs; mean reads the
    // degree from the CSR's row_ptr, sum does not.
    for (const ScheduleParams &base : {lanes_point(4, 1, 32), lanes_point(4, 1, 32, 1024), point(8, 4, 2, 32, 0, 256)})
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean}) {
            const int64_t F = base.get("kNnzLanes") > 1 ? 1 : 8;
            Lowered l = lower(SpmmSpec{BinaryOp::Mul, r}, F, with_src_tile(base, 32768), false);
            EXPECT_EQ(l.algo.src_tile, 32768);
            EXPECT_EQ(l.algo.segment_len, base.get("kRowSplit"));
            // The runs' results go to the partial buffer; rows gather them through seg_ids.
            EXPECT_FALSE(ext::find_stores(l.stmt, "spmm_partial*").empty()) << base.str();
            const auto seg_ids = ext::find_loads(l.stmt, "seg_ids");
            ASSERT_FALSE(seg_ids.empty()) << base.str();
            for (const auto &ld : ext::find_loads(l.stmt, "spmm_partial*")) {
                LetValues lets;
                l.stmt.accept(&lets);
                EXPECT_FALSE(ext::find_loads(Halide::Internal::Evaluate::make(lets.expand(ld.index)), "seg_ids").empty())
                    << "partial read without seg_ids: " << ld.index;
            }
            // Edge features are read by edge id, never by position.
            EXPECT_FALSE(ext::find_loads(l.stmt, "edge_ids").empty());
            EXPECT_EQ(ext::find_loads(l.stmt, "row_degree_ptr").empty(), r == ReduceOp::Sum) << base.str();
            EXPECT_NO_THROW(ptx_of(l)) << base.str();
        }
    // Tiles need the edge-id load: an algorithm built to use positions is refused.
    FeatureLayout layout = plan_features(BinaryOp::Mul, {1}, {1});
    SpmmAlgorithm a = build_spmm_algorithm(SpmmSpec{BinaryOp::Mul, ReduceOp::Sum}, layout, DType::F32, true);
    EXPECT_THROW(spmm_schedule("gpu_spmm").apply(a, with_src_tile(lanes_point(4, 1, 32), 32768)), ScheduleError);
}

TEST(GpuSpmmIR, SourceTileValidityAndDefaults) {
    const auto &def = spmm_schedule("gpu_spmm");
    Problem one{plan_features(BinaryOp::CopyLhs, {1}, {1}), {}};
    auto why = [&](const ScheduleParams &p, const Problem &pr) { return def.invalid_reason(p, pr).value_or(""); };
    EXPECT_FALSE(def.invalid_reason(with_src_tile(lanes_point(4, 1, 32), 32768), one).has_value());
    EXPECT_NE(why(with_src_tile(lanes_point(4, 1, 32), 3000), one).find("kSrcTile must be 0 or a power of two"),
              std::string::npos);
    EXPECT_NE(why(with_src_tile(lanes_point(4, 1, 32), 512), one).find("[1024, 2^30]"), std::string::npos);
    EXPECT_NE(why(with_src_tile(lanes_point(4, 1, 32, 0, 1), 32768), one).find("combined with kSrcTile"),
              std::string::npos);
    Problem arg = one;
    arg.order_sensitive = true;
    EXPECT_NE(why(with_src_tile(lanes_point(4, 1, 32), 32768), arg).find("max/min ties need row order"),
              std::string::npos);
    Problem wide{plan_features(BinaryOp::CopyLhs, {512}, {512}), {}};
    EXPECT_NE(why(with_src_tile(point(2, 32, 2, 64, 1), 65536), wide).find("exceeds 64 MiB"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(with_src_tile(point(2, 32, 2, 64, 1), 32768), wide).has_value());

    auto problem = [](int64_t F, int64_t rows, int64_t nnz, int64_t longest) {
        Problem p{plan_features(BinaryOp::CopyLhs, {F}, {F}), {}};
        p.stats.num_rows = p.stats.num_cols = rows;
        p.stats.nnz = nnz;
        p.stats.max_row_length = longest;
        p.stats.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
        return p;
    };
    // reddit and ogbn-proteins at F = 2..4 get tiles (at F = 1 copy_lhs runs on the relabeled graph);
    // ogbn-products (runs under one nonzero), F = 8, max/min and ahead-of-time kernels (no
    // statistics) do not.
    EXPECT_EQ(gpu_spmm_expert_default(problem(1, 232965, 114615892, 48535)).get("rowBalance"), 3);
    EXPECT_EQ(gpu_spmm_expert_default(problem(1, 132534, 79122504, 19166)).get("rowBalance"), 3);
    for (int64_t F : {2, 3, 4}) {
        const ScheduleParams reddit = gpu_spmm_expert_default(problem(F, 232965, 114615892, 48535));
        EXPECT_EQ(reddit.get("kSrcTile"), 32768) << F;
        EXPECT_EQ(reddit.get("kNnzLanes") * reddit.get("kNTile"), 16) << F;  // half a warp per run
        EXPECT_EQ(reddit.get("kRowSplit"), 0) << F;
        EXPECT_EQ(gpu_spmm_expert_default(problem(F, 132534, 79122504, 19166)).get("kSrcTile"), 32768) << F;
        EXPECT_EQ(gpu_spmm_expert_default(problem(F, 2449029, 123718280, 12047)).get("kSrcTile"), 0) << F;
    }
    EXPECT_EQ(gpu_spmm_expert_default(problem(8, 232965, 114615892, 48535)).get("kSrcTile"), 0);
    // An edge operand is read scattered in tile order: tiles only at F = 1.
    for (int64_t F : {1, 2, 4}) {
        Problem weighted = problem(F, 232965, 114615892, 48535);
        weighted.edge_operand = true;
        EXPECT_EQ(gpu_spmm_expert_default(weighted).get("kSrcTile"), F == 1 ? 32768 : 0) << F;
    }
    Problem reddit_max = problem(1, 232965, 114615892, 48535);
    reddit_max.order_sensitive = true;
    EXPECT_EQ(gpu_spmm_expert_default(reddit_max).get("kSrcTile"), 0);
    EXPECT_EQ(gpu_spmm_expert_default(one).get("kSrcTile"), 0);
    // spmm_problem (what the API, the kernels and the tuner use) carries the operator's flags: the
    // defaults of max/min never take tiles, those of an edge operand only at F = 1.
    const GraphStats reddit_stats = problem(1, 232965, 114615892, 48535).stats;
    for (int64_t F : {1, 2, 4}) {
        const FeatureLayout layout = plan_features(BinaryOp::Mul, {F}, {1});
        for (ReduceOp r : {ReduceOp::Max, ReduceOp::Min}) {
            const Problem pr = spmm_problem(SpmmSpec{BinaryOp::CopyLhs, r}, plan_features(BinaryOp::CopyLhs, {F}, {F}), reddit_stats);
            EXPECT_TRUE(pr.order_sensitive);
            EXPECT_EQ(gpu_spmm_expert_default(pr).get("kSrcTile"), 0) << reduce_op_name(r) << " F=" << F;
            EXPECT_FALSE(def.invalid_reason(gpu_spmm_expert_default(pr), pr).has_value());
        }
        const Problem weighted = spmm_problem(SpmmSpec{BinaryOp::Mul, ReduceOp::Sum}, layout, reddit_stats);
        EXPECT_TRUE(weighted.edge_operand);
        EXPECT_EQ(gpu_spmm_expert_default(weighted).get("kSrcTile"), F == 1 ? 32768 : 0) << "u_mul_e F=" << F;
        const Problem plain = spmm_problem(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Mean}, plan_features(BinaryOp::CopyLhs, {F}, {F}), reddit_stats);
        EXPECT_FALSE(plain.order_sensitive || plain.edge_operand);
        EXPECT_EQ(gpu_spmm_expert_default(plain).get("kSrcTile"), F == 1 ? 0 : 32768) << "copy_lhs mean F=" << F;
        EXPECT_EQ(gpu_spmm_expert_default(plain).get("rowBalance"), F == 1 ? 3 : 0) << "copy_lhs mean F=" << F;
    }
    for (const Problem &p : {problem(1, 232965, 114615892, 48535), problem(2, 132534, 79122504, 19166)})
        EXPECT_FALSE(def.invalid_reason(gpu_spmm_expert_default(p), p).has_value());
}

/// Loads of a buffer and guards (IfThenElse) inside the For loops whose names match a pattern.
struct LoopBody : Halide::Internal::IRVisitor {
    std::string pattern, buffer;
    int loops = 0, ifs = 0, loads = 0, depth = 0;
    using IRVisitor::visit;
    void visit(const Halide::Internal::For *op) override {
        const bool match = ext::name_matches(op->name, pattern);
        loops += match;
        depth += match;
        IRVisitor::visit(op);
        depth -= match;
    }
    void visit(const Halide::Internal::IfThenElse *op) override {
        ifs += depth > 0;
        IRVisitor::visit(op);
    }
    void visit(const Halide::Internal::Load *op) override {
        loads += depth > 0 && op->name == buffer;
        IRVisitor::visit(op);
    }
};

TEST(GpuSpmmIR, NnzUnrollIssuesItsStepsLoadsWithoutBranches) {
    // The unrolled lane loop of a sum holds U loads of col_idx per step and no branch between them:
    // SpeculateGuardedUpdates turned the guards Halide nests around the steps into selects. The
    // max reduction is not a sum: its steps stay guarded (and the kernel still compiles).
    for (int64_t F : {1, 8})
        for (int U : {2, 4}) {
            ScheduleParams p = lanes_point(4, static_cast<int>(std::min<int64_t>(F, 32)), static_cast<int>(32 / F));
            p.values["kNnzUnroll"] = U;
            for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
                Lowered l = lower(SpmmSpec{BinaryOp::CopyLhs, r}, F, p);
                int converted = -1;
                for (const auto &pass : l.algo.lowering_passes)
                    if (auto *s = dynamic_cast<const ext::SpeculateGuardedUpdates *>(pass.get())) converted = s->converted();
                ASSERT_GE(converted, 0) << "no SpeculateGuardedUpdates pass for " << p.str();
                LoopBody steady;
                steady.pattern = "*.koo";
                steady.buffer = "col_idx";
                l.stmt.accept(&steady);
                ASSERT_EQ(steady.loops, 1) << p.str();
                if (r == ReduceOp::Max) {
                    EXPECT_GE(steady.loads, U) << p.str();  // the value and its arg ids read col_idx
                    EXPECT_EQ(converted, 0);
                    EXPECT_GT(steady.ifs, 0);
                } else {
                    EXPECT_EQ(steady.loads, U) << p.str() << " " << reduce_op_name(r);
                    EXPECT_GE(converted, U - 1) << p.str();
                    EXPECT_EQ(steady.ifs, 0) << p.str() << " " << reduce_op_name(r);
                }
            }
        }
}

}  // namespace
}  // namespace gsparse

namespace gsparse {
namespace {

/// Whether any enclosing loop of an access belongs to a stage whose name contains `stage`.
bool inside_stage(const ext::AccessInfo &a, const std::string &stage) {
    for (const auto &loop : a.enclosing_loops)
        if (loop.find(stage) != std::string::npos) return true;
    return false;
}

TEST(GpuSpmmIR, RelabeledGraphGathersRelabeledSourcesAndStoresThroughTheOrder) {
    struct Case {
        SpmmSpec spec;
        int64_t F;
        ScheduleParams p;
    };
    ScheduleParams wide = point(2, 16, 1, 32, 1, 0, 3);
    wide.values["kVecWidth"] = 4;
    const Case cases[] = {
        {{BinaryOp::CopyLhs, ReduceOp::Sum}, 1, lanes_point(4, 1, 32, 0, 3)},
        {{BinaryOp::Mul, ReduceOp::Mean}, 8, lanes_point(8, 8, 2, 0, 3)},
        {{BinaryOp::CopyLhs, ReduceOp::Sum}, 64, wide},
        {{BinaryOp::Add, ReduceOp::Mean}, 47, point(4, 32, 1, 32, 1, 0, 3)},
        // Segments of the relabeled rows: the combining output stage stores through src_order.
        {{BinaryOp::Mul, ReduceOp::Sum}, 32, point(4, 16, 2, 16, 0, 256, 3)},
        {{BinaryOp::CopyLhs, ReduceOp::Mean}, 4, lanes_point(4, 4, 8, 1024, 3)},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.p.str() + " F=" + std::to_string(c.F) + " " + c.spec.name());
        Lowered l = lower(c.spec, c.F, c.p, false);
        ASSERT_TRUE(l.algo.relabeled);
        LetValues lets;
        l.stmt.accept(&lets);
        // The source features are read only by the stage that gathers them into the new order ...
        auto lhs_loads = ext::find_loads(l.stmt, "lhs");
        ASSERT_FALSE(lhs_loads.empty());
        for (const auto &ld : lhs_loads) EXPECT_TRUE(inside_stage(ld, "spmm_lhs_relabeled")) << ld.index;
        // ... which indexes them through src_order, while the rows gather from its result.
        EXPECT_FALSE(ext::find_loads(l.stmt, "src_order").empty());
        EXPECT_FALSE(ext::find_loads(l.stmt, "spmm_lhs_relabeled*").empty());
        // Rows read their own structure (the relabeled graph's) and store through src_order.
        for (const auto &ld : ext::find_loads(l.stmt, "row_ptr")) {
            auto through = ext::find_loads(Halide::Internal::Evaluate::make(lets.expand(ld.index)), "src_order");
            EXPECT_TRUE(through.empty()) << "row_ptr read through src_order: " << ld.index;
        }
        EXPECT_TRUE(ext::find_loads(l.stmt, "row_order").empty());
        auto stores = ext::find_stores(l.stmt, "spmm_out*");
        ASSERT_FALSE(stores.empty());
        for (const auto &s : stores) {
            auto inner = ext::find_loads(Halide::Internal::Evaluate::make(lets.expand(s.index)), "src_order");
            EXPECT_EQ(inner.size(), 1u) << "store index does not remap the row through src_order: " << s.index;
        }
        EXPECT_NE(ptx_of(l).find(".entry"), std::string::npos);
    }
}

TEST(GpuSpmmIR, RelabeledGraphValidity) {
    const auto &def = spmm_schedule("gpu_spmm");
    GraphStats square;
    square.num_rows = square.num_cols = 1000;
    square.nnz = 20000;
    GraphStats bipartite = square;
    bipartite.num_cols = 2000;
    const FeatureLayout layout = plan_features(BinaryOp::CopyLhs, {8}, {8});
    const ScheduleParams p = lanes_point(8, 8, 4, 0, 3);
    EXPECT_FALSE(def.invalid_reason(p, Problem{layout, square}).has_value());
    auto bip = def.invalid_reason(p, Problem{layout, bipartite});
    ASSERT_TRUE(bip.has_value());
    EXPECT_NE(bip->find("renumbers rows and sources together"), std::string::npos) << *bip;
    auto maxed = def.invalid_reason(p, Problem{layout, square, true});
    ASSERT_TRUE(maxed.has_value());
    EXPECT_NE(maxed->find("max/min"), std::string::npos) << *maxed;
    // Segments of the relabeled graph's rows are fine; source tiles are not (they order the edges).
    EXPECT_FALSE(def.invalid_reason(lanes_point(8, 8, 4, 256, 3), Problem{layout, square}).has_value());
    ScheduleParams tiled = lanes_point(8, 8, 4, 0, 3);
    tiled.values["kSrcTile"] = 1024;
    ASSERT_TRUE(def.invalid_reason(tiled, Problem{layout, square}).has_value());
    Problem copy_rhs = spmm_problem(SpmmSpec{BinaryOp::CopyRhs, ReduceOp::Sum}, layout, square);
    auto no_sources = def.invalid_reason(p, copy_rhs);
    ASSERT_TRUE(no_sources.has_value());
    EXPECT_NE(no_sources->find("copy_rhs"), std::string::npos) << *no_sources;
    auto four = def.invalid_reason(lanes_point(8, 8, 4, 0, 4), Problem{layout, square});
    ASSERT_TRUE(four.has_value());
    EXPECT_NE(four->find("0, 1, 2 or 3"), std::string::npos) << *four;
    // The space lists 3 only where it can be valid.
    auto choices = [&](const Problem &pr) { return def.space(pr).knob("rowBalance").choices; };
    EXPECT_EQ(choices(Problem{layout, square}), (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(choices(Problem{layout, bipartite}), (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(choices(Problem{layout, square, true}), (std::vector<int64_t>{0, 1, 2}));
    EXPECT_EQ(choices(copy_rhs), (std::vector<int64_t>{0, 1, 2}));
    // The algorithm itself refuses max/min and identity edge ids when ⊕ reads edges.
    SpmmAlgorithm maxa = build_spmm_algorithm(SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Max}, layout, DType::F32, false);
    EXPECT_THROW(relabel_sources(maxa), ScheduleError);
    SpmmAlgorithm ida = build_spmm_algorithm(SpmmSpec{BinaryOp::Mul, ReduceOp::Sum},
                                             plan_features(BinaryOp::Mul, {8}, {8}), DType::F32, true);
    EXPECT_THROW(relabel_sources(ida), ScheduleError);
}

/// The lowered statement with the numbers that make names unique dropped (Halide's $N, the _N of
/// Funcs built again, the CSE temporaries' tN): two lowerings of one schedule then read the same.
std::string stmt_without_suffixes(const Stmt &s) {
    std::string text = std::regex_replace(ext::stmt_text(s), std::regex("\\$[0-9]+|\\bt[0-9]+\\b|_[0-9]+(?=[_.]|\\b)"), "");
    // Halide spells a reduction variable k$x, or k_x where an earlier pipeline of the process took
    // the name: the same statement either way.
    std::replace(text.begin(), text.end(), '$', '_');
    return text;
}

TEST(GpuSpmmIR, NnzTileNamesOneKernelWithoutStagedIds) {
    // kNnzTile sizes only the shared tile of ids: without it, every value lowers to one statement.
    auto with_kt = [](ScheduleParams p, int64_t kt) {
        p.values["kNnzTile"] = kt;
        return p;
    };
    for (const ScheduleParams &p : {point(4, 16, 2, 16, 0), point(8, 8, 1, 16, 0, 1024), point(2, 32, 1, 16, 0, 0, 1),
                                    lanes_point(4, 8, 4), lanes_point(8, 4, 8, 256, 3)}) {
        const std::string first = stmt_without_suffixes(lower(SpmmSpec{}, 32, with_kt(p, 16)).stmt);
        EXPECT_EQ(stmt_without_suffixes(lower(SpmmSpec{}, 32, with_kt(p, 128)).stmt), first) << p.str();
        const ScheduleParams c = spmm_schedule("gpu_spmm").canonical(with_kt(p, 64));
        EXPECT_EQ(c, with_kt(p, 16)) << p.str();
    }
    // With staged ids it is the tile's depth: the kernels differ, and the point is its own canonical form.
    const ScheduleParams staged = point(4, 16, 1, 64, 1);
    EXPECT_NE(stmt_without_suffixes(lower(SpmmSpec{}, 32, staged).stmt),
              stmt_without_suffixes(lower(SpmmSpec{}, 32, with_kt(staged, 128)).stmt));
    EXPECT_EQ(spmm_schedule("gpu_spmm").canonical(staged), staged);
}

TEST(GpuSpmmIR, CanonicalPointsOfTheSpaceAreValidAndDistinctKernels) {
    const auto &def = spmm_schedule("gpu_spmm");
    const GraphStats stats = square_stats(232965, 114615892, 21657, 1.6);
    for (int64_t F : {8, 32, 128}) {
        const Problem pr{plan_features(BinaryOp::CopyLhs, {F}, {F}), stats};
        const ScheduleSpace space = def.space(pr);
        size_t valid = 0, canonical = 0;
        std::set<ScheduleParams> forms;
        ScheduleParams p;
        for (size_t i = 0; i < space.size(); i++) {
            space.at(i, p);
            if (def.invalid_reason(p, pr)) continue;
            valid++;
            const ScheduleParams c = def.canonical(p);
            EXPECT_FALSE(def.invalid_reason(c, pr).has_value()) << p.str() << " -> " << c.str();
            EXPECT_EQ(def.canonical(c), c) << c.str();
            if (c == p) canonical++;
            forms.insert(c);
        }
        // Every form is itself a point of the space, so the canonical points are exactly the forms.
        EXPECT_EQ(forms.size(), canonical) << "F = " << F;
        EXPECT_LT(2 * canonical, valid) << "F = " << F << ": " << canonical << " of " << valid;
    }
}

}  // namespace
}  // namespace gsparse

namespace gsparse {
namespace {

/// A point of the row-tail form: rows of M x T threads of V-wide loads, split at `split`.
ScheduleParams tails_point(int M, int T, int V, int split, int R = 1) {
    ScheduleParams p = point(M, T, R, 16, 0, split);
    p.values["kVecWidth"] = V;
    p.values["rowTails"] = 1;
    return p;
}

TEST(GpuSpmmIR, RowTailsStoreRowsThenAddTailsAtomicallyWithoutAPartialBuffer) {
    // Two kernels: the rows (a loop over the row's first nonzeros, bounded by max_degree, which the
    // run binds to kRowSplit) and the tails (each tail's loop at most kRowSplit long), whose stores
    // into the output are atomic adds. No partial buffer and no combine stage.
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean})
        for (auto [F, p] : {std::pair{int64_t(128), tails_point(4, 32, 4, 256)}, {int64_t(7), tails_point(16, 2, 1, 1024, 2)}}) {
            const SpmmSpec spec{BinaryOp::Mul, r};
            Lowered l = lower(spec, F, p, false);
            int blocks = 0;
            for (const auto &loop : ext::list_loops(l.stmt, "*"))
                blocks += loop.for_type == Halide::Internal::ForType::GPUBlock && loop.name.find("__block_id_x") != std::string::npos;
            EXPECT_EQ(blocks, 2) << p.str();
            EXPECT_TRUE(ext::find_allocations(l.stmt, "spmm_partial*").empty()) << p.str();
            EXPECT_TRUE(ext::list_loops(l.stmt, "spmm_comb*").empty()) << p.str();
            EXPECT_EQ(ext::list_loops(l.stmt, "spmm_acc*.s1.k*").size(), 1u) << p.str();
            const auto tail_loops = ext::list_loops(l.stmt, "spmm_tail_acc*.s1.tk*");
            ASSERT_FALSE(tail_loops.empty()) << p.str();
            for (const auto &loop : tail_loops) EXPECT_EQ(loop.extent_upper_bound(), p.get("kRowSplit")) << p.str();
            const std::string ptx = ptx_of(l);
            EXPECT_TRUE(ptx.find("red.global.add.f32") != std::string::npos ||
                        ptx.find("atom.global.add.f32") != std::string::npos) << p.str();
            EXPECT_EQ(ptx.find("atom.global.cas"), std::string::npos) << p.str();
        }
}

TEST(GpuSpmmIR, RowTailsValidity) {
    const auto &def = spmm_schedule("gpu_spmm");
    const Problem sum{plan_features(BinaryOp::CopyLhs, {128}, {128}), {}};
    Problem max = sum;
    max.order_sensitive = true;
    auto why = [&](const ScheduleParams &p, const Problem &pr) { return def.invalid_reason(p, pr).value_or(""); };
    EXPECT_EQ(why(tails_point(4, 32, 4, 256), sum), "");
    EXPECT_NE(why(tails_point(4, 32, 4, 0), sum).find("needs kRowSplit > 0"), std::string::npos);
    EXPECT_NE(why(tails_point(4, 32, 4, 256), max).find("sum and mean only"), std::string::npos);
    ScheduleParams staged = tails_point(4, 32, 4, 256);
    staged.values["smemColIdx"] = 1;
    EXPECT_NE(why(staged, sum).find("smemColIdx"), std::string::npos);
    ScheduleParams lanes = lanes_point(4, 4, 8, 256);
    lanes.values["rowTails"] = 1;
    EXPECT_NE(why(lanes, sum).find("kNnzLanes = 1"), std::string::npos);
    ScheduleParams ordered = tails_point(4, 32, 4, 256);
    ordered.values["rowBalance"] = 1;
    EXPECT_FALSE(why(ordered, sum).empty());
    ScheduleParams two = tails_point(4, 32, 4, 256);
    two.values["rowTails"] = 2;
    EXPECT_NE(why(two, sum).find("rowTails must be 0 or 1"), std::string::npos);
    // Feature lengths whose groups have no divisor from 8 to 32 would leave the tails' kernel fewer
    // than 8 feature threads (F = 47: one): the form is invalid there, valid where a divisor exists.
    for (int64_t F : {47, 94, 74}) {
        const Problem odd{plan_features(BinaryOp::CopyLhs, {F}, {F}), {}};
        EXPECT_NE(why(tails_point(4, 8, 1, 256), odd).find("feature thread(s)"), std::string::npos) << F;
    }
    for (int64_t F : {100, 46, 62}) {
        const Problem odd{plan_features(BinaryOp::CopyLhs, {F}, {F}), {}};
        EXPECT_EQ(why(tails_point(4, 8, 1, 256), odd), "") << F;
    }
    // The space offers the form for sum and mean, never for max / min.
    EXPECT_EQ(def.space(sum).knob("rowTails").choices, (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(def.space(max).knob("rowTails").choices, (std::vector<int64_t>{0}));
}

TEST(GpuSpmmIR, DefaultsThatSplitRowsTakeTheRowTailFormWhereValid) {
    // A heavy-tailed graph: from F = 32 every default that splits rows for sum or mean, with one
    // thread per feature group and direct ids, runs the row-tail form; max and smaller F keep the
    // combined segments.
    const auto &def = spmm_schedule("gpu_spmm");
    const GraphStats stats = square_stats(250000, 4000000, 21560, 4.97, 12.9, 194);  // cl-h-4m
    int tails = 0;
    for (int64_t F : {1, 8, 32, 47, 64, 128, 256})
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
            const SpmmSpec spec{BinaryOp::CopyLhs, r};
            const Problem p = spmm_problem(spec, plan_features(spec.op, {F}, {F}), stats, DType::F32);
            const ScheduleParams d = def.default_params(p);
            EXPECT_FALSE(def.invalid_reason(d, p).has_value()) << d.str();
            ScheduleParams as_tails = d;
            as_tails.values["rowTails"] = 1;
            const bool eligible = F >= 32 && d.get("kRowSplit") > 0 && !def.invalid_reason(as_tails, p);
            EXPECT_EQ(d.get_or("rowTails", 0), eligible ? 1 : 0) << F << " " << reduce_op_name(r) << " " << d.str();
            if (r == ReduceOp::Max || F == 47) {
                EXPECT_EQ(d.get_or("rowTails", 0), 0);
            }
            // Row tails cut rows after 128 nonzeros at every F that takes them (32 and up).
            if (d.get_or("rowTails", 0) != 0) {
                EXPECT_EQ(d.get("kRowSplit"), 128) << F << " " << d.str();
            }
            tails += d.get_or("rowTails", 0) != 0;
        }
    EXPECT_GT(tails, 0);
}

}  // namespace
}  // namespace gsparse
