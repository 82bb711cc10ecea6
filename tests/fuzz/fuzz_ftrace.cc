// SPDX-License-Identifier: GPL-2.0-only
/*
 * Real traces (docs/replay.md): the ftrace text parser, the switch-in inference and the
 * replay's rebuilding of the tasks, fed through a file as `schedlab replay` reads one
 * (text only: .dat files are libtracecmd's to parse).
 */
#include "fuzz_support.h"
#include "workload/replay.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    if (fuzz::is_trace_cmd_dat(data, size))
        return 0;
    static const fuzz::scratch_file scratch("ftrace");
    scratch.write(data, size);
    fuzz::expect_clean([&] { load_replay_trace(scratch.path, {}); });
    return 0;
}
