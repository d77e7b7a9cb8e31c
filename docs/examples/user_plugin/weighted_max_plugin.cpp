// A plugin of user programs (docs/dsl.md, "Plugins"): the weighted max of
// docs/examples/user_program_aot, a weighted sum and product, a weighted sum of heads (an operand
// of one column a head), GAT's attention aggregation in one pass (gat_attention.h; the fused layer
// of docs/examples/fused_gat.py, with its backward's transposed aggregation and per-edge score
// gradient), a gated mean and per-edge attention scores (backwards derived from the message), a
// weighted sum and mean as two outputs of one pass, two user schedules (one staging neighbour ids a
// tile at a time) and a per-edge user schedule, loaded by
//   gsparse-compile --plugin libgsparse_example_plugin.so --program weighted_max --feat 8 --out DIR --name weighted_max
// Built as a shared module (CMake: add_library(NAME MODULE ...)); it does not link gsparse.
#include "dsl/plugin.h"
#include "gat_attention.h"
#include "nonzero_scatter.h"
#include "staged_tiles.h"

namespace {

using gsparse::dsl::At;

gsparse::dsl::SpmmProgram weighted_max() {
    gsparse::dsl::SpmmProgram p("weighted_max");
    // Operands in separate statements: their order is the library function's argument order.
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w);
    p.reduce(gsparse::dsl::Monoid::max());
    return p;
}

/// The weighted product out[v] = product over in-edges of x[u] * w[e] (Python's gsparse.user_op
/// derives its backward: each message's gradient weighed by the product of the others).
gsparse::dsl::SpmmProgram weighted_product() {
    gsparse::dsl::SpmmProgram p("weighted_product");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w);
    p.reduce(gsparse::dsl::Monoid::product());
    return p;
}

/// The weighted sum out[v] = sum over in-edges of x[u] * w[e] (Python's gsparse.user_op example
/// gives it a backward).
gsparse::dsl::SpmmProgram weighted_sum() {
    gsparse::dsl::SpmmProgram p("weighted_sum");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w);
    p.reduce(gsparse::dsl::Monoid::sum());
    return p;
}

/// The weighted sum of several heads: out[v, f] = sum over in-edges of x[u, f] * a[e, f / 4], one
/// weight per edge and head of 4 features (a: [num_edges, 4], Columns: 4 heads, F up to 16), as a
/// multi-head attention's weights scale their heads' features.
gsparse::dsl::SpmmProgram head_weighted_sum() {
    gsparse::dsl::SpmmProgram p("head_weighted_sum");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr a = p.operand("a", At::Edge, gsparse::dsl::Columns{4, p.feature() / 4});
    p.message(x * a);
    p.reduce(gsparse::dsl::Monoid::sum());
    return p;
}

/// A gated mean: out[v] = mean over in-edges e = (u -> v) of sigmoid(a[u] + b[v]) * x[u] * w[e].
/// Python's gsparse.user_op(program) derives its backward from the message (docs/dsl.md).
gsparse::dsl::SpmmProgram gated_mean() {
    gsparse::dsl::SpmmProgram p("gated_mean");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr a = p.operand("a", At::Src, true);
    Halide::Expr b = p.operand("b", At::Dst, true);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w / (1.0f + Halide::exp(-(a + b))));
    p.reduce(gsparse::dsl::Monoid::sum());
    p.finalize([](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast<float>(degree); });
    return p;
}

/// Attention scores per edge and feature: leaky_relu(a_src[u, f] + a_dst[v, f] + bias[e]) (a
/// per-edge program; with gsparse.edge_softmax and gated or weighted sums, a GAT layer whose backward
/// gsparse derives).
gsparse::dsl::SddmmProgram attention_scores() {
    gsparse::dsl::SddmmProgram p("attention_scores");
    Halide::Expr a_src = p.operand("a_src", At::Src);
    Halide::Expr a_dst = p.operand("a_dst", At::Dst);
    Halide::Expr bias = p.operand("bias", At::Edge, true);
    Halide::Expr s = a_src + a_dst + bias;
    p.edge_value(Halide::select(s > 0.0f, s, 0.2f * s));
    return p;
}

/// The elementwise product of the source's and the destination's features on every edge (DGL's
/// u_mul_v): a per-edge program whose operands are all as wide as its output.
gsparse::dsl::SddmmProgram u_mul_v() {
    gsparse::dsl::SddmmProgram p("u_mul_v");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr y = p.operand("y", At::Dst);
    p.edge_value(x * y);
    return p;
}

