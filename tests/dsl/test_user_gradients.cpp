// The derived backward of user programs (dsl/user_gradients.h, dsl/differentiate.h): the derivative
// rules against central differences of the expression, and every operand's gradient program run on
// random graphs (empty rows, a long row, duplicate edges, self-loops, shuffled edge ids, bipartite)
// against central differences of the forward program itself, in float64 (sums, means, maxima and
// minima); clear errors for programs without a derived backward.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "dsl/differentiate.h"
#include "dsl/user_gradients.h"
#include "dsl/user_sddmm.h"
#include "support/random_graph.h"
#include "support/throws_with.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Monoid;
using dsl::OperandGradient;
using dsl::SpmmProgram;
using Halide::Expr;

/// A float64 constant (Halide's operators take an Expr and a double ambiguously).
Expr K(double v) { return Halide::Expr(v); }

/// e at each of the points (var = point), JIT-compiled for the CPU.
std::vector<double> eval(const Expr &e, const std::string &var, const std::vector<double> &points) {
    Halide::Buffer<double> in(static_cast<int>(points.size()));
    for (size_t i = 0; i < points.size(); ++i) in(static_cast<int>(i)) = points[i];
    Halide::Var i("i");
    Halide::Func fn("fn");
    fn(i) = Halide::cast<double>(Halide::Internal::substitute(var, in(i), e));
    Halide::Buffer<double> out = fn.realize({static_cast<int>(points.size())});
    return std::vector<double>(out.begin(), out.end());
}

TEST(Differentiate, RulesMatchCentralDifferences) {
    const Expr x = Halide::Internal::Variable::make(Halide::Float(64), "x");
    const Expr c = K(0.7);
    const std::vector<std::pair<const char *, Expr>> cases = {
        {"poly", x * x * K(3) - x / (x + K(2)) + K(1.5)},
        {"exp_log", Halide::exp(-x * x) + Halide::log(x * x + K(1))},
        {"sqrt_tanh", Halide::sqrt(x * x + K(0.5)) * Halide::tanh(c * x)},
        {"trig", Halide::sin(x) * Halide::cos(K(2) * x) + Halide::atan(x)},
        {"pow", Halide::pow(x * x + K(1), K(1.5)) + Halide::pow(c + K(1), x)},
        {"piecewise", Halide::select(x > K(0.1), x * K(2), K(0.2) * x) + Halide::max(x, c) - Halide::min(x, -c) +
                          Halide::abs(x - K(0.3))},
        {"casts", Halide::cast<double>(Halide::cast<float>(x) * 2.0f) +
                      Halide::cast<double>(Halide::cast<int>(x * K(10)))},
    };
    const std::vector<double> at = {-1.33, -0.47, 0.36, 0.91, 2.23};  // x * 10 away from integers (casts)
    for (const auto &[name, e] : cases) {
        // The casts case: the float round trip is smooth at float resolution only (a wider step).
        const bool casts = std::string(name) == "casts";
        const double h = casts ? 1e-3 : 1e-6, tol = casts ? 1e-3 : 1e-6;
        std::vector<double> lo, hi;
        for (double a : at) {
            lo.push_back(a - h);
            hi.push_back(a + h);
        }
        const Expr d = dsl::differentiate(e, "x");
        const std::vector<double> got = eval(d, "x", at), up = eval(e, "x", hi), down = eval(e, "x", lo);
        for (size_t i = 0; i < at.size(); ++i) {
            const double fd = (up[i] - down[i]) / (2 * h);
            EXPECT_NEAR(got[i], fd, tol * (1 + std::abs(fd))) << name << " at " << at[i] << ": d = " << d;
        }
    }
    // A variable the expression does not use, and an operation without a rule.
    EXPECT_TRUE(Halide::Internal::is_const_zero(dsl::differentiate(Halide::exp(x), "y")));
    const Expr special =
        Halide::Internal::Call::make(Halide::Float(64), "special_f64", {x}, Halide::Internal::Call::PureExtern);
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::differentiate(special, "x"); },
                                              {"cannot differentiate the call special_f64"}));
}

Tensor random_tensor(int64_t rows, int64_t cols, std::mt19937 &rng, double lo, double hi) {
    Tensor t = Tensor::empty({rows, cols}, DType::F64);
    std::uniform_real_distribution<double> u(lo, hi);
    double *p = t.data_as<double>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
    return t;
}

/// A float64 column [n, 1] of the values.
Tensor column(const std::vector<double> &values) {
    Tensor t = Tensor::empty({static_cast<int64_t>(values.size()), 1}, DType::F64);
    for (size_t i = 0; i < values.size(); ++i) t.data_as<double>()[i] = values[i];
    return t;
}

