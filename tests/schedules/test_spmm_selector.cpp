// The learned default of gpu_spmm (schedules/spmm_selector.h): its statistics, its support, the
// points it can answer and their validity for every problem it is asked about; the segment gate.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/op_spec.h"
#include "schedules/gpu_schedules.h"
#include "schedules/schedule.h"
#include "schedules/spmm_segments.h"
#include "schedules/spmm_selector.h"

namespace gsparse {
namespace {

GraphStats stats(int64_t rows, int64_t cols, int64_t nnz, int64_t longest, double cov, double col_cov = 0.5,
                 int64_t empty = 0) {
    GraphStats s;
    s.num_rows = rows, s.num_cols = cols, s.nnz = nnz, s.max_row_length = longest;
    s.avg_row_length = static_cast<double>(nnz) / static_cast<double>(rows);
    s.row_length_cov = cov, s.col_length_cov = col_cov, s.empty_rows = empty;
    return s;
}

Problem problem(int64_t F, const GraphStats &s, SpmmSpec spec = {BinaryOp::CopyLhs, ReduceOp::Sum},
                DType dtype = DType::F32) {
    return spmm_problem(spec, plan_features(spec.op, {F}, {F}), s, dtype);
}

// A road-like lattice (4 M rows, average row 2.8) and the full reddit twin's shape.
const GraphStats kLattice = stats(4000000, 4000000, 11200000, 6, 0.3, 0.3);
const GraphStats kTiny = stats(2708, 2708, 10556, 168, 1.3);  // Cora: far smaller than the zoo's graphs

TEST(SpmmSelector, StatisticsAreTheTrainingScriptsOnes) {
    // train_selector.py's FEATURES on the same statistics.
    const auto x = selector_features(stats(1000, 4000, 8000, 64, 1.5, 2.5, 100));
    EXPECT_DOUBLE_EQ(x[0], 3.0);                    // log2 average row (8)
    EXPECT_DOUBLE_EQ(x[1], 1.5);                    // row COV
    EXPECT_DOUBLE_EQ(x[2], 3.0);                    // log2 (64 / 8)
    EXPECT_NEAR(x[3], std::log2(8000.0), 1e-12);    // log2 nonzeros
    EXPECT_NEAR(x[4], std::log2(1000.0), 1e-12);    // log2 rows
    EXPECT_DOUBLE_EQ(x[5], 2.0);                    // log2 (sources / rows)
    EXPECT_DOUBLE_EQ(x[6], 2.5);                    // column COV
    EXPECT_DOUBLE_EQ(x[7], 0.1);                    // empty rows / rows
    const auto none = selector_features(GraphStats{});  // no rows or edges: finite values, no NaN
    for (double v : none) EXPECT_TRUE(std::isfinite(v));
}

TEST(SpmmSelector, EveryTablePointIsValidAtItsFeatureLength) {
    const auto &def = spmm_schedule("gpu_spmm");
    const auto anchors = selector_anchor_features();
    ASSERT_GE(anchors.size(), 8u);
    for (int64_t F : anchors) {
        const auto points = selector_points(F);
        EXPECT_FALSE(points.empty()) << F;
        for (const ScheduleParams &p : points) {
            const Problem prob = problem(F, kLattice);
            EXPECT_EQ(def.invalid_reason(p, prob), std::nullopt) << "F=" << F << " " << p.str();
            // Every knob of the space, with values the space lists: the tuner can start from it.
            const ScheduleSpace space = def.space(prob);
            for (const auto &knob : space.knobs) {
                ASSERT_TRUE(p.values.count(knob.name)) << p.str() << " lacks " << knob.name;
                EXPECT_NE(std::find(knob.choices.begin(), knob.choices.end(), p.get(knob.name)), knob.choices.end())
                    << p.str() << ": " << knob.name;
            }
        }
    }
}

TEST(SpmmSelector, RowsOfOneElementOnShortEvenRowsRunAThreadPerRow) {
    // gpu_spmm's default for F = 1 without an edge operand on short even rows (the lattice: average
    // 2.8, COV 0.3): a thread per row, 128 rows a block, rows whole; valid there.
    const auto &def = spmm_schedule("gpu_spmm");
    const Problem lattice1 = problem(1, kLattice);
    const ScheduleParams d = def.default_params(lattice1);
    EXPECT_EQ(d.get("kMTile"), 128) << d.str();
    EXPECT_EQ(d.get("kNnzLanes"), 1) << d.str();
    EXPECT_EQ(d.get("kRowSplit"), 0) << d.str();
    EXPECT_EQ(def.invalid_reason(d, lattice1), std::nullopt) << d.str();
    EXPECT_EQ(def.default_params(problem(1, kLattice, {BinaryOp::CopyLhs, ReduceOp::Mean})), d);
    // An edge operand, max / min, a wider row, float64, longer rows (Erdos-Renyi-like: 16 a row) or
    // spread rows keep the other defaults.
    const GraphStats longer = stats(1000000, 1000000, 16000000, 40, 0.25);
    const GraphStats spread = stats(1000000, 1000000, 3000000, 10000, 6.3);
    for (const Problem &p : {problem(1, kLattice, {BinaryOp::Mul, ReduceOp::Sum}),
                             problem(1, kLattice, {BinaryOp::CopyLhs, ReduceOp::Max}), problem(2, kLattice),
                             problem(1, kLattice, {BinaryOp::CopyLhs, ReduceOp::Sum}, DType::F64), problem(1, longer),
                             problem(1, spread)}) {
        const ScheduleParams other = def.default_params(p);
        EXPECT_FALSE(other.get("kMTile") == 128 && other.get("kNnzLanes") == 1) << other.str();
    }
}

TEST(SpmmSelector, ShortRowsAtOddFeatureLengthsTakeTheTileWithFewestIdleSlots) {
    // Whole rows on the lattice (average 2.8) at a feature length its tile does not divide: one
    // guarded tile with the fewest idle thread slots, 64 threads a block, neighbour ids read
    // directly; copy_lhs and u_mul_e alike.
    const auto &def = spmm_schedule("gpu_spmm");
    for (const SpmmSpec spec : {SpmmSpec{BinaryOp::CopyLhs, ReduceOp::Sum}, SpmmSpec{BinaryOp::Mul, ReduceOp::Sum}}) {
        const Problem p47 = spmm_problem(spec, plan_features(spec.op, {47}, {1}), kLattice);
        const ScheduleParams d47 = def.default_params(p47);
        EXPECT_EQ(d47.get("kVecWidth"), 1) << d47.str();
        EXPECT_EQ(d47.get("kNTile"), 16) << d47.str();  // 48 slots for 47 groups (32 x 2 has 64)
        EXPECT_EQ(d47.get("kNRegTile"), 4) << d47.str();
        EXPECT_EQ(d47.get("kMTile"), 4) << d47.str();
        EXPECT_EQ(d47.get("smemColIdx"), 0) << d47.str();
        EXPECT_EQ(def.invalid_reason(d47, p47), std::nullopt) << d47.str();
        const Problem p100 = spmm_problem(spec, plan_features(spec.op, {100}, {1}), kLattice);
        const ScheduleParams d100 = def.default_params(p100);
        EXPECT_EQ(d100.get("kVecWidth"), 4) << d100.str();
        EXPECT_EQ(d100.get("kNTile"), 32) << d100.str();  // 25 groups: 32 x 1 before 16 x 2
        EXPECT_EQ(d100.get("kNRegTile"), 1) << d100.str();
        EXPECT_EQ(d100.get("kMTile"), 2) << d100.str();
        EXPECT_EQ(def.invalid_reason(d100, p100), std::nullopt) << d100.str();
    }
    // Feature lengths the tiles divide keep their points; beyond the measured range (F = 200) the
    // tile only grows its outputs until it covers the row.
    const ScheduleParams d64 = def.default_params(problem(64, kLattice));
    EXPECT_EQ(64 % (d64.get("kNTile") * d64.get("kNRegTile") * d64.get("kVecWidth")), 0) << d64.str();
    const ScheduleParams d200 = def.default_params(problem(200, kLattice));
    EXPECT_GE(d200.get("kNTile") * d200.get("kNRegTile") * d200.get("kVecWidth"), 200) << d200.str();
    EXPECT_GE(d200.get("kNTile"), 32) << d200.str();
}

TEST(SpmmSelector, SkewedRowsWithAnEdgeOperandTakeVectorRowTails) {
    // The reddit twin's shape (outside the trees' support: the expert rules decide). copy_lhs takes
    // the relabeled points; u_mul_e, which cannot, takes rows in row order with 4-wide loads and row
    // tails from 64 features, 2-wide loads in segments of 256 at 16.
    const auto &def = spmm_schedule("gpu_spmm");
    const GraphStats reddit = stats(232965, 232965, 114615892, 48535, 1.6);
    const SpmmSpec mul{BinaryOp::Mul, ReduceOp::Sum};
    auto mul_default = [&](int64_t F) {
        const Problem p = spmm_problem(mul, plan_features(BinaryOp::Mul, {F}, {1}), reddit);
        const ScheduleParams d = def.default_params(p);
        EXPECT_EQ(def.invalid_reason(d, p), std::nullopt) << d.str();
        EXPECT_EQ(d.get("rowBalance"), 0) << d.str();
        EXPECT_EQ(d.get("smemColIdx"), 0) << d.str();
        return d;
    };
    for (int64_t F : {64, 100, 128}) {
        const ScheduleParams d = mul_default(F);
        EXPECT_EQ(d.get("kVecWidth"), 4) << d.str();
        EXPECT_EQ(d.get("rowTails"), 1) << d.str();
        EXPECT_EQ(d.get("kRowSplit"), 128) << d.str();
        EXPECT_EQ(d.get("kNTile") * d.get("kMTile"), 128) << d.str();
        EXPECT_EQ(d.get("kNRegTile"), 1) << d.str();
    }
    EXPECT_EQ(mul_default(64).get("kNTile"), 16);
    EXPECT_EQ(mul_default(128).get("kNTile"), 32);
    const ScheduleParams d16 = mul_default(16);
    EXPECT_EQ(d16.get("kVecWidth"), 2) << d16.str();
    EXPECT_EQ(d16.get("kNTile"), 8) << d16.str();
    EXPECT_EQ(d16.get("kNnzLanes"), 1) << d16.str();
    EXPECT_EQ(d16.get("kRowSplit"), 256) << d16.str();
    // copy_lhs keeps the relabeled default; an odd F and copy_rhs (no source rows) keep theirs.
    EXPECT_EQ(def.default_params(problem(128, reddit)).get("rowBalance"), 3);
    const ScheduleParams odd = def.default_params(spmm_problem(mul, plan_features(BinaryOp::Mul, {47}, {1}), reddit));
    EXPECT_EQ(odd.get("kVecWidth"), 1) << odd.str();
    const SpmmSpec copy_e{BinaryOp::CopyRhs, ReduceOp::Sum};
    const ScheduleParams e128 = def.default_params(spmm_problem(copy_e, plan_features(BinaryOp::CopyRhs, {128}, {128}), reddit));
    EXPECT_NE(e128.get_or("rowTails", 0) == 1 && e128.get("kVecWidth") == 4 && e128.get("kNTile") == 32, true) << e128.str();
}

TEST(SpmmSelector, DecidesForZooShapesAndLeavesTheRestToTheExpertRules) {
    const auto &def = spmm_schedule("gpu_spmm");
    // The lattice at F = 8: the trees answer with one of their points (the expert rules' lane point
    // took 8x the best candidate on the zoo's lattices).
    const Problem lattice8 = problem(8, kLattice);
    const ScheduleParams chosen = def.default_params(lattice8);
    const auto points = selector_points(8);
    EXPECT_NE(std::find(points.begin(), points.end(), chosen), points.end()) << chosen.str();
    EXPECT_EQ(select_spmm_default(lattice8, def.invalid_reason), chosen);
    // Outside the support (far fewer nonzeros than any training graph), without statistics (ahead of
    // time, graph views) and with no edges: the expert rules.
    for (const Problem &p : {problem(8, kTiny), problem(8, GraphStats{}), problem(8, stats(1000, 1000, 0, 0, 0))}) {
        EXPECT_EQ(select_spmm_default(p, def.invalid_reason), std::nullopt);
        EXPECT_EQ(def.default_params(p), gpu_spmm_expert_default(p));
    }
    // The full-scale twins (79-124 M nonzeros, over twice the largest training graph): the expert
    // rules, written for them.
    for (const GraphStats &twin : {stats(232965, 232965, 114615892, 48535, 1.6), stats(2449029, 2449029, 123718280, 12047, 1.9),
                                   stats(132534, 132534, 79122504, 7750, 1.0)})
        for (int64_t F : {1, 8, 32, 128}) EXPECT_EQ(select_spmm_default(problem(F, twin), def.invalid_reason), std::nullopt) << F;
    // Far more rows per source than the training graphs had (sources / rows beyond 2x their range).
    EXPECT_EQ(select_spmm_default(problem(8, stats(4000000, 1000, 11200000, 6, 0.3)), def.invalid_reason), std::nullopt);
}

TEST(SpmmSelector, DefaultsAreValidForEveryProblem) {
    // Random statistics over and beyond the zoo's range, every feature length 1..600 in steps, every
    // reduction, edge operands, double features and bipartite graphs: the default is always valid
    // (the selector falls through its ranked points, then to the expert rules).
    const auto &def = spmm_schedule("gpu_spmm");
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    const SpmmSpec specs[] = {{BinaryOp::CopyLhs, ReduceOp::Sum}, {BinaryOp::Mul, ReduceOp::Sum},
                              {BinaryOp::CopyLhs, ReduceOp::Max}, {BinaryOp::Mul, ReduceOp::Mean},
                              {BinaryOp::CopyRhs, ReduceOp::Min}};
    int selected = 0, total = 0;
    for (int i = 0; i < 300; i++) {
        const int64_t rows = static_cast<int64_t>(std::exp2(10 + 14 * u(rng)));
        const int64_t cols = u(rng) < 0.3 ? static_cast<int64_t>(std::exp2(10 + 14 * u(rng))) : rows;
        const double avg = std::exp2(10 * u(rng));
        const int64_t nnz = std::max<int64_t>(1, static_cast<int64_t>(avg * static_cast<double>(rows)));
        const int64_t longest = std::max<int64_t>(1, static_cast<int64_t>(avg * std::exp2(12 * u(rng))));
        const GraphStats s = stats(rows, cols, nnz, longest, 4 * u(rng), 4 * u(rng),
                                   static_cast<int64_t>(0.3 * u(rng) * static_cast<double>(rows)));
        for (int64_t F : {1, 2, 3, 4, 7, 8, 16, 24, 32, 47, 64, 100, 128, 200, 256, 512, 600}) {
            const SpmmSpec &spec = specs[static_cast<size_t>(i) % std::size(specs)];
            const DType dtype = i % 7 == 0 ? DType::F64 : DType::F32;
            const Problem p = problem(F, s, spec, dtype);
            const ScheduleParams d = def.default_params(p);
            EXPECT_EQ(def.invalid_reason(d, p), std::nullopt) << d.str() << " F=" << F << " " << spec.name();
            total++;
            if (select_spmm_default(p, def.invalid_reason)) selected++;
        }
    }
    // The draws cover both sides of the support.
    EXPECT_GT(selected, total / 10);
    EXPECT_LT(selected, total);
}

TEST(SpmmSelector, FeatureLengthsBetweenTheSweptOnesTakeANearbyTree) {
    const auto &def = spmm_schedule("gpu_spmm");
    // F = 3: the F = 4 tree's points need 4 feature threads or fewer lanes; whatever is chosen is
    // valid at 3 and comes from the F = 4 or F = 2 tree.
    const Problem p3 = problem(3, kLattice);
    const auto chosen = select_spmm_default(p3, def.invalid_reason);
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(def.invalid_reason(*chosen, p3), std::nullopt);
    auto in = [](const ScheduleParams &p, int64_t anchor) {
        const auto pts = selector_points(anchor);
        return std::find(pts.begin(), pts.end(), p) != pts.end();
    };
    EXPECT_TRUE(in(*chosen, 4) || in(*chosen, 2)) << chosen->str();
    // F = 512 takes the F = 256 tree.
    const auto wide = select_spmm_default(problem(512, kLattice), def.invalid_reason);
    ASSERT_TRUE(wide.has_value());
    EXPECT_TRUE(in(*wide, 256)) << wide->str();
}

TEST(SegmentGate, HeavyTailedGraphsTakeTheSegmentForm) {
    // A power-law graph shaped like the zoo's Chung-Lu members: 1 M rows, 4 M nonzeros, a fifth of
    // the rows empty, the longest row 3,000x the average.
    const GraphStats power_law = stats(1000000, 1000000, 4000000, 12000, 6.0, 5.0, 200000);
    for (int64_t F : {1, 2, 3, 4, 8, 16, 32}) {
        const auto chosen = select_spmm_segments(problem(F, power_law));
        ASSERT_TRUE(chosen.has_value()) << "F=" << F;
        EXPECT_TRUE(is_segment_point(*chosen)) << chosen->str();
        const int64_t run = segment_point_of(*chosen).run;
        EXPECT_NE(std::find(std::begin(kSegmentRunChoices), std::end(kSegmentRunChoices), run), std::end(kSegmentRunChoices))
            << chosen->str();
        // mean and edge weights too: sum-like reductions.
        EXPECT_TRUE(select_spmm_segments(problem(F, power_law, {BinaryOp::Mul, ReduceOp::Mean})).has_value());
        // max / min keep the row schedules (their arg ids depend on the order of a row's neighbours).
        EXPECT_EQ(select_spmm_segments(problem(F, power_law, {BinaryOp::CopyLhs, ReduceOp::Max})), std::nullopt);
    }
    // Wide features: segment points whose threads own a register tile of several feature elements
    // (the one-element form lost to the row schedules there).
    for (int64_t F : {64, 128, 256, 512}) {
        const auto chosen = select_spmm_segments(problem(F, power_law));
        ASSERT_TRUE(chosen.has_value()) << "F=" << F;
        EXPECT_GT(segment_point_of(*chosen).tile, 1) << chosen->str();
    }
    // Feature lengths the trees were not grown on (odd, or not a power of two) get a tile that covers
    // their rows exactly: the leaf's tile, or the largest smaller one that divides the length.
    for (int64_t F : {1, 2, 3, 5, 6, 7, 11, 13, 47, 48, 96, 100, 200, 300})
        if (const auto chosen = select_spmm_segments(problem(F, power_law))) {
            const int64_t tile = segment_point_of(*chosen).tile;
            EXPECT_TRUE(tile == 1 || segment_tile_covers_rows(tile, F)) << "F=" << F << ": " << chosen->str();
        }
    // Where the tree of the nearest swept length hands out a tile, a length near it keeps a tile
    // (F = 96 and 100 next to the trees of 64 / 128, which tile on this graph).
    for (int64_t F : {96, 100, 200}) {
        const auto chosen = select_spmm_segments(problem(F, power_law));
        ASSERT_TRUE(chosen.has_value()) << "F=" << F;
        EXPECT_GT(segment_point_of(*chosen).tile, 1) << "F=" << F << ": " << chosen->str();
    }
}

TEST(SegmentGate, RowsOfOneElementOnSpreadShortRowsTakeWarpLanes) {
    // The warp-lane rule (before the trees): F = 1, float32, sum or mean, at least 1 M edges,
    // row-length COV >= 1 and an average row below 256: spmm_segments{run=4, lanes=32}; anything
    // else goes on to the trees.
    const GraphStats chung_lu = stats(250000, 250000, 4000000, 21560, 4.97);
    const ScheduleParams lanes = segment_params(SegmentPoint{kSegmentWarpLanesRun, 1, 32});
    EXPECT_EQ(select_spmm_segments(problem(1, chung_lu)), lanes);
    EXPECT_EQ(select_spmm_segments(problem(1, chung_lu, {BinaryOp::Mul, ReduceOp::Mean})), lanes);
    EXPECT_EQ(segment_point_of(lanes).lanes, 32);
    EXPECT_EQ(select_spmm_segments(problem(1, chung_lu, {BinaryOp::CopyLhs, ReduceOp::Max})), std::nullopt);
    const auto wider = select_spmm_segments(problem(2, chung_lu));
    EXPECT_TRUE(!wider || segment_point_of(*wider).lanes == 0) << wider->str();
    const auto f64 = select_spmm_segments(problem(1, chung_lu, {BinaryOp::CopyLhs, ReduceOp::Sum}, DType::F64));
    EXPECT_TRUE(!f64 || segment_point_of(*f64).lanes == 0) << f64->str();
    // Long average rows (the reddit and proteins twins) and rows of even length keep the others.
    for (const GraphStats &s : {stats(46593, 46593, 22923178, 32918, 1.63), stats(500000, 500000, 4000000, 20, 0.5), kLattice}) {
        const auto chosen = select_spmm_segments(problem(1, s));
        EXPECT_TRUE(!chosen || segment_point_of(*chosen).lanes == 0) << chosen->str();
    }
}

TEST(SegmentGate, TilesCoverRowsExactly) {
    for (int64_t tile : kSegmentTileChoices)
        for (int64_t F : {8, 16, 32, 64, 128, 256, 512, 1024}) EXPECT_TRUE(segment_tile_covers_rows(tile, F)) << tile << " " << F;
    // Feature threads are the length over the tile, rounded up (at most 128): every tile that divides
    // a length up to 128 x the tile covers it; one that does not divide it leaves a thread part idle.
    struct Case {
        int64_t tile, feat;
        bool covers;
        int threads;
    };
    for (const Case &c : std::initializer_list<Case>{{1, 47, true, 47},    {2, 47, false, 24},  {1, 100, true, 100},
                                                     {4, 100, true, 25},   {8, 100, false, 13}, {1, 130, false, 128},
                                                     {2, 130, true, 65},   {8, 200, true, 25},  {1, 300, false, 128},
                                                     {4, 300, true, 75},   {8, 4, false, 1},    {1, 1, true, 1}}) {
        EXPECT_EQ(segment_tile_covers_rows(c.tile, c.feat), c.covers) << c.tile << " " << c.feat;
        EXPECT_EQ(segment_feature_threads(c.feat, c.tile), c.threads) << c.tile << " " << c.feat;
    }
    // The tile a point keeps at a length it does not cover.
    EXPECT_EQ(segment_tile_for_rows(8, 100), 4);
    EXPECT_EQ(segment_tile_for_rows(8, 47), 1);
    EXPECT_EQ(segment_tile_for_rows(4, 130), 2);
    EXPECT_EQ(segment_tile_for_rows(2, 64), 2);
    EXPECT_EQ(segment_tile_for_rows(8, 4), 4);
}

TEST(SegmentGate, RegularGraphsAndProblemsOutsideTheSupportKeepTheRowSchedules) {
    for (int64_t F : {1, 4, 16, 64}) {
        EXPECT_EQ(select_spmm_segments(problem(F, kLattice)), std::nullopt) << F;
        EXPECT_EQ(select_spmm_segments(problem(F, kTiny)), std::nullopt) << F;          // below the support
        EXPECT_EQ(select_spmm_segments(problem(F, GraphStats{})), std::nullopt) << F;   // no statistics
    }
    // The full reddit twin (114 M nonzeros, beyond the training graphs' range).
    EXPECT_EQ(select_spmm_segments(problem(4, stats(232965, 232965, 114615892, 48535, 1.6, 1.2, 30000))), std::nullopt);
}

TEST(SegmentGate, WideRowsTheRowDefaultLeavesWholeTakeTheRowTailForm) {
    // cl-3m-sparse of the zoo's training part (the longest row 3,300x the average): from F = 256 the
    // row default does not split rows and the gate takes the segment form; the graph default runs
    // the row default's tile in the row-tail form instead (src/api/operators.cpp).
    const GraphStats sparse_power_law = stats(1000000, 1000000, 3000000, 10009, 6.26, 6.10, 187759);
    const auto &def = spmm_schedule("gpu_spmm");
    int converted = 0;
    for (int64_t F : {64, 128, 256, 512}) {
        const Problem p = problem(F, sparse_power_law);
        const ScheduleParams rows = def.default_params(p);
        if (rows.get("kRowSplit") != 0 || !select_spmm_segments(p)) continue;
        const auto tails = gpu_spmm_row_tails_form(rows, p);
        ASSERT_TRUE(tails.has_value()) << F << " " << rows.str();
        EXPECT_EQ(tails->get("rowTails"), 1);
        EXPECT_EQ(tails->get("kRowSplit"), kRowTailsGateSplit);
        EXPECT_FALSE(def.invalid_reason(*tails, p).has_value()) << tails->str();
        for (const auto &[knob, value] : rows.values) {
            if (knob != "kRowSplit" && knob != "rowTails") {
                EXPECT_EQ(tails->get(knob), value) << knob;
            }
        }
        ++converted;
    }
    EXPECT_GT(converted, 0);
    // Not for max (atomic tails add in any order), problems without statistics, or points the form
    // cannot take (rows relabeled in locality order).
    const Problem wide = problem(256, sparse_power_law);
    const ScheduleParams rows = def.default_params(wide);
    EXPECT_EQ(gpu_spmm_row_tails_form(rows, problem(256, sparse_power_law, {BinaryOp::CopyLhs, ReduceOp::Max})),
              std::nullopt);
    EXPECT_EQ(gpu_spmm_row_tails_form(rows, problem(256, GraphStats{})), std::nullopt);
    ScheduleParams relabeled = rows;
    relabeled.values["rowBalance"] = 3;
    EXPECT_EQ(gpu_spmm_row_tails_form(relabeled, wide), std::nullopt);
}

TEST(SegmentGate, EveryTablePointIsASegmentPointOrTheDefault) {
    // Every leaf of every tree answers a valid segment run or the row schedule: walk both sides of
    // the trees with extreme statistics inside the support.
    int segments = 0, rows = 0;
    for (int64_t F : {1, 2, 4, 8, 16, 32, 64, 256})
        for (double empty : {0.0, 0.5})
            for (int64_t longest : {int64_t{8}, int64_t{200000}})
                for (double col_cov : {0.2, 10.0}) {
                    const auto chosen = select_spmm_segments(
                        problem(F, stats(1000000, 1000000, 4000000, longest, col_cov, col_cov,
                                         static_cast<int64_t>(empty * 1000000))));
                    if (!chosen) {
                        rows++;
                        continue;
                    }
                    segments++;
                    ASSERT_TRUE(is_segment_point(*chosen)) << chosen->str();
                    EXPECT_NO_THROW(segment_point_of(*chosen)) << chosen->str();
                }
    EXPECT_GT(segments, 0);
    EXPECT_GT(rows, 0);
}

}  // namespace
}  // namespace gsparse
