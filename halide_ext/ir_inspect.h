// Queries on lowered Halide statements, for IR tests and debugging of the extension's passes.
//
// lowered_stmt() captures the Stmt of a pipeline as a custom lowering pass sees it (after GPU
// thread-loop fusion and warp-shuffle lowering, before GPU kernels are split off) by appending a
// recording pass to a copy of the pipeline; the other queries walk a Stmt with IRVisitors:
// allocations (name, extents, memory type), calls (e.g. gpu_thread_barrier) with the conditions and
// loops that enclose them, For loops, and loads / stores of a buffer.
//
// Names are matched as shell-style globs (fnmatch: `*`, `?`, `[...]`), so "spmm_nbr" matches exactly
// and "*__thread_id_*" matches every GPU thread loop variable.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gsparse::ext {

/// Whether `name` matches the shell-style glob `pattern`.
bool name_matches(const std::string &name, const std::string &pattern);

/// The default pattern of GPU thread (and lane) loop variables.
inline const char *kThreadIdPattern = "*__thread_id_*";

// --- capturing the lowered statement -----------------------------------------------------------

/// The Stmt that a custom lowering pass appended after the pipeline's own passes sees when the
/// pipeline is compiled for `target` (compile_to_module). The pipeline itself is left unchanged.
Halide::Internal::Stmt lowered_stmt(Halide::Pipeline pipeline, const std::vector<Halide::Argument> &args,
                                    const Halide::Target &target);
/// Same, with the arguments inferred from the pipeline.
Halide::Internal::Stmt lowered_stmt(Halide::Pipeline pipeline, const Halide::Target &target);

/// A Stmt as Halide prints it.
std::string stmt_text(const Halide::Internal::Stmt &s);

// --- queries ---------------------------------------------------------------------------------

struct AllocationInfo {
    std::string name;
    Halide::Type type;
    Halide::MemoryType memory_type = Halide::MemoryType::Auto;
    std::vector<Halide::Expr> extents;
    /// The extents with the enclosing Let / LetStmt values substituted in (simplified).
    std::vector<Halide::Expr> expanded_extents;
    Halide::Expr condition;
    std::vector<std::string> enclosing_loops;  ///< outermost first

    /// The extents as integers, when all of them are constants. (Halide folds the extents of a
    /// constant-sized allocation into one: a 4 x 2 tile is allocated as [8].)
    std::optional<std::vector<int64_t>> constant_extents() const;
    /// Constant upper bounds of the expanded extents (min(x, 4) -> 4), when all have one: the
    /// largest tile a dynamically sized allocation (a tail tile) can take.
    std::optional<std::vector<int64_t>> extent_upper_bounds() const;
    /// The product of extent_upper_bounds().
    std::optional<int64_t> elements_upper_bound() const;
    /// The number of elements, when all extents are constants.
    std::optional<int64_t> constant_elements() const;
};

/// Allocate nodes whose name matches the pattern, in program order.
std::vector<AllocationInfo> find_allocations(const Halide::Internal::Stmt &s, const std::string &pattern = "*");

struct CallSite {
    std::string name;
    std::vector<Halide::Expr> args;
    std::vector<std::string> enclosing_loops;  ///< outermost first
    /// Conditions of the enclosing IfThenElse branches, outermost first (negated for else branches).
    std::vector<Halide::Expr> enclosing_conditions;
    /// Some enclosing IfThenElse condition depends on a thread variable (directly or through a
    /// Let / LetStmt bound from one).
    bool under_thread_dependent_condition = false;
    /// Some enclosing loop has a min or extent that depends on a thread variable.
    bool under_thread_dependent_loop = false;
};

/// Calls (intrinsics, externs, loads in call form) whose name matches, in program order.
/// thread_pattern names the variables that count as thread ids.
std::vector<CallSite> find_calls(const Halide::Internal::Stmt &s, const std::string &pattern,
                                 const std::string &thread_pattern = kThreadIdPattern);
size_t count_calls(const Halide::Internal::Stmt &s, const std::string &pattern);

struct LoopInfo {
    std::string name;
    Halide::Expr min, extent;
    Halide::Expr expanded_extent;  ///< with the enclosing Let / LetStmt values substituted in
    Halide::Internal::ForType for_type = Halide::Internal::ForType::Serial;
    Halide::DeviceAPI device_api = Halide::DeviceAPI::None;
    int depth = 0;  ///< number of enclosing loops

    std::optional<int64_t> constant_extent() const;
    std::optional<int64_t> extent_upper_bound() const;
};

/// For loops, in program order (pre-order), optionally only those whose name matches.
std::vector<LoopInfo> list_loops(const Halide::Internal::Stmt &s, const std::string &pattern = "*");

struct AccessInfo {
    std::string buffer;
    Halide::Expr index;  ///< flat index
    Halide::Expr value;  ///< stores only
    Halide::Expr predicate;
    Halide::Type type;
    std::vector<std::string> enclosing_loops;  ///< outermost first
};

/// Load nodes from buffers whose name matches, in program order.
std::vector<AccessInfo> find_loads(const Halide::Internal::Stmt &s, const std::string &buffer_pattern);
/// Store nodes into buffers whose name matches, in program order.
std::vector<AccessInfo> find_stores(const Halide::Internal::Stmt &s, const std::string &buffer_pattern);

/// Whether e uses a variable whose name matches the pattern.
bool expr_uses_var_matching(const Halide::Expr &e, const std::string &pattern);

}  // namespace gsparse::ext
