// SPDX-License-Identifier: GPL-2.0-only
/*
 * The decision log (decision_log.h): off without a sink, each decision handed
 * over as it is made, and a kernel's placements explained by their branches.
 */
#include "sched/decision_log.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <vector>

namespace schedlab {
namespace {

using testlib::sched_fixture;

struct recording_sink final : decision_sink {
    std::vector<sched_decision> got;
    void decision(const sched_decision& d) override { got.push_back(d); }
};

TEST(decision_log, hands_nothing_over_without_a_sink)
{
    decision_log log;
    EXPECT_FALSE(log.on());
    log.log(5, 1, "load_balance", "dropped"); // no sink: nothing to reach, no crash
    recording_sink sink;
    log.set_sink(&sink);
    EXPECT_TRUE(log.on());
    log.log(7, 3, "load_balance", "kept");
    ASSERT_EQ(sink.got.size(), 1u);
    EXPECT_EQ(sink.got[0].ts, 7);
    EXPECT_EQ(sink.got[0].cpu, 3);
    EXPECT_EQ(sink.got[0].what, "load_balance");
    EXPECT_EQ(sink.got[0].text, "kept");
    log.set_sink(nullptr);
    log.log(9, 0, "load_balance", "dropped");
    EXPECT_EQ(sink.got.size(), 1u);
}

TEST(decision_log, last_placement_names_both_branches)
{
    decision_log log;
    log.select_begin("prev");
    EXPECT_EQ(log.last_placement(), "prev");
    log.select_branch("wake_affine: waker cpu");
    log.sis_branch("prev idle");
    EXPECT_EQ(log.last_placement(), "wake_affine: waker cpu; select_idle_sibling: prev idle");
    // A new placement forgets the previous one's select_idle_sibling() branch.
    log.select_begin("prev");
    EXPECT_EQ(log.last_sis_branch(), nullptr);
    EXPECT_EQ(log.last_placement(), "prev");
}

TEST(decision_log, a_kernel_explains_each_wakeup_placement)
{
    sched_fixture t(testlib::small_machine(4), "6.6");
    recording_sink sink;
    t.k->decisions().set_sink(&sink);
    t.spawn("sleeper", testlib::run_sleep(usecs(100), usecs(900), 5));
    t.run_for(msecs(10));
    int placements = 0;
    for (const sched_decision& d : sink.got) {
        if (d.what != "select_task_rq")
            continue;
        ++placements;
        EXPECT_NE(d.text.find("pid 1 (sleeper)"), std::string::npos) << d.text;
    }
    // Five runs, each followed by a sleep and its timer's wakeup; then the exit.
    EXPECT_EQ(placements, 5);
}

} // namespace
} // namespace schedlab
