// SPDX-License-Identifier: GPL-2.0-only
/*
 * EEVDF arithmetic on hand-computed cases (kernel-model.md section 2). The
 * entities are placed on a cfs_rq directly, without running the simulation.
 * One CPU, so the tunable factor is 1: base_slice = 0.75 ms, tick = 4 ms.
 */
#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

struct eevdf : ::testing::Test {
    testlib::sched_fixture t{testlib::small_machine(1), "6.6"};
    std::vector<std::unique_ptr<task_struct>> tasks;
    cfs_rq& cfs = t.k->cpu_rq(0).cfs;

    /// An entity at vruntime min_vruntime + key, queued directly in the tree.
    sched_entity& queue(s64 key, u32 weight = NICE_0_LOAD, s64 deadline_key = 0)
    {
        sched_entity& se = make(weight);
        se.vruntime = cfs.min_vruntime + static_cast<u64>(key);
        se.deadline = cfs.min_vruntime + static_cast<u64>(deadline_key);
        t.k->__enqueue_entity(cfs, se);
        se.on_rq = true;
        se.cfs_rq_ = &cfs;
        cfs.nr_running++;
        cfs.load.weight += weight;
        return se;
    }
    sched_entity& make(u32 weight)
    {
        tasks.push_back(std::make_unique<task_struct>());
        task_struct& p = *tasks.back();
        p.pid = static_cast<int>(tasks.size()) + 100;
        p.se.owner = &p;
        p.se.load.weight = weight;
        p.se.slice = t.k->tunables().base_slice;
        return p.se;
    }
    s64 key(u64 v) const { return static_cast<s64>(v - cfs.min_vruntime); }
};

TEST_F(eevdf, avg_vruntime_is_the_load_weighted_mean)
{
    queue(0, 1024);
    queue(3000, 2048);
    // (0 * 1024 + 3000 * 2048) / 3072 = 2000
    EXPECT_EQ(key(t.k->avg_vruntime(cfs)), 2000);
}

TEST_F(eevdf, avg_vruntime_rounds_towards_minus_infinity)
{
    queue(-3, 1024);
    queue(0, 1024);
    // -3072 / 2048 = -1.5 -> -2, so that V itself is always eligible
    EXPECT_EQ(key(t.k->avg_vruntime(cfs)), -2);
}

TEST_F(eevdf, entity_eligible_iff_its_vruntime_is_at_most_V)
{
    queue(0, 1024);
    queue(3000, 2048);
    sched_entity& at_v = make(1024);
    at_v.vruntime = cfs.min_vruntime + 2000;
    sched_entity& past_v = make(1024);
    past_v.vruntime = cfs.min_vruntime + 2001;
    EXPECT_TRUE(t.k->entity_eligible(cfs, at_v));
    EXPECT_FALSE(t.k->entity_eligible(cfs, past_v));
}

TEST_F(eevdf, place_entity_inflates_the_lag_by_the_added_weight)
{
    queue(0);
    queue(2000); // V = min + 1000
    sched_entity& se = make(1024);
    se.vlag = 600;
    t.k->place_entity_eevdf(cfs, se, 0);
    // lag = 600 * (2048 + 1024) / 2048 = 900; v = V - 900; vd = v + 0.75 ms
    EXPECT_EQ(key(se.vruntime), 100);
    EXPECT_EQ(key(se.deadline), 100 + 750000);
}

TEST_F(eevdf, place_entity_without_place_lag_puts_the_task_at_V)
{
    testlib::sched_fixture nolag{testlib::small_machine(1), "6.6", 1, "NO_PLACE_LAG"};
    cfs_rq& c = nolag.k->cpu_rq(0).cfs;
    task_struct a, b, p;
    for (task_struct* x : {&a, &b, &p})
        x->se.owner = x;
    a.se.vruntime = c.min_vruntime;
    b.se.vruntime = c.min_vruntime + 2000;
    for (task_struct* x : {&a, &b}) {
        nolag.k->__enqueue_entity(c, x->se);
        x->se.on_rq = true;
        c.nr_running++;
    }
    p.se.vlag = 600;
    nolag.k->place_entity_eevdf(c, p.se, 0);
    EXPECT_EQ(static_cast<s64>(p.se.vruntime - c.min_vruntime), 1000);
}

TEST_F(eevdf, a_forked_task_gets_half_a_slice_to_its_first_deadline)
{
    sched_entity& se = make(1024);
    t.k->place_entity_eevdf(cfs, se, ENQUEUE_INITIAL);
    EXPECT_EQ(se.deadline - se.vruntime, 375000u);
}

TEST_F(eevdf, a_heavier_task_gets_a_shorter_virtual_slice)
{
    sched_entity& se = make(2048);
    t.k->place_entity_eevdf(cfs, se, 0);
    EXPECT_EQ(se.deadline - se.vruntime, 375000u); // 0.75 ms * 1024 / 2048
}

