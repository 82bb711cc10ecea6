// SPDX-License-Identifier: GPL-2.0-only
/*
 * CFS (<= 6.5) preemption and placement decisions on hand-computed cases
 * (v6.5 fair.c, docs/kernel-map.md). One CPU: factor 1, so latency 6 ms,
 * min_granularity 0.75 ms, wakeup_granularity 1 ms.
 */
#include "sched/testlib.h"

#include "sched/profiles.h"
#include "sim/config_error.h"

#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

struct cfs : ::testing::Test {
    testlib::sched_fixture t{testlib::small_machine(1), "6.5"};
    cfs_rq& c = t.k->cpu_rq(0).cfs;
    task_struct a, b;
    cfs()
    {
        a.se.owner = &a;
        b.se.owner = &b;
        a.pid = 1;
        b.pid = 2;
    }
};

TEST_F(cfs, wakeup_preempt_entity_needs_more_than_one_wakeup_granularity)
{
    a.se.vruntime = 10'000'000;
    b.se.vruntime = 10'000'000;
    EXPECT_EQ(wakeup_preempt_entity(*t.k, a.se, b.se), -1) << "not ahead: never preempt";
    b.se.vruntime = 10'000'000 - 1'000'000;
    EXPECT_EQ(wakeup_preempt_entity(*t.k, a.se, b.se), 0) << "exactly one gran ahead: not enough";
    b.se.vruntime -= 1;
    EXPECT_EQ(wakeup_preempt_entity(*t.k, a.se, b.se), 1);
}

TEST_F(cfs, a_lighter_wakee_needs_a_larger_lead)
{
    b.se.load.weight = sched_prio_to_weight[25]; // nice 5: 335
    EXPECT_EQ(wakeup_gran(*t.k, a.se, b.se), 1'000'000ull * 1024 / 335);
}

TEST_F(cfs, a_waking_sleeper_gets_half_the_latency_as_credit)
{
    a.se.vruntime = c.min_vruntime - msecs(100); // slept a long time
    place_entity_cfs(*t.k, c, a.se, false);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - c.min_vruntime), -msecs(3));
}

TEST_F(cfs, a_recent_sleeper_keeps_its_own_vruntime)
{
    a.se.vruntime = c.min_vruntime - msecs(1);
    place_entity_cfs(*t.k, c, a.se, false);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - c.min_vruntime), -msecs(1));
}

TEST_F(cfs, without_gentle_fair_sleepers_the_credit_is_the_whole_latency)
{
    testlib::sched_fixture g{testlib::small_machine(1), "6.5+NO_GENTLE_FAIR_SLEEPERS"};
    cfs_rq& gc = g.k->cpu_rq(0).cfs;
    a.se.vruntime = gc.min_vruntime - msecs(100);
    place_entity_cfs(*g.k, gc, a.se, false);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - gc.min_vruntime), -msecs(6));
}

/*
 * Hand-worked from place_entity() (lane cfsaudit): 6.5 and 6.1 take an idle entity's
 * (se_is_idle(): SCHED_IDLE) threshold from sysctl_sched_min_granularity, halved by
 * GENTLE_FAIR_SLEEPERS: 0.75 ms / 2 at factor 1; 5.15.0 has no such branch: 6 ms / 2.
 * Before: 3 ms on every profile.
 */
TEST_F(cfs, a_waking_sched_idle_sleeper_gets_half_the_min_granularity_from_6_1)
{
    a.policy = SCHED_IDLE;
    for (const char* kernel : {"6.5", "6.1", "tip-2023-08", "5.15", "5.15-rc3"}) {
        testlib::sched_fixture f{testlib::small_machine(1), kernel};
        cfs_rq& fc = f.k->cpu_rq(0).cfs;
        a.se.vruntime = fc.min_vruntime - msecs(100);
        place_entity_cfs(*f.k, fc, a.se, false);
        const bool v5_15 = std::string(kernel).starts_with("5.15");
        EXPECT_EQ(static_cast<s64>(a.se.vruntime - fc.min_vruntime),
                  v5_15 ? -msecs(3) : -usecs(375))
            << kernel;
    }
}

