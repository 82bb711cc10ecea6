// SPDX-License-Identifier: GPL-2.0-only
/*
 * EEVDF arithmetic on hand-computed cases (v6.6 fair.c). The
 * entities are placed on a cfs_rq directly, without running the simulation.
 * One CPU, so the tunable factor is 1: base_slice = 0.75 ms, tick = 4 ms.
 */
#include "sched/fair_balance.h"
#include "sched/testlib.h"
#include "sim/config_error.h"

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
        __enqueue_entity(*t.k, cfs, se);
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
    EXPECT_EQ(key(avg_vruntime(cfs)), 2000);
}

TEST_F(eevdf, avg_vruntime_rounds_towards_minus_infinity)
{
    queue(-3, 1024);
    queue(0, 1024);
    // -3072 / 2048 = -1.5 -> -2, so that V itself is always eligible
    EXPECT_EQ(key(avg_vruntime(cfs)), -2);
}

TEST_F(eevdf, entity_eligible_iff_its_vruntime_is_at_most_V)
{
    queue(0, 1024);
    queue(3000, 2048);
    sched_entity& at_v = make(1024);
    at_v.vruntime = cfs.min_vruntime + 2000;
    sched_entity& past_v = make(1024);
    past_v.vruntime = cfs.min_vruntime + 2001;
    EXPECT_TRUE(entity_eligible(cfs, at_v));
    EXPECT_FALSE(entity_eligible(cfs, past_v));
}

TEST_F(eevdf, place_entity_inflates_the_lag_by_the_added_weight)
{
    queue(0);
    queue(2000); // V = min + 1000
    sched_entity& se = make(1024);
    se.vlag = 600;
    place_entity_eevdf(*t.k, cfs, se, 0);
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
        __enqueue_entity(*nolag.k, c, x->se);
        x->se.on_rq = true;
        c.nr_running++;
    }
    p.se.vlag = 600;
    place_entity_eevdf(*nolag.k, c, p.se, 0);
    EXPECT_EQ(static_cast<s64>(p.se.vruntime - c.min_vruntime), 1000);
}

TEST_F(eevdf, a_forked_task_gets_half_a_slice_to_its_first_deadline)
{
    sched_entity& se = make(1024);
    place_entity_eevdf(*t.k, cfs, se, ENQUEUE_INITIAL);
    EXPECT_EQ(se.deadline - se.vruntime, 375000u);
}

TEST_F(eevdf, a_heavier_task_gets_a_shorter_virtual_slice)
{
    sched_entity& se = make(2048);
    place_entity_eevdf(*t.k, cfs, se, 0);
    EXPECT_EQ(se.deadline - se.vruntime, 375000u); // 0.75 ms * 1024 / 2048
}

TEST_F(eevdf, pick_eevdf_takes_the_earliest_deadline_among_eligible_entities)
{
    queue(0, 1024, 5000);            // eligible, late deadline
    sched_entity& b = queue(1000, 1024, 3000); // eligible, earlier deadline
    queue(5000, 1024, 1000);         // earliest deadline but not eligible (V = 2000)
    EXPECT_EQ(pick_eevdf(*t.k, cfs), &b);
}

TEST_F(eevdf, run_to_parity_keeps_curr_until_its_first_deadline)
{
    sched_entity& a = queue(0, 1024, 8000);
    queue(0, 1024, 2000); // earlier deadline, eligible
    set_next_entity(*t.k, cfs, a); // stashes a's deadline in vlag
    ASSERT_EQ(cfs.curr, &a);
    EXPECT_EQ(pick_eevdf(*t.k, cfs), &a);
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
        __enqueue_entity(*nrp.k, c, x->se);
        x->se.on_rq = true;
        c.nr_running++;
    }
    set_next_entity(*nrp.k, c, a.se);
    EXPECT_EQ(pick_eevdf(*nrp.k, c), &b.se);
}

