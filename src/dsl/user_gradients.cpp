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

/// ShapeError (after `why`) unless the monoid is a sum over single values: identity 0, combine a + x.
void check_sum(const std::string &why, const Monoid *m, Halide::Type type) {
    if (!m) fail<ShapeError>(why, "it has no reduction");
    if (m->over_tuples()) fail<ShapeError>(why, "its monoid '", m->name, "' reduces tuples (give a backward)");
    const Expr a = Variable::make(type, kAccVar), x = Variable::make(type, "gsparse_msg$");
    const Expr combined = simplify(m->combine(a, x));
    const bool sum = is_const_zero(simplify(m->identity(type))) &&
                     (equal(combined, simplify(a + x)) || equal(combined, simplify(x + a)));
    if (!sum)
        fail<ShapeError>(why, "its monoid '", m->name, "' is not a sum (a derived backward needs sum; give one)");
}

/// The gradient programs of every operand of a message (operand reads already variables): g-SpMM
/// programs on the graph (operands at the destination) or its reverse (at the source), per-edge
/// programs (at the edge), each reading G at grad_at[form].
std::vector<OperandGradient> operand_gradients(const std::string &program, Halide::Type type, const Expr &message,
                                               const std::vector<Operand> &operands, const std::string &grad_operand,
                                               const At (&grad_at)[3]) {
    std::vector<OperandGradient> out;
    for (const Operand &o : operands) {
        const Expr dm = differentiate(message, kOperandVar + o.name);
        OperandGradient g;
        g.operand = o.name;
        g.at = o.at;
        g.broadcast = o.broadcast;
        const std::string name = program + "_grad_" + o.name;
        // Declares the forward operands the derivative reads (declaration order) in a program whose
        // reads are at `at_of(at)`, and returns the derivative over them.
        auto rebuild = [&](auto &p, auto at_of) {
            std::map<std::string, Expr> reads;
            for (const Operand &q : operands)
                if (expr_uses_var(dm, kOperandVar + q.name))
                    reads[kOperandVar + q.name] =
                        p.operand(q.name, at_of(q.at), q.broadcast, q.site.file.c_str(), q.site.line);
            return substitute(reads, dm);
        };
        if (o.at == At::Edge) {
            auto edges = std::make_shared<SddmmProgram>(name, type);
            const Expr d = rebuild(*edges, [](At at) { return at; });
            edges->edge_value(edges->operand(grad_operand, grad_at[2]) * d);
            g.form = OperandGradient::Form::Edges;
            g.edges = std::move(edges);
        } else {
            const bool reverse = o.at == At::Src;
            auto rows = std::make_shared<SpmmProgram>(name, type);
            const Expr d = reverse ? rebuild(*rows, swapped) : rebuild(*rows, [](At at) { return at; });
            rows->message(rows->operand(grad_operand, reverse ? grad_at[1] : grad_at[0]) * d);
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

/// "grad", or that with underscores appended until no operand has the name.
std::string grad_operand_name(const std::vector<Operand> &operands) {
    std::set<std::string> names;
    for (const Operand &o : operands) names.insert(o.name);
    std::string name = "grad";
    while (names.count(name)) name += "_";
    return name;
}

}  // namespace

ProgramGradients derive_gradients(const SpmmProgram &p) {
    const std::string why = "program " + p.name_ + " has no derived backward: ";
    if (p.message_.size() != 1)
        fail<ShapeError>(why, p.message_.empty() ? "it has no message" : "its message is a tuple (give a backward)");
    check_sum(why, p.monoid_.get(), p.type_);
    if (p.finalize_values_ || p.finalize_outputs_) fail<ShapeError>(why, "it has several outputs or a tuple finalize");
    const Expr message = message_over_operands(why, p.message_[0], p.operands_, "message", p.message_site_);

    ProgramGradients out;
    out.grad_operand = grad_operand_name(p.operands_);
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
    out.operands = operand_gradients(p.name_, p.type_, message, p.operands_, out.grad_operand, grad_at);
    return out;
}

ProgramGradients derive_gradients(const SddmmProgram &p) {
    const std::string why = "program " + p.name_ + " has no derived backward: ";
    if (!p.value_.defined()) fail<ShapeError>(why, "it has no edge value");
    const Expr value = message_over_operands(why, p.value_, p.operands_, "edge value", p.value_site_);
    ProgramGradients out;
    out.grad_operand = grad_operand_name(p.operands_);
    const At grad_at[3] = {At::Edge, At::Edge, At::Edge};  // G is the per-edge output's gradient
    out.operands = operand_gradients(p.name_, p.type_, value, p.operands_, out.grad_operand, grad_at);
    return out;
}

}  // namespace gsparse::dsl
