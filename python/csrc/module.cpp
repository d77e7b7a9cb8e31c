// gsparse._C: the native part of the gsparse PyTorch package. It takes tensors as raw pointers,
// shapes, dtype names and device kinds (see tensor_args.h) and calls the C++ API; autograd, shape
// bookkeeping and allocation live in Python. It links nothing from LibTorch or CUDA.
#include "bindings.h"

PYBIND11_MODULE(_C, m) {
    m.doc() = "gsparse native module: g-SpMM / g-SDDMM kernels on caller memory";
    gsparse::python::bind_errors(m);
    gsparse::python::bind_graph(m);
    gsparse::python::bind_views(m);
    gsparse::python::bind_view_build(m);
    gsparse::python::bind_ops(m);
    gsparse::python::bind_kernel_cache(m);
    gsparse::python::bind_plugins(m);
}
