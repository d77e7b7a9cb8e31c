// Fuzz target: the tuning-cache reader. Opening any file gives a cache (a malformed file is reported
// and ignored, never an exception), and looking up every key it holds gives an entry or a reported
// miss.
#include "autotune/tuning_cache.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace gsparse::autotune;
    static gsparse::fuzz::MemFile in("gsparse-fuzz-cache");
    in.write(data, size);
    TuningCache cache(in.path());
    const size_t warned = cache.warnings().size();
    FUZZ_CHECK(warned <= 1, "opening warned %zu times", warned);
    size_t misses = 0;
    for (const std::string &key : cache.keys())
        if (!cache.lookup(key)) misses++;
    FUZZ_CHECK(cache.warnings().size() == warned + misses, "a malformed entry was not reported");
    return 0;
}
