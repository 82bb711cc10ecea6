// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A GoogleTest fixture with an empty directory of its own per test (tests only): under the
 * temporary directory, named after the process and the test, removed afterwards.
 */
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/test_support.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace schedlab::test_support {

class scratch_dir : public ::testing::Test {
protected:
    void SetUp() override
    {
        dir_ = std::filesystem::temp_directory_path() /
               fmt::format("schedlab-test-{}-{}", ::getpid(),
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    /// Writes `text` to the file `name` in the directory; returns its path.
    std::string write(const std::string& name, const std::string& text) const
    {
        std::ofstream(path(name), std::ios::binary) << text;
        return path(name);
    }
    static std::string slurp(const std::string& p) { return test_support::slurp(p); }
    /// Files in the directory (a temporary left behind shows here).
    std::size_t entries() const
    {
        return static_cast<std::size_t>(
            std::distance(std::filesystem::directory_iterator(dir_), {}));
    }

    std::filesystem::path dir_;
};

} // namespace schedlab::test_support
