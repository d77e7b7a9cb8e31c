// Relabeling a graph: renumbering its nodes so that node order[i] becomes node i.
//
// g-SpMM gathers a source row for every nonzero. Below a sector's worth of features (F < 8 floats)
// a gathered row is a fraction of the 32-byte sector the cache moves, and with ids in random order
// the sources one cluster of rows reads are spread over the whole feature matrix: the sectors the
// running rows touch at once do not fit an SM's L1. Renumbered in the locality order
// (graph/locality_order.h), a cluster's sources are consecutive ids, so its rows' gathers share
// sectors and the cluster's slice of the feature matrix fits in L1; the relabeled CSR is also read
// as one stream, where rows taken in the locality order through an index are scattered reads.
#pragma once

#include <vector>

#include "graph/formats.h"

namespace gsparse {

/// The CSR of a square graph renumbered by `order` (a permutation of its nodes: order[i] is the old
/// id of new node i). Row i of the result is row order[i], its sources renamed to their new ids and
/// sorted (ties keep their order); edge ids name the original edges (the old edge id of every
/// position, so an identity CSR gets an explicit list). Throws GraphError when the graph is not
/// square or `order` is not a permutation of its nodes.
CSR relabel_csr(const CSR &csr, const std::vector<index_t> &order);

}  // namespace gsparse
