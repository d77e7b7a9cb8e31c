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

namespace {

/// Whether an Expr mentions a stride of the named buffer.
class MentionsStride : public IRVisitor {
public:
    explicit MentionsStride(const std::string &buffer) : prefix_(buffer + ".stride.") {}
    bool found = false;

private:
    using IRVisitor::visit;
    std::string prefix_;
    void visit(const Variable *v) override {
        if (v->name.rfind(prefix_, 0) == 0) found = true;
    }
};

bool mentions_stride(const Expr &e, const std::string &buffer) {
    MentionsStride m(buffer);
    e.accept(&m);
    return m.found;
}

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
        if (!mentions_stride(value, buffer_)) return op;
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
    } else {
        ExposeStrideLets expose(lets_, op->name);
        index = expose.mutate(op->index);
        if (!expose.replaced) return IRMutator::visit(op);
    }
    rewritten_++;
    return Store::make(op->name, mutate(op->value), index, op->param, mutate(op->predicate), op->alignment);
}

}  // namespace gsparse::ext
