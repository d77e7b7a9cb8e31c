// The tuner on the GPU: a random-mode CUDA tune with the tightest cutoff on a random graph. Every
// candidate is first called on the load graph (which loads its module), candidates cut off have one
// run, the others all of theirs, and the best schedule runs through the operator API and matches the
// C++ reference. Skipped, and reported as skipped, without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>

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
        h.device_buffers.clear();
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

}  // namespace
}  // namespace gsparse
