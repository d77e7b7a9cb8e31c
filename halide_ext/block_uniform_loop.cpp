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

BlockUniformLoop::BlockUniformLoop(std::string loop_name, Expr trips, std::string block_loop)
    : loop_name_(std::move(loop_name)), trips_(std::move(trips)), block_loop_(std::move(block_loop)) {}

namespace {

/// Whether a loop is `block` itself or `block` mapped to a GPU block dimension.
bool is_block_loop(const std::string &name, const std::string &block) {
    if (block.empty()) return false;
    if (name == block) return true;
    const std::string mapped = block + ".__block_id_";
    return name.size() == mapped.size() + 1 && name.compare(0, mapped.size(), mapped) == 0;
}

}  // namespace

Stmt BlockUniformLoop::run(const Stmt &s) {
    enclosing_.clear();
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
    if (is_block_loop(op->name, block_loop_)) {
        enclosing_.push_back(op->name);
        Stmt s = IRMutator::visit(op);
        enclosing_.pop_back();
        return s;
    }
    if (op->name != loop_name_) return IRMutator::visit(op);
    Expr trips = trips_;
    if (!block_loop_.empty()) {
        // A copy of the loop outside every block loop (a CPU loop's last partial block, which loop
        // partitioning peels off) keeps its bound.
        if (enclosing_.empty()) return IRMutator::visit(op);
        trips = substitute(block_loop_, Variable::make(Int(32), enclosing_.back()), trips);
    }
    count_rewrite();
    Stmt body = mutate(op->body);
    Expr extent = min(op->extent, max(trips, 0));
    return For::make(op->name, op->min, extent, op->for_type, op->device_api, body);
}

Expr block_max_chunks(const Parameter &row_ptr, const Expr &block_row0, int rows, int chunk, const Parameter &order,
                      const Expr &last_row) {
    auto load = [](const Parameter &buf, const Expr &index) {
        return Load::make(Int(32), buf.name(), cast<int64_t>(index), Buffer<>(), buf, const_true(), ModulusRemainder());
    };
    Expr longest;
    for (int i = 0; i < rows; i++) {
        Expr at = last_row.defined() ? min(block_row0 + i, last_row) : block_row0 + i;
        Expr row = order.defined() ? load(order, at) : at;
        Expr len = load(row_ptr, row + 1) - load(row_ptr, row);
        longest = longest.defined() ? max(longest, len) : len;
    }
    return (longest + (chunk - 1)) / chunk;
}

}  // namespace gsparse::ext
