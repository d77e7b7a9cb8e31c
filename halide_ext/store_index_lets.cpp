#include "halide_ext/store_index_lets.h"

#include <algorithm>

#include "halide_ext/ir_inspect.h"

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

StoreIndexLets::StoreIndexLets(std::vector<std::string> buffers) : buffers_(std::move(buffers)) {}

Stmt StoreIndexLets::visit(const LetStmt *op) {
    ScopedBinding<Expr> bind(lets_, op->name, op->value);
    return IRMutator::visit(op);
}

Expr StoreIndexLets::visit(const Let *op) {
    ScopedBinding<Expr> bind(lets_, op->name, op->value);
    return IRMutator::visit(op);
}

namespace {

/// Replaces, inside an index, the Let-bound Variables whose values mention the buffer's strides.
class ExposeStrideLets : public IRMutator {
public:
    ExposeStrideLets(const Scope<Expr> &lets, std::string buffer) : lets_(lets), buffer_(std::move(buffer)) {}
    int replaced = 0;

private:
    using IRMutator::visit;
    const Scope<Expr> &lets_;
    std::string buffer_;
    Expr visit(const Variable *op) override {
        if (!lets_.contains(op->name)) return op;
        const Expr &value = lets_.get(op->name);
        if (!expr_uses_var_matching(value, buffer_ + ".stride.*")) return op;
        replaced++;
        return value;
    }
};

}  // namespace

Stmt StoreIndexLets::visit(const Store *op) {
    if (std::find(buffers_.begin(), buffers_.end(), op->name) == buffers_.end()) return IRMutator::visit(op);
    Expr index;
    if (const auto *var = op->index.as<Variable>(); var && lets_.contains(var->name)) {
        index = lets_.get(var->name);
        if (!expr_uses_var_matching(index, op->name + ".stride.*")) {
            // The row term is one level further down (t = lane + t.s, t.s = ... v * stride).
            ExposeStrideLets expose(lets_, op->name);
            index = expose.mutate(index);
        }
    } else {
        ExposeStrideLets expose(lets_, op->name);
        index = expose.mutate(op->index);
        if (!expose.replaced) return IRMutator::visit(op);
    }
    count_rewrite();
    return Store::make(op->name, mutate(op->value), index, op->param, mutate(op->predicate), op->alignment);
}

}  // namespace gsparse::ext
