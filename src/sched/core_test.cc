// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whole-scheduler behaviour on tiny machines, every invariant checked after
 * every scheduling operation (check_level::every).
 */
#include "sched/fair.h"
#include "sched/profiles.h"
#include "sched/testlib.h"
#include "trace/tracepoints.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {
namespace {

using testlib::sched_fixture;
using testlib::small_machine;

struct policy_case {
    const char* kernel;
};

class fair_share : public ::testing::TestWithParam<const char*> {};

TEST_P(fair_share, two_equal_hogs_on_one_cpu_split_it_evenly)
{
    sched_fixture t(small_machine(1), GetParam());
    task_struct& a = t.spawn("a", testlib::spin());
    task_struct& b = t.spawn("b", testlib::spin());
    t.run_for(secs(1));
    const double ra = static_cast<double>(a.se.sum_exec_runtime);
    const double rb = static_cast<double>(b.se.sum_exec_runtime);
    EXPECT_NEAR(ra / (ra + rb), 0.5, 0.01) << t.k->dump_state();
    EXPECT_NEAR(ra + rb, 1e9, 1e6);
}

TEST_P(fair_share, nice_5_gets_its_weight_share)
{
    sched_fixture t(small_machine(1), GetParam());
    task_struct& a = t.spawn("nice0", testlib::spin());
    task_struct& b = t.spawn("nice5", testlib::spin(), 0, 5);
    t.run_for(secs(2));
    const double ratio = static_cast<double>(a.se.sum_exec_runtime) /
                         static_cast<double>(b.se.sum_exec_runtime);
    EXPECT_NEAR(ratio, 1024.0 / 335.0, 0.15) << t.k->dump_state();
}

TEST_P(fair_share, hogs_switch_at_tick_granularity)
{
    // One CPU: factor 1, EEVDF slice 0.75 ms / CFS ideal 3 ms are both below the
    // 4 ms tick, so each tick preempts: ~250 switches per second.
    sched_fixture t(small_machine(1), GetParam());
    t.spawn("a", testlib::spin());
    t.spawn("b", testlib::spin());
    t.run_for(secs(1));
    EXPECT_NEAR(static_cast<double>(t.k->cpu_rq(0).nr_switches), 250.0, 3.0);
}

TEST_P(fair_share, a_short_sleeper_runs_promptly_after_waking)
{
    sched_fixture t(small_machine(1), GetParam());
    t.spawn("hog", testlib::spin());
    task_struct& s = t.spawn("sleeper", testlib::run_sleep(usecs(200), msecs(10)));
    t.run_for(secs(1));
    // ~1000/10.2 wakeups; each should wait for at most about one tick.
    EXPECT_GT(s.sched_info_.pcount, 90u);
    EXPECT_LT(s.sched_info_.run_delay / s.sched_info_.pcount, usecs(4000)) << t.k->dump_state();
}

INSTANTIATE_TEST_SUITE_P(policies, fair_share, ::testing::Values("6.6", "6.5"));

TEST(wake_up_new_task, forks_spread_to_idle_cpus)
{
    sched_fixture t(small_machine(4), "6.6");
    for (int i = 0; i < 4; ++i)
        t.spawn(fmt::format("t{}", i), testlib::spin());
    t.run_for(msecs(10));
    for (int cpu = 0; cpu < 4; ++cpu)
        EXPECT_EQ(t.k->cpu_rq(cpu).nr_running, 1u) << t.k->dump_state();
}

/// The time a forked child's first step() runs and the CPU it runs on: a parent on cpu0
/// forks one child at t=0 (a thread or a process) and then sleeps for good.
struct first_step {
    sim_time at = -1;
    int cpu = -1;
};
first_step fork_and_watch(int nr_cpus, bool thread)
{
    cost_params c = sched_fixture::no_costs();
    c.start_thread = usecs(7);
    c.start_process = usecs(30);
    c.start_remote = usecs(50);
    sched_fixture t(small_machine(nr_cpus), "6.6", 1, "", c);
    first_step seen;
    bool forked = false;
    t.spawn("parent", testlib::behaviour([&](syscalls& k, task_struct& p) {
                if (forked)
                    return task_action::sleep();
                forked = true;
                task_opts o;
                o.comm = "child";
                o.thread = thread;
                k.fork(p, testlib::behaviour([&](syscalls& kk, task_struct& ch) {
                           seen = {kk.now(), ch.cpu};
                           return task_action::do_exit();
                       }),
                       o);
                return task_action::cpu(usecs(1)); // then sleeps
            }),
            0);
    t.run_for(msecs(5));
    return seen;
}

TEST(fork, the_child_spends_its_start_cost_before_its_first_step)
{
    // One CPU: the child runs once the parent sleeps (1 us), then its own start-up.
    EXPECT_EQ(fork_and_watch(1, true).at, usecs(1) + usecs(7));
    EXPECT_EQ(fork_and_watch(1, false).at, usecs(1) + usecs(30));
    // Two CPUs: fork balancing puts the child on the idle cpu1 at once, where it also
    // pays start_remote.
    const first_step thr = fork_and_watch(2, true), proc = fork_and_watch(2, false);
    EXPECT_EQ(thr.cpu, 1);
    EXPECT_EQ(thr.at, usecs(7) + usecs(50));
    EXPECT_EQ(proc.cpu, 1);
    EXPECT_EQ(proc.at, usecs(30) + usecs(50));
}

/*
 * kernel: core.c wake_up_new_task(), 6.1-6.6 (read in v6.5): fork balancing
 * (select_task_rq(WF_FORK) -> find_idlest_cpu()) reads every CPU of the balancing
 * domain before the chosen rq is locked and activate_task() counts the child there, so
 * two parents forking together both find the same CPU idle. Worked by hand: 4 CPUs in
 * one LLC, parents pinned to cpu0 and cpu1 fork at t=0 (cpu0's first); each scan reads
 * the MC domain's four one-CPU groups, 4 x idle_scan_probe = 4 us. Both pick cpu2 (the
 * first of the two idle groups: update_pick_idlest() keeps it on a tie); the children
 * are enqueued there 4 us later. With the scan priced at 0 the first child is enqueued
 * at once and the second fork takes cpu3 (the model before the window did so whatever
 * the price).
 */
std::array<int, 2> concurrent_forks(sim_dur probe, bool* idle_in_window)
{
    cost_params c = sched_fixture::no_costs();
    c.idle_scan_probe = probe;
    sched_fixture t(small_machine(4), "6.6", 1, "", c);
    std::array<task_struct*, 2> kids{};
    for (int i = 0; i < 2; ++i)
        t.spawn(fmt::format("parent{}", i), testlib::behaviour([&, i](syscalls& k, task_struct& p) {
                    if (kids[static_cast<std::size_t>(i)])
                        return task_action::sleep();
                    task_opts o;
                    o.comm = fmt::format("child{}", i);
                    o.allowed = cpumask(4);
                    o.allowed.set_all();
                    kids[static_cast<std::size_t>(i)] = &k.fork(p, testlib::spin(), o);
                    return task_action::sleep();
                }),
                i, 0, i);
    t.run_for(usecs(2));
    if (idle_in_window)
        *idle_in_window = kids[0] && kids[1] && !kids[0]->on_rq && !kids[1]->on_rq &&
                          t.k->idle_cpu(2) && t.k->idle_cpu(3);
    t.run_for(usecs(3));
    EXPECT_TRUE(kids[0] && kids[0]->on_rq && kids[1] && kids[1]->on_rq) << t.k->dump_state();
    return {kids[0] ? kids[0]->cpu : -1, kids[1] ? kids[1]->cpu : -1};
}

TEST(wake_up_new_task, two_concurrent_forks_choose_the_same_idle_cpu_in_the_scan_window)
{
    bool idle_in_window = false;
    EXPECT_EQ(concurrent_forks(usecs(1), &idle_in_window), (std::array<int, 2>{2, 2}));
    EXPECT_TRUE(idle_in_window) << "at 2 us both children are selected, neither is enqueued";
    EXPECT_EQ(concurrent_forks(0, nullptr), (std::array<int, 2>{2, 3}));
}

/*
 * model: find_idlest_cpu()'s reads are charged per CPU as idle_scan_probe plus 26% of a line
 * by distance (fair_select.cc slow_path_line_pct: update_sg_wakeup_stats() reads each CPU's
 * rq at an address known in advance, so the lines of successive CPUs overlap). Worked by
 * hand: 4 CPUs in one LLC, a parent pinned to cpu0 forks; the MC domain's four one-CPU
 * groups are read (cpu0's own line free, three at line_llc = 1000 ns); cpu1, the first idle
 * group, wins and, a one-CPU group, is not read again. The charge to cpu0 is 4 x 100 ns of
 * probes + 3 x 1000 ns x 26% = 1180 ns (3400 ns with the whole line per CPU, the price
 * before the overlap was modelled).
 */
TEST(find_idlest_cpu, charges_a_share_of_each_cpus_line_as_the_reads_overlap)
{
    cost_params c = sched_fixture::no_costs();
    c.idle_scan_probe = 100;
    c.line_llc = 1000;
    sched_fixture t(small_machine(4), "6.6", 1, "", c);
    task_struct* kid = nullptr;
    t.spawn("parent", testlib::behaviour([&](syscalls& k, task_struct& p) {
                if (kid)
                    return task_action::sleep();
                task_opts o;
                o.comm = "child";
                o.allowed = cpumask(4);
                o.allowed.set_all();
                kid = &k.fork(p, testlib::spin(), o);
                return task_action::sleep();
            }),
            0, 0, 0);
    t.run_for(usecs(20));
    ASSERT_TRUE(kid && kid->on_rq) << t.k->dump_state();
    EXPECT_EQ(kid->cpu, 1);
    const cpu_time_accounting a = t.k->charges().cpu_accounting(t.k->cpu_rq(0));
    EXPECT_EQ(a.spent[ACCT_IDLE_SCAN] + a.idle_work[ACCT_IDLE_SCAN], 1180);
}

TEST(select_task_rq, never_places_a_task_outside_its_affinity)
{
    sched_fixture t(small_machine(4), "6.6");
    task_struct& p = t.spawn("pinned", testlib::run_sleep(usecs(100), usecs(300)), 0, 0, 3);
    for (int i = 0; i < 3; ++i)
        t.spawn(fmt::format("hog{}", i), testlib::spin());
    t.run_for(msecs(200));
    EXPECT_EQ(p.cpu, 3);
    EXPECT_EQ(p.se.nr_migrations, 0u);
    EXPECT_GT(p.sched_info_.pcount, 100u);
}

/*
 * select_fallback_rq() (v6.5 = v6.6.87 kernel/sched/core.c): when the class's choice is not
 * allowed, the first allowed CPU of task_cpu(p)'s node, before any allowed CPU. Two sockets
 * (nodes) of 4 CPUs: node 0 = 0-3, node 1 = 4-7. p sleeps on cpu5; its mask becomes {1, 6}
 * (as sched_setaffinity() leaves a sleeping task where it is). The wakeup from cpu5: cpu5 is
 * not allowed, so want_affine is off and no domain has SD_BALANCE_WAKE; select_idle_sibling()
 * returns target = prev = cpu5, idle (it does not test prev's affinity). Fallback from cpu5:
 * node 1's allowed CPU 6, not the first allowed CPU 1. With mask {1, 2} node 1 has none: 1.
 */
TEST(select_task_rq, the_fallback_tries_task_cpus_node_first)
{
    for (const bool node_has_one : {true, false}) {
        symmetric_machine_spec s;
        s.name = "test-2node";
        s.cores_per_socket = 4;
        s.sockets = 2;
        sched_fixture t(make_symmetric_machine(s, "test"), "6.6");
        ASSERT_EQ(t.m.node_mask(1).to_cpulist(), "4-7");
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 5, 0, 5);
        t.run_for(msecs(1));
        ASSERT_EQ(p.__state, TASK_INTERRUPTIBLE);
        ASSERT_EQ(p.cpu, 5);
        p.cpus_mask.clear_all();
        p.cpus_mask.set(1);
        p.cpus_mask.set(node_has_one ? 6 : 2);
        p.nr_cpus_allowed = p.cpus_mask.weight();
        t.k->set_this_cpu(5);
        EXPECT_TRUE(t.k->wake_up_process(p));
        EXPECT_EQ(p.cpu, node_has_one ? 6 : 1) << "node 1 has an allowed CPU: " << node_has_one;
    }
}

