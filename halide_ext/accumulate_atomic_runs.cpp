#include "halide_ext/accumulate_atomic_runs.h"

#include <map>
#include <utility>
#include <vector>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// An atomic add `out[i] = out[i] + v` (or `v + out[i]`) of a scalar, unpredicated store: its
/// Atomic node, store, the load of the store's own element, and v.
struct AtomicAdd {
    const Atomic *atomic = nullptr;
    const Store *store = nullptr;
    const Load *load = nullptr;
    Expr rest;
};

/// The Atomic nodes of a loop body (their count), and the atomic adds among them.
class FindAtomicAdds : public IRVisitor {
public:
    int atomics = 0;
    std::vector<AtomicAdd> adds;

private:
    using IRVisitor::visit;
    void visit(const Atomic *op) override {
        atomics++;
        const Store *store = op->body.as<Store>();
        if (!op->mutex_name.empty() || !store || !store->index.type().is_scalar() || !is_const_one(store->predicate))
            return;
        const Add *add = store->value.as<Add>();
        auto same = [&](const Expr &e) {
            const Load *l = e.as<Load>();
            return l && l->name == store->name && equal(l->index, store->index) ? l : nullptr;
        };
        if (!add) return;
        AtomicAdd a{op, store, nullptr, Expr()};
        if ((a.load = same(add->a))) a.rest = add->b;
        else if ((a.load = same(add->b))) a.rest = add->a;
        else return;
        adds.push_back(a);
    }
};

/// The body with each of the given Atomic nodes replaced by its replacement.
class ReplaceAtomics : public IRMutator {
public:
    explicit ReplaceAtomics(std::map<const Atomic *, Stmt> replacements) : replacements_(std::move(replacements)) {}

private:
    using IRMutator::visit;
    Stmt visit(const Atomic *op) override {
        auto it = replacements_.find(op);
        return it != replacements_.end() ? it->second : IRMutator::visit(op);
    }
    std::map<const Atomic *, Stmt> replacements_;
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
    FindAtomicAdds found;
    if (named && op->for_type == ForType::Serial) body.accept(&found);
    if (!named || op->for_type != ForType::Serial || found.atomics == 0 ||
        found.adds.size() != static_cast<size_t>(found.atomics)) {
        return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type,
                                                             op->device_api, body);
    }
    // One register pair per atomic add (a thread's register tile of features adds to as many
    // addresses per edge): opened, flushed on a change of address, and flushed after the loop.
    std::map<const Atomic *, Stmt> replacements;
    std::vector<Stmt> before, after;
    std::vector<std::pair<std::string, Type>> registers;
    for (const AtomicAdd &found_add : found.adds) {
        const Store *st = found_add.store;
        const Load *ld = found_add.load;
        const std::string id = std::to_string(next_id_++);
        const std::string run_index = "run_index$" + id, run_sum = "run_sum$" + id, idx_name = "run_next$" + id;
        const Type it = st->index.type(), vt = st->value.type();
        Expr cur = scalar_load(it, run_index), sum = scalar_load(vt, run_sum);

        // atomic { out[run_index] = out[run_index] + run_sum } when a run is open.
        Expr target_load = Load::make(vt, ld->name, cur, ld->image, ld->param, const_true(), ModulusRemainder());
        Stmt add = Store::make(st->name, target_load + sum, cur, st->param, const_true(), ModulusRemainder());
        Stmt flush =
            IfThenElse::make(cur >= make_zero(it), Atomic::make(found_add.atomic->producer_name, "", add));

        Expr idx = Variable::make(it, idx_name);
        Stmt open = Block::make({flush, scalar_store(run_index, idx), scalar_store(run_sum, make_zero(vt))});
        Stmt step = Block::make(IfThenElse::make(idx != cur, open), scalar_store(run_sum, sum + found_add.rest));
        replacements[found_add.atomic] = LetStmt::make(idx_name, st->index, step);
        before.push_back(scalar_store(run_index, make_const(it, -1)));
        before.push_back(scalar_store(run_sum, make_zero(vt)));
        after.push_back(flush);
        registers.emplace_back(run_index, it);
        registers.emplace_back(run_sum, vt);
    }
    body = ReplaceAtomics(std::move(replacements)).mutate(body);

    std::vector<Stmt> parts = before;
    parts.push_back(For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body));
    parts.insert(parts.end(), after.begin(), after.end());
    Stmt s = Block::make(parts);
    for (auto r = registers.rbegin(); r != registers.rend(); ++r)
        s = Allocate::make(r->first, r->second, MemoryType::Stack, {1}, const_true(), s);
    count_rewrite();
    return s;
}

}  // namespace gsparse::ext
