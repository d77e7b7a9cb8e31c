// Twin specs and option validation: every invalid value is rejected with a message naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "twin/twin.h"

namespace gsparse::datasets {
namespace {

/// The message of the gsparse::Error that f throws ("" if it throws none).
template <typename F>
std::string error_of(F &&f) {
    try {
        f();
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

TEST(TwinSpecs, PublishedStatistics) {
    EXPECT_EQ(twin_names(), (std::vector<std::string>{"reddit", "ogbn-proteins", "ogbn-products"}));
    const TwinSpec r = twin_spec("reddit");
    EXPECT_EQ(r.nodes, 232965);
    EXPECT_EQ(r.edges, 114615892);
    EXPECT_DOUBLE_EQ(r.cov, 1.63);
    EXPECT_EQ(r.communities, 41);
    const TwinSpec p = twin_spec("ogbn-proteins");
    EXPECT_EQ(p.nodes, 132534);
    EXPECT_EQ(p.edges, 79122504);
    EXPECT_DOUBLE_EQ(p.cov, 1.04);
    const TwinSpec q = twin_spec("ogbn-products");
    EXPECT_EQ(q.nodes, 2449029);
    EXPECT_EQ(q.edges, 123718280);
    EXPECT_DOUBLE_EQ(q.cov, 1.88);
    for (const auto &name : twin_names()) {
        const TwinSpec s = twin_spec(name);
        EXPECT_NEAR(s.avg, static_cast<double>(s.edges) / s.nodes, 1.0) << name;
        EXPECT_GE(s.intra, 0.0);
        EXPECT_LE(s.intra, 1.0);
    }
}

TEST(TwinSpecs, UnknownNameListsTheValidNames) {
    const std::string msg = error_of([] { twin_spec("cora-huge"); });
    EXPECT_NE(msg.find("cora-huge"), std::string::npos) << msg;
    for (const auto &name : twin_names()) EXPECT_NE(msg.find(name), std::string::npos) << msg;
}

TEST(TwinOptions, ResolveScalesAndKeepsDefaults) {
    const TwinSpec spec = twin_spec("ogbn-products");
    TwinOptions o;
    o.scale = 0.01;
    const TwinSpec r = resolve_twin(spec, o);
    EXPECT_EQ(r.nodes, 24490);
    EXPECT_EQ(r.edges, 1237183);
    EXPECT_EQ(r.communities, 47);
    EXPECT_DOUBLE_EQ(r.intra, spec.intra);
    o.communities = 5;
    o.intra = 0.25;
    const TwinSpec r2 = resolve_twin(spec, o);
    EXPECT_EQ(r2.communities, 5);
    EXPECT_DOUBLE_EQ(r2.intra, 0.25);
    // Default communities are capped at the node count.
    o = {};
    o.scale = 1e-5;
    const TwinSpec tiny = resolve_twin(spec, o);
    EXPECT_EQ(tiny.nodes, 24);
    EXPECT_EQ(tiny.communities, 24);
    EXPECT_EQ(tiny.edges, 24 * 6);
}

TEST(TwinOptions, InvalidValuesAreNamed) {
    const TwinSpec spec = twin_spec("reddit");
    auto with = [&](auto edit) {
        TwinOptions o;
        o.scale = 0.01;
        edit(o);
        return error_of([&] { resolve_twin(spec, o); });
    };
    for (double bad : {0.0, -0.5, 1.5, std::nan("")}) {
        const std::string msg = with([&](TwinOptions &o) { o.scale = bad; });
        EXPECT_NE(msg.find("scale"), std::string::npos) << bad << ": " << msg;
        EXPECT_NE(msg.find("(0, 1]"), std::string::npos) << msg;
    }
    for (double bad : {-0.1, 1.01, std::nan("")}) {
        const std::string msg = with([&](TwinOptions &o) { o.intra = bad; });
        EXPECT_NE(msg.find("intra"), std::string::npos) << bad << ": " << msg;
    }
    for (int64_t bad : {int64_t{0}, int64_t{-3}, int64_t{2331}}) {
        const std::string msg = with([&](TwinOptions &o) { o.communities = bad; });
        EXPECT_NE(msg.find("community count " + std::to_string(bad)), std::string::npos) << msg;
        EXPECT_NE(msg.find("2330"), std::string::npos) << "names the node count: " << msg;
    }
    EXPECT_EQ(with([](TwinOptions &o) { o.communities = 2330; }), "");
    EXPECT_NE(with([](TwinOptions &o) { o.threads = -1; }).find("thread"), std::string::npos);
    // generate_twin validates the same way.
    TwinOptions o;
    o.scale = 2;
    EXPECT_THROW(generate_twin(spec, o), Error);
}

TEST(TwinOptions, InvalidCustomSpecsAreNamed) {
    TwinSpec s{"custom", 100, 1000, 10, 1.0, 4, 0.5};
    EXPECT_EQ(error_of([&] { resolve_twin(s, {}); }), "");
    TwinSpec bad = s;
    bad.nodes = 0;
    EXPECT_NE(error_of([&] { resolve_twin(bad, {}); }).find("node count"), std::string::npos);
    bad = s;
    bad.edges = 100 * 100 + 1;
    EXPECT_NE(error_of([&] { resolve_twin(bad, {}); }).find("do not fit"), std::string::npos);
    bad = s;
    bad.edges = int64_t{1} << 31;
    bad.nodes = int64_t{1} << 20;
    EXPECT_NE(error_of([&] { resolve_twin(bad, {}); }).find("edge count"), std::string::npos);
    bad = s;
    bad.cov = -1;
    EXPECT_NE(error_of([&] { resolve_twin(bad, {}); }).find("COV"), std::string::npos);
    bad = s;
    bad.intra = 2;
    EXPECT_NE(error_of([&] { resolve_twin(bad, {}); }).find("intra"), std::string::npos);
}

TEST(TwinOptions, CustomSpecGeneratesExactly) {
    const TwinSpec s{"custom", 5000, 60000, 12, 0.5, 3, 0.7};
    const CSR g = generate_twin(s, {});
    EXPECT_EQ(g.num_rows, 5000);
    EXPECT_EQ(g.nnz(), 60000);
}

TEST(TwinOptions, NodeOrderNames) {
    EXPECT_EQ(parse_node_order("shuffled"), NodeOrder::shuffled);
    EXPECT_EQ(parse_node_order("community"), NodeOrder::community);
    EXPECT_STREQ(node_order_name(NodeOrder::community), "community");
    const std::string msg = error_of([] { parse_node_order("random"); });
    EXPECT_NE(msg.find("random"), std::string::npos);
    EXPECT_NE(msg.find("shuffled, community"), std::string::npos);
}

}  // namespace
}  // namespace gsparse::datasets
