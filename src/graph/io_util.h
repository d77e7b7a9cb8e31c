// Internal helpers shared by the graph loaders and writers: whole-file reading, line iteration,
// tokenizing and number parsing over an in-memory buffer, and a buffered binary/text writer.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "graph/formats.h"
#include "graph/io.h"

namespace gsparse::io_detail {

/// A file opened for binary reading. Throws FormatError when it cannot be opened or is a directory.
class InFile {
public:
    explicit InFile(const std::string &path);
    ~InFile();
    InFile(const InFile &) = delete;
    InFile &operator=(const InFile &) = delete;

    /// Size in bytes of a regular file, or -1 for other kinds (pipes, devices).
    int64_t regular_size() const { return regular_size_; }
    /// Reads up to n bytes and returns how many were read (fewer only at the end of the file).
    size_t read_some(void *dst, size_t n);
    /// Reads exactly n bytes at the current position, which is byte `offset` of the file.
    void read_exact(void *dst, size_t n, uint64_t offset, const char *what);
    const std::string &path() const { return path_; }

private:
    std::string path_;
    std::FILE *f_ = nullptr;
    int64_t regular_size_ = -1;
};

/// The whole content of a file. Throws FormatError when it cannot be opened or read.
std::string read_file(const std::string &path);

/// Lower-cased extension of path including the dot (".mtx"), or "" when there is none.
std::string lower_extension(const std::string &path);

/// A token quoted for an error message: at most 32 characters, non-printable bytes shown as '?'.
std::string quote_token(std::string_view tok);

/// Throws GraphError unless values is empty or holds one value per edge of csr.
void check_values_size(const CSR &csr, const std::vector<float> &values, const std::string &what);

/// The end of a text loader: frees the file text, builds the CSR from the edges read (edge ids in
/// file order), sorts each row and attaches the values.
LoadedGraph finish_text_load(std::string &text, COO &coo, std::vector<float> &values);

/// Iterates over the lines of a buffer (split at '\n'; a trailing '\r' is left for the tokenizer,
/// which treats it as whitespace). line_no() is 1-based.
class LineCursor {
public:
    LineCursor(const char *begin, const char *end) : p_(begin), end_(end) {}
    bool next(std::string_view &line) {
        if (p_ >= end_) return false;
        const char *nl = static_cast<const char *>(std::memchr(p_, '\n', static_cast<size_t>(end_ - p_)));
        const char *le = nl ? nl : end_;
        line = std::string_view(p_, static_cast<size_t>(le - p_));
        p_ = nl ? nl + 1 : end_;
        ++line_no_;
        return true;
    }
    int64_t line_no() const { return line_no_; }

private:
    const char *p_;
    const char *end_;
    int64_t line_no_ = 0;
};

/// Number of lines in a buffer (newlines, plus one for an unterminated last line).
inline int64_t count_lines(const std::string &data) {
    int64_t n = 0;
    const char *p = data.data();
    const char *e = p + data.size();
    while (p < e) {
        const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(e - p)));
        n++;
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// Splits line into whitespace-separated tokens, storing at most max_tokens of them; returns the
/// total number of tokens (which may exceed max_tokens).
inline int split_tokens(std::string_view line, std::string_view *tokens, int max_tokens) {
    const char *p = line.data();
    const char *e = p + line.size();
    int n = 0;
    while (true) {
        while (p < e && is_space(*p)) p++;
        if (p >= e) return n;
        const char *b = p;
        while (p < e && !is_space(*p)) p++;
        if (n < max_tokens) tokens[n] = std::string_view(b, static_cast<size_t>(p - b));
        n++;
    }
}

/// The first non-blank character of line, or '\n' (which no line contains) for a blank line.
inline char first_char(std::string_view line) {
    for (char c : line)
        if (!is_space(c)) return c;
    return '\n';
}

/// Skips one leading '+' (from_chars does not accept it); false when nothing or another sign follows.
inline bool skip_plus_sign(const char *&p, const char *e) {
    if (p < e && *p == '+') {
        p++;
        if (p < e && *p == '-') return false;
    }
    return p < e;
}

enum class ParseStatus { Ok, NotNumber, OutOfRange };

/// Parses a whole token as a decimal integer (an optional sign, then digits).
inline ParseStatus parse_int(std::string_view tok, int64_t &out) {
    const char *p = tok.data();
    const char *e = p + tok.size();
    if (!skip_plus_sign(p, e)) return ParseStatus::NotNumber;
    auto r = std::from_chars(p, e, out);
    if (r.ec == std::errc::result_out_of_range) return ParseStatus::OutOfRange;
    if (r.ec != std::errc() || r.ptr != e) return ParseStatus::NotNumber;
    return ParseStatus::Ok;
}

/// Parses a whole token as a real number (decimal or scientific notation, inf, nan).
inline ParseStatus parse_real(std::string_view tok, double &out) {
    const char *p = tok.data();
    const char *e = p + tok.size();
    if (!skip_plus_sign(p, e)) return ParseStatus::NotNumber;
    auto r = std::from_chars(p, e, out, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) return ParseStatus::OutOfRange;
    if (r.ec != std::errc() || r.ptr != e) return ParseStatus::NotNumber;
    return ParseStatus::Ok;
}

/// Parses a whole token as a real number, correctly rounded to float. Values beyond the float range
/// (but within double's) become +-inf or +-0 / denormals as a double-to-float conversion gives.
inline ParseStatus parse_float(std::string_view tok, float &out) {
    const char *p = tok.data();
    const char *e = p + tok.size();
    if (!skip_plus_sign(p, e)) return ParseStatus::NotNumber;
    auto r = std::from_chars(p, e, out, std::chars_format::general);
    if (r.ec == std::errc() && r.ptr == e) return ParseStatus::Ok;
    if (r.ec == std::errc::result_out_of_range && r.ptr == e) {
        double d = 0;
        const ParseStatus st = parse_real(tok, d);
        if (st == ParseStatus::Ok) out = static_cast<float>(d);
        return st;
    }
    return ParseStatus::NotNumber;
}

/// A buffered writer over a FILE opened for writing; throws Error on any failure.
class OutFile {
public:
    explicit OutFile(const std::string &path);
    ~OutFile();
    OutFile(const OutFile &) = delete;
    OutFile &operator=(const OutFile &) = delete;

    /// Writes bytes directly (bypassing the text buffer after flushing it).
    void write_bytes(const void *data, size_t n);
    void text(std::string_view s) {
        reserve(s.size());
        std::memcpy(buf_.data() + used_, s.data(), s.size());
        used_ += s.size();
    }
    void ch(char c) {
        reserve(1);
        buf_[used_++] = c;
    }
    void integer(int64_t v) {
        reserve(24);
        auto r = std::to_chars(buf_.data() + used_, buf_.data() + buf_.size(), v);
        used_ = static_cast<size_t>(r.ptr - buf_.data());
    }
    /// The shortest decimal form that reads back as the same float.
    void real(float v) {
        reserve(64);
        auto r = std::to_chars(buf_.data() + used_, buf_.data() + buf_.size(), v);
        used_ = static_cast<size_t>(r.ptr - buf_.data());
    }
    /// Flushes and closes; throws on failure. Called by the writer when done.
    void close();

private:
    void reserve(size_t n) {
        if (used_ + n > buf_.size()) flush();
    }
    void flush();

    std::string path_;
    std::FILE *f_ = nullptr;
    std::vector<char> buf_;
    size_t used_ = 0;
};

}  // namespace gsparse::io_detail
