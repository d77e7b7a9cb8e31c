// User programs whose schedules split rows into segments across the graph
// (dsl::ScheduleContext::split_rows): results against plain C++ loops and the in-order reduction on
// random graphs (empty rows, a very long row, duplicate edges, self-loops, shuffled edge ids,
// bipartite), messages that read destination operands and the degree, sum / max / a monoid over
// tuples / several outputs, F = 1, odd F and F = 32; segment tables; the default schedule's
// row_segments knob and its run-time choice; errors; the two CUDA kernels it compiles to.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "dsl/user_spmm.h"
#include "support/user_program_cases.h"
#include "graph/segments.h"
#include "support/random_graph.h"
#include "support/compare.h"
#include "support/graph_view_of.h"
#include "support/text_count.h"
#include "support/cuda_user_schedules.h"
#include "support/throws_with.h"
#include "user_plugin/gat_attention.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Monoid;
using dsl::SpmmProgram;
using test::Case;
using test::expect_close;
using test::graphs;

/// A schedule that splits rows into segments of `length` (a knob) and runs segments and rows in
/// parallel tasks on the CPU.
dsl::ScheduleDef segments_schedule() {
    dsl::ScheduleDef d;
    d.name = "cpu_segments";
    d.knobs = {{"length", {1, 3, 64, 1 << 20}, 3}, {"tile", {0, 1, 4, 64}, 0}};
    d.apply = [](dsl::ScheduleContext &c) {
        dsl::RowSegmentSplit r = c.split_rows(static_cast<int>(c.knob("length")), c.knob("tile"));
        EXPECT_EQ(r.length, c.knob("length"));
        EXPECT_EQ(r.src_tile, c.knob("tile"));
        EXPECT_EQ(c.rows_split, c.knob("length"));
        Halide::Var so("so"), si("si");
        r.segments.compute_root().split(r.s, so, si, 8, Halide::TailStrategy::GuardWithIf).parallel(so);
        r.segment_acc.compute_at(r.segments, si);
        c.out.parallel(c.v);
        c.acc.compute_at(c.out, c.v);
    };
    return d;
}

/// x_u * w_e + y_v / degree(v): a message of source, edge and destination operands and the degree.
SpmmProgram weighted(const std::string &name, Monoid m) {
    SpmmProgram p(name);
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    Halide::Expr y = p.operand("y", At::Dst);
    p.message(x * w + y / Halide::cast<float>(p.degree()));
    p.reduce(std::move(m));
    return p;
}

/// The same as plain loops over the CSR (sum or max).
Tensor weighted_reference(const Graph &g, int F, const Tensor &x, const Tensor &w, const Tensor &y, bool max) {
    const CSR &csr = g.csr();
    Tensor out = Tensor::zeros({csr.num_rows, F}, DType::F32);
    for (int64_t v = 0; v < csr.num_rows; ++v) {
        const int64_t deg = csr.row_length(v);
        if (deg == 0) continue;
        for (int f = 0; f < F; ++f) {
            double acc = max ? -INFINITY : 0.0;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; ++p) {
                const double m = double(x.data_as<float>()[csr.col_idx[p] * F + f]) * w.data_as<float>()[csr.edge_id(p)] +
                                 double(y.data_as<float>()[v * F + f]) / double(deg);
                acc = max ? std::max(acc, m) : acc + m;
            }
            out.data_as<float>()[v * F + f] = static_cast<float>(acc);
        }
    }
    return out;
}

