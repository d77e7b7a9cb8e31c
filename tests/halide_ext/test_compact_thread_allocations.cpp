// CompactThreadAllocations on hand-built kernel statements: a thread's copy of a block-level
// register tile indexed by the thread's offset plus constants shrinks to the constants' span with
// constant indices; allocations indexed by a serial loop, by loaded values, used as handles, or in
// shared or host memory are left as they are.
#include <gtest/gtest.h>

#include "halide_ext/compact_thread_allocations.h"
#include "halide_ext/ir_inspect.h"

namespace gsparse::ext {
namespace {

using namespace Halide;
using namespace Halide::Internal;

const Expr tx = Variable::make(Int(32), "t.__thread_id_x");
const Expr ty = Variable::make(Int(32), "t.__thread_id_y");

/// The thread's start in a 4 x 64 block tile, widened as Halide 14 indexes with large buffers:
/// int64(ty) * 64 + int64(tx * 2 + offset).
Expr start(int offset) {
    return cast(Int(64), ty) * make_const(Int(64), 64) + cast(Int(64), tx * 2 + offset);
}

Stmt store(const std::string &name, const Expr &index, int lanes) {
    Expr value = Load::make(Float(32, lanes), name, index, Buffer<>(), Parameter(), const_true(lanes),
                            ModulusRemainder());
    return Store::make(name, value + make_const(Float(32, lanes), 1.0), index, Parameter(), const_true(lanes),
                       ModulusRemainder());
}

Expr ramp2(const Expr &base) { return Ramp::make(base, make_const(base.type(), 1), 2); }

/// Two vector accumulations per thread at offsets 0 and 32 (through Lets, as lowering leaves them),
/// in thread loops under a block loop, around an allocation of the whole 4 x 64 tile.
Stmt kernel(const std::string &name, MemoryType m, const Stmt &threads_body) {
    Stmt threads = For::make("t.__thread_id_x", 0, 16, ForType::GPUThread, DeviceAPI::CUDA, threads_body);
    threads = For::make("t.__thread_id_y", 0, 4, ForType::GPUThread, DeviceAPI::CUDA, threads);
    Stmt a = Allocate::make(name, Float(32), m, {256}, const_true(), threads);
    return For::make("b.__block_id_x", 0, 16, ForType::GPUBlock, DeviceAPI::CUDA, a);
}

Stmt two_outputs(const std::string &name) {
    Stmt body = Block::make(store(name, ramp2(Variable::make(Int(64), "i0")), 2),
                            store(name, ramp2(Variable::make(Int(64), "i1")), 2));
    return LetStmt::make("i0", start(0), LetStmt::make("i1", start(32), body));
}

TEST(CompactThreadAllocations, ThreadOffsetPlusConstantsShrinksToTheSpan) {
    CompactThreadAllocations pass;
    Stmt s = pass.mutate(kernel("acc", MemoryType::Register, two_outputs("acc")));
    EXPECT_EQ(pass.compacted(), 1);
    auto allocs = find_allocations(s, "acc");
    ASSERT_EQ(allocs.size(), 1u);
    ASSERT_TRUE(allocs[0].constant_elements().has_value());
    EXPECT_EQ(*allocs[0].constant_elements(), 34);  // offsets 0..1 and 32..33
    auto loads = find_loads(s, "acc"), stores = find_stores(s, "acc");
    ASSERT_EQ(loads.size(), 2u);
    ASSERT_EQ(stores.size(), 2u);
    std::vector<int64_t> starts;
    for (const auto &a : stores) {
        const Ramp *r = a.index.as<Ramp>();
        ASSERT_NE(r, nullptr) << a.index;
        const int64_t *c = as_const_int(r->base);
        ASSERT_NE(c, nullptr) << a.index;
        starts.push_back(*c);
        EXPECT_EQ(r->lanes, 2);
    }
    EXPECT_EQ(starts, (std::vector<int64_t>{0, 32}));
    for (const auto &a : loads) EXPECT_FALSE(expr_uses_var_matching(a.index, "*")) << a.index;

    // Stack memory is the thread's frame too; an offset below the first access shifts every index.
    Stmt shifted = LetStmt::make("i0", start(8), LetStmt::make("i1", start(2), Block::make(
        store("acc", ramp2(Variable::make(Int(64), "i0")), 2), store("acc", Variable::make(Int(64), "i1"), 1))));
    s = pass.mutate(kernel("acc", MemoryType::Stack, shifted));
    EXPECT_EQ(pass.compacted(), 1);
    EXPECT_EQ(*find_allocations(s, "acc")[0].constant_elements(), 8);  // offsets 2..9
    auto st = find_stores(s, "acc");
    ASSERT_EQ(st.size(), 2u);
    EXPECT_TRUE(is_const(st[0].index.as<Ramp>()->base, 6)) << st[0].index;
    EXPECT_TRUE(is_const(st[1].index, 0)) << st[1].index;
}

TEST(CompactThreadAllocations, LeavesAllocationsWhoseElementsMoveOrEscape) {
    CompactThreadAllocations pass;
    // Indexed by a serial loop inside the allocation: the thread walks the tile.
    Stmt walk = For::make("k", 0, 8, ForType::Serial, DeviceAPI::None,
                          store("acc", cast(Int(64), tx) * 16 + cast(Int(64), Variable::make(Int(32), "k")), 1));
    const Stmt walked = kernel("acc", MemoryType::Register, walk);
    EXPECT_TRUE(pass.mutate(walked).same_as(walked));
    EXPECT_EQ(pass.compacted(), 0);

    // Indexed by a loaded value.
    Expr loaded = Load::make(Int(32), "idx", tx, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    const Stmt gathered = kernel("acc", MemoryType::Register, store("acc", cast(Int(64), loaded), 1));
    EXPECT_TRUE(pass.mutate(gathered).same_as(gathered));

    // Two thread offsets that differ by a non-constant.
    const Stmt uneven = kernel("acc", MemoryType::Register,
                               Block::make(store("acc", cast(Int(64), tx), 1), store("acc", cast(Int(64), tx * 2), 1)));
    EXPECT_TRUE(pass.mutate(uneven).same_as(uneven));

    // The allocation's name used as a handle (passed to a call).
    Stmt handle = Block::make(two_outputs("acc"),
                              Evaluate::make(Call::make(Int(32), "consume", {Variable::make(Handle(), "acc")},
                                                        Call::Extern)));
    const Stmt escaped = kernel("acc", MemoryType::Register, handle);
    EXPECT_TRUE(pass.mutate(escaped).same_as(escaped));

    // Shared memory is the block's, not the thread's; host allocations are outside kernels.
    const Stmt shared = kernel("tile", MemoryType::GPUShared, two_outputs("tile"));
    EXPECT_TRUE(pass.mutate(shared).same_as(shared));
    const Stmt host = Allocate::make("buf", Float(32), MemoryType::Auto, {256}, const_true(), two_outputs("buf"));
    EXPECT_TRUE(pass.mutate(host).same_as(host));
    EXPECT_EQ(pass.compacted(), 0);
}

}  // namespace
}  // namespace gsparse::ext
