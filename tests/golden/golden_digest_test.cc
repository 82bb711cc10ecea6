// SPDX-License-Identifier: GPL-2.0-only
/*
 * Golden schedule digests: a fixed set of short runs across machines (from a
 * 16-core desktop to a 1024-CPU machine file), kernel profiles (5.15 to 6.18,
 * the evaluation tips and every patch-set delta) and benchmarks, each with the
 * digest of its whole schedule pinned (kernel::schedule_digest(): time, CPU,
 * prev and next pid of every context switch).
 *
 * Work for speed or structure keeps every digest. A change that alters
 * schedules on purpose is its own commit that updates the digests it moves
 * here and says why in its message. Optimised builds run every case; Debug and
 * sanitizer builds skip the heavy ones, so the light ones also check that
 * every build type schedules alike. To print the current digests in this
 * table's form: SCHEDLAB_GOLDEN_PRINT=1 build/tests/golden_test
 */
#include "experiment/run.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

namespace schedlab {
namespace {

struct golden_case {
    const char* name;    ///< test name
    const char* machine; ///< preset, or a file under tests/golden/
    const char* kernel;
    std::vector<std::string> argv;
    double time_limit_s; ///< truncates the long ones; the digest covers what ran
    u64 digest;
    bool heavy = false; ///< > 0.3 s in Release: run in optimised builds only
};

std::string golden_file(const char* name)
{
    // fmt, not std::string's operator+: GCC 12 at -O1 (make test's test programs) reports a
    // -Warray-bounds false positive in the inlined concatenation (char_traits.h memcpy).
    return fmt::format("{}/tests/golden/{}", SCHEDLAB_SOURCE_DIR, name);
}

const std::vector<golden_case>& cases()
{
    static const std::vector<golden_case> c = {
        {"messaging_pipes_ryzen_6_6",
         "ryzen-7950x",
         "6.6",
         {"perf", "bench", "sched", "messaging", "-g", "2", "-p", "-l", "50"},
         600,
         0x5b76ecd714fbccca},
        {"messaging_sockets_ryzen_5_15",
         "ryzen-7950x",
         "5.15",
         {"perf", "bench", "sched", "messaging", "-g", "2", "-l", "50"},
         600,
         0xaedbccf8c4079bd8},
        {"pipe_skylake_6_1",
         "skylake-18c",
         "6.1",
         {"perf", "bench", "sched", "pipe", "-l", "20000"},
         600,
         0x744dcb6b972b676e},
        {"pipe_threaded_ryzen_6_18_no_run_to_parity",
         "ryzen-7950x",
         "6.18+NO_RUN_TO_PARITY",
         {"perf", "bench", "sched", "pipe", "-l", "10000", "-T"},
         600,
         0x2324488c8d697117},
        {"tbench_milan_6_12",
         "milan-2s",
         "6.12",
         {"tbench", "-t", "0.02", "8"},
         600,
         0xb968f328d978b3d1,
         true},
        {"tbench_bergamo_tip_2023_08_shared_runq_v3",
         "bergamo-2s",
         "tip-2023-08+shared_runq_v3",
         {"tbench", "-t", "0.02", "16"},
         0.4,
         0x9d727209c87c4650,
         true},
        {"netperf_tcp_rr_bergamo_shared_runq_v3_noopt_tg_ratelimit",
         "bergamo-2s",
         "tip-2023-08+shared_runq_v3_noopt+tg_ratelimit",
         {"netperf", "-t", "TCP_RR", "--instances", "256", "-l", "-500"},
         600,
         0x85766ba5e8eeb041,
         true},
        {"netperf_tcp_rr_spr_sis_short_v6",
         "spr-2s",
         "tip-2023-02+sis_short_v6",
         {"netperf", "-t", "TCP_RR", "--instances", "112", "-l", "-1000"},
         600,
         0xc7c91870aaa071b8,
         true},
        {"netperf_udp_rr_milan_6_1",
         "milan-2s",
         "6.1",
         {"netperf", "-t", "UDP_RR", "--instances", "64", "-l", "-1000"},
         600,
         0x4f6ed09e99673626},
        {"context_switch1_spr_tip_2023_02",
         "spr-2s",
         "tip-2023-02",
         {"context_switch1_processes", "-t", "56", "-s", "1", "--warmup", "0", "--interval",
          "0.01"},
         600,
         0x52dc4e7c388bbf7d,
         true},
        {"schbench_icelake_6_18",
         "icelake-2s",
         "6.18",
         {"schbench", "-m", "2", "-t", "16", "-r", "1", "-w", "0"},
         600,
         0x6393805caf6e6e0e},
        {"schbench_old_bergamo_tip_2023_12",
         "bergamo-2s",
         "tip-2023-12",
         {"schbench", "--variant=old", "-m", "2", "-t", "32", "-r", "1"},
         600,
         0x6fae56ccd042b952},
        {"messaging_skylake_5_15_rc3_stacking",
         "skylake-18c",
         "5.15-rc3+stacking",
         {"perf", "bench", "sched", "messaging", "-g", "4", "-l", "100"},
         600,
         0x543d61440deeaf4a},
        {"messaging_threads_milan_tip_2023_12_shared_runq_v4",
         "milan-2s",
         "tip-2023-12+shared_runq_v4",
         {"perf", "bench", "sched", "messaging", "-g", "8", "-t", "-l", "50"},
         600,
         0x6f278b33781384d3},
        {"rtapp_ryzen_6_5",
         "ryzen-7950x",
         "6.5",
         {"rt-app", "@rtapp-mix.json", "--duration", "0.3"},
         600,
         0x09aa8a2d073d50e0},
        {"kbuild_ryzen_6_6",
         "ryzen-7950x",
         "6.6",
         {"make", "-j", "32", "--objects", "200"},
         600,
         0xadcce3182a92da59},
        {"stream_milan_6_6",
         "milan-2s",
         "6.6",
         {"stream", "--threads", "32", "--array-size", "1000000", "--ntimes", "2"},
         600,
         0xceb70b31978defda},
        {"messaging_1024_cpus_6_6",
         "@bergamo-4s-1024.json",
         "6.6",
         {"perf", "bench", "sched", "messaging", "-g", "16", "-l", "20"},
         600,
         0xd1e576e8d30dd932},
        {"tbench_1024_cpus_6_6",
         "@bergamo-4s-1024.json",
         "6.6",
         {"tbench", "-t", "0.02", "64"},
         0.25,
         0xda1956b46d58fe4a,
         true},
    };
    return c;
}

/// "@file" names a file in tests/golden/.
std::string resolve(const std::string& s)
{
    return s.starts_with("@") ? golden_file(s.c_str() + 1) : s;
}

run_spec spec_of(const golden_case& g)
{
    run_spec s;
    s.machine = resolve(g.machine);
    s.kernel = g.kernel;
    s.seed = 1;
    for (const std::string& a : g.argv)
        s.workload_argv.push_back(resolve(a));
    s.time_limit_s = g.time_limit_s;
    return s;
}

// Printed by gtest for a failing case: its name, not its bytes.
void PrintTo(const golden_case& g, std::ostream* os)
{
    *os << g.name;
}

class golden_digest : public ::testing::TestWithParam<golden_case> {};

TEST_P(golden_digest, schedule_is_unchanged)
{
    const golden_case& g = GetParam();
#ifndef SCHEDLAB_GOLDEN_HEAVY
    if (g.heavy)
        GTEST_SKIP() << "runs in optimised builds only (60-100x slower under ASan + Debug)";
#endif
    const run_result r = execute_run(spec_of(g));
    if (std::getenv("SCHEDLAB_GOLDEN_PRINT"))
        fmt::print("{:<60} 0x{:016x}  ({} events, finished {})\n", g.name, r.schedule_digest,
                   r.events_fired, r.finished);
    EXPECT_EQ(r.schedule_digest, g.digest) << fmt::format(
        "{}: --machine {} --kernel {} -- {} (time limit {} s) now gives digest "
        "0x{:016x}. Speed and structure work keep every digest; a deliberate "
        "change of schedules updates this table in its own commit that says why.",
        g.name, g.machine, g.kernel, fmt::join(g.argv, " "), g.time_limit_s, r.schedule_digest);
}

INSTANTIATE_TEST_SUITE_P(runs, golden_digest, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return std::string(p.param.name); });

} // namespace
} // namespace schedlab
