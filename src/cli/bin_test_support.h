// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Running the real schedlab binary from the CLI tests (header-only; tests only):
 * its exit code and everything it printed. SCHEDLAB_BIN is set by CMake.
 */
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace schedlab::test_support {

struct bin_result {
    int status;         ///< exit code; -1 when killed by a signal (a crash)
    int signal = 0;     ///< the signal that killed it, if one did
    std::string output; ///< stdout + stderr
};

/// Runs `schedlab ARGS` through the shell (ARGS may hold redirections). compare's default
/// results store is the user's: each command here gets a fresh one of its own instead (one
/// name per process, as ctest runs tests in parallel processes).
inline bin_result schedlab_bin(const std::string& args)
{
    const std::string store =
        ::testing::TempDir() + "/cli-test-store-" + std::to_string(getpid()) + ".sqlite";
    auto remove_store = [&] {
        for (const char* suffix : {"", "-wal", "-shm"})
            std::filesystem::remove(store + suffix);
    };
    remove_store();
    const std::string cmd =
        "SCHEDLAB_STORE=" + store + " " + std::string(SCHEDLAB_BIN) + " " + args + " 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf{};
    while (f && std::fgets(buf.data(), buf.size(), f))
        out += buf.data();
    const int st = f ? pclose(f) : -1;
    remove_store();
    if (WIFEXITED(st))
        return {WEXITSTATUS(st), 0, out};
    // The shell reports a child killed by signal N as exit code 128 + N.
    return {-1, WIFSIGNALED(st) ? WTERMSIG(st) : 0, out};
}

} // namespace schedlab::test_support
