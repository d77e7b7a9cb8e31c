// The parts of the gsparse._C extension module, each adding its functions to the module.
#pragma once

#include <pybind11/pybind11.h>

namespace gsparse::python {

/// Error classes gsparse.Error, GraphError, FormatError, ShapeError, ScheduleError, KernelError and
/// the translation of the C++ exceptions of the same names into them.
void bind_errors(pybind11::module_ &m);
/// gsparse._C.Graph: construction from COO / CSR arrays and files, sizes, derived layouts.
void bind_graph(pybind11::module_ &m);
/// gsparse._C.GraphView (graphs over tensors built by the package) and the kernel calls on it.
void bind_views(pybind11::module_ &m);
/// build_sorted_csr / build_coo: a dynamic graph's arrays built by gsparse's graph-build kernels.
void bind_view_build(pybind11::module_ &m);
/// The persistent kernel cache: its folder and counts.
void bind_kernel_cache(pybind11::module_ &m);
/// gspmm, gsddmm and output feature shapes on raw tensor arguments.
void bind_ops(pybind11::module_ &m);
/// load_plugin: plugins of user programs, their compiled programs and runs on static graphs.
void bind_plugins(pybind11::module_ &m);

}  // namespace gsparse::python