double dot(const Tensor &a, const Tensor &b) {
    double s = 0;
    for (int64_t i = 0; i < a.numel(); ++i) s += a.data_as<double>()[i] * b.data_as<double>()[i];
    return s;
}

/// A float64 program of every operand kind: x at the source, y at the destination, w at the edge
/// (broadcast), a at the source (broadcast), with message(x, y, w, a) reduced by `monoid`.
SpmmProgram four_operand_program(const std::string &name, const std::function<Expr(Expr, Expr, Expr, Expr)> &message,
                                 Monoid monoid) {
    SpmmProgram p(name, Halide::Float(64));
    Expr x = p.operand("x", At::Src);
    Expr y = p.operand("y", At::Dst);
    Expr w = p.operand("w", At::Edge, true);
    Expr a = p.operand("a", At::Src, true);
    p.message(message(x, y, w, a));
    p.reduce(std::move(monoid));
    return p;
}

/// A smooth message of every operand kind with a select; mean or sum.
SpmmProgram rich_program(bool mean) {
    SpmmProgram p = four_operand_program(
        mean ? "rich_mean" : "rich_sum",
        [](Expr x, Expr y, Expr w, Expr a) {
            return Halide::tanh(x * w) * Halide::exp(-y * y) + Halide::select(x > y, x * a, K(0.5) * y) +
                   Halide::sqrt(w * w + K(1)) * Halide::log(K(1) + a * a);
        },
        Monoid::sum());
    if (mean) p.finalize([](Expr acc, Expr degree) { return acc / Halide::cast<double>(degree); });
    return p;
}

/// The gradient of L = <R, program(operands)> for one operand from the derived programs.
Tensor derived_gradient(const dsl::ProgramGradients &grads, const OperandGradient &og, const Graph &g, int F,
                        const std::map<std::string, Tensor> &operands, const Tensor &R) {
    Tensor G = R;
    if (grads.scale) {
        Tensor s = Tensor::zeros({g.num_dst(), F}, DType::F64);
        grads.scale->compile(F).run(g, {}, s);
        G = Tensor::empty({g.num_dst(), F}, DType::F64);
        for (int64_t i = 0; i < G.numel(); ++i)
            G.data_as<double>()[i] = R.data_as<double>()[i] * s.data_as<double>()[i];
    }
    std::map<std::string, Tensor> args;
    if (grads.row_values) {
        // Max / min / product: the row values first, from the forward's operands.
        std::map<std::string, Tensor> forward;
        for (const auto &info : grads.row_values->operands()) forward[info.name] = operands.at(info.name);
        std::vector<Tensor> values;
        for (size_t i = 0; i < grads.row_value_operands.size(); ++i)
            values.push_back(Tensor::zeros({g.num_dst(), F}, DType::F64));
        std::vector<Tensor *> outs;
        for (Tensor &t : values) outs.push_back(&t);
        grads.row_values->compile(F).run(g, forward, outs);
        for (size_t i = 0; i < values.size(); ++i) args[grads.row_value_operands[i]] = values[i];
    }
    const auto infos = og.form == OperandGradient::Form::Edges ? og.edges->operands() : og.rows->operands();
    for (const auto &info : infos)
        if (!args.count(info.name)) args[info.name] = info.name == grads.grad_operand ? G : operands.at(info.name);
    const int64_t rows = og.at == At::Src ? g.num_src() : og.at == At::Dst ? g.num_dst() : g.num_edges();
    Tensor full = Tensor::zeros({rows, F}, DType::F64);
    if (og.form == OperandGradient::Form::Edges) {
        og.edges->compile(F).run(g, args, full);
    } else {
        og.rows->compile(F).run(og.form == OperandGradient::Form::ReverseRows ? g.reverse() : g, args, full);
    }
    if (!og.broadcast) return full;
    Tensor summed = Tensor::zeros({rows, 1}, DType::F64);
    for (int64_t r = 0; r < rows; ++r)
        for (int f = 0; f < F; ++f) summed.data_as<double>()[r] += full.data_as<double>()[r * F + f];
    return summed;
}

/// Random operands x [num_src, F], y [num_dst, F], w [num_edges, 1], a [num_src, 1].
std::map<std::string, Tensor> random_operands(const Graph &g, int F, std::mt19937 &rng) {
    return {{"x", random_tensor(g.num_src(), F, rng, -1.5, 1.5)}, {"y", random_tensor(g.num_dst(), F, rng, -1.5, 1.5)},
            {"w", random_tensor(g.num_edges(), 1, rng, -1, 1)}, {"a", random_tensor(g.num_src(), 1, rng, -1, 1)}};
}

