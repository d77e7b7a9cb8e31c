// SpeculateGuardedUpdates on hand-built statements: the nested guards of an unrolled sum become
// selects with every speculated load reading through its guard; loads of other buffers, updates
// that are not sums of a local accumulator, else branches and loops of other names stay guarded.
#include <gtest/gtest.h>

#include "halide_ext/speculate_guarded_updates.h"

namespace gsparse::ext {
namespace {

using namespace Halide;
using namespace Halide::Internal;

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

Expr load(const std::string &buffer, const Expr &index, Type t = Int(32)) {
    return Load::make(t, buffer, index, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}

/// acc[0] = acc[0] + x[col[p + step]]
Stmt update(const std::string &acc, int step, const std::string &features = "x") {
    Expr p = var("k") * 4 + step;
    Expr value = load(acc, 0, Float(32)) + load(features, load("col", p), Float(32));
    return Store::make(acc, value, 0, Parameter(), const_true(), ModulusRemainder());
}

/// if (k*4 + 1 < end[r]) { update 1; if (k*4 + 2 < end[r]) { update 2 } }
Stmt nested_steps(const std::string &acc, const std::string &features = "x") {
    Expr end = load("end", var("r"));
    Stmt inner = IfThenElse::make(var("k") * 4 + 2 < end, update(acc, 2, features));
    Stmt outer = IfThenElse::make(var("k") * 4 + 1 < end, Block::make(update(acc, 1, features), inner));
    return Block::make(update(acc, 0, features), outer);
}

Stmt loop(const std::string &name, const Stmt &body, const std::string &acc = "acc") {
    Stmt l = For::make(name, 0, var("n"), ForType::Serial, DeviceAPI::None, body);
    return Allocate::make(acc, Float(32), MemoryType::Register, {1}, const_true(), l);
}

struct Counts : IRVisitor {
    int ifs = 0, selects = 0, guarded_col_loads = 0, col_loads = 0;
    using IRVisitor::visit;
    void visit(const IfThenElse *op) override {
        ifs++;
        IRVisitor::visit(op);
    }
    void visit(const Select *op) override {
        selects++;
        IRVisitor::visit(op);
    }
    void visit(const Load *op) override {
        if (op->name == "col") {
            col_loads++;
            if (op->index.as<Select>()) guarded_col_loads++;
        }
        IRVisitor::visit(op);
    }
};

Counts count(const Stmt &s) {
    Counts c;
    s.accept(&c);
    return c;
}

SpeculateGuardedUpdates pass_for(std::set<std::string> speculable = {"x", "col", "end"}) {
    return SpeculateGuardedUpdates("lanes.s1.", ".koo", std::move(speculable));
}

TEST(SpeculateGuardedUpdates, NestedGuardsBecomeSelectsAndGuardedLoads) {
    auto pass = pass_for();
    Stmt s = pass.mutate(loop("lanes.s1.k.ko.koo", nested_steps("acc")));
    EXPECT_EQ(pass.converted(), 2);
    Counts c = count(s);
    EXPECT_EQ(c.ifs, 0) << s;
    EXPECT_EQ(c.col_loads, 3);
    // The first step was unconditional and stays so; the two converted steps read col through
    // their guards, and their values enter the sum through a select each (plus one per guarded index
    // of x: x[col[...]] reads through the guard as well).
    EXPECT_EQ(c.guarded_col_loads, 2) << s;
    EXPECT_GE(c.selects, 4) << s;
    // The inner step's guard includes the outer one.
    struct InnerGuard : IRVisitor {
        bool found = false;
        using IRVisitor::visit;
        void visit(const Store *op) override {
            if (const auto *add = op->value.as<Add>())
                if (const auto *sel = add->b.as<Select>()) found |= sel->condition.as<And>() != nullptr;
            IRVisitor::visit(op);
        }
    } inner;
    s.accept(&inner);
    EXPECT_TRUE(inner.found) << s;
    // The load of `end` in the outer guard is evaluated anyway: it is not rewritten.
    struct EndLoads : IRVisitor {
        int guarded = 0;
        using IRVisitor::visit;
        void visit(const Load *op) override {
            if (op->name == "end" && op->index.as<Select>()) guarded++;
            IRVisitor::visit(op);
        }
    } ends;
    s.accept(&ends);
    EXPECT_EQ(ends.guarded, 0) << s;
}

TEST(SpeculateGuardedUpdates, OnlyTheNamedLoopsAreConverted) {
    auto pass = pass_for();
    Stmt s = pass.mutate(loop("other.s1.k.ko.koo", nested_steps("acc")));
    EXPECT_EQ(pass.converted(), 0);
    EXPECT_EQ(count(s).ifs, 2);
    s = pass.mutate(loop("lanes.s1.k.ko", nested_steps("acc")));
    EXPECT_EQ(pass.converted(), 0);
    EXPECT_EQ(count(s).ifs, 2);
}

TEST(SpeculateGuardedUpdates, LoadsOfOtherBuffersStayGuarded) {
    auto pass = pass_for({"col", "end"});  // x is not speculable
    Stmt s = pass.mutate(loop("lanes.s1.k.ko.koo", nested_steps("acc")));
    EXPECT_EQ(pass.converted(), 0);
    EXPECT_EQ(count(s).ifs, 2);
}

TEST(SpeculateGuardedUpdates, OnlySumsOfLocalAccumulatorsAreConverted) {
    auto pass = pass_for();
    // The accumulator is not allocated inside the pipeline (e.g. an output buffer).
    Stmt unallocated = For::make("lanes.s1.k.ko.koo", 0, var("n"), ForType::Serial, DeviceAPI::None,
                                 nested_steps("out"));
    Stmt s = pass.mutate(unallocated);
    EXPECT_EQ(pass.converted(), 0);
    EXPECT_EQ(count(s).ifs, 2);

    // A max update is not a sum.
    Expr m = max(load("acc", 0, Float(32)), load("x", load("col", var("k")), Float(32)));
    Stmt max_update = Store::make("acc", m, 0, Parameter(), const_true(), ModulusRemainder());
    s = pass.mutate(loop("lanes.s1.k.ko.koo", IfThenElse::make(var("k") < load("end", var("r")), max_update)));
    EXPECT_EQ(pass.converted(), 0);
    EXPECT_EQ(count(s).ifs, 1);

    // An if with an else branch.
    Stmt with_else = IfThenElse::make(var("k") < load("end", var("r")), update("acc", 1), update("acc", 2));
    s = pass.mutate(loop("lanes.s1.k.ko.koo", with_else));
    EXPECT_EQ(pass.converted(), 0);
    EXPECT_EQ(count(s).ifs, 1);
}

}  // namespace
}  // namespace gsparse::ext
