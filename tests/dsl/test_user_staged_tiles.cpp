// User programs whose schedules stage neighbour ids a tile at a time
// (dsl::ScheduleContext::stage_neighbours) and keep block-wide accumulator tiles in registers
// (dsl::ScheduleContext::register_tiles): the example schedule staged_tiles (CPU) against plain C++
// loops on random graphs (empty rows, a very long row, duplicate edges, self-loops, shuffled and
// identity edge ids, bipartite), sum / max / a monoid over tuples, F = 1, odd F and F = 32, under
// balanced rows too; the tiles' loop bounded per row block in the lowered statement; errors; the
// CUDA kernel (PTX: shared-memory tiles, barriers, no local-memory accumulators).
#include <gtest/gtest.h>

#include <cmath>

#include "dsl/user_spmm.h"
#include "support/compare.h"
#include "support/random_graph.h"
#include "support/text_count.h"
#include "support/throws_with.h"
#include "support/user_program_cases.h"
#include "support/weighted_program.h"
#include "user_plugin/gat_attention.h"
#include "user_plugin/staged_tiles.h"

namespace gsparse {
namespace {

using dsl::At;
using dsl::Monoid;
using dsl::SpmmProgram;
using test::Case;
using test::expect_close;
using test::graphs;

/// staged_tiles with balanced rows on top (the rows of a block then come from the row order).
dsl::ScheduleDef staged_balanced() {
    dsl::ScheduleDef d = gsparse_examples::staged_tiles();
    d.name = "staged_balanced";
    auto apply = d.apply;
    d.apply = [apply](dsl::ScheduleContext &c) {
        c.balanced_rows();
        apply(c);
    };
    return d;
}

TEST(UserStagedTiles, StagedRowsMatchPlainLoops) {
    // Tiles of 8 and 64 positions over blocks of 1, 8 and 128 rows (and balanced rows): the long row
    // (400 neighbours) takes many tiles, most rows part of one; the last block of rows runs past the
    // graph's end. Sum at F = 1, 5 and 32, max at F = 5.
    for (const auto &[max, F] : std::vector<std::pair<bool, int>>{{false, 1}, {false, 5}, {false, 32}, {true, 5}}) {
        SpmmProgram p = test::weighted_program(max ? "staged_max" : "staged_sum", max ? Monoid::max() : Monoid::sum());
        {
            std::vector<std::pair<std::string, dsl::SpmmKernel>> kernels;
            for (int64_t rows : {1, 8, 128})
                for (int64_t tile : {8, 64}) {
                    dsl::SpmmKernel k =
                        p.compile(F, Device::CPU, gsparse_examples::staged_tiles(), {{"rows", rows}, {"nnz_tile", tile}});
                    kernels.emplace_back(k.schedule(), k);
                }
            kernels.emplace_back("balanced rows", p.compile(F, Device::CPU, staged_balanced(), {{"rows", 8}, {"nnz_tile", 8}}));
            EXPECT_TRUE(kernels.back().second.orders_rows());
            for (const Case &c : graphs()) {
                Graph g = test::random_graph(30 + F, c.opt);
                Tensor x = test::random_tensor({g.num_src(), F}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
                       y = test::random_tensor({g.num_dst(), F}, 3);
                const Tensor want = test::weighted_reference(g, F, x, w, y, max);
                for (const auto &[point, k] : kernels) {
                    Tensor got = Tensor::empty({g.num_dst(), F}, DType::F32);
                    k.run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
                    expect_close(got, want, 1e-5, std::string(c.name) + " F=" + std::to_string(F) + " " + point);
                }
            }
        }
    }
}

TEST(UserStagedTiles, TuplesAndEdgeOperandsStageToo) {
    // GAT's one-pass softmax aggregation (a monoid over tuples, two outputs) reads source ids only
    // (no edge tile is made); a sum weighted by an edge operand reads edge ids through the edge tile.
    const int F = 7;
    for (const bool attention : {true, false}) {
        auto make = [&](const std::string &name) {
            if (attention) return gsparse_examples::gat_attention(name, true);
            SpmmProgram p(name);
            Halide::Expr x = p.operand("x", At::Src);
            p.message(x * p.operand("w", At::Edge, true));
            p.reduce(Monoid::sum());
            return p;
        };
        dsl::SpmmKernel in_order = make("in_order").compile(F);
        bool staged_once = false;
        dsl::ScheduleDef def = gsparse_examples::staged_tiles();
        auto apply = def.apply;
        def.apply = [&](dsl::ScheduleContext &c) {
            apply(c);
            staged_once = c.staged_tile == 16;
        };
        dsl::SpmmKernel staged = make("staged").compile(F, Device::CPU, def, {{"nnz_tile", 16}});
        EXPECT_TRUE(staged_once);
        // (The CUDA statement: its loops stay inline, where the CPU's run in parallel closures.)
        const std::string stmt = make("staged").compile(F, Device::CUDA, def, {{"nnz_tile", 16}}).lowered_stmt();
        EXPECT_NE(stmt.find("for staged_ids"), std::string::npos);
        EXPECT_EQ(stmt.find("for staged_edges") != std::string::npos, !attention)
            << "an edge tile only where edge ids are read";
        const int outputs = in_order.num_outputs();
        for (const Case &c : graphs()) {
            Graph g = test::random_graph(11, c.opt);
            std::map<std::string, Tensor> ops;
            for (const auto &info : make("probe").operands()) {
                const int64_t rows = info.at == At::Src ? g.num_src() : info.at == At::Dst ? g.num_dst() : g.num_edges();
                ops[info.name] = test::random_tensor({rows, info.broadcast ? 1 : F}, ops.size() + 1);
            }
            std::vector<Tensor> want, got;
            for (int i = 0; i < outputs; ++i) {
                want.push_back(Tensor::empty({g.num_dst(), F}, DType::F32));
                got.push_back(Tensor::empty({g.num_dst(), F}, DType::F32));
            }
            std::vector<Tensor *> want_p, got_p;
            for (int i = 0; i < outputs; ++i) {
                want_p.push_back(&want[static_cast<size_t>(i)]);
                got_p.push_back(&got[static_cast<size_t>(i)]);
            }
            in_order.run(g, ops, want_p);
            staged.run(g, ops, got_p);
            for (int i = 0; i < outputs; ++i)
                expect_close(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 1e-5,
                             std::string(attention ? "attention " : "weighted ") + c.name + " output " + std::to_string(i));
        }
    }
}

TEST(UserStagedTiles, TheTilesLoopRunsToTheBlocksLongestRow) {
    // The ko loop's extent is bounded by the lengths of the block's rows read from row_ptr (the
    // BlockUniformLoop pass, on the block loop's index), not by the graph's longest row alone. A
    // serial schedule: its loops stay in the lowered statement (parallel ones go to closures).
    SpmmProgram p = test::weighted_program("bounded", Monoid::sum());
    dsl::ScheduleDef serial;
    serial.name = "serial_tiles";
    serial.apply = [](dsl::ScheduleContext &c) {
        Halide::Var vo("vo"), vi("vi");
        dsl::NeighbourTiles t = c.stage_neighbours(16, vo, 2);
        EXPECT_EQ(t.tile, 16);
        EXPECT_TRUE(t.edges.defined());
        c.out.split(c.v, vo, vi, 2, Halide::TailStrategy::GuardWithIf);
        c.acc.compute_at(c.out, vo);
        c.acc.update().reorder(c.f, t.ki, c.v, t.ko);
    };
    const std::string stmt = p.compile(4, Device::CPU, serial).lowered_stmt();
    // The first copy of the loop: inside the loop over blocks (the last partial block's copy, peeled
    // off by loop partitioning, keeps the graph's bound).
    size_t loop = std::string::npos;
    for (size_t at = stmt.find("for ("); at != std::string::npos && loop == std::string::npos;
         at = stmt.find("for (", at + 1)) {
        const std::string head = stmt.substr(at, stmt.find('\n', at) - at);
        if (head.find("bounded_ko,") != std::string::npos) loop = at;
    }
    ASSERT_NE(loop, std::string::npos) << stmt;
    const std::string head = stmt.substr(loop, stmt.find('\n', loop) - loop);
    EXPECT_NE(head.find("row_ptr["), std::string::npos) << head;
    EXPECT_NE(head.find("bounded_out.s0.v.vo"), std::string::npos) << head;
    Graph g = test::random_graph(4, graphs()[0].opt);
    Tensor x = test::random_tensor({g.num_src(), 4}, 1), w = test::random_tensor({g.num_edges(), 1}, 2),
           y = test::random_tensor({g.num_dst(), 4}, 3), got = Tensor::empty({g.num_dst(), 4}, DType::F32);
    p.compile(4, Device::CPU, serial).run(g, {{"x", x}, {"w", w}, {"y", y}}, got);
    expect_close(got, test::weighted_reference(g, 4, x, w, y, false), 1e-5, "serial tiles");
}

TEST(UserStagedTiles, StagingErrorsNameTheReason) {
    SpmmProgram p = test::weighted_program("errors", Monoid::sum());
    auto with = [](std::function<void(dsl::ScheduleContext &)> apply) {
        dsl::ScheduleDef d;
        d.name = "broken";
        d.apply = std::move(apply);
        return d;
    };
    Halide::Var vo("vo"), vi("vi");
    auto rows = [&](dsl::ScheduleContext &c) {
        c.out.split(c.v, vo, vi, 4, Halide::TailStrategy::GuardWithIf);
        c.acc.compute_at(c.out, vo);
    };
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, with([&](dsl::ScheduleContext &c) {
                                                  c.stage_neighbours(0, vo, 4);
                                              })); },
                                                 {"a tile of 0 positions is not in 1..1024"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, with([&](dsl::ScheduleContext &c) {
                                                  c.stage_neighbours(8, vo, 2000);
                                              })); },
                                                 {"2000 rows a block is not in 1..1024"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, with([&](dsl::ScheduleContext &c) {
                                                  c.stage_neighbours(8, vo, 4);
                                                  c.stage_neighbours(8, vo, 4);
                                              })); },
                                                 {"already staged"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, with([&](dsl::ScheduleContext &c) {
                                                  c.split_rows(16);
                                                  c.stage_neighbours(8, vo, 4);
                                              })); },
                                                 {"stage_neighbours", "is split"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>([&] { p.compile(4, Device::CPU, with([&](dsl::ScheduleContext &c) {
                                                  c.stage_neighbours(8, vo, 4);
                                                  c.split_nnz_lanes(4);
                                              })); },
                                                 {"split_nnz_lanes", "stages its neighbour ids"}));
    // A row block loop that out does not have: the tiles' bound has nothing to read.
    Halide::Var other("other");
    EXPECT_TRUE(test::throws_with<KernelError>([&] { p.compile(4, Device::CPU, with([&](dsl::ScheduleContext &c) {
                                                   c.stage_neighbours(8, other, 4);
                                                   rows(c);
                                               })); },
                                               {"stage_neighbours found no loop", "inside out's row block loop errors_out.s0.v.other"}));
    // Points of staged_tiles outside its rule.
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CPU, gsparse_examples::staged_tiles(), {{"register_tile", 2}}); },
        {"feature_threads, register_tile and vector are CUDA knobs"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(4, Device::CUDA, gsparse_examples::staged_tiles(), {{"feature_threads", 4}, {"register_tile", 2}}); },
        {"feature_threads x register_tile x vector exceeds the feature count"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(6, Device::CUDA, gsparse_examples::staged_tiles(), {{"feature_threads", 1}, {"vector", 4}}); },
        {"vector must divide the feature count"}));
    EXPECT_TRUE(test::throws_with<ScheduleError>(
        [&] { p.compile(32, Device::CUDA, gsparse_examples::staged_tiles(), {{"rows", 128}}); },
        {"exceeds 1024 threads a block"}));
}

