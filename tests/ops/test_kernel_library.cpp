// The persistent kernel cache (runtime/kernel_library.h): kernels for graph views compiled into
// shared libraries on disk, loaded again after the in-memory cache is cleared (as a new process
// would), checked against the C++ reference each time; corrupted entries are rebuilt, an unusable
// folder falls back to JIT compilation, and the cache can be switched off.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "api/gsparse.h"
#include "ops/reference.h"
#include "runtime/kernel_cache.h"
#include "runtime/kernel_library.h"
#include "support/compare.h"
#include "support/kernel_cache_dir.h"
#include "support/graph_view_of.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

namespace fs = std::filesystem;

/// A fresh cache folder and an empty in-memory kernel cache around a test.
class KernelLibraryTest : public test::FreshKernelCacheDir {
protected:
    /// Runs g-SpMM (copy_lhs + sum, F = 7; mul + max with arg ids, F = 5) and g-SDDMM (dot, F = 3)
    /// on a fresh random graph view and checks each against the reference.
    void run_and_check(uint64_t seed) {
        Graph g = test::random_graph(seed);
        test::HostView h = test::view_of(g);
        {
            SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
            Tensor x = test::random_tensor({g.num_src(), 7}, seed + 1);
            ReferenceResult ref = reference_spmm(g, spec, x, {});
            Tensor out = Tensor::empty(ref.shape, DType::F32);
            gspmm_into(h.view, spec, x, {}, out);
            EXPECT_TRUE(test::matches_reference(out, ref, 1e-5, 1e-5)) << "copy_lhs/sum";
        }
        {
            SpmmSpec spec{BinaryOp::Mul, ReduceOp::Max};
            Tensor x = test::random_tensor({g.num_src(), 5}, seed + 2, DType::F32, 0.5, 1.5);
            Tensor w = test::random_tensor({g.num_edges(), 1}, seed + 3, DType::F32, 0.5, 1.5);
            ReferenceResult ref = reference_spmm(g, spec, x, w);
            Tensor out = Tensor::empty(ref.shape, DType::F32);
            Tensor au = Tensor::empty(ref.shape, DType::I32), ae = Tensor::empty(ref.shape, DType::I32);
            gspmm_into(h.view, spec, x, w, out, &au, &ae);
            EXPECT_TRUE(test::matches_reference(out, ref, 1e-5, 1e-5, &au, &ae)) << "mul/max";
        }
        {
            SddmmSpec spec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
            Tensor a = test::random_tensor({g.num_src(), 3}, seed + 4);
            Tensor b = test::random_tensor({g.num_dst(), 3}, seed + 5);
            ReferenceResult ref = reference_sddmm(g, spec, a, b);
            Tensor out = Tensor::empty(ref.shape, DType::F32);
            gsddmm_into(h.view, spec, a, b, out);
            EXPECT_TRUE(test::matches_reference(out, ref, 1e-5, 1e-5)) << "u_dot_v";
        }
    }

};

TEST_F(KernelLibraryTest, CompilesOnceThenLoads) {
    const KernelLibraryStats s0 = kernel_library_stats();
    run_and_check(31);
    const KernelLibraryStats s1 = kernel_library_stats();
    EXPECT_EQ(s1.compiled - s0.compiled, 3u);
    EXPECT_EQ(s1.failed, s0.failed);
    EXPECT_EQ(kernels().size(), 3u);
    EXPECT_TRUE(fs::exists(kernels()[0].string() + ".key"));

    // A new in-memory cache (as in a new process) loads the same kernels instead of compiling them,
    // and they run on another graph.
    KernelCache::global().clear();
    run_and_check(32);
    const KernelLibraryStats s2 = kernel_library_stats();
    EXPECT_EQ(s2.loaded - s1.loaded, 3u);
    EXPECT_EQ(s2.compiled, s1.compiled);
}

TEST_F(KernelLibraryTest, CorruptedEntriesAreRebuilt) {
    run_and_check(33);
    ASSERT_EQ(kernels().size(), 3u);
    // Replace one library by a truncated copy and another's sidecar by garbage (new files, as
    // another process would leave them: the loaded libraries stay mapped): neither may be trusted.
    const fs::path lib = kernels()[0], cut = lib.string() + ".cut";
    fs::copy_file(lib, cut);
    fs::resize_file(cut, fs::file_size(cut) / 2);
    fs::rename(cut, lib);
    std::ofstream(kernels()[1].string() + ".key") << "garbage\n";
    KernelCache::global().clear();
    const KernelLibraryStats s0 = kernel_library_stats();
    run_and_check(34);
    const KernelLibraryStats s1 = kernel_library_stats();
    EXPECT_EQ(s1.rejected - s0.rejected, 2u);
    EXPECT_EQ(s1.compiled - s0.compiled, 2u);
    EXPECT_EQ(s1.loaded - s0.loaded, 1u);
}

TEST_F(KernelLibraryTest, OffAndUnusableFoldersFallBackToJit) {
    set_kernel_cache_dir("");
    EXPECT_EQ(kernel_cache_dir(), "");
    KernelLibraryStats s0 = kernel_library_stats();
    run_and_check(35);
    KernelLibraryStats s1 = kernel_library_stats();
    EXPECT_EQ(s1.compiled, s0.compiled);
    EXPECT_EQ(s1.loaded, s0.loaded);
    EXPECT_EQ(s1.failed, s0.failed);

    // A folder that cannot be created: every kernel falls back to the JIT, results unchanged.
    set_kernel_cache_dir("/proc/gsparse-cannot-exist/kernels");
    KernelCache::global().clear();
    run_and_check(36);
    KernelLibraryStats s2 = kernel_library_stats();
    EXPECT_EQ(s2.failed - s1.failed, 3u);
    EXPECT_EQ(s2.compiled, s1.compiled);
}

TEST_F(KernelLibraryTest, StaticGraphRunsStillWorkWithCachedKernels) {
    // One kernel (same schedule, same in-memory cache), loaded for views, compiles its JIT form on
    // demand when it runs on a Graph.
    Graph g = test::random_graph(37);
    Tensor x = test::random_tensor({g.num_src(), 4}, 38);
    SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Mean};
    ReferenceResult ref = reference_spmm(g, spec, x, {});
    KernelCache cache;
    OpOptions o;
    o.cache = &cache;
    o.schedule = ScheduleParams::parse("cpu_spmm{rows_per_task=4, vector_width=4}");
    test::HostView h = test::view_of(g);
    Tensor out = Tensor::empty(ref.shape, DType::F32);
    const KernelLibraryStats s0 = kernel_library_stats();
    gspmm_into(h.view, spec, x, {}, out, nullptr, nullptr, o);
    EXPECT_EQ(kernel_library_stats().compiled - s0.compiled, 1u);
    EXPECT_TRUE(test::matches_reference(out, ref, 1e-5, 1e-5));
    Tensor out2 = Tensor::empty(ref.shape, DType::F32);
    gspmm_into(g, spec, x, {}, out2, nullptr, nullptr, o);
    EXPECT_TRUE(test::matches_reference(out2, ref, 1e-5, 1e-5));
    EXPECT_EQ(cache.stats().entries, 1u);
}

}  // namespace
}  // namespace gsparse
