#include "halide_ext/ir_inspect.h"

#include <fnmatch.h>

#include <memory>
#include <set>
#include <sstream>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

bool name_matches(const std::string &name, const std::string &pattern) {
    return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

namespace {

/// A lowering pass that records the Stmt it is given and returns it unchanged.
class StmtRecorder : public IRMutator {
public:
    explicit StmtRecorder(std::shared_ptr<Stmt> out) : out_(std::move(out)) {}
    using IRMutator::mutate;
    Stmt mutate(const Stmt &s) override {
        *out_ = s;
        return s;
    }

private:
    std::shared_ptr<Stmt> out_;
};

/// Whether an expression uses a variable matching a pattern or one of a set of names.
class UsesVar : public IRVisitor {
public:
    UsesVar(const std::string &pattern, const std::set<std::string> *names) : pattern_(pattern), names_(names) {}
    bool found = false;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (name_matches(op->name, pattern_) || (names_ && names_->count(op->name))) found = true;
    }

private:
    const std::string &pattern_;
    const std::set<std::string> *names_;
};

bool uses(const Expr &e, const std::string &pattern, const std::set<std::string> *names) {
    if (!e.defined()) return false;
    UsesVar u(pattern, names);
    e.accept(&u);
    return u.found;
}

/// Walks a Stmt keeping track of the enclosing loops, branch conditions and the Let-bound names that
/// depend on thread variables; subclasses look at the nodes they care about.
class ContextVisitor : public IRVisitor {
public:
    explicit ContextVisitor(std::string thread_pattern = kThreadIdPattern) : thread_pattern_(std::move(thread_pattern)) {}

protected:
    using IRVisitor::visit;

    void visit(const For *op) override {
        bool dep = uses(op->min, thread_pattern_, &thread_lets_) || uses(op->extent, thread_pattern_, &thread_lets_);
        on_loop(op);
        op->min.accept(this);
        op->extent.accept(this);
        loops_.push_back(op->name);
        thread_loops_ += dep ? 1 : 0;
        op->body.accept(this);
        thread_loops_ -= dep ? 1 : 0;
        loops_.pop_back();
    }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        bool dep = uses(op->condition, thread_pattern_, &thread_lets_);
        thread_conditions_ += dep ? 1 : 0;
        conditions_.push_back(op->condition);
        op->then_case.accept(this);
        conditions_.pop_back();
        if (op->else_case.defined()) {
            conditions_.push_back(!op->condition);
            op->else_case.accept(this);
            conditions_.pop_back();
        }
        thread_conditions_ -= dep ? 1 : 0;
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        bool dep = bind(op->name, op->value);
        lets_.emplace_back(op->name, op->value);
        op->body.accept(this);
        lets_.pop_back();
        unbind(op->name, dep);
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        bool dep = bind(op->name, op->value);
        lets_.emplace_back(op->name, op->value);
        op->body.accept(this);
        lets_.pop_back();
        unbind(op->name, dep);
    }

    /// e with the values of the enclosing Let / LetStmt bindings substituted in.
    Expr expand(Expr e) const {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) e = substitute(it->first, it->second, e);
        return e;
    }

    virtual void on_loop(const For *) {}

    std::vector<std::string> loops_;
    std::vector<Expr> conditions_;
    int thread_conditions_ = 0;
    int thread_loops_ = 0;
    std::string thread_pattern_;
    std::vector<std::pair<std::string, Expr>> lets_;

private:
    bool bind(const std::string &name, const Expr &value) {
        bool dep = uses(value, thread_pattern_, &thread_lets_);
        if (dep) {
            shadow_.push_back(thread_lets_.count(name) > 0);
            thread_lets_.insert(name);
        }
        return dep;
    }
    void unbind(const std::string &name, bool dep) {
        if (!dep) return;
        bool was = shadow_.back();
        shadow_.pop_back();
        if (!was) thread_lets_.erase(name);
    }

    std::set<std::string> thread_lets_;
    std::vector<bool> shadow_;
};

