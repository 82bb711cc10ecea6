// SPDX-License-Identifier: GPL-2.0-only
/*
 * replay_flips: a replayed root's wakee_flips read from its first wakeups of its children
 * (replay_flips.h), by hand and on the shared messaging traces.
 */
#include "workload/replay_flips.h"

#include "trace/ftrace_text_test_support.h"
#include "workload/replay.h"

#include "sim/scratch_dir_test_support.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedlab {
namespace {

using test_support::line;
using test_support::scratch_dir;
using test_support::sw;
using ::testing::HasSubstr;
using testing::test_env;

// The form's halving against record_wakee() run on each N: ((N + add) >> shift) + plus.
TEST(replay_flips, a_form_is_the_count_of_every_start)
{
    for (u64 n = 0; n < 200; ++n) {
        flips_form f;
        u64 direct = n;
        for (int i = 0; i < 300; ++i) {
            if ((i * 7 + 3) % 11 < 3) {
                f.halve();
                direct >>= 1;
            } else {
                f.flip();
                ++direct;
            }
            ASSERT_EQ(f.at(n), direct) << "n " << n << " step " << i;
        }
    }
}

TEST(replay_flips, wake_wide_by_hand)
{
    EXPECT_FALSE(flips_wide(5, 3, 2)); // 5 < 3 * 2
    EXPECT_TRUE(flips_wide(6, 3, 2));
    EXPECT_TRUE(flips_wide(3, 6, 2));   // either may be the master
    EXPECT_FALSE(flips_wide(40, 1, 2)); // the slave below llc_size
}

constexpr const char* flips_header = "# tracer: nop\n"
                               "# entries-in-buffer/entries-written: 1/1   #P:2\n";

std::string flips_waking(const std::string& comm, int pid, int target)
{
    return fmt::format("sched_waking: comm={} pid={} prio=120 target_cpu={:03}", comm, pid, target);
}

std::string flips_wakeup(const std::string& comm, int pid, int target)
{
    return fmt::format("sched_wakeup: comm={} pid={} prio=120 target_cpu={:03}", comm, pid, target);
}

/*
 * perf bench messaging's start, by hand: main process m (pid 10, on CPU 1) wakes a task not
 * replayed (k, pid 99: a flip), forks six children, which run on CPU 0 and block, then wakes
 * them newest first: 16 runs on CPU 0 (its previous, idle: no evidence), 15 on CPU 1 (the
 * waker's), 14-11 on
 * CPU 0. With N m's flips at the start and Q = N + 1 at the forks, the children start with Q
 * (dup_task_struct()) and the i-th wakee meets m at Q + i (record_wakee() before
 * wake_wide()): with llc_size 2, wide from i = Q once Q >= 2. The turn at wakee 3 is Q = 3,
 * N = 2; N = 1 makes wakee 2 wide too, N = 3 leaves wakee 3 affine, N = 0 none wide.
 */
std::string wake_all_trace()
{
    std::string t = flips_header;
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "m", 10));
    t += line("m-10", 1, "d..3.", 1010, flips_waking("k", 99, 1));
    long us = 1100;
    for (int c = 11; c <= 16; ++c, us += 100) {
        t += line("m-10", 1, ".....", us,
                  fmt::format("sched_process_fork: comm=m pid=10 child_comm=m child_pid={}", c));
        t += line("<idle>-0", 0, "d..2.", us + 10, sw("swapper/0", 0, "R", "m", c));
        t += line(fmt::format("m-{}", c), 0, "d..2.", us + 20, sw("m", c, "S", "swapper/0", 0));
    }
    // 16 on its idle previous CPU (no evidence), 15 on the waker's, 14-11 on their busy
    // previous CPU (running 16).
    t += line("m-10", 1, "d..3.", 2000, flips_waking("m", 16, 0));
    t += line("<idle>-0", 0, "dNh2.", 2001, flips_wakeup("m", 16, 0));
    t += line("<idle>-0", 0, "d..2.", 2002, sw("swapper/0", 0, "R", "m", 16));
    t += line("m-10", 1, "d..3.", 2003, flips_waking("m", 15, 0));
    t += line("m-10", 1, "d..4.", 2004, flips_wakeup("m", 15, 1));
    for (int c = 14; c >= 11; --c) {
        t += line("m-10", 1, "d..3.", 2005 + 2 * (14 - c), flips_waking("m", c, 0));
        t += line("m-10", 1, "d..4.", 2006 + 2 * (14 - c), flips_wakeup("m", c, 0));
    }
    t += line("m-10", 1, "d..2.", 2020, sw("m", 10, "S", "m", 15));
    t += line("m-16", 0, "d..2.", 2030, sw("m", 16, "S", "m", 14));
    t += line("m-14", 0, "d..2.", 2040, sw("m", 14, "S", "m", 13));
    t += line("m-13", 0, "d..2.", 2050, sw("m", 13, "S", "m", 12));
    t += line("m-12", 0, "d..2.", 2060, sw("m", 12, "S", "m", 11));
    t += line("m-11", 0, "d..2.", 2070, sw("m", 11, "S", "swapper/0", 0));
    t += line("m-15", 1, "d..2.", 2080, sw("m", 15, "S", "swapper/1", 0));
    return t;
}