TEST_F(eevdf, curr_that_became_ineligible_loses_even_under_run_to_parity)
{
    sched_entity& a = queue(0, 1024, 8000);
    queue(100, 1024, 9000);
    set_next_entity(*t.k, cfs, a);
    a.vruntime = cfs.min_vruntime + 5000; // ran far past V
    a.vlag = static_cast<s64>(a.deadline); // still the deadline it was picked with
    EXPECT_NE(pick_eevdf(*t.k, cfs), &a);
}

TEST_F(eevdf, update_entity_lag_clamps_to_the_larger_of_two_slices_and_a_tick)
{
    queue(0);
    sched_entity& se = queue(-msecs(50)); // far behind: a large positive lag
    update_entity_lag(*t.k, cfs, se);
    // limit = max(2 * 0.75 ms, 4 ms tick) = 4 ms of virtual time for nice 0
    EXPECT_EQ(se.vlag, msecs(4));
}

TEST_F(eevdf, update_deadline_grants_a_new_request_once_the_deadline_is_reached)
{
    sched_entity& a = queue(0, 1024, 500);
    queue(10);
    set_next_entity(*t.k, cfs, a);
    a.vruntime = a.deadline;
    update_deadline(*t.k, cfs, a);
    EXPECT_EQ(a.deadline, a.vruntime + 750000);
    EXPECT_TRUE(t.k->cpu_rq(0).need_resched) << "others are queued, so curr must reschedule";
}

/*
 * 6.18 (v6.17's vprot, read at gfunkmonk/linux-6.18.2 57dc26c98e5e): set_next_entity()
 * records vprot = the deadline at the pick (RUN_TO_PARITY, equal slices), and
 * update_curr() reschedules whenever !protect_slice(curr), not only when the deadline
 * is reached. Worked by hand: a picked at vruntime 0 with deadline 0.75 ms (vprot
 * 0.75 ms); its deadline then moved to 1.5 ms without a new pick (re-picked as prev,
 * no set_next_entity()), and it has run to 0.8 ms: the deadline is not reached, so
 * 6.6 asks nothing, while 6.18's 0.8 ms >= vprot asks for a reschedule.
 */
// a and b queued on c at keys 0 and b_key (relative to min_vruntime), each with one base
// slice (0.75 ms on one CPU) to its deadline.
void queue_pair(testlib::sched_fixture& f, cfs_rq& c, task_struct& a, task_struct& b, s64 b_key)
{
    for (task_struct* x : {&a, &b}) {
        x->se.owner = x;
        x->se.slice = f.k->tunables().base_slice;
        x->se.vruntime = c.min_vruntime + static_cast<u64>(x == &b ? b_key : 0);
        x->se.deadline = x->se.vruntime + 750000;
        __enqueue_entity(*f.k, c, x->se);
        x->se.on_rq = true;
        c.nr_running++;
    }
}

bool moved_deadline_reschedules(const char* spec, s64 b_key);

// The scene of moved_deadline_reschedules() below with b beside a at vruntime 0.
bool unprotected_curr_reschedules(const char* spec)
{
    return moved_deadline_reschedules(spec, 0);
}

TEST(update_curr_eevdf, from_6_18_an_unprotected_curr_reschedules_before_its_deadline)
{
    EXPECT_TRUE(unprotected_curr_reschedules("6.18"));
    EXPECT_FALSE(unprotected_curr_reschedules("6.6"));
}

/*
 * 6.12's did_preempt_short() (PREEMPT_SHORT, on by default): a curr whose deadline moved
 * since its pick (vlag still holds the deadline it was picked with) reschedules at
 * update_curr() once it is ineligible. By hand: a and b at vruntime 0; a picked (vlag =
 * 0.75 ms), then its deadline moved to 1.5 ms and it ran to 0.8 ms. With b at 0, V =
 * 0.4 ms < 0.8 ms: a is ineligible, 6.12 reschedules; with b at 2 ms, V = 1.4 ms: a
 * is eligible, no reschedule. 6.6 and NO_PREEMPT_SHORT never ask before the deadline.
 */
bool moved_deadline_reschedules(const char* spec, s64 b_key)
{
    testlib::sched_fixture f{testlib::small_machine(1), spec};
    cfs_rq& c = f.k->cpu_rq(0).cfs;
    task_struct a, b;
    queue_pair(f, c, a, b, b_key);
    set_next_entity(*f.k, c, a.se);
    a.se.deadline = c.min_vruntime + 1500000;
    a.se.vruntime = c.min_vruntime + 800000;
    update_deadline(*f.k, c, a.se);
    return f.k->cpu_rq(0).need_resched;
}