TEST(try_to_wake_up, returns_false_for_a_task_that_is_not_sleeping)
{
    sched_fixture t(small_machine(2), "6.6");
    task_struct& p = t.spawn("hog", testlib::spin());
    t.run_for(msecs(1));
    EXPECT_EQ(p.__state, TASK_RUNNING);
    EXPECT_FALSE(t.k->wake_up_process(p));
}

TEST(do_exit, a_finished_task_leaves_the_runqueue_and_the_run_ends)
{
    sched_fixture t(small_machine(2), "6.5");
    task_struct& p = t.spawn("short", testlib::run_sleep(msecs(1), msecs(1), 3));
    t.run_for(secs(10));
    EXPECT_TRUE(t.k->all_exited());
    EXPECT_EQ(p.__state, TASK_DEAD);
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(msecs(3)));
    EXPECT_EQ(p.nvcsw, 4u) << "3 sleeps + the final switch away from the dead task";
    EXPECT_LT(t.sim.now(), msecs(7));
    for (int cpu = 0; cpu < 2; ++cpu)
        EXPECT_EQ(t.k->cpu_rq(cpu).nr_running, 0u);
}

TEST(context_switch_cost, is_charged_to_the_incoming_task)
{
    cost_params c = sched_fixture::no_costs();
    c.context_switch = usecs(10);
    sched_fixture t(small_machine(1), "6.6", 1, "", c);
    task_struct& p = t.spawn("loop", testlib::run_sleep(usecs(100), usecs(100), 10));
    t.run_for(secs(1));
    // 11 switches in (10 runs, then the wakeup that exits), each 10 us, plus 10 x 100 us of work.
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(11 * usecs(10) + 10 * usecs(100)));
}

