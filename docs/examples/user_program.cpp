// A user-written g-SpMM program (docs/dsl.md): GAT's attention-weighted aggregation with a
// numerically stable softmax, written twice: as two user programs over a graph (a log-sum-exp
// monoid for the softmax's normaliser, then the weighted sum), and fused into one program whose
// monoid accumulates a tuple (the running maximum score, the softmax's normaliser and the weighted
// sum, rescaled as the maximum grows: one pass over each node's in-edges computes scores, softmax
// and aggregation). Both are checked against gsparse's built-in operators (g-SDDMM scores, edge
// softmax as g-SpMM max / sum, weighted g-SpMM). Prints OK when they agree.
//
//   gsparse-example-user-program [graph file]      (a random graph without one)
#include <cmath>
#include <cstdio>
#include <random>

#include "api/gsparse.h"
#include "dsl/user_spmm.h"
#include "user_plugin/gat_attention.h"

using namespace gsparse;
using dsl::At;

static Tensor random_tensor(int64_t rows, int64_t cols, unsigned seed) {
    Tensor t = Tensor::empty({rows, cols}, DType::F32);
    std::mt19937 gen(seed);
    std::normal_distribution<float> d;
    for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = d(gen);
    return t;
}

int main(int argc, char **argv) {
    Graph g = argc > 1 ? Graph::load(argv[1]) : [] {
        std::mt19937 gen(7);
        std::vector<index_t> src, dst;
        for (int i = 0; i < 4000; ++i) {
            src.push_back(static_cast<index_t>(gen() % 500));
            dst.push_back(static_cast<index_t>(gen() % 500));
        }
        return Graph::from_edges(500, src, dst);
    }();
    const int F = 16;
    Tensor x = random_tensor(g.num_src(), F, 1), a_src = random_tensor(g.num_src(), 1, 2),
           a_dst = random_tensor(g.num_dst(), 1, 3);

    // The score of edge u -> v: leaky_relu(a_src[u] + a_dst[v]). A helper builds it in any program.
    auto score = [](dsl::SpmmProgram &p) {
        Halide::Expr s = p.operand("a_src", At::Src, true) + p.operand("a_dst", At::Dst, true);
        return Halide::select(s > 0, s, 0.2f * s);
    };

    // 1. The softmax's normaliser per node: log sum over in-edges of exp(score), a custom monoid.
    dsl::SpmmProgram lse("attention_lse");
    lse.message(score(lse));
    lse.reduce({"logsumexp", [](Halide::Type t) { return t.min(); }, [](Halide::Expr a, Halide::Expr s) {
                    Halide::Expr hi = Halide::max(a, s), lo = Halide::min(a, s);
                    return hi + Halide::log(1.0f + Halide::exp(lo - hi));
                }});
    Tensor norm = Tensor::empty({g.num_dst(), 1}, DType::F32);
    lse.compile(1).run(g, {{"a_src", a_src}, {"a_dst", a_dst}}, norm);

    // 2. The aggregation: sum over in-edges of exp(score - norm[v]) * x[u].
    dsl::SpmmProgram agg("attention_sum");
    Halide::Expr alpha = Halide::exp(score(agg) - agg.operand("norm", At::Dst, true));
    agg.message(alpha * agg.operand("x", At::Src));
    agg.reduce(dsl::Monoid::sum());
    Tensor out = Tensor::empty({g.num_dst(), F}, DType::F32);
    agg.compile(F).run(g, {{"a_src", a_src}, {"a_dst", a_dst}, {"norm", norm}, {"x", x}}, out);

    // 3. Fused: one program, messages (score, x[u]) reduced into (max score m, normaliser s,
    //    weighted sum a); a new score t rescales s and a by exp(m - max(m, t)).
    dsl::SpmmProgram fused("attention_fused");
    fused.message(Halide::Tuple(score(fused), fused.operand("x", At::Src)));
    fused.reduce(gsparse_examples::online_softmax());  // user_plugin/gat_attention.h
    fused.finalize_values([](const Halide::Tuple &acc, Halide::Expr) { return acc[2] / acc[1]; });
    Tensor out_fused = Tensor::empty({g.num_dst(), F}, DType::F32);
    fused.compile(F).run(g, {{"a_src", a_src}, {"a_dst", a_dst}, {"x", x}}, out_fused);

    // The built-in path: scores by g-SDDMM, leaky_relu, edge softmax, weighted g-SpMM.
    Tensor s = gsddmm(g, "add", a_src, a_dst, "u", "v");
    for (int64_t i = 0; i < s.numel(); ++i) {
        float &v = s.data_as<float>()[i];
        v = v > 0 ? v : 0.2f * v;
    }
    Tensor m = gspmm(g, "copy_rhs", "max", Tensor(), s).out;
    Tensor ex = gsddmm(g, "sub", s, m, "e", "v");
    for (int64_t i = 0; i < ex.numel(); ++i) ex.data_as<float>()[i] = std::exp(ex.data_as<float>()[i]);
    Tensor den = gspmm(g, "copy_rhs", "sum", Tensor(), ex).out;
    Tensor a = gsddmm(g, "div", ex, den, "e", "v");
    Tensor want = gspmm(g, "mul", "sum", x, a).out;

    auto worst_error = [&](const Tensor &got) {
        double worst = 0;
        for (int64_t i = 0; i < got.numel(); ++i)
            worst = std::max(worst, std::abs(double(got.data_as<float>()[i]) - want.data_as<float>()[i]) /
                                        (1.0 + std::abs(double(want.data_as<float>()[i]))));
        return worst;
    };
    const double two = worst_error(out), one = worst_error(out_fused);
    std::printf("graph: %lld nodes, %lld edges; against built-in operators, max rel. error: two programs %.2e, "
                "one fused program %.2e\n",
                static_cast<long long>(g.num_dst()), static_cast<long long>(g.num_edges()), two, one);
    if (!(two < 1e-4) || !(one < 1e-4)) {
        std::printf("MISMATCH\n");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
