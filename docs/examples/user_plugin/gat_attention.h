// GAT's attention aggregation as one user program (docs/dsl.md), shared by the example plugin
// (weighted_max_plugin.cpp), the user-program example and the tests:
//   out[v] = sum over in-edges of softmax_v(s) x[u],   s = leaky_relu(a_src[u] + a_dst[v], 0.2),
// in one pass over each row. The messages (s, x[u]) are reduced by an online softmax, a monoid
// over tuples: (running maximum m, normaliser d, weighted sum y), the side with the smaller maximum
// rescaled by exp(-|m_a - m_b|) (one exp a step; exp never overflows); finalize divides (rows
// without in-edges give 0). Two partial results merge the same way, so schedules may split a row's
// neighbours over lanes (ScheduleContext::split_nnz_lanes).
//
// gat_attention_shifted is the same aggregation given each row's maximum score: its weights
// exp(s - max) are at most 1, so a plain sum over (normaliser, weighted sum) needs no running
// maximum, and the exp depends on the edge only: a thread holding several features (the default
// CUDA schedule's feature_vector) computes it once for all of them.
//
// The backward from the rows' log-sum-exp lse, each edge's weight alpha = exp(s - lse[v]) computed
// where it is used (no [E] weights kept): gat_attention_transpose aggregates dx on the reversed
// graph, gat_score_grad (a per-edge program) gives the gradient of every score's pre-activation.
#pragma once

#include <string>

#include "dsl/user_sddmm.h"
#include "dsl/user_spmm.h"

namespace gsparse_examples {

/// Merges two online-softmax states (m, d, y): the one with the smaller maximum is scaled down.
inline Halide::Tuple merge_softmax_states(const Halide::Tuple &a, const Halide::Tuple &b) {
    Halide::Expr b_wins = b[0] > a[0];
    // exp(-|gap|) scales the smaller side; equal maxima (both still the identity's -inf too) scale by 1.
    Halide::Expr gap = Halide::select(a[0] == b[0], Halide::cast(a[0].type(), 0), -Halide::abs(a[0] - b[0]));
    Halide::Expr scale = Halide::exp(gap);
    return Halide::Tuple(Halide::select(b_wins, b[0], a[0]),
                         Halide::select(b_wins, a[1] * scale + b[1], a[1] + scale * b[1]),
                         Halide::select(b_wins, a[2] * scale + b[2], a[2] + scale * b[2]));
}

/// The online softmax over messages (score, value): accumulates (max score, normaliser, weighted sum).
inline gsparse::dsl::Monoid online_softmax() {
    gsparse::dsl::Monoid online;
    online.name = "online_softmax";
    online.identity_values = [](Halide::Type t) {
        return Halide::Tuple(t.min(), Halide::cast(t, 0), Halide::cast(t, 0));
    };
    // A message (s, x) is the state (s, 1, x).
    online.combine_values = [](const Halide::Tuple &acc, const Halide::Tuple &msg) {
        return merge_softmax_states(acc, Halide::Tuple(msg[0], Halide::cast(msg[0].type(), 1), msg[1]));
    };
    online.merge_values = merge_softmax_states;
    return online;
}

/// The program: operands x [num_src, F], a_src [num_src, 1], a_dst [num_dst, 1]. With
/// `log_normaliser`, a second output: each row's log-sum-exp of its scores, m + log(d) (the same in
/// every feature column), from which a backward recomputes any edge's weight as exp(s - lse[v])
/// without a softmax pass.
inline gsparse::dsl::SpmmProgram gat_attention(const std::string &name = "gat_attention", bool log_normaliser = false) {
    using gsparse::dsl::At;
    gsparse::dsl::SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
    p.message(Halide::Tuple(Halide::select(s > 0, s, 0.2f * s), x));
    p.reduce(online_softmax());
    if (log_normaliser)
        p.finalize_outputs([](const Halide::Tuple &acc, Halide::Expr) {
            return Halide::Tuple(acc[2] / acc[1], acc[0] + Halide::log(acc[1]));
        });
    else
        p.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[2] / acc[1]; });
    return p;
}