u64 digest_of(u64 seed, const char* profile)
{
    cost_params c; // default costs, with jitter: the seed matters
    sched_fixture t(small_machine(2), profile, seed, "", c);
    for (int i = 0; i < 6; ++i)
        t.spawn(fmt::format("w{}", i), testlib::behaviour([](syscalls& k, task_struct& p) {
                    // run a jittered amount, then sleep a random time
                    if (p.rng.below(2))
                        return task_action::cpu(k.charge(p, usecs(300)));
                    k.schedule_timeout(p, static_cast<sim_dur>(p.rng.below(usecs(500))));
                    return task_action::sleep();
                }));
    t.run_for(msecs(200));
    return t.k->schedule_digest();
}

TEST(determinism, same_seed_gives_the_same_schedule_and_another_seed_does_not)
{
    for (const char* k : {"6.6", "6.5"}) {
        EXPECT_EQ(digest_of(42, k), digest_of(42, k)) << k;
        EXPECT_NE(digest_of(42, k), digest_of(43, k)) << k;
    }
}

TEST(check_all, reports_a_corrupted_runqueue_with_the_state_dump)
{
    sched_fixture t(small_machine(1), "6.6");
    t.spawn("a", testlib::spin());
    t.spawn("b", testlib::spin());
    t.run_for(msecs(10));
    EXPECT_DEATH(
        {
            t.k->cpu_rq(0).cfs.nr_running += 1; // simulate a lost accounting update
            t.k->check_all();
        },
        "scheduler invariant violated(.|\n)*cfs_rq nr_running(.|\n)*seed 1");
}

TEST(kernel, builds_the_topology_its_profile_has)
{
    // 6.7 renamed DIE to PKG (f577cd57bfaa, tip sched/core 2023-10-12); 5.18 added imb_numa_nr.
    auto levels = [](const char* spec) {
        sched_fixture t(load_machine("milan-2s"), spec);
        std::string names;
        u32 numa_imb = 0;
        for (const auto& sd : t.k->topology().cpu(0).domains) {
            names += sd->name + " ";
            if (sd->has(SD_NUMA))
                numa_imb = sd->imb_numa_nr;
        }
        return std::make_pair(names, numa_imb);
    };
    EXPECT_EQ(levels("6.6").first, "SMT MC DIE NUMA ");
    EXPECT_EQ(levels("tip-2023-08").first, "SMT MC DIE NUMA ");
    EXPECT_EQ(levels("tip-2023-12").first, "SMT MC PKG NUMA ");
    EXPECT_EQ(levels("6.12").first, "SMT MC PKG NUMA ");
    EXPECT_EQ(levels("6.18").first, "SMT MC PKG NUMA ");
    EXPECT_GT(levels("6.6").second, 0u);
    EXPECT_EQ(levels("5.15").second, 0u) << "no imb_numa_nr before v5.18";
    EXPECT_EQ(levels("5.15-rc3").second, 0u);
}

/*
 * Hand-worked from ttwu_queue_cond() of each version (lane cfsaudit): cpu0 wakes p, whose
 * previous CPU, cpu3 of the same LLC, is idle, so select_task_rq() keeps cpu3.
 * 6.1 (krr-io/linux-6.1.0 2a410d07ec5e) and 6.5 (sndrzt/linux-6.5 f5744aac0f31): cpus
 * share the cache, cpu3 is not the waker's and runs nothing -> the wake list; p is not
 * queued until the IPI. 5.15 (sndrzt/linux-5.15 75c6ad16ec64): inside the LLC only an
 * on_cpu wakee (WF_ON_CPU) may be queued -> ttwu_queue() activates p on cpu3 at once.
 * Before: every profile took 6.1's rule.
 */
