// Fuzz target: the binary CSR reader (load_binary_csr) and the properties of what it accepts. Sizes
// in a .gcsr header must match the file's size, except the source count, which is guarded after loading.
#include "graph_properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace gsparse::fuzz;
    static MemFile in("gsparse-fuzz-gcsr");
    in.write(data, size);
    gsparse::LoadedGraph lg;
    try {
        lg = gsparse::load_binary_csr(in.path());
    } catch (const gsparse::Error &) {
        return 0;
    }
    if (lg.csr.num_cols > kMaxNodes) return 0;  // valid, but its CSC would be large
    try {
        check_loaded(std::move(lg));
    } catch (const gsparse::Error &e) {
        FUZZ_CHECK(false, "an accepted graph failed a later step: %s", e.what());
    }
    return 0;
}
