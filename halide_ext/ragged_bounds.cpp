#include "halide_ext/ragged_bounds.h"

#include <optional>
#include <sstream>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

bool is_promise(const Expr &e) {
    const Call *c = e.as<Call>();
    return c && (c->is_intrinsic(Call::unsafe_promise_clamped) || c->is_intrinsic(Call::promise_clamped));
}

/// A load of a buffer or a call to a Func (as opposed to an intrinsic or an extern call).
bool is_load(const Call *c) { return c->call_type == Call::Image || c->call_type == Call::Halide; }

/// The buffer an ImageParam's wrapper Func reads, if fn is such a wrapper: calls to an ImageParam
/// in a definition are calls to a Func `<name>_im` whose only value is the load `<name>(args...)`.
const Call *wrapped_image_load(const Function &fn) {
    if (!fn.has_pure_definition() || fn.has_update_definition() || fn.has_extern_definition()) return nullptr;
    if (fn.values().size() != 1) return nullptr;
    const Call *c = fn.values()[0].as<Call>();
    if (!c || c->call_type != Call::Image || c->args.size() != fn.args().size()) return nullptr;
    for (size_t i = 0; i < c->args.size(); i++) {
        const Variable *v = c->args[i].as<Variable>();
        if (!v || v->name != fn.args()[i]) return nullptr;
    }
    return c;
}

bool is_image_wrapper(const Function &fn) { return wrapped_image_load(fn) != nullptr; }

/// The name of the buffer a load reads: the ImageParam / Buffer name, also through the
/// ImageParam's wrapper Func; the Func's name for other Func calls.
std::string buffer_of(const Call *c) {
    if (c->call_type == Call::Halide && c->func.defined()) {
        if (const Call *image = wrapped_image_load(Function(c->func))) return image->name;
    }
    return c->name;
}

bool is_buffer_load(const Call *c) {
    if (c->call_type == Call::Image) return true;
    return c->call_type == Call::Halide && c->func.defined() && is_image_wrapper(Function(c->func));
}

/// The Expr with loads through ImageParam wrappers written as loads of the buffer, for messages.
class ShowBuffers : public IRMutator {
protected:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *c = e.as<Call>();
        if (c && c->call_type == Call::Halide && is_buffer_load(c))
            return Call::make(c->type, buffer_of(c), c->args, Call::Extern);
        return e;
    }
};

Expr show(const Expr &e) {
    ShowBuffers s;
    return s.mutate(e);
}

std::string text(const Expr &e) {
    std::ostringstream s;
    s << show(e);
    return s.str();
}

std::string interval_text(const Expr &lo, const Expr &hi) { return "[" + text(lo) + ", " + text(hi) + "]"; }

/// Whether e holds a load of `name` that is not nested inside the arguments of another load.
class DirectLoadFinder : public IRVisitor {
public:
    explicit DirectLoadFinder(const std::string &name) : name_(name) {}
    bool found = false;

protected:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (is_load(op)) {
            if (buffer_of(op) == name_) found = true;
            return;
        }
        IRVisitor::visit(op);
    }

private:
    const std::string &name_;
};

bool has_direct_load(const Expr &e, const std::string &name) {
    if (name.empty() || !e.defined()) return false;
    DirectLoadFinder f(name);
    e.accept(&f);
    return f.found;
}

/// Whether e uses the variable `name`.
class VarFinder : public IRVisitor {
public:
    explicit VarFinder(const std::string &name) : name_(name) {}
    bool found = false;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (op->name == name_) found = true;
    }

private:
    const std::string &name_;
};

bool uses_var(const Expr &e, const std::string &name) {
    VarFinder f(name);
    e.accept(&f);
    return f.found;
}

/// Whether e depends on parameters and constants only (no loop variables, RVars or loads).
class ParamOnly : public IRVisitor {
public:
    bool ok = true;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (!op->param.defined() && !op->image.defined()) ok = false;
    }
    void visit(const Call *op) override {
        if (is_load(op)) ok = false;
        IRVisitor::visit(op);
    }
};