/// Every operand's derived gradient of L = <R, program(operands)> (out_rows x F outputs) against
/// central differences of the forward program along a random direction of that operand.
template <typename Program>
void check_gradients(const Program &p, const Graph &g, int F, int64_t out_rows, std::mt19937 &rng,
                     const std::string &what) {
    const std::map<std::string, Tensor> operands = random_operands(g, F, rng);
    const Tensor R = random_tensor(out_rows, F, rng, -1, 1);
    const auto forward = p.compile(F);
    auto loss = [&](const std::map<std::string, Tensor> &ops) {
        Tensor out = Tensor::zeros({out_rows, F}, DType::F64);
        forward.run(g, ops, out);
        return dot(out, R);
    };
    const dsl::ProgramGradients grads = dsl::derive_gradients(p);
    ASSERT_EQ(grads.operands.size(), operands.size());
    for (const OperandGradient &og : grads.operands) {
        const Tensor grad = derived_gradient(grads, og, g, F, operands, R);
        const Tensor &X = operands.at(og.operand);
        const Tensor V = random_tensor(X.size(0), X.size(1), rng, -1, 1);
        const double h = 1e-6;
        auto shifted = [&](double step) {
            std::map<std::string, Tensor> ops = operands;
            Tensor Y = Tensor::empty({X.size(0), X.size(1)}, DType::F64);
            for (int64_t i = 0; i < X.numel(); ++i)
                Y.data_as<double>()[i] = X.data_as<double>()[i] + step * V.data_as<double>()[i];
            ops[og.operand] = Y;
            return loss(ops);
        };
        const double fd = (shifted(h) - shifted(-h)) / (2 * h);
        EXPECT_NEAR(dot(grad, V), fd, 1e-5 * (1 + std::abs(fd))) << what << ": operand " << og.operand;
    }
}

/// The graph shapes of the gradient checks: 40 nodes with a long row of 60, square and bipartite
/// (25 sources).
struct GraphShape {
    const char *name;
    test::RandomGraphOptions opt;
};
std::vector<GraphShape> graph_shapes() {
    test::RandomGraphOptions base;
    base.num_nodes = 40;
    base.long_row = 60;
    test::RandomGraphOptions bipartite = base;
    bipartite.num_src = 25;
    return {{"square", base}, {"bipartite", bipartite}};
}

TEST(UserGradients, EveryOperandMatchesCentralDifferencesOfTheForward) {
    for (const GraphShape &gc : graph_shapes()) {
        const Graph g = test::random_graph(7, gc.opt);
        for (bool mean : {false, true}) {
            const int F = gc.opt.num_src < 0 ? 3 : 1;
            std::mt19937 rng(static_cast<uint32_t>(11 + F));
            check_gradients(rich_program(mean), g, F, g.num_dst(), rng,
                            std::string(gc.name) + (mean ? " mean" : " sum") + " F=" + std::to_string(F));
        }
    }
}

/// The maximum (minimum) over in-edges of a message of every operand kind: tanh(x[u] * w[e]) +
/// y[v] * a[u] + 0.3 w[e]^2 (duplicate edges differ in w, so no two messages of a row tie).
SpmmProgram extremum_program(bool max) {
    return four_operand_program(
        max ? "rich_max" : "rich_min",
        [](Expr x, Expr y, Expr w, Expr a) { return Halide::tanh(x * w) + y * a + K(0.3) * w * w; },
        max ? Monoid::max() : Monoid::min());
}

