#include "halide_ext/store_index_lets.h"

#include <algorithm>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

StoreIndexLets::StoreIndexLets(std::vector<std::string> buffers) : buffers_(std::move(buffers)) {}

Stmt StoreIndexLets::mutate(const Stmt &s) {
    if (!top_) return IRMutator::mutate(s);
    top_ = false;
    rewritten_ = 0;
    Stmt result = IRMutator::mutate(s);
    top_ = true;
    return result;
}

Stmt StoreIndexLets::visit(const LetStmt *op) {
    ScopedBinding<Expr> bind(lets_, op->name, op->value);
    return IRMutator::visit(op);
}

Expr StoreIndexLets::visit(const Let *op) {
    ScopedBinding<Expr> bind(lets_, op->name, op->value);
    return IRMutator::visit(op);
}

Stmt StoreIndexLets::visit(const Store *op) {
    if (std::find(buffers_.begin(), buffers_.end(), op->name) == buffers_.end()) return IRMutator::visit(op);
    const auto *var = op->index.as<Variable>();
    if (!var || !lets_.contains(var->name)) return IRMutator::visit(op);
    rewritten_++;
    return Store::make(op->name, mutate(op->value), lets_.get(var->name), op->param, mutate(op->predicate),
                       op->alignment);
}

}  // namespace gsparse::ext
