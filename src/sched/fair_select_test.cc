// SPDX-License-Identifier: GPL-2.0-only
/*
 * Placement decisions on small hand-built situations (docs/kernel-map.md).
 */
#include "sched/fair_balance.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace schedlab {
namespace {

using testlib::sched_fixture;

/// Two sockets of 16 CPUs; the LLC is the socket unless cores_per_llc says otherwise.
machine llc16_machine(int smt = 1, int cores_per_llc = 0)
{
    symmetric_machine_spec s;
    s.name = fmt::format("test-llc16-smt{}-llc{}", smt, cores_per_llc);
    s.cores_per_socket = 16 / smt;
    s.threads_per_core = smt;
    s.cores_per_llc = cores_per_llc;
    s.sockets = 2;
    return make_symmetric_machine(s, "test");
}

/// Lets p run anywhere, makes cpu0 the executing CPU and returns its NUMA domain (or null).
sched_domain* fork_from_cpu0(sched_fixture& t, task_struct& p)
{
    p.cpus_mask.set_all();
    p.nr_cpus_allowed = p.cpus_mask.weight();
    t.k->set_this_cpu(0);
    for (auto& sd : t.k->topology().cpu(0).domains)
        if (sd->has(SD_NUMA))
            return sd.get();
    return nullptr;
}

TEST(wake_wide, a_one_to_many_waker_goes_wide_only_past_both_thresholds)
{
    sched_fixture t(llc16_machine(), "6.6");
    task_struct& waker = t.spawn("waker", testlib::spin());
    task_struct& wakee = t.spawn("wakee", testlib::spin());
    t.run_for(msecs(1));
    t.k->set_this_cpu(waker.cpu);
    ASSERT_EQ(t.k->current(), &waker);
    ASSERT_EQ(t.k->topology().cpu(waker.cpu).sd_llc_size, 16);

    waker.wakee_flips = 400;
    wakee.wakee_flips = 20; // slave 20 >= 16 and master 400 >= 20 * 16
    EXPECT_EQ(wake_wide(*t.k, wakee), 1);
    waker.wakee_flips = 300; // 300 < 320: not wide
    EXPECT_EQ(wake_wide(*t.k, wakee), 0);
    waker.wakee_flips = 4000;
    wakee.wakee_flips = 15; // slave below the LLC size: never wide
    EXPECT_EQ(wake_wide(*t.k, wakee), 0);
    // Symmetric in who is master.
    waker.wakee_flips = 20;
    wakee.wakee_flips = 400;
    EXPECT_EQ(wake_wide(*t.k, wakee), 1);
}

TEST(record_wakee, counts_a_flip_per_change_of_wakee_and_halves_each_second)
{
    sched_fixture t(llc16_machine(), "6.6");
    task_struct& waker = t.spawn("waker", testlib::spin());
    task_struct& a = t.spawn("a", testlib::spin());
    task_struct& b = t.spawn("b", testlib::spin());
    t.run_for(msecs(1));
    t.k->set_this_cpu(waker.cpu);
    waker.wakee_flip_decay_ts = jiffies(*t.k);
    for (int i = 0; i < 10; ++i)
        record_wakee(*t.k, i % 2 ? a : b);
    EXPECT_EQ(waker.wakee_flips, 10u);
    record_wakee(*t.k, a); // same wakee as last time: no flip
    EXPECT_EQ(waker.wakee_flips, 10u);
    t.run_for(msecs(1100));
    t.k->set_this_cpu(waker.cpu);
    record_wakee(*t.k, b);
    EXPECT_EQ(waker.wakee_flips, 6u) << "halved to 5 after a second, then one flip";
}

// A sync wakeup from a CPU running only the waker pulls the wakee to it.
TEST(wake_affine, a_sync_wakeup_chooses_the_wakers_cpu)
{
    sched_fixture t(llc16_machine(), "6.6");
    task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
    t.spawn("busy-prev", testlib::spin(), 0, 0, 5);
    task_struct& wakee = t.spawn("wakee", testlib::spin(), 0, 0, 5);
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    ASSERT_TRUE(sd && sd->span.test(5));
    const u64 before = sd->stats.ttwu_move_affine;
    EXPECT_EQ(wake_affine(*t.k, *sd, wakee, 0, 5, /*sync=*/1), 0);
    EXPECT_EQ(sd->stats.ttwu_move_affine, before + 1);
    (void)waker;
}

/*
 * wake_affine_weight() (6.5, read in fair.c [A] of docs/kernel-map.md): a non-sync wakeup
 * whose prev CPU is busy goes to the waker's CPU when that CPU's load with the wakee,
 * times 100, stays below prev's load without it times 100 + (imbalance_pct - 100) / 2.
 * Across the NUMA domain (imbalance_pct 117: 108) three spinners on prev against the
 * waker alone send the wakee to the waker's socket; the other way round it stays.
 * This is the move tbench's release makes (`git show 9376ffa:docs/validation.md`, "tip at
 * 256 clients at e9a30e9: the run sits on one socket"): clients stacked on one CPU by fork
 * placement go to the releasing parent's CPU.
 */
TEST(wake_affine, a_busy_prev_loses_the_wakee_to_a_less_loaded_waker_across_numa)
{
    for (const bool prev_heavier : {true, false}) {
        sched_fixture t(llc16_machine(), "tip-2023-08");
        t.spawn("waker", testlib::spin(), 0, 0, 0);
        const int spinners_on_prev = prev_heavier ? 3 : 1;
        const int spinners_on_waker = prev_heavier ? 0 : 3;
        for (int i = 0; i < spinners_on_prev; ++i)
            t.spawn(fmt::format("prev-spin{}", i), testlib::spin(), 20, 0, 20);
        for (int i = 0; i < spinners_on_waker; ++i)
            t.spawn(fmt::format("waker-spin{}", i), testlib::spin(), 0, 0, 0);
        task_struct& wakee =
            t.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 20, 0, 20);
        t.run_for(msecs(200)); // PELT loads settle; the wakee sleeps, prev stays busy
        t.k->set_this_cpu(0);
        ASSERT_EQ(wakee.cpu, 20);
        ASSERT_FALSE(available_idle_cpu(*t.k, 20));
        sched_domain* numa = fork_from_cpu0(t, wakee); // unpins it
        ASSERT_NE(numa, nullptr);
        ASSERT_EQ(numa->imbalance_pct, 117u);
        ASSERT_FALSE(numa->span.test(0) && t.k->topology().cpus_share_cache(0, 20));
        EXPECT_EQ(wake_affine(*t.k, *numa, wakee, 0, 20, /*sync=*/0), prev_heavier ? 0 : 20)
            << (prev_heavier ? "three tasks on prev against the waker alone"
                             : "four tasks on the waker's CPU against one on prev");
    }
}

/*
 * The decision log names the rule of wake_affine() that took the waker's CPU (the hackbench
 * wakeups across the sockets, docs/validation.md "hackbench at 8 groups: the sync rule",
 * lane hb8v3): a sync wakeup from a CPU running only the waker is wake_affine_idle()'s
 * (`sync && cpu_rq(this_cpu)->nr_running == 1`, v6.5 fair.c) whatever the loads; with a
 * second task there it falls to wake_affine_weight(), which here still prefers the waker's
 * socket to a prev running three spinners. Either way the wakee leaves prev's socket.
 */
TEST(select_task_rq_fair, the_log_names_the_wake_affine_rule_that_took_the_wakers_cpu)
{
    for (const bool waker_alone : {true, false}) {
        sched_fixture t(llc16_machine(), "tip-2023-08");
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        if (!waker_alone)
            t.spawn("waker-spin", testlib::spin(), 0, 0, 0);
        for (int i = 0; i < 3; ++i)
            t.spawn(fmt::format("prev-spin{}", i), testlib::spin(), 20, 0, 20);
        task_struct& wakee = t.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 20, 0, 20);
        t.run_for(msecs(200)); // PELT loads settle; the wakee sleeps, prev stays busy
        ASSERT_EQ(wakee.cpu, 20);
        sched_domain* numa = fork_from_cpu0(t, wakee); // unpins it
        ASSERT_TRUE(numa && numa->has(SD_WAKE_AFFINE));
        ASSERT_EQ(t.k->cpu_rq(0).nr_running, waker_alone ? 1u : 2u);
        waker.wakee_flips = 0;
        wakee.wakee_flips = 0;
        const int cpu = select_task_rq_fair(*t.k, wakee, 20, WF_TTWU | WF_SYNC);
        EXPECT_LT(cpu, 16) << "the waker's socket";
        EXPECT_STREQ(t.k->decisions().last_select_branch(),
                     waker_alone ? "wake_affine: waker cpu (sync)"
                                 : "wake_affine: waker cpu (weight)");
    }
}

// The decision log's wake_affine_weight entry gives the loads compared and the pick (lane
// rplwaw): each side's cpu_load() as the readers return it, the wakee's task_h_load() and the
// WA_BIAS factors (MC's imbalance_pct 117: 100 against 108).
TEST(wake_affine_weight, the_log_gives_the_loads_it_compared)
{
    struct sink final : decision_sink {
        std::vector<std::string> texts;
        void decision(const sched_decision& d) override
        {
            if (d.what == "wake_affine_weight")
                texts.push_back(d.text);
        }
    };
    sched_fixture t(llc16_machine(), "6.6");
    t.spawn("waker", testlib::spin(), 0, 0, 0);
    t.spawn("prev-spin", testlib::spin(), 0, 0, 5);
    task_struct& wakee = t.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 5);
    t.run_for(msecs(50)); // the wakee sleeps, both CPUs busy
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    ASSERT_EQ(sd->imbalance_pct, 117u);
    const u64 this_load = cpu_load(t.k->cpu_rq(0));
    const u64 prev_load = cpu_load(t.k->cpu_rq(5));
    const u64 task_h = task_h_load(*t.k, wakee);
    sink s;
    t.k->decisions().set_sink(&s);
    const int cpu = wake_affine_weight(*t.k, *sd, wakee, 0, 5, /*sync=*/0);
    t.k->decisions().set_sink(nullptr);
    ASSERT_EQ(s.texts.size(), 1u);
    EXPECT_EQ(s.texts[0],
              fmt::format("pid {}: this cpu0 load {} - waker 0 + task_h {} (x100) vs prev cpu5 "
                          "load {} - task_h {} (x108): {}",
                          wakee.pid, this_load, task_h, prev_load, task_h,
                          cpu == 0 ? "this" : "prev"));
}

