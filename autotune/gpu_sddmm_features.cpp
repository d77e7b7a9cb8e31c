// Cost metrics of a gpu_sddmm point: launch geometry, per-edge work, access efficiency, bytes moved
// through L2 and DRAM per edge, and a roofline of per-edge time estimates (latency, issue, DRAM, L2,
// L1 requests) whose maximum is an analytic estimate of the kernel's time per edge.
//
// The kernel (schedules/gpu_sddmm.cpp): blocks of kMTile edge rows x kLaneWidth lanes; a lane reads
// kVecWidth consecutive features per load, a thread handles kMRegTile edges; the lanes of an edge
// combine their partial dot products with warp shuffles (32-bit indexing) or through shared memory
// (64-bit indexing, where kMRegTile and kVecWidth act as 1). kFeatChunk splits the features into
// passes that accumulate per edge; groupByDst with kSrcTile processes the edges destination by
// destination within tiles of kSrcTile source nodes, so a pass's gathers stay in L2.
//
// The work item is an edge of one head (multi-head layouts repeat everything per head); "per edge"
// below means per item. The metrics assume the operands of u_dot_v: a gathered source row and the
// destination's row, shared by the destination's consecutive edges (its run). Only the metrics of
// the processing order and of the caches read graph statistics (average row length, node counts,
// nonzeros); a model trained on one graph then meets another graph's values only through per-edge
// quantities, which keeps it transferable.
#include <algorithm>
#include <cmath>

#include "autotune/feature_writer.h"
#include "runtime/target.h"

