// A user schedule of g-SpMM-shaped programs that divides the work by nonzeros instead of rows
// (dsl::ScheduleContext::scatter_nonzeros): every thread (a CPU task) takes `run` consecutive
// positions of the CSR, whatever rows they lie in, combines those of one row in registers
// (ScheduleContext::accumulate_runs: sums) and adds them to their row atomically -- the work
// division of merge-path and GeoT SpMM, and of the built-in g-SpMM by nonzeros (spmm_segments),
// written with the public directives. Many short rows share a thread, a long row spreads over many.
// Registered by the example plugin (weighted_max_plugin.cpp) and used by the tests of scattered
// user programs. Runs on Graphs (not GraphViews: the row of every position comes with the Graph).
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "dsl/user_spmm.h"
#include "feature_threads.h"

namespace gsparse_examples {

/// The knobs: run (positions a CUDA thread combines in order; CPU: a task takes run x task_runs
/// positions), feature_threads (CUDA threads over features; 0: the largest power of two up to
/// min(F, 32)), block (CUDA threads a block), task_runs (CPU), warp_steps (CUDA, F <= 8: the warp
/// form, 0: off). CUDA: threads (feature, run), blocks of `block` threads over runs and feature
/// chunks; with warp_steps = S > 0 instead each warp takes 32 x S consecutive positions, 32 a step,
/// one a lane, every feature of it (unrolled), and a step's lanes of one row combine through warp
/// shuffles (accumulate_lanes). The identity fill and (where the program finalizes) the output one
/// thread per element.
inline gsparse::dsl::ScheduleDef nonzero_scatter() {
    gsparse::dsl::ScheduleDef d;
    d.name = "nonzero_scatter";
    d.knobs = {{"run", {1, 2, 4, 8, 16, 32, 64}, 8},
               {"feature_threads", {0, 1, 2, 4, 8, 16, 32}, 0},
               {"block", {128, 256, 512}, 256},
               {"task_runs", {64, 512, 4096}, 512},
               {"warp_steps", {0, 1, 2, 4, 8, 16, 32}, 0}};
    d.why_invalid = [](const std::map<std::string, int64_t> &point, int features, gsparse::Device device) -> std::string {
        if (device == gsparse::Device::CPU) {
            if (point.at("feature_threads") != 0 || point.at("block") != 256 || point.at("warp_steps") != 0)
                return "feature_threads, block and warp_steps are CUDA knobs";
            return "";
        }
        if (point.at("task_runs") != 512) return "task_runs is a CPU knob";
        if (point.at("warp_steps") > 0) {
            if (features > 8) return "warp_steps takes up to 8 features (a lane holds a position's every feature)";
            if (point.at("run") != 8 || point.at("feature_threads") != 0)
                return "run and feature_threads do not apply to the warp form (leave them at 8 and 0)";
            return "";
        }
        const int64_t threads = feature_threads(point.at("feature_threads"), features);
        if (threads > features) return "feature_threads exceeds the feature count";
        if (threads > point.at("block")) return "feature_threads exceeds the block's threads";
        return "";
    };
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        using Halide::TailStrategy;
        const int warp_steps = static_cast<int>(c.knob("warp_steps"));
        gsparse::dsl::NonzeroScatter s = c.scatter_nonzeros(warp_steps);
        const int run = static_cast<int>(c.knob("run"));
        Halide::RVar pc("pc"), pj("pj"), pb("pb"), pt("pt");
        Halide::Stage scatter = c.acc.update();
        if (c.device == gsparse::Device::CPU) {
            // Tasks of run x task_runs positions in parallel; in a task, every feature walks the
            // task's positions in order, a row's run in a register.
            const int task = run * static_cast<int>(c.knob("task_runs"));
            scatter.split(s.p, pc, pj, task, TailStrategy::GuardWithIf).reorder(pj, c.f, pc).parallel(pc);
            c.accumulate_runs(pj);
            Halide::Var vo("vo"), vi("vi");
            c.acc.split(c.v, vo, vi, 1024, TailStrategy::GuardWithIf).parallel(vo);
            if (!s.out_is_acc) c.out.split(c.v, vo, vi, 1024, TailStrategy::GuardWithIf).parallel(vo);
            return;
        }
        const int T = static_cast<int>(feature_threads(c.knob("feature_threads"), c.features));
        const int M = std::max(1, static_cast<int>(c.knob("block")) / T);
        Halide::Var fo("fo"), fi("fi"), vo("vo"), vi("vi");
        if (warp_steps > 0) {
            // Lane x of warp y of block pb; the step serial in the lane, the features unrolled in it.
            scatter.split(s.chunk, pb, pt, static_cast<int>(c.knob("block")) / 32, TailStrategy::GuardWithIf)
                .reorder(c.f, s.step, s.lane, pt, pb)
                .unroll(c.f)
                .gpu_threads(s.lane, pt)
                .gpu_blocks(pb);
            c.accumulate_lanes(s.step);
        } else {
            // Thread (fi, pt) of block (pb, fo): feature fo * T + fi of the run pb * M + pt.
            scatter.split(c.f, fo, fi, T, TailStrategy::GuardWithIf)
                .split(s.p, pc, pj, run, TailStrategy::GuardWithIf)
                .split(pc, pb, pt, M, TailStrategy::GuardWithIf)
                .reorder(pj, fi, pt, pb, fo)
                .gpu_threads(fi, pt)
                .gpu_blocks(pb, fo);
            c.accumulate_runs(pj);
        }
        auto one_thread_an_element = [&](Halide::Func fn) {
            fn.split(c.f, fo, fi, T, TailStrategy::GuardWithIf)
                .split(c.v, vo, vi, M, TailStrategy::GuardWithIf)
                .reorder(fi, vi, fo, vo)
                .gpu_blocks(vo, fo)
                .gpu_threads(fi, vi);
        };
        one_thread_an_element(c.acc);  // the identity fill (out's own definition where out is acc)
        if (!s.out_is_acc) one_thread_an_element(c.out);
    };
    return d;
}

}  // namespace gsparse_examples