TEST(wake_affine, prefers_an_idle_prev_cpu_and_counts_no_move_on_6_6)
{
    sched_fixture t(llc16_machine(), "6.6");
    t.spawn("waker", testlib::spin(), 0, 0, 0);
    task_struct& wakee = t.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 5);
    t.run_for(msecs(1)); // wakee sleeps: cpu5 is idle
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    const u64 before = sd->stats.ttwu_move_affine;
    EXPECT_EQ(wake_affine(*t.k, *sd, wakee, 0, 5, /*sync=*/0), 5);
    EXPECT_EQ(sd->stats.ttwu_move_affine, before);

    sched_fixture old(llc16_machine(), "6.1");
    old.spawn("waker", testlib::spin(), 0, 0, 0);
    task_struct& w2 = old.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 5);
    old.run_for(msecs(1));
    old.k->set_this_cpu(0);
    sched_domain* sd2 = old.k->topology().cpu(0).sd_llc;
    EXPECT_EQ(wake_affine(*old.k, *sd2, w2, 0, 5, 0), 5);
    EXPECT_EQ(sd2->stats.ttwu_move_affine, 1u) << "5.15/6.1 count an idle prev as a move";
}

TEST(select_idle_core, finds_a_fully_idle_core_past_half_busy_ones)
{
    // Two sockets of 8 cores x SMT2 (16-CPU LLCs), first-threads numbering:
    // core c of socket 0 is {c, c + 16}.
    sched_fixture t(llc16_machine(2), "6.6");
    for (int cpu : {1, 17, 2, 18, 3}) // cores 1 and 2 fully busy, core 3 half busy
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    t.k->set_this_cpu(1);
    sched_domain* sd = t.k->topology().cpu(1).sd_llc;
    ASSERT_TRUE(sd->shared->has_idle_cores);
    sd->shared->nr_idle_scan = 16; // SIS_UTIL gives up at once while it is 0, even for idle cores
    cpumask cpus = sd->span;
    int fallback = -1;
    EXPECT_EQ(select_idle_core(*t.k, p, 3, cpus, fallback), -1) << "core 3 is half busy";
    EXPECT_EQ(fallback, 19) << "its idle sibling is remembered";
    EXPECT_FALSE(cpus.test(3) || cpus.test(19)) << "the core leaves the scan";
    // select_idle_cpu from target 1 scans cores 2, 3, ... and returns idle core 4.
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, true, 1), 4);
}

TEST(select_idle_cpu, clears_has_idle_cores_after_a_fruitless_full_scan)
{
    sched_fixture t(llc16_machine(2), "6.6");
    for (int c = 0; c < 8; ++c) // one thread of every core of socket 0 busy
        t.spawn(fmt::format("busy{}", c), testlib::spin(), 0, 0, c);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    sd->shared->has_idle_cores = true; // a stale hint
    sd->shared->nr_idle_scan = 16;
    const int i = select_idle_cpu(*t.k, p, *sd, true, 0);
    EXPECT_EQ(i, 17) << "falls back to the first idle sibling seen (core 1's)";
    EXPECT_FALSE(sd->shared->has_idle_cores);
}

// SIS_UTIL's nr_idle_scan (update_idle_cpu_scan(), v6.1) worked by hand for a 16-CPU LLC.
int nr_idle_scan_at(double util_fraction)
{
    sched_fixture t(llc16_machine(), "6.6");
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    lb_env env;
    env.sd = sd;
    env.dst_cpu = 0;
    env.idle = CPU_NOT_IDLE;
    const auto x = static_cast<unsigned long>(util_fraction * 1024);
    update_idle_cpu_scan(*t.k, env, x * 16);
    return sd->shared->nr_idle_scan;
}

TEST(update_idle_cpu_scan, sis_util_depth_matches_the_worked_values)
{
    EXPECT_EQ(nr_idle_scan_at(0.30), 14);
    EXPECT_EQ(nr_idle_scan_at(0.50), 10);
    EXPECT_EQ(nr_idle_scan_at(0.70), 5);
    EXPECT_EQ(nr_idle_scan_at(0.80), 2);
    EXPECT_EQ(nr_idle_scan_at(0.83), 0);
}

TEST(update_idle_cpu_scan, a_machine_starts_with_the_scan_depth_of_an_idle_llc)
{
    // What update_idle_cpu_scan() computes for sum_util == 0 (the machine has been
    // up and idle before the benchmark), not the boot-time 0 that scans nothing.
    sched_fixture t(llc16_machine(), "tip-2023-02");
    EXPECT_EQ(t.k->topology().cpu(0).sd_llc->shared->nr_idle_scan, 16);
    EXPECT_EQ(nr_idle_scan_at(0.0), 16);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.spawn("busy", testlib::spin(), 0, 0, 1);
    t.run_for(msecs(1));
    t.k->set_this_cpu(1);
    EXPECT_GE(select_idle_cpu(*t.k, p, *t.k->topology().cpu(1).sd_llc, false, 1), 0)
        << "the first wakeups of a run find the idle CPUs";
}

TEST(select_idle_cpu, sis_util_limits_the_scan_depth)
{
    sched_fixture t(llc16_machine(), "6.6");
    for (int cpu = 1; cpu <= 4; ++cpu)
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    ASSERT_NE(p.cpu, 5);
    t.k->set_this_cpu(1);
    sched_domain* sd = t.k->topology().cpu(1).sd_llc;
    // From target 1 the scan visits 2, 3, 4 (busy) then 5 (idle): 4 probes.
    sd->shared->nr_idle_scan = 2; // nr = 3: gives up before cpu5
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), -1);
    sd->shared->nr_idle_scan = 4; // nr = 5: reaches cpu5
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), 5);
    sd->shared->nr_idle_scan = 0; // SIS_UTIL says the LLC is too busy to scan at all
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), -1);
}

/*
 * SIS_PROP (5.15): with span_avg <= 4 * avg_cost the depth is nr = 4, and
 * "if (!--nr) return -1;" runs before the CPU is probed: from target 1 the
 * scan probes 2, 3, 4 (busy) and gives up at cpu5 without looking at it, and
 * returns before the avg_scan_cost / wake_avg_idle bookkeeping. A scan that
 * finds an idle CPU does the bookkeeping: update_avg() moves avg_scan_cost an
 * eighth of the way to the scan's time (here 0: the fixture has no costs).
 */
TEST(select_idle_cpu, sis_prop_returns_before_its_bookkeeping_when_the_depth_runs_out)
{
    sched_fixture t(llc16_machine(), "5.15");
    for (int cpu = 1; cpu <= 4; ++cpu)
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    ASSERT_NE(p.cpu, 5);
    t.k->set_this_cpu(1);
    rq& this_rq = t.k->cpu_rq(1);
    sched_domain* sd = t.k->topology().cpu(1).sd_llc;
    sd->avg_scan_cost = 800;
    this_rq.wake_stamp = jiffies(*t.k);
    this_rq.wake_avg_idle = 100; // span_avg 1600 <= 4 * 801: nr = 4
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), -1);
    EXPECT_EQ(sd->avg_scan_cost, 800u) << "no update_avg() after the depth ran out";
    EXPECT_EQ(this_rq.wake_avg_idle, 100u);
    this_rq.wake_avg_idle = 1000; // span_avg 16000 / 801: nr = 19, cpu5 is reached
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), 5);
    EXPECT_EQ(sd->avg_scan_cost, 800u - 800u / 8) << "update_avg(&avg_scan_cost, 0)";
}

/*
 * SIS_PROP's wake_avg_idle starts at avg_idle (sched_init(): 5.15.0 at sndrzt/linux-5.15
 * 75c6ad16ec64, 6.1-rc7, v6.5), halved only at a wakeup from idle (ttwu_do_wakeup()). Before
 * cpu1's first wakeup from idle, with avg_scan_cost + 1 = 2 * avg_idle, the depth is
 * 16 * avg_idle / (2 * avg_idle) = 8: from target 1 the scan probes 2-4 (busy) and takes cpu5.
 * Starting at avg_idle / 2 would give span_avg = 4 * avg_cost, so nr = 4: no CPU found.
 * The run starts 17179 jiffies (SCHED_CLOCK_AT_START at HZ 250) after boot, where sched_init()
 * stamped wake_stamp, so cpu1's first scan first ages wake_avg_idle one halving per jiffy
 * since then, to 0 (nr = 4: none found); the depth from the whole avg_idle is then checked
 * with the stamp at the current jiffy. (Until the start state counted jiffies from boot the run
 * started at jiffies 0 and the first scan used the whole avg_idle.)
 */
