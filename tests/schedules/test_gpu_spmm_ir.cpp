// gpu_spmm without a GPU: IR tests on the lowered statement (shared tile size, one shared allocation
// per kernel, block-uniform barriers, register tile, balancedIdx loads) and PTX emission for a grid
// of schedule points.
#include <gtest/gtest.h>

#include <map>

#include "halide_ext/ir_inspect.h"
#include "ops/spmm_algorithm.h"
#include "runtime/spmm_kernel.h"
#include "runtime/target.h"
#include "schedules/schedule.h"

namespace gsparse {
namespace {

using Halide::MemoryType;
using Halide::Internal::Stmt;

struct Lowered {
    SpmmAlgorithm algo;
    Stmt stmt;
};

Lowered lower(const SpmmSpec &spec, int64_t F, const ScheduleParams &p, bool identity_edge_ids = true) {
    Lowered l;
    FeatureLayout layout = plan_features(spec.op, {F}, {F});
    const SpmmScheduleDef &def = spmm_schedule("gpu_spmm");
    check_schedule(def, p, Problem{layout, {}});
    l.algo = build_spmm_algorithm(spec, layout, DType::F32, identity_edge_ids);
    def.apply(l.algo, p);
    Halide::Pipeline pipeline(l.algo.out);
    for (const auto &pass : l.algo.lowering_passes) pipeline.add_custom_lowering_pass(pass.get(), nullptr);
    l.stmt = ext::lowered_stmt(pipeline, l.algo.arguments(), jit_target(Device::CUDA));
    return l;
}

ScheduleParams point(int M, int T, int R, int KT, int smem, int split = 0, int balance = 0) {
    return ScheduleParams{"gpu_spmm",
                          {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", KT}, {"smemColIdx", smem},
                           {"kRowSplit", split}, {"rowBalance", balance}}};
}

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
        EXPECT_EQ(*acc[0].constant_elements() / (M * T), R);
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
    for (int64_t F : {1, 8, 47, 128}) {
        for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Min}) {
            SpmmSpec spec{BinaryOp::Mul, r};
            FeatureLayout layout = plan_features(spec.op, {F}, {F});
            Problem problem{layout, {}};
            ScheduleSpace space = def.space(problem);
            std::vector<ScheduleParams> valid;
            for (size_t i = 0; i < space.size(); i++)
                if (!def.invalid_reason(space.at(i), problem)) valid.push_back(space.at(i));
            ASSERT_FALSE(valid.empty());
            for (size_t n = 0; n < 6; n++) {
                SpmmKernelKey key{spec, layout, DType::F32, false, valid[n * valid.size() / 6], Device::CUDA};
                EXPECT_NO_THROW(SpmmKernel{key}) << key.str();
            }
        }
    }
}

TEST(GpuSpmmIR, InvalidPointsAreRejectedWithAReason) {
    const auto &def = spmm_schedule("gpu_spmm");
    Problem problem{plan_features(BinaryOp::CopyLhs, {16}, {16}), {}};
    Problem wide{plan_features(BinaryOp::CopyLhs, {128}, {128}), {}};
    auto why = [&](const ScheduleParams &p) { return def.invalid_reason(p, problem).value_or(""); };
    EXPECT_NE(why(point(32, 64, 1, 32, 1)).find("exceeds the innermost feature extent"), std::string::npos);
    EXPECT_NE(def.invalid_reason(point(32, 64, 1, 32, 1), wide).value_or("").find("1024"), std::string::npos);
    EXPECT_NE(why(point(1, 16, 1, 32, 1)).find("less than a warp"), std::string::npos);
    EXPECT_NE(why(point(4, 16, 1, 24, 1)).find("power of two"), std::string::npos);
    EXPECT_NE(why(point(32, 16, 1, 512, 1)).find("48 KiB"), std::string::npos);
    EXPECT_NE(why(point(4, 16, 1, 32, 1, 1024, 1)).find("kRowSplit"), std::string::npos);
    EXPECT_FALSE(def.invalid_reason(def.default_params(problem), problem).has_value());
}

}  // namespace
}  // namespace gsparse
