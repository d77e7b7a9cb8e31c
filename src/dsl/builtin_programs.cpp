#include "dsl/builtin_programs.h"

#include "core/error.h"
#include "ops/binary.h"
#include "ops/broadcast.h"

namespace gsparse::dsl {

namespace {

/// The index in an operand's row of output feature f: over the canonical dimensions (innermost
/// first), f's coordinate in each one the operand varies in, at the operand's own strides. `all` /
/// `none`: the operand varies in every dimension / in none (a plain or a broadcast operand).
struct OperandRead {
    bool all = true, none = true;
    int64_t columns = 1;
    Halide::Expr column;
};

OperandRead operand_read(const FeatureLayout &l, const std::vector<bool> &varies, const Halide::Expr &f) {
    OperandRead r;
    r.column = Halide::Expr(0);
    int64_t out_stride = 1;
    for (size_t i = 0; i < l.extents.size(); ++i) {
        const int64_t extent = l.extents[i];
        if (varies[i] && extent > 1) {
            const Halide::Expr c = (f / static_cast<int>(out_stride)) % static_cast<int>(extent);
            r.column = r.column + c * static_cast<int>(r.columns);
            r.columns *= extent;
            r.none = false;
        } else if (extent > 1) {
            r.all = false;
        }
        out_stride *= extent;
    }
    return r;
}

template <typename Program>
Halide::Expr declare(Program &p, const char *name, At at, const FeatureLayout &l, const std::vector<bool> &varies) {
    const OperandRead r = operand_read(l, varies, p.feature());
    if (r.all) return p.operand(name, at);
    if (r.none) return p.operand(name, at, true);
    return p.operand(name, at, Columns{static_cast<int>(r.columns), r.column});
}

At at_of(OperandTarget t) { return t == OperandTarget::Src ? At::Src : t == OperandTarget::Dst ? At::Dst : At::Edge; }

}  // namespace

int64_t program_features(BinaryOp op, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat) {
    return plan_op_features(op, lhs_feat, rhs_feat).out_len();
}

SpmmProgram spmm_program(const SpmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                         const std::vector<int64_t> &rhs_feat, Halide::Type type) {
    check_spmm_spec(spec);
    const FeatureLayout l = plan_op_features(spec.op, lhs_feat, rhs_feat);
    SpmmProgram p(spec.name(), type);
    Halide::Expr x, y;
    if (uses_lhs(spec.op)) x = declare(p, "lhs", At::Src, l, l.lhs_varies);
    if (uses_rhs(spec.op)) y = declare(p, "rhs", At::Edge, l, l.rhs_varies);
    p.message(apply_binary(spec.op, x, y));
    switch (spec.reduce) {
    case ReduceOp::Sum: p.reduce(Monoid::sum()); break;
    case ReduceOp::Mean:
        p.reduce(Monoid::sum());
        p.finalize([type](Halide::Expr acc, Halide::Expr degree) { return acc / Halide::cast(type, degree); });
        break;
    case ReduceOp::Max: p.reduce(Monoid::max()); break;
    case ReduceOp::Min: p.reduce(Monoid::min()); break;
    }
    return p;
}

SddmmProgram sddmm_program(const SddmmSpec &spec, const std::vector<int64_t> &lhs_feat,
                           const std::vector<int64_t> &rhs_feat, Halide::Type type) {
    if (spec.op == BinaryOp::Dot)
        fail<ShapeError>("sddmm_program: dot reduces the last feature dimension; a per-edge program's value is one "
                         "expression per output feature (write the sum over an RDom in a g-SpMM or give it as "
                         "several operands)");
    const FeatureLayout l = plan_op_features(spec.op, lhs_feat, rhs_feat);
    SddmmProgram p(spec.name(), type);
    Halide::Expr x, y;
    if (uses_lhs(spec.op)) x = declare(p, "lhs", at_of(spec.lhs), l, l.lhs_varies);
    if (uses_rhs(spec.op)) y = declare(p, "rhs", at_of(spec.rhs), l, l.rhs_varies);
    p.edge_value(apply_binary(spec.op, x, y));
    return p;
}

}  // namespace gsparse::dsl