TEST(try_to_wake_up, v5_15_queues_a_wakee_for_an_idle_cpu_of_its_llc_directly)
{
    for (const char* kernel : {"5.15", "5.15-rc3", "6.1", "tip-2023-02", "6.5", "tip-2023-08"}) {
        sched_fixture t(small_machine(4), kernel);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 3);
        t.run_for(msecs(1)); // p ran on cpu3 and sleeps; cpu3 idles
        p.cpus_mask.set_all();
        p.nr_cpus_allowed = p.cpus_mask.weight();
        ASSERT_TRUE(t.k->idle_cpu(3)) << kernel;
        const auto runs = p.sched_info_.pcount;
        t.k->set_this_cpu(0);
        ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
        ASSERT_EQ(p.cpu, 3) << kernel;
        const bool v5_15 = std::string(kernel).starts_with("5.15");
        EXPECT_EQ(p.on_rq != 0, v5_15) << kernel << ": activated by the waker";
        EXPECT_EQ(t.k->cpu_rq(3).ttwu_pending, !v5_15) << kernel << ": on cpu3's wake list";
        t.run_for(usecs(100));
        EXPECT_EQ(p.sched_info_.pcount, runs + 1) << kernel << ": it ran either way";
    }
}

/*
 * The other two branches of ttwu_queue_cond(), 6.1+ (6.5 at sndrzt/linux-6.5 4f5cdb332210,
 * 6.6.87 at Yunbaby8/linux-6.6.87-lab 7fe0c4ed5035; lane coreaudit), by hand: p pinned to
 * cpu3 (select_task_rq() keeps the single allowed CPU). (a) cpu3 runs a hog: cpus share
 * the cache and cpu3 is not the waker's, but nr_running is 1 -> ttwu_queue() activates p
 * from cpu0 at once, no wake list. (b) cpu3 wakes p itself (its own CPU, idle: a timer's
 * context): "cpu == smp_processor_id()" -> activated at once too.
 */
TEST(try_to_wake_up, a_busy_or_own_cpu_of_the_llc_is_activated_directly)
{
    for (const char* kernel : {"6.1", "tip-2023-08", "6.5", "6.6"}) {
        {
            sched_fixture t(small_machine(4), kernel);
            t.spawn("hog", testlib::spin(), 3, 0, 3);
            task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
            t.run_for(msecs(50)); // p ran on cpu3 between the hog's slices and sleeps
            ASSERT_EQ(t.k->cpu_rq(3).nr_running, 1u) << kernel;
            t.k->set_this_cpu(0);
            ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
            EXPECT_EQ(p.cpu, 3) << kernel;
            EXPECT_TRUE(p.on_rq) << kernel << ": (a) enqueued by the waker";
            EXPECT_FALSE(t.k->cpu_rq(3).ttwu_pending) << kernel << ": (a) no wake list";
        }
        {
            sched_fixture t(small_machine(4), kernel);
            task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
            t.run_for(msecs(1)); // p ran on cpu3 and sleeps; cpu3 idles
            ASSERT_TRUE(t.k->idle_cpu(3)) << kernel;
            t.k->set_this_cpu(3);
            ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
            EXPECT_TRUE(p.on_rq) << kernel << ": (b) enqueued by its own CPU";
            EXPECT_FALSE(t.k->cpu_rq(3).ttwu_pending) << kernel << ": (b) no wake list";
        }
    }
}

/*
 * sched_ttwu_pending()'s clear of rq->ttwu_pending: before rq_lock_irqsave() in 5.15.0
 * (sndrzt/linux-5.15 75c6ad16ec64) and 6.1-rc7 (krr-io/linux-6.1.0 2a410d07ec5e), after the
 * enqueues from d6962c4fe8f9 (v6.2-rc1; 6.5 at sndrzt/linux-6.5 4f5cdb33). Two LLCs, cpu0-3
 * and cpu4-7; hogs on cpu0 and cpu1. cpu4 wakes p, pinned to idle cpu3: another LLC, so
 * p goes on cpu3's wake list in every profile. cpu3's handler waits its rq_lock_hold (20 us
 * here) before p's enqueue. In that time cpu1 wakes q, last on cpu3 and now free to run on
 * any CPU. Early clear: cpu3 looks idle (idle task current, nothing queued, ttwu_pending
 * clear), so wake_affine() keeps prev and select_idle_sibling() returns it: q is stacked
 * on cpu3 with p. Late clear: cpu3 is busy (ttwu_pending, then p), and the LLC scan finds
 * idle cpu2.
 */
