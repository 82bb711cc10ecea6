// SPDX-License-Identifier: GPL-2.0-only
/*
 * Real traces replayed (docs/replay.md): what `schedlab replay` does after the trace is read.
 * The ftrace target stops at the tasks rebuilt; this one runs them, so a trace that parses
 * but describes behaviour no real run would (a wake of a task that never blocks, a fork of a
 * task seen before, a block that nothing ends, waits out of order) reaches the simulation:
 * the replay's dependency counters and flow-control holds, the kernel model's invariant
 * checks (this build has no NDEBUG: every __schedule() is checked) and the run's end.
 * The --deps mode is the input's size modulo 4 (flow, count, edge, keep), so each mode sees
 * inputs; the machine is a fixed preset (ryzen-7950x: 32 CPUs, two LLCs), never `host`, and
 * one simulated second bounds every run.
 */
#include "experiment/run.h"
#include "fuzz_support.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    // trace-cmd .dat input goes to libtracecmd's parser (not instrumented here).
    if (size >= 10 && std::memcmp(data,
                                  "\x17\x08"
                                  "Dtracing",
                                  10) == 0)
        return 0;
    struct scratch_file {
        std::string path = (std::filesystem::temp_directory_path() /
                            ("schedlab-fuzz-replay-run-" + std::to_string(getpid()) + ".txt"))
                               .string();
        ~scratch_file() { std::remove(path.c_str()); }
    };
    static const scratch_file scratch;
    if (std::FILE* f = std::fopen(scratch.path.c_str(), "wb")) {
        std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    static constexpr std::array<const char*, 4> deps = {"flow", "count", "edge", "keep"};
    run_spec spec;
    spec.machine = "ryzen-7950x";
    spec.kernel = "6.18";
    spec.workload_argv = {"replay", scratch.path, "--deps", deps[size % deps.size()], "--quiet"};
    spec.time_limit_s = 1;
    fuzz::expect_clean([&] { execute_run(spec); });
    return 0;
}