bool param_only(const Expr &e) {
    ParamOnly p;
    e.accept(&p);
    return p.ok;
}

/// The free (non-parameter) variables of e, in order of appearance.
class FreeVars : public IRVisitor {
public:
    std::vector<std::string> names;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (op->param.defined() || op->image.defined()) return;
        for (const auto &n : names)
            if (n == op->name) return;
        names.push_back(op->name);
    }
};

/// Splits a sum into its terms; subtracted terms are negated.
void flatten_sum(const Expr &e, std::vector<Expr> &terms) {
    if (const Add *a = e.as<Add>()) {
        flatten_sum(a->a, terms);
        flatten_sum(a->b, terms);
    } else if (const Sub *s = e.as<Sub>()) {
        flatten_sum(s->a, terms);
        std::vector<Expr> neg;
        flatten_sum(s->b, neg);
        for (const Expr &t : neg) terms.push_back(Internal::make_zero(t.type()) - t);
    } else {
        terms.push_back(e);
    }
}

/// The row_ptr load of a position term (possibly under a cast), or null.
const Call *row_ptr_term(const Expr &term, const std::string &row_ptr) {
    Expr t = term;
    while (const Cast *c = t.as<Cast>()) t = c->value;
    const Call *c = t.as<Call>();
    return (c && is_load(c) && buffer_of(c) == row_ptr) ? c : nullptr;
}

/// Replaces the sparse values inside an expression by fresh variables whose intervals go into a
/// scope: loads of declared index arrays and calls to Funcs with known value ranges.
class Rangify : public IRMutator {
public:
    Rangify(const SparseLayout &layout, const std::map<std::pair<std::string, int>, Interval> &func_ranges)
        : layout_(layout), func_ranges_(func_ranges) {}

    std::map<std::string, Interval> scope;
    bool substituted = false;

protected:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (!is_load(op)) return IRMutator::visit(op);
        if (is_buffer_load(op)) {
            auto a = layout_.find(buffer_of(op));
            if (a && a->is_index_array()) {
                Expr hi = a->value_count - 1;
                return placeholder(op->type, Interval(make_zero(hi.type()), hi));
            }
        } else {
            auto it = func_ranges_.find({op->name, op->value_index});
            if (it != func_ranges_.end()) return placeholder(op->type, it->second);
        }
        return op;
    }

private:
    Expr placeholder(Type t, const Interval &iv) {
        std::string name = "__ragged_value_" + std::to_string(counter_++);
        scope[name] = Interval(iv.has_lower_bound() ? Expr(cast(t, iv.min)) : iv.min,
                               iv.has_upper_bound() ? Expr(cast(t, iv.max)) : iv.max);
        substituted = true;
        return Variable::make(t, name);
    }

    const SparseLayout &layout_;
    const std::map<std::pair<std::string, int>, Interval> &func_ranges_;
    int counter_ = 0;
};

Interval bounds_in(const Expr &e, const std::map<std::string, Interval> &vars) {
    Scope<Interval> scope;
    for (const auto &[name, iv] : vars) scope.push(name, iv);
    return bounds_of_expr_in_scope(e, scope);
}