TEST(select_idle_cpu, sis_prop_starts_with_the_whole_avg_idle_before_a_wakeup_from_idle)
{
    sched_fixture t(llc16_machine(), "5.15");
    for (int cpu = 0; cpu < t.k->nr_cpu_ids(); ++cpu)
        EXPECT_EQ(t.k->cpu_rq(cpu).wake_avg_idle, t.k->cpu_rq(cpu).avg_idle) << cpu;
    for (int cpu = 1; cpu <= 4; ++cpu)
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    t.run_for(msecs(1));
    p.cpus_mask.set_all();
    p.nr_cpus_allowed = p.cpus_mask.weight();
    t.k->set_this_cpu(1);
    rq& this_rq = t.k->cpu_rq(1);
    ASSERT_EQ(jiffies(*t.k), SCHED_CLOCK_AT_START / t.k->config().params.tick_nsec());
    ASSERT_EQ(jiffies(*t.k), 17179u);
    ASSERT_EQ(this_rq.wake_stamp, 0u) << "boot's jiffies";
    ASSERT_EQ(this_rq.wake_avg_idle, this_rq.avg_idle) << "cpu1 has not woken from idle";
    sched_domain* sd = t.k->topology().cpu(1).sd_llc;
    ASSERT_EQ(sd->span_weight, 16);
    sd->avg_scan_cost = 2 * this_rq.avg_idle - 1;
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), -1) << "aged since boot: nr = 4";
    EXPECT_EQ(this_rq.wake_avg_idle, 0u);
    EXPECT_LE(this_rq.wake_stamp, 64u) << "the ageing stops at 0";
    this_rq.wake_avg_idle = this_rq.avg_idle;
    this_rq.wake_stamp = jiffies(*t.k);
    sd->avg_scan_cost = 2 * this_rq.avg_idle - 1;
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), 5);
    this_rq.wake_avg_idle = this_rq.avg_idle / 2;
    sd->avg_scan_cost = 2 * this_rq.avg_idle - 1;
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 1), -1) << "from avg_idle / 2: nr = 4";
}

TEST(select_idle_sibling, returns_an_idle_prev_before_scanning)
{
    sched_fixture t(llc16_machine(), "6.6");
    t.spawn("busy", testlib::spin(), 0, 0, 0);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 7);
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    p.recent_used_cpu = 7;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 7, 0), 7);
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "prev idle");
}

/*
 * The wake-list race tests' setting: a waker's path takes 600 ns (costs().wakeup), a
 * remote wakeup's IPI 1.5 us, and the named tasks ran on cpu5 and sleep for 10 s, then may
 * run on any CPU of llc16_machine().
 */
cost_params wakelist_race_costs()
{
    cost_params c = sched_fixture::no_costs();
    c.wakeup = 600;
    c.ipi_wakeup = 1500;
    return c;
}

std::vector<task_struct*> sleepers_of_cpu5(sched_fixture& t, const std::vector<std::string>& names)
{
    std::vector<task_struct*> tasks;
    for (const std::string& name : names)
        tasks.push_back(&t.spawn(name, testlib::run_sleep(usecs(10), secs(10)), 0, 0, 5));
    t.run_for(msecs(1)); // all ran on cpu5 and sleep; cpu5 idles
    for (task_struct* p : tasks) {
        p->cpus_mask.set_all();
        p->nr_cpus_allowed = p->cpus_mask.weight();
    }
    return tasks;
}

/*
 * The select_task_rq()/enqueue race (SIS_SHORT v6's changelog): a waker that
 * queued a wakee on idle cpu5's wake list sees ttwu_pending at once; another
 * CPU sees it only after the first waker's path (costs().wakeup), so it still
 * finds cpu5 idle and stacks its own wakee there.
 */
TEST(try_to_wake_up, a_second_waker_stacks_on_a_cpu_whose_wake_list_it_cannot_see_yet)
{
    sched_fixture t(llc16_machine(), "6.6", 1, "", wakelist_race_costs());
    const std::vector<task_struct*> ab = sleepers_of_cpu5(t, {"a", "b"});
    task_struct& a = *ab[0];
    task_struct& b = *ab[1];
    ASSERT_TRUE(t.k->idle_cpu(5));
    t.k->set_this_cpu(1);
    ASSERT_TRUE(t.k->wake_up_process(a));
    EXPECT_EQ(a.cpu, 5) << "its idle previous CPU";
    EXPECT_FALSE(t.k->idle_cpu(5)) << "the waker sees its own store";
    t.k->set_this_cpu(2);
    EXPECT_TRUE(t.k->idle_cpu(5)) << "cpu2 does not see it yet";
    ASSERT_TRUE(t.k->wake_up_process(b));
    EXPECT_EQ(b.cpu, 5) << "so cpu2 queues b there too";
    t.run_for(600);
    EXPECT_FALSE(t.k->idle_cpu(5)) << "visible to everyone after the waker's path";
    t.run_for(usecs(5)); // the IPI activates both
    EXPECT_EQ(t.k->cpu_rq(5).nr_running, 2u);
}

/*
 * The same race, one step on: __ttwu_queue_wakelist() (v6.5) has every waker that queues
 * write ttwu_pending = 1, so cpu2, having stacked b on cpu5 before cpu1's store reached it,
 * sees its own store at once: its next wakeup, at the same instant, finds cpu5 busy and
 * places c elsewhere, while cpu3, which queued nothing, still finds cpu5 idle.
 */
TEST(try_to_wake_up, a_second_waker_sees_its_own_ttwu_pending_store_at_once)
{
    sched_fixture t(llc16_machine(), "6.6", 1, "", wakelist_race_costs());
    const std::vector<task_struct*> abc = sleepers_of_cpu5(t, {"a", "b", "c"});
    task_struct& a = *abc[0];
    task_struct& b = *abc[1];
    task_struct& w = *abc[2];
    ASSERT_TRUE(t.k->idle_cpu(5));
    t.k->set_this_cpu(1);
    ASSERT_TRUE(t.k->wake_up_process(a));
    ASSERT_EQ(a.cpu, 5);
    t.k->set_this_cpu(2);
    ASSERT_TRUE(t.k->idle_cpu(5)) << "cpu1's store is not visible to cpu2 yet";
    ASSERT_TRUE(t.k->wake_up_process(b));
    ASSERT_EQ(b.cpu, 5) << "so cpu2 stacks b there";
    EXPECT_FALSE(t.k->idle_cpu(5)) << "cpu2 wrote ttwu_pending too and sees its own store";
    t.k->set_this_cpu(3);
    EXPECT_TRUE(t.k->idle_cpu(5)) << "cpu3 queued nothing: still the first store's window";
    t.k->set_this_cpu(2);
    ASSERT_TRUE(t.k->wake_up_process(w));
    EXPECT_NE(w.cpu, 5) << "cpu2's next wakeup does not stack a third task on cpu5";
    t.run_for(usecs(5)); // the IPI activates a and b
    EXPECT_EQ(t.k->cpu_rq(5).nr_running, 2u);
}

/*
 * find_idlest_group() (since 57abff067a08, v5.5): with the local and the idlest
 * group both fully busy or overloaded, a NUMA domain keeps the task local
 * unless the remote group's load plus the allowed imbalance (NICE_0_LOAD *
 * (imbalance_pct - 100) / 100) stays below the local one.
 */