/*
 * Hand-worked from sched_slice() and sched_idle_cfs_rq() of 6.5 (sndrzt/linux-6.5
 * f5744aac0f31; 6.1-rc7 the same; not in 5.15.0). Eight CPUs: factor 4, so latency 24 ms
 * and min_granularity 3 ms, while sysctl_sched_idle_min_granularity stays 0.75 ms
 * (update_sysctl() does not scale it). A nice-0 task and a SCHED_IDLE task (weight 3) share
 * the cfs_rq: the period is 24 ms (2 <= sched_nr_latency) and the idle task's share 24 ms *
 * 3 / 1027 = 70 us, so BASE_SLICE's floor decides: 0.75 ms for an idle entity beside a
 * non-idle one, 3 ms when every entity there is idle (sched_idle_cfs_rq()), and 3 ms on
 * 5.15. Before: 3 ms in every case.
 */
TEST_F(cfs, a_sched_idle_tasks_slice_floor_is_the_unscaled_idle_min_granularity_from_6_1)
{
    for (const char* kernel : {"6.5", "6.1", "tip-2023-08", "tip-2023-02", "5.15", "5.15-rc3"}) {
        testlib::sched_fixture f{testlib::small_machine(8), kernel};
        ASSERT_EQ(f.k->tunables().min_granularity, 3'000'000u);
        ASSERT_EQ(f.k->tunables().idle_min_granularity, 750'000u);
        cfs_rq& fc = f.k->cpu_rq(0).cfs;
        task_struct n, i;
        n.se.owner = &n;
        i.se.owner = &i;
        i.policy = SCHED_IDLE;
        n.se.on_rq = i.se.on_rq = true;
        i.se.load.weight = 3; // WEIGHT_IDLEPRIO
        fc.nr_running = 2;
        fc.load.weight = 1024 + 3;
        fc.idle_nr_running = 1;
        const bool v5_15 = std::string(kernel).starts_with("5.15");
        EXPECT_EQ(sched_slice(*f.k, fc, i.se), v5_15 ? 3'000'000u : 750'000u) << kernel;
        EXPECT_EQ(sched_slice(*f.k, fc, n.se), 24'000'000ull * 1024 / 1027) << kernel;
        n.policy = SCHED_IDLE; // every entity idle: sched_idle_cfs_rq(), the usual floor
        fc.idle_nr_running = 2;
        EXPECT_EQ(sched_slice(*f.k, fc, i.se), 3'000'000u) << kernel;
    }
}

TEST_F(cfs, a_forked_task_starts_one_vslice_late_with_start_debit)
{
    // Empty cfs_rq: slice of a lone task = latency (6 ms).
    place_entity_cfs(*t.k, c, a.se, true);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - c.min_vruntime), msecs(6));
}

TEST_F(cfs, sched_slice_splits_the_period_by_weight_with_a_floor)
{
    a.se.on_rq = true;
    b.se.on_rq = true;
    c.nr_running = 2;
    c.h_nr_running = 2;
    c.load.weight = 1024 + 335;
    b.se.load.weight = 335;
    // period 6 ms (2 <= nr_latency); a: 6 ms * 1024 / 1359
    EXPECT_EQ(sched_slice(*t.k, c, a.se), 6'000'000ull * 1024 / 1359);
    // b: 6 ms * 335 / 1359 = 1.479 ms, above the 0.75 ms floor
    EXPECT_EQ(sched_slice(*t.k, c, b.se), 6'000'000ull * 335 / 1359);
    c.nr_running = c.h_nr_running = 0; // leave the rq consistent
    c.load.weight = 0;
}

