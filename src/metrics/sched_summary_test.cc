// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/sched_summary.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

const std::string comm_a = "a", comm_b = "b", idle = "swapper/0";

TEST(sched_summary, measures_waking_to_switch_in_and_busy_time)
{
    sched_summary s(2);
    // t=0: a starts on cpu0; t=100: a sleeps; t=150 a is woken; t=170 it runs.
    s.sched_switch({0, 0, 0, &idle, trace_task_state::R, false, 1, &comm_a});
    s.sched_switch({100, 0, 1, &comm_a, trace_task_state::S, false, 0, &idle});
    s.sched_waking({150, 1, 1, &comm_a, 0});
    s.sched_switch({170, 0, 0, &idle, trace_task_state::R, false, 1, &comm_a});
    // t=200: b preempts a
    s.sched_switch({200, 0, 1, &comm_a, trace_task_state::R, true, 2, &comm_b});
    s.sched_migrate_task({210, 1, &comm_a, 0, 1});
    s.sched_process_fork({220, 0, 3, 1, &comm_a}); // a forks pid 3
    s.sched_process_fork({230, 1, 4, 0, &comm_b}); // a spawn (no parent task): not a fork
    sched_summary_result r = s.finish(300);
    EXPECT_EQ(r.wakeup_latency.count(), 1u);
    EXPECT_EQ(r.wakeup_latency.max(), 20u);
    EXPECT_EQ(r.voluntary, 1u);
    EXPECT_EQ(r.involuntary, 1u);
    EXPECT_EQ(r.migrations, 1u);
    EXPECT_EQ(r.forks, 1u);
    EXPECT_EQ(r.busy[0], 100 + 130); // [0,100] and [170,300]
    EXPECT_NEAR(r.utilisation(0), 230.0 / 300.0, 1e-12);
    EXPECT_EQ(r.busy[1], 0);
    // run lengths: a's [0,100] and [170,200] ended; b's run still going at 300 has no end
    EXPECT_EQ(r.run_length.count(), 2u);
    EXPECT_EQ(r.run_length.min(), 30u);
    EXPECT_EQ(r.run_length.max(), 100u);
    EXPECT_NE(r.format().find("voluntary 1, involuntary 1"), std::string::npos);
}

/*
 * Wakeup targets, by hand (trace/wakeup_target.h): 3 CPUs, tasks a, b, c, d; each waking's
 * class follows from the waking's CPU, the wakee's previous CPU (target_cpu) and the CPU of
 * its next switch in.
 */
TEST(sched_summary, classes_each_waking_by_where_its_wakee_ran_next)
{
    const std::string c = "c", d = "d";
    const auto S = trace_task_state::S, R = trace_task_state::R;
    const auto irq = trace_irq_ctx::hardirq;
    sched_summary s(3);
    s.sched_switch({0, 0, 0, &idle, R, false, 1, &comm_a});
    s.sched_switch({0, 1, 0, &idle, R, false, 2, &comm_b});
    s.sched_switch({10, 1, 2, &comm_b, S, false, 0, &idle});
    s.sched_waking({20, 0, 2, &comm_b, 1});                   // a wakes b (prev cpu1) from cpu0
    s.sched_switch({30, 0, 1, &comm_a, R, true, 2, &comm_b}); // ... b runs on cpu0: waker's
    s.sched_waking({40, 0, 1, &comm_a, 0});                   // a is queued (preempted): not placed
    s.sched_switch({50, 0, 2, &comm_b, S, false, 1, &comm_a});
    s.sched_waking({60, 0, 2, &comm_b, 0, 120, irq});         // a timer on cpu0 wakes b (prev cpu0)
    s.sched_switch({70, 0, 1, &comm_a, R, true, 2, &comm_b}); // ... on cpu0: both, by irq
    s.sched_waking({80, 1, 3, &c, 2});                  // from idle cpu1, c (never seen, cpu2)
    s.sched_switch({90, 2, 0, &idle, R, false, 3, &c}); // ... on cpu2: prev, by idle
    s.sched_waking({100, 0, 4, &d, 1});                 // b wakes d (prev cpu1)
    s.sched_switch({105, 2, 3, &c, S, false, 0, &idle});
    s.sched_switch({110, 2, 0, &idle, R, false, 4, &d}); // ... on cpu2: other
    s.sched_waking({120, 0, 4, &d, 2});                  // b wakes d while d is on cpu2,
    s.sched_switch({121, 2, 4, &d, S, false, 0, &idle}); // in __schedule(): the block it ends
    s.sched_switch({130, 2, 0, &idle, R, false, 4, &d}); // ... d on cpu2 again: prev
    s.sched_waking({140, 0, 4, &d, 2});                  // b wakes d on cpu2, which runs on:
    s.sched_switch({150, 2, 4, &d, R, true, 0, &idle});  // preempted, not blocked: not placed
    s.sched_waking({160, 0, 3, &c, 2});                  // b wakes c, which never runs: not run
    s.sched_wakeup_new({170, 0, 5, &c, 1});              // a fork: a wakeup, no target
    const sched_summary_result r = s.finish(200);
    const wakeup_target_counts& t = r.wakeup_targets;
    const auto task = static_cast<int>(waker_kind::task),
               other = static_cast<int>(waker_kind::other);
    const auto at = [](wakeup_target k) { return static_cast<int>(k); };
    EXPECT_EQ(t.placed[task][at(wakeup_target::waker)], 1u); // b at 20
    EXPECT_EQ(t.placed[task][at(wakeup_target::prev)], 1u);  // d at 120
    EXPECT_EQ(t.placed[task][at(wakeup_target::both)], 0u);
    EXPECT_EQ(t.placed[task][at(wakeup_target::other)], 1u); // d at 100
    EXPECT_EQ(t.placed[other][at(wakeup_target::waker)], 0u);
    EXPECT_EQ(t.placed[other][at(wakeup_target::prev)], 1u); // c at 80
    EXPECT_EQ(t.placed[other][at(wakeup_target::both)], 1u); // b at 60
    EXPECT_EQ(t.placed[other][at(wakeup_target::other)], 0u);
    EXPECT_EQ(t.not_placed, 2u); // a at 40, d at 140
    EXPECT_EQ(t.not_run, 1u);    // c at 160
    EXPECT_EQ(r.wakeups, 9u);
    EXPECT_EQ(t.total(), 8u); // every sched_waking once
    // finish() can be asked again: the open ones are counted in the result, not kept.
    EXPECT_EQ(s.finish(200).wakeup_targets, t);
}

} // namespace
} // namespace schedlab
