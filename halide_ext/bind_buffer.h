// Directive and pass: bind_buffer, the row remapping of the paper (rows in balancedIdx order).
//
// bind_rows (front end, applied to an algorithm's Funcs before scheduling):
//   Expects Funcs whose definitions compute "row v" through a pure Var v (in values, in update
//   values and in reduction predicates). Produces the same Funcs computing row `row_of_v`
//   (typically order(v), a load of a permutation such as balancedIdx) at position v: every use of v
//   on a right-hand side is replaced by row_of_v; left-hand sides keep v. The Funcs then hold their
//   rows in permuted order -- block/thread row i computes row order(i).
//
// BindBufferStores (custom lowering pass, after bind_rows):
//   Expects flattened Stores into the output buffers of the row-owning stage, whose index is the
//   sum of the feature part and <row position> * <buffer>.stride.<row_dim>. Produces the same
//   Stores with the row position replaced by order[<row position>], so results land in their own
//   rows: the output is in the caller's row order again.
#pragma once

#include <Halide.h>

#include "halide_ext/lowering_pass.h"

#include <string>
#include <vector>

namespace gsparse::ext {

/// Whether a call loads the ImageParam named `image`: in a Func's definition and in lowered IR such
/// a load is a call to the image itself or to its wrapper Func "<image>_im", which Halide makes
/// unique with a "$N" suffix when several pipelines use the same name.
bool calls_image(const Halide::Internal::Call *op, const std::string &image);

/// Substitutes row_of_v for the Var v on the right-hand sides of every definition of funcs (only
/// inside the arguments of calls to the buffers in `within` when it is not empty, e.g. {"row_ptr"}
/// for a stage that reads its own rows by position but the row structure by row). Returns the
/// number of definitions changed.
int bind_rows(const std::vector<Halide::Func> &funcs, const Halide::Var &v, const Halide::Expr &row_of_v,
              const std::vector<std::string> &within = {});

/// Like bind_rows, but substitutes everywhere except inside the arguments of calls to the buffers in
/// `except` (e.g. {"src_idx", "dst_idx"}: COO arrays given in position order, so that position e
/// reads its own entries while everything else indexed by e -- edge-indexed operands, through the
/// Lets of CSE'd definitions too -- reads edge row_of_v). Returns the number of definitions changed.
int bind_rows_except(const std::vector<Halide::Func> &funcs, const Halide::Var &v, const Halide::Expr &row_of_v,
                     const std::vector<std::string> &except);

class BindBufferStores : public LoweringPass {
public:
    /// buffers: names of the flattened output buffers ("out", or "out.0", "out.1", ... for Tuples);
    /// row_dim: the dimension of the row coordinate; order: the permutation (an int32 buffer, min 0).
    BindBufferStores(std::vector<std::string> buffers, int row_dim, Halide::Internal::Parameter order);

protected:
    using Halide::Internal::IRMutator::visit;
    Halide::Internal::Stmt visit(const Halide::Internal::Store *op) override;

private:
    std::vector<std::string> buffers_;
    int row_dim_;
    Halide::Internal::Parameter order_;
};

}  // namespace gsparse::ext
