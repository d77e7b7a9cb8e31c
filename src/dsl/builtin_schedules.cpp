#include "dsl/builtin_schedules.h"

#include <algorithm>
#include <string>

#include "schedules/gpu_schedules.h"

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
    if (split && (balance == 1 || balance == 2))
        return "rowBalance 1 and 2 order whole rows; they cannot be combined with kRowSplit";
    if (split && split < KT) return "kRowSplit must be at least kNnzTile";
    if (p.at("rowTails")) {
        if (!split) return "rowTails = 1 cuts rows after kRowSplit nonzeros; it needs kRowSplit > 0";
        if (smem || L > 1 || balance) return "rowTails = 1 takes whole rows in order on one thread: no smemColIdx, "
                                             "kNnzLanes or rowBalance";
        const RowTailLayout l = row_tail_layout(F, V > 1 ? V : 0);
        if (l.T < kRowTailsMinThreads && l.T < F / l.V)
            return "rowTails = 1 at these features gives the tails' kernel under " +
                   std::to_string(kRowTailsMinThreads) + " threads";
    }
    const int64_t tile = p.at("kSrcTile");
    if (tile && balance) return "rowBalance orders whole rows; it cannot be combined with kSrcTile";
    if (tile && smem) return "smemColIdx with kSrcTile: stage_neighbours does not combine with split_rows in user schedules";
    if (tile * F * 4 > (int64_t(64) << 20)) return "kSrcTile * F * 4 bytes exceed 64 MiB";
    if (smem && split && !p.at("rowTails"))
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
    const bool smem = c.knob("smemColIdx") != 0, tails = c.knob("rowTails") != 0;
    const int64_t balance = c.knob("rowBalance"), src_tile = c.knob("kSrcTile");
    // Rows split into segments (by length, or runs within source tiles), except in the tail form.
    const bool segmented = (split > 0 || src_tile > 0) && !tails;
    const int segment_length = split > 0 ? split : 1 << 20;
    if (balance == 3) {
        // The graph relabeled in its locality order: first, before the other directives. The source
        // features gathered into the new order, a thread per element (a kernel of its own).
        const RelabeledSources relabeled = c.relabel_sources();
        for (Func x : relabeled.sources) {
            Var fused("fused"), xo("xo"), xi("xi");
            x.compute_root().fuse(c.f, relabeled.i, fused).gpu_tile(fused, xo, xi, 256, TailStrategy::GuardWithIf);
        }
    }
    const RowTailLayout tail = row_tail_layout(c.features, V > 1 ? V : 0);
    // The tails' kernel loads vectors of its own where the rows do not (aligned rows are the
    // program's: one vector for both).
    if (V > 1 || (tails && tail.V > 1)) c.aligned_rows(V > 1 ? V : tail.V);
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
        if (segmented) {
            RowSegmentSplit r = c.split_rows(segment_length, src_tile, L, U);
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
        if (segmented) merge_segments();
        return;
    }
    // The directives first: they redefine out and acc (and give the segments' Funcs).
    RowTailSplit row_tails;
    RowSegmentSplit segments;
    if (tails) row_tails = c.split_row_tails(split);
    else if (segmented) segments = c.split_rows(segment_length, src_tile);
    NeighbourTiles tiles;
    if (smem) tiles = c.stage_neighbours(KT, vo, M);
    Func rows = segmented ? segments.segments : c.out, acc = segmented ? segments.segment_acc : c.acc;
    const RVar k = segmented ? segments.k : c.k;
    if (segmented) rows.compute_root();
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
    if (segmented) merge_segments();
    if (tails) {
        // The tails, a kernel after the rows: a tail's features over tail.T threads of tail.V
        // consecutive features, tail.M tails a block, each thread's tail sum in registers (vector
        // loads) added to its row atomically.
        Var tfo("tfo"), tfi("tfi"), tft("tft"), tfv("tfv"), tvo("tvo"), tv("tv");
        RVar tro("tro"), tri("tri");
        Halide::Stage merge = c.out.update();
        merge.split(c.f, tfo, tfi, tail.T * tail.V, TailStrategy::GuardWithIf)
            .split(tfi, tft, tfv, tail.V, TailStrategy::GuardWithIf)
            .split(row_tails.r, tro, tri, tail.M, TailStrategy::GuardWithIf)
            .reorder(tfv, tft, tri, tro, tfo)
            .unroll(tfv)
            .gpu_threads(tft, tri)
            .gpu_blocks(tro, tfo);
        Func tail_acc = row_tails.tail_acc;
        tail_acc.compute_at(c.out, tft).store_in(Halide::MemoryType::Register).bound_extent(c.f, tail.V);
        if (tail.V > 1) {
            tail_acc.split(c.f, tvo, tv, tail.V).vectorize(tv);
            tail_acc.update().split(c.f, tvo, tv, tail.V).vectorize(tv).reorder(tv, row_tails.k, tvo);
        } else {
            tail_acc.update().reorder(c.f, row_tails.k);
        }
    }
}

}  // namespace

const ScheduleDef &builtin_gpu_spmm_schedule() {
    static const ScheduleDef def = [] {
        ScheduleDef d;
        d.name = "builtin_gpu_spmm";
        // The built-in space's knobs (schedules/gpu_spmm.cpp).
        d.knobs = {{"kMTile", {1, 2, 4, 8, 16, 32, 64, 128, 256}, 4},
                   {"kNTile", {1, 2, 4, 8, 16, 32, 64, 128}, 32},
                   {"kNRegTile", {1, 2, 4, 8}, 1},
                   {"kNnzTile", {16, 32, 64, 128}, 32},
                   {"smemColIdx", {0, 1}, 0},
                   {"kRowSplit", {0, 64, 128, 256, 1024, 4096}, 0},
                   {"rowBalance", {0, 1, 2, 3}, 0},
                   {"kNnzLanes", {1, 2, 4, 8, 16, 32}, 1},
                   {"kVecWidth", {1, 2, 4}, 1},
                   {"kNnzUnroll", {1, 2, 4}, 1},
                   {"kSrcTile", {0, 32768, 65536}, 0},
                   {"rowTails", {0, 1}, 0}};
        d.why_invalid = why_invalid;
        d.apply = apply;
        return d;
    }();
    return def;
}

}  // namespace gsparse::dsl
