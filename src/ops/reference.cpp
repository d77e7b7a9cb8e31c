#include "ops/reference.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gsparse {

namespace {

/// Maps flat output feature indices to flat operand feature indices under DGL broadcasting.
struct BroadcastIndex {
    std::vector<int64_t> out_shape;  // padded full shape (excluding a dot's reduced dim)
    std::vector<int64_t> l_shape, r_shape;
    int64_t out_len = 1, l_len = 1, r_len = 1, red = 1;

    BroadcastIndex(std::vector<int64_t> l, std::vector<int64_t> r, bool dot) {
        if (dot) {
            red = l.back();
            l.pop_back();
            r.pop_back();
        }
        size_t rank = std::max(l.size(), r.size());
        l.insert(l.begin(), rank - l.size(), 1);
        r.insert(r.begin(), rank - r.size(), 1);
        for (size_t d = 0; d < rank; d++) {
            if (l[d] != r[d] && l[d] != 1 && r[d] != 1)
                fail<ShapeError>("reference: shapes do not broadcast at dimension ", d);
            out_shape.push_back(std::max(l[d], r[d]));
            out_len *= out_shape.back();
            l_len *= l[d];
            r_len *= r[d];
        }
        l_shape = l;
        r_shape = r;
    }
    /// Offsets (in units of the reduced-dim block) of output element j into lhs and rhs.
    std::pair<int64_t, int64_t> offsets(int64_t j) const {
        int64_t lo = 0, ro = 0, ls = 1, rs = 1;
        for (size_t d = out_shape.size(); d-- > 0;) {
            int64_t idx = j % out_shape[d];
            j /= out_shape[d];
            if (l_shape[d] > 1) lo += idx * ls;
            if (r_shape[d] > 1) ro += idx * rs;
            ls *= l_shape[d];
            rs *= r_shape[d];
        }
        return {lo, ro};
    }
};

std::vector<int64_t> feat_shape(const Tensor &t) {
    if (!t.defined() || t.dim() == 0) return {};
    return std::vector<int64_t>(t.shape().begin() + 1, t.shape().end());
}

template <typename T>
T binop(BinaryOp op, T a, T b) {
    switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul:
    case BinaryOp::Dot: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::CopyLhs: return a;
    case BinaryOp::CopyRhs: return b;
    }
    return a;
}

template <typename T>
ReferenceResult spmm_impl(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    std::vector<int64_t> lf = uses_lhs(spec.op) ? feat_shape(lhs) : feat_shape(rhs);
    std::vector<int64_t> rf = uses_rhs(spec.op) ? feat_shape(rhs) : lf;
    if (!uses_lhs(spec.op)) lf = rf;
    BroadcastIndex bi(lf, rf, false);
    std::vector<int64_t> out_feat = spec.op == BinaryOp::CopyLhs ? lf
                                    : spec.op == BinaryOp::CopyRhs ? rf
                                                                   : bi.out_shape;
    const CSR &csr = g.csr();
    const int64_t n = csr.num_rows, len = bi.out_len;
    ReferenceResult res;
    res.shape = {n};
    res.shape.insert(res.shape.end(), out_feat.begin(), out_feat.end());
    res.out.assign(n * len, 0.0);
    res.magnitude.assign(n * len, 0.0);
    const bool args = has_arg_outputs(spec.reduce);
    if (args) {
        res.arg_u.assign(n * len, -1);
        res.arg_e.assign(n * len, -1);
    }
    const T *X = uses_lhs(spec.op) ? static_cast<const T *>(lhs.data()) : nullptr;
    const T *Y = uses_rhs(spec.op) ? static_cast<const T *>(rhs.data()) : nullptr;
    for (int64_t v = 0; v < n; v++) {
        const int64_t deg = csr.row_length(v);
        for (int64_t j = 0; j < len; j++) {
            auto [lo, ro] = bi.offsets(j);
            double acc = 0, mag = 0;
            T best = T(0);
            int32_t bu = -1, be = -1;
            for (int64_t p = csr.row_ptr[v]; p < csr.row_ptr[v + 1]; p++) {
                const int32_t u = csr.col_idx[p], e = csr.edge_id(p);
                const T x = X ? X[u * bi.l_len + lo] : T(0);
                const T y = Y ? Y[e * bi.r_len + ro] : T(0);
                const T m = binop<T>(spec.op, x, y);
                acc += m;
                mag += std::fabs(static_cast<double>(m));
                bool better = bu < 0 || (spec.reduce == ReduceOp::Max ? m > best : m < best);
                if (better) {
                    best = m;
                    bu = u;
                    be = e;
                }
            }
            const int64_t o = v * len + j;
            switch (spec.reduce) {
            case ReduceOp::Sum:
                res.out[o] = acc;
                res.magnitude[o] = mag;
                break;
            case ReduceOp::Mean:
                res.out[o] = deg > 0 ? acc / static_cast<double>(deg) : 0.0;
                res.magnitude[o] = deg > 0 ? mag / static_cast<double>(deg) : 0.0;
                break;
            case ReduceOp::Max:
            case ReduceOp::Min:
                res.out[o] = static_cast<double>(best);
                res.magnitude[o] = std::fabs(static_cast<double>(best));
                res.arg_u[o] = bu;
                res.arg_e[o] = be;
                break;
            }
        }
    }
    return res;
}

