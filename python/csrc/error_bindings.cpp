// Python classes of gsparse's errors. Errors about bad input (graphs, shapes, schedules) are also
// ValueErrors; every class derives from gsparse.Error (a RuntimeError).
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "core/error.h"

namespace py = pybind11;

namespace gsparse::python {

namespace {

PyObject *new_error_class(py::module_ &m, const char *name, PyObject *bases) {
    const std::string qualified = std::string("gsparse.") + name;
    PyObject *cls = PyErr_NewException(qualified.c_str(), bases, nullptr);
    if (!cls) throw py::error_already_set();
    m.add_object(name, py::handle(cls));  // the module keeps a reference for the process lifetime
    return cls;
}

}  // namespace

void bind_errors(py::module_ &m) {
    static PyObject *base = nullptr, *graph = nullptr, *format = nullptr, *shape = nullptr, *schedule = nullptr,
                    *kernel = nullptr;
    base = new_error_class(m, "Error", PyExc_RuntimeError);
    auto value_error = [&](const char *name) {
        py::tuple bases = py::make_tuple(py::handle(base), py::handle(PyExc_ValueError));
        return new_error_class(m, name, bases.ptr());
    };
    graph = value_error("GraphError");
    format = value_error("FormatError");
    shape = value_error("ShapeError");
    schedule = value_error("ScheduleError");
    py::tuple kernel_bases = py::make_tuple(py::handle(base));
    kernel = new_error_class(m, "KernelError", kernel_bases.ptr());
    // Module-local: consulted before (and never shared with) other modules' translators.
    py::register_local_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const GraphError &e) {
            PyErr_SetString(graph, e.what());
        } catch (const FormatError &e) {
            PyErr_SetString(format, e.what());
        } catch (const ShapeError &e) {
            PyErr_SetString(shape, e.what());
        } catch (const ScheduleError &e) {
            PyErr_SetString(schedule, e.what());
        } catch (const KernelError &e) {
            PyErr_SetString(kernel, e.what());
        } catch (const Error &e) {
            PyErr_SetString(base, e.what());
        }
    });
}

}  // namespace gsparse::python
