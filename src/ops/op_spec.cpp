#include "ops/op_spec.h"

#include "core/error.h"

namespace gsparse {

const char *binary_op_name(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Dot: return "dot";
    case BinaryOp::CopyLhs: return "copy_lhs";
    case BinaryOp::CopyRhs: return "copy_rhs";
    }
    return "?";
}

const char *reduce_op_name(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    }
    return "?";
}

const char *target_name(OperandTarget t) {
    switch (t) {
    case OperandTarget::Src: return "u";
    case OperandTarget::Dst: return "v";
    case OperandTarget::Edge: return "e";
    }
    return "?";
}

BinaryOp parse_binary_op(const std::string &s) {
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Dot,
                        BinaryOp::CopyLhs, BinaryOp::CopyRhs})
        if (s == binary_op_name(op)) return op;
    if (s == "copy_u") return BinaryOp::CopyLhs;
    if (s == "copy_e") return BinaryOp::CopyRhs;
    fail<ShapeError>("unknown binary op '", s, "' (expected add, sub, mul, div, dot, copy_lhs or copy_rhs)");
}

ReduceOp parse_reduce_op(const std::string &s) {
    for (ReduceOp r : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min})
        if (s == reduce_op_name(r)) return r;
    fail<ShapeError>("unknown reduce op '", s, "' (expected sum, mean, max or min)");
}

OperandTarget parse_target(const std::string &s) {
    if (s == "u" || s == "src") return OperandTarget::Src;
    if (s == "v" || s == "dst") return OperandTarget::Dst;
    if (s == "e" || s == "edge") return OperandTarget::Edge;
    fail<ShapeError>("unknown operand target '", s, "' (expected u, v or e)");
}

bool uses_lhs(BinaryOp op) { return op != BinaryOp::CopyRhs; }
bool uses_rhs(BinaryOp op) { return op != BinaryOp::CopyLhs; }
bool has_arg_outputs(ReduceOp r) { return r == ReduceOp::Max || r == ReduceOp::Min; }

std::string SpmmSpec::name() const {
    std::string r = reduce_op_name(reduce);
    if (op == BinaryOp::CopyLhs) return "copy_u_" + r;
    if (op == BinaryOp::CopyRhs) return "copy_e_" + r;
    return std::string("u_") + binary_op_name(op) + "_e_" + r;
}

std::string SddmmSpec::name() const {
    if (op == BinaryOp::CopyLhs) return std::string("copy_") + target_name(lhs);
    if (op == BinaryOp::CopyRhs) return std::string("copy_") + target_name(rhs);
    return std::string(target_name(lhs)) + "_" + binary_op_name(op) + "_" + target_name(rhs);
}

void check_spmm_spec(const SpmmSpec &s) {
    if (s.op == BinaryOp::Dot) fail<ShapeError>("g-SpMM does not support the binary op 'dot' (use g-SDDMM)");
}

}  // namespace gsparse