TEST(update_curr_eevdf, in_6_12_did_preempt_short_reschedules_an_ineligible_curr_picked_again)
{
    EXPECT_TRUE(moved_deadline_reschedules("6.12", 0));
    EXPECT_FALSE(moved_deadline_reschedules("6.12", 2000000));
    EXPECT_FALSE(moved_deadline_reschedules("6.12+NO_PREEMPT_SHORT", 0));
    EXPECT_FALSE(moved_deadline_reschedules("6.6", 0));
}

/*
 * 6.18's set_protect_slice() without RUN_TO_PARITY still protects a minimum quantum:
 * min(normalized base slice, se->slice). Eight CPUs, so base_slice = 4 x 0.70 ms = 2.8 ms
 * (6.18's 0.70 ms) and the quantum 0.70 ms. By hand: c (key 10 ms, ineligible) holds V up
 * at ~3.4 ms, so a (key 0, deadline 3 ms) and b (key 0.1 ms, deadline 1 ms) are both
 * eligible and b has the earlier deadline. a picked: vprot = min(3 ms, 0 + 0.70 ms) =
 * 0.70 ms, so a stays the pick until its vruntime reaches 0.70 ms, then b wins. With
 * RUN_TO_PARITY vprot is the deadline (3 ms): a is still the pick at 0.75 ms. 6.6 without
 * RUN_TO_PARITY protects nothing: b at once.
 */
struct protect_scene {
    testlib::sched_fixture f;
    cfs_rq& c;
    task_struct a, b, x;
    explicit protect_scene(const char* spec)
        : f{testlib::small_machine(8), spec}, c{f.k->cpu_rq(0).cfs}
    {
        const std::pair<task_struct*, std::pair<s64, s64>> all[] = {
            {&a, {0, 3000000}}, {&b, {100000, 1000000}}, {&x, {10000000, 20000000}}};
        for (const auto& [p, kd] : all) {
            p->se.owner = p;
            p->se.slice = f.k->tunables().base_slice;
            p->se.vruntime = c.min_vruntime + static_cast<u64>(kd.first);
            p->se.deadline = c.min_vruntime + static_cast<u64>(kd.second);
            __enqueue_entity(*f.k, c, p->se);
            p->se.on_rq = true;
            c.nr_running++;
        }
        set_next_entity(*f.k, c, a.se);
    }
    sched_entity* pick_at(s64 a_key)
    {
        a.se.vruntime = c.min_vruntime + static_cast<u64>(a_key);
        return pick_eevdf(*f.k, c);
    }
};

TEST(pick_eevdf, from_6_18_no_run_to_parity_still_protects_a_minimum_quantum)
{
    protect_scene nrp("6.18+NO_RUN_TO_PARITY");
    ASSERT_EQ(nrp.f.k->tunables().base_slice, 2800000u);
    EXPECT_EQ(nrp.a.se.vprot, nrp.c.min_vruntime + 700000);
    EXPECT_EQ(nrp.pick_at(0), &nrp.a.se);
    EXPECT_EQ(nrp.pick_at(699999), &nrp.a.se);
    EXPECT_EQ(nrp.pick_at(700000), &nrp.b.se);
    protect_scene rtp("6.18");
    EXPECT_EQ(rtp.a.se.vprot, rtp.a.se.deadline);
    EXPECT_EQ(rtp.pick_at(750000), &rtp.a.se);
    protect_scene old("6.6+NO_RUN_TO_PARITY");
    EXPECT_EQ(old.pick_at(0), &old.b.se);
}