TEST(sched_ttwu_pending, v6_1_clears_ttwu_pending_before_the_enqueue)
{
    for (const char* kernel : {"5.15", "5.15-rc3", "6.1", "tip-2023-02", "6.5", "6.6"}) {
        symmetric_machine_spec s;
        s.name = "test-2llc";
        s.cores_per_socket = 8;
        s.cores_per_llc = 4;
        cost_params c = sched_fixture::no_costs();
        c.rq_lock_hold = usecs(20);
        sched_fixture t(make_symmetric_machine(s, "test"), kernel, 1, "", c);
        t.spawn("hog0", testlib::spin(), 0, 0, 0);
        t.spawn("hog1", testlib::spin(), 1, 0, 1);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
        task_struct& q = t.spawn("q", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
        t.run_for(msecs(1)); // p and q ran on cpu3 and sleep; cpu2-7 idle
        q.cpus_mask.set_all();
        q.nr_cpus_allowed = q.cpus_mask.weight();
        const bool early = std::string(kernel) == "6.1" || std::string(kernel).starts_with("5.15");
        const auto p_runs = p.sched_info_.pcount;
        const auto q_runs = q.sched_info_.pcount;

        t.k->set_this_cpu(4);
        ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
        ASSERT_TRUE(t.k->cpu_rq(3).ttwu_pending) << kernel << ": p on cpu3's wake list";
        t.run_for(usecs(1)); // the IPI (no costs: at once); the handler holds cpu3's lock
        const rq& r3 = t.k->cpu_rq(3);
        EXPECT_FALSE(r3.ttwu_pending) << kernel << ": cleared before or after the enqueue";
        EXPECT_EQ(r3.nr_running, early ? 0u : 1u) << kernel << ": p enqueued";
        t.k->set_this_cpu(1);
        EXPECT_EQ(t.k->idle_cpu(3), early) << kernel << ": cpu3 idle to another waker";
        ASSERT_TRUE(t.k->wake_up_process(q)) << kernel;
        EXPECT_EQ(q.cpu, early ? 3 : 2) << kernel;

        t.run_for(usecs(200));
        // 5.15: cpu1 activates q on idle cpu3 itself (ttwu_queue_cond() keeps the wake list for
        // another LLC), once it has the lock cpu3's handler holds and its own hold is over
        // (40 us): p runs by then and q preempts it, so p is switched in twice.
        const bool v5_15 = std::string(kernel).starts_with("5.15");
        EXPECT_EQ(p.sched_info_.pcount, p_runs + (v5_15 ? 2 : 1)) << kernel;
        EXPECT_EQ(q.sched_info_.pcount, q_runs + 1) << kernel;
    }
}

/*
 * The wake list's handler runs with interrupts off (sched_ttwu_pending()'s
 * rq_lock_irqsave(), 6.1-rc7 krr-io/linux-6.1.0 2a410d07ec5e and 6.5 sndrzt/linux-6.5
 * 4f5cdb332210), so a sleeper's hrtimer that expires on that CPU while the handler waits
 * for the rq lock is taken after it, as the tick is. The scene above: cpu4 wakes p onto
 * idle cpu3's wake list at T; cpu3's handler holds the lock 20 us (rq_lock_hold) before the
 * enqueue, which the model places at T + 20 us where ttwu_pending is cleared early (6.1).
 * r, asleep on cpu3, has its timer at T + 10 us: 5.15 and 6.1 wake it at T + 20 us, after
 * the handler (before, lane nibirq: at T + 10 us, inside it). Differs: from 6.2 the model
 * enqueues at the IPI's instant and charges the hold as work owed, which holds no interrupt.
 */
TEST(sched_ttwu_pending, a_sleepers_hrtimer_waits_for_the_wake_lists_handler)
{
    for (const char* kernel : {"5.15", "6.1"}) {
        symmetric_machine_spec s;
        s.name = "test-2llc";
        s.cores_per_socket = 8;
        s.cores_per_llc = 4;
        cost_params c = sched_fixture::no_costs();
        c.rq_lock_hold = usecs(20);
        sched_fixture t(make_symmetric_machine(s, "test"), kernel, 1, "", c);
        struct wakings final : trace_sink {
            int pid = -1;
            std::vector<sim_time> at;
            void sched_waking(const trace_sched_wakeup& w) override
            {
                if (w.pid == pid)
                    at.push_back(w.ts);
            }
        } rec;
        t.k->add_sink(&rec);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
        constexpr sim_time wake_at = msecs(1);
        auto steps = std::make_shared<int>(0);
        task_struct& r =
            t.spawn("r", testlib::behaviour([steps](syscalls& k, task_struct& self) {
                        if ((*steps)++ == 0)
                            return task_action::cpu(usecs(10));
                        if (*steps == 2)
                            k.schedule_timeout(self, wake_at + usecs(10) - k.now());
                        return task_action::sleep();
                    }),
                    3, 0, 3);
        rec.pid = r.pid;
        t.run_for(wake_at - t.k->now()); // p and r ran on cpu3 and sleep; cpu3 idle
        ASSERT_EQ(t.k->now(), wake_at);
        ASSERT_EQ(r.timer_cpu, 3) << kernel;
        t.k->set_this_cpu(4);
        ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
        t.run_for(usecs(100));
        ASSERT_EQ(rec.at.size(), 1u) << kernel;
        EXPECT_EQ(rec.at[0] - wake_at, usecs(20)) << kernel << ": after the handler";
    }
}

/// Every sched_wakeup and sched_switch of a run.
struct wakeups_and_switches final : trace_sink {
    std::vector<trace_sched_wakeup> wakeup;
    std::vector<trace_sched_switch> switches;
    void sched_wakeup(const trace_sched_wakeup& w) override { wakeup.push_back(w); }
    void sched_switch(const trace_sched_switch& s) override { switches.push_back(s); }
};

/*
 * kernel: try_to_wake_up() -> ttwu_queue() without the wake list -> ttwu_do_activate() and
 * ttwu_do_wakeup(), 6.5 (sndrzt/linux-6.5 4f5cdb332210) and 6.18 (gfunkmonk/linux-6.18.2
 * 062668f4d006): the waker takes the target's rq lock before the enqueue, and sched_wakeup
 * follows the enqueue. Here cpu0 (idle: a timer's context) wakes p, pinned to cpu3, which
 * runs a hog (busy: no wake list); the lock's hold is 20 us, every other cost 0. p stays
 * TASK_WAKING and off cpu3's runqueue, and cannot be woken again, until cpu0 has held the
 * lock its 20 us; then it is enqueued and sched_wakeup is stamped, on cpu0 for cpu3.
 * Before (267e10f) p was enqueued, and its sched_wakeup stamped, at the waking.
 */
TEST(try_to_wake_up, a_direct_activation_enqueues_after_the_wakers_lock)
{
    for (const char* kernel : {"5.15", "6.1", "6.5", "6.6", "6.18"}) {
        cost_params c = sched_fixture::no_costs();
        c.rq_lock_hold = usecs(20);
        sched_fixture t(small_machine(4), kernel, 1, "", c);
        wakeups_and_switches rec;
        t.k->add_sink(&rec);
        t.spawn("hog", testlib::spin(), 3, 0, 3);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
        t.run_for(msecs(50)); // p ran on cpu3 between the hog's slices and sleeps
        ASSERT_EQ(t.k->cpu_rq(3).nr_running, 1u) << kernel;
        rec.wakeup.clear();
        const sim_time woken = t.sim.now();
        t.k->set_this_cpu(0);
        ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
        EXPECT_EQ(p.cpu, 3) << kernel;
        EXPECT_FALSE(t.k->cpu_rq(3).ttwu_pending) << kernel << ": no wake list";
        EXPECT_EQ(p.__state, TASK_WAKING) << kernel;
        EXPECT_FALSE(p.on_rq) << kernel << ": not enqueued before the waker has the lock";
        EXPECT_TRUE(rec.wakeup.empty()) << kernel;
        t.run_for(usecs(20) - 1);
        EXPECT_FALSE(p.on_rq) << kernel;
        EXPECT_EQ(t.k->cpu_rq(3).nr_running, 1u) << kernel;
        t.k->set_this_cpu(1);
        EXPECT_FALSE(t.k->wake_up_process(p)) << kernel << ": TASK_WAKING is no sleep state";
        t.run_for(1);
        EXPECT_TRUE(p.on_rq) << kernel << ": enqueued at the end of the waker's hold";
        ASSERT_EQ(rec.wakeup.size(), 1u) << kernel;
        EXPECT_EQ(rec.wakeup[0].ts, woken + usecs(20)) << kernel << ": stamped at the enqueue";
        EXPECT_EQ(rec.wakeup[0].cpu, 0) << kernel << ": by the waker's ttwu_do_wakeup()";
        EXPECT_EQ(rec.wakeup[0].target_cpu, 3) << kernel;
    }
}

/*
 * kernel: the tick takes its rq's lock (rq_lock()) around update_rq_clock() and task_tick()
 * (scheduler_tick() of 5.15.0 sndrzt/linux-5.15 75c6ad16ec64 and 6.5 sndrzt/linux-6.5
 * 4f5cdb332210, sched_tick() of 6.18.2 gfunkmonk/linux-6.18.2 062668f4d006). Here cpu3
 * runs a hog alone (busy: no wake list) and p, pinned to cpu3, sleeps; the lock's hold is
 * 20 us, every other cost 0. At a tick of cpu3, cpu0 wakes p: its ttwu_queue() waits for
 * the tick's 20 us hold, then holds the lock its own 20 us, so p is enqueued 40 us after
 * the waking. Lane rqlocks; before, the tick took no lock and p was enqueued after 20 us
 * (checked: this test failed so, cpu3's lock not held at its tick).
 */
TEST(sched_tick, a_direct_wakeup_waits_for_the_ticks_hold_of_the_targets_lock)
{
    for (const char* kernel : {"5.15", "6.5", "6.18"}) {
        cost_params c = sched_fixture::no_costs();
        c.rq_lock_hold = usecs(20);
        sched_fixture t(small_machine(4), kernel, 1, "", c);
        t.spawn("hog", testlib::spin(), 3, 0, 3);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 3, 0, 3);
        t.run_for(msecs(50)); // p ran on cpu3 between the hog's slices and sleeps
        ASSERT_EQ(t.k->cpu_rq(3).nr_running, 1u) << kernel;
        const auto tick = static_cast<s64>(t.k->config().params.tick_nsec());
        const sim_time at = (t.sim.now() / tick + 2) * tick; // a tick of cpu3's, not the next
        t.run_for(at - t.sim.now());
        contended_lock& lock = t.k->cpu_rq(3).lock;
        ASSERT_EQ(lock.last_cpu, 3) << kernel << ": the tick took cpu3's lock";
        ASSERT_EQ(lock.busy_until, at + usecs(20)) << kernel;
        t.k->set_this_cpu(0);
        ASSERT_TRUE(t.k->wake_up_process(p)) << kernel;
        ASSERT_EQ(p.cpu, 3) << kernel;
        EXPECT_FALSE(t.k->cpu_rq(3).ttwu_pending) << kernel << ": no wake list";
        t.run_for(usecs(40) - 1);
        EXPECT_FALSE(p.on_rq) << kernel << ": the waker still waits or holds the lock";
        t.run_for(1);
        EXPECT_TRUE(p.on_rq) << kernel << ": after the tick's hold and the waker's own";
    }
}