/// Bounds of an RVar from one predicate term (a < b, a <= b, a > b, a >= b) that is linear in
/// the RVar with coefficient +-1: e.g. row_ptr(v) + k < row_ptr(v + 1) gives
/// k <= row_ptr(v + 1) - row_ptr(v) - 1. Other terms are ignored.
void tighten(const Expr &term, const std::string &rv, Expr &lo, Expr &hi) {
    Expr a, b;
    bool strict = false;
    if (const LT *op = term.as<LT>()) a = op->a, b = op->b, strict = true;
    else if (const LE *op = term.as<LE>()) a = op->a, b = op->b;
    else if (const GT *op = term.as<GT>()) a = op->b, b = op->a, strict = true;
    else if (const GE *op = term.as<GE>()) a = op->b, b = op->a;
    else return;
    if (!a.type().is_int() || !b.type().is_int()) return;
    // a - b = sign * rv + rest, with rest free of rv.
    std::vector<Expr> terms;
    flatten_sum(a - b, terms);
    int sign = 0;
    Expr rest = make_zero(a.type());
    for (const Expr &t : terms) {
        const Variable *v = t.as<Variable>();
        const Sub *neg = t.as<Sub>();
        const Variable *nv = (neg && is_const_zero(neg->a)) ? neg->b.as<Variable>() : nullptr;
        if (v && v->name == rv) {
            if (sign) return;
            sign = 1;
        } else if (nv && nv->name == rv) {
            if (sign) return;
            sign = -1;
        } else if (uses_var(t, rv)) {
            return;
        } else {
            rest = rest + t;
        }
    }
    if (!sign) return;
    // sign * rv + rest < 0 (or <= 0).
    if (sign > 0) {
        Expr h = strict ? (0 - rest) - 1 : 0 - rest;
        hi = hi.defined() ? Halide::min(hi, h) : h;
    } else {
        Expr l = strict ? rest + 1 : rest;
        lo = lo.defined() ? Halide::max(lo, l) : l;
    }
}

/// Every Function reachable from the given ones through calls, in breadth-first order.
class CalledFunctions : public IRGraphVisitor {
public:
    std::vector<FunctionPtr> found;

protected:
    using IRGraphVisitor::visit;
    void visit(const Call *op) override {
        IRGraphVisitor::visit(op);
        if (op->call_type == Call::Halide && op->func.defined()) found.push_back(op->func);
    }
};

std::vector<Function> reachable_functions(const std::vector<Func> &funcs) {
    std::vector<Function> order;
    std::set<std::string> seen;
    for (const Func &f : funcs) {
        if (!f.defined()) continue;
        Function fn = f.function();
        if (seen.insert(fn.name()).second) order.push_back(fn);
    }
    for (size_t i = 0; i < order.size(); i++) {
        CalledFunctions v;
        order[i].accept(&v);
        for (const FunctionPtr &p : v.found) {
            Function fn(p);
            if (is_image_wrapper(fn)) continue;
            if (seen.insert(fn.name()).second) order.push_back(fn);
        }
    }
    return order;
}

bool same_interval(const Interval &a, const Interval &b) {
    return equal(a.min, b.min) && equal(a.max, b.max);
}

}  // namespace

const char *to_string(RaggedRewrite::Kind k) { return k == RaggedRewrite::Kind::Position ? "position" : "gather"; }

std::string RaggedRewrite::str() const {
    std::ostringstream s;
    s << func << "[" << (stage == 0 ? std::string("pure") : "update " + std::to_string(stage - 1)) << "]: "
      << buffer << (value ? " value " : " dim ") << dimension << " " << to_string(kind) << " " << range;
    if (!row_range.empty()) s << ", per row " << row_range;
    if (clamped) s << " (clamped into the array)";
    return s.str();
}

std::vector<RaggedRewrite> RaggedBoundsReport::of(const std::string &buffer) const {
    std::vector<RaggedRewrite> r;
    for (const auto &w : rewrites)
        if (w.buffer == buffer) r.push_back(w);
    return r;
}

std::vector<RaggedRewrite> RaggedBoundsReport::of(const std::string &buffer, RaggedRewrite::Kind kind) const {
    std::vector<RaggedRewrite> r;
    for (const auto &w : rewrites)
        if (w.buffer == buffer && w.kind == kind) r.push_back(w);
    return r;
}

std::string RaggedBoundsReport::str() const {
    std::ostringstream s;
    for (const auto &w : rewrites) s << w.str() << "\n";
    for (const auto &n : notes) s << "note: " << n << "\n";
    return s.str();
}

RaggedBoundsPass::RaggedBoundsPass(SparseLayout layout) : layout_(std::move(layout)) {}

void RaggedBoundsPass::set_func_value_ranges(std::map<std::pair<std::string, int>, Interval> ranges) {
    func_ranges_ = std::move(ranges);
}

