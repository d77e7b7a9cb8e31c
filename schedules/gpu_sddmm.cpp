// Schedule gpu_sddmm: the CUDA schedule of g-SDDMM, edge-parallel as in the paper's Fig. 7.
//
//   out   blocks of kMTile * kMRegTile edges (grid x) times the fused extra feature dims (grid y);
//         kLaneWidth threads per edge. With kMRegTile = R > 1 every thread computes R edges at stride
//         kMTile (a serial loop outside the block's thread loops, unrolled), so the index and
//         feature loads of R edges are in flight together and a warp's index loads and output
//         stores stay coalesced. It lets a wide lane group (one line-sized load per edge row) keep
//         as many loads in flight as a narrow one.
//   dot   the reduction over the feature length is split over the kLaneWidth lanes of an edge:
//         lane l accumulates features l, l + kLaneWidth, ... (neighbouring lanes read neighbouring
//         features, so loads are coalesced), then the lanes' partial sums are combined. The
//         partials are an rfactor of the reduction whose lane dimension is scheduled gpu_lanes, so
//         Halide's warp-shuffle lowering turns the combine into shfl.sync instructions with lane
//         groups narrower than a warp when kLaneWidth < 32. That lowering needs 32-bit indexing;
//         kernels compiled with large_buffers combine the partials through shared memory (and load
//         one feature at a time).
//         With kVecWidth = V, lane l owns features [l*V, l*V + V) of every L*V-feature step and
//         loads them with one vector load; it adds up its V partials before the shuffles.
//         With kFeatChunk = C > 0, dot runs in passes over chunks of C features: the reduction is
//         split into chunks (an rfactor over the chunk index) and the chunk loop is placed outside
//         the kernel, so each pass is one launch that adds a chunk's partial dot products into a
//         per-edge accumulator. The blocks of a pass gather only C features of each node, so for
//         long feature rows the gathered slice of the operands stays in L2 instead of streaming
//         every row from DRAM once per edge. The accumulator is zeroed and copied to the output by
//         two element-wise kernels.
//   groupByDst = 1: edges are processed in destination order (the graph's CSR order, the COO arrays
//         given in that order) and position e computes edge edge_of(e): edge-indexed operands are
//         read at that id (bind_rows) and the output stores are remapped to it by the
//         BindBufferStores pass, so results land in edge-id order. Neighbouring threads then share
//         their destination node's feature row. Applies to every op.
//   other ops (element-wise): each edge's output row is computed by its kLaneWidth lanes at stride
//         kLaneWidth, so loads and stores of a warp are coalesced.
//
// Blocks of the last edge tile read index entries past the last edge: the device copies of the COO
// arrays are padded to kMaxEdgeTile (runtime/device_graph.h), and gathered ids stay within the nodes.
#include <algorithm>

#include "halide_ext/butterfly_lane_reductions.h"
#include "ops/dense_operands.h"
#include "schedules/gpu_schedules.h"
#include "schedules/sddmm_edge_order.h"

