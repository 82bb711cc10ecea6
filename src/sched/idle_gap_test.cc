// SPDX-License-Identifier: GPL-2.0-only
/*
 * The idle-gap counters (idle_gap.h): idle CPU time beside waiting tasks, per LLC and
 * over the machine, and idle spells by length, from nr_running changes alone.
 */
#include "sched/idle_gap.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

TEST(idle_gap_stats, integrates_idle_time_beside_waiting_tasks_per_llc_and_machine)
{
    idle_gap_stats g;
    g.init({0, 0, 1, 1}, {2, 2}); // two LLCs of two CPUs, all idle from 0
    g.nr_running_changed(0, 1, 100, 0, 0);
    g.nr_running_changed(2, 1, 100, 0, 0);
    g.nr_running_changed(2, 2, 200, 0, 0); // LLC 1: a task waits on CPU 2 from 200
    g.nr_running_changed(2, 1, 500, 0, 0); // ... until 500
    g.machine.advance(1000);
    for (auto& l : g.llcs)
        l.advance(1000);
    // Idle: CPUs 1 and 3 for 1000 ns, CPUs 0 and 2 for their first 100.
    EXPECT_EQ(g.machine.idle_ns, 2200u);
    // A task waited 200-500: CPUs 1 and 3 were idle then (machine), CPU 3 only in its LLC.
    EXPECT_EQ(g.machine.waiting_ns, 300u);
    EXPECT_EQ(g.machine.idle_waiting_ns, 600u);
    EXPECT_EQ(g.llcs[1].idle_waiting_ns, 300u);
    EXPECT_EQ(g.llcs[0].idle_waiting_ns, 0u);
    EXPECT_EQ(g.llcs[1].waiting_idle_ns, 300u);
    EXPECT_EQ(g.machine.waiting_idle_ns, 300u);
}

TEST(idle_gap_stats, counts_a_spell_by_its_length_and_its_llc_then)
{
    idle_gap_stats g;
    g.init({0, 0}, {2});
    g.nr_running_changed(0, 2, 0, 0, 0); // CPU 0: a task waits
    g.nr_running_changed(1, 1, 0, 0, 0);
    g.nr_running_changed(1, 0, 1000, 50, 40); // CPU 1's spell begins beside it, gate open
    g.nr_running_changed(1, 1, 1700, 0, 0);   // 0.7 us
    ASSERT_EQ(g.spells[1].count, 1u);         // the 0.5-1 us bucket
    EXPECT_EQ(g.spells[1].ns, 700u);
    EXPECT_EQ(g.spells[1].llc_waiting, 1u);
    EXPECT_EQ(g.spells[1].llc_waiting_ns, 700u);
    EXPECT_EQ(g.spells[1].gate_open, 1u);
    EXPECT_EQ(g.spells[1].longer_than_gate, 1u);
    EXPECT_EQ(g.spells[1].avg_idle_sum, 50u);
    EXPECT_EQ(g.spells[1].gate_sum, 40u);
    g.nr_running_changed(0, 1, 2000, 0, 0);
    g.nr_running_changed(1, 0, 3000, 10, 40000); // no task waits now; gate closed
    g.nr_running_changed(1, 1, 3300, 0, 0);
    // Below 0.5 us: this 0.3 us spell and the run's first two, idle from 0, ended at 0.
    EXPECT_EQ(g.spells[0].count, 3u);
    EXPECT_EQ(g.spells[0].ns, 300u);
    EXPECT_EQ(g.spells[0].llc_waiting, 0u);
}

} // namespace
} // namespace schedlab