void RaggedBoundsPass::enter_definition(const std::string &func, int stage, const Definition &def) {
    func_ = func;
    stage_ = stage;
    rvar_bounds_.clear();
    rvar_domain_.clear();
    let_values_.clear();
    if (!def.defined()) return;
    const std::vector<Expr> preds = def.split_predicate();
    for (const ReductionVariable &rv : def.schedule().rvars()) {
        Expr lo = rv.min, hi = simplify(rv.min + rv.extent - 1);
        rvar_domain_[rv.var] = Interval(simplify(lo), hi);
        for (const Expr &p : preds) tighten(p, rv.var, lo, hi);
        rvar_bounds_[rv.var] = Interval(simplify(lo), simplify(hi));
    }
}

bool RaggedBoundsPass::is_position(const Expr &e) const {
    if (!layout_.has_csr() || !has_direct_load(e, layout_.row_ptr())) return false;
    // Clamps of a position (min(p, nnz - 1), max(p, 0)) are positions too.
    Expr p = e;
    while (true) {
        const Min *mn = p.as<Min>();
        const Max *mx = p.as<Max>();
        Expr a = mn ? mn->a : mx ? mx->a : Expr(), b = mn ? mn->b : mx ? mx->b : Expr();
        if (!a.defined()) break;
        bool ra = has_direct_load(a, layout_.row_ptr()), rb = has_direct_load(b, layout_.row_ptr());
        if (ra == rb) return false;
        p = ra ? a : b;
    }
    std::vector<Expr> terms;
    flatten_sum(p, terms);
    int row_ptr_terms = 0;
    for (const Expr &t : terms) {
        if (row_ptr_term(t, layout_.row_ptr())) row_ptr_terms++;
        // An offset clamped by the row's extent, min(k, row_ptr(v + 1) - row_ptr(v) - 1), is an
        // offset too (analyze_position bounds it, or the position is clamped into the array).
        else if (has_direct_load(t, layout_.row_ptr()) && !t.as<Min>()) return false;
    }
    return row_ptr_terms == 1;
}

Interval RaggedBoundsPass::sparse_value_range(const Expr &value) const {
    if (!value.defined()) return Interval::everything();
    Expr e = expand(value);
    while (const Let *l = e.as<Let>()) e = substitute(l->name, l->value, l->body);
    if (is_position(e)) {
        Expr hi = layout_.nnz() - 1;
        return Interval(make_zero(hi.type()), hi);
    }
    Rangify r(layout_, func_ranges_);
    Expr sub = r.mutate(e);
    if (!r.substituted) return Interval::everything();
    // RVars take their whole domain here, not their predicate-tightened bounds: those read row_ptr
    // and would make the range row-dependent.
    std::map<std::string, Interval> vars = r.scope;
    for (const auto &[name, iv] : rvar_domain_)
        if (!vars.count(name)) vars[name] = iv;
    Interval iv = bounds_in(sub, vars);
    if (!iv.is_bounded()) return Interval::everything();
    Expr lo = simplify(iv.min), hi = simplify(iv.max);
    if (!param_only(lo) || !param_only(hi)) return Interval::everything();
    return Interval(lo, hi);
}

namespace {

/// Replaces the direct row_ptr loads of an expression by fresh variables.
class RowPtrVars : public IRMutator {
public:
    explicit RowPtrVars(const std::string &row_ptr) : row_ptr_(row_ptr) {}
    std::map<std::string, Expr> loads;  ///< variable name -> the load it stands for

protected:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (!is_load(op)) return IRMutator::visit(op);
        if (buffer_of(op) != row_ptr_) return op;
        for (const auto &[name, load] : loads)
            if (equal(load, Expr(op))) return Variable::make(op->type, name);
        std::string name = "__ragged_row_ptr_" + std::to_string(loads.size());
        loads[name] = op;
        return Variable::make(op->type, name);
    }

private:
    const std::string &row_ptr_;
};

}  // namespace

