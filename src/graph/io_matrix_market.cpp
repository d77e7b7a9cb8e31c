// Matrix Market coordinate files: pattern / real / integer, general / symmetric.
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

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

enum class Field { Pattern, Real, Integer };

int64_t parse_size(const std::string &path, int64_t line_no, std::string_view tok, const char *name) {
    int64_t v = 0;
    const ParseStatus st = parse_int(tok, v);
    if (st == ParseStatus::NotNumber)
        fail<FormatError>(path, ":", line_no, ": ", name, " ", quote_token(tok), " on the size line is not an integer");
    if (st == ParseStatus::OutOfRange || v > kIndexMax)
        fail<FormatError>(path, ":", line_no, ": ", name, " = ", std::string(tok), " exceeds INT32_MAX (", kIndexMax,
                          ")");
    if (v < 0) fail<FormatError>(path, ":", line_no, ": ", name, " = ", v, " is negative");
    return v;
}

index_t parse_index(const std::string &path, int64_t line_no, std::string_view tok, const char *name, int64_t n) {
    int64_t v = 0;
    const ParseStatus st = parse_int(tok, v);
    if (st == ParseStatus::NotNumber)
        fail<FormatError>(path, ":", line_no, ": ", name, " index ", quote_token(tok), " is not an integer");
    if (st == ParseStatus::OutOfRange || v < 1 || v > n)
        fail<GraphError>(path, ":", line_no, ": ", name, " index ", std::string(tok.substr(0, 32)),
                         " is out of range [1, ", n, "] (Matrix Market indices are 1-based)");
    return static_cast<index_t>(v - 1);
}

float parse_value(const std::string &path, int64_t line_no, std::string_view tok, Field field) {
    if (field == Field::Integer) {
        int64_t v = 0;
        const ParseStatus st = parse_int(tok, v);
        if (st == ParseStatus::NotNumber)
            fail<FormatError>(path, ":", line_no, ": value ", quote_token(tok), " is not an integer (integer field)");
        if (st == ParseStatus::OutOfRange)
            fail<FormatError>(path, ":", line_no, ": value ", quote_token(tok), " is out of the int64 range");
        return static_cast<float>(v);
    }
    float v = 0;
    const ParseStatus st = parse_float(tok, v);
    if (st == ParseStatus::NotNumber)
        fail<FormatError>(path, ":", line_no, ": value ", quote_token(tok), " is not a real number");
    if (st == ParseStatus::OutOfRange)
        fail<FormatError>(path, ":", line_no, ": value ", quote_token(tok), " is out of the double range");
    return v;
}

}  // namespace

