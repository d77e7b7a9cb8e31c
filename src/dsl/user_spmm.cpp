#include "dsl/user_spmm.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <numeric>

#include "core/error.h"
#include "dsl/pipeline_text.h"
#include "dsl/static_library.h"
#include "halide_ext/accumulate_atomic_runs.h"
#include "halide_ext/atomic_add_stores.h"
#include "halide_ext/bind_buffer.h"
#include "halide_ext/block_uniform_loop.h"
#include "halide_ext/compact_thread_allocations.h"
#include "halide_ext/ragged_bounds.h"
#include "halide_ext/segmented_lane_atomics.h"
#include "halide_ext/store_index_lets.h"
#include "ops/halide_types.h"
#include "runtime/device_graph.h"
#include "runtime/halide_buffers.h"
#include "runtime/lowered_stmt.h"
#include "runtime/target.h"

namespace gsparse::dsl {

using namespace Halide;

namespace {

/// A single-value monoid whose merge is its combine (messages and accumulated values are alike).
Monoid merging_by_combine(std::string name, std::function<Expr(Type)> identity, std::function<Expr(Expr, Expr)> combine) {
    Monoid m;
    m.name = std::move(name);
    m.identity = std::move(identity);
    m.combine = std::move(combine);
    m.merge = m.combine;
    return m;
}

}  // namespace

Monoid Monoid::sum() {
    return merging_by_combine("sum", [](Type t) { return Internal::make_zero(t); }, [](Expr a, Expr x) { return a + x; });
}

Monoid Monoid::product() {
    return merging_by_combine("product", [](Type t) { return Internal::make_one(t); },
                              [](Expr a, Expr x) { return a * x; });
}

Monoid Monoid::max() {
    return merging_by_combine("max", [](Type t) { return t.min(); }, [](Expr a, Expr x) { return Halide::max(a, x); });
}

Monoid Monoid::min() {
    return merging_by_combine("min", [](Type t) { return t.max(); }, [](Expr a, Expr x) { return Halide::min(a, x); });
}

NnzLanes ScheduleContext::split_nnz_lanes(int lanes, int steps) {
    if (!split_lanes_impl) fail<ScheduleError>("split_nnz_lanes: this context has no program to split");
    if (lanes < 2 || lanes > 32) fail<ScheduleError>("split_nnz_lanes: ", lanes, " lanes is not in 2..32");
    if (steps < 1 || steps > 8) fail<ScheduleError>("split_nnz_lanes: ", steps, " steps is not in 1..8");
    return split_lanes_impl(*this, lanes, steps);
}

RowSegmentSplit ScheduleContext::split_rows(int length, int64_t src_tile, int lanes, int steps) {
    if (!split_rows_impl) fail<ScheduleError>("split_rows: this context has no program to split");
    if (length < 1 || length > (1 << 20))
        fail<ScheduleError>("split_rows: a segment of ", length, " positions is not in 1..", 1 << 20);
    if (src_tile < 0 || src_tile > (int64_t(1) << 30) || (src_tile & (src_tile - 1)))
        fail<ScheduleError>("split_rows: a source tile of ", src_tile, " ids is not 0 or a power of two up to 2^30");
    if (lanes < 1 || lanes > 32) fail<ScheduleError>("split_rows: ", lanes, " lanes is not in 1..32");
    if (steps < 1 || steps > 8) fail<ScheduleError>("split_rows: ", steps, " steps is not in 1..8");
    if (steps > 1 && lanes == 1) fail<ScheduleError>("split_rows: steps are of the lanes of a segment (lanes > 1)");
    return split_rows_impl(*this, length, src_tile, lanes, steps);
}

NeighbourTiles ScheduleContext::stage_neighbours(int tile, const Var &row_block, int rows_per_block) {
    if (!stage_impl) fail<ScheduleError>("stage_neighbours: this context has no program to stage");
    if (tile < 1 || tile > 1024) fail<ScheduleError>("stage_neighbours: a tile of ", tile, " positions is not in 1..1024");
    if (rows_per_block < 1 || rows_per_block > 1024)
        fail<ScheduleError>("stage_neighbours: ", rows_per_block, " rows a block is not in 1..1024");
    return stage_impl(*this, tile, row_block, rows_per_block);
}

RelabeledSources ScheduleContext::relabel_sources() {
    if (!relabel_impl) fail<ScheduleError>("relabel_sources: this context has no program to relabel");
    return relabel_impl(*this);
}

RowTailSplit ScheduleContext::split_row_tails(int length) {
    if (!tails_impl) fail<ScheduleError>("split_row_tails: this context has no program to split");
    if (length < 1 || length > (1 << 20))
        fail<ScheduleError>("split_row_tails: a tail of ", length, " positions is not in 1..", 1 << 20);
    return tails_impl(*this, length);
}

NonzeroScatter ScheduleContext::scatter_nonzeros(int warp_steps) {
    if (!scatter_impl) fail<ScheduleError>("scatter_nonzeros: this context has no program to scatter");
    if (warp_steps < 0 || warp_steps > 64)
        fail<ScheduleError>("scatter_nonzeros: ", warp_steps, " warp steps is not in 0..64");
    return scatter_impl(*this, warp_steps);
}

void ScheduleContext::aligned_rows(int vector) {
    if (vector != 1 && vector != 2 && vector != 4 && vector != 8)
        fail<ScheduleError>("aligned_rows: the vector must be 1, 2, 4 or 8 elements, got ", vector);
    if (features % vector != 0)
        fail<ScheduleError>("aligned_rows(", vector, ") needs features divisible by ", vector, ", got ", features,
                            " (rows of ", features, " elements are not all aligned to ", vector, ")");
    if (row_vector != 0 && row_vector != vector)
        fail<ScheduleError>("aligned_rows: called with ", vector, " after ", row_vector);
    row_vector = vector;
}

void ScheduleContext::accumulate_lanes(const RVar &step) {
    if (!nonzeros_scattered || scatter_warp_steps == 0)
        fail<ScheduleError>("accumulate_lanes: call scatter_nonzeros(warp_steps) first (lanes are of its warp form)");
    if (step.name().empty()) fail<ScheduleError>("accumulate_lanes: the step's RVar has no name");
    lane_loops.push_back(step.name());
}

void ScheduleContext::accumulate_runs(const RVar &run) {
    if (!nonzeros_scattered)
        fail<ScheduleError>("accumulate_runs: call scatter_nonzeros first (runs are of its positions)");
    if (run.name().empty()) fail<ScheduleError>("accumulate_runs: the run's RVar has no name");
    run_loops.push_back(run.name());
}

namespace {

/// The calls of `func` in e.
int count_calls(const Expr &e, const std::string &func) {
    struct Count : Internal::IRVisitor {
        const std::string &name;
        int n = 0;
        explicit Count(const std::string &name) : name(name) {}
        using Internal::IRVisitor::visit;
        void visit(const Internal::Call *op) override {
            n += op->name == name;
            Internal::IRVisitor::visit(op);
        }
    } count(func);
    e.accept(&count);
    return count.n;
}

/// Replaces the loads of the given images by calls of Funcs with the same arguments, the last one
/// (the row) replaced by `row`.
class RedirectRowLoads : public Internal::IRMutator {
public:
    RedirectRowLoads(std::map<std::string, Internal::Function> to, Expr row) : to_(std::move(to)), row_(std::move(row)) {}

private:
    using Internal::IRMutator::visit;
    std::map<std::string, Internal::Function> to_;
    Expr row_;

