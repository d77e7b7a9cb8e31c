#include "halide_ext/accumulate_atomic_runs.h"

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The Atomic nodes of a loop body and, when the last is the atomic add `out[i] = out[i] + v` (or
/// `v + out[i]`) of a scalar, unpredicated store, its parts (store is null otherwise).
class FindAtomicAdd : public IRVisitor {
public:
    int atomics = 0;
    const Atomic *atomic = nullptr;
    const Store *store = nullptr;
    const Load *load = nullptr;
    Expr rest;

private:
    using IRVisitor::visit;
    void visit(const Atomic *op) override {
        atomics++;
        atomic = op;
        store = op->body.as<Store>();
        if (!op->mutex_name.empty() || !store || !store->index.type().is_scalar() || !is_const_one(store->predicate)) {
            store = nullptr;
            return;
        }
        const Add *add = store->value.as<Add>();
        auto same = [&](const Expr &e) {
            const Load *l = e.as<Load>();
            return l && l->name == store->name && equal(l->index, store->index) ? l : nullptr;
        };
        if (add && (load = same(add->a))) rest = add->b;
        else if (add && (load = same(add->b))) rest = add->a;
        else store = nullptr;
    }
};

/// The body with its one Atomic node replaced by `replacement`.
class ReplaceAtomic : public IRMutator {
public:
    ReplaceAtomic(const Atomic *target, Stmt replacement) : target_(target), replacement_(std::move(replacement)) {}

private:
    using IRMutator::visit;
    Stmt visit(const Atomic *op) override { return op == target_ ? replacement_ : IRMutator::visit(op); }
    const Atomic *target_;
    Stmt replacement_;
};

Expr scalar_load(Type t, const std::string &name) {
    return Load::make(t, name, 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}

Stmt scalar_store(const std::string &name, Expr value) {
    return Store::make(name, std::move(value), 0, Parameter(), const_true(), ModulusRemainder());
}

}  // namespace

Stmt AccumulateAtomicRuns::visit(const For *op) {
    Stmt body = mutate(op->body);
    const std::string suffix = "." + loop_var_;
    const bool named = op->name.size() > suffix.size() &&
                       op->name.compare(op->name.size() - suffix.size(), suffix.size(), suffix) == 0;
    FindAtomicAdd found;
    if (named && op->for_type == ForType::Serial) body.accept(&found);
    if (!named || op->for_type != ForType::Serial || found.atomics != 1 || !found.store) {
        return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type,
                                                             op->device_api, body);
    }
    const Store *st = found.store;
    const Load *ld = found.load;
    const std::string id = std::to_string(next_id_++);
    const std::string run_index = "run_index$" + id, run_sum = "run_sum$" + id, idx_name = "run_next$" + id;
    const Type it = st->index.type(), vt = st->value.type();
    Expr cur = scalar_load(it, run_index), sum = scalar_load(vt, run_sum);

    // atomic { out[run_index] = out[run_index] + run_sum } when a run is open.
    Expr target_load = Load::make(vt, ld->name, cur, ld->image, ld->param, const_true(), ModulusRemainder());
    Stmt add = Store::make(st->name, target_load + sum, cur, st->param, const_true(), ModulusRemainder());
    Stmt flush = IfThenElse::make(cur >= make_zero(it), Atomic::make(found.atomic->producer_name, "", add));

    Expr idx = Variable::make(it, idx_name);
    Stmt open = Block::make({flush, scalar_store(run_index, idx), scalar_store(run_sum, make_zero(vt))});
    Stmt step = Block::make(IfThenElse::make(idx != cur, open), scalar_store(run_sum, sum + found.rest));
    body = ReplaceAtomic(found.atomic, LetStmt::make(idx_name, st->index, step)).mutate(body);

    Stmt loop = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    Stmt s = Block::make({scalar_store(run_index, make_const(it, -1)), scalar_store(run_sum, make_zero(vt)), loop, flush});
    s = Allocate::make(run_sum, vt, MemoryType::Stack, {1}, const_true(), s);
    s = Allocate::make(run_index, it, MemoryType::Stack, {1}, const_true(), s);
    count_rewrite();
    return s;
}

}  // namespace gsparse::ext
