// A test fixture that points the persistent kernel cache (runtime/kernel_library.h) at a fresh
// folder and empties the in-memory kernel cache around each test, restoring both afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/kernel_cache.h"
#include "runtime/kernel_library.h"

namespace gsparse::test {

class FreshKernelCacheDir : public ::testing::Test {
protected:
    void SetUp() override {
        saved_ = kernel_cache_dir();
        char tmpl[] = "/tmp/gsparse-kernel-cache-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        set_kernel_cache_dir(dir_);
        KernelCache::global().clear();
    }
    void TearDown() override {
        set_kernel_cache_dir(saved_);
        KernelCache::global().clear();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    /// The kernel libraries (gsparse_kernel_*.so) in the folder.
    std::vector<std::filesystem::path> kernels() const {
        std::vector<std::filesystem::path> found;
        for (const auto &e : std::filesystem::directory_iterator(dir_)) {
            const std::string name = e.path().filename().string();
            if (name.rfind("gsparse_kernel_", 0) == 0 && e.path().extension() == ".so") found.push_back(e.path());
        }
        return found;
    }

    std::string saved_, dir_;
};

}  // namespace gsparse::test
