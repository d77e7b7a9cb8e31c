// The transposed (push) g-SpMM on graph views (api: gspmm_transposed_into) against a plain loop over
// the edges, on fresh random graphs with empty rows, a very long row, duplicate edges, self-loops,
// edge ids that are not CSR positions and a bipartite case; F = 1, odd F and a heads x features
// layout as GAT's backward has it; plus argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "api/gsparse.h"
#include "runtime/lowered_stmt.h"
#include "runtime/spmm_push_kernel.h"
#include "runtime/target.h"
#include "schedules/spmm_push.h"
#include "support/compare.h"
#include "support/graph_view_of.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

using test::HostView;
using test::view_of;

/// out[u] = sum over edges e = (u -> v) of (lhs[v] / deg(v) for mean) op rhs[e]; features [H, F]
/// with rhs [H, rf] (rf = 1 broadcasts over F). Accumulated in double.
std::vector<double> reference(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs, int64_t H,
                              int64_t F, int64_t rf) {
    const CSR &csr = g.csr();
    const COO &coo = g.coo();
    std::vector<double> out(static_cast<size_t>(g.num_src() * H * F), 0.0);
    const float *x = uses_lhs(spec.op) ? lhs.data_as<float>() : nullptr;
    const float *y = uses_rhs(spec.op) ? rhs.data_as<float>() : nullptr;
    for (int64_t e = 0; e < g.num_edges(); e++) {
        const int64_t u = coo.col[static_cast<size_t>(e)], v = coo.row[static_cast<size_t>(e)];
        const double deg = csr.row_ptr[static_cast<size_t>(v + 1)] - csr.row_ptr[static_cast<size_t>(v)];
        const double scale = spec.reduce == ReduceOp::Mean ? 1.0 / deg : 1.0;
        for (int64_t h = 0; h < H; h++) {
            for (int64_t f = 0; f < F; f++) {
                const double a = x ? x[(v * H + h) * F + f] : 0.0;
                const double b = y ? y[(e * H + h) * rf + (rf == 1 ? 0 : f)] : 0.0;
                double m = 0;
                switch (spec.op) {
                case BinaryOp::CopyLhs: m = a * scale; break;
                case BinaryOp::CopyRhs: m = b * scale; break;
                case BinaryOp::Mul: m = a * scale * b; break;
                case BinaryOp::Div: m = a * scale / b; break;
                default: ADD_FAILURE() << "unexpected op";
                }
                out[static_cast<size_t>((u * H + h) * F + f)] += m;
            }
        }
    }
    return out;
}

void expect_close(const Tensor &out, const std::vector<double> &ref, const std::string &what) {
    ASSERT_EQ(out.numel(), static_cast<int64_t>(ref.size())) << what;
    const float *o = out.data_as<float>();
    int bad = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        if (std::abs(o[i] - ref[i]) > 1e-4 + 1e-4 * std::abs(ref[i])) {
            if (bad++ < 3) ADD_FAILURE() << what << ": element " << i << " is " << o[i] << ", expected " << ref[i];
        }
    }
    EXPECT_EQ(bad, 0) << what;
}

TEST(SpmmTransposed, MatchesEdgeLoop) {
    const std::vector<std::pair<const char *, const char *>> cases = {
        {"copy_lhs", "sum"}, {"copy_lhs", "mean"}, {"mul", "sum"}, {"mul", "mean"},
        {"div", "sum"},      {"copy_rhs", "sum"},  {"copy_rhs", "mean"}};
    for (uint64_t seed : {21u, 22u}) {
        test::RandomGraphOptions opt;
        opt.num_src = seed == 22 ? 170 : -1;  // one bipartite graph
        Graph g = test::random_graph(seed, opt);
        for (int64_t bound : {g.max_row_length(), int64_t{-1}}) {
            HostView h = view_of(g, bound);
            for (int64_t f : {1, 7, 32}) {
                for (auto [op, reduce] : cases) {
                    SpmmSpec spec{parse_binary_op(op), parse_reduce_op(reduce)};
                    const int64_t rf = spec.op == BinaryOp::Mul || spec.op == BinaryOp::Div ? 1 : f;
                    Tensor dz = test::random_tensor({g.num_dst(), f}, seed * 7 + f, DType::F32, 0.5, 1.5);
                    Tensor w = test::random_tensor({g.num_edges(), rf}, seed * 11 + f, DType::F32, 0.5, 1.5);
                    Tensor out = Tensor::empty({g.num_src(), f}, DType::F32);
                    gspmm_transposed_into(h.view, spec, dz, w, out);
                    expect_close(out, reference(g, spec, dz, w, 1, f, rf),
                                 std::string(op) + "/" + reduce + " F=" + std::to_string(f) + " seed " +
                                     std::to_string(seed) + " bound " + std::to_string(bound));
                }
            }
        }
    }
}

