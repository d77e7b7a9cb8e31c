// Format dispatch by extension and the shared file helpers of the loaders and writers.
#include "graph/io.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "graph/convert.h"
#include "graph/io_util.h"

namespace gsparse {
namespace io_detail {

InFile::InFile(const std::string &path) : path_(path) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) fail<FormatError>("cannot open '", path, "' for reading: ", std::strerror(errno));
    struct stat st;
    if (fstat(fileno(f_), &st) != 0) {
        const int err = errno;
        std::fclose(f_);
        fail<FormatError>("cannot stat '", path, "': ", std::strerror(err));
    }
    if (S_ISDIR(st.st_mode)) {
        std::fclose(f_);
        fail<FormatError>("cannot read '", path, "': it is a directory");
    }
    if (S_ISREG(st.st_mode)) regular_size_ = static_cast<int64_t>(st.st_size);
}

InFile::~InFile() { std::fclose(f_); }

size_t InFile::read_some(void *dst, size_t n) {
    const size_t got = n > 0 ? std::fread(dst, 1, n, f_) : 0;
    if (got < n && std::ferror(f_)) fail<FormatError>("cannot read '", path_, "': ", std::strerror(errno));
    return got;
}

void InFile::read_exact(void *dst, size_t n, uint64_t offset, const char *what) {
    if (read_some(dst, n) != n)
        fail<FormatError>(path_, ": cannot read ", n, " bytes of ", what, " at byte offset ", offset,
                          " (the file ended early)");
}

std::string read_file(const std::string &path) {
    InFile in(path);
    std::string data;
    size_t used = 0;
    // One byte more than a regular file's size, so that an unchanged file is read by a single call
    // and its end is seen; other files (and files that grow meanwhile) are read in chunks.
    size_t chunk = in.regular_size() >= 0 ? static_cast<size_t>(in.regular_size()) + 1 : (size_t{1} << 20);
    while (true) {
        data.resize(used + chunk);
        const size_t got = in.read_some(&data[used], chunk);
        used += got;
        if (got < chunk) break;
        chunk = std::max<size_t>(used, size_t{1} << 20);
    }
    data.resize(used);
    return data;
}

std::string lower_extension(const std::string &path) {
    const size_t slash = path.find_last_of('/');
    const size_t dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = path.substr(dot);
    for (char &c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

std::string quote_token(std::string_view tok) {
    std::string s = "'";
    const size_t n = std::min<size_t>(tok.size(), 32);
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = static_cast<unsigned char>(tok[i]);
        s += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    }
    if (tok.size() > n) s += "...";
    s += "'";
    return s;
}

void check_values_size(const CSR &csr, const std::vector<float> &values, const std::string &what) {
    if (!values.empty() && static_cast<int64_t>(values.size()) != csr.nnz())
        fail<GraphError>(what, ": values has ", values.size(), " entries, expected one per edge (nnz = ", csr.nnz(),
                         ")");
}

OutFile::OutFile(const std::string &path) : path_(path), buf_(1u << 20) {
    f_ = std::fopen(path.c_str(), "wb");
    if (!f_) fail<Error>("cannot open '", path, "' for writing: ", std::strerror(errno));
}

OutFile::~OutFile() {
    if (f_) std::fclose(f_);
}

LoadedGraph finish_text_load(std::string &text, COO &coo, std::vector<float> &values) {
    std::string().swap(text);  // release the text before building the CSR
    LoadedGraph out;
    out.csr = coo_to_csr(coo);
    coo = COO();
    sort_rows(out.csr);
    out.values = std::move(values);
    return out;
}

void OutFile::flush() {
    if (used_ == 0) return;
    if (std::fwrite(buf_.data(), 1, used_, f_) != used_)
        fail<Error>("cannot write '", path_, "': ", std::strerror(errno));
    used_ = 0;
}

void OutFile::write_bytes(const void *data, size_t n) {
    flush();
    if (n > 0 && std::fwrite(data, 1, n, f_) != n) fail<Error>("cannot write '", path_, "': ", std::strerror(errno));
}

void OutFile::close() {
    flush();
    std::FILE *f = f_;
    f_ = nullptr;
    if (std::fclose(f) != 0) fail<Error>("cannot write '", path_, "': ", std::strerror(errno));
}

}  // namespace io_detail

LoadedGraph load_graph(const std::string &path) {
    const std::string ext = io_detail::lower_extension(path);
    if (ext == ".mtx") return load_matrix_market(path);
    if (ext == ".gcsr") return load_binary_csr(path);
    return load_edge_list(path);
}

void save_graph(const std::string &path, const CSR &csr, const std::vector<float> &values) {
    const std::string ext = io_detail::lower_extension(path);
    if (ext == ".mtx") return save_matrix_market(path, csr, values);
    if (ext == ".gcsr") return save_binary_csr(path, csr, values);
    return save_edge_list(path, csr, values);
}

}  // namespace gsparse
