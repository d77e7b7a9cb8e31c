#include "dsl/user_gradients.h"

#include <map>
#include <set>

#include "core/error.h"
#include "dsl/differentiate.h"

namespace gsparse::dsl {

using Halide::Expr;
using namespace Halide::Internal;

namespace {

const std::string kOperandVar = "gsparse_operand$";
const std::string kAccVar = "gsparse_acc$";  ///< the reduced value, in a monoid's combine and a finalize

/// The message with every operand read replaced by a variable kOperandVar + name.
class OperandsAsVariables : public IRMutator {
public:
    explicit OperandsAsVariables(const std::vector<Operand> &operands) {
        // An ImageParam is read through its wrapper Func (Halide 14), or as the image itself.
        for (const Operand &o : operands) {
            by_param_[o.param.name()] = o.name;
            by_param_[Halide::Func(o.param).name()] = o.name;
        }
    }

private:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        auto it = by_param_.find(op->name);
        if (it != by_param_.end()) return Variable::make(op->type, kOperandVar + it->second);
        return IRMutator::visit(op);
    }
    std::map<std::string, std::string> by_param_;
};

/// What the message reads beside its operands and the feature index: the first id or array read
/// found ("" when none).
class OtherReads : public IRVisitor {
public:
    std::string found;

private:
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (found.empty() && op->name != "f" && op->name.rfind(kOperandVar, 0) != 0) found = op->name;
    }
    void visit(const Call *op) override {
        if (found.empty() && (op->call_type == Call::Image || op->call_type == Call::Halide)) found = op->name;
        IRVisitor::visit(op);
    }
};

At swapped(At at) { return at == At::Src ? At::Dst : at == At::Dst ? At::Src : At::Edge; }

enum class Reduction { Sum, Max, Min, Product };

/// What the monoid reduces by: a sum (identity 0, combine a + x), a maximum or a minimum (combine
/// max(a, x) / min(a, x)), a product (identity 1, combine a * x) over single values; ShapeError
/// (after `why`) for any other.
Reduction reduction_of(const std::string &why, const Monoid *m, Halide::Type type) {
    if (!m) fail<ShapeError>(why, "it has no reduction");
    if (m->over_tuples()) fail<ShapeError>(why, "its monoid '", m->name, "' reduces tuples (give a backward)");
    const Expr a = Variable::make(type, kAccVar), x = Variable::make(type, "gsparse_msg$");
    const Expr combined = simplify(m->combine(a, x));
    auto either = [&](const Expr &e, const Expr &f) { return equal(combined, simplify(e)) || equal(combined, simplify(f)); };
    if (is_const_zero(simplify(m->identity(type))) && either(a + x, x + a)) return Reduction::Sum;
    if (either(Halide::max(a, x), Halide::max(x, a))) return Reduction::Max;
    if (either(Halide::min(a, x), Halide::min(x, a))) return Reduction::Min;
    if (is_const_one(simplify(m->identity(type))) && either(a * x, x * a)) return Reduction::Product;
    fail<ShapeError>(why, "its monoid '", m->name,
                     "' is not a sum, max, min or product (a derived backward needs one of them; give a backward)");
}

/// The edge id that `bits` (a value of the feature type: a max / min program's row value) holds.
Expr edge_id_of(const Expr &bits) { return Halide::reinterpret(Halide::Int(bits.type().bits()), bits); }

/// The winners' monoid of a max (min) program: (value, edge id bits) pairs, the larger (smaller)
/// value taken, the smaller edge id among equal values; merged the same way, so any order of
/// combination gives the same winner.
std::shared_ptr<const Monoid> winner_monoid(const Monoid &m, bool max) {
    auto w = std::make_shared<Monoid>();
    w->name = "winner_of_" + m.name;
    const Monoid value = m;
    w->identity_values = [value](Halide::Type t) {
        return Halide::Tuple(value.identity(t), Halide::reinterpret(t, Halide::Int(t.bits()).max()));
    };
    auto pick = [max](const Halide::Tuple &acc, const Halide::Tuple &x) {
        const Expr better = max ? x[0] > acc[0] : x[0] < acc[0];
        const Expr take = better || (x[0] == acc[0] && edge_id_of(x[1]) < edge_id_of(acc[1]));
        return Halide::Tuple(Halide::select(take, x[0], acc[0]), Halide::select(take, x[1], acc[1]));
    };
    w->combine_values = pick;
    w->merge_values = pick;
    return w;
}

/// The monoid of a product program's parts: (product of the nonzero messages, count of zero
/// messages) from (message or 1, 1 if the message is 0).
std::shared_ptr<const Monoid> product_parts_monoid() {
    auto m = std::make_shared<Monoid>();
    m->name = "product_parts";
    m->identity_values = [](Halide::Type t) { return Halide::Tuple(make_one(t), make_zero(t)); };
    auto combine = [](const Halide::Tuple &acc, const Halide::Tuple &x) {
        return Halide::Tuple(acc[0] * x[0], acc[1] + x[1]);
    };
    m->combine_values = combine;
    m->merge_values = combine;
    return m;
}