TEST(UserRowSegments, SegmentTableListsTheRowOfEverySegment) {
    CSR csr;
    csr.num_rows = 4;
    csr.num_cols = 3;
    csr.row_ptr = {0, 5, 5, 6, 9};  // rows of 5, 0, 1 and 3 neighbours
    csr.col_idx = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    const RowSegments segs = split_row_segments(csr, 2);
    EXPECT_EQ(segs.seg_ptr, (std::vector<index_t>{0, 2, 4, 5, 6, 8, 9}));
    EXPECT_EQ(segs.row_segs, (std::vector<index_t>{0, 3, 3, 4, 6}));
    EXPECT_EQ(segment_rows(segs), (std::vector<index_t>{0, 0, 0, 2, 3, 3}));
    COO tiled;
    tiled.num_rows = 1, tiled.num_cols = 2, tiled.row = {0, 0}, tiled.col = {0, 1};
    EXPECT_TRUE(test::throws_with<GraphError>([&] { segment_rows(source_tile_segments(tiled, 1, 0)); }, {"seg_ids"}));
}

TEST(UserRowSegments, SegmentsMatchPlainLoopsAndTheInOrderReduction) {
    // Sum and max of a message reading every kind of operand and the degree, split into segments of
    // 1, 3 and 64 positions, against plain loops; the rows' long row (400 neighbours) spans many
    // segments, most rows one.
    for (const bool max : {false, true}) {
        const Monoid m = max ? Monoid::max() : Monoid::sum();
        SpmmProgram p = weighted(max ? "seg_max" : "seg_sum", m);
        for (int F : {1, 5, 32}) {
            std::vector<std::pair<int64_t, dsl::SpmmKernel>> kernels;
            for (int64_t length : {1, 3, 64})
                kernels.emplace_back(length, p.compile(F, Device::CPU, segments_schedule(), {{"length", length}}));
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(40 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                       y = test::random_tensor({g.num_dst(), F}, 3);
                const Tensor want = weighted_reference(g, F, x, w, y, max);
                for (const auto &[length, k] : kernels) {
                    EXPECT_EQ(k.segment_length(), length);
                    Tensor got = Tensor::empty({g.num_dst(), F}, DType::F32);
                    k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                    expect_close(got, want, 1e-5,
                                 std::string(max ? "max " : "sum ") + c.name + " F=" + std::to_string(F) +
                                     " segments of " + std::to_string(length));
                }
            }
        }
    }
}

TEST(UserRowSegments, SegmentLanesMatchPlainLoops) {
    // Segments of 3 and 64 positions, each over 2, 4 and 32 lanes of 1 or 3 steps (the lanes' last
    // iteration past the segment's end), sum and max, against plain loops on the CPU.
    for (const bool max : {false, true}) {
        SpmmProgram p = weighted(max ? "seg_lanes_max" : "seg_lanes_sum", max ? Monoid::max() : Monoid::sum());
        dsl::ScheduleDef def;
        def.name = "cpu_segment_lanes";
        def.knobs = {{"length", {3, 64}, 3}, {"lanes", {2, 4, 32}, 2}, {"steps", {1, 3}, 1}};
        def.apply = [](dsl::ScheduleContext &c) {
            const dsl::RowSegmentSplit r = c.split_rows(static_cast<int>(c.knob("length")), 0,
                                                        static_cast<int>(c.knob("lanes")),
                                                        static_cast<int>(c.knob("steps")));
            EXPECT_EQ(r.lanes.count, c.knob("lanes"));
            EXPECT_EQ(r.lanes.steps, c.knob("steps"));
            Halide::Func segments = r.segments, segment_acc = r.segment_acc, lanes = r.lanes.lanes;
            segments.compute_root().parallel(r.s);
            segment_acc.compute_at(segments, r.s);
            lanes.compute_at(segments, r.s);
            c.out.parallel(c.v);
            c.acc.compute_at(c.out, c.v);
        };
        for (int F : {1, 6}) {
            std::vector<dsl::SpmmKernel> kernels;
            for (const auto &point : def.space(F, Device::CPU)) kernels.push_back(p.compile(F, Device::CPU, def, point));
            ASSERT_EQ(kernels.size(), 12u);
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(60 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                       y = test::random_tensor({g.num_dst(), F}, 3);
                const Tensor want = weighted_reference(g, F, x, w, y, max);
                for (const dsl::SpmmKernel &k : kernels) {
                    Tensor got = Tensor::empty({g.num_dst(), F}, DType::F32);
                    k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                    expect_close(got, want, 1e-5, std::string(c.name) + " F=" + std::to_string(F) + " " + k.schedule());
                }
            }
        }
    }
    SpmmProgram p = weighted("seg_lanes_bad", Monoid::sum());
    dsl::ScheduleDef bad;
    bad.name = "bad_segment_lanes";
    bad.knobs = {{"lanes", {1, 33}, 1}, {"steps", {1, 2}, 1}};
    bad.apply = [](dsl::ScheduleContext &c) {
        c.split_rows(8, 0, static_cast<int>(c.knob("lanes")), static_cast<int>(c.knob("steps")));
    };
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, bad, {{"lanes", 33}}); },
                                                 {"33 lanes is not in 1..32"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, bad, {{"steps", 2}}); },
                                                 {"steps are of the lanes of a segment"}));
}