// A sleeper placed 3 ms behind the hog preempts it on wakeup, becomes the
// next buddy, and the hog becomes the last buddy only with >= nr_latency tasks.
TEST(check_preempt_wakeup_cfs, a_long_sleeper_preempts_the_running_hog)
{
    testlib::sched_fixture t(testlib::small_machine(1), "6.5");
    t.spawn("hog", testlib::spin());
    task_struct& s = t.spawn("sleeper", testlib::run_sleep(usecs(50), msecs(50)));
    t.run_for(msecs(400));
    // Every wakeup preempts at once: no waiting behind the hog's tick.
    EXPECT_GT(s.sched_info_.pcount, 6u);
    EXPECT_LT(s.sched_info_.run_delay / s.sched_info_.pcount, usecs(1)) << t.k->dump_state();
}

TEST(check_preempt_wakeup_cfs, no_wakeup_preemption_makes_the_sleeper_wait_for_the_tick)
{
    testlib::sched_fixture t(testlib::small_machine(1), "6.5+NO_WAKEUP_PREEMPTION");
    t.spawn("hog", testlib::spin());
    task_struct& s = t.spawn("sleeper", testlib::run_sleep(usecs(50), msecs(50)));
    t.run_for(msecs(400));
    EXPECT_GT(s.sched_info_.run_delay / s.sched_info_.pcount, usecs(500));
}

TEST(check_preempt_tick, resched_once_the_ideal_slice_is_used)
{
    // Two hogs, factor 1: ideal = 3 ms each; the 4 ms tick always exceeds it.
    testlib::sched_fixture t(testlib::small_machine(1), "6.5");
    task_struct& a = t.spawn("a", testlib::spin());
    t.spawn("b", testlib::spin());
    t.run_for(msecs(100));
    // Each run of a lasts exactly one tick period (4 ms) except the first partial one.
    EXPECT_NEAR(static_cast<double>(a.se.sum_exec_runtime) / static_cast<double>(a.nivcsw),
                4e6, 0.3e6);
}

/*
 * Hand-worked from check_preempt_tick(): 79ba1e607d68 ("sched/fair: Limit sched slice
 * duration", tip sched/core 2023-01-15, v6.3) caps the ideal runtime at sysctl_sched_latency.
 * One CPU (factor 1: latency 6 ms, min_granularity 0.75 ms), a nice -20 spinner (88761)
 * running and eleven nice 19 ones (15) queued: the period is 12 x 0.75 = 9 ms (12 >
 * sched_nr_latency; ALT_PERIOD counts the root's h_nr_running) and the heavy task's slice
 * 9 ms x 88761 / 88926 = 8.98 ms. After 7 ms of running it is past the capped ideal (6 ms) but
 * not the uncapped one, and the leftmost queued entity (a light task forked a vslice late) is
 * ahead of it, so only the cap reschedules. 6.5 and tip-2023-02 (its base, v6.2-rc6
 * tip:sched/core on 7c4a5b89a0b5, applied there on 2023-02-11, after the cap) have the cap;
 * 6.1 and 5.15 do not.
 */
TEST(check_preempt_tick, the_ideal_is_capped_at_the_latency_from_tip_2023_02)
{
    for (const char* kernel : {"6.5", "tip-2023-02", "6.1", "5.15"}) {
        testlib::sched_fixture t(testlib::small_machine(1), kernel);
        task_struct& heavy = t.spawn("heavy", testlib::spin(), 0, -20);
        for (int i = 0; i < 11; ++i)
            t.spawn(fmt::format("light{}", i), testlib::spin(), 0, 19);
        t.run_for(msecs(1));
        rq& r = t.k->cpu_rq(0);
        ASSERT_EQ(r.curr, &heavy) << kernel;
        cfs_rq& c = task_cfs_rq(r, heavy);
        t.k->update_rq_clock(r);
        update_curr(*t.k, c);
        ASSERT_EQ(sched_slice(*t.k, c, heavy.se), 9'000'000ull * 88761 / 88926) << kernel;
        const sched_entity* left = __pick_first_entity(c);
        ASSERT_TRUE(left && static_cast<s64>(heavy.se.vruntime - left->vruntime) < 0) << kernel;
        heavy.se.prev_sum_exec_runtime = heavy.se.sum_exec_runtime - msecs(7);
        r.need_resched = false;
        check_preempt_tick(*t.k, c, heavy.se);
        const bool capped = std::string(kernel) == "6.5" || std::string(kernel) == "tip-2023-02";
        EXPECT_EQ(r.need_resched, capped) << kernel;
    }
}

