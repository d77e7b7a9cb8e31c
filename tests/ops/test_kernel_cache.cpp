// The compiled-kernel cache compiles each key once, also under concurrent requests.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/gsparse.h"
#include "core/error.h"
#include "runtime/kernel_cache.h"
#include "support/compare.h"
#include "support/random_graph.h"

namespace gsparse {
namespace {

TEST(KernelCache, SameKeyBuildsOnceAcrossThreads) {
    KernelCache cache;
    std::atomic<int> builds{0};
    std::vector<std::thread> threads;
    std::vector<std::shared_ptr<const int>> got(8);
    for (int i = 0; i < 8; i++)
        threads.emplace_back([&, i] {
            got[i] = cache.get<int>("k", [&] {
                builds++;
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                return std::make_shared<const int>(42);
            });
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(builds.load(), 1);
    for (auto &p : got) EXPECT_EQ(p.get(), got[0].get());
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(cache.stats().hits, 7u);
}

TEST(KernelCache, FailedBuildIsNotCached) {
    KernelCache cache;
    int calls = 0;
    auto failing = [&]() -> std::shared_ptr<const int> {
        calls++;
        throw KernelError("boom");
    };
    EXPECT_THROW(cache.get<int>("k", failing), KernelError);
    EXPECT_THROW(cache.get<int>("k", failing), KernelError);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(KernelCache, ApiReusesKernelsAcrossGraphsAndKeysByShape) {
    KernelCache cache;
    OpOptions o;
    o.cache = &cache;
    for (uint64_t seed : {1, 2, 3}) {
        Graph g = test::random_graph(seed);
        Tensor x = test::random_tensor({g.num_src(), 16}, seed);
        gspmm(g, "copy_lhs", "sum", x, {}, o);
    }
    EXPECT_EQ(cache.stats().entries, 1u);  // one kernel serves every graph
    Graph g = test::random_graph(4);
    gspmm(g, "copy_lhs", "sum", test::random_tensor({g.num_src(), 17}, 5), {}, o);
    gspmm(g, "copy_lhs", "max", test::random_tensor({g.num_src(), 16}, 5), {}, o);
    gspmm(g, "copy_lhs", "sum", test::random_tensor({g.num_src(), 16}, 5, DType::F64), {}, o);
    EXPECT_EQ(cache.stats().entries, 4u);  // new shape, reduce op and dtype each compile
}

}  // namespace
}  // namespace gsparse
