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
    EXPECT_EQ(r.tg_se.weight, 1024u);
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
 * bergamo-2s (one autogroup over 512 CPUs; issue 21, docs/validation.md "tip at
 * 256 clients with the group entity"): calc_group_shares() leaves each CPU's group
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

} // namespace
} // namespace schedlab
