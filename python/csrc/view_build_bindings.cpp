// gsparse._C.build_sorted_csr / build_coo / append_self_loops: the arrays of a dynamic graph built by
// gsparse's graph-build kernels where the edges are (api/view_build.h), into tensors the package
// allocated, with the validation's statistics read back once.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <tuple>

#include "api/view_build.h"
#include "bindings.h"
#include "tensor_args.h"

namespace py = pybind11;

namespace gsparse::python {

namespace {

using Stats = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

Stats as_tuple(const CooStats &s) { return {s.min_src, s.max_src, s.min_dst, s.max_dst, s.descents}; }

index_t *as_index_ptr(uintptr_t p) { return reinterpret_cast<index_t *>(p); }

ViewBuildOptions options_of(bool validate, const std::optional<LaunchArg> &launch) {
    ViewBuildOptions o;
    o.validate = validate;
    o.cuda = cuda_launch(launch);
    return o;
}

Stats build_sorted_csr_arrays(const TensorArg &src, const TensorArg &dst, int64_t num_src, int64_t num_dst,
                              uintptr_t row_ptr, uintptr_t col_idx, uintptr_t workspace, bool validate,
                              const std::optional<LaunchArg> &launch) {
    return as_tuple(build_sorted_csr(view_tensor(src, "src"), view_tensor(dst, "dst"), num_src, num_dst,
                                     as_index_ptr(row_ptr), as_index_ptr(col_idx), reinterpret_cast<void *>(workspace),
                                     options_of(validate, launch)));
}

Stats build_coo_arrays(const TensorArg &src, const TensorArg &dst, int64_t num_src, int64_t num_dst, uintptr_t coo_src,
                       uintptr_t coo_dst, int64_t coo_len, uintptr_t workspace, bool validate,
                       const std::optional<LaunchArg> &launch) {
    CooStats s;
    coo_view_from_edges(view_tensor(src, "src"), view_tensor(dst, "dst"), num_src, num_dst, as_index_ptr(coo_src),
                        as_index_ptr(coo_dst), coo_len, reinterpret_cast<void *>(workspace),
                        options_of(validate, launch), &s);
    return as_tuple(s);
}

void append_self_loops(const GraphView &g, uintptr_t row_ptr, uintptr_t coo_src, uintptr_t coo_dst, uintptr_t own_loops,
                       int64_t coo_len, const std::optional<LaunchArg> &launch) {
    view_with_self_loops(g, as_index_ptr(row_ptr), as_index_ptr(coo_src), as_index_ptr(coo_dst),
                         reinterpret_cast<uint8_t *>(own_loops), coo_len, cuda_launch(launch));
}

void check_csr_arrays(const TensorArg &row_ptr, const TensorArg &col_idx, int64_t num_src, uintptr_t workspace,
                      const std::optional<LaunchArg> &launch) {
    check_csr(view_tensor(row_ptr, "row_ptr"), view_tensor(col_idx, "col_idx"), num_src,
              reinterpret_cast<void *>(workspace), cuda_launch(launch));
}

void gcn_loop_weights(const GraphView &loops, uintptr_t own_loops, float fill, bool normalize, uintptr_t degrees,
                      uintptr_t weights, const std::optional<LaunchArg> &launch) {
    gcn_self_loop_weights(loops, reinterpret_cast<const uint8_t *>(own_loops), fill, normalize,
                          reinterpret_cast<int32_t *>(degrees), reinterpret_cast<float *>(weights), cuda_launch(launch));
}

}  // namespace

void bind_view_build(py::module_ &m) {
    m.def("view_build_workspace_bytes", &view_build_workspace_bytes, py::arg("num_edges"));
    m.def("build_sorted_csr", &build_sorted_csr_arrays, py::arg("src"), py::arg("dst"), py::arg("num_src"),
          py::arg("num_dst"), py::arg("row_ptr"), py::arg("col_idx"), py::arg("workspace"), py::arg("validate"),
          py::arg("launch"), py::call_guard<py::gil_scoped_release>(),
          "Row offsets (round_up(num_dst, 32) + 2 int32) and, for int64 src, col_idx (int32) of edges sorted by "
          "destination; returns (min_src, max_src, min_dst, max_dst, descents) when validating (GraphError for "
          "ids out of range; descents > 0: not sorted, the arrays are then meaningless).");
    m.def("build_coo", &build_coo_arrays, py::arg("src"), py::arg("dst"), py::arg("num_src"), py::arg("num_dst"),
          py::arg("coo_src"), py::arg("coo_dst"), py::arg("coo_len"), py::arg("workspace"), py::arg("validate"),
          py::arg("launch"), py::call_guard<py::gil_scoped_release>(),
          "src and dst narrowed to int32 and padded with 0 to coo_len; the statistics as build_sorted_csr.");
    m.def("check_csr", &check_csr_arrays, py::arg("row_ptr"), py::arg("col_idx"), py::arg("num_src"),
          py::arg("workspace"), py::arg("launch"), py::call_guard<py::gil_scoped_release>(),
          "Validates a CSR by destination where it is (api/view_build.h): GraphError naming the first problem.");
    m.def("append_self_loops", &append_self_loops, py::arg("graph"), py::arg("row_ptr"), py::arg("coo_src"),
          py::arg("coo_dst"), py::arg("own_loops"), py::arg("coo_len"), py::arg("launch"),
          py::call_guard<py::gil_scoped_release>(),
          "The graph view with a self-loop for every u < min(num_src, num_dst): from a CSR view, the row offsets "
          "(round_up(num_dst, 32) + 2 int32) with the loop at the end of its row and the COO in position order; "
          "from a COO view (row_ptr unused), its edges then the loops; the flags (bool) of the graph's own "
          "self-loops. coo_len entries each, padded with 0.");
    m.def("gcn_loop_weights", &gcn_loop_weights, py::arg("graph"), py::arg("own_loops"), py::arg("fill"),
          py::arg("normalize"), py::arg("degrees"), py::arg("weights"), py::arg("launch"),
          py::call_guard<py::gil_scoped_release>(),
          "GCN's float32 edge weights (num_edges) of a self-loop graph's COO view and own-loop flags; degrees: "
          "a workspace of 2 num_dst int32 (api/view_build.h, gcn_self_loop_weights).");
}

}  // namespace gsparse::python
