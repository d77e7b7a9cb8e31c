#include "halide_ext/atomic_add_stores.h"

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The Let-bound variables an expression names, with their values.
class LetBound : public IRVisitor {
public:
    explicit LetBound(const Scope<Expr> &lets) : lets_(lets) {}
    std::map<std::string, Expr> subs;

private:
    using IRVisitor::visit;
    void visit(const Variable *v) override {
        if (lets_.contains(v->name)) subs[v->name] = lets_.get(v->name);
    }
    const Scope<Expr> &lets_;
};

}  // namespace

Stmt AtomicAddStores::run(const Stmt &s) {
    lets_ = Halide::Internal::Scope<Expr>();
    in_atomic_ = 0;
    return IRMutator::mutate(s);
}

Stmt AtomicAddStores::visit(const LetStmt *op) {
    lets_.push(op->name, op->value);
    Stmt s = IRMutator::visit(op);
    lets_.pop(op->name);
    return s;
}

Expr AtomicAddStores::visit(const Let *op) {
    lets_.push(op->name, op->value);
    Expr e = IRMutator::visit(op);
    lets_.pop(op->name);
    return e;
}

Stmt AtomicAddStores::visit(const Atomic *op) {
    if (!op->mutex_name.empty()) return IRMutator::visit(op);  // a locked region: any form is fine
    in_atomic_++;
    Stmt s = IRMutator::visit(op);
    in_atomic_--;
    return s;
}

Expr AtomicAddStores::expand(const Expr &e) const {
    Expr out = e;
    // Let values only name variables bound further out, so a bounded number of rounds expands all.
    for (int round = 0; round < 64; round++) {
        LetBound found(lets_);
        out.accept(&found);
        if (found.subs.empty()) break;
        const std::map<std::string, Expr> &subs = found.subs;
        out = substitute(subs, out);
    }
    return out;
}

Stmt AtomicAddStores::visit(const Store *op) {
    if (in_atomic_ == 0) return IRMutator::visit(op);
    const Add *add = op->value.as<Add>();
    if (!add) return IRMutator::visit(op);
    auto same_buffer_load = [&](const Expr &e) {
        const Load *l = e.as<Load>();
        return l && l->name == op->name && l->type == op->value.type() ? l : nullptr;
    };
    const Load *load = same_buffer_load(add->a);
    Expr rest = add->b;
    bool load_first = true;
    if (!load) {
        load = same_buffer_load(add->b);
        rest = add->a;
        load_first = false;
    }
    if (!load || equal(load->index, op->index)) return IRMutator::visit(op);
    if (!is_const_zero(simplify(expand(load->index) - expand(op->index)))) return IRMutator::visit(op);
    Expr same = Load::make(load->type, load->name, op->index, load->image, load->param, load->predicate,
                           load->alignment);
    count_rewrite();
    Expr value = load_first ? same + rest : rest + same;
    return Store::make(op->name, value, op->index, op->param, op->predicate, op->alignment);
}

}  // namespace gsparse::ext
