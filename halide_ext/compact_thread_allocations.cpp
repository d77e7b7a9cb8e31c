#include "halide_ext/compact_thread_allocations.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

/// The values of the Lets around a node, each with the Lets around it substituted in (so one
/// substitution expands an expression fully).
class ExpandedLets {
public:
    Expr expand(const Expr &e) const { return substitute(values_, substitute_in_all_lets(e)); }

    /// Binds `name` to its expanded `value` for the Binding's lifetime (restoring a shadowed one).
    class Binding {
    public:
        Binding(ExpandedLets &lets, const std::string &name, const Expr &value) : lets_(lets), name_(name) {
            auto it = lets.values_.find(name);
            if (it != lets.values_.end()) saved_ = it->second;
            lets.values_[name] = lets.expand(value);
        }
        ~Binding() {
            if (saved_.defined()) {
                lets_.values_[name_] = saved_;
            } else {
                lets_.values_.erase(name_);
            }
        }
        Binding(const Binding &) = delete;
        Binding &operator=(const Binding &) = delete;

    private:
        ExpandedLets &lets_;
        std::string name_;
        Expr saved_;
    };

private:
    std::map<std::string, Expr> values_;
};

namespace {

/// Whether e reads memory, calls something impure, or names a variable in `bound`.
bool varies_within(const Expr &e, const std::set<std::string> &bound) {
    class Finder : public IRVisitor {
    public:
        explicit Finder(const std::set<std::string> &b) : bound(b) {}
        const std::set<std::string> &bound;
        bool varies = false;

    private:
        using IRVisitor::visit;
        void visit(const Variable *v) override { varies = varies || bound.count(v->name) > 0; }
        void visit(const Load *) override { varies = true; }
        void visit(const Call *c) override {
            if (!c->is_pure()) varies = true;
            IRVisitor::visit(c);
        }
    } finder(bound);
    e.accept(&finder);
    return finder.varies;
}

/// Distributes widening casts of signed 32-bit arithmetic over it (`int64(x*2 + 64)` becomes
/// `int64(x)*2 + 64`), so that the simplifier can take the difference of two such indices. Valid
/// because Halide's signed 32-bit arithmetic does not overflow.
class DistributeWideningCasts : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Cast *op) override {
        const Type from = op->value.type();
        const bool widening = op->type.is_int() && from.is_int() && from.bits() == 32 && op->type.bits() > 32;
        if (!widening) return IRMutator::visit(op);
        auto wide = [&](const Expr &e) { return mutate(Cast::make(op->type, e)); };
        if (const Add *a = op->value.as<Add>()) return Add::make(wide(a->a), wide(a->b));
        if (const Sub *b = op->value.as<Sub>()) return Sub::make(wide(b->a), wide(b->b));
        if (const Mul *m = op->value.as<Mul>()) return Mul::make(wide(m->a), wide(m->b));
        if (const IntImm *c = op->value.as<IntImm>()) return make_const(op->type, c->value);
        return IRMutator::visit(op);
    }
};

/// Walks (and, in the rewrite step, rewrites) the accesses of one allocation. Every access index
/// is expanded through the Lets around it and compared with the first access's start: the
/// difference must be a constant. The rewrite step replaces each index by that constant minus
/// `shift`.
class AllocationAccesses : public IRMutator {
public:
    AllocationAccesses(std::string name, ExpandedLets outer_lets) : name_(std::move(name)), lets_(std::move(outer_lets)) {}

    bool ok = true;
    int64_t lo = 0, hi = 0;  ///< smallest and one past the largest element offset seen
    std::optional<int64_t> shift;  ///< set for the rewrite step

private:
    using IRMutator::visit;

    Expr expand(const Expr &e) const {
        return simplify(DistributeWideningCasts().mutate(lets_.expand(e)));
    }

    /// The constant offset of the index's start from the first access's, with its stride, or
    /// nothing when the index does not have that form.
    std::optional<Expr> reindex(const Expr &index) {
        Expr start = index, stride;
        int lanes = 1;
        if (const Ramp *r = index.as<Ramp>()) {
            start = r->base;
            stride = r->stride;
            lanes = r->lanes;
        } else if (const Broadcast *b = index.as<Broadcast>()) {
            start = b->value;
            stride = make_zero(b->value.type());
            lanes = b->lanes;
        }
        int64_t step = 0;
        if (stride.defined()) {
            const int64_t *s = as_const_int(simplify(stride));
            if (!s) return std::nullopt;
            step = *s;
        }
        const Expr x = expand(start);
        if (!base_.defined()) {
            if (varies_within(x, bound_)) return std::nullopt;
            base_ = x;
        }
        if (x.type() != base_.type()) return std::nullopt;
        const int64_t *c = as_const_int(simplify(DistributeWideningCasts().mutate(x - base_)));
        if (!c) return std::nullopt;
        const int64_t first = *c, last = *c + step * (lanes - 1);
        const int64_t a = std::min(first, last), b = std::max(first, last) + 1;
        if (!seen_) {
            lo = a;
            hi = b;
            seen_ = true;
        } else {
            lo = std::min(lo, a);
            hi = std::max(hi, b);
        }
        if (!shift) return index;
        const Expr at = make_const(start.type(), first - *shift);
        if (lanes == 1 && !stride.defined()) return at;
        if (step == 0) return Broadcast::make(at, lanes);
        return Ramp::make(at, make_const(start.type(), step), lanes);
    }