/// Two outputs from one pass over each row: the weighted sum and the weighted mean of the in-edges.
gsparse::dsl::SpmmProgram weighted_sum_and_mean() {
    gsparse::dsl::SpmmProgram p("weighted_sum_and_mean");
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w);
    p.reduce(gsparse::dsl::Monoid::sum());
    p.finalize_outputs([](const Halide::Tuple &acc, Halide::Expr degree) {
        return Halide::Tuple(acc[0], acc[0] / Halide::cast<float>(degree));
    });
    return p;
}

/// Rows in parallel tasks of `rows` rows, features vectorized by `lanes` (CPU only).
gsparse::dsl::ScheduleDef row_tasks() {
    gsparse::dsl::ScheduleDef d;
    d.name = "row_tasks";
    d.knobs = {{"rows", {1, 4, 16, 64}, 16}, {"lanes", {1, 4, 8}, 8}};
    d.why_invalid = [](const std::map<std::string, int64_t> &point, int features, gsparse::Device device) -> std::string {
        if (device != gsparse::Device::CPU) return "row_tasks is a CPU schedule";
        if (features % point.at("lanes") != 0) return "lanes must divide the feature count";
        return "";
    };
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        // GuardWithIf: graphs with fewer rows than a task (or a count that is not a multiple of
        // it) compute no row twice and none outside the output.
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("rows")), Halide::TailStrategy::GuardWithIf).parallel(vo);
        if (c.knob("lanes") > 1) c.out.vectorize(c.f, static_cast<int>(c.knob("lanes")));
        c.acc.compute_at(c.out, vi);
    };
    return d;
}

/// A per-edge schedule: every thread (CUDA) or task (CPU) takes whole edges, all their features in
/// one loop of `unroll` features a step; `edges` edges a block (CUDA) or a task (CPU).
gsparse::dsl::EdgeScheduleDef edge_threads() {
    gsparse::dsl::EdgeScheduleDef d;
    d.name = "edge_threads";
    d.knobs = {{"edges", {64, 128, 256, 1024}, 128}, {"unroll", {1, 2, 4}, 1}};
    d.why_invalid = [](const std::map<std::string, int64_t> &point, int features, gsparse::Device) -> std::string {
        if (features % point.at("unroll") != 0) return "unroll must divide the feature count";
        return "";
    };
    d.apply = [](gsparse::dsl::EdgeScheduleContext &c) {
        Halide::Var eo("eo"), ei("ei");
        const int edges = static_cast<int>(c.knob("edges"));
        c.out.split(c.e, eo, ei, edges, Halide::TailStrategy::GuardWithIf).reorder(c.f, ei, eo);
        if (c.device == gsparse::Device::CUDA) c.out.gpu_blocks(eo).gpu_threads(ei);
        else c.out.parallel(eo);
        if (c.knob("unroll") > 1) c.out.unroll(c.f, static_cast<int>(c.knob("unroll")));
    };
    return d;
}

}  // namespace

GSPARSE_PLUGIN(registry) {
    registry.program("weighted_max", weighted_max);
    registry.program("weighted_sum", weighted_sum);
    registry.program("weighted_product", weighted_product);
    registry.program("gated_mean", gated_mean);
    registry.program("head_weighted_sum", head_weighted_sum);
    registry.program("gat_attention", [] { return gsparse_examples::gat_attention(); });
    registry.program("gat_attention_lse", [] { return gsparse_examples::gat_attention("gat_attention_lse", true); });
    registry.program("gat_attention_shifted_lse",
                     [] { return gsparse_examples::gat_attention_shifted("gat_attention_shifted_lse", true); });
    registry.program("gat_attention_transpose", [] { return gsparse_examples::gat_attention_transpose(); });
    registry.edge_program("gat_score_grad", [] { return gsparse_examples::gat_score_grad(); });
    registry.edge_program("attention_scores", attention_scores);
    registry.edge_program("u_mul_v", u_mul_v);
    registry.program("weighted_sum_and_mean", weighted_sum_and_mean);
    registry.schedule("row_tasks", row_tasks);
    registry.schedule("staged_tiles", [] { return gsparse_examples::staged_tiles(); });
    registry.schedule("nonzero_scatter", [] { return gsparse_examples::nonzero_scatter(); });
    registry.edge_schedule("edge_threads", edge_threads);
}
