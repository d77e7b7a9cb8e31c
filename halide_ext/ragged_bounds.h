// Non-rectangular (ragged) buffer bound inference for CSR / COO accesses, as a front-end pass over
// the definitions of a pipeline's Funcs, run before lowering.
//
// Expects: the Funcs of an algorithm, defined over a SparseLayout (sparse_metadata.h) -- a CSR row
// pointer, nnz-indexed arrays, COO arrays -- with plain data-dependent indices and no hand-written
// promises, e.g.
//
//     RDom k(0, max_degree);  k.where(k < row_ptr(v + 1) - row_ptr(v));
//     nbr(kv, v) = col_idx(row_ptr(v) + kv);                        (optional staged wrapper)
//     acc(f, v) += X(f, col_idx(row_ptr(v) + k)) * Y(f, edge_ids(row_ptr(v) + k));
//     out(f, e)  = L(f, src_idx(e)) + R(f, dst_idx(e));
//
// Produces: the same Funcs (mutated in place: pure definitions, updates, their predicates and
// specializations) in which
//   * a position index -- an argument of a load that is a CSR position: one row_ptr load plus an
//     offset, e.g. row_ptr(v) + k, row_ptr(v) + kv, row_ptr(v) + min(k, row_ptr(v + 1) -
//     row_ptr(v) - 1) (an offset clamped to the row's last position), or a clamp of one,
//     min(row_ptr(v) + kv, ...)
//     -- carries unsafe_promise_clamped(index, 0, nnz - 1). For a fixed row v the index lies in
//     [row_ptr(v) + min(k), row_ptr(v) + max(k)], k bounded by its RDom and the definition's
//     predicate (k < row_ptr(v + 1) - row_ptr(v) gives [row_ptr(v), row_ptr(v + 1) - 1]) or, for a
//     pure Var kv, by what the consumers require ([row_ptr(v) + kv.min, row_ptr(v) + kv.max]).
//     The per-row range goes into the report; its intersection with [0, nnz - 1] is what Halide's
//     rectangular bounds inference is given, so a 2-D stage nbr(kv, v) computed at the outer split
//     of k is sized by the consumer's tile (kNnzTile x kMTile), and the input-bounds checks ask for
//     [0, nnz) of col_idx. When the per-row maximum is not provably below nnz (a pure Var offset,
//     as in a staged tile that reads past the ends of short rows, or an RVar without a row
//     predicate), the index is also clamped for real, min(index, nnz - 1), inside the promise:
//     the entries read past a row's end stay inside the array and are never used;
//   * a gather -- an argument of a load (ImageParam, Buffer or Func call) computed from values of
//     a declared index array (col_idx, edge_ids, src_idx, dst_idx), directly, through a pure Func
//     whose value is one (a staged nbr(kv, v)) or a CSR position (eid(kv, v) = row_ptr(v) + kv), or
//     through a Let -- carries unsafe_promise_clamped(arg, lo, hi), [lo, hi] being the declared
//     value range propagated through the argument by interval arithmetic (X(f, col_idx(p)) gets
//     [0, num_src - 1], X(col_idx(p) + 1) gets [1, num_src]); the same holds for the left-hand-side
//     arguments of an update (scatters);
//   * a pure Func whose value is a CSR position (eid(kv, v) = row_ptr(v) + kv, edge ids that are the
//     positions) gets the position promise (and clamp) on its value, so that the value stays a
//     valid edge id wherever the Func is computed;
//   * everything else is left untouched (row_ptr(v + 1) - row_ptr(v), loads indexed by Vars).
//     Arguments that already are promise_clamped / unsafe_promise_clamped are not wrapped again, so
//     the pass is idempotent. Accesses that read sparse data but fit no rule are listed as notes.
// Loads of an ImageParam appear in definitions as calls to its wrapper Func `<name>_im`; the pass
// sees through them, and through the Lets of CSE'd definitions. Every rewrite is recorded (Func,
// stage, buffer, dimension, kind, promised range and per-row range as text).
#pragma once

#include <Halide.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "halide_ext/sparse_metadata.h"

