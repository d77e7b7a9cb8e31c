#include "halide_ext/butterfly_lane_reductions.h"

#include <optional>
#include <string>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

const std::string kIdxPrefix = "llvm.nvvm.shfl.sync.idx.";

/// The segment width (lanes per shuffle group) a shuffle's clamp operand names, if constant:
/// clamp = ((31 & ~(width - 1)) << 8) | 31.
std::optional<int64_t> segment_width(const Expr &clamp) {
    const int64_t *c = as_const_int(clamp);
    if (!c || (*c & 31) != 31) return std::nullopt;
    const int64_t seg_mask = (*c >> 8) & 31;
    return 32 - seg_mask;
}

/// acc[i] OP t (or t OP acc[i]) with OP associative and commutative: the operator's kind and acc[i].
enum class Op { Add, Min, Max };

struct Update {
    Op op;
    Expr acc;  // the Load of the accumulator
};

std::optional<Update> match_update(const Store *store, const std::string &t) {
    auto split = [&](const Expr &a, const Expr &b) -> std::optional<Expr> {
        const Variable *v = b.as<Variable>();
        const Load *l = a.as<Load>();
        if (v && v->name == t && l && l->name == store->name && equal(l->index, store->index)) return a;
        return std::nullopt;
    };
    auto both = [&](const Expr &a, const Expr &b) { return split(a, b) ? split(a, b) : split(b, a); };
    const Expr &val = store->value;
    if (const Add *add = val.as<Add>()) {
        if (auto acc = both(add->a, add->b)) return Update{Op::Add, *acc};
    } else if (const Min *mn = val.as<Min>()) {
        if (auto acc = both(mn->a, mn->b)) return Update{Op::Min, *acc};
    } else if (const Max *mx = val.as<Max>()) {
        if (auto acc = both(mx->a, mx->b)) return Update{Op::Max, *acc};
    }
    return std::nullopt;
}

Expr combine(Op op, const Expr &a, const Expr &b) {
    switch (op) {
    case Op::Add: return a + b;
    case Op::Min: return min(a, b);
    case Op::Max: return max(a, b);
    }
    return Expr();
}

}  // namespace

Stmt ButterflyLaneReductions::visit(const For *op) {
    const int64_t *extent = as_const_int(op->extent);
    const int64_t L = extent ? *extent : 0;
    const bool candidate = op->for_type == ForType::Serial && is_const_zero(op->min) && L >= 2 && L <= 32 &&
                           (L & (L - 1)) == 0;
    const LetStmt *let = candidate ? op->body.as<LetStmt>() : nullptr;
    const Call *shfl = let ? let->value.as<Call>() : nullptr;
    if (!shfl || shfl->name.rfind(kIdxPrefix, 0) != 0 || shfl->args.size() != 4) return IRMutator::visit(op);
    const Expr &mask = shfl->args[0], &v = shfl->args[1], &src = shfl->args[2], &clamp = shfl->args[3];
    const Variable *src_var = src.as<Variable>();
    auto width = segment_width(clamp);
    if (!src_var || src_var->name != op->name || !width || *width != L || expr_uses_var(v, op->name) ||
        expr_uses_var(mask, op->name))
        return IRMutator::visit(op);
    // The guarded update of the accumulator.
    const IfThenElse *guard = let->body.as<IfThenElse>();
    const Store *store = guard ? guard->then_case.as<Store>() : let->body.as<Store>();
    if ((guard && (guard->else_case.defined() || expr_uses_var(guard->condition, op->name) ||
                   expr_uses_var(guard->condition, let->name))) ||
        !store || !is_const_one(store->predicate) || expr_uses_var(store->index, op->name) ||
        expr_uses_var(store->index, let->name))
        return IRMutator::visit(op);
    auto update = match_update(store, let->name);
    if (!update) return IRMutator::visit(op);

    // s_0 = v; s_{j+1} = s_j OP bfly(s_j, L >> (j + 1)).
    const std::string bfly = "llvm.nvvm.shfl.sync.bfly." + shfl->name.substr(kIdxPrefix.size());
    const std::string base = let->name + ".bfly";
    std::vector<std::pair<std::string, Expr>> lets;
    Expr cur = v;
    int step = 0;
    for (int64_t offset = L / 2; offset >= 1; offset /= 2, step++) {
        const std::string name = base + std::to_string(step);
        Expr s = Variable::make(v.type(), name + ".in");
        lets.emplace_back(name + ".in", cur);
        Expr partner = Call::make(shfl->type, bfly, {mask, s, make_const(Int(32), offset), make_const(Int(32), 31)},
                                  Call::PureExtern);
        lets.emplace_back(name, combine(update->op, s, partner));
        cur = Variable::make(v.type(), name);
    }
    Stmt body = Store::make(store->name, combine(update->op, update->acc, cur), store->index, store->param,
                            store->predicate, store->alignment);
    if (guard) body = IfThenElse::make(guard->condition, body);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = LetStmt::make(it->first, it->second, body);
    count_rewrite();
    return body;
}

}  // namespace gsparse::ext
