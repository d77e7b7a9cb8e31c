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
#include <algorithm>

#include "halide_ext/bind_buffer.h"
#include "halide_ext/block_uniform_loop.h"
#include "schedules/gpu_schedules.h"

namespace gsparse {

using namespace Halide;

namespace {

const char *kName = "gpu_spmm";

ScheduleSpace space(const Problem &) {
    return {kName,
            {{"kMTile", {1, 2, 4, 8, 16, 32}, "rows per thread block"},
             {"kNTile", {1, 2, 4, 8, 16, 32, 64, 128}, "threads along the innermost feature dimension"},
             {"kNRegTile", {1, 2, 4, 8}, "outputs per thread at stride kNTile"},
             {"kNnzTile", {16, 32, 64, 128}, "nonzeros of a row staged per step"},
             {"smemColIdx", {0, 1}, "stage neighbour ids in shared memory"},
             {"kRowSplit", {0, 256, 1024, 4096}, "split rows into segments of at most this many nonzeros (0: whole rows)"},
             {"rowBalance", {0, 1}, "blocks take rows in balancedIdx order, longest first (bind_buffer)"}}};
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
    if (balance != 0 && balance != 1) return "rowBalance must be 0 or 1, got " + std::to_string(balance);
    if (balance && split) return "rowBalance orders whole rows; it cannot be combined with kRowSplit";
    if (T * R > f0)
        return "kNTile * kNRegTile = " + std::to_string(T * R) + " exceeds the innermost feature extent " +
               std::to_string(f0);
    if (M * T > 1024) return "kMTile * kNTile = " + std::to_string(M * T) + " threads exceed 1024 per block";
    if (M * T < 32) return "kMTile * kNTile = " + std::to_string(M * T) + " threads is less than a warp";
    if (R > 8) return "kNRegTile above 8 spills registers";
    if (smem) {
        const int64_t bytes = KT * M * 4;
        if (bytes > 48 * 1024) return "shared tile of " + std::to_string(bytes) + " bytes exceeds 48 KiB";
        if (KT % std::min(T, KT) != 0) return "kNnzTile must be a multiple of kNTile";
    }
    return std::nullopt;
}

ScheduleParams default_params(const Problem &p) {
    const int64_t f0 = p.layout.extents[0];
    const bool skewed = p.stats.max_row_length > 8 * std::max(1.0, p.stats.avg_row_length);
    ScheduleParams s;
    s.schedule = kName;
    // Expert defaults per feature-length band, from H100 measurements on the reddit twin
    // (benchmarks/results): below a warp's worth of features, one thread per feature and many rows
    // per block; from 32 features a warp per row with 64-nonzero shared tiles; from 64 features two
    // rows per block and two outputs per thread. Rows far longer than the average are split.
    int64_t M, T, R = 1, KT = 64, split = 0;
    if (f0 < 32) {
        T = 1;
        while (T * 2 <= f0) T *= 2;
        M = std::min<int64_t>(32, std::max<int64_t>(128 / T, 32 / T));
        KT = 32;
        split = skewed ? 1024 : 0;
    } else if (f0 < 64) {
        M = 8, T = 32;
        split = skewed ? 256 : 0;
    } else {
        M = 2, T = 32, R = 2;
        split = skewed ? 1024 : 0;
    }
    s.values = {{"kMTile", M}, {"kNTile", T}, {"kNRegTile", R}, {"kNnzTile", KT},
                {"smemColIdx", 1}, {"kRowSplit", split}, {"rowBalance", 0}};
    return s;
}

void apply(SpmmAlgorithm &a, const ScheduleParams &s) {
    const int M = static_cast<int>(s.get("kMTile")), T = static_cast<int>(s.get("kNTile")),
              R = static_cast<int>(s.get("kNRegTile")), KT = static_cast<int>(s.get("kNnzTile"));
    const bool smem = s.get("smemColIdx") != 0;
    const int split = static_cast<int>(s.get("kRowSplit"));
    const int rank = a.layout.rank();
    const bool balance = s.get("rowBalance") != 0;
    if (split > 0) split_rows(a, split);
    // The stage that owns the per-row reduction: the output, or the segments' partial results.
    Func rows = split > 0 ? a.partial : a.out;
    Expr row_of_block = Internal::Variable::make(Int(32), rows.name() + ".s0.v.vo.__block_id_x") * M;
    if (balance) {
        // bind_buffer: position v computes row balancedIdx(v); the row structure is read for that
        // row, and the output stores are remapped by the BindBufferStores pass.
        a.rows_bound = true;
        a.row_order = ImageParam(Int(32), 1, "row_order");
        a.row_order.dim(0).set_min(0);
        Expr row = unsafe_promise_clamped(a.row_order(a.v), 0, a.row_ptr.dim(0).extent() - 2);
        ext::bind_rows({a.acc, a.nbr, a.eid, a.out}, a.v, row, {a.row_ptr.name()});
        std::vector<std::string> names;
        for (const auto &buf : a.out.output_buffers()) names.push_back(buf.name());
        a.lowering_passes.push_back(std::make_shared<ext::BindBufferStores>(names, rank, a.row_order.parameter()));
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

    rows.split(f0, fo, fi, T * R, TailStrategy::ShiftInwards)
        .split(fi, fr, ft, T)
        .split(a.v, vo, vi, M, TailStrategy::GuardWithIf)
        .reorder(order)
        .unroll(fr)
        .gpu_threads(ft, vi);
    map_blocks(rows);

    // Per-thread register accumulators for the block's rows and features.
    a.acc.compute_at(rows, vo).store_in(MemoryType::Register).bound_extent(a.v, M);
    a.acc.split(f0, fo, fi, T * R).split(fi, fr, ft, T).reorder(fr, ft, a.v, fo).unroll(fr).gpu_threads(ft, a.v);
    Stage upd = a.acc.update();
    upd.split(f0, fo, fi, T * R).split(fi, fr, ft, T);
    RVar k = a.k.x;
    if (smem) {
        RVar ko("ko"), ki("ki");
        upd.split(k, ko, ki, KT, TailStrategy::GuardWithIf).reorder(fr, ki, ft, a.v, ko, fo);
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
        upd.reorder(fr, k, ft, a.v, fo).unroll(fr).gpu_threads(ft, a.v);
    }
    a.row_tile = M;

    if (split > 0) {
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
}

}  // namespace

SpmmScheduleDef gpu_spmm_schedule() { return {kName, Device::CUDA, space, default_params, invalid_reason, apply}; }

}  // namespace gsparse
