#include "halide_ext/align_local_allocations.h"

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

Stmt AlignLocalAllocations::run(const Stmt &s) {
    local_.clear();
    return IRMutator::mutate(s);
}

Stmt AlignLocalAllocations::visit(const For *op) {
    const bool block = op->for_type == ForType::GPUBlock;
    in_kernel_ += block;
    Stmt result = IRMutator::visit(op);
    in_kernel_ -= block;
    return result;
}

void AlignLocalAllocations::saw(const std::string &name, const Type &t) {
    auto it = local_.find(name);
    if (it != local_.end() && t.is_vector()) it->second = true;
}

Expr AlignLocalAllocations::visit(const Load *op) {
    saw(op->name, op->type);
    return IRMutator::visit(op);
}

Stmt AlignLocalAllocations::visit(const Store *op) {
    saw(op->name, op->value.type());
    return IRMutator::visit(op);
}

Stmt AlignLocalAllocations::visit(const Allocate *op) {
    const bool thread_frame = in_kernel_ > 0 && op->memory_type != MemoryType::GPUShared &&
                              op->memory_type != MemoryType::GPUTexture && op->type.is_scalar() &&
                              op->type.bytes() < kAlignBytes && !op->new_expr.defined();
    if (!thread_frame || local_.count(op->name)) return IRMutator::visit(op);
    local_[op->name] = false;
    Stmt body = mutate(op->body);
    const bool vector_access = local_[op->name];
    local_.erase(op->name);
    const int32_t size = op->constant_allocation_size();
    if (!vector_access || size <= 0) {
        if (body.same_as(op->body)) return op;
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                              op->free_function);
    }
    count_rewrite();
    const int lanes = kAlignBytes / op->type.bytes();
    return Allocate::make(op->name, op->type.with_lanes(lanes), op->memory_type, {(size + lanes - 1) / lanes},
                          op->condition, body, op->new_expr, op->free_function);
}

}  // namespace gsparse::ext
