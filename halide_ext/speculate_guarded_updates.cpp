#include "halide_ext/speculate_guarded_updates.h"

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The `e` of a sum update `a[i] = a[i] + e` (either operand order), or an undefined Expr.
Expr summand_of(const Store *op) {
    const auto *add = op->value.as<Add>();
    if (!add || !is_const_one(op->predicate)) return Expr();
    auto is_self = [&](const Expr &x) {
        const auto *load = x.as<Load>();
        return load && load->name == op->name && equal(load->index, op->index) && is_const_one(load->predicate);
    };
    if (is_self(add->a)) return add->b;
    if (is_self(add->b)) return add->a;
    return Expr();
}

/// Every buffer read by an Expr, and whether it calls anything impure or loads a vector.
class Reads : public IRVisitor {
public:
    std::set<std::string> buffers;
    bool impure = false;

private:
    using IRVisitor::visit;
    void visit(const Load *op) override {
        buffers.insert(op->name);
        if (op->type.is_vector()) impure = true;
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (!op->is_pure()) impure = true;
        IRVisitor::visit(op);
    }
};

/// The loads of an Expr.
class CollectLoads : public IRVisitor {
public:
    std::vector<Expr> loads;

private:
    using IRVisitor::visit;
    void visit(const Load *op) override {
        loads.emplace_back(op);
        IRVisitor::visit(op);
    }
};

/// Loads whose index becomes `select(guard, index, 0)`: a load its guard rejects reads element 0.
/// Loads equal to one in `unconditional` (evaluated whatever the guard) are left alone.
class GuardLoads : public IRMutator {
public:
    GuardLoads(Expr guard, const std::vector<Expr> &unconditional) : guard_(std::move(guard)), unconditional_(unconditional) {}

private:
    using IRMutator::visit;
    Expr visit(const Load *op) override {
        for (const Expr &u : unconditional_)
            if (equal(u, Expr(op))) return op;
        Expr index = mutate(op->index);
        return Load::make(op->type, op->name, select(guard_, index, make_zero(index.type())), op->image, op->param,
                          op->predicate, ModulusRemainder());
    }
    Expr guard_;
    const std::vector<Expr> &unconditional_;
};

}  // namespace

SpeculateGuardedUpdates::SpeculateGuardedUpdates(std::string loop_prefix, std::string loop_part,
                                                 std::set<std::string> speculable)
    : loop_prefix_(std::move(loop_prefix)), loop_part_(std::move(loop_part)), speculable_(std::move(speculable)) {}

Stmt SpeculateGuardedUpdates::run(const Stmt &s) {
    converted_ = 0;
    local_allocations_.clear();
    in_loop_ = 0;
    return IRMutator::mutate(s);
}

Stmt SpeculateGuardedUpdates::visit(const Allocate *op) {
    const bool local = op->memory_type != MemoryType::GPUShared && op->memory_type != MemoryType::GPUTexture &&
                       op->memory_type != MemoryType::Heap;
    if (local) local_allocations_.insert(op->name);
    Stmt result = IRMutator::visit(op);
    if (local) local_allocations_.erase(op->name);
    return result;
}

Stmt SpeculateGuardedUpdates::visit(const For *op) {
    const bool target = op->name.rfind(loop_prefix_, 0) == 0 && op->name.find(loop_part_) != std::string::npos;
    if (target) in_loop_++;
    Stmt result = IRMutator::visit(op);
    if (target) in_loop_--;
    return result;
}

bool SpeculateGuardedUpdates::reads_only_speculable(const Expr &e) const {
    Reads reads;
    e.accept(&reads);
    if (reads.impure) return false;
    for (const auto &b : reads.buffers)
        if (!speculable_.count(b)) return false;
    return true;
}

bool SpeculateGuardedUpdates::convertible(const Stmt &s) const {
    if (const auto *block = s.as<Block>()) return convertible(block->first) && convertible(block->rest);
    if (const auto *let = s.as<LetStmt>()) return reads_only_speculable(let->value) && convertible(let->body);
    if (const auto *branch = s.as<IfThenElse>())
        return !branch->else_case.defined() && reads_only_speculable(branch->condition) &&
               convertible(branch->then_case);
    if (const auto *store = s.as<Store>()) {
        if (!local_allocations_.count(store->name)) return false;
        Expr e = summand_of(store);
        return e.defined() && reads_only_speculable(e) && reads_only_speculable(store->index);
    }
    return false;
}

Stmt SpeculateGuardedUpdates::flatten(const Stmt &s, const Expr &guard) {
    if (const auto *block = s.as<Block>()) return Block::make(flatten(block->first, guard), flatten(block->rest, guard));
    auto guarded = [&](const Expr &e) { return GuardLoads(guard, unconditional_loads_).mutate(e); };
    if (const auto *let = s.as<LetStmt>()) return LetStmt::make(let->name, guarded(let->value), flatten(let->body, guard));
    if (const auto *branch = s.as<IfThenElse>()) return flatten(branch->then_case, guard && guarded(branch->condition));
    const auto *store = s.as<Store>();
    if (!store) return s;  // convertible() admits nothing else
    Expr e = guarded(summand_of(store));
    converted_++;
    Expr load = Load::make(store->value.type(), store->name, store->index, Buffer<>(), store->param,
                           const_true(store->value.type().lanes()), store->alignment);
    Expr value = load + select(guard, e, make_zero(e.type()));
    return Store::make(store->name, value, store->index, store->param, store->predicate, store->alignment);
}

Stmt SpeculateGuardedUpdates::visit(const IfThenElse *op) {
    if (in_loop_ > 0 && !op->else_case.defined() && convertible(op->then_case) &&
        reads_only_speculable(op->condition)) {
        // The outermost guard is evaluated unconditionally, so are its loads.
        CollectLoads loads;
        op->condition.accept(&loads);
        unconditional_loads_ = std::move(loads.loads);
        Stmt result = flatten(op->then_case, op->condition);
        unconditional_loads_.clear();
        return result;
    }
    return IRMutator::visit(op);
}

}  // namespace gsparse::ext
