// Graph: validated CSR plus lazily derived, cached layouts.
#include "graph/graph.h"

#include <cstring>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "core/parallel.h"
#include "graph/convert.h"
#include "graph/io.h"
#include "graph/locality_order.h"
#include "graph/relabel.h"
#include "graph/validate.h"

namespace gsparse {
namespace {

constexpr int64_t kIndexMax = std::numeric_limits<index_t>::max();

void check_values(const CSR &csr, const std::vector<float> &values, const char *what) {
    if (!values.empty() && static_cast<int64_t>(values.size()) != csr.nnz())
        fail<GraphError>(what, ": values has ", values.size(), " entries, expected one per edge (nnz = ", csr.nnz(),
                         ")");
}

uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/// Order-dependent hash of an int32 array, consuming two entries per step.
uint64_t hash_array(uint64_t h, const std::vector<index_t> &a) {
    const size_t n = a.size();
    h = mix64(h ^ (0x9e3779b97f4a7c15ULL + n));
    size_t i = 0;
    for (; i + 2 <= n; i += 2) {
        const uint64_t w = static_cast<uint64_t>(static_cast<uint32_t>(a[i])) |
                           (static_cast<uint64_t>(static_cast<uint32_t>(a[i + 1])) << 32);
        h = (h ^ mix64(w + i)) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    if (i < n) h = (h ^ mix64(static_cast<uint32_t>(a[i]) + i)) * 0x100000001b3ULL;
    return mix64(h);
}

}  // namespace

Graph::Graph() : s_(std::make_shared<State>()) { s_->csr.row_ptr = {0}; }

Graph Graph::from_csr(CSR csr, std::vector<float> values) {
    validate(csr, "CSR");
    check_values(csr, values, "Graph::from_csr");
    Graph g;
    g.s_->csr = std::move(csr);
    g.s_->values = std::move(values);
    return g;
}

Graph Graph::from_coo(const COO &coo, std::vector<float> values) {
    validate(coo, "COO");
    CSR csr = coo_to_csr(coo);
    check_values(csr, values, "Graph::from_coo");
    Graph g;
    g.s_->csr = std::move(csr);
    g.s_->values = std::move(values);
    return g;
}

Graph Graph::from_edges(int64_t num_nodes, const std::vector<index_t> &src, const std::vector<index_t> &dst,
                        std::vector<float> values) {
    if (num_nodes < 0 || num_nodes > kIndexMax)
        fail<GraphError>("Graph::from_edges: num_nodes = ", num_nodes, " is out of range [0, INT32_MAX]");
    if (src.size() != dst.size())
        fail<GraphError>("Graph::from_edges: src has ", src.size(), " entries but dst has ", dst.size());
    for (size_t i = 0; i < src.size(); i++) {
        if (src[i] < 0 || src[i] >= num_nodes)
            fail<GraphError>("Graph::from_edges: src[", i, "] = ", src[i], " is out of range [0, num_nodes = ",
                             num_nodes, ")");
        if (dst[i] < 0 || dst[i] >= num_nodes)
            fail<GraphError>("Graph::from_edges: dst[", i, "] = ", dst[i], " is out of range [0, num_nodes = ",
                             num_nodes, ")");
    }
    COO coo;
    coo.num_rows = num_nodes;
    coo.num_cols = num_nodes;
    coo.row = dst;
    coo.col = src;
    return from_coo(coo, std::move(values));
}

Graph Graph::from_csr_arrays(int64_t num_rows, int64_t num_cols, const index_t *row_ptr, const index_t *col_idx,
                             const index_t *edge_ids, int64_t nnz) {
    if (num_rows < 0 || num_rows > kIndexMax)
        fail<GraphError>("Graph::from_csr_arrays: num_rows = ", num_rows, " is out of range [0, INT32_MAX]");
    if (num_cols < 0 || num_cols > kIndexMax)
        fail<GraphError>("Graph::from_csr_arrays: num_cols = ", num_cols, " is out of range [0, INT32_MAX]");
    if (nnz < 0 || nnz > kIndexMax)
        fail<GraphError>("Graph::from_csr_arrays: nnz = ", nnz, " is out of range [0, INT32_MAX]");
    if (!row_ptr) fail<GraphError>("Graph::from_csr_arrays: row_ptr is null");
    if (!col_idx && nnz > 0) fail<GraphError>("Graph::from_csr_arrays: col_idx is null but nnz = ", nnz);
    // Check the end of row_ptr before copying nnz entries, so that a wrong nnz is reported as such.
    if (row_ptr[num_rows] != nnz)
        fail<GraphError>("Graph::from_csr_arrays: row_ptr[", num_rows, "] = ", row_ptr[num_rows],
                         " does not equal nnz = ", nnz);
    CSR csr;
    csr.num_rows = num_rows;
    csr.num_cols = num_cols;
    csr.row_ptr.assign(row_ptr, row_ptr + num_rows + 1);
    if (nnz > 0) csr.col_idx.assign(col_idx, col_idx + nnz);
    if (edge_ids && nnz > 0) csr.edge_ids.assign(edge_ids, edge_ids + nnz);
    return from_csr(std::move(csr));
}

Graph Graph::load(const std::string &path) {
    LoadedGraph lg = load_graph(path);
    return from_csr(std::move(lg.csr), std::move(lg.values));
}

const CSC &Graph::csc() const {
    std::call_once(s_->csc_once, [this] { s_->csc = csr_to_csc(s_->csr); });
    return *s_->csc;
}

const Graph &Graph::reverse() const {
    std::call_once(s_->rev_once, [this] {
        auto rev = std::make_unique<Graph>();
        rev->s_->csr = transpose(s_->csr);
        rev->s_->values = s_->values;
        s_->rev = std::move(rev);
    });
    return *s_->rev;
}

const COO &Graph::coo() const {
    std::call_once(s_->coo_once, [this] { s_->coo = coo_in_edge_order(s_->csr); });
    return *s_->coo;
}

const COO &Graph::coo_by_dst() const {
    std::call_once(s_->coo_dst_once, [this] {
        COO coo = csr_to_coo(s_->csr);
        if (coo.edge_ids.empty()) {
            coo.edge_ids.resize(coo.row.size());
            parallel_chunks(coo.row.size(), host_threads(coo.row.size()), [&](size_t, size_t begin, size_t end) {
                std::iota(coo.edge_ids.begin() + std::ptrdiff_t(begin), coo.edge_ids.begin() + std::ptrdiff_t(end),
                          static_cast<index_t>(begin));
            });
        }
        s_->coo_dst = std::move(coo);
    });
    return *s_->coo_dst;
}

const COO &Graph::coo_by_dst(int64_t src_tile) const {
    if (src_tile <= 0) return coo_by_dst();
    auto tiled = attachment("coo_by_dst/src_tile/" + std::to_string(src_tile), [&] {
        return std::static_pointer_cast<void>(std::make_shared<COO>(group_by_source_tiles(coo_by_dst(), src_tile)));
    });
    return *std::static_pointer_cast<COO>(tiled);
}

const RowSegments &Graph::source_tile_segments(int64_t src_tile, int64_t segment_len) const {
    if (src_tile < 1) fail<GraphError>("source tile ", src_tile, " must be >= 1");
    auto segs = attachment("segments/src_tile/" + std::to_string(src_tile) + "/" + std::to_string(segment_len), [&] {
        return std::static_pointer_cast<void>(
            std::make_shared<RowSegments>(gsparse::source_tile_segments(coo_by_dst(src_tile), src_tile, segment_len)));
    });
    return *std::static_pointer_cast<RowSegments>(segs);
}

const std::vector<index_t> &Graph::balanced_idx() const {
    std::call_once(s_->bal_once, [this] { s_->balanced = balanced_index(s_->csr); });
    return *s_->balanced;
}

const std::vector<index_t> &Graph::locality_idx() const {
    auto order = attachment("row_order/locality", [this] {
        const CSR &c = s_->csr;
        return std::static_pointer_cast<void>(std::make_shared<std::vector<index_t>>(
            gsparse_locality::locality_order<index_t>(c.num_rows, c.num_cols, c.row_ptr.data(), c.col_idx.data())));
    });
    return *std::static_pointer_cast<std::vector<index_t>>(order);
}

const Graph &Graph::relabeled() const {
    auto relabeled = attachment("relabeled/locality", [this] {
        auto g = std::make_shared<Graph>();
        g->s_->csr = relabel_csr(s_->csr, locality_idx());
        g->s_->values = s_->values;
        return std::static_pointer_cast<void>(g);
    });
    return *std::static_pointer_cast<Graph>(relabeled);
}

const GraphStats &Graph::stats() const {
    std::call_once(s_->stats_once, [this] { s_->stats = compute_stats(s_->csr); });
    return *s_->stats;
}

uint64_t Graph::fingerprint() const {
    std::call_once(s_->fp_once, [this] {
        const CSR &c = s_->csr;
        uint64_t h = 0x6773706172736531ULL;
        h = mix64(h ^ static_cast<uint64_t>(c.num_rows));
        h = mix64(h ^ (static_cast<uint64_t>(c.num_cols) * 0x9e3779b97f4a7c15ULL));
        h = hash_array(h, c.row_ptr);
        h = hash_array(h, c.col_idx);
        s_->fp = h;
    });
    return s_->fp;
}

std::shared_ptr<void> Graph::attachment(const std::string &key, const std::function<std::shared_ptr<void>()> &make) const {
    std::shared_ptr<State::Attachment> slot;
    {
        std::lock_guard<std::mutex> lock(s_->attach_mu);
        auto &entry = s_->attachments[key];
        if (!entry) entry = std::make_shared<State::Attachment>();
        slot = entry;
    }
    // Concurrent requests for one key wait here for the first; a make() that throws leaves the
    // attachment to the next request.
    std::lock_guard<std::mutex> lock(slot->mu);
    if (!slot->made) {
        slot->value = make();
        slot->made = true;
    }
    return slot->value;
}

std::vector<std::string> Graph::attachment_keys() const {
    std::lock_guard<std::mutex> lock(s_->attach_mu);
    std::vector<std::string> keys;
    for (const auto &entry : s_->attachments) keys.push_back(entry.first);
    return keys;
}

}  // namespace gsparse
