// Cost-model features: one fixed-length, finite, non-negative vector per schedule point that tells
// schedule points apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "autotune/features.h"
#include "autotune/search_space.h"
#include "core/error.h"
#include "ops/broadcast.h"
#include "schedules/schedule.h"
#include "support/random_graph.h"

namespace gsparse::autotune {
namespace {

Problem gpu_problem(int64_t feat) {
    GraphStats g;
    g.num_rows = g.num_cols = 232965;
    g.nnz = 114615892;
    g.avg_row_length = double(g.nnz) / g.num_rows;
    g.max_row_length = 21657;
    g.empty_rows = 1200;
    g.row_length_cov = 1.6;
    return {plan_features(BinaryOp::CopyLhs, {feat}, {feat}), g};
}

std::vector<ScheduleParams> valid_points(const SpmmScheduleDef &def, const Problem &p) {
    std::vector<ScheduleParams> out;
    ScheduleSpace space = def.space(p);
    ScheduleParams point;  // one point walks the space (no allocation a point)
    for (size_t i = 0; i < space.size(); i++) {
        space.at(i, point);
        if (!def.invalid_reason(point, p)) out.push_back(point);
    }
    return out;
}

void expect_well_formed(const std::vector<float> &f) {
    ASSERT_EQ(f.size(), feature_names().size());
    for (size_t i = 0; i < f.size(); i++) {
        EXPECT_TRUE(std::isfinite(f[i])) << feature_names()[i];
        EXPECT_GE(f[i], 0.0f) << feature_names()[i];
    }
}

float at(const std::vector<float> &f, const std::string &name) {
    for (size_t i = 0; i < feature_names().size(); i++)
        if (feature_names()[i] == name) return f[i];
    ADD_FAILURE() << "no feature " << name;
    return 0;
}

TEST(Features, NamesAreUniqueAndNonEmpty) {
    const auto &names = feature_names();
    EXPECT_GE(names.size(), 30u);
    std::set<std::string> unique(names.begin(), names.end());
    EXPECT_EQ(unique.size(), names.size());
    for (const auto &n : names) EXPECT_FALSE(n.empty());
}

TEST(Features, SelectFeaturesByNameAndPrefix) {
    const auto &names = feature_names();
    EXPECT_EQ(select_features({}).size(), names.size());
    const std::vector<size_t> picked = select_features({"shape_reduce_len", "sddmm_t_*", "op_spmm"});
    ASSERT_EQ(picked.size(), 7u);  // in feature order, whatever the order of the patterns
    EXPECT_TRUE(std::is_sorted(picked.begin(), picked.end()));
    for (size_t i : picked)
        EXPECT_TRUE(names[i] == "shape_reduce_len" || names[i] == "op_spmm" || names[i].rfind("sddmm_t_", 0) == 0)
            << names[i];
    EXPECT_EQ(select_features({"shape_rows", "shape_rows"}).size(), 1u);
    EXPECT_THROW(select_features({"shape_row"}), Error);  // a name, not a prefix, without '*'
    EXPECT_THROW(select_features({"nothing_*"}), Error);
}

TEST(Features, GpuSpmmPointsAreFiniteAndDistinct) {
    const SpmmScheduleDef def = spmm_schedule("gpu_spmm");
    for (int64_t feat : {1, 8, 32, 100, 512}) {
        Problem p = gpu_problem(feat);
        auto points = valid_points(def, p);
        ASSERT_FALSE(points.empty());
        // kNnzTile only matters with staged neighbour ids: points that differ in it alone are one kernel.
        std::map<std::vector<float>, ScheduleParams> seen;
        std::set<std::map<std::string, int64_t>> kernels;
        for (const auto &pt : points) {
            auto f = candidate_features(p, true, pt);
            expect_well_formed(f);
            EXPECT_EQ(at(f, "sched_gpu_spmm"), 1.0f);
            EXPECT_EQ(at(f, "sched_cpu_spmm"), 0.0f);
            EXPECT_EQ(at(f, "cpu_vector_width"), 0.0f);
            auto canon = pt.values;
            if (canon["smemColIdx"] == 0) canon["kNnzTile"] = 0;
            kernels.insert(canon);
            auto [it, fresh] = seen.emplace(f, pt);
            if (!fresh) {
                auto other = it->second.values;
                if (other["smemColIdx"] == 0) other["kNnzTile"] = 0;
                EXPECT_EQ(other, canon) << pt.str() << " and " << it->second.str() << " share features";
            }
        }
        EXPECT_EQ(seen.size(), kernels.size()) << "F = " << feat;
    }
}

TEST(Features, NnzLanesEnterThreadAndWorkMetrics) {
    Problem p = gpu_problem(8);
    const std::string base = "gpu_spmm{kMTile=4, kNTile=8, kNRegTile=1, kNnzTile=32, smemColIdx=0, kRowSplit=0, rowBalance=0";
    auto without = candidate_features(p, true, ScheduleParams::parse(base + "}"));
    auto one = candidate_features(p, true, ScheduleParams::parse(base + ", kNnzLanes=1}"));
    auto four = candidate_features(p, true, ScheduleParams::parse(base + ", kNnzLanes=4}"));
    EXPECT_EQ(without, one);  // models trained before the knob see the same vectors
    EXPECT_FLOAT_EQ(at(four, "gpu_threads_per_block"), 4 * 8 * 4);
    EXPECT_FLOAT_EQ(at(four, "gpu_threads_per_row"), 32);
    EXPECT_FLOAT_EQ(at(four, "gpu_work_per_thread"), at(one, "gpu_work_per_thread") / 4);
}

TEST(Features, GpuSpmmMetricsFollowTheKnobs) {
    Problem p = gpu_problem(128);
    ScheduleParams a = ScheduleParams::parse(
        "gpu_spmm{kMTile=4, kNTile=32, kNRegTile=2, kNnzTile=64, smemColIdx=1, kRowSplit=0, rowBalance=0}");
    auto fa = candidate_features(p, true, a);
    EXPECT_FLOAT_EQ(at(fa, "gpu_threads_per_block"), 128);
    EXPECT_FLOAT_EQ(at(fa, "gpu_mem_efficiency"), 1);
    EXPECT_FLOAT_EQ(at(fa, "gpu_colidx_reuse"), 64);
    EXPECT_FLOAT_EQ(at(fa, "gpu_smem_bytes"), 64 * 4 * 4);
    EXPECT_FLOAT_EQ(at(fa, "gpu_block_size_penalty"), 0);
    EXPECT_FLOAT_EQ(at(fa, "gpu_feature_tail_waste"), 0);
    EXPECT_FLOAT_EQ(at(fa, "shape_feat"), 128);

    ScheduleParams b = a;
    b.values["kNTile"] = 8;  // 32 threads: narrower loads, a smaller block
    auto fb = candidate_features(p, true, b);
    EXPECT_FLOAT_EQ(at(fb, "gpu_mem_efficiency"), 0.25f);
    EXPECT_FLOAT_EQ(at(fb, "gpu_block_size_penalty"), 2);
    EXPECT_GT(at(fb, "gpu_blocks"), at(fa, "gpu_blocks"));

    ScheduleParams c = a;
    c.values["kRowSplit"] = 1024;  // the longest row becomes segments
    auto fc = candidate_features(p, true, c);
    EXPECT_LT(at(fc, "gpu_block_imbalance"), at(fa, "gpu_block_imbalance"));
    EXPECT_GT(at(fc, "gpu_split_ratio"), 1);
    EXPECT_FLOAT_EQ(at(fc, "gpu_longest_unit"), 1024);

    ScheduleParams d = a;
    d.values["rowBalance"] = 1;
    auto fd = candidate_features(p, true, d);
    EXPECT_FLOAT_EQ(at(fd, "gpu_intra_block_imbalance"), 1);
    EXPECT_GT(at(fa, "gpu_intra_block_imbalance"), 1);
}

TEST(Features, CpuSchedulesAreFiniteAndDistinct) {
    for (OpKind kind : {OpKind::Spmm, OpKind::Sddmm}) {
        for (int64_t feat : {1, 6, 64}) {
            TuningProblem tp;
            tp.kind = kind;
            tp.graph = test::random_graph(7);
            tp.graph_name = "random";
            tp.spmm = {BinaryOp::Mul, ReduceOp::Sum};
            tp.sddmm = {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
            tp.lhs_feat = {feat};
            tp.rhs_feat = {feat};
            tp.prepare();
            SearchSpace s = build_search_space(tp);
            ASSERT_FALSE(s.valid.empty());
            std::set<std::vector<float>> distinct;
            for (const auto &pt : s.valid) {
                auto f = candidate_features(tp, pt);
                expect_well_formed(f);
                EXPECT_EQ(at(f, kind == OpKind::Spmm ? "sched_cpu_spmm" : "sched_cpu_sddmm"), 1.0f);
                EXPECT_EQ(at(f, "sched_gpu_spmm"), 0.0f);
                EXPECT_EQ(at(f, "op_spmm"), kind == OpKind::Spmm ? 1.0f : 0.0f);
                EXPECT_FLOAT_EQ(at(f, "cpu_vector_width"), float(pt.get("vector_width")));
                distinct.insert(f);
            }
            EXPECT_EQ(distinct.size(), s.valid.size());
        }
    }
}

TuningProblem gpu_sddmm_problem(int64_t feat) {
    TuningProblem tp;
    tp.kind = OpKind::Sddmm;
    tp.device = Device::CUDA;
    tp.graph = test::random_graph(11);
    tp.graph_name = "random";
    tp.sddmm = {BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    tp.lhs_feat = {feat};
    tp.rhs_feat = {feat};
    tp.plan_layout();  // no device needed: features and the space use the layout and the graph's stats
    return tp;
}

TEST(Features, GpuSddmmPointsAreFiniteAndFollowTheKnobs) {
    for (int64_t feat : {1, 8, 32, 128}) {
        TuningProblem tp = gpu_sddmm_problem(feat);
        SearchSpace s = build_search_space(tp);
        ASSERT_FALSE(s.valid.empty()) << "F = " << feat;
        for (const auto &pt : s.valid) {
            auto f = candidate_features(tp, pt);
            expect_well_formed(f);
            EXPECT_EQ(at(f, "sched_gpu_sddmm"), 1.0f);
            EXPECT_EQ(at(f, "sched_gpu_spmm"), 0.0f);
            EXPECT_EQ(at(f, "op_spmm"), 0.0f);
            // A small problem indexes with 32 bits: the register form, where every knob counts.
            const float R = float(pt.get_or("kMRegTile", 1));
            EXPECT_FLOAT_EQ(at(f, "sddmm_edges_per_block"), float(pt.get("kMTile")) * R);
            EXPECT_FLOAT_EQ(at(f, "sddmm_edges_per_thread"), R);
            EXPECT_FLOAT_EQ(at(f, "sddmm_vec_width"), float(pt.get("kVecWidth")));
            const int64_t chunk = pt.get_or("kFeatChunk", 0);
            EXPECT_FLOAT_EQ(at(f, "sddmm_feature_passes"), chunk > 0 ? float((feat + chunk - 1) / chunk) : 1.0f);
            // The estimate is the largest of the roofline's times.
            float slowest = 0;
            for (const char *t : {"sddmm_t_latency_ns", "sddmm_t_issue_ns", "sddmm_t_dram_ns", "sddmm_t_l2_ns",
                                  "sddmm_t_l1_ns"})
                slowest = std::max(slowest, at(f, t));
            EXPECT_GT(slowest, 0.0f);
            EXPECT_FLOAT_EQ(at(f, "sddmm_est_ns_per_edge"), slowest);
        }
    }
}

/// A u_dot_v problem of feature length F on a graph of this shape (only the statistics matter).
Problem dot_problem(int64_t feat, int64_t nodes, int64_t nnz) {
    GraphStats g;
    g.num_rows = g.num_cols = nodes;
    g.nnz = nnz;
    g.avg_row_length = double(nnz) / double(nodes);
    g.max_row_length = 4 * int64_t(g.avg_row_length);
    g.row_length_cov = 1;
    return {plan_features(BinaryOp::Dot, {feat}, {feat}), g};
}

TEST(Features, GpuSddmmRooflineMatchesHandComputedValues) {
    // Values computed by hand from the formulas (H100 constants) for three points.
    struct Case {
        const char *point;
        int64_t feat, nodes, nnz;
        std::map<std::string, double> expect;
    };
    const Case cases[] = {
        // reddit: 16 x 4 edges a block of 64 threads, 32 blocks an SM; 4 lanes read 16 B of a
        // 32 B sector, whose other half L1 keeps for a quarter of the live lines.
        {"gpu_sddmm{kMTile=16, kLaneWidth=4, kVecWidth=1, kMRegTile=4, kFeatChunk=0, groupByDst=0, kSrcTile=0}",
         32, 232965, 114615888,
         {{"sddmm_edges_per_block", 64}, {"sddmm_edges_in_flight_per_sm", 2048}, {"sddmm_warp_instr_per_edge", 4.5},
          {"sddmm_line_requests_per_edge", 9}, {"sddmm_l1_refetch", 1.75}, {"sddmm_dram_bytes_per_edge", 12.5203},
          {"sddmm_l2_bytes_per_edge", 236.26}, {"sddmm_t_latency_ns", 0.00791317}, {"sddmm_est_ns_per_edge", 0.03885}}},
        // ogbn-products: destination order in tiles of 131072 sources (runs of ~2.6 edges).
        {"gpu_sddmm{kMTile=4, kLaneWidth=16, kVecWidth=1, kMRegTile=4, kFeatChunk=0, groupByDst=1, kSrcTile=131072}",
         128, 2449029, 123718280,
         {{"sddmm_warp_instr_per_edge", 21}, {"sddmm_store_bytes_per_edge", 15.2296},
          {"sddmm_dram_bytes_per_edge", 311.391}, {"sddmm_l2_bytes_per_edge", 718.903},
          {"sddmm_t_latency_ns", 0.0361085}, {"sddmm_est_ns_per_edge", 0.1027}}},
        // ogbn-proteins: 4-wide loads, tiles of 4096 sources.
        {"gpu_sddmm{kMTile=16, kLaneWidth=8, kVecWidth=4, kMRegTile=4, kFeatChunk=0, groupByDst=1, kSrcTile=4096}",
         128, 132534, 79122504,
         {{"sddmm_combine_steps", 6}, {"sddmm_warp_instr_per_edge", 10.75}, {"sddmm_line_requests_per_edge", 5},
          {"sddmm_l2_bytes_per_edge", 558.07}, {"sddmm_est_ns_per_edge", 0.0797244}}},
    };
    for (const Case &c : cases) {
        const std::vector<float> f = candidate_features(dot_problem(c.feat, c.nodes, c.nnz), false,
                                                        ScheduleParams::parse(c.point));
        expect_well_formed(f);
        for (const auto &[name, value] : c.expect) EXPECT_NEAR(at(f, name), value, 1e-4 * value) << c.point << " " << name;
    }
}

TEST(Features, GpuSddmmWithLargeBuffersUsesTheSharedMemoryForm) {
    // 3e9 edges need 64-bit indexing: one edge a thread, scalar loads, the lanes' partials read
    // from shared memory (kLaneWidth reads each).
    const ScheduleParams pt = ScheduleParams::parse(
        "gpu_sddmm{kMTile=16, kLaneWidth=8, kVecWidth=4, kMRegTile=4, kFeatChunk=0, groupByDst=0, kSrcTile=0}");
    const std::vector<float> small = candidate_features(dot_problem(32, 1000000, 100000000), false, pt);
    const std::vector<float> large = candidate_features(dot_problem(32, 1000000, 3000000000), false, pt);
    EXPECT_FLOAT_EQ(at(small, "sddmm_edges_per_thread"), 4);
    EXPECT_FLOAT_EQ(at(small, "sddmm_vec_width"), 4);
    EXPECT_FLOAT_EQ(at(small, "sddmm_combine_steps"), 6);
    EXPECT_FLOAT_EQ(at(large, "sddmm_edges_per_thread"), 1);
    EXPECT_FLOAT_EQ(at(large, "sddmm_vec_width"), 1);
    EXPECT_FLOAT_EQ(at(large, "sddmm_edges_per_block"), 16);
    EXPECT_FLOAT_EQ(at(large, "sddmm_combine_steps"), 8);
}

TEST(Features, RefreshRecomputesStoredVectorsFromTheirShape) {
    TuningProblem sddmm = gpu_sddmm_problem(32);
    const ScheduleParams pt = build_search_space(sddmm).valid.at(0);
    const std::vector<float> f = candidate_features(sddmm, pt);
    EXPECT_EQ(refresh_features(f, pt), f);
    // A vector of an older build (without the gpu_sddmm block, or with part of it) gets the full vector.
    const auto &names = feature_names();
    const size_t sddmm_at = size_t(std::find(names.begin(), names.end(), "sched_gpu_sddmm") - names.begin());
    for (size_t len : {sddmm_at, sddmm_at + 5}) {
        std::vector<float> old(f.begin(), f.begin() + std::ptrdiff_t(len));
        EXPECT_EQ(refresh_features(old, pt), f) << len << " entries";
    }
    // Other stored metrics do not matter, the shape and the schedule point do.
    std::vector<float> noisy = f;
    noisy[sddmm_at + 1] = 12345.0f;
    EXPECT_EQ(refresh_features(noisy, pt), f);
    Problem spmm = gpu_problem(64);
    const ScheduleParams sp = valid_points(spmm_schedule("gpu_spmm"), spmm).at(3);
    const std::vector<float> g = candidate_features(spmm, true, sp);
    // The stored shape is fp32 (reddit's nnz rounds by 4), so metrics agree to fp32 precision.
    const std::vector<float> back = refresh_features(g, sp);
    ASSERT_EQ(back.size(), g.size());
    for (size_t i = 0; i < g.size(); i++) EXPECT_NEAR(back[i], g[i], 1e-5 * (1 + std::fabs(g[i]))) << names[i];
    EXPECT_THROW(refresh_features(std::vector<float>(10, 1.0f), sp), Error);
    EXPECT_THROW(refresh_features(g, ScheduleParams::parse("gpu_spmm{kNTile=4}")), ScheduleError);
}

TEST(Features, EmptyGraphGivesFiniteFeatures) {
    Problem p{plan_features(BinaryOp::CopyLhs, {16}, {16}), GraphStats{}};
    for (const char *text : {"gpu_spmm{kMTile=2, kNTile=16, kNRegTile=1, kNnzTile=16, smemColIdx=1, kRowSplit=256, "
                             "rowBalance=0}",
                             "cpu_spmm{rows_per_task=4, vector_width=8}"})
        expect_well_formed(candidate_features(p, true, ScheduleParams::parse(text)));
    expect_well_formed(
        candidate_features(p, false, ScheduleParams::parse("cpu_sddmm{edges_per_task=64, vector_width=4}")));
}

TEST(Features, UnknownScheduleOrMissingKnobThrows) {
    Problem p = gpu_problem(32);
    EXPECT_FALSE(has_features("gpu_sddmm_x"));
    EXPECT_TRUE(has_features("gpu_spmm"));
    EXPECT_THROW(candidate_features(p, true, ScheduleParams::parse("gpu_sddmm_x{kNTile=4}")), ScheduleError);
    EXPECT_THROW(candidate_features(p, true, ScheduleParams::parse("gpu_spmm{kNTile=4}")), ScheduleError);
}

}  // namespace
}  // namespace gsparse::autotune
