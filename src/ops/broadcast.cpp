#include "ops/broadcast.h"

#include <algorithm>

#include "core/error.h"
#include "core/tensor.h"

namespace gsparse {

int64_t FeatureLayout::out_len() const {
    int64_t n = 1;
    for (int64_t s : out_shape) n *= s;
    return n;
}

static std::vector<int64_t> operand_extents(const FeatureLayout &l, const std::vector<bool> &varies) {
    std::vector<int64_t> e;
    if (l.reduce_len > 0) e.push_back(l.reduce_len);
    for (size_t i = 0; i < l.extents.size(); i++) e.push_back(varies[i] ? l.extents[i] : 1);
    return e;
}

std::vector<int64_t> FeatureLayout::lhs_extents() const { return operand_extents(*this, lhs_varies); }
std::vector<int64_t> FeatureLayout::rhs_extents() const { return operand_extents(*this, rhs_varies); }

std::string FeatureLayout::key() const {
    // Appended, not streamed: kernel keys are built from this text on every call.
    std::string s;
    if (reduce_len > 0) s += "dot" + std::to_string(reduce_len) + '|';
    for (size_t i = 0; i < extents.size(); i++) {
        if (i) s += '.';
        s += std::to_string(extents[i]);
        s += ':';
        if (lhs_varies[i]) s += 'l';
        if (rhs_varies[i]) s += 'r';
    }
    return s;
}

FeatureLayout plan_features(BinaryOp op, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat) {
    for (const auto *shape : {&lhs_feat, &rhs_feat})
        for (int64_t s : *shape)
            if (s < 1) fail<ShapeError>("feature shape ", shape_str(*shape), " has a dimension < 1");

    std::vector<int64_t> l = lhs_feat, r = rhs_feat;
    if (op == BinaryOp::CopyLhs) r.assign(l.size(), 1);
    if (op == BinaryOp::CopyRhs) l.assign(r.size(), 1);

    FeatureLayout out;
    if (op == BinaryOp::Dot) {
        if (l.empty() || r.empty() || l.back() != r.back())
            fail<ShapeError>("dot needs equal last feature dimensions, got lhs ", shape_str(lhs_feat), " and rhs ",
                             shape_str(rhs_feat));
        out.reduce_len = l.back();
        l.pop_back();
        r.pop_back();
    }
    size_t rank = std::max(l.size(), r.size());
    l.insert(l.begin(), rank - l.size(), 1);
    r.insert(r.begin(), rank - r.size(), 1);

    std::vector<int64_t> full(rank);
    for (size_t d = 0; d < rank; d++) {
        if (l[d] != r[d] && l[d] != 1 && r[d] != 1)
            fail<ShapeError>("feature shapes ", shape_str(lhs_feat), " and ", shape_str(rhs_feat),
                             " do not broadcast (dimension ", d, ": ", l[d], " vs ", r[d], ")");
        full[d] = std::max(l[d], r[d]);
    }
    if (op == BinaryOp::CopyLhs) out.out_shape = lhs_feat;
    else if (op == BinaryOp::CopyRhs) out.out_shape = rhs_feat;
    else out.out_shape = full;
    if (op == BinaryOp::Dot) out.out_shape.push_back(1);

    // Canonical dims, innermost first.
    for (size_t i = rank; i-- > 0;) {
        if (full[i] == 1) continue;
        bool lv = l[i] > 1, rv = r[i] > 1;
        if (!out.extents.empty() && out.lhs_varies.back() == lv && out.rhs_varies.back() == rv) {
            out.extents.back() *= full[i];
        } else {
            out.extents.push_back(full[i]);
            out.lhs_varies.push_back(lv);
            out.rhs_varies.push_back(rv);
        }
    }
    if (out.extents.empty()) {
        out.extents.push_back(1);
        out.lhs_varies.push_back(false);
        out.rhs_varies.push_back(false);
    }
    if (out.extents.size() > 6)
        fail<ShapeError>("feature shapes ", shape_str(lhs_feat), " and ", shape_str(rhs_feat),
                         " need more than 6 canonical dimensions");
    return out;
}

FeatureLayout plan_op_features(BinaryOp op, const std::vector<int64_t> &lhs_feat, const std::vector<int64_t> &rhs_feat) {
    return plan_features(op, uses_lhs(op) ? lhs_feat : rhs_feat, uses_rhs(op) ? rhs_feat : lhs_feat);
}

}  // namespace gsparse
