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

/// ShapeError unless the monoid is a sum over single values: identity 0, combine a + x.
void check_sum(const std::string &program, const Monoid *m, Halide::Type type) {
    const std::string why = "program " + program + " has no derived backward: ";
    if (!m) fail<ShapeError>(why, "it has no reduction");
    if (m->over_tuples()) fail<ShapeError>(why, "its monoid '", m->name, "' reduces tuples (give a backward)");
    const Expr a = Variable::make(type, "gsparse_acc$"), x = Variable::make(type, "gsparse_msg$");
    const bool sum = is_const_zero(simplify(m->identity(type))) &&
                     (equal(simplify(m->combine(a, x)), simplify(a + x)) ||
                      equal(simplify(m->combine(a, x)), simplify(x + a)));
    if (!sum)
        fail<ShapeError>(why, "its monoid '", m->name, "' is not a sum (a derived backward needs sum; give one)");
}

}  // namespace

ProgramGradients derive_gradients(const SpmmProgram &p) {
    const std::string why = "program " + p.name_ + " has no derived backward: ";
    if (p.message_.size() != 1)
        fail<ShapeError>(why, p.message_.empty() ? "it has no message" : "its message is a tuple (give a backward)");
    check_sum(p.name_, p.monoid_.get(), p.type_);
    if (p.finalize_values_ || p.finalize_outputs_) fail<ShapeError>(why, "it has several outputs or a tuple finalize");

    const Expr message = OperandsAsVariables(p.operands_).mutate(p.message_[0]);
    OtherReads other;
    message.accept(&other);
    if (!other.found.empty())
        fail<ShapeError>(why, "its message reads ", other.found,
                         " (node or edge ids, the degree, or an array that is not an operand); give a backward");

    ProgramGradients out;
    std::set<std::string> names;
    for (const Operand &o : p.operands_) names.insert(o.name);
    out.grad_operand = "grad";
    while (names.count(out.grad_operand)) out.grad_operand += "_";

    // The finalize's derivative in the sum: G = grad * dfin/dacc, which may depend on the degree only.
    if (p.finalize_) {
        const Expr acc = Variable::make(p.type_, "gsparse_acc$");
        const std::string deg_name = "gsparse_degree$";
        const Expr d = differentiate(Halide::cast(p.type_, p.finalize_(acc, Variable::make(Halide::Int(32), deg_name))),
                                     "gsparse_acc$");
        if (expr_uses_var(d, "gsparse_acc$"))
            fail<ShapeError>(why, "its finalize is not linear in the reduced value (give a backward)");
        if (!is_const_one(d)) {
            auto scale = std::make_shared<SpmmProgram>(p.name_ + "_grad_scale", p.type_);
            scale->message(make_zero(p.type_));
            scale->reduce(Monoid::sum());
            scale->finalize([d, deg_name](Expr, Expr degree) { return substitute(deg_name, degree, d); });
            out.scale = std::move(scale);
        }
    }

    for (const Operand &o : p.operands_) {
        const Expr dm = differentiate(message, kOperandVar + o.name);
        OperandGradient g;
        g.operand = o.name;
        g.at = o.at;
        g.broadcast = o.broadcast;
        const std::string name = p.name_ + "_grad_" + o.name;
        // Declares the forward operands the derivative reads (declaration order) in a program whose
        // reads are at `at_of(at)`, and returns the derivative over them.
        auto rebuild = [&](auto &program, auto at_of) {
            std::map<std::string, Expr> reads;
            for (const Operand &q : p.operands_)
                if (expr_uses_var(dm, kOperandVar + q.name))
                    reads[kOperandVar + q.name] = program.operand(q.name, at_of(q.at), q.broadcast);
            return substitute(reads, dm);
        };
        if (o.at == At::Edge) {
            auto edges = std::make_shared<SddmmProgram>(name, p.type_);
            const Expr d = rebuild(*edges, [](At at) { return at; });
            edges->edge_value(edges->operand(out.grad_operand, At::Dst) * d);
            g.form = OperandGradient::Form::Edges;
            g.edges = std::move(edges);
        } else {
            const bool reverse = o.at == At::Src;
            auto rows = std::make_shared<SpmmProgram>(name, p.type_);
            const Expr d = reverse ? rebuild(*rows, swapped) : rebuild(*rows, [](At at) { return at; });
            rows->message(rows->operand(out.grad_operand, reverse ? At::Src : At::Dst) * d);
            rows->reduce(Monoid::sum());
            g.form = reverse ? OperandGradient::Form::ReverseRows : OperandGradient::Form::Rows;
            g.rows = std::move(rows);
        }
        out.operands.push_back(std::move(g));
    }
    return out;
}

}  // namespace gsparse::dsl
