#include "halide_ext/segmented_lane_atomics.h"

#include "halide_ext/atomic_add_rewrites.h"

#include <map>
#include <utility>
#include <vector>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

constexpr int kLanes = 32;

/// The Atomic nodes of a step loop's body, and whether each is an add the pass can combine: of the
/// right form, not inside a nested loop, under no condition that depends on the lane.
class FindLaneAdds : public IRVisitor {
public:
    explicit FindLaneAdds(Scope<> &lane_dependent) : lane_dependent_(lane_dependent) {}
    int atomics = 0;
    std::vector<AtomicAdd> adds;

private:
    using IRVisitor::visit;
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        const bool dep = expr_uses_vars(op->value, lane_dependent_);
        if (dep) lane_dependent_.push(op->name);
        op->body.accept(this);
        if (dep) lane_dependent_.pop(op->name);
    }
    void visit(const IfThenElse *op) override {
        if (expr_uses_vars(op->condition, lane_dependent_)) divergent_++;
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
        if (expr_uses_vars(op->condition, lane_dependent_)) divergent_--;
    }
    void visit(const For *op) override {
        loops_++;
        IRVisitor::visit(op);
        loops_--;
    }
    void visit(const Atomic *op) override {
        atomics++;
        if (divergent_ || loops_) return;
        auto a = match_atomic_add(op);
        if (!a || !(a->store->index.type() == Int(32) || a->store->index.type() == Int(64))) return;
        const Type t = a->value.type();
        if (t == Float(32) || t == Int(32)) adds.push_back(*a);
    }

    Scope<> &lane_dependent_;
    int divergent_ = 0, loops_ = 0;
};

std::string type_suffix(Type t) { return t.is_float() ? "f32" : "i32"; }

/// shfl.sync.<mode> of a 32-bit value over the whole warp.
Expr shuffle(const std::string &mode, Expr v, int operand, int clamp) {
    const Type t = v.type();
    return Call::make(t, "llvm.nvvm.shfl.sync." + mode + "." + type_suffix(t),
                      {make_const(Int(32), -1), std::move(v), make_const(Int(32), operand), make_const(Int(32), clamp)},
                      Call::PureExtern);
}

/// shfl.sync.<mode> of an int32 or int64 address (an int64 as its two halves).
Expr shuffle_index(const std::string &mode, const Expr &i, int operand, int clamp) {
    if (i.type() == Int(32)) return shuffle(mode, i, operand, clamp);
    Expr lo = shuffle(mode, cast(Int(32), i), operand, clamp);
    Expr hi = shuffle(mode, cast(Int(32), i >> 32), operand, clamp);
    return (cast(Int(64), hi) << 32) | cast(Int(64), cast(UInt(32), lo));
}

/// Builds a chain of Lets ending in a statement.
class LetChain {
public:
    explicit LetChain(std::string prefix) : prefix_(std::move(prefix)) {}
    Expr let(const std::string &name, Expr value) {
        const std::string full = prefix_ + "." + name;
        lets_.emplace_back(full, value);
        return Variable::make(value.type(), full);
    }
    Stmt wrap(Stmt body) const {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) body = LetStmt::make(it->first, it->second, body);
        return body;
    }

private:
    std::string prefix_;
    std::vector<std::pair<std::string, Expr>> lets_;
};

}  // namespace

Stmt SegmentedLaneAtomics::run(const Stmt &s) {
    lane_.clear();
    lane_dependent_ = Scope<>();
    return IRMutator::mutate(s);
}

Stmt SegmentedLaneAtomics::visit(const LetStmt *op) {
    const bool dep = !lane_.empty() && expr_uses_vars(op->value, lane_dependent_);
    if (dep) lane_dependent_.push(op->name);
    Stmt s = IRMutator::visit(op);
    if (dep) lane_dependent_.pop(op->name);
    return s;
}