    Expr visit(const Variable *op) override {
        if (op->name == name_ || op->name.rfind(name_ + ".", 0) == 0) ok = false;  // used as a handle
        return op;
    }

    Expr visit(const Load *op) override {
        if (op->name != name_) return IRMutator::visit(op);
        Expr predicate = mutate(op->predicate);
        auto index = reindex(op->index);
        if (!index) {
            ok = false;
            return IRMutator::visit(op);
        }
        return Load::make(op->type, op->name, *index, op->image, op->param, predicate, ModulusRemainder());
    }

    Stmt visit(const Store *op) override {
        if (op->name != name_) return IRMutator::visit(op);
        Expr value = mutate(op->value), predicate = mutate(op->predicate);
        auto index = reindex(op->index);
        if (!index) {
            ok = false;
            return IRMutator::visit(op);
        }
        return Store::make(op->name, value, *index, op->param, predicate, ModulusRemainder());
    }

    Stmt visit(const For *op) override {
        // Names of loops inside the allocation that run within one thread: an index that depends
        // on them moves over the allocation. GPU block and thread loops are fixed for a thread.
        const bool gpu = op->for_type == ForType::GPUBlock || op->for_type == ForType::GPUThread ||
                         op->for_type == ForType::GPULane;
        if (!gpu) bound_.insert(op->name);
        Stmt s = IRMutator::visit(op);
        if (!gpu) bound_.erase(op->name);
        return s;
    }

    template<typename LetOrLetStmt>
    auto visit_let(const LetOrLetStmt *op) -> decltype(op->body) {
        const Expr value = mutate(op->value);
        ExpandedLets::Binding bind(lets_, op->name, op->value);
        return LetOrLetStmt::make(op->name, value, mutate(op->body));
    }
    Expr visit(const Let *op) override { return visit_let(op); }
    Stmt visit(const LetStmt *op) override { return visit_let(op); }

    std::string name_;
    ExpandedLets lets_;
    std::set<std::string> bound_;
    Expr base_;
    bool seen_ = false;
};

}  // namespace

Stmt CompactThreadAllocations::run(const Stmt &s) {
    lets_ = std::make_shared<ExpandedLets>();
    in_kernel_ = 0;
    return IRMutator::mutate(s);
}

Stmt CompactThreadAllocations::visit(const For *op) {
    const bool block = op->for_type == ForType::GPUBlock;
    in_kernel_ += block;
    Stmt result = IRMutator::visit(op);
    in_kernel_ -= block;
    return result;
}

Stmt CompactThreadAllocations::visit(const LetStmt *op) {
    // Outside kernels the host code's Lets do not reach a thread's indices.
    if (in_kernel_ == 0) return IRMutator::visit(op);
    const Expr value = mutate(op->value);
    ExpandedLets::Binding bind(*lets_, op->name, op->value);
    Stmt body = mutate(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return op;
    return LetStmt::make(op->name, value, body);
}

Stmt CompactThreadAllocations::visit(const Allocate *op) {
    Stmt body = mutate(op->body);
    const bool thread_frame = in_kernel_ > 0 && op->memory_type != MemoryType::GPUShared &&
                              op->memory_type != MemoryType::GPUTexture && op->memory_type != MemoryType::Heap &&
                              !op->new_expr.defined() && op->constant_allocation_size() > 0;
    auto keep = [&] {
        if (body.same_as(op->body)) return Stmt(op);
        return Allocate::make(op->name, op->type, op->memory_type, op->extents, op->condition, body, op->new_expr,
                              op->free_function);
    };
    if (!thread_frame) return keep();
    AllocationAccesses probe(op->name, *lets_);
    probe.mutate(body);
    if (!probe.ok || probe.hi <= probe.lo) return keep();
    const int64_t span = probe.hi - probe.lo;
    if (span >= op->constant_allocation_size()) return keep();
    AllocationAccesses rewrite(op->name, *lets_);
    rewrite.shift = probe.lo;
    Stmt compact = rewrite.mutate(body);
    if (!rewrite.ok) return keep();
    count_rewrite();
    return Allocate::make(op->name, op->type, op->memory_type, {make_const(Int(32), span)}, op->condition, compact,
                          op->new_expr, op->free_function);
}

}  // namespace gsparse::ext
