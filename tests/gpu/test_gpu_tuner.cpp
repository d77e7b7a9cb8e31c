// The tuner on the GPU: a random-mode CUDA tune with the tightest cutoff on a random graph. Every
// candidate is first called on the load graph (which loads its module), candidates cut off have one
// run, the others all of theirs, and the best schedule runs through the operator API and matches the
// C++ reference; points of g-SpMM by nonzeros (run through the operator API, kernels from the kernel
// cache) are timed as long as CUDA events on the test's own stream time them. Skipped, and reported
// as skipped, without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "autotune/measure.h"
#include "autotune/tuner.h"
#include "gpu/gpu_fixture.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

class GpuTuner : public test::GpuTest {};

TEST_F(GpuTuner, RandomTuneLoadsEachKernelFirstAndItsBestMatchesTheReference) {
    for (ReduceOp reduce : {ReduceOp::Sum, ReduceOp::Max}) {
        autotune::TuningProblem p;
        p.graph = test::random_graph(41);
        p.graph_name = "random";
        p.spmm = {BinaryOp::Mul, reduce};
        p.lhs_feat = {19};
        p.rhs_feat = {19};
        p.device = Device::CUDA;
        p.prepare(3);
        autotune::TuneOptions o;
        o.mode = autotune::SearchMode::Random;
        o.budget = 12;
        o.runs = 3;
        o.cutoff = 1.0;
        o.cutoff_slack_ms = 0;  // the tightest cutoff: any run slower than the fastest so far
        o.progress = false;
        autotune::TuneResult r = autotune::tune(p, o);
        ASSERT_TRUE(r.best.ok) << r.best.error;
        EXPECT_EQ(r.candidates.size(), 12u);
        double fastest = r.expert_default.median_ms;  // the cutoff's reference never goes below it
        for (const auto &m : r.candidates)
            if (m.ok && !m.cut_off) fastest = std::min(fastest, m.median_ms);
        for (const auto &m : r.candidates) {
            ASSERT_TRUE(m.ok) << m.schedule.str() << ": " << m.error;
            EXPECT_GT(m.load_ms, 0.0) << m.schedule.str();
            EXPECT_EQ(m.run_ms.size(), m.cut_off ? 1u : 3u) << m.schedule.str();
            if (m.cut_off) {
                EXPECT_GT(m.run_ms[0], fastest) << m.schedule.str();
            }
        }
        EXPECT_GT(r.phases.load_s, 0.0);

        // The same inputs on the host (prepare() draws them from the seed) for the reference.
        autotune::TuningProblem h = p;
        h.device = Device::CPU;
        h.device_memory.reset();
        h.prepare(3);
        const auto shape = gspmm_output_shape(h.graph, h.spmm, h.lhs, h.rhs);
        Tensor out = device_empty(shape, DType::F32);
        const bool args = has_arg_outputs(reduce);
        Tensor au = args ? device_empty(shape, DType::I32) : Tensor();
        Tensor ae = args ? device_empty(shape, DType::I32) : Tensor();
        gspmm_into(h.graph, h.spmm, to_device(h.lhs), to_device(h.rhs), out, args ? &au : nullptr,
                   args ? &ae : nullptr, options(&r.best.schedule));
        Tensor hu = args ? to_host(au) : Tensor(), he = args ? to_host(ae) : Tensor();
        EXPECT_TRUE(test::matches_reference(to_host(out), reference_spmm(h.graph, h.spmm, h.lhs, h.rhs), 1e-5, 1e-6,
                                            args ? &hu : nullptr, args ? &he : nullptr))
            << reduce_op_name(reduce) << " " << r.best.schedule.str();
    }
}

