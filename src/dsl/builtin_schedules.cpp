#include "dsl/builtin_schedules.h"

#include <algorithm>
#include <string>

namespace gsparse::dsl {

using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

namespace {

int64_t pow2_ceil(int64_t x) {
    int64_t p = 1;
    while (p < x) p *= 2;
    return p;
}

std::string why_invalid(const SchedulePoint &p, int F, Device device) {
    if (device != Device::CUDA) return "builtin_gpu_spmm is a CUDA schedule";
    const int64_t M = p.at("kMTile"), T = p.at("kNTile"), R = p.at("kNRegTile"), KT = p.at("kNnzTile"),
                  smem = p.at("smemColIdx"), split = p.at("kRowSplit"), balance = p.at("rowBalance"),
                  L = p.at("kNnzLanes"), V = p.at("kVecWidth"), U = p.at("kNnzUnroll");
    if (V > 1 && F % V != 0) return "kVecWidth must divide the features (aligned rows)";
    if (V > 1 && L > 1) return "kVecWidth > 1 applies to kNnzLanes = 1";
    if (U > 1 && L == 1) return "kNnzUnroll > 1 unrolls the lanes' loop; it needs kNnzLanes > 1";
    if (split && balance) return "rowBalance orders whole rows; it cannot be combined with kRowSplit";
    if (split && split < KT) return "kRowSplit must be at least kNnzTile";
    if (smem && split)
        return "smemColIdx with kRowSplit: stage_neighbours does not combine with split_rows in user schedules";
    if (L > 1) {
        if (smem) return "kNnzLanes > 1 reads neighbour ids directly; it cannot be combined with smemColIdx";
        if (R != 1) return "kNnzLanes > 1 needs kNRegTile = 1";
        if (M > 64) return "kNnzLanes > 1 puts rows on the third thread dimension (at most 64)";
        if (T > F) return "kNTile exceeds the features";
    } else if (T * R > pow2_ceil(F / V)) {
        return "kNTile * kNRegTile exceed the next power of two of the features' kVecWidth-wide groups";
    }
    const int64_t threads = M * T * L;
    if (threads > 1024) return "more than 1024 threads a block";
    if (threads < 32) return "fewer threads than a warp";
    if (smem) {
        if (KT * M * 8 > 48 * 1024) return "the shared tile of ids exceeds 48 KiB";
        if (KT % std::min(T, KT) != 0) return "kNnzTile must be a multiple of kNTile";
    }
    return "";
}

void apply(ScheduleContext &c) {
    const int M = static_cast<int>(c.knob("kMTile")), T = static_cast<int>(c.knob("kNTile")),
              R = static_cast<int>(c.knob("kNRegTile")), KT = static_cast<int>(c.knob("kNnzTile")),
              split = static_cast<int>(c.knob("kRowSplit")), L = static_cast<int>(c.knob("kNnzLanes")),
              V = static_cast<int>(c.knob("kVecWidth")), U = static_cast<int>(c.knob("kNnzUnroll"));
    const bool smem = c.knob("smemColIdx") != 0;
    const int64_t balance = c.knob("rowBalance");
    if (V > 1) c.aligned_rows(V);
    if (balance == 1) c.balanced_rows();
    if (balance == 2) c.locality_rows();
    Var fo("fo"), fi("fi"), fr("fr"), fw("fw"), ft("ft"), fv("fv"), fl("fl"), vo("vo"), vi("vi");
    // The rows merging their segments (split rows): a thread per feature and row.
    auto merge_segments = [&] {
        const int tile = std::min(T, c.features);
        c.out.split(c.f, fo, ft, tile, TailStrategy::ShiftInwards)
            .split(c.v, vo, vi, M, TailStrategy::GuardWithIf)
            .reorder(ft, vi, vo, fo)
            .gpu_blocks(vo, fo)
            .gpu_threads(ft, vi);
        c.acc.compute_at(c.out, ft);
    };
    if (L > 1) {
        // Threads (lane, feature, row): a unit loop fl is the stage's innermost thread dimension, so
        // the merge of the lanes (warp shuffles) and the store run on lane 0 of each row.
        c.int32_indexing();
        Func rows = c.out, acc = c.acc;
        NnzLanes n;
        if (split) {
            RowSegmentSplit r = c.split_rows(split, 0, L, U);
            rows = r.segments, acc = r.segment_acc, n = r.lanes;
            rows.compute_root();
        } else {
            n = c.split_nnz_lanes(L, U);
            rows = c.out, acc = c.acc;
        }
        rows.split(c.f, fo, ft, T, TailStrategy::ShiftInwards)
            .split(c.v, vo, vi, M, TailStrategy::GuardWithIf)
            .split(ft, ft, fl, 1)
            .reorder(fl, ft, vi, vo, fo)
            .gpu_blocks(vo, fo)
            .gpu_threads(fl, ft, vi);
        acc.compute_at(rows, fl).update().unroll(n.merge);
        n.lanes.compute_at(rows, ft).gpu_lanes(n.lane);
        n.lanes.update().reorder(n.step, n.lane, n.ko).unroll(n.step).gpu_lanes(n.lane);
        if (split) merge_segments();
        return;
    }
    Func rows = c.out, acc = c.acc;
    RVar k = c.k;
    if (split) {
        RowSegmentSplit r = c.split_rows(split);
        rows = r.segments, acc = r.segment_acc, k = r.k;
        rows.compute_root();
    }
    NeighbourTiles tiles;
    if (smem) tiles = c.stage_neighbours(KT, vo, M);
    // f = fo * (T * R * V) + fr * (T * V) + ft * V + fv; one guarded tile where T * R * V exceeds F.
    const bool guarded = static_cast<int64_t>(T) * R * V > c.features;
    auto split_features = [&](auto &&stage, TailStrategy tail) -> decltype(auto) {
        if (!guarded) return stage.split(c.f, fo, fi, T * R * V, tail).split(fi, fr, fw, T * V).split(fw, ft, fv, V);
        Var fg("fg");
        return stage.split(c.f, fg, fv, V).split(fg, fo, fi, T * R, TailStrategy::GuardWithIf).split(fi, fr, ft, T);
    };
    auto vectorized = [&](auto &&stage) -> decltype(auto) { return V > 1 ? stage.vectorize(fv) : stage; };
    vectorized(split_features(rows, TailStrategy::ShiftInwards)
                   .split(c.v, vo, vi, M, TailStrategy::GuardWithIf)
                   .reorder(fv, fr, ft, vi, vo, fo)
                   .unroll(fr))
        .gpu_blocks(vo, fo)
        .gpu_threads(ft, vi);
    // The block's accumulators, each thread's kNRegTile x kVecWidth in registers.
    c.register_tiles();
    acc.compute_at(rows, vo).store_in(Halide::MemoryType::Register).bound_extent(c.v, M);
    vectorized(split_features(acc, TailStrategy::Auto).reorder(fv, fr, ft, c.v, fo).unroll(fr)).gpu_threads(ft, c.v);
    if (smem) {
        vectorized(split_features(acc.update(), TailStrategy::Auto)
                       .reorder(fv, fr, tiles.ki, ft, c.v, tiles.ko, fo)
                       .unroll(fr))
            .gpu_threads(ft, c.v);
        for (Func ids : {tiles.ids, tiles.edges}) {
            if (!ids.defined()) continue;
            Var kvo("kvo"), kvi("kvi");
            ids.split(tiles.kv, kvo, kvi, std::min(T, KT)).gpu_threads(kvi, c.v);
        }
    } else {
        vectorized(split_features(acc.update(), TailStrategy::Auto).reorder(fv, fr, k, ft, c.v, fo).unroll(fr))
            .gpu_threads(ft, c.v);
    }
    if (split) merge_segments();
}

}  // namespace

const ScheduleDef &builtin_gpu_spmm_schedule() {
    static const ScheduleDef def = [] {
        ScheduleDef d;
        d.name = "builtin_gpu_spmm";
        // The built-in space's knobs (schedules/gpu_spmm.cpp); kSrcTile and rowTails take 0 only.
        d.knobs = {{"kMTile", {1, 2, 4, 8, 16, 32, 64, 128, 256}, 4},
                   {"kNTile", {1, 2, 4, 8, 16, 32, 64, 128}, 32},
                   {"kNRegTile", {1, 2, 4, 8}, 1},
                   {"kNnzTile", {16, 32, 64, 128}, 32},
                   {"smemColIdx", {0, 1}, 0},
                   {"kRowSplit", {0, 64, 128, 256, 1024, 4096}, 0},
                   {"rowBalance", {0, 1, 2}, 0},
                   {"kNnzLanes", {1, 2, 4, 8, 16, 32}, 1},
                   {"kVecWidth", {1, 2, 4}, 1},
                   {"kNnzUnroll", {1, 2, 4}, 1},
                   {"kSrcTile", {0}, 0},
                   {"rowTails", {0}, 0}};
        d.why_invalid = why_invalid;
        d.apply = apply;
        return d;
    }();
    return def;
}

}  // namespace gsparse::dsl
