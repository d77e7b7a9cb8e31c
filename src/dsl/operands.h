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

/// The columns of an operand that is neither a row of the program's features nor one value
/// broadcast over them (SpmmProgram::operand, SddmmProgram::operand): `count` columns, each feature
/// f of the message reading column `at`, an expression of the program's feature() and constants.
/// One attention weight a head of D features over H heads: Columns{H, p.feature() / D}; a vector of
/// D shared by every head: Columns{D, p.feature() % D}.
struct Columns {
    int count = 0;
    Halide::Expr at;
};

/// An operand a program declared: a [rows, features] input (read at element 0 of each row when
/// broadcast; [rows, columns] read at `column` when declared with Columns) named
/// <program>_<name>, and where it was declared.
struct Operand {
    std::string name;
    At at = At::Src;
    bool broadcast = false;
    Halide::ImageParam param;
    Site site;
    int columns = 0;      ///< declared with Columns: their count (0: features, or 1 when broadcast)
    Halide::Expr column;  ///< declared with Columns: the column feature f reads
};

/// The width of an operand's rows for a kernel of `features` features: its Columns' count, 1 when
/// broadcast, else features.
inline int operand_width(const Operand &o, int features) {
    return o.columns > 0 ? o.columns : o.broadcast ? 1 : features;
}

/// Whether aligned_rows(vector) aligns the rows of operand o (rows of more than one element, a
/// multiple of vector: their starts are then all multiples of it).
inline bool aligned_operand(const Operand &o, int features, int vector) {
    const int width = operand_width(o, features);
    return vector > 0 && width > 1 && width % vector == 0;
}

/// What a program's user needs to know of an operand: its name, where it is read, whether it
/// is broadcast over the features, and its Columns' count (0 when declared without).
struct OperandInfo {
    std::string name;
    At at;
    bool broadcast;
    int columns = 0;
};

/// The OperandInfo of each declared operand, in declaration order.
std::vector<OperandInfo> operand_infos(const std::vector<Operand> &operands);

/// Declares operand name of program (a C identifier, not yet declared) as an input of type and
/// appends it to operands; returns the new entry. ShapeError naming both lines for a second
/// declaration.
const Operand &declare_operand(std::vector<Operand> &operands, const std::string &program, const std::string &name,
                               At at, bool broadcast, Halide::Type type, Site site = {});

/// The same for an operand of `columns.count` columns read at `columns.at` (Columns); ShapeError
/// for fewer than one column or an undefined or non-integer column.
const Operand &declare_operand(std::vector<Operand> &operands, const std::string &program, const std::string &name,
                               At at, const Columns &columns, Halide::Type type, Site site = {});

/// The column each feature f < features reads of operand o (declared with Columns; empty for other
/// operands), with `feature` the name of the program's feature variable; ShapeError naming the
/// operand's line when a column is not a constant once f is (it reads something other than
/// feature() and constants) or lies outside [0, o.columns).
std::vector<int32_t> operand_columns(const std::string &program, const Operand &o, int features,
                                     const std::string &feature);

/// operand_columns of every operand declared with Columns (the check compile() makes).
void check_operand_columns(const std::string &program, const std::vector<Operand> &operands, int features,
                           const std::string &feature);

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
/// every operand is dense rows of exactly its width (operand_width), starting at row 0, and the
/// rows of operands whose width is a multiple of `vector` (above 1) are aligned to `vector` elements; with vector = 0
/// the constraints are taken away again. The operands' parameters belong to the program and are
/// shared by every kernel compiled from it, so each kernel sets them before Halide lowers it.
void constrain_operand_rows(const std::vector<Operand> &operands, int features, int vector);

/// ShapeError naming the tensor unless its data is aligned to `bytes` (0: no requirement), as the
/// vector accesses of ScheduleContext::aligned_rows assume.
void check_row_alignment(const std::string &program, const std::string &what, const Tensor &t, int bytes,
                         const std::string &schedule);

}  // namespace gsparse::dsl
