// ButterflyLaneReductions on hand-built statements in the form Halide 14's warp-shuffle lowering
// gives a lane combine: the serial gather loop becomes log2(L) butterfly shuffles when it covers the
// whole shuffle segment and updates one accumulator with +, min or max; other loops are left alone.
#include <gtest/gtest.h>

#include "halide_ext/butterfly_lane_reductions.h"
#include "halide_ext/ir_inspect.h"

namespace gsparse::ext {
namespace {

using namespace Halide;
using namespace Halide::Internal;

/// clamp operand of a shuffle whose segments are `width` lanes.
int clamp_for(int width) { return ((31 & ~(width - 1)) << 8) | 31; }

struct Loop {
    int extent = 8;
    int segment = 8;
    std::string reduce = "+";
    bool index_uses_loop = false;
    bool guarded = true;
};

/// for (rl, 0, L) { let t = shfl.sync.idx(-1, v[0], rl, clamp); if (lane < 1) acc[0] = acc[0] OP t }
Stmt gather_loop(const Loop &c) {
    Expr rl = Variable::make(Int(32), "rl");
    Expr v = Load::make(Float(32), "v", 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    Expr shfl = Call::make(Float(32), "llvm.nvvm.shfl.sync.idx.f32", {-1, v, rl, clamp_for(c.segment)},
                           Call::PureExtern);
    Expr t = Variable::make(Float(32), "t");
    Expr index = c.index_uses_loop ? rl : Expr(0);
    Expr acc = Load::make(Float(32), "acc", index, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    Expr value = c.reduce == "+" ? acc + t : c.reduce == "max" ? max(acc, t) : acc * t;
    Stmt store = Store::make("acc", value, index, Parameter(), const_true(), ModulusRemainder());
    Stmt body = c.guarded ? IfThenElse::make(Variable::make(Int(32), "lane") < 1, store) : store;
    return For::make("rl", 0, c.extent, ForType::Serial, DeviceAPI::None, LetStmt::make("t", shfl, body));
}

TEST(ButterflyLaneReductions, GatherLoopBecomesButterfly) {
    for (int L : {2, 4, 8, 16, 32}) {
        ButterflyLaneReductions pass;
        Stmt s = pass.mutate(gather_loop({.extent = L, .segment = L}));
        EXPECT_EQ(pass.rewritten(), 1) << L;
        EXPECT_TRUE(list_loops(s).empty()) << stmt_text(s);
        EXPECT_EQ(count_calls(s, "llvm.nvvm.shfl.sync.idx*"), 0u);
        auto bfly = find_calls(s, "llvm.nvvm.shfl.sync.bfly.f32");
        ASSERT_EQ(bfly.size(), static_cast<size_t>(__builtin_ctz(L))) << stmt_text(s);
        // Offsets L/2, L/4, ..., 1: partners stay within the L-lane group.
        int offset = L / 2;
        for (const auto &call : bfly) {
            EXPECT_EQ(*as_const_int(call.args[2]), offset);
            offset /= 2;
        }
        // One guarded update of the accumulator with the group total.
        auto stores = find_stores(s, "acc");
        ASSERT_EQ(stores.size(), 1u);
        EXPECT_NE(stmt_text(s).find("if ("), std::string::npos);
    }
}

TEST(ButterflyLaneReductions, MaxKeepsItsOperator) {
    ButterflyLaneReductions pass;
    Stmt s = pass.mutate(gather_loop({.reduce = "max"}));
    EXPECT_EQ(pass.rewritten(), 1);
    EXPECT_EQ(count_calls(s, "llvm.nvvm.shfl.sync.bfly.f32"), 3u);
    EXPECT_NE(stmt_text(s).find("max("), std::string::npos) << stmt_text(s);
}

TEST(ButterflyLaneReductions, OtherLoopsAreLeftAlone) {
    for (const Loop &c : {Loop{.extent = 8, .segment = 32},     // a part of the segment only
                          Loop{.extent = 6, .segment = 8},      // not a power of two
                          Loop{.reduce = "*"},                  // not an operator it knows
                          Loop{.index_uses_loop = true}}) {     // one accumulator per lane
        ButterflyLaneReductions pass;
        Stmt in = gather_loop(c);
        Stmt out = pass.mutate(in);
        EXPECT_EQ(pass.rewritten(), 0) << stmt_text(in);
        EXPECT_TRUE(out.same_as(in));
    }
    // Unguarded updates are matched too.
    ButterflyLaneReductions pass;
    pass.mutate(gather_loop({.guarded = false}));
    EXPECT_EQ(pass.rewritten(), 1);
}

}  // namespace
}  // namespace gsparse::ext
