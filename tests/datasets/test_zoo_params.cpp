// Zoo parameters: every bad value is rejected before generating, with a message naming the
// family and the parameter; and the manifest (built-in and parsed) is well formed.
#include <gtest/gtest.h>

#include <set>

#include "zoo/families.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace gsparse::datasets::zoo {
namespace {

using test::error_of;

struct BadCase {
    const char *family;
    ZooParams params;
    std::vector<std::string> expect;  ///< substrings of the message
};

TEST(ZooParams, BadValuesNameTheParameter) {
    const std::vector<BadCase> cases = {
        {"chung-lu", {{"nodes", "-5"}}, {"chung-lu", "nodes = -5"}},
        {"chung-lu", {{"in-exponent", "1"}}, {"in-exponent = 1", "> 1"}},
        {"chung-lu", {{"out-exponent", "0.5"}}, {"out-exponent = 0.5"}},
        {"chung-lu", {{"nodes", "100"}, {"edges", "6000"}}, {"edges = 6000", "dense"}},
        {"chung-lu", {{"max-in-degree", "3"}}, {"max-in-degree = 3", "average"}},
        {"chung-lu", {{"edges", "-1"}}, {"edges = -1"}},
        {"bipartite", {{"dst-nodes", "0"}}, {"bipartite", "dst-nodes = 0"}},
        {"bipartite", {{"src-nodes", "-3"}}, {"src-nodes = -3"}},
        {"bipartite", {{"in-exponent", "0.9"}}, {"in-exponent = 0.9", "or 0 for uniform"}},
        {"rmat", {{"scale", "40"}}, {"rmat", "scale = 40"}},
        {"rmat", {{"scale", "10"}, {"nodes", "1000"}}, {"scale or nodes"}},
        {"rmat", {{"edges", "10"}, {"edge-factor", "4"}}, {"edge-factor or edges"}},
        {"rmat", {{"edge-factor", "0"}}, {"edge-factor = 0"}},
        {"rmat", {{"a", "0.7"}, {"b", "0.2"}, {"c", "0.2"}}, {"a + b + c"}},
        {"rmat", {{"b", "0"}}, {"b = 0"}},
        {"rmat", {{"nodes", "1"}}, {"nodes = 1"}},
        {"rmat", {{"simple", "yes"}}, {"simple = 'yes'", "0 or 1"}},
        {"rmat", {{"order", "random"}}, {"order = 'random'", "shuffled, natural"}},
        {"lattice", {{"degree", "9"}}, {"lattice", "degree = 9"}},
        {"lattice", {{"degree", "-1"}}, {"degree = -1"}},
        {"lattice", {{"edges", "101"}}, {"edges = 101", "even"}},
        {"lattice", {{"nodes", "100"}, {"edges", "800"}}, {"edges = 800", "do not fit"}},
        {"lattice", {{"degree", "3"}, {"edges", "100"}}, {"degree or edges"}},
        {"lattice", {{"width", "-2"}}, {"width = -2"}},
        {"knn", {{"nodes", "10"}, {"k", "10"}}, {"knn", "k = 10", "nodes - 1 = 9"}},
        {"knn", {{"k", "0"}}, {"k = 0"}},
        {"knn", {{"dim", "7"}}, {"dim = 7"}},
        {"knn", {{"nodes", "-4"}}, {"nodes = -4"}},
        {"knn", {{"nodes", "100"}, {"edges", "1000"}}, {"nodes or edges"}},
        {"erdos-renyi", {{"nodes", "10"}, {"edges", "46"}}, {"erdos-renyi", "edges = 46"}},
        {"erdos-renyi", {{"nodes", "0"}}, {"nodes = 0"}},
        {"batch", {{"min-nodes", "1"}}, {"batch", "min-nodes = 1"}},
        {"batch", {{"min-nodes", "20"}, {"max-nodes", "10"}}, {"max-nodes = 10"}},
        {"batch", {{"degree", "20"}}, {"degree = 20"}},
        {"batch", {{"graphs", "0"}}, {"graphs = 0"}},
        {"batch", {{"nodes", "-1"}}, {"nodes = -1"}},
        {"batch", {{"nodes", "100"}, {"graphs", "3"}}, {"nodes or graphs"}},
        {"reddit", {{"intra", "2"}}, {"intra 2"}},
        {"reddit", {{"scale", "0"}}, {"scale 0"}},
        {"chung-lu", {{"nodes", "abc"}}, {"nodes = 'abc'", "not an integer"}},
        {"chung-lu", {{"nodes", "1.5"}}, {"nodes = '1.5'", "not an integer"}},
        {"chung-lu", {{"in-exponent", "x2"}}, {"in-exponent = 'x2'", "not a number"}},
        {"knn", {{"radius", "3"}}, {"knn: unknown parameter 'radius'", "nodes, k, dim"}},
        {"reddit", {{"k", "3"}}, {"reddit: unknown parameter 'k'"}},
    };
    for (const auto &c : cases) {
        const std::string shape_msg = error_of([&] { zoo_shape(c.family, c.params, 1); });
        const std::string gen_msg = error_of([&] { generate_zoo(c.family, c.params, 1); });
        for (const auto &want : c.expect) {
            EXPECT_NE(shape_msg.find(want), std::string::npos) << c.family << ": '" << shape_msg << "' lacks '" << want << "'";
            EXPECT_NE(gen_msg.find(want), std::string::npos) << c.family << ": '" << gen_msg << "' lacks '" << want << "'";
        }
    }
}

TEST(ZooParams, TypedGeneratorsCheckTheirSpecs) {
    ChungLuSpec c;
    c.in_exponent = 0.5;
    EXPECT_NE(error_of([&] { generate_chung_lu(c, 1); }).find("in-exponent"), std::string::npos);
    KnnSpec k;
    k.nodes = 5;
    k.k = 5;
    EXPECT_NE(error_of([&] { generate_knn(k, 1); }).find("k = 5"), std::string::npos);
    BatchSpec b;
    b.graphs = -1;
    EXPECT_NE(error_of([&] { generate_batch(b, 1); }).find("graphs = -1"), std::string::npos);
}

TEST(ZooParams, UnknownFamilyListsTheValidOnes) {
    const std::string msg = error_of([] { zoo_family("barabasi"); });
    EXPECT_NE(msg.find("unknown graph family 'barabasi'"), std::string::npos) << msg;
    for (const auto &f : zoo_families()) EXPECT_NE(msg.find(f.name), std::string::npos) << msg;
}

TEST(ZooParams, NumbersMayBeWrittenInScientificNotation) {
    const ZooShape s = zoo_shape("erdos-renyi", {{"nodes", "1e4"}, {"edges", "2.5e5"}}, 1);
    EXPECT_EQ(s.rows, 10000);
    EXPECT_EQ(s.edges, 250000);
}

TEST(ZooManifest, BuiltInCoversEveryFamilyInBothSplits) {
    const auto &m = builtin_manifest();
    std::set<std::string> train, heldout;
    for (const auto &z : m) (z.split == "train" ? train : heldout).insert(z.family);
    for (const auto &f : {"chung-lu", "rmat", "lattice", "knn", "erdos-renyi", "bipartite", "batch"}) {
        EXPECT_TRUE(train.count(f)) << f;
        EXPECT_TRUE(heldout.count(f)) << f;
    }
    EXPECT_TRUE(train.count("reddit") || train.count("ogbn-products") || train.count("ogbn-proteins"));
    EXPECT_TRUE(heldout.count("reddit") || heldout.count("ogbn-products") || heldout.count("ogbn-proteins"));
}

TEST(ZooManifest, BuiltInSizesSpan1MTo100MEdges) {
    int64_t smallest = INT64_MAX, largest = 0;
    for (const auto &z : builtin_manifest()) {
        const ZooShape s = zoo_shape(z.family, z.params, z.seed);
        EXPECT_GE(s.edges, 1000000) << z.name;
        EXPECT_LE(s.edges, 125000000) << z.name;
        smallest = std::min(smallest, s.edges);
        largest = std::max(largest, s.edges);
    }
    EXPECT_LT(smallest, 1200000);
    EXPECT_GT(largest, 95000000);
}

TEST(ZooManifest, HeldOutMembersDifferFromTrainingInSeedAndParameters) {
    const auto train = members_of_split(builtin_manifest(), "train");
    const auto heldout = members_of_split(builtin_manifest(), "heldout");
    EXPECT_GE(train.size(), 20u);
    EXPECT_GE(heldout.size(), 14u);
    std::set<uint64_t> train_seeds;
    for (const auto &t : train) train_seeds.insert(t.seed);
    for (const auto &h : heldout) {
        EXPECT_FALSE(train_seeds.count(h.seed)) << h.name << " shares its seed with a training member";
        for (const auto &t : train)
            EXPECT_FALSE(t.family == h.family && t.params == h.params) << h.name << " has the parameters of " << t.name;
    }
}

TEST(ZooManifest, ParseErrorsNameTheLine) {
    const std::string good = "# comment\n\na train erdos-renyi seed=1 nodes=100 edges=200  # trailing comment\n";
    const auto m = parse_manifest(good, "m.txt");
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].name, "a");
    EXPECT_EQ(m[0].seed, 1u);
    EXPECT_EQ(m[0].line, 3);
    EXPECT_EQ(format_params(m[0].params), "edges=200 nodes=100");
    const std::vector<std::pair<std::string, std::string>> bad = {
        {good + "a heldout erdos-renyi seed=2 nodes=100 edges=200\n", "m.txt:4: member name 'a' appears twice"},
        {"b test erdos-renyi seed=2\n", "m.txt:1: split 'test'"},
        {"b train erdos-renyi nodes=100\n", "m.txt:1: member 'b' has no seed"},
        {"b train erdos-renyi seed=-1\n", "m.txt:1: seed = '-1'"},
        {"b train erdos-renyi seed=1 nodes\n", "m.txt:1: expected param=value, got 'nodes'"},
        {"b train erdos-renyi seed=1 nodes=1 nodes=2\n", "m.txt:1: parameter 'nodes' appears twice"},
        {"b train smallworld seed=1\n", "m.txt:1: unknown graph family 'smallworld'"},
        {"b train knn seed=1 k=0\n", "m.txt:1: knn: k = 0"},
        {"b/c train knn seed=1\n", "m.txt:1: member name 'b/c'"},
        {"b train\n", "m.txt:1: expected 'NAME SPLIT FAMILY"},
    };
    for (const auto &[text, want] : bad) {
        const std::string msg = error_of([&] { parse_manifest(text, "m.txt"); });
        EXPECT_NE(msg.find(want), std::string::npos) << "'" << msg << "' lacks '" << want << "'";
    }
}

TEST(ZooManifest, FindAndSplit) {
    const auto &m = builtin_manifest();
    EXPECT_EQ(find_member(m, m.front().name).name, m.front().name);
    EXPECT_NE(error_of([&] { find_member(m, "no-such-graph"); }).find("no zoo member named 'no-such-graph'"),
              std::string::npos);
    EXPECT_NE(error_of([&] { members_of_split(m, "test"); }).find("split 'test'"), std::string::npos);
}

}  // namespace
}  // namespace gsparse::datasets::zoo
