#include "dsl/operands.h"

#include <cctype>
#include <cstdint>

#include "core/error.h"

namespace gsparse::dsl {

const char *at_name(At at) {
    switch (at) {
    case At::Src: return "source";
    case At::Dst: return "destination";
    case At::Edge: return "edge";
    }
    return "?";
}

std::vector<OperandInfo> operand_infos(const std::vector<Operand> &operands) {
    std::vector<OperandInfo> info;
    for (const Operand &o : operands) info.push_back({o.name, o.at, o.broadcast});
    return info;
}

std::string Site::str() const { return file.empty() ? "" : file + ":" + std::to_string(line); }

std::string Site::note(const char *what) const {
    return file.empty() ? "" : std::string(" (") + what + " " + str() + ")";
}

void check_identifier(const std::string &name, const char *what) {
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) fail<ShapeError>(what, " '", name, "' is not a C identifier");
}

const Operand &declare_operand(std::vector<Operand> &operands, const std::string &program, const std::string &name,
                               At at, bool broadcast, Halide::Type type, Site site) {
    check_identifier(name, "operand name");
    for (const Operand &o : operands)
        if (o.name == name)
            fail<ShapeError>("program ", program, ": operand '", name, "' is declared twice", site.note("at"),
                             o.site.note("first at"));
    operands.push_back({name, at, broadcast, Halide::ImageParam(type, 2, program + "_" + name), std::move(site)});
    return operands.back();
}

void check_tensor(const std::string &program, const std::string &what, const Tensor &t, Device device, DType dtype,
                  int64_t rows, int64_t width) {
    if (!t.defined()) fail<ShapeError>("user program ", program, ": ", what, " is undefined");
    if (t.device() != device)
        fail<ShapeError>("user program ", program, ": ", what, " is on ", device_name(t.device()),
                         " but the program was compiled for ", device_name(device));
    if (t.dtype() != dtype)
        fail<ShapeError>("user program ", program, ": ", what, " has dtype ", dtype_name(t.dtype()), ", expected ",
                         dtype_name(dtype));
    if (t.dim() != 2 || t.size(0) != rows || t.size(1) != width)
        fail<ShapeError>("user program ", program, ": ", what, " ", t.str(), " must be [", rows, ", ", width, "]");
}

std::vector<const Tensor *> match_operands(const std::string &program, const std::vector<Operand> &declared,
                                           const std::map<std::string, Tensor> &given, Device device, DType dtype,
                                           int features, const int64_t (&rows_of)[3]) {
    for (const auto &entry : given) {
        bool known = false;
        for (const Operand &o : declared) known = known || o.name == entry.first;
        if (!known) fail<ShapeError>("user program ", program, " has no operand '", entry.first, "'");
    }
    std::vector<const Tensor *> tensors;
    for (const Operand &o : declared) {
        auto it = given.find(o.name);
        if (it == given.end())
            fail<ShapeError>("user program ", program, ": operand '", o.name, "' (read at the ", at_name(o.at),
                             ") is not given", o.site.note("declared at"));
        check_tensor(program, "operand '" + o.name + "'" + o.site.note("declared at"), it->second, device, dtype,
                     rows_of[static_cast<int>(o.at)], o.broadcast ? 1 : features);
        tensors.push_back(&it->second);
    }
    return tensors;
}

void constrain_operand_rows(const std::vector<Operand> &operands, int features, int vector) {
    for (const Operand &o : operands) {
        Halide::ImageParam p = o.param;
        const int width = o.broadcast ? 1 : features;
        if (vector > 0) {
            p.dim(0).set_min(0).set_extent(width);
            p.dim(1).set_min(0).set_stride(width);
            p.set_host_alignment(o.broadcast ? p.type().bytes() : vector * p.type().bytes());
        } else {
            p.dim(0).set_min(Halide::Expr()).set_extent(Halide::Expr());
            p.dim(1).set_min(Halide::Expr()).set_stride(Halide::Expr());
            p.set_host_alignment(p.type().bytes());
        }
    }
}

void check_row_alignment(const std::string &program, const std::string &what, const Tensor &t, int bytes,
                         const std::string &schedule) {
    if (bytes > 0 && reinterpret_cast<uintptr_t>(t.data()) % static_cast<uintptr_t>(bytes) != 0)
        fail<ShapeError>("user program ", program, ": ", what, " ", t.str(), " is not ", bytes,
                         "-byte aligned, which its schedule ", schedule, " assumes (aligned_rows) for vector accesses");
}

}  // namespace gsparse::dsl
