#include "halide_ext/bind_buffer.h"

#include <algorithm>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

bool calls_image(const Call *op, const std::string &image) {
    return op->name == image || op->name == image + "_im" || op->name.rfind(image + "_im$", 0) == 0;
}

namespace {

/// Whether a call loads one of the named buffers (or their ImageParam wrappers).
bool calls_buffer(const Call *op, const std::vector<std::string> &names) {
    for (const auto &n : names)
        if (calls_image(op, n)) return true;
    return false;
}

/// Substitutes inside the arguments of calls to the named buffers (or their ImageParam wrappers).
class SubstituteInCalls : public IRMutator {
public:
    SubstituteInCalls(const std::vector<std::string> &names, std::string var, Expr replacement)
        : names_(names), var_(std::move(var)), replacement_(std::move(replacement)) {}
    bool substituted = false;

private:
    using IRMutator::visit;
    const std::vector<std::string> &names_;
    std::string var_;
    Expr replacement_;

    Expr visit(const Call *op) override {
        if (!calls_buffer(op, names_)) return IRMutator::visit(op);
        std::vector<Expr> args;
        for (const Expr &a : op->args) {
            Expr b = substitute(var_, replacement_, a);
            if (!b.same_as(a)) substituted = true;
            args.push_back(b);
        }
        return Call::make(op->type, op->name, args, op->call_type, op->func, op->value_index, op->image, op->param);
    }
};

/// Substitutes a Var everywhere except inside the arguments of calls to the named buffers.
class SubstituteOutsideCalls : public IRMutator {
public:
    SubstituteOutsideCalls(const std::vector<std::string> &names, std::string var, Expr replacement)
        : names_(names), var_(std::move(var)), replacement_(std::move(replacement)) {}

private:
    using IRMutator::visit;
    const std::vector<std::string> &names_;
    std::string var_;
    Expr replacement_;

    Expr visit(const Call *op) override { return calls_buffer(op, names_) ? Expr(op) : IRMutator::visit(op); }
    Expr visit(const Variable *op) override { return op->name == var_ ? replacement_ : Expr(op); }
};

template <typename Rebind>
int rebind_definitions(const std::vector<Func> &funcs, Rebind rebind) {
    int changed = 0;
    auto bind = [&](Definition &def) {
        for (Expr &value : def.values()) value = rebind(value);
        if (def.predicate().defined()) def.predicate() = rebind(def.predicate());
        changed++;
    };
    for (const Func &f : funcs) {
        Function fn = f.function();
        if (fn.has_pure_definition()) bind(fn.definition());
        for (size_t u = 0; u < fn.updates().size(); u++) bind(fn.update(static_cast<int>(u)));
    }
    return changed;
}

}  // namespace

int bind_rows_except(const std::vector<Func> &funcs, const Var &v, const Expr &row_of_v,
                     const std::vector<std::string> &except) {
    SubstituteOutsideCalls outside(except, v.name(), row_of_v);
    return rebind_definitions(funcs, [&](const Expr &e) { return outside.mutate(e); });
}

int bind_rows(const std::vector<Func> &funcs, const Var &v, const Expr &row_of_v, const std::vector<std::string> &within) {
    SubstituteInCalls in_calls(within, v.name(), row_of_v);
    const int changed = rebind_definitions(funcs, [&](const Expr &e) {
        return within.empty() ? substitute(v.name(), row_of_v, e) : in_calls.mutate(e);
    });
    if (!within.empty() && changed && !in_calls.substituted)
        throw CompileError("bind_rows: no call to " + within[0] + " uses " + v.name());
    return changed;
}

namespace {

Expr strip_casts(Expr e) {
    while (const Cast *c = e.as<Cast>()) e = c->value;
    return e;
}

/// Rewrites, in a flattened index, the factor multiplied by the row stride variable.
class RowTerm : public IRMutator {
public:
    RowTerm(std::string stride, Parameter order) : stride_(std::move(stride)), order_(std::move(order)) {}
    int found = 0;

private:
    using IRMutator::visit;
    std::string stride_;
    Parameter order_;

    bool is_stride(const Expr &e) const {
        const Variable *var = strip_casts(e).as<Variable>();
        return var && var->name == stride_;
    }
    Expr reorder(const Expr &row) {
        found++;
        Expr pos = strip_casts(row);
        Expr load = Load::make(Int(32), order_.name(), cast<int64_t>(pos), Buffer<>(), order_, const_true(),
                               ModulusRemainder());
        return cast(row.type(), load);
    }
    Expr visit(const Mul *op) override {
        if (is_stride(op->b)) return Mul::make(reorder(op->a), op->b);
        if (is_stride(op->a)) return Mul::make(op->a, reorder(op->b));
        return IRMutator::visit(op);
    }
};

}  // namespace

BindBufferStores::BindBufferStores(std::vector<std::string> buffers, int row_dim, Parameter order)
    : buffers_(std::move(buffers)), row_dim_(row_dim), order_(std::move(order)) {}

Stmt BindBufferStores::visit(const Store *op) {
    if (std::find(buffers_.begin(), buffers_.end(), op->name) == buffers_.end()) return IRMutator::visit(op);
    RowTerm term(op->name + ".stride." + std::to_string(row_dim_), order_);
    Expr index = term.mutate(op->index);
    if (term.found != 1) {
        throw CompileError("bind_buffer: the store into " + op->name + " has " + std::to_string(term.found) +
                           " row terms (expected one <row> * " + op->name + ".stride." + std::to_string(row_dim_) + ")");
    }
    count_rewrite();
    return Store::make(op->name, mutate(op->value), index, op->param, mutate(op->predicate), op->alignment);
}

}  // namespace gsparse::ext
