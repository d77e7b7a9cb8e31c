#include "halide_ext/accumulate_atomic_runs.h"

#include "halide_ext/atomic_add_rewrites.h"

#include <map>
#include <utility>
#include <vector>

namespace gsparse::ext {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The Atomic nodes of a loop body (their count), and the atomic adds among them.
class FindAtomicAdds : public IRVisitor {
public:
    int atomics = 0;
    std::vector<AtomicAdd> adds;

private:
    using IRVisitor::visit;
    void visit(const Atomic *op) override {
        atomics++;
        if (auto a = match_atomic_add(op)) adds.push_back(*a);
    }
};

}  // namespace

Stmt AccumulateAtomicRuns::visit(const For *op) {
    Stmt body = mutate(op->body);
    const bool named = ends_with(op->name, "." + loop_var_);
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
        const std::string id = std::to_string(next_id_++);
        const std::string run_index = "run_index$" + id, run_sum = "run_sum$" + id, idx_name = "run_next$" + id;
        const Type it = st->index.type(), vt = st->value.type();
        Expr cur = scalar_load(it, run_index), sum = scalar_load(vt, run_sum);

        // atomic { out[run_index] = out[run_index] + run_sum } when a run is open.
        Stmt flush = IfThenElse::make(cur >= make_zero(it), atomic_add_at(found_add, cur, sum));

        Expr idx = Variable::make(it, idx_name);
        Stmt open = Block::make({flush, scalar_store(run_index, idx), scalar_store(run_sum, make_zero(vt))});
        Stmt step = Block::make(IfThenElse::make(idx != cur, open), scalar_store(run_sum, sum + found_add.value));
        replacements[found_add.atomic] = LetStmt::make(idx_name, st->index, step);
        before.push_back(scalar_store(run_index, make_const(it, -1)));
        before.push_back(scalar_store(run_sum, make_zero(vt)));
        after.push_back(flush);
        registers.emplace_back(run_index, it);
        registers.emplace_back(run_sum, vt);
    }
    body = replace_atomics(body, std::move(replacements));

    count_rewrite();
    return loop_in_registers(op, body, before, after, registers);
}

}  // namespace gsparse::ext
