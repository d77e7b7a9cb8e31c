// The shipped cost models are found by schedule, and --model auto / none / PREFIX choose as documented.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "autotune/shipped_models.h"

namespace gsparse::autotune {
namespace {

namespace fs = std::filesystem;

/// Sets GSPARSE_MODELS_DIR (or unsets it, for nullptr) for its lifetime, then restores it.
class ModelsDirEnv {
public:
    explicit ModelsDirEnv(const char *value) {
        if (const char *before = std::getenv(kName)) saved_ = before;
        if (value) ::setenv(kName, value, 1);
        else ::unsetenv(kName);
    }
    ~ModelsDirEnv() {
        if (saved_) ::setenv(kName, saved_->c_str(), 1);
        else ::unsetenv(kName);
    }

private:
    static constexpr const char *kName = "GSPARSE_MODELS_DIR";
    std::optional<std::string> saved_;
};

/// A fresh folder under the test temp dir holding `files` (empty files).
std::string folder_with(const std::string &name, const std::vector<std::string> &files) {
    const fs::path dir = fs::path(::testing::TempDir()) / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const auto &f : files) std::ofstream(dir / f) << "";
    return dir.string();
}

TEST(ShippedModels, NamedBySchedule) {
    EXPECT_EQ(shipped_model_name("gpu_spmm"), "h100_spmm");
    EXPECT_EQ(shipped_model_name("gpu_sddmm"), "h100_sddmm");
    EXPECT_FALSE(shipped_model_name("cpu_spmm"));
    EXPECT_FALSE(shipped_model_name("cpu_sddmm"));
}

TEST(ShippedModels, TheSourceTreesModelsAreFound) {
    // Without GSPARSE_MODELS_DIR the search finds them in the source tree's autotune/models, ahead
    // of any installed copy.
    std::vector<std::string> dirs;
    {
        ModelsDirEnv unset(nullptr);
        dirs = shipped_model_dirs();
    }
    for (const char *schedule : {"gpu_spmm", "gpu_sddmm"}) {
        const auto prefix = find_shipped_model(schedule, dirs);
        ASSERT_TRUE(prefix) << schedule;
        EXPECT_EQ(*prefix, std::string(GSPARSE_SOURCE_DIR) + "/autotune/models/" + *shipped_model_name(schedule));
        EXPECT_TRUE(fs::is_regular_file(*prefix + ".pt")) << *prefix;
        EXPECT_TRUE(fs::is_regular_file(*prefix + ".json")) << *prefix;
        EXPECT_EQ(fs::path(*prefix).filename(), *shipped_model_name(schedule));
    }
    EXPECT_FALSE(find_shipped_model("cpu_spmm", dirs));
}

TEST(ShippedModels, FirstFolderWithBothFilesWins) {
    const std::string half = folder_with("models_half", {"h100_spmm.pt"});  // no .json
    const std::string both = folder_with("models_both", {"h100_spmm.pt", "h100_spmm.json"});
    const std::string other = folder_with("models_other", {"h100_spmm.pt", "h100_spmm.json"});
    EXPECT_EQ(find_shipped_model("gpu_spmm", {"/nonexistent/models", half, both, other}),
              (fs::path(both) / "h100_spmm").string());
    EXPECT_FALSE(find_shipped_model("gpu_spmm", {half}));
    EXPECT_FALSE(find_shipped_model("gpu_sddmm", {both}));
    EXPECT_FALSE(find_shipped_model("gpu_spmm", {}));
}

TEST(ShippedModels, EnvironmentFolderIsSearchedFirst) {
    const std::string dir = folder_with("models_env", {"h100_sddmm.pt", "h100_sddmm.json"});
    std::vector<std::string> dirs;
    std::optional<std::string> found;
    {
        ModelsDirEnv set(dir.c_str());
        dirs = shipped_model_dirs();
        found = find_shipped_model("gpu_sddmm");
    }
    ASSERT_FALSE(dirs.empty());
    EXPECT_EQ(dirs.front(), dir);
    EXPECT_GE(dirs.size(), 2u);  // and the source-tree and installed folders after it
    EXPECT_EQ(found, (fs::path(dir) / "h100_sddmm").string());
}

TEST(ShippedModels, ModelOptionChoices) {
    const std::string both = folder_with("models_choice", {"h100_spmm.pt", "h100_spmm.json"});
    const std::string prefix = (fs::path(both) / "h100_spmm").string();
    // auto, genetic, LibTorch, a folder with the model: that model, and the summary names it.
    ModelChoice c = choose_model("auto", "gpu_spmm", true, true, {both});
    EXPECT_EQ(c.prefix, prefix);
    EXPECT_NE(c.line.find(prefix), std::string::npos) << c.line;
    EXPECT_NE(c.line.find("--model none"), std::string::npos) << c.line;
    // auto without a reason to load one: no model, and a line that says why.
    c = choose_model("auto", "cpu_spmm", true, true, {both});
    EXPECT_TRUE(c.prefix.empty());
    EXPECT_NE(c.line.find("no cost model ships for cpu_spmm"), std::string::npos) << c.line;
    c = choose_model("auto", "gpu_spmm", true, false, {both});
    EXPECT_TRUE(c.prefix.empty());
    EXPECT_NE(c.line.find("no LibTorch"), std::string::npos) << c.line;
    c = choose_model("auto", "gpu_sddmm", true, true, {both});
    EXPECT_TRUE(c.prefix.empty());
    EXPECT_NE(c.line.find("h100_sddmm"), std::string::npos) << c.line;
    EXPECT_NE(c.line.find("GSPARSE_MODELS_DIR"), std::string::npos) << c.line;
    // auto for a search that uses no model (random, exhaustive): nothing to say.
    c = choose_model("auto", "gpu_spmm", false, true, {both});
    EXPECT_TRUE(c.prefix.empty());
    EXPECT_TRUE(c.line.empty());
    // none: no model whatever the schedule; a prefix: that prefix as given.
    c = choose_model("none", "gpu_spmm", true, true, {both});
    EXPECT_TRUE(c.prefix.empty());
    EXPECT_TRUE(c.line.empty());
    c = choose_model("/models/mine", "gpu_spmm", true, true, {both});
    EXPECT_EQ(c.prefix, "/models/mine");
    EXPECT_EQ(c.line, "/models/mine");
    c = choose_model("/models/mine", "gpu_spmm", false, true, {both});
    EXPECT_EQ(c.prefix, "/models/mine");  // still loaded: a bad file is an error in any mode
    EXPECT_NE(c.line.find("not used"), std::string::npos) << c.line;
}

}  // namespace
}  // namespace gsparse::autotune