TEST(find_idlest_group, a_numa_domain_stays_local_unless_the_remote_node_is_clearly_idler)
{
    // Both sockets fully busy: socket 0 with nice-2 spinners (weight 655), socket 1
    // with nice-3 ones (526). imbalance = 1024 * 17 / 100 = 174; 526 + 174 >= 655, so
    // the NUMA rule keeps p local, where "100 * 655 <= 117 * 526" alone would not.
    sched_fixture t(llc16_machine(), "6.6");
    for (int cpu = 0; cpu < 32; ++cpu)
        t.spawn(fmt::format("s{}", cpu), testlib::spin(), cpu, cpu < 16 ? 2 : 3, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    t.run_for(msecs(400));
    sched_domain* numa = fork_from_cpu0(t, p);
    ASSERT_NE(numa, nullptr);
    ASSERT_EQ(numa->imbalance_pct, 117u);
    EXPECT_EQ(find_idlest_group(*t.k, *numa, p, 0), nullptr);
}

/*
 * 5.15 (before 2cfb7a1b031b): find_idlest_group() keeps a fork on its NUMA node
 * while fewer than a quarter of the domain's CPUs (32 / 4 = 8) run tasks there.
 */
TEST(find_idlest_group, v5_15_keeps_a_fork_local_below_a_quarter_of_the_numa_domain)
{
    auto stays_local = [](int busy) {
        sched_fixture t(llc16_machine(), "5.15");
        for (int cpu = 0; cpu < busy; ++cpu)
            t.spawn(fmt::format("s{}", cpu), testlib::spin(), cpu, 0, cpu);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
        t.run_for(msecs(5));
        sched_domain* numa = fork_from_cpu0(t, p);
        EXPECT_NE(numa, nullptr);
        if (!numa)
            return false;
        EXPECT_EQ(numa->imb_numa_nr, 0u);
        return find_idlest_group(*t.k, *numa, p, 0) == nullptr;
    };
    EXPECT_TRUE(stays_local(7));
    EXPECT_FALSE(stays_local(8));
}

/*
 * kernel: fair.c find_idlest_group() and adjust_numa_imbalance(), 5.19-6.x
 * (cb29a5c19d2d: "if (dst_running > imb_numa_nr) return imbalance;"). Two
 * sockets of four 4-CPU LLCs, so imb_numa_nr = 4. Socket 0 runs 3 spinners (13
 * idle CPUs), socket 1 one (15 idle). By hand: the local node would run 3 + 1 = 4,
 * not more than imb_numa_nr, and the idle CPUs differ by 2 = NUMA_IMBALANCE_MIN,
 * so the imbalance is allowed and the fork stays on socket 0.
 */
TEST(find_idlest_group, a_numa_fork_stays_local_while_the_node_would_run_imb_numa_nr_tasks)
{
    sched_fixture t(llc16_machine(1, 4), "tip-2023-08");
    for (int cpu : {4, 8, 12, 16})
        t.spawn(fmt::format("spin{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    t.run_for(msecs(1));
    sched_domain* numa = fork_from_cpu0(t, p);
    ASSERT_NE(numa, nullptr);
    ASSERT_EQ(numa->imb_numa_nr, 4u);
    EXPECT_EQ(find_idlest_group(*t.k, *numa, p, 0), nullptr);
}

/*
 * kernel: fair.c find_idlest_group(), since f5b2eeb49991 (v5.19): for a task whose
 * nr_cpus_allowed is not NR_CPUS (any task on a machine smaller than the build's
 * NR_CPUS) the allowance is min(CPUs of the local group it may use, imb_numa_nr).
 * p may use cpu0-1 of socket 0 and all of socket 1; socket 0 runs 2 spinners (14
 * idle), socket 1 none (16 idle). By hand: imb_numa_nr = min(2, 4) = 2 and the local
 * node would run 3 > 2, so the idle difference 2 stands and socket 1, with more
 * idle CPUs, is chosen (with imb_numa_nr 4 the fork would stay).
 */
TEST(find_idlest_group, the_numa_allowance_is_capped_by_the_local_cpus_the_task_may_use)
{
    sched_fixture t(llc16_machine(1, 4), "tip-2023-08");
    for (int cpu : {4, 8})
        t.spawn(fmt::format("spin{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    t.run_for(msecs(1));
    sched_domain* numa = fork_from_cpu0(t, p);
    ASSERT_NE(numa, nullptr);
    ASSERT_EQ(numa->imb_numa_nr, 4u);
    p.cpus_mask.clear_all();
    for (int cpu = 0; cpu < 32; ++cpu)
        if (cpu < 2 || cpu >= 16)
            p.cpus_mask.set(cpu);
    p.nr_cpus_allowed = p.cpus_mask.weight();
    const sched_group* g = find_idlest_group(*t.k, *numa, p, 0);
    ASSERT_NE(g, nullptr);
    EXPECT_TRUE(g->span.test(16));
}

TEST(find_idlest_cpu, forks_spread_across_llcs_and_sockets)
{
    sched_fixture t(llc16_machine(), "6.6");
    std::vector<task_struct*> ts;
    for (int i = 0; i < 4; ++i)
        ts.push_back(&t.spawn(fmt::format("t{}", i), testlib::spin()));
    t.run_for(msecs(1));
    int socket0 = 0;
    for (auto* p : ts)
        socket0 += p->cpu < 16;
    EXPECT_EQ(socket0, 2) << "the NUMA/package level splits forks between the sockets";
}

/*
 * kernel: fair.c find_idlest_cpu(), find_idlest_group(), update_sg_wakeup_stats()
 * and find_idlest_group_cpu(), 6.5-6.6 (read at [A] of docs/kernel-map.md). Fork
 * balancing sees running tasks and idle CPUs, not sleepers. Two sockets of four
 * 4-CPU LLCs; socket 0 runs four spinners (12 idle CPUs), socket 1 none (16 idle),
 * and children that ran 10 us and sleep: one on cpu17, then three on cpu29, last.
 * By hand:
 * - NUMA: imb_numa_nr = 4 LLCs per node x (32 / 32) = 4; the local node would run
 *   4 + 1 > 4, so adjust_numa_imbalance() returns the idle difference 16 - 12 = 4
 *   (not 0) and, 12 < 16 idle, socket 1 is the idlest group;
 * - find_idlest_group_cpu() over socket 1: every CPU idle, none has a C-state
 *   preference here (the kernel's equal states fall back to the same rule), so the
 *   latest rq->idle_stamp wins: cpu29, whose last child slept last;
 * - PKG of cpu29: all four LLCs have 4 idle CPUs; the local group is kept on a
 *   tie (local idle_cpus >= idlest's), whatever its three sleepers weigh; MC: the
 *   same between single CPUs. So the fork lands on cpu29 beside its sleepers.
 * Repeated at each fork, this is how tbench's clients and servers, which slept
 * ~30 us after they started, piled on one CPU each of two LLCs of bergamo-2s
 * (`git show 9376ffa:docs/validation.md`, "The baseline at 256 clients: tg->load_avg's
 * line saturated by reads") until d9c3bc4 gave each client dbench's setup exchange, whose
 * reply wakes it beside its server.
 */
TEST(find_idlest_cpu, a_fork_follows_the_most_recently_idled_cpu_past_sleeping_children)
{
    sched_fixture t(llc16_machine(1, 4), "tip-2023-08");
    for (int cpu : {0, 4, 8, 12})
        t.spawn(fmt::format("spin{}", cpu), testlib::spin(), cpu, 0, cpu);
    t.spawn("child17", testlib::run_sleep(usecs(10), secs(10)), 17, 0, 17);
    t.run_for(msecs(1));
    for (int i = 0; i < 3; ++i)
        t.spawn(fmt::format("child29.{}", i), testlib::run_sleep(usecs(10), secs(10)), 29, 0, 29);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    t.run_for(msecs(1));
    ASSERT_GT(t.k->cpu_rq(29).idle_stamp, t.k->cpu_rq(17).idle_stamp);
    ASSERT_EQ(t.k->cpu_rq(29).nr_running, 0u);
    sched_domain* numa = fork_from_cpu0(t, p);
    ASSERT_NE(numa, nullptr);
    EXPECT_EQ(numa->imb_numa_nr, 4u);
    const sched_group* g = find_idlest_group(*t.k, *numa, p, 0);
    ASSERT_NE(g, nullptr);
    EXPECT_TRUE(g->span.test(29)) << "socket 1 is the idlest group";
    sched_domain* pkg29 = t.k->topology().cpu(29).sd_llc->parent;
    ASSERT_EQ(pkg29->span_weight, 16);
    EXPECT_EQ(find_idlest_group(*t.k, *pkg29, p, 29), nullptr)
        << "the sleepers' LLC ties, and stays";
    EXPECT_EQ(select_task_rq_fair(*t.k, p, 0, WF_FORK), 29);
}

/*
 * kernel: fair.c find_idlest_group_cpu(), 6.5-6.6 (torvalds/linux v6.5): among idle
 * CPUs the one whose cpuidle state has the smallest exit_latency wins, whatever its
 * idle_stamp; only among equal states does the latest rq->idle_stamp decide. The
 * same setup as above (socket 1 idle, cpu29 idled last); then, by hand:
 * - every CPU of socket 1 in the deep state but cpu20 in C1 (1 us < 50 us): cpu20,
 *   although cpu29 idled later;
 * - all in the deep state: equal latencies, so the latest idle_stamp: cpu29;
 * - cpu18 polling (exit latency 0): cpu18.
 */
TEST(find_idlest_cpu, the_shallowest_idle_state_wins_before_the_latest_idle_stamp)
{
    cost_params costs = sched_fixture::no_costs(); // its C-states' exit latencies are 0
    costs.cstate_c1_exit = usecs(1);
    costs.cstate_deep_exit = usecs(50);
    sched_fixture t(llc16_machine(1, 4), "tip-2023-08", 1, "", costs);
    for (int cpu : {0, 4, 8, 12})
        t.spawn(fmt::format("spin{}", cpu), testlib::spin(), cpu, 0, cpu);
    t.spawn("child29", testlib::run_sleep(usecs(10), secs(10)), 29, 0, 29);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
    t.run_for(msecs(1));
    ASSERT_GT(t.k->cpu_rq(29).idle_stamp, 0u);
    sched_domain* numa = fork_from_cpu0(t, p);
    ASSERT_NE(numa, nullptr);
    const sched_group* g = find_idlest_group(*t.k, *numa, p, 0);
    ASSERT_NE(g, nullptr);
    ASSERT_TRUE(g->span.test(29));
    const auto set_state = [&](int cpu, u8 state) {
        cpu_idle_state& idle = t.k->charges().idle_state(t.k->cpu_rq(cpu));
        ASSERT_GE(idle.since, 0) << "cpu" << cpu << " is in a cpuidle state";
        idle.state = state;
    };
    for (int cpu = 16; cpu < 32; ++cpu)
        set_state(cpu, 2);
    set_state(20, 1);
    EXPECT_EQ(find_idlest_group_cpu(*t.k, *g, p, 0), 20) << "C1 before the deep state";
    set_state(20, 2);
    EXPECT_EQ(find_idlest_group_cpu(*t.k, *g, p, 0), 29) << "equal states: the latest idle_stamp";
    set_state(18, 0);
    EXPECT_EQ(find_idlest_group_cpu(*t.k, *g, p, 0), 18) << "polling: exit latency 0";
}


/* ---- patch sets: SIS_SHORT v6 and COUPLE_WAKEE_FLIPS (docs/kernels.md) ---- */

// CPUs 1..4 busy, 5.. idle; the waker spins on cpu1. At factor 4 (16 CPUs) min_granularity
// is 3 ms, so a task is short below a dur_avg of 375 us.
struct sis_short_setup {
    task_struct* waker = nullptr;
    task_struct* p = nullptr;
    sched_domain* sd = nullptr;

    void setup(sched_fixture& f)
    {
        waker = &f.spawn("waker", testlib::spin(), 0, 0, 1);
        for (int cpu = 2; cpu <= 4; ++cpu)
            f.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
        f.run_for(msecs(1));
        p = &f.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
        f.run_for(msecs(1));
        f.k->set_this_cpu(1);
        ASSERT_EQ(f.k->current(), waker);
        sd = f.k->topology().cpu(1).sd_llc;
        waker->se.dur_avg = usecs(100);
        p->se.dur_avg = usecs(100);
        waker->wakee_flips = 0;
        p->wakee_flips = 0;
    }
};

struct sis_short : ::testing::Test, sis_short_setup {
    sched_fixture t{llc16_machine(), "tip-2023-02+sis_short_v6"};
    void SetUp() override { setup(t); }
};

TEST_F(sis_short, select_idle_cpu_keeps_a_short_wakee_on_its_short_wakers_cpu)
{
    sd->shared->nr_idle_scan = 8; // nr = 9: 5 * 9 = 45 < 3 * 16 = 48
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 1), 1) << "target, without scanning";
    EXPECT_EQ(t.k->cpu_rq(1).stats.sis_short_target, 1u);
}

TEST_F(sis_short, select_idle_cpu_scans_while_sis_util_suggests_60_percent_of_the_llc_or_more)
{
    sd->shared->nr_idle_scan = 9; // nr = 10: 5 * 10 = 50 >= 48, LLC util below ~50%
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 1), 5);
    EXPECT_EQ(t.k->cpu_rq(1).stats.sis_short_target, 0u);
}

TEST_F(sis_short, select_idle_cpu_scans_unless_every_guard_holds)
{
    sd->shared->nr_idle_scan = 8;
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, true, 1), 5) << "an idle core is known";
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 2), 5) << "target is not this CPU";
    p->wakee_flips = 1;
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 1), 5) << "a wakee that flips is not short";
    p->wakee_flips = 0;
    p->se.dur_avg = usecs(375); // 8 * 375 us == 3 ms: not below min_granularity
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 1), 5) << "p is not short";
    p->se.dur_avg = 0;
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 1), 5) << "no sleep yet: no duration";
    p->se.dur_avg = usecs(100);
    waker->se.dur_avg = msecs(1);
    EXPECT_EQ(select_idle_cpu(*t.k, *p, *sd, false, 1), 5) << "the waker is not short";
    EXPECT_EQ(t.k->cpu_rq(1).stats.sis_short_target, 0u);
}

