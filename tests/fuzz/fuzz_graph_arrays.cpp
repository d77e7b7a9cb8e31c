// Fuzz target: graph construction from caller arrays, the validation behind the Python Graph
// constructors (gsparse.Graph(edge_index) -> Graph::from_coo, Graph.from_csr -> from_csr_arrays)
// and the C++ API's from_edges. The input is decoded as a little header and int32 arrays:
//   byte 0: which constructor; bytes 1-12: three int32 counts; then int32 array entries (short
//   inputs are padded with zeros). Accepted graphs get the same checks as loaded ones.
#include <algorithm>

#include "graph_properties.h"

namespace {

struct Reader {
    const uint8_t *p;
    size_t n;
    int32_t next() {
        int32_t v = 0;
        const size_t k = std::min<size_t>(n, 4);
        std::memcpy(&v, p, k);
        p += k;
        n -= k;
        return v;
    }
    std::vector<gsparse::index_t> array(int64_t count) {
        std::vector<gsparse::index_t> a(static_cast<size_t>(std::max<int64_t>(count, 0)));
        for (auto &x : a) x = next();
        return a;
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace gsparse;
    using namespace gsparse::fuzz;
    if (size < 1) return 0;
    Reader in{data + 1, size - 1};
    const int which = data[0] % 3;
    const int64_t a = in.next(), b = in.next(), c = in.next();
    // Counts the arrays are sized by stay small; others may be anything.
    auto small = [](int64_t v) { return v >= -4 && v <= kMaxNodes; };
    Graph g;
    try {
        if (which == 0) {  // from_coo: num_dst = a, num_src = b, c edges
            if (!small(c) || std::max(a, b) > kMaxNodes) return -1;
            COO coo;
            coo.num_rows = a;
            coo.num_cols = b;
            coo.row = in.array(c);
            coo.col = in.array(c);
            g = Graph::from_coo(coo);
        } else if (which == 1) {  // from_csr_arrays: a rows, b cols, c edges, edge ids when the last bit is set
            if (!small(a) || !small(c) || b > kMaxNodes) return -1;
            const bool ids = size % 2;
            std::vector<index_t> row_ptr = in.array(a + 1), col_idx = in.array(c), edge_ids = in.array(ids ? c : 0);
            if (a < 0) row_ptr.assign(1, 0);  // the caller guarantees num_rows + 1 entries; none exist for a < 0
            g = Graph::from_csr_arrays(a, b, row_ptr.data(), col_idx.data(), ids ? edge_ids.data() : nullptr, c);
        } else {  // from_edges: a nodes, c edges
            if (a > kMaxNodes || !small(c)) return -1;
            std::vector<index_t> src = in.array(c), dst = in.array(c);
            g = Graph::from_edges(a, src, dst);
        }
    } catch (const GraphError &) {
        return 0;
    }
    try {
        check_derived_layouts(g);
        check_round_trips(g);
    } catch (const Error &e) {
        FUZZ_CHECK(false, "an accepted graph failed a later step: %s", e.what());
    }
    return 0;
}