class AllocationFinder : public ContextVisitor {
public:
    explicit AllocationFinder(const std::string &pattern) : pattern_(pattern) {}
    std::vector<AllocationInfo> found;

protected:
    using ContextVisitor::visit;
    void visit(const Allocate *op) override {
        if (name_matches(op->name, pattern_)) {
            AllocationInfo a;
            a.name = op->name;
            a.type = op->type;
            a.memory_type = op->memory_type;
            a.extents = op->extents;
            for (const Expr &e : op->extents) a.expanded_extents.push_back(simplify(expand(e)));
            a.condition = op->condition;
            a.enclosing_loops = loops_;
            found.push_back(std::move(a));
        }
        ContextVisitor::visit(op);
    }

private:
    const std::string &pattern_;
};

class CallFinder : public ContextVisitor {
public:
    CallFinder(const std::string &pattern, const std::string &thread_pattern)
        : ContextVisitor(thread_pattern), pattern_(pattern) {}
    std::vector<CallSite> found;

protected:
    using ContextVisitor::visit;
    void visit(const Call *op) override {
        if (name_matches(op->name, pattern_)) {
            CallSite c;
            c.name = op->name;
            c.args = op->args;
            c.enclosing_loops = loops_;
            c.enclosing_conditions = conditions_;
            c.under_thread_dependent_condition = thread_conditions_ > 0;
            c.under_thread_dependent_loop = thread_loops_ > 0;
            found.push_back(std::move(c));
        }
        ContextVisitor::visit(op);
    }

private:
    const std::string &pattern_;
};

class LoopLister : public ContextVisitor {
public:
    explicit LoopLister(const std::string &pattern) : pattern_(pattern) {}
    std::vector<LoopInfo> found;

protected:
    void on_loop(const For *op) override {
        if (!name_matches(op->name, pattern_)) return;
        LoopInfo l;
        l.name = op->name;
        l.min = op->min;
        l.extent = op->extent;
        l.expanded_extent = simplify(expand(op->extent));
        l.for_type = op->for_type;
        l.device_api = op->device_api;
        l.depth = static_cast<int>(loops_.size());
        found.push_back(std::move(l));
    }

private:
    const std::string &pattern_;
};

class AccessFinder : public ContextVisitor {
public:
    AccessFinder(const std::string &pattern, bool stores) : pattern_(pattern), stores_(stores) {}
    std::vector<AccessInfo> found;

protected:
    using ContextVisitor::visit;
    void visit(const Load *op) override {
        if (!stores_ && name_matches(op->name, pattern_)) {
            AccessInfo a;
            a.buffer = op->name;
            a.index = op->index;
            a.predicate = op->predicate;
            a.type = op->type;
            a.enclosing_loops = loops_;
            found.push_back(std::move(a));
        }
        ContextVisitor::visit(op);
    }
    void visit(const Store *op) override {
        if (stores_ && name_matches(op->name, pattern_)) {
            AccessInfo a;
            a.buffer = op->name;
            a.index = op->index;
            a.value = op->value;
            a.predicate = op->predicate;
            a.type = op->value.type();
            a.enclosing_loops = loops_;
            found.push_back(std::move(a));
        }
        ContextVisitor::visit(op);
    }

private:
    const std::string &pattern_;
    bool stores_;
};

}  // namespace

Stmt lowered_stmt(Pipeline pipeline, const std::vector<Argument> &args, const Target &target) {
    // A fresh pipeline over the same outputs, with the original's passes (owned by the original)
    // and the recorder last, so the pipeline passed in keeps its passes and its compiled state.
    Pipeline copy(pipeline.outputs());
    for (const CustomLoweringPass &p : pipeline.custom_lowering_passes())
        copy.add_custom_lowering_pass(p.pass, [] {});
    auto out = std::make_shared<Stmt>();
    auto *recorder = new StmtRecorder(out);
    copy.add_custom_lowering_pass(recorder, [recorder] { delete recorder; });
    copy.compile_to_module(args, "gsparse_lowered", target);
    return *out;
}

