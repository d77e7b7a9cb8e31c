// Edge lists: "src dst [weight]" lines, 0-based ids, '#' / '%' comments, blank lines allowed.
// A "#!gsparse num_dst=R num_src=C" comment before the first edge gives the node counts.
#include <algorithm>
#include <limits>

#include "core/error.h"
#include "graph/convert.h"
#include "graph/io.h"
#include "graph/io_util.h"
#include "graph/validate.h"

namespace gsparse {
namespace {

using namespace io_detail;

constexpr int64_t kIndexMax = std::numeric_limits<index_t>::max();
constexpr std::string_view kHeaderTag = "#!gsparse";

/// Parses "#!gsparse num_dst=R num_src=C".
void parse_header(const std::string &path, int64_t line_no, std::string_view line, int64_t &num_dst,
                  int64_t &num_src) {
    std::string_view tok[4];
    const int nt = split_tokens(line, tok, 4);
    num_dst = num_src = -1;
    for (int i = 1; i < std::min(nt, 4); i++) {
        const size_t eq = tok[i].find('=');
        const std::string_view key = tok[i].substr(0, eq);
        int64_t *slot = key == "num_dst" ? &num_dst : key == "num_src" ? &num_src : nullptr;
        if (eq == std::string_view::npos || !slot)
            fail<FormatError>(path, ":", line_no, ": invalid header field ", quote_token(tok[i]),
                              " (expected '#!gsparse num_dst=<count> num_src=<count>')");
        const std::string_view val = tok[i].substr(eq + 1);
        int64_t v = 0;
        const ParseStatus st = parse_int(val, v);
        if (st == ParseStatus::NotNumber)
            fail<FormatError>(path, ":", line_no, ": header ", std::string(key), " ", quote_token(val),
                              " is not an integer");
        if (st == ParseStatus::OutOfRange || v < 0 || v > kIndexMax)
            fail<FormatError>(path, ":", line_no, ": header ", std::string(key), " = ", std::string(val.substr(0, 32)),
                              " is out of range [0, INT32_MAX]");
        *slot = v;
    }
    if (nt != 3 || num_dst < 0 || num_src < 0)
        fail<FormatError>(path, ":", line_no,
                          ": malformed header (expected '#!gsparse num_dst=<count> num_src=<count>')");
}

/// A node id: an integer in [0, n) when n >= 0, else in [0, INT32_MAX).
index_t parse_node(const std::string &path, int64_t line_no, std::string_view tok, const char *name, int64_t n,
                   bool n_explicit) {
    int64_t v = 0;
    const ParseStatus st = parse_int(tok, v);
    if (st == ParseStatus::NotNumber)
        fail<FormatError>(path, ":", line_no, ": ", name, " id ", quote_token(tok), " is not an integer");
    if (st == ParseStatus::OutOfRange || v < 0 || v >= n) {
        if (n_explicit)
            fail<GraphError>(path, ":", line_no, ": ", name, " id ", std::string(tok.substr(0, 32)),
                             " is out of range [0, ", n, ") (the graph has ", n, " nodes)");
        fail<GraphError>(path, ":", line_no, ": ", name, " id ", std::string(tok.substr(0, 32)),
                         " is out of range [0, INT32_MAX) (ids are 0-based)");
    }
    return static_cast<index_t>(v);
}

}  // namespace

LoadedGraph load_edge_list(const std::string &path, std::optional<int64_t> num_nodes) {
    if (num_nodes && (*num_nodes < 0 || *num_nodes > kIndexMax))
        fail<GraphError>(path, ": num_nodes = ", *num_nodes, " is out of range [0, INT32_MAX]");
    std::string data = read_file(path);
    LineCursor lines(data.data(), data.data() + data.size());

    int64_t num_dst = num_nodes ? *num_nodes : -1;
    int64_t num_src = num_dst;
    bool counts_known = num_nodes.has_value();
    bool header_seen = false;
    int weighted = -1;
    int64_t first_edge_line = 0;

    COO coo;
    std::vector<float> values;
    const int64_t cap = count_lines(data);
    coo.row.reserve(static_cast<size_t>(cap));
    coo.col.reserve(static_cast<size_t>(cap));
    index_t max_id = -1;

    std::string_view line;
    std::string_view tok[4];
    while (lines.next(line)) {
        const char c = first_char(line);
        if (c == '\n') continue;
        const int64_t ln = lines.line_no();
        if (c == '#' || c == '%') {
            const size_t start = line.find_first_not_of(" \t\r\v\f");
            if (line.substr(start, kHeaderTag.size()) == kHeaderTag) {
                if (header_seen) fail<FormatError>(path, ":", ln, ": a second #!gsparse header");
                if (weighted >= 0)
                    fail<FormatError>(path, ":", ln, ": the #!gsparse header must come before the first edge (line ",
                                      first_edge_line, ")");
                int64_t hd = 0, hs = 0;
                parse_header(path, ln, line.substr(start), hd, hs);
                header_seen = true;
                if (!num_nodes) {
                    num_dst = hd;
                    num_src = hs;
                    counts_known = true;
                }
            }
            continue;
        }
        const int nt = split_tokens(line, tok, 4);
        if (nt < 2 || nt > 3)
            fail<FormatError>(path, ":", ln, ": line has ", nt, " values, expected 'src dst' or 'src dst weight'");
        const int w = nt == 3 ? 1 : 0;
        if (weighted < 0) {
            weighted = w;
            first_edge_line = ln;
        } else if (w != weighted) {
            fail<FormatError>(path, ":", ln, ": line has ", nt, " values but line ", first_edge_line, " has ",
                              weighted ? 3 : 2, " (weighted and unweighted edges must not be mixed)");
        }
        const index_t u = parse_node(path, ln, tok[0], "source", counts_known ? num_src : kIndexMax, counts_known);
        const index_t v = parse_node(path, ln, tok[1], "destination", counts_known ? num_dst : kIndexMax, counts_known);
        if (w) {
            if (values.capacity() == 0) values.reserve(static_cast<size_t>(cap));
            float x = 0;
            const ParseStatus st = parse_float(tok[2], x);
            if (st == ParseStatus::NotNumber)
                fail<FormatError>(path, ":", ln, ": weight ", quote_token(tok[2]), " is not a real number");
            if (st == ParseStatus::OutOfRange)
                fail<FormatError>(path, ":", ln, ": weight ", quote_token(tok[2]), " is out of the double range");
            values.push_back(x);
        }
        if (static_cast<int64_t>(coo.row.size()) >= kIndexMax)
            fail<GraphError>(path, ":", ln, ": the graph has more than INT32_MAX (", kIndexMax, ") edges");
        coo.row.push_back(v);
        coo.col.push_back(u);
        max_id = std::max(max_id, std::max(u, v));
    }
    if (!counts_known) num_dst = num_src = static_cast<int64_t>(max_id) + 1;
    coo.num_rows = num_dst;
    coo.num_cols = num_src;

    return finish_text_load(data, coo, values);
}

void save_edge_list(const std::string &path, const CSR &csr, const std::vector<float> &values) {
    validate(csr, "save_edge_list: CSR");
    check_values_size(csr, values, "save_edge_list");
    const COO coo = coo_in_edge_order(csr);
    const bool has_values = !values.empty();
    OutFile out(path);
    out.text("#!gsparse num_dst=");
    out.integer(csr.num_rows);
    out.text(" num_src=");
    out.integer(csr.num_cols);
    out.text(has_values ? "\n# src dst weight (0-based), one edge per line in edge-id order\n"
                        : "\n# src dst (0-based), one edge per line in edge-id order\n");
    const int64_t nnz = coo.nnz();
    for (int64_t e = 0; e < nnz; e++) {
        out.integer(coo.col[e]);
        out.ch(' ');
        out.integer(coo.row[e]);
        if (has_values) {
            out.ch(' ');
            out.real(values[e]);
        }
        out.ch('\n');
    }
    out.close();
}

}  // namespace gsparse
