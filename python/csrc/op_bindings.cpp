// gsparse._C.gspmm / gsddmm: the C++ API's *_into calls on tensors in caller memory (CPU or CUDA,
// the latter on the caller's stream in PyTorch's context), and the output feature shapes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "api/gsparse.h"
#include "api/tuning_key.h"
#include "core/error.h"
#include "bindings.h"
#include "ops/broadcast.h"
#include "tensor_args.h"

namespace py = pybind11;

namespace gsparse::python {

namespace {

void gspmm(const Graph &g, const std::string &op, const std::string &reduce, const std::optional<TensorArg> &lhs,
           const std::optional<TensorArg> &rhs, const TensorArg &out, const std::optional<TensorArg> &arg_u,
           const std::optional<TensorArg> &arg_e, const std::optional<LaunchArg> &launch,
           const std::optional<std::string> &schedule) {
    SpmmSpec spec{parse_binary_op(op), parse_reduce_op(reduce)};
    Tensor l = view_tensor(lhs, "lhs"), r = view_tensor(rhs, "rhs"), o = view_tensor(out, "out");
    Tensor au = view_tensor(arg_u, "arg_u"), ae = view_tensor(arg_e, "arg_e");
    OpOptions options;
    options.cuda = cuda_launch(launch);
    if (schedule) options.schedule = ScheduleParams::parse(*schedule);
    gspmm_into(g, spec, l, r, o, arg_u ? &au : nullptr, arg_e ? &ae : nullptr, options);
}

void gsddmm(const Graph &g, const std::string &op, const std::string &lhs_target, const std::string &rhs_target,
            const std::optional<TensorArg> &lhs, const std::optional<TensorArg> &rhs, const TensorArg &out,
            const std::optional<LaunchArg> &launch, const std::optional<std::string> &schedule) {
    SddmmSpec spec{parse_binary_op(op), parse_target(lhs_target), parse_target(rhs_target)};
    Tensor l = view_tensor(lhs, "lhs"), r = view_tensor(rhs, "rhs"), o = view_tensor(out, "out");
    OpOptions options;
    options.cuda = cuda_launch(launch);
    if (schedule) options.schedule = ScheduleParams::parse(*schedule);
    gsddmm_into(g, spec, l, r, o, options);
}

/// The output feature shape of op on operands with these feature shapes (ShapeError when they do
/// not broadcast). For copy ops only the copied operand's shape matters.
std::vector<int64_t> out_feature_shape(const std::string &op, const std::vector<int64_t> &lhs_feat,
                                       const std::vector<int64_t> &rhs_feat) {
    return plan_op_features(parse_binary_op(op), lhs_feat, rhs_feat).out_shape;
}

/// gsparse-tune's cache key of a call: kind "spmm" (a = reduce) or "sddmm" (a, b = the targets).
std::string tuning_key_of(const Graph &g, const std::string &kind, const std::string &op, const std::string &a,
                          const std::string &b, const std::vector<int64_t> &lhs_feat,
                          const std::vector<int64_t> &rhs_feat, bool cuda) {
    BinaryOp bop = parse_binary_op(op);
    std::string name;
    if (kind == "spmm") {
        name = "spmm " + SpmmSpec{bop, parse_reduce_op(a)}.name();
    } else if (kind == "sddmm") {
        name = "sddmm " + SddmmSpec{bop, parse_target(a), parse_target(b)}.name();
    } else {
        throw std::invalid_argument("kind must be spmm or sddmm, got '" + kind + "'");
    }
    return tuning_key(cuda ? Device::CUDA : Device::CPU, name, plan_op_features(bop, lhs_feat, rhs_feat), g);
}

/// The schedule point a g-SpMM (a = reduce) or g-SDDMM (a, b = targets) call with float32 operands of
/// these feature shapes runs on the graph when none is given.
std::string default_schedule_of(const Graph &g, const std::string &kind, const std::string &op, const std::string &a,
                                const std::string &b, const std::vector<int64_t> &lhs_feat,
                                const std::vector<int64_t> &rhs_feat, bool cuda) {
    const Device device = cuda ? Device::CUDA : Device::CPU;
    if (kind == "spmm") {
        const SpmmSpec spec{parse_binary_op(op), parse_reduce_op(a)};
        check_spmm_spec(spec);
        return gspmm_default_schedule(g, spec, lhs_feat, rhs_feat, DType::F32, device).str();
    }
    if (kind == "sddmm")
        return gsddmm_default_schedule(g, SddmmSpec{parse_binary_op(op), parse_target(a), parse_target(b)}, lhs_feat,
                                       rhs_feat, DType::F32, device)
            .str();
    throw std::invalid_argument("kind must be spmm or sddmm, got '" + kind + "'");
}

}  // namespace

void bind_ops(py::module_ &m) {
    m.def("gspmm", &gspmm, py::arg("graph"), py::arg("op"), py::arg("reduce"), py::arg("lhs"), py::arg("rhs"),
          py::arg("out"), py::arg("arg_u"), py::arg("arg_e"), py::arg("launch"), py::arg("schedule") = py::none(),
          py::call_guard<py::gil_scoped_release>(),
          "g-SpMM into out (and arg_u / arg_e for max, min). Tensors are (ptr, shape, dtype, device) tuples; "
          "launch is (device index, stream) for CUDA tensors, None for CPU tensors.");
    m.def("gsddmm", &gsddmm, py::arg("graph"), py::arg("op"), py::arg("lhs_target"), py::arg("rhs_target"),
          py::arg("lhs"), py::arg("rhs"), py::arg("out"), py::arg("launch"), py::arg("schedule") = py::none(),
          py::call_guard<py::gil_scoped_release>(),
          "g-SDDMM into out (num_edges rows in edge-id order).");
    m.def("out_feature_shape", &out_feature_shape, py::arg("op"), py::arg("lhs_feat"), py::arg("rhs_feat"));
    m.def("default_tuning_cache", &default_tuning_cache_path, "gsparse-tune's default tuning cache file.");
    m.def("schedule_string", [](const std::string &schedule_json) {
        return ScheduleParams::from_json(nlohmann::json::parse(schedule_json)).str();
    }, py::arg("schedule_json"), "The NAME{k=v, ...} form of a schedule stored as JSON ({\"schedule\", \"params\"}).");
    m.def("tuning_key", &tuning_key_of, py::arg("graph"), py::arg("kind"), py::arg("op"), py::arg("a"), py::arg("b"),
          py::arg("lhs_feat"), py::arg("rhs_feat"), py::arg("cuda"),
          "gsparse-tune's tuning-cache key of a g-SpMM (a = reduce) or g-SDDMM (a, b = targets) call.");
    m.def("default_schedule", &default_schedule_of, py::arg("graph"), py::arg("kind"), py::arg("op"), py::arg("a"),
          py::arg("b"), py::arg("lhs_feat"), py::arg("rhs_feat"), py::arg("cuda"),
          "The schedule point a g-SpMM (a = reduce) or g-SDDMM (a, b = targets) call runs on the graph when none is "
          "given (nothing is compiled; no GPU needed).");
    m.def("check_spmm_op", [](const std::string &op, const std::string &reduce) {
        check_spmm_spec(SpmmSpec{parse_binary_op(op), parse_reduce_op(reduce)});
    });
    m.def("check_sddmm_op", [](const std::string &op, const std::string &lhs_target, const std::string &rhs_target) {
        parse_binary_op(op);
        parse_target(lhs_target);
        parse_target(rhs_target);
    });
}

}  // namespace gsparse::python
