// The plugin of docs/tutorial.md: one user program, a gated sum of neighbour features,
//   out[v, f] = sum over in-edges e = (u -> v) of sigmoid(gate[e]) * x[u, f],
// and one schedule with two knobs for gsparse-tune to search. Built as a shared module that does
// not link gsparse (CMake: add_library(NAME MODULE ...) with gsparse::plugin_api).
#include "dsl/plugin.h"

namespace {

using gsparse::dsl::At;

gsparse::dsl::SpmmProgram gated_sum() {
    gsparse::dsl::SpmmProgram p("gated_sum");
    // One operand a statement: the declaration order is the emitted function's argument order.
    Halide::Expr x = p.operand("x", At::Src);            // x[u, f]     [num_src, F]
    Halide::Expr gate = p.operand("gate", At::Edge, true);  // gate[e, 0]  [num_edges, 1]
    p.message(x / (1.0f + Halide::exp(-gate)));          // x[u, f] * sigmoid(gate[e])
    p.reduce(gsparse::dsl::Monoid::sum());
    return p;
}

/// CPU: `rows` destination rows a parallel task, `vector` features computed together.
gsparse::dsl::ScheduleDef rows_and_vectors() {
    gsparse::dsl::ScheduleDef d;
    d.name = "rows_and_vectors";
    d.knobs = {{"rows", {1, 8, 64}, 8}, {"vector", {1, 4, 8}, 4}};
    d.why_invalid = [](const std::map<std::string, int64_t> &point, int features, gsparse::Device device) -> std::string {
        if (device != gsparse::Device::CPU) return "rows_and_vectors is a CPU schedule";
        if (features % point.at("vector") != 0) return "vector must divide the feature count";
        return "";
    };
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        // GuardWithIf: graphs with fewer rows than a task (or a count that is not a multiple of
        // it) compute no row twice and none outside the output.
        c.out.split(c.v, vo, vi, static_cast<int>(c.knob("rows")), Halide::TailStrategy::GuardWithIf).parallel(vo);
        if (c.knob("vector") > 1) c.out.vectorize(c.f, static_cast<int>(c.knob("vector")));
        c.acc.compute_at(c.out, vi);
    };
    return d;
}

}  // namespace

GSPARSE_PLUGIN(registry) {
    registry.program("gated_sum", gated_sum);
    registry.schedule("rows_and_vectors", rows_and_vectors);
}
