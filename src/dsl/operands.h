// The operands of user programs (dsl/user_spmm.h, dsl/user_sddmm.h): where they are read, their
// declaration as Halide inputs, and the checks of the tensors a call passes for them, shared by
// every kind of program.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace gsparse::dsl {

/// Where an operand is read: at the source node u, the destination node v or the edge e.
enum class At { Src, Dst, Edge };

const char *at_name(At at);

/// ShapeError unless name is a C identifier (what: what it names, for the message).
void check_identifier(const std::string &name, const char *what);

/// Where a call that builds a user program was written (the caller's file and line: the builder
/// functions take __builtin_FILE() and __builtin_LINE() as default arguments), so that errors about
/// an operand or a message point at the user's line.
struct Site {
    std::string file;
    int line = 0;
    /// "file:line", or "" when unknown.
    std::string str() const;
    /// " (<what> file:line)", e.g. " (declared at f.cpp:12)", or "" when unknown.
    std::string note(const char *what) const;
};

/// An operand a program declared: a [rows, features] input (read at element 0 of each row when
/// broadcast) named <program>_<name>, and where it was declared.
struct Operand {
    std::string name;
    At at = At::Src;
    bool broadcast = false;
    Halide::ImageParam param;
    Site site;
};

/// What a program's user needs to know of an operand: its name, where it is read, and whether it
/// is broadcast over the features.
struct OperandInfo {
    std::string name;
    At at;
    bool broadcast;
};

/// The OperandInfo of each declared operand, in declaration order.
std::vector<OperandInfo> operand_infos(const std::vector<Operand> &operands);

/// Declares operand name of program (a C identifier, not yet declared) as an input of type and
/// appends it to operands; returns the new entry. ShapeError naming both lines for a second
/// declaration.
const Operand &declare_operand(std::vector<Operand> &operands, const std::string &program, const std::string &name,
                               At at, bool broadcast, Halide::Type type, Site site = {});

/// ShapeError naming the problem unless t is defined, on device, of dtype and [rows, width].
void check_tensor(const std::string &program, const std::string &what, const Tensor &t, Device device, DType dtype,
                  int64_t rows, int64_t width);

/// The tensors a call gives for the declared operands, in declaration order, each checked against
/// its rows (rows_of its At: num_src, num_dst or num_edges) and width (1 when broadcast, else
/// features). ShapeError for a name that is not declared, an operand not given, or a bad tensor.
std::vector<const Tensor *> match_operands(const std::string &program, const std::vector<Operand> &declared,
                                           const std::map<std::string, Tensor> &given, Device device, DType dtype,
                                           int features, const int64_t (&rows_of)[3]);

/// Sets the operands' layout for compiling a kernel: with vector > 0 (ScheduleContext::aligned_rows)
/// every operand is dense rows of exactly its width (features, or 1 when broadcast), starting at
/// row 0, and the rows of operands of `features` are aligned to `vector` elements; with vector = 0
/// the constraints are taken away again. The operands' parameters belong to the program and are
/// shared by every kernel compiled from it, so each kernel sets them before Halide lowers it.
void constrain_operand_rows(const std::vector<Operand> &operands, int features, int vector);

/// ShapeError naming the tensor unless its data is aligned to `bytes` (0: no requirement), as the
/// vector accesses of ScheduleContext::aligned_rows assume.
void check_row_alignment(const std::string &program, const std::string &what, const Tensor &t, int bytes,
                         const std::string &schedule);

}  // namespace gsparse::dsl
