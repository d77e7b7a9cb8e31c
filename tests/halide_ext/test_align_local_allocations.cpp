// AlignLocalAllocations on hand-built kernel statements: thread-frame allocations with vector
// accesses become 16-byte vectors of the same size; shared memory, allocations outside kernels and
// allocations with only scalar accesses keep their declarations.
#include <gtest/gtest.h>

#include "halide_ext/align_local_allocations.h"

namespace gsparse::ext {
namespace {

using namespace Halide;
using namespace Halide::Internal;

/// Finds the Allocate of a name.
const Allocate *find_allocate(const Stmt &s, const std::string &name) {
    struct Finder : IRVisitor {
        std::string name;
        const Allocate *found = nullptr;
        using IRVisitor::visit;
        void visit(const Allocate *op) override {
            if (op->name == name) found = op;
            IRVisitor::visit(op);
        }
    } f;
    f.name = name;
    s.accept(&f);
    return f.found;
}

/// `name[ramp(t * 8, 1, lanes)] = name[ramp(t * 8, 1, lanes)] + 1` inside a thread loop (a scalar
/// access for one lane).
Stmt accumulate(const std::string &name, int lanes) {
    Expr t = Variable::make(Int(32), "t.__thread_id_x");
    Expr index = lanes > 1 ? Ramp::make(t * 8, 1, lanes) : t * 8;
    Expr value = Load::make(Float(32, lanes), name, index, Buffer<>(), Parameter(), const_true(lanes),
                            ModulusRemainder(8, 0));
    Stmt store = Store::make(name, value + make_const(Float(32, lanes), 1.0), index, Parameter(), const_true(lanes),
                             ModulusRemainder(8, 0));
    return For::make("t.__thread_id_x", 0, 32, ForType::GPUThread, DeviceAPI::CUDA, store);
}

Stmt in_kernel(const Stmt &body) {
    return For::make("b.__block_id_x", 0, 16, ForType::GPUBlock, DeviceAPI::CUDA, body);
}

Stmt allocate(const std::string &name, MemoryType m, int size, const Stmt &body) {
    return Allocate::make(name, Float(32), m, {size}, const_true(), body);
}

TEST(AlignLocalAllocations, VectorAccessedThreadFrameAllocationsBecome16ByteVectors) {
    AlignLocalAllocations pass;
    Stmt s = pass.mutate(in_kernel(allocate("acc", MemoryType::Register, 256, accumulate("acc", 2))));
    EXPECT_EQ(pass.realigned(), 1);
    const Allocate *a = find_allocate(s, "acc");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->type, Float(32, 4));
    ASSERT_EQ(a->extents.size(), 1u);
    EXPECT_TRUE(is_const(a->extents[0], 64)) << a->extents[0];
    EXPECT_EQ(a->memory_type, MemoryType::Register);

    // Sizes that are not a multiple of the vector round up; Stack allocations count as the thread's too.
    s = pass.mutate(in_kernel(allocate("acc", MemoryType::Stack, 10, accumulate("acc", 4))));
    EXPECT_EQ(pass.realigned(), 1);
    EXPECT_TRUE(is_const(find_allocate(s, "acc")->extents[0], 3));
}

TEST(AlignLocalAllocations, LeavesSharedHostAndScalarAllocationsAlone) {
    AlignLocalAllocations pass;
    const Stmt shared = in_kernel(allocate("tile", MemoryType::GPUShared, 256, accumulate("tile", 4)));
    EXPECT_TRUE(pass.mutate(shared).same_as(shared));
    EXPECT_EQ(pass.realigned(), 0);

    const Stmt host = allocate("buf", MemoryType::Heap, 256, accumulate("buf", 4));
    EXPECT_TRUE(pass.mutate(host).same_as(host));

    const Stmt scalar = in_kernel(allocate("acc", MemoryType::Register, 256, accumulate("acc", 1)));
    Stmt s = pass.mutate(scalar);
    EXPECT_EQ(pass.realigned(), 0);
    EXPECT_EQ(find_allocate(s, "acc")->type, Float(32));
}

}  // namespace
}  // namespace gsparse::ext