TEST_F(eevdf, pick_eevdf_takes_the_earliest_deadline_among_eligible_entities)
{
    queue(0, 1024, 5000);            // eligible, late deadline
    sched_entity& b = queue(1000, 1024, 3000); // eligible, earlier deadline
    queue(5000, 1024, 1000);         // earliest deadline but not eligible (V = 2000)
    EXPECT_EQ(t.k->pick_eevdf(cfs), &b);
}

TEST_F(eevdf, run_to_parity_keeps_curr_until_its_first_deadline)
{
    sched_entity& a = queue(0, 1024, 8000);
    queue(0, 1024, 2000); // earlier deadline, eligible
    t.k->set_next_entity(cfs, a); // stashes a's deadline in vlag
    ASSERT_EQ(cfs.curr, &a);
    EXPECT_EQ(t.k->pick_eevdf(cfs), &a);
}

TEST_F(eevdf, without_run_to_parity_the_earlier_deadline_wins)
{
    testlib::sched_fixture nrp{testlib::small_machine(1), "6.6+NO_RUN_TO_PARITY"};
    cfs_rq& c = nrp.k->cpu_rq(0).cfs;
    task_struct a, b;
    a.se.owner = &a;
    b.se.owner = &b;
    a.se.vruntime = c.min_vruntime;
    a.se.deadline = c.min_vruntime + 8000;
    b.se.vruntime = c.min_vruntime; // eligible: V = min_vruntime
    b.se.deadline = c.min_vruntime + 2000;
    for (task_struct* x : {&a, &b}) {
        nrp.k->__enqueue_entity(c, x->se);
        x->se.on_rq = true;
        c.nr_running++;
    }
    nrp.k->set_next_entity(c, a.se);
    EXPECT_EQ(nrp.k->pick_eevdf(c), &b.se);
}

TEST_F(eevdf, curr_that_became_ineligible_loses_even_under_run_to_parity)
{
    sched_entity& a = queue(0, 1024, 8000);
    queue(100, 1024, 9000);
    t.k->set_next_entity(cfs, a);
    a.vruntime = cfs.min_vruntime + 5000; // ran far past V
    a.vlag = static_cast<s64>(a.deadline); // still the deadline it was picked with
    EXPECT_NE(t.k->pick_eevdf(cfs), &a);
}

TEST_F(eevdf, update_entity_lag_clamps_to_the_larger_of_two_slices_and_a_tick)
{
    queue(0);
    sched_entity& se = queue(-msecs(50)); // far behind: a large positive lag
    t.k->update_entity_lag(cfs, se);
    // limit = max(2 * 0.75 ms, 4 ms tick) = 4 ms of virtual time for nice 0
    EXPECT_EQ(se.vlag, msecs(4));
}

TEST_F(eevdf, update_deadline_grants_a_new_request_once_the_deadline_is_reached)
{
    sched_entity& a = queue(0, 1024, 500);
    queue(10);
    t.k->set_next_entity(cfs, a);
    a.vruntime = a.deadline;
    t.k->update_deadline(cfs, a);
    EXPECT_EQ(a.deadline, a.vruntime + 750000);
    EXPECT_TRUE(t.k->cpu_rq(0).need_resched) << "others are queued, so curr must reschedule";
}

// The wakee b (eligible, earlier deadline) preempts curr a only when a no
// longer holds the deadline it was picked with, or without RUN_TO_PARITY.
bool wakeup_preempts(const char* spec, bool curr_got_new_deadline)
{
    testlib::sched_fixture t(testlib::small_machine(1), spec);
    rq& r = t.k->cpu_rq(0);
    cfs_rq& c = r.cfs;
    task_struct a, b;
    a.se.owner = &a;
    b.se.owner = &b;
    a.pid = 1;
    b.pid = 2;
    a.se.vruntime = c.min_vruntime;
    a.se.deadline = c.min_vruntime + 750000;
    t.k->__enqueue_entity(c, a.se);
    a.se.on_rq = true;
    c.nr_running = 1;
    t.k->set_next_entity(c, a.se);
    if (curr_got_new_deadline)
        a.se.deadline += 1000; // as update_deadline() would after the first slice
    b.se.vruntime = c.min_vruntime;
    b.se.deadline = c.min_vruntime + 100000;
    t.k->__enqueue_entity(c, b.se);
    b.se.on_rq = true;
    c.nr_running = 2;
    r.curr = &a; // a runs; the wakeup check below only reads this state
    t.k->check_preempt_wakeup_fair(r, b, 0);
    const bool preempt = r.need_resched;
    r.curr = r.idle;
    return preempt;
}

TEST(check_preempt_wakeup_eevdf, run_to_parity_protects_curr_until_its_first_deadline)
{
    EXPECT_FALSE(wakeup_preempts("6.6", false));
    EXPECT_TRUE(wakeup_preempts("6.6", true));
    EXPECT_TRUE(wakeup_preempts("6.6+NO_RUN_TO_PARITY", false));
    EXPECT_FALSE(wakeup_preempts("6.6+NO_WAKEUP_PREEMPTION", true));
}

} // namespace
} // namespace schedlab
