// SPDX-License-Identifier: GPL-2.0-only
/*
 * The autogroup's entity on the root cfs_rq (fair_pelt.cc): calc_group_shares(),
 * task_h_load() through update_cfs_rq_h_load(), and the readers of the root
 * (cpu_load(), wake_affine_weight()), each against figures worked by hand from
 * kernel/sched/fair.c (6.6, the same in 6.18). Helpers are prefixed agrp_ (the
 * test program is built as one unity file in CI).
 */
#include "sched/fair_balance.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <limits>

namespace schedlab {
namespace {

using testlib::sched_fixture;

/// The group's cfs_rq with the figures calc_group_shares() reads.
cfs_rq agrp_group_cfs_rq(task_group& tg, long tg_load_avg, long contrib, u32 weight,
                         unsigned long load_avg)
{
    tg.load_avg = tg_load_avg;
    cfs_rq g;
    g.tg = &tg;
    g.tg_load_avg_contrib = contrib;
    g.load.weight = weight;
    g.avg.load_avg = load_avg;
    return g;
}

/*
 * calc_group_shares(): load = max(grq->load.weight, grq->avg.load_avg);
 * tg_weight = tg->load_avg - grq->tg_load_avg_contrib + load;
 * shares = scale_load(1024) * load / tg_weight, clamped to [MIN_SHARES = 2, 1024 << 10].
 */
TEST(calc_group_shares, splits_the_groups_shares_by_this_cpus_load_against_tg_load_avg)
{
    task_group tg{"agrp-test"};
    // Two tasks queued here (2048), this CPU's stale contribution 1000 of 3000:
    // tg_weight = 3000 - 1000 + 2048 = 4048; 1048576 * 2048 / 4048 = 530504 (weight 518).
    EXPECT_EQ(calc_group_shares(agrp_group_cfs_rq(tg, 3000, 1000, 2048, 1500)), 530504);
    // Nothing queued, 40000 of blocked load, the group's other 1000 elsewhere:
    // load = 40000, tg_weight = 41000 - 40000 + 40000 = 41000; 41943040000 / 41000 = 1023000.
    EXPECT_EQ(calc_group_shares(agrp_group_cfs_rq(tg, 41000, 40000, 0, 40000)), 1023000);
    // The group only here: tg_weight = load, the full shares.
    EXPECT_EQ(calc_group_shares(agrp_group_cfs_rq(tg, 500, 500, 1024, 500)), 1048576);
    // The group empty everywhere: tg_weight 0, shares 0, clamped to MIN_SHARES.
    EXPECT_EQ(calc_group_shares(agrp_group_cfs_rq(tg, 0, 0, 0, 0)), 2);
}

/*
 * task_h_load() = p->se.avg.load_avg * grq->h_load / (grq->avg.load_avg + 1), with
 * update_cfs_rq_h_load(): once a jiffy, root->h_load = root->avg.load_avg and
 * grq->h_load = root->h_load * gse->avg.load_avg / (root->avg.load_avg + 1).
 * A task of load 1024 in a group of three such tasks (grq load 3072) whose entity
 * carries 512 of a root load of 512: h_load = 512 * 512 / 513 = 511, task_h_load =
 * 1024 * 511 / 3073 = 170 (the flat model's answer was the task's own 1024). Within
 * the jiffy the cached h_load holds; at the next it is recomputed: 1024 * 1024 / 1025
 * = 1023, 1024 * 1023 / 3073 = 340.
 */
TEST(task_h_load, scales_the_tasks_load_by_its_groups_h_load_once_a_jiffy)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    task_struct& p = t.spawn("agrp-h", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
    t.run_for(msecs(2)); // p ran and sleeps on cpu1
    rq& r = t.k->cpu_rq(1);
    ASSERT_NE(r.cfs.tg, nullptr) << "the 6.6 profile runs with autogroup on";
    ASSERT_EQ(p.cpu, 1);
    r.root_cfs.avg.load_avg = 512;
    r.tg_se.avg.load_avg = 512;
    r.cfs.avg.load_avg = 3072;
    p.se.avg.load_avg = 1024;
    r.cfs.last_h_load_update = r.root_cfs.last_h_load_update = ~0ULL;
    EXPECT_EQ(task_h_load(*t.k, p), 170u);
    r.root_cfs.avg.load_avg = 1024;
    r.tg_se.avg.load_avg = 1024;
    EXPECT_EQ(task_h_load(*t.k, p), 170u) << "h_load is computed once a jiffy";
    r.cfs.last_h_load_update = r.root_cfs.last_h_load_update = jiffies(*t.k) - 1;
    EXPECT_EQ(task_h_load(*t.k, p), 340u) << "the next jiffy's h_load";
}

// cpu_load() is rq->cfs's: the root with autogroup on, the tasks' cfs_rq without.
TEST(cpu_load, reads_the_root_cfs_rq_with_autogroup_and_the_tasks_cfs_rq_without)
{
    for (const bool autogroup : {true, false}) {
        kernel_config kc = make_kernel_config("6.18");
        kc.params.autogroup = autogroup;
        sched_fixture t(testlib::small_machine(2), kc);
        rq& r = t.k->cpu_rq(1);
        r.cfs.avg.load_avg = 53548;
        r.root_cfs.avg.load_avg = 300;
        EXPECT_EQ(cpu_load(r), autogroup ? 300u : 53548u) << "autogroup " << autogroup;
    }
}

/*
 * update_blocked_averages() with autogroup off (kernel/sched/fair.c 6.5
 * __update_blocked_fair(): the leaf list's rq->cfs through update_cfs_rq_load_avg()):
 * the load of a task that left while asleep is folded in, without a period to decay.
 * Worked from update_cfs_rq_load_avg(): load_avg 1500 - 600 = 900; load_sum
 * 1500 * 47742 - 600 * divider, divider = PELT_MIN_DIVIDER + period_contrib = 46718 + 24
 * = 46742: 71613000 - 28045200 = 43567800, above 900 * 46718 = 42046200; util_avg
 * 400 - 100 = 300, util_sum 400 * 46742 - 100 * 46742 = 14022600; runnable_avg 500 - 200
 * = 300, runnable_sum 23371000 - 9348400 = 14022600; removed emptied. (Before
 * lane peltaudit the model decayed without the removed load: it stayed 1500.)
 */
TEST(update_blocked_averages, folds_in_removed_load_with_autogroup_off)
{
    kernel_config kc = make_kernel_config("6.5");
    kc.params.autogroup = false;
    sched_fixture t(testlib::small_machine(2), kc);
    rq& r = t.k->cpu_rq(1);
    ASSERT_EQ(r.cfs.tg, nullptr);
    t.k->update_rq_clock(r);
    sched_avg& a = r.cfs.avg;
    a.last_update_time = r.clock_task; // no period to decay
    a.period_contrib = 24;
    a.load_avg = 1500;
    a.load_sum = 1500ULL * 47742;
    a.util_avg = 400;
    a.util_sum = 400 * 46742;
    a.runnable_avg = 500;
    a.runnable_sum = 500ULL * 46742;
    r.cfs.removed.nr = 1;
    r.cfs.removed.load_avg = 600;
    r.cfs.removed.util_avg = 100;
    r.cfs.removed.runnable_avg = 200;
    update_blocked_averages(*t.k, 1);
    EXPECT_EQ(a.load_avg, 900u);
    EXPECT_EQ(a.load_sum, 43567800u);
    EXPECT_EQ(a.util_avg, 300u);
    EXPECT_EQ(a.util_sum, 14022600u);
    EXPECT_EQ(a.runnable_avg, 300u);
    EXPECT_EQ(a.runnable_sum, 14022600u);
    EXPECT_EQ(r.cfs.removed.nr, 0);
    EXPECT_EQ(r.cfs.removed.load_avg, 0u);
}

/*
 * update_blocked_averages() (kernel/sched/fair.c 6.5, the same in 6.1-rc7 and 5.15.0):
 * rq_lock, update_blocked_load_tick(), update_rq_clock(), __update_blocked_others(),
 * __update_blocked_fair(); no update_curr(). A running task's 100 us since its
 * exec_start stay uncharged (sum_exec_runtime and exec_start unchanged) until its next
 * update_curr(). Before lane peltaudit the model charged them (update_curr() of each
 * cfs_rq with a curr), which moved min_vruntime and, on EEVDF, the deadline check.
 */
TEST(update_blocked_averages, leaves_curr_s_runtime_to_its_next_update_curr)
{
    for (const bool autogroup : {true, false}) {
        kernel_config kc = make_kernel_config("6.5");
        kc.params.autogroup = autogroup;
        sched_fixture t(testlib::small_machine(2), kc);
        task_struct& p = t.spawn("busy", testlib::spin(), 1, 0, 1);
        t.run_for(msecs(3));
        rq& r = t.k->cpu_rq(1);
        ASSERT_EQ(r.curr, &p) << "autogroup " << autogroup;
        p.se.exec_start -= usecs(100);
        const u64 exec_start = p.se.exec_start;
        const u64 runtime = p.se.sum_exec_runtime;
        update_blocked_averages(*t.k, 1);
        EXPECT_EQ(p.se.sum_exec_runtime, runtime) << "autogroup " << autogroup;
        EXPECT_EQ(p.se.exec_start, exec_start) << "autogroup " << autogroup;
    }
}

/*
 * update_cfs_group() of a group entity whose shares did not move: 6.5 (fair.c
 * update_cfs_group(): reweight_entity() unconditionally; the same in 6.1-rc7 and 5.15.0)
 * commits the root curr's runtime (reweight_entity(): on_rq and curr -> update_curr());
 * 6.6.87 returns (se->load.weight == shares, eab03c23c2a1). One spinning task, its group
 * only on cpu1: shares = tg->shares = 1024 << 10 every time. The group entity's
 * exec_start moved back 100 us: 6.5 charges at least those 100 us and restarts
 * exec_start at the rq's clock_task; 6.6 leaves both.
 */
TEST(update_cfs_group, reweights_unchanged_shares_before_6_7)
{
    for (const char* spec : {"6.5", "tip-2023-08", "6.6"}) {
        SCOPED_TRACE(spec);
        sched_fixture t(testlib::small_machine(2), spec);
        task_struct& p = t.spawn("busy", testlib::spin(), 1, 0, 1);
        t.run_for(msecs(3));
        rq& r = t.k->cpu_rq(1);
        ASSERT_EQ(r.curr, &p);
        sched_entity& gse = *parent_entity(r.cfs);
        ASSERT_EQ(r.root_cfs.curr, &gse);
        ASSERT_EQ(calc_group_shares(r.cfs), 1024L << 10);
        ASSERT_EQ(static_cast<long>(r.cfs.my_se->shares), 1024L << 10);
        gse.exec_start -= usecs(100);
        const u64 exec_start = gse.exec_start;
        const u64 runtime = gse.sum_exec_runtime;
        update_cfs_group_se(*t.k, gse, 1);
        if (std::string(spec) == "6.6") {
            EXPECT_EQ(gse.sum_exec_runtime, runtime);
            EXPECT_EQ(gse.exec_start, exec_start);
        } else {
            EXPECT_GE(gse.sum_exec_runtime, runtime + usecs(100));
            EXPECT_EQ(gse.exec_start, r.clock_task);
        }
    }
}

/*
 * A forked task's attach propagated to the group entity (update_tg_cfs_load()):
 * a new task starts at load_avg 1024, so attach_entity_load_avg() gives it the
 * full load_sum (the divider) and add_tg_cfs_propagate() passes that on; the
 * group entity adds it to its own and clips at the root's divider: a full
 * load_sum, load_avg = its weight. With the group only on cpu1, calc_group_shares()
 * gives the whole 1024. Two such forks: the group's cfs_rq holds 2048, the root
 * (cpu_load()) 1024; the flat model's cpu_load() was the 2048.
 */
TEST(update_tg_cfs_load, a_forked_tasks_full_load_sum_fills_the_group_entity)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    t.spawn("agrp-f0", testlib::spin(), 1, 0, 1);
    t.spawn("agrp-f1", testlib::spin(), 1, 0, 1);
    t.run_for(1); // the forks' enqueues, at the start
    const rq& r = t.k->cpu_rq(1);
    ASSERT_EQ(r.cfs.h_nr_running, 2u);
    EXPECT_EQ(r.cfs.avg.load_avg, 2048u);
    EXPECT_EQ(r.tg_se.weight(), 1024u);
    EXPECT_EQ(r.tg_se.avg.load_sum, get_pelt_divider(r.root_cfs.avg));
    EXPECT_EQ(r.tg_se.avg.load_avg, 1024u);
    EXPECT_EQ(cpu_load(r), 1024u);
}

/*
 * wake_affine_weight() at a wake-all (docs/replay.md, "Where replayed wakeups
 * land"): the waker's CPU 0 against the wakee's previous CPU 1, where its 80
 * siblings sleep (their loads summed in the group's cfs_rq: 53548) but the
 * group's entity there carries 300. The wakee's load 669 counts as task_h_load
 * = 669 * h_load / 53549 with h_load = 300 * 300 / 301 = 299: 3. MC's
 * imbalance_pct 117 gives WA_BIAS 108; both capacities 1024.
 * - CPU 0's root at 61: (61 + 3) * 100 = 6400 < (300 - 3) * 108 = 32076: affine.
 * - CPU 0's root at 320 (wakees stacked there): 32300 >= 32076: prev.
 * With the per-task sums (the flat model) prev would weigh 53548 and the second
 * wakeup would be affine too.
 */
TEST(wake_affine_weight, compares_the_group_entities_on_the_roots_at_a_wake_all)
{
    sched_fixture t(testlib::small_machine(2), "6.18");
    t.spawn("agrp-waker", testlib::spin(), 0, 0, 0);
    task_struct& p = t.spawn("agrp-wakee", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
    t.run_for(msecs(2));
    ASSERT_EQ(p.cpu, 1);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    ASSERT_NE(sd, nullptr);
    ASSERT_EQ(sd->imbalance_pct, 117u);
    t.k->set_this_cpu(0);
    rq& r0 = t.k->cpu_rq(0);
    rq& r1 = t.k->cpu_rq(1);
    r1.cfs.avg.load_avg = 53548;
    r1.root_cfs.avg.load_avg = 300;
    r1.tg_se.avg.load_avg = 300;
    r1.cfs.last_h_load_update = r1.root_cfs.last_h_load_update = ~0ULL;
    p.se.avg.load_avg = 669;
    ASSERT_EQ(task_h_load(*t.k, p), 3u);
    r0.root_cfs.avg.load_avg = 61;
    EXPECT_EQ(wake_affine_weight(*t.k, *sd, p, 0, 1, /*sync=*/0), 0);
    r0.root_cfs.avg.load_avg = 320;
    EXPECT_EQ(wake_affine_weight(*t.k, *sd, p, 0, 1, /*sync=*/0),
              std::numeric_limits<int>::max()); // nr_cpumask_bits: "no CPU"
}

/*
 * wake_affine_weight() for a sync wakeup of a tbench pair at 256 clients on
 * bergamo-2s (one autogroup over 512 CPUs; issue 21, `git show 9376ffa:docs/validation.md`,
 * "tip at 256 clients with the group entity: wake_affine_weight() on roots of a few
 * units (lane tg256, 2026-12-04)"): calc_group_shares() leaves each CPU's group
 * entity a few units (MIN_SHARES' 2 at the floor), so update_cfs_rq_h_load() gives
 * h_load = 2 * 2 / (2 + 1) = 1, and task_h_load() = load_avg * 1 / (grq load_avg + 1)
 * is 0 for any task whose CPU's group holds more than its own load: the waker's
 * 284 * 1 / 1027 = 0 and the wakee's 773 * 1 / 1442 = 0. Both drop out; WA_BIAS
 * compares the two roots alone (MC: 100 against 108, sync's +1; capacities 1024):
 * - roots 2 and 2: 2 * 100 * 1024 = 204800 < 2 * 108 * 1024 + 1 = 221185: affine;
 * - the waker's root at 3 (h_load 3 * 3 / 4 = 2; the waker's 284 * 2 / 1027 = 0):
 *   307200 >= 221185: prev.
 * Per-task loads (the flat readers before 5863bae) would weigh (1026 - 284 + 773) *
 * 100 against (1441 - 773) * 108 and send the first wakeup to prev as well.
 * kernel: kernel/sched/fair.c wake_affine_weight(), task_h_load(),
 * update_cfs_rq_h_load(), v6.6 (the same in v6.5).
 */
TEST(wake_affine_weight, a_sync_pair_of_tiny_group_entities_compares_the_roots_alone)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    task_struct& waker = t.spawn("tg256-waker", testlib::spin(), 0, 0, 0);
    task_struct& p = t.spawn("tg256-wakee", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
    t.run_for(msecs(2));
    ASSERT_EQ(p.cpu, 1);
    ASSERT_EQ(waker.cpu, 0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    ASSERT_NE(sd, nullptr);
    ASSERT_EQ(sd->imbalance_pct, 117u);
    ASSERT_EQ(capacity_of(*t.k, 0), 1024u);
    ASSERT_EQ(capacity_of(*t.k, 1), 1024u);
    t.k->set_this_cpu(0);
    ASSERT_EQ(t.k->current(), &waker);
    rq& r0 = t.k->cpu_rq(0);
    rq& r1 = t.k->cpu_rq(1);
    auto tg256_set = [](rq& r, unsigned long root, unsigned long grq) {
        r.root_cfs.avg.load_avg = root;
        r.tg_se.avg.load_avg = root; // the root's only entity
        r.cfs.avg.load_avg = grq;
        r.cfs.last_h_load_update = r.root_cfs.last_h_load_update = ~0ULL; // recompute
    };
    waker.se.avg.load_avg = 284;
    p.se.avg.load_avg = 773;
    tg256_set(r0, 2, 1026);
    tg256_set(r1, 2, 1441);
    EXPECT_EQ(task_h_load(*t.k, waker), 0u);
    EXPECT_EQ(r0.cfs.h_load, 1u);
    EXPECT_EQ(task_h_load(*t.k, p), 0u);
    EXPECT_EQ(r1.cfs.h_load, 1u);
    EXPECT_EQ(wake_affine_weight(*t.k, *sd, p, 0, 1, /*sync=*/1), 0);
    tg256_set(r0, 3, 1026);
    EXPECT_EQ(task_h_load(*t.k, waker), 0u);
    EXPECT_EQ(r0.cfs.h_load, 2u);
    EXPECT_EQ(wake_affine_weight(*t.k, *sd, p, 0, 1, /*sync=*/1),
              std::numeric_limits<int>::max()); // nr_cpumask_bits: "no CPU"
}


/* ---- more than one autogroup (lane agrp2): sessions, the root's pick, find_matching_se ---- */

/// spawn() in a session of its own (setsid()): a new autogroup with autogroup on.
task_struct& agrp_spawn_session(sched_fixture& t, const std::string& comm,
                                std::unique_ptr<task_behaviour> b, int cpu = 0)
{
    task_opts o;
    o.comm = comm;
    o.cpu = cpu;
    o.setsid = true;
    return t.k->spawn(std::move(b), o);
}

/// Three always-runnable tasks on CPU 0, run for d: a in the fixture's session; b in a
/// session of its own, which forks c into it at b's first step (c stays null if b never ran).
struct agrp_a_b_c {
    task_struct* a = nullptr;
    task_struct* b = nullptr;
    task_struct* c = nullptr;
};

void agrp_run_a_b_c(sched_fixture& t, agrp_a_b_c& s, sim_dur d)
{
    s.a = &t.spawn("a", testlib::spin(msecs(1)));
    s.b = &agrp_spawn_session(t, "b", testlib::behaviour([&s](syscalls& sys, task_struct& p) {
        if (!s.c) {
            task_opts o;
            o.comm = "c";
            s.c = &sys.fork(p, testlib::spin(msecs(1)), o);
        }
        return task_action::cpu(msecs(1));
    }));
    t.run_for(d);
}

/*
 * kernel/sched/autogroup.c (6.6, the same in mainline 0410c6121529):
 * sched_autogroup_fork() gives a child its parent's autogroup; ksys_setsid()
 * -> sched_autogroup_create_attach() -> autogroup_create() makes a new one, a
 * task group under the root. With kernel.sched_autogroup_enabled=0 every task
 * stays in the root group (autogroup_task_group()).
 */
TEST(autogroup, fork_inherits_the_parents_autogroup_and_setsid_makes_a_new_one)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    task_struct* c1 = nullptr;
    task_struct* c2 = nullptr;
    task_struct* g = nullptr;
    bool forked = false;
    task_struct& parent = t.spawn("parent", testlib::behaviour([&](syscalls& sys, task_struct& p) {
        if (forked)
            return task_action::sleep();
        forked = true;
        task_opts o;
        o.comm = "c1";
        c1 = &sys.fork(p, testlib::run_then_exit(msecs(1)), o);
        o.comm = "c2";
        o.setsid = true;
        c2 = &sys.fork(p, testlib::behaviour([&](syscalls& sys2, task_struct& self) {
            if (g)
                return task_action::sleep();
            task_opts go;
            go.comm = "g";
            g = &sys2.fork(self, testlib::run_then_exit(msecs(1)), go);
            return task_action::cpu(msecs(1));
        }), o);
        return task_action::cpu(msecs(1));
    }));
    t.run_for(msecs(20));
    ASSERT_TRUE(c1 && c2 && g);
    EXPECT_EQ(parent.sched_task_group, &t.k->autogroup()) << "spawn(): the benchmark's session";
    EXPECT_EQ(c1->sched_task_group, parent.sched_task_group) << "fork inherits";
    ASSERT_NE(c2->sched_task_group, nullptr);
    EXPECT_NE(c2->sched_task_group, parent.sched_task_group) << "setsid(): a new autogroup";
    EXPECT_EQ(c2->sched_task_group->name, "autogroup-2");
    EXPECT_EQ(g->sched_task_group, c2->sched_task_group) << "its child inherits the new one";
    ASSERT_EQ(t.k->task_groups().size(), 2u);
    EXPECT_EQ(t.k->task_groups()[1], c2->sched_task_group);

    kernel_config kc = make_kernel_config("6.6");
    kc.params.autogroup = false;
    sched_fixture off(testlib::small_machine(2), kc);
    task_struct& s = agrp_spawn_session(off, "s", testlib::run_then_exit(msecs(1)));
    EXPECT_EQ(s.sched_task_group, nullptr) << "autogroup off: the root group";
    EXPECT_TRUE(off.k->task_groups().empty());
}

/*
 * The autogroup's purpose (Documentation/scheduler/sched-design-CFS.rst, group
 * scheduling): one CPU, task a alone in one session, b and c in another, all
 * always runnable. Each group's entity on the root gets calc_group_shares() =
 * tg->shares * load / tg_weight, and with the group on this CPU only tg_weight is
 * its own load: the full 1024 each. Equal weights on the root share the CPU
 * equally (EEVDF and CFS alike), so a runs half the time and b and c a quarter
 * each (in one group, as before: a third each).
 */
void agrp_two_groups_share_one_cpu(const char* kernel_spec)
{
    SCOPED_TRACE(kernel_spec);
    sched_fixture t(testlib::small_machine(1), kernel_spec);
    agrp_a_b_c tasks;
    agrp_run_a_b_c(t, tasks, msecs(2000));
    ASSERT_NE(tasks.c, nullptr);
    task_struct &a = *tasks.a, &b = *tasks.b, &c = *tasks.c;
    ASSERT_EQ(c.sched_task_group, b.sched_task_group);
    ASSERT_NE(a.sched_task_group, b.sched_task_group);
    const double ta = static_cast<double>(a.se.sum_exec_runtime);
    const double tb = static_cast<double>(b.se.sum_exec_runtime);
    const double tc = static_cast<double>(c.se.sum_exec_runtime);
    const double total = ta + tb + tc;
    EXPECT_GT(total, 1.99e9);
    EXPECT_NEAR(ta / total, 0.50, 0.01);
    EXPECT_NEAR(tb / total, 0.25, 0.01);
    EXPECT_NEAR(tc / total, 0.25, 0.01);
    const rq& r = t.k->cpu_rq(0);
    EXPECT_EQ(r.root_cfs.nr_running, 2u) << "two group entities on the root";
    EXPECT_EQ(r.root_cfs.h_nr_running, 3u);
    EXPECT_EQ(r.tg_se.se.load.weight, 1024u) << "the full shares: the group is on this CPU only";
    EXPECT_EQ(b.sched_task_group->se_[0]->se.load.weight, 1024u);
}

TEST(autogroup, two_groups_on_one_cpu_get_half_of_it_each_eevdf)
{
    agrp_two_groups_share_one_cpu("6.6");
}

TEST(autogroup, two_groups_on_one_cpu_get_half_of_it_each_cfs)
{
    agrp_two_groups_share_one_cpu("6.5");
}

/// One CPU: a (the benchmark's session) spins, b (a session of its own) ran once and
/// sleeps; b is woken, then the wakeup check runs again on values set by the test.
struct agrp_wakeup_case {
    sched_fixture t;
    task_struct* a;
    task_struct* b;
    sched_entity* ga; ///< a's group entity on the root, the root's curr
    sched_entity* gb; ///< b's, queued on the root
    explicit agrp_wakeup_case(const char* spec) : t(testlib::small_machine(1), spec)
    {
        a = &t.spawn("a", testlib::spin(msecs(1)));
        bool ran = false;
        b = &agrp_spawn_session(t, "b", testlib::behaviour([ran](syscalls&, task_struct&) mutable {
            if (ran)
                return task_action::sleep();
            ran = true;
            return task_action::cpu(usecs(100));
        }));
        t.run_for(msecs(10));
        rq& r = t.k->cpu_rq(0);
        EXPECT_EQ(r.curr, a);
        EXPECT_FALSE(task_on_rq_queued(*b));
        t.k->wake_up_process(*b);
        r.need_resched = false; // the test's own check follows
        ga = &r.tg_se.se;
        gb = &b->sched_task_group->se_[0]->se;
        EXPECT_EQ(r.root_cfs.curr, ga);
        EXPECT_TRUE(gb->on_rq);
        EXPECT_EQ(gb->load.weight, 1024u);
        EXPECT_EQ(ga->load.weight, 1024u);
    }
    rq& r() { return t.k->cpu_rq(0); }
    /// Moves b's group entity in the root's tree (its key and EEVDF's sums follow).
    void set_gb(u64 vruntime, u64 deadline)
    {
        __dequeue_entity(*t.k, r().root_cfs, *gb);
        gb->vruntime = vruntime;
        gb->deadline = deadline;
        __enqueue_entity(*t.k, r().root_cfs, *gb);
    }
};

/*
 * 6.5 check_preempt_wakeup(): find_matching_se() takes curr's and the wakee's
 * entities up to the cfs_rq they share, the root, and wakeup_preempt_entity()
 * compares the group entities: preempt when curr's group entity's vruntime is more
 * than wakeup_gran() ahead, gran = sysctl_sched_wakeup_granularity (1 ms on one
 * CPU: 1 + ilog2(1) = 1) in the wakee's group entity's virtual time (weight 1024:
 * 1 ms). The tasks' own vruntimes (b 100 ms behind a) do not count.
 */
TEST(autogroup, a_wakeup_across_groups_preempts_by_the_group_entities_cfs)
{
    agrp_wakeup_case w("6.5");
    ASSERT_EQ(w.t.k->tunables().wakeup_granularity, msecs(1));
    w.b->se.vruntime = w.a->se.vruntime - msecs(100);
    w.ga->vruntime = w.gb->vruntime + usecs(500); // 0.5 ms ahead: within the granularity
    check_preempt_wakeup_cfs(*w.t.k, w.r(), *w.b, 0);
    EXPECT_FALSE(w.r().need_resched);
    w.ga->vruntime = w.gb->vruntime + msecs(2); // 2 ms ahead: beyond it
    check_preempt_wakeup_cfs(*w.t.k, w.r(), *w.b, 0);
    EXPECT_TRUE(w.r().need_resched);
    EXPECT_EQ(w.r().root_cfs.next, w.gb) << "set_next_buddy(pse): the group entity";
    EXPECT_EQ(w.r().root_cfs.last, nullptr) << "set_last_buddy() only for a task's entity";
}

/*
 * 6.6 check_preempt_wakeup(): find_matching_se() as above, then "if
 * (pick_eevdf(cfs_rq) == pse) goto preempt" on the root. Both group entities
 * weigh 1024 and sit at one vruntime v, so V = v and both are eligible; the
 * earlier virtual deadline wins. (curr's stashed deadline is cleared so that
 * RUN_TO_PARITY does not keep it.) The tasks' own deadlines point the other way.
 */
TEST(autogroup, a_wakeup_across_groups_preempts_by_the_group_entities_eevdf)
{
    agrp_wakeup_case w("6.6");
    const u64 v = w.ga->vruntime;
    w.ga->deadline = v + msecs(3);
    w.ga->vlag = 0;
    w.a->se.deadline = w.b->se.deadline - msecs(100); // a's own request ends far earlier
    w.set_gb(v, v + msecs(1));
    ASSERT_TRUE(entity_eligible(w.r().root_cfs, *w.gb));
    ASSERT_TRUE(entity_eligible(w.r().root_cfs, *w.ga));
    check_preempt_wakeup_eevdf(*w.t.k, w.r(), *w.b, 0);
    EXPECT_TRUE(w.r().need_resched) << "b's group entity has the earlier deadline";
    w.r().need_resched = false;
    w.a->se.deadline = w.b->se.deadline + msecs(100); // now b's own request ends earlier
    w.set_gb(v, v + msecs(5));
    check_preempt_wakeup_eevdf(*w.t.k, w.r(), *w.b, 0);
    EXPECT_FALSE(w.r().need_resched) << "a's group entity has the earlier deadline";
}

/*
 * dequeue_task_fair() / dequeue_entities() (6.6.87, 6.18.2; 6.5, 6.1-rc7 and 5.15.0 the
 * same: sndrzt/linux-6.5 f5744aac0f31, krr-io/linux-6.1.0 2a410d07ec5e, sndrzt/linux-5.15
 * 75c6ad16ec64): when a task goes to sleep and its group's cfs_rq keeps weight,
 * set_next_buddy(parent_entity(se)) makes the group entity the root's next buddy. One CPU,
 * both tasks in the fixture's session: s runs 100 us and sleeps while sp spins, so the
 * group stays queued and its entity becomes root_cfs.next (NO_DELAY_DEQUEUE: the sleep
 * dequeues at once whatever s's lag). Before the lead's change of 2026-12-05 the CFS
 * profiles set no buddy here.
 */
TEST(autogroup, a_sleeping_task_makes_its_staying_group_entity_the_next_buddy)
{
    for (const char* spec : {"6.6", "6.18+NO_DELAY_DEQUEUE", "6.5", "tip-2023-08", "6.1", "5.15"}) {
        sched_fixture t(testlib::small_machine(1), spec);
        task_struct& sp = t.spawn("sp", testlib::spin(msecs(1)));
        bool ran = false;
        task_struct& s = t.spawn("s", testlib::behaviour([&ran](syscalls&, task_struct&) {
            if (ran)
                return task_action::sleep();
            ran = true;
            return task_action::cpu(usecs(100));
        }));
        t.run_for(msecs(20));
        rq& r = t.k->cpu_rq(0);
        ASSERT_FALSE(task_on_rq_queued(s)) << spec;
        ASSERT_TRUE(task_on_rq_queued(sp)) << spec;
        EXPECT_EQ(r.root_cfs.next, &r.tg_se.se) << spec;
    }
}

/*
 * pick_next_entity() of 6.18.2: `if (sched_feat(PICK_BUDDY) && cfs_rq->next &&
 * entity_eligible(cfs_rq, cfs_rq->next)) return cfs_rq->next;`; 6.6 asks NEXT_BUDDY (off).
 * By hand, on the root: both group entities at one vruntime v (so both eligible), a's
 * (curr, unprotected) with the earlier deadline v + 1 ms, b's v + 5 ms and the next buddy:
 * pick_eevdf() takes a's, 6.18's buddy rule b's; 6.18+NO_PICK_BUDDY a's again.
 */
/// Which root entity the pick takes: 'a' or 'b'.
char root_pick_with_b_as_next(const char* spec)
{
    agrp_wakeup_case w(spec);
    const u64 v = w.ga->vruntime;
    w.ga->deadline = v + msecs(1);
    w.ga->vlag = 0;  // 6.6: not the stashed deadline, so no RUN_TO_PARITY
    w.ga->vprot = v; // 6.18: protect_slice() false
    w.set_gb(v, v + msecs(5));
    w.r().root_cfs.next = w.gb;
    const sched_entity* se = pick_next_entity_eevdf(*w.t.k, w.r().root_cfs);
    return se == w.ga ? 'a' : se == w.gb ? 'b' : '?';
}

/*
 * set_next_entity() begins with clear_buddies(cfs_rq, se) (6.6.87, 6.18.2): the next buddy
 * that is set up as curr stops being the next buddy, so PICK_BUDDY takes it once.
 */
TEST(autogroup, set_next_entity_clears_the_entitys_next_buddy_eevdf)
{
    agrp_wakeup_case w("6.18");
    w.r().root_cfs.next = w.gb;
    put_prev_entity(*w.t.k, w.r().root_cfs, *w.ga);
    set_next_entity(*w.t.k, w.r().root_cfs, *w.gb);
    EXPECT_EQ(w.r().root_cfs.next, nullptr);
}

TEST(autogroup, from_6_18_pick_buddy_takes_an_eligible_next_buddy)
{
    EXPECT_EQ(root_pick_with_b_as_next("6.18"), 'b');
    EXPECT_EQ(root_pick_with_b_as_next("6.18+NO_PICK_BUDDY"), 'a');
    EXPECT_EQ(root_pick_with_b_as_next("6.6"), 'a');
}

/*
 * find_matching_se() comes before se_is_idle() (6.6.87, 6.18.2): across groups the matched
 * entities are the autogroups' entities, never idle, so a SCHED_IDLE curr in another group
 * is not preempted at once: pick_eevdf() on the root decides. By hand: both group entities
 * at v (eligible), a's (curr) deadline v + 1 ms, b's v + 5 ms: a's wins, no preemption.
 */
TEST(autogroup, an_idle_curr_in_another_group_is_compared_by_the_group_entities_eevdf)
{
    agrp_wakeup_case w("6.6");
    w.a->policy = SCHED_IDLE; // only the wakeup check reads it here
    const u64 v = w.ga->vruntime;
    w.ga->deadline = v + msecs(1);
    w.ga->vlag = 0;
    w.set_gb(v, v + msecs(5));
    check_preempt_wakeup_eevdf(*w.t.k, w.r(), *w.b, 0);
    EXPECT_FALSE(w.r().need_resched);
    w.a->policy = SCHED_NORMAL;
}

/*
 * task_h_load() of a task in each of two groups on one CPU: root load 1024, of
 * which a's group entity carries 768 and b's 256; a's group's cfs_rq 2047 (a:
 * 1024), b's 511 (b: 512). h_load(a's group) = 1024 * 768 / 1025 = 767,
 * task_h_load(a) = 1024 * 767 / 2048 = 383; h_load(b's group) = 1024 * 256 / 1025
 * = 255, task_h_load(b) = 512 * 255 / 512 = 255.
 */
TEST(autogroup, task_h_load_scales_each_task_by_its_own_groups_h_load)
{
    sched_fixture t(testlib::small_machine(1), "6.6");
    task_struct& a = t.spawn("a", testlib::spin(msecs(1)));
    task_struct& b = agrp_spawn_session(t, "b", testlib::spin(msecs(1)));
    t.run_for(msecs(5));
    rq& r = t.k->cpu_rq(0);
    cfs_rq& gb = *b.sched_task_group->cfs_rq_[0];
    ASSERT_NE(&gb, &r.cfs);
    r.root_cfs.avg.load_avg = 1024;
    r.tg_se.avg.load_avg = 768;
    gb.my_se->avg.load_avg = 256;
    r.cfs.avg.load_avg = 2047;
    gb.avg.load_avg = 511;
    a.se.avg.load_avg = 1024;
    b.se.avg.load_avg = 512;
    r.cfs.last_h_load_update = gb.last_h_load_update = r.root_cfs.last_h_load_update = ~0ULL;
    EXPECT_EQ(task_h_load(*t.k, a), 383u);
    EXPECT_EQ(r.cfs.h_load, 767u);
    EXPECT_EQ(task_h_load(*t.k, b), 255u);
    EXPECT_EQ(gb.h_load, 255u);
}


/*
 * 6.5 sched_slice(): for_each_sched_entity(), slice = __sched_period(nr) * w / W at each
 * level. One CPU (sysctl_sched_latency 6 ms, factor 1 + ilog2(1) = 1; ALT_PERIOD: nr is
 * the rq's h_nr_running, 3, so the period stays 6 ms), a alone in its group, b and c in
 * another, all queued, both group entities at the full 1024: a's slice is 6 ms * 1024 /
 * 1024 * 1024 / 2048 = 3 ms, b's 6 ms * 1024 / 2048 * 1024 / 2048 = 1.5 ms (one flat
 * group: 6 ms * 1024 / 3072 = 2 ms each).
 */
TEST(autogroup, sched_slice_walks_the_task_level_then_the_group_entity_on_the_root_cfs)
{
    sched_fixture t(testlib::small_machine(1), "6.5");
    agrp_a_b_c tasks;
    agrp_run_a_b_c(t, tasks, msecs(50));
    ASSERT_NE(tasks.c, nullptr);
    task_struct &a = *tasks.a, &b = *tasks.b, &c = *tasks.c;
    rq& r = t.k->cpu_rq(0);
    ASSERT_EQ(t.k->tunables().latency, msecs(6));
    ASSERT_TRUE(a.se.on_rq && b.se.on_rq && c.se.on_rq);
    ASSERT_EQ(task_cfs_rq(r, a).nr_running, 1u);
    ASSERT_EQ(task_cfs_rq(r, b).nr_running, 2u);
    ASSERT_EQ(r.root_cfs.load.weight, 2048u);
    EXPECT_EQ(sched_slice(*t.k, task_cfs_rq(r, a), a.se), msecs(3));
    EXPECT_EQ(sched_slice(*t.k, task_cfs_rq(r, b), b.se), usecs(1500));
}

/*
 * reweight_entity() of an EEVDF entity (fair_eevdf.cc), run as reweight_tg_se() runs it:
 * reweight_dequeue_eevdf() while se has its old weight, the weight set, then
 * reweight_entity_eevdf(). The scene: on one CPU's root cfs_rq, a (1024) at key 0 (key:
 * vruntime - min_vruntime) and se at key 3000 with its deadline 5000 further; se's weight
 * goes 1024 -> 512. With se in the tree, V = (0 * 1024 + 3000 * 1024) / 2048 = 1500.
 */
struct agrp_reweight_scene {
    testlib::sched_fixture t;
    cfs_rq& cfs;
    task_struct a, b;
    agrp_reweight_scene(const char* kernel, bool se_is_curr)
        : t(testlib::small_machine(1), kernel), cfs(t.k->cpu_rq(0).root_cfs)
    {
        for (task_struct* x : {&a, &b}) {
            x->se.owner = x;
            x->se.load.weight = 1024;
            x->se.slice = t.k->tunables().base_slice;
            x->se.on_rq = true;
            x->se.cfs_rq_ = &cfs;
            cfs.nr_running++;
            cfs.load.weight += 1024;
        }
        a.se.vruntime = cfs.min_vruntime;
        a.se.deadline = cfs.min_vruntime + 750000;
        __enqueue_entity(*t.k, cfs, a.se);
        b.se.vruntime = cfs.min_vruntime + 3000;
        b.se.deadline = b.se.vruntime + 5000;
        if (se_is_curr) {
            cfs.curr = &b.se;
            b.se.exec_start = cfs.rq_->clock_task; // update_curr() has nothing to add
        } else {
            __enqueue_entity(*t.k, cfs, b.se);
        }
    }
    /// se's weight 1024 -> 512 as reweight_tg_se() does it; returns se's (vruntime, deadline) keys.
    std::pair<s64, s64> reweight()
    {
        sched_entity& se = b.se;
        const u64 avruntime = reweight_dequeue_eevdf(*t.k, cfs, se);
        cfs.load.weight -= se.load.weight;
        se.load.weight = 512;
        reweight_entity_eevdf(*t.k, cfs, se, 1024, avruntime);
        cfs.load.weight += se.load.weight;
        EXPECT_EQ(cfs.nr_running, 2u);
        std::string errs;
        eevdf_policy.check_cfs_rq(*t.k, cfs, errs);
        EXPECT_EQ(errs, "") << "the avg_vruntime sums are the tree's";
        return {static_cast<s64>(se.vruntime - cfs.min_vruntime),
                static_cast<s64>(se.deadline - cfs.min_vruntime)};
    }
};

/*
 * v6.6.0 reweight_entity() (the body in d2929762cc3f): queued, the vruntime stays and the
 * deadline's distance from it scales, "deadline = div_s64(deadline * old_weight, weight)":
 * 5000 -> 10000. Not queued, "se->vlag = div_s64(se->vlag * old_weight, weight)": -300 ->
 * -600 (truncated toward zero: -301 * 1024 / 1536 = -200.67 -> -200). CFS (6.5) has no hook.
 */
TEST(autogroup, reweight_rescales_the_relative_deadline_or_the_lag_as_6_6_does)
{
    EXPECT_EQ(cfs_policy.reweight_entity, nullptr);
    EXPECT_EQ(cfs_policy.reweight_dequeue, nullptr);
    agrp_reweight_scene s("6.6", false);
    EXPECT_EQ(s.reweight(), std::make_pair(s64{3000}, s64{3000 + 10000}));
    sched_entity se;
    se.vlag = -300;
    se.load.weight = 512;
    reweight_entity_eevdf(*s.t.k, s.cfs, se, 1024, 0);
    EXPECT_EQ(se.vlag, -600);
    se.vlag = -301;
    se.load.weight = 1536;
    reweight_entity_eevdf(*s.t.k, s.cfs, se, 1024, 0);
    EXPECT_EQ(se.vlag, -200);
}

/*
 * 6.12.10 reweight_entity() / reweight_eevdf() (wishday/linux-6.12.y ff9796ed9e8b), worked by
 * hand: V = 1500 is read before se leaves the tree; entity_lag() = 1500 - 3000 = -1500 (the
 * clamp, 4 ms of virtual time, does not bite), scaled by 1024 / 512: -3000, so v = 1500 +
 * 3000 = 4500; the deadline about V: 1500 + (8000 - 1500) * 2 = 14500. V stays 1500
 * ((0 * 1024 + 4500 * 512) / 1536) and se's weighted lag stays -1536000. The same with se
 * curr (V includes curr). v6.6.0 would have left v at 3000.
 */
TEST(autogroup, from_6_12_reweight_keeps_the_lag_and_v_about_v)
{
    for (const bool curr : {false, true}) {
        agrp_reweight_scene s("6.12", curr);
        EXPECT_EQ(s.reweight(), std::make_pair(s64{4500}, s64{14500})) << "curr " << curr;
        EXPECT_EQ(static_cast<s64>(avg_vruntime(s.cfs) - s.cfs.min_vruntime), 1500);
    }
}

/*
 * tip-2023-12's form, eab03c23c2a1 with 5068d84054b7 (as in v6.8: sndrzt/linux-6.8 f116ff45a):
 * a non-curr se leaves the tree before V is read, so V = 0 (a alone); lag 0 - 3000 = -3000,
 * unclamped, scaled: -6000, v = 6000; the deadline 0 + 8000 * 2 = 16000 (Tianchen Ding's
 * "Fix miscalculation in reweight_entity() when se is not curr" is this case). With se
 * curr, V = 1500 includes it: 4500 and 14500, as 6.12.
 */
TEST(autogroup, tip_2023_12_reweight_reads_v_after_the_dequeue)
{
    agrp_reweight_scene s("tip-2023-12", false);
    EXPECT_EQ(s.reweight(), std::make_pair(s64{6000}, s64{16000}));
    agrp_reweight_scene c("tip-2023-12", true);
    EXPECT_EQ(c.reweight(), std::make_pair(s64{4500}, s64{14500}));
}

/*
 * 6.18.2 reweight_entity() (gfunkmonk/linux-6.18.2 57dc26c98e5e): update_entity_lag(): vlag =
 * 1500 - 3000 = -1500; the deadline relative, 5000; nr_queued 1; both scaled by 1024 / 512:
 * -3000 and 10000; place_entity(). se not curr: V = 0 (a alone), the lag inflated, -3000 *
 * (1024 + 512) / 1024 = -4500, v = 4500, the deadline 4500 + 10000 = 14500 (6.12's answer).
 * se curr: it stays curr, so place_entity()'s V counts it at its new weight and old
 * vruntime, (3000 * 512) / (1024 + 512) = 1000, and its load twice: -3000 * (1536 + 512) /
 * 1536 = -4000, v = 5000, the deadline 15000.
 */
TEST(autogroup, from_6_18_reweight_re_places_the_entity)
{
    agrp_reweight_scene s("6.18", false);
    EXPECT_EQ(s.reweight(), std::make_pair(s64{4500}, s64{14500}));
    EXPECT_FALSE(s.b.se.rel_deadline);
    agrp_reweight_scene c("6.18", true);
    EXPECT_EQ(c.reweight(), std::make_pair(s64{5000}, s64{15000}));
}

/*
 * 6.12.10 / 6.18.2 dequeue_entities(): when a task's group empties, the group entity's
 * dequeue_entity() is a DEQUEUE_SLEEP, so with DELAY_DEQUEUE an ineligible group entity
 * stays queued, sched_delayed (the root keeps nr_running 2 while h_nr_running drops to 1);
 * pick_next_entity() dequeues it when it wins a pick (DEQUEUE_DELAYED), and a task enqueued
 * into its group first requeues it (requeue_delayed_entity()). The scene: b, in the
 * fixture's session, runs 1 ms and sleeps; a, a spinner in a session of its own, arrives
 * 100 us after b started, its group entity placed at V (b's entity's vruntime then); b's
 * entity keeps the CPU (RUN_TO_PARITY) and is past V when b sleeps, so not eligible (the
 * test checks that too). 6.6 (no DELAY_DEQUEUE) dequeues it.
 */
struct agrp_delayed_group {
    sched_fixture t;
    task_struct* b = nullptr;
    int steps = 0;
    explicit agrp_delayed_group(const char* kernel) : t(testlib::small_machine(1), kernel)
    {
        b = &t.spawn("b", testlib::behaviour([this](syscalls&, task_struct&) {
            return steps++ == 0 ? task_action::cpu(msecs(1)) : task_action::sleep();
        }));
        t.run_for(usecs(100));
        agrp_spawn_session(t, "a", testlib::spin(secs(1)));
        for (int i = 0; i < 4000 && steps < 2; ++i)
            t.run_for(usecs(25));
    }
    sched_entity& gse() { return b->sched_task_group->se_[0]->se; }
    cfs_rq& root() { return t.k->cpu_rq(0).root_cfs; }
};

TEST(autogroup, from_6_12_an_ineligible_group_entity_whose_group_empties_is_delayed)
{
    for (const char* spec : {"6.12", "6.18"}) {
        agrp_delayed_group s(spec);
        ASSERT_EQ(s.steps, 2) << spec << ": b slept";
        EXPECT_FALSE(s.b->se.on_rq) << spec << ": b itself left (alone, it is at its V)";
        EXPECT_TRUE(s.gse().on_rq) << spec;
        EXPECT_TRUE(s.gse().sched_delayed) << spec;
        EXPECT_FALSE(entity_eligible(s.root(), s.gse())) << spec;
        EXPECT_EQ(s.root().nr_running, 2u) << spec;
        EXPECT_EQ(s.root().h_nr_running, 1u) << spec;
        EXPECT_EQ(s.root().h_nr_delayed, 0u) << spec << ": no task is delayed";
        EXPECT_EQ(s.b->sched_task_group->se_[0]->runnable_weight, 0u) << spec;
        // a runs until the delayed entity is eligible and wins a pick: then it leaves.
        s.t.run_for(msecs(20));
        EXPECT_FALSE(s.gse().on_rq) << spec;
        EXPECT_FALSE(s.gse().sched_delayed) << spec;
        EXPECT_LE(s.gse().vlag, 0) << spec << ": DELAY_ZERO";
        EXPECT_EQ(s.root().nr_running, 1u) << spec;
    }
    agrp_delayed_group old("6.6");
    ASSERT_EQ(old.steps, 2);
    EXPECT_FALSE(old.gse().on_rq) << "6.6 has no DELAY_DEQUEUE";
    EXPECT_EQ(old.root().nr_running, 1u);
}

TEST(autogroup, from_6_12_a_task_enqueued_into_a_delayed_group_requeues_its_entity)
{
    agrp_delayed_group s("6.12");
    ASSERT_TRUE(s.gse().sched_delayed);
    const u64 vruntime = s.gse().vruntime;
    EXPECT_TRUE(s.t.k->try_to_wake_up(*s.b, TASK_NORMAL, 0));
    EXPECT_FALSE(s.gse().sched_delayed);
    EXPECT_TRUE(s.gse().on_rq);
    // It had negative lag (not eligible): DELAY_ZERO leaves it where it is.
    EXPECT_EQ(s.gse().vruntime, vruntime);
    EXPECT_EQ(s.root().nr_running, 2u);
    EXPECT_EQ(s.root().h_nr_running, 2u);
}

} // namespace
} // namespace schedlab
