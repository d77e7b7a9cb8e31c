// CUDA schedules of user programs shared by the tests of their PTX (tests/dsl) and of their results
// on a GPU (tests/gpu): row tails (dsl::ScheduleContext::split_row_tails), source tiles
// (split_rows(length, src_tile)) and relabeled sources (relabel_sources) under the default
// schedule, each stage a thread per feature and row.
#pragma once

#include <algorithm>

#include "dsl/user_spmm.h"

namespace gsparse::test {

/// Maps a stage over (feature f, row) to blocks of `rows` rows x `ft` features, a thread each
/// element (guarded at both ends): a Func's pure definition or a Stage (row an RVar for updates).
/// Returns the threads' feature Var (to compute a stage's reduction at).
template <typename StageT>
Halide::Var thread_per_feature_and_row(StageT &&stage, const Halide::Var &f, const Halide::VarOrRVar &row, int ft, int rows) {
    using Halide::TailStrategy;
    const bool rvar = row.is_rvar;
    Halide::Var fo("fo"), fi("fi"), vo("vo"), vi("vi");
    Halide::RVar ro("ro"), ri("ri");
    const Halide::VarOrRVar outer = rvar ? Halide::VarOrRVar(ro) : Halide::VarOrRVar(vo);
    const Halide::VarOrRVar inner = rvar ? Halide::VarOrRVar(ri) : Halide::VarOrRVar(vi);
    stage.split(f, fo, fi, ft, TailStrategy::GuardWithIf)
        .split(row, outer, inner, rows, TailStrategy::GuardWithIf)
        .reorder(fi, inner, outer, fo)
        .gpu_blocks(outer, fo)
        .gpu_threads(fi, inner);
    return fi;
}

/// The threads of those blocks: min(F, 32) over features and 128 / that over rows.
inline int feature_threads_of(int features) { return std::min(features, 32); }
inline int row_threads_of(int features) { return std::max(1, 128 / feature_threads_of(features)); }

/// On CUDA: rows a thread per feature and row, tails a thread per feature and tail, the merge a
/// thread per feature and tail (atomic).
inline gsparse::dsl::ScheduleDef cuda_tails_schedule() {
    gsparse::dsl::ScheduleDef d;
    d.name = "cuda_tails";
    d.knobs = {{"length", {32, 256}, 32}};
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        const gsparse::dsl::RowTailSplit r = c.split_row_tails(static_cast<int>(c.knob("length")));
        const int ft = feature_threads_of(c.features), rows = row_threads_of(c.features);
        Halide::Func tails = r.tails, tail_acc = r.tail_acc;
        tail_acc.compute_at(tails, thread_per_feature_and_row(tails.compute_root(), c.f, r.t, ft, rows));
        c.acc.compute_at(c.out, thread_per_feature_and_row(c.out, c.f, c.v, ft, rows));
        thread_per_feature_and_row(c.out.update(), c.f, r.r, ft, rows);
    };
    return d;
}

/// split_rows(32, tile): segments within tiles of `tile` source ids a thread per feature and
/// segment (a kernel), then the rows merging theirs a thread per feature and row.
inline gsparse::dsl::ScheduleDef cuda_source_tiles_schedule() {
    gsparse::dsl::ScheduleDef d;
    d.name = "gpu_source_tiles";
    d.knobs = {{"tile", {4, 64}, 4}};
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        const gsparse::dsl::RowSegmentSplit r = c.split_rows(32, c.knob("tile"));
        const int ft = feature_threads_of(c.features), rows = row_threads_of(c.features);
        Halide::Func segments = r.segments, segment_acc = r.segment_acc;
        segment_acc.compute_at(segments, thread_per_feature_and_row(segments.compute_root(), c.f, r.s, ft, rows));
        c.acc.compute_at(c.out, thread_per_feature_and_row(c.out, c.f, c.v, ft, rows));
    };
    return d;
}

/// relabel_sources, each source copy a kernel (a thread per feature and row, 8 rows a block), then
/// the default schedule's directives on the relabeled program.
inline gsparse::dsl::ScheduleDef cuda_relabeled_schedule() {
    gsparse::dsl::ScheduleDef d = gsparse::dsl::default_schedule();
    d.name = "relabeled_default";
    d.apply = [apply = d.apply](gsparse::dsl::ScheduleContext &c) {
        const gsparse::dsl::RelabeledSources r = c.relabel_sources();
        for (Halide::Func copy : r.sources)
            thread_per_feature_and_row(copy.compute_root(), c.f, r.i, feature_threads_of(c.features), 8);
        apply(c);
    };
    return d;
}

