// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Shared by the libFuzzer targets (docs/testing.md): each feeds one input path
 * arbitrary bytes. A config_error is the expected answer to bad input; any
 * other exception escaping, a crash, a sanitizer report, a leak, a time-out or
 * memory beyond libFuzzer's -rss_limit_mb is a finding.
 */
#include "sim/config_error.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace schedlab::fuzz {

/// Machines up to this size also get their sched domains built (larger ones would make each
/// execution slow; the size limits themselves are unit-tested).
inline constexpr int max_topology_cpus = 512;

inline std::string text_of(const std::uint8_t* data, std::size_t size)
{
    return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs f(); config_error (bad input, clearly reported) is fine, anything else escapes.
template <typename F> void expect_clean(F&& f)
{
    try {
        f();
    } catch (const config_error& e) {
        if (std::string(e.what()).empty())
            __builtin_trap(); // an error must say what is wrong
    }
}

/// True for a trace-cmd .dat file's magic: libtracecmd's input (Debian's build, not
/// instrumented here), not a fuzz target's subject.
inline bool is_trace_cmd_dat(const std::uint8_t* data, std::size_t size)
{
    return size >= 10 && std::memcmp(data, "\x17\x08" "Dtracing", 10) == 0;
}

/// A file in the temporary directory named after the target and this process, removed at
/// exit; write() replaces its contents with an input (for readers that take a path).
struct scratch_file {
    std::string path;
    explicit scratch_file(const std::string& name)
        : path((std::filesystem::temp_directory_path() /
                ("schedlab-fuzz-" + name + "-" + std::to_string(getpid()) + ".txt"))
                   .string())
    {
    }
    ~scratch_file() { std::remove(path.c_str()); }
    void write(const std::uint8_t* data, std::size_t size) const
    {
        if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
            std::fwrite(data, 1, size, f);
            std::fclose(f);
        }
    }
};

/// A directory in the temporary directory named after the target and this process, removed
/// with what it holds at exit. Held in a function-local static, as scratch_file is: libFuzzer's
/// driver ends by exit() (after -runs, -max_total_time or a list of input files), which runs
/// its destructor; a crash, a time-out or a signal ends by _Exit() and leaves it, as it
/// leaves the reproducer.
struct scratch_dir {
    std::filesystem::path path;
    explicit scratch_dir(const std::string& name)
        : path(std::filesystem::temp_directory_path() /
               ("schedlab-fuzz-" + name + "-" + std::to_string(getpid())))
    {
    }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    ~scratch_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

/// Splits on NUL or newline into argv-like words (empty words kept: "" is an argument too).
inline std::vector<std::string> words_of(const std::string& text, std::size_t max_words = 64)
{
    std::vector<std::string> out(1);
    for (char ch : text) {
        if (ch == '\0' || ch == '\n') {
            if (out.size() == max_words)
                break;
            out.emplace_back();
        } else {
            out.back() += ch;
        }
    }
    return out;
}

} // namespace schedlab::fuzz
