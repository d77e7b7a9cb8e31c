// Fuzz target: the edge-list reader (load_edge_list, node counts from the file or its #!gsparse
// header) and the properties of what it accepts.
#include "graph_properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return gsparse::fuzz::run_graph_reader(data, size, [](const std::string &p) { return gsparse::load_edge_list(p); });
}
