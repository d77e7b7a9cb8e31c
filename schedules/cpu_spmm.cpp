// Schedule cpu_spmm: the CPU schedule of g-SpMM.
//
//   out: rows split into tasks of rows_per_task, tasks in parallel; innermost feature dim vectorized
//   acc: computed per row inside out's row loop (a feature-length accumulator that stays in L1),
//        its update reordered so that features are innermost: for k in row: for f (vector): acc += msg
#include <algorithm>

#include "schedules/cpu_schedules.h"

namespace gsparse {

using namespace Halide;

namespace {

const std::vector<int64_t> kVectorWidths = {1, 4, 8, 16};

ScheduleSpace space(const Problem &) {
    return {"cpu_spmm",
            {{"vector_width", kVectorWidths, "lanes along the innermost feature dimension"},
             {"rows_per_task", {1, 4, 16, 64, 256}, "rows computed by one parallel task"},
            {"kSrcTile", {0}, "rows reduced in runs over tiles of this many source ids, tile by tile (0: whole rows; explicit schedules only)", 0}}};
}

int64_t widest_vector(int64_t f0) {
    int64_t w = 1;
    for (int64_t c : kVectorWidths)
        if (c <= f0) w = c;
    return w;
}

ScheduleParams default_params(const Problem &p) {
    ScheduleParams s;
    s.schedule = "cpu_spmm";
    s.values["vector_width"] = std::min<int64_t>(widest_vector(p.layout.extents[0]), 8);
    // Tasks of roughly 4K nonzeros amortize task overhead without starving threads on small graphs.
    double avg = std::max(1.0, p.stats.avg_row_length);
    int64_t rows = static_cast<int64_t>(4096 / avg);
    int64_t best = 1;
    for (int64_t c : {1, 4, 16, 64, 256})
        if (c <= std::max<int64_t>(rows, 1)) best = c;
    s.values["rows_per_task"] = best;
    s.values["kSrcTile"] = 0;
    return s;
}

std::optional<std::string> invalid_reason(const ScheduleParams &s, const Problem &p) {
    int64_t w = s.get("vector_width"), rows = s.get("rows_per_task");
    if (w < 1 || (w & (w - 1))) return "vector_width must be a power of two >= 1, got " + std::to_string(w);
    if (w > 1 && w > p.layout.extents[0])
        return "vector_width " + std::to_string(w) + " exceeds the innermost feature extent " +
               std::to_string(p.layout.extents[0]);
    if (rows < 1) return "rows_per_task must be >= 1, got " + std::to_string(rows);
    const int64_t tile = s.get_or("kSrcTile", 0);
    if (tile != 0 && (tile < 1 || (tile & (tile - 1)) || tile > (int64_t(1) << 30)))
        return "kSrcTile must be 0 or a power of two in [1, 2^30], got " + std::to_string(tile);
    if (tile && p.order_sensitive)
        return "kSrcTile combines a row's runs in tile order; max/min ties need row order (use kSrcTile = 0)";
    return std::nullopt;
}

void apply(SpmmAlgorithm &a, const ScheduleParams &s) {
    const int w = static_cast<int>(s.get("vector_width"));
    const int rows = static_cast<int>(s.get("rows_per_task"));
    // With source tiles, the per-row reduction runs over segments (partial) and rows combine them.
    split_rows(a, 0, s.get_or("kSrcTile", 0));
    Func reduced = rows_split(a) ? a.partial : a.out;
    Var vo("vo"), vi("vi");
    reduced.split(a.v, vo, vi, rows, TailStrategy::GuardWithIf).parallel(vo);
    a.acc.compute_at(reduced, vi);
    std::vector<VarOrRVar> order(a.f.begin(), a.f.end());
    order.push_back(a.k.x);
    a.acc.update().reorder(order);
    if (w > 1) {
        reduced.vectorize(a.f[0], w, TailStrategy::ShiftInwards);
        a.acc.vectorize(a.f[0], w);
        a.acc.update().vectorize(a.f[0], w, TailStrategy::GuardWithIf);
    }
    if (rows_split(a)) {
        a.partial.compute_root();
        a.out.split(a.v, vo, vi, rows, TailStrategy::GuardWithIf).parallel(vo);
        a.comb.compute_at(a.out, vi);
        std::vector<VarOrRVar> comb_order(a.f.begin(), a.f.end());
        comb_order.push_back(a.j.x);
        a.comb.update().reorder(comb_order);
        if (w > 1) {
            a.out.vectorize(a.f[0], w, TailStrategy::ShiftInwards);
            a.comb.vectorize(a.f[0], w);
            a.comb.update().vectorize(a.f[0], w, TailStrategy::GuardWithIf);
        }
    }
}

}  // namespace

SpmmScheduleDef cpu_spmm_schedule() { return {"cpu_spmm", Device::CPU, space, default_params, invalid_reason, apply}; }

}  // namespace gsparse
