// Schedule gpu_spmm: the CUDA schedule of g-SpMM.
//
//   out   blocks of kMTile rows x (kNTile * kNRegTile) features; threads (kNTile, kMTile); each
//         thread owns kNRegTile outputs at stride kNTile, so every load and store of the warp is
//         coalesced and the register tile is fully unrolled.
//   acc   per-thread accumulators in registers (MemoryType::Register), computed per block.
//   nbr   with smemColIdx, the neighbour ids of the block's rows are staged kNnzTile at a time in
//         shared memory (a kNnzTile x kMTile tile, filled by the block's threads with coalesced
//         loads) at the outer split ko of the row's reduction domain. The ko loop contains
//         barriers, so the extension's BlockUniformLoop pass bounds it by the longest row of the
//         block instead of the longest row of the graph.
//   tiles with kSrcTile = T > 0, rows are reduced in runs: the nonzeros of one row whose sources lie
//         in one tile of T consecutive ids, numbered tile by tile (Graph::source_tile_segments),
//         so the blocks running together gather from one tile's rows, which stay in L1; rows then
//         combine their runs (split_rows with source tiles; sum and mean only).
//   lanes with kNnzLanes = L > 1 (small feature lengths), each of the kNTile feature threads of a
//         row is L lanes of a warp: lane l reduces the row's nonzeros k ≡ l (mod L) into its own
//         partial result (`lanes`, split_nnz_lanes), and the row's result combines the L partials
//         through warp shuffles. Threads are (lane, feature, row) = (L, kNTile, kMTile); the
//         output stage runs on lane 0 of each row's lanes.
//   rows  with rowBalance = 1 / 2, position v computes row order(v) (bind_buffer: balancedIdx or the
//         locality order); with rowBalance = 3 the kernel runs on the graph relabeled in the
//         locality order (relabel_sources: the source features are gathered into the new order by
//         a stage of their own, and the output stores go back through the order).
#include <algorithm>
#include <set>

#include "halide_ext/align_local_allocations.h"
#include "halide_ext/atomic_add_stores.h"
#include "schedules/spmm_selector.h"
#include "halide_ext/bind_buffer.h"
#include "halide_ext/block_uniform_loop.h"
#include "halide_ext/compact_thread_allocations.h"
#include "halide_ext/speculate_guarded_updates.h"
#include "halide_ext/store_index_lets.h"
#include "ops/dense_operands.h"
#include "schedules/gpu_schedules.h"
#include "schedules/gpu_spmm_lanes.h"

