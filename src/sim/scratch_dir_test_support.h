// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * An empty directory of its own per test (tests only): under the temporary directory, named
 * after the process and the test, removed afterwards; as a GoogleTest fixture (scratch_dir) or
 * as an object a TEST() holds (scratch_files).
 */
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/test_support.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

namespace schedlab::test_support {

/// The directory itself, for a test that is not a fixture's (e.g. whose suite is named after a
/// class, as `results_store` is): created empty on construction, removed with what is in it on
/// destruction, even when the test fails.
class scratch_files {
public:
    scratch_files()
        : dir_(std::filesystem::temp_directory_path() /
               fmt::format("schedlab-test-{}-{}", ::getpid(),
                           ::testing::UnitTest::GetInstance()->current_test_info()->name()))
    {
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    ~scratch_files()
    {
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }
    scratch_files(const scratch_files&) = delete;
    scratch_files& operator=(const scratch_files&) = delete;

    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    /// Writes `text` to the file `name` in the directory; returns its path.
    std::string write(const std::string& name, const std::string& text) const
    {
        std::ofstream(path(name), std::ios::binary) << text;
        return path(name);
    }
    const std::filesystem::path& dir() const { return dir_; }

private:
    std::filesystem::path dir_;
};

class scratch_dir : public ::testing::Test {
protected:
    void SetUp() override
    {
        files_.emplace();
        dir_ = files_->dir();
    }
    void TearDown() override { files_.reset(); }

    std::string path(const std::string& name) const { return files_->path(name); }
    /// Writes `text` to the file `name` in the directory; returns its path.
    std::string write(const std::string& name, const std::string& text) const
    {
        return files_->write(name, text);
    }
    static std::string slurp(const std::string& p) { return test_support::slurp(p); }
    /// Files in the directory (a temporary left behind shows here).
    std::size_t entries() const
    {
        return static_cast<std::size_t>(
            std::distance(std::filesystem::directory_iterator(dir_), {}));
    }

    std::optional<scratch_files> files_;
    std::filesystem::path dir_;
};

} // namespace schedlab::test_support
