// Shared helpers of the fuzz targets (tests/fuzz/fuzz_*.cpp).
//
// Every target defines LLVMFuzzerTestOneInput. The readers under test open paths, so the input is
// handed to them as a file without touching the disk: an in-memory file (memfd) named
// /proc/self/fd/N. A gsparse::Error is the expected outcome for bad input; any other exception,
// a failed property check (FUZZ_CHECK) or a sanitizer report is a finding.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"

namespace gsparse::fuzz {

/// A property that must hold for every input: prints what failed and aborts (a finding).
#define FUZZ_CHECK(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, "  " __VA_ARGS__);                                     \
            std::fprintf(stderr, "\n");                                                 \
            std::abort();                                                              \
        }                                                                              \
    } while (0)

/// An in-memory file holding the bytes last written to it, reachable by path().
class MemFile {
public:
    explicit MemFile(const char *name) {
        fd_ = ::memfd_create(name, MFD_CLOEXEC);
        if (fd_ < 0) {
            std::perror("memfd_create");
            std::abort();
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemFile() { ::close(fd_); }
    MemFile(const MemFile &) = delete;
    MemFile &operator=(const MemFile &) = delete;

    /// Replaces the content with data[0, size).
    void write(const uint8_t *data, size_t size) {
        if (::ftruncate(fd_, 0) != 0) std::abort();
        size_t done = 0;
        while (done < size) {
            const ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
            if (n <= 0) std::abort();
            done += static_cast<size_t>(n);
        }
    }
    const std::string &path() const { return path_; }

private:
    int fd_ = -1;
    std::string path_;
};

/// Whether no decimal number in the input lies in (limit, INT32_MAX]. A file that declares millions
/// of nodes in a few bytes is a valid graph whose arrays (not a bug) would exceed the fuzzer's
/// memory limit; numbers beyond INT32_MAX stay in, since loaders must reject them cheaply.
inline bool numbers_at_most(const uint8_t *data, size_t size, int64_t limit) {
    size_t i = 0;
    while (i < size) {
        if (data[i] < '0' || data[i] > '9') {
            i++;
            continue;
        }
        int64_t v = 0;
        bool huge = false;
        for (; i < size && data[i] >= '0' && data[i] <= '9'; i++) {
            if (v > (int64_t{1} << 40)) huge = true;
            else v = v * 10 + (data[i] - '0');
        }
        if (!huge && v > limit && v <= 2147483647) return false;
    }
    return true;
}

/// The node-count limit of the guard above: arrays of this many entries are cheap.
constexpr int64_t kMaxNodes = 1 << 12;

}  // namespace gsparse::fuzz
