#include "twin/twin.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "twin/alias_table.h"
#include "twin/id_marks.h"
#include "twin/rng.h"
#include "twin/row_lengths.h"

namespace gsparse::datasets {

namespace {

using detail::IdMarks;

using detail::AliasTables;
using detail::Rng;
using detail::Stream;

const std::vector<TwinSpec> &builtin_specs() {
    static const std::vector<TwinSpec> specs = {
        {"reddit", 232965, 114615892, 492.0, 1.63, 41, 0.8},
        {"ogbn-proteins", 132534, 79122504, 597.0, 1.04, 8, 0.99},
        {"ogbn-products", 2449029, 123718280, 51.0, 1.88, 47, 0.8},
    };
    return specs;
}

std::string joined_names() {
    std::string s;
    for (const auto &spec : builtin_specs()) s += (s.empty() ? "" : ", ") + spec.name;
    return s;
}

/// Community sizes: at least one node each, the rest split in proportion to stratified lognormal
/// weights (sigma 0.75: the largest community is many times the smallest) in a random order.
std::vector<int64_t> community_starts(int64_t nodes, int64_t k, uint64_t seed) {
    std::vector<double> w(static_cast<size_t>(k));
    for (int64_t c = 0; c < k; c++) w[c] = std::exp(0.75 * detail::normal_quantile((c + 0.5) / k));
    Rng rng(seed, Stream::communities, 0);
    const std::vector<int64_t> order = detail::random_permutation<int64_t>(k, rng);
    double total = 0;
    for (double x : w) total += x;
    std::vector<int64_t> start(static_cast<size_t>(k) + 1, 0);
    const int64_t spare = nodes - k;
    double acc = 0;
    int64_t given = 0;
    for (int64_t c = 0; c < k; c++) {
        acc += w[order[c]];
        const int64_t upto = c + 1 == k ? spare : std::min<int64_t>(spare, std::llround(acc / total * spare));
        const int64_t extra = std::max<int64_t>(0, upto - given);
        given += extra;
        start[c + 1] = start[c] + 1 + extra;
    }
    return start;
}

/// Read-only state shared by the row workers. Rows i, communities and alias-table indices are in
/// community order; the alias tables return output ids, and rows are written at output positions.
struct RowContext {
    int64_t nodes = 0;
    uint64_t seed = 0;
    double intra = 0;
    const std::vector<int64_t> *length = nullptr;      ///< by community-order row
    const std::vector<index_t> *community = nullptr;   ///< by community-order id
    const std::vector<index_t> *relabel = nullptr;     ///< community-order id -> output id
    const std::vector<index_t> *row_ptr = nullptr;     ///< by output id
    const AliasTables *global = nullptr;               ///< one table over all nodes
    const AliasTables *local = nullptr;                ///< one table per community
    index_t *col_idx = nullptr;
};

/// Draws per source before the row falls back to the next unused id.
constexpr int kMaxAttempts = 32;

inline int32_t draw_source(const RowContext &ctx, int64_t c, bool intra_on, Rng &rng, bool &in) {
    const uint64_t coin = rng.next(), r = rng.next();
    in = intra_on && static_cast<double>(coin >> 11) * 0x1.0p-53 < ctx.intra;
    return in ? ctx.local->sample(c, r) : ctx.global->sample(0, r);
}

void fill_row(const RowContext &ctx, int64_t i, IdMarks &marks) {
    const int64_t len = (*ctx.length)[i];
    if (len == 0) return;
    const std::vector<index_t> &relabel = *ctx.relabel;
    index_t *out = ctx.col_idx + (*ctx.row_ptr)[relabel[i]];
    if (len >= ctx.nodes) {  // a full row: every node is a source
        for (int64_t u = 0; u < ctx.nodes; u++) out[u] = static_cast<index_t>(u);
        return;
    }
    Rng rng(ctx.seed, Stream::row, static_cast<uint64_t>(i));
    const int64_t c = (*ctx.community)[i];
    bool in = false;
    // One candidate per entry first: the draws are independent, so their table reads overlap.
    for (int64_t pos = 0; pos < len; pos++) out[pos] = draw_source(ctx, c, ctx.intra > 0, rng, in);
    // Then duplicates are replaced by fresh draws, in entry order.
    bool intra_on = ctx.intra > 0;
    int64_t intra_hits = 0, intra_dups = 0;
    int64_t cursor = -1;
    for (int64_t pos = 0; pos < len; pos++) {
        if (marks.insert(out[pos])) continue;
        int64_t u = -1;
        for (int attempt = 0; attempt < kMaxAttempts && u < 0; attempt++) {
            const int32_t cand = draw_source(ctx, c, intra_on, rng, in);
            if (marks.insert(cand)) {
                u = cand;
                intra_hits += in;
            } else if (in && ++intra_dups > 16 + 4 * intra_hits) {
                intra_on = false;  // the community is exhausted for this row
            }
        }
        if (u < 0) {
            // Deterministic fallback: the next unused node after a random start, scanning in
            // community order so that both id orders give the same graph.
            if (cursor < 0) cursor = static_cast<int64_t>(rng.below(static_cast<uint64_t>(ctx.nodes)));
            while (marks.contains(relabel[cursor])) cursor = cursor + 1 == ctx.nodes ? 0 : cursor + 1;
            u = relabel[cursor];
            marks.insert(u);
        }
        out[pos] = static_cast<index_t>(u);
    }
    // Sorted output: scanning the bitset is cheaper than sorting for long rows.
    const double sort_cost = 4.0 * static_cast<double>(len) * std::log2(static_cast<double>(len) + 1.0);
    if (sort_cost > static_cast<double>(marks.num_words() + len)) {
        marks.drain(out);
    } else {
        std::sort(out, out + len);
        for (int64_t k = 0; k < len; k++) marks.erase(out[k]);
    }
}

void check_spec(const TwinSpec &spec) {
    const std::string what = "twin '" + spec.name + "': ";
    if (spec.nodes < 1 || spec.nodes > std::numeric_limits<index_t>::max())
        fail<Error>(what, "node count ", spec.nodes, " must be in [1, ", std::numeric_limits<index_t>::max(), "]");
    if (spec.edges < 0 || spec.edges > std::numeric_limits<index_t>::max())
        fail<Error>(what, "edge count ", spec.edges, " must be in [0, ", std::numeric_limits<index_t>::max(), "]");
    if (static_cast<double>(spec.edges) > static_cast<double>(spec.nodes) * static_cast<double>(spec.nodes))
        fail<Error>(what, spec.edges, " edges do not fit ", spec.nodes, " nodes without duplicates");
    if (!std::isfinite(spec.cov) || spec.cov < 0) fail<Error>(what, "COV ", spec.cov, " must be >= 0");
    if (spec.communities < 1) fail<Error>(what, "community count ", spec.communities, " must be >= 1");
    if (!(spec.intra >= 0 && spec.intra <= 1)) fail<Error>(what, "intra ", spec.intra, " must be in [0, 1]");
}

}  // namespace

std::vector<std::string> twin_names() {
    std::vector<std::string> names;
    for (const auto &spec : builtin_specs()) names.push_back(spec.name);
    return names;
}

TwinSpec twin_spec(const std::string &name) {
    for (const auto &spec : builtin_specs())
        if (spec.name == name) return spec;
    fail<Error>("unknown twin '", name, "'; valid names: ", joined_names());
}

NodeOrder parse_node_order(const std::string &text) {
    if (text == "shuffled") return NodeOrder::shuffled;
    if (text == "community") return NodeOrder::community;
    fail<Error>("unknown node order '", text, "'; valid orders: shuffled, community");
}

const char *node_order_name(NodeOrder order) { return order == NodeOrder::community ? "community" : "shuffled"; }

TwinSpec resolve_twin(const TwinSpec &spec, const TwinOptions &options) {
    check_spec(spec);
    if (!(options.scale > 0 && options.scale <= 1))
        fail<Error>("scale ", options.scale, " is out of range: it must be in (0, 1]");
    if (options.intra && !(*options.intra >= 0 && *options.intra <= 1))
        fail<Error>("intra ", *options.intra, " is out of range: it must be in [0, 1]");
    if (options.threads < 0) fail<Error>("thread count ", options.threads, " must be >= 0");
    TwinSpec out = spec;
    out.nodes = std::max<int64_t>(1, std::llround(static_cast<double>(spec.nodes) * options.scale));
    const int64_t max_avg = std::max<int64_t>(1, out.nodes / 4);
    out.edges = std::min<int64_t>(std::llround(static_cast<double>(spec.edges) * options.scale), out.nodes * max_avg);
    out.avg = static_cast<double>(out.edges) / static_cast<double>(out.nodes);
    if (options.communities) {
        if (*options.communities < 1 || *options.communities > out.nodes)
            fail<Error>("community count ", *options.communities, " is out of range: it must be in [1, ", out.nodes,
                        "] (the node count of twin '", spec.name, "' at scale ", options.scale, ")");
        out.communities = *options.communities;
    } else {
        out.communities = std::min(spec.communities, out.nodes);
    }
    if (options.intra) out.intra = *options.intra;
    return out;
}

TwinGraph generate_twin_graph(const TwinSpec &spec, const TwinOptions &options) {
    TwinGraph g;
    g.spec = resolve_twin(spec, options);
    const int64_t n = g.spec.nodes, e = g.spec.edges, k = g.spec.communities;
    const uint64_t seed = options.seed;

    // Communities: contiguous ranges of community-order ids.
    g.community_start = community_starts(n, k, seed);
    std::vector<index_t> community_of(static_cast<size_t>(n));
    for (int64_t c = 0; c < k; c++)
        std::fill(community_of.begin() + g.community_start[c], community_of.begin() + g.community_start[c + 1],
                  static_cast<index_t>(c));

    // Row lengths, dealt to the nodes in random order.
    detail::RowLengthProfile profile = detail::row_length_profile(n, e, g.spec.cov, n);
    g.sigma = profile.sigma;
    std::vector<int64_t> length(static_cast<size_t>(n));
    {
        Rng rng(seed, Stream::row_lengths, 0);
        const std::vector<index_t> deal = detail::random_permutation<index_t>(n, rng);
        for (int64_t i = 0; i < n; i++) length[i] = profile.lengths[deal[i]];
    }
    profile.lengths = {};

    // Output ids.
    if (options.order == NodeOrder::shuffled) {
        Rng rng(seed, Stream::relabel, 0);
        g.relabel = detail::random_permutation<index_t>(n, rng);
    } else {
        g.relabel.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; i++) g.relabel[i] = static_cast<index_t>(i);
    }
    g.community.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) g.community[g.relabel[i]] = community_of[i];

    CSR &csr = g.csr;
    csr.num_rows = csr.num_cols = n;
    csr.row_ptr.assign(static_cast<size_t>(n) + 1, 0);
    for (int64_t i = 0; i < n; i++) csr.row_ptr[g.relabel[i] + 1] = static_cast<index_t>(length[i]);
    for (int64_t v = 0; v < n; v++) csr.row_ptr[v + 1] += csr.row_ptr[v];
    csr.col_idx.resize(static_cast<size_t>(e));

    // Source weights: a node's own row length + 1 (degree-corrected; never zero).
    std::vector<double> weight(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; i++) weight[i] = static_cast<double>(length[i]) + 1.0;
    const std::vector<index_t> no_ids;
    const std::vector<index_t> &ids = options.order == NodeOrder::shuffled ? g.relabel : no_ids;
    const AliasTables global(weight, {0, n}, ids);
    const AliasTables local(weight, g.community_start, ids);
    weight = {};

    RowContext ctx;
    ctx.nodes = n;
    ctx.seed = seed;
    ctx.intra = g.spec.intra;
    ctx.length = &length;
    ctx.community = &community_of;
    ctx.relabel = &g.relabel;
    ctx.row_ptr = &csr.row_ptr;
    ctx.global = &global;
    ctx.local = &local;
    ctx.col_idx = csr.col_idx.data();

    constexpr int64_t kChunk = 256;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
    threads = static_cast<int>(std::clamp<int64_t>(threads, 1, chunks));
    std::atomic<int64_t> next{0};
    std::exception_ptr error;
    std::mutex error_mutex;
    TwinProgress progress{0, n, 0, e};
    std::mutex progress_mutex;
    auto worker = [&]() {
        try {
            IdMarks marks(n);
            for (int64_t ch; (ch = next.fetch_add(1)) < chunks;) {
                const int64_t begin = ch * kChunk, end = std::min(n, begin + kChunk);
                for (int64_t i = begin; i < end; i++) fill_row(ctx, i, marks);
                if (options.progress) {
                    int64_t chunk_edges = 0;
                    for (int64_t i = begin; i < end; i++) chunk_edges += length[i];
                    std::lock_guard<std::mutex> lock(progress_mutex);
                    progress.rows_done += end - begin;
                    progress.edges_done += chunk_edges;
                    options.progress(progress);
                }
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            next.store(chunks);
        }
    };
    if (threads == 1) {
        worker();
    } else {
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++) pool.emplace_back(worker);
        for (auto &t : pool) t.join();
    }
    if (error) std::rethrow_exception(error);
    return g;
}

CSR generate_twin(const TwinSpec &spec, const TwinOptions &options) {
    return std::move(generate_twin_graph(spec, options).csr);
}

}  // namespace gsparse::datasets
