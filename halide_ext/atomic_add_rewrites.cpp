#include "halide_ext/atomic_add_rewrites.h"

#include <utility>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

std::optional<AtomicAdd> match_atomic_add(const Atomic *op) {
    const Store *store = op->body.as<Store>();
    if (!op->mutex_name.empty() || !store || !store->index.type().is_scalar() || !is_const_one(store->predicate))
        return std::nullopt;
    const Add *add = store->value.as<Add>();
    if (!add) return std::nullopt;
    auto same = [&](const Expr &e) {
        const Load *l = e.as<Load>();
        return l && l->name == store->name && equal(l->index, store->index) ? l : nullptr;
    };
    AtomicAdd a{op, store, nullptr, Expr()};
    if ((a.load = same(add->a))) a.value = add->b;
    else if ((a.load = same(add->b))) a.value = add->a;
    else return std::nullopt;
    return a;
}

Stmt atomic_add_at(const AtomicAdd &add, const Expr &index, const Expr &value) {
    const Load *ld = add.load;
    const Store *st = add.store;
    Expr old = Load::make(value.type(), ld->name, index, ld->image, ld->param, const_true(), ModulusRemainder());
    return Atomic::make(add.atomic->producer_name, "",
                        Store::make(st->name, old + value, index, st->param, const_true(), ModulusRemainder()));
}

namespace {

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

}  // namespace

Stmt replace_atomics(const Stmt &s, std::map<const Atomic *, Stmt> replacements) {
    return ReplaceAtomics(std::move(replacements)).mutate(s);
}

Expr scalar_load(Type t, const std::string &name) {
    return Load::make(t, name, 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}

Stmt scalar_store(const std::string &name, Expr value) {
    return Store::make(name, std::move(value), 0, Parameter(), const_true(), ModulusRemainder());
}

Stmt loop_in_registers(const For *loop, const Stmt &body, const std::vector<Stmt> &before,
                       const std::vector<Stmt> &after, const std::vector<std::pair<std::string, Type>> &registers) {
    std::vector<Stmt> parts = before;
    parts.push_back(For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->device_api, body));
    parts.insert(parts.end(), after.begin(), after.end());
    Stmt s = Block::make(parts);
    for (auto r = registers.rbegin(); r != registers.rend(); ++r)
        s = Allocate::make(r->first, r->second, MemoryType::Stack, {1}, const_true(), s);
    return s;
}

}  // namespace gsparse::ext
