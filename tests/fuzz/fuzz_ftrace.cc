// SPDX-License-Identifier: GPL-2.0-only
/*
 * Real traces (docs/replay.md): the ftrace text parser, the switch-in inference and the
 * replay's rebuilding of the tasks, fed through a file as `schedlab replay` reads one
 * (text only: .dat files are libtracecmd's to parse).
 */
#include "fuzz_support.h"
#include "workload/replay.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    // A trace-cmd .dat file goes to libtracecmd's own parser (Debian's build, not instrumented
    // here): not this target's subject.
    if (size >= 10 && std::memcmp(data,
                                  "\x17\x08"
                                  "Dtracing",
                                  10) == 0)
        return 0;
    struct scratch_file {
        std::string path = (std::filesystem::temp_directory_path() /
                            ("schedlab-fuzz-ftrace-" + std::to_string(getpid())))
                               .string();
        ~scratch_file() { std::remove(path.c_str()); }
    };
    static const scratch_file scratch;
    const std::string& path = scratch.path;
    if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    fuzz::expect_clean([&] { load_replay_trace(path, {}); });
    return 0;
}
