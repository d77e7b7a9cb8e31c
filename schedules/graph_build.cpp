#include "schedules/graph_build.h"

#include <initializer_list>

namespace gsparse {

using namespace Halide;

namespace {

/// Steps of a statistics thread unrolled together.
constexpr int kStatsUnroll = 4;

/// out(k, t): the statistics k unrolled inside thread t, part computed per thread, its steps r
/// unrolled by kStatsUnroll (the tail guarded).
void schedule_stats(Func &out, Func &part, const Var &k, const Var &t, const RDom &r, Device device) {
    RVar ro("ro"), ri("ri");
    part.update().split(r.x, ro, ri, kStatsUnroll, TailStrategy::GuardWithIf).unroll(ri);
    out.output_buffer().dim(0).set_bounds(0, kCooStatCount);
    out.output_buffer().dim(1).set_min(0);
    out.bound(k, 0, kCooStatCount).unroll(k);
    if (device == Device::CUDA) {
        Var to("to"), ti("ti");
        out.reorder(k, t).gpu_tile(t, to, ti, 128, TailStrategy::GuardWithIf);
        part.compute_at(out, ti);
    } else {
        part.compute_at(out, t);
    }
}

/// The inputs are indexed from 0.
void from_zero(std::initializer_list<ImageParam *> inputs) {
    for (ImageParam *p : inputs) p->dim(0).set_min(0);
}

/// One thread per entry of out(x), `threads` a block on CUDA; returns the loop a thread runs in.
Var flat(Func &out, const Var &x, int threads, Device device) {
    out.output_buffers()[0].dim(0).set_min(0);  // (the other outputs of a Tuple share its bounds)
    if (device != Device::CUDA) return x;
    Var xo("xo"), xi("xi");
    out.gpu_tile(x, xo, xi, threads, TailStrategy::GuardWithIf);
    return xi;
}

}  // namespace

void schedule_coo_stats(CooStatsAlgorithm &a, Device device) {
    from_zero({&a.src, &a.dst});
    schedule_stats(a.out, a.part, a.k, a.t, a.r, device);
}

void schedule_stats_combine(StatsCombineAlgorithm &a, Device device) {
    a.in.dim(0).set_bounds(0, kCooStatCount);
    a.in.dim(1).set_min(0);
    schedule_stats(a.out, a.part, a.k, a.t, a.r, device);
}

void schedule_row_offsets(RowOffsetsAlgorithm &a, Device device) {
    from_zero({&a.dst});
    a.search.compute_at(a.out, flat(a.out, a.row, 256, device));
}

void schedule_narrow_index(NarrowIndexAlgorithm &a, Device device) {
    from_zero({&a.in});
    flat(a.out, a.i, 256, device);
}

void schedule_narrow_pair(NarrowPairAlgorithm &a, Device device) {
    from_zero({&a.a, &a.b});
    flat(a.out, a.i, 256, device);
}

void schedule_loop_row_ptr(LoopRowPtrAlgorithm &a, Device device) {
    from_zero({&a.row_ptr});
    flat(a.out, a.r, 256, device);
}

void schedule_loop_coo_append(LoopCooAppendAlgorithm &a, Device device) {
    from_zero({&a.src, &a.dst});
    flat(a.out, a.q, 256, device);
}

void schedule_loop_degrees(LoopDegreesAlgorithm &a, Device device) {
    from_zero({&a.src, &a.dst, &a.own});
    a.out.output_buffer().dim(0).set_bounds(0, 2);
    a.out.output_buffer().dim(1).set_min(0);
    a.out.bound(a.j, 0, 2);
    if (device != Device::CUDA) return;
    Var vo("vo"), vi("vi");
    a.out.unroll(a.j).gpu_tile(a.v, vo, vi, 256, TailStrategy::GuardWithIf);
    RVar ro("ro"), ri("ri");
    // The counted edges add to their row's counters concurrently: atomic additions.
    a.out.update().atomic().split(a.r.x, ro, ri, 256, TailStrategy::GuardWithIf).gpu_blocks(ro).gpu_threads(ri);
}

void schedule_gcn_weights(GcnWeightsAlgorithm &a, Device device) {
    from_zero({&a.src, &a.dst, &a.own});
    a.degrees.dim(0).set_bounds(0, 2);
    a.degrees.dim(1).set_min(0);
    flat(a.out, a.e, 256, device);
}

void schedule_loop_coo(LoopCooAlgorithm &a, Device device) {
    from_zero({&a.row_ptr, &a.col_idx});
    a.search.compute_at(a.out, flat(a.out, a.q, 256, device));
}

}  // namespace gsparse
