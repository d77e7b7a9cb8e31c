#include "dsl/differentiate.h"

#include <sstream>

#include "core/error.h"

namespace gsparse::dsl {

using Halide::Expr;
using namespace Halide::Internal;

namespace {

/// The extern's base name: exp_f32 -> exp.
std::string base_name(const std::string &name) {
    for (const char *suffix : {"_f16", "_f32", "_f64"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
            return name.substr(0, name.size() - s.size());
    }
    return name;
}

std::string show(const Expr &e) {
    std::ostringstream os;
    os << e;
    return os.str();
}

class Differentiate {
public:
    explicit Differentiate(std::string var) : var_(std::move(var)) {}

    Expr operator()(const Expr &e) const {
        const Halide::Type t = e.type();
        if (!t.is_float() || !expr_uses_var(e, var_)) return make_zero(t);
        if (const Variable *v = e.as<Variable>()) return v->name == var_ ? make_one(t) : make_zero(t);
        if (const Add *op = e.as<Add>()) return d(op->a) + d(op->b);
        if (const Sub *op = e.as<Sub>()) return d(op->a) - d(op->b);
        if (const Mul *op = e.as<Mul>()) return d(op->a) * op->b + op->a * d(op->b);
        if (const Div *op = e.as<Div>()) return (d(op->a) * op->b - op->a * d(op->b)) / (op->b * op->b);
        if (const Min *op = e.as<Min>()) return Halide::select(op->a <= op->b, d(op->a), d(op->b));
        if (const Max *op = e.as<Max>()) return Halide::select(op->a >= op->b, d(op->a), d(op->b));
        if (const Select *op = e.as<Select>())
            return Halide::select(op->condition, d(op->true_value), d(op->false_value));
        if (const Cast *op = e.as<Cast>())
            return op->value.type().is_float() ? Halide::cast(t, d(op->value)) : make_zero(t);
        if (const Let *op = e.as<Let>()) return d(substitute(op->name, op->value, op->body));
        if (const Call *op = e.as<Call>()) return call(e, op);
        fail<ShapeError>("cannot differentiate ", show(e), " with respect to an operand (no rule for this operation)");
    }

private:
    Expr d(const Expr &e) const { return (*this)(e); }

    Expr call(const Expr &e, const Call *op) const {
        const Halide::Type t = e.type();
        if (op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
            op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped))
            return d(op->args[0]);
        if (op->is_intrinsic(Call::abs))
            return Halide::select(op->args[0] >= make_zero(op->args[0].type()), d(op->args[0]), -d(op->args[0]));
        if (op->call_type == Call::PureExtern && !op->args.empty()) {
            const std::string f = base_name(op->name);
            const Expr a = op->args[0];
            const Expr da = d(a);
            const Expr one = make_one(t), two = Halide::cast(t, 2);
            if (f == "exp") return e * da;
            if (f == "log") return da / a;
            if (f == "sqrt") return da / (two * e);
            if (f == "tanh") return (one - e * e) * da;
            if (f == "sinh") return Halide::cosh(a) * da;
            if (f == "cosh") return Halide::sinh(a) * da;
            if (f == "sin") return Halide::cos(a) * da;
            if (f == "cos") return -Halide::sin(a) * da;
            if (f == "tan") return (one + e * e) * da;
            if (f == "atan") return da / (one + a * a);
            if (f == "asin") return da / Halide::sqrt(one - a * a);
            if (f == "acos") return -da / Halide::sqrt(one - a * a);
            if (f == "floor" || f == "ceil" || f == "round" || f == "trunc") return make_zero(t);
            if (f == "pow" && op->args.size() == 2) {
                const Expr b = op->args[1];
                const Expr db = d(b);
                // d a^b = b a^(b-1) da + a^b log(a) db; the second term only where b depends on var.
                Expr r = b * Halide::pow(a, b - one) * da;
                if (expr_uses_var(b, var_)) r = r + e * Halide::log(a) * db;
                return r;
            }
        }
        fail<ShapeError>("cannot differentiate the call ", op->name, " in ", show(e),
                         " with respect to an operand (no rule for it)");
    }

    std::string var_;
};

}  // namespace

Expr differentiate(const Expr &e, const std::string &var) { return simplify(Differentiate(var)(e)); }

}  // namespace gsparse::dsl