/// The per-row values the operand programs of a max, min or product read (ProgramGradients::
/// row_values), and how they weigh G at an edge whose message is m.
struct RowValues {
    Reduction reduction = Reduction::Sum;
    std::vector<std::string> operands;  ///< the names the programs read them by

    /// value (G * dm/d op) at an edge of program p, whose reads of the row values are at `at`: max /
    /// min: value at the winning edge, 0 elsewhere; product: value * (product of the other messages).
    template <typename Program>
    Expr weigh(Program &p, const Expr &value, At at, const Expr &m, Halide::Type type) const {
        if (reduction == Reduction::Max || reduction == Reduction::Min) {
            const Expr won = edge_id_of(p.operand(operands[0], at)) == Halide::cast(Halide::Int(type.bits()), p.edge());
            return Halide::select(won, value, make_zero(type));
        }
        if (reduction == Reduction::Product) {
            // The product of the other messages: P / m without zeros; P (the nonzero ones) at the one
            // zero message; 0 with two or more zeros.
            const Expr P = p.operand(operands[0], at), zeros = p.operand(operands[1], at);
            const Expr zero = make_zero(type), one = make_one(type);
            return value * Halide::select(zeros == zero, P / m, Halide::select(zeros == one && m == zero, P, zero));
        }
        return value;
    }
};

/// The gradient programs of every operand of a message (operand reads already variables): g-SpMM
/// programs on the graph (operands at the destination) or its reverse (at the source), per-edge
/// programs (at the edge), each reading G at grad_at[form].
std::vector<OperandGradient> operand_gradients(const std::string &program, Halide::Type type, const Expr &message,
                                               const std::vector<Operand> &operands, const std::string &grad_operand,
                                               const At (&grad_at)[3], const RowValues &row_values = {}) {
    // A product weighs G by the other messages: its programs read the message itself too.
    const bool reads_message = row_values.reduction == Reduction::Product;
    std::vector<OperandGradient> out;
    for (const Operand &o : operands) {
        const Expr dm = differentiate(message, kOperandVar + o.name);
        OperandGradient g;
        g.operand = o.name;
        g.at = o.at;
        g.broadcast = o.broadcast;
        g.columns = o.columns;
        const std::string name = program + "_grad_" + o.name;
        // Declares the forward operands the derivative (and for a product the message) reads
        // (declaration order) in a program whose reads are at `at_of(at)`, and returns the
        // derivative and the message over them.
        auto rebuild = [&](auto &p, auto at_of) {
            std::map<std::string, Expr> reads;
            for (const Operand &q : operands)
                if (expr_uses_var(dm, kOperandVar + q.name) || (reads_message && expr_uses_var(message, kOperandVar + q.name)))
                    reads[kOperandVar + q.name] =
                        q.columns > 0
                            ? p.operand(q.name, at_of(q.at), Columns{q.columns, q.column}, q.site.file.c_str(), q.site.line)
                            : p.operand(q.name, at_of(q.at), q.broadcast, q.site.file.c_str(), q.site.line);
            return std::pair{substitute(reads, dm), substitute(reads, message)};
        };
        if (o.at == At::Edge) {
            auto edges = std::make_shared<SddmmProgram>(name, type);
            const auto [d, m] = rebuild(*edges, [](At at) { return at; });
            edges->edge_value(row_values.weigh(*edges, edges->operand(grad_operand, grad_at[2]) * d, grad_at[2], m, type));
            g.form = OperandGradient::Form::Edges;
            g.edges = std::move(edges);
        } else {
            const bool reverse = o.at == At::Src;
            auto rows = std::make_shared<SpmmProgram>(name, type);
            const auto [d, m] = reverse ? rebuild(*rows, swapped) : rebuild(*rows, [](At at) { return at; });
            const At g_at = reverse ? grad_at[1] : grad_at[0];
            rows->message(row_values.weigh(*rows, rows->operand(grad_operand, g_at) * d, g_at, m, type));
            rows->reduce(Monoid::sum());
            g.form = reverse ? OperandGradient::Form::ReverseRows : OperandGradient::Form::Rows;
            g.rows = std::move(rows);
        }
        out.push_back(std::move(g));
    }
    return out;
}

/// The message with its operand reads as variables; ShapeError (naming the message's line) when it
/// reads anything else.
Expr message_over_operands(const std::string &why, const Expr &message, const std::vector<Operand> &operands,
                           const char *what, const Site &site) {
    const Expr m = OperandsAsVariables(operands).mutate(message);
    OtherReads other;
    m.accept(&other);
    if (!other.found.empty())
        fail<ShapeError>(why, "its ", what, site.note("set at"), " reads ", other.found,
                         " (node or edge ids, the degree, or an array that is not an operand); give a backward");
    return m;
}

