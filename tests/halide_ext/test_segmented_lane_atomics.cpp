// SegmentedLaneAtomics on hand-built statements of the form the warp-lane schedule of g-SpMM by
// nonzeros lowers to: a serial step loop inside the thread-x loop of 32 lanes whose body adds a
// lane's value atomically at its row. The loop is rewritten (segmented scan over the lanes, carried
// row, three guarded atomic adds) where every lane reaches the adds; anything else is left alone.
#include <gtest/gtest.h>

#include "halide_ext/ir_inspect.h"
#include "halide_ext/segmented_lane_atomics.h"
#include "support/text_count.h"

namespace gsparse::ext {
namespace {

using namespace Halide;
using namespace Halide::Internal;

const std::string kLane = ".__thread_id_x";

struct Kernel {
    int lanes = 32;                 ///< extent of the thread-x loop
    ForType lane_loop = ForType::GPUThread;
    std::string step = "out.s1.p$y";
    Type value = Float(32);
    Type index = Int(32);
    std::string guard = "";         ///< "", "warp" (the same for the whole warp) or "lane"
    bool nested_loop = false;       ///< the add inside a loop of its own
};

Expr load(Type t, const std::string &buf, Expr index) {
    return Load::make(t, buf, std::move(index), Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}

/// gpu_thread (.__thread_id_x, 0, lanes) { for (step, 0, 4) { atomic { out[k] = out[k] + x[e] } } }
/// with e = 32 step + lane and k = dst[e] (as int32 or int64).
Stmt kernel(const Kernel &c) {
    Expr lane = Variable::make(Int(32), kLane);
    Expr step = Variable::make(Int(32), c.step);
    Expr e = step * 32 + lane;
    Expr key = Variable::make(c.index, "key");
    Expr v = load(c.value, "x", e);
    Stmt add = Atomic::make("out", "",
                            Store::make("out", load(c.value, "out", key) + v, key, Parameter(), const_true(),
                                        ModulusRemainder()));
    Expr row = load(Int(32), "dst", e);
    Stmt body = LetStmt::make("key", c.index == Int(32) ? row : cast(c.index, row), add);
    if (c.nested_loop) body = For::make("inner", 0, 2, ForType::Serial, DeviceAPI::None, body);
    if (c.guard == "warp") body = IfThenElse::make(Variable::make(Int(32), ".__thread_id_y") < 7, body);
    if (c.guard == "lane") {
        // A condition on a Let bound from the lane: the pass follows the Let.
        body = IfThenElse::make(Variable::make(Int(32), "position") < 100, body);
        body = LetStmt::make("position", e, body);
    }
    Stmt loop = For::make(c.step, 0, 4, ForType::Serial, DeviceAPI::None, body);
    return For::make(kLane, 0, c.lanes, c.lane_loop,
                     c.lane_loop == ForType::GPUThread ? DeviceAPI::CUDA : DeviceAPI::None, loop);
}

TEST(SegmentedLaneAtomics, StepLoopBecomesASegmentedScanOverTheLanes) {
    for (const Kernel &c : {Kernel{}, Kernel{.guard = "warp"}, Kernel{.index = Int(64)}}) {
        SegmentedLaneAtomics pass("p$y");
        Stmt s = pass.mutate(kernel(c));
        const std::string text = stmt_text(s);
        EXPECT_EQ(pass.rewritten(), 1) << text;
        // Per step: the previous lane's address, five steps of sum and flag, the next lane's
        // address, lane 31's address and sum; an int64 address as two 32-bit halves.
        const size_t words = c.index == Int(64) ? 2 : 1;
        EXPECT_EQ(count_calls(s, "llvm.nvvm.shfl.sync.up.f32"), 5u) << text;
        EXPECT_EQ(count_calls(s, "llvm.nvvm.shfl.sync.up.i32"), words + 5) << text;
        EXPECT_EQ(count_calls(s, "llvm.nvvm.shfl.sync.down.i32"), words) << text;
        EXPECT_EQ(count_calls(s, "llvm.nvvm.shfl.sync.idx*"), words + 1) << text;
        // The carried row's flush where lane 0 starts another row, the last lane of each run, and
        // the carried row after the loop; the carried row and sum in one-element allocations.
        EXPECT_EQ(test::count_of(text, "atomic"), 3u) << text;
        EXPECT_EQ(test::count_of(text, "allocate carry_index$"), 1u) << text;
        EXPECT_EQ(test::count_of(text, "allocate carry_sum$"), 1u) << text;
        EXPECT_EQ(list_loops(s).size(), 2u) << text;  // the lane loop and the step loop stay
    }
}

TEST(SegmentedLaneAtomics, LoopsWhereLanesCouldDivergeOrOtherShapesAreLeftAlone) {
    for (const Kernel &c : {Kernel{.lanes = 16},                        // not a warp of lanes
                            Kernel{.lane_loop = ForType::Serial},       // no GPU lanes
                            Kernel{.step = "out.s1.p$x"},               // another loop
                            Kernel{.value = Float(64)},                 // 64-bit values: no shuffle
                            Kernel{.guard = "lane"},                    // lanes may skip the adds
                            Kernel{.nested_loop = true}}) {             // adds in a loop of their own
        SegmentedLaneAtomics pass("p$y");
        Stmt in = kernel(c);
        Stmt out = pass.mutate(in);
        EXPECT_EQ(pass.rewritten(), 0) << stmt_text(in);
        EXPECT_EQ(count_calls(out, "llvm.nvvm.shfl.sync*"), 0u) << stmt_text(out);
    }
}

}  // namespace
}  // namespace gsparse::ext