TEST(SpmmTransposed, HeadsBroadcastAsInAttention) {
    // GAT's backward: dz [num_dst, H, F] times attention weights [E, H, 1], summed into the sources.
    Graph g = test::random_graph(23);
    HostView h = view_of(g);
    const int64_t H = 3, F = 5;
    SpmmSpec spec{BinaryOp::Mul, ReduceOp::Sum};
    Tensor dz = test::random_tensor({g.num_dst(), H, F}, 4, DType::F32, 0.5, 1.5);
    Tensor a = test::random_tensor({g.num_edges(), H, 1}, 5, DType::F32, 0.5, 1.5);
    Tensor out = Tensor::empty({g.num_src(), H, F}, DType::F32);
    gspmm_transposed_into(h.view, spec, dz, a, out);
    expect_close(out, reference(g, spec, dz, a, H, F, 1), "mul heads");
}

TEST(SpmmTransposed, GraphWithoutEdgesGivesZeros) {
    test::RandomGraphOptions opt;
    opt.avg_degree = 0;
    opt.long_row = 0;
    Graph g = test::random_graph(24, opt);
    ASSERT_EQ(g.num_edges(), 0);
    HostView h = view_of(g);
    const index_t no_edge = 0;  // views hold at least one col_idx entry
    h.view.col_idx = &no_edge;
    Tensor dz = test::random_tensor({g.num_dst(), 4}, 1);
    Tensor out = test::random_tensor({g.num_src(), 4}, 2);
    gspmm_transposed_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, dz, {}, out);
    for (int64_t i = 0; i < out.numel(); i++) ASSERT_EQ(out.data_as<float>()[i], 0.0f) << i;
}

TEST(SpmmTransposed, RejectsWhatItCannotCompute) {
    Graph g = test::random_graph(25);
    HostView h = view_of(g);
    Tensor dz = test::random_tensor({g.num_dst(), 4}, 1);
    Tensor out = Tensor::empty({g.num_src(), 4}, DType::F32);
    EXPECT_THROW(gspmm_transposed_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Max}, dz, {}, out), ScheduleError);
    EXPECT_THROW(gspmm_transposed_into(h.view, {BinaryOp::Add, ReduceOp::Sum}, dz, dz, out), ScheduleError);
    Tensor wrong_rows = test::random_tensor({g.num_src() + 1, 4}, 1);
    try {
        gspmm_transposed_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, wrong_rows, {}, out);
        ADD_FAILURE() << "lhs with the wrong row count must be rejected";
    } catch (const ShapeError &e) {
        EXPECT_NE(std::string(e.what()).find("destination nodes"), std::string::npos) << e.what();
    }
    Tensor short_out = Tensor::empty({g.num_src() - 1, 4}, DType::F32);
    EXPECT_THROW(gspmm_transposed_into(h.view, {BinaryOp::CopyLhs, ReduceOp::Sum}, dz, {}, short_out), ShapeError);
}

