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
    for (const Operand &o : operands) info.push_back({o.name, o.at, o.broadcast, o.columns});
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

const Operand &declare_operand(std::vector<Operand> &operands, const std::string &program, const std::string &name,
                               At at, const Columns &columns, Halide::Type type, Site site) {
    if (columns.count < 1)
        fail<ShapeError>("program ", program, ": operand '", name, "' is declared with ", columns.count,
                         " columns (at least 1)", site.note("at"));
    if (!columns.at.defined() || !columns.at.type().is_int_or_uint())
        fail<ShapeError>("program ", program, ": operand '", name, "' needs the column each feature reads as an "
                         "integer expression of feature()", site.note("at"));
    declare_operand(operands, program, name, at, false, type, std::move(site));
    Operand &o = operands.back();
    o.columns = columns.count;
    o.column = Halide::cast(Halide::Int(32), columns.at);
    return o;
}

std::vector<int32_t> operand_columns(const std::string &program, const Operand &o, int features,
                                     const std::string &feature) {
    std::vector<int32_t> map;
    if (o.columns <= 0) return map;
    for (int f = 0; f < features; ++f) {
        const Halide::Expr c = Halide::Internal::simplify(Halide::Internal::substitute(feature, f, o.column));
        const int64_t *value = Halide::Internal::as_const_int(c);
        if (!value)
            fail<ShapeError>("program ", program, ": operand '", o.name, "'", o.site.note("declared at"),
                             " is read at column ", o.column, ", which is not a constant for feature ", f,
                             " (the column may read feature() and constants only)");
        if (*value < 0 || *value >= o.columns)
            fail<ShapeError>("program ", program, ": operand '", o.name, "'", o.site.note("declared at"), " of ",
                             o.columns, " columns is read at column ", *value, " for feature ", f, " of ", features,
                             " (its column ", o.column, " must lie in [0, ", o.columns, ") for every feature)");
        map.push_back(static_cast<int32_t>(*value));
    }
    return map;
}

void check_operand_columns(const std::string &program, const std::vector<Operand> &operands, int features,
                           const std::string &feature) {
    for (const Operand &o : operands) operand_columns(program, o, features, feature);
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
                     rows_of[static_cast<int>(o.at)], operand_width(o, features));
        tensors.push_back(&it->second);
    }
    return tensors;
}

void constrain_operand_rows(const std::vector<Operand> &operands, int features, int vector) {
    for (const Operand &o : operands) {
        Halide::ImageParam p = o.param;
        const int width = operand_width(o, features);
        if (vector > 0) {
            p.dim(0).set_min(0).set_extent(width);
            p.dim(1).set_min(0).set_stride(width);
            p.set_host_alignment(aligned_operand(o, features, vector) ? vector * p.type().bytes() : p.type().bytes());
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
