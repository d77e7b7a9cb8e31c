#include "schedules/spmm_segments.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "halide_ext/accumulate_atomic_runs.h"
#include "halide_ext/atomic_add_stores.h"
#include "halide_ext/segmented_lane_atomics.h"
#include "schedules/scatter_threads.h"

namespace gsparse {

using namespace Halide;

std::string segment_run_invalid_reason(int64_t run) {
    if (std::find(std::begin(kSegmentRunChoices), std::end(kSegmentRunChoices), run) != std::end(kSegmentRunChoices))
        return "";
    std::string choices;
    for (int64_t c : kSegmentRunChoices) choices += (choices.empty() ? "" : ", ") + std::to_string(c);
    return "run = " + std::to_string(run) + " is not one of the run lengths " + choices;
}

std::string segment_tile_invalid_reason(int64_t tile, int64_t feature_len) {
    if (std::find(std::begin(kSegmentTileChoices), std::end(kSegmentTileChoices), tile) ==
        std::end(kSegmentTileChoices)) {
        std::string choices;
        for (int64_t c : kSegmentTileChoices) choices += (choices.empty() ? "" : ", ") + std::to_string(c);
        return "tile = " + std::to_string(tile) + " is not one of the tiles " + choices;
    }
    if (feature_len >= 0 && tile > std::max<int64_t>(feature_len, 1))
        return "tile = " + std::to_string(tile) + " exceeds the " + std::to_string(feature_len) +
               " feature elements of an output row";
    return "";
}

std::string segment_lanes_invalid_reason(int64_t lanes, int64_t tile, int64_t feature_len, int dtype_bits) {
    if (lanes == 0) return "";
    if (lanes != 32) return "lanes = " + std::to_string(lanes) + " is not one of 0, 32";
    if (feature_len >= 0 && segment_feature_threads(feature_len, tile) != 1)
        return "lanes = 32 needs one feature thread: rows of " + std::to_string(feature_len) +
               " elements do not fit a tile of " + std::to_string(tile);
    if (dtype_bits != 0 && dtype_bits != 32)
        return "lanes = 32 combines 32-bit values through warp shuffles, not " + std::to_string(dtype_bits) + "-bit ones";
    return "";
}

int segment_feature_threads(int64_t feature_len, int64_t tile) {
    const int64_t per_thread = (std::max<int64_t>(feature_len, 1) + tile - 1) / std::max<int64_t>(tile, 1);
    return static_cast<int>(std::min<int64_t>(per_thread, kSegmentMaxFeatureThreads));
}

bool segment_tile_covers_rows(int64_t tile, int64_t feature_len) {
    if (tile <= 0 || feature_len < tile) return false;
    // The feature dimension is cut into chunks of tile x threads (blocks over chunks).
    return feature_len % (tile * segment_feature_threads(feature_len, tile)) == 0;
}

int64_t segment_tile_for_rows(int64_t tile, int64_t feature_len) {
    for (auto it = std::rbegin(kSegmentTileChoices); it != std::rend(kSegmentTileChoices); ++it)
        if (*it <= tile && segment_tile_covers_rows(*it, feature_len)) return *it;
    return 1;
}

SegmentPoint segment_point_of(const ScheduleParams &p) {
    if (!is_segment_point(p))
        fail<ScheduleError>("g-SpMM by nonzeros runs the schedule ", kSegmentSchedule, ", not ", p.schedule);
    SegmentPoint point;
    for (const auto &[knob, value] : p.values) {
        if (knob == "run") point.run = value;
        else if (knob == "tile") point.tile = value;
        else if (knob == "lanes") point.lanes = value;
        else fail<ScheduleError>(kSegmentSchedule, " has the knobs run, tile and lanes, not ", knob);
    }
    if (std::string why = segment_run_invalid_reason(point.run); !why.empty())
        fail<ScheduleError>(kSegmentSchedule, ": ", why);
    if (std::string why = segment_tile_invalid_reason(point.tile); !why.empty())
        fail<ScheduleError>(kSegmentSchedule, ": ", why);
    if (std::string why = segment_lanes_invalid_reason(point.lanes, point.tile); !why.empty())
        fail<ScheduleError>(kSegmentSchedule, ": ", why);
    return point;
}

ScheduleParams segment_params(const SegmentPoint &point) {
    ScheduleParams p{kSegmentSchedule, {{"run", point.run}}};
    if (point.tile != kSegmentTileDefault) p.values["tile"] = point.tile;
    if (point.lanes != 0) p.values["lanes"] = point.lanes;
    return p;
}

namespace {

int dtype_bits(DType t) { return static_cast<int>(dtype_size(t)) * 8; }

// The scatter of the warp-lane form on CUDA (the algorithm's lane_steps > 0): p = (lane, step,
// chunk), 8 warps a block, the lanes on thread x; one feature thread holds the row's `tile` elements.
void schedule_lane_scatter(SpmmSegmentAlgorithm &a, Stage scatter, Var sz, int64_t tile) {
    RVar lane = a.p.x, step = a.p.y, chunk = a.p.z;
    constexpr int kWarps = 8;
    RVar pb("pb"), pw("pw");
    scatter.atomic().split(chunk, pb, pw, kWarps, TailStrategy::GuardWithIf);
    if (tile > 1) {
        // The row's elements (one feature thread: the tile covers it), unrolled in the step.
        Var fo("fo"), fk("fk");
        scatter.split(sz, fo, fk, static_cast<int>(tile), TailStrategy::GuardWithIf)
            .reorder(fk, fo, step, lane, pw, pb)
            .unroll(fk);
    } else {
        scatter.reorder(sz, step, lane, pw, pb);
    }
    scatter.gpu_threads(lane, pw).gpu_blocks(pb);
    a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
    a.lowering_passes.push_back(std::make_shared<ext::SegmentedLaneAtomics>(step.name()));
}

}  // namespace

void schedule_spmm_segments(SpmmSegmentAlgorithm &a, Device device, const SegmentPoint &point) {
    const int64_t run = point.run, tile = point.tile;
    if (std::string why = segment_run_invalid_reason(run); !why.empty()) fail<ScheduleError>(why);
    if (std::string why = segment_tile_invalid_reason(tile, a.layout.out_len()); !why.empty())
        fail<ScheduleError>(kSegmentSchedule, ": ", why);
    if (std::string why = segment_lanes_invalid_reason(point.lanes, tile, a.layout.out_len(), dtype_bits(a.dtype));
        !why.empty())
        fail<ScheduleError>(kSegmentSchedule, ": ", why);
    if ((point.lanes != 0) != (a.lane_steps != 0) || (a.lane_steps != 0 && a.lane_steps != run))
        fail<ScheduleError>(kSegmentSchedule, ": the point's lanes and run do not match the algorithm's lane steps (",
                            a.lane_steps, ")");
    const bool lanes = point.lanes != 0;
    const int rank = a.layout.rank();
    for (int d = 0; d <= rank; d++) a.out.output_buffer().dim(d).set_min(0);
    a.row_ptr.dim(0).set_min(0);
    RVar pc("pc"), pj("pj");
    if (device != Device::CUDA) {
        // Runs in parallel tasks; in a run, every feature walks the run's edges in order (the lane
        // form: a chunk's edges, lane fastest).
        Stage scatter = a.out.update().atomic();
        RVar task = lanes ? RVar(a.p.z) : pc;
        if (lanes) scatter.fuse(a.p.x, a.p.y, pj);
        else scatter.split(a.p.x, pc, pj, static_cast<int>(run), TailStrategy::GuardWithIf);
        std::vector<VarOrRVar> order = {pj};
        order.insert(order.end(), a.f.begin(), a.f.end());
        order.push_back(task);
        scatter.reorder(order).parallel(task);
        a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
        a.lowering_passes.push_back(std::make_shared<ext::AccumulateAtomicRuns>("pj"));
        return;
    }

    if (lanes) {
        // The row's elements are known (one feature thread holds them all): constant loops, unrolled.
        for (int d = 0; d < rank; d++)
            a.out.output_buffer().dim(d).set_extent(static_cast<int>(a.layout.extents[static_cast<size_t>(d)]));
    }
    Var fz = fuse_feature_dims(a.out, a.f, "fz");
    Var all("all"), bo("bo"), bi("bi");
    a.out.fuse(fz, a.v, all).gpu_tile(all, bo, bi, 256, TailStrategy::GuardWithIf);

    Stage scatter = a.out.update();
    Var sz = fuse_feature_dims(scatter, a.f, "sz");
    if (lanes) {
        schedule_lane_scatter(a, scatter, sz, tile);
        return;
    }
    const int K = static_cast<int>(tile);
    const int T = segment_feature_threads(a.layout.out_len(), K);
    const int M = std::max(1, 256 / T);
    RVar pb("pb"), pt("pt");
    Var fo("fo"), fi("fi"), ft("ft"), fk("fk");
    scatter.atomic();
    if (K == 1) {
        scatter.split(sz, fo, fi, T, TailStrategy::GuardWithIf);
    } else {
        // Feature f = fo * T * K + fk * T + fi: thread fi's K elements are T apart, and for every
        // fk the warp's loads of one edge are contiguous. fk is unrolled inside the run's loop.
        scatter.split(sz, fo, ft, T * K, TailStrategy::GuardWithIf).split(ft, fk, fi, T, TailStrategy::GuardWithIf);
    }
    scatter.split(a.p.x, pc, pj, static_cast<int>(run), TailStrategy::GuardWithIf)
        .split(pc, pb, pt, M, TailStrategy::GuardWithIf);
    if (K == 1) scatter.reorder(pj, fi, pt, pb, fo);
    else scatter.reorder(fk, pj, fi, pt, pb, fo).unroll(fk);
    scatter.gpu_threads(fi, pt).gpu_blocks(pb, fo);
    a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
    a.lowering_passes.push_back(std::make_shared<ext::AccumulateAtomicRuns>("pj"));
}

}  // namespace gsparse