namespace gsparse {

using namespace Halide;

namespace {

/// The smallest power of two >= x (1 for x <= 1).
int64_t pow2_ceil(int64_t x) {
    int64_t p = 1;
    while (p < x) p *= 2;
    return p;
}

const char *kName = "gpu_spmm";

/// Whether a problem can run on its graph relabeled in the locality order (rowBalance = 3): rows
/// and sources are renumbered together (square graphs, as far as the statistics tell) and the
/// rows' neighbours are re-sorted by new id (sum and mean only).
bool relabel_possible(const Problem &p) {
    return p.source_operand && !p.order_sensitive && p.stats.num_rows == p.stats.num_cols;
}

/// rowTails = 1 adds with atomics: searched for sum and mean only.
std::vector<int64_t> tails_choices(const Problem &p) {
    if (p.order_sensitive) return {0};
    return {0, 1};
}

std::vector<int64_t> rb_choices(const Problem &p) {
    if (relabel_possible(p)) return {0, 1, 2, 3};
    return {0, 1, 2};
}

ScheduleSpace space(const Problem &p) {
    // Source tiles are searched only where some tile can be valid (small feature lengths, sum and
    // mean): elsewhere they would triple the points to enumerate and reject.
    // With graph statistics, only tiles whose runs keep at least 8 nonzeros of a row on average
    // (average row length x tile / sources): shorter runs cost more in partial results than their
    // gathers gain in L1 (ad13221:benchmarks/results/2026-11-22-*-spmm-proteins-l1-tiles), and each tile
    // size costs the tuner a regrouping of the edges (seconds on the ogbn-products twin, whose
    // 32768- and 65536-wide tiles hold under 2 nonzeros of a row).
    std::vector<int64_t> tiles = {0};
    const int64_t f0 = p.layout.extents[0];
    if (!p.order_sensitive && f0 * 32768 * 4 <= (int64_t(1) << 20))
        for (int64_t tile : {32768, 65536})
            if (p.stats.nnz == 0 || p.stats.avg_row_length * static_cast<double>(tile) >=
                                        8.0 * static_cast<double>(std::max<int64_t>(p.stats.num_cols, 1)))
                tiles.push_back(tile);
    // kNTile, kNRegTile and kVecWidth above the next power of two of the innermost feature extent
    // are never valid (their product must not exceed it): small feature lengths list only the
    // values that can be.
    auto upto = [f0](std::vector<int64_t> values) {
        std::vector<int64_t> kept;
        for (int64_t x : values)
            if (x <= pow2_ceil(f0) || kept.empty()) kept.push_back(x);
        return kept;
    };
    return {kName,
            {{"kMTile", {1, 2, 4, 8, 16, 32, 64, 128, 256}, "rows per thread block"},
             {"kNTile", upto({1, 2, 4, 8, 16, 32, 64, 128}), "threads along the innermost feature dimension"},
             {"kNRegTile", upto({1, 2, 4, 8}), "outputs per thread at stride kNTile"},
             {"kNnzTile", {16, 32, 64, 128}, "nonzeros of a row staged per step"},
             {"smemColIdx", {0, 1}, "stage neighbour ids in shared memory"},
             {"kRowSplit", {0, 64, 128, 256, 1024, 4096}, "split rows into segments of at most this many nonzeros (0: whole rows)"},
             {"rowBalance", rb_choices(p), "blocks take rows in another order (bind_buffer): 1 balancedIdx (longest first), 2 the locality order (rows grouped by the sources they read, longest first within a group), 3 the locality order over the graph relabeled in it (sources renumbered too; square graphs, sum and mean)"},
             {"kNnzLanes", {1, 2, 4, 8, 16, 32}, "warp lanes that split a row's nonzeros (combined by shuffles)"},
             {"kVecWidth", upto({1, 2, 4}), "consecutive features a thread owns and loads with one vector load"},
             {"kNnzUnroll", {1, 2}, "nonzeros a lane has in flight at once (kNnzLanes > 1: its reduction loop unrolled; 4 also valid)", 1},
             {"kSrcTile", tiles, "rows reduced in runs over tiles of this many source ids, tile by tile (0: whole rows; searched up to F = 8)", 0},
             {"rowTails", tails_choices(p), "with kRowSplit: 1 the row kernel reduces and stores each row's first kRowSplit nonzeros and a second kernel adds the rest, in tails of kRowSplit, with atomic adds (sum and mean); 0 every segment goes to a partial buffer that a third pass combines per row", 0}}};
}

/// kNnzLanes, kVecWidth and kNnzUnroll of a point; 1 for points written before the knob existed
/// (check_schedule still requires kNnzLanes and kVecWidth, so only tools that read stored points see
/// their fallback; kNnzUnroll's is its absent_means).
int64_t nnz_lanes(const ScheduleParams &s) { return s.get_or("kNnzLanes", 1); }
int64_t vec_width(const ScheduleParams &s) { return s.get_or("kVecWidth", 1); }
int64_t nnz_unroll(const ScheduleParams &s) { return s.get_or("kNnzUnroll", 1); }
int64_t src_tile(const ScheduleParams &s) { return s.get_or("kSrcTile", 0); }
int64_t row_tails(const ScheduleParams &s) { return s.get_or("rowTails", 0); }

/// Whether the one-thread-per-feature-group form (kNnzLanes = 1) runs one guarded feature tile
/// wider than the innermost extent f0: kNTile * kNRegTile * kVecWidth above f0 (up to the next power
/// of two of its feature groups, f0 / V), the threads past the row's end idle. F = 100 then takes one
/// tile of 32 threads x 4 (25 busy) where tiles of 64 features shift inwards: two overlapping tiles,
/// each gathering the row's neighbour ids and 64 features (128 read for 100). Narrower tiles keep
/// shifting inwards (a guarded tile among several leaves the accumulators' indices to the block, which
/// then keeps them in local memory).
bool guarded_feature_tiles(const ScheduleParams &s, int64_t f0) {
    return nnz_lanes(s) == 1 && s.get("kNTile") * s.get("kNRegTile") * vec_width(s) > f0;
}

/// A feature tile of kNTile threads x kNRegTile outputs over a row's `groups` feature groups.
struct FeatureTile {
    int64_t T = 1, R = 1;
};

/// The tile over `groups` feature groups with the fewest idle thread slots (ceil(groups / T) x T),
/// the wider thread tile on ties: kNTile from 32 down to 8, kNRegTile the next power of two of the
/// groups a thread takes (at most 8; the slots past the row's end are guarded). F = 47 (47 scalar
/// groups): 16 threads x 4 (48 slots; 32 x 2 idles 17 of 64); F = 100 in 4-wide groups (25): 32 x 1
/// (16 x 2 has as many slots but half the threads). A tile whose last partial group of threads is
/// one thread is skipped (invalid_reason: CompactThreadAllocations); nullopt where every width is
/// (33 groups) or more than 8 x 32 groups would be needed.
std::optional<FeatureTile> fewest_idle_slots_tile(int64_t groups) {
    std::optional<FeatureTile> best;
    int64_t best_slots = 0;
    for (int64_t T : {32, 16, 8}) {
        const int64_t per_thread = (groups + T - 1) / T;
        const int64_t R = pow2_ceil(per_thread);
        if (R > 8 || groups % T == 1) continue;
        const int64_t slots = per_thread * T;
        if (!best || slots < best_slots) best = FeatureTile{T, R}, best_slots = slots;
    }
    return best;
}


/// kNnzTile sizes the shared tile of neighbour ids and nothing else: without smemColIdx (and in the
/// lane form, which cannot stage ids) every kNnzTile gives the same kernel, named by the smallest.
ScheduleParams canonical(const ScheduleParams &s) {
    ScheduleParams c = s;
    const bool staged = s.get_or("smemColIdx", 0) != 0 && nnz_lanes(s) == 1;
    if (!staged && c.values.count("kNnzTile")) c.values["kNnzTile"] = 16;
    return c;
}

std::optional<std::string> invalid_reason(const ScheduleParams &s, const Problem &p) {
    const int64_t M = s.get("kMTile"), T = s.get("kNTile"), R = s.get("kNRegTile"), KT = s.get("kNnzTile"),
                  smem = s.get("smemColIdx");
    const int64_t f0 = p.layout.extents[0];
    auto pow2 = [](int64_t x) { return x >= 1 && (x & (x - 1)) == 0; };
    for (auto [name, x] : {std::pair{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", KT}})
        if (!pow2(x)) return std::string(name) + " must be a power of two >= 1, got " + std::to_string(x);
    if (smem != 0 && smem != 1) return "smemColIdx must be 0 or 1, got " + std::to_string(smem);
    const int64_t split = s.get("kRowSplit");
    if (split < 0 || (split > 0 && !pow2(split)))
        return "kRowSplit must be 0 or a power of two, got " + std::to_string(split);
    if (split > 0 && split < KT) return "kRowSplit must be at least kNnzTile";
    const int64_t balance = s.get("rowBalance");
    if (balance < 0 || balance > 3) return "rowBalance must be 0, 1, 2 or 3, got " + std::to_string(balance);
    if (balance == 3 && p.order_sensitive)
        return "rowBalance 3 re-sorts the rows' neighbours by new id: max/min ties and arg ids need the original "
               "order (use sum or mean)";
    if (balance == 3 && p.stats.num_rows != p.stats.num_cols)
        return "rowBalance 3 renumbers rows and sources together; the graph has " + std::to_string(p.stats.num_rows) +
               " rows and " + std::to_string(p.stats.num_cols) + " sources";
    if (balance == 3 && !p.source_operand)
        return "rowBalance 3 relabels the gathered source features; this operator gathers none (copy_rhs)";
    if ((balance == 1 || balance == 2) && split)
        return "rowBalance 1 and 2 order whole rows; they cannot be combined with kRowSplit";
    const int64_t tile = src_tile(s);
    if (tile != 0 && (!pow2(tile) || tile < 1024 || tile > (int64_t(1) << 30)))
        return "kSrcTile must be 0 or a power of two in [1024, 2^30], got " + std::to_string(tile);
    if (tile && balance) return "rowBalance orders whole rows; it cannot be combined with kSrcTile";
    if (tile && p.order_sensitive)
        return "kSrcTile combines a row's runs in tile order; max/min ties need row order (use kSrcTile = 0)";
    // A tile's source rows are meant to stay in cache while the blocks of that tile run: an SM's L1
    // (256 KiB on an H100) at small F, the L2 (50 MiB) at most.
    if (tile && tile * f0 * 4 > (int64_t(64) << 20))
        return "kSrcTile * innermost feature extent * 4 bytes = " + std::to_string(tile * f0 * 4) +
               " exceeds 64 MiB (a tile's rows would not stay in cache)";
    const int64_t tails = row_tails(s);
    if (tails != 0 && tails != 1) return "rowTails must be 0 or 1, got " + std::to_string(tails);
    if (tails) {
        if (!split) return "rowTails = 1 cuts rows after kRowSplit nonzeros; it needs kRowSplit > 0";
        if (p.order_sensitive)
            return "rowTails = 1 adds a row's tails with atomic adds in any order: sum and mean only";
        if (balance || tile) return "rowTails = 1 takes rows in row order: no rowBalance or kSrcTile";
        if (smem) return "rowTails = 1 reads neighbour ids directly; it cannot be combined with smemColIdx";
        if (nnz_lanes(s) > 1) return "rowTails = 1 runs a row's nonzeros on one thread: kNnzLanes = 1";
        const int64_t row_vec = vec_width(s) > 1 ? vec_width(s) : 0;
        const RowTailLayout l = row_tail_layout(f0, row_vec);
        if (l.T < kRowTailsMinThreads && l.T < f0 / l.V)
            return "rowTails = 1 at an innermost feature extent of " + std::to_string(f0) + " gives the tails' kernel " +
                   std::to_string(l.T) + " feature thread(s) (the largest divisor of its " + std::to_string(f0 / l.V) +
                   " feature groups up to 32); it needs at least " + std::to_string(kRowTailsMinThreads);
    }
    const int64_t V = vec_width(s);
    if (V != 1 && V != 2 && V != 4) return "kVecWidth must be 1, 2 or 4, got " + std::to_string(V);
    if (V > 1 && f0 % V != 0)
        return "kVecWidth " + std::to_string(V) + " does not divide the innermost feature extent " + std::to_string(f0) +
               " (rows would not be aligned for vector loads)";
    if (V > 1 && nnz_lanes(s) > 1) return "kVecWidth > 1 applies to kNnzLanes = 1 (one thread per feature group)";
    const int64_t L = nnz_lanes(s);
    // Feature tiles of the one-thread-per-group form are guarded where they do not divide the
    // extent (guarded_feature_tiles), so they may reach the next power of two of its V-wide groups;
    // the lane form shifts its tiles inside the extent.
    if (L == 1 && T * R > pow2_ceil(f0 / V))
        return "kNTile * kNRegTile = " + std::to_string(T * R) + " feature groups of kVecWidth " + std::to_string(V) +
               " exceed " + std::to_string(pow2_ceil(f0 / V)) + ", the next power of two of the innermost feature extent's " +
               std::to_string(f0 / V) + " groups";
    if (L > 1 && T > f0)
        return "kNTile = " + std::to_string(T) + " exceeds the innermost feature extent " + std::to_string(f0);
    // A guarded tile whose last partial group of threads is one thread: Halide's simplifier pins that
    // thread's id to 0 in its guarded accesses, so they no longer share the other accesses' base and
    // the accumulators stay in local memory (CompactThreadAllocations).
    if (L == 1 && guarded_feature_tiles(s, f0) && (f0 / V) % T == 1)
        return "kNTile = " + std::to_string(T) + " leaves one thread for the last " + std::to_string(V) +
               "-wide feature group of a guarded tile (" + std::to_string(f0 / V) + " groups); take another kNTile";
    if (!pow2(L) || L > 32) return "kNnzLanes must be a power of two in 1..32, got " + std::to_string(L);
    const int64_t U = nnz_unroll(s);
    if (U != 1 && U != 2 && U != 4) return "kNnzUnroll must be 1, 2 or 4, got " + std::to_string(U);
    if (U > 1 && L == 1) return "kNnzUnroll > 1 unrolls the lanes' loop; it needs kNnzLanes > 1";
    if (L > 1 && dtype_size(p.dtype) > 4)
        return std::string("kNnzLanes > 1 combines lanes with warp shuffles, which move 32 bits (Halide 14): ") +
               dtype_name(p.dtype) + " features take kNnzLanes = 1";
    if (L > 1) {
        // The lanes of a row are the innermost thread dimension (gpu_lanes): the shared tile's own
        // 2-D thread loops and barriers do not fit that layout, and the lanes read col_idx
        // coalesced without it; the register tile would stripe kNRegTile partials across lanes.
        if (smem) return "kNnzLanes > 1 reads neighbour ids directly; it cannot be combined with smemColIdx";
        if (R != 1) return "kNnzLanes > 1 needs kNRegTile = 1 (one output per row thread)";
        // Threads are (lane, feature, row): rows are the block's third thread dimension, which CUDA
        // caps at 64 (a launch with more fails with CUDA_ERROR_INVALID_VALUE).
        if (M > 64) return "kNnzLanes > 1 puts rows on the third thread dimension (at most 64): kMTile " + std::to_string(M) + " > 64";
        // Lane kernels index with 32 bits (SpmmAlgorithm::large_buffers): every tensor must fit.
        auto product = [](const std::vector<int64_t> &x) {
            int64_t n = 1;
            for (int64_t e : x) n *= e;
            return n;
        };
        const int64_t limit = (int64_t(1) << 31) - 1;
        for (auto [what, n] : {std::pair{"the source features", p.stats.num_cols * product(p.layout.lhs_extents())},
                               {"the edge features", p.stats.nnz * product(p.layout.rhs_extents())},
                               {"the output", p.stats.num_rows * p.layout.out_len()}})
            if (n > limit)
                return std::string("kNnzLanes > 1 indexes with 32 bits; ") + what + " (" + std::to_string(n) +
                       " elements) exceed 2^31 - 1";
    }
    const int64_t threads = M * T * L;
    const std::string what = L > 1 ? "kMTile * kNTile * kNnzLanes = " : "kMTile * kNTile = ";
    if (threads > 1024) return what + std::to_string(threads) + " threads exceed 1024 per block";
    if (threads < 32) return what + std::to_string(threads) + " threads is less than a warp";
    if (R > 8) return "kNRegTile above 8 spills registers";
    if (smem) {
        const int64_t bytes = KT * M * 4;
        if (bytes > 48 * 1024) return "shared tile of " + std::to_string(bytes) + " bytes exceeds 48 KiB";
        if (KT % std::min(T, KT) != 0) return "kNnzTile must be a multiple of kNTile";
    }
    return std::nullopt;
}

/// The small-feature defaults before kNnzLanes: one thread per feature walks a whole row.
constexpr bool kSmallFeatureOneThreadPerRow = false;

/// The defaults on the graph relabeled in its locality order (rowBalance = 3), where they were
/// measured to win; nullopt elsewhere. Measured on the H100 (2026-11-22, shuffled ids, copy_lhs + sum,
/// benchmarks/results/2026-11-22-*-spmm-relabel), in ms against the defaults before and the best
/// cached cuSPARSE algorithm; the source features' gather into the new order is included:
///   ogbn-products twin (unsplit, COV 1.88), F = 1: 16 rows x 8 lanes, 0.79 (1.08; 1.05);
///     F = 2: 8 rows x 2 threads x 8 lanes, 2 nonzeros in flight, 1.09 (1.13; 1.78);
///     F = 4: 4 rows x 4 threads x 8 lanes, 2 in flight, 1.41 (1.65; 2.38);
///     F = 8: 4 rows x 8 threads x 4 lanes, 1.81 (2.35; 3.70);
///     F = 16..31 (even; on skewed graphs too): 8 rows x 8 threads of 2-wide loads, ids staged, segments
///       of 256 (the best point of the exhaustive sweeps at F = 16 on all three twins,
///       benchmarks/results/2026-11-22-*-tune-exhaustive-f16-f32): 1.92 (2.53 for the 4-wide point
///       before it; 4.56); reddit 0.875 (1.085; 1.76), ogbn-proteins 0.582 (0.738; 1.04); F = 18:
///       4.63 / 2.22 / 1.48 (cuSPARSE 8.64 / 3.20 / 1.92; benchmarks/results/2026-11-22-*-spmm-f16-defaults);
///     F = 32: 4 rows x 8 threads of 4-wide loads, ids staged, 2.99 (3.26; 5.42);
///     from F = 64 the locality order without relabeling stays ahead (5.22 against 5.52 relabeled).
///   skewed twins (reddit; ogbn-proteins), where rows are split:
///     F = 1 (where source tiles were the default): a warp of lanes per row, 4 rows per block,
///       whole rows: 0.34 (0.38; 0.90); 0.17 (0.22; 0.60);
///     F = 8: the split default (4 rows x 8 threads x 4 lanes, segments of 1024) relabeled: 0.77
///       (1.02; 1.66); 0.51 (0.69; 1.01);
///     F = 32 (F % 4 = 0): 32 rows x 8 threads of 4-wide loads, 16-nonzero steps, segments of 1024
///       (found by the tuner on ogbn-proteins): 1.36 (1.98; 2.10); 0.93 (1.34; 1.26); other even F
///       up to 63: 32 rows x 16 threads of 2-wide loads (F = 32: 1.55; 1.09);
///     even F from 64: 32 rows x 16 threads of 2-wide loads x 2 outputs, 16-nonzero steps,
///       segments of 1024 (found by the tuner on reddit): F = 64: 2.58 (3.94; 4.34); 1.74 (2.66;
///       2.53); F = 128: 5.13 (8.25; 9.45); 3.46 (4.92; 5.18); F = 256 / 512: 10.25 / 20.58 (13.62 /
///       24.79; 21.35 / 48.41); 6.96 / 13.96 (8.33 / 15.77; 11.38 / 25.58), where whole relabeled
///       rows (2 rows x 16 threads of 4-wide loads, ids staged) took 13.45 / 24.47 and 8.21 / 15.54;
///     odd F from 32 to 127: the split default (16 threads x 2 outputs, segments of 256) relabeled
///       (F = 64: 3.33; 2.34); odd F from 128 keeps the split default without relabeling.
/// At F = 16 the relabeled split lanes point was a little slower than unrelabeled (1.10 against 1.09;
/// 0.75 against 0.74; the 2-wide point above won instead), and at F = 2..4 source tiles stay (reddit F = 2: 0.73 relabeled against 0.66). An edge operand
/// would be read through the relabeled graph's edge ids, scattered: those operators keep the other
/// defaults.
std::optional<ScheduleParams> relabeled_default(const Problem &p, bool skewed) {
    if (!relabel_possible(p) || p.edge_operand || p.stats.nnz == 0) return std::nullopt;
    const int64_t f0 = p.layout.extents[0];
    // (kMTile, kNTile, kNRegTile, kNnzTile, smemColIdx, kRowSplit, kNnzLanes, kVecWidth, kNnzUnroll)
    auto make = [](int64_t M, int64_t T, int64_t R, int64_t KT, int64_t smem, int64_t split, int64_t L, int64_t V,
                   int64_t U) {
        ScheduleParams s;
        s.schedule = kName;
        s.values = {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", KT}, {"smemColIdx", smem},
                    {"kRowSplit", split}, {"rowBalance", 3}, {"kNnzLanes", L}, {"kVecWidth", V},
                    {"kNnzUnroll", U}, {"kSrcTile", 0}};
        return std::optional<ScheduleParams>(s);
    };
    if (!skewed && p.stats.row_length_cov >= 1.0) {
        if (f0 == 1) return make(16, 1, 1, 32, 0, 0, 8, 1, 1);
        if (f0 < 4) return make(8, 2, 1, 32, 0, 0, 8, 1, 2);
        if (f0 < 8) return make(4, 4, 1, 32, 0, 0, 8, 1, 2);
        if (f0 < 16) return make(4, 8, 1, 32, 0, 0, 4, 1, 1);
        if (f0 < 32 && f0 % 2 == 0) return make(8, 8, 1, 32, 1, 256, 1, 2, 1);
        if (f0 < 64 && f0 % 4 == 0) return make(4, 8, 1, 32, 1, 0, 1, 4, 1);
        return std::nullopt;
    }
    if (skewed) {
        // Where source tiles of 32768 ids were the default at F = 1 (long runs, several tiles).
        constexpr double kTile = 32768;
        const double cols = static_cast<double>(p.stats.num_cols);
        if (f0 == 1 && cols >= 4 * kTile && p.stats.avg_row_length * kTile >= 32.0 * cols)
            return make(4, 1, 1, 32, 0, 0, 32, 1, 1);
        if (f0 >= 8 && f0 < 16) return make(4, 8, 1, 32, 0, 1024, 4, 1, 1);
        if (f0 >= 16 && f0 < 32 && f0 % 2 == 0) return make(8, 8, 1, 32, 1, 256, 1, 2, 1);
        if (f0 >= 32 && f0 < 64 && f0 % 4 == 0) return make(32, 8, 1, 16, 0, 1024, 1, 4, 1);
        if (f0 >= 32 && f0 < 64 && f0 % 2 == 0) return make(32, 16, 1, 16, 0, 1024, 1, 2, 1);
        if (f0 >= 64 && f0 % 2 == 0) return make(32, 16, 2, 16, 0, 1024, 1, 2, 1);
        if (f0 >= 32 && f0 < 128) return make(4, 16, 2, 16, 0, 256, 1, 1, 1);
    }
    return std::nullopt;
}

/// Whether rows are split by the expert rules: the longest row is far longer than the average and
/// also a noticeable share of the work (nnz / 6600 is about 1/50 of an SM's share on an H100): on
/// the ogbn-products twin (longest row 12047 of 124 M nonzeros) splitting cost 8-33% at F = 1..16
/// and 64..256, while the reddit and ogbn-proteins twins (48535 of 115 M, 19166 of 79 M) were up to
/// 1.8x slower without it.
bool skewed_rows(const Problem &p) {
    return p.stats.max_row_length > 8 * std::max(1.0, p.stats.avg_row_length) &&
           static_cast<double>(p.stats.max_row_length) > static_cast<double>(p.stats.nnz) / 6600;
}

/// The source rows' bytes below which wide features with an edge operand run in the row-tail form
/// (wide_edge_operand_default): the geometric midpoint of the training graphs' working sets on
/// either side of the decision, 47.7 MB (reddit-s10-i04 at F = 512, where the form won) and 238 MB
/// (the reddit twin at F = 256, where the locality order of the rules won); about twice the H100's
/// L2.
constexpr double kWideEdgeRowsMaxSourceBytes = 106e6;

/// The default for wide features (F >= 256, a multiple of 4) with an edge operand (u_mul_e and the
/// like, sum or mean) on graphs with skewed rows whose source rows fit about twice the L2
/// (kWideEdgeRowsMaxSourceBytes), where the other defaults leave rows whole: 2 rows x 64 threads x
/// 4-wide vectors, rows cut after 128 nonzeros and their tails added by the tails' kernel (none
/// with the row-tail defaults turned off, row_tails_defaults_enabled). Measured on the training
/// graphs where it applies (H100, 2026-11-28, benchmarks/results/2026-11-28-*-wide-f-edge-operand),
/// in ms against the rules' default (locality order, 8 rows x 32 threads x 2, rows whole):
/// reddit-s05-i0 F = 256 / 512 0.683 / 1.308 (1.496 / 2.175), reddit-s10-i04 1.409 / 2.803 (2.927 /
/// 4.459); on the reddit twin (238 MB of source rows at F = 256, excluded) it took 22.1 / 44.6
/// against 19.6 / 35.5. The relabeled form that copy_lhs takes there reads the edge operand through
/// the relabeled graph's edge ids and came second (0.820 / 1.512, 1.617 / 3.100).
std::optional<ScheduleParams> wide_edge_operand_default(const Problem &p) {
    const int64_t f0 = p.layout.extents[0];
    if (!p.edge_operand || !p.source_operand || p.order_sensitive || f0 < 256 || f0 % 4 != 0 || !skewed_rows(p) ||
        !row_tails_defaults_enabled())
        return std::nullopt;
    const double source_bytes = static_cast<double>(p.stats.num_cols) * static_cast<double>(p.layout.out_len()) *
                                static_cast<double>(dtype_size(p.dtype));
    if (source_bytes > kWideEdgeRowsMaxSourceBytes) return std::nullopt;
    ScheduleParams s;
    s.schedule = kName;
    s.values = {{"kMTile", 2}, {"kNTile", 64}, {"kNRegTile", 1}, {"kNnzTile", 16}, {"smemColIdx", 0},
                {"kRowSplit", 128}, {"rowBalance", 0}, {"kNnzLanes", 1}, {"kVecWidth", 4}, {"kNnzUnroll", 1},
                {"kSrcTile", 0}, {"rowTails", 1}};
    if (invalid_reason(s, p)) return std::nullopt;
    return s;
}

/// The expert default of a problem; with `lanes` false, without nonzero lanes (the forms used before
/// them, which index with 64 bits).
ScheduleParams band_default(const Problem &p, bool lanes) {
    const int64_t f0 = p.layout.extents[0];
    const bool skewed = skewed_rows(p);
    if (lanes)
        if (auto relabeled = relabeled_default(p, skewed)) return *relabeled;
    ScheduleParams s;
    s.schedule = kName;
    // Expert defaults per feature-length band, from H100 measurements on the reddit twin
    // (benchmarks/results): below a warp's worth of features, a warp per row (kNTile feature
    // threads x 32 / kNTile nonzero lanes, 4 rows per block; kSmallFeatureOneThreadPerRow restores
    // the earlier one thread per feature and row with many rows per block); from 32 features a warp
    // per row with 64-nonzero shared tiles; from 64 features two rows per block and two outputs per
    // thread. Rows far longer than the average are split.
    int64_t M, T, R = 1, KT = 64, split = 0, L = 1, smem = 1, V = 1;
    // Rows of widely varying length on a graph that needs no splitting (row-length COV >= 1):
    // blocks take rows longest first (rowBalance), so that a block's rows end together and the
    // longest rows do not start last. On the H100 (2026-11-22, ogbn-products twin, COV 1.88,
    // ad13221:benchmarks/results/2026-11-22-*-spmm-row-balance), against the defaults before and the best
    // cached cuSPARSE algorithm:
    //   F = 8..15: 8 rows x 8 feature threads x 2 nonzero lanes (F = 8: 2.49 ms; 2.65; 3.72);
    //   F = 16..31: 8 rows x 16 threads, ids staged in 16-nonzero tiles (F = 16: 3.17; 3.41; 4.56);
    //   F = 32..63: 4 rows x 16 threads of 2-wide loads, 32-nonzero tiles (F = 32: 4.06; 6.01; 5.42;
    //     7.52 ms in row-id order);
    //   F >= 64: 8 rows x 32 threads of 2-wide loads, blocks over 64-feature slices (F = 64 / 128 /
    //     256 / 512: 8.81 / 17.74 / 35.53 / 70.97; 10.50 / 20.47 / 40.42 / 80.35; 10.87 / 21.79 /
    //     43.71 / 87.48).
    // Balancing lost below 8 features, and on the skewed reddit and ogbn-proteins twins it was
    // 1.1-4.6x slower than their split defaults. An odd F takes scalar loads over twice the threads.
    //
    // On graphs whose rows and columns are the same nodes, balanced rows take the locality order
    // (rowBalance = 2, graph/locality_order.h: rows grouped by the sources they read, longest first
    // within a group), except at F = 16..31. On the H100 (2026-11-22, ogbn-products twin, shuffled
    // ids, benchmarks/results/2026-11-22-*-spmm-locality-order), locality against balanced order:
    // F = 8: 2.35 / 2.50 ms; 16: 3.37 / 3.16; 32: 3.27 / 4.05; 64: 5.77 / 8.85; 128: 10.68 / 17.71;
    // 256: 20.55 / 35.49; 512: 40.29 / 71.01 (cuSPARSE 3.68 / 4.55 / 5.42 / 10.86 / 21.78 / 43.64 /
    // 87.41). The concurrently running rows then gather from one community's sources, which stay
    // in L2 where the whole feature matrix (0.6-5 GB) does not.
    // The same point also beats the split defaults of the skewed twins from F = 256 on, where the
    // feature matrix outgrows L2 (reddit F = 256 / 512: 15.04 / 25.92 ms against 16.46 / 32.81;
    // ogbn-proteins 8.83 / 15.91 against 10.67 / 21.23), but not below (ogbn-proteins F = 128:
    // 5.30 against 5.35, F = 64: 3.58 against 2.67).
    //
    // Between 128 and 255 features (a multiple of 4), a skewed graph whose longest row is still short
    // against the work (longest row x 400000 <= nnz x F: the warp that walks it alone finishes within
    // the kernel) keeps its rows whole, longest first, with a warp of 4-wide loads over 128 features
    // and 64-nonzero shared tiles: ogbn-proteins F = 128 (longest row 19166 of 79 M) 4.96 ms against
    // 5.40 split and 5.23 for cuSPARSE; on reddit (48535 of 115 M) the same point took 10.21 against
    // 8.28 split (ad13221:benchmarks/results/2026-11-22-*-spmm-wide-rows-skewed). At 256 and more features the
    // locality point above wins on both.
    const bool square = p.stats.num_rows == p.stats.num_cols;
    const bool locality_wide = skewed && square && p.stats.nnz > 0 && f0 >= 256 && f0 % 2 == 0;
    const bool whole_wide = skewed && p.stats.nnz > 0 && f0 >= 128 && f0 < 256 && f0 % 4 == 0 &&
                            static_cast<double>(p.stats.max_row_length) * 400000.0 <=
                                static_cast<double>(p.stats.nnz) * static_cast<double>(f0);
    const bool balance_rows = locality_wide || whole_wide ||
                              (!skewed && p.stats.nnz > 0 && p.stats.row_length_cov >= 1.0 && f0 >= (lanes ? 8 : 16));
    const int64_t row_order = !balance_rows ? 0 : whole_wide ? 1 : square && (f0 < 16 || f0 >= 32) ? 2 : 1;
    if (balance_rows) {
        smem = 1, KT = 32;
        if (f0 < 16) {
            M = 8, T = 8, L = 2, smem = 0;
        } else if (f0 < 32) {
            M = 8, T = 16, KT = 16;
        } else if (whole_wide) {
            V = 4, M = 8, T = 32, KT = 64;
        } else if (f0 >= 64 && f0 % 4 == 0 && row_order == 2 && !skewed) {
            // 2 rows x 16 threads of 4-wide loads (64-feature slices): on the ogbn-products twin
            // (H100, 2026-11-22, ad13221:benchmarks/results/2026-11-22-*-spmm-locality-vec4) F = 64 / 128 /
            // 256 / 512 took 5.22 / 9.63 / 18.47 / 36.02 ms, where 8 rows x 32 threads of 2-wide
            // loads took 5.76 / 10.68 / 20.59 / 40.34 (cuSPARSE 10.87 / 21.80 / 43.72 / 87.52).
            V = 4, M = 2, T = 16;
        } else {
            V = f0 % 2 == 0 ? 2 : 1;
            M = f0 < 64 ? 4 : 8;
            T = f0 < 64 && V == 2 ? 16 : 32;  // 32 features a warp row below 64, then 64
            if (f0 >= 64 && V == 1) R = 2;
        }
    } else if (skewed && p.edge_operand && p.source_operand && p.stats.nnz > 0 &&
               ((f0 >= 16 && f0 < 32 && f0 % 2 == 0) || (f0 >= 64 && f0 <= 128 && f0 % 4 == 0))) {
        // An edge operand on skewed rows, which cannot take the relabeled defaults (relabeled_default):
        // rows split at 256 nonzeros (from 64 features cut after 128 with their tails added by the
        // tails' kernel: with_row_tails), 2-wide loads below 64 features and 4-wide from 64, the tile
        // with the fewest idle slots, 128 threads a block. On the H200 (2026-11-28,
        // benchmarks/results/2026-11-28-nvidia-h200-short-row-tiles), u_mul_e + sum on the training
        // twins reddit-s10-i04 / proteins-s10-i05, against the forms below: F = 128 0.609 / 0.406 ms
        // (0.939 / 0.651 for 2 rows x 32 threads x 2 scalar outputs, ids staged, segments of 1024),
        // F = 64 0.313 / 0.216 (0.329 / 0.222), F = 16 on reddit-s10-i04 0.151 (0.220 for lanes; the
        // learned default decides on the proteins graph). Every case it changes on the zoo and the
        // twins was then measured against the previous default: held out 1.01x-1.47x faster; two
        // training cases slower (products-s50-i08 F = 16 0.93x, and er-1m through the short-row
        // rule), F = 32..63 left out (not measured).
        // (Every group count of these bands, 8..15 and 16..32, has a tile.)
        const FeatureTile tile = *fewest_idle_slots_tile(f0 / (f0 >= 64 ? 4 : 2));
        V = f0 >= 64 ? 4 : 2, T = tile.T, R = tile.R, M = std::max<int64_t>(1, 128 / tile.T);
        smem = 0, KT = 16, split = 256;
    } else if (f0 < 32) {
        T = 1;
        while (T * 2 <= f0) T *= 2;
        KT = 32;
        split = skewed ? 1024 : 0;
        if (kSmallFeatureOneThreadPerRow || !lanes) {
            M = std::min<int64_t>(32, std::max<int64_t>(128 / T, 32 / T));
        } else {
            L = 32 / T;
            M = 4;
            smem = 0;
        }
    } else if (f0 < 64 && !skewed && lanes && p.stats.nnz > 0) {
        // A graph known not to need splitting: two lanes per feature thread, 4 rows per block (on
        // the ogbn-products twin 6.0 ms where the shared-tile point below took 10.6 ms unsplit and
        // 9.2 ms split). Without graph statistics (ahead-of-time kernels) the shared-tile form stays.
        M = 4, T = 32, L = 2, smem = 0, KT = 32;
    } else if (f0 < 128 && skewed) {
        // Rows split at 256 nonzeros, 16 feature threads with two outputs each, 4 rows per block,
        // ids read directly: found by the tuner on the reddit twin (F = 32: 1.99 ms, where the
        // shared-tile default took 2.42 ms; F = 64: 3.93 ms against 4.16 ms; ogbn-proteins F = 64:
        // 2.71 ms against 2.75 ms).
        M = 4, T = 16, R = 2, smem = 0, KT = 16, split = 256;
    } else if (f0 < 64) {
        M = 8, T = 32;
    } else if (!skewed && p.stats.nnz > 0 && f0 % 256 == 0) {
        // Rows of even length (k-nearest-neighbour graphs: every row k long) at 256 and more
        // features: 4 rows x 32 threads x 2 outputs of 4-wide loads, ids staged in 32-nonzero tiles.
        // On the H100 (2026-11-28) the scalar form below took, on the training graph knn-32m,
        // 3.09 / 4.45 ms (copy_lhs / u_mul_e, F = 256) against 2.81 / 2.93
        // (benchmarks/results/2026-11-28-*-knn-wide-f); checked on the held-out k-NN graphs after
        // (benchmarks/results/2026-11-28-*-nonskewed-wide-f): knn-h-5m 0.94 / 1.22 ms -> 0.60 / 0.63
        // (cuSPARSE 0.83), knn-h-20m 2.26 / 3.23 -> 1.44 / 1.58 (cuSPARSE 2.57), twice that at
        // F = 512. Graphs with rows of varying length (row-length COV >= 1) balance rows above.
        M = 4, T = 32, R = 2, KT = 32, V = 4;
    } else {
        M = 2, T = 32, R = 2;
        split = skewed ? 1024 : 0;
    }
    // Source tiles of 32768 ids (128-512 KiB of rows at F = 1..4) where the runs stay long (at
    // least 32 nonzeros of a row per tile on average) and there are several tiles, with half a warp
    // per run and 8 runs per block (runs are shorter than rows) and no further cut. Gathers of the
    // tile hit the SM's L1 instead of L2. On the H100 (ad13221:benchmarks/results/2026-11-22-*-spmm-srctiles),
    // reddit F = 1 / 2 / 4: 0.375 / 0.661 / 0.901 ms where the untiled default took 0.864 / 0.915 /
    // 0.966 ms; ogbn-proteins F = 1 / 2 / 4: 0.222 / 0.414 / 0.632 ms against 0.545 / 0.611 / 0.657 ms.
    // An edge operand (u_mul_e) is read in tile order, scattered: there tiles pay only at F = 1
    // (ogbn-proteins, a weight per edge, F = 1 / 2 / 4: 0.44 / 0.74 / 0.95 ms tiled, 0.64 / 0.71 /
    // 0.78 ms untiled).
    int64_t tile = 0;
    constexpr int64_t kTile = 32768;
    if (L > 1 && f0 <= (p.edge_operand ? 1 : 4) && !p.order_sensitive && p.stats.num_cols >= 4 * kTile &&
        p.stats.avg_row_length * static_cast<double>(kTile) >= 32.0 * static_cast<double>(p.stats.num_cols)) {
        tile = kTile;
        L = 16 / T;
        M = 8;
        split = 0;
    }
    // Untiled nonzero lanes at F = 2..4 keep two nonzeros in flight per lane (on the ogbn-products
    // twin, H100, 2026-11-22, ad13221:benchmarks/results/2026-11-22-*-spmm-products-small-f-unroll: F = 2 / 4
    // 1.13 / 1.65 ms where one took 1.20 / 1.82; no change at F = 1). Graphs whose lanes run over
    // source tiles are limited by the cache lines the gathers touch, where unrolling did not pay.
    const int64_t unroll = L > 1 && tile == 0 && f0 >= 2 && f0 <= 4 && p.stats.nnz > 0 ? 2 : 1;
    s.values = {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", KT},
                {"smemColIdx", smem}, {"kRowSplit", split}, {"rowBalance", row_order}, {"kNnzLanes", L},
                {"kVecWidth", V}, {"kNnzUnroll", unroll}, {"kSrcTile", tile}};
    return s;
}

ScheduleParams expert_params(const Problem &p) {
    ScheduleParams s = band_default(p, true);
    // Lane kernels index with 32 bits and shuffle 32-bit values: tensors beyond 2^31 elements and
    // 64-bit features take the forms without lanes.
    if (nnz_lanes(s) > 1 && invalid_reason(s, p)) s = band_default(p, false);
    return s;
}

/// The tails' update of the row-tail form (split_row_tails), a kernel after the rows, with a layout
/// of its own: a tail's features over up to 32 threads of V consecutive features (V = 4, 2 or 1,
/// the widest that divides the feature extent; the thread count divides the row's groups), about
/// 128 threads a block; each thread reduces its tail into registers with V-wide loads and adds
/// each feature to the stored row with an atomic add.
void schedule_row_tails(SpmmAlgorithm &a) {
    const int rank = a.layout.rank();
    const int64_t f0_len = a.layout.extents[0];
    const int bytes = a.lhs.type().bytes();
    // Rows of vector loads already assume an alignment: the tails' loads stay within it.
    const RowTailLayout l =
        row_tail_layout(f0_len, a.operand_alignment > 0 ? std::max(1, a.operand_alignment / bytes) : 0);
    const int V = l.V, T = l.T, M = l.M;
    if (V > 1 && a.operand_alignment == 0) {
        // As for the rows' vector loads (apply): dense rows of known extents, aligned to V elements.
        declare_dense_operand(a.lhs, a.layout.lhs_extents());
        declare_dense_operand(a.rhs, a.layout.rhs_extents());
        a.operand_alignment = assume_operand_alignment({&a.lhs, &a.rhs}, V * bytes);
    }
    Var f0 = a.f[0];
    Stage upd = a.out.update();
    RVar tr = a.tail_r.x, tro("tro"), tri("tri");
    Var tfo("tfo"), tfi("tfi"), tft("tft"), tfv("tfv");
    upd.atomic()
        .split(f0, tfo, tfi, T * V, TailStrategy::GuardWithIf)
        .split(tfi, tft, tfv, V, TailStrategy::GuardWithIf)
        .split(tr, tro, tri, M, TailStrategy::GuardWithIf);
    std::vector<VarOrRVar> order = {tfv, tft, tri, tro, tfo};
    for (int d = 1; d < rank; d++) order.push_back(a.f[d]);
    upd.reorder(order).unroll(tfv).gpu_threads(tft, tri);
    if (rank == 1) {
        upd.gpu_blocks(tro, tfo);
    } else {
        Var heads = a.f[1];
        for (int d = 2; d < rank; d++) upd.fuse(heads, a.f[d], heads);
        upd.gpu_blocks(tro, tfo, heads);
    }
    Var tvo("tvo"), tv("tv");
    // (Each thread's V features of one tail: the feature tiles cover the rows exactly.)
    a.tail_acc.compute_at(a.out, tft).store_in(MemoryType::Register).bound_extent(f0, V);
    Stage tacc = a.tail_acc.update();
    if (V > 1) {
        a.tail_acc.split(f0, tvo, tv, V).vectorize(tv);
        tacc.split(f0, tvo, tv, V).vectorize(tv).reorder(tv, a.tail_k.x, tvo);
    } else {
        tacc.reorder(f0, a.tail_k.x);
    }
    a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
}

/// A default that splits rows takes the row-tail form where that form is valid (sum and mean, one
/// thread per feature group over a row's nonzeros, neighbour ids read directly, rows in row order)
/// from kRowTailsMinFeatures features on: the same segments without the partial buffer and the
/// pass that combines it. Measured on the zoo's heavy-tailed training graphs (copy_lhs + sum, H100,
/// benchmarks/results/2026-11-27-nvidia-h100-80gb-hbm3-row-tails): at F = 32 the row-tail point
/// was 1.30x the combined one on cl-8m and 0.89x on bip-2m (where the segment gate does not decide);
/// at F = 8 the first tails kernel lost (0.58x on cl-h-4m), so smaller F keep the combined form.
constexpr int64_t kRowTailsMinFeatures = 32;
/// From kRowTailsShortSplitFeatures features on, the row-tail form cuts rows after 128 nonzeros:
/// tails of 128 were faster than the selector's 256 or 1024 at F = 128 and 256 in 7 of 8 cases on
/// the same training graphs (tail-lengths.md there). At F = 32 (H200, 2026-11-28,
/// benchmarks/results/2026-11-28-nvidia-h200-f32-row-tails), 8 rows x 8 threads of 4-wide loads,
/// rows cut after 128 against 256 on five skewed training graphs: copy_lhs 1.14x, u_mul_e 1.23x
/// faster (geomean; one case 0.98x); held out (six graphs) 1.11x / 1.12x, every case faster.
constexpr int64_t kRowTailsShortSplitFeatures = 32;

ScheduleParams with_row_tails(ScheduleParams s, const Problem &p) {
    // Graph-blind problems (graph views, ahead-of-time kernels) carry no table of tails.
    if (s.get_or("kRowSplit", 0) <= 0 || row_tails(s) != 0 || p.stats.nnz <= 0 ||
        p.layout.extents[0] < kRowTailsMinFeatures || !row_tails_defaults_enabled())
        return s;
    ScheduleParams t = s;
    t.values["rowTails"] = 1;
    if (p.layout.extents[0] >= kRowTailsShortSplitFeatures) t.values["kRowSplit"] = 128;
    return invalid_reason(t, p) ? s : t;
}

/// On graphs of short rows (average row length up to kCoveringTileMaxAvgRow) a whole-row default
/// whose feature tile does not divide the innermost extent takes one guarded tile over the row
/// (guarded_feature_tiles) where that point is valid:
/// - from kFewestIdleSlotsMinFeatures to kFewestIdleSlotsMaxFeatures features (where it was
///   measured), the tile with the fewest idle thread slots
///   (fewest_idle_slots_tile over the point's V-wide groups), kShortRowTileThreads threads a block,
///   neighbour ids read directly (a shared tile of ids costs two barriers a row where rows hold a
///   few neighbours). On the H200 (2026-11-28, benchmarks/results/2026-11-28-nvidia-h200-short-row-tiles),
///   training graphs lat-8m / batch-10m / knn-8m, against the previous default (below): F = 47
///   (16 threads x 4 instead of 16 x 4 with ids staged) copy_lhs 1.16x, u_mul_e 1.23x faster
///   (geomean); F = 100 (32 threads x 4-wide, where 16 x 2 x 4-wide ran) 1.33x and 1.12x. Tiles of
///   32 x 2 at F = 47 lost (0.72x-0.80x), as did 2-wide and scalar groups at F = 100 (0.63x-0.91x).
/// - elsewhere, more outputs per thread (kNRegTile, up to 8) until one tile covers the row, where
///   the tile does not cover it already. On the H200 (2026-11-28,
///   benchmarks/results/2026-11-28-nvidia-h200-guarded-feature-tiles), training graphs, F = 47,
///   copy_lhs / u_mul_e: lat-8m 1.21x / 1.31x, batch-10m 1.17x / 1.45x, knn-8m 1.14x / 1.04x
///   faster, er-16m (average 16) 1.08x / 0.86x; rows split into segments (bip-2m, the reddit-like
///   graphs) lost up to 0.65x.
constexpr double kCoveringTileMaxAvgRow = 12.0;
constexpr int64_t kFewestIdleSlotsMinFeatures = 32, kFewestIdleSlotsMaxFeatures = 127;
constexpr int64_t kShortRowTileThreads = 64;

ScheduleParams covering_feature_tile(ScheduleParams s, const Problem &p) {
    const int64_t f0 = p.layout.extents[0];
    const int64_t T = s.get("kNTile"), V = vec_width(s);
    int64_t R = s.get("kNRegTile");
    if (p.stats.nnz <= 0 || p.stats.avg_row_length > kCoveringTileMaxAvgRow || s.get_or("kRowSplit", 0) != 0)
        return s;
    if (nnz_lanes(s) != 1 || f0 % (T * R * V) == 0) return s;
    ScheduleParams t = s;
    const auto tile = f0 >= kFewestIdleSlotsMinFeatures && f0 <= kFewestIdleSlotsMaxFeatures
                          ? fewest_idle_slots_tile(f0 / V)
                          : std::nullopt;
    if (tile) {
        t.values["kNTile"] = tile->T;
        t.values["kNRegTile"] = tile->R;
        t.values["kMTile"] = std::max<int64_t>(1, kShortRowTileThreads / tile->T);
        t.values["smemColIdx"] = 0;
        t.values["kNnzTile"] = 16;
        if (!invalid_reason(t, p)) return t;
        t = s;
    }
    if (T * R * V >= f0) return s;
    while (T * R * V < f0 && R < 8) R *= 2;
    t.values["kNRegTile"] = R;
    return T * R * V >= f0 && !invalid_reason(t, p) ? t : s;
}

/// The default for rows of one element without an edge operand (copy_lhs and the like, sum or
/// mean, float32) on graphs of short even rows (average row <= kThreadRowsMaxAverage, row-length
/// COV < 1: lattices, meshes, batches of small graphs): a thread per row, 128 rows a block, rows
/// whole. Measured on the zoo's training graphs at F = 1 against the learned default (64 rows x 2
/// lanes x 2 steps), copy_lhs + sum (H200, 2026-11-28, benchmarks/results/2026-11-28-nvidia-h200-segment-warp-lanes/even-rows):
/// lat-8m 1.31x, batch-10m 1.25x, batch-1m 1.14x, lat-1m 1.00x faster; on longer rows (k-NN with 8
/// and 16, Erdos-Renyi with 10 and 16 a row) it was 0.87x-1.03x, and with an edge operand (u_mul_e)
/// 0.73x-0.97x, so neither takes it.
std::optional<ScheduleParams> short_even_rows_default(const Problem &p) {
    if (p.layout.out_len() != 1 || p.edge_operand || p.order_sensitive || p.dtype != DType::F32 || p.stats.nnz <= 0 ||
        p.stats.avg_row_length > kThreadRowsMaxAverage || p.stats.row_length_cov >= 1.0)
        return std::nullopt;
    ScheduleParams s{kName, {{"kMTile", 128}, {"kNTile", 1}, {"kNRegTile", 1}, {"kNnzTile", 16}, {"smemColIdx", 0},
                             {"kRowSplit", 0}, {"rowBalance", 0}, {"kNnzLanes", 1}, {"kVecWidth", 1}, {"kSrcTile", 0},
                             {"kNnzUnroll", 1}, {"rowTails", 0}}};
    if (invalid_reason(s, p)) return std::nullopt;
    return s;
}

ScheduleParams default_params(const Problem &p) {
    if (auto rows = short_even_rows_default(p)) return *rows;
    auto selected = select_spmm_default(p, invalid_reason);
    ScheduleParams d = covering_feature_tile(with_row_tails(selected ? *selected : expert_params(p), p), p);
    if (d.get_or("kRowSplit", 0) == 0)
        if (auto wide = wide_edge_operand_default(p)) return *wide;
    return d;
}

void apply(SpmmAlgorithm &a, const ScheduleParams &s) {
    a.max_registers = gpu_spmm_register_limit(a.spec, s);
    const int M = static_cast<int>(s.get("kMTile")), T = static_cast<int>(s.get("kNTile")),
              R = static_cast<int>(s.get("kNRegTile")), KT = static_cast<int>(s.get("kNnzTile"));
    const bool smem = s.get("smemColIdx") != 0;
    const int split = static_cast<int>(s.get("kRowSplit"));
    const int rank = a.layout.rank();
    const bool balance = s.get("rowBalance") == 1 || s.get("rowBalance") == 2;
    const bool relabel = runs_on_relabeled_graph(s);
    const int64_t tile = src_tile(s);
    const int L = static_cast<int>(nnz_lanes(s));
    const int V = static_cast<int>(vec_width(s));
    if (V > 1) {
        // Dense row-major operands with constant strides, rows aligned to V elements: the feature
        // loads of a thread are proven aligned vector loads (the runtime checks the pointers).
        declare_dense_operand(a.lhs, a.layout.lhs_extents());
        declare_dense_operand(a.rhs, a.layout.rhs_extents());
        a.operand_alignment = assume_operand_alignment({&a.lhs, &a.rhs}, V * a.lhs.type().bytes());
        // The output's feature extents are known too: with kNTile * kNRegTile * kVecWidth dividing
        // them, the feature tiles need no shifted tail and their starts stay provably aligned.
        for (int d = 0; d < a.layout.rank(); d++)
            a.out.output_buffers()[0].dim(d).set_extent(static_cast<int>(a.layout.extents[static_cast<size_t>(d)]));
    }
    // Relabeled sources before everything else: the other forms take their gather from a.acc.
    if (relabel) relabel_sources(a);
    // The lane form first: split_rows and bind_rows build on a.acc (which max/min replace).
    NnzLanes lanes;
    if (L > 1) lanes = split_nnz_lanes(a, L);
    const bool tails = row_tails(s) != 0;
    if (tails) split_row_tails(a, split);
    else split_rows(a, split, tile);
    const bool segmented = rows_split(a);
    // The stage that owns the per-row reduction: the output, or the segments' partial results.
    Func rows = segmented ? a.partial : a.out;
    Expr row_of_block = Internal::Variable::make(Int(32), rows.name() + ".s0.v.vo.__block_id_x") * M;
    if (balance) {
        // bind_buffer: position v computes row row_order(v) (balancedIdx, or the locality order with
        // rowBalance = 2: graph/locality_order.h); the row structure is read for that
        // row, and the output stores are remapped by the BindBufferStores pass.
        a.rows_bound = true;
        a.locality_rows = s.get("rowBalance") == 2;
        a.row_order = ImageParam(Int(32), 1, "row_order");
        a.row_order.dim(0).set_min(0);
        Expr row = unsafe_promise_clamped(a.row_order(a.v), 0, a.row_ptr.dim(0).extent() - 2);
        std::vector<Func> bound = {a.acc, a.nbr, a.eid, a.out};
        if (L > 1) bound.push_back(lanes.lanes);
        ext::bind_rows(bound, a.v, row, {a.row_ptr.name()});
        std::vector<std::string> names;
        for (const auto &buf : a.out.output_buffers()) names.push_back(buf.name());
        // The warp-shuffle lowering of lane kernels let-binds store indices.
        if (L > 1) a.lowering_passes.push_back(std::make_shared<ext::StoreIndexLets>(names));
        a.lowering_passes.push_back(std::make_shared<ext::BindBufferStores>(names, rank, a.row_order.parameter()));
    }
    if (relabel) {
        // Row v of the relabeled graph is row src_order(v): only the output stores are remapped (the
        // row structure bound at run time is already the relabeled graph's).
        std::vector<std::string> names;
        for (const auto &buf : a.out.output_buffers()) names.push_back(buf.name());
        // (With segments, the output is a stage of its own, outside the lanes' shuffles.)
        if (L > 1 && !segmented) a.lowering_passes.push_back(std::make_shared<ext::StoreIndexLets>(names));
        a.lowering_passes.push_back(std::make_shared<ext::BindBufferStores>(names, rank, a.src_order.parameter()));
        if (a.uses_lhs()) {
            // The source features in the new order: one pass over them, a thread per element,
            // consecutive threads along the rows (coalesced loads and stores). The feature extents are
            // known, so the stage's rows keep the operand's layout and vector loads stay aligned.
            Func &x = a.lhs_relabeled;
            std::vector<Var> args = x.args();
            const std::vector<int64_t> extents = a.layout.lhs_extents();
            for (int d = 0; d < rank; d++)
                x.bound(args[static_cast<size_t>(d)], 0, static_cast<int>(extents[static_cast<size_t>(d)]));
            Var fused = args[0];
            for (size_t d = 1; d < args.size(); d++) {
                Var next("fused" + std::to_string(d));
                x.fuse(fused, args[d], next);
                fused = next;
            }
            Var xo("xo"), xi("xi");
            x.compute_root().gpu_tile(fused, xo, xi, 256, TailStrategy::GuardWithIf);
        }
    }

    // Buffers start at 0, so block ids map to rows without offsets. (Further outputs of a Tuple
    // share the first one's mins and extents.)
    for (int d = 0; d <= rank; d++) a.out.output_buffers()[0].dim(d).set_min(0);
    a.row_ptr.dim(0).set_min(0);

    Var fo("fo"), fi("fi"), fr("fr"), ft("ft"), vo("vo"), vi("vi");
    Var f0 = a.f[0];
    // Blocks: x = row blocks (up to 2^31 - 1 of them), y = feature blocks, z = heads (extra feature
    // dims, fused).
    auto map_blocks = [&](Func &func) {
        if (rank == 1) {
            func.gpu_blocks(vo, fo);
            return;
        }
        Var heads = a.f[1];
        for (int d = 2; d < rank; d++) func.fuse(heads, a.f[d], heads);
        func.gpu_blocks(vo, fo, heads);
    };
    std::vector<VarOrRVar> order = {fr, ft, vi, vo, fo};
    for (int d = 1; d < rank; d++) order.push_back(a.f[d]);

    if (L > 1) {
        // Threads (lane, feature, row): a unit lane loop `fl` is the rows stage's innermost thread
        // dimension, so its body (the lane combine and the store) runs on lane 0 of each row,
        // while `lanes` runs its own loop over all L lanes at the feature thread (outside fl).
        Var fl("fl");
        std::vector<VarOrRVar> lane_order = {fl, ft, vi, vo, fo};
        for (int d = 1; d < rank; d++) lane_order.push_back(a.f[d]);
        rows.split(f0, fo, ft, T, TailStrategy::ShiftInwards)
            .split(a.v, vo, vi, M, TailStrategy::GuardWithIf)
            .split(ft, ft, fl, 1)
            .reorder(lane_order)
            .gpu_threads(fl, ft, vi);
        map_blocks(rows);
        a.acc.compute_at(rows, fl).update().unroll(lanes.combine);  // straight-line shuffles
        lanes.lanes.compute_at(rows, ft).gpu_lanes(lanes.lane);
        const int U = static_cast<int>(nnz_unroll(s));
        if (U > 1) {
            // Each lane issues U independent neighbour-id and feature loads per step.
            RVar koo("koo"), koi("koi");
            lanes.lanes.update()
                .split(lanes.ko, koo, koi, U, TailStrategy::GuardWithIf)
                .reorder(koi, lanes.lane, koo)
                .unroll(koi)
                .gpu_lanes(lanes.lane);
            // Without if-conversion the U steps' loads would still wait for each other's guards.
            // Every position the steps read is clamped into col_idx by the ragged-bounds pass.
            std::set<std::string> speculable = {a.row_ptr.name(), a.col_idx.name(), a.edge_ids.name(), a.lhs.name(),
                                                a.rhs.name()};
            a.lowering_passes.push_back(std::make_shared<ext::SpeculateGuardedUpdates>(
                lanes.lanes.name() + ".s1.", ".koo", std::move(speculable)));
        } else {
            lanes.lanes.update().reorder(lanes.lane, lanes.ko).gpu_lanes(lanes.lane);
        }
        a.row_tile = M;
        a.large_buffers = false;
    } else {
        // Feature f = fo * (T*R*V) + fr * (T*V) + ft * V + fv: thread ft owns V consecutive features
        // (one vector load) and kNRegTile such groups at stride T*V. Tiles up to the innermost
        // extent shift inwards; one tile wider than it is guarded by feature group (threads past the
        // row's end idle: guarded_feature_tiles).
        Var fv("fv"), fw("fw");
        std::vector<VarOrRVar> vorder = {fv, fr, ft, vi, vo, fo};
        for (int d = 1; d < rank; d++) vorder.push_back(a.f[d]);
        const bool guarded = guarded_feature_tiles(s, a.layout.extents[0]);
        // The same feature split for the rows' stage and the accumulators' (`tail`: the unguarded
        // tiles' tail strategy).
        auto split_features = [&](auto &&stage, TailStrategy tail) -> decltype(auto) {
            if (!guarded) return stage.split(f0, fo, fi, T * R * V, tail).split(fi, fr, fw, T * V).split(fw, ft, fv, V);
            // Groups of V first (V divides the extent), then the guarded tiles of T*R groups: the
            // guard tests the group, outside the vector loop.
            Var fg("fg");
            return stage.split(f0, fg, fv, V).split(fg, fo, fi, T * R, TailStrategy::GuardWithIf).split(fi, fr, ft, T);
        };
        split_features(rows, TailStrategy::ShiftInwards)
            .split(a.v, vo, vi, M, TailStrategy::GuardWithIf)
            .reorder(vorder)
            .unroll(fr)
            .gpu_threads(ft, vi);
        if (V > 1) {
            rows.vectorize(fv);
            // The stage reducing rows (the output, or the segments' partials) covers the known
            // feature extent exactly, so tile starts stay provably aligned.
            if (segmented) rows.bound(f0, 0, static_cast<int>(a.layout.extents[0]));
        }
        map_blocks(rows);

        // Per-thread register accumulators for the block's rows and features.
        a.acc.compute_at(rows, vo).store_in(MemoryType::Register).bound_extent(a.v, M);
        split_features(a.acc, TailStrategy::Auto);
        a.acc.reorder(fv, fr, ft, a.v, fo).unroll(fr).gpu_threads(ft, a.v);
        if (V > 1) a.acc.vectorize(fv);
        Stage upd = a.acc.update();
        split_features(upd, TailStrategy::Auto);
        if (V > 1) upd.vectorize(fv);
        RVar k = a.k.x;
        if (smem) {
            RVar ko("ko"), ki("ki");
            upd.split(k, ko, ki, KT, TailStrategy::GuardWithIf).reorder(fv, fr, ki, ft, a.v, ko, fo);
            upd.unroll(fr).gpu_threads(ft, a.v);
            Var kvo("kvo"), kvi("kvi");
            a.nbr.compute_at(a.acc, ko)
                .store_in(MemoryType::GPUShared)
                .bound_extent(a.kv, KT)
                .split(a.kv, kvo, kvi, std::min(T, KT))
                .gpu_threads(kvi, a.v);
            a.lowering_passes.push_back(std::make_shared<ext::BlockUniformLoop>(
                a.acc.name() + ".s1." + k.name() + ".ko",
                ext::block_max_chunks(a.row_ptr.parameter(), row_of_block, M, KT,
                                      balance ? a.row_order.parameter() : Internal::Parameter())));
        } else {
            upd.reorder(fv, fr, k, ft, a.v, fo).unroll(fr).gpu_threads(ft, a.v);
        }
        a.row_tile = M;
    }

    if (tails) schedule_row_tails(a);
    if (segmented) {
        // Segments' results go to a device buffer; rows then combine their few segments.
        a.partial.compute_root();
        a.out.split(f0, fo, ft, T, TailStrategy::ShiftInwards)
            .split(a.v, vo, vi, M, TailStrategy::GuardWithIf)
            .reorder([&] {
                std::vector<VarOrRVar> o = {ft, vi, vo, fo};
                for (int d = 1; d < rank; d++) o.push_back(a.f[d]);
                return o;
            }())
            .gpu_threads(ft, vi);
        map_blocks(a.out);
        a.comb.compute_at(a.out, ft);
    }
    // Each thread's copy of the block-level accumulator tile holds only the thread's own R·V
    // outputs, at constant indices: registers rather than a local-memory copy of the whole tile.
    a.lowering_passes.push_back(std::make_shared<ext::CompactThreadAllocations>());
    if (V > 1) {
        // Accumulator tiles left in the thread's local frame get the alignment of their vector
        // accesses. Last: the retyped allocations no longer match their accesses' types, which
        // Halide's simplifier (run by passes such as BlockUniformLoop) does not expect.
        a.lowering_passes.push_back(std::make_shared<ext::AlignLocalAllocations>());
    }
}

}  // namespace

ScheduleParams gpu_spmm_expert_default(const Problem &p) { return expert_params(p); }

RowTailLayout row_tail_layout(int64_t f0, int64_t max_vec) {
    RowTailLayout l;
    l.V = f0 % 4 == 0 ? 4 : f0 % 2 == 0 ? 2 : 1;
    if (max_vec > 0) l.V = static_cast<int>(std::min<int64_t>(l.V, max_vec));
    const int64_t groups = f0 / l.V;
    for (int64_t t = std::min<int64_t>(32, groups); t >= 1; t--)
        if (groups % t == 0) {
            l.T = static_cast<int>(t);
            break;
        }
    l.M = std::max(1, 128 / l.T);
    return l;
}

int gpu_spmm_register_limit(const SpmmSpec &spec, const ScheduleParams &s) {
    if (s.schedule != kName || !register_limits_enabled() || !uses_rhs(spec.op)) return 0;
    if (spec.reduce != ReduceOp::Sum && spec.reduce != ReduceOp::Mean) return 0;
    const bool whole_rows = s.get_or("kRowSplit", 0) == 0 && row_tails(s) == 0 && s.get_or("smemColIdx", 0) == 0 &&
                            src_tile(s) == 0 && s.get_or("rowBalance", 0) == 0;
    return whole_rows && vec_width(s) == 1 ? kRegisterLimitScalarEdgeRows : 0;
}

std::optional<ScheduleParams> gpu_spmm_row_tails_form(const ScheduleParams &rows, const Problem &p) {
    if (rows.schedule != kName || p.stats.nnz <= 0 || !row_tails_defaults_enabled()) return std::nullopt;
    ScheduleParams t = rows;
    t.values["kRowSplit"] = kRowTailsGateSplit;
    t.values["rowTails"] = 1;
    if (invalid_reason(t, p)) return std::nullopt;
    return t;
}

SpmmScheduleDef gpu_spmm_schedule() {
    return {kName, Device::CUDA, space, default_params, invalid_reason, apply, canonical};
}

}  // namespace gsparse