namespace gsparse::ext {

/// One rewritten load argument.
struct RaggedRewrite {
    enum class Kind {
        Position,  ///< a CSR position row_ptr(v) + k, promised to lie in [0, nnz - 1]
        Gather,    ///< an argument computed from index-array values, promised their value range
    };
    Kind kind = Kind::Position;
    std::string func;     ///< the Func whose definition holds the load
    int stage = 0;        ///< 0 = pure definition, i >= 1 = update i - 1
    std::string buffer;   ///< the loaded buffer / called Func (the Func itself for an update's LHS or a value)
    int dimension = 0;    ///< which argument of the load (which value, for a value)
    bool value = false;   ///< a pure Func's value that is a CSR position (eid(kv, v) = row_ptr(v) + kv)
    Halide::Expr min, max;  ///< the promised range [min, max]
    std::string range;      ///< "[min, max]"
    std::string row_range;  ///< Position only: the per-row range "[row_ptr(v) + min(k), row_ptr(v) + max(k)]"
    /// Position only: the per-row range is not provably inside [0, nnz - 1] (a pure Var offset, as
    /// in a staged tile, or an RVar without a row predicate), so the index is also clamped,
    /// min(index, nnz - 1), before the promise.
    bool clamped = false;

    std::string str() const;
};

const char *to_string(RaggedRewrite::Kind k);

struct RaggedBoundsReport {
    std::vector<RaggedRewrite> rewrites;  ///< in the order found, each distinct rewrite once
    std::vector<std::string> funcs;       ///< the Funcs visited (given ones and those they call)
    std::vector<std::string> notes;       ///< accesses that depend on sparse data but got no promise

    bool empty() const { return rewrites.empty(); }
    /// The rewrites of loads of one buffer (optionally only one kind).
    std::vector<RaggedRewrite> of(const std::string &buffer) const;
    std::vector<RaggedRewrite> of(const std::string &buffer, RaggedRewrite::Kind kind) const;
    std::string str() const;
};

/// The pass itself. infer_ragged_bounds() drives it over whole Funcs; it can also be run on single
/// Exprs after enter_definition() has named the definition they belong to.
class RaggedBoundsPass : public Halide::Internal::IRMutator {
public:
    explicit RaggedBoundsPass(SparseLayout layout);

    /// Known value ranges of pure Funcs, by (Func name, value index): calls to them count as
    /// index-array values in gathers.
    void set_func_value_ranges(std::map<std::pair<std::string, int>, Halide::Internal::Interval> ranges);

    /// The value range of e if it is an index-array value, a CSR position, or computed from those
    /// (lo and hi depend on parameters only); an undefined interval (Interval::everything()) if not.
    Halide::Internal::Interval sparse_value_range(const Halide::Expr &e) const;

    /// Names the definition whose Exprs are mutated next (for the report) and takes its RVars'
    /// bounds, tightened by the definition's predicate, for per-row ranges.
    void enter_definition(const std::string &func, int stage, const Halide::Internal::Definition &def);

    /// Applies the position and gather rules to the left-hand side arguments of the current update
    /// definition.
    void rewrite_update_args(std::vector<Halide::Expr> &args);
    /// Applies the position rule to the values of the current (pure) definition: a Func whose value
    /// is a CSR position gets the same promise (and clamp) as a position index.
    void rewrite_position_values(std::vector<Halide::Expr> &values);

    const std::vector<RaggedRewrite> &rewrites() const { return rewrites_; }
    const std::vector<std::string> &notes() const { return notes_; }

    using Halide::Internal::IRMutator::mutate;

protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Expr visit(const Halide::Internal::Call *op) override;
    Halide::Expr visit(const Halide::Internal::Let *op) override;

private:
    /// The argument with its promise, or the argument itself when no rule applies.
    Halide::Expr rewrite_arg(const Halide::Expr &arg, const std::string &buffer, int dim, bool is_value);
    Halide::Expr expand(const Halide::Expr &e) const;
    bool is_position(const Halide::Expr &e) const;
    struct PositionInfo {
        std::string row_range;
        bool inside_array = false;
    };
    PositionInfo analyze_position(const Halide::Expr &index) const;
    void record(RaggedRewrite r);

    SparseLayout layout_;
    std::map<std::pair<std::string, int>, Halide::Internal::Interval> func_ranges_;
    std::map<std::string, Halide::Expr> let_values_;  ///< Let-bound values in scope, themselves expanded
    std::map<std::string, Halide::Internal::Interval> rvar_bounds_;  ///< RVars, tightened by the predicate
    std::map<std::string, Halide::Internal::Interval> rvar_domain_;  ///< RVars over their whole domain
    std::string func_;
    int stage_ = 0;
    std::vector<RaggedRewrite> rewrites_;
    std::set<std::string> seen_;
    std::vector<std::string> notes_;
    std::set<std::string> seen_notes_;
};

/// Runs the pass over the given Funcs and every Func they call (transitively), in place: Funcs are
/// handles to shared Function objects, so every handle (and every pipeline) sees the promised
/// definitions. Extern Funcs are skipped.
RaggedBoundsReport infer_ragged_bounds(const std::vector<Halide::Func> &funcs, const SparseLayout &layout);

}  // namespace gsparse::ext
