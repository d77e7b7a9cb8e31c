// Schedule gpu_sddmm: the CUDA schedule of g-SDDMM, edge-parallel as in the paper's Fig. 7.
//
//   out   blocks of kMTile edges (grid x) times the fused extra feature dims (grid y); kLaneWidth
//         threads per edge.
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
//   other ops (element-wise): each edge's output row is computed by its kLaneWidth lanes at stride
//         kLaneWidth, so loads and stores of a warp are coalesced.
//
// Blocks of the last edge tile read index entries past the last edge: the device copies of the COO
// arrays are padded to kMaxEdgeTile (runtime/device_graph.h), and gathered ids stay within the nodes.
#include <algorithm>

#include "ops/dense_operands.h"
#include "schedules/gpu_schedules.h"

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
             {"kVecWidth", {1, 2, 4}, "dot: consecutive features each lane loads with one vector load"}}};
}

std::optional<std::string> invalid_reason(const ScheduleParams &s, const Problem &p) {
    const int64_t M = s.get("kMTile"), L = s.get("kLaneWidth"), V = s.get("kVecWidth");
    if (!pow2(M)) return "kMTile must be a power of two >= 1, got " + std::to_string(M);
    if (!pow2(L) || L > 32) return "kLaneWidth must be a power of two in [1, 32], got " + std::to_string(L);
    if (M > kMaxSddmmEdgeTile)
        return "kMTile = " + std::to_string(M) + " exceeds " + std::to_string(kMaxSddmmEdgeTile) + " edges";
    if (M * L > 1024) return "kMTile * kLaneWidth = " + std::to_string(M * L) + " threads exceed 1024 per block";
    if (M * L < 32) return "kMTile * kLaneWidth = " + std::to_string(M * L) + " threads is less than a warp";
    if (V != 1 && V != 2 && V != 4) return "kVecWidth must be 1, 2 or 4, got " + std::to_string(V);
    const int64_t ext = lane_extent(p.layout);
    if (V > 1 && p.layout.reduce_len == 0) return "kVecWidth > 1 applies to dot only";
    if (V > 1 && ext % V != 0)
        return "kVecWidth " + std::to_string(V) + " does not divide the reduced feature length " + std::to_string(ext) +
               " (rows would not be aligned for vector loads)";
    if (p.layout.reduce_len > 0 && L * V > 1 && L * V > ext)
        return "kLaneWidth * kVecWidth = " + std::to_string(L * V) + " exceeds the reduced feature length " +
               std::to_string(ext);
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
    return s;
}

void apply(SddmmAlgorithm &a, const ScheduleParams &s) {
    const int M = static_cast<int>(s.get("kMTile")), L = static_cast<int>(s.get("kLaneWidth"));
    // Vector loads rely on the register (warp-shuffle) form, which needs 32-bit indexing.
    const int V = a.large_buffers ? 1 : static_cast<int>(s.get("kVecWidth"));
    const int rank = a.layout.rank();
    const bool is_dot = a.layout.reduce_len > 0;
    // Buffers start at 0, so block ids map to edges without offsets.
    for (int d = 0; d <= rank; d++) a.out.output_buffer().dim(d).set_min(0);

    Var eo("eo"), ei("ei"), el("el"), fo("fo"), ft("ft");
    // Extra feature dims (heads) fused on grid y.
    Var heads = a.f[0];
    auto map_blocks = [&](Func &func, int first_head_dim) {
        if (first_head_dim >= rank) {
            func.gpu_blocks(eo);
            return;
        }
        heads = a.f[first_head_dim];
        for (int d = first_head_dim + 1; d < rank; d++) func.fuse(heads, a.f[d], heads);
        func.gpu_blocks(eo, heads);
    };

    if (!is_dot) {
        // Lanes along the innermost feature dim, each lane looping over its strided features.
        std::vector<VarOrRVar> order = {fo, ft, ei, eo};
        for (int d = 1; d < rank; d++) order.push_back(a.f[d]);
        a.out.split(a.f[0], fo, ft, L, TailStrategy::GuardWithIf)
            .split(a.e, eo, ei, M, TailStrategy::GuardWithIf)
            .reorder(order)
            .gpu_threads(ft, ei);
        map_blocks(a.out, 1);
        return;
    }

    // dot: every output feature dim (heads) on the grid, kLaneWidth lanes per edge.
    std::vector<VarOrRVar> order = {el, ei, eo};
    for (int d = 0; d < rank; d++) order.push_back(a.f[d]);
    a.out.split(a.e, eo, ei, M, TailStrategy::GuardWithIf).split(ei, ei, el, 1).reorder(order).gpu_threads(el, ei);
    map_blocks(a.out, 0);
    a.dot.compute_at(a.out, el);
    if (L * V == 1) return;
    // Partial sums: lane l of an edge accumulates features [l*V, l*V + V) + k*L*V.
    RVar ro("ro"), ri("ri"), rl("rl"), rv("rv");
    Var u("u"), ul("ul"), uv("uv"), lane("lane");
    Func partial = a.dot.update().split(a.r.x, ro, ri, L * V, TailStrategy::GuardWithIf).rfactor(ri, u);
    // Vector loads of V features assume rows aligned to V elements (the operands are dense).
    if (V > 1) a.operand_alignment = assume_operand_alignment({&a.lhs, &a.rhs}, V * a.lhs.type().bytes());
    if (L == 1) {
        // One lane per edge: the V partials are the thread's own vector register.
        partial.compute_at(a.out, el).store_in(MemoryType::Register).bound_extent(a.e, 1).vectorize(u);
        for (const Var &fv : a.f) partial.bound_extent(fv, 1);
        partial.update().reorder(u, ro).vectorize(u);
        return;
    }
    // With vectors, each lane first adds up its own V partials (a register access, no shuffle).
    Func lanes = V > 1 ? a.dot.update().split(ri, rl, rv, V).rfactor(rl, lane) : partial;
    auto per_edge = [&](Func f) {
        f.bound_extent(a.e, 1);
        for (const Var &fv : a.f) f.bound_extent(fv, 1);
    };
    if (!a.large_buffers) {
        // In registers: the warp-shuffle lowering needs a constant register allocation indexed by the
        // lane (and 32-bit indexing).
        partial.compute_at(a.out, ei).store_in(MemoryType::Register);
        per_edge(partial);
        if (V > 1) {
            partial.split(u, ul, uv, V).gpu_lanes(ul).vectorize(uv);
            partial.update().split(u, ul, uv, V).reorder(uv, ro, ul).gpu_lanes(ul).vectorize(uv);
            lanes.compute_at(a.out, ei).store_in(MemoryType::Register).gpu_lanes(lane);
            per_edge(lanes);
            lanes.update().unroll(rv).gpu_lanes(lane);
        } else {
            partial.gpu_lanes(u);
            partial.update().gpu_lanes(u);
        }
        return;
    }
    // With 64-bit indexing the partials of the block's edges go through shared memory instead.
    partial.compute_at(a.out, eo).store_in(MemoryType::GPUShared).bound_extent(a.e, M).reorder(u, a.e).gpu_threads(u, a.e);
    for (const Var &fv : a.f) partial.bound_extent(fv, 1);
    partial.update().reorder(ro, u, a.e).gpu_threads(u, a.e);
}

}  // namespace

SddmmScheduleDef gpu_sddmm_schedule() { return {kName, Device::CUDA, space, default_params, invalid_reason, apply}; }

}  // namespace gsparse
