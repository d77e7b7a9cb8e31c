// A tuning problem: one operator on one graph at one feature shape and device, with the input
// tensors the candidates are measured on. Feature values are random (timing does not depend on
// them; division uses values away from zero).
#pragma once

#include <Halide.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "graph/graph.h"
#include "ops/broadcast.h"
#include "ops/op_spec.h"
#include "schedules/schedule.h"

namespace gsparse::autotune {

class DeviceMirror;

enum class OpKind { Spmm, Sddmm };

struct TuningProblem {
    OpKind kind = OpKind::Spmm;
    SpmmSpec spmm;
    SddmmSpec sddmm;
    std::vector<int64_t> lhs_feat, rhs_feat;  ///< feature shapes of the operands
    Device device = Device::CPU;
    Graph graph;
    std::string graph_name;

    // Derived by prepare().
    FeatureLayout layout;
    Tensor lhs, rhs, out, arg_u, arg_e;

    /// Plans the layout and allocates inputs/outputs (on the GPU for Device::CUDA, where it throws
    /// Error without a usable CUDA device); throws ShapeError for shapes that do not fit.
    void prepare(uint64_t seed = 1);
    /// Only the feature layout of prepare(), for searches that measure nothing (replays).
    void plan_layout();
    /// The same operator and feature shapes on a small graph (64 nodes, with empty rows, a long row and
    /// the problem graph's kind of edge ids), prepared on the same device. The measurer calls each
    /// kernel on it once before timing it on the problem: on a GPU that first call loads the kernel.
    TuningProblem load_problem() const;
    /// Waits for the device's queued work (a no-op on the CPU); timing calls it after each run.
    std::function<void()> sync = [] {};
    /// Device copies of the tensors (Device::CUDA), kept alive with the problem.
    std::shared_ptr<DeviceMirror> device_memory;
    Problem schedule_problem() const {
        return kind == OpKind::Spmm ? spmm_problem(spmm, layout, graph.stats()) : Problem{layout, graph.stats()};
    }
    /// "spmm copy_u_sum" / "sddmm u_dot_v".
    std::string op_name() const;
    /// The device of records and cache keys: "cpu", or "cuda:<GPU name>" ("cuda" when the driver
    /// does not name it); timings and tuned schedules belong to one GPU model.
    std::string device_label() const;

private:
    void move_to_device();
};

}  // namespace gsparse::autotune