/// Rows of `vector`-wide feature groups (dsl::ScheduleContext::aligned_rows with aligned = 1): a
/// thread per group and row (CUDA: `rows` rows a block; CPU: rows in parallel), each thread's
/// features loaded, reduced and stored as one vector of `vector` elements.
inline gsparse::dsl::ScheduleDef vector_rows_schedule() {
    gsparse::dsl::ScheduleDef d;
    d.name = "vector_rows";
    d.knobs = {{"vector", {1, 2, 4, 8}, 4}, {"aligned", {0, 1}, 1}, {"rows", {8, 32}, 32}};
    d.why_invalid = [](const gsparse::dsl::SchedulePoint &p, int features, Device) -> std::string {
        if (features % p.at("vector") != 0) return "vector must divide the features";
        return "";
    };
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        const int V = static_cast<int>(c.knob("vector")), rows = static_cast<int>(c.knob("rows"));
        if (c.knob("aligned")) c.aligned_rows(V);
        Halide::Var fo("fo"), fv("fv"), vo("vo"), vi("vi");
        c.out.split(c.f, fo, fv, V);
        if (V > 1) c.out.vectorize(fv);
        if (c.device == Device::CUDA) {
            c.out.split(c.v, vo, vi, rows, Halide::TailStrategy::GuardWithIf)
                .reorder(fv, fo, vi, vo)
                .gpu_blocks(vo)
                .gpu_threads(fo, vi);
        } else {
            c.out.parallel(c.v);
        }
        c.acc.compute_at(c.out, fo);
        if (V > 1) {
            c.acc.vectorize(c.f);
            c.acc.update().vectorize(c.f);
        }
    };
    return d;
}

/// split_rows(length, 0, lanes, steps) on CUDA: a block per segment and `features` (at most 32)
/// feature threads, each `lanes` lanes of the warp (gpu_lanes) reducing every lanes-th position of
/// the segment and merged through warp shuffles on lane 0 (int32_indexing); then the rows merging
/// their segments a thread per feature and row. The built-in g-SpMM's default form on skewed graphs
/// at small F (segments of 1024 with lanes of nonzeros).
inline gsparse::dsl::ScheduleDef cuda_segment_lanes_schedule() {
    gsparse::dsl::ScheduleDef d;
    d.name = "cuda_segment_lanes";
    d.knobs = {{"length", {32, 1024}, 32}, {"lanes", {2, 8, 32}, 8}, {"steps", {1, 2}, 1}};
    d.why_invalid = [](const gsparse::dsl::SchedulePoint &p, int features, Device) -> std::string {
        if (features * p.at("lanes") > 1024) return "feature threads x lanes exceed a block";
        return "";
    };
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        c.int32_indexing();
        const gsparse::dsl::RowSegmentSplit r = c.split_rows(static_cast<int>(c.knob("length")), 0,
                                                             static_cast<int>(c.knob("lanes")),
                                                             static_cast<int>(c.knob("steps")));
        const gsparse::dsl::NnzLanes &n = r.lanes;
        Halide::Func segments = r.segments, segment_acc = r.segment_acc, lanes = n.lanes;
        const int lt = std::min(c.features, 32);
        Halide::Var fo("fo"), fi("fi"), fl("fl");
        segments.compute_root()
            .split(c.f, fo, fi, lt, Halide::TailStrategy::GuardWithIf)
            .split(fi, fi, fl, 1)
            .reorder(fl, fi, r.s, fo)
            .gpu_blocks(r.s, fo)
            .gpu_threads(fl, fi);
        segment_acc.compute_at(segments, fl).update().unroll(n.merge);
        lanes.compute_at(segments, fi).gpu_lanes(n.lane);
        lanes.update().reorder(n.step, n.lane, n.ko).unroll(n.step).gpu_lanes(n.lane);
        c.acc.compute_at(c.out, thread_per_feature_and_row(c.out, c.f, c.v, feature_threads_of(c.features),
                                                           row_threads_of(c.features)));
    };
    return d;
}

}  // namespace gsparse::test
