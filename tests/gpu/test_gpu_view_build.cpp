// Graph views built on the GPU by the graph-build kernels (api/view_build.h), on the test's stream:
// the arrays against plain C++ and g-SpMM on the built view against the reference, for int32 and
// int64 ids, sorted and unsorted edges, sizes that take 0 to 3 combining passes; and bad ids
// named without leaving the stream in an error state.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/gpu_fixture.h"
#include "ops/reference.h"
#include "support/compare.h"
#include "support/throws_with.h"

namespace gsparse {
namespace {

using test::throws_with;

class GpuViewBuild : public test::GpuTest {
protected:
    /// Random edges, destinations sorted when `sorted` (rows past num_dst - 5 left empty, one long row).
    void make_edges(int64_t E, int64_t num_src, int64_t num_dst, bool sorted, uint64_t seed) {
        std::mt19937_64 rng(seed);
        src_.resize(static_cast<size_t>(E));
        dst_.resize(static_cast<size_t>(E));
        for (int64_t i = 0; i < E; i++) {
            src_[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(num_src));
            dst_[i] = i < E / 4 ? 1 : static_cast<int64_t>(rng() % static_cast<uint64_t>(std::max<int64_t>(num_dst - 5, 1)));
        }
        if (sorted) std::sort(dst_.begin(), dst_.end());
        else std::shuffle(dst_.begin(), dst_.end(), rng);
        num_src_ = num_src;
        num_dst_ = num_dst;
    }
    Tensor ids(const std::vector<int64_t> &v, DType t) {
        const int64_t n = static_cast<int64_t>(v.size());
        if (t == DType::I64) return to_device(Tensor::wrap(const_cast<int64_t *>(v.data()), {n}, DType::I64));
        std::vector<int32_t> narrow(v.begin(), v.end());
        return to_device(Tensor::wrap(narrow.data(), {n}, DType::I32));
    }
    std::vector<int64_t> src_, dst_;
    int64_t num_src_ = 0, num_dst_ = 0;
};

TEST_F(GpuViewBuild, SortedEdgesGiveTheCsrAndARunnableView) {
    for (DType t : {DType::I32, DType::I64}) {
        for (int64_t E : {int64_t{1}, int64_t{500}, int64_t{40000}, int64_t{2000000}}) {
            make_edges(E, 5000, 3000, true, static_cast<uint64_t>(E) + 1);
            Tensor src = ids(src_, t), dst = ids(dst_, t);
            const int64_t rows = view_row_ptr_length(num_dst_);
            Tensor row_ptr = device_empty({rows}, DType::I32), col_idx = device_empty({E}, DType::I32);
            Tensor ws = device_empty({view_build_workspace_bytes(E)}, DType::I32);  // bytes / 4 * 4 >= bytes
            ViewBuildOptions o;
            o.cuda = launch_;
            GraphView g = view_from_sorted_coo(src, dst, num_src_, num_dst_, static_cast<index_t *>(row_ptr.data()),
                                               static_cast<index_t *>(col_idx.data()), ws.data(), o);
            Tensor rp = to_host(row_ptr);
            for (int64_t r = 0; r < rows; r++)
                ASSERT_EQ(rp.data_as<int32_t>()[r], std::lower_bound(dst_.begin(), dst_.end(), r) - dst_.begin())
                    << dtype_name(t) << " E=" << E << " row " << r;
            std::vector<index_t> rp_host(rp.data_as<int32_t>(), rp.data_as<int32_t>() + num_dst_ + 1);
            std::vector<index_t> cols(src_.begin(), src_.end());
            Graph ref = Graph::from_csr_arrays(num_dst_, num_src_, rp_host.data(), cols.data(), nullptr, E);
            Tensor x = test::random_tensor({num_src_, 5}, 3);
            Tensor out = device_empty({num_dst_, 5}, DType::F32);
            const SpmmSpec sum{BinaryOp::CopyLhs, ReduceOp::Sum};
            gspmm_into(g, sum, to_device(x), {}, out, nullptr, nullptr, options());
            EXPECT_TRUE(test::matches_reference(to_host(out), reference_spmm(ref, sum, x, {}), 1e-4))
                << dtype_name(t) << " E=" << E;
        }
    }
}

TEST_F(GpuViewBuild, StatisticsCountDescentsAndCooViewsTakeAnyOrder) {
    for (DType t : {DType::I32, DType::I64}) {
        make_edges(300000, 70000, 41000, false, 9);
        int64_t descents = 0;
        for (size_t i = 1; i < dst_.size(); i++) descents += dst_[i] < dst_[i - 1];
        const int64_t E = static_cast<int64_t>(src_.size());
        Tensor src = ids(src_, t), dst = ids(dst_, t);
        Tensor ws = device_empty({view_build_workspace_bytes(E)}, DType::I32);
        const CooStats s = check_coo(src, dst, num_src_, num_dst_, ws.data(), launch_);
        EXPECT_EQ(s.descents, descents);
        EXPECT_EQ(s.min_src, *std::min_element(src_.begin(), src_.end()));
        EXPECT_EQ(s.max_src, *std::max_element(src_.begin(), src_.end()));
        EXPECT_EQ(s.min_dst, *std::min_element(dst_.begin(), dst_.end()));
        EXPECT_EQ(s.max_dst, *std::max_element(dst_.begin(), dst_.end()));
        const int64_t len = view_coo_length(E);
        Tensor cs = device_empty({len}, DType::I32), cd = device_empty({len}, DType::I32);
        ViewBuildOptions o;
        o.cuda = launch_;
        coo_view_from_edges(src, dst, num_src_, num_dst_, static_cast<index_t *>(cs.data()),
                            static_cast<index_t *>(cd.data()), len, ws.data(), o);
        Tensor hs = to_host(cs), hd = to_host(cd);
        for (int64_t i = 0; i < len; i++) {
            ASSERT_EQ(hs.data_as<int32_t>()[i], i < E ? src_[i] : 0) << i;
            ASSERT_EQ(hd.data_as<int32_t>()[i], i < E ? dst_[i] : 0) << i;
        }
    }
}

TEST_F(GpuViewBuild, BadIdsAreNamedAndTheStreamStaysUsable) {
    make_edges(10000, 100, 80, true, 4);
    src_[1234] = 100;
    Tensor src = ids(src_, DType::I64), dst = ids(dst_, DType::I64);
    Tensor row_ptr = device_empty({view_row_ptr_length(num_dst_)}, DType::I32), col = device_empty({10000}, DType::I32);
    Tensor ws = device_empty({view_build_workspace_bytes(10000)}, DType::I32);
    ViewBuildOptions o;
    o.cuda = launch_;
    EXPECT_TRUE(throws_with<GraphError>([&] {
        view_from_sorted_coo(src, dst, num_src_, num_dst_, static_cast<index_t *>(row_ptr.data()),
                             static_cast<index_t *>(col.data()), ws.data(), o);
    }, {"source id 100 is out of range [0, num_src = 100)"}));
    src_[1234] = 99;
    Tensor fixed = ids(src_, DType::I64);
    GraphView g = view_from_sorted_coo(fixed, dst, num_src_, num_dst_, static_cast<index_t *>(row_ptr.data()),
                                       static_cast<index_t *>(col.data()), ws.data(), o);
    EXPECT_EQ(g.num_edges, 10000);
}

}  // namespace
}  // namespace gsparse