TEST(sis_short_feature, select_idle_cpu_scans_as_the_base_with_no_sis_short)
{
    sched_fixture t(llc16_machine(), "tip-2023-02+sis_short_v6+NO_SIS_SHORT");
    sis_short_setup s;
    s.setup(t);
    s.sd->shared->nr_idle_scan = 8;
    EXPECT_EQ(select_idle_cpu(*t.k, *s.p, *s.sd, false, 1), 5);
}

TEST(sis_short_feature, select_idle_cpu_scans_when_the_target_runs_two_tasks)
{
    sched_fixture t(llc16_machine(), "tip-2023-02+sis_short_v6");
    sis_short_setup s;
    s.setup(t);
    t.spawn("second", testlib::spin(), 0, 0, 1);
    t.k->set_this_cpu(1);
    ASSERT_EQ(t.k->cpu_rq(1).nr_running, 2u);
    s.sd->shared->nr_idle_scan = 8;
    EXPECT_EQ(select_idle_cpu(*t.k, *s.p, *s.sd, false, 1), 5);
}

TEST_F(sis_short, wake_affine_idle_chooses_a_short_wakers_cpu_after_the_idle_prev_check)
{
    ASSERT_FALSE(available_idle_cpu(*t.k, 3)); // prev 3 is busy
    EXPECT_EQ(wake_affine_idle(*t.k, 1, 3, /*sync=*/0), 1) << "no sync needed";
    EXPECT_EQ(t.k->cpu_rq(1).stats.sis_short_affine, 1u);
    EXPECT_EQ(wake_affine_idle(*t.k, 1, 7, 0), 7) << "an idle prev still wins";
    waker->se.dur_avg = msecs(1);
    EXPECT_NE(wake_affine_idle(*t.k, 1, 3, 0), 1) << "a long waker keeps the base rules";
}

TEST(sis_short_feature, wake_affine_idle_is_the_bases_without_the_delta)
{
    sched_fixture t(llc16_machine(), "tip-2023-02");
    sis_short_setup s;
    s.setup(t);
    EXPECT_NE(wake_affine_idle(*t.k, 1, 3, 0), 1);
}

TEST(dequeue_task_fair, dur_avg_is_the_eighth_weight_average_of_runtime_between_sleeps)
{
    sched_fixture t(testlib::small_machine(1), "tip-2023-02+sis_short_v6");
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(800), msecs(1)));
    t.run_for(usecs(1000)); // ran 800 us, slept once
    EXPECT_EQ(p.se.dur_avg, usecs(100)) << "0 + (800 - 0) / 8";
    EXPECT_EQ(p.se.prev_sleep_sum_runtime, p.se.sum_exec_runtime);
    t.run_for(usecs(1700)); // woke at 1.8 ms, ran 800 us, slept again
    EXPECT_EQ(p.se.dur_avg, usecs(100) + usecs(700) / 8);
}

TEST(wake_wide, couple_wakee_flips_lets_a_heavy_waker_go_wide_past_a_small_slave)
{
    for (const char* spec : {"5.15-rc3", "5.15-rc3+stacking"}) {
        const bool coupled = std::string(spec).find("stacking") != std::string::npos;
        sched_fixture t(llc16_machine(), spec);
        task_struct& waker = t.spawn("waker", testlib::spin());
        task_struct& wakee = t.spawn("wakee", testlib::spin());
        t.run_for(msecs(1));
        t.k->set_this_cpu(waker.cpu);
        ASSERT_EQ(t.k->current(), &waker);
        waker.wakee_flips = 128; // (16 / 2) * 16
        wakee.wakee_flips = 4;   // below the factor: the base never goes wide
        EXPECT_EQ(wake_wide(*t.k, wakee), coupled ? 1 : 0) << spec;
        waker.wakee_flips = 127;
        EXPECT_EQ(wake_wide(*t.k, wakee), 0) << spec << ": master below factor^2/2";
        waker.wakee_flips = 400;
        wakee.wakee_flips = 20; // the base condition still goes wide
        EXPECT_EQ(wake_wide(*t.k, wakee), 1) << spec;
        waker.wakee_flips = 300; // 300 < 20 * 16
        EXPECT_EQ(wake_wide(*t.k, wakee), 0) << spec;
    }
}

TEST(record_wakee, couple_wakee_flips_gives_a_heavy_wakers_new_wakee_a_flip)
{
    for (const char* spec : {"5.15-rc3", "5.15-rc3+stacking"}) {
        const bool coupled = std::string(spec).find("stacking") != std::string::npos;
        sched_fixture t(llc16_machine(), spec);
        task_struct& waker = t.spawn("waker", testlib::spin());
        task_struct& a = t.spawn("a", testlib::spin());
        task_struct& b = t.spawn("b", testlib::spin());
        t.run_for(msecs(1));
        t.k->set_this_cpu(waker.cpu);
        waker.wakee_flip_decay_ts = jiffies(*t.k);
        waker.last_wakee = &b;
        waker.wakee_flips = 33; // > 1 * (2 * 16)
        a.wakee_flips = 1;
        record_wakee(*t.k, a);
        EXPECT_EQ(a.wakee_flips, coupled ? 2u : 1u) << spec;
        EXPECT_EQ(waker.wakee_flips, 34u) << spec;
        b.wakee_flips = 2;
        record_wakee(*t.k, b); // 34 > 2 * 32 is false
        EXPECT_EQ(b.wakee_flips, 2u) << spec;
        record_wakee(*t.k, b); // same wakee: nothing at all
        EXPECT_EQ(b.wakee_flips, 2u) << spec;
        EXPECT_EQ(t.k->cpu_rq(waker.cpu).stats.wakee_flips_coupled, coupled ? 1u : 0u) << spec;
    }
}

/*
 * schbench -m 1 -t 2 on two CPUs (docs/replay.md "Limits"): worker w0 on cpu0
 * wakes the message thread m, whose previous CPU, cpu1, runs worker w1; a
 * futex wake is not WF_SYNC. By 6.18's select_task_rq_fair() with an LLC of
 * two CPUs (wake_wide()'s factor 2):
 * - w0 with 1 flip, m with 4: slave 1 < 2, so want_affine; neither CPU is
 *   idle (wake_affine_idle() has no answer) and wake_affine_weight() compares
 *   (load0 + load_m) * 100 with (load1 - load_m) * 108: each CPU's root load is
 *   the autogroup's entity there, half the group's shares (its load split over
 *   the two CPUs by calc_group_shares()): 509 and 512 here, and m's
 *   task_h_load is at most its 20: 52900 < 53136, so the waker's CPU wins;
 *   select_idle_sibling() finds no idle CPU: m stacks on cpu0.
 * - w0 with 8 flips (wakeups made in its context): slave 4 >= 2 and master
 *   8 >= 4 * 2, so wake_wide(): no wake_affine, and select_idle_sibling(prev,
 *   prev) finds no idle CPU: m stays on its busy cpu1, as the traced kernel
 *   kept schbench's message thread.
 */
