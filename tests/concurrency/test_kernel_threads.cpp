// Kernels (CPU target) called from several host threads at once, on one shared graph and on graphs
// of their own, through the in-memory kernel cache, graph attachments and the persistent on-disk
// kernel cache; and two processes filling one on-disk cache folder at the same time. Every result
// is checked against the C++ reference.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "api/gsparse.h"
#include "ops/reference.h"
#include "runtime/kernel_cache.h"
#include "runtime/kernel_library.h"
#include "support/compare.h"
#include "support/graph_view_of.h"
#include "support/kernel_cache_dir.h"
#include "support/random_graph.h"
#include "support/threads.h"

extern char **environ;

namespace gsparse {
namespace {

namespace fs = std::filesystem;
constexpr int kThreads = 4;

/// g-SpMM (copy_lhs + sum; mul + max with arg ids) and g-SDDMM (dot) on g with feature length f,
/// each compared with the reference; returns how many results matched (3 when all did).
int run_ops(const Graph &g, int64_t f, uint64_t seed, const OpOptions &o) {
    int ok = 0;
    {
        SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
        Tensor x = test::random_tensor({g.num_src(), f}, seed);
        ok += bool(test::matches_reference(gspmm(g, spec, x, {}, o).out, reference_spmm(g, spec, x, {}), 1e-5, 1e-5));
    }
    {
        SpmmSpec spec{BinaryOp::Mul, ReduceOp::Max};
        Tensor x = test::random_tensor({g.num_src(), f}, seed + 1, DType::F32, 0.5, 1.5);
        Tensor w = test::random_tensor({g.num_edges(), 1}, seed + 2, DType::F32, 0.5, 1.5);
        SpmmResult r = gspmm(g, spec, x, w, o);
        ok += bool(test::matches_reference(r.out, reference_spmm(g, spec, x, w), 1e-5, 1e-5, &r.arg_u, &r.arg_e));
    }
    {
        SddmmSpec spec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
        Tensor a = test::random_tensor({g.num_src(), f}, seed + 3), b = test::random_tensor({g.num_dst(), f}, seed + 4);
        ok += bool(test::matches_reference(gsddmm(g, spec, a, b, o), reference_sddmm(g, spec, a, b), 1e-5, 1e-5));
    }
    return ok;
}

/// The same on a graph view (kernels from the persistent cache when it is on).
int run_view_ops(const Graph &g, int64_t f, uint64_t seed) {
    test::HostView h = test::view_of(g);
    int ok = 0;
    SpmmSpec spec{BinaryOp::CopyLhs, ReduceOp::Sum};
    Tensor x = test::random_tensor({g.num_src(), f}, seed);
    ReferenceResult ref = reference_spmm(g, spec, x, {});
    Tensor out = Tensor::empty(ref.shape, DType::F32);
    gspmm_into(h.view, spec, x, {}, out);
    ok += bool(test::matches_reference(out, ref, 1e-5, 1e-5));
    SddmmSpec sspec{BinaryOp::Dot, OperandTarget::Src, OperandTarget::Dst};
    Tensor a = test::random_tensor({g.num_src(), f}, seed + 1), b = test::random_tensor({g.num_dst(), f}, seed + 2);
    ReferenceResult sref = reference_sddmm(g, sspec, a, b);
    Tensor sout = Tensor::empty(sref.shape, DType::F32);
    gsddmm_into(h.view, sspec, a, b, sout);
    ok += bool(test::matches_reference(sout, sref, 1e-5, 1e-5));
    return ok;
}

TEST(KernelThreads, OneSharedGraphAndGraphsOfTheirOwn) {
    KernelCache cache;  // empty: the threads' first calls compile concurrently
    OpOptions o;
    o.cache = &cache;
    const Graph shared = test::random_graph(51);
    std::vector<int> ok_shared(kThreads), ok_own(kThreads);
    test::on_threads(kThreads, [&](int t) {
        ok_shared[t] = run_ops(shared, 8, 100 + t, o);
        ok_own[t] = run_ops(test::random_graph(60 + t), 8, 200 + t, o);
    });
    for (int t = 0; t < kThreads; t++) {
        EXPECT_EQ(ok_shared[t], 3) << "thread " << t << " on the shared graph";
        EXPECT_EQ(ok_own[t], 3) << "thread " << t << " on its own graph";
    }
    // Same shapes, same schedules: three kernels in all, each compiled once.
    EXPECT_EQ(cache.stats().misses, cache.stats().entries);
    EXPECT_LE(cache.stats().entries, 6u);
}

TEST(KernelThreads, DifferentFeatureLengthsCompileConcurrently) {
    KernelCache cache;
    OpOptions o;
    o.cache = &cache;
    const Graph g = test::random_graph(52);
    std::vector<int> ok(kThreads);
    test::on_threads(kThreads, [&](int t) { ok[t] = run_ops(g, 1 + 2 * t, 300 + t, o); });  // F = 1, 3, 5, 7
    for (int t = 0; t < kThreads; t++) EXPECT_EQ(ok[t], 3) << "F = " << 1 + 2 * t;
}

/// A fresh persistent kernel cache folder for a test.
class PersistentCacheThreads : public test::FreshKernelCacheDir {
protected:
    /// The kernel libraries in the folder, each with its sidecar.
    size_t libraries() const {
        const auto found = kernels();
        for (const auto &p : found) EXPECT_TRUE(fs::exists(p.string() + ".key")) << p.filename().string();
        return found.size();
    }
    /// No temporary files left behind.
    void expect_no_temporaries() const {
        for (const auto &e : fs::directory_iterator(dir_))
            EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
    }
};

TEST_F(PersistentCacheThreads, ViewKernelsFromManyThreads) {
    const KernelLibraryStats s0 = kernel_library_stats();
    std::vector<int> ok(kThreads);
    // Two feature lengths: pairs of threads ask for the same kernels, the pairs for different ones.
    test::on_threads(kThreads, [&](int t) { ok[t] = run_view_ops(test::random_graph(70 + t), 3 + t % 2, 400 + t); });
    for (int t = 0; t < kThreads; t++) EXPECT_EQ(ok[t], 2) << "thread " << t;
    const KernelLibraryStats s1 = kernel_library_stats();
    EXPECT_EQ(s1.failed, s0.failed);
    EXPECT_EQ(s1.rejected, s0.rejected);
    EXPECT_EQ(s1.compiled - s0.compiled, 4u);
    EXPECT_EQ(libraries(), 4u);
    expect_no_temporaries();
}

// The child of TwoProcessesFillOneFolder: runs view kernels with the folder it is given.
TEST(KernelProcessesChild, RunViewKernels) {
    const char *dir = std::getenv("GSPARSE_TEST_CHILD_CACHE");
    if (!dir) GTEST_SKIP() << "run by TwoProcessesFillOneFolder";
    set_kernel_cache_dir(dir);
    EXPECT_EQ(run_view_ops(test::random_graph(80), 6, 500), 2);
    EXPECT_EQ(run_view_ops(test::random_graph(81), 2, 501), 2);
    EXPECT_EQ(kernel_library_stats().failed, 0u);
}

TEST_F(PersistentCacheThreads, TwoProcessesFillOneFolder) {
    std::vector<pid_t> pids;
    const std::string env = "GSPARSE_TEST_CHILD_CACHE=" + dir_;
    std::vector<char *> envp;
    for (char **e = environ; *e; e++)
        if (std::string(*e).rfind("GSPARSE_TEST_CHILD_CACHE=", 0) != 0) envp.push_back(*e);
    envp.push_back(const_cast<char *>(env.c_str()));
    envp.push_back(nullptr);
    const std::string self = fs::read_symlink("/proc/self/exe").string();
    for (int i = 0; i < 2; i++) {
        char filter[] = "--gtest_filter=KernelProcessesChild.RunViewKernels";
        char *argv[] = {const_cast<char *>(self.c_str()), filter, nullptr};
        pid_t pid = 0;
        ASSERT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
        pids.push_back(pid);
    }
    for (pid_t pid : pids) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child process failed";
    }
    EXPECT_EQ(libraries(), 4u);
    expect_no_temporaries();
    // A later process (here: this one, with an empty in-memory cache) loads every kernel, and
    // finds every entry whole.
    const KernelLibraryStats s0 = kernel_library_stats();
    EXPECT_EQ(run_view_ops(test::random_graph(82), 6, 600), 2);
    EXPECT_EQ(run_view_ops(test::random_graph(83), 2, 601), 2);
    const KernelLibraryStats s1 = kernel_library_stats();
    EXPECT_EQ(s1.compiled, s0.compiled);
    EXPECT_EQ(s1.loaded - s0.loaded, 4u);
    EXPECT_EQ(s1.rejected, s0.rejected);
}

}  // namespace
}  // namespace gsparse