TEST(SpmmTransposed, RowLoopRunsToTheRowsEndNotTheBound) {
    // The neighbour loop of a row must be bounded by the row's length (the where clause tightens
    // it), not by max_degree: views of general graphs pass num_edges as the bound.
    SpmmPushKernelKey key;
    key.spec = {BinaryOp::CopyLhs, ReduceOp::Sum};
    key.layout = plan_features(BinaryOp::CopyLhs, {8}, {8});
    SpmmPushKernel kernel(key);
    const std::string stmt = kernel.lowered_stmt();
    // The loop's extent is min(row_ptr[v + 1] - row_ptr[v], max_degree): a let of the tightened
    // bound (named r$x.new_max..., or r_x.new_max$N once names are made unique) reading row_ptr.
    bool tightened = false;
    std::istringstream lines(stmt);
    for (std::string line; std::getline(lines, line);)
        tightened |= line.find("new_max") != std::string::npos && line.find("row_ptr[") != std::string::npos;
    EXPECT_TRUE(tightened) << stmt;
}

TEST(SpmmTransposed, CudaScheduleLowersToAtomicScatter) {
    // No GPU needed: the CUDA schedule lowers (and its PTX is emitted) on any machine.
    SpmmPushAlgorithm a = build_spmm_push_algorithm({BinaryOp::Mul, ReduceOp::Mean}, plan_features(BinaryOp::Mul, {4, 16}, {4, 1}),
                                                    DType::F32, false);
    schedule_spmm_push(a, Device::CUDA);
    Halide::Pipeline p(a.out);
    for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
    const std::string stmt = lowered_stmt_text(p, a.arguments(), jit_target(Device::CUDA));
    // Two kernels (the zero fill and the scatter), the scatter's stores as atomic adds (red.add /
    // atom.add on floats), no compare-and-swap loop and no mutex.
    EXPECT_NE(stmt.find("_kernel_spmm_push_out"), std::string::npos) << stmt;
    EXPECT_TRUE(stmt.find("red.global.add.f32") != std::string::npos ||
                stmt.find("atom.global.add.f32") != std::string::npos) << stmt;
    EXPECT_EQ(stmt.find("atom.global.cas"), std::string::npos) << stmt;
    EXPECT_EQ(stmt.find("mutex"), std::string::npos) << stmt;
}

TEST(SpmmTransposed, CudaBlocksStayInsideTheViewRowPadding) {
    // Every block's rows must lie inside a view's row_ptr (padded to kViewRowPad rows): a narrow
    // feature (one thread per row) must not put more rows than that in a block.
    for (int64_t f : {1, 4, 64, 256}) {
        SpmmPushAlgorithm a = build_spmm_push_algorithm({BinaryOp::CopyLhs, ReduceOp::Sum},
                                                        plan_features(BinaryOp::CopyLhs, {f}, {f}), DType::F32, true);
        schedule_spmm_push(a, Device::CUDA);
        Halide::Pipeline p(a.out);
        for (const auto &pass : a.lowering_passes) p.add_custom_lowering_pass(pass.get(), nullptr);
        const std::string stmt = lowered_stmt_text(p, a.arguments(), jit_target(Device::CUDA));
        // The scatter kernel's launch: halide_cuda_run(..., blocks x, y, z, threads x, y, z, ...).
        size_t at = stmt.find("halide_cuda_run(");
        while (at != std::string::npos && stmt.substr(at, stmt.find('"', stmt.find('"', at) + 1) - at).find("_s1_") ==
                                              std::string::npos)
            at = stmt.find("halide_cuda_run(", at + 1);
        ASSERT_NE(at, std::string::npos) << stmt;
        const size_t name_end = stmt.find('"', stmt.find('"', at) + 1);
        std::istringstream args(stmt.substr(stmt.find(',', name_end) + 1));
        std::string item;
        std::vector<std::string> dims;
        while (dims.size() < 6 && std::getline(args, item, ',')) dims.push_back(item);
        ASSERT_EQ(dims.size(), 6u);
        const int rows = std::stoi(dims[4]);
        EXPECT_LE(rows, kViewRowPad) << "F=" << f << ": " << rows << " rows a block";
    }
}

}  // namespace
}  // namespace gsparse