/*
 * The tick grid's phase (sched_params::tick_phase_ns, which a replay reads from its trace):
 * with a phase of 1.5 ms a busy CPU's ticks fall at 1.5 + 4k ms, each taking the rq's lock for
 * its 20 us hold (as above; here 40 us in all by 9.54 ms), and jiffies turn over on them.
 * Checked: without the phase the ticks fell on multiples of 4 ms (the lock last taken at 8 ms).
 */
TEST(sched_tick, the_ticks_fall_on_the_grids_phase)
{
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    kernel_config kc = make_kernel_config("6.18");
    kc.params.tick_phase_ns = 1'500'000;
    sched_fixture t(small_machine(1), kc, 1, c);
    t.spawn("hog", testlib::spin(), 0, 0, 0);
    const sim_time at = msecs(9) + usecs(500);
    t.run_for(at - t.sim.now());
    const contended_lock& lock = t.k->cpu_rq(0).lock;
    EXPECT_EQ(lock.last_cpu, 0);
    EXPECT_GE(lock.busy_until, at + usecs(20)) << "the tick at 9.5 ms took the lock";
    EXPECT_LT(lock.busy_until, at + usecs(100)) << "(its hold, then its balance's)";
    EXPECT_EQ(kc.params.next_tick_after(at), at + msecs(4));
    EXPECT_EQ(kc.params.next_tick_after(usecs(1499)), usecs(1500));
    EXPECT_EQ(kc.params.next_tick_after(0), usecs(1500));
    const u64 j = jiffies(*t.k);
    t.run_for(msecs(4) - 1);
    EXPECT_EQ(jiffies(*t.k), j) << "no jiffy before the next tick";
    t.run_for(1);
    EXPECT_EQ(jiffies(*t.k), j + 1);
}

