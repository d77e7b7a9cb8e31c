// relabel_sources: the g-SpMM algorithm over a graph renumbered in its locality order.
//
//   lhs_relabeled(f, i) = lhs(f, src_order(i))        source features in the new node order
//   acc(f, v)           = Φ(acc(f, v), lhs_relabeled(f, colIdx(rowPtr(v) + k)) ⊕ ...)
//
// row_ptr, col_idx and edge_ids are the relabeled graph's (Graph::relabeled), whose row v is the
// original row src_order(v); the schedule remaps the output stores of row v to src_order(v)
// (BindBufferStores). The new ids of a cluster of rows' sources are consecutive, so at small
// feature lengths the cluster's gathers share sectors and stay in L1 (graph/relabel.h).
#include "core/error.h"
#include "halide_ext/bind_buffer.h"
#include "ops/spmm_algorithm.h"

namespace gsparse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Redirects loads of one image to calls of a Func with the same arguments.
class RedirectImageLoads : public IRMutator {
public:
    RedirectImageLoads(std::string image, Function target) : image_(std::move(image)), target_(std::move(target)) {}
    int redirected = 0;

private:
    using IRMutator::visit;
    std::string image_;
    Function target_;

    Expr visit(const Call *op) override {
        if (!ext::calls_image(op, image_)) return IRMutator::visit(op);
        std::vector<Expr> args;
        for (const Expr &arg : op->args) args.push_back(mutate(arg));
        redirected++;
        return Call::make(target_, args, op->value_index);
    }
};

}  // namespace

void relabel_sources(SpmmAlgorithm &a) {
    if (a.relabeled) return;
    if (has_arg_outputs(a.spec.reduce))
        fail<ScheduleError>("relabeled sources: the relabeled rows list their neighbours by new id, so ",
                            reduce_op_name(a.spec.reduce), " ties and arg_u would follow the new numbering; use sum or mean");
    if (a.identity_edge_ids && gsparse::reads_edge_ids(a.spec))
        fail<ScheduleError>("relabeled sources: the algorithm must read edge ids (build it with identity_edge_ids = false)");
    if (a.segment_len > 0 || a.src_tile > 0 || a.rows_bound)
        fail<ScheduleError>("relabel_sources must come before split_rows and bind_rows");
    a.relabeled = true;
    a.src_order = ImageParam(Int(32), 1, "src_order");
    a.src_order.dim(0).set_min(0);
    if (!a.uses_lhs()) return;

    // src_order is a permutation of [0, num_src) (validated with the graph's locality order).
    const int rank = a.layout.rank();
    std::vector<Var> g;
    for (int d = 0; d < rank; d++) g.emplace_back("g" + std::to_string(d));
    Var i("i");
    std::vector<Expr> lhs_args(g.begin(), g.end());
    lhs_args.push_back(unsafe_promise_clamped(a.src_order(i), 0, a.num_src - 1));
    std::vector<Var> pure = g;
    pure.push_back(i);
    a.lhs_relabeled(pure) = a.lhs(lhs_args);

    RedirectImageLoads redirect(a.lhs.name(), a.lhs_relabeled.function());
    Function acc = a.acc.function();
    auto rewrite = [&](Definition &def) {
        for (Expr &value : def.values()) value = redirect.mutate(value);
        if (def.predicate().defined()) def.predicate() = redirect.mutate(def.predicate());
    };
    rewrite(acc.definition());
    for (size_t u = 0; u < acc.updates().size(); u++) rewrite(acc.update(static_cast<int>(u)));
    if (redirect.redirected == 0) fail<ScheduleError>("relabel_sources: the reduction reads no source feature");
}

}  // namespace gsparse