TEST(UserRowSegments, CudaSegmentLanesMergeThroughShuffles) {
    // The CUDA form (tests/support/cuda_user_schedules.h): the segments' lanes merge through warp
    // shuffles, no shared memory; a second kernel merges each row's segments.
    SpmmProgram p = weighted("seg_lanes_cuda", Monoid::sum());
    for (const auto &point : std::vector<std::map<std::string, int64_t>>{{{"lanes", 8}}, {{"lanes", 32}, {"steps", 2}}}) {
        const std::string ptx = p.compile(4, Device::CUDA, test::cuda_segment_lanes_schedule(), point).assembly();
        EXPECT_GE(test::count_of(ptx, "shfl.sync"), 1u) << ptx;
        EXPECT_EQ(ptx.find(".shared"), std::string::npos);
        EXPECT_EQ(test::count_of(ptx, ".entry"), 2u);
    }
}

TEST(UserRowSegments, SourceTilesMatchPlainLoops) {
    // Source tiles of 1, 4 and 64 ids (a tile per source, a few sources, most of the graph), runs
    // cut after 3 positions or uncut: a row's segments come from several tiles and merge in tile
    // order. Sum and max of the message of every operand kind and the degree, F = 1, 5, against
    // plain loops on the random graphs (shuffled and identity edge ids: the regrouped edges keep
    // their ids); and a graph without edges.
    for (const bool max : {false, true}) {
        SpmmProgram p = weighted(max ? "tile_max" : "tile_sum", max ? Monoid::max() : Monoid::sum());
        for (int F : {1, 5}) {
            std::vector<std::pair<std::string, dsl::SpmmKernel>> kernels;
            for (int64_t tile : {1, 4, 64})
                for (int64_t length : {3, 1 << 20}) {
                    dsl::SpmmKernel k = p.compile(F, Device::CPU, segments_schedule(), {{"length", length}, {"tile", tile}});
                    EXPECT_EQ(k.source_tile(), tile);
                    kernels.emplace_back(k.schedule(), k);
                }
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(70 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                       y = test::random_tensor({g.num_dst(), F}, 3);
                const Tensor want = weighted_reference(g, F, x, w, y, max);
                for (const auto &[point, k] : kernels) {
                    Tensor got = test::random_tensor({g.num_dst(), F}, 4);
                    k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                    expect_close(got, want, 1e-5, std::string(max ? "max " : "sum ") + c.name + " F=" + std::to_string(F) +
                                                      " " + point);
                }
            }
        }
    }
    test::RandomGraphOptions none;
    none.avg_degree = 0, none.long_row = 0, none.duplicate_share = 0, none.self_loop_share = 0;
    Graph g = test::random_graph(3, none);
    ASSERT_EQ(g.num_edges(), 0);
    Tensor out = test::random_tensor({g.num_dst(), 4}, 9);
    weighted("edgeless_tiles", Monoid::sum())
        .compile(4, Device::CPU, segments_schedule(), {{"length", 3}, {"tile", 4}})
        .run(g, {{"x", test::random_tensor({g.num_src(), 4}, 1)}, {"w", Tensor::empty({0, 1}, DType::F32)},
                 {"y", test::random_tensor({g.num_dst(), 4}, 3)}},
             out);
    for (int64_t i = 0; i < out.numel(); ++i) ASSERT_EQ(out.data_as<float>()[i], 0.f) << i;
    // The static library takes the row's segment list after the segment table.
    const std::vector<std::string> args = weighted("tile_args", Monoid::sum())
                                              .compile(4, Device::CPU, segments_schedule(), {{"tile", 64}})
                                              .argument_names();
    const std::vector<std::string> want = {"row_ptr", "col_idx", "edge_ids", "seg_ptr", "seg_row", "row_segs", "seg_ids",
                                           "tile_args_x", "tile_args_w", "tile_args_y", "max_degree", "num_edges",
                                           "num_src", "num_segs", "max_segments", "max_segment_len", "tile_args_out"};
    EXPECT_EQ(args, want);
}