/*
 * kernel: wake_up_new_task() takes the chosen rq's lock (__task_rq_lock()) after fork
 * balancing and before activate_task() (5.15.0 sndrzt/linux-5.15 75c6ad16ec64, 6.5
 * sndrzt/linux-6.5 4f5cdb332210, 6.18.2 gfunkmonk/linux-6.18.2 062668f4d006). Here a parent
 * on cpu0 forks a child that may run anywhere; fork balancing chooses the idle cpu1, whose
 * lock is held 50 us more by cpu1 itself at the fork (as by its tick); the lock's hold is
 * 20 us, every other cost 0. The child is enqueued once cpu0 has waited the 50 us and held
 * the lock its 20 us. Lane rqlocks; before, the child was enqueued at the fork (checked:
 * this test failed so).
 */
TEST(wake_up_new_task, the_child_is_enqueued_once_the_forker_holds_its_rqs_lock)
{
    for (const char* kernel : {"5.15", "6.5", "6.18"}) {
        cost_params c = sched_fixture::no_costs();
        c.rq_lock_hold = usecs(20);
        sched_fixture t(small_machine(2), kernel, 1, "", c);
        task_struct* kid = nullptr;
        sim_time forked_at = -1;
        int steps = 0;
        t.spawn("parent", testlib::behaviour([&](syscalls& k, task_struct& p) {
                    if (steps++ == 0)
                        return task_action::cpu(usecs(100)); // nothing owed at the fork
                    if (kid)
                        return task_action::sleep();
                    contended_lock& l = t.k->cpu_rq(1).lock;
                    l.last_cpu = 1;
                    l.busy_until = k.now() + usecs(50);
                    forked_at = k.now();
                    task_opts o;
                    o.comm = "child";
                    o.allowed = cpumask(2);
                    o.allowed.set_all();
                    kid = &k.fork(p, testlib::spin(), o);
                    return task_action::sleep();
                }),
                0, 0, 0);
        while (!kid && t.sim.now() < msecs(1))
            t.run_for(usecs(1));
        ASSERT_NE(kid, nullptr) << kernel;
        ASSERT_EQ(kid->cpu, 1) << kernel;
        t.run_for(forked_at + usecs(70) - 1 - t.sim.now());
        EXPECT_FALSE(kid->on_rq) << kernel << ": cpu0 still waits or holds cpu1's lock";
        EXPECT_TRUE(t.k->idle_cpu(1)) << kernel;
        t.run_for(1);
        EXPECT_TRUE(kid->on_rq) << kernel << ": after the 50 us wait and the 20 us hold";
    }
}

/*
 * As above for an idle target: on 5.15 (ttwu_queue_cond() of v5.15.0) cpu0 activates p on
 * idle cpu3 of its LLC itself. Until cpu0 has held cpu3's lock its 20 us, cpu3 stays idle
 * (nothing for its pick: p is on no runqueue) and other CPUs' idle_cpu() finds it idle, as
 * the kernel's does (rq->curr the idle task, nr_running 0, no wake list); p is switched in
 * only after its sched_wakeup.
 */
TEST(try_to_wake_up, nothing_runs_a_directly_activated_wakee_before_its_enqueue)
{
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    sched_fixture t(small_machine(4), "5.15", 1, "", c);
    wakeups_and_switches rec;
    t.k->add_sink(&rec);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 3);
    t.run_for(msecs(1)); // p ran on cpu3 and sleeps; cpu3 idles
    ASSERT_TRUE(t.k->idle_cpu(3));
    const auto runs = p.sched_info_.pcount;
    rec.wakeup.clear();
    rec.switches.clear();
    const sim_time woken = t.sim.now();
    t.k->set_this_cpu(0);
    ASSERT_TRUE(t.k->wake_up_process(p));
    ASSERT_EQ(p.cpu, 3);
    EXPECT_FALSE(t.k->cpu_rq(3).ttwu_pending) << "5.15: activated by the waker";
    t.run_for(usecs(20) - 1);
    EXPECT_EQ(p.sched_info_.pcount, runs);
    EXPECT_TRUE(t.k->cpu_rq(3).curr->is_idle_task());
    t.k->set_this_cpu(1);
    EXPECT_TRUE(t.k->idle_cpu(3)) << "idle to other wakers until the enqueue";
    t.run_for(usecs(100));
    EXPECT_EQ(p.sched_info_.pcount, runs + 1);
    ASSERT_EQ(rec.wakeup.size(), 1u);
    EXPECT_EQ(rec.wakeup[0].ts, woken + usecs(20));
    const auto in = std::find_if(rec.switches.begin(), rec.switches.end(),
                                 [&](const trace_sched_switch& s) { return s.next_pid == p.pid; });
    ASSERT_NE(in, rec.switches.end());
    EXPECT_EQ(in->cpu, 3);
    EXPECT_GE(in->ts, rec.wakeup[0].ts) << "switched in after its sched_wakeup";
}

/*
 * kernel: __wake_up_common()'s walk (a wake_up_all()) calls try_to_wake_up() for each waiter
 * in turn; each is over, its wakee enqueued, before the next one's select_task_rq() reads the
 * runqueues. model: cpu0 wakes p and q, both pinned to cpu0, in one step (the lock's hold 20
 * us): q's try_to_wake_up() activates p first (ttwu_direct_flush()), so p is queued when q's
 * wakeup starts, and q waits for the waker's work as p did.
 */