RaggedBoundsPass::PositionInfo RaggedBoundsPass::analyze_position(const Expr &index) const {
    PositionInfo info;
    // Per row, the row pointer loads are constants: replace them by variables outside the scope (the
    // same load by the same variable, here and in the RVar bounds, so that they cancel); RVars take
    // their predicate-tightened bounds, pure Vars their symbolic min / max.
    RowPtrVars rp(layout_.row_ptr());
    Expr sub = rp.mutate(index);
    std::map<std::string, Interval> vars;
    FreeVars fv;
    sub.accept(&fv);
    for (const std::string &n : fv.names) {
        if (rp.loads.count(n)) continue;
        auto it = rvar_bounds_.find(n);
        if (it != rvar_bounds_.end()) {
            vars[n] = Interval(rp.mutate(it->second.min), rp.mutate(it->second.max));
        } else {
            vars[n] = Interval(Variable::make(Int(32), n + ".min"), Variable::make(Int(32), n + ".max"));
        }
    }
    Interval iv = bounds_in(sub, vars);
    if (!iv.is_bounded()) return info;
    Expr lo = simplify(iv.min), hi = simplify(iv.max);
    info.row_range = interval_text(substitute(rp.loads, lo), substitute(rp.loads, hi));

    // The position stays inside the array if its per-row maximum, with every row_ptr value in
    // [0, nnz], is provably at most nnz - 1 (row_ptr(v) + k with k < row_ptr(v + 1) - row_ptr(v)).
    std::map<std::string, Interval> row_vals;
    for (const auto &[name, load] : rp.loads)
        row_vals[name] = Interval(make_zero(load.type()), cast(load.type(), layout_.nnz()));
    Interval upper = bounds_in(hi, row_vals);
    if (upper.has_upper_bound()) {
        Expr fits = simplify(upper.max <= cast(upper.max.type(), layout_.nnz() - 1));
        info.inside_array = can_prove(fits);
    }
    return info;
}

void RaggedBoundsPass::record(RaggedRewrite r) {
    std::string key = r.func + "|" + std::to_string(r.stage) + "|" + r.buffer + "|" + std::to_string(r.dimension) +
                      (r.value ? "|value" : "") +
                      "|" + to_string(r.kind) + "|" + r.range + "|" + r.row_range;
    if (seen_.insert(key).second) rewrites_.push_back(std::move(r));
}

Expr RaggedBoundsPass::rewrite_arg(const Expr &arg, const std::string &buffer, int dim, bool is_value) {
    // What the argument computes, with the Lets around it and in it substituted.
    Expr full = expand(arg);
    while (const Let *l = full.as<Let>()) full = substitute(l->name, l->value, l->body);
    if (is_promise(arg) || is_promise(full)) return arg;
    RaggedRewrite r;
    r.func = func_;
    r.stage = stage_;
    r.buffer = buffer;
    r.dimension = dim;
    r.value = is_value;
    Expr value = arg;
    if (is_value && !is_position(full)) return arg;
    if (is_position(full)) {
        r.kind = RaggedRewrite::Kind::Position;
        r.min = make_zero(arg.type());
        r.max = simplify(cast(arg.type(), layout_.nnz() - 1));
        PositionInfo info = analyze_position(full);
        r.row_range = info.row_range;
        if (!info.inside_array) {
            // A position that is not bounded by its row (a staged tile over a pure Var, reading
            // past a row's end) is clamped into the array: the entries read there are never used.
            value = Halide::min(arg, r.max);
            r.clamped = true;
        }
    } else {
        Interval iv = sparse_value_range(full);
        if (!iv.is_bounded()) {
            // Accesses that read sparse data but cannot be bounded are left to Halide (which will
            // report them as unbounded if it cannot bound them either).
            Rangify probe(layout_, func_ranges_);
            probe.mutate(full);
            if (probe.substituted || has_direct_load(full, layout_.row_ptr())) {
                std::string note = func_ + ": " + buffer + " dim " + std::to_string(dim) + " index " + text(full) +
                                   " depends on sparse data but has no inferable range";
                if (seen_notes_.insert(note).second) notes_.push_back(note);
            }
            return arg;
        }
        r.kind = RaggedRewrite::Kind::Gather;
        r.min = simplify(cast(arg.type(), iv.min));
        r.max = simplify(cast(arg.type(), iv.max));
    }
    r.range = interval_text(r.min, r.max);
    Expr out = unsafe_promise_clamped(value, r.min, r.max);
    record(std::move(r));
    return out;
}