/* ---- buddies (lane cfsaudit; v6.5 fair.c at sndrzt/linux-6.5 f5744aac0f31) ---- */

// Two spinning tasks of one autogroup on one CPU; x is running (cfs_rq->curr, outside
// the tree), y queued. Both clocks are brought to now so nothing moves a vruntime set
// by the test. Factor 1: wakeup_granularity 1 ms.
struct cfs_buddies : ::testing::Test {
    testlib::sched_fixture t{testlib::small_machine(1), "6.5"};
    rq& r = t.k->cpu_rq(0);
    task_struct* x = nullptr;
    task_struct* y = nullptr;
    cfs_rq* c = nullptr;
    sched_entity* gse = nullptr;
    void SetUp() override
    {
        task_struct& a = t.spawn("a", testlib::spin());
        task_struct& b = t.spawn("b", testlib::spin());
        t.run_for(msecs(1));
        x = r.curr;
        y = x == &a ? &b : &a;
        c = &task_cfs_rq(r, *x);
        gse = parent_entity(*c);
        t.k->update_rq_clock(r);
        update_curr(*t.k, *c);
        update_curr(*t.k, r.root_cfs);
        ASSERT_TRUE(y->se.on_rq && c->curr == &x->se && gse && r.root_cfs.curr == gse);
        ASSERT_TRUE(!c->next && !c->last && !c->skip);
    }
};

/*
 * Hand-worked from 6.5's clear_buddies() and __clear_buddies_next/last(): a level's buddy
 * that is se is cleared, and so is the next level's while it is se's ancestor (the group
 * entity on the root); a level whose buddy is another entity ends the walk. Before: only
 * se's own level was cleared (dequeue_entity(), check_preempt_tick(), yield).
 */
TEST_F(cfs_buddies, clear_buddies_walks_up_while_each_level_names_the_ancestor)
{
    c->next = &x->se;
    r.root_cfs.next = gse;
    c->last = &y->se; // another task's: x's walk does not start for last
    r.root_cfs.last = gse;
    clear_buddies(*c, x->se);
    EXPECT_EQ(c->next, nullptr);
    EXPECT_EQ(r.root_cfs.next, nullptr) << "the group entity's next buddy goes with x's";
    EXPECT_EQ(c->last, &y->se);
    EXPECT_EQ(r.root_cfs.last, gse) << "no walk: x was not the last buddy on its level";
    c->last = nullptr;
    r.root_cfs.last = nullptr;
}

/*
 * Hand-worked from 6.5's pick_next_task_fair(), pick_next_entity() and set_next_entity():
 * x yields (skip = x on both levels); x is 2 ms of vruntime left of y, so the pick's
 * skip test (second = y, wakeup_preempt_entity(y, x) = 1: 2 ms > 1 ms) keeps x, and with
 * p == prev no set_next_entity() runs: the skip buddy stays. Once x is within 1 ms of
 * y, the still-set skip hands the CPU to y (wakeup_preempt_entity(y, x) = 0).
 * Before: the pick cleared the picked entity's buddies, so the second pick kept x.
 */