/// A schedule that splits off row tails of `length` (a knob): rows, tails and the tails' merge in
/// parallel tasks on the CPU.
dsl::ScheduleDef tails_schedule() {
    dsl::ScheduleDef d;
    d.name = "cpu_tails";
    d.knobs = {{"length", {1, 3, 64}, 3}};
    d.apply = [](dsl::ScheduleContext &c) {
        const dsl::RowTailSplit r = c.split_row_tails(static_cast<int>(c.knob("length")));
        EXPECT_EQ(r.length, c.knob("length"));
        Halide::Func tails = r.tails, tail_acc = r.tail_acc;
        Halide::Var to("to"), ti("ti");
        tails.compute_root().split(r.t, to, ti, 8, Halide::TailStrategy::GuardWithIf).parallel(to);
        tail_acc.compute_at(tails, ti);
        c.out.parallel(c.v);
        c.acc.compute_at(c.out, c.v);
        c.out.update().parallel(r.r);
    };
    return d;
}

TEST(UserRowSegments, RowTailsMatchPlainLoops) {
    // Rows keep their first 1, 3 or 64 positions; the rest of a longer row (the long row of 400,
    // most rows past 1 or 3) comes in tails merged into the row atomically. Sum and max of the
    // message of every operand kind and the degree, F = 1, 5; a graph without edges.
    for (const bool max : {false, true}) {
        SpmmProgram p = weighted(max ? "tails_max" : "tails_sum", max ? Monoid::max() : Monoid::sum());
        for (int F : {1, 5}) {
            std::vector<dsl::SpmmKernel> kernels;
            for (int64_t length : {1, 3, 64}) {
                kernels.push_back(p.compile(F, Device::CPU, tails_schedule(), {{"length", length}}));
                EXPECT_EQ(kernels.back().tail_length(), length);
            }
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(80 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                       y = test::random_tensor({g.num_dst(), F}, 3);
                const Tensor want = weighted_reference(g, F, x, w, y, max);
                for (const dsl::SpmmKernel &k : kernels) {
                    Tensor got = test::random_tensor({g.num_dst(), F}, 4);
                    k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                    expect_close(got, want, 1e-5, std::string(max ? "max " : "sum ") + c.name + " F=" + std::to_string(F) +
                                                      " " + k.schedule());
                }
            }
        }
    }
    test::RandomGraphOptions none;
    none.avg_degree = 0, none.long_row = 0, none.duplicate_share = 0, none.self_loop_share = 0;
    Graph g = test::random_graph(3, none);
    Tensor out = test::random_tensor({g.num_dst(), 4}, 9);
    weighted("edgeless_tails", Monoid::sum())
        .compile(4, Device::CPU, tails_schedule())
        .run(g, {{"x", test::random_tensor({g.num_src(), 4}, 1)}, {"w", Tensor::empty({0, 1}, DType::F32)},
                 {"y", test::random_tensor({g.num_dst(), 4}, 3)}},
             out);
    for (int64_t i = 0; i < out.numel(); ++i) ASSERT_EQ(out.data_as<float>()[i], 0.f) << i;
    // The static library takes the tail table after the CSR arrays and its size last.
    const std::vector<std::string> args =
        weighted("tail_args", Monoid::sum()).compile(4, Device::CPU, tails_schedule()).argument_names();
    const std::vector<std::string> want = {"row_ptr", "col_idx", "edge_ids", "tail_start", "tail_end", "tail_row",
                                           "tail_args_x", "tail_args_w", "tail_args_y", "max_degree", "num_edges",
                                           "num_src", "num_tails", "tail_args_out"};
    EXPECT_EQ(args, want);
}