Stmt SegmentedLaneAtomics::visit(const For *op) {
    const bool lane_loop = op->for_type == ForType::GPUThread && ends_with(op->name, "__thread_id_x") &&
                           is_const_zero(op->min) && is_const(op->extent, kLanes);
    if (lane_loop) {
        const std::string outer = lane_;
        lane_ = op->name;
        lane_dependent_.push(op->name);
        Stmt body = mutate(op->body);
        lane_dependent_.pop(op->name);
        lane_ = outer;
        return body.same_as(op->body) ? Stmt(op)
                                      : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
    }
    Stmt body = mutate(op->body);
    if (!lane_.empty() && op->for_type == ForType::Serial && ends_with(op->name, "." + step_var_) &&
        as_const_int(op->extent)) {
        Stmt s = rewrite(op, body);
        if (s.defined()) return s;
    }
    return body.same_as(op->body) ? Stmt(op) : For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
}

Stmt SegmentedLaneAtomics::rewrite(const For *op, const Stmt &body) {
    FindLaneAdds found(lane_dependent_);
    body.accept(&found);
    if (found.atomics == 0 || found.adds.size() != static_cast<size_t>(found.atomics)) return Stmt();

    const Expr lane = Variable::make(Int(32), lane_);
    const Expr last = make_const(Int(32), kLanes - 1);
    std::map<const Atomic *, Stmt> replacements;
    std::vector<Stmt> before, after;
    std::vector<std::pair<std::string, Type>> registers;
    for (const AtomicAdd &add : found.adds) {
        const std::string id = std::to_string(next_id_++);
        const std::string carry_index = "carry_index$" + id, carry_sum = "carry_sum$" + id;
        const Type vt = add.value.type();
        const Store *st = add.store;

        LetChain c("lane_scan$" + id);
        const Type kt = st->index.type();
        Expr key = c.let("key", st->index);
        Expr carried_key = c.let("carried_index", scalar_load(kt, carry_index));
        Expr carried_sum = c.let("carried_sum", scalar_load(vt, carry_sum));
        Expr prev = c.let("prev", shuffle_index("up", key, 1, 0));
        Expr head = c.let("head0", select(lane == 0, key != carried_key, key != prev));
        Expr s = c.let("sum0", add.value);
        Expr f = c.let("flag0", select(head, make_const(Int(32), 1), make_const(Int(32), 0)));
        int step = 1;
        for (int offset = 1; offset < kLanes; offset *= 2, step++) {
            Expr s_up = c.let("sum_up" + std::to_string(step), shuffle("up", s, offset, 0));
            Expr f_up = c.let("flag_up" + std::to_string(step), shuffle("up", f, offset, 0));
            Expr in = lane >= offset;
            Expr s_next = c.let("sum" + std::to_string(step), select(in && f == 0, s + s_up, s));
            f = c.let("flag" + std::to_string(step), select(in, f | f_up, f));
            s = s_next;
        }
        // The lanes of the first run continue the carried address (their flags stayed 0).
        s = c.let("total", select(f == 0, s + carried_sum, s));
        Expr next = c.let("next", shuffle_index("down", key, 1, kLanes - 1));
        // The carried run ends where lane 0 starts another address: lane 0 adds it.
        Stmt flush_carry = IfThenElse::make(lane == 0 && key != carried_key && carried_key >= make_zero(kt),
                                            atomic_add_at(add, carried_key, carried_sum));
        Stmt flush_run = IfThenElse::make(lane != last && key != next, atomic_add_at(add, key, s));
        Stmt carry = Block::make(scalar_store(carry_index, shuffle_index("idx", key, kLanes - 1, kLanes - 1)),
                                 scalar_store(carry_sum, shuffle("idx", s, kLanes - 1, kLanes - 1)));
        replacements[add.atomic] = c.wrap(Block::make({flush_carry, flush_run, carry}));

        before.push_back(scalar_store(carry_index, make_const(kt, -1)));
        before.push_back(scalar_store(carry_sum, make_zero(vt)));
        Expr final_index = scalar_load(kt, carry_index);
        after.push_back(IfThenElse::make(lane == 0 && final_index >= 0,
                                         atomic_add_at(add, final_index, scalar_load(vt, carry_sum))));
        registers.emplace_back(carry_index, kt);
        registers.emplace_back(carry_sum, vt);
    }
    Stmt new_body = replace_atomics(body, std::move(replacements));
    count_rewrite();
    return loop_in_registers(op, new_body, before, after, registers);
}

}  // namespace gsparse::ext