TEST(UserStagedTiles, CudaKernelStagesIdsInSharedMemoryAndKeepsAccumulatorsInRegisters) {
    // PTX of the CUDA kernel (no GPU needed): the tiles live in shared memory between barriers; with
    // register_tiles the block-wide accumulator tile becomes each thread's registers (no local
    // depot), without it Halide's per-thread copy of the whole tile stays in local memory.
    SpmmProgram p = test::weighted_program("staged_cuda", Monoid::sum());
    const std::map<std::string, int64_t> point = {{"rows", 4}, {"nnz_tile", 32}, {"feature_threads", 16}, {"register_tile", 2}};
    dsl::SpmmKernel k = p.compile(64, Device::CUDA, gsparse_examples::staged_tiles(), point);
    const std::string ptx = k.assembly();
    EXPECT_NE(ptx.find(".shared"), std::string::npos);
    EXPECT_NE(ptx.find("bar.sync"), std::string::npos);
    EXPECT_EQ(ptx.find("__local_depot"), std::string::npos) << "accumulators in local memory";
    EXPECT_GE(test::count_of(ptx, "ld.shared"), 1u);

    dsl::ScheduleDef without = gsparse_examples::staged_tiles();
    auto apply = without.apply;
    without.apply = [apply](dsl::ScheduleContext &c) {
        apply(c);
        c.tiles_in_registers = false;
    };
    const std::string spilled = p.compile(64, Device::CUDA, without, point).assembly();
    EXPECT_NE(spilled.find("__local_depot"), std::string::npos) << "the pass is what keeps them in registers";
}

