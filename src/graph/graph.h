// Graph: the object applications build once and pass to every operator. It owns the validated CSR
// by destination and derives the other layouts on first use (CSC / transpose for backward passes,
// COO in edge-id order for g-SDDMM, balancedIdx and the locality order for row balancing, statistics
// for the tuner).
// Derived layouts are computed once, thread-safely, and cached.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "graph/formats.h"
#include "graph/segments.h"

namespace gsparse {

class Graph {
public:
    /// The empty graph (0 nodes, 0 edges).
    Graph();

    /// Validates csr (throws GraphError) and takes it. values, when given, holds one weight per edge id.
    static Graph from_csr(CSR csr, std::vector<float> values = {});
    static Graph from_coo(const COO &coo, std::vector<float> values = {});
    /// Edges src[i] -> dst[i] with edge id i; num_nodes source and destination nodes.
    static Graph from_edges(int64_t num_nodes, const std::vector<index_t> &src, const std::vector<index_t> &dst,
                            std::vector<float> values = {});
    /// Raw CSR arrays (row_ptr of num_rows+1, col_idx of nnz, edge_ids of nnz or null for identity);
    /// copied and validated.
    static Graph from_csr_arrays(int64_t num_rows, int64_t num_cols, const index_t *row_ptr, const index_t *col_idx,
                                 const index_t *edge_ids, int64_t nnz);
    /// Loads any supported file (see graph/io.h).
    static Graph load(const std::string &path);

    int64_t num_dst() const { return s_->csr.num_rows; }
    int64_t num_src() const { return s_->csr.num_cols; }
    int64_t num_edges() const { return s_->csr.nnz(); }
    bool has_values() const { return !s_->values.empty(); }
    /// Per-edge weights indexed by edge id (empty when the graph has none).
    const std::vector<float> &values() const { return s_->values; }

    const CSR &csr() const { return s_->csr; }
    const CSC &csc() const;
    /// The reversed graph (for backward passes), same edge ids.
    const Graph &reverse() const;
    /// COO with position i holding edge id i.
    const COO &coo() const;
    /// COO in destination order (the CSR order), with the edge id of every position (edge_ids is
    /// filled in even when the ids are the identity).
    const COO &coo_by_dst() const;
    /// With src_tile > 0: the edges of coo_by_dst() grouped by tiles of src_tile consecutive source
    /// ids (group_by_source_tiles), computed once per tile size.
    const COO &coo_by_dst(int64_t src_tile) const;
    /// The segments of coo_by_dst(src_tile) (source_tile_segments): runs of one destination within
    /// one source tile, cut after segment_len nonzeros when segment_len > 0; computed once per
    /// (src_tile, segment_len).
    const RowSegments &source_tile_segments(int64_t src_tile, int64_t segment_len) const;
    const std::vector<index_t> &balanced_idx() const;
    /// The locality order of the rows (graph/locality_order.h): rows grouped by label-propagation
    /// clusters of their columns, longest first within a group, empty rows last; computed once.
    const std::vector<index_t> &locality_idx() const;
    /// This graph renumbered in its locality order (relabel_csr with locality_idx(): node
    /// locality_idx()[i] becomes node i; edge ids name this graph's edges, values are shared); square
    /// graphs only (GraphError otherwise); computed once.
    const Graph &relabeled() const;
    const GraphStats &stats() const;
    /// Maximum row length (in-degree).
    int64_t max_row_length() const { return stats().max_row_length; }

    /// A stable 64-bit fingerprint of the structure (sizes, row_ptr, col_idx), for caches.
    uint64_t fingerprint() const;

    /// Per-graph state of other components (for example device copies of the index arrays), created
    /// by make() on first request for key and kept as long as the graph (and its copies) live. make()
    /// may itself ask for other attachments (and for the graph's cached formats).
    std::shared_ptr<void> attachment(const std::string &key, const std::function<std::shared_ptr<void>()> &make) const;
    /// The keys of the attachments requested so far, sorted (for diagnostics and tests).
    std::vector<std::string> attachment_keys() const;

private:
    struct State {
        CSR csr;
        std::vector<float> values;
        std::once_flag csc_once, rev_once, coo_once, coo_dst_once, bal_once, stats_once, fp_once;
        std::optional<CSC> csc;
        std::unique_ptr<Graph> rev;
        std::optional<COO> coo, coo_dst;
        std::optional<std::vector<index_t>> balanced;
        std::optional<GraphStats> stats;
        uint64_t fp = 0;
        /// One attachment: made once, outside the map's lock, so that making one may ask for others.
        /// A mutex and a flag rather than std::call_once: a make() that throws must leave the slot
        /// to the next request, which call_once does not guarantee everywhere (under
        /// ThreadSanitizer, the waiting threads hang).
        struct Attachment {
            std::mutex mu;
            bool made = false;
            std::shared_ptr<void> value;
        };
        std::mutex attach_mu;
        std::map<std::string, std::shared_ptr<Attachment>> attachments;
    };
    std::shared_ptr<State> s_;
};

}  // namespace gsparse
