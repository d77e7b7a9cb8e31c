// gsparse._C.GraphView and the kernel calls on it: graphs whose index arrays live in tensors the
// Python package built (on the GPU for CUDA graphs), passed by address. Nothing is copied; the
// Python Graph keeps the tensors alive while the view exists.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "api/gsparse.h"
#include "bindings.h"
#include "core/error.h"
#include "graph/graph_view.h"
#include "tensor_args.h"

namespace py = pybind11;

namespace gsparse::python {

namespace {

const index_t *as_index_ptr(uintptr_t p) { return reinterpret_cast<const index_t *>(p); }

/// A view of no arrays yet: its device and sizes.
GraphView view_of_sizes(const std::string &device, int64_t num_src, int64_t num_dst, int64_t num_edges) {
    GraphView g;
    if (device == "cuda") g.device = Device::CUDA;
    else if (device != "cpu") fail<GraphError>("graph view: unknown device kind '", device, "'");
    g.num_src = num_src;
    g.num_dst = num_dst;
    g.num_edges = num_edges;
    return g;
}

GraphView make_view(const std::string &device, int64_t num_src, int64_t num_dst, int64_t num_edges, uintptr_t row_ptr,
                    int64_t row_ptr_len, uintptr_t col_idx, uintptr_t edge_ids, int64_t max_degree) {
    GraphView g = view_of_sizes(device, num_src, num_dst, num_edges);
    g.row_ptr = as_index_ptr(row_ptr);
    g.row_ptr_len = row_ptr_len;
    g.col_idx = as_index_ptr(col_idx);
    g.edge_ids = edge_ids ? as_index_ptr(edge_ids) : nullptr;
    g.max_degree = max_degree;
    g.check();
    return g;
}

/// A view of a COO alone (no CSR): the operators that read the COO run on it, g-SpMM sum by
/// nonzeros and g-SDDMM; the others refuse it.
GraphView make_coo_view(const std::string &device, int64_t num_src, int64_t num_dst, int64_t num_edges, uintptr_t src,
                        uintptr_t dst, int64_t len) {
    GraphView g = view_of_sizes(device, num_src, num_dst, num_edges);
    g.coo_src = as_index_ptr(src);
    g.coo_dst = as_index_ptr(dst);
    g.coo_len = len;
    g.check_counts();
    g.check_coo();
    return g;
}

void gspmm_view(const GraphView &g, const std::string &op, const std::string &reduce,
                const std::optional<TensorArg> &lhs, const std::optional<TensorArg> &rhs, const TensorArg &out,
                const std::optional<TensorArg> &arg_u, const std::optional<TensorArg> &arg_e,
                const std::optional<LaunchArg> &launch, const std::optional<std::string> &schedule) {
    SpmmSpec spec{parse_binary_op(op), parse_reduce_op(reduce)};
    Tensor l = view_tensor(lhs, "lhs"), r = view_tensor(rhs, "rhs"), o = view_tensor(out, "out");
    Tensor au = view_tensor(arg_u, "arg_u"), ae = view_tensor(arg_e, "arg_e");
    OpOptions options;
    options.cuda = cuda_launch(launch);
    if (schedule) options.schedule = ScheduleParams::parse(*schedule);
    gspmm_into(g, spec, l, r, o, arg_u ? &au : nullptr, arg_e ? &ae : nullptr, options);
}

void gsddmm_view(const GraphView &g, const std::string &op, const std::string &lhs_target,
                 const std::string &rhs_target, const std::optional<TensorArg> &lhs,
                 const std::optional<TensorArg> &rhs, const TensorArg &out, const std::optional<LaunchArg> &launch,
                 const std::optional<std::string> &schedule) {
    SddmmSpec spec{parse_binary_op(op), parse_target(lhs_target), parse_target(rhs_target)};
    Tensor l = view_tensor(lhs, "lhs"), r = view_tensor(rhs, "rhs"), o = view_tensor(out, "out");
    OpOptions options;
    options.cuda = cuda_launch(launch);
    if (schedule) options.schedule = ScheduleParams::parse(*schedule);
    gsddmm_into(g, spec, l, r, o, options);
}

void gspmm_transposed_view(const GraphView &g, const std::string &op, const std::string &reduce,
                           const std::optional<TensorArg> &lhs, const std::optional<TensorArg> &rhs,
                           const TensorArg &out, const std::optional<LaunchArg> &launch) {
    SpmmSpec spec{parse_binary_op(op), parse_reduce_op(reduce)};
    Tensor l = view_tensor(lhs, "lhs"), r = view_tensor(rhs, "rhs"), o = view_tensor(out, "out");
    OpOptions options;
    options.cuda = cuda_launch(launch);
    gspmm_transposed_into(g, spec, l, r, o, options);
}

}  // namespace

void bind_views(py::module_ &m) {
    py::class_<GraphView>(m, "GraphView", "A graph over int32 index arrays in caller memory (graph/graph_view.h).")
        .def(py::init(&make_view), py::arg("device"), py::arg("num_src"), py::arg("num_dst"), py::arg("num_edges"),
             py::arg("row_ptr"), py::arg("row_ptr_len"), py::arg("col_idx"), py::arg("edge_ids"),
             py::arg("max_degree"))
        .def_static("coo", &make_coo_view, py::arg("device"), py::arg("num_src"), py::arg("num_dst"),
                    py::arg("num_edges"), py::arg("src"), py::arg("dst"), py::arg("len"),
                    "A view of a COO without a CSR (g-SpMM sum by nonzeros and g-SDDMM run on it).")
        .def("set_coo",
             [](GraphView &g, uintptr_t src, uintptr_t dst, int64_t len) {
                 g.coo_src = as_index_ptr(src);
                 g.coo_dst = as_index_ptr(dst);
                 g.coo_len = len;
                 g.check_coo();
             },
             py::arg("src"), py::arg("dst"), py::arg("len"))
        .def("set_row_order", [](GraphView &g, uintptr_t order) { g.row_order = as_index_ptr(order); },
             py::arg("order"),
             "The rows by in-degree, longest first (num_dst int32 entries), for user programs whose "
             "schedule orders rows.")
        .def_readonly("num_src", &GraphView::num_src)
        .def_readonly("num_dst", &GraphView::num_dst)
        .def_readonly("num_edges", &GraphView::num_edges);
    m.def("gspmm_view", &gspmm_view, py::arg("graph"), py::arg("op"), py::arg("reduce"), py::arg("lhs"),
          py::arg("rhs"), py::arg("out"), py::arg("arg_u"), py::arg("arg_e"), py::arg("launch"),
          py::arg("schedule") = py::none(), py::call_guard<py::gil_scoped_release>(),
          "g-SpMM into out on a graph view (the graph-blind default schedule unless one is given).");
    m.def("gspmm_transposed_view", &gspmm_transposed_view, py::arg("graph"), py::arg("op"), py::arg("reduce"),
          py::arg("lhs"), py::arg("rhs"), py::arg("out"), py::arg("launch"), py::call_guard<py::gil_scoped_release>(),
          "The transposed g-SpMM into out [num_src, ...] on a graph view: out[u] = sum over edges (u -> v) of "
          "lhs[v] op rhs[e] (lhs divided by the in-degree of v for mean), without a reverse graph.");
    m.def("gsddmm_view", &gsddmm_view, py::arg("graph"), py::arg("op"), py::arg("lhs_target"),
          py::arg("rhs_target"), py::arg("lhs"), py::arg("rhs"), py::arg("out"), py::arg("launch"),
          py::arg("schedule") = py::none(), py::call_guard<py::gil_scoped_release>(),
          "g-SDDMM into out on a graph view's COO (edge-id order).");
}

}  // namespace gsparse::python
