// The g-SDDMM benchmark's ops, byte model, edge sample and fp64 reference.
#include "sddmm_util.h"

#include <algorithm>
#include <thread>

#include "core/error.h"

namespace gsparse::bench {

namespace {

uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

}  // namespace

SddmmSpec parse_sddmm_bench_op(const std::string &text) {
    std::string op = text;
    if (op.size() > 4 && op.rfind("u_", 0) == 0 && op.compare(op.size() - 2, 2, "_v") == 0)
        op = op.substr(2, op.size() - 4);  // u_dot_v -> dot
    SddmmSpec spec;
    spec.lhs = OperandTarget::Src;
    spec.rhs = OperandTarget::Dst;
    if (op == "dot") spec.op = BinaryOp::Dot;
    else if (op == "add") spec.op = BinaryOp::Add;
    else if (op == "sub") spec.op = BinaryOp::Sub;
    else if (op == "mul") spec.op = BinaryOp::Mul;
    else if (op == "div") spec.op = BinaryOp::Div;
    else
        throw gsparse::Error("op '" + text + "' is not benchmarked: the harness runs dot, add, sub, mul, div (or " +
                             "u_dot_v, u_add_v, ...) with lhs = source node and rhs = destination node features");
    return spec;
}

int64_t sddmm_out_cols(const SddmmSpec &spec, int64_t feat) { return spec.op == BinaryOp::Dot ? 1 : feat; }

double sddmm_tolerance(const SddmmSpec &spec) { return spec.op == BinaryOp::Dot ? 1e-4 : 1e-6; }

CaseBytes sddmm_bytes(int64_t num_dst, int64_t num_src, int64_t nnz, int64_t feat, const SddmmSpec &spec) {
    CaseBytes b;
    const double f = static_cast<double>(feat), e = static_cast<double>(nnz);
    const double out = 4.0 * e * static_cast<double>(sddmm_out_cols(spec, feat));
    b.index = 4.0 * static_cast<double>(num_dst + 1) + 4.0 * e;
    b.compulsory = b.index + 4.0 * f * static_cast<double>(num_src + num_dst) + out;
    b.gathered = b.index + 8.0 * e * f + out;
    return b;
}

SampledEdges::SampledEdges(const Graph &g, int64_t max_edges, uint64_t seed) {
    const CSR &csr = g.csr();
    const int64_t nnz = csr.nnz();
    if (nnz == 0 || max_edges <= 0) return;
    if (nnz <= max_edges) {
        all = true;
        pos.resize(static_cast<size_t>(nnz));
        for (int64_t p = 0; p < nnz; ++p) pos[static_cast<size_t>(p)] = p;
    } else {
        int64_t longest = 0;
        for (int64_t v = 1; v < csr.num_rows; ++v)
            if (csr.row_length(v) > csr.row_length(longest)) longest = v;
        pos.push_back(0);
        pos.push_back(nnz - 1);
        for (int64_t p = csr.row_ptr[longest]; p < csr.row_ptr[longest + 1] && p < csr.row_ptr[longest] + 32; ++p)
            pos.push_back(p);
        for (uint64_t k = 0; static_cast<int64_t>(pos.size()) < max_edges && k < 16 * static_cast<uint64_t>(max_edges);
             ++k)
            pos.push_back(static_cast<int64_t>(mix64(seed + k) % static_cast<uint64_t>(nnz)));
        std::sort(pos.begin(), pos.end());
        pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    }
    eid.resize(pos.size());
    src.resize(pos.size());
    dst.resize(pos.size());
    for (size_t i = 0; i < pos.size(); ++i) {
        const int64_t p = pos[i];
        // The row holding position p: the last v with row_ptr[v] <= p.
        const auto it = std::upper_bound(csr.row_ptr.begin(), csr.row_ptr.end(), static_cast<index_t>(p));
        dst[i] = static_cast<int64_t>(it - csr.row_ptr.begin()) - 1;
        src[i] = csr.col_idx[static_cast<size_t>(p)];
        eid[i] = csr.edge_id(p);
    }
}

std::vector<double> sddmm_reference(const SampledEdges &s, const SddmmSpec &spec, int64_t feat, uint64_t x_seed,
                                    uint64_t y_seed) {
    const int64_t cols = sddmm_out_cols(spec, feat);
    std::vector<double> ref(s.size() * static_cast<size_t>(cols), 0.0);
    auto work = [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            double *out = &ref[i * static_cast<size_t>(cols)];
            double acc = 0;
            for (int64_t f = 0; f < feat; ++f) {
                const double x = feature_value(x_seed, feat, s.src[i], f);
                const double y = feature_value(y_seed, feat, s.dst[i], f);
                switch (spec.op) {
                    case BinaryOp::Dot: acc += x * y; break;
                    case BinaryOp::Add: out[f] = static_cast<float>(x) + static_cast<float>(y); break;
                    case BinaryOp::Sub: out[f] = static_cast<float>(x) - static_cast<float>(y); break;
                    case BinaryOp::Mul: out[f] = static_cast<float>(x) * static_cast<float>(y); break;
                    case BinaryOp::Div: out[f] = static_cast<float>(x) / static_cast<float>(y); break;
                    default: throw gsparse::Error("sddmm_reference: unsupported op");
                }
            }
            if (spec.op == BinaryOp::Dot) out[0] = acc;
        }
    };
    const size_t n = s.size();
    const size_t threads = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 32));
    if (n * static_cast<size_t>(feat) < (size_t(1) << 16) || threads == 1) {
        work(0, n);
    } else {
        std::vector<std::thread> pool;
        const size_t step = (n + threads - 1) / threads;
        for (size_t b = 0; b < n; b += step) pool.emplace_back(work, b, std::min(n, b + step));
        for (auto &t : pool) t.join();
    }
    return ref;
}

namespace {
std::vector<int64_t> flat_indices(const std::vector<int64_t> &rows, int64_t cols) {
    std::vector<int64_t> idx;
    idx.reserve(rows.size() * static_cast<size_t>(cols));
    for (int64_t r : rows)
        for (int64_t c = 0; c < cols; ++c) idx.push_back(r * cols + c);
    return idx;
}
}  // namespace

std::vector<int64_t> sample_indices_by_edge_id(const SampledEdges &s, int64_t out_cols) {
    return flat_indices(s.eid, out_cols);
}

std::vector<int64_t> sample_indices_by_position(const SampledEdges &s, int64_t out_cols) {
    return flat_indices(s.pos, out_cols);
}

}  // namespace gsparse::bench
