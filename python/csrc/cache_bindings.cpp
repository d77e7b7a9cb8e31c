// The persistent kernel cache from Python: its folder (runtime/kernel_library.h) and what it did.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "runtime/kernel_library.h"

namespace py = pybind11;

namespace gsparse::python {

void bind_kernel_cache(py::module_ &m) {
    m.def("kernel_cache_dir", &kernel_cache_dir,
          "The folder of the persistent kernel cache ('' when it is off): GSPARSE_KERNEL_CACHE, else "
          "$XDG_CACHE_HOME/gsparse/kernels or ~/.cache/gsparse/kernels.");
    m.def("set_kernel_cache_dir", &set_kernel_cache_dir, py::arg("path"),
          "Sets the folder for kernels compiled from now on in this process ('' turns the cache off).");
    m.def("kernel_cache_stats", [] {
        const KernelLibraryStats s = kernel_library_stats();
        py::dict d;
        d["loaded"] = s.loaded;
        d["compiled"] = s.compiled;
        d["rejected"] = s.rejected;
        d["failed"] = s.failed;
        return d;
    }, "Counts of kernels loaded from the cache, compiled into it, rejected as stale or corrupted, and "
       "compiled in memory because the cache could not be used.");
}

}  // namespace gsparse::python