TEST(select_task_rq_fair, a_waker_with_twice_the_wakees_flips_leaves_it_on_its_busy_prev_cpu)
{
    sched_fixture t(testlib::small_machine(2), "6.18");
    task_struct& w0 = t.spawn("w0", testlib::spin(), 0, 0, 0);
    t.spawn("w1", testlib::spin(), 1, 0, 1);
    task_struct& m = t.spawn("m", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
    t.run_for(secs(1)); // m sleeps on cpu1 and its load has decayed (32 ms half-life)
    m.cpus_mask.set_all();
    m.nr_cpus_allowed = m.cpus_mask.weight();
    t.k->set_this_cpu(0);
    ASSERT_EQ(t.k->current(), &w0);
    ASSERT_EQ(m.cpu, 1);
    ASSERT_EQ(t.k->topology().cpu(0).sd_llc_size, 2);
    ASSERT_FALSE(t.k->idle_cpu(1));
    // m slept right after its fork, so its own load_avg is still the 1024 a new task starts
    // with (task_h_load() reads it as of its dequeue, in the kernel too). Give it the small
    // load of a task that runs for microseconds between sleeps, as schbench's message
    // thread does; its blocked share of cpu1's load has decayed.
    m.se.avg.load_avg = 20;
    const unsigned long load0 = cpu_load(t.k->cpu_rq(0));
    const unsigned long load1 = cpu_load(t.k->cpu_rq(1));
    ASSERT_TRUE(load0 >= 490 && load0 <= 530 && load1 >= 490 && load1 <= 530) << load0 << " " << load1;
    ASSERT_LT((load0 + 20) * 100, (load1 - 20) * 108) << "the waker's side stays below prev's";

    struct wake_case {
        u32 waker_flips;
        int cpu;
        const char* branch;
    };
    for (const wake_case c :
         {wake_case{1, 0, "wake_affine: waker cpu (weight)"}, wake_case{8, 1, "wake_wide"}}) {
        w0.wakee_flips = c.waker_flips;
        w0.last_wakee = &m; // record_wakee() adds no flip
        w0.wakee_flip_decay_ts = jiffies(*t.k);
        m.wakee_flips = 4;
        m.recent_used_cpu = 1;
        EXPECT_EQ(select_task_rq_fair(*t.k, m, 1, WF_TTWU), c.cpu) << c.waker_flips << " flips";
        EXPECT_STREQ(t.k->decisions().last_select_branch(), c.branch) << c.waker_flips << " flips";
        EXPECT_STREQ(t.k->decisions().last_sis_branch(), "no idle cpu found: target (stacking)");
    }
}

/*
 * fork() copies the parent's task_struct (kernel/fork.c dup_task_struct()) and
 * __sched_fork() leaves record_wakee()'s fields as copied, so a child starts
 * with its parent's wakee_flips, decay stamp and last_wakee. Worked by hand,
 * the wake-all of perf bench sched messaging (docs/replay.md, "The wake-all's
 * turn is wake_wide()"): a parent with 3 flips forks four children, which
 * sleep; then it wakes them one by one. record_wakee() runs first, so the
 * parent's flips at its i-th wakee are 3 + i (each wakee another task) against
 * each child's 3; wake_wide() with the LLC's 2 CPUs as factor: slave 3 >= 2,
 * and wide once 3 + i >= 3 * 2, i.e. from the third wakee on. Children that
 * started with 0 flips (the model before) never go wide: slave 0 < 2.
 */
TEST(record_wakee, a_forked_child_starts_with_its_parents_flips_and_a_wake_all_turns_wide)
{
    sched_fixture t(testlib::small_machine(2), "6.18");
    std::vector<task_struct*> kids;
    task_struct* parent_last_wakee = nullptr;
    task_struct& parent =
        t.spawn("parent", testlib::behaviour([&](syscalls& s, task_struct& p) {
                    if (!kids.empty())
                        return task_action::cpu(msecs(10));
                    p.wakee_flips = 3;
                    p.wakee_flip_decay_ts = jiffies(*t.k);
                    parent_last_wakee = p.last_wakee;
                    for (int i = 0; i < 4; ++i) {
                        task_opts o;
                        o.comm = fmt::format("kid{}", i);
                        kids.push_back(&s.fork(p, testlib::run_sleep(usecs(10), secs(10)), o));
                    }
                    return task_action::cpu(msecs(10));
                }),
                0);
    t.run_for(msecs(20)); // the kids start, run 10 us and sleep
    ASSERT_EQ(kids.size(), 4u);
    for (const task_struct* c : kids) {
        EXPECT_EQ(c->wakee_flips, 3u) << c->comm;
        EXPECT_EQ(c->wakee_flip_decay_ts, parent.wakee_flip_decay_ts) << c->comm;
        EXPECT_EQ(c->last_wakee, parent_last_wakee) << c->comm;
        EXPECT_FALSE(c->on_rq) << c->comm << " sleeps";
    }
    t.k->set_this_cpu(parent.cpu);
    ASSERT_EQ(t.k->current(), &parent);
    ASSERT_EQ(t.k->topology().cpu(parent.cpu).sd_llc_size, 2);
    ASSERT_EQ(parent.wakee_flips, 3u) << "forks are not wakeups: no record_wakee()";
    const int expect_wide[] = {0, 0, 1, 1}; // master 4, 5, 6, 7 against slave 3
    for (std::size_t i = 0; i < kids.size(); ++i) {
        record_wakee(*t.k, *kids[i]);
        EXPECT_EQ(parent.wakee_flips, 4u + i);
        EXPECT_EQ(wake_wide(*t.k, *kids[i]), expect_wide[i]) << "wakee " << i + 1;
    }
}

/*
 * record_wakee() charges the flip to `current`, whatever the context: an
 * hrtimer expiry that wakes x in hardirq context on a CPU running a spinner
 * (hrtimer_wakeup() -> try_to_wake_up() -> select_task_rq_fair(), x allowed on
 * both CPUs) makes x the spinner's last_wakee and gives the spinner a flip.
 * This is how the traced schbench workers gained flips from the VM's other
 * tasks (docs/replay.md "Limits").
 */
TEST(record_wakee, a_timer_wakeup_is_a_flip_of_the_task_it_interrupts)
{
    sched_fixture t(testlib::small_machine(2), "6.18");
    task_struct& s0 = t.spawn("spin0", testlib::spin(), 0, 0, 0);
    task_struct& s1 = t.spawn("spin1", testlib::spin(), 1, 0, 1);
    task_struct& x = t.spawn("x", testlib::run_sleep(usecs(10), msecs(5)), 0);
    ASSERT_EQ(x.nr_cpus_allowed, 2);
    t.run_for(msecs(100));
    // The spinners never sleep, so x's timer wakeups are the only wakeups, each made
    // with a spinner current: a spinner that interrupted one has x as its last wakee
    // and exactly one flip (the change from no wakee to x), the other none.
    EXPECT_GE(x.nvcsw, 5u) << "x slept and was woken by its timer";
    EXPECT_TRUE(s0.last_wakee == &x || s1.last_wakee == &x);
    for (const task_struct* s : {&s0, &s1})
        EXPECT_EQ(s->wakee_flips, s->last_wakee == &x ? 1u : 0u) << s->comm;
}

/*
 * wake_affine_idle()'s sync test on a CPU running the waker with a sched-delayed
 * task still queued (DELAY_DEQUEUE: d slept while not eligible): nr_running is 2.
 * v6.12 compares nr_running with 1: no answer (nr_cpumask_bits). From v6.15
 * (20250303105241.17251-2-xuewen.yan@unisoc.com; the 6.18 profile) the delayed
 * task is left out, 2 - 1 == 1: the waker's CPU.
 */
TEST(wake_affine_idle, a_sync_wakeup_leaves_a_delayed_task_out_of_the_wakers_count_on_6_18)
{
    for (const char* spec : {"6.12", "6.18"}) {
        sched_fixture t(testlib::small_machine(2), spec);
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        task_struct& d = t.spawn("d", testlib::run_sleep(msecs(4), msecs(50)), 0, 0, 0);
        t.spawn("busy-prev", testlib::spin(), 1, 0, 1);
        for (int i = 0; i < 40000 && !d.se.sched_delayed; ++i)
            t.run_for(usecs(5));
        ASSERT_TRUE(d.se.sched_delayed) << spec << ": d never slept while not eligible; nvcsw "
                                        << d.nvcsw << " nivcsw " << d.nivcsw;
        t.k->set_this_cpu(0);
        ASSERT_EQ(t.k->current(), &waker) << spec;
        ASSERT_EQ(t.k->cpu_rq(0).nr_running, 2u) << spec;
        ASSERT_FALSE(t.k->idle_cpu(1)) << spec;
        const int no_answer = std::numeric_limits<int>::max(); // fair_select.cc's nr_cpumask_bits
        const int expect = std::string(spec) == "6.18" ? 0 : no_answer;
        EXPECT_EQ(wake_affine_idle(*t.k, 0, 1, /*sync=*/1), expect) << spec;
        EXPECT_EQ(wake_affine_idle(*t.k, 0, 1, /*sync=*/0), no_answer) << spec;
    }
}

/*
 * Conformance tests of the wakeup placement path (lane sisaudit), each hand-worked from
 * kernel/sched/fair.c of v6.5 (sndrzt/linux-6.5 4f5cdb332210) and v6.6.87
 * (Yunbaby8/linux-6.6.87-lab 7fe0c4ed5035); where 5.15.0 (sndrzt/linux-5.15 75c6ad16ec64),
 * 6.1-rc7 (krr-io/linux-6.1.0 2a410d07ec5e), 6.12.19 (wishday/linux-6.12.y 21ae40e85ea7)
 * or 6.18.2 (gfunkmonk/linux-6.18.2 062668f4d006) differ on the branch it is said.
 */

/// Makes p, asleep on its pinned CPU, allowed on `cpus` (all CPUs when empty).
void allow(task_struct& p, std::initializer_list<int> cpus = {})
{
    if (cpus.size() == 0) {
        p.cpus_mask.set_all();
    } else {
        p.cpus_mask.clear_all();
        for (const int c : cpus)
            p.cpus_mask.set(c);
    }
    p.nr_cpus_allowed = p.cpus_mask.weight();
}

/*
 * select_task_rq_fair(), WF_CURRENT_CPU (read in v6.6.87, 6.12.19 and 6.18.2; not in v6.5): after
 * record_wakee(), a wakeup with WF_CURRENT_CPU whose wakee may run on the waker's CPU returns
 * that CPU, before wake_wide() and wake_affine(). Waker spinning on cpu0, wakee asleep on
 * idle cpu5 (same LLC): 6.6+ -> 0. 6.5 has no such branch: want_affine, wake_affine_idle()
 * finds prev idle -> prev, select_idle_sibling(5, 5): target 5 idle -> 5. A wakee not allowed
 * on the waker's CPU skips the branch on 6.6 too -> 5.
 */
TEST(select_task_rq_fair, wf_current_cpu_takes_the_wakers_cpu_from_6_6)
{
    for (const char* spec : {"6.5", "6.6", "6.12", "6.18"}) {
        sched_fixture t(llc16_machine(), spec);
        t.spawn("waker", testlib::spin(), 0, 0, 0);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 5, 0, 5);
        t.run_for(msecs(1));
        allow(p);
        t.k->set_this_cpu(0);
        ASSERT_TRUE(available_idle_cpu(*t.k, 5)) << spec;
        const bool v6_5 = std::string(spec) == "6.5";
        EXPECT_EQ(select_task_rq_fair(*t.k, p, 5, WF_TTWU | WF_CURRENT_CPU), v6_5 ? 5 : 0) << spec;
        allow(p, {4, 5});
        EXPECT_EQ(select_task_rq_fair(*t.k, p, 5, WF_TTWU | WF_CURRENT_CPU), 5) << spec;
    }
}