TEST_F(cfs_buddies, a_pick_that_keeps_prev_leaves_its_skip_buddy_set)
{
    x->se.vruntime = y->se.vruntime - msecs(2);
    yield_task_fair(*t.k, r);
    ASSERT_EQ(c->skip, &x->se);
    ASSERT_EQ(r.root_cfs.skip, gse);
    EXPECT_EQ(pick_next_task_fair(*t.k, r, x), x);
    EXPECT_EQ(c->skip, &x->se) << "6.5 clears buddies in set_next_entity(), not in the pick";
    EXPECT_EQ(r.root_cfs.skip, gse) << "the root's pick kept the group entity too";
    x->se.vruntime = y->se.vruntime - usecs(500);
    EXPECT_EQ(pick_next_task_fair(*t.k, r, x), y) << "the kept skip buddy still counts";
    EXPECT_EQ(c->skip, &x->se) << "set_next_entity(y) clears y's buddies only";
}

/*
 * Hand-worked from 6.5's yield_task_fair(): clear_buddies(cfs_rq, se) first, whose
 * __clear_buddies_last() walks up while each level's last buddy is se's ancestor, then
 * set_skip_buddy() on every level. Before: the last buddy stayed on both levels.
 */
TEST_F(cfs_buddies, yield_clears_currs_buddies_on_every_level_before_marking_it_skip)
{
    c->last = &x->se;
    r.root_cfs.last = gse;
    yield_task_fair(*t.k, r);
    EXPECT_EQ(c->last, nullptr);
    EXPECT_EQ(r.root_cfs.last, nullptr) << "__clear_buddies_last() walks up to the root";
    EXPECT_EQ(c->skip, &x->se);
    EXPECT_EQ(r.root_cfs.skip, gse);
}

/*
 * Hand-worked from 6.5's check_preempt_wakeup() and set_next_buddy() (5.15 and 6.1 the
 * same), with NEXT_BUDDY on: eight spinners on one CPU (scale: nr_running 8 >=
 * sched_nr_latency 8); a queued SCHED_IDLE task is woken (no WF_FORK): set_next_buddy()
 * returns at once for an idle entity (se_is_idle()), so no level gets a next buddy, and
 * the non-NORMAL wakee then returns before any preemption test. Before: the model marked
 * its task level. (The idle-curr path needs nothing: the model's idle-policy preemption
 * returns before the last buddy, as set_last_buddy()'s idle return does.)
 */
TEST(check_preempt_wakeup_cfs, a_sched_idle_wakee_is_never_the_next_buddy)
{
    testlib::sched_fixture t(testlib::small_machine(1), "6.5+NEXT_BUDDY");
    for (int i = 0; i < 8; ++i)
        t.spawn(fmt::format("s{}", i), testlib::spin());
    t.run_for(msecs(1));
    rq& r = t.k->cpu_rq(0);
    task_struct& x = *r.curr;
    cfs_rq& c = task_cfs_rq(r, x);
    ASSERT_EQ(c.nr_running, 8u);
    task_struct* p = nullptr;
    for (sched_entity* se : c.tasks_timeline)
        p = se->owner;
    ASSERT_TRUE(p && p != &x);
    p->policy = SCHED_IDLE; // set_next_buddy()'s idle test reads only the policy
    r.need_resched = false;
    c.next = nullptr;
    r.root_cfs.next = nullptr;
    check_preempt_wakeup_cfs(*t.k, r, *p, 0);
    EXPECT_EQ(c.next, nullptr);
    EXPECT_EQ(r.root_cfs.next, nullptr);
    EXPECT_FALSE(r.need_resched) << "an idle-policy wakee never preempts a normal curr";
    p->policy = SCHED_NORMAL;
}

/* ---- SCALE_WAKEUP_GRAN (Mel Gorman, 20220124100312.32573-1-mgorman@techsingularity.net) ---- */