TEST(UserGradients, MaxAndMinPassTheGradientToTheWinningEdge) {
    for (const GraphShape &gc : graph_shapes()) {
        const Graph g = test::random_graph(17, gc.opt);
        const int F = gc.opt.num_src < 0 ? 1 : 3;
        for (bool max : {true, false}) {
            std::mt19937 rng(static_cast<uint32_t>(31 + F + (max ? 0 : 7)));
            check_gradients(extremum_program(max), g, F, g.num_dst(), rng,
                            std::string(gc.name) + (max ? " max" : " min") + " F=" + std::to_string(F));
        }
    }
    // The winners' program: among equal messages the smallest edge id (edges 1 and 2 repeat 1 -> 2),
    // whatever the order; a row without in-edges holds 0.
    const Graph g = Graph::from_edges(3, {0, 1, 1, 2}, {2, 2, 2, 0});
    SpmmProgram p("copy_max", Halide::Float(64));
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::max());
    const dsl::ProgramGradients grads = dsl::derive_gradients(p);
    ASSERT_NE(grads.row_values, nullptr);
    EXPECT_EQ(grads.row_value_operands, std::vector<std::string>{"winner"});
    const Tensor x = column({1.0, 3.0, -2.0});
    Tensor W = Tensor::zeros({3, 1}, DType::F64);
    grads.row_values->compile(1).run(g, {{"x", x}}, W);
    auto id = [&](int row) {
        int64_t bits;
        std::memcpy(&bits, W.data_as<double>() + row, sizeof bits);
        return bits;
    };
    EXPECT_EQ(id(2), 1);  // x[1] = 3 over edges 1 and 2
    EXPECT_EQ(id(0), 3);  // the one edge 2 -> 0
    EXPECT_EQ(id(1), 0);  // no in-edges
    // The gradient of x: all of row 2's to edge 1's source (node 1), row 0's to node 2.
    const Tensor R = column({5.0, 0.0, 7.0});
    const Tensor dx = derived_gradient(grads, grads.operands[0], g, 1, {{"x", x}}, R);
    EXPECT_EQ(dx.data_as<double>()[0], 0.0);
    EXPECT_EQ(dx.data_as<double>()[1], 7.0);
    EXPECT_EQ(dx.data_as<double>()[2], 5.0);
}

TEST(UserGradients, ProductsWeighTheGradientByTheOtherMessages) {
    // A smooth message (no zero messages): against central differences.
    for (const GraphShape &gc : graph_shapes()) {
        const Graph g = test::random_graph(19, gc.opt);
        const int F = gc.opt.num_src < 0 ? 1 : 3;
        std::mt19937 rng(static_cast<uint32_t>(41 + F));
        check_gradients(four_operand_program(
                            "rich_product",
                            [](Expr x, Expr y, Expr w, Expr a) { return K(1) + K(0.5) * Halide::tanh(x * w + y * a); },
                            Monoid::product()),
                        g, F, g.num_dst(), rng, std::string(gc.name) + " product F=" + std::to_string(F));
    }
    // Zero messages: row 3 has one (its other messages' product goes to it alone), row 4 two (no
    // gradient), row 0 none (each edge gets the product of the others).
    const Graph g = Graph::from_edges(5, {1, 2, 0, 1, 2, 0, 0, 3}, {0, 0, 3, 3, 3, 4, 4, 2});
    SpmmProgram p("copy_product", Halide::Float(64));
    p.message(p.operand("x", At::Src));
    p.reduce(Monoid::product());
    const dsl::ProgramGradients grads = dsl::derive_gradients(p);
    EXPECT_EQ(grads.row_value_operands, (std::vector<std::string>{"product", "zeros"}));
    const Tensor x = column({0.0, 2.0, 5.0, 7.0, 1.0});
    const Tensor R = column({1.0, 1.0, 1.0, 1.0, 1.0});
    const Tensor dx = derived_gradient(grads, grads.operands[0], g, 1, {{"x", x}}, R);
    // d out[0] / d x[1] = x[2] = 5, d out[0] / d x[2] = x[1] = 2; d out[3] / d x[0] = x[1] x[2] = 10
    // (x[0] = 0 is row 3's only zero), d out[3] / d x[1], x[2] = 0; row 4 (x[0] twice) gives 0; row 2's
    // one edge from node 3 gets 1 (the empty product).
    const std::vector<double> want = {10.0, 5.0, 2.0, 1.0, 0.0};
    for (int i = 0; i < 5; ++i) EXPECT_EQ(dx.data_as<double>()[i], want[static_cast<size_t>(i)]) << "x[" << i << "]";
}

/// A per-edge program of every operand kind: leaky_relu(x[u] * y[v] + a[u] + w[e]) * exp(-w[e]^2).
dsl::SddmmProgram rich_edge_program() {
    dsl::SddmmProgram p("rich_edges", Halide::Float(64));
    Expr x = p.operand("x", At::Src);
    Expr y = p.operand("y", At::Dst);
    Expr w = p.operand("w", At::Edge, true);
    Expr a = p.operand("a", At::Src, true);
    Expr s = x * y + a + w;
    p.edge_value(Halide::select(s > K(0), s, K(0.2) * s) * Halide::exp(-w * w));
    return p;
}