TEST(UserRowSegments, CudaRowTailsAreThreeKernelsWithAtomicMerges) {
    // On CUDA (PTX, no GPU needed): the rows, the tails and the tails' merge into their rows, the
    // merge an atomic add for a sum (a compare-and-swap loop for max).
    for (const bool max : {false, true}) {
        const std::string ptx = weighted(max ? "cuda_tails_max" : "cuda_tails_sum", max ? Monoid::max() : Monoid::sum())
                                    .compile(8, Device::CUDA, test::cuda_tails_schedule())
                                    .assembly();
        EXPECT_EQ(test::count_of(ptx, ".entry"), 3u) << ptx;
        if (max) EXPECT_NE(ptx.find("atom.global.cas"), std::string::npos) << ptx;
        else
            EXPECT_TRUE(ptx.find("red.global.add.f32") != std::string::npos ||
                        ptx.find("atom.global.add.f32") != std::string::npos)
                << ptx;
    }
}

TEST(UserRowSegments, RowTailErrorsNameTheReason) {
    auto schedule = [](std::function<void(dsl::ScheduleContext &)> apply) {
        dsl::ScheduleDef d;
        d.name = "custom";
        d.apply = std::move(apply);
        return d;
    };
    SpmmProgram summed = weighted("tails_errors", Monoid::sum());
    SpmmProgram mean = weighted("tails_mean", Monoid::sum());
    mean.finalize([](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast<float>(degree); });
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { mean.compile(4, Device::CPU, tails_schedule()); }, {"split_row_tails", "finalizes its rows"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { gsparse_examples::gat_attention("tails_tuples", true).compile(4, Device::CPU, tails_schedule()); },
        {"split_row_tails", "accumulates a tuple"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) { c.split_row_tails(0); })); },
        {"a tail of 0 positions is not in 1.."}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] {
            summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) {
                               c.split_rows(8);
                               c.split_row_tails(8);
                           }));
        },
        {"split_row_tails", "already split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] {
            summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) {
                               c.split_row_tails(8);
                               c.balanced_rows();
                           }));
        },
        {"balanced_rows and split_row_tails do not go together"}));
    dsl::SpmmKernel k = summed.compile(4, Device::CPU, tails_schedule());
    Graph g = test::random_graph(8);
    test::HostView host = test::view_of(g);
    Tensor out = Tensor::empty({g.num_dst(), 4}, DType::F32);
    EXPECT_TRUE(test::throws_with<GraphError>(
        [&] {
            k.run(host.view,
                  {{"x", test::random_tensor({g.num_src(), 4}, 1)}, {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                   {"y", test::random_tensor({g.num_dst(), 4}, 3)}},
                  out);
        },
        {"tails_errors", "split_row_tails", "tail table"}));
}

