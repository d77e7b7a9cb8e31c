#include "halide_ext/kernel_register_limit.h"

#include <cstring>
#include <set>
#include <vector>

namespace gsparse::ext {

namespace {

using namespace Halide::Internal;

bool is_kernel_source(const std::string &name) { return ends_with(name, "_gpu_source_kernels"); }

/// The kernel-source buffers a module refers to: its own buffers and the images of the Variables in
/// its functions' bodies (one handle per buffer), its submodules' too.
class FindKernelSources : public IRVisitor {
public:
    std::vector<Halide::Buffer<>> found;

    void add(const Halide::Buffer<> &b) {
        if (b.defined() && is_kernel_source(b.name()) && seen_.insert(b.data()).second) found.push_back(b);
    }

    void collect(const Halide::Module &m) {
        for (const auto &b : m.buffers()) add(b);
        for (const auto &f : m.functions()) f.body.accept(this);
        for (const auto &s : m.submodules()) collect(s);
    }

private:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (op->image.defined()) add(op->image);
    }
    std::set<const void *> seen_;
};

std::vector<Halide::Buffer<>> kernel_sources(const Halide::Module &m) {
    FindKernelSources f;
    f.collect(m);
    return f.found;
}

/// The text of a source buffer: up to its first null byte.
std::string text_of(const Halide::Buffer<> &b) {
    const char *data = static_cast<const char *>(b.data());
    const size_t n = b.size_in_bytes();
    return std::string(data, strnlen(data, n));
}

/// Whether line [begin, end) of s holds only a comment (spaces and tabs, then "//").
bool comment_line(const std::string &s, size_t begin, size_t end) {
    size_t i = begin;
    while (i < end && (s[i] == ' ' || s[i] == '\t')) ++i;
    return i + 1 < end && s[i] == '/' && s[i + 1] == '/';
}

}  // namespace

std::string ptx_with_register_limit(const std::string &ptx, int max_registers, int *entries) {
    // Full-line comments out, then the directive after every entry's parameter list.
    std::string text;
    text.reserve(ptx.size());
    for (size_t at = 0; at < ptx.size();) {
        size_t end = ptx.find('\n', at);
        end = end == std::string::npos ? ptx.size() : end + 1;
        if (!comment_line(ptx, at, end)) text.append(ptx, at, end - at);
        at = end;
    }
    const std::string directive = "\n.maxnreg " + std::to_string(max_registers);
    int n = 0;
    for (size_t at = text.find(".entry "); at != std::string::npos; at = text.find(".entry ", at + 1)) {
        const size_t open = text.find('(', at), close = open == std::string::npos ? open : text.find(')', open);
        const size_t body = close == std::string::npos ? close : text.find('{', close);
        if (body == std::string::npos) throw Halide::CompileError("PTX entry without a parameter list and body");
        if (text.substr(close + 1, body - close - 1).find(".maxnreg") != std::string::npos)
            throw Halide::CompileError("PTX entry already limits its registers");
        text.insert(close + 1, directive);
        ++n;
    }
    if (entries) *entries = n;
    if (text.size() > ptx.size()) return "";
    text.append(ptx.size() - text.size(), ' ');
    return text;
}

int limit_kernel_registers(Halide::Module &m, int max_registers) {
    if (max_registers <= 0) return 0;
    int limited = 0;
    for (Halide::Buffer<> &b : kernel_sources(m)) {
        const std::string ptx = text_of(b);
        if (ptx.find(".entry ") == std::string::npos) continue;  // not PTX (another GPU API's source)
        int n = 0;
        const std::string edited = ptx_with_register_limit(ptx, max_registers, &n);
        if (edited.empty())
            throw Halide::CompileError("no room in the PTX of " + b.name() + " for its kernels' register limits");
        std::memcpy(b.data(), edited.data(), edited.size());
        limited += n;
    }
    return limited;
}

std::string embedded_ptx(const Halide::Module &m) {
    std::string all;
    for (const Halide::Buffer<> &b : kernel_sources(m)) all += text_of(b);
    return all;
}

}  // namespace gsparse::ext
