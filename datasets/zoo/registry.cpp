// The zoo's families by name: their textual parameters (names, defaults, help), parsing and
// validation (every error names the family and the parameter), size resolution and generation.
// The typed generators are in the other files of zoo/ (see families.h); the twins in twin/.
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "twin/twin.h"
#include "zoo/common.h"
#include "zoo/families.h"
#include "zoo/zoo.h"

namespace gsparse::datasets::zoo {

namespace {

std::vector<ZooFamily> make_families() {
    const ZooParam order_natural{"order", "natural", "node ids: natural (the generator's own, spatially local) or shuffled"};
    std::vector<ZooFamily> f = {
        {"chung-lu",
         "power-law in- and out-degrees (Chung-Lu expected degrees); simple graph with exactly `edges` edges",
         {{"nodes", "1000000", "node count"},
          {"edges", "16000000", "edge count"},
          {"in-exponent", "2.2", "power-law exponent of the in-degrees (row lengths), in (1, 10]"},
          {"out-exponent", "2.2", "power-law exponent of the out-degrees, in (1, 10]"},
          {"max-in-degree", "0", "largest expected in-degree, above the average (0: limited by the node count only)"},
          {"max-out-degree", "0", "largest expected out-degree, above the average (0: limited by the node count only)"}}},
        {"rmat",
         "R-MAT / Kronecker with the Graph500 initiator; sized by scale and edge-factor, or nodes and edges",
         {{"scale", "20", "log2 of the node count (Graph500 SCALE), in [1, 30]; excludes nodes"},
          {"edge-factor", "16", "edges per node (Graph500 edgefactor), > 0; excludes edges"},
          {"nodes", "", "node count, instead of scale"},
          {"edges", "", "edge count, instead of edge-factor"},
          {"a", "0.57", "initiator: probability of quadrant (source bit 0, destination bit 0)"},
          {"b", "0.19", "initiator: quadrant (0, 1)"},
          {"c", "0.19", "initiator: quadrant (1, 0); d = 1 - a - b - c > 0"},
          {"simple", "1", "1: self-loops and repeated edges are redrawn (exactly `edges` distinct edges); 0: kept"},
          {"order", "shuffled", "node ids: shuffled (a random permutation, as Graph500) or natural (id 0 densest)"}}},
        {"lattice",
         "road-like lattice / mesh: a 2-D grid keeping a random subset of its 8-neighbour stencil, symmetric",
         {{"nodes", "1000000", "node count"},
          {"degree", "4", "average degree, in (0, 8]: ~2.5-3 road-like, 4 grid, 6 mesh, 8 full stencil; excludes edges"},
          {"edges", "", "directed edge count (even), instead of degree"},
          {"width", "0", "grid width (0: square)"},
          order_natural}},
        {"knn",
         "k-nearest-neighbour graph of uniform random points in [0,1]^dim; every row exactly k entries",
         {{"nodes", "1000000", "point count; excludes edges"},
          {"k", "16", "neighbours per row, in [1, nodes - 1]"},
          {"dim", "3", "dimension of the points, in [1, 4]"},
          {"edges", "", "edge count, instead of nodes (nodes = round(edges / k))"},
          order_natural}},
        {"erdos-renyi",
         "uniform random directed graph G(n, m): exactly `edges` distinct edges, no self-loops",
         {{"nodes", "1000000", "node count"}, {"edges", "16000000", "edge count, at most nodes (nodes - 1) / 2"}}},
        {"bipartite",
         "rectangular user-item graph: dst-nodes rows, src-nodes sources, power-law or uniform on either side",
         {{"dst-nodes", "200000", "rows (destinations)"},
          {"src-nodes", "1000000", "columns (sources)"},
          {"edges", "10000000", "edge count"},
          {"in-exponent", "2.5", "power-law exponent of the row lengths, in (1, 10], or 0 for uniform"},
          {"out-exponent", "3", "power-law exponent of the source degrees, in (1, 10], or 0 for uniform"},
          {"max-in-degree", "0", "largest expected row length, above the average (0: no limit)"},
          {"max-out-degree", "0", "largest expected source degree, above the average (0: no limit)"}}},
        {"batch",
         "block-diagonal batch of small molecule-like graphs (random trees plus rings), symmetric",
         {{"nodes", "500000", "total nodes (graphs are added until reached); excludes graphs and edges"},
          {"graphs", "", "graph count, instead of nodes"},
          {"edges", "", "total directed edges (graphs are added until reached), instead of nodes"},
          {"min-nodes", "10", "smallest graph, in [2, 4096]"},
          {"max-nodes", "50", "largest graph, in [min-nodes, 4096]"},
          {"degree", "2.2", "average degree within a graph, in (0, min-nodes - 1]"}}},
    };
    for (const std::string &name : twin_names()) {
        const TwinSpec spec = twin_spec(name);
        f.push_back({name,
                     "dataset twin of " + name + " (see the twins above); intra from 0 to its default sets the "
                                                 "community strength",
                     {{"scale", "1", "fraction of the nodes and edges, in (0, 1]"},
                      {"communities", "", "community count (default: the twin's, " + std::to_string(spec.communities) + ")"},
                      {"intra", "", "community strength: probability that a source is in the row's community, in [0, 1] "
                                    "(default: the twin's)"},
                      {"order", "shuffled", "node ids: shuffled or community"}},
                     true});
    }
    return f;
}

bool parse_real(const std::string &t, double &out) {
    if (t.empty()) return false;
    errno = 0;
    char *end = nullptr;
    out = std::strtod(t.c_str(), &end);
    return end && *end == 0 && errno == 0 && std::isfinite(out);
}

bool parse_integer(const std::string &t, int64_t &out) {
    if (t.empty()) return false;
    errno = 0;
    char *end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (end && *end == 0 && errno == 0) {
        out = v;
        return true;
    }
    double d;  // "1e6", "2.5e6": reals with an integral value
    if (!parse_real(t, d) || d != std::floor(d) || std::abs(d) > 9e18) return false;
    out = static_cast<int64_t>(d);
    return true;
}

/// Typed access to a family's textual parameters (given or default).
class Reader {
public:
    Reader(const ZooFamily &family, const ZooParams &params) : f_(family), p_(params) {
        for (const auto &kv : params)
            if (!param(kv.first)) {
                std::string valid;
                for (const auto &q : f_.params) valid += (valid.empty() ? "" : ", ") + q.name;
                fail<Error>(f_.name, ": unknown parameter '", kv.first, "'; ", f_.name, " takes: ", valid);
            }
    }
    bool given(const std::string &name) const { return p_.count(name) > 0; }
    std::string text(const std::string &name) const {
        auto it = p_.find(name);
        return it != p_.end() ? it->second : param(name)->default_value;
    }
    int64_t integer(const std::string &name) const {
        int64_t v = 0;
        if (!parse_integer(text(name), v)) fail<Error>(f_.name, ": ", name, " = '", text(name), "' is not an integer");
        return v;
    }
    double real(const std::string &name) const {
        double v = 0;
        if (!parse_real(text(name), v)) fail<Error>(f_.name, ": ", name, " = '", text(name), "' is not a number");
        return v;
    }
    bool flag(const std::string &name) const {
        const std::string t = text(name);
        if (t == "1" || t == "true") return true;
        if (t == "0" || t == "false") return false;
        fail<Error>(f_.name, ": ", name, " = '", t, "' must be 0 or 1");
    }
    std::string choice(const std::string &name, const std::vector<std::string> &valid) const {
        const std::string t = text(name);
        std::string list;
        for (const auto &v : valid) {
            if (v == t) return t;
            list += (list.empty() ? "" : ", ") + v;
        }
        fail<Error>(f_.name, ": ", name, " = '", t, "' must be one of: ", list);
    }
    /// At most one of names given.
    void exclusive(const std::vector<std::string> &names) const {
        std::string seen;
        for (const auto &n : names)
            if (given(n)) {
                if (!seen.empty()) fail<Error>(f_.name, ": give ", seen, " or ", n, ", not both");
                seen = n;
            }
    }
    const std::string &family() const { return f_.name; }

private:
    const ZooParam *param(const std::string &name) const {
        for (const auto &q : f_.params)
            if (q.name == name) return &q;
        return nullptr;
    }
    const ZooFamily &f_;
    const ZooParams &p_;
};

ChungLuSpec chung_lu_of(const Reader &r) {
    ChungLuSpec s;
    s.nodes = r.integer("nodes");
    s.edges = r.integer("edges");
    s.in_exponent = r.real("in-exponent");
    s.out_exponent = r.real("out-exponent");
    s.max_in_degree = r.real("max-in-degree");
    s.max_out_degree = r.real("max-out-degree");
    validate(s);
    return s;
}

BipartiteSpec bipartite_of(const Reader &r) {
    BipartiteSpec s;
    s.dst_nodes = r.integer("dst-nodes");
    s.src_nodes = r.integer("src-nodes");
    s.edges = r.integer("edges");
    s.in_exponent = r.real("in-exponent");
    s.out_exponent = r.real("out-exponent");
    s.max_in_degree = r.real("max-in-degree");
    s.max_out_degree = r.real("max-out-degree");
    validate(s);
    return s;
}

RmatSpec rmat_of(const Reader &r) {
    r.exclusive({"scale", "nodes"});
    r.exclusive({"edge-factor", "edges"});
    RmatSpec s;
    if (r.given("nodes")) {
        s.nodes = r.integer("nodes");
    } else {
        const int64_t scale = r.integer("scale");
        if (scale < 1 || scale > 30) fail<Error>("rmat: scale = ", scale, " is out of range: it must be in [1, 30]");
        s.nodes = int64_t{1} << scale;
    }
    if (r.given("edges")) {
        s.edges = r.integer("edges");
    } else {
        const double factor = r.real("edge-factor");
        if (!(factor > 0)) fail<Error>("rmat: edge-factor = ", factor, " is out of range: it must be > 0");
        s.edges = std::llround(factor * static_cast<double>(s.nodes));
    }
    s.a = r.real("a");
    s.b = r.real("b");
    s.c = r.real("c");
    s.simple = r.flag("simple");
    s.shuffle = r.choice("order", {"shuffled", "natural"}) == "shuffled";
    validate(s);
    return s;
}

LatticeSpec lattice_of(const Reader &r) {
    r.exclusive({"degree", "edges"});
    LatticeSpec s;
    s.nodes = r.integer("nodes");
    s.width = r.integer("width");
    if (r.given("edges")) {
        s.edges = r.integer("edges");
    } else {
        const double degree = r.real("degree");
        if (!(degree > 0 && degree <= 8)) fail<Error>("lattice: degree = ", degree, " is out of range: it must be in (0, 8]");
        s.edges = 2 * std::llround(degree * static_cast<double>(s.nodes) / 2);
    }
    s.shuffle = r.choice("order", {"natural", "shuffled"}) == "shuffled";
    validate(s);
    return s;
}

KnnSpec knn_of(const Reader &r) {
    r.exclusive({"nodes", "edges"});
    KnnSpec s;
    s.k = r.integer("k");
    s.dim = r.integer("dim");
    if (r.given("edges")) {
        const int64_t edges = r.integer("edges");
        if (s.k < 1) fail<Error>("knn: k = ", s.k, " is out of range: it must be >= 1");
        if (edges < s.k) fail<Error>("knn: edges = ", edges, " is out of range: it must be >= k = ", s.k);
        s.nodes = std::llround(static_cast<double>(edges) / static_cast<double>(s.k));
    } else {
        s.nodes = r.integer("nodes");
    }
    s.shuffle = r.choice("order", {"natural", "shuffled"}) == "shuffled";
    validate(s);
    return s;
}

ErdosRenyiSpec erdos_renyi_of(const Reader &r) {
    ErdosRenyiSpec s;
    s.nodes = r.integer("nodes");
    s.edges = r.integer("edges");
    validate(s);
    return s;
}

BatchSpec batch_of(const Reader &r, uint64_t seed) {
    r.exclusive({"nodes", "graphs", "edges"});
    BatchSpec s;
    s.min_nodes = r.integer("min-nodes");
    s.max_nodes = r.integer("max-nodes");
    s.degree = r.real("degree");
    s.graphs = 0;
    validate(s);
    if (r.given("graphs")) {
        s.graphs = r.integer("graphs");
        if (s.graphs < 1) fail<Error>("batch: graphs = ", s.graphs, " is out of range: it must be >= 1");
    } else if (r.given("edges")) {
        s.graphs = batch_graphs_for_edges(s, r.integer("edges"), seed);
    } else {
        s.graphs = batch_graphs_for_nodes(s, r.integer("nodes"), seed);
    }
    validate(s);
    return s;
}

struct TwinArgs {
    TwinSpec spec;
    TwinOptions options;
};

TwinArgs twin_of(const Reader &r, uint64_t seed) {
    TwinArgs t{twin_spec(r.family()), {}};
    t.options.scale = r.real("scale");
    t.options.seed = seed;
    if (r.given("communities")) t.options.communities = r.integer("communities");
    if (r.given("intra")) t.options.intra = r.real("intra");
    t.options.order = parse_node_order(r.choice("order", {"shuffled", "community"}));
    resolve_twin(t.spec, t.options);
    return t;
}

}  // namespace

const std::vector<ZooFamily> &zoo_families() {
    static const std::vector<ZooFamily> f = make_families();
    return f;
}

const ZooFamily &zoo_family(const std::string &name) {
    std::string valid;
    for (const auto &f : zoo_families()) {
        if (f.name == name) return f;
        valid += (valid.empty() ? "" : ", ") + f.name;
    }
    fail<Error>("unknown graph family '", name, "'; valid families: ", valid);
}

bool is_zoo_family(const std::string &name) {
    for (const auto &f : zoo_families())
        if (f.name == name) return true;
    return false;
}

ZooShape zoo_shape(const std::string &family, const ZooParams &params, uint64_t seed) {
    const ZooFamily &f = zoo_family(family);
    const Reader r(f, params);
    ZooShape out;
    if (f.twin) {
        const TwinArgs t = twin_of(r, seed);
        const TwinSpec s = resolve_twin(t.spec, t.options);
        out.rows = out.cols = s.nodes;
        out.edges = s.edges;
    } else if (family == "chung-lu") {
        const ChungLuSpec s = chung_lu_of(r);
        out.rows = out.cols = s.nodes;
        out.edges = s.edges;
    } else if (family == "bipartite") {
        const BipartiteSpec s = bipartite_of(r);
        out.rows = s.dst_nodes;
        out.cols = s.src_nodes;
        out.edges = s.edges;
    } else if (family == "rmat") {
        const RmatSpec s = rmat_of(r);
        out.rows = out.cols = s.nodes;
        out.edges = s.edges;
    } else if (family == "lattice") {
        const LatticeSpec s = lattice_of(r);
        out.rows = out.cols = s.nodes;
        out.edges = s.edges;
    } else if (family == "knn") {
        const KnnSpec s = knn_of(r);
        out.rows = out.cols = s.nodes;
        out.edges = s.nodes * s.k;
    } else if (family == "erdos-renyi") {
        const ErdosRenyiSpec s = erdos_renyi_of(r);
        out.rows = out.cols = s.nodes;
        out.edges = s.edges;
    } else if (family == "batch") {
        const BatchSpec s = batch_of(r, seed);
        for (int64_t n : batch_graph_sizes(s, seed)) {
            out.rows += n;
            out.edges += 2 * batch_graph_edges(s, n);
        }
        out.cols = out.rows;
    } else {
        fail<Error>("internal: family '", family, "' has no generator");
    }
    return out;
}

ZooGraph generate_zoo(const std::string &family, const ZooParams &params, uint64_t seed, int threads) {
    const ZooFamily &f = zoo_family(family);
    const Reader r(f, params);
    if (threads < 0) fail<Error>("thread count ", threads, " must be >= 0");
    ZooGraph g;
    if (f.twin) {
        TwinArgs t = twin_of(r, seed);
        t.options.threads = threads;
        g.csr = generate_twin(t.spec, t.options);
    } else if (family == "chung-lu") {
        g.csr = generate_chung_lu(chung_lu_of(r), seed, threads);
    } else if (family == "bipartite") {
        g.csr = generate_bipartite(bipartite_of(r), seed, threads);
    } else if (family == "rmat") {
        g.csr = generate_rmat(rmat_of(r), seed, threads);
    } else if (family == "lattice") {
        g.csr = generate_lattice(lattice_of(r), seed, threads);
    } else if (family == "knn") {
        g.csr = generate_knn(knn_of(r), seed, threads);
    } else if (family == "erdos-renyi") {
        g.csr = generate_erdos_renyi(erdos_renyi_of(r), seed, threads);
    } else if (family == "batch") {
        BatchGraph b = generate_batch(batch_of(r, seed), seed, threads);
        g.csr = std::move(b.csr);
        g.graph_start = std::move(b.graph_start);
    } else {
        fail<Error>("internal: family '", family, "' has no generator");
    }
    return g;
}

std::string format_params(const ZooParams &params) {
    std::string s;
    for (const auto &kv : params) s += (s.empty() ? "" : " ") + kv.first + "=" + kv.second;
    return s;
}

}  // namespace gsparse::datasets::zoo