/// `base`, or that with underscores appended until no operand and none of `taken` has the name.
std::string fresh_operand_name(const std::vector<Operand> &operands, std::string base,
                               const std::set<std::string> &taken = {}) {
    std::set<std::string> names = taken;
    for (const Operand &o : operands) names.insert(o.name);
    while (names.count(base)) base += "_";
    return base;
}

}  // namespace

ProgramGradients derive_gradients(const SpmmProgram &p) {
    const std::string why = "program " + p.name_ + " has no derived backward: ";
    if (p.message_.size() != 1)
        fail<ShapeError>(why, p.message_.empty() ? "it has no message" : "its message is a tuple (give a backward)");
    const Reduction reduction = reduction_of(why, p.monoid_.get(), p.type_);
    if (p.finalize_values_ || p.finalize_outputs_) fail<ShapeError>(why, "it has several outputs or a tuple finalize");
    if (reduction != Reduction::Sum && p.finalize_)
        fail<ShapeError>(why, "its ", p.monoid_->name, " has a finalize (a derived ", p.monoid_->name,
                         " backward takes none; give a backward)");
    const Expr message = message_over_operands(why, p.message_[0], p.operands_, "message", p.message_site_);

    ProgramGradients out;
    out.grad_operand = fresh_operand_name(p.operands_, "grad");
    RowValues row_values;
    row_values.reduction = reduction;
    if (reduction != Reduction::Sum) {
        // A pass over the edges with the forward's message and operands, reduced by its own monoid.
        auto r = std::make_shared<SpmmProgram>(p);
        const Expr m = p.message_[0];
        if (reduction == Reduction::Product) {
            // The product of the nonzero messages and the count of zero ones.
            r->name_ = p.name_ + "_product_parts";
            const Expr zero = make_zero(p.type_), one = make_one(p.type_);
            r->message_ = {Halide::select(m == zero, one, m), Halide::select(m == zero, one, zero)};
            r->monoid_ = product_parts_monoid();
            r->finalize_outputs_ = [](const Halide::Tuple &acc, Expr) { return acc; };
            row_values.operands = {fresh_operand_name(p.operands_, "product", {out.grad_operand})};
            row_values.operands.push_back(fresh_operand_name(p.operands_, "zeros", {out.grad_operand, row_values.operands[0]}));
        } else {
            // The winners: the message paired with the edge id; the output is the id.
            r->name_ = p.name_ + "_winner";
            r->message_ = {m, Halide::reinterpret(p.type_, Halide::cast(Halide::Int(p.type_.bits()), p.e_))};
            r->monoid_ = winner_monoid(*p.monoid_, reduction == Reduction::Max);
            r->finalize_values_ = [](const Halide::Tuple &acc, Expr) { return acc[1]; };
            row_values.operands = {fresh_operand_name(p.operands_, "winner", {out.grad_operand})};
        }
        out.row_values = std::move(r);
        out.row_value_operands = row_values.operands;
    }
    // The finalize's derivative in the sum: G = grad * dfin/dacc, which may depend on the degree only.
    if (p.finalize_) {
        const Expr acc = Variable::make(p.type_, kAccVar);
        const std::string deg_name = "gsparse_degree$";
        const Expr d =
            differentiate(Halide::cast(p.type_, p.finalize_(acc, Variable::make(Halide::Int(32), deg_name))), kAccVar);
        if (expr_uses_var(d, kAccVar))
            fail<ShapeError>(why, "its finalize is not linear in the reduced value (give a backward)");
        if (!is_const_one(d)) {
            auto scale = std::make_shared<SpmmProgram>(p.name_ + "_grad_scale", p.type_);
            scale->message(make_zero(p.type_));
            scale->reduce(Monoid::sum());
            scale->finalize([d, deg_name](Expr, Expr degree) { return substitute(deg_name, degree, d); });
            out.scale = std::move(scale);
        }
    }
    // G is read at the destination (the graph's rows, the edges' destination) and, on the reverse
    // graph, at its source.
    const At grad_at[3] = {At::Dst, At::Src, At::Dst};
    out.operands = operand_gradients(p.name_, p.type_, message, p.operands_, out.grad_operand, grad_at, row_values);
    return out;
}

ProgramGradients derive_gradients(const SddmmProgram &p) {
    const std::string why = "program " + p.name_ + " has no derived backward: ";
    if (!p.value_.defined()) fail<ShapeError>(why, "it has no edge value");
    const Expr value = message_over_operands(why, p.value_, p.operands_, "edge value", p.value_site_);
    ProgramGradients out;
    out.grad_operand = fresh_operand_name(p.operands_, "grad");
    const At grad_at[3] = {At::Edge, At::Edge, At::Edge};  // G is the per-edge output's gradient
    out.operands = operand_gradients(p.name_, p.type_, value, p.operands_, out.grad_operand, grad_at);
    return out;
}

}  // namespace gsparse::dsl