namespace gsparse {

using namespace Halide;

namespace {

const char *kName = "gpu_sddmm";

bool pow2(int64_t x) { return x >= 1 && (x & (x - 1)) == 0; }

/// The extent the lanes of an edge cover: the reduced length for dot, else the innermost output dim.
int64_t lane_extent(const FeatureLayout &l) { return l.reduce_len > 0 ? l.reduce_len : l.extents[0]; }

ScheduleSpace space(const Problem &) {
    return {kName,
            {{"kMTile", {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, "edges per thread block"},
             {"kLaneWidth", {1, 2, 4, 8, 16, 32}, "lanes per edge (dot: reduced with warp shuffles)"},
             {"kVecWidth", {1, 2, 4}, "dot: consecutive features each lane loads with one vector load"},
             {"kFeatChunk", {0, 32, 64, 128}, "dot: features per pass (0: one pass over all features)", 0},
             {"kMRegTile", {1, 2, 4}, "edges per thread, at stride kMTile", 1},
             group_by_dst_knob(true), src_tile_knob(true)}};
}

int64_t feat_chunk(const ScheduleParams &s) { return s.get_or("kFeatChunk", 0); }
int64_t edge_reg_tile(const ScheduleParams &s) { return s.get_or("kMRegTile", 1); }

std::optional<std::string> invalid_reason(const ScheduleParams &s, const Problem &p) {
    const int64_t M = s.get("kMTile"), L = s.get("kLaneWidth"), V = s.get("kVecWidth");
    if (!pow2(M)) return "kMTile must be a power of two >= 1, got " + std::to_string(M);
    if (!pow2(L) || L > 32) return "kLaneWidth must be a power of two in [1, 32], got " + std::to_string(L);
    if (M > kMaxSddmmEdgeTile)
        return "kMTile = " + std::to_string(M) + " exceeds " + std::to_string(kMaxSddmmEdgeTile) + " edges";
    if (M * L > 1024) return "kMTile * kLaneWidth = " + std::to_string(M * L) + " threads exceed 1024 per block";
    if (M * L < 32) return "kMTile * kLaneWidth = " + std::to_string(M * L) + " threads is less than a warp";
    const int64_t R = edge_reg_tile(s);
    if (!pow2(R) || R > 8) return "kMRegTile must be a power of two in [1, 8], got " + std::to_string(R);
    if (M * R > kMaxSddmmEdgeTile)
        return "kMTile * kMRegTile = " + std::to_string(M * R) + " edges per block exceed " +
               std::to_string(kMaxSddmmEdgeTile);
    if (p.layout.reduce_len > 0 && L > 1 && dtype_size(p.dtype) > 4)
        return std::string("dot's lanes combine with warp shuffles, which move 32 bits (Halide 14): ") +
               dtype_name(p.dtype) + " features take kLaneWidth = 1";
    // One edge-thread a block (kMTile = 1 leaves a single warp of lanes) with several edges per
    // thread: Halide 14's PTX code generation fails on dot's lane partials ("Name not in Scope:
    // sddmm_dot..._intm"; seen in the F = 128 sweeps, H100, 2026-11-23).
    if (p.layout.reduce_len > 0 && M == 1 && R > 1)
        return "kMRegTile > 1 with kMTile = 1 does not compile for dot (Halide 14 warp-shuffle lowering); use "
               "kMTile >= 2";
    if (V != 1 && V != 2 && V != 4) return "kVecWidth must be 1, 2 or 4, got " + std::to_string(V);
    const int64_t ext = lane_extent(p.layout);
    if (V > 1 && p.layout.reduce_len == 0) return "kVecWidth > 1 applies to dot only";
    if (V > 1 && ext % V != 0)
        return "kVecWidth " + std::to_string(V) + " does not divide the reduced feature length " + std::to_string(ext) +
               " (rows would not be aligned for vector loads)";
    if (p.layout.reduce_len > 0 && L * V > 1 && L * V > ext)
        return "kLaneWidth * kVecWidth = " + std::to_string(L * V) + " exceeds the reduced feature length " +
               std::to_string(ext);
    if (auto why = edge_order_invalid(s)) return why;
    const int64_t C = feat_chunk(s);
    if (C != 0) {
        if (!pow2(C)) return "kFeatChunk must be 0 or a power of two, got " + std::to_string(C);
        if (p.layout.reduce_len == 0) return "kFeatChunk applies to dot only";
        if (C >= ext || ext % C != 0)
            return "kFeatChunk " + std::to_string(C) + " must divide the reduced feature length " +
                   std::to_string(ext) + " into two or more chunks";
        if (edge_reg_tile(s) > 1) return "kMRegTile > 1 needs a single pass over the features (kFeatChunk = 0)";
        if (C % (L * V) != 0)
            return "kFeatChunk " + std::to_string(C) + " is not a multiple of kLaneWidth * kVecWidth = " +
                   std::to_string(L * V);
    }
    if (L > 1 && L > ext)
        return "kLaneWidth " + std::to_string(L) + " exceeds the " +
               (p.layout.reduce_len > 0 ? "reduced feature length " : "innermost feature extent ") +
               std::to_string(ext);
    return std::nullopt;
}

ScheduleParams default_params(const Problem &p) {
    // Expert defaults: lanes grow with the feature length (dot: F < 4 one lane, < 16 two, < 64 four,
    // < 128 eight, < 256 sixteen, else a full warp); 256 threads per block.
    const int64_t ext = lane_extent(p.layout);
    int64_t L = 1;
    if (p.layout.reduce_len > 0) {
        for (auto [bound, lanes] : {std::pair<int64_t, int64_t>{4, 2}, {16, 4}, {64, 8}, {128, 16}, {256, 32}})
            if (ext >= bound) L = lanes;
    } else {
        while (L * 2 <= std::min<int64_t>(ext, 32)) L *= 2;
    }
    ScheduleParams s;
    s.schedule = kName;
    int64_t V = 1;
    while (p.layout.reduce_len > 0 && V < 4 && ext % (V * 2) == 0 && ext >= L * V * 2) V *= 2;
    s.values = {{"kMTile", 256 / L}, {"kLaneWidth", L}, {"kVecWidth", V}};
    // dot over rows of a multiple of 4 features from 8 on: 4-wide loads, lanes chosen so that one
    // lane group loads up to a 128-byte line of a row at once (4 lanes at F = 16, 8 from 32, 16 from
    // 256), and several edges per thread below F = 128 so that each thread keeps as many loads in
    // flight as a narrow group would (measured on an H200, 2026-11-22, reddit, ogbn-proteins and
    // ogbn-products twins: at F = 16 and 32 these points were 1.3x to 1.9x faster than one edge per
    // thread; at F >= 128 more edges per thread no longer paid). From 8 to 15 features (a row is a
    // sector or two) one lane per edge and 256 edges a block: the exhaustive sweeps of the three
    // twins at F = 8 on an H100 (2026-11-22) put it 1.005-1.05x ahead of 2 lanes x 2 edges a thread
    // and within 1.5% of the best point on reddit and ogbn-proteins.
    if (p.layout.reduce_len > 0 && ext >= 8 && ext % 4 == 0) {
        struct Band {
            int64_t from, lanes, edges_per_block, reg_tile;
        };
        constexpr Band bands[] = {{8, 1, 256, 1}, {16, 4, 32, 4}, {32, 8, 16, 4}, {64, 8, 16, 2},
                                  {128, 8, 32, 1}, {256, 16, 8, 2}};
        for (const Band &b : bands)
            if (ext >= b.from)
                s.values = {{"kMTile", b.edges_per_block}, {"kLaneWidth", b.lanes}, {"kVecWidth", 4},
                            {"kMRegTile", b.reg_tile}};
    }
    // Long feature rows of a graph whose 64-feature slices of the node rows fit in about the L2 of a
    // current GPU: dot in chunks of 64 features, 4 lanes of 4-wide loads, 32 edges a block (measured
    // on an H100, 2026-11-22: 1.2x to 1.9x faster than one pass on the reddit and ogbn-proteins twins
    // at F = 256..1024; no gain at F = 128, nor on ogbn-products, whose slices are 10x the L2).
    // Without graph statistics (ahead-of-time kernels) the form stays unchunked.
    const int64_t nodes = std::max(p.stats.num_rows, p.stats.num_cols);
    constexpr int64_t kChunk = 64, kSliceBudget = int64_t{64} << 20;
    if (p.layout.reduce_len > 0 && ext >= 4 * kChunk && ext % kChunk == 0 && nodes > 0 &&
        nodes * kChunk * 4 <= kSliceBudget)
        s.values = {{"kMTile", 32}, {"kLaneWidth", 4}, {"kVecWidth", 4}, {"kFeatChunk", kChunk}};
    // Source rows of 128 features or more that exceed about the L2 of a current GPU, on a graph dense
    // enough that a destination still has a run of several edges in every tile of 4096 sources: edges
    // grouped by source tiles, 8 lanes of 4-wide loads, 4 edges per thread (measured on an H100,
    // 2026-11-22, ogbn-proteins twin at F = 128..512: 1.3x to 2.1x faster than one tile, and faster
    // than the feature chunks above). Runtime-compiled kernels only: the grouped order needs the graph.
    const int64_t srcs = p.stats.num_cols, dsts = p.stats.num_rows, nnz = p.stats.nnz;
    constexpr int64_t kTile = 4096, kL2Budget = int64_t{48} << 20, kMinRun = 4;
    if (p.layout.reduce_len > 0 && ext >= 128 && ext % 4 == 0 && srcs > kTile && dsts > 0 &&
        srcs * ext * 4 > kL2Budget && nnz * kTile >= kMinRun * dsts * srcs)
        s.values = {{"kMTile", 16}, {"kLaneWidth", 8}, {"kVecWidth", 4}, {"kMRegTile", 4}, {"groupByDst", 1},
                    {"kSrcTile", kTile}};
    // Source rows of 8 features or more beyond about the L2 on a sparse graph (under a run of 4 edges
    // per destination in a tile of 4096 sources): the band's point in the destination order, grouped
    // by source tiles. The tile is the smallest power of two in which a destination keeps runs of
    // about 8 edges, and at most 64 MiB of source rows; a tile in which a destination's runs fall
    // under one edge keeps edge-id order. Measured on an H100, 2026-11-22, ogbn-products twin
    // (2.4 million sources, 50.5 edges a destination): exhaustive sweeps at F = 8 and 32 put tiles of
    // 524288 (runs of 10.8) 1.36x and 1.12x ahead of edge-id order, tiles of 131072 behind it; at
    // F = 64 / 128 / 256 the 64 MiB tiles (262144 / 131072 / 65536) took 7.72 / 16.21 / 38.56 ms where
    // 524288 took 7.97 / 18.15 / 40.10 and edge-id order 20.36 ms at F = 128 and 41.53 at 256
    // (benchmarks/results/2026-11-22-*-sddmm-source-tiles); at F = 512 every tile (runs of 1.4 or
    // more) was slower than edge-id order, as the rule's tile of 32768 would have runs of 0.7. The
    // dense twins, whose rows fit or which take the tiles of 4096 above, lose with any tile at F <= 32.
    constexpr double kRunPerTile = 8, kMinRunPerTile = 1;
    constexpr int64_t kTileBytes = int64_t{64} << 20;
    const double avg_row = dsts > 0 ? static_cast<double>(nnz) / static_cast<double>(dsts) : 0;
    auto run_in = [&](int64_t tile) { return avg_row * static_cast<double>(tile) / static_cast<double>(srcs); };
    if (p.layout.reduce_len > 0 && ext >= 8 && ext % 4 == 0 && srcs > 0 && avg_row > 0 && feat_chunk(s) == 0 &&
        srcs * ext * 4 > kL2Budget && static_cast<double>(nnz) * kTile < kMinRun * static_cast<double>(dsts) * srcs) {
        int64_t tile = 64;
        while (tile < srcs && run_in(tile) < kRunPerTile && tile * 2 * ext * 4 <= kTileBytes) tile *= 2;
        if (tile < srcs && run_in(tile) >= kMinRunPerTile) {
            s.values["groupByDst"] = 1;
            s.values["kSrcTile"] = tile;
        }
    }
    // 64-bit dot: one lane per edge (no shuffles), 256 edges a block, in the order chosen above.
    if (p.layout.reduce_len > 0 && dtype_size(p.dtype) > 4 && s.get("kLaneWidth") > 1) {
        for (const char *k : {"kVecWidth", "kFeatChunk", "kMRegTile"}) s.values.erase(k);
        s.values["kMTile"] = 256;
        s.values["kLaneWidth"] = 1;
        s.values["kVecWidth"] = 1;
    }
    return s;
}

void apply(SddmmAlgorithm &a, const ScheduleParams &s) {
    const int M = static_cast<int>(s.get("kMTile")), L = static_cast<int>(s.get("kLaneWidth"));
    // Shared-memory partials (large_buffers) are laid out for one edge per thread.
    const int R = a.large_buffers ? 1 : static_cast<int>(edge_reg_tile(s));
    // Vector loads rely on the register (warp-shuffle) form, which needs 32-bit indexing.
    const int V = a.large_buffers ? 1 : static_cast<int>(s.get("kVecWidth"));
    const int rank = a.layout.rank();
    const bool is_dot = a.layout.reduce_len > 0;
    // Buffers start at 0, so block ids map to edges without offsets.
    for (int d = 0; d <= rank; d++) a.out.output_buffer().dim(d).set_min(0);
    if (groups_by_dst(s)) group_by_destination(a, src_tile(s));

    Var eo("eo"), ei("ei"), er("er"), el("el"), fo("fo"), ft("ft");
    // Edges: e = eo * (M * R) + er * M + ei; threads over ei (and lanes), er unrolled in the thread.
    // With R > 1, graphs of at least M * R edges take a specialization whose last block shifts inwards
    // (it recomputes edges of the block before it) instead of guarding every edge: unguarded, the
    // loads of the R edges are one straight-line block the compiler can issue together. Smaller
    // graphs keep the guards.
    auto split_edges = [&](Stage st, TailStrategy tail) {
        st.split(a.e, eo, ei, M * R, tail);
        if (R > 1) st.split(ei, er, ei, M);
    };
    auto unroll_edges = [&](Stage st) {
        if (R > 1) st.unroll(er);
    };
    // The stages of `out` to schedule alike: the guarded general case, and with R > 1 first the
    // specialization for graphs with a full block of edges.
    auto out_stages = [&]() {
        std::vector<std::pair<Stage, TailStrategy>> stages;
        if (R > 1)
            stages.emplace_back(a.out.specialize(a.out.output_buffer().dim(rank).extent() >= M * R),
                                TailStrategy::ShiftInwards);
        stages.emplace_back(Stage(a.out), TailStrategy::GuardWithIf);
        return stages;
    };
    // Extra feature dims (heads) fused on grid y.
    auto map_blocks = [&](Stage st, int first_head_dim) {
        if (first_head_dim >= rank) {
            st.gpu_blocks(eo);
            return;
        }
        Var heads = a.f[first_head_dim];
        for (int d = first_head_dim + 1; d < rank; d++) st.fuse(heads, a.f[d], heads);
        st.gpu_blocks(eo, heads);
    };

    if (!is_dot) {
        // Lanes along the innermost feature dim, each lane looping over its strided features.
        std::vector<VarOrRVar> order = {fo, ft, ei};
        if (R > 1) order.push_back(er);
        order.push_back(eo);
        for (int d = 1; d < rank; d++) order.push_back(a.f[d]);
        for (auto [st, tail] : out_stages()) {
            st.split(a.f[0], fo, ft, L, TailStrategy::GuardWithIf);
            split_edges(st, tail);
            st.reorder(order).gpu_threads(ft, ei);
            unroll_edges(st);
            map_blocks(st, 1);
        }
        return;
    }

    // dot: every output feature dim (heads) on the grid, kLaneWidth lanes per edge. `red` is the Func
    // whose update reduces an edge's features (rvar: its reduction variable) and `home` the stage whose
    // edge loops it is computed in: dot in out's loops, or with feature chunks one chunk in the loops
    // of dot's per-chunk update.
    Func red = a.dot, home = a.out;
    RVar rvar = a.r.x;
    std::vector<Var> red_vars = a.f;
    auto edge_loops = [&](Stage st, TailStrategy tail, std::vector<VarOrRVar> outer) {
        std::vector<VarOrRVar> order = {el};
        if (R > 1) order.push_back(er);
        order.push_back(ei);
        order.push_back(eo);
        for (int d = 0; d < rank; d++) order.push_back(a.f[d]);
        order.insert(order.end(), outer.begin(), outer.end());
        split_edges(st, tail);
        st.split(ei, ei, el, 1).reorder(order).gpu_threads(el, ei);
        unroll_edges(st);
        map_blocks(st, 0);
    };
    if (const int C = static_cast<int>(feat_chunk(s)); C > 0) {
        // dot(e) += chunk(c, e) over the chunks, the chunk loop outside the kernel.
        RVar rc("rc"), rw("rw");
        Var c("c");
        Func chunk = a.dot.update().split(a.r.x, rc, rw, C).rfactor(rc, c);
        // The accumulator's zeroing and the output's copy: one thread per edge and head.
        const int copy_block = 256;
        std::vector<VarOrRVar> order = {ei, eo};
        order.insert(order.end(), a.f.begin(), a.f.end());
        for (Func f : {a.out, a.dot}) {
            f.split(a.e, eo, ei, copy_block, TailStrategy::GuardWithIf).reorder(order).gpu_threads(ei);
            map_blocks(f, 0);
        }
        a.dot.compute_root();
        edge_loops(a.dot.update(), TailStrategy::GuardWithIf, {rc});
        red = chunk;
        home = a.dot;
        rvar = rw;
        red_vars.push_back(c);
    } else {
        for (auto [st, tail] : out_stages()) edge_loops(st, tail, {});
    }
    red.compute_at(home, el);
    if (L * V == 1) return;
    // Partial sums: lane l of an edge accumulates features [l*V, l*V + V) + k*L*V.
    RVar ro("ro"), ri("ri"), rl("rl"), rv("rv");
    Var u("u"), ul("ul"), uv("uv"), lane("lane");
    Func partial = red.update().split(rvar, ro, ri, L * V, TailStrategy::GuardWithIf).rfactor(ri, u);
    // Vector loads of V features assume rows aligned to V elements (the operands are dense).
    if (V > 1) a.operand_alignment = assume_operand_alignment({&a.lhs, &a.rhs}, V * a.lhs.type().bytes());
    // Every Func computed per edge covers one edge (and one head, and one chunk).
    auto per_edge = [&](Func f) {
        f.bound_extent(a.e, 1);
        for (const Var &fv : red_vars) f.bound_extent(fv, 1);
    };
    if (L == 1) {
        // One lane per edge: the V partials are the thread's own vector register.
        partial.compute_at(home, el).store_in(MemoryType::Register).vectorize(u);
        per_edge(partial);
        partial.update().reorder(u, ro).vectorize(u);
        return;
    }
    // With vectors, each lane first adds up its own V partials (a register access, no shuffle).
    Func lanes = V > 1 ? red.update().split(ri, rl, rv, V).rfactor(rl, lane) : partial;
    if (!a.large_buffers) {
        // In registers: the warp-shuffle lowering needs a constant register allocation indexed by the
        // lane (and 32-bit indexing). The lanes' combine is then a butterfly of log2(L) shuffles.
        a.lowering_passes.push_back(std::make_shared<ext::ButterflyLaneReductions>());
        partial.compute_at(home, R > 1 ? er : ei).store_in(MemoryType::Register);
        per_edge(partial);
        if (V > 1) {
            partial.split(u, ul, uv, V).gpu_lanes(ul).vectorize(uv);
            partial.update().split(u, ul, uv, V).reorder(uv, ro, ul).gpu_lanes(ul).vectorize(uv);
            lanes.compute_at(home, R > 1 ? er : ei).store_in(MemoryType::Register).gpu_lanes(lane);
            per_edge(lanes);
            lanes.update().unroll(rv).gpu_lanes(lane);
        } else {
            partial.gpu_lanes(u);
            partial.update().gpu_lanes(u);
        }
        return;
    }
    // With 64-bit indexing the partials of the block's edges go through shared memory instead.
    partial.compute_at(home, eo).store_in(MemoryType::GPUShared).bound_extent(a.e, M).reorder(u, a.e).gpu_threads(u, a.e);
    for (const Var &fv : red_vars) partial.bound_extent(fv, 1);
    partial.update().reorder(ro, u, a.e).gpu_threads(u, a.e);
}

}  // namespace

SddmmScheduleDef gpu_sddmm_schedule() { return {kName, Device::CUDA, space, default_params, invalid_reason, apply}; }

}  // namespace gsparse
