// Schedule cpu_sddmm: the CPU schedule of g-SDDMM.
//
//   out: edges split into tasks of edges_per_task, tasks in parallel; the innermost feature dim
//        vectorized when it is at least vector_width wide.
//   dot: computed per edge; the reduction over the last feature dim is vectorized: split by
//        vector_width and rfactored into vector_width partial sums that are added at the end.
//   groupByDst = 1: edges in destination order, results stored at their ids (sddmm_edge_order.h);
//        valid in explicit schedules, not searched (the CPU cost features do not describe it).
#include <algorithm>

#include "schedules/cpu_schedules.h"
#include "schedules/sddmm_edge_order.h"

namespace gsparse {

using namespace Halide;

namespace {

const std::vector<int64_t> kVectorWidths = {1, 4, 8, 16};

ScheduleSpace space(const Problem &) {
    return {"cpu_sddmm",
            {{"vector_width", kVectorWidths, "lanes along the innermost feature (or reduced) dimension"},
             {"edges_per_task", {64, 256, 1024, 4096}, "edges computed by one parallel task"},
             group_by_dst_knob(false), src_tile_knob(false)}};
}

/// The extent vectorization runs along: dot's reduced dim, else the output's innermost feature dim.
int64_t vector_extent(const FeatureLayout &l) { return l.reduce_len > 0 ? l.reduce_len : l.extents[0]; }

ScheduleParams default_params(const Problem &p) {
    ScheduleParams s;
    s.schedule = "cpu_sddmm";
    int64_t ext = vector_extent(p.layout), w = 1;
    for (int64_t c : kVectorWidths)
        if (c <= ext && c <= 8) w = c;
    s.values["vector_width"] = w;
    s.values["edges_per_task"] = 1024;
    return s;
}

std::optional<std::string> invalid_reason(const ScheduleParams &s, const Problem &p) {
    int64_t w = s.get("vector_width"), edges = s.get("edges_per_task");
    if (w < 1 || (w & (w - 1))) return "vector_width must be a power of two >= 1, got " + std::to_string(w);
    int64_t ext = vector_extent(p.layout);
    if (w > 1 && w > ext)
        return "vector_width " + std::to_string(w) + " exceeds the vectorized extent " + std::to_string(ext);
    if (edges < 1) return "edges_per_task must be >= 1, got " + std::to_string(edges);
    return edge_order_invalid(s);
}

void apply(SddmmAlgorithm &a, const ScheduleParams &s) {
    const int w = static_cast<int>(s.get("vector_width"));
    const int edges = static_cast<int>(s.get("edges_per_task"));
    if (groups_by_dst(s)) group_by_destination(a, src_tile(s));
    Var eo("eo"), ei("ei");
    a.out.split(a.e, eo, ei, edges, TailStrategy::GuardWithIf).parallel(eo);
    if (a.layout.reduce_len == 0) {
        if (w > 1) a.out.vectorize(a.f[0], w, TailStrategy::ShiftInwards);
        return;
    }
    a.dot.compute_at(a.out, ei);
    if (w > 1) {
        RVar ro("ro"), ri("ri");
        Var lane("lane");
        Func partial = a.dot.update().split(a.r.x, ro, ri, w, TailStrategy::GuardWithIf).rfactor(ri, lane);
        partial.compute_at(a.out, ei).vectorize(lane);
        partial.update().vectorize(lane);
    }
}

}  // namespace

SddmmScheduleDef cpu_sddmm_schedule() { return {"cpu_sddmm", Device::CPU, space, default_params, invalid_reason, apply}; }

}  // namespace gsparse
