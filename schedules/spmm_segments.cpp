#include "schedules/spmm_segments.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "halide_ext/accumulate_atomic_runs.h"
#include "halide_ext/atomic_add_stores.h"
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

int64_t segment_run_of(const ScheduleParams &p) {
    if (!is_segment_point(p))
        fail<ScheduleError>("g-SpMM by nonzeros runs the schedule ", kSegmentSchedule, ", not ", p.schedule);
    int64_t run = kSegmentRunDefault;
    for (const auto &[knob, value] : p.values) {
        if (knob != "run") fail<ScheduleError>(kSegmentSchedule, " has the knob run, not ", knob);
        run = value;
    }
    if (std::string why = segment_run_invalid_reason(run); !why.empty()) fail<ScheduleError>(kSegmentSchedule, ": ", why);
    return run;
}

void schedule_spmm_segments(SpmmSegmentAlgorithm &a, Device device, int64_t run) {
    if (std::string why = segment_run_invalid_reason(run); !why.empty()) fail<ScheduleError>(why);
    const int rank = a.layout.rank();
    for (int d = 0; d <= rank; d++) a.out.output_buffer().dim(d).set_min(0);
    a.row_ptr.dim(0).set_min(0);
    RVar pc("pc"), pj("pj");
    if (device != Device::CUDA) {
        // Runs in parallel tasks; in a run, every feature walks the run's edges in order.
        std::vector<VarOrRVar> order = {pj};
        order.insert(order.end(), a.f.begin(), a.f.end());
        order.push_back(pc);
        a.out.update()
            .atomic()
            .split(a.p.x, pc, pj, static_cast<int>(run), TailStrategy::GuardWithIf)
            .reorder(order)
            .parallel(pc);
        a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
        a.lowering_passes.push_back(std::make_shared<ext::AccumulateAtomicRuns>("pj"));
        return;
    }

    Var fz = fuse_feature_dims(a.out, a.f, "fz");
    Var all("all"), bo("bo"), bi("bi");
    a.out.fuse(fz, a.v, all).gpu_tile(all, bo, bi, 256, TailStrategy::GuardWithIf);

    Stage scatter = a.out.update();
    Var sz = fuse_feature_dims(scatter, a.f, "sz");
    const int T = scatter_feature_threads(a.layout.out_len());
    const int M = std::max(1, 256 / T);
    RVar pb("pb"), pt("pt");
    Var fo("fo"), fi("fi");
    scatter.atomic()
        .split(sz, fo, fi, T, TailStrategy::GuardWithIf)
        .split(a.p.x, pc, pj, static_cast<int>(run), TailStrategy::GuardWithIf)
        .split(pc, pb, pt, M, TailStrategy::GuardWithIf)
        .reorder(pj, fi, pt, pb, fo)
        .gpu_threads(fi, pt)
        .gpu_blocks(pb, fo);
    a.lowering_passes.push_back(std::make_shared<ext::AtomicAddStores>());
    a.lowering_passes.push_back(std::make_shared<ext::AccumulateAtomicRuns>("pj"));
}

}  // namespace gsparse