TEST(UserRowSegments, TuplesSeveralOutputsAndEdgelessMessagesMergeInOrder) {
    // GAT's online softmax (a monoid over tuples, merge_values) with its log-sum-exp as a second
    // output, a mean by finalize, and a message of destination operands only (it still counts each
    // in-edge): split rows against the same programs in order.
    struct Program {
        const char *what;
        std::function<SpmmProgram(const std::string &)> make;
        int outputs;
    };
    const std::vector<Program> programs = {
        {"attention", [](const std::string &name) { return gsparse_examples::gat_attention(name, true); }, 2},
        {"mean", [](const std::string &name) {
             SpmmProgram p(name);
             p.message(p.operand("x", At::Src) * p.operand("w", At::Edge, true));
             p.reduce(Monoid::sum());
             p.finalize([](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast<float>(degree); });
             return p;
         }, 1},
        {"count", [](const std::string &name) {
             SpmmProgram p(name);
             p.message(p.operand("y", At::Dst, true) + 1.f);
             p.reduce(Monoid::sum());
             return p;
         }, 1}};
    const int F = 7;
    for (const Program &prog : programs) {
        dsl::SpmmKernel in_order = prog.make(std::string("in_order_") + prog.what).compile(F);
        dsl::SpmmKernel split =
            prog.make(std::string("split_") + prog.what).compile(F, Device::CPU, segments_schedule(), {{"length", 3}});
        for (const Case &c : graphs()) {
            Graph g = test::random_graph(77, c.opt);
            std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)},
                                              {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                                              {"y", test::random_tensor({g.num_dst(), 1}, 3)},
                                              {"a_src", test::random_tensor({g.num_src(), 1}, 4, DType::F32, 0., 30.)},
                                              {"a_dst", test::random_tensor({g.num_dst(), 1}, 5, DType::F32, 0., 30.)}};
            std::map<std::string, Tensor> used;
            for (const auto &info : prog.make(std::string("probe_") + prog.what).operands())
                used[info.name] = ops.at(info.name);
            std::vector<Tensor> want, got;
            std::vector<Tensor *> want_p, got_p;
            for (int i = 0; i < prog.outputs; ++i) {
                want.push_back(Tensor::empty({g.num_dst(), F}, DType::F32));
                got.push_back(Tensor::empty({g.num_dst(), F}, DType::F32));
            }
            for (int i = 0; i < prog.outputs; ++i) {
                want_p.push_back(&want[static_cast<size_t>(i)]);
                got_p.push_back(&got[static_cast<size_t>(i)]);
            }
            in_order.run(g, used, want_p);
            split.run(g, used, got_p);
            for (int i = 0; i < prog.outputs; ++i)
                expect_close(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 1e-5,
                             std::string(prog.what) + " " + c.name + " output " + std::to_string(i));
        }
    }
}

