// The IR queries of halide_ext/ir_inspect.h, on hand-built Stmts and on lowered pipelines.
#include <gtest/gtest.h>

#include "halide_ext/ir_inspect.h"

namespace gsparse {
namespace {

using namespace Halide;
using namespace Halide::Internal;

Stmt barrier() {
    return Evaluate::make(Call::make(Int(32), Call::gpu_thread_barrier, {Expr(0)}, Call::Intrinsic));
}

TEST(IrInspect, NameGlobs) {
    EXPECT_TRUE(ext::name_matches("f.s0.x.__thread_id_x", ext::kThreadIdPattern));
    EXPECT_FALSE(ext::name_matches("f.s0.x.__block_id_x", ext::kThreadIdPattern));
    EXPECT_TRUE(ext::name_matches("nbr", "nbr"));
    EXPECT_FALSE(ext::name_matches("nbr$2", "nbr"));
    EXPECT_TRUE(ext::name_matches("acc.s1.k$x.ko.rebased", "*.ko*"));
}

TEST(IrInspect, BarriersUnderThreadDependentConditions) {
    Expr tid = Variable::make(Int(32), "f.s0.x.__thread_id_x");
    Expr bid = Variable::make(Int(32), "f.s0.y.__block_id_y");
    Expr n = Variable::make(Int(32), "n");
    // 1: block-uniform condition; 2: thread-dependent condition; 3: through a LetStmt bound from
    // the thread id; 4: in the else branch of a thread-dependent condition; 5: in a loop whose
    // extent depends on the thread id.
    Stmt s = Block::make({
        IfThenElse::make(bid < n, barrier()),
        IfThenElse::make(tid < n, barrier()),
        LetStmt::make("t", tid * 2, IfThenElse::make(Variable::make(Int(32), "t") < n, barrier())),
        IfThenElse::make(tid == 0, Evaluate::make(0), barrier()),
        For::make("k", 0, tid + 1, ForType::Serial, DeviceAPI::None, barrier()),
    });
    s = For::make("f.s0.x.__thread_id_x", 0, 32, ForType::GPUThread, DeviceAPI::CUDA, s);
    auto calls = ext::find_calls(s, "gpu_thread_barrier");
    ASSERT_EQ(calls.size(), 5u);
    EXPECT_FALSE(calls[0].under_thread_dependent_condition);
    EXPECT_TRUE(calls[1].under_thread_dependent_condition);
    EXPECT_TRUE(calls[2].under_thread_dependent_condition);
    EXPECT_TRUE(calls[3].under_thread_dependent_condition);
    EXPECT_FALSE(calls[4].under_thread_dependent_condition);
    EXPECT_TRUE(calls[4].under_thread_dependent_loop);
    EXPECT_FALSE(calls[0].under_thread_dependent_loop);
    ASSERT_EQ(calls[3].enclosing_conditions.size(), 1u);
    EXPECT_TRUE(equal(calls[3].enclosing_conditions[0], !(tid == 0)));
    EXPECT_EQ(calls[4].enclosing_loops, (std::vector<std::string>{"f.s0.x.__thread_id_x", "k"}));
    EXPECT_EQ(ext::count_calls(s, "gpu_thread_barrier"), 5u);
    // The let-bound name goes out of scope with its LetStmt.
    Stmt after = Block::make(LetStmt::make("t", tid, Evaluate::make(0)),
                             IfThenElse::make(Variable::make(Int(32), "t") < n, barrier()));
    EXPECT_FALSE(ext::find_calls(after, "gpu_thread_barrier")[0].under_thread_dependent_condition);
}

TEST(IrInspect, AllocationsLoopsLoadsAndStores) {
    Expr x = Variable::make(Int(32), "x");
    Stmt store = Store::make("tile", Load::make(Float(32), "in", x * 2, Buffer<>(), Parameter(), const_true(), ModulusRemainder()),
                             x, Parameter(), const_true(), ModulusRemainder());
    Stmt loop = For::make("x", 0, Variable::make(Int(32), "e"), ForType::Serial, DeviceAPI::None, store);
    Stmt s = LetStmt::make("e", min(Variable::make(Int(32), "n"), 16),
                           Allocate::make("tile", Float(32), MemoryType::GPUShared,
                                          {Variable::make(Int(32), "e"), 4}, const_true(), loop));
    s = For::make("b", 0, 10, ForType::GPUBlock, DeviceAPI::CUDA, s);

    auto allocs = ext::find_allocations(s, "tile");
    ASSERT_EQ(allocs.size(), 1u);
    EXPECT_EQ(allocs[0].memory_type, MemoryType::GPUShared);
    EXPECT_EQ(allocs[0].type, Float(32));
    EXPECT_FALSE(allocs[0].constant_extents().has_value());
    EXPECT_EQ(allocs[0].extent_upper_bounds(), (std::vector<int64_t>{16, 4}));
    EXPECT_EQ(allocs[0].elements_upper_bound(), 64);
    EXPECT_EQ(allocs[0].enclosing_loops, (std::vector<std::string>{"b"}));
    EXPECT_TRUE(ext::find_allocations(s, "other").empty());

    auto loops = ext::list_loops(s);
    ASSERT_EQ(loops.size(), 2u);
    EXPECT_EQ(loops[0].name, "b");
    EXPECT_EQ(loops[0].for_type, ForType::GPUBlock);
    EXPECT_EQ(loops[0].constant_extent(), 10);
    EXPECT_EQ(loops[1].name, "x");
    EXPECT_EQ(loops[1].depth, 1);
    EXPECT_FALSE(loops[1].constant_extent().has_value());
    EXPECT_EQ(loops[1].extent_upper_bound(), 16);
    EXPECT_EQ(ext::list_loops(s, "x").size(), 1u);

    auto loads = ext::find_loads(s, "in");
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_TRUE(equal(loads[0].index, x * 2));
    EXPECT_EQ(loads[0].enclosing_loops, (std::vector<std::string>{"b", "x"}));
    auto stores = ext::find_stores(s, "tile");
    ASSERT_EQ(stores.size(), 1u);
    EXPECT_EQ(stores[0].type, Float(32));
    EXPECT_TRUE(ext::find_loads(s, "tile").empty());
}

TEST(IrInspect, LoweredStmtOfAPipeline) {
    ImageParam in(Float(32), 1, "in");
    Var x("x"), xo("xo"), xi("xi");
    Func g("g"), h("h");
    g(x) = in(x) * 2.0f;
    h(x) = g(x) + g(x + 1);
    h.split(x, xo, xi, 8);
    g.compute_at(h, xo);
    Pipeline p(h);
    Stmt s = ext::lowered_stmt(p, get_host_target());
    ASSERT_TRUE(s.defined());
    // g is computed per tile of 8 outputs: 9 values.
    auto allocs = ext::find_allocations(s, g.name());
    ASSERT_EQ(allocs.size(), 1u) << ext::stmt_text(s);
    EXPECT_EQ(allocs[0].elements_upper_bound(), 9);
    EXPECT_FALSE(ext::list_loops(s, h.name() + ".s0.x.xo").empty());
    EXPECT_FALSE(ext::find_loads(s, "in").empty());
    EXPECT_TRUE(ext::expr_uses_var_matching(Variable::make(Int(32), "a.__thread_id_y") + 1, ext::kThreadIdPattern));

    // The pipeline passed in keeps no recording pass and still compiles and runs.
    EXPECT_TRUE(p.custom_lowering_passes().empty());
    Buffer<float> b(20);
    for (int i = 0; i < 20; i++) b(i) = static_cast<float>(i);
    in.set(b);
    Buffer<float> out = p.realize({16});
    for (int i = 0; i < 16; i++) EXPECT_EQ(out(i), 2.0f * i + 2.0f * (i + 1));
}

TEST(IrInspect, LoweredStmtSeesThePipelinesOwnPasses) {
    // A pass of the pipeline that renames nothing but counts its calls; the recorder runs after it.
    struct Counter : public IRMutator {
        int calls = 0;
        using IRMutator::mutate;
        Stmt mutate(const Stmt &s) override {
            calls++;
            return s;
        }
    };
    Func f("f");
    Var x("x");
    f(x) = x;
    Pipeline p(f);
    Counter counter;
    p.add_custom_lowering_pass(&counter, [] {});
    Stmt s = ext::lowered_stmt(p, {}, get_host_target());
    EXPECT_TRUE(s.defined());
    EXPECT_EQ(counter.calls, 1);
    EXPECT_EQ(p.custom_lowering_passes().size(), 1u);
}

}  // namespace
}  // namespace gsparse