/*
 * 6.12 PLACE_REL_DEADLINE (dequeue_entity() and place_entity() of 6.12.10): a dequeue that
 * is not a sleep keeps deadline - vruntime, and the next placement restores it. Two CPUs,
 * so base_slice = 2 x 0.75 ms. By hand: b queued on cpu0 at vruntime 0 with its deadline
 * 0.3 ms ahead moves to the empty cpu1: placed at cpu1's V (its min_vruntime, no lag on
 * an empty cfs_rq) with the deadline 0.3 ms ahead again. Asleep, or in 6.6 (no such
 * feature), the deadline is a fresh slice: 1.5 ms ahead.
 */
s64 deadline_ahead_after_move(const char* spec, int dequeue_flags)
{
    testlib::sched_fixture f{testlib::small_machine(2), spec};
    cfs_rq& c0 = f.k->cpu_rq(0).cfs;
    cfs_rq& c1 = f.k->cpu_rq(1).cfs;
    task_struct a, b;
    for (task_struct* x : {&a, &b}) {
        x->se.owner = x;
        x->se.slice = f.k->tunables().base_slice;
        x->se.vruntime = c0.min_vruntime;
        x->se.deadline = c0.min_vruntime + (x == &b ? 300000 : 1500000);
        __enqueue_entity(*f.k, c0, x->se);
        x->se.on_rq = true;
        x->se.cfs_rq_ = &c0;
        c0.nr_running++;
    }
    eevdf_policy.dequeue_lag(*f.k, c0, b.se, dequeue_flags);
    __dequeue_entity(*f.k, c0, b.se);
    b.se.on_rq = false;
    c0.nr_running--;
    place_entity_eevdf(*f.k, c1, b.se, 0);
    EXPECT_EQ(b.se.vruntime, c1.min_vruntime) << spec;
    return static_cast<s64>(b.se.deadline - b.se.vruntime);
}

TEST(place_entity_eevdf, from_6_12_a_migrated_entity_keeps_its_relative_deadline)
{
    EXPECT_EQ(deadline_ahead_after_move("6.12", DEQUEUE_NOCLOCK), 300000);
    EXPECT_EQ(deadline_ahead_after_move("6.18", DEQUEUE_NOCLOCK), 300000);
    EXPECT_EQ(deadline_ahead_after_move("6.12", DEQUEUE_SLEEP), 1500000);
    EXPECT_EQ(deadline_ahead_after_move("6.12+NO_PLACE_REL_DEADLINE", DEQUEUE_NOCLOCK), 1500000);
    EXPECT_EQ(deadline_ahead_after_move("6.6", DEQUEUE_NOCLOCK), 1500000);
}

/*
 * yield_task_fair() of 6.18.2: an eligible curr's vruntime jumps to its deadline, then the
 * deadline moves one slice on; an ineligible curr keeps both. 6.6: only deadline += slice.
 * By hand (one CPU, slice 0.75 ms; 6.18's 0.70 ms): a (curr) at key 0 with deadline
 * 0.75 ms, b at key b_key. b at 0: V = 0, a eligible. b at -0.1 ms: V = -0.05 ms, a
 * ineligible.
 */
std::pair<s64, s64> after_yield(const char* spec, s64 b_key)
{
    testlib::sched_fixture f{testlib::small_machine(1), spec};
    cfs_rq& c = f.k->cpu_rq(0).cfs;
    task_struct a, b;
    queue_pair(f, c, a, b, b_key);
    const u64 base = c.min_vruntime;
    set_next_entity(*f.k, c, a.se);
    eevdf_policy.yield_task(*f.k, c);
    return {static_cast<s64>(a.se.vruntime - base), static_cast<s64>(a.se.deadline - base)};
}

TEST(yield_task_fair, from_6_18_an_eligible_curr_forfeits_its_vruntime_to_its_deadline)
{
    EXPECT_EQ(after_yield("6.18", 0), (std::pair<s64, s64>{750000, 1450000}));
    EXPECT_EQ(after_yield("6.18", -100000), (std::pair<s64, s64>{0, 750000}));
    EXPECT_EQ(after_yield("6.6", 0), (std::pair<s64, s64>{0, 1500000}));
    EXPECT_EQ(after_yield("6.12", -100000), (std::pair<s64, s64>{0, 1500000}));
}

