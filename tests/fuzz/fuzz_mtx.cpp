// Fuzz target: the Matrix Market reader (load_matrix_market) and the properties of what it accepts.
#include "graph_properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gsparse::fuzz::run_graph_reader(data, size, [](const std::string &p) { return gsparse::load_matrix_market(p); });
}
