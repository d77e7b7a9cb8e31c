// gsparse._C.Graph: a gsparse::Graph built from int32 arrays in caller memory (copied and validated)
// or loaded from a file, with its sizes, its reverse and copies of its index arrays.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "bindings.h"
#include "core/error.h"
#include "graph/graph.h"

namespace py = pybind11;

namespace gsparse::python {

namespace {

const index_t *as_index_ptr(uintptr_t p) { return reinterpret_cast<const index_t *>(p); }

Graph from_coo(int64_t num_src, int64_t num_dst, uintptr_t src, uintptr_t dst, int64_t num_edges) {
    if (num_edges < 0) fail<GraphError>("num_edges = ", num_edges, " is negative");
    if (num_edges > 0 && (!src || !dst)) fail<GraphError>("null source or destination array for ", num_edges, " edges");
    COO coo;
    coo.num_rows = num_dst;
    coo.num_cols = num_src;
    if (num_edges > 0) {
        coo.row.assign(as_index_ptr(dst), as_index_ptr(dst) + num_edges);
        coo.col.assign(as_index_ptr(src), as_index_ptr(src) + num_edges);
    }
    return Graph::from_coo(coo);
}

/// Size of a named array of g (see copy_array).
int64_t array_size(const Graph &g, const std::string &name) {
    if (name == "csr.row_ptr") return g.num_dst() + 1;
    if (name == "csr.col_idx" || name == "csr.edge_ids" || name == "coo.src" || name == "coo.dst") return g.num_edges();
    if (name == "values") return static_cast<int64_t>(g.values().size());
    fail<ShapeError>("unknown graph array '", name,
                     "' (expected csr.row_ptr, csr.col_idx, csr.edge_ids, coo.src, coo.dst or values)");
}

/// Copies a named array into count elements at ptr (int32; float32 for "values").
void copy_array(const Graph &g, const std::string &name, uintptr_t ptr, int64_t count) {
    const int64_t n = array_size(g, name);
    if (count != n) fail<ShapeError>("graph array ", name, " has ", n, " elements, the destination ", count);
    if (n == 0) return;
    if (!ptr) fail<ShapeError>("null destination for graph array ", name);
    auto *out = reinterpret_cast<index_t *>(ptr);
    const size_t bytes = static_cast<size_t>(n) * sizeof(index_t);
    if (name == "csr.row_ptr") std::memcpy(out, g.csr().row_ptr.data(), bytes);
    else if (name == "csr.col_idx") std::memcpy(out, g.csr().col_idx.data(), bytes);
    else if (name == "csr.edge_ids") {
        if (g.csr().identity_edge_ids()) std::iota(out, out + n, 0);
        else std::memcpy(out, g.csr().edge_ids.data(), bytes);
    } else if (name == "values") std::memcpy(reinterpret_cast<float *>(ptr), g.values().data(), n * sizeof(float));
    else {
        // COO position i holds edge id i.
        const COO &coo = g.coo();
        std::memcpy(out, (name == "coo.src" ? coo.col : coo.row).data(), bytes);
    }
}

}  // namespace

void bind_graph(py::module_ &m) {
    py::class_<Graph>(m, "Graph", "A validated graph: CSR by destination, with derived layouts cached.")
        .def(py::init<>())
        .def_static("from_coo", &from_coo, py::arg("num_src"), py::arg("num_dst"), py::arg("src"), py::arg("dst"),
                    py::arg("num_edges"), py::call_guard<py::gil_scoped_release>(),
                    "Edges src[i] -> dst[i] with edge id i (int32 arrays at the given addresses).")
        .def_static(
            "from_csr",
            [](int64_t num_rows, int64_t num_cols, uintptr_t row_ptr, uintptr_t col_idx, uintptr_t edge_ids,
               int64_t nnz) {
                return Graph::from_csr_arrays(num_rows, num_cols, as_index_ptr(row_ptr), as_index_ptr(col_idx),
                                              edge_ids ? as_index_ptr(edge_ids) : nullptr, nnz);
            },
            py::arg("num_rows"), py::arg("num_cols"), py::arg("row_ptr"), py::arg("col_idx"), py::arg("edge_ids"),
            py::arg("nnz"), py::call_guard<py::gil_scoped_release>(),
            "CSR by destination (int32 arrays at the given addresses; edge_ids 0 for the identity).")
        .def_static("load", &Graph::load, py::arg("path"), py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("num_src", &Graph::num_src)
        .def_property_readonly("num_dst", &Graph::num_dst)
        .def_property_readonly("num_edges", &Graph::num_edges)
        .def_property_readonly("max_row_length", &Graph::max_row_length)
        .def_property_readonly("identity_edge_ids", [](const Graph &g) { return g.csr().identity_edge_ids(); })
        .def_property_readonly("fingerprint", &Graph::fingerprint)
        .def("reverse", [](const Graph &g) { return g.reverse(); }, py::call_guard<py::gil_scoped_release>())
        .def("array_size", &array_size, py::arg("name"))
        .def("copy_array", &copy_array, py::arg("name"), py::arg("ptr"), py::arg("count"),
             py::call_guard<py::gil_scoped_release>());
}

}  // namespace gsparse::python
