// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Helpers shared by the test binaries of every layer (header-only; tests only).
 */
#include "sim/config_error.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace schedlab::test_support {

/// The message of the config_error that f() throws, or `none` when it throws none.
template <typename F> std::string error_of(F&& f, std::string none = "")
{
    try {
        std::forward<F>(f)();
    } catch (const config_error& e) {
        return e.what();
    }
    return none;
}

/// The whole contents of the file `path` ("" when it cannot be read).
inline std::string slurp(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// An empty directory `PREFIX NAME _PID` under the temporary directory (emptied when a
/// failed run left it behind); one per process, as ctest runs tests in parallel processes.
inline std::filesystem::path temp_dir(const std::string& prefix, const std::string& name)
{
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                (prefix + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

} // namespace schedlab::test_support
