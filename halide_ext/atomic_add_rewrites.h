// Helpers shared by the passes that rewrite atomic adds (AccumulateAtomicRuns,
// SegmentedLaneAtomics): recognising `atomic { out[i] = out[i] + v }`, building its replacement
// at another index or value, and one-element registers (a thread's own scalar allocations).
#pragma once

#include <Halide.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gsparse::ext {

/// An atomic add `out[i] = out[i] + v` (or `v + out[i]`): its Atomic node, store, the load of the
/// store's own element, and v.
struct AtomicAdd {
    const Halide::Internal::Atomic *atomic = nullptr;
    const Halide::Internal::Store *store = nullptr;
    const Halide::Internal::Load *load = nullptr;
    Halide::Expr value;
};

/// The atomic add an Atomic node holds: mutex-free, one scalar unpredicated store of the loaded
/// element plus a value; nullopt for anything else.
std::optional<AtomicAdd> match_atomic_add(const Halide::Internal::Atomic *op);

/// `atomic { out[index] = out[index] + value }` on the buffer of add.
Halide::Internal::Stmt atomic_add_at(const AtomicAdd &add, const Halide::Expr &index, const Halide::Expr &value);

/// The Stmt with each of the given Atomic nodes replaced by its replacement.
Halide::Internal::Stmt replace_atomics(const Halide::Internal::Stmt &s,
                                       std::map<const Halide::Internal::Atomic *, Halide::Internal::Stmt> replacements);

/// A load or store of element 0 of a one-element allocation named name.
Halide::Expr scalar_load(Halide::Type t, const std::string &name);
Halide::Internal::Stmt scalar_store(const std::string &name, Halide::Expr value);

/// `before; loop (with body); after`, inside one-element allocations (a thread's registers on the
/// GPU) of the given names and types, outermost first.
Halide::Internal::Stmt loop_in_registers(const Halide::Internal::For *loop, const Halide::Internal::Stmt &body,
                                         const std::vector<Halide::Internal::Stmt> &before,
                                         const std::vector<Halide::Internal::Stmt> &after,
                                         const std::vector<std::pair<std::string, Halide::Type>> &registers);

}  // namespace gsparse::ext