template <typename T>
ReferenceResult sddmm_impl(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    const bool dot = spec.op == BinaryOp::Dot;
    std::vector<int64_t> lf = uses_lhs(spec.op) ? feat_shape(lhs) : feat_shape(rhs);
    std::vector<int64_t> rf = uses_rhs(spec.op) ? feat_shape(rhs) : lf;
    if (!uses_lhs(spec.op)) lf = rf;
    BroadcastIndex bi(lf, rf, dot);
    std::vector<int64_t> out_feat = spec.op == BinaryOp::CopyLhs ? lf
                                    : spec.op == BinaryOp::CopyRhs ? rf
                                                                   : bi.out_shape;
    if (dot) out_feat.push_back(1);
    const COO &coo = g.coo();
    const int64_t m = coo.nnz(), len = bi.out_len, red = bi.red;
    ReferenceResult res;
    res.shape = {m};
    res.shape.insert(res.shape.end(), out_feat.begin(), out_feat.end());
    res.out.assign(m * len, 0.0);
    res.magnitude.assign(m * len, 0.0);
    const T *L = uses_lhs(spec.op) ? static_cast<const T *>(lhs.data()) : nullptr;
    const T *R = uses_rhs(spec.op) ? static_cast<const T *>(rhs.data()) : nullptr;
    auto row_of = [&](OperandTarget t, int64_t e) -> int64_t {
        return t == OperandTarget::Src ? coo.col[e] : t == OperandTarget::Dst ? coo.row[e] : e;
    };
    for (int64_t e = 0; e < m; e++) {
        const int64_t lr = row_of(spec.lhs, e), rr = row_of(spec.rhs, e);
        for (int64_t j = 0; j < len; j++) {
            auto [lo, ro] = bi.offsets(j);
            double acc = 0, mag = 0;
            for (int64_t k = 0; k < red; k++) {
                const T x = L ? L[(lr * bi.l_len + lo) * red + k] : T(0);
                const T y = R ? R[(rr * bi.r_len + ro) * red + k] : T(0);
                const T v = binop<T>(spec.op, x, y);
                acc += v;
                mag += std::fabs(static_cast<double>(v));
            }
            res.out[e * len + j] = acc;
            res.magnitude[e * len + j] = mag;
        }
    }
    return res;
}

}  // namespace

ReferenceResult reference_spmm(const Graph &g, const SpmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    const Tensor &any = uses_lhs(spec.op) ? lhs : rhs;
    return any.dtype() == DType::F64 ? spmm_impl<double>(g, spec, lhs, rhs) : spmm_impl<float>(g, spec, lhs, rhs);
}

ReferenceResult reference_sddmm(const Graph &g, const SddmmSpec &spec, const Tensor &lhs, const Tensor &rhs) {
    const Tensor &any = uses_lhs(spec.op) ? lhs : rhs;
    return any.dtype() == DType::F64 ? sddmm_impl<double>(g, spec, lhs, rhs) : sddmm_impl<float>(g, spec, lhs, rhs);
}

}  // namespace gsparse