LoadedGraph load_matrix_market(const std::string &path) {
    std::string data = read_file(path);
    LineCursor lines(data.data(), data.data() + data.size());
    std::string_view line;
    std::string_view tok[6];

    // Banner.
    if (!lines.next(line)) fail<FormatError>(path, ": empty file (expected a %%MatrixMarket banner on line 1)");
    int nt = split_tokens(line, tok, 6);
    if (nt == 0 || !iequals(tok[0], "%%MatrixMarket"))
        fail<FormatError>(path, ":1: missing %%MatrixMarket banner (line 1 starts with ",
                          quote_token(nt ? tok[0] : line), ")");
    if (nt != 5)
        fail<FormatError>(path, ":1: the banner has ", nt,
                          " fields, expected 5: %%MatrixMarket matrix coordinate <field> <symmetry>");
    if (!iequals(tok[1], "matrix"))
        fail<FormatError>(path, ":1: unsupported object ", quote_token(tok[1]), " (only 'matrix' is supported)");
    if (iequals(tok[2], "array"))
        fail<FormatError>(path, ":1: unsupported format 'array' (dense); only sparse 'coordinate' files are supported");
    if (!iequals(tok[2], "coordinate"))
        fail<FormatError>(path, ":1: invalid format ", quote_token(tok[2]), " (expected 'coordinate')");
    Field field;
    if (iequals(tok[3], "pattern"))
        field = Field::Pattern;
    else if (iequals(tok[3], "real") || iequals(tok[3], "double"))
        field = Field::Real;
    else if (iequals(tok[3], "integer"))
        field = Field::Integer;
    else if (iequals(tok[3], "complex"))
        fail<FormatError>(path, ":1: unsupported field 'complex' (supported: pattern, real, integer)");
    else
        fail<FormatError>(path, ":1: invalid field ", quote_token(tok[3]), " (supported: pattern, real, integer)");
    bool symmetric;
    if (iequals(tok[4], "general"))
        symmetric = false;
    else if (iequals(tok[4], "symmetric"))
        symmetric = true;
    else if (iequals(tok[4], "hermitian") || iequals(tok[4], "skew-symmetric"))
        fail<FormatError>(path, ":1: unsupported symmetry ", quote_token(tok[4]), " (supported: general, symmetric)");
    else
        fail<FormatError>(path, ":1: invalid symmetry ", quote_token(tok[4]), " (supported: general, symmetric)");

    // Size line: the first line that is neither a comment nor blank.
    bool have_size = false;
    while (lines.next(line)) {
        const char c = first_char(line);
        if (c == '\n' || c == '%') continue;
        have_size = true;
        break;
    }
    if (!have_size) fail<FormatError>(path, ": missing size line 'rows cols entries' after the banner");
    const int64_t size_line = lines.line_no();
    nt = split_tokens(line, tok, 6);
    if (nt != 3)
        fail<FormatError>(path, ":", size_line, ": the size line has ", nt,
                          " values, expected 3 (rows cols entries)");
    const int64_t num_rows = parse_size(path, size_line, tok[0], "rows");
    const int64_t num_cols = parse_size(path, size_line, tok[1], "cols");
    const int64_t declared = parse_size(path, size_line, tok[2], "entries");
    if (symmetric && num_rows != num_cols)
        fail<FormatError>(path, ":", size_line, ": a symmetric matrix must be square, but it is ", num_rows, " x ",
                          num_cols);

    // Entries.
    const int expected_tokens = field == Field::Pattern ? 2 : 3;
    COO coo;
    coo.num_rows = num_rows;
    coo.num_cols = num_cols;
    std::vector<float> values;
    // The remaining line count bounds what an absurd declared count reserves.
    const int64_t cap = std::min<int64_t>(declared, count_lines(data)) * (symmetric ? 2 : 1);
    coo.row.reserve(static_cast<size_t>(cap));
    coo.col.reserve(static_cast<size_t>(cap));
    if (field != Field::Pattern) values.reserve(static_cast<size_t>(cap));

    int64_t count = 0;
    while (lines.next(line)) {
        nt = split_tokens(line, tok, 4);
        if (nt == 0 || tok[0][0] == '%') continue;
        const int64_t ln = lines.line_no();
        if (count == declared)
            fail<FormatError>(path, ":", ln, ": more entries than the ", declared, " declared on line ", size_line);
        if (nt != expected_tokens)
            fail<FormatError>(path, ":", ln, ": entry has ", nt, " values, expected ", expected_tokens, " (",
                              field == Field::Pattern ? "row col" : "row col value", ")");
        const index_t r = parse_index(path, ln, tok[0], "row", num_rows);
        const index_t c = parse_index(path, ln, tok[1], "column", num_cols);
        const float v = field == Field::Pattern ? 0.0f : parse_value(path, ln, tok[2], field);
        const bool both = symmetric && r != c;
        if (static_cast<int64_t>(coo.row.size()) + (both ? 2 : 1) > kIndexMax)
            fail<GraphError>(path, ":", ln, ": the graph has more than INT32_MAX (", kIndexMax, ") edges");
        coo.row.push_back(r);
        coo.col.push_back(c);
        if (field != Field::Pattern) values.push_back(v);
        if (both) {
            coo.row.push_back(c);
            coo.col.push_back(r);
            if (field != Field::Pattern) values.push_back(v);
        }
        count++;
    }
    if (count < declared)
        fail<FormatError>(path, ": the file ends after ", count, " of the ", declared, " entries declared on line ",
                          size_line, " (truncated file?)");

    return finish_text_load(data, coo, values);
}

void save_matrix_market(const std::string &path, const CSR &csr, const std::vector<float> &values) {
    validate(csr, "save_matrix_market: CSR");
    check_values_size(csr, values, "save_matrix_market");
    const COO coo = coo_in_edge_order(csr);
    const bool has_values = !values.empty();
    OutFile out(path);
    out.text(has_values ? "%%MatrixMarket matrix coordinate real general\n"
                        : "%%MatrixMarket matrix coordinate pattern general\n");
    out.text("% written by gsparse; entry (r, c) is the edge c -> r, listed in edge-id order\n");
    out.integer(csr.num_rows);
    out.ch(' ');
    out.integer(csr.num_cols);
    out.ch(' ');
    out.integer(csr.nnz());
    out.ch('\n');
    const int64_t nnz = coo.nnz();
    for (int64_t e = 0; e < nnz; e++) {
        out.integer(static_cast<int64_t>(coo.row[e]) + 1);
        out.ch(' ');
        out.integer(static_cast<int64_t>(coo.col[e]) + 1);
        if (has_values) {
            out.ch(' ');
            out.real(values[e]);
        }
        out.ch('\n');
    }
    out.close();
}

}  // namespace gsparse