/*
 * select_task_rq_fair(): want_affine needs the waker's CPU in p->cpus_ptr. A sync wakeup from
 * cpu0 (running only the waker) of a task allowed on {5, 6}, both busy: not want_affine, so no
 * wake_affine() and the walk stops at the first domain without SD_BALANCE_WAKE (sd stays
 * NULL); select_idle_sibling(prev 5, target 5) finds no idle allowed CPU -> 5. Were
 * wake_affine() asked, its sync test would answer cpu0 and select_idle_sibling(5, 0) would
 * return target 0, a CPU p may not use. All profiles (5.15.0 to 6.18.2 the same).
 */
TEST(select_task_rq_fair, a_waker_cpu_the_wakee_may_not_use_is_never_the_affine_target)
{
    for (const char* spec : {"5.15", "6.1", "6.5", "6.6", "6.18"}) {
        sched_fixture t(llc16_machine(), spec);
        t.spawn("waker", testlib::spin(), 0, 0, 0);
        t.spawn("busy5", testlib::spin(), 5, 0, 5);
        t.spawn("busy6", testlib::spin(), 6, 0, 6);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 5, 0, 5);
        t.run_for(msecs(1));
        allow(p, {5, 6});
        t.k->set_this_cpu(0);
        ASSERT_EQ(t.k->cpu_rq(0).nr_running, 1u) << spec;
        p.recent_used_cpu = 5;
        EXPECT_EQ(select_task_rq_fair(*t.k, p, 5, WF_TTWU | WF_SYNC), 5) << spec;
    }
}

/*
 * select_task_rq_fair()'s sync (5.15.0, 6.1-rc7, v6.5, v6.6.87, 6.12.19, 6.18.2 the same):
 * WF_SYNC unless current is PF_EXITING, which exit_signals() sets at the top of do_exit(), so
 * an exiting child's wakeup of its parent (exit_notify(), WF_SYNC) is not sync. Two LLCs of 8
 * CPUs per socket; the waker spins alone on cpu0, the wakee sleeps with prev 9 (the other
 * LLC, idle). Sync: wake_affine_idle()'s sync test takes cpu0, select_idle_sibling(9, 0) finds
 * target busy, prev in another LLC, and scans to cpu1. Exiting waker: no sync, so
 * wake_affine_idle() keeps the idle prev 9, and select_idle_sibling(9, 9) returns it.
 */
TEST(select_task_rq_fair, a_sync_wakeup_by_an_exiting_task_is_not_sync)
{
    for (const char* spec : {"5.15", "6.1", "6.5", "6.6", "6.12", "6.18"}) {
        sched_fixture t(llc16_machine(1, 8), spec);
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 9, 0, 9);
        t.run_for(msecs(1));
        allow(p);
        t.k->set_this_cpu(0);
        ASSERT_EQ(t.k->current(), &waker) << spec;
        ASSERT_TRUE(available_idle_cpu(*t.k, 9)) << spec;
        p.recent_used_cpu = 9;
        EXPECT_EQ(select_task_rq_fair(*t.k, p, 9, WF_TTWU | WF_SYNC), 1) << spec << ": sync";
        waker.flags |= PF_EXITING;
        p.recent_used_cpu = 9;
        EXPECT_EQ(select_task_rq_fair(*t.k, p, 9, WF_TTWU | WF_SYNC), 9) << spec << ": exiting";
    }
}

/*
 * wake_affine_idle()'s first test (v6.5 = v6.6 = 5.15.0 = 6.18.2): the waker's CPU is idle (a
 * wakeup from interrupt context) and shares the LLC with prev: prev if prev is idle too, else
 * the waker's CPU. With prev in another LLC the test does not apply: prev if idle (the third
 * test), else no answer. Two LLCs of 8 CPUs per socket; the waker's cpu0 idle.
 */
TEST(wake_affine_idle, an_idle_wakers_cpu_takes_the_wakee_only_from_its_own_llc)
{
    sched_fixture t(llc16_machine(1, 8), "6.6");
    t.spawn("busy5", testlib::spin(), 5, 0, 5);
    t.spawn("busy9", testlib::spin(), 9, 0, 9);
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    ASSERT_TRUE(available_idle_cpu(*t.k, 0));
    ASSERT_TRUE(t.k->topology().cpus_share_cache(0, 5));
    ASSERT_FALSE(t.k->topology().cpus_share_cache(0, 9));
    const int no_answer = std::numeric_limits<int>::max();
    EXPECT_EQ(wake_affine_idle(*t.k, 0, 5, 0), 0) << "same LLC, prev busy: the idle waker's CPU";
    EXPECT_EQ(wake_affine_idle(*t.k, 0, 4, 0), 4) << "same LLC, prev idle: prev";
    EXPECT_EQ(wake_affine_idle(*t.k, 0, 9, 0), no_answer) << "other LLC, prev busy";
    EXPECT_EQ(wake_affine_idle(*t.k, 0, 10, 0), 10) << "other LLC, prev idle";
}

/*
 * select_idle_sibling() (v6.5 = v6.6 = 5.15.0 = 6.1-rc7 = 6.12.19 = 6.18.2 for these branches on
 * a machine without clusters): an idle target is taken before an idle prev; an idle prev in
 * another LLC than target is not taken, and the scan of target's LLC from target + 1 finds
 * its first idle CPU. Two LLCs of 8 CPUs per socket; cpus 0-2 busy.
 */
TEST(select_idle_sibling, an_idle_target_first_and_never_a_prev_outside_its_llc)
{
    sched_fixture t(llc16_machine(1, 8), "6.6");
    for (int cpu : {0, 1, 2})
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 9, 0, 9);
    t.run_for(msecs(1));
    allow(p);
    t.k->set_this_cpu(0);
    p.recent_used_cpu = 9;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 9, 9), 9) << "target (== prev) idle";
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "target idle");
    p.recent_used_cpu = 9;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 4, 5), 5) << "target idle before prev";
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "target idle");
    p.recent_used_cpu = 9;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 9, 0), 3) << "prev 9 idle but in the other LLC";
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "select_idle_cpu: idle cpu");
}

/*
 * select_idle_sibling()'s recent_used_cpu (v6.5 = v6.6 = 6.12.19 = 6.18.2): p->recent_used_cpu
 * becomes prev, and the old value is returned when it is neither prev nor target, shares the
 * LLC with target, is idle and p may run there. Target 0 and prev 1 busy, cpus 2-7 idle:
 * recent 6 -> 6 (the scan would find 2); recent 6 not allowed -> the scan's 2; recent 9 (other
 * LLC) -> 2. 5.15.0 and 6.1-rc7 test p->recent_used_cpu, already prev, against cpus_ptr: the
 * same outcome unless p may run on one of the two CPUs only (the next test).
 */
TEST(select_idle_sibling, takes_an_idle_recent_used_cpu_in_targets_llc_before_scanning)
{
    sched_fixture t(llc16_machine(1, 8), "6.6");
    for (int cpu : {0, 1})
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
    t.run_for(msecs(1));
    allow(p);
    t.k->set_this_cpu(0);
    p.recent_used_cpu = 6;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 0), 6);
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "recent_used_cpu idle");
    EXPECT_EQ(p.recent_used_cpu, 1) << "prev is remembered";
    p.recent_used_cpu = 6;
    allow(p, {0, 1, 2, 3, 4, 5, 7});
    EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 0), 2) << "recent 6 not allowed";
    allow(p);
    p.recent_used_cpu = 9;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 0), 2) << "recent 9 is in the other LLC";
    EXPECT_EQ(p.recent_used_cpu, 1);
}

