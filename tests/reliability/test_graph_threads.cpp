// Concurrency of a Graph's derived state: many threads asking one graph (and its copies, which
// share state) for its derived layouts and attachments at once each get the one value a single
// thread computes, and each is computed once. Run under ThreadSanitizer by scripts/sanitize.sh --tsan.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "graph/graph.h"
#include "support/random_graph.h"
#include "support/threads.h"

namespace gsparse {
namespace {

constexpr int kThreads = 8;

/// Runs fn(thread index) on kThreads threads released together.
template <typename Fn>
void on_threads(Fn fn) {
    test::on_threads(kThreads, fn);
}

struct Derived {
    std::vector<index_t> csc_ptr, rev_row_ptr, coo_row, tiled_col, bal, loc, rel_col;
    int64_t segments = 0, max_row = 0;
    uint64_t fp = 0;
};

Derived derive(const Graph &g) {
    Derived d;
    d.csc_ptr = g.csc().col_ptr;
    d.rev_row_ptr = g.reverse().csr().row_ptr;
    d.coo_row = g.coo().row;
    d.tiled_col = g.coo_by_dst(8).col;
    d.segments = g.source_tile_segments(8, 4).num_segs();
    d.bal = g.balanced_idx();
    d.loc = g.locality_idx();
    d.rel_col = g.relabeled().csr().col_idx;
    d.max_row = g.stats().max_row_length;
    d.fp = g.fingerprint();
    return d;
}

void expect_same(const Derived &a, const Derived &b) {
    EXPECT_EQ(a.csc_ptr, b.csc_ptr);
    EXPECT_EQ(a.rev_row_ptr, b.rev_row_ptr);
    EXPECT_EQ(a.coo_row, b.coo_row);
    EXPECT_EQ(a.tiled_col, b.tiled_col);
    EXPECT_EQ(a.segments, b.segments);
    EXPECT_EQ(a.bal, b.bal);
    EXPECT_EQ(a.loc, b.loc);
    EXPECT_EQ(a.rel_col, b.rel_col);
    EXPECT_EQ(a.max_row, b.max_row);
    EXPECT_EQ(a.fp, b.fp);
}

TEST(GraphThreads, DerivedLayoutsOfOneGraphFromManyThreads) {
    const Derived expected = derive(test::random_graph(7));
    const Graph g = test::random_graph(7);
    std::vector<Derived> got(kThreads);
    // Half the threads use copies of g: copies share the derived state.
    on_threads([&](int t) { got[t] = derive(t % 2 ? Graph(g) : g); });
    for (const Derived &d : got) expect_same(d, expected);
    // Each layout was made once: the addresses every thread sees are the graph's own.
    EXPECT_EQ(&g.csc(), &Graph(g).csc());
}

TEST(GraphThreads, DifferentGraphsFromManyThreads) {
    std::vector<Derived> expected;
    std::vector<Graph> graphs;
    for (int i = 0; i < 4; i++) {
        expected.push_back(derive(test::random_graph(100 + i)));
        graphs.push_back(test::random_graph(100 + i));
    }
    std::vector<Derived> got(kThreads);
    on_threads([&](int t) { got[t] = derive(graphs[t % 4]); });
    for (int t = 0; t < kThreads; t++) expect_same(got[t], expected[t % 4]);
}

TEST(GraphThreads, AttachmentIsMadeOnceAndMayAskForOthers) {
    const Graph g = test::random_graph(11);
    std::atomic<int> made{0}, inner_made{0};
    std::vector<std::shared_ptr<void>> got(kThreads);
    on_threads([&](int t) {
        got[t] = g.attachment("outer", [&] {
            made++;
            // make() may ask for another attachment and for derived layouts.
            auto inner = g.attachment("inner", [&] {
                inner_made++;
                return std::static_pointer_cast<void>(std::make_shared<int64_t>(g.csc().nnz()));
            });
            return std::static_pointer_cast<void>(std::make_shared<int64_t>(*std::static_pointer_cast<int64_t>(inner)));
        });
        // Threads asking for keys of their own at the same time.
        g.attachment("own/" + std::to_string(t), [] { return std::static_pointer_cast<void>(std::make_shared<int>(1)); });
    });
    EXPECT_EQ(made.load(), 1);
    EXPECT_EQ(inner_made.load(), 1);
    for (const auto &p : got) {
        EXPECT_EQ(p, got[0]);
        EXPECT_EQ(*std::static_pointer_cast<int64_t>(p), g.num_edges());
    }
    EXPECT_EQ(g.attachment_keys().size(), static_cast<size_t>(2 + kThreads));
}

TEST(GraphThreads, FailedAttachmentIsRetriedByTheNextRequest) {
    const Graph g = test::random_graph(12);
    std::atomic<int> tries{0};
    auto make = [&]() -> std::shared_ptr<void> {
        if (tries++ == 0) throw std::runtime_error("first make fails");
        return std::make_shared<int>(42);
    };
    std::atomic<int> failures{0};
    std::vector<std::shared_ptr<void>> got(kThreads);
    on_threads([&](int t) {
        try {
            got[t] = g.attachment("flaky", make);
        } catch (const std::runtime_error &) {
            failures++;
        }
    });
    EXPECT_EQ(failures.load(), 1);
    EXPECT_EQ(tries.load(), 2);
    for (const auto &p : got) {
        if (p) {
            EXPECT_EQ(*std::static_pointer_cast<int>(p), 42);
        }
    }
}

}  // namespace
}  // namespace gsparse
