// Plain g-SpMM / g-SDDMM algorithms written as in the paper (no promises), and a small CSR graph,
// for the tests of the extension's passes.
#pragma once

#include <Halide.h>

#include <vector>

#include "halide_ext/sparse_metadata.h"

namespace gsparse::test {

/// acc(f, v) += X(f, col_idx(row_ptr(v) + k)) * Y(f, edge_ids(row_ptr(v) + k)), k < deg(v).
/// With staged = true the ragged accesses go through 2-D Funcs nbr(kv, v) and eid(kv, v), as in
/// gsparse's algorithm.
struct PlainSpmm {
    Halide::ImageParam row_ptr{Halide::Int(32), 1, "row_ptr"};
    Halide::ImageParam col_idx{Halide::Int(32), 1, "col_idx"};
    Halide::ImageParam edge_ids{Halide::Int(32), 1, "edge_ids"};
    Halide::ImageParam X{Halide::Float(32), 2, "X"};
    Halide::ImageParam Y{Halide::Float(32), 2, "Y"};
    Halide::Param<int32_t> max_degree{"max_degree"}, num_edges{"num_edges"}, num_src{"num_src"};
    Halide::Var f{"f"}, v{"v"}, kv{"kv"};
    Halide::RDom k;
    Halide::Func nbr{"nbr"}, eid{"eid"}, acc{"acc"}, out{"out"};

    explicit PlainSpmm(bool staged = false) {
        using namespace Halide;
        Expr start = row_ptr(v);
        Expr degree = row_ptr(v + 1) - start;
        k = RDom(0, max_degree, "k");
        k.where(k < degree);
        Expr u, e;
        if (staged) {
            nbr(kv, v) = col_idx(row_ptr(v) + kv);
            eid(kv, v) = edge_ids(row_ptr(v) + kv);
            u = nbr(k, v);
            e = eid(k, v);
        } else {
            u = col_idx(start + k);
            e = edge_ids(start + k);
        }
        acc(f, v) = 0.0f;
        acc(f, v) += X(f, u) * Y(f, e);
        out(f, v) = acc(f, v);
    }

    ext::SparseLayout layout() const {
        ext::SparseLayout l;
        l.csr(row_ptr, num_edges).nnz_index_array(col_idx, num_src).nnz_index_array(edge_ids, num_edges);
        return l;
    }
};

/// out(f, e) = L(f, src_idx(e)) + R(f, dst_idx(e)); with dot, dot(e) = sum_r L(r, src) * R(r, dst).
struct PlainSddmm {
    Halide::ImageParam src_idx{Halide::Int(32), 1, "src_idx"};
    Halide::ImageParam dst_idx{Halide::Int(32), 1, "dst_idx"};
    Halide::ImageParam L{Halide::Float(32), 2, "L"};
    Halide::ImageParam R{Halide::Float(32), 2, "R"};
    Halide::Param<int32_t> num_edges{"num_edges"}, num_src{"num_src"}, num_dst{"num_dst"};
    Halide::Var f{"f"}, e{"e"};
    Halide::RDom r;
    Halide::Func out{"sddmm_out"};

    explicit PlainSddmm(bool dot = false, int feat = 4) {
        using namespace Halide;
        if (dot) {
            r = RDom(0, feat, "r");
            out(e) = 0.0f;
            out(e) += L(r, src_idx(e)) * R(r, dst_idx(e));
        } else {
            out(f, e) = L(f, src_idx(e)) + R(f, dst_idx(e));
        }
    }

    ext::SparseLayout layout() const {
        ext::SparseLayout l;
        l.coo_index_array(src_idx, num_edges, num_src).coo_index_array(dst_idx, num_edges, num_dst);
        return l;
    }
};

/// A 5-node directed graph in CSR by destination (row v lists its in-neighbours u): row 2 is empty,
/// row 4 is the longest, with a duplicate edge and a self-loop. Edge ids are not the positions.
struct SmallCsr {
    int num_nodes = 5;
    std::vector<int32_t> row_ptr = {0, 2, 3, 3, 4, 8};
    std::vector<int32_t> col_idx = {1, 3, 0, 2, 0, 4, 4, 2};
    std::vector<int32_t> edge_ids = {7, 2, 5, 0, 1, 6, 3, 4};
    int nnz() const { return static_cast<int>(col_idx.size()); }
    int max_degree() const {
        int m = 0;
        for (int v = 0; v < num_nodes; v++) m = std::max(m, row_ptr[v + 1] - row_ptr[v]);
        return m;
    }
};

}  // namespace gsparse::test
