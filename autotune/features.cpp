// Cost-model features: analytic cost metrics of a schedule point on a problem (in the spirit of the
// paper's Algorithm 4) followed by the shape of the problem.
//
// The vector is the same length for every schedule: a one-hot of the schedule name, the metrics of
// gpu_spmm, the metrics of the CPU schedules (cpu_spmm and cpu_sddmm share them), the shape, then
// the one-hot and metrics of gpu_sddmm (gpu_sddmm_features.cpp). A model reads its features by
// name (and may take a subset of them), and stored records are recomputed from their shape
// (refresh_features), so features may be added or redefined. Metrics of the schedules a point does
// not belong to are 0. Every value is finite and >= 0, so the model can take log1p of it. The GPU
// metrics use the H100's limits (feature_writer.h).
#include "autotune/features.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <unordered_map>

#include "autotune/feature_writer.h"
#include "core/error.h"

namespace gsparse::autotune {

namespace {

const std::vector<std::string> kNames = {
    // schedule one-hot
    "sched_cpu_spmm",
    "sched_cpu_sddmm",
    "sched_gpu_spmm",
    // gpu_spmm metrics
    "gpu_rows_per_block",
    "gpu_threads_per_row",
    "gpu_rows_per_warp",
    "gpu_threads_per_block",
    "gpu_blocks",
    "gpu_parallel_degree",
    "gpu_occupancy",
    "gpu_waves",
    "gpu_mem_efficiency",
    "gpu_colidx_reuse",
    "gpu_reg_tile",
    "gpu_block_size_penalty",
    "gpu_smem_colidx",
    "gpu_smem_bytes",
    "gpu_nnz_tile",
    "gpu_nnz_tile_over_avg_row",
    "gpu_staged_steps_per_row",
    "gpu_smem_tile_waste",
    "gpu_row_split",
    "gpu_split_ratio",
    "gpu_segments_per_row",
    "gpu_row_balance",
    "gpu_longest_unit",
    "gpu_block_imbalance",
    "gpu_intra_block_imbalance",
    "gpu_work_per_thread",
    "gpu_feature_tail_waste",
    // CPU metrics (cpu_spmm, cpu_sddmm)
    "cpu_vector_width",
    "cpu_vector_iters",
    "cpu_vector_fill",
    "cpu_items_per_task",
    "cpu_tasks",
    "cpu_tasks_per_thread",
    "cpu_parallel_degree",
    "cpu_tail_waste",
    "cpu_work_per_task",
    "cpu_task_imbalance",
    // shape
    "op_spmm",
    "shape_rows",
    "shape_cols",
    "shape_nnz",
    "shape_feat",
    "shape_feat_inner",
    "shape_heads",
    "shape_reduce_len",
    "shape_avg_row",
    "shape_max_row",
    "shape_row_cov",
    "shape_empty_row_share",
    "shape_gather_mbytes",
    // gpu_sddmm metrics (after the shape; records of older builds are recomputed from their stored
    // shape by refresh_features, and models select their features by name; see gpu_sddmm_features.cpp)
    "sched_gpu_sddmm",
    "sddmm_edges_per_block",
    "sddmm_lanes_per_edge",
    "sddmm_vec_width",
    "sddmm_edges_per_thread",
    "sddmm_threads_per_block",
    "sddmm_occupancy",
    "sddmm_waves",
    "sddmm_block_size_penalty",
    "sddmm_edges_in_flight_per_sm",
    "sddmm_feature_passes",
    "sddmm_steps_per_lane",
    "sddmm_combine_steps",
    "sddmm_warp_instr_per_edge",
    "sddmm_sector_use",
    "sddmm_line_requests_per_edge",
    "sddmm_l1_refetch",
    "sddmm_store_bytes_per_edge",
    "sddmm_dram_bytes_per_edge",
    "sddmm_l2_bytes_per_edge",
    "sddmm_t_latency_ns",
    "sddmm_t_issue_ns",
    "sddmm_t_dram_ns",
    "sddmm_t_l2_ns",
    "sddmm_t_l1_ns",
    "sddmm_est_ns_per_edge",
    // gpu_spmm, appended later (models trained before read their own features by name):
    // rowTails = 1, the row-tail form of split rows (no partial buffer, no combine pass).
    "gpu_row_tails",
};

}  // namespace

namespace detail {

size_t index_of(const char *name) {
    static const std::unordered_map<std::string, size_t> index = [] {
        std::unordered_map<std::string, size_t> m;
        for (size_t i = 0; i < kNames.size(); i++) m.emplace(kNames[i], i);
        return m;
    }();
    auto it = index.find(name);
    if (it == index.end()) fail<Error>("internal: no feature named '", name, "'");
    return it->second;
}

}  // namespace detail

namespace {

using namespace detail;

Shape shape_of(const Problem &p) {
    Shape s;
    const GraphStats &g = p.stats;
    s.rows = static_cast<double>(std::max<int64_t>(g.num_rows, 0));
    s.cols = static_cast<double>(std::max<int64_t>(g.num_cols, 0));
    s.nnz = static_cast<double>(std::max<int64_t>(g.nnz, 0));
    s.avg_row = std::max(0.0, g.avg_row_length);
    s.max_row = static_cast<double>(std::max<int64_t>(g.max_row_length, 0));
    s.cov = std::max(0.0, g.row_length_cov);
    s.empty_share = s.rows > 0 ? static_cast<double>(g.empty_rows) / s.rows : 0.0;
    s.feat = static_cast<double>(std::max<int64_t>(p.layout.out_len(), 1));
    s.feat_inner = static_cast<double>(p.layout.extents.empty() ? 1 : std::max<int64_t>(p.layout.extents[0], 1));
    s.heads = std::max(1.0, s.feat / s.feat_inner);
    s.reduce_len = static_cast<double>(std::max<int64_t>(p.layout.reduce_len, 0));
    return s;
}

void gpu_spmm_metrics(const Shape &s, const ScheduleParams &p, Writer &w) {
    const double M = static_cast<double>(p.get("kMTile")), T = static_cast<double>(p.get("kNTile")),
                 R = static_cast<double>(p.get("kNRegTile")), KT = static_cast<double>(p.get("kNnzTile"));
    const bool smem = p.get("smemColIdx") != 0, balance = p.get("rowBalance") != 0;
    const double split = static_cast<double>(std::max<int64_t>(p.get("kRowSplit"), 0));
    // Nonzero lanes per feature thread (kNnzLanes; 1 for points without the knob). They enter the
    // existing metrics (threads per row and block, work per thread) rather than a feature of their
    // own, so models trained before the knob keep their feature list and L = 1 gives the same vector.
    const double L = static_cast<double>(std::max<int64_t>(p.get_or("kNnzLanes", 1), 1));
    // Features per vector load (kVecWidth), folded in the same way: a thread owns V consecutive
    // features of each of its R outputs groups.
    const double V = static_cast<double>(std::max<int64_t>(p.get_or("kVecWidth", 1), 1));

    // Work units: whole rows, or segments of at most `split` nonzeros (one or more per row; the
    // count is estimated from the shape: rows + nnz / split is an upper bound).
    const double rows = std::max(1.0, s.rows);
    double units = split > 0 ? rows + std::floor(s.nnz / split) : rows;
    double longest = split > 0 ? std::min(s.max_row, split) : s.max_row;
    // Source tiles (kSrcTile; 0 for points without the knob): the units are the runs of a row
    // within one tile, estimated as the non-empty (row, tile) pairs when a row's nonzeros spread
    // evenly over the sources (Poisson), each of them cut again at `split`. Folded into the unit
    // metrics like the lanes, so models trained before the knob keep their feature list.
    const double tile = static_cast<double>(std::max<int64_t>(p.get_or("kSrcTile", 0), 0));
    if (tile > 0 && s.cols > 0) {
        const double tiles = std::ceil(s.cols / tile), share = std::min(1.0, tile / s.cols);
        units = rows * tiles * (1 - std::exp(-s.avg_row * share)) + (split > 0 ? std::floor(s.nnz / split) : 0);
        units = std::max(units, rows);
        longest = std::max(1.0, s.max_row * share);
        if (split > 0) longest = std::min(longest, split);
    }
    const double avg_unit = std::max(1.0, s.nnz / units);

    const double threads = M * T * L;
    const double feature_blocks = ceil_div(s.feat_inner, T * R * V);
    const double blocks = ceil_div(units, M) * feature_blocks * s.heads;
    const double smem_bytes = smem ? KT * M * 4 : 0;
    double resident = std::min(kBlocksPerSM, std::floor(kThreadsPerSM / std::max(1.0, threads)));
    if (smem_bytes > 0) resident = std::min(resident, std::floor(kSmemPerSM / smem_bytes));
    resident = std::max(1.0, resident);

    w("gpu_rows_per_block", M);
    w("gpu_threads_per_row", T * L);
    // Rows that share a warp (their loops diverge when their lengths differ).
    w("gpu_rows_per_warp", std::max(1.0, 32 / (T * L)));
    w("gpu_threads_per_block", threads);
    w("gpu_blocks", blocks);
    w("gpu_parallel_degree", blocks * threads / (kNumSMs * kThreadsPerSM));
    w("gpu_occupancy", std::min(1.0, resident * threads / kThreadsPerSM));
    w("gpu_waves", blocks / (kNumSMs * resident));
    // A warp's load of a gathered feature row covers min(T * V, 32) consecutive floats.
    w("gpu_mem_efficiency", std::min(T * V * 4, kWarpLoadBytes) / kWarpLoadBytes);
    // Features computed per global load of a neighbour id: with staging, one load serves the
    // block's T threads x R outputs; without it every thread loads the id for its R outputs.
    w("gpu_colidx_reuse", smem ? T * R * V : R * V);
    // Independent loads a thread has in flight per step (each of V features): R outputs, or the U
    // unrolled nonzeros of a lane (kNnzUnroll; 1 for points without the knob, so the vector of
    // older points is unchanged).
    const double U = static_cast<double>(std::max<int64_t>(p.get_or("kNnzUnroll", 1), 1));
    w("gpu_reg_tile", R * U);
    w("gpu_block_size_penalty", block_size_penalty(threads));
    w("gpu_smem_colidx", smem ? 1 : 0);
    w("gpu_smem_bytes", smem_bytes);
    if (smem) {
        const double steps = std::ceil(avg_unit / KT);
        w("gpu_nnz_tile", KT);
        w("gpu_nnz_tile_over_avg_row", KT / avg_unit);
        w("gpu_staged_steps_per_row", steps);
        w("gpu_smem_tile_waste", std::max(0.0, 1 - avg_unit / (steps * KT)));
    }
    w("gpu_row_split", split);
    w("gpu_row_tails", static_cast<double>(p.get_or("rowTails", 0) != 0 && split > 0));
    w("gpu_split_ratio", split > 0 ? s.max_row / split : 0);
    w("gpu_segments_per_row", units / rows);
    // The row order (rowBalance): 0 row ids, 1 balancedIdx, 2 the locality order (also longest first,
    // within groups), 3 the same order over the relabeled graph. One feature rather than a new one, so
    // that stored records keep their layout.
    w("gpu_row_balance", static_cast<double>(std::clamp<int64_t>(p.get("rowBalance"), 0, 3)));
    w("gpu_longest_unit", longest);
    // The longest work unit against the average one: the tail the last blocks run alone.
    w("gpu_block_imbalance", std::max(1.0, longest / avg_unit));
    // Rows of one block finish together (the staged loop runs to the block's longest row): the
    // expected maximum of M row lengths over their mean, for normally spread lengths; rows taken in
    // balancedIdx order have near-equal lengths within a block.
    double unit_cov = split > 0 && s.max_row > 0 ? s.cov * std::min(1.0, split / s.max_row) : s.cov;
    double intra = balance || M <= 1 ? 1.0 : 1 + unit_cov * std::sqrt(2 * std::log(M));
    w("gpu_intra_block_imbalance", std::min(intra, std::max(1.0, longest / avg_unit)));
    w("gpu_work_per_thread", avg_unit / L * R * V);
    w("gpu_feature_tail_waste", feature_blocks * T * R * V / s.feat_inner - 1);
}

void cpu_metrics(const Shape &s, bool spmm, const ScheduleParams &p, Writer &w) {
    const double width = static_cast<double>(p.get("vector_width"));
    const double per_task = static_cast<double>(spmm ? p.get("rows_per_task") : p.get("edges_per_task"));
    const double items = spmm ? s.rows : s.nnz;
    const double ext = spmm ? s.feat_inner : (s.reduce_len > 0 ? s.reduce_len : s.feat_inner);
    const double threads = std::max(1u, std::thread::hardware_concurrency());

    const double iters = ceil_div(ext, std::max(1.0, width));
    const double tasks = std::max(1.0, ceil_div(items, std::max(1.0, per_task)));
    w("cpu_vector_width", width);
    w("cpu_vector_iters", iters);
    w("cpu_vector_fill", ext / (iters * std::max(1.0, width)));
    w("cpu_items_per_task", per_task);
    w("cpu_tasks", tasks);
    w("cpu_tasks_per_thread", tasks / threads);
    w("cpu_parallel_degree", std::min(tasks, threads) / threads);
    w("cpu_tail_waste", std::ceil(tasks / threads) * threads / tasks - 1);
    // Multiply-adds of one task, and how far the task holding the longest row exceeds an average one.
    const double per_item = spmm ? std::max(1.0, s.avg_row) * s.feat : s.feat * std::max(1.0, s.reduce_len);
    w("cpu_work_per_task", per_task * per_item);
    double imbalance = 1;
    if (spmm) {
        const double avg_task = per_task * std::max(1.0, s.avg_row);
        imbalance = std::max(1.0, (s.max_row + (per_task - 1) * s.avg_row) / avg_task);
    }
    w("cpu_task_imbalance", imbalance);
}

void shape_features(const Shape &s, bool spmm, Writer &w) {
    w("op_spmm", spmm ? 1 : 0);
    w("shape_rows", s.rows);
    w("shape_cols", s.cols);
    w("shape_nnz", s.nnz);
    w("shape_feat", s.feat);
    w("shape_feat_inner", s.feat_inner);
    w("shape_heads", s.heads);
    w("shape_reduce_len", s.reduce_len);
    w("shape_avg_row", s.avg_row);
    w("shape_max_row", s.max_row);
    w("shape_row_cov", s.cov);
    w("shape_empty_row_share", s.empty_share);
    // Size of a gathered source-feature tensor (fp32): whether it fits in the caches.
    w("shape_gather_mbytes", s.cols * s.feat * std::max(1.0, s.reduce_len) * 4 / 1e6);
}

}  // namespace

const std::vector<std::string> &feature_names() { return kNames; }

std::vector<size_t> select_features(const std::vector<std::string> &patterns) {
    std::vector<char> picked(kNames.size(), patterns.empty() ? 1 : 0);
    for (const std::string &pattern : patterns) {
        const bool prefix = !pattern.empty() && pattern.back() == '*';
        const std::string stem = prefix ? pattern.substr(0, pattern.size() - 1) : pattern;
        bool any = false;
        for (size_t i = 0; i < kNames.size(); i++)
            if (prefix ? kNames[i].compare(0, stem.size(), stem) == 0 : kNames[i] == pattern) picked[i] = 1, any = true;
        if (!any) fail<Error>("no cost-model feature matches '", pattern, "' (names: see feature_names(); a trailing '*' matches a prefix)");
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < kNames.size(); i++)
        if (picked[i]) out.push_back(i);
    return out;
}

bool has_features(const std::string &schedule) {
    return schedule == "cpu_spmm" || schedule == "cpu_sddmm" || schedule == "gpu_spmm" || schedule == "gpu_sddmm";
}

namespace {

std::vector<float> features_of(const Shape &s, bool spmm, const ScheduleParams &p) {
    std::vector<float> f(kNames.size(), 0.0f);
    Writer w{f};
    if (p.schedule == "gpu_spmm") {
        w("sched_gpu_spmm", 1);
        gpu_spmm_metrics(s, p, w);
    } else if (p.schedule == "gpu_sddmm") {
        gpu_sddmm_metrics(s, p, w);
    } else if (p.schedule == "cpu_spmm" || p.schedule == "cpu_sddmm") {
        w(p.schedule == "cpu_spmm" ? "sched_cpu_spmm" : "sched_cpu_sddmm", 1);
        cpu_metrics(s, p.schedule == "cpu_spmm", p, w);
    } else {
        fail<ScheduleError>("the cost model has no features for schedule '", p.schedule,
                            "' (known: cpu_spmm, cpu_sddmm, gpu_spmm, gpu_sddmm)");
    }
    shape_features(s, spmm, w);
    for (float &x : f) {
        if (std::isnan(x) || x < 0) x = 0;
        if (std::isinf(x)) x = 3e38f;
    }
    return f;
}

}  // namespace

std::vector<float> candidate_features(const Problem &problem, bool spmm, const ScheduleParams &p) {
    return features_of(shape_of(problem), spmm, p);
}

std::vector<float> refresh_features(const std::vector<float> &stored, const ScheduleParams &p) {
    const size_t need = index_of("shape_gather_mbytes") + 1;
    if (stored.size() < need)
        fail<Error>("a stored feature vector of ", stored.size(), " entries does not hold the problem shape (",
                    need, " entries needed)");
    auto at = [&](const char *name) { return static_cast<double>(stored[index_of(name)]); };
    Shape s;
    s.rows = at("shape_rows");
    s.cols = at("shape_cols");
    s.nnz = at("shape_nnz");
    s.avg_row = at("shape_avg_row");
    s.max_row = at("shape_max_row");
    s.cov = at("shape_row_cov");
    s.empty_share = at("shape_empty_row_share");
    s.feat = at("shape_feat");
    s.feat_inner = at("shape_feat_inner");
    s.heads = at("shape_heads");
    s.reduce_len = at("shape_reduce_len");
    return features_of(s, at("op_spmm") != 0, p);
}

std::vector<float> candidate_features(const TuningProblem &problem, const ScheduleParams &p) {
    return candidate_features(problem.schedule_problem(), problem.kind == OpKind::Spmm, p);
}

}  // namespace gsparse::autotune