Stmt lowered_stmt(Pipeline pipeline, const Target &target) {
    std::vector<Argument> args = pipeline.infer_arguments();
    return lowered_stmt(pipeline, args, target);
}

std::string stmt_text(const Stmt &s) {
    std::ostringstream o;
    o << s;
    return o.str();
}

namespace {

/// The names of the variables of an expression.
class VarNames : public IRVisitor {
public:
    std::set<std::string> names;

protected:
    using IRVisitor::visit;
    void visit(const Variable *op) override { names.insert(op->name); }
};

/// A constant upper bound of e over all values of its variables (and of the loads and calls in it).
std::optional<int64_t> constant_upper_bound(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    VarNames vars;
    e.accept(&vars);
    Scope<Interval> scope;
    for (const std::string &n : vars.names) scope.push(n, Interval::everything());
    Interval iv = bounds_of_expr_in_scope(e, scope);
    if (!iv.has_upper_bound()) return std::nullopt;
    const int64_t *c = as_const_int(simplify(iv.max));
    if (!c) return std::nullopt;
    return *c;
}

}  // namespace

std::optional<std::vector<int64_t>> AllocationInfo::extent_upper_bounds() const {
    std::vector<int64_t> r;
    for (const Expr &e : expanded_extents) {
        auto c = constant_upper_bound(e);
        if (!c) return std::nullopt;
        r.push_back(*c);
    }
    return r;
}

std::optional<int64_t> AllocationInfo::elements_upper_bound() const {
    auto ext = extent_upper_bounds();
    if (!ext) return std::nullopt;
    int64_t n = 1;
    for (int64_t e : *ext) n *= e;
    return n;
}

std::optional<std::vector<int64_t>> AllocationInfo::constant_extents() const {
    std::vector<int64_t> r;
    for (const Expr &e : extents) {
        const int64_t *c = as_const_int(simplify(e));
        if (!c) return std::nullopt;
        r.push_back(*c);
    }
    return r;
}

std::optional<int64_t> AllocationInfo::constant_elements() const {
    auto ext = constant_extents();
    if (!ext) return std::nullopt;
    int64_t n = 1;
    for (int64_t e : *ext) n *= e;
    return n;
}

std::optional<int64_t> LoopInfo::extent_upper_bound() const { return constant_upper_bound(expanded_extent); }

std::optional<int64_t> LoopInfo::constant_extent() const {
    const int64_t *c = as_const_int(simplify(extent));
    if (!c) return std::nullopt;
    return *c;
}

std::vector<AllocationInfo> find_allocations(const Stmt &s, const std::string &pattern) {
    AllocationFinder f(pattern);
    if (s.defined()) s.accept(&f);
    return f.found;
}

std::vector<CallSite> find_calls(const Stmt &s, const std::string &pattern, const std::string &thread_pattern) {
    CallFinder f(pattern, thread_pattern);
    if (s.defined()) s.accept(&f);
    return f.found;
}

size_t count_calls(const Stmt &s, const std::string &pattern) { return find_calls(s, pattern).size(); }

std::vector<LoopInfo> list_loops(const Stmt &s, const std::string &pattern) {
    LoopLister f(pattern);
    if (s.defined()) s.accept(&f);
    return f.found;
}

std::vector<AccessInfo> find_loads(const Stmt &s, const std::string &buffer_pattern) {
    AccessFinder f(buffer_pattern, false);
    if (s.defined()) s.accept(&f);
    return f.found;
}

std::vector<AccessInfo> find_stores(const Stmt &s, const std::string &buffer_pattern) {
    AccessFinder f(buffer_pattern, true);
    if (s.defined()) s.accept(&f);
    return f.found;
}

bool expr_uses_var_matching(const Expr &e, const std::string &pattern) { return uses(e, pattern, nullptr); }

}  // namespace gsparse::ext