namespace gsparse::autotune::detail {

namespace {

// H100 memory-system figures (beyond feature_writer.h's limits). L1_BYTES and the fixed block cost
// were set from measured g-SDDMM times (blocks of 32 threads, where time is proportional to
// 1 / kMTile, and one-lane points); the others are the device's published or usual values.
constexpr double kL2Bytes = 50.0 * 1024 * 1024;  ///< L2 capacity
constexpr double kLineBytes = 128;               ///< L1 line / request granularity
constexpr double kSectorBytes = 32;              ///< L2 / DRAM sector
constexpr double kWarp = 32;
constexpr double kClockHz = 1.755e9;    ///< SM boost clock
constexpr double kIssuePerCycle = 4;    ///< warp-instructions per cycle and SM
constexpr double kDramBytesPerS = 3.35e12;
constexpr double kL2BytesPerS = 7.0e12;  ///< L2 -> SM read bandwidth (approximate)
constexpr double kL2LatencyCycles = 300, kDramLatencyCycles = 800;
constexpr double kL1Bytes = 64 * 1024;   ///< L1 left to cache gathered lines
constexpr double kBlockFixedCycles = 3000;  ///< a block's life besides its dependent loads

double sectors(double bytes) { return std::max(1.0, std::ceil(bytes / kSectorBytes)); }

/// The processing order: source tiles, and the run (consecutive edges of one destination, which
/// share its row). Edge ids are in CSR order, so an untiled order has runs of the average row
/// length. With tiles of T sources a destination's nonzeros in one tile are Poisson with mean
/// lam = avg_row * T / cols; the non-empty (row, tile) pairs are rows * tiles * (1 - e^-lam).
struct Order {
    bool tiled;
    double run;
};

Order order_of(const Shape &s, bool grouped, double tile) {
    const double rows = std::max(1.0, s.rows), cols = std::max(1.0, s.cols), nnz = std::max(1.0, s.nnz);
    if (!grouped || tile <= 0 || tile >= cols) return {false, std::max(1.0, nnz / rows)};
    const double tiles = std::ceil(cols / tile);
    const double lam = nnz / rows * tile / cols;
    const double pairs = rows * tiles * (1 - std::exp(-lam));
    return {true, std::max(1.0, nnz / std::max(1.0, pairs))};
}

}  // namespace

void gpu_sddmm_metrics(const Shape &s, const ScheduleParams &p, Writer &w) {
    const double M = static_cast<double>(p.get("kMTile")), L = static_cast<double>(p.get("kLaneWidth"));
    // Edges per thread (kMRegTile), feature chunks (kFeatChunk), the destination edge order
    // (groupByDst) and its source tiles (kSrcTile); points without them read 1, 0, 0 and 0.
    double V = static_cast<double>(std::max<int64_t>(p.get("kVecWidth"), 1));
    double R = static_cast<double>(std::max<int64_t>(p.get_or("kMRegTile", 1), 1));
    const double C = static_cast<double>(std::max<int64_t>(p.get_or("kFeatChunk", 0), 0));
    const bool grouped = p.get_or("groupByDst", 0) != 0;
    const double tile = static_cast<double>(std::max<int64_t>(p.get_or("kSrcTile", 0), 0));

    const bool dot = s.reduce_len > 0;
    // The lanes of an edge cover the reduced length (dot) or the innermost output dim.
    const double ext = std::max(1.0, dot ? s.reduce_len : s.feat_inner);
    const double heads = std::max(1.0, s.heads);
    const double rows = std::max(1.0, s.rows), cols = std::max(1.0, s.cols), nnz = std::max(1.0, s.nnz);
    // The form the kernel takes: tensors of 2^31 elements or more need 64-bit indexing, whose
    // kernels combine through shared memory with one edge per thread and scalar loads.
    const double out_len = dot ? heads : ext * heads;
    const bool wide = needs_large_buffers(static_cast<int64_t>(std::max(rows, cols) * ext * heads)) ||
                      needs_large_buffers(static_cast<int64_t>(nnz * out_len));
    if (wide) V = R = 1;
    const Order order = order_of(s, grouped, tile);

    const double chunk = C > 0 ? std::min(C, ext) : ext;  // features a pass reads
    const double passes = std::ceil(ext / chunk);
    const double slice = 4 * chunk;  // bytes of a node row a pass reads

    // Launch geometry, occupancy, parallel degree.
    const double threads = M * L, per_block = M * R;
    const double blocks = std::ceil(nnz / per_block) * heads;
    const double resident = std::max(1.0, std::min(kBlocksPerSM, std::floor(kThreadsPerSM / threads)));
    const double in_flight = resident * per_block;  // edges an SM works on at once (latency hiding)
    w("sched_gpu_sddmm", 1);
    w("sddmm_edges_per_block", per_block);
    w("sddmm_lanes_per_edge", L);
    w("sddmm_vec_width", V);
    w("sddmm_edges_per_thread", R);
    w("sddmm_threads_per_block", threads);
    w("sddmm_occupancy", std::min(1.0, resident * threads / kThreadsPerSM));
    w("sddmm_waves", blocks / (kNumSMs * resident));
    w("sddmm_block_size_penalty", block_size_penalty(threads));
    w("sddmm_edges_in_flight_per_sm", in_flight);

    // Per-edge work: a lane's loop trips, the combine of the lanes' partials (shuffles and adds, or
    // L reads of shared memory), and the issued warp-instructions: per trip 2 loads and V
    // multiply-adds, ~8 per edge (ids, addresses, store; +2 for the edge id of the grouped order).
    const double steps = std::ceil(chunk / (L * V));
    const double combine = !dot ? 0 : wide ? L : 2 * std::log2(L);
    w("sddmm_feature_passes", passes);
    w("sddmm_steps_per_lane", steps * passes);
    w("sddmm_combine_steps", combine * passes);
    const double lane_instr = passes * (steps * (2 + V) + (V - 1) + combine + 8 + (grouped ? 2 : 0));
    const double warp_instr = lane_instr * L / kWarp;
    w("sddmm_warp_instr_per_edge", warp_instr);

    // Access efficiency: the contiguous bytes an edge's lanes read per load, and the 128-byte line
    // requests per edge (the destination row's are shared by the edges of a run within a warp).
    const double seg = 4 * L * V;
    w("sddmm_sector_use", std::min(1.0, seg / kSectorBytes));
    const double line_requests =
        passes * steps * std::ceil(seg / kLineBytes) * (1 + 1 / std::max(1.0, std::min(order.run, kWarp / L)));
    w("sddmm_line_requests_per_edge", line_requests);
    // A load of less than a sector leaves the rest of it to the next trips: they hit L1 only while
    // the SM's live lines (one per edge in flight) fit in what L1 keeps beside shared memory.
    const double smem_bytes = wide ? resident * M * L * 4 : 0;
    const double l1 = std::max(32.0 * 1024, kL1Bytes - smem_bytes);
    const double l1_hit = std::min(1.0, l1 / (resident * M * R * kLineBytes));
    const double refetch = 1 + (std::max(1.0, kSectorBytes / seg) - 1) * (1 - l1_hit);
    w("sddmm_l1_refetch", refetch);

    // Bytes per edge through L2 and from DRAM: the gathered source slice (L2 hits while a pass's
    // gathered rows fit), the destination slice once per run, the ids, and the output (a partial
    // sector per run when tiles scatter the stores; chunks zero, update and copy an accumulator).
    const double src_l2 = passes * sectors(slice) * kSectorBytes * refetch;
    const double dst_l2 = passes * sectors(slice) * kSectorBytes / order.run;
    const double gathered_rows = order.tiled ? std::min(cols, tile) : cols;
    const double src_hit = std::min(1.0, kL2Bytes / (gathered_rows * slice));
    const double src_dram = std::max(passes * cols * slice / nnz, src_l2 * (1 - src_hit));
    const double dst_bytes = rows * 4 * ext;
    const double dst_hit = order.tiled ? std::min(1.0, kL2Bytes / dst_bytes) : 0.0;
    const double dst_dram = std::max(dst_bytes / nnz, dst_l2 * (1 - dst_hit));
    const double ids = passes * (8 + (grouped ? 4 : 0));
    double store = (dot ? 4 : 4 * ext) + (order.tiled ? kSectorBytes / order.run : 0);
    if (C > 0) store += 4 + 8 * passes + 4;
    const double dram = src_dram + dst_dram + ids + store;
    const double l2 = src_l2 + dst_l2 + ids + store;
    w("sddmm_store_bytes_per_edge", store);
    w("sddmm_dram_bytes_per_edge", dram);
    w("sddmm_l2_bytes_per_edge", l2);

    // Time per edge (ns) of each limit: an edge's dependent chain (its block's fixed cost, the id
    // and feature loads at the latency their miss share gives, the loop and the combine) over the
    // edges in flight; instruction issue; DRAM, L2 and L1-request throughput.
    const double miss = (dram - ids - store) / std::max(1.0, l2 - ids - store);
    const double latency = kL2LatencyCycles + (kDramLatencyCycles - kL2LatencyCycles) * std::min(1.0, miss);
    const double chain = passes * (kBlockFixedCycles + 2 * latency + 4 * steps + 30 * combine);
    const double t_latency = chain / (in_flight * kNumSMs * kClockHz) * 1e9;
    const double t_issue = warp_instr / (kIssuePerCycle * kNumSMs * kClockHz) * 1e9;
    const double t_dram = dram / kDramBytesPerS * 1e9;
    const double t_l2 = l2 / kL2BytesPerS * 1e9;
    const double t_l1 = line_requests / (kNumSMs * kClockHz) * 1e9;
    w("sddmm_t_latency_ns", t_latency);
    w("sddmm_t_issue_ns", t_issue);
    w("sddmm_t_dram_ns", t_dram);
    w("sddmm_t_l2_ns", t_l2);
    w("sddmm_t_l1_ns", t_l1);
    w("sddmm_est_ns_per_edge", std::max({t_latency, t_issue, t_dram, t_l2, t_l1}));
}

}  // namespace gsparse::autotune::detail
