// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/timeline.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

const std::string tl_comm_a = "a", tl_comm_b = "b", tl_idle = "swapper";

/// cpu0: a runs [0,100), sleeps, is woken from cpu1 at 150 and runs on cpu0 at 170 until b
/// preempts it at 200; b runs to the end. cpu1: b runs [50,120) and migrates to cpu0 at 190.
void play(timeline_recorder& r)
{
    r.sched_switch({0, 0, 0, &tl_idle, trace_task_state::R, false, 1, &tl_comm_a});
    r.sched_switch({50, 1, 0, &tl_idle, trace_task_state::R, false, 2, &tl_comm_b});
    r.sched_switch({100, 0, 1, &tl_comm_a, trace_task_state::S, false, 0, &tl_idle});
    r.sched_switch({120, 1, 2, &tl_comm_b, trace_task_state::S, false, 0, &tl_idle});
    r.sched_waking({150, 1, 1, &tl_comm_a, 0});
    r.sched_switch({170, 0, 0, &tl_idle, trace_task_state::R, false, 1, &tl_comm_a});
    r.sched_migrate_task({190, 2, &tl_comm_b, 1, 0});
    r.sched_switch({200, 0, 1, &tl_comm_a, trace_task_state::R, true, 2, &tl_comm_b});
}

TEST(timeline_recorder, keeps_runs_wakeups_and_migrations)
{
    timeline_recorder r(2, 0, 1000, 1000);
    play(r);
    const timeline t = r.finish(300);
    EXPECT_EQ(t.to, 300); // the run ended before the window
    ASSERT_EQ(t.slices[0].size(), 3u);
    EXPECT_EQ(t.slices[0][0].start, 0);
    EXPECT_EQ(t.slices[0][0].end, 100);
    EXPECT_EQ(t.slices[0][1].pid, 1);
    EXPECT_EQ(t.slices[0][1].start, 170);
    EXPECT_EQ(t.slices[0][2].pid, 2); // b, closed at the end of the run
    EXPECT_EQ(t.slices[0][2].end, 300);
    ASSERT_EQ(t.slices[1].size(), 1u);
    ASSERT_EQ(t.wakeups.size(), 1u);
    EXPECT_EQ(t.wakeups[0].waking, 150);
    EXPECT_EQ(t.wakeups[0].waker_cpu, 1);
    EXPECT_EQ(t.wakeups[0].run, 170);
    EXPECT_EQ(t.wakeups[0].run_cpu, 0);
    ASSERT_EQ(t.migrations.size(), 1u);
    EXPECT_EQ(t.migrations[0].dest_cpu, 0);
    EXPECT_EQ(t.comms.at(1), "a");
    EXPECT_FALSE(t.cut);
}

TEST(timeline_recorder, clips_runs_to_the_window)
{
    timeline_recorder r(2, 60, 180, 1000);
    play(r);
    const timeline t = r.finish(300);
    EXPECT_EQ(t.to, 180);
    ASSERT_EQ(t.slices[0].size(), 2u);
    EXPECT_EQ(t.slices[0][0].start, 60); // a's [0,100) clipped
    EXPECT_EQ(t.slices[0][1].start, 170);
    EXPECT_EQ(t.slices[0][1].end, 180);
    EXPECT_EQ(t.slices[1][0].start, 60);
    EXPECT_EQ(t.wakeups.size(), 1u);
    EXPECT_TRUE(t.migrations.empty()); // at 190, past the window
}

TEST(timeline_recorder, a_record_limit_cuts_the_window_and_keeps_it_complete)
{
    timeline_recorder r(2, 0, 1000, 1);
    play(r);
    const timeline t = r.finish(300);
    // a's [0,100) is the one record; b's run on cpu1 ending at 120 is past the limit and cuts
    // the window at 120, but it was running then, so it is kept up to the cut
    EXPECT_TRUE(t.cut);
    EXPECT_EQ(t.to, 120);
    ASSERT_EQ(t.slices[0].size(), 1u);
    ASSERT_EQ(t.slices[1].size(), 1u);
    EXPECT_EQ(t.slices[1][0].end, 120);
    EXPECT_TRUE(t.wakeups.empty());
    EXPECT_TRUE(t.migrations.empty());
}

TEST(timeline_recorder, a_limit_reached_at_the_window_end_keeps_the_runs_going_then)
{
    // the window ends at 110: a's run (to 100) is the one record, b's (50-120) reaches the
    // limit after the window's end, so nothing is cut, and b's run is kept up to 110
    timeline_recorder r(2, 0, 110, 1);
    play(r);
    const timeline t = r.finish(300);
    EXPECT_FALSE(t.cut);
    EXPECT_EQ(t.to, 110);
    ASSERT_EQ(t.slices[1].size(), 1u);
    EXPECT_EQ(t.slices[1][0].end, 110);
}

TEST(timeline_recorder, keeps_idle_periods_with_their_c_state)
{
    // cpu0 runs a [0,100), idles in C1 to 170, runs a again, idles deep from 250 to the end;
    // cpu1 idles polling [20,40)
    timeline_recorder r(2, 30, 1000, 1000);
    r.sched_switch({0, 0, 0, &tl_idle, trace_task_state::R, false, 1, &tl_comm_a});
    r.cpu_idle({20, 0, 1});
    r.cpu_idle({40, PWR_EVENT_EXIT, 1});
    r.sched_switch({100, 0, 1, &tl_comm_a, trace_task_state::S, false, 0, &tl_idle});
    r.cpu_idle({100, 1, 0});
    r.cpu_idle({170, PWR_EVENT_EXIT, 0});
    r.sched_switch({170, 0, 0, &tl_idle, trace_task_state::R, false, 1, &tl_comm_a});
    r.sched_switch({250, 0, 1, &tl_comm_a, trace_task_state::S, false, 0, &tl_idle});
    r.cpu_idle({250, 2, 0});
    const timeline t = r.finish(300);
    ASSERT_EQ(t.idle.size(), 2u);
    ASSERT_EQ(t.idle[0].size(), 2u);
    EXPECT_EQ(t.idle[0][0].start, 100);
    EXPECT_EQ(t.idle[0][0].end, 170);
    EXPECT_EQ(t.idle[0][0].state, 1u);
    EXPECT_EQ(t.idle[0][1].start, 250);
    EXPECT_EQ(t.idle[0][1].end, 300); // still idle at the end of the run
    EXPECT_EQ(t.idle[0][1].state, 2u);
    ASSERT_EQ(t.idle[1].size(), 1u);
    EXPECT_EQ(t.idle[1][0].start, 30); // clipped to the window
    EXPECT_EQ(t.idle[1][0].end, 40);
    EXPECT_EQ(t.idle[1][0].state, 0u);
}

} // namespace
} // namespace schedlab
