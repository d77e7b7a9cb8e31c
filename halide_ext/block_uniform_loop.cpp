#include "halide_ext/block_uniform_loop.h"

#include <sstream>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Whether e refers to a GPU thread id (the names Halide gives fused thread loops).
class UsesThreadId : public IRVisitor {
public:
    bool found = false;

private:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (op->name.find("__thread_id_") != std::string::npos || op->name.find("__lane") != std::string::npos)
            found = true;
    }
};

}  // namespace

BlockUniformLoop::BlockUniformLoop(std::string loop_name, Expr trips)
    : loop_name_(std::move(loop_name)), trips_(std::move(trips)) {}

Stmt BlockUniformLoop::run(const Stmt &s) {
    UsesThreadId check;
    trips_.accept(&check);
    if (check.found) {
        std::ostringstream msg;
        msg << "block-uniform trip count for " << loop_name_ << " uses a GPU thread id: " << trips_;
        throw CompileError(msg.str());
    }
    return simplify(IRMutator::mutate(s));
}

Stmt BlockUniformLoop::visit(const For *op) {
    if (op->name != loop_name_) return IRMutator::visit(op);
    count_rewrite();
    Stmt body = mutate(op->body);
    Expr extent = min(op->extent, max(trips_, 0));
    return For::make(op->name, op->min, extent, op->for_type, op->device_api, body);
}

Expr block_max_chunks(const Parameter &row_ptr, const Expr &block_row0, int rows, int chunk, const Parameter &order) {
    auto load = [](const Parameter &buf, const Expr &index) {
        return Load::make(Int(32), buf.name(), cast<int64_t>(index), Buffer<>(), buf, const_true(), ModulusRemainder());
    };
    Expr longest;
    for (int i = 0; i < rows; i++) {
        Expr row = order.defined() ? load(order, block_row0 + i) : block_row0 + i;
        Expr len = load(row_ptr, row + 1) - load(row_ptr, row);
        longest = longest.defined() ? max(longest, len) : len;
    }
    return (longest + (chunk - 1)) / chunk;
}

}  // namespace gsparse::ext