TEST_F(GpuTuner, SegmentPointsAreTimedWhereTheyRun) {
    // The measurer runs g-SpMM by nonzeros through the operator API without a CUDA context; its
    // kernels and its synchronisation must meet in one context, or it times launches only (it once
    // reported a tenth of the kernel's time). Inputs larger than L2, so neither timing hits in it.
    test::RandomGraphOptions opt;
    opt.num_nodes = 500000;
    opt.avg_degree = 8;
    opt.long_row = 20000;
    autotune::TuningProblem p;
    p.graph = test::random_graph(43, opt);
    p.graph_name = "random";
    p.spmm = {BinaryOp::CopyLhs, ReduceOp::Sum};
    p.lhs_feat = {32};
    p.rhs_feat = {32};
    p.device = Device::CUDA;
    p.prepare(5);
    const ScheduleParams seg = ScheduleParams::parse("spmm_segments{run=32}");
    autotune::Measurer measurer(p, 10, 2);
    const autotune::Measurement m = measurer.measure(seg);
    ASSERT_TRUE(m.ok) << m.error;

    autotune::TuningProblem h = p;
    h.device = Device::CPU;
    h.device_memory.reset();
    h.prepare(5);
    Tensor x = to_device(h.lhs);
    Tensor out = device_empty(gspmm_output_shape(h.graph, h.spmm, h.lhs, h.rhs), DType::F32);
    const OpOptions o = options(&seg);
    cudaEvent_t a, b;
    ASSERT_EQ(cudaEventCreate(&a), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&b), cudaSuccess);
    std::vector<double> times;
    for (int i = 0; i < 13; i++) {
        cudaEventRecord(a, stream_);
        gspmm_into(h.graph, h.spmm, x, Tensor(), out, nullptr, nullptr, o);
        cudaEventRecord(b, stream_);
        ASSERT_EQ(cudaEventSynchronize(b), cudaSuccess);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (i >= 3) times.push_back(ms);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(times.begin(), times.end());
    const double events_ms = 0.5 * (times[4] + times[5]);
    EXPECT_GT(events_ms, 0.0);
    EXPECT_GE(m.median_ms, 0.5 * events_ms) << "the measurer's " << m.median_ms << " ms against CUDA events' "
                                            << events_ms << " ms";
    EXPECT_LE(m.median_ms, 5 * events_ms + 0.2) << "the measurer's " << m.median_ms << " ms against CUDA events' "
                                                << events_ms << " ms";
}

TEST_F(GpuTuner, CompileWorkersPrepareTheGraphAndOneDeviceCopyServesEveryRowTile) {
    // The relabeled graph and the locality order are built by the compile workers, before the
    // candidates are measured; kernels of different row tiles then share one device copy of the CSR.
    autotune::TuningProblem p;
    p.graph = test::random_graph(42);
    p.graph_name = "random";
    p.spmm = {BinaryOp::Mul, ReduceOp::Sum};
    p.lhs_feat = {16};
    p.rhs_feat = {16};
    p.device = Device::CUDA;
    p.prepare(3);
    auto point = [](int64_t M, int64_t balance) {
        return ScheduleParams{"gpu_spmm",
                              {{"kMTile", M}, {"kNTile", 16}, {"kNRegTile", 1}, {"kNnzTile", 32}, {"smemColIdx", 0},
                               {"kRowSplit", 0}, {"rowBalance", balance}, {"kNnzLanes", 1}, {"kVecWidth", 1},
                               {"kNnzUnroll", 1}, {"kSrcTile", 0}}};
    };
    const std::vector<ScheduleParams> points = {point(4, 3), point(8, 2), point(2, 1), point(16, 1), point(32, 0)};
    auto has = [](const Graph &g, const std::string &prefix) {
        size_t n = 0;
        for (const auto &k : g.attachment_keys()) n += k.rfind(prefix, 0) == 0;
        return n;
    };
    ASSERT_EQ(has(p.graph, "relabeled/"), 0u);
    autotune::Measurer measurer(p, 2, 1);
    measurer.precompile(points, 2);
    EXPECT_EQ(has(p.graph, "relabeled/locality"), 1u);
    EXPECT_EQ(has(p.graph, "row_order/locality"), 1u);
    EXPECT_EQ(has(p.graph, "cuda_"), 0u);  // no device copies before a measurement
    for (const auto &q : points) {
        const autotune::Measurement m = measurer.measure(q);
        ASSERT_TRUE(m.ok) << q.str() << ": " << m.error;
    }
    EXPECT_EQ(has(p.graph, "cuda_csr/"), 1u);
    EXPECT_EQ(has(p.graph, "cuda_locality_order/"), 1u);  // the kMTile 8 rows and the relabeled gather
}

}  // namespace
}  // namespace gsparse