/*
 * select_idle_sibling()'s recent_used_cpu affinity test by profile: 5.15.0 and 6.1-rc7 test
 * p->recent_used_cpu, already prev (89aafd67f28c), 6.5 and later the old recent_used_cpu
 * (ae2ad293d6be, v6.5-rc2). Target 0 and prev 1 busy, cpus 2-7 idle, recent 6. Prev allowed,
 * 6 not: 5.15/6.1 return 6 (select_task_rq()'s fallback then corrects it), 6.5+ scan to 2.
 * 6 allowed, prev not (after an affinity change): 5.15/6.1 scan to 2, 6.5+ return 6.
 */
TEST(select_idle_sibling, recent_used_cpus_affinity_test_reads_prev_on_5_15_and_6_1)
{
    for (const char* spec : {"5.15", "5.15-rc3", "6.1", "tip-2023-02", "6.5", "6.6", "6.18"}) {
        sched_fixture t(llc16_machine(1, 8), spec);
        for (int cpu : {0, 1})
            t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
        t.run_for(msecs(1));
        t.k->set_this_cpu(0);
        const std::string v = spec;
        const bool tests_prev = v == "5.15" || v == "5.15-rc3" || v == "6.1" || v == "tip-2023-02";
        allow(p, {0, 1, 2, 3, 4, 5, 7});
        p.recent_used_cpu = 6;
        EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 0), tests_prev ? 6 : 2)
            << spec << ": 6 not allowed";
        EXPECT_EQ(p.recent_used_cpu, 1) << spec;
        allow(p, {0, 2, 3, 4, 5, 6, 7});
        p.recent_used_cpu = 6;
        EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 0), tests_prev ? 2 : 6)
            << spec << ": prev not allowed";
    }
}

/*
 * select_idle_sibling() on SMT with no idle core in target's LLC (v6.5 = v6.6 = 5.15.0 = 6.18.2;
 * 6.6+ also check the sibling is in the LLC's span, always so here): select_idle_smt(p, prev)
 * returns an idle allowed sibling of prev before select_idle_cpu() scans. 8 cores x SMT2 per
 * socket, core c = {c, c + 16}; first threads 0-7 busy, so no core is idle; target 0, prev 1.
 * The scan from cpu1 would visit 1..7 (busy), then 16: idle -> 16. The SMT branch -> 17.
 */
TEST(select_idle_sibling, an_idle_smt_sibling_of_prev_before_the_llc_scan)
{
    sched_fixture t(llc16_machine(2), "6.6");
    for (int cpu = 0; cpu < 8; ++cpu)
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 17);
    t.run_for(msecs(1));
    allow(p);
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    ASSERT_TRUE(sd->span.test(17) && sd->span.test(16));
    sd->shared->has_idle_cores = false; // as a fruitless idle-core scan leaves it
    sd->shared->nr_idle_scan = 16;
    p.recent_used_cpu = 1;
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 0), 16) << "what the scan alone finds";
    p.recent_used_cpu = 1;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 0), 17);
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "idle SMT sibling of prev");
}

/*
 * __update_idle_core() (v6.5 = v6.6 = 5.15.0): a CPU going idle marks its LLC as having an idle
 * core only when every other SMT sibling is idle (available_idle_cpu()). 8 cores x SMT2, core 1
 * = {1, 17}: 17 busy, so cpu1 going idle leaves has_idle_cores false; cpu2's sibling 18 is
 * idle: true.
 */
/// One LLC of 8 cores in two clusters of 4 (L2 shared by 4 cores), no SMT: the CLS domain survives.
machine cluster_machine()
{
    symmetric_machine_spec s;
    s.name = "test-llc8-cls4";
    s.cores_per_socket = 8;
    s.cores_per_llc = 8;
    s.cores_per_cluster = 4;
    return make_symmetric_machine(s, "test");
}

/*
 * The cluster-first wakeup scan (v6.8's 8881e1639f1f and 22165f61d0c4; read in 6.12.19 and
 * 6.18.2), on a machine whose CLS domain survives: cpus 5-7 busy, target 6, prev 1 idle
 * (same LLC, other cluster). 6.6: select_idle_sibling() takes the idle prev; the scan from
 * cpu7 wraps to cpu0. 6.12/6.18/tip-2023-12: prev is kept aside (it does not share target's
 * cluster, cpus_share_resources()); select_idle_cpu() scans target's cluster {4-7} first from
 * cpu7 and takes cpu4. With SIS_UTIL's depth at 0 (nr_idle_scan 0: no scan) the kept prev
 * is the answer, not target.
 */
TEST(select_idle_sibling, scans_targets_cluster_first_and_keeps_prev_aside_from_v6_8)
{
    for (const char* spec : {"6.6", "6.12", "6.18", "tip-2023-12"}) {
        sched_fixture t(cluster_machine(), spec);
        ASSERT_EQ(t.k->topology().cpu(6).sd_llc->groups.front().flags & SD_CLUSTER, SD_CLUSTER);
        ASSERT_TRUE(t.k->topology().sched_cluster_active);
        for (int cpu : {5, 6, 7})
            t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
        t.run_for(msecs(1));
        allow(p);
        t.k->set_this_cpu(6);
        const bool cluster_first = std::string(spec) != "6.6";
        sched_domain* sd = t.k->topology().cpu(6).sd_llc;
        sched_domain_shared* sds = t.k->topology().cpu(6).sd_llc_shared;
        sds->nr_idle_scan = 8;
        EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 6), cluster_first ? 4 : 0) << spec;
        p.recent_used_cpu = 1;
        EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 6), cluster_first ? 4 : 1) << spec;
        sds->nr_idle_scan = 0;
        p.recent_used_cpu = 1;
        EXPECT_EQ(select_idle_sibling(*t.k, p, 1, 6), 1) << spec;
        EXPECT_STREQ(t.k->decisions().last_sis_branch(),
                     cluster_first
                         ? "no idle cpu found: prev or recent_used_cpu outside the cluster"
                         : "prev idle")
            << spec;
    }
}

TEST(update_idle_core, marks_an_idle_core_only_when_every_sibling_is_idle)
{
    sched_fixture t(llc16_machine(2), "6.6");
    t.spawn("busy17", testlib::spin(), 17, 0, 17);
    t.run_for(msecs(1));
    sched_domain_shared* sds = t.k->topology().cpu(1).sd_llc_shared;
    ASSERT_NE(sds, nullptr);
    sds->has_idle_cores = false;
    update_idle_core(*t.k, t.k->cpu_rq(1));
    EXPECT_FALSE(sds->has_idle_cores) << "sibling 17 is busy";
    update_idle_core(*t.k, t.k->cpu_rq(2));
    EXPECT_TRUE(sds->has_idle_cores) << "sibling 18 is idle";
}

/*
 * select_idle_cpu()'s order (v6.5 = v6.6 = 5.15.0 = 6.18.2 on a machine without clusters):
 * for_each_cpu_wrap(cpu, cpus, target + 1), so the first idle CPU after target, wrapping
 * past the LLC's last CPU. One 16-CPU LLC, only cpus 2 and 7 idle: target 5 -> 7; target 9
 * (10..15, then 0, 1 busy) -> 2.
 */
TEST(select_idle_cpu, scans_from_the_cpu_after_target_and_wraps)
{
    sched_fixture t(llc16_machine(), "6.6");
    for (int cpu = 0; cpu < 16; ++cpu)
        if (cpu != 2 && cpu != 7)
            t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 20, 0, 20);
    t.run_for(msecs(1));
    allow(p);
    t.k->set_this_cpu(5);
    sched_domain* sd = t.k->topology().cpu(5).sd_llc;
    sd->shared->nr_idle_scan = 16;
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 5), 7);
    EXPECT_EQ(select_idle_cpu(*t.k, p, *sd, false, 9), 2);
}

/*
 * sched_idle_cpu() (sched_idle_rq(): nr_running equals the root cfs_rq's idle_h_nr_running
 * and is not 0; v6.5 = v6.6 = 5.15.0, 6.18.2 with the count renamed h_nr_idle) makes a CPU
 * running only SCHED_IDLE tasks as good as an idle one at each of select_idle_sibling()'s
 * tests: as target, as prev, and in select_idle_cpu()'s scan (__select_idle_cpu()). A
 * SCHED_IDLE spinner on cpu3, normal spinners on 0-2 and 4, the rest idle: target 3 -> 3;
 * target 0, prev 3 -> 3; target 0 = prev, recent_used_cpu 0: the scan from cpu1 -> 3 (the
 * idle cpu5 comes later).
 */
TEST(select_idle_sibling, a_cpu_running_only_sched_idle_tasks_counts_as_idle)
{
    sched_fixture t(llc16_machine(), "6.6");
    for (int cpu : {0, 1, 2, 4})
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
    task_opts o;
    o.comm = "idle-policy";
    o.policy = SCHED_IDLE;
    o.cpu = 3;
    o.allowed = cpumask(t.m.nr_cpus());
    o.allowed.set(3);
    t.k->spawn(testlib::spin(), o);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 20, 0, 20);
    t.run_for(msecs(1));
    allow(p);
    t.k->set_this_cpu(0);
    ASSERT_FALSE(available_idle_cpu(*t.k, 3));
    ASSERT_TRUE(sched_idle_cpu(*t.k, 3));
    ASSERT_FALSE(sched_idle_cpu(*t.k, 2));
    t.k->topology().cpu(0).sd_llc_shared->nr_idle_scan = 16;
    p.recent_used_cpu = 0;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 0, 3), 3);
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "target idle");
    p.recent_used_cpu = 0;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 3, 0), 3);
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "prev idle");
    p.recent_used_cpu = 0;
    EXPECT_EQ(select_idle_sibling(*t.k, p, 0, 0), 3);
    EXPECT_STREQ(t.k->decisions().last_sis_branch(), "select_idle_cpu: idle cpu");
}

} // namespace
} // namespace schedlab
