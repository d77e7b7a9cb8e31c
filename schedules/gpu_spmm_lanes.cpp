// split_nnz_lanes: the lane form of the g-SpMM row reduction (see gpu_spmm_lanes.h).
#include "schedules/gpu_spmm_lanes.h"

#include "core/error.h"
#include "ops/halide_types.h"

namespace gsparse {

using namespace Halide;

namespace {

/// The message, source id and edge id of the arg reduction `select(better, x, best)` x 3.
struct ArgUpdate {
    Expr msg, u, e;
};

ArgUpdate arg_update_of(const Func &acc) {
    const Internal::Function fn = acc.function();
    if (fn.updates().size() != 1 || fn.updates()[0].values().size() != 3)
        fail<ScheduleError>("kNnzLanes: ", acc.name(), " is not the (value, arg_u, arg_e) reduction of g-SpMM max/min");
    std::vector<Expr> taken;
    for (Expr value : fn.updates()[0].values()) {
        // Definitions may hold CSE'd Lets around the select.
        while (const auto *let = value.as<Internal::Let>()) value = Internal::substitute(let->name, let->value, let->body);
        const auto *sel = value.as<Internal::Select>();
        if (!sel) fail<ScheduleError>("kNnzLanes: unexpected max/min update value ", value);
        taken.push_back(sel->true_value);
    }
    return {taken[0], taken[1], taken[2]};
}

NnzLanes split_arg_reduction(SpmmAlgorithm &a, int L) {
    const bool is_max = a.spec.reduce == ReduceOp::Max;
    const Type t = halide_type(a.dtype);
    const Expr zero = Internal::make_zero(t);
    const Internal::Definition &def = a.acc.function().update(0);
    ArgUpdate upd = arg_update_of(a.acc);

    NnzLanes r;
    r.lane = Var("lane");
    std::vector<Expr> fv(a.f.begin(), a.f.end());
    fv.push_back(a.v);
    std::vector<Expr> fl = fv;
    fl.push_back(r.lane);

    // Position k = ko * L + lane of the row; the messages and the row predicate are rewritten from k.
    RDom ko(0, (a.max_degree + (L - 1)) / L, "ko");
    const std::string k_name = a.k.x.name();
    const Expr k = ko.x * L + r.lane;
    auto at_k = [&](const Expr &e) { return Internal::substitute(k_name, k, e); };
    ko.where(at_k(def.predicate()));
    r.ko = ko.x;

    Func lanes(a.acc.name() + "_lanes");
    lanes(fl) = Tuple(zero, Expr(-1), Expr(-1), Expr(-1));
    {
        Expr best = lanes(fl)[0], bu = lanes(fl)[1], be = lanes(fl)[2], bk = lanes(fl)[3];
        Expr msg = at_k(upd.msg);
        // Within a lane positions come in increasing order: the first message wins, later ones
        // only when strictly better (as in the algorithm).
        Expr better = bu < 0 || (is_max ? msg > best : msg < best);
        lanes(fl) = Tuple(select(better, msg, best), select(better, at_k(upd.u), bu), select(better, at_k(upd.e), be),
                          select(better, k, bk));
    }
    r.lanes = lanes;

    // Lanes combined in lane order; equal values go to the smaller position.
    Func comb(a.acc.name() + "_lanes_comb");
    RDom l(0, L, "l");
    r.combine = l.x;
    comb(fv) = Tuple(zero, Expr(-1), Expr(-1), Expr(-1));
    {
        std::vector<Expr> fc = fv;
        fc.push_back(l.x);
        Expr best = comb(fv)[0], bu = comb(fv)[1], be = comb(fv)[2], bk = comb(fv)[3];
        Expr c = lanes(fc)[0], cu = lanes(fc)[1], ce = lanes(fc)[2], ck = lanes(fc)[3];
        Expr wins = is_max ? c > best : c < best;
        Expr better = cu >= 0 && (bu < 0 || wins || (c == best && ck < bk));
        comb(fv) = Tuple(select(better, c, best), select(better, cu, bu), select(better, ce, be), select(better, ck, bk));
    }
    Func out(a.out.name() + "_lanes");
    out(fv) = Tuple(comb(fv)[0], comb(fv)[1], comb(fv)[2]);
    a.acc = comb;
    a.out = out;
    return r;
}

}  // namespace

NnzLanes split_nnz_lanes(SpmmAlgorithm &a, int L) {
    if (L < 2 || L > 32) fail<ScheduleError>("kNnzLanes: ", L, " lanes is not in 2..32");
    if (a.segment_len > 0 || a.rows_bound)
        fail<ScheduleError>("kNnzLanes: split the lanes before splitting or binding rows");
    if (has_arg_outputs(a.spec.reduce)) return split_arg_reduction(a, L);
    // sum and mean reduce with +: rfactor proves it associative.
    NnzLanes r;
    r.lane = Var("lane");
    RVar ko("ko"), kl("kl");
    r.lanes = a.acc.update().split(a.k.x, ko, kl, L, TailStrategy::GuardWithIf).rfactor(kl, r.lane);
    r.ko = ko;
    r.combine = kl;
    return r;
}

}  // namespace gsparse