TEST(try_to_wake_up, a_second_wakeup_by_the_same_cpu_finds_the_first_wakee_queued)
{
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    sched_fixture t(small_machine(1), "6.6", 1, "", c);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    task_struct& q = t.spawn("q", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    auto seen = std::make_shared<std::vector<int>>(); // p.on_rq after each wakeup
    auto phase = std::make_shared<int>(0);
    t.spawn("waker", testlib::behaviour([&p, &q, phase, seen](syscalls& k, task_struct&) {
                if (*phase == 0) {
                    *phase = 1;
                    return task_action::cpu(usecs(100));
                }
                if (*phase == 1) {
                    *phase = 2;
                    k.wake_up_process(p);
                    seen->push_back(p.on_rq);
                    k.wake_up_process(q);
                    seen->push_back(p.on_rq);
                    seen->push_back(q.on_rq);
                }
                return task_action::cpu(usecs(100));
            }),
            0, 0, 0);
    t.run_for(msecs(1));
    ASSERT_EQ(seen->size(), 3u);
    EXPECT_EQ((*seen)[0], 0) << "p waits for the waker's lock";
    EXPECT_EQ((*seen)[1], 1) << "q's wakeup finds p queued";
    EXPECT_EQ((*seen)[2], 0) << "q waits for the waker's work in turn";
}

/*
 * model: a waker that blocks in the step that woke a wakee of its own CPU: its __schedule()
 * (at the block, in the model) comes after its try_to_wake_up() in the kernel, so the
 * pending activation is done first (ttwu_direct_flush()) and the pick finds the wakee:
 * cpu0 switches from the waker straight to p, and p's sched_wakeup comes no later than
 * that switch. Without the flush cpu0 would idle until the lock's hold is paid.
 */
TEST(try_to_wake_up, a_waker_that_blocks_first_activates_its_wakee_before_its_pick)
{
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    // 6.6: no DELAY_DEQUEUE, whose requeue of a delayed p (ttwu_runnable()) is not deferred
    sched_fixture t(small_machine(1), "6.6", 1, "", c);
    wakeups_and_switches rec;
    t.k->add_sink(&rec);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    auto phase = std::make_shared<int>(0);
    task_struct& w = t.spawn("waker", testlib::behaviour([&p, phase](syscalls& k, task_struct&) {
                                 if (*phase == 0) {
                                     *phase = 1;
                                     return task_action::cpu(usecs(100));
                                 }
                                 *phase = 2;
                                 k.wake_up_process(p);
                                 return task_action::sleep();
                             }),
                             0, 0, 0);
    t.run_for(msecs(1));
    ASSERT_EQ(*phase, 2);
    ASSERT_EQ(rec.wakeup.size(), 1u);
    const auto out = std::find_if(rec.switches.begin(), rec.switches.end(),
                                  [&](const trace_sched_switch& s) { return s.prev_pid == w.pid; });
    ASSERT_NE(out, rec.switches.end());
    EXPECT_EQ(out->next_pid, p.pid) << "the waker's CPU picks its wakee";
    EXPECT_LE(rec.wakeup[0].ts, out->ts);
}

/*
 * Two wakees collide on an idle CPU, as in SIS_SHORT v6's diagram (2/2's changelog,
 * 373e6886e274f198608fa1b5f1c254e32b43845d.1677069490.git.yu.c.chen@intel.com: p0 and p2
 * both select CPU1 and both go on its wake list). kernel (tip-2023-02 is v6.2-rc6; these CFS
 * rules as read at 6.1 and 6.5, lane sisnow): sched_ttwu_pending() enqueues both;
 * check_preempt_curr() against the idle task only sets need_resched (no check_preempt_wakeup(),
 * so no buddy); pick_next_entity() takes the leftmost. The other runs when the first blocks,
 * or when check_preempt_tick() finds the first over its ideal slice (two equal weights: half
 * the latency); nothing else preempts it, since nothing new wakes. So the collided wakee
 * waits a time slice only behind a first wakee that runs on; behind a 10 us burst, 10 us.
 * Here p and q, pinned to cpu3, are woken by cpu0 and cpu1 (no costs).
 */
TEST(sched_ttwu_pending, a_collided_wakee_waits_for_the_first_ones_burst_not_a_slice)
{
    for (const sim_dur burst : {usecs(10), msecs(50)}) {
        sched_fixture t(small_machine(4), "tip-2023-02");
        wakeups_and_switches rec;
        t.k->add_sink(&rec);
        task_struct& p = t.spawn("p", testlib::run_sleep(burst, secs(10)), 3, 0, 3);
        task_struct& q = t.spawn("q", testlib::run_sleep(burst, secs(10)), 3, 0, 3);
        t.run_for(msecs(300)); // p and q ran on cpu3 and sleep; cpu3 idles
        ASSERT_TRUE(t.k->idle_cpu(3)) << burst;
        rec.switches.clear();
        t.k->set_this_cpu(0);
        ASSERT_TRUE(t.k->wake_up_process(p));
        t.k->set_this_cpu(1);
        ASSERT_TRUE(t.k->wake_up_process(q));
        ASSERT_TRUE(t.k->cpu_rq(3).ttwu_pending) << burst;
        ASSERT_FALSE(p.on_rq || q.on_rq) << burst << ": both on cpu3's wake list";
        t.run_for(msecs(200));
        std::vector<sim_time> in; // the switches to p or q, in order
        for (const trace_sched_switch& s : rec.switches)
            if (s.cpu == 3 && (s.next_pid == p.pid || s.next_pid == q.pid))
                in.push_back(s.ts);
        ASSERT_GE(in.size(), 2u) << burst;
        const sim_dur wait = in[1] - in[0];
        if (burst == usecs(10)) {
            EXPECT_EQ(wait, burst) << "the second runs when the first blocks";
        } else {
            const u64 ideal = t.k->tunables().latency / 2;
            EXPECT_GT(static_cast<u64>(wait), ideal) << "the first runs its ideal slice";
            EXPECT_LT(static_cast<u64>(wait), t.k->tunables().latency) << "and a tick at most";
        }
    }
}

} // namespace
} // namespace schedlab