Expr RaggedBoundsPass::visit(const Call *op) {
    if (!is_load(op)) return IRMutator::visit(op);
    std::vector<Expr> args(op->args.size());
    bool changed = false;
    for (size_t i = 0; i < op->args.size(); i++) {
        Expr a = mutate(op->args[i]);
        args[i] = rewrite_arg(a, buffer_of(op), static_cast<int>(i), false);
        changed = changed || !args[i].same_as(op->args[i]);
    }
    if (!changed) return op;
    return Call::make(op->type, op->name, args, op->call_type, op->func, op->value_index, op->image, op->param);
}

Expr RaggedBoundsPass::visit(const Let *op) {
    Expr value = mutate(op->value);
    // Definitions are CSE'd (let t0 = row_ptr(v) in ...): arguments are analyzed with the Let-bound
    // values in scope substituted back in.
    auto old = let_values_.find(op->name);
    std::optional<Expr> saved;
    if (old != let_values_.end()) saved = old->second;
    let_values_[op->name] = expand(value);
    Expr body = mutate(op->body);
    if (saved) let_values_[op->name] = *saved;
    else let_values_.erase(op->name);
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->name, value, body);
}

Expr RaggedBoundsPass::expand(const Expr &e) const { return let_values_.empty() ? e : substitute(let_values_, e); }

void RaggedBoundsPass::rewrite_update_args(std::vector<Expr> &args) {
    for (size_t i = 0; i < args.size(); i++) args[i] = rewrite_arg(args[i], func_, static_cast<int>(i), false);
}

void RaggedBoundsPass::rewrite_position_values(std::vector<Expr> &values) {
    for (size_t i = 0; i < values.size(); i++) values[i] = rewrite_arg(values[i], func_, static_cast<int>(i), true);
}

RaggedBoundsReport infer_ragged_bounds(const std::vector<Func> &funcs, const SparseLayout &layout) {
    RaggedBoundsReport report;
    std::vector<Function> fns = reachable_functions(funcs);
    RaggedBoundsPass pass(layout);

    // Value ranges of pure Funcs (staged neighbour ids, edge ids, positions), to a fixed point so
    // that chains of Funcs are covered.
    std::map<std::pair<std::string, int>, Interval> ranges;
    for (size_t iter = 0; iter <= fns.size(); iter++) {
        bool changed = false;
        for (const Function &fn : fns) {
            if (!fn.has_pure_definition() || fn.has_update_definition() || fn.has_extern_definition()) continue;
            pass.enter_definition(fn.name(), 0, fn.definition());
            const std::vector<Expr> &values = fn.values();
            for (size_t i = 0; i < values.size(); i++) {
                Interval iv = pass.sparse_value_range(values[i]);
                if (!iv.is_bounded()) continue;
                auto key = std::make_pair(fn.name(), static_cast<int>(i));
                auto it = ranges.find(key);
                if (it == ranges.end() || !same_interval(it->second, iv)) {
                    ranges[key] = iv;
                    changed = true;
                }
            }
        }
        pass.set_func_value_ranges(ranges);
        if (!changed) break;
    }

    for (Function &fn : fns) {
        report.funcs.push_back(fn.name());
        if (fn.has_extern_definition()) continue;
        if (fn.has_pure_definition()) {
            Definition &def = fn.definition();
            pass.enter_definition(fn.name(), 0, def);
            def.mutate(&pass);
            if (!fn.has_update_definition()) pass.rewrite_position_values(def.values());
        }
        for (size_t u = 0; u < fn.updates().size(); u++) {
            Definition &def = fn.update(static_cast<int>(u));
            pass.enter_definition(fn.name(), static_cast<int>(u) + 1, def);
            def.mutate(&pass);
            pass.rewrite_update_args(def.args());
            for (Specialization &s : def.specializations()) pass.rewrite_update_args(s.definition.args());
        }
    }
    report.rewrites = pass.rewrites();
    report.notes = pass.notes();
    return report;
}

}  // namespace gsparse::ext