TEST(UserRowSegments, DefaultScheduleSplitsWhereTheLongestRowSpansSegments) {
    // row_segments = 256 of the default schedule: a graph with a row of 400 neighbours runs segments
    // (same result as whole rows); a graph whose rows all fit in one segment, and any graph view,
    // run whole rows (the schedule's for_graph).
    SpmmProgram p = weighted("default_segments", Monoid::sum());
    const int F = 6;
    dsl::SpmmKernel whole = p.compile(F), split = p.compile(F, Device::CPU, dsl::default_schedule(), {{"row_segments", 256}});
    EXPECT_EQ(split.segment_length(), 256);
    test::RandomGraphOptions short_rows;
    short_rows.long_row = 20;
    short_rows.avg_degree = 3;
    for (const auto &[what, opt] : std::vector<std::pair<const char *, test::RandomGraphOptions>>{
             {"long row", graphs()[0].opt}, {"short rows", short_rows}}) {
        Graph g = test::random_graph(5, opt);
        const bool long_rows = g.max_row_length() > 256;
        EXPECT_EQ(split.schedule(g).find("row_segments=256") != std::string::npos, long_rows) << what << split.schedule(g);
        std::map<std::string, Tensor> ops{{"x", test::random_tensor({g.num_src(), F}, 1)},
                                          {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                                          {"y", test::random_tensor({g.num_dst(), F}, 3)}};
        Tensor want = Tensor::empty({g.num_dst(), F}, DType::F32), got = Tensor::empty({g.num_dst(), F}, DType::F32);
        whole.run(g, ops, want);
        split.run(g, ops, got);
        expect_close(got, want, 1e-5, what);
        // The same graph as a view: whole rows.
        test::HostView host = test::view_of(g, g.max_row_length());
        const GraphView &v = host.view;
        EXPECT_NE(split.schedule(v).find("row_segments=0"), std::string::npos) << split.schedule(v);
        Tensor on_view = Tensor::empty({g.num_dst(), F}, DType::F32);
        split.run(v, ops, on_view);
        expect_close(on_view, want, 1e-5, std::string("view, ") + what);
    }
}

TEST(UserRowSegments, DefaultSplitsRowsOnCudaByTheGraph) {
    // row_segments = 0 (the default) on CUDA: segments of 256 on Graphs whose longest row exceeds a
    // segment, at F <= 4 or where the longest row is at least 600 times the average; whole rows
    // otherwise, on views and for monoids without a merge.
    dsl::RunShape r;
    r.device = Device::CUDA, r.monoid_merges = true, r.num_src = r.num_dst = 100000, r.num_edges = 1600000;
    r.features = 4, r.max_degree = 300;
    EXPECT_TRUE(dsl::split_rows_by_default(r));
    r.max_degree = 256;
    EXPECT_FALSE(dsl::split_rows_by_default(r));  // one segment holds the longest row
    r.features = 64, r.max_degree = 16 * 600;
    EXPECT_TRUE(dsl::split_rows_by_default(r));
    r.max_degree = 16 * 599;
    EXPECT_FALSE(dsl::split_rows_by_default(r));
    r.max_degree = 16 * 600, r.graph_view = true;
    EXPECT_FALSE(dsl::split_rows_by_default(r));
    r.graph_view = false, r.monoid_merges = false;
    EXPECT_FALSE(dsl::split_rows_by_default(r));

    test::RandomGraphOptions opt;
    opt.num_nodes = 2000, opt.long_row = 5000;  // average about 7.5, longest row 5000
    Graph g = test::random_graph(12, opt);
    SpmmProgram p = weighted("auto_segments", Monoid::sum());
    for (int F : {4, 64}) {
        dsl::SpmmKernel k = p.compile(F, Device::CUDA);
        EXPECT_NE(k.schedule().find("row_segments=0"), std::string::npos) << k.schedule();
        const std::string on_g = k.schedule(g);
        EXPECT_NE(on_g.find("row_segments=256"), std::string::npos) << on_g;
        EXPECT_NE(on_g.find("nnz_lanes=1"), std::string::npos) << on_g;
        // Lanes of nonzeros or rows by in-degree asked for: no automatic segments.
        EXPECT_NE(p.compile(F, Device::CUDA, dsl::default_schedule(), {{"nnz_lanes", 8}}).schedule(g).find("row_segments=0"),
                  std::string::npos);
        EXPECT_NE(p.compile(F, Device::CUDA, dsl::default_schedule(), {{"balanced_rows", 1}}).schedule(g).find("row_segments=0"),
                  std::string::npos);
        // The CPU keeps whole rows by default.
        EXPECT_NE(p.compile(F).schedule(g).find("row_segments=0"), std::string::npos);
    }
}

TEST(UserRowSegments, GraphWithoutEdgesGivesZeros) {
    SpmmProgram p = weighted("edgeless_segments", Monoid::sum());
    test::RandomGraphOptions none;
    none.avg_degree = 0, none.long_row = 0, none.duplicate_share = 0, none.self_loop_share = 0;
    Graph g = test::random_graph(3, none);
    ASSERT_EQ(g.num_edges(), 0);
    Tensor out = test::random_tensor({g.num_dst(), 4}, 9);
    p.compile(4, Device::CPU, segments_schedule(), {{"length", 3}})
        .run(g, {{"x", test::random_tensor({g.num_src(), 4}, 1)}, {"w", Tensor::empty({0, 1}, DType::F32)},
                 {"y", test::random_tensor({g.num_dst(), 4}, 3)}},
             out);
    for (int64_t i = 0; i < out.numel(); ++i) ASSERT_EQ(out.data_as<float>()[i], 0.f) << i;
}

TEST(UserRowSegments, ErrorsNameTheProblem) {
    auto schedule = [](std::function<void(dsl::ScheduleContext &)> apply) {
        dsl::ScheduleDef d;
        d.name = "custom";
        d.apply = std::move(apply);
        return d;
    };
    SpmmProgram summed = weighted("summed_segments", Monoid::sum());
    // A monoid without a merge is not assumed commutative: no segments.
    SpmmProgram ordered("ordered_segments");
    ordered.message(ordered.operand("x", At::Src));
    ordered.reduce(Monoid{"first_nonzero", [](Halide::Type t) { return Halide::Internal::make_zero(t); },
                          [](Halide::Expr a, Halide::Expr x) { return Halide::select(a == 0, x, a); }});
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { ordered.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) { c.split_rows(8); })); },
        {"first_nonzero", "declares no merge"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) { c.split_rows(0); })); },
        {"0 positions is not in 1.."}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) { c.split_rows(8, 3); })); },
        {"a source tile of 3 ids is not 0 or a power of two"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] {
            summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) {
                               c.split_rows(8);
                               c.split_rows(8);
                           }));
        },
        {"already split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] {
            summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) {
                               c.split_nnz_lanes(4);
                               c.split_rows(8);
                           }));
        },
        {"already split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] {
            summed.compile(4, Device::CPU, schedule([](dsl::ScheduleContext &c) {
                               c.split_rows(8);
                               c.balanced_rows();
                           }));
        },
        {"balanced_rows and split_rows"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CPU, dsl::default_schedule(), {{"row_segments", 256}, {"balanced_rows", 1}}); },
        {"row_segments and balanced_rows"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CUDA, dsl::default_schedule(), {{"row_segments", 256}, {"nnz_lanes", 8}}); },
        {"nnz_lanes 0 or 1"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { summed.compile(4, Device::CPU, dsl::default_schedule(), {{"row_segments", 100}}); },
        {"row_segments = 100 is not one of its choices"}));
    // A kernel that always splits (no for_graph) refuses a graph view, naming why.
    dsl::SpmmKernel k = summed.compile(4, Device::CPU, segments_schedule());
    Graph g = test::random_graph(8);
    test::HostView host = test::view_of(g);
    const GraphView &v = host.view;
    Tensor out = Tensor::empty({g.num_dst(), 4}, DType::F32);
    EXPECT_TRUE(test::throws_with<GraphError>(
        [&] {
            k.run(v,
                  {{"x", test::random_tensor({g.num_src(), 4}, 1)}, {"w", test::random_tensor({g.num_edges(), 1}, 2)},
                   {"y", test::random_tensor({g.num_dst(), 4}, 3)}},
                  out);
        },
        {"summed_segments", "split_rows", "segment table"}));
}