/// The sum over tuples (normaliser, weighted sum): messages and partial results add.
inline gsparse::dsl::Monoid tuple_sum() {
    gsparse::dsl::Monoid sum;
    sum.name = "tuple_sum";
    sum.identity_values = [](Halide::Type t) { return Halide::Tuple(Halide::cast(t, 0), Halide::cast(t, 0)); };
    sum.combine_values = [](const Halide::Tuple &a, const Halide::Tuple &b) {
        return Halide::Tuple(a[0] + b[0], a[1] + b[1]);
    };
    sum.merge_values = sum.combine_values;
    return sum;
}

/// The program given the rows' maximum scores: operands x [num_src, F], a_src [num_src, 1],
/// a_dst [num_dst, 1], shift [num_dst, 1] = leaky_relu(max over v's in-edges of a_src[u] + a_dst[v])
/// (leaky_relu is increasing: the row's largest score; one g-SpMM max of a_src). Outputs out and,
/// with `log_normaliser`, the rows' log-sum-exp shift + log(d).
inline gsparse::dsl::SpmmProgram gat_attention_shifted(const std::string &name = "gat_attention_shifted",
                                                       bool log_normaliser = false) {
    using gsparse::dsl::At;
    gsparse::dsl::SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
    Halide::Expr shift = p.operand("shift", At::Dst, true);
    Halide::Expr w = Halide::exp(Halide::select(s > 0, s, 0.2f * s) - shift);
    p.message(Halide::Tuple(w, w * x));
    p.reduce(tuple_sum());
    if (log_normaliser)
        p.finalize_outputs([shift](const Halide::Tuple &acc, Halide::Expr) {
            return Halide::Tuple(acc[1] / acc[0], shift + Halide::log(acc[0]));
        });
    else
        p.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[1] / acc[0]; });
    return p;
}

/// An edge's attention weight from its row's log-sum-exp: exp(leaky_relu(a_src + a_dst, 0.2) - lse).
inline Halide::Expr gat_weight(const Halide::Expr &a_src, const Halide::Expr &a_dst, const Halide::Expr &lse) {
    Halide::Expr s = a_src + a_dst;
    return Halide::exp(Halide::select(s > 0, s, 0.2f * s) - lse);
}

/// dx[u] = sum over u's out-edges e = (u -> v) of alpha[e] dout[v], run on the reversed graph (its
/// sources are the original destinations): operands dout, a_dst, lse [num_dst, .] read at the
/// reversed graph's source, a_src [num_src, 1] at its destination.
inline gsparse::dsl::SpmmProgram gat_attention_transpose(const std::string &name = "gat_attention_transpose") {
    using gsparse::dsl::At;
    gsparse::dsl::SpmmProgram p(name);
    Halide::Expr dout = p.operand("dout", At::Src);
    Halide::Expr a_dst = p.operand("a_dst", At::Src, true);
    Halide::Expr lse = p.operand("lse", At::Src, true);
    Halide::Expr a_src = p.operand("a_src", At::Dst, true);
    p.message(gat_weight(a_src, a_dst, lse) * dout);
    p.reduce(gsparse::dsl::Monoid::sum());
    return p;
}

/// Per edge e = (u -> v): dpre[e] = (1 if a_src[u] + a_dst[v] > 0, else 0.2) alpha[e] (dalpha[e] - c[v]),
/// the gradient of the score's pre-activation, given dalpha[e] = <x[u], dout[v]> and
/// c[v] = <out[v], dout[v]> (the sum of alpha dalpha over v's in-edges). One feature.
inline gsparse::dsl::SddmmProgram gat_score_grad(const std::string &name = "gat_score_grad") {
    using gsparse::dsl::At;
    gsparse::dsl::SddmmProgram p(name);
    Halide::Expr a_src = p.operand("a_src", At::Src, true);
    Halide::Expr a_dst = p.operand("a_dst", At::Dst, true);
    Halide::Expr lse = p.operand("lse", At::Dst, true);
    Halide::Expr dalpha = p.operand("dalpha", At::Edge, true);
    Halide::Expr c = p.operand("c", At::Dst, true);
    Halide::Expr slope = Halide::select(a_src + a_dst > 0, 1.f, 0.2f);
    p.edge_value(slope * gat_weight(a_src, a_dst, lse) * (dalpha - c));
    return p;
}

}  // namespace gsparse_examples
