// A user schedule of g-SpMM-shaped programs that stages each block's neighbour ids a tile at a time
// (dsl::ScheduleContext::stage_neighbours) and keeps each thread's outputs in registers
// (dsl::ScheduleContext::register_tiles): the form of the built-in g-SpMM's smemColIdx, written
// with the public directives. Registered by the example plugin (weighted_max_plugin.cpp) and used
// by the tests of staged user programs.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "dsl/user_spmm.h"
#include "feature_threads.h"

namespace gsparse_examples {

/// Rows in blocks of `rows` with their neighbour ids staged `nnz_tile` positions at a time (the
/// form of the built-in g-SpMM's smemColIdx, written with the public directives). CUDA: blocks of
/// `rows` rows x feature_threads x register_tile features, threads (feature_threads, rows); each
/// thread accumulates register_tile outputs at stride feature_threads in registers, and the block's
/// threads fill each tile of neighbour ids in shared memory together, so the rows' gathers read ids
/// from there. feature_threads = 0: the largest power of two up to min(F, 32). With vector = V > 1
/// (the built-in g-SpMM's kVecWidth) each of a thread's outputs is V consecutive features, loaded,
/// reduced and stored as one vector: the rows are declared dense and aligned
/// (dsl::ScheduleContext::aligned_rows), so V must divide F. The CPU: parallel tasks of `rows` rows,
/// each tile of ids on the stack.
inline gsparse::dsl::ScheduleDef staged_tiles() {
    gsparse::dsl::ScheduleDef d;
    d.name = "staged_tiles";
    d.knobs = {{"rows", {1, 2, 4, 8, 16, 32, 64, 128}, 8},
               {"nnz_tile", {8, 16, 32, 64}, 32},
               {"feature_threads", {0, 1, 2, 4, 8, 16, 32}, 0},
               {"register_tile", {1, 2, 4}, 1},
               {"vector", {1, 2, 4}, 1}};
    d.why_invalid = [](const std::map<std::string, int64_t> &point, int features, gsparse::Device device) -> std::string {
        const int64_t rows = point.at("rows"), tile = point.at("nnz_tile");
        if (device == gsparse::Device::CPU) {
            if (point.at("feature_threads") != 0 || point.at("register_tile") != 1 || point.at("vector") != 1)
                return "feature_threads, register_tile and vector are CUDA knobs";
            return "";
        }
        const int64_t threads = feature_threads(point.at("feature_threads"), features), vector = point.at("vector");
        if (features % vector != 0) return "vector must divide the feature count (aligned rows)";
        if (threads * point.at("register_tile") * vector > features)
            return "feature_threads x register_tile x vector exceeds the feature count";
        if (threads * rows > 1024) return "feature_threads x rows exceeds 1024 threads a block";
        // Source and edge ids, 4 bytes each, in 48 KiB of shared memory.
        if (tile * rows * 8 > 48 * 1024) return "nnz_tile x rows ids exceed 48 KiB of shared memory";
        return "";
    };
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        using Halide::TailStrategy;
        Halide::Var vo("vo"), vi("vi");
        const int rows = static_cast<int>(c.knob("rows")), tile = static_cast<int>(c.knob("nnz_tile"));
        gsparse::dsl::NeighbourTiles t = c.stage_neighbours(tile, vo, rows);
        if (c.device == gsparse::Device::CPU) {
            c.out.split(c.v, vo, vi, rows, TailStrategy::GuardWithIf).parallel(vo);
            c.acc.compute_at(c.out, vo);
            // Tile by tile over the task's rows, each row's positions of the tile in order.
            c.acc.update().reorder(c.f, t.ki, c.v, t.ko);
            return;
        }
        const int T = static_cast<int>(feature_threads(c.knob("feature_threads"), c.features));
        const int R = static_cast<int>(c.knob("register_tile")), V = static_cast<int>(c.knob("vector"));
        // f = fo * (T * R * V) + fr * (T * V) + ft * V + fv: thread ft owns R groups of V consecutive
        // features at stride T * V (each warp's loads and stores coalesced), unrolled, each group one
        // vector. Tiles shift inwards at the end of the features (T * R * V <= F; starts stay
        // multiples of V, which divides F).
        if (V > 1) c.aligned_rows(V);
        Halide::Var fo("fo"), fi("fi"), fr("fr"), fw("fw"), ft("ft"), fv("fv");
        auto split_features = [&](auto &&stage, TailStrategy tail) -> decltype(auto) {
            return stage.split(c.f, fo, fi, T * R * V, tail).split(fi, fr, fw, T * V).split(fw, ft, fv, V);
        };
        auto vectorized = [V, &fv](auto &&stage) -> decltype(auto) { return V > 1 ? stage.vectorize(fv) : stage; };
        vectorized(split_features(c.out, TailStrategy::ShiftInwards)
                       .split(c.v, vo, vi, rows, TailStrategy::GuardWithIf)
                       .reorder(fv, fr, ft, vi, vo, fo)
                       .unroll(fr))
            .gpu_blocks(vo, fo)
            .gpu_threads(ft, vi);
        // The block's accumulators, each thread's R x V in registers (register_tiles).
        c.register_tiles();
        c.acc.compute_at(c.out, vo).store_in(Halide::MemoryType::Register);
        vectorized(split_features(c.acc, TailStrategy::Auto).reorder(fv, fr, ft, c.v, fo).unroll(fr))
            .gpu_threads(ft, c.v);
        vectorized(split_features(c.acc.update(), TailStrategy::Auto).reorder(fv, fr, t.ki, ft, c.v, t.ko, fo).unroll(fr))
            .gpu_threads(ft, c.v);
        // The block's threads fill each tile: positions over the feature threads, rows over the rows'.
        for (Halide::Func ids : {t.ids, t.edges}) {
            if (!ids.defined()) continue;
            Halide::Var ko("kvo"), ki("kvi");
            ids.split(t.kv, ko, ki, std::min(T, tile)).gpu_threads(ki, c.v);
        }
    };
    return d;
}

}  // namespace gsparse_examples