TEST(UserRowSegments, CudaSegmentsAndRowsAreTwoKernels) {
    // On CUDA the default schedule with row_segments computes the segments in a kernel of their own
    // (a thread per feature and segment), then the rows merge their segments; the static library
    // takes the segment table after the CSR arrays and its sizes after num_src.
    SpmmProgram p = weighted("cuda_segments", Monoid::sum());
    dsl::SpmmKernel k = p.compile(32, Device::CUDA, dsl::default_schedule(), {{"row_segments", 256}, {"nnz_lanes", 1}});
    const std::string stmt = k.lowered_stmt(), ptx = k.assembly();
    EXPECT_NE(stmt.find("cuda_segments_segments"), std::string::npos) << stmt;
    size_t entries = 0;
    for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) ++entries;
    EXPECT_EQ(entries, 2u) << ptx.substr(0, 2000);
    const std::vector<std::string> args = k.argument_names();
    const std::vector<std::string> want = {"row_ptr", "col_idx", "edge_ids", "seg_ptr", "seg_row", "row_segs",
                                           "cuda_segments_x", "cuda_segments_w", "cuda_segments_y", "max_degree",
                                           "num_edges", "num_src", "num_segs", "max_segments", "max_segment_len",
                                           "cuda_segments_out"};
    EXPECT_EQ(args, want);
}

}  // namespace
}  // namespace gsparse