    Expr visit(const Internal::Call *op) override {
        auto it = to_.begin();
        while (it != to_.end() && !ext::calls_image(op, it->first)) ++it;
        if (it == to_.end()) return Internal::IRMutator::visit(op);
        std::vector<Expr> args;
        for (const Expr &a : op->args) args.push_back(mutate(a));
        args.back() = row_;
        return Internal::Call::make(it->second, args, op->value_index);
    }
};

int64_t cuda_feature_tile(int64_t knob, int features) { return knob > 0 ? knob : std::min(features, 32); }
int64_t cuda_rows_per_block(int64_t knob, int64_t feature_tile) {
    return knob > 0 ? knob : std::max<int64_t>(1, 128 / feature_tile);
}
/// nnz_lanes = 0: 8 lanes for monoids that merge (a row of d neighbours takes d / 8 steps), else 1.
int64_t cuda_nnz_lanes(int64_t knob, bool merges) { return knob > 0 ? knob : merges ? 8 : 1; }
/// Lanes form: features a thread holds (vectorized; feature_vector = 0: 4 from 8 features up, 2 from
/// 4, else 1), and threads over features (feature_tile = 0: F / V, at most 32).
int64_t cuda_lane_vector(int64_t knob, int features) {
    return knob > 0 ? knob : features >= 8 ? 4 : features >= 4 ? 2 : 1;
}
int64_t cuda_lane_tile(int64_t knob, int features, int64_t vector) {
    return knob > 0 ? knob : std::clamp<int64_t>(features / vector, 1, 32);
}
/// Whether the lanes merge through warp shuffles: lane_merge = 2, or 0 below 8 features (where a
/// thread holds at most two features and the shared-memory merge's barrier dominates) unless
/// feature_vector asks for wider vectors or the type is not 32 bits wide (known when compiling).
bool cuda_lane_shuffles(int64_t knob, int64_t feature_vector, int features, int type_bits = 32) {
    return knob == 2 || (knob == 0 && features < 8 && feature_vector <= 1 && type_bits == 32);
}

/// The default schedule's row_segments (0 when a schedule derived from it leaves the knob out).
int64_t row_segments_knob(const std::map<std::string, int64_t> &p) {
    auto it = p.find("row_segments");
    return it == p.end() ? 0 : it->second;
}

}  // namespace

bool split_rows_by_default(const RunShape &r) {
    if (r.graph_view || !r.monoid_merges || r.max_degree <= kAutoSegmentLength || r.num_dst <= 0) return false;
    const double average = static_cast<double>(r.num_edges) / static_cast<double>(r.num_dst);
    return r.features <= kAutoSegmentsMaxFeatures || static_cast<double>(r.max_degree) >= kAutoSegmentsMinSkew * average;
}

const ScheduleDef &default_schedule() {
    static const ScheduleDef def = [] {
        ScheduleDef d;
        d.name = "user_default";
        // 0: chosen from the feature count (feature_tile = min(F, 32), rows_per_block = 128 / it) and
        // the monoid (nnz_lanes: 8 where it merges, else 1). nnz_steps: positions a lane takes an
        // iteration (its loads in flight together). balanced_rows: rows in order of in-degree,
        // longest first (ScheduleContext::balanced_rows), on both devices.
        d.knobs = {{"rows_per_task", {1, 4, 16, 64}, 16},
                   {"vector_width", {1, 4, 8, 16}, 1},
                   {"feature_tile", {0, 1, 2, 4, 8, 16, 32}, 0},
                   {"rows_per_block", {0, 1, 2, 4, 8, 16, 32, 64, 128}, 0},
                   {"nnz_lanes", {0, 1, 2, 4, 8, 16, 32}, 0},
                   {"nnz_steps", {1, 2, 4}, 4},
                   {"feature_vector", {0, 1, 2, 4, 8}, 0},
                   {"lane_merge", {0, 1, 2}, 0},
                   {"balanced_rows", {0, 1}, 0},
                   {"row_segments", {-1, 0, 256, 1024}, 0}};
        d.why_invalid = [](const std::map<std::string, int64_t> &p, int features, Device device) -> std::string {
            if (device == Device::CPU && row_segments_knob(p) == -1)
                return "row_segments = -1 is 0 on the CPU (whole rows by default there)";
            if (row_segments_knob(p) > 0 && p.at("balanced_rows"))
                return "row_segments and balanced_rows: rows split into segments run in row order";
            if (device == Device::CUDA && row_segments_knob(p) > 0 && p.at("nnz_lanes") > 1)
                return "row_segments reduces each segment on a thread a feature (nnz_lanes 0 or 1)";
            if (device == Device::CUDA) {
                if (p.at("rows_per_task") != 16 || p.at("vector_width") != 1)
                    return "rows_per_task and vector_width are CPU knobs";
                const int64_t ft = cuda_feature_tile(p.at("feature_tile"), features);
                if (p.at("nnz_lanes") == 1 && (p.at("nnz_steps") != 4 || p.at("feature_vector") > 1 || p.at("lane_merge")))
                    return "nnz_steps, feature_vector and lane_merge apply to nnz_lanes > 1 (or 0)";
                if (p.at("lane_merge") == 2 && p.at("feature_vector") > 1)
                    return "lane_merge = 2 (warp shuffles) takes one feature a thread (feature_vector 0 or 1)";
                if (p.at("nnz_lanes") > 1) {
                    // One row a block: lanes x features threads, the lanes merged in shared memory
                    // (V features a thread) or through warp shuffles (one).
                    const bool shuffles = cuda_lane_shuffles(p.at("lane_merge"), p.at("feature_vector"), features);
                    const int64_t V = shuffles ? 1 : cuda_lane_vector(p.at("feature_vector"), features);
                    const int64_t lt = cuda_lane_tile(p.at("feature_tile"), features, V);
                    if (p.at("rows_per_block") > 1) return "nnz_lanes > 1 takes one row a block (rows_per_block 0 or 1)";
                    if (lt * V > features) return "nnz_lanes > 1 needs feature_tile x feature_vector <= the feature count";
                    if (lt * p.at("nnz_lanes") > 1024) return "feature_tile x nnz_lanes exceeds 1024 threads a block";
                    return "";
                }
                if (ft > 1 && ft / 2 >= features) return "feature_tile is at least twice the feature count";
                if (ft * cuda_rows_per_block(p.at("rows_per_block"), ft) > 1024)
                    return "feature_tile x rows_per_block exceeds 1024 threads a block";
                return "";
            }
            if (p.at("feature_tile") != 0 || p.at("rows_per_block") != 0 || p.at("nnz_lanes") != 0 ||
                p.at("nnz_steps") != 4 || p.at("feature_vector") != 0 || p.at("lane_merge") != 0)
                return "feature_tile, rows_per_block, nnz_lanes, nnz_steps, feature_vector and lane_merge are CUDA knobs";
            if (p.at("vector_width") > 1 && p.at("vector_width") / 2 >= features)
                return "vector_width is at least twice the feature count";
            return "";
        };
        // nnz_lanes = 0 on CUDA: a thread per row and feature where every row is short (measured:
        // docs/dsl.md), lanes of nonzeros for monoids that merge elsewhere.
        // row_segments = 0 on CUDA: segments of kAutoSegmentLength where split_rows_by_default says
        // so, else whole rows; row_segments > 0: whole rows (-1 on CUDA, 0 on the CPU) on graph views
        // (no segment table), for monoids without a merge and where the longest row is one segment
        // anyway.
        d.for_graph = [](const std::map<std::string, int64_t> &p, const RunShape &r) {
            std::map<std::string, int64_t> q = p;
            if (q.count("row_segments")) {
                int64_t &segments = q["row_segments"];
                // (0 that does not split stays 0: the same kernel as -1, compiled once.)
                if (segments == 0 && r.device == Device::CUDA && q.at("nnz_lanes") <= 1 && !q.at("balanced_rows") &&
                    split_rows_by_default(r))
                    segments = kAutoSegmentLength;
                else if (segments > 0 && (r.graph_view || !r.monoid_merges || r.max_degree <= segments))
                    segments = r.device == Device::CUDA ? -1 : 0;
            }
            if (r.device != Device::CUDA || !r.monoid_merges || q.at("nnz_lanes") != 0 ||
                (r.max_degree > kRowsFormMaxDegree && row_segments_knob(q) <= 0))
                return q;
            q["nnz_lanes"] = 1;
            q["nnz_steps"] = 4;
            q["feature_vector"] = 0;
            q["lane_merge"] = 0;
            return q;
        };
        d.apply = [](ScheduleContext &c) {
            if (c.knob("balanced_rows")) c.balanced_rows();
            Var vo("vo"), vi("vi");
            if (const int64_t length = row_segments_knob(c.knobs); length > 0) {
                // Segments, then rows, each like a row of the thread-per-row form (CUDA: two kernels;
                // the CPU: parallel tasks of rows_per_task segments, then of rows).
                RowSegmentSplit r = c.split_rows(static_cast<int>(length));
                Var so("so"), si("si");
                if (c.device == Device::CUDA) {
                    Var fo("fo"), fi("fi");
                    const int64_t ft = cuda_feature_tile(c.knob("feature_tile"), c.features);
                    const int rb = static_cast<int>(cuda_rows_per_block(c.knob("rows_per_block"), ft));
                    r.segments.compute_root()
                        .split(c.f, fo, fi, static_cast<int>(ft), TailStrategy::GuardWithIf)
                        .split(r.s, so, si, rb, TailStrategy::GuardWithIf)
                        .reorder(fi, si, so, fo)
                        .gpu_blocks(so, fo)
                        .gpu_threads(fi, si);
                    r.segment_acc.compute_at(r.segments, fi);
                    c.out.split(c.f, fo, fi, static_cast<int>(ft), TailStrategy::GuardWithIf)
                        .split(c.v, vo, vi, rb, TailStrategy::GuardWithIf)
                        .reorder(fi, vi, vo, fo)
                        .gpu_blocks(vo, fo)
                        .gpu_threads(fi, vi);
                    c.acc.compute_at(c.out, fi);
                    return;
                }
                const int tasks = static_cast<int>(c.knob("rows_per_task"));
                r.segments.compute_root().split(r.s, so, si, tasks, TailStrategy::GuardWithIf).parallel(so);
                r.segment_acc.compute_at(r.segments, si);
                if (const int vw = static_cast<int>(c.knob("vector_width")); vw > 1) {
                    r.segments.vectorize(c.f, vw, TailStrategy::GuardWithIf);
                    r.segment_acc.vectorize(c.f, vw, TailStrategy::GuardWithIf);
                    r.segment_acc.update().vectorize(c.f, vw, TailStrategy::GuardWithIf);
                }
                // The rows below, as without segments.
            } else if (c.device == Device::CUDA) {
                Var fo("fo"), fi("fi");
                const int64_t ft = cuda_feature_tile(c.knob("feature_tile"), c.features);
                const int64_t L = cuda_nnz_lanes(c.knob("nnz_lanes"), c.monoid_merges);
                const bool shuffles =
                    L > 1 && cuda_lane_shuffles(c.knob("lane_merge"), c.knob("feature_vector"), c.features, c.type.bits());
                if (c.knob("lane_merge") == 2 && c.type.bits() != 32)
                    fail<ScheduleError>("lane_merge = 2: warp shuffles move 32 bits; ", c.type,
                                        " features take lane_merge = 0 or 1");
                // Blocks: x over rows (up to 2^31 - 1 of them), y over feature tiles.
                const int V = shuffles ? 1 : static_cast<int>(cuda_lane_vector(c.knob("feature_vector"), c.features));
                const int lt = static_cast<int>(cuda_lane_tile(c.knob("feature_tile"), c.features, V));
                if (shuffles && lt <= c.features && c.knob("rows_per_block") <= 1) {
                    // A block per row and lt features: lt groups of L lanes (the warp's innermost
                    // threads, gpu_lanes) reduce every L-th neighbour in registers; a unit loop fl
                    // inside the feature threads runs the merge on lane 0 of each group, reading
                    // the other lanes' results through warp shuffles (no shared memory, no barrier).
                    c.int32_indexing();
                    NnzLanes n = c.split_nnz_lanes(static_cast<int>(L), static_cast<int>(c.knob("nnz_steps")));
                    Var fl("fl");
                    c.out.split(c.f, fo, fi, lt, TailStrategy::ShiftInwards)
                        .split(fi, fi, fl, 1)
                        .reorder(fl, fi, c.v, fo)
                        .gpu_blocks(c.v, fo)
                        .gpu_threads(fl, fi);
                    c.acc.compute_at(c.out, fl).update().unroll(n.merge);
                    n.lanes.compute_at(c.out, fi).gpu_lanes(n.lane);
                    n.lanes.update().reorder(n.step, n.lane, n.ko).unroll(n.step).gpu_lanes(n.lane);
                    return;
                }
                if (L > 1 && lt * V <= c.features && c.knob("rows_per_block") <= 1) {
                    // A block per row and lt x V features: its lt x L threads, V features each, reduce
                    // every L-th neighbour (nnz_steps at a time) into shared memory, then lt threads
                    // merge the L lanes.
                    NnzLanes n = c.split_nnz_lanes(static_cast<int>(L), static_cast<int>(c.knob("nnz_steps")));
                    Var fv("fv");
                    c.out.split(c.f, fo, fi, lt * V, TailStrategy::ShiftInwards)
                        .split(fi, fi, fv, V)
                        .reorder(fv, fi, c.v, fo)
                        .gpu_blocks(c.v, fo)
                        .gpu_threads(fi);
                    c.acc.compute_at(c.out, fi);
                    // Each thread reduces its lane in registers and stores it once to shared memory.
                    Func shared = n.lanes.in(c.acc);
                    shared.compute_at(c.out, c.v)
                        .split(c.f, fi, fv, V)
                        .reorder(fv, fi, n.lane, c.v)
                        .gpu_threads(fi, n.lane, c.v);
                    n.lanes.compute_at(shared, fi);
                    n.lanes.update().unroll(n.step);
                    if (V > 1) {
                        c.out.vectorize(fv);
                        shared.vectorize(fv);
                        c.acc.vectorize(c.f);
                        c.acc.update().vectorize(c.f);
                        n.lanes.vectorize(c.f);
                        n.lanes.update().vectorize(c.f);
                    }
                    return;
                }
                const int64_t rb = cuda_rows_per_block(c.knob("rows_per_block"), ft);
                c.out.split(c.f, fo, fi, static_cast<int>(ft), TailStrategy::GuardWithIf)
                    .split(c.v, vo, vi, static_cast<int>(rb), TailStrategy::GuardWithIf)
                    .reorder(fi, vi, vo, fo)
                    .gpu_blocks(vo, fo)
                    .gpu_threads(fi, vi);
                c.acc.compute_at(c.out, fi);
                return;
            }
            c.out.split(c.v, vo, vi, static_cast<int>(c.knob("rows_per_task")), TailStrategy::GuardWithIf).parallel(vo);
            c.acc.compute_at(c.out, vi);
            if (const int vw = static_cast<int>(c.knob("vector_width")); vw > 1) {
                c.out.vectorize(c.f, vw, TailStrategy::GuardWithIf);
                c.acc.vectorize(c.f, vw, TailStrategy::GuardWithIf);
                c.acc.update().vectorize(c.f, vw, TailStrategy::GuardWithIf);
            }
        };
        return d;
    }();
    return def;
}

SpmmProgram::SpmmProgram(std::string name, Type type)
    : name_(std::move(name)),
      type_(type),
      row_ptr_(Int(32), 1, "row_ptr"),
      col_idx_(Int(32), 1, "col_idx"),
      edge_ids_(Int(32), 1, "edge_ids"),
      row_order_(Int(32), 1, "row_order"),
      max_degree_("max_degree"),
      num_edges_("num_edges"),
      num_src_("num_src") {
    check_identifier(name_, "program name");
    if (!type_.is_float() || (type_.bits() != 32 && type_.bits() != 64))
        fail<ShapeError>("program ", name_, ": features are float32 or float64, not ", type_);
    // The ragged neighbour range of row v, as in the built-in g-SpMM (ops/spmm_algorithm.cpp).
    Expr start = row_ptr_(v_);
    degree_ = row_ptr_(v_ + 1) - start;
    k_ = RDom(0, max_degree_, name_ + "_k");
    k_.where(k_ < degree_);
    u_ = col_idx_(start + k_);
    e_ = edge_ids_(start + k_);
}

Expr SpmmProgram::operand(const std::string &name, At at, bool broadcast, const char *file, int line) {
    const Operand &o = declare_operand(operands_, name_, name, at, broadcast, type_, Site{file ? file : "", line});
    Expr row = at == At::Src ? u_ : at == At::Dst ? Expr(v_) : e_;
    return o.param(broadcast ? Expr(0) : Expr(f_), row);
}

Expr SpmmProgram::operand(const std::string &name, At at, const Columns &columns, const char *file, int line) {
    const Operand &o = declare_operand(operands_, name_, name, at, columns, type_, Site{file ? file : "", line});
    Expr row = at == At::Src ? u_ : at == At::Dst ? Expr(v_) : e_;
    return o.param(o.column, row);
}

void SpmmProgram::message(Expr m, const char *file, int line) {
    const Site site{file ? file : "", line};
    if (!m.defined()) fail<ShapeError>("program ", name_, ": the message is undefined", site.note("at"));
    message_ = {cast(type_, m)};
    message_site_ = site;
}

void SpmmProgram::message(const Tuple &m, const char *file, int line) {
    const Site site{file ? file : "", line};
    message_.clear();
    for (const Expr &e : m.as_vector()) {
        if (!e.defined()) fail<ShapeError>("program ", name_, ": a value of the message is undefined", site.note("at"));
        message_.push_back(cast(type_, e));
    }
    message_site_ = site;
}

void SpmmProgram::reduce(Monoid r) {
    const bool single = r.identity && r.combine, tuples = r.identity_values && r.combine_values;
    if (single == tuples)
        fail<ShapeError>("program ", name_, ": monoid '", r.name,
                         "' needs an identity and combine, or identity_values and combine_values (not both)");
    monoid_ = std::make_shared<const Monoid>(std::move(r));
}

void SpmmProgram::finalize(std::function<Expr(Expr, Expr)> f) { finalize_ = std::move(f); }

void SpmmProgram::finalize_values(std::function<Expr(const Tuple &, Expr)> f) { finalize_values_ = std::move(f); }

void SpmmProgram::finalize_outputs(std::function<Tuple(const Tuple &, Expr)> f) { finalize_outputs_ = std::move(f); }

struct SpmmKernel::State {
    std::string name;
    Type type;
    int features = 0;
    Device device = Device::CPU;
    std::vector<Operand> operands;
    ImageParam row_ptr, col_idx, edge_ids;
    ImageParam row_order;  ///< bound when orders_rows
    bool orders_rows = false;
    bool locality_order = false;  ///< row_order is the locality order (else rows by in-degree)
    bool relabeled = false;  ///< runs on Graph::relabeled (ScheduleContext::relabel_sources)
    ImageParam src_order;    ///< bound when relabeled: new node i is old node src_order(i)
    int segment_len = 0;  ///< rows split into segments of this many positions (ScheduleContext::split_rows)
    ImageParam seg_ptr, seg_row, row_segs;  ///< bound when segment_len > 0
    int64_t segment_src_tile = 0;           ///< the segments' source tile (0: none)
    ImageParam seg_ids;                     ///< bound when segment_src_tile > 0
    int tail_len = 0;  ///< long rows' tails split off after this many positions (split_row_tails)
    ImageParam tail_start, tail_end, tail_row;  ///< bound when tail_len > 0
    Param<int32_t> num_tails;
    bool scatters = false;  ///< reduces by nonzeros (ScheduleContext::scatter_nonzeros)
    ImageParam pos_row;     ///< bound when scatters: the row of every CSR position
    Param<int32_t> num_segs, max_segments, max_segment_len;
    bool indexing_32bit = false;  ///< compiled without large_buffers (ScheduleContext::int32_indexing)
    int row_vector = 0;  ///< ScheduleContext::aligned_rows: the operands' and outputs' row alignment (elements)
    Param<int32_t> max_degree, num_edges, num_src;
    Func out;
    Pipeline pipeline;
    std::vector<std::shared_ptr<Internal::IRMutator>> lowering_passes;  ///< owned here, run by pipeline
    Target target;
    std::vector<Argument> arguments;
    std::once_flag compiled;  // CUDA pipelines are JIT-compiled on their first run
    std::string schedule;
    int num_outputs = 1;
    // A schedule with a run-time choice (ScheduleDef::for_graph): what compiles its other points,
    // those compiled, and the choice for the last graph shape (runs on one graph repeat it).
    std::shared_ptr<const SpmmProgram> program;
    std::shared_ptr<const ScheduleDef> def;
    std::map<std::string, int64_t> point;
    std::mutex variants_mu;
    std::map<std::map<std::string, int64_t>, SpmmKernel> variants;
    std::array<int64_t, 5> last_shape{-1, -1, -1, -1, -1};
    const SpmmKernel *last_variant = nullptr;
};

namespace {

/// A staged program whose tiles' loop the block-uniform bound did not find would run every block to
/// the graph's longest row (its barriers too): a compiler error, not a slow kernel.
template <typename KernelState>
void check_passes(const KernelState &s) {
    for (const auto &pass : s.lowering_passes)
        if (auto *uniform = dynamic_cast<const ext::BlockUniformLoop *>(pass.get()); uniform && uniform->rewritten() == 0)
            fail<KernelError>("user program ", s.name, " under ", s.schedule, ": stage_neighbours found no loop ",
                              uniform->loop_name(), " (acc's tiles) inside out's row block loop ",
                              uniform->block_loop(),
                              " (row_block must be the Var of out's loop over blocks of rows_per_block rows, and acc "
                              "computed at or inside it)");
}

/// The operands' layout of this kernel (ScheduleContext::aligned_rows), set on the program's shared
/// operand parameters before Halide lowers the kernel's pipeline.
template <typename KernelState>
void constrain_operands(const KernelState &s) {
    constrain_operand_rows(s.operands, s.features, s.row_vector);
}

}  // namespace

SpmmKernel SpmmProgram::compile(int features, Device device, const ScheduleDef &schedule,
                                const std::map<std::string, int64_t> &point) const {
    if (message_.empty()) fail<ShapeError>("program ", name_, " has no message (call message())");
    if (!monoid_) fail<ShapeError>("program ", name_, " has no reduction (call reduce())");
    if (int(bool(finalize_)) + int(bool(finalize_values_)) + int(bool(finalize_outputs_)) > 1)
        fail<ShapeError>("program ", name_, ": set one of finalize, finalize_values and finalize_outputs");
    if (finalize_ && monoid_->over_tuples())
        fail<ShapeError>("program ", name_, ": monoid '", monoid_->name,
                         "' accumulates a tuple; finalize takes one value (use finalize_values or finalize_outputs)");
    if (finalize_values_ && !monoid_->over_tuples())
        fail<ShapeError>("program ", name_, ": finalize_values needs a monoid over tuples, not '", monoid_->name, "'");
    if (monoid_->over_tuples() && !finalize_values_ && !finalize_outputs_)
        fail<ShapeError>("program ", name_, ": monoid '", monoid_->name,
                         "' accumulates a tuple; give the output value with finalize_values() (or several with "
                         "finalize_outputs())");
    if (!monoid_->over_tuples() && message_.size() != 1)
        fail<ShapeError>("program ", name_, ": a message of ", message_.size(), " values needs a monoid over tuples, not '",
                         monoid_->name, "'");
    if (features < 1) fail<ShapeError>("program ", name_, ": features must be at least 1, got ", features);
    check_operand_columns(name_, operands_, features, f_.name());
    if (!schedule.apply) fail<ScheduleError>("schedule ", schedule.name, " has no directives (apply)");
    const std::map<std::string, int64_t> knobs = schedule.complete(point, features, device);

    auto s = std::make_shared<SpmmKernel::State>();
    s->name = name_;
    s->type = type_;
    s->features = features;
    s->device = device;
    s->row_ptr = row_ptr_;
    s->col_idx = col_idx_;
    s->edge_ids = edge_ids_;
    s->max_degree = max_degree_;
    s->num_edges = num_edges_;
    s->num_src = num_src_;
    s->operands = operands_;

    // The row reduction: fn(at) starts at the monoid's identity and combines the message values
    // (where `combine_if` holds, when given).
    const bool tuples = monoid_->over_tuples();
    auto reduce_into = [&](Func &fn, const std::vector<Expr> &at, const std::vector<Expr> &m, Expr combine_if) {
        if (tuples) {
            const Tuple init = monoid_->identity_values(type_);
            fn(at) = init;
            const Tuple current(fn(at));
            Tuple next = monoid_->combine_values(current, Tuple(m));
            if (next.size() != init.size())
                fail<ShapeError>("program ", name_, ": monoid '", monoid_->name, "' combines into ", next.size(),
                                 " values but its identity has ", init.size());
            if (combine_if.defined())
                for (size_t i = 0; i < next.size(); ++i) next[i] = select(combine_if, next[i], current[i]);
            fn(at) = next;
        } else {
            fn(at) = monoid_->identity(type_);
            Expr next = monoid_->combine(fn(at), m[0]);
            fn(at) = combine_if.defined() ? select(combine_if, next, fn(at)) : next;
        }
    };
    // The outputs on rows with in-edges, from the accumulated value(s) (0 on the others).
    auto define_out = [&](Func &out, Func &acc) {
        const Tuple accumulated = tuples ? Tuple(acc(f_, v_)) : Tuple(Expr(acc(f_, v_)));
        std::vector<Expr> values;
        if (finalize_outputs_) values = finalize_outputs_(accumulated, degree_).as_vector();
        else if (finalize_values_) values = {finalize_values_(accumulated, degree_)};
        else values = {finalize_ ? finalize_(accumulated[0], degree_) : accumulated[0]};
        if (values.empty()) fail<ShapeError>("program ", name_, ": finalize_outputs gave no outputs");
        std::vector<Expr> outputs;
        for (const Expr &value : values)
            outputs.push_back(select(degree_ > 0, cast(type_, value), Internal::make_zero(type_)));
        out(f_, v_) = Tuple(outputs);
        return outputs.size();
    };

    // The output keeps its exact name (the argument of static libraries), also where the lane form
    // redefines it or the program is compiled again (Func(name) would make it unique).
    auto output_func = [&] { return Func(Internal::Function(name_ + "_out")); };
    Func acc(name_ + "_acc"), out = output_func();
    std::vector<Expr> msg = message_;
    // A message that reads no neighbour (a constant, or destination operands only) still runs once
    // per in-edge: the update must see the reduction domain.
    bool reads_edges = false;
    for (const Expr &m : msg) reads_edges |= Internal::expr_uses_var(m, k_.x.name());
    if (!reads_edges) msg[0] = msg[0] + cast(type_, 0 * k_.x);
    reduce_into(acc, {f_, v_}, msg, Expr());
    const size_t num_outputs = define_out(out, acc);

    ext::SparseLayout sparse;
    sparse.csr(row_ptr_, num_edges_).nnz_index_array(col_idx_, num_src_).nnz_index_array(edge_ids_, num_edges_);
    ext::infer_ragged_bounds({out, acc}, sparse);

    ScheduleContext ctx;
    ctx.out = out;
    ctx.acc = acc;
    ctx.f = f_;
    ctx.v = v_;
    ctx.k = k_.x;
    ctx.device = device;
    ctx.features = features;
    ctx.knobs = knobs;
    ctx.monoid_merges = monoid_->merges();
    ctx.type = type_;
    bool split = false;
    // Each split form needs a monoid that merges, and a program splits once (either form).
    auto begin_split = [&](const char *directive) {
        if (!monoid_->merges())
            fail<ScheduleError>(directive, ": monoid '", monoid_->name, "' of program ", name_,
                                " declares no merge (Monoid::merge or merge_values)");
        if (split)
            fail<ScheduleError>(directive, ": program ", name_, " is already split (split_rows, split_nnz_lanes, "
                                "split_row_tails and scatter_nonzeros: one of them, once)");
        if (ctx.staged_tile)
            fail<ScheduleError>(directive, ": program ", name_, " stages its neighbour ids (stage_neighbours), which "
                                "the split forms do not read");
        split = true;
    };
    Func lanes;  // the lane form's partial results, once split
    // merged(f, v) = identity, then the monoid's merge of parts(at) over at's reduction domain.
    auto merge_into = [&](Func &merged, Func parts, const std::vector<Expr> &at) {
        if (tuples) {
            merged(f_, v_) = monoid_->identity_values(type_);
            const Tuple next = monoid_->merge_values(Tuple(merged(f_, v_)), Tuple(parts(at)));
            if (next.size() != monoid_->identity_values(type_).size())
                fail<ShapeError>("program ", name_, ": monoid '", monoid_->name, "' merges into ", next.size(),
                                 " values but its identity has ", monoid_->identity_values(type_).size());
            merged(f_, v_) = next;
        } else {
            merged(f_, v_) = monoid_->identity(type_);
            merged(f_, v_) = monoid_->merge(merged(f_, v_), parts(at));
        }
    };
    // Lanes over a range of `length` positions (at most max_length) of v (a row, or a segment):
    // lanes(f, v, lane) reduces the messages at positions k = (ko * U + step) * L + lane < length
    // (message_of(k)), named <prefix>_lanes, <prefix>_ko and <prefix>_lane (the merge's RVar).
    // (step, ko): step innermost. One step: the predicate is exact. Several: it bounds ko only, and
    // the steps past the range's end keep the lane's value; they read its last position (cached),
    // not the next range's.
    auto reduce_in_lanes = [&](int L, int U, const Expr &length, const Expr &max_length, const std::string &prefix,
                               const std::function<std::vector<Expr>(const Expr &)> &message_of) {
        NnzLanes n;
        n.count = L;
        n.steps = U;
        n.lane = Var("lane");
        RDom dom(0, U, 0, (max_length + (L * U - 1)) / (L * U), prefix + "_ko");
        n.step = dom.x;
        n.ko = dom.y;
        const Expr k = (dom.y * U + dom.x) * L + n.lane;
        dom.where(U == 1 ? k < length : dom.y * (L * U) < length);
        n.lanes = Func(prefix + "_lanes");
        // Several steps combine only the positions inside the range.
        reduce_into(n.lanes, {f_, v_, n.lane}, message_of(U == 1 ? k : min(k, length - 1)),
                    U > 1 ? k < length : Expr());
        RDom l(0, L, prefix + "_lane");
        n.merge = l.x;
        return n;
    };
    // The lane form (ScheduleContext::split_nnz_lanes): the messages at position k = ko * L + lane.
    ctx.split_lanes_impl = [&](ScheduleContext &c, int L, int U) {
        begin_split("split_nnz_lanes");
        NnzLanes r = reduce_in_lanes(L, U, degree_, max_degree_, name_, [&](const Expr &k) {
            std::vector<Expr> at_k;
            for (const Expr &m : msg) at_k.push_back(Internal::substitute(k_.x.name(), k, m));
            return at_k;
        });
        // The lanes merged in lane order.
        Func merged(name_ + "_merged");
        merge_into(merged, r.lanes, {f_, v_, r.merge});
        Func lane_out = output_func();
        define_out(lane_out, merged);
        ext::infer_ragged_bounds({lane_out, merged, r.lanes}, sparse);
        c.acc = merged;
        c.out = lane_out;
        lanes = r.lanes;
        return r;
    };
    // The message at edge-list position `position` (its source and edge: col_idx and edge_ids
    // there), the `k`-th of row `row` (its destination operands, dst() and degree() are the row's).
    // The position's own terms go through placeholders first: they read row_ptr at v, which the
    // row's substitution would change.
    auto message_at = [&](const Expr &position, const Expr &k, const Expr &row) {
        const Var src_at(name_ + "_src_at"), edge_at(name_ + "_edge_at"), degree_at(name_ + "_degree_at");
        std::vector<Expr> at;
        for (Expr m : msg) {
            m = Internal::substitute(u_, src_at, m);
            m = Internal::substitute(e_, edge_at, m);
            m = Internal::substitute(degree_, degree_at, m);
            m = Internal::substitute(v_.name(), row, m);
            m = Internal::substitute(k_.x.name(), k, m);
            m = Internal::substitute(src_at.name(), col_idx_(position), m);
            m = Internal::substitute(edge_at.name(), edge_ids_(position), m);
            m = Internal::substitute(degree_at.name(), row_ptr_(row + 1) - row_ptr_(row), m);
            at.push_back(m);
        }
        return at;
    };
    // The segment form (ScheduleContext::split_rows): segment s covers positions [seg_ptr(s),
    // seg_ptr(s + 1)) of row seg_row(s), and row v's segments are row_segs(v) .. row_segs(v + 1) - 1
    // (RowSplitTable).
    ImageParam seg_ptr(Int(32), 1, "seg_ptr"), seg_row(Int(32), 1, "seg_row"), row_segs(Int(32), 1, "row_segs");
    ImageParam seg_ids(Int(32), 1, "seg_ids");  // with source tiles: row v's segments, in tile order
    Param<int32_t> num_segs("num_segs"), max_segments("max_segments"), max_segment_len("max_segment_len");
    ctx.split_rows_impl = [&](ScheduleContext &c, int length, int64_t src_tile, int L, int U) {
        begin_split("split_rows");
        c.rows_split = length;
        c.rows_split_tile = src_tile;
        RowSegmentSplit r;
        r.length = length;
        r.src_tile = src_tile;
        r.s = v_;
        const Expr start = seg_ptr(v_), length_of = seg_ptr(v_ + 1) - start;
        // The message at position start + k: the source and the edge of that position, the degree
        // and the destination (operands included) of the segment's row.
        const Expr rows = out.output_buffers()[0].dim(1).extent();
        const Expr row = unsafe_promise_clamped(seg_row(v_), 0, rows - 1);
        std::vector<Func> segment_stages;
        r.segment_acc = Func(name_ + "_segment_acc");
        if (L == 1) {
            RDom ks(0, max_segment_len, name_ + "_ks");
            ks.where(ks < length_of);
            r.k = ks.x;
            reduce_into(r.segment_acc, {f_, v_}, message_at(start + ks.x, ks.x, row), Expr());
        } else {
            // Lanes of the segment's positions, as split_nnz_lanes takes a row's, merged in lane order
            // into segment_acc.
            r.lanes = reduce_in_lanes(L, U, length_of, max_segment_len, name_ + "_segment",
                                      [&](const Expr &k) { return message_at(start + k, k, row); });
            merge_into(r.segment_acc, r.lanes.lanes, {f_, v_, r.lanes.merge});
            segment_stages.push_back(r.lanes.lanes);
        }
        r.segments = Func(name_ + "_segments");
        r.segments(f_, v_) = tuples ? Tuple(r.segment_acc(f_, v_)) : Tuple(Expr(r.segment_acc(f_, v_)));
        // The row's segments merged in order (segment ids lie in [0, num_segs) by construction):
        // consecutive ones, or with source tiles those seg_ids lists for the row (each segment once).
        RDom j(0, max_segments, name_ + "_seg");
        const Expr first = row_segs(v_);
        j.where(j < row_segs(v_ + 1) - first);
        r.merge = j.x;
        Func merged(name_ + "_merged");
        Expr segment = unsafe_promise_clamped(first + j.x, 0, num_segs - 1);
        if (src_tile > 0) segment = unsafe_promise_clamped(seg_ids(segment), 0, num_segs - 1);
        merge_into(merged, r.segments, {f_, segment});
        Func segment_out = output_func();
        define_out(segment_out, merged);
        ext::SparseLayout by_segment;
        by_segment.csr(seg_ptr, num_edges_).nnz_index_array(col_idx_, num_src_).nnz_index_array(edge_ids_, num_edges_);
        segment_stages.push_back(r.segments);
        segment_stages.push_back(r.segment_acc);
        ext::infer_ragged_bounds(segment_stages, by_segment);
        ext::infer_ragged_bounds({segment_out, merged}, sparse);
        c.acc = merged;
        c.out = segment_out;
        return r;
    };
    // The staged form (ScheduleContext::stage_neighbours): the message reads the source and edge
    // ids through ids(k, v) and edges(k, v), computed a tile at a time at acc's ko.
    struct Staging {
        std::string ko_loop, block_loop;
        int rows = 0, tile = 0;
    } staging;
    Func staged_ids, staged_edges;
    ctx.stage_impl = [&](ScheduleContext &c, int tile, const Var &row_block, int rows_per_block) {
        if (c.staged_tile) fail<ScheduleError>("stage_neighbours: program ", name_, " is already staged (call it once)");
        if (split)
            fail<ScheduleError>("stage_neighbours: program ", name_, " is split (split_rows, split_nnz_lanes, "
                                "split_row_tails or scatter_nonzeros), whose "
                                "forms read neighbour ids where they use them");
        c.staged_tile = tile;
        NeighbourTiles t;
        t.tile = tile;
        t.kv = Var(name_ + "_kv");
        const Expr at = row_ptr_(v_) + t.kv;
        t.ids = Func(name_ + "_ids");
        t.ids(t.kv, v_) = col_idx_(at);
        std::vector<Expr> staged = msg;
        for (Expr &m : staged) m = Internal::substitute(u_, t.ids(k_.x, v_), m);
        // The edge id, where the message reads one (edges stays undefined otherwise): through a
        // placeholder, as the segment form does.
        const Var edge_at(name_ + "_edge_at");
        bool reads_edge_ids = false;
        for (Expr &m : staged) {
            m = Internal::substitute(e_, edge_at, m);
            reads_edge_ids |= Internal::expr_uses_var(m, edge_at.name());
        }
        if (reads_edge_ids) {
            t.edges = Func(name_ + "_edges");
            t.edges(t.kv, v_) = edge_ids_(at);
            for (Expr &m : staged) m = Internal::substitute(edge_at.name(), t.edges(k_.x, v_), m);
        }
        Func staged_acc(name_ + "_acc"), staged_out = output_func();
        reduce_into(staged_acc, {f_, v_}, staged, Expr());
        define_out(staged_out, staged_acc);
        std::vector<Func> funcs = {staged_out, staged_acc, t.ids};
        if (t.edges.defined()) funcs.push_back(t.edges);
        ext::infer_ragged_bounds(funcs, sparse);
        t.ko = RVar(name_ + "_ko");
        t.ki = RVar(name_ + "_ki");
        staged_acc.update().split(k_.x, t.ko, t.ki, tile, TailStrategy::GuardWithIf);
        auto stage = [&](Func &fn) {
            fn.compute_at(staged_acc, t.ko).bound_extent(t.kv, tile);
            if (device == Device::CUDA) fn.store_in(MemoryType::GPUShared);
            else fn.store_in(MemoryType::Stack);
        };
        stage(t.ids);
        if (t.edges.defined()) stage(t.edges);
        staging.ko_loop = staged_acc.name() + ".s1." + k_.x.name() + "." + t.ko.name();
        staging.block_loop = staged_out.name() + ".s0." + v_.name() + "." + row_block.name();
        staging.rows = rows_per_block;
        staging.tile = tile;
        staged_ids = t.ids;
        staged_edges = t.edges;
        c.acc = staged_acc;
        c.out = staged_out;
        return t;
    };
    // The form by nonzeros (ScheduleContext::scatter_nonzeros): position p of the CSR lies in row
    // pos_row(p); its message scatters into that row's accumulator.
    ImageParam pos_row(Int(32), 1, "pos_row");
    ctx.scatter_impl = [&](ScheduleContext &c, int warp_steps) {
        if (tuples)
            fail<ScheduleError>("scatter_nonzeros: monoid '", monoid_->name, "' of program ", name_,
                                " accumulates a tuple; atomic updates combine one value");
        begin_split("scatter_nonzeros");
        c.nonzeros_scattered = true;
        c.scatter_warp_steps = warp_steps;
        NonzeroScatter r;
        r.steps = warp_steps;
        // The graph's positions: row_ptr's last entry (a padded device copy's empty rows repeat it).
        const Expr nnz = row_ptr_(row_ptr_.dim(0).extent() - 1);
        Expr position, valid;
        if (warp_steps == 0) {
            // At least one iteration (a GPU launch needs a block: num_edges is bound to at least 1),
            // none past the last position.
            RDom p(0, num_edges_, name_ + "_p");
            p.where(p.x < nnz);
            r.p = p.x;
            position = p.x;
        } else {
            // Whole chunks of 32 x steps positions; lanes past the last position read it (an edgeless
            // graph's arrays hold one unread entry) and combine the identity.
            const int chunk = 32 * warp_steps;
            RDom p(0, 32, 0, warp_steps, 0, (num_edges_ + (chunk - 1)) / chunk, name_ + "_p");
            r.lane = p.x;
            r.step = p.y;
            r.chunk = p.z;
            const Expr at = p.x + 32 * (p.y + warp_steps * p.z);
            valid = at < nnz;
            position = Halide::max(Halide::min(at, nnz - 1), 0);
        }
        const Expr rows = out.output_buffers()[0].dim(1).extent();
        const Expr row = unsafe_promise_clamped(pos_row(position), 0, rows - 1);
        std::vector<Expr> at_position = message_at(position, position - row_ptr_(row), row);
        if (valid.defined())
            for (Expr &m : at_position) m = select(valid, m, monoid_->identity(type_));
        // out is the accumulator itself where finalizing changes nothing: one output, no finalize,
        // and an identity of 0 (rows without in-edges must read 0).
        const Expr identity = Internal::simplify(monoid_->identity(type_));
        // (Not with relabeled sources: their stores go to other rows than the updates read.)
        r.out_is_acc = !finalize_ && !finalize_outputs_ && Internal::is_const_zero(identity) && !c.sources_relabeled;
        Func scattered = r.out_is_acc ? output_func() : Func(name_ + "_acc");
        scattered(f_, v_) = monoid_->identity(type_);
        const Expr next = monoid_->combine(scattered(f_, row), at_position[0]);
        // Halide's atomic update is one instruction or a compare-and-swap of the value it read; a
        // combine that reads the accumulator twice needs a lock around it (not on the GPU).
        if (const int reads = count_calls(next, scattered.name()); reads > 1)
            fail<ScheduleError>("scatter_nonzeros: monoid '", monoid_->name, "' of program ", name_,
                                " reads the accumulator ", reads, " times in its combine; atomic updates take a "
                                "combine that reads it once (as sum, product, max and min do)");
        scattered(f_, row) = next;
        Func scatter_out = scattered;
        if (!r.out_is_acc) {
            scatter_out = output_func();
            define_out(scatter_out, scattered);
        }
        ext::infer_ragged_bounds(r.out_is_acc ? std::vector<Func>{scattered} : std::vector<Func>{scatter_out, scattered},
                                 sparse);
        scattered.compute_root();
        // The monoid declares itself commutative (it merges): any order of the updates is its result.
        scattered.update().atomic(/*override_associativity_test=*/true);
        c.acc = scattered;
        c.out = scatter_out;
        return r;
    };
    // Relabeled sources (ScheduleContext::relabel_sources): the graph's arrays are the relabeled
    // graph's, its row i is old row src_order(i); the message reads source operands through copies
    // in the new order and everything else at the old ids.
    ImageParam src_order(Int(32), 1, "src_order");
    ctx.relabel_impl = [&](ScheduleContext &c) {
        if (c.sources_relabeled) fail<ScheduleError>("relabel_sources: program ", name_, " is already relabeled");
        if (!monoid_->merges())
            fail<ScheduleError>("relabel_sources: monoid '", monoid_->name, "' of program ", name_,
                                " declares no merge; a relabeled row lists its neighbours in another order");
        if (split || c.staged_tile || c.rows_balanced)
            fail<ScheduleError>("relabel_sources: call it first, before split, staged, scattered and ordered forms "
                                "(program ", name_, ")");
        c.sources_relabeled = true;
        RelabeledSources r;
        r.i = Var(name_ + "_i");
        const Expr old_id = unsafe_promise_clamped(src_order(r.i), 0, num_src_ - 1);
        std::map<std::string, Internal::Function> copies;
        for (const Operand &o : operands_) {
            if (o.at != At::Src) continue;
            Func copy(name_ + "_" + o.name + "_relabeled");
            copy(f_, r.i) = o.param(f_, old_id);  // (a broadcast operand's copy is read at f = 0)
            copies.emplace(o.param.name(), copy.function());
            r.sources.push_back(copy);
        }
        const Expr rows = out.output_buffers()[0].dim(1).extent();
        const Var src_at(name_ + "_src_at"), new_src(name_ + "_new_src"), edge_at(name_ + "_edge_at"),
            degree_at(name_ + "_degree_at");
        RedirectRowLoads redirect(copies, new_src);
        for (Expr &m : msg) {
            // The position's terms through placeholders; source loads from the copies at the new id;
            // the destination's and src()'s ids the old ones.
            m = Internal::substitute(u_, src_at, m);
            m = Internal::substitute(e_, edge_at, m);
            m = Internal::substitute(degree_, degree_at, m);
            m = redirect.mutate(m);
            m = Internal::substitute(v_.name(), unsafe_promise_clamped(src_order(v_), 0, rows - 1), m);
            m = Internal::substitute(src_at.name(), unsafe_promise_clamped(src_order(u_), 0, num_src_ - 1), m);
            m = Internal::substitute(new_src.name(), u_, m);
            m = Internal::substitute(edge_at.name(), e_, m);
            m = Internal::substitute(degree_at.name(), degree_, m);
        }
        Func relabeled_acc(name_ + "_acc"), relabeled_out = output_func();
        reduce_into(relabeled_acc, {f_, v_}, msg, Expr());
        define_out(relabeled_out, relabeled_acc);
        std::vector<Func> funcs = {relabeled_out, relabeled_acc};
        funcs.insert(funcs.end(), r.sources.begin(), r.sources.end());
        ext::infer_ragged_bounds(funcs, sparse);
        c.acc = relabeled_acc;
        c.out = relabeled_out;
        return r;
    };
    // The row-tail form (ScheduleContext::split_row_tails): tail t covers positions
    // [tail_start(t), tail_end(t)) of row tail_row(t); out merges each into its row.
    ImageParam tail_start(Int(32), 1, "tail_start"), tail_end(Int(32), 1, "tail_end"), tail_row(Int(32), 1, "tail_row");
    Param<int32_t> num_tails("num_tails");
    ctx.tails_impl = [&](ScheduleContext &c, int length) {
        if (tuples)
            fail<ScheduleError>("split_row_tails: monoid '", monoid_->name, "' of program ", name_,
                                " accumulates a tuple; a tail's atomic merge moves one value");
        if (finalize_ || finalize_outputs_)
            fail<ScheduleError>("split_row_tails: program ", name_, " finalizes its rows (finalize or "
                                "finalize_outputs); its tails would be merged into the finalized value");
        if (c.sources_relabeled)
            fail<ScheduleError>("split_row_tails: program ", name_, " relabels its sources; the tails' merge would "
                                "read rows other than those relabel_sources stores to");
        begin_split("split_row_tails");
        c.tails_split = length;
        RowTailSplit r;
        r.length = length;
        r.t = v_;
        RDom kt(0, length, name_ + "_kt");
        // Tails past the table's last (the rounded-up loops of a split) read its last entry.
        const Expr t = clamp(v_, 0, num_tails - 1);
        const Expr start = tail_start(t);
        kt.where(kt < tail_end(t) - start);
        r.k = kt.x;
        const Expr rows = out.output_buffers()[0].dim(1).extent();
        const Expr row = unsafe_promise_clamped(tail_row(t), 0, rows - 1);
        // Tails lie inside their rows (row_tails): positions in [0, num_edges).
        const Expr position = unsafe_promise_clamped(start + kt.x, 0, num_edges_ - 1);
        r.tail_acc = Func(name_ + "_tail_acc");
        reduce_into(r.tail_acc, {f_, v_}, message_at(position, position - row_ptr_(row), row), Expr());
        r.tails = Func(name_ + "_tails");
        r.tails(f_, v_) = r.tail_acc(f_, v_);
        ext::infer_ragged_bounds({r.tails, r.tail_acc}, sparse);
        RDom each(0, num_tails, name_ + "_tail");
        r.r = each.x;
        Func merged_out = c.out;
        const Expr into = unsafe_promise_clamped(tail_row(each.x), 0, rows - 1);
        const Expr next = monoid_->merge(merged_out(f_, into), r.tails(f_, each.x));
        if (const int reads = count_calls(next, merged_out.name()); reads > 1)
            fail<ScheduleError>("split_row_tails: monoid '", monoid_->name, "' of program ", name_, " reads the row ",
                                reads, " times in its merge; an atomic merge takes one that reads it once");
        merged_out(f_, into) = next;
        merged_out.update().atomic(/*override_associativity_test=*/true);
        return r;
    };
    try {
        schedule.apply(ctx);
    } catch (const Halide::Error &e) {
        fail<ScheduleError>("schedule ", point_str(schedule, knobs), " failed on program ", name_, ": ", e.what());
    }
    out = ctx.out;
    const char *ordered = ctx.rows_by_locality ? "locality_rows" : "balanced_rows";
    if (ctx.rows_balanced && ctx.rows_split)
        fail<ScheduleError>("schedule ", point_str(schedule, knobs), " on program ", name_, ": ", ordered,
                            " and split_rows do not go together (segments run in row order)");
    if (ctx.rows_balanced && ctx.nonzeros_scattered)
        fail<ScheduleError>("schedule ", point_str(schedule, knobs), " on program ", name_, ": ", ordered,
                            " and scatter_nonzeros do not go together (the scatter visits positions, not rows)");
    if (ctx.sources_relabeled) {
        if (ctx.rows_balanced)
            fail<ScheduleError>("schedule ", point_str(schedule, knobs), " on program ", name_, ": relabel_sources and ",
                                ordered, " do not go together (the relabeled rows come in the locality order)");
        // Row i of the relabeled graph is old row src_order(i): out's stores go there.
        std::vector<std::string> names;
        for (const auto &buf : out.output_buffers()) names.push_back(buf.name());
        s->lowering_passes.push_back(std::make_shared<ext::StoreIndexLets>(names));
        s->lowering_passes.push_back(std::make_shared<ext::BindBufferStores>(names, 1, src_order.parameter()));
        s->relabeled = true;
        s->src_order = src_order;
    }
    if (ctx.rows_balanced && ctx.tails_split)
        fail<ScheduleError>("schedule ", point_str(schedule, knobs), " on program ", name_, ": ", ordered,
                            " and split_row_tails do not go together (tails merge into rows in the graph's order)");
    if (ctx.tails_split) {
        s->tail_len = ctx.tails_split;
        s->tail_start = tail_start;
        s->tail_end = tail_end;
        s->tail_row = tail_row;
        s->num_tails = num_tails;
    }
    if (ctx.nonzeros_scattered) {
        s->scatters = true;
        s->pos_row = pos_row;
        // The scatter's atomic updates in the single-index form that lowers to one atomic add (sums),
        // then the runs the schedule asked to accumulate in registers.
        s->lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
        for (const std::string &run : ctx.run_loops)
            s->lowering_passes.push_back(std::make_shared<ext::AccumulateAtomicRuns>(run));
        for (const std::string &step : ctx.lane_loops)
            s->lowering_passes.push_back(std::make_shared<ext::SegmentedLaneAtomics>(step));
    }
    if (ctx.rows_split) {
        s->segment_len = ctx.rows_split;
        s->segment_src_tile = ctx.rows_split_tile;
        s->seg_ids = seg_ids;
        s->seg_ptr = seg_ptr;
        s->seg_row = seg_row;
        s->row_segs = row_segs;
        s->num_segs = num_segs;
        s->max_segments = max_segments;
        s->max_segment_len = max_segment_len;
    }
    if (ctx.rows_balanced) {
        // bind_buffer: position v of every stage that works per row computes row row_order(v) --
        // its degree, its neighbours and its destination operands -- while the calls between
        // those stages keep reading position v. The order's entries are clamped to the output's
        // rows (the bounds every read through them takes); out's stores are remapped to row
        // row_order(v) by BindBufferStores (after StoreIndexLets uncovers let-bound indices).
        const Expr rows = out.output_buffers()[0].dim(1).extent();
        const Expr row = clamp(row_order_(v_), 0, rows - 1);
        std::vector<Func> stages = {out, ctx.acc};
        std::vector<std::string> own = {out.name(), ctx.acc.name(), acc.name()};
        for (const Func &fn : {lanes, staged_ids, staged_edges}) {
            if (!fn.defined()) continue;
            stages.push_back(fn);
            own.push_back(fn.name());
        }
        ext::bind_rows_except(stages, v_, row, own);
        std::vector<std::string> names;
        for (const auto &buf : out.output_buffers()) names.push_back(buf.name());
        s->lowering_passes.push_back(std::make_shared<ext::StoreIndexLets>(names));
        s->lowering_passes.push_back(std::make_shared<ext::BindBufferStores>(names, 1, row_order_.parameter()));
        s->row_order = row_order_;
        s->orders_rows = true;
        s->locality_order = ctx.rows_by_locality;
    }
    if (ctx.staged_tile) {
        // The tiles' loop runs as far as the longest row of the row block (rows past the graph's
        // last read the last: the row pointer array is not padded to whole blocks).
        const Expr block_row0 = Internal::Variable::make(Int(32), staging.block_loop) * staging.rows;
        const Expr last_row = row_ptr_.dim(0).extent() - 2;
        s->lowering_passes.push_back(std::make_shared<ext::BlockUniformLoop>(
            staging.ko_loop,
            ext::block_max_chunks(row_ptr_.parameter(), block_row0, staging.rows, staging.tile,
                                  ctx.rows_balanced ? row_order_.parameter() : Internal::Parameter(), last_row),
            staging.block_loop));
    }
    if (ctx.tiles_in_registers) s->lowering_passes.push_back(std::make_shared<ext::CompactThreadAllocations>());
    out.bound(f_, 0, features);

    s->out = out;
    s->num_outputs = static_cast<int>(num_outputs);
    s->schedule = point_str(schedule, knobs);
    if (schedule.for_graph) {
        s->program = std::make_shared<const SpmmProgram>(*this);
        s->def = std::make_shared<const ScheduleDef>(schedule);
        s->point = knobs;
    }
    s->pipeline = Pipeline(out);
    for (const auto &pass : s->lowering_passes) s->pipeline.add_custom_lowering_pass(pass.get(), nullptr);
    s->target = jit_target(device, !ctx.indexing_32bit);
    s->indexing_32bit = ctx.indexing_32bit;
    s->row_vector = ctx.row_vector;
    if (ctx.row_vector > 0)
        for (const auto &buf : out.output_buffers()) {
            OutputImageParam o = buf;
            o.dim(0).set_min(0).set_extent(features);
            // Stores bound to a row order (balanced, locality, relabeled) are remapped by the
            // BindBufferStores pass, which finds their row term by the output's row stride: it
            // stays a parameter there (their feature extent still makes whole tiles).
            if (!ctx.rows_balanced && !ctx.sources_relabeled) o.dim(1).set_min(0).set_stride(features);
            o.set_host_alignment(ctx.row_vector * type_.bytes());
        }
    s->arguments = {row_ptr_, col_idx_, edge_ids_};
    if (s->orders_rows) s->arguments.push_back(row_order_);
    if (s->relabeled) s->arguments.push_back(src_order);
    if (s->segment_len) {
        s->arguments.push_back(seg_ptr);
        s->arguments.push_back(seg_row);
        s->arguments.push_back(row_segs);
        if (s->segment_src_tile) s->arguments.push_back(seg_ids);
    }
    if (s->scatters) s->arguments.push_back(pos_row);
    if (s->tail_len) {
        s->arguments.push_back(tail_start);
        s->arguments.push_back(tail_end);
        s->arguments.push_back(tail_row);
    }
    for (const Operand &o : operands_) s->arguments.push_back(o.param);
    s->arguments.push_back(max_degree_);
    s->arguments.push_back(num_edges_);
    s->arguments.push_back(num_src_);
    if (s->segment_len) {
        s->arguments.push_back(num_segs);
        s->arguments.push_back(max_segments);
        s->arguments.push_back(max_segment_len);
    }
    if (s->tail_len) s->arguments.push_back(num_tails);
    if (device == Device::CPU) {
        constrain_operands(*s);
        jit_compile(s->pipeline, s->target, device, "user program " + name_);
        check_passes(*s);
    }
    SpmmKernel k;
    k.state_ = std::move(s);
    return k;
}

/// The graph's side of a run: its sizes and a function giving its index arrays (row_ptr, col_idx,
/// edge_ids, and the row order when the kernel orders rows, else undefined) as Halide buffers:
/// host buffers on the CPU, device buffers on CUDA; wrappers of caller memory go to `borrowed`,
/// detached after the call.
struct SpmmKernel::Indices {
    int64_t num_src = 0, num_dst = 0, num_edges = 0, max_degree = 0;
    std::function<std::array<Buffer<>, 4>(State &, std::vector<Buffer<>> &borrowed)> buffers;
    /// The segment table of a kernel that splits rows (State::segment_len > 0), on its device.
    std::function<std::shared_ptr<RowSplitTable>(State &)> segments;
    /// The row of every CSR position, for a kernel that scatters nonzeros (State::scatters), on its
    /// device.
    std::function<Buffer<>(State &)> position_rows;
    /// The relabeling of a kernel that relabels sources (State::relabeled), on its device.
    std::function<Buffer<>(State &)> source_order;
    /// The tail table of a kernel that splits off row tails (State::tail_len > 0), on its device.
    std::function<std::shared_ptr<const RowTailTable>(State &)> tails;
};

namespace {

/// Edge ids equal to CSR positions: 0 .. n - 1.
Buffer<> positions(int n) {
    Buffer<int32_t> iota(n, "edge_ids");
    for (int32_t i = 0; i < n; ++i) iota(i) = i;
    return iota;
}

}  // namespace

void SpmmKernel::run(const Graph &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                     const CudaLaunch &launch) const {
    run(g, operands, std::vector<Tensor *>{&out}, launch);
}

void SpmmKernel::run(const GraphView &g, const std::map<std::string, Tensor> &operands, Tensor &out,
                     const CudaLaunch &launch) const {
    run(g, operands, std::vector<Tensor *>{&out}, launch);
}

int SpmmKernel::num_outputs() const { return state_->num_outputs; }

std::map<std::string, int64_t> SpmmKernel::point_for(int64_t num_src, int64_t num_dst, int64_t num_edges,
                                                     int64_t max_degree, bool graph_view) const {
    const State &s = *state_;
    if (!s.def) return s.point;
    const RunShape shape{s.device,  s.features, s.program->monoid_->merges(), num_src, num_dst, num_edges,
                         max_degree, graph_view};
    return s.def->complete(s.def->for_graph(s.point, shape), s.features, s.device);
}

const SpmmKernel *SpmmKernel::variant_for(int64_t num_src, int64_t num_dst, int64_t num_edges, int64_t max_degree,
                                          bool graph_view) const {
    State &s = *state_;
    if (!s.def) return nullptr;
    const std::array<int64_t, 5> shape{num_src, num_dst, num_edges, max_degree, graph_view ? 1 : 0};
    {
        std::lock_guard<std::mutex> lock(s.variants_mu);
        if (shape == s.last_shape) return s.last_variant;
    }
    const std::map<std::string, int64_t> point = point_for(num_src, num_dst, num_edges, max_degree, graph_view);
    std::lock_guard<std::mutex> lock(s.variants_mu);
    const SpmmKernel *v = nullptr;
    if (point != s.point) {
        auto it = s.variants.find(point);
        if (it == s.variants.end()) {
            ScheduleDef fixed = *s.def;  // the variant runs its own point on every graph
            fixed.for_graph = nullptr;
            it = s.variants.emplace(point, s.program->compile(s.features, s.device, fixed, point)).first;
        }
        v = &it->second;
    }
    s.last_shape = shape;
    s.last_variant = v;
    return v;
}

void SpmmKernel::run(const Graph &graph, const std::map<std::string, Tensor> &operands,
                     const std::vector<Tensor *> &outs, const CudaLaunch &launch) const {
    if (const SpmmKernel *v = variant_for(graph.num_src(), graph.num_dst(), graph.num_edges(), graph.max_row_length(), false))
        return v->run(graph, operands, outs, launch);
    if (state_->relabeled && graph.num_src() != graph.num_dst())
        fail<GraphError>("user program ", state_->name, " relabels its sources (schedule ", state_->schedule,
                         " calls relabel_sources), which takes square graphs; this one has ", graph.num_src(),
                         " sources and ", graph.num_dst(), " destinations");
    // A kernel that relabels runs on the graph renumbered in its locality order (made once).
    const Graph &g = state_->relabeled ? graph.relabeled() : graph;
    const CSR &csr = g.csr();
    Indices ix;
    ix.num_src = csr.num_cols, ix.num_dst = csr.num_rows, ix.num_edges = csr.nnz(), ix.max_degree = g.max_row_length();
    ix.buffers = [&g, &csr, &launch](State &s, std::vector<Buffer<>> &) -> std::array<Buffer<>, 4> {
        if (s.device == Device::CUDA) {
            // Copied to the device once per graph and context (a graph without edges holds one
            // unread entry), balancedIdx with them.
            // (Source tiles read the edge ids regrouped with their segment table instead.)
            auto dev = DeviceCsr::get(g, 1, launch, s.target);
            Buffer<> eids = s.segment_src_tile > 0 ? Buffer<>() : DeviceEdgeIds::get(g, launch, s.target)->ids;
            Buffer<> order;
            if (s.orders_rows)
                order = s.locality_order ? DeviceRowOrder::get(g, 1, launch, s.target)->order : dev->balanced;
            return {dev->row_ptr, dev->col_idx, eids, order};
        }
        return {index_buffer(csr.row_ptr, "row_ptr"), index_buffer(csr.col_idx, "col_idx"),
                s.segment_src_tile > 0       ? Buffer<>()
                : csr.identity_edge_ids() ? positions(static_cast<int>(std::max<int64_t>(csr.nnz(), 1)))
                                          : index_buffer(csr.edge_ids, "edge_ids"),
                s.orders_rows ? index_buffer(s.locality_order ? g.locality_idx() : g.balanced_idx(), "row_order")
                              : Buffer<>()};
    };
    ix.segments = [&g, &launch](State &s) {
        return s.device == Device::CUDA
                   ? RowSplitTable::device(g, s.segment_len, launch, s.target, s.segment_src_tile)
                   : RowSplitTable::host(g, s.segment_len, s.segment_src_tile);
    };
    ix.source_order = [&graph, &launch](State &s) -> Buffer<> {
        if (s.device == Device::CUDA) return DeviceRowOrder::get(graph, 1, launch, s.target)->order;
        return index_buffer(graph.locality_idx(), "src_order");
    };
    ix.tails = [&g, &launch](State &s) {
        return s.device == Device::CUDA ? RowTailTable::device(g, s.tail_len, launch, s.target)
                                        : RowTailTable::host(g, s.tail_len);
    };
    ix.position_rows = [&g, &launch](State &s) -> Buffer<> {
        // The destination-ordered COO's rows (made once per graph; on CUDA its device copy, which
        // the built-in g-SpMM by nonzeros shares).
        if (s.device == Device::CUDA) return DeviceCoo::get(g, true, 0, launch, s.target)->dst;
        return index_buffer(g.coo_by_dst().row, "pos_row");
    };
    run_on(ix, operands, outs, launch);
}

void SpmmKernel::run(const GraphView &g, const std::map<std::string, Tensor> &operands, const std::vector<Tensor *> &outs,
                     const CudaLaunch &launch) const {
    const State &st = *state_;
    g.check();
    if (const SpmmKernel *v = variant_for(g.num_src, g.num_dst, g.num_edges, g.degree_bound(), true))
        return v->run(g, operands, outs, launch);
    // Forms that read a table the Graph makes (views carry none).
    auto needs_graph = [&](bool uses, const char *does, const char *directive, const char *table) {
        if (uses)
            fail<GraphError>("user program ", st.name, " ", does, " (schedule ", st.schedule, " calls ", directive,
                             "), which needs a Graph's ", table, "; a graph view runs a point without it (a "
                             "schedule's for_graph can pick one where RunShape::graph_view, as the default "
                             "schedule's picks whole rows)");
    };
    needs_graph(st.segment_len > 0, "splits rows into segments", "split_rows", "segment table");
    needs_graph(st.relabeled, "relabels its sources", "relabel_sources", "relabeled arrays");
    needs_graph(st.tail_len > 0, "splits off row tails", "split_row_tails", "tail table");
    needs_graph(st.scatters, "reduces by nonzeros", "scatter_nonzeros", "row of every position");
    if (g.device != st.device)
        fail<GraphError>("user program ", st.name, " runs on ", device_name(st.device), " but the graph view's arrays are on ",
                         device_name(g.device));
    if (st.device == Device::CUDA && g.identity_edge_ids() && g.num_edges > 0)
        fail<GraphError>("user program ", st.name, " on CUDA needs the view's edge ids (GraphView::edge_ids; "
                         "positions when they are the ids)");
    if (st.orders_rows && !g.row_order && g.num_dst > 0)
        fail<GraphError>("user program ", st.name, " runs its rows in order of in-degree (schedule ", st.schedule,
                         " calls balanced_rows) and needs the view's row order (GraphView::row_order)");
    Indices ix;
    ix.num_src = g.num_src, ix.num_dst = g.num_dst, ix.num_edges = g.num_edges, ix.max_degree = g.degree_bound();
    ix.buffers = [&g](State &s, std::vector<Buffer<>> &borrowed) -> std::array<Buffer<>, 4> {
        const int rp = static_cast<int>(g.row_ptr_len), ne = static_cast<int>(std::max<int64_t>(g.num_edges, 1));
        const int nd = static_cast<int>(g.num_dst);
        const index_t *eids = g.edge_ids ? g.edge_ids : g.col_idx;  // CUDA views carry ids (checked above)
        if (s.device == Device::CUDA) {
            auto wrap = [&](const index_t *ptr, int n, const char *name) {
                borrowed.push_back(wrap_device_buffer(Int(32), const_cast<index_t *>(ptr), {n}, s.target, name));
                return borrowed.back();
            };
            return {wrap(g.row_ptr, rp, "row_ptr"), wrap(g.col_idx, ne, "col_idx"), wrap(eids, ne, "edge_ids"),
                    s.orders_rows ? wrap(g.row_order, nd, "row_order") : Buffer<>()};
        }
        return {Buffer<>(Int(32), const_cast<index_t *>(g.row_ptr), {rp}, "row_ptr"),
                Buffer<>(Int(32), const_cast<index_t *>(g.col_idx), {ne}, "col_idx"),
                g.edge_ids ? Buffer<>(Int(32), const_cast<index_t *>(g.edge_ids), {ne}, "edge_ids") : positions(ne),
                s.orders_rows ? Buffer<>(Int(32), const_cast<index_t *>(g.row_order), {nd}, "row_order") : Buffer<>()};
    };
    run_on(ix, operands, outs, launch);
}

void SpmmKernel::run_on(const Indices &g, const std::map<std::string, Tensor> &operands,
                        const std::vector<Tensor *> &outs, const CudaLaunch &launch) const {
    State &s = *state_;
    const bool cuda = s.device == Device::CUDA;
    if (cuda && !launch.context)
        fail<ShapeError>("user program ", s.name, " runs on CUDA and needs a CudaLaunch with a context");
    const DType dtype = s.type.bits() == 64 ? DType::F64 : DType::F32;
    if (static_cast<int>(outs.size()) != s.num_outputs)
        fail<ShapeError>("user program ", s.name, " has ", s.num_outputs, s.num_outputs == 1 ? " output" : " outputs",
                         " but ", outs.size(), outs.size() == 1 ? " tensor was" : " tensors were", " given for them");
    auto out_name = [&](size_t i) { return s.num_outputs == 1 ? std::string("out") : "out " + std::to_string(i); };
    for (size_t i = 0; i < outs.size(); ++i) {
        if (!outs[i]) fail<ShapeError>("user program ", s.name, ": ", out_name(i), " is null");
        check_tensor(s.name, out_name(i), *outs[i], s.device, dtype, g.num_dst, s.features);
    }
    Tensor &out = *outs[0];
    const int64_t rows_of[3] = {g.num_src, g.num_dst, g.num_edges};  // by At
    const std::vector<const Tensor *> given = match_operands(s.name, s.operands, operands, s.device, dtype,
                                                             s.features, rows_of);
    if (s.indexing_32bit) {
        // Compiled with 32-bit indexing (ScheduleContext::int32_indexing): no buffer may reach 2^31 elements.
        auto check_32bit = [&](const Tensor &t, const std::string &what) {
            if (needs_large_buffers(t.numel()))
                fail<ShapeError>("user program ", s.name, " was compiled with 32-bit indexing (schedule ", s.schedule,
                                 "), but ", what, " has ", t.numel(), " elements (2^31 or more): compile it under a "
                                 "point without int32_indexing (lane_merge = 1 for the default schedule)");
        };
        for (size_t i = 0; i < s.operands.size(); ++i)
            if (given[i]) check_32bit(*given[i], "operand " + s.operands[i].name);
        for (size_t i = 0; i < outs.size(); ++i) check_32bit(*outs[i], out_name(i));
    }

    if (s.row_vector > 0) {
        // Aligned rows (ScheduleContext::aligned_rows): vector accesses assume aligned data.
        const int bytes = s.row_vector * s.type.bytes();
        for (size_t i = 0; i < s.operands.size(); ++i)
            if (given[i] && aligned_operand(s.operands[i], s.features, s.row_vector))
                check_row_alignment(s.name, "operand '" + s.operands[i].name + "'", *given[i], bytes, s.schedule);
        for (size_t i = 0; i < outs.size(); ++i) check_row_alignment(s.name, out_name(i), *outs[i], bytes, s.schedule);
    }

    ParamMap params;
    std::vector<Buffer<>> keep, borrowed;  // borrowed: device wrappers of caller memory, detached after the call
    std::shared_ptr<RowSplitTable> segments;  // the segment table (it owns its buffers), alive through the call
    std::shared_ptr<const RowTailTable> tails;  // the tail table, likewise
    for (size_t i = 0; i < s.operands.size(); ++i) {
        const Operand &o = s.operands[i];
        const int64_t rows = rows_of[static_cast<int>(o.at)];
        const int width = operand_width(o, s.features);
        const char *name = o.name.c_str();
        if (cuda && rows == 0 && g.num_dst > 0)
            // An operand without rows (edge features of a graph without edges) is never read; Halide
            // still wants a buffer of one row, which the output's memory lends.
            borrowed.push_back(wrap_device_buffer(s.type, out.data(), halide_sizes({width}, 1), s.target, name));
        else if (cuda && rows > 0)
            borrowed.push_back(wrap_device_buffer(s.type, given[i]->data(), halide_sizes({width}, rows), s.target, name));
        else if (!cuda)
            keep.push_back(feature_buffer(*given[i], {width}, name));
        else
            continue;  // no rows and no output rows: nothing runs
        params.set(o.param, cuda ? borrowed.back() : keep.back());
    }
    auto release = [&](CudaJITContext *ctx) {
        for (auto &b : borrowed) b.get()->device_detach_native(ctx);
    };
    if (g.num_dst == 0) {
        CudaJITContext ctx(launch);
        release(&ctx);
        return;
    }
    if (!cuda && g.num_edges == 0) {
        for (Tensor *o : outs) std::memset(o->data(), 0, o->nbytes());
        return;
    }
    auto bind_indices = [&] {
        std::array<Buffer<>, 4> ix = g.buffers(s, borrowed);
        keep.insert(keep.end(), ix.begin(), ix.end());
        if (s.segment_len > 0) segments = g.segments(s);
        const bool tiles = segments && s.segment_src_tile > 0;
        params.set(s.row_ptr, ix[0]);
        // With source tiles the segments read the edges in tile order, kept with the table.
        params.set(s.col_idx, tiles ? segments->col_idx : ix[1]);
        params.set(s.edge_ids, tiles ? segments->edge_ids : ix[2]);
        if (s.orders_rows) params.set(s.row_order, ix[3]);
        if (tiles) params.set(s.seg_ids, segments->seg_ids);
        if (s.segment_len > 0) {
            params.set(s.seg_ptr, segments->seg_ptr);
            params.set(s.seg_row, segments->seg_row);
            params.set(s.row_segs, segments->row_segs);
            params.set(s.num_segs, segments->num_segs);
            params.set(s.max_segments, std::max<int32_t>(segments->max_segments, 1));
            params.set(s.max_segment_len, std::max<int32_t>(segments->max_segment_len, 1));
        }
        if (s.scatters) {
            keep.push_back(g.position_rows(s));
            params.set(s.pos_row, keep.back());
        }
        if (s.relabeled) {
            keep.push_back(g.source_order(s));
            params.set(s.src_order, keep.back());
        }
        if (s.tail_len > 0) {
            tails = g.tails(s);
            params.set(s.tail_start, tails->tail_start);
            params.set(s.tail_end, tails->tail_end);
            params.set(s.tail_row, tails->tail_row);
            params.set(s.num_tails, tails->num_tails);
        }
    };
    // With row tails, a row's own reduction takes its first tail_len positions (its where clause
    // k < degree does the rest).
    params.set(s.max_degree, static_cast<int32_t>(s.tail_len > 0 ? std::min<int64_t>(g.max_degree, s.tail_len)
                                                                 : g.max_degree));
    params.set(s.num_edges, static_cast<int32_t>(std::max<int64_t>(g.num_edges, 1)));
    params.set(s.num_src, static_cast<int32_t>(std::max<int64_t>(g.num_src, 1)));
    if (cuda) {
        // A graph without edges runs too: its row_ptr is all 0 and its arrays hold one (unread)
        // entry, so every row writes 0.
        std::call_once(s.compiled, [&] {
            constrain_operands(s);
            jit_compile(s.pipeline, s.target, Device::CUDA, "user program " + s.name);
            check_passes(s);
        });
        CudaJITContext ctx(launch);
        try {
            bind_indices();
            std::vector<Buffer<>> out_bufs;
            for (size_t i = 0; i < outs.size(); ++i) {
                borrowed.push_back(wrap_device_buffer(s.type, outs[i]->data(), halide_sizes({s.features}, g.num_dst),
                                                      s.target, out_name(i).c_str()));
                out_bufs.push_back(borrowed.back());
            }
            s.pipeline.realize(&ctx, Realization(out_bufs), s.target, params);
        } catch (const Halide::Error &e) {
            release(&ctx);
            fail<KernelError>("running user program ", s.name, " on the GPU failed: ", e.what());
        } catch (...) {
            release(&ctx);
            throw;
        }
        release(&ctx);
        return;
    }
    bind_indices();
    std::vector<Buffer<>> out_bufs;
    for (size_t i = 0; i < outs.size(); ++i)
        out_bufs.push_back(feature_buffer(*outs[i], {s.features}, out_name(i).c_str()));
    try {
        s.pipeline.realize(Realization(out_bufs), s.target, params);
    } catch (const Halide::Error &e) {
        fail<KernelError>("running user program ", s.name, " failed: ", e.what());
    }
}

std::string SpmmKernel::schedule() const { return state_->schedule; }

bool SpmmKernel::orders_rows() const { return state_->orders_rows; }

bool SpmmKernel::orders_rows_by_locality() const { return state_->locality_order; }

bool SpmmKernel::relabels_sources() const { return state_->relabeled; }

int SpmmKernel::segment_length() const { return state_->segment_len; }

int64_t SpmmKernel::source_tile() const { return state_->segment_src_tile; }

bool SpmmKernel::scatters_nonzeros() const { return state_->scatters; }

int SpmmKernel::tail_length() const { return state_->tail_len; }

std::string SpmmKernel::schedule(const Graph &g) const {
    if (!state_->def) return schedule();
    return point_str(*state_->def, point_for(g.num_src(), g.num_dst(), g.num_edges(), g.max_row_length(), false));
}

std::string SpmmKernel::schedule(const GraphView &g) const {
    if (!state_->def) return schedule();
    return point_str(*state_->def, point_for(g.num_src, g.num_dst, g.num_edges, g.degree_bound(), true));
}

void SpmmKernel::compile_to_static_library(const std::string &dir, const std::string &name) const {
    constrain_operands(*state_);
    write_static_library(state_->pipeline, state_->arguments, state_->target, dir, name, state_->name);
    check_passes(*state_);
}

std::vector<SpmmProgram::OperandInfo> SpmmProgram::operands() const { return operand_infos(operands_); }


std::vector<int32_t> SpmmProgram::column_map(const std::string &name, int features) const {
    for (const Operand &o : operands_)
        if (o.name == name) return operand_columns(name_, o, features, f_.name());
    fail<ShapeError>("program ", name_, " has no operand '", name, "'");
}

std::vector<std::string> SpmmKernel::argument_names() const {
    std::vector<std::string> names;
    for (const Argument &a : state_->arguments) names.push_back(a.name);
    // Halide names the buffers of a Func of several values <name>_0, <name>_1, ...
    if (state_->num_outputs == 1) names.push_back(state_->out.name());
    else
        for (int i = 0; i < state_->num_outputs; ++i) names.push_back(state_->out.name() + "_" + std::to_string(i));
    return names;
}

std::vector<MeasuredPoint> search_schedule(const SpmmProgram &program, const ScheduleDef &schedule, int features,
                                           Device device, const Graph &g,
                                           const std::map<std::string, Tensor> &operands, Tensor &out,
                                           const CudaLaunch &launch, int runs, const std::function<void()> &sync) {
    return measure_points(program, schedule, schedule.space(features, device), features, device, g, operands, out,
                          launch, runs, sync);
}

std::vector<MeasuredPoint> measure_points(const SpmmProgram &program, const ScheduleDef &schedule,
                                          const std::vector<std::map<std::string, int64_t>> &points, int features,
                                          Device device, const Graph &g,
                                          const std::map<std::string, Tensor> &operands, Tensor &out,
                                          const CudaLaunch &launch, int runs, const std::function<void()> &sync) {
    check_search(runs, device, sync);
    std::vector<MeasuredPoint> measured;
    for (const auto &point : points) {
        SpmmKernel k = program.compile(features, device, schedule, point);
        if (k.num_outputs() != 1)
            fail<ShapeError>("user program ", program.name(), " has ", k.num_outputs(),
                             " outputs: schedules are searched for programs of one output for now");
        measured.push_back({point, median_run_ms([&] { k.run(g, operands, out, launch); }, runs, sync)});
    }
    std::sort(measured.begin(), measured.end(),
              [](const MeasuredPoint &a, const MeasuredPoint &b) { return a.median_ms < b.median_ms; });
    return measured;
}

std::string SpmmKernel::lowered_stmt() const {
    constrain_operands(*state_);
    return lowered_stmt_text(state_->pipeline, state_->arguments, state_->target);
}

std::string SpmmKernel::assembly() const {
    constrain_operands(*state_);
    return assembly_text(state_->pipeline, state_->arguments, state_->name, state_->target,
                         "user program " + state_->name);
}

}  // namespace gsparse::dsl
