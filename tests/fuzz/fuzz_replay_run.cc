// SPDX-License-Identifier: GPL-2.0-only
/*
 * Real traces replayed (docs/replay.md): what `schedlab replay` does after the trace is read.
 * The ftrace target stops at the tasks rebuilt; this one runs them, so a trace that parses
 * but describes behaviour no real run would (a wake of a task that never blocks, a fork of a
 * task seen before, a block that nothing ends, waits out of order) reaches the simulation:
 * the replay's dependency counters and flow-control holds, the kernel model's invariant
 * checks (this build has no NDEBUG: every __schedule() is checked) and the run's end.
 * The --deps mode is the input's size modulo 5 (flow, count, edge, keep, reply), so each mode
 * sees inputs; the machine is a fixed preset (ryzen-7950x: 32 CPUs, two LLCs), never `host`, and
 * one simulated second bounds every run.
 */
#include "experiment/run.h"
#include "fuzz_support.h"

#include <array>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    if (fuzz::is_trace_cmd_dat(data, size))
        return 0;
    static const fuzz::scratch_file scratch("replay-run");
    scratch.write(data, size);
    static constexpr std::array<const char*, 5> deps = {"flow", "count", "edge", "keep", "reply"};
    run_spec spec;
    spec.machine = "ryzen-7950x";
    spec.kernel = "6.18";
    spec.workload_argv = {"replay", scratch.path, "--deps", deps[size % deps.size()], "--quiet"};
    spec.time_limit_s = 1;
    fuzz::expect_clean([&] { execute_run(spec); });
    return 0;
}
