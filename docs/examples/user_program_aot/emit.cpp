// Emits a user program as a static library (docs/dsl.md, "Ahead of time"): weighted_max, the max
// over in-edges of x[u, f] * w[e], for 8 features on the CPU, into the folder given.
//
//   gsparse-example-user-program-emit OUT_DIR      -> OUT_DIR/weighted_max.a, weighted_max.h
#include <cstdio>

#include "dsl/user_spmm.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    using gsparse::dsl::At;
    gsparse::dsl::SpmmProgram p("weighted_max");
    // Operands in separate statements: their order is the library function's argument order (the
    // order in which C++ evaluates the two sides of x * w is not specified).
    Halide::Expr x = p.operand("x", At::Src);
    Halide::Expr w = p.operand("w", At::Edge, true);
    p.message(x * w);
    p.reduce(gsparse::dsl::Monoid::max());
    gsparse::dsl::SpmmKernel k = p.compile(8);
    k.compile_to_static_library(argv[1], "weighted_max");
    std::printf("wrote %s/weighted_max.a and weighted_max.h:", argv[1]);
    for (const auto &a : k.argument_names()) std::printf(" %s", a.c_str());
    std::printf("\n");
    return 0;
}