// Eight CPUs: factor 4, so wakeup_granularity 4 ms and min_granularity 3 ms.
struct scale_wakeup_gran : ::testing::Test {
    testlib::sched_fixture t{testlib::small_machine(8), "5.15-rc3+stacking"};
    testlib::sched_fixture base{testlib::small_machine(8), "5.15-rc3"};
    task_struct a, b;
    scale_wakeup_gran()
    {
        a.se.owner = &a;
        b.se.owner = &b;
        a.pid = 1;
        b.pid = 2;
    }
    void ran(sched_entity& se, u64 ns)
    {
        se.prev_sum_exec_runtime = msecs(50);
        se.sum_exec_runtime = msecs(50) + ns;
    }
};

TEST_F(scale_wakeup_gran, wakeup_gran_is_7ms_while_curr_has_run_less_than_min_granularity)
{
    ASSERT_EQ(t.k->tunables().wakeup_granularity, msecs(4));
    ran(a.se, msecs(1));
    EXPECT_EQ(wakeup_gran(*t.k, a.se, b.se), msecs(7));
    ran(a.se, msecs(3) - 1);
    EXPECT_EQ(wakeup_gran(*t.k, a.se, b.se), msecs(7));
    EXPECT_EQ(wakeup_gran(*base.k, a.se, b.se), msecs(4)) << "the base kernel does not scale";
}

TEST_F(scale_wakeup_gran, wakeup_gran_stays_4ms_once_curr_has_run_min_granularity)
{
    ran(a.se, msecs(3));
    EXPECT_EQ(wakeup_gran(*t.k, a.se, b.se), msecs(4));
    ran(a.se, msecs(10));
    EXPECT_EQ(wakeup_gran(*t.k, a.se, b.se), msecs(4));
}

TEST_F(scale_wakeup_gran, wakeup_preempt_entity_needs_a_7ms_lead_against_a_fresh_curr)
{
    a.se.vruntime = msecs(100);
    b.se.vruntime = msecs(100) - msecs(5); // the wakee is 5 ms behind curr
    ran(a.se, msecs(1));
    EXPECT_EQ(wakeup_preempt_entity(*t.k, a.se, b.se), 0) << "5 ms < 7 ms: no preemption";
    EXPECT_EQ(wakeup_preempt_entity(*base.k, a.se, b.se), 1) << "5 ms > 4 ms on the base";
    ran(a.se, msecs(4));
    EXPECT_EQ(wakeup_preempt_entity(*t.k, a.se, b.se), 1);
}

// The buddy is passed as curr: its own last run length decides the granularity.
TEST_F(scale_wakeup_gran, pick_next_entity_cfs_tests_the_next_buddys_own_last_run)
{
    for (testlib::sched_fixture* f : {&t, &base}) {
        const bool scaled = f == &t;
        cfs_rq& c = f->k->cpu_rq(0).cfs;
        a.se.vruntime = c.min_vruntime;
        __enqueue_entity(*f->k, c, a.se); // the leftmost
        a.se.on_rq = true;
        c.nr_running = 1;
        b.se.vruntime = c.min_vruntime + msecs(5); // next buddy 5 ms to the right
        c.next = &b.se;
        ran(b.se, msecs(1));
        EXPECT_EQ(pick_next_entity_cfs(*f->k, c, &b.se), scaled ? &b.se : &a.se)
            << (scaled ? "scaled: 5 ms < 7 ms keeps the buddy" : "base: 5 ms > 4 ms");
        ran(b.se, msecs(3));
        EXPECT_EQ(pick_next_entity_cfs(*f->k, c, &b.se), &a.se) << "a buddy that ran 3 ms";
        c.next = nullptr;
        __dequeue_entity(*f->k, c, a.se);
        a.se.on_rq = false;
        c.nr_running = 0;
    }
}

TEST(scale_wakeup_gran_delta, is_refused_on_an_eevdf_kernel)
{
    EXPECT_THROW(make_kernel_config("6.6+stacking"), config_error);
}

/* ---- tg->load_avg ratelimit (Aaron Lu; tip afc1996859a2) ---- */

