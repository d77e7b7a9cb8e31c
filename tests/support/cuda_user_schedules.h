// CUDA schedules of user programs shared by the tests of their PTX (tests/dsl) and of their results
// on a GPU (tests/gpu): row tails (dsl::ScheduleContext::split_row_tails) and relabeled sources
// (relabel_sources) under the default schedule.
#pragma once

#include <algorithm>

#include "dsl/user_spmm.h"

namespace gsparse::test {

/// On CUDA: rows a thread per feature and row, tails a thread per feature and tail, the
/// merge a thread per feature and tail (atomic).
inline gsparse::dsl::ScheduleDef cuda_tails_schedule() {
    gsparse::dsl::ScheduleDef d;
    d.name = "cuda_tails";
    d.knobs = {{"length", {32, 256}, 32}};
    d.apply = [](gsparse::dsl::ScheduleContext &c) {
        using Halide::TailStrategy;
        const gsparse::dsl::RowTailSplit r = c.split_row_tails(static_cast<int>(c.knob("length")));
        const int ft = std::min(c.features, 32), rows = std::max(1, 128 / ft);
        Halide::Var fo("fo"), fi("fi"), to("to"), ti("ti"), vo("vo"), vi("vi");
        Halide::RVar ro("ro"), ri("ri");
        Halide::Func tails = r.tails, tail_acc = r.tail_acc;
        tails.compute_root()
            .split(c.f, fo, fi, ft, TailStrategy::GuardWithIf)
            .split(r.t, to, ti, rows, TailStrategy::GuardWithIf)
            .reorder(fi, ti, to, fo)
            .gpu_blocks(to, fo)
            .gpu_threads(fi, ti);
        tail_acc.compute_at(tails, fi);
        c.out.split(c.f, fo, fi, ft, TailStrategy::GuardWithIf)
            .split(c.v, vo, vi, rows, TailStrategy::GuardWithIf)
            .reorder(fi, vi, vo, fo)
            .gpu_blocks(vo, fo)
            .gpu_threads(fi, vi);
        c.acc.compute_at(c.out, fi);
        c.out.update()
            .split(c.f, fo, fi, ft, TailStrategy::GuardWithIf)
            .split(r.r, ro, ri, rows, TailStrategy::GuardWithIf)
            .reorder(fi, ri, ro, fo)
            .gpu_blocks(ro, fo)
            .gpu_threads(fi, ri);
    };
    return d;
}

/// relabel_sources, each source copy a kernel (a thread per feature and row), then the default
/// schedule's directives on the relabeled program.
inline gsparse::dsl::ScheduleDef cuda_relabeled_schedule() {
    gsparse::dsl::ScheduleDef d = gsparse::dsl::default_schedule();
    d.name = "relabeled_default";
    d.apply = [apply = d.apply](gsparse::dsl::ScheduleContext &c) {
        const gsparse::dsl::RelabeledSources r = c.relabel_sources();
        for (Halide::Func copy : r.sources) {
            Halide::Var fo("fo"), fi("fi"), io("io"), ii("ii");
            copy.compute_root()
                .split(c.f, fo, fi, std::min(c.features, 32), Halide::TailStrategy::GuardWithIf)
                .split(r.i, io, ii, 8, Halide::TailStrategy::GuardWithIf)
                .reorder(fi, ii, io, fo)
                .gpu_blocks(io, fo)
                .gpu_threads(fi, ii);
        }
        apply(c);
    };
    return d;
}

}  // namespace gsparse::test