TEST(UserStagedTiles, CudaVectorGroupsLoadVectorsFromRegisters) {
    // vector = 4 (aligned_rows): each of a thread's register_tile outputs is a group of 4 features,
    // gathered with 128-bit loads, still in registers; vector = 1 loads scalars.
    SpmmProgram p = test::weighted_program("staged_vec", Monoid::sum());
    std::map<std::string, int64_t> point = {{"rows", 8}, {"nnz_tile", 32}, {"feature_threads", 8}, {"register_tile", 2},
                                            {"vector", 4}};
    const std::string vec = p.compile(64, Device::CUDA, gsparse_examples::staged_tiles(), point).assembly();
    EXPECT_GE(test::count_of(vec, "ld.global.nc.v4.f32") + test::count_of(vec, "ld.global.v4.f32"), 2u) << vec;
    EXPECT_EQ(vec.find("__local_depot"), std::string::npos) << "accumulators in local memory";
    point["vector"] = 1;
    const std::string scalar = p.compile(64, Device::CUDA, gsparse_examples::staged_tiles(), point).assembly();
    EXPECT_EQ(test::count_of(scalar, "ld.global.nc.v4.f32") + test::count_of(scalar, "ld.global.v4.f32"), 0u);
}

}  // namespace
}  // namespace gsparse