class replay_flips_build : public scratch_dir {};

TEST_F(replay_flips_build, the_wake_all_turn_tells_the_main_process_flips)
{
    const std::string p = write("t.txt", wake_all_trace());
    replay_options o;
    o.comm_regex = "^m$";
    const replay_trace t = load_replay_trace(p, o);
    ASSERT_EQ(t.flips_roots.size(), 1u);
    const flips_root& r = t.flips_roots[0];
    EXPECT_EQ(r.pid, 10);
    ASSERT_EQ(r.evidence.size(), 6u);
    int w = 0, prev = 0, busy = 0;
    for (const flips_evidence& e : r.evidence) {
        w += e.where == wakeup_target::waker;
        prev += e.where == wakeup_target::prev;
        busy += e.where == wakeup_target::prev && e.prev_busy;
        EXPECT_EQ(e.wakee.at(2), 3u); // forked at Q = N + 1
    }
    EXPECT_EQ(w, 1);
    EXPECT_EQ(prev, 5);
    EXPECT_EQ(busy, 4); // 16's previous CPU was idle
    const auto llc2 = [](int) { return 2; };
    EXPECT_EQ(infer_wakee_flips(r.evidence, llc2), 2u);
    // Without its wakeup on the waker's CPU, the burst tells nothing: 0.
    std::vector<flips_evidence> no_turn;
    for (const flips_evidence& e : r.evidence)
        if (e.where != wakeup_target::waker)
            no_turn.push_back(e);
    EXPECT_EQ(infer_wakee_flips(no_turn, llc2), 0u);

    // The replay starts m with them (a 2-CPU machine: one LLC of 2), or with --wakee-flips N.
    test_env env(2, 1, "6.18");
    auto wl = make_replay_workload({p, "--comm", "^m$"});
    wl->setup(env.k.sys());
    env.k.run(secs(1));
    EXPECT_TRUE(wl->finished());
    EXPECT_THAT(wl->report(),
                HasSubstr("# wakee flips at the start, read from the trace (--wakee-flips "
                          "trace): pid 10 2 (1 of its first wakeups of its children on the "
                          "waker's CPU, 4 on a busy previous one);"));
    auto fixed = make_replay_workload({p, "--comm", "^m$", "--wakee-flips", "0"});
    EXPECT_THAT(fixed->command_line(), HasSubstr("--wakee-flips 0"));
    EXPECT_THAT(wl->command_line(), ::testing::Not(HasSubstr("--wakee-flips")));
}

// The shared messaging traces: each main process's flips before its wake-all, read by hand
// off the trace (docs/replay.md, "The wake-all's turn is wake_wide()"). g1 turns at wakee 3
// after one wakeup of rcu_preempt before the last forks (Q = 3, N = 2); g4 pipe at wakee 6
// after wakeups of rcu_preempt (three: one flip) and memfd:sealed-91 (Q = 6, N = 4); the
// trace-cmd g2 at wakee 11 after the same two flips (Q = 11, N = 9). Lane replay8 found the
// same N by trying --wakee-flips values until the replayed turn was the traced one.
TEST(replay_flips_shared, the_messaging_traces_main_processes)
{
    const std::string dir = std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/";
    const auto llc2 = [](int) { return 2; };
    const std::pair<const char*, u32> cases[] = {
        {"perf_messaging_g1_l200.trace.txt.xz", 2},
        {"perf_messaging_g4_pipe_l100.trace.txt.xz", 4},
        {"tracecmd_perf_messaging_g2_l100.dat", 9},
    };
    for (const auto& [file, n] : cases) {
        replay_options o;
        o.comm_regex = "^sched-messaging$";
        o.quiet = true;
        const replay_trace t = load_replay_trace(dir + file, o);
        ASSERT_EQ(t.flips_roots.size(), 1u) << file;
        EXPECT_EQ(infer_wakee_flips(t.flips_roots[0].evidence, llc2), n) << file;
    }
}

} // namespace
} // namespace schedlab