TEST(UserGradients, PerEdgeProgramsMatchCentralDifferencesOfTheForward) {
    test::RandomGraphOptions opt;
    opt.num_nodes = 40;
    opt.long_row = 60;
    opt.num_src = 25;  // bipartite: the source and destination operands differ in rows
    const Graph g = test::random_graph(9, opt);
    const dsl::SddmmProgram p = rich_edge_program();
    for (int F : {1, 3}) {
        std::mt19937 rng(static_cast<uint32_t>(21 + F));
        check_gradients(p, g, F, g.num_edges(), rng, "F=" + std::to_string(F));
    }
    // G is the per-edge output's gradient: every gradient program reads it at the edge, and none
    // scales it.
    const dsl::ProgramGradients grads = dsl::derive_gradients(p);
    EXPECT_EQ(grads.scale, nullptr);
    for (const OperandGradient &og : grads.operands) {
        const auto infos = og.form == OperandGradient::Form::Edges ? og.edges->operands() : og.rows->operands();
        for (const auto &info : infos) {
            if (info.name == grads.grad_operand) {
                EXPECT_EQ(info.at, At::Edge) << og.operand;
            }
        }
    }
    dsl::SddmmProgram ids("by_edge_id");
    ids.edge_value(ids.operand("x", At::Src) * Halide::cast<float>(ids.edge()));
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(ids); },
                                              {"its edge value (set at ", "test_user_gradients.cpp:", ") reads"}));
}

TEST(UserGradients, FormsAndOperandsOfTheDerivedPrograms) {
    const dsl::ProgramGradients grads = dsl::derive_gradients(rich_program(true));
    EXPECT_EQ(grads.grad_operand, "grad");
    ASSERT_NE(grads.scale, nullptr);  // the mean's 1 / degree
    ASSERT_EQ(grads.operands.size(), 4u);
    EXPECT_EQ(grads.operands[0].form, OperandGradient::Form::ReverseRows);  // x at the source
    EXPECT_EQ(grads.operands[1].form, OperandGradient::Form::Rows);         // y at the destination
    EXPECT_EQ(grads.operands[2].form, OperandGradient::Form::Edges);        // w at the edge
    EXPECT_TRUE(grads.operands[2].broadcast && grads.operands[3].broadcast);
    // On the reverse graph the forward's source operands are read at the destination and G at the
    // source.
    for (const auto &info : grads.operands[0].rows->operands()) {
        const At want = info.name == "x" || info.name == "a" ? At::Dst : info.name == "w" ? At::Edge : At::Src;
        EXPECT_EQ(info.at, want) << info.name;
    }
    // A plain sum has no scale, and a program with an operand named grad reads G under another name.
    SpmmProgram s("weighted", Halide::Float(32));
    Expr grad = s.operand("grad", At::Src);
    Expr w = s.operand("w", At::Edge, true);
    s.message(grad * w);
    s.reduce(Monoid::sum());
    const dsl::ProgramGradients sg = dsl::derive_gradients(s);
    EXPECT_EQ(sg.scale, nullptr);
    EXPECT_EQ(sg.grad_operand, "grad_");
}

TEST(UserGradients, ProgramsWithoutADerivedBackwardAreNamed) {
    auto program = [](const char *name) {
        SpmmProgram p(name);
        return p;
    };

    SpmmProgram scaled_max = program("scaled_max");
    scaled_max.message(scaled_max.operand("x", At::Src));
    scaled_max.reduce(Monoid::max());
    scaled_max.finalize([](Expr acc, Expr) { return acc * 2.0f; });
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(scaled_max); }, {"its max has a finalize"}));

    SpmmProgram fake = program("fake_sum");
    fake.message(fake.operand("x", At::Src));
    fake.reduce({"sum", [](Halide::Type t) { return Halide::Internal::make_zero(t); },
                 [](Expr acc, Expr x) { return acc + 2.0f * x; }});
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(fake); }, {"is not a sum, max, min or product"}));

    SpmmProgram ids = program("by_degree");
    ids.message(ids.operand("x", At::Src) * Halide::cast<float>(ids.degree()));
    ids.reduce(Monoid::sum());
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(ids); }, {"node or edge ids"}));

    SpmmProgram squared = program("squared_sum");
    squared.message(squared.operand("x", At::Src));
    squared.reduce(Monoid::sum());
    squared.finalize([](Expr acc, Expr) { return acc * acc; });
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(squared); }, {"not linear"}));

    SpmmProgram special = program("special");
    special.message(Halide::Internal::Call::make(Halide::Float(32), "special_f32", {special.operand("x", At::Src)},
                                                 Halide::Internal::Call::PureExtern));
    special.reduce(Monoid::sum());
    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(special); }, {"cannot differentiate"}));

    EXPECT_TRUE(test::throws_with<ShapeError>([&] { dsl::derive_gradients(program("empty")); }, {"no message"}));
}

}  // namespace
}  // namespace gsparse