// The wakee b (eligible, earlier deadline) preempts curr a only when a no
// longer holds the deadline it was picked with, or without RUN_TO_PARITY.
bool wakeup_preempts(const char* spec, bool curr_got_new_deadline, int curr_policy = SCHED_NORMAL)
{
    testlib::sched_fixture t(testlib::small_machine(1), spec);
    rq& r = t.k->cpu_rq(0);
    cfs_rq& c = r.cfs;
    task_struct a, b;
    a.policy = curr_policy;
    a.se.owner = &a;
    b.se.owner = &b;
    a.pid = 1;
    b.pid = 2;
    a.se.vruntime = c.min_vruntime;
    a.se.deadline = c.min_vruntime + 750000;
    __enqueue_entity(*t.k, c, a.se);
    a.se.on_rq = true;
    c.nr_running = 1;
    set_next_entity(*t.k, c, a.se);
    if (curr_got_new_deadline)
        a.se.deadline += 1000; // as update_deadline() would after the first slice
    b.se.vruntime = c.min_vruntime;
    b.se.deadline = c.min_vruntime + 100000;
    __enqueue_entity(*t.k, c, b.se);
    b.se.on_rq = true;
    c.nr_running = 2;
    r.curr = &a; // a runs; the wakeup check below only reads this state
    check_preempt_wakeup_fair(*t.k, r, b, 0);
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

/*
 * check_preempt_wakeup_fair() of 6.6.87 / 6.12.10 / 6.18.2 returns on !WAKEUP_PREEMPTION
 * before the "preempt an idle entity" test, so a SCHED_IDLE curr is not preempted by a
 * normal wakee with the feature off; with it on, it is, whatever the deadlines (a
 * keeps its first deadline under RUN_TO_PARITY, which would protect a normal curr).
 */
TEST(check_preempt_wakeup_eevdf, no_wakeup_preemption_spares_even_an_idle_curr)
{
    EXPECT_TRUE(wakeup_preempts("6.6", false, SCHED_IDLE));
    EXPECT_FALSE(wakeup_preempts("6.6+NO_WAKEUP_PREEMPTION", false, SCHED_IDLE));
    EXPECT_FALSE(wakeup_preempts("6.18+NO_WAKEUP_PREEMPTION", false, SCHED_IDLE));
}

/*
 * 6.12 DELAY_DEQUEUE on one CPU: a nice-0 spinner and a nice-19 task that
 * runs 1 ms, then sleeps until the test wakes it. The spinner runs first, to
 * the tick at 4 ms; the sleeper's vruntime then moves 68 times faster than
 * real time (weight 15), so after 1 ms it is far past V when it blocks, and
 * stays queued (sched_delayed) until V catches up with it.
 */
struct delayed_dequeue : ::testing::Test {
    testlib::sched_fixture t{testlib::small_machine(1), "6.12"};
    rq& r = t.k->cpu_rq(0);
    int runs = 0;
    bool eligible_at_sleep = true;
    task_struct* spinner = nullptr;
    task_struct* sleeper = nullptr;

    void start(bool second_run_exits = false)
    {
        spinner = &t.spawn("spin", testlib::spin(msecs(100)), 0, 0, 0);
        sleeper = &t.spawn("sleeper",
                           testlib::behaviour([this, second_run_exits](syscalls&, task_struct& p) {
                               kernel& k = *t.k; // the test looks inside the kernel
                               if (runs++ == 0)
                                   return task_action::cpu(msecs(1));
                               if (runs == 2) {
                                   k.update_rq_clock(k.cpu_rq(0));
                                   update_curr(k, k.cpu_rq(0).cfs);
                                   eligible_at_sleep = entity_eligible(k.cpu_rq(0).cfs, p.se);
                                   return task_action::sleep();
                               }
                               return second_run_exits ? task_action::do_exit()
                                                       : task_action::cpu(msecs(100));
                           }),
                           0, 19, 0);
        // Until the sleeper has blocked.
        for (int i = 0; i < 200 && runs < 2; ++i)
            t.run_for(usecs(50));
        ASSERT_EQ(runs, 2);
        ASSERT_FALSE(eligible_at_sleep) << "the scenario must put the sleeper past V";
    }
};

TEST_F(delayed_dequeue, an_ineligible_sleeper_stays_queued_and_leaves_when_picked)
{
    start();
    EXPECT_EQ(sleeper->__state, TASK_INTERRUPTIBLE);
    EXPECT_TRUE(sleeper->se.sched_delayed);
    EXPECT_TRUE(task_on_rq_queued(*sleeper));
    EXPECT_EQ(r.nr_running, 2u) << "a delayed task still counts";
    // The spinner runs; V moves past the sleeper, which wins a pick and leaves.
    t.run_for(msecs(300));
    EXPECT_FALSE(sleeper->se.sched_delayed);
    EXPECT_FALSE(task_on_rq_queued(*sleeper));
    EXPECT_EQ(r.nr_running, 1u);
    EXPECT_LE(sleeper->se.vlag, 0) << "DELAY_ZERO: no positive lag is kept";
    EXPECT_EQ(sleeper->__state, TASK_INTERRUPTIBLE) << "leaving is not a wakeup";
}

TEST_F(delayed_dequeue, a_wakeup_before_the_pick_requeues_in_place)
{
    start();
    ASSERT_TRUE(sleeper->se.sched_delayed);
    const u64 migrations = sleeper->se.nr_migrations;
    const u64 wakeups = r.stats.ttwu_count;
    const u64 delay_before = sleeper->sched_info_.run_delay;
    EXPECT_TRUE(t.k->try_to_wake_up(*sleeper, TASK_NORMAL, 0));
    EXPECT_EQ(sleeper->__state, TASK_RUNNING);
    EXPECT_FALSE(sleeper->se.sched_delayed);
    EXPECT_TRUE(task_on_rq_queued(*sleeper));
    EXPECT_EQ(r.nr_running, 2u);
    EXPECT_EQ(sleeper->se.nr_migrations, migrations);
    EXPECT_EQ(r.stats.ttwu_count, wakeups + 1);
    t.run_for(msecs(300));
    EXPECT_EQ(runs, 3) << "it runs again";
    // It waited in the queue until V caught up with it: that wait is run_delay.
    EXPECT_GT(sleeper->sched_info_.run_delay - delay_before, static_cast<u64>(msecs(10)));
}

/*
 * The scene of the tests below: on cpu0, a nice-0 spinner and a nice-19 task that runs 1 ms
 * and then sleeps, while it is not eligible (the spinner's weight holds V back); `runs`
 * counts the sleeper's steps (2 once it has slept).
 */
task_struct& spawn_spinner_and_sleeper(testlib::sched_fixture& f, int& runs)
{
    f.spawn("spin", testlib::spin(msecs(100)), 0, 0, 0);
    return f.spawn("sleeper", testlib::behaviour([&runs](syscalls&, task_struct&) {
                       return runs++ == 0 ? task_action::cpu(msecs(1)) : task_action::sleep();
                   }),
                   0, 19, 0);
}

/// The same scene, run in 50 us steps until the sleeper has slept (at most 10 ms).
task_struct& spinner_and_slept_sleeper(testlib::sched_fixture& f, int& runs)
{
    task_struct& s = spawn_spinner_and_sleeper(f, runs);
    for (int i = 0; i < 200 && runs < 2; ++i)
        f.run_for(usecs(50));
    return s;
}

TEST_F(delayed_dequeue, the_feature_off_or_an_older_kernel_dequeues_at_once)
{
    for (const char* spec : {"6.12+NO_DELAY_DEQUEUE", "6.6"}) {
        testlib::sched_fixture f{testlib::small_machine(1), spec};
        int n = 0;
        task_struct& s = spawn_spinner_and_sleeper(f, n);
        f.run_for(msecs(10));
        ASSERT_EQ(n, 2) << spec;
        EXPECT_FALSE(s.se.sched_delayed) << spec;
        EXPECT_FALSE(task_on_rq_queued(s)) << spec;
        EXPECT_EQ(f.k->cpu_rq(0).nr_running, 1u) << spec;
    }
}

/*
 * 6.18 (v6.14+, read at 6.18.2): update_sg_lb_stats()'s sum_h_nr_running,
 * update_sg_wakeup_stats()'s and sched_balance_find_src_rq()'s count are rq->cfs.h_nr_runnable,
 * which leaves a sched_delayed task out; 6.12.10 counts rq->cfs.h_nr_running. The scene of
 * the delayed_dequeue tests (a spinner and a nice-19 task that slept while ineligible): two
 * fair tasks queued, one delayed, so the balancer counts 1 on 6.18 and 2 on 6.12.
 */
unsigned lb_count_with_a_delayed_task(const char* spec)
{
    testlib::sched_fixture f{testlib::small_machine(1), spec};
    int runs = 0;
    task_struct& s = spinner_and_slept_sleeper(f, runs);
    EXPECT_TRUE(s.se.sched_delayed) << spec;
    EXPECT_EQ(f.k->cpu_rq(0).nr_running, 2u) << spec;
    return cpu_lb_contrib(*f.k, 0).h_nr_running;
}

TEST(delay_dequeue_feature, from_6_18_the_balancer_leaves_delayed_tasks_out_of_its_counts)
{
    EXPECT_EQ(lb_count_with_a_delayed_task("6.18"), 1u);
    EXPECT_EQ(lb_count_with_a_delayed_task("6.12"), 2u);
}

/*
 * PELT's runnable counts with a delayed task (6.12.10, wishday/linux-6.12.y ff9796ed9e8b:
 * pelt.c __update_load_avg_cfs_rq() passes h_nr_running - h_nr_delayed, sched.h
 * se_update_runnable() sets a group entity's runnable_weight to the same, se_runnable() is
 * false for a sched_delayed entity; 6.18.2 the same through h_nr_runnable). The scene of
 * lb_count_with_a_delayed_task(): the spinner and the delayed sleeper in one autogroup, so
 * its cfs_rq has h_nr_running 2 and one delayed: the group entity's runnable_weight is 1,
 * and over the next 2 ms the sleeper's ___update_load_sum() gets runnable 0: its
 * runnable_sum only decays (the old model passed on_rq, 1, and it grew by the period's
 * contribution).
 */
TEST(delay_dequeue_feature, pelt_leaves_delayed_tasks_out_of_the_runnable_counts)
{
    for (const char* spec : {"6.12", "6.18"}) {
        testlib::sched_fixture f{testlib::small_machine(1), spec};
        int runs = 0;
        task_struct& s = spinner_and_slept_sleeper(f, runs);
        ASSERT_TRUE(s.se.sched_delayed) << spec;
        rq& r = f.k->cpu_rq(0);
        cfs_rq& g = task_cfs_rq(r, s);
        ASSERT_NE(g.my_se, nullptr) << spec << ": autogroup on";
        EXPECT_EQ(g.h_nr_running, 2u) << spec;
        EXPECT_EQ(g.h_nr_delayed, 1u) << spec;
        EXPECT_EQ(rq_root_cfs(r).h_nr_delayed, 1u) << spec;
        se_update_runnable(g.my_se->se);
        EXPECT_EQ(g.my_se->runnable_weight, 1u) << spec;
        const u64 runnable_before = s.se.avg.runnable_sum;
        ASSERT_GT(runnable_before, 0u) << spec;
        f.run_for(msecs(2));
        ASSERT_TRUE(s.se.sched_delayed) << spec << ": still delayed";
        f.k->update_rq_clock(r);
        update_load_avg(*f.k, g, s.se, 0);
        // runnable 0: the sum only decays, by y^(2000/1024) = 0.959 (y^32 = 1/2), under 97%
        // of what it was (runnable 1 would have added about 2000 << 10 to it).
        EXPECT_LT(s.se.avg.runnable_sum * 100, runnable_before * 97) << spec;
    }
}

TEST(delay_dequeue_feature, exists_from_6_12_only)
{
    auto make = [](const char* spec) { testlib::sched_fixture f{testlib::small_machine(1), spec}; };
    EXPECT_THROW(make("6.6+DELAY_DEQUEUE"), config_error);
    EXPECT_NO_THROW(make("6.12+NO_DELAY_ZERO"));
}

} // namespace
} // namespace schedlab