// cpu0's cfs_rq load swings by half every 100 us for 5 ms: each call is above the 1/64
// threshold, so only the ratelimit can skip an update.
u64 tg_updates_in_5ms(const std::string& spec)
{
    testlib::sched_fixture f{testlib::small_machine(2), spec};
    rq& r = f.k->cpu_rq(0);
    cfs_rq& c = r.cfs;
    const u64 start = r.clock_task + msecs(10); // the limit counts from a last update at 0
    const u64 before = f.k->autogroup().load_avg_updates;
    for (int i = 0; i < 50; ++i) {
        r.clock_task = start + static_cast<u64>(i) * usecs(100);
        c.avg.load_avg = i % 2 ? 2048 : 1024;
        update_tg_load_avg(*f.k, c, 0);
    }
    return f.k->autogroup().load_avg_updates - before;
}

TEST(update_tg_load_avg, the_ratelimit_allows_one_update_per_ms_per_cfs_rq)
{
    EXPECT_EQ(tg_updates_in_5ms("tip-2023-08"), 50u) << "no limit before v6.7";
    EXPECT_EQ(tg_updates_in_5ms("tip-2023-08+tg_ratelimit"), 5u) << "0, 1, 2, 3, 4 ms";
    EXPECT_EQ(tg_updates_in_5ms("tip-2023-08+tg_ratelimit+NO_TG_LOAD_AVG_RATELIMIT"), 50u);
    EXPECT_EQ(tg_updates_in_5ms("tip-2023-12"), 5u) << "merged: unconditional from v6.7";
    EXPECT_THROW(make_kernel_config("tip-2023-12+tg_ratelimit"), config_error);
}

// The statistics of update_tg_load_avg()'s callers: a call that reaches the 1/64 test
// is counted for its caller, a write only when the change is above 1/64 of the last
// contribution, and a call the ratelimit returns from is counted apart.
TEST(update_tg_load_avg, counts_calls_and_writes_by_caller)
{
    testlib::sched_fixture f{testlib::small_machine(2), "tip-2023-08+tg_ratelimit"};
    rq& r = f.k->cpu_rq(0);
    cfs_rq& c = r.cfs;
    task_group& tg = f.k->autogroup();
    r.clock_task += msecs(10);
    c.avg.load_avg = static_cast<unsigned long>(c.tg_load_avg_contrib) + 1024;
    update_tg_load_avg(*f.k, c, 0, TG_WRITE_ATTACH); // +1024: written
    r.clock_task += msecs(2);
    c.avg.load_avg += 1; // 1/1024 of the contribution: below 1/64
    update_tg_load_avg(*f.k, c, 0, TG_WRITE_BLOCKED);
    c.avg.load_avg += 1024;
    update_tg_load_avg(*f.k, c, 0, TG_WRITE_DETACH); // 2 ms after the last write
    r.clock_task += usecs(100);
    update_tg_load_avg(*f.k, c, 0, TG_WRITE_DECAY); // 100 us after the last write
    EXPECT_EQ(tg.load_avg_site_calls[TG_WRITE_ATTACH], 1u);
    EXPECT_EQ(tg.load_avg_site_writes[TG_WRITE_ATTACH], 1u);
    EXPECT_EQ(tg.load_avg_site_calls[TG_WRITE_BLOCKED], 1u);
    EXPECT_EQ(tg.load_avg_site_writes[TG_WRITE_BLOCKED], 0u) << "1 of 1024+: below 1/64";
    EXPECT_EQ(tg.load_avg_site_calls[TG_WRITE_DETACH], 1u);
    EXPECT_EQ(tg.load_avg_site_writes[TG_WRITE_DETACH], 1u);
    EXPECT_EQ(tg.load_avg_site_calls[TG_WRITE_DECAY], 0u) << "ratelimited, not counted";
    EXPECT_EQ(tg.load_avg_ratelimited, 1u);
}

} // namespace
} // namespace schedlab
