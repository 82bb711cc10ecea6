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

} // namespace
} // namespace schedlab
