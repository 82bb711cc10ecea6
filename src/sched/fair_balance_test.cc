// SPDX-License-Identifier: GPL-2.0-only
/*
 * Load-balancing decisions on small hand-built situations (docs/kernel-map.md),
 * and the Wasted-Cores style work-conservation property on every preset.
 */
#include "sched/fair_balance.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace schedlab {
namespace {

using testlib::sched_fixture;

/// 2 LLCs of 2 cores x SMT2 (8 CPUs on one socket): the should_we_balance() and
/// out_balanced scenes below.
machine two_llc_smt2()
{
    symmetric_machine_spec ms;
    ms.name = "test-2llc-smt2";
    ms.cores_per_socket = 4;
    ms.threads_per_core = 2;
    ms.cores_per_llc = 2;
    return make_symmetric_machine(ms, "test");
}

/// Two AMD nodes at distance 32 (the distance that keeps SD_BALANCE_FORK and SD_WAKE_AFFINE
/// at NUMA, init_amd_zn()), `cores` cores per node in LLCs of `llc` cores, no SMT.
machine two_amd_nodes(const char* name, unsigned cores, unsigned llc)
{
    symmetric_machine_spec ms;
    ms.name = name;
    ms.sockets = 2;
    ms.cores_per_socket = cores;
    ms.cores_per_llc = llc;
    ms.remote_distance = 32;
    ms.vendor = "amd";
    return make_symmetric_machine(ms, "test");
}

/// Two spinners queued on cpu1 of a 2-CPU machine (their affinity opened up
/// after placement), cpu0 idle: a newly-idle balance on cpu0 has work to pull.
struct newidle_case {
    sched_fixture t;
    task_struct* a;
    task_struct* b;
    explicit newidle_case(const char* kernel, u64 seed = 1) : t(testlib::small_machine(2), kernel, seed)
    {
        a = &t.spawn("a", testlib::spin(), 0, 0, 1);
        b = &t.spawn("b", testlib::spin(), 0, 0, 1);
        t.run_for(msecs(10)); // a and b alternate at the tick: neither is cache hot
        a->cpus_mask.set_all();
        b->cpus_mask.set_all();
        a->nr_cpus_allowed = b->nr_cpus_allowed = 2;
        t.k->set_this_cpu(0);
    }
    sched_domain& base() { return *t.k->topology().cpu(0).sd(); }
    rq& rq0() { return t.k->cpu_rq(0); }
};

TEST(sched_balance_newidle, gate_closed_when_avg_idle_is_below_the_domain_cost)
{
    newidle_case c("6.6");
    ASSERT_TRUE(c.t.k->rd().overload);
    c.base().max_newidle_lb_cost = usecs(400);
    c.rq0().avg_idle = usecs(300);
    EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 0);
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], 0u);
    EXPECT_EQ(c.rq0().nr_running, 0u);
}

TEST(sched_balance_newidle, gate_open_pulls_one_task)
{
    newidle_case c("6.6");
    c.base().max_newidle_lb_cost = usecs(400);
    c.rq0().avg_idle = usecs(900);
    EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 1);
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], 1u);
    EXPECT_EQ(c.base().stats.lb_gained[CPU_NEWLY_IDLE], 1u);
    EXPECT_EQ(c.rq0().nr_running, 1u);
    EXPECT_EQ(c.t.k->cpu_rq(1).nr_running, 1u);
    EXPECT_EQ(c.rq0().idle_stamp, 0u) << "a pull clears idle_stamp";
}

TEST(sched_balance_newidle, gate_closed_without_root_domain_overload)
{
    newidle_case c("6.6");
    c.t.k->rd().overload = false;
    c.rq0().avg_idle = msecs(1);
    EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 0);
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], 0u);
}

TEST(sched_balance_newidle, v5_15_gates_on_migration_cost_instead)
{
    newidle_case c("5.15");
    c.base().max_newidle_lb_cost = 0;
    c.rq0().avg_idle = usecs(499); // below the 0.5 ms migration_cost
    EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 0);
    c.rq0().avg_idle = usecs(501);
    EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 1);
}

/*
 * The newly-idle loop tests' machine: two cores of two SMT siblings (small_machine(2, 2)),
 * load_balance() priced at 10 us (lb_base; nothing else costs), siblings at full speed
 * (no_costs() zeroes smt_pct). Two spinners pinned to a CPU of the other core (`other`)
 * keep the root domain overloaded; cpu1 is the CPU that goes newly idle, `sib` its
 * sibling; `smt` and `mc` are cpu1's two domains. ready() says the shape is as expected.
 */
struct newidle_on_cpu1 {
    sched_fixture t;
    kernel& kk;
    sched_domain* smt = nullptr;
    sched_domain* mc = nullptr;
    int sib = -1;
    int other = -1;

    static cost_params costs()
    {
        cost_params c = sched_fixture::no_costs();
        c.lb_base = usecs(10);
        c.smt_pct = 100;
        return c;
    }
    explicit newidle_on_cpu1(const std::string& spec)
        : t(testlib::small_machine(2, 2), spec, 1, "", costs()), kk(*t.k)
    {
        const auto& doms = kk.topology().cpu(1).domains;
        if (doms.size() != 2)
            return;
        smt = &*doms[0];
        mc = &*doms[1];
        for (int cpu = 0; cpu < 4; ++cpu) {
            if (cpu != 1 && smt->span.test(cpu))
                sib = cpu;
            if (!smt->span.test(cpu) && other < 0)
                other = cpu;
        }
        if (!ready())
            return;
        t.spawn("pinned-a", testlib::spin(), other, 0, other);
        t.spawn("pinned-b", testlib::spin(), other, 0, other);
    }
    bool ready() const { return smt && mc && sib >= 0 && other >= 0; }
};

TEST(sched_balance_newidle, a_wakeup_during_a_domains_pass_ends_the_loop_after_that_pass)
{
    /*
     * kernel: kernel/sched/fair.c newidle_balance(), 6.5: after each domain's
     * load_balance() the loop breaks if `pulled_task || this_rq->nr_running > 0 ||
     * this_rq->ttwu_pending`. cpu1's task sleeps with the root domain overloaded (two
     * tasks pinned to a CPU of the other core) and avg_idle long, so cpu1 balances newly
     * idle: the SMT pass (10 us: lb_base) finds nothing. A waker polling in 1 us steps
     * wakes the sleeper during that pass; it is prev on cpu1 (on_cpu), so it goes to
     * cpu1's wake list (ttwu_pending), and the loop stops before MC: MC is never
     * balanced newly idle and the sleeper runs once the SMT pass is done. The model used
     * to run every domain's pass at once in the pick (MC's too, 10 us more).
     */
    newidle_on_cpu1 f("tip-2023-08");
    ASSERT_TRUE(f.ready());
    sched_fixture& t = f.t;
    kernel& kk = f.kk;
    sched_domain& smt = *f.smt;
    sched_domain& mc = *f.mc;
    const int sib = f.sib;
    task_struct* sleeper = nullptr;
    bool woke = false;
    sim_time woken_at = 0;
    t.spawn("waker", testlib::behaviour([&](syscalls& k, task_struct&) {
                if (!woke && sleeper && kk.cpu_rq(1).in_schedule) {
                    woke = true;
                    woken_at = k.now();
                    k.wake_up_process(*sleeper);
                }
                return task_action::cpu(usecs(1));
            }),
            sib, 0, sib);
    t.run_for(usecs(100));
    ASSERT_TRUE(kk.rd().overload);
    auto starts = std::make_shared<std::vector<sim_time>>();
    auto phase = std::make_shared<int>(0);
    u64 smt_passes = 0, mc_passes = 0;
    sleeper = &t.spawn("sleeper", testlib::behaviour([&, starts, phase](syscalls& k, task_struct&) {
                           if ((*phase)++ % 2 == 0) {
                               starts->push_back(k.now());
                               if (starts->size() == 2) { // back from the wakeup: what ran
                                   smt_passes = smt.stats.lb_count[CPU_NEWLY_IDLE];
                                   mc_passes = mc.stats.lb_count[CPU_NEWLY_IDLE];
                               }
                               return task_action::cpu(usecs(10));
                           }
                           kk.cpu_rq(1).avg_idle = msecs(1); // a long expected idle
                           return task_action::sleep();
                       }),
                       1, 0, -1);
    const u64 smt_before = smt.stats.lb_count[CPU_NEWLY_IDLE];
    const u64 mc_before = mc.stats.lb_count[CPU_NEWLY_IDLE];
    t.run_for(usecs(200));
    ASSERT_TRUE(woke);
    ASSERT_GE(starts->size(), 2u);
    EXPECT_EQ(sleeper->cpu, 1);
    EXPECT_EQ(smt_passes - smt_before, 1u) << "the SMT pass ran";
    EXPECT_EQ(mc_passes - mc_before, 0u) << "ttwu_pending after the SMT pass ends the loop";
    EXPECT_LE((*starts)[1] - woken_at, usecs(10)) << "the sleeper waits for one pass, not two";
}

/// For the interrupt tests below: sched_waking, sched_wakeup and the switches on one CPU.
struct irq_steps final : trace_sink {
    int pid = -1;
    int cpu = -1;
    std::vector<sim_time> waking, wakeup;
    std::vector<std::pair<int, int>> switches; ///< (prev, next) on `cpu`, in order
    std::vector<sim_time> to_idle;             ///< pid's switches to idle on `cpu`
    void sched_waking(const trace_sched_wakeup& w) override
    {
        if (w.pid == pid)
            waking.push_back(w.ts);
    }
    void sched_wakeup(const trace_sched_wakeup& w) override
    {
        if (w.pid == pid)
            wakeup.push_back(w.ts);
    }
    void sched_switch(const trace_sched_switch& s) override
    {
        if (s.cpu != cpu)
            return;
        switches.emplace_back(s.prev_pid, s.next_pid);
        if (s.prev_pid == pid && s.next_pid == 0)
            to_idle.push_back(s.ts);
    }
};

/*
 * kernel: __schedule() runs with interrupts off from local_irq_disable() to
 * finish_task_switch()'s raw_spin_rq_unlock_irq(), and newidle_balance() drops and retakes
 * only the lock (raw_spin_rq_unlock()/raw_spin_rq_lock(), sndrzt/linux-6.5 4f5cdb332210;
 * 6.18.2's sched_balance_newidle() alike). The scene of the first test: the sleeper is woken
 * during cpu1's SMT pass (10 us) and goes to cpu1's wake list; the IPI (no cost here: at
 * once) cannot be taken then. The loop breaks on ttwu_pending with nothing enqueued,
 * newidle_balance() returns 0 (idle_stamp kept), cpu1 switches to idle, and the IPI's
 * sched_ttwu_pending() enqueues the sleeper at the irq enable: no poll sees it queued on
 * cpu1 during the pass, its sched_wakeup is at the pass's end or later, the avg_idle sample
 * runs from idle_stamp (the pick) to then, and cpu1's switches are sleeper -> idle ->
 * sleeper. Before (lane nibirq), the IPI was taken at once: the sleeper was queued during
 * the pass and the sample was the ~1 us to the wakeup.
 */
TEST(sched_balance_newidle, a_wake_list_ipi_during_a_pass_is_taken_after_the_switch_to_idle)
{
    newidle_on_cpu1 f("tip-2023-08");
    ASSERT_TRUE(f.ready());
    sched_fixture& t = f.t;
    kernel& kk = f.kk;
    task_struct* sleeper = nullptr;
    bool woke = false;
    bool queued_in_schedule = false; // a poll saw the wakee queued on cpu1 during the window
    t.spawn("waker", testlib::behaviour([&](syscalls& k, task_struct&) {
                const rq& r1 = kk.cpu_rq(1);
                if (woke && r1.in_schedule && r1.nr_running > 0)
                    queued_in_schedule = true;
                if (!woke && sleeper && r1.in_schedule) {
                    woke = true;
                    k.wake_up_process(*sleeper);
                }
                return task_action::cpu(usecs(1));
            }),
            f.sib, 0, f.sib);
    t.run_for(usecs(100));
    ASSERT_TRUE(kk.rd().overload);
    irq_steps rec;
    rec.cpu = 1;
    kk.add_sink(&rec);
    auto phase = std::make_shared<int>(0);
    u64 avg_idle_after = 0;
    sleeper = &t.spawn("sleeper", testlib::behaviour([&, phase](syscalls&, task_struct&) {
                           if ((*phase)++ % 2 == 0) {
                               if (*phase == 3) // back from the wakeup
                                   avg_idle_after = kk.cpu_rq(1).avg_idle;
                               return task_action::cpu(usecs(10));
                           }
                           kk.cpu_rq(1).avg_idle = msecs(1); // a long expected idle
                           return task_action::sleep();
                       }),
                       1, 0, -1);
    rec.pid = sleeper->pid;
    const sd_schedstat smt_before = f.smt->stats;
    t.run_for(usecs(200));
    ASSERT_TRUE(woke);
    ASSERT_GE(*phase, 3);
    // the summary's count (stats.cc): the loop ended after the SMT pass on a queued wakeup
    EXPECT_EQ(f.smt->stats.newidle_stop_wakeup - smt_before.newidle_stop_wakeup, 1u);
    EXPECT_EQ(f.smt->stats.newidle_stop_task - smt_before.newidle_stop_task, 0u);
    ASSERT_GE(rec.to_idle.size(), 1u);
    ASSERT_GE(rec.wakeup.size(), 1u);
    EXPECT_EQ(sleeper->cpu, 1);
    EXPECT_FALSE(queued_in_schedule) << "the IPI waits for interrupts to be enabled";
    EXPECT_GE(rec.wakeup[0] - rec.to_idle[0], usecs(10)) << "enqueued after the SMT pass";
    // update_avg() of a sample of at least the pass: avg_idle + (sample - avg_idle) / 8
    const u64 at_least = msecs(1) - (msecs(1) - usecs(10)) / 8;
    EXPECT_GE(avg_idle_after, at_least) << "the sample runs from idle_stamp to the IPI";
    const std::vector<std::pair<int, int>> want = {{sleeper->pid, 0}, {0, sleeper->pid}};
    const auto slept = std::find(rec.switches.begin(), rec.switches.end(), want[0]);
    ASSERT_LE(slept + 2, rec.switches.end());
    const std::vector<std::pair<int, int>> got(slept, slept + 2);
    EXPECT_EQ(got, want) << "to idle and back";
}

/*
 * The tick and a sleeper's hrtimer are interrupts too (the local timer's vector): one that
 * comes during cpu1's newly-idle passes is taken when they are over. (a) The tick: cpu1's
 * task sleeps 3 us before a jiffy boundary with a 1 ms timeout (menu keeps the tick), every
 * other CPU busy; the boundary's tick must not find cpu1 idle (lb_.nohz.idle_ticks) while
 * cpu1 is still in __schedule(), and is taken at the passes' end, once. (b) The hrtimer: the
 * sleeper's 5 us timeout expires during the 10 us SMT pass; its hrtimer_wakeup() (the
 * sleeper's sched_waking) comes when the passes are over. Before (lane nibirq) both were
 * taken at their instant.
 */
TEST(sched_balance_newidle, the_tick_and_an_hrtimer_during_the_passes_are_taken_after_them)
{
    for (const bool tick : {true, false}) {
        SCOPED_TRACE(tick ? "the tick" : "an hrtimer");
        newidle_on_cpu1 f("tip-2023-08");
        ASSERT_TRUE(f.ready());
        sched_fixture& t = f.t;
        kernel& kk = f.kk;
        for (int cpu = 0; cpu < 4; ++cpu) // every other CPU busy: only cpu1's idle ticks count
            if (cpu != 1 && cpu != f.sib && cpu != f.other)
                t.spawn("busy", testlib::spin(), cpu, 0, cpu);
        struct poll {
            sim_time at;
            bool in_schedule;
            u64 idle_ticks;
        };
        std::vector<poll> polls;
        t.spawn("poller", testlib::behaviour([&](syscalls& k, task_struct&) {
                    polls.push_back({k.now(), kk.cpu_rq(1).in_schedule, kk.lb().nohz.idle_ticks});
                    return task_action::cpu(usecs(1));
                }),
                f.sib, 0, f.sib);
        const auto jiffy = static_cast<sim_time>(kk.config().params.tick_nsec());
        t.run_for(usecs(100));
        ASSERT_TRUE(kk.rd().overload);
        irq_steps rec;
        rec.cpu = 1;
        kk.add_sink(&rec);
        auto phase = std::make_shared<int>(0);
        sim_time boundary = 0;
        task_struct& sleeper = t.spawn(
            "sleeper", testlib::behaviour([&, phase, tick](syscalls& k, task_struct& p) {
                if (*phase == 0) { // run to 3 us before the second jiffy boundary, in steps
                    if (!boundary) // of at most 100 us (the ticks' balancing delays a step)
                        boundary = (k.now() / jiffy + 2) * jiffy;
                    const sim_time until = tick ? boundary - usecs(3) : usecs(110);
                    if (k.now() < until)
                        return task_action::cpu(std::min<sim_dur>(until - k.now(), usecs(100)));
                    *phase = 1;
                }
                if ((*phase)++ == 1) {
                    kk.cpu_rq(1).avg_idle = msecs(1); // a long expected idle
                    k.schedule_timeout(p, tick ? msecs(1) : usecs(5));
                    return task_action::sleep();
                }
                return task_action::do_exit();
            }),
            1, 0, 1);
        rec.pid = sleeper.pid;
        t.run_for(tick ? 3 * jiffy : usecs(200));
        ASSERT_GE(rec.to_idle.size(), 1u); // the sleep (and the exit after it)
        const sim_time went_idle = rec.to_idle[0];
        const auto first_out = std::find_if(polls.begin(), polls.end(), [&](const poll& q) {
            return q.at > went_idle && !q.in_schedule;
        });
        ASSERT_NE(first_out, polls.end());
        ASSERT_GT(first_out - polls.begin(), 0);
        const poll last_in = *(first_out - 1);
        ASSERT_TRUE(last_in.in_schedule);
        if (tick) {
            ASSERT_LT(went_idle, boundary);
            ASSERT_GT(last_in.at, boundary) << "the passes span the boundary";
            const u64 at_switch = std::find_if(polls.begin(), polls.end(), [&](const poll& q) {
                                      return q.at >= went_idle;
                                  })->idle_ticks;
            EXPECT_EQ(last_in.idle_ticks, at_switch) << "no tick while in __schedule()";
            // at their end's instant (a poll then may come before it)
            ASSERT_LT(first_out + 1, polls.end());
            EXPECT_EQ((first_out + 1)->idle_ticks, at_switch + 1) << "the tick, when they end";
        } else {
            ASSERT_EQ(rec.waking.size(), 1u);
            EXPECT_GT(rec.waking[0], last_in.at) << "hrtimer_wakeup() after the passes";
            EXPECT_LE(rec.waking[0], first_out->at);
        }
    }
}

/*
 * kernel: sched_balance_newidle()'s break, `pulled_task || !continue_balancing` from
 * c829d6818b60 (v6.10; 6.12.19, 6.18.2), `pulled_task || nr_running > 0 || ttwu_pending`
 * before (6.6.87). The case above, by profile: cpu1's SMT pass finds nothing and the
 * sleeper is woken onto cpu1 during it. 6.6 stops after the SMT pass: MC is untouched.
 * 6.12 and 6.18 go on to MC, whose sched_balance_rq() counts lb_count, bails out at
 * should_we_balance() (a task or a wakeup is here) and takes out_balanced: lb_balanced
 * counted, nr_balance_failed reset (3 -> 0). 6.18 without NI_RANDOM, whose die would
 * skip MC at random.
 */
struct mc_after_wakeup {
    u64 newidle_count = 0;
    u64 newidle_balanced = 0;
    u32 nr_balance_failed = 0;
    u64 other_counts = 0; ///< MC's periodic (CPU_IDLE, CPU_NOT_IDLE) attempts meanwhile
    bool woke = false;
};

mc_after_wakeup mc_when_woken_during_the_smt_pass(const std::string& spec, bool direct = false)
{
    mc_after_wakeup out;
    newidle_on_cpu1 f(direct ? spec + "+NO_TTWU_QUEUE" : spec);
    EXPECT_TRUE(f.ready()) << spec;
    if (!f.ready())
        return out; // woke stays false: the callers' ASSERT_TRUE(woke) fails
    sched_fixture& t = f.t;
    kernel& kk = f.kk;
    sched_domain& mc = *f.mc;
    const int sib = f.sib;
    task_struct* sleeper = nullptr;
    t.spawn("waker", testlib::behaviour([&](syscalls& k, task_struct&) {
                if (!out.woke && sleeper && kk.cpu_rq(1).in_schedule) {
                    out.woke = true;
                    k.wake_up_process(*sleeper);
                }
                return task_action::cpu(usecs(1));
            }),
            sib, 0, sib);
    t.run_for(usecs(100));
    EXPECT_TRUE(kk.rd().overload);
    auto phase = std::make_shared<int>(0);
    auto starts = std::make_shared<int>(0);
    mc_after_wakeup before;
    auto others = [&] { return mc.stats.lb_count[CPU_IDLE] + mc.stats.lb_count[CPU_NOT_IDLE]; };
    sleeper = &t.spawn("sleeper", testlib::behaviour([&, phase, starts](syscalls&, task_struct&) {
                           if ((*phase)++ % 2 == 0) {
                               if (++*starts == 2) { // back from the wakeup
                                   out.newidle_count =
                                       mc.stats.lb_count[CPU_NEWLY_IDLE] - before.newidle_count;
                                   out.newidle_balanced = mc.stats.lb_balanced[CPU_NEWLY_IDLE] -
                                                          before.newidle_balanced;
                                   out.nr_balance_failed = mc.nr_balance_failed;
                                   out.other_counts = others() - before.other_counts;
                               }
                               return task_action::cpu(usecs(10));
                           }
                           kk.cpu_rq(1).avg_idle = msecs(1); // a long expected idle
                           mc.nr_balance_failed = 3;
                           before.newidle_count = mc.stats.lb_count[CPU_NEWLY_IDLE];
                           before.newidle_balanced = mc.stats.lb_balanced[CPU_NEWLY_IDLE];
                           before.other_counts = others();
                           return task_action::sleep();
                       }),
                       1, 0, direct ? 1 : -1);
    t.run_for(usecs(200));
    EXPECT_GE(*starts, 2) << spec;
    return out;
}

TEST(sched_balance_newidle,
     from_v6_10_a_wakeup_during_a_pass_ends_the_loop_at_the_next_domains_bail_out)
{
    const mc_after_wakeup v6_6 = mc_when_woken_during_the_smt_pass("6.6");
    ASSERT_TRUE(v6_6.woke);
    EXPECT_EQ(v6_6.other_counts, 0u);
    EXPECT_EQ(v6_6.newidle_count, 0u) << "6.6 stops after the SMT pass";
    EXPECT_EQ(v6_6.newidle_balanced, 0u);
    EXPECT_EQ(v6_6.nr_balance_failed, 3u);
    for (const char* spec : {"6.12", "6.18+NO_NI_RANDOM"}) {
        const mc_after_wakeup m = mc_when_woken_during_the_smt_pass(spec);
        ASSERT_TRUE(m.woke) << spec;
        EXPECT_EQ(m.other_counts, 0u) << spec;
        EXPECT_EQ(m.newidle_count, 1u) << spec << ": MC's sched_balance_rq() is entered";
        EXPECT_EQ(m.newidle_balanced, 1u) << spec << ": and bails out to out_balanced";
        EXPECT_EQ(m.nr_balance_failed, 0u) << spec << ": which resets nr_balance_failed";
    }
}

/*
 * The same with the sleeper enqueued on cpu1 directly (NO_TTWU_QUEUE, pinned there), so
 * nr_running, not ttwu_pending, is what MC's should_we_balance() sees. Its reschedule
 * waits for the SMT pass's work (EV_RESCHED defers to idle_busy_until), and the loop's
 * resume, at that instant, comes first (event_prio::task_work before resched).
 */
TEST(sched_balance_newidle,
     from_v6_10_a_wakee_enqueued_during_a_pass_meets_the_next_domains_bail_out)
{
    const mc_after_wakeup v6_6 = mc_when_woken_during_the_smt_pass("6.6", true);
    ASSERT_TRUE(v6_6.woke);
    EXPECT_EQ(v6_6.newidle_count, 0u);
    EXPECT_EQ(v6_6.nr_balance_failed, 3u);
    const mc_after_wakeup m = mc_when_woken_during_the_smt_pass("6.12", true);
    ASSERT_TRUE(m.woke);
    EXPECT_EQ(m.other_counts, 0u);
    EXPECT_EQ(m.newidle_count, 1u);
    EXPECT_EQ(m.newidle_balanced, 1u);
    EXPECT_EQ(m.nr_balance_failed, 0u);
}

/*
 * kernel: newidle_balance() ends with `pulled_task = -1` when `nr_running !=
 * cfs.h_nr_running` (6.18.2: h_nr_queued): a task of a higher class was enqueued while
 * the rq lock was dropped, and pick_next_task_fair()'s RETRY_TASK makes
 * __pick_next_task() pick it. The model never returns -1 for it: the CPU switched to
 * idle at the pass's start, the rt wakee's resched_curr() waits for the pass's work
 * (EV_RESCHED), the loop's resume comes first and stops (6.6) or bails out at MC
 * (6.12), and the reschedule picks the rt task: RETRY_TASK's outcome, when the loop ends.
 * Enqueued directly (NO_TTWU_QUEUE; with the wake list nothing is enqueued during the
 * loop, in the kernel too). cpu1's SMT pass costs 10 us (lb_base).
 */
TEST(sched_balance_newidle, an_rt_task_enqueued_during_a_pass_runs_when_the_pass_is_done)
{
    for (const std::string spec : {"6.6", "6.12"}) {
        newidle_on_cpu1 f(spec + "+NO_TTWU_QUEUE");
        ASSERT_TRUE(f.ready()) << spec;
        sched_fixture& t = f.t;
        kernel& kk = f.kk;
        sched_domain& mc = *f.mc;
        const int sib = f.sib;
        task_opts o;
        o.comm = "rt";
        o.policy = SCHED_FIFO;
        o.rt_priority = 10;
        o.cpu = 1;
        o.allowed = cpumask(4);
        o.allowed.set(1);
        std::vector<sim_time> rt_starts;
        u64 mc_at_start = 0;
        task_struct& rt = kk.spawn(testlib::behaviour([&](syscalls& k, task_struct&) {
                                       rt_starts.push_back(k.now());
                                       if (rt_starts.size() == 2) // what ran before it
                                           mc_at_start = mc.stats.lb_count[CPU_NEWLY_IDLE];
                                       return task_action::sleep();
                                   }),
                                   o);
        bool armed = false; // the sleeper has gone to sleep: cpu1's pass is its
        bool woke = false;
        sim_time woken_at = 0;
        u64 mc_count = 0;
        t.spawn("waker", testlib::behaviour([&](syscalls& k, task_struct&) {
                    if (armed && !woke && kk.cpu_rq(1).in_schedule) {
                        woke = true;
                        woken_at = k.now();
                        mc_count = mc.stats.lb_count[CPU_NEWLY_IDLE];
                        k.wake_up_process(rt);
                    }
                    return task_action::cpu(usecs(1));
                }),
                sib, 0, sib);
        t.run_for(usecs(100));
        ASSERT_TRUE(kk.rd().overload);
        ASSERT_EQ(rt_starts.size(), 1u);
        auto phase = std::make_shared<int>(0);
        t.spawn("sleeper", testlib::behaviour([&, phase](syscalls&, task_struct&) {
                    if ((*phase)++ == 0)
                        return task_action::cpu(usecs(10));
                    kk.cpu_rq(1).avg_idle = msecs(1); // a long expected idle
                    armed = true;
                    return task_action::sleep();
                }),
                1, 0, 1);
        t.run_for(usecs(200));
        ASSERT_TRUE(woke) << spec;
        ASSERT_EQ(rt_starts.size(), 2u) << spec;
        EXPECT_GT(rt_starts[1], woken_at) << spec;
        // 6.12: MC's bail-out is an attempt too, costing its own rq's read only (nothing)
        EXPECT_LE(rt_starts[1] - woken_at, usecs(10)) << spec << ": once the passes are done";
        EXPECT_EQ(mc_at_start - mc_count, spec == "6.6" ? 0u : 1u) << spec;
    }
}

/*
 * newidle_balance() measures a domain's cost as elapsed time, t1 - t0 of
 * sched_clock_cpu() around load_balance() (t0 before update_blocked_averages()
 * for the first domain), so time spent waiting for the busiest CPU's rq lock
 * is part of the max_newidle_lb_cost that gates the next attempts.
 */
TEST(sched_balance_newidle, a_domains_cost_is_the_elapsed_time_including_lock_waits)
{
    auto measured = [](sim_dur lock_busy_for) {
        newidle_case c("tip-2023-08");
        c.base().max_newidle_lb_cost = 0;
        c.rq0().avg_idle = msecs(1);
        rq& busiest = c.t.k->cpu_rq(1);
        busiest.lock.last_cpu = 1;
        busiest.lock.busy_until = c.t.k->now() + lock_busy_for;
        EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 1);
        return c.base().max_newidle_lb_cost;
    };
    const u64 free_lock = measured(0);
    EXPECT_EQ(measured(usecs(50)), free_lock + usecs(50)) << "the 50 us spin is part of the cost";
}

/*
 * Lane faithfix: newidle_balance() (sndrzt/linux-6.5 4f5cdb332210; the same in 5.15.0,
 * 6.1.0, 6.6.87, 6.12.y and 6.18.2's sched_balance_newidle()) drops this rq's lock, reads
 * t0 (5.16+; 5.15 reads it per domain, after) and calls update_blocked_averages(this_cpu),
 * which takes this rq's lock with rq_lock_irqsave(). A waker holding that lock for 50 us
 * (cpu1 its last holder) makes cpu0 spin 50 us there, in the first domain's cost on 6.6 and
 * not on 5.15, charged to cpu0 on both. cpu1's two spinners are pinned there, so the pass
 * pulls nothing and takes no other lock of cpu0's (no attach_tasks()); costs are zero but
 * for the wait. (Checked: on 6.6 the cost and the charge did not move before lane
 * faithfix, which took no lock there.)
 */
struct faithfix_pinned_case {
    sched_fixture t;
    explicit faithfix_pinned_case(const char* kernel) : t(testlib::small_machine(2), kernel)
    {
        t.spawn("a", testlib::spin(), 0, 0, 1);
        t.spawn("b", testlib::spin(), 0, 0, 1);
        t.run_for(msecs(10));
        t.k->set_this_cpu(0);
    }
    sched_domain& base() { return *t.k->topology().cpu(0).sd(); }
    rq& rq0() { return t.k->cpu_rq(0); }
};

struct faithfix_newidle_result {
    u64 cost;    ///< the base domain's max_newidle_lb_cost after the pass
    u64 charged; ///< cpu0's charged_ns during it
};

faithfix_newidle_result faithfix_newidle_with_rq0_held(const char* kernel, sim_dur held_for)
{
    faithfix_pinned_case c(kernel);
    EXPECT_TRUE(c.t.k->rd().overload) << kernel;
    EXPECT_EQ(c.rq0().nr_running, 0u) << kernel;
    c.base().max_newidle_lb_cost = 0;
    c.rq0().avg_idle = msecs(1);
    contended_lock& lock = c.rq0().lock;
    lock.last_cpu = 1; // a waker on cpu1 holds cpu0's rq lock
    lock.busy_until = c.t.k->now() + held_for;
    const u64 acquisitions = lock.acquisitions;
    const u64 before = c.t.k->charges().cpu(0).charged_ns;
    const u64 attempts = c.base().stats.lb_count[CPU_NEWLY_IDLE];
    EXPECT_EQ(sched_balance_newidle(*c.t.k, c.rq0()), 0) << kernel << ": all pinned";
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], attempts + 1) << kernel;
    EXPECT_EQ(c.rq0().nr_running, 0u) << kernel;
    EXPECT_EQ(lock.acquisitions, acquisitions + 2)
        << kernel << ": update_blocked_averages() and the relock after the loop (lane rqlocks)";
    EXPECT_EQ(lock.last_cpu, 0) << kernel;
    return {c.base().max_newidle_lb_cost, c.t.k->charges().cpu(0).charged_ns - before};
}

TEST(sched_balance_newidle, update_blocked_averages_takes_this_rqs_lock_and_waits_for_a_waker)
{
    const sim_dur spin = usecs(50);
    for (const char* kernel : {"6.6", "tip-2023-08", "6.18+NO_NI_RANDOM"}) {
        const faithfix_newidle_result free_lock = faithfix_newidle_with_rq0_held(kernel, 0);
        const faithfix_newidle_result held = faithfix_newidle_with_rq0_held(kernel, spin);
        EXPECT_EQ(held.charged, free_lock.charged + static_cast<u64>(spin)) << kernel;
        EXPECT_EQ(held.cost, free_lock.cost + static_cast<u64>(spin))
            << kernel << ": from 5.16 t0 is read before update_blocked_averages()";
    }
    const faithfix_newidle_result free_lock = faithfix_newidle_with_rq0_held("5.15", 0);
    const faithfix_newidle_result held = faithfix_newidle_with_rq0_held("5.15", spin);
    EXPECT_EQ(held.charged, free_lock.charged + static_cast<u64>(spin)) << "cpu0 still spins";
    EXPECT_EQ(held.cost, free_lock.cost) << "5.15 reads t0 after update_blocked_averages()";
}

/*
 * kernel: newidle_balance() takes this rq's lock again after its domain loop
 * (raw_spin_rq_lock(this_rq): 5.15.0 sndrzt/linux-5.15 75c6ad16ec64, 6.5 sndrzt/linux-6.5
 * 4f5cdb332210, 6.18.2's sched_balance_newidle() gfunkmonk/linux-6.18.2 062668f4d006). cpu1's
 * task sleeps with the root domain overloaded (two tasks pinned to the other core) and
 * avg_idle long: the SMT pass (10 us: lb_base) finds nothing and MC's pass follows it
 * (sched_balance_newidle_resume()). During the SMT pass a CPU of cpu1's core takes cpu1's
 * rq lock for 50 us (a waker's hold, set by hand); the relock after MC's pass waits for
 * it, the wait counted on cpu1's lock and in no domain's cost. Lane rqlocks; before, the
 * relock was not taken (checked: this test failed so, no wait on the lock).
 */
TEST(sched_balance_newidle, the_relock_after_the_loop_waits_for_a_waker_holding_this_rqs_lock)
{
    for (const char* spec : {"5.15", "6.6", "6.18+NO_NI_RANDOM"}) {
        newidle_on_cpu1 f(spec);
        ASSERT_TRUE(f.ready()) << spec;
        sched_fixture& t = f.t;
        kernel& kk = f.kk;
        sched_domain& mc = *f.mc;
        contended_lock& lock = kk.cpu_rq(1).lock;
        bool armed = false; // the sleeper went to sleep: cpu1's SMT pass is under way
        sim_time held_until = 0;
        sim_dur wait_before = 0;
        u64 mc_before = 0;
        t.spawn("holder", testlib::behaviour([&](syscalls& k, task_struct&) {
                    if (armed && !held_until && kk.cpu_rq(1).in_schedule) {
                        wait_before = lock.wait_total;
                        lock.last_cpu = f.sib;
                        held_until = k.now() + usecs(50);
                        lock.busy_until = held_until;
                    }
                    return task_action::cpu(usecs(1));
                }),
                f.sib, 0, f.sib);
        t.run_for(usecs(100));
        ASSERT_TRUE(kk.rd().overload) << spec;
        auto phase = std::make_shared<int>(0);
        t.spawn("sleeper", testlib::behaviour([&, phase](syscalls&, task_struct&) {
                    if ((*phase)++ == 0)
                        return task_action::cpu(usecs(10));
                    kk.cpu_rq(1).avg_idle = msecs(1); // a long expected idle
                    mc_before = mc.stats.lb_count[CPU_NEWLY_IDLE];
                    armed = true;
                    return task_action::sleep();
                }),
                1, 0, 1);
        t.run_for(usecs(200));
        ASSERT_GT(held_until, 0) << spec << ": the lock was taken during the SMT pass";
        EXPECT_EQ(mc.stats.lb_count[CPU_NEWLY_IDLE], mc_before + 1) << spec << ": MC's pass ran";
        EXPECT_EQ(lock.last_cpu, 1) << spec << ": cpu1 took its lock again";
        const sim_dur waited = lock.wait_total - wait_before;
        EXPECT_GT(waited, usecs(30)) << spec << ": the relock waited for the holder";
        EXPECT_LT(waited, usecs(50)) << spec;
        EXPECT_LT(mc.max_newidle_lb_cost, static_cast<u64>(usecs(30)))
            << spec << ": the wait is in no domain's cost";
    }
}

/*
 * kernel: load_balance() runs detach_tasks() under the busiest rq's lock (v6.5), and the
 * dequeue of a migrating task writes tg->load_avg (DO_DETACH, update_tg_load_avg()): a
 * balancer waiting for that line holds the lock meanwhile, so whoever takes it next (the
 * busiest CPU's own schedule(), a waker) waits for the line too. Before, the lock was held
 * for rq_lock_hold whatever the line made the balancer wait (lane tgchurn).
 */
TEST(sched_balance_rq, the_busiest_rqs_lock_is_held_across_the_detachs_tg_load_avg_wait)
{
    auto lock_held_for = [](sim_dur line_busy_for) {
        newidle_case c("tip-2023-08");
        rq& busiest = c.t.k->cpu_rq(1);
        EXPECT_NE(busiest.cfs.tg, nullptr);
        contended_lock& line = busiest.cfs.tg->load_avg_line;
        line.last_cpu = 1; // a transaction of cpu1's on the line, in flight for line_busy_for
        line.busy_until = c.t.k->now() + line_busy_for;
        int continue_balancing = 1;
        EXPECT_EQ(
            sched_balance_rq(*c.t.k, 0, c.rq0(), c.base(), CPU_NEWLY_IDLE, continue_balancing), 1);
        EXPECT_EQ(busiest.lock.last_cpu, 0);
        return busiest.lock.busy_until - c.t.k->now();
    };
    const sim_dur free_line = lock_held_for(0);
    EXPECT_EQ(lock_held_for(usecs(50)), free_line + usecs(50))
        << "the detach's 50 us wait for the line is inside the busiest rq's lock";
}

TEST(update_newidle_stats, halves_its_window_every_1024_attempts_and_keeps_the_success_count_as_ratio)
{
    sched_domain sd; // sd_init's start: 512 attempts, 256 successes, ratio 512 (50%)
    for (int i = 0; i < 511; ++i)
        update_newidle_stats(sd, 0);
    EXPECT_EQ(sd.newidle_call, 1023u);
    EXPECT_EQ(sd.newidle_ratio, 512u) << "unchanged until the 1024th attempt";
    update_newidle_stats(sd, 0);
    EXPECT_EQ(sd.newidle_ratio, 256u);
    EXPECT_EQ(sd.newidle_call, 512u);
    EXPECT_EQ(sd.newidle_success, 128u);
    for (int i = 0; i < 512; ++i)
        update_newidle_stats(sd, 2); // every attempt succeeds, weighted 2
    EXPECT_EQ(sd.newidle_ratio, 128u + 1024u);
}

/// How many of `n` newly-idle balances (each on a fresh case, seeds 1..n) reach the
/// load balancer when the base domain's newidle_ratio is `ratio`.
int newidle_attempts(const char* kernel, u32 ratio, int n)
{
    int attempts = 0;
    for (int seed = 1; seed <= n; ++seed) {
        newidle_case c(kernel, static_cast<u64>(seed));
        c.base().max_newidle_lb_cost = 0;
        c.base().newidle_ratio = ratio;
        c.rq0().avg_idle = msecs(1);
        sched_balance_newidle(*c.t.k, c.rq0());
        attempts += static_cast<int>(c.base().stats.lb_count[CPU_NEWLY_IDLE]);
    }
    return attempts;
}

TEST(sched_balance_newidle, ni_random_balances_a_domain_with_its_recent_success_rate)
{
    // 6.18 (NI_RANDOM): a 1024-sided die against 1 + newidle_ratio.
    EXPECT_EQ(newidle_attempts("6.18", 1023, 200), 200) << "a 100% ratio never skips";
    const int at_zero = newidle_attempts("6.18", 0, 200);
    EXPECT_LE(at_zero, 6) << "a 0% ratio passes only on die rolls 0 and 1 (2 in 1024)";
    const int at_half = newidle_attempts("6.18", 511, 200);
    EXPECT_GT(at_half, 70);
    EXPECT_LT(at_half, 130);
    EXPECT_EQ(newidle_attempts("6.12", 0, 50), 50) << "6.12 has no NI_RANDOM: the ratio is unused";
    EXPECT_EQ(newidle_attempts("6.18+NO_NI_RANDOM", 0, 50), 50);
}

TEST(sched_balance_newidle, ni_random_counts_a_pull_for_the_attempts_it_skipped)
{
    // With ratio 511 an attempt is made half the time, so a pull counts (1024 + 256) / 512 = 2.
    for (u64 seed = 1; seed < 50; ++seed) {
        newidle_case c("6.18", seed);
        c.base().max_newidle_lb_cost = 0;
        c.base().newidle_ratio = 511;
        c.rq0().avg_idle = msecs(1);
        const u32 calls = c.base().newidle_call, successes = c.base().newidle_success;
        const int pulled = sched_balance_newidle(*c.t.k, c.rq0());
        EXPECT_EQ(c.base().newidle_call, calls + 1) << "a skip is an attempt too";
        if (c.base().stats.lb_count[CPU_NEWLY_IDLE] == 0) {
            EXPECT_EQ(pulled, 0);
            EXPECT_EQ(c.base().newidle_success, successes);
            continue;
        }
        EXPECT_EQ(pulled, 1);
        EXPECT_EQ(c.base().newidle_success, successes + 2);
        return;
    }
    FAIL() << "no seed in 1..49 rolled an attempt at a 50% ratio";
}

TEST(update_newidle_cost, takes_a_new_maximum_and_decays_by_253_256_per_second)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    sched_domain& sd = *t.k->topology().cpu(0).sd();
    EXPECT_FALSE(update_newidle_cost(*t.k, sd, 25600));
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u);
    EXPECT_FALSE(update_newidle_cost(*t.k, sd, 100)) << "no decay within the second";
    t.run_for(msecs(1100)); // nothing runs: no balancing touches the domain meanwhile
    EXPECT_TRUE(update_newidle_cost(*t.k, sd, 0));
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u * 253 / 256);
}

TEST(newidle_ops, the_profile_chooses_the_version)
{
    EXPECT_STREQ(newidle_case("5.15").t.k->lb().newidle().name, "5.15");
    for (const char* kernel : {"6.1", "6.6", "6.12"})
        EXPECT_STREQ(newidle_case(kernel).t.k->lb().newidle().name, "5.16") << kernel;
}

TEST(newidle_ops, the_gates_differ_as_the_versions_do)
{
    newidle_case c("6.6");
    ASSERT_TRUE(c.t.k->rd().overload);
    sched_domain& sd = c.base();
    sd.max_newidle_lb_cost = usecs(400);
    c.rq0().avg_idle = usecs(300); // below the domain's cost, below migration_cost (0.5 ms)
    EXPECT_EQ(newidle_5_15_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::closed);
    EXPECT_EQ(newidle_5_16_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::closed);
    EXPECT_EQ(newidle_5_16_ops.gate(*c.t.k, c.rq0(), nullptr), newidle_gate::open)
        << "5.16 without a gate domain gates on the overload only";
    c.rq0().avg_idle = usecs(450); // above the domain's cost, below migration_cost
    EXPECT_EQ(newidle_5_15_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::closed);
    EXPECT_EQ(newidle_5_16_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::open);
    c.rq0().avg_idle = usecs(600); // above both
    EXPECT_EQ(newidle_5_15_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::open);
    c.t.k->rd().overload = false;
    EXPECT_EQ(newidle_5_15_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::closed);
    EXPECT_EQ(newidle_5_16_ops.gate(*c.t.k, c.rq0(), &sd), newidle_gate::closed);
}

TEST(newidle_ops, 5_15_keeps_the_maximum_until_rebalance_decays_it_5_16_decays_on_its_own)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    sched_domain& sd = *t.k->topology().cpu(0).sd();
    newidle_5_15_ops.record_cost(*t.k, sd, 25600);
    t.run_for(msecs(1100)); // nothing runs: no balancing touches the domain meanwhile
    newidle_5_15_ops.record_cost(*t.k, sd, 100);
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u) << "5.15 only ever raises it here";
    newidle_5_16_ops.record_cost(*t.k, sd, 100);
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u * 253 / 256) << "update_newidle_cost() decays it";

    sd.max_newidle_lb_cost = 25600;
    sd.last_decay_max_lb_cost = 0; // 5.15: next_decay_max_lb_cost, passed
    bool need_decay = false;
    newidle_5_15_ops.decay(*t.k, sd, need_decay);
    EXPECT_TRUE(need_decay);
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u * 253 / 256);
    EXPECT_GT(sd.last_decay_max_lb_cost, 0u) << "the next decay a second later";
    newidle_5_15_ops.decay(*t.k, sd, need_decay);
    EXPECT_TRUE(need_decay) << "5.15's need_decay stays set for the later domains";
    newidle_5_16_ops.decay(*t.k, sd, need_decay);
    EXPECT_FALSE(need_decay) << "5.16's is the domain's own: no decay due";
}

TEST(root_domain_overload, is_set_by_a_second_task_and_cleared_only_by_top_level_balancing)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    EXPECT_FALSE(t.k->rd().overload);
    t.spawn("a", testlib::spin(), 0, 0, 0);
    t.spawn("short", testlib::run_sleep(msecs(2), 1, 1), 0, 0, 0);
    t.run_for(usecs(100));
    EXPECT_TRUE(t.k->rd().overload);
    t.run_for(msecs(8)); // "short" has exited: one task per CPU at most
    EXPECT_TRUE(t.k->rd().overload) << "sticky until the top level balances";
    t.run_for(msecs(200)); // cpu0's busy periodic balance of the only (top) level: 2 ms x 16
    EXPECT_FALSE(t.k->rd().overload);
}

/// A balance of cpu0's lowest domain pulling from cpu1.
lb_env pull_from_cpu1_to_cpu0(sched_fixture& t, cpu_idle_type idle)
{
    lb_env env;
    env.sd = t.k->topology().cpu(0).sd();
    env.src_rq = &t.k->cpu_rq(1);
    env.dst_rq = &t.k->cpu_rq(0);
    env.src_cpu = 1;
    env.dst_cpu = 0;
    env.idle = idle;
    return env;
}

struct hot_case {
    sched_fixture t;
    task_struct* p;
    lb_env env;
    explicit hot_case(machine m, const char* profile = "6.6") : t(std::move(m), profile)
    {
        p = &t.spawn("p", testlib::spin(), 0, 0, 1);
        t.spawn("q", testlib::spin(), 0, 0, 1);
        t.run_for(msecs(10));
        for (auto& task : t.k->tasks()) { // placed on cpu1; now allowed anywhere
            task->cpus_mask.set_all();
            task->nr_cpus_allowed = task->cpus_mask.weight();
        }
        env = pull_from_cpu1_to_cpu0(t, CPU_IDLE);
    }
};

TEST(task_hot, a_task_that_ran_within_migration_cost_is_hot)
{
    hot_case c(testlib::small_machine(2));
    const u64 now = c.env.src_rq->clock_task;
    c.p->se.exec_start = now - usecs(100);
    EXPECT_EQ(task_hot(*c.t.k, *c.p, c.env), 1);
    c.p->se.exec_start = now - usecs(600);
    EXPECT_EQ(task_hot(*c.t.k, *c.p, c.env), 0);
}

/*
 * kernel: fair.c migrate_task_rq_fair(), 6.5 / 6.6, ends with se->exec_start = 0 ("we
 * have migrated, no longer consider this task hot"): a wakee that try_to_wake_up() moved
 * (set_task_cpu()) is cold to the next load balance, however recently it ran, so any
 * newly-idle pass may pull it on. By hand: p last ran 90 us ago, hot (90 us <
 * migration_cost 500 us); after the move it is not. (The rule only: which passes pull
 * such tasks in a given run, and whether that matters there, is for a trace of that run.)
 */
// p runs `run` on cpu1 from the start and sleeps; at `at` newly-idle cpu0 looks at cpu1.
struct slept_case {
    sched_fixture t;
    task_struct* p;
    lb_env env;
    slept_case(sim_dur run, sim_dur at) : t(testlib::small_machine(2), "6.6")
    {
        p = &t.spawn("p", testlib::run_sleep(run, secs(10)), 1, 0, 1);
        t.run_for(at);
        EXPECT_FALSE(task_on_rq_queued(*p));
        env = pull_from_cpu1_to_cpu0(t, CPU_NEWLY_IDLE);
        t.k->update_rq_clock(*env.src_rq);
    }
};

TEST(task_hot, a_task_a_wakeup_has_just_moved_is_cold)
{
    slept_case c(usecs(10), msecs(2));
    c.p->se.exec_start = c.env.src_rq->clock_task - usecs(90);
    ASSERT_EQ(task_hot(*c.t.k, *c.p, c.env), 1) << "ran 90 us ago";
    migrate_task_rq_fair(*c.t.k, *c.p, 0);
    EXPECT_EQ(c.p->se.exec_start, 0u);
    EXPECT_EQ(task_hot(*c.t.k, *c.p, c.env), 0);
}

/*
 * The same from a run's first microseconds: the kernel's rq clock is sched_clock() since
 * boot, so task_hot()'s now - exec_start with exec_start = 0 is the machine's uptime, far
 * beyond migration_cost (500 us), whenever the benchmark starts. By hand (6.6 fair.c
 * task_hot(), migrate_task_rq_fair()): p runs from 0 to 50 us on cpu1 and sleeps; at
 * 100 us it is hot (it ran 50-100 us ago); after the move it is cold, and so is a task
 * forked but never run (exec_start still 0). A clock starting at 0 read both as hot
 * until 500 us.
 */
TEST(task_hot, a_zeroed_exec_start_is_cold_at_the_start_of_a_run)
{
    slept_case c(usecs(50), usecs(100));
    ASSERT_EQ(task_hot(*c.t.k, *c.p, c.env), 1) << "ran within the last 100 us";
    migrate_task_rq_fair(*c.t.k, *c.p, 0);
    ASSERT_EQ(c.p->se.exec_start, 0u);
    EXPECT_EQ(task_hot(*c.t.k, *c.p, c.env), 0) << "now - 0 is the uptime";
    EXPECT_GE(c.env.src_rq->clock_task, SCHED_CLOCK_AT_START + usecs(100));
    task_struct never_ran;
    EXPECT_EQ(task_hot(*c.t.k, never_ran, c.env), 0) << "a new task's exec_start is 0 too";
}

TEST(task_hot, smt_siblings_share_the_cache_so_nothing_is_hot)
{
    hot_case c(testlib::small_machine(1, 2)); // cpus 0 and 1 are SMT siblings
    ASSERT_TRUE(c.env.sd->has(SD_SHARE_CPUCAPACITY));
    c.p->se.exec_start = c.env.src_rq->clock_task - usecs(10);
    EXPECT_EQ(task_hot(*c.t.k, *c.p, c.env), 0);
}

TEST(task_hot, buddies_are_hot_with_cache_hot_buddy)
{
    hot_case c(testlib::small_machine(2));
    c.p->se.exec_start = c.env.src_rq->clock_task - msecs(5);
    c.env.src_rq->cfs.next = &c.p->se;
    c.t.spawn("dst-busy", testlib::spin(), 0, 0, 0);
    c.t.k->set_this_cpu(0);
    ASSERT_GT(c.env.dst_rq->nr_running, 0u);
    EXPECT_EQ(task_hot(*c.t.k, *c.p, c.env), 1);
    c.env.src_rq->cfs.next = nullptr;
}

TEST(can_migrate_task, a_hot_task_moves_once_balancing_failed_cache_nice_tries_times)
{
    hot_case c(testlib::small_machine(2));
    task_struct* waiting = c.env.src_rq->curr == c.p ? c.env.src_rq->cfs_tasks.back() : c.p;
    ASSERT_NE(waiting, c.env.src_rq->curr);
    c.p = waiting;
    c.p->se.exec_start = c.env.src_rq->clock_task - usecs(100);
    c.env.sd->nr_balance_failed = c.env.sd->cache_nice_tries;
    EXPECT_EQ(can_migrate_task(*c.t.k, *c.p, c.env), 0);
    c.env.sd->nr_balance_failed = c.env.sd->cache_nice_tries + 1;
    const u64 before = c.env.sd->stats.lb_hot_gained[CPU_IDLE];
    EXPECT_EQ(can_migrate_task(*c.t.k, *c.p, c.env), 1);
    EXPECT_EQ(c.env.sd->stats.lb_hot_gained[CPU_IDLE], before + 1);
}

// detach_tasks() for migrate_util: shr_bound(util, nr_balance_failed) > imbalance skips a task.
/*
 * kernel: fair.c detach_tasks(), migrate_util. Read in the trees: 6.12.10 (wishday/linux-6.12.y)
 * and 6.18.2 (gfunkmonk/linux-6.18.2) skip a task while shr_bound(util, nr_balance_failed)
 * exceeds the imbalance, as for migrate_load; 5.15.0, 6.1-rc7, 6.5 (sndrzt/linux-6.5) and
 * 6.6.87 skip it while util itself exceeds it, however many balances failed. By hand: the
 * waiting task's util u > 64, the imbalance u >> 3 and nr_balance_failed 2 or 3 (above
 * cache_nice_tries, so hotness is no obstacle): 6.12 skips at 2 (u >> 2 > u >> 3) and takes
 * at 3 (u >> 3 fits); 6.5 and 6.6 skip at both (u > u >> 3), and take it once the imbalance
 * is u.
 */
int detached_for_util(const char* profile, u32 failed, int imbalance_shift)
{
    hot_case c(testlib::small_machine(2), profile);
    task_struct* waiting = c.env.src_rq->cfs_tasks.back();
    EXPECT_NE(waiting, c.env.src_rq->curr);
    const unsigned long u = task_util_est(*waiting);
    EXPECT_GT(u, 64u);
    c.env.migration_type_ = migrate_util;
    c.env.imbalance = static_cast<long>(u >> imbalance_shift);
    c.env.loop_max = 2;
    c.env.loop_break = 32;
    c.env.sd->nr_balance_failed = failed;
    c.t.k->set_this_cpu(0);
    c.t.k->update_rq_clock(*c.env.src_rq);
    return detach_tasks(*c.t.k, c.env);
}

TEST(detach_tasks, migrate_util_relaxes_its_bound_with_failed_balances_from_6_12)
{
    EXPECT_EQ(detached_for_util("6.12", 2, 3), 0) << "util >> 2 is above the imbalance";
    EXPECT_EQ(detached_for_util("6.12", 3, 3), 1) << "util >> 3 fits";
}

TEST(detach_tasks, migrate_util_compares_the_whole_util_up_to_6_6)
{
    for (const char* profile : {"6.5", "tip-2023-08", "6.6", "6.1", "5.15"}) {
        EXPECT_EQ(detached_for_util(profile, 3, 3), 0) << profile << ": util > util >> 3";
        EXPECT_EQ(detached_for_util(profile, 8, 3), 0) << profile << ": failures do not relax it";
        EXPECT_EQ(detached_for_util(profile, 3, 0), 1) << profile << ": util fits an imbalance of util";
    }
}

/*
 * The scene of the attach-order and loop_max tests: three spinners on cpu1 of two CPUs (one
 * running, two waiting), 10 ms in, and an idle cpu0 that pulls up to `imbalance` tasks by
 * count (migrate_task) looking at most at `loop_max` of them, with nr_balance_failed above
 * cache_nice_tries so hotness is no obstacle. detach_tasks() is the caller's to run.
 */
void spin_three_on_cpu1(sched_fixture& t)
{
    for (int i = 0; i < 3; ++i)
        t.spawn(fmt::format("s{}", i), testlib::spin(), 1, 0, 1);
    t.run_for(msecs(10));
}

lb_env idle_cpu0_pulls_tasks(sched_fixture& t, long imbalance, unsigned loop_max)
{
    lb_env env = pull_from_cpu1_to_cpu0(t, CPU_IDLE);
    env.migration_type_ = migrate_task;
    env.imbalance = imbalance;
    env.loop_max = loop_max;
    env.loop_break = 32;
    env.sd->nr_balance_failed = env.sd->cache_nice_tries + 1;
    t.k->set_this_cpu(0);
    t.k->update_rq_clock(*env.src_rq);
    return env;
}

/*
 * kernel: fair.c detach_tasks() / attach_tasks() (read at 6.5, sndrzt/linux-6.5; the same in
 * 5.15.0 and 6.1-rc7): each detached task is list_add()ed at the head of env->tasks, and
 * attach_tasks() attaches list_first_entry() until the list is empty, so the last one
 * detached is attached first; activate_task() list_add()s each at the head of the
 * destination's cfs_tasks. By hand: three spinners on cpu1, a periodic idle balance
 * (CPU_IDLE: no one-task break) asks for two (migrate_task); detach_tasks() takes cfs_tasks'
 * tail p1, then the next p2; attach_tasks() enqueues p2, then p1, so cpu0's cfs_tasks reads
 * p1, p2 from the head.
 */
TEST(attach_tasks, attaches_the_last_detached_task_first)
{
    sched_fixture t(testlib::small_machine(2), "6.5");
    spin_three_on_cpu1(t);
    for (auto& task : t.k->tasks()) {
        task->cpus_mask.set_all();
        task->nr_cpus_allowed = task->cpus_mask.weight();
    }
    lb_env env = idle_cpu0_pulls_tasks(t, 2, 3);
    ASSERT_EQ(detach_tasks(*t.k, env), 2);
    ASSERT_EQ(env.tasks.size(), 2u);
    task_struct* p1 = env.tasks[0];
    task_struct* p2 = env.tasks[1];
    attach_tasks(*t.k, env);
    const std::list<task_struct*>& dst = t.k->cpu_rq(0).cfs_tasks;
    ASSERT_EQ(dst.size(), 2u);
    EXPECT_EQ(dst.front(), p1) << "the first detached is attached last: at the head";
    EXPECT_EQ(dst.back(), p2);
}

/*
 * kernel: fair.c detach_tasks()'s loop_max test. 6.1-rc7 and 6.5 (b0defa7ae03e, v6.0) break
 * at loop > loop_max only once a task allowed on dst was seen (!LBF_ALL_PINNED); 5.15.0 and,
 * after the revert 2feab2492deb (v6.10-rc7), 6.12 and 6.18.2 break there regardless. By hand:
 * three spinners on cpu1, the two waiting ones at cfs_tasks' tail; the tail one is pinned to
 * cpu1, the next allowed anywhere; loop_max 1, migrate_task 1, nr_balance_failed above
 * cache_nice_tries (hotness no obstacle). loop 1: the tail task is pinned away, LBF_ALL_PINNED
 * stays, it rotates to the head; loop 2 > loop_max: 6.5 goes on (all pinned so far) and
 * detaches the allowed task; 5.15 / 6.12 stop with none.
 */
int detached_past_loop_max(const char* profile)
{
    sched_fixture t(testlib::small_machine(2), profile);
    spin_three_on_cpu1(t);
    std::list<task_struct*>& tasks = t.k->cpu_rq(1).cfs_tasks;
    EXPECT_EQ(tasks.size(), 3u);
    task_struct* allowed = *std::prev(tasks.end(), 2);
    EXPECT_NE(allowed, t.k->cpu_rq(1).curr);
    EXPECT_NE(tasks.back(), t.k->cpu_rq(1).curr);
    allowed->cpus_mask.set_all();
    allowed->nr_cpus_allowed = allowed->cpus_mask.weight();
    lb_env env = idle_cpu0_pulls_tasks(t, 1, 1);
    env.flags = LBF_ALL_PINNED;
    return detach_tasks(*t.k, env);
}

TEST(detach_tasks, goes_past_loop_max_while_all_pinned_from_6_1_to_6_6)
{
    for (const char* profile : {"6.5", "tip-2023-08", "6.1", "6.6"})
        EXPECT_EQ(detached_past_loop_max(profile), 1) << profile;
    for (const char* profile : {"5.15", "6.12", "6.18"})
        EXPECT_EQ(detached_past_loop_max(profile), 0) << profile;
}

TEST(sched_balance_rq, periodic_balancing_spreads_pinned_then_released_tasks)
{
    // Eight spinners start on cpu0 of a 4-CPU machine; once allowed anywhere,
    // idle and periodic balancing must spread them to two per CPU.
    sched_fixture t(testlib::small_machine(4), "6.6");
    std::vector<task_struct*> ts;
    for (int i = 0; i < 8; ++i)
        ts.push_back(&t.spawn(fmt::format("s{}", i), testlib::spin(), 0, 0, 0));
    t.run_for(msecs(5));
    for (auto* p : ts) {
        p->cpus_mask.set_all();
        p->nr_cpus_allowed = 4;
    }
    t.run_for(msecs(300));
    for (int cpu = 0; cpu < 4; ++cpu)
        EXPECT_EQ(t.k->cpu_rq(cpu).nr_running, 2u) << t.k->dump_state();
}

/*
 * Active balancing, by hand from load_balance() (6.1-6.5 fair.c; docs/kernel-map.md).
 * Two cores x SMT2. Two spinners run on the two siblings of core 0 (one task each),
 * core 1 idles. From core 1's first CPU, MC's load_balance(CPU_IDLE) finds core 0
 * has_spare with prefer_sibling and 2 > 0 + 1 tasks: force_balance, migrate_task,
 * imbalance (2 - 0) >> 1 = 1; find_busiest_queue() picks a CPU with one task, so
 * detach_tasks() has nothing to take (nr_running <= 1): lb_failed, and
 * nr_balance_failed++ (a periodic balance). need_active_balance() holds once
 * nr_balance_failed > cache_nice_tries + 2 = 3, at the 4th attempt.
 */
struct active_case {
    sched_fixture t;
    int dst = -1;
    sched_domain* mc = nullptr;
    std::vector<task_struct*> spinners;
    explicit active_case(bool keep_pinned) : t(testlib::small_machine(2, 2), "tip-2023-08")
    {
        const cpumask core0 = t.k->charges().cm().smt_mask(0);
        for_each_cpu(cpu, core0)
            spinners.push_back(&t.spawn(fmt::format("s{}", cpu), testlib::spin(), cpu, 0, cpu));
        t.run_for(msecs(20));
        if (!keep_pinned)
            for (auto* p : spinners) {
                p->cpus_mask.set_all();
                p->nr_cpus_allowed = p->cpus_mask.weight();
            }
        for (int cpu = 0; cpu < t.k->nr_cpu_ids(); ++cpu)
            if (!core0.test(cpu)) {
                dst = cpu; // the first CPU of core 1: its group's first idle CPU
                break;
            }
        mc = t.k->topology().cpu(dst).sd_llc;
        // NOHZ idle balancing failed the same way meanwhile: start the count afresh.
        mc->nr_balance_failed = 0;
        mc->balance_interval = mc->min_interval;
        mc->stats = {};
        t.k->set_this_cpu(dst);
    }
    /// Four failed balances kick the stopper; returns the CPU it runs on (find_busiest_queue()'s
    /// choice: the first CPU of core 0).
    int fail_until_active_balance()
    {
        for (int i = 0; i < 4; ++i)
            balance();
        int busiest = -1;
        for_each_cpu(cpu, t.k->charges().cm().smt_mask(0))
            if (busiest < 0)
                busiest = cpu;
        return busiest;
    }
    int balance()
    {
        int cont = 1;
        return sched_balance_rq(*t.k, dst, t.k->cpu_rq(dst), *mc, CPU_IDLE, cont);
    }
};

TEST(sched_balance_rq, an_active_balance_leaves_nr_balance_failed_counting_and_resets_the_interval)
{
    active_case c(false);
    ASSERT_EQ(c.mc->cache_nice_tries, 1u);
    for (int i = 1; i <= 3; ++i) {
        EXPECT_EQ(c.balance(), 0);
        EXPECT_EQ(c.mc->nr_balance_failed, static_cast<u32>(i));
    }
    EXPECT_EQ(c.mc->stats.alb_count, 0u);
    c.mc->balance_interval = 4 * c.mc->min_interval;
    EXPECT_EQ(c.balance(), 0);
    EXPECT_EQ(c.mc->stats.lb_failed[CPU_IDLE], 4u);
    // v5.13+ (23fb06d9602b): not forced to cache_nice_tries + 1 = 2 any more, so
    // need_active_balance() still holds after the kick and the interval is reset.
    EXPECT_EQ(c.mc->nr_balance_failed, 4u);
    EXPECT_EQ(c.mc->balance_interval, c.mc->min_interval);
    c.t.run_for(usecs(1)); // the stopper runs on the busiest CPU
    EXPECT_EQ(c.mc->stats.alb_pushed, 1u);
    EXPECT_EQ(c.mc->nr_balance_failed, 0u) << "active_load_balance_cpu_stop() resets it";
    EXPECT_EQ(c.t.k->cpu_rq(c.dst).nr_running, 1u);
}

TEST(sched_balance_rq, a_pinned_running_task_takes_out_one_pinned_and_backs_off)
{
    active_case c(true);
    for (int i = 0; i < 3; ++i)
        c.balance();
    ASSERT_EQ(c.mc->balance_interval, c.mc->min_interval);
    // The busiest CPU's running task may not run on dst: out_one_pinned. No stopper,
    // no interval reset; a periodic balance doubles it (LBF_ALL_PINNED is still set).
    EXPECT_EQ(c.balance(), 0);
    EXPECT_EQ(c.mc->stats.lb_failed[CPU_IDLE], 4u);
    EXPECT_EQ(c.mc->nr_balance_failed, 4u);
    EXPECT_EQ(c.mc->balance_interval, 2 * c.mc->min_interval);
    EXPECT_EQ(c.balance(), 0);
    EXPECT_EQ(c.mc->nr_balance_failed, 5u);
    EXPECT_EQ(c.mc->balance_interval, 4 * c.mc->min_interval);
    c.t.run_for(usecs(1));
    EXPECT_EQ(c.mc->stats.alb_count, 0u);
}

TEST(active_load_balance_cpu_stop, moves_the_least_recently_run_task_that_may_move)
{
    active_case c(false);
    // Which CPU got the stopper: find_busiest_queue()'s choice.
    const int busiest = c.fail_until_active_balance();
    rq& b = c.t.k->cpu_rq(busiest);
    task_struct* running = b.curr;
    ASSERT_FALSE(running->is_idle_task());
    // A second task on the busiest CPU that ran before the running one (the tail of
    // cfs_tasks): detach_one_task() walks from the tail, so it is the one pushed.
    task_struct& older = c.t.spawn("older", testlib::spin(), busiest, 0, busiest);
    older.cpus_mask.set_all();
    older.nr_cpus_allowed = older.cpus_mask.weight();
    c.t.k->set_this_cpu(c.dst);
    ASSERT_EQ(older.cpu, busiest);
    b.cfs_tasks.splice(b.cfs_tasks.end(), b.cfs_tasks, older.group_node);
    c.t.run_for(usecs(1));
    EXPECT_EQ(c.mc->stats.alb_pushed, 1u);
    EXPECT_EQ(older.cpu, c.dst);
    EXPECT_EQ(running->cpu, busiest) << "the preempted task stays";
}

/*
 * kernel: active_load_balance_cpu_stop() takes the busiest rq's lock (rq_lock_irq()) and,
 * after detach_one_task(), attach_one_task() takes the target's (rq_lock()): 6.5
 * sndrzt/linux-6.5 4f5cdb332210, 6.18.2 gfunkmonk/linux-6.18.2 062668f4d006. The target's
 * lock is held 50 us more by the target CPU when the stopper runs: the stopper's CPU waits
 * for it before the enqueue, and takes both locks. Lane rqlocks; before, neither lock was
 * taken (checked: this test failed so, no acquisition and no wait).
 */
TEST(active_load_balance_cpu_stop, takes_the_busiest_rqs_lock_then_waits_for_the_targets)
{
    active_case c(false);
    const int busiest = c.fail_until_active_balance();
    contended_lock& target = c.t.k->cpu_rq(c.dst).lock;
    contended_lock& source = c.t.k->cpu_rq(busiest).lock;
    target.last_cpu = c.dst;
    target.busy_until = c.t.k->now() + usecs(50);
    const sim_dur waited = target.wait_total;
    const u64 source_taken = source.acquisitions;
    c.t.run_for(usecs(1)); // the stopper runs on the busiest CPU
    ASSERT_EQ(c.mc->stats.alb_pushed, 1u);
    EXPECT_GT(target.wait_total - waited, usecs(48))
        << "attach_one_task()'s rq_lock() waited for the target's 50 us hold";
    EXPECT_EQ(source.acquisitions, source_taken + 2)
        << "rq_lock_irq(busiest_rq), then the busiest CPU's __schedule()";
}

/// update_sd_lb_stats() of `domain` seen from an idle `dst`, as load_balance(CPU_IDLE) sees it.
sd_lb_stats lb_stats(kernel& k, sched_domain& domain, int dst)
{
    lb_env env;
    env.sd = &domain;
    env.dst_cpu = dst;
    env.dst_rq = &k.cpu_rq(dst);
    env.idle = CPU_IDLE;
    env.cpus = &k.lb().load_balance_mask(dst);
    *env.cpus = domain.span;
    sd_lb_stats sds;
    k.set_this_cpu(dst);
    update_sd_lb_stats(k, env, sds);
    return sds;
}

// The other SMT thread of `cpu`'s core.
int sibling_of(sched_fixture& t, int cpu)
{
    for_each_cpu(i, t.k->charges().cm().smt_mask(cpu)) if (i != cpu) return i;
    return -1;
}

/*
 * 6.6's group_smt_balance (fee1759e4f04, in tip sched/core from 2023-07-13, so in
 * tip-2023-08): seen by an idle CPU, an SMT core running more than one task is
 * its own group type, above fully_busy, and asks for one task (migrate_task).
 */
TEST(update_sg_lb_stats, an_smt_core_with_two_tasks_is_group_smt_balance_from_6_6_and_tip_2023_08)
{
    auto busiest_type = [](const char* spec) {
        sched_fixture t(testlib::small_machine(2, 2), spec);
        for_each_cpu(cpu, t.k->charges().cm().smt_mask(0))
            t.spawn(fmt::format("s{}", cpu), testlib::spin(), cpu, 0, cpu);
        t.run_for(msecs(400)); // util ~1024: the core has no spare capacity left
        int dst = 0;
        while (t.k->charges().cm().smt_mask(0).test(dst))
            ++dst;
        const sd_lb_stats sds = lb_stats(*t.k, *t.k->topology().cpu(dst).sd_llc, dst);
        return sds.busiest_stat.group_type_;
    };
    EXPECT_EQ(busiest_type("tip-2023-08"), group_smt_balance);
    EXPECT_EQ(busiest_type("6.6"), group_smt_balance);
    EXPECT_EQ(busiest_type("6.5"), group_fully_busy);
}

/*
 * update_sd_pick_busiest() among fully busy groups of equal avg_load (0: not
 * computed for them): before 6.5 the first stays ("<="); from 6.5 (5fd6d7f43958)
 * a later one replaces a busiest group that is not an SMT group.
 */
TEST(update_sd_pick_busiest, equal_fully_busy_groups_keep_the_first_before_6_5)
{
    auto busiest_first_cpu = [](const char* spec) {
        sched_fixture t(testlib::small_machine(4), spec);
        for (int cpu = 0; cpu < 3; ++cpu)
            t.spawn(fmt::format("s{}", cpu), testlib::spin(), cpu, 0, cpu);
        t.run_for(msecs(400));
        const sd_lb_stats sds = lb_stats(*t.k, *t.k->topology().cpu(3).sd(), 3);
        EXPECT_EQ(sds.busiest_stat.group_type_, group_fully_busy) << spec;
        return sds.busiest ? sds.busiest->span.first() : -1;
    };
    EXPECT_EQ(busiest_first_cpu("6.1"), 0);
    EXPECT_EQ(busiest_first_cpu("tip-2023-02"), 0);
    EXPECT_EQ(busiest_first_cpu("6.5"), 2);
    EXPECT_EQ(busiest_first_cpu("6.6"), 2);
}

/*
 * kernel: fair.c update_sd_pick_busiest(), case group_smt_balance. 450e749707bc ("sched/fair:
 * Fix SMT4 group_smt_balance handling", tip sched/urgent 2023-09-13, v6.6-rc2; read at
 * 6.6.87): when either SMT group has an idle CPU, the has_spare rule picks (fewest idle
 * CPUs, then most tasks); without it (fee1759e4f04 as in tip-2023-08) the case falls
 * through to fully_busy's. By hand, three cores x SMT2 seen by an idle CPU of core 2 at MC:
 * core 0 runs two tasks pinned to cpu0 (its sibling idle), core 1 one on each of its CPUs;
 * both are group_smt_balance (an SMT group with more than one task, seen by an idle CPU;
 * neither overloaded: 2 tasks on 2 CPUs). Core 0 comes first and is picked (above has_spare); for
 * core 1, tip-2023-08 compares avg_load, 0 = 0 (computed for overloaded groups only), and
 * keeps the busiest SMT group: core 0; 6.6 goes to has_spare as core 0 has an idle CPU:
 * core 1 has fewer idle CPUs (0 < 1) and replaces it.
 */
TEST(update_sd_pick_busiest, smt_balance_groups_with_an_idle_cpu_compare_as_has_spare_from_6_6)
{
    auto busiest_first_cpu = [](const char* spec) {
        sched_fixture t(testlib::small_machine(3, 2), spec);
        const cpumask& a = t.k->charges().cm().smt_mask(0);
        int b = 1;
        while (a.test(b))
            ++b;
        int dst = b + 1;
        while (a.test(dst) || t.k->charges().cm().smt_mask(b).test(dst))
            ++dst;
        t.spawn("a", testlib::spin(), 0, 0, 0);
        t.spawn("b", testlib::spin(), 0, 0, 0);
        t.spawn("c", testlib::spin(), b, 0, b);
        const int sb = sibling_of(t, b);
        t.spawn("d", testlib::spin(), sb, 0, sb);
        t.run_for(msecs(50));
        sched_domain& mc = *t.k->topology().cpu(dst).sd_llc;
        // the kernel's group list starts at dst's group and wraps: core 0's group before b's
        std::vector<int> order;
        for (const sched_group& g : mc.groups)
            order.push_back(g.span.first());
        EXPECT_LT(std::find(order.begin(), order.end(), 0), std::find(order.begin(), order.end(), b))
            << spec;
        const sd_lb_stats sds = lb_stats(*t.k, mc, dst);
        EXPECT_EQ(sds.busiest_stat.group_type_, group_smt_balance) << spec;
        return sds.busiest ? (sds.busiest->span.test(0) ? 0 : 1) : -1;
    };
    EXPECT_EQ(busiest_first_cpu("tip-2023-08"), 0) << "core 0 kept";
    EXPECT_EQ(busiest_first_cpu("6.6"), 1) << "the core without an idle CPU";
    EXPECT_EQ(busiest_first_cpu("6.12"), 1);
}

/*
 * should_we_balance() with b1bfeab9b002 (tip sched/core 2023-07-13): a busy
 * group's first CPU still balances when the only idle CPU of its group has a busy
 * sibling (tip-2023-08); the fix queued after the 6.6 merge window lets only that
 * idle SMT CPU balance (6.6). Keisuke Nishimura's example: [0,1] [2,3] as b b i b.
 */
TEST(should_we_balance, with_only_an_idle_smt_sibling_tip_2023_08_also_lets_the_first_cpu_balance)
{
    auto first_cpu_balances = [](const char* spec) {
        sched_fixture t(two_llc_smt2(), spec);
        sched_domain* llc = t.k->topology().cpu(0).sd_llc;
        sched_domain* above = llc->parent;
        EXPECT_NE(above, nullptr);
        // In cpu0's LLC: cpu0's core fully busy; the other core: one busy, one idle CPU.
        const cpumask core0 = t.k->charges().cm().smt_mask(0);
        int other = -1;
        for_each_cpu(cpu, llc->span)
            if (!core0.test(cpu) && other < 0)
                other = cpu;
        for_each_cpu(cpu, core0)
            t.spawn(fmt::format("a{}", cpu), testlib::spin(), cpu, 0, cpu);
        for_each_cpu(cpu, t.k->charges().cm().smt_mask(other))
            if (cpu != other)
                t.spawn(fmt::format("b{}", cpu), testlib::spin(), cpu, 0, cpu);
        t.run_for(msecs(5));
        EXPECT_TRUE(t.k->idle_cpu(other));
        lb_env env;
        env.sd = above;
        env.dst_cpu = 0;
        env.dst_rq = &t.k->cpu_rq(0);
        env.idle = CPU_NOT_IDLE;
        env.cpus = &t.k->lb().load_balance_mask(0);
        *env.cpus = above->span;
        t.k->set_this_cpu(0);
        return should_we_balance(*t.k, env);
    };
    EXPECT_TRUE(first_cpu_balances("tip-2023-08"));
    EXPECT_FALSE(first_cpu_balances("6.6"));
    EXPECT_FALSE(first_cpu_balances("6.5")) << "6.5: the first idle CPU balances, busy sibling or not";
}

/*
 * kernel: should_we_balance(), CPU_NEWLY_IDLE: 5.15.0 (sndrzt/linux-5.15 75c6ad16ec64)
 * returns 1 whatever is on dst; 792b9f65a568 (v6.0) returns 0 when `dst_rq->nr_running >
 * 0 || dst_rq->ttwu_pending` (6.1-rc7 on). cpu1 runs two spinners, so a newly-idle call
 * for it has a task on dst.
 */
TEST(should_we_balance, a_newly_idle_cpu_with_a_task_bails_out_from_v6_0_not_in_5_15)
{
    auto balances = [](const char* spec) {
        newidle_case c(spec);
        kernel& k = *c.t.k;
        EXPECT_GT(k.cpu_rq(1).nr_running, 0u) << spec;
        lb_env env;
        env.sd = k.topology().cpu(1).sd();
        env.dst_cpu = 1;
        env.dst_rq = &k.cpu_rq(1);
        env.idle = CPU_NEWLY_IDLE;
        env.cpus = &k.lb().load_balance_mask(1);
        *env.cpus = env.sd->span;
        k.set_this_cpu(1);
        return should_we_balance(k, env);
    };
    EXPECT_TRUE(balances("5.15"));
    EXPECT_TRUE(balances("5.15-rc3"));
    EXPECT_FALSE(balances("6.1"));
    EXPECT_FALSE(balances("6.6"));
    EXPECT_FALSE(balances("6.18"));
}

/*
 * kernel: load_balance(), 6.5 and tip-2023-08 (the same in sched_balance_rq(), 6.10+):
 * `if (!should_we_balance(&env)) { *continue_balancing = 0; goto out_balanced; }`, and
 * out_balanced falls through out_all_pinned (`sd->nr_balance_failed = 0`) to
 * out_one_pinned (a periodic balance doubles balance_interval below max_interval).
 * nr_balance_failed lives in each CPU's own copy of the domain, so a CPU that is not
 * its group's first idle CPU when its interval comes round starts its count afresh:
 * only a CPU that is the balancing one at cache_nice_tries + 1 attempts in a row
 * reaches the count at which can_migrate_task() takes a cache-hot task. By hand: 2
 * LLCs of 2 cores x SMT2, every CPU idle; in cpu0's LLC the first idle CPU (of an
 * idle core, tip-2023-08) is the span's first; any other CPU of that LLC balancing
 * the domain above the LLC resets its count of 2 to 0 and doubles its interval.
 */
TEST(sched_balance_rq, a_cpu_not_first_idle_in_its_group_resets_its_nr_balance_failed)
{
    for (const char* spec : {"tip-2023-08", "6.5"}) {
        sched_fixture t(two_llc_smt2(), spec);
        t.run_for(msecs(5));
        const cpumask llc_span = t.k->topology().cpu(0).sd_llc->span;
        int dst = -1;
        for_each_cpu(cpu, llc_span)
            if (cpu != llc_span.first() && dst < 0)
                dst = cpu;
        ASSERT_GE(dst, 0);
        sched_domain* above = t.k->topology().cpu(dst).sd_llc->parent;
        ASSERT_NE(above, nullptr);
        ASSERT_TRUE(t.k->idle_cpu(dst));
        ASSERT_TRUE(t.k->idle_cpu(llc_span.first()));
        above->nr_balance_failed = 2;
        above->balance_interval = above->min_interval;
        above->stats = {};
        t.k->set_this_cpu(dst);
        int cont = 1;
        EXPECT_EQ(sched_balance_rq(*t.k, dst, t.k->cpu_rq(dst), *above, CPU_IDLE, cont), 0)
            << spec;
        EXPECT_EQ(cont, 0) << spec << ": the levels above are not balanced by this CPU";
        EXPECT_EQ(above->nr_balance_failed, 0u) << spec << ": out_balanced";
        EXPECT_EQ(above->stats.lb_balanced[CPU_IDLE], 1u) << spec;
        EXPECT_EQ(above->balance_interval, 2 * above->min_interval) << spec;
    }
}

/*
 * kernel: load_balance(), 6.5 and tip-2023-08 (sched_balance_rq(), 6.18.2): an attempt
 * should_we_balance() turns away goes to out_balanced before any group walk; what it did
 * is the walk's idle_cpu() reads of other CPUs' rq lines (tip-2023-08: and is_core_idle()'s
 * reads of the first idle CPU's siblings). By hand: 2 LLCs of 2 cores x SMT2, every CPU
 * idle; dst is on the other core of cpu0's LLC, so the span's first CPU is the first idle
 * one and the walk stops there: 6.5 reads one rq an LLC away, tip-2023-08 that one and
 * its sibling's. Its cost is those lines, not lb_base (set to 10 us here).
 */
TEST(sched_balance_rq, an_attempt_should_we_balance_turns_away_costs_its_reads_not_lb_base)
{
    for (const char* spec : {"tip-2023-08", "6.5"}) {
        cost_params c = sched_fixture::no_costs();
        c.lb_base = usecs(10);
        c.line_smt = 20;
        c.line_llc = 50;
        c.line_pkg = 100;
        sched_fixture t(two_llc_smt2(), spec, 1, "", c);
        t.run_for(msecs(5));
        const cost_model& cm = t.k->charges().cm();
        const cpumask llc_span = t.k->topology().cpu(0).sd_llc->span;
        const int first = llc_span.first();
        int dst = -1;
        for_each_cpu(cpu, llc_span) if (!cm.smt_mask(first).test(cpu) && dst < 0) dst = cpu;
        ASSERT_GE(dst, 0);
        sched_domain* above = t.k->topology().cpu(dst).sd_llc->parent;
        ASSERT_NE(above, nullptr);
        ASSERT_TRUE(t.k->idle_cpu(first));
        sim_dur reads = cm.line_cost(dst, first);
        if (std::string(spec) == "tip-2023-08")
            for (const int sib : cm.smt_siblings(first))
                if (sib != first)
                    reads += cm.line_cost(dst, sib);
        ASSERT_GT(reads, 0) << spec;
        t.k->set_this_cpu(dst);
        t.k->lb().last_lb_cost = 0;
        int cont = 1;
        EXPECT_EQ(sched_balance_rq(*t.k, dst, t.k->cpu_rq(dst), *above, CPU_IDLE, cont), 0) << spec;
        EXPECT_EQ(cont, 0) << spec << ": turned away";
        EXPECT_EQ(t.k->lb().last_lb_cost, reads) << spec << ": the walk's rq lines, no lb_base";
    }
}

/*
 * kernel: should_we_balance(), CPU_NEWLY_IDLE, v6.0+ (792b9f65a568): with a task on dst it
 * returns 0 after reading dst's own nr_running, before any walk. cpu1 runs two spinners;
 * its newly-idle attempt is turned away and costs nothing (lb_base is 10 us here).
 */
TEST(sched_balance_rq, a_newly_idle_attempt_turned_away_at_its_own_rq_costs_nothing)
{
    cost_params c = sched_fixture::no_costs();
    c.lb_base = usecs(10);
    c.line_llc = 50;
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
    t.spawn("a", testlib::spin(), 0, 0, 1);
    t.spawn("b", testlib::spin(), 0, 0, 1);
    t.run_for(msecs(10));
    kernel& k = *t.k;
    ASSERT_GT(k.cpu_rq(1).nr_running, 0u);
    sched_domain& sd = *k.topology().cpu(1).sd();
    sd.stats = {};
    k.set_this_cpu(1);
    k.lb().last_lb_cost = 0;
    int cont = 1;
    EXPECT_EQ(sched_balance_rq(k, 1, k.cpu_rq(1), sd, CPU_NEWLY_IDLE, cont), 0);
    EXPECT_EQ(cont, 0);
    EXPECT_EQ(sd.stats.lb_balanced[CPU_NEWLY_IDLE], 1u);
    EXPECT_EQ(k.lb().last_lb_cost, 0);
}

/*
 * kernel: calculate_imbalance() and need_active_balance() + imbalanced_active_balance(),
 * 6.5 (tip-2023-08 the same for these groups). A NUMA domain whose local node has
 * spare capacity and whose busiest node is overloaded takes the first has_spare
 * branch (`busiest->group_type > group_fully_busy && !(sd->flags &
 * SD_SHARE_PKG_RESOURCES)`): migrate_util, imbalance = max(capacity, util) - util of
 * the local node, and returns before adjust_numa_imbalance(), so imb_numa_nr does not
 * hold such pulls back. Only migrate_task (or misfit, asym, reduced capacity) can
 * start an active balance, so these passes never do, however often they fail. By
 * hand, two nodes of two 4-core LLCs (imb_numa_nr 2): local 8192 capacity, 300 util,
 * busiest overloaded with 12 tasks -> migrate_util 7892. Against a busiest node with
 * spare capacity running 2 tasks (6 idle CPUs), local none (8 idle): no prefer_sibling
 * at NUMA, so migrate_task by idle CPUs, 8 - 6 = 2, which adjust_numa_imbalance()
 * zeroes (local + 1 = 1 < imb_numa_nr, 2 <= 2).
 */
TEST(calculate_imbalance, an_overloaded_node_is_pulled_from_by_util_without_the_numa_allowance)
{
    // two LLCs per node: imb_numa_nr = 2 (build_sched_domains())
    sched_fixture t(two_amd_nodes("test-2s", 8, 4), "tip-2023-08");
    sched_domain* numa = t.k->topology().cpu(0).sd_numa;
    ASSERT_NE(numa, nullptr);
    ASSERT_EQ(numa->imb_numa_nr, 2u);
    auto env_for = [&](group_type busiest_type, unsigned busiest_running, u32 failed) {
        lb_env env;
        env.sd = numa;
        env.dst_cpu = 0;
        env.dst_rq = &t.k->cpu_rq(0);
        env.idle = CPU_IDLE;
        numa->nr_balance_failed = failed;
        sd_lb_stats sds;
        sds.prefer_sibling = false; // SD_NUMA clears SD_PREFER_SIBLING
        sds.local_stat.group_type_ = group_has_spare;
        sds.local_stat.group_capacity = 8 * SCHED_CAPACITY_SCALE;
        sds.local_stat.group_util = 300;
        sds.local_stat.group_weight = 8;
        sds.local_stat.idle_cpus = busiest_type == group_overloaded ? 7 : 8;
        sds.local_stat.sum_nr_running = busiest_type == group_overloaded ? 1 : 0;
        sds.busiest_stat.group_type_ = busiest_type;
        sds.busiest_stat.group_capacity = 8 * SCHED_CAPACITY_SCALE;
        sds.busiest_stat.group_util = std::min(busiest_running, 8u) * SCHED_CAPACITY_SCALE;
        sds.busiest_stat.group_weight = 8;
        sds.busiest_stat.sum_nr_running = busiest_running;
        sds.busiest_stat.sum_h_nr_running = busiest_running;
        sds.busiest_stat.idle_cpus = busiest_type == group_overloaded ? 0 : 8 - busiest_running;
        calculate_imbalance(*t.k, env, sds);
        return env;
    };
    lb_env over = env_for(group_overloaded, 12, 10);
    EXPECT_EQ(over.migration_type_, migrate_util);
    EXPECT_EQ(over.imbalance, 8 * static_cast<long>(SCHED_CAPACITY_SCALE) - 300);
    EXPECT_FALSE(need_active_balance(over)) << "migrate_util never kicks the stopper";
    lb_env busy = env_for(group_has_spare, 2, 0);
    EXPECT_EQ(busy.migration_type_, migrate_task);
    EXPECT_EQ(busy.imbalance, 0) << "adjust_numa_imbalance() allows 2 tasks";
    busy.sd->nr_balance_failed = busy.sd->cache_nice_tries + 3;
    EXPECT_TRUE(need_active_balance(busy)) << "migrate_task past cache_nice_tries + 2";
}

/*
 * kernel: fair.c sibling_imbalance() (7ff1693236f5; read at 6.6.87, and in 6.12.10 / 6.18.2
 * as `!env->idle`), used by find_busiest_group()'s prefer-sibling test and
 * calculate_imbalance()'s has_spare branch from 6.6 and in tip-2023-08 (applied to tip
 * sched/core on 2023-07-13); 6.5 (sndrzt/linux-6.5) has `busiest->sum_nr_running >
 * local->sum_nr_running + 1` and nr_diff there. By hand, two cores x SMT2: core 0 runs
 * three pinned spinners (two on its first CPU, one on the other), core 1 one (its first CPU
 * c1; its sibling idle). MC seen from c1: local core 1 has_spare (1 task < 2 CPUs), busiest core 0 overloaded (3 > 2 and util
 * ~2048 * 117 > 2048 * 100); prefer_sibling from SMT's SD_PREFER_SIBLING; both groups one
 * core. A busy c1 (CPU_NOT_IDLE): 6.5 force-balances (3 > 1 + 1) and calculate_imbalance()
 * asks (3 - 1) >> 1 = 1 task; 6.6 / tip-2023-08: sibling_imbalance() is 0 for CPU_NOT_IDLE,
 * no force, busiest overloaded so on to calculate_imbalance(), whose imbalance 0 >> 1 = 0:
 * no busiest group. The idle sibling (CPU_IDLE) is asked (3 - 1) >> 1 = 1 by every profile.
 */
// find_busiest_group() at MC from core 1's first CPU (idle: its sibling), as described above.
long fbg_imbalance(const char* profile, bool from_the_idle_sibling)
{
    sched_fixture t(testlib::small_machine(2, 2), profile);
    const int c0 = 0, s0 = sibling_of(t, 0);
    int c1 = 1;
    while (t.k->charges().cm().smt_mask(0).test(c1))
        ++c1;
    const int s1 = sibling_of(t, c1);
    t.spawn("a", testlib::spin(), c0, 0, c0);
    t.spawn("b", testlib::spin(), c0, 0, c0);
    t.spawn("c", testlib::spin(), s0, 0, s0);
    t.spawn("d", testlib::spin(), c1, 0, c1);
    t.run_for(msecs(400));
    const int dst = from_the_idle_sibling ? s1 : c1;
    sched_domain& mc = *t.k->topology().cpu(dst).sd_llc;
    EXPECT_TRUE(mc.child && mc.child->has(SD_PREFER_SIBLING)) << profile;
    lb_env env;
    env.sd = &mc;
    env.dst_cpu = dst;
    env.dst_rq = &t.k->cpu_rq(dst);
    env.idle = from_the_idle_sibling ? CPU_IDLE : CPU_NOT_IDLE;
    env.cpus = &t.k->lb().load_balance_mask(dst);
    *env.cpus = mc.span;
    t.k->set_this_cpu(dst);
    const sched_group* g = find_busiest_group(*t.k, env);
    if (!g)
        return -1;
    EXPECT_TRUE(g->span.test(c0)) << profile;
    EXPECT_EQ(env.migration_type_, migrate_task) << profile;
    return env.imbalance;
}

TEST(find_busiest_group, a_busy_cpu_spreads_a_prefer_sibling_group_before_6_6_only)
{
    for (const char* profile : {"6.5", "6.1", "5.15"})
        EXPECT_EQ(fbg_imbalance(profile, false), 1) << profile;
    for (const char* profile : {"tip-2023-08", "6.6", "6.12"})
        EXPECT_EQ(fbg_imbalance(profile, false), -1) << profile << ": sibling_imbalance() 0";
    for (const char* profile : {"6.5", "tip-2023-08", "6.6"})
        EXPECT_EQ(fbg_imbalance(profile, true), 1) << profile;
}

/*
 * sibling_imbalance() of groups with different core counts (6.6.87): nr_running per core
 * evened, rounded: local 2 cores with 1 task, busiest 1 core with 3 tasks: (2*3 - 1*1) = 5,
 * (2*5 + 2 + 1) / 3 = 4; an empty local group of 2 cores against 1 core with 2 tasks:
 * (2*2 - 0) = 4, (8 + 3) / 3 = 3; local 1 core with 0 tasks against 2 cores with 2 tasks:
 * (1*2 - 0) = 2, (4 + 3) / 3 = 2; local 1 core, 0 tasks, against 3 cores with 2 tasks: 2,
 * (4 + 4) / 4 = 2; local 3 cores with 2 tasks against 1 core with 1 task: (3 - 2) = 1,
 * (2 + 4) / 4 = 1, kept (local not empty); local 1 core, 0 tasks, against 4 cores with 2
 * tasks: 2, (4 + 5) / 5 = 1, which 6.6 (450e749707bc) raises to 2 and tip-2023-08 (7ff1693236f5
 * as applied: only a 0) keeps. Before 6.6: the task counts' difference, floored at 0.
 */
TEST(sibling_imbalance, evens_tasks_per_core_between_groups_of_different_sizes_from_6_6)
{
    sched_fixture t6(testlib::small_machine(2), "6.6");
    sched_fixture t5(testlib::small_machine(2), "6.5");
    sched_fixture tip(testlib::small_machine(2), "tip-2023-08");
    sched_group gl, gb;
    auto imb = [&](sched_fixture& t, int lcores, unsigned lnr, int bcores, unsigned bnr) {
        gl.cores = lcores;
        gb.cores = bcores;
        sd_lb_stats sds;
        sds.local = &gl;
        sds.busiest = &gb;
        sds.local_stat.sum_nr_running = lnr;
        sds.busiest_stat.sum_nr_running = bnr;
        lb_env env;
        env.idle = CPU_IDLE;
        return sibling_imbalance(*t.k, env, sds, sds.busiest_stat, sds.local_stat);
    };
    EXPECT_EQ(imb(t6, 1, 0, 4, 2), 2) << "(4 + 5) / 5 = 1, raised to 2 by 450e749707bc";
    EXPECT_EQ(imb(tip, 1, 0, 4, 2), 1) << "tip-2023-08 raises only a 0";
    EXPECT_EQ(imb(tip, 2, 1, 1, 3), 4);
    EXPECT_EQ(imb(t6, 2, 1, 1, 3), 4);
    EXPECT_EQ(imb(t6, 2, 0, 1, 2), 3);
    EXPECT_EQ(imb(t6, 1, 0, 2, 2), 2);
    EXPECT_EQ(imb(t6, 1, 0, 3, 2), 2);
    EXPECT_EQ(imb(t6, 3, 2, 1, 1), 1);
    EXPECT_EQ(imb(t6, 1, 1, 1, 4), 3);
    EXPECT_EQ(imb(t6, 1, 4, 1, 1), 0);
    EXPECT_EQ(imb(t5, 2, 1, 1, 3), 2);
    EXPECT_EQ(imb(t5, 1, 4, 1, 1), 0);
}

/*
 * kernel: fair.c calculate_imbalance(), the has_spare branch at a NUMA domain. 5.15.0
 * (sndrzt/linux-5.15) halves the count first (idle_cpus difference >> 1) and then lets
 * adjust_numa_imbalance() zero it while it is <= NUMA_IMBALANCE_MIN (2) and the busiest node
 * runs fewer than a quarter of its CPUs (allow_numa_imbalance()); 6.1-rc7 and 6.5 halve after
 * the allowance. By hand, nodes of 16 CPUs (two 8-CPU LLCs), no prefer_sibling at NUMA,
 * busiest has_spare running 3 tasks (13 idle CPUs), local none (16 idle): 5.15: (16 - 13) >>
 * 1 = 1, 3 < 16 / 4 so allowed, 1 <= 2: 0. The model's 6.x order gave 3 > 2, kept, >> 1 = 1.
 * With 7 tasks on busiest (9 idle; 7 >= 4, not allowed) both ask (16 - 9) >> 1 = 3.
 */
TEST(calculate_imbalance, v5_15_halves_before_the_numa_allowance)
{
    sched_fixture t(two_amd_nodes("test-2s16", 16, 8), "5.15");
    sched_domain* numa = t.k->topology().cpu(0).sd_numa;
    ASSERT_NE(numa, nullptr);
    auto imbalance = [&](unsigned busiest_running) {
        lb_env env;
        env.sd = numa;
        env.dst_cpu = 0;
        env.dst_rq = &t.k->cpu_rq(0);
        env.idle = CPU_IDLE;
        sd_lb_stats sds;
        sds.prefer_sibling = false; // SD_NUMA clears SD_PREFER_SIBLING
        sds.local_stat.group_type_ = group_has_spare;
        sds.local_stat.group_capacity = 16 * SCHED_CAPACITY_SCALE;
        sds.local_stat.group_weight = 16;
        sds.local_stat.idle_cpus = 16;
        sds.busiest_stat.group_type_ = group_has_spare;
        sds.busiest_stat.group_capacity = 16 * SCHED_CAPACITY_SCALE;
        sds.busiest_stat.group_util = busiest_running * SCHED_CAPACITY_SCALE;
        sds.busiest_stat.group_weight = 16;
        sds.busiest_stat.sum_nr_running = busiest_running;
        sds.busiest_stat.sum_h_nr_running = busiest_running;
        sds.busiest_stat.idle_cpus = 16 - busiest_running;
        calculate_imbalance(*t.k, env, sds);
        EXPECT_EQ(env.migration_type_, migrate_task);
        return env.imbalance;
    };
    EXPECT_EQ(imbalance(3), 0) << "halved to 1, then allowed";
    EXPECT_EQ(imbalance(7), 3) << "not allowed: 7 >= 16 / 4";
}

// 6.5's runnable boosting: migrate_util compares max(util_avg, runnable_avg, util_est),
// of the root cfs_rq (rq->cfs: root_cfs with autogroup on; util_est is kept in rq::cfs).
TEST(cpu_util_cfs_boost, counts_runnable_time_that_util_does_not)
{
    sched_fixture t(testlib::small_machine(2), "6.5");
    rq& r = t.k->cpu_rq(1);
    ASSERT_NE(r.cfs.tg, nullptr);
    sched_avg& root = r.root_cfs.avg;
    root.util_avg = 300;
    root.runnable_avg = 700;
    r.cfs.avg.util_est_.enqueued = 0;
    EXPECT_EQ(cpu_util_cfs(*t.k, 1), 300u);
    EXPECT_EQ(cpu_util_cfs_boost(*t.k, 1), 700u);
    root.runnable_avg = 5000;
    EXPECT_EQ(cpu_util_cfs_boost(*t.k, 1), 1024u) << "capped at the CPU's capacity";
}

TEST(kick_ilb, sets_nohz_next_balance_to_the_next_jiffy)
{
    sched_fixture t(testlib::small_machine(4), "tip-2023-08");
    t.run_for(msecs(100)); // nothing runs: no kick yet
    ASSERT_EQ(t.k->lb().nohz.next_balance, 0u);
    t.k->set_this_cpu(0);
    kick_ilb(*t.k);
    EXPECT_EQ(t.k->lb().nohz.next_balance, jiffies(*t.k) + 1) << "jiffies + 1, not an increment";
}

class work_conservation : public ::testing::TestWithParam<const char*> {};

TEST_P(work_conservation, holds_for_a_cpu_bound_spread_with_exits)
{
    const machine m = load_machine(GetParam());
    sched_fixture t(m, "6.6", 5);
    t.k->set_check_level(check_level::sampled, 4096);
    // A CPU-bound spread: 1.5 tasks per CPU, all forked from cpu0, a third
    // of them short-lived so that imbalance appears as they exit.
    const int n = m.nr_cpus() * 3 / 2;
    for (int i = 0; i < n; ++i) {
        if (i % 3 == 0)
            t.spawn(fmt::format("short{}", i), testlib::run_sleep(msecs(20), 1, 1));
        else
            t.spawn(fmt::format("spin{}", i), testlib::spin(msecs(5)));
    }
    testlib::wasted_cores_checker w(*t.k);
    for (int step = 0; step < 6000; ++step) { // 1.2 s
        t.run_for(usecs(200));
        w.sample();
    }
    EXPECT_EQ(w.worst, 0) << w.worst_what;
    EXPECT_EQ(w.open_now(), 0) << "the spread has settled by the end";
}

INSTANTIATE_TEST_SUITE_P(presets, work_conservation,
                         ::testing::Values("skylake-18c", "ryzen-7950x", "milan-2s", "spr-2s",
                                           "bergamo-2s", "icelake-2s"),
                         [](const auto& param_info) {
                             std::string s = param_info.param;
                             for (char& c : s)
                                 if (c == '-')
                                     c = '_';
                             return s;
                         });

/*
 * The periodic balance level by level (kernel: run_rebalance_domains() ->
 * rebalance_domains(), 6.5). A machine of 2 LLCs x 2 cores x SMT2 on one socket (cpu0's
 * domains SMT, MC, PKG), every CPU idle for a second, every level of cpu0 due, each
 * load_balance() priced at 10 us (lb_base; nothing else costs).
 */
struct rebal1_walk_case {
    sched_fixture t;
    static cost_params rebal1_costs()
    {
        cost_params c = sched_fixture::no_costs();
        set_cost(c, "lb_base=10000", "rebal1 test");
        return c;
    }
    /// rebal1_costs() with one more price (`setting`: "name=value").
    static cost_params rebal1_costs_with(const char* setting, const char* who)
    {
        cost_params c = rebal1_costs();
        set_cost(c, setting, who);
        return c;
    }
    static machine rebal1_machine() { return two_llc_smt2(); }
    rebal1_walk_case() : rebal1_walk_case(rebal1_costs()) {}
    explicit rebal1_walk_case(cost_params costs) : t(rebal1_machine(), "6.5", 1, "", costs)
    {
        t.run_for(secs(1));
        for (auto& sd : doms()) {
            const unsigned long interval = get_sd_balance_interval(*t.k, *sd, false);
            EXPECT_GE(jiffies(*t.k), interval);
            sd->last_balance = jiffies(*t.k) - interval;
            sd->stats = {};
        }
        for (int cpu = 0; cpu < 8; ++cpu)
            EXPECT_TRUE(t.k->idle_cpu(cpu));
        rq0().idle_balance = true; // the tick found cpu0 idle
        t.k->set_this_cpu(0);
    }
    rq& rq0() { return t.k->cpu_rq(0); }
    const std::vector<std::unique_ptr<sched_domain>>& doms() { return t.k->topology().cpu(0).domains; }
    u32 idle_count(std::size_t level) { return doms()[level]->stats.lb_count[CPU_IDLE]; }
};

/*
 * The softirq balances a level, and the next one once that level's work is done: at
 * the tick instant only SMT has balanced; MC at +10 us, PKG at +20 us. (The old model
 * balanced all three at the tick instant and owed their 30 us after.)
 */
TEST(sched_balance_softirq, balances_each_level_when_the_last_ones_work_is_done)
{
    rebal1_walk_case c;
    ASSERT_EQ(c.doms().size(), 3u);
    const sim_time t0 = c.t.sim.now();
    sched_balance_softirq(*c.t.k, c.rq0());
    EXPECT_EQ(c.idle_count(0), 1u);
    EXPECT_EQ(c.idle_count(1), 0u) << "MC waits for SMT's 10 us";
    EXPECT_EQ(c.t.k->charges().owed_until(c.rq0()), t0 + usecs(10));
    c.t.run_for(usecs(10) + 1);
    EXPECT_EQ(c.idle_count(1), 1u);
    EXPECT_EQ(c.idle_count(2), 0u) << "PKG waits for MC's 10 us";
    c.t.run_for(usecs(10));
    EXPECT_EQ(c.idle_count(2), 1u);
    EXPECT_EQ(c.t.k->charges().owed_until(c.rq0()), t0 + usecs(30));
}

/*
 * A task woken onto cpu0 after the SMT level: rebalance_domains() keeps `idle` CPU_IDLE
 * (nothing was pulled), so MC runs as CPU_IDLE; its should_we_balance() reads cpu0 busy
 * (nr_running 1) and cpu1, the next CPU of cpu0's group (core {0,1}), idle: not cpu0's
 * turn, continue_balancing = 0, counted balanced, and the walk ends: PKG is not
 * balanced (its last_balance stays). The wakee runs after SMT's work, at +10 us: MC's
 * turned-away attempt costs its should_we_balance() reads (line costs are 0 here), not
 * lb_base (it took +20 us when it did).
 */
TEST(sched_balance_softirq, a_wakee_queued_mid_walk_ends_it_at_should_we_balance)
{
    rebal1_walk_case c;
    ASSERT_EQ(c.doms().size(), 3u);
    const sim_time t0 = c.t.sim.now();
    const u64 pkg_last = c.doms()[2]->last_balance;
    sched_balance_softirq(*c.t.k, c.rq0());
    ASSERT_EQ(c.idle_count(0), 1u);
    task_struct& w = c.t.spawn("rebal1-wakee", testlib::spin(), 0, 0, 0);
    EXPECT_FALSE(c.t.k->idle_cpu(0));
    c.t.run_for(usecs(5));
    EXPECT_NE(c.rq0().curr, &w) << "the wakee waits for the softirq";
    c.t.run_for(usecs(10));
    EXPECT_EQ(c.idle_count(1), 1u);
    EXPECT_EQ(c.doms()[1]->stats.lb_balanced[CPU_IDLE], 1u) << "should_we_balance() said no";
    EXPECT_EQ(c.rq0().curr, &w) << "MC's turned-away attempt adds nothing";
    c.t.run_for(usecs(100));
    EXPECT_EQ(c.idle_count(2), 0u) << "continue_balancing cleared: PKG not balanced";
    EXPECT_EQ(c.doms()[2]->last_balance, pkg_last);
    EXPECT_EQ(c.rq0().curr, &w);
    EXPECT_FALSE(c.t.k->lb().softirq_walk(0).active);
    (void)t0;
}

/*
 * SCHED_SOFTIRQ raised while a run is under way (its pending bit): one more run after it,
 * which finds no level due (each was balanced this jiffy): no fourth balance.
 */
TEST(sched_balance_softirq, raised_again_meanwhile_runs_once_more_after)
{
    rebal1_walk_case c;
    sched_balance_softirq(*c.t.k, c.rq0());
    sched_balance_softirq(*c.t.k, c.rq0());
    EXPECT_TRUE(c.t.k->lb().softirq_walk(0).raised);
    c.t.run_for(usecs(100));
    EXPECT_FALSE(c.t.k->lb().softirq_walk(0).active);
    EXPECT_FALSE(c.t.k->lb().softirq_walk(0).raised);
    EXPECT_EQ(c.idle_count(0) + c.idle_count(1) + c.idle_count(2), 3u);
}

/*
 * SD_SERIALIZE's `balancing` lock (kernel: rebalance_domains(), 5.15.0 to 6.18.2: the
 * trylock before the interval check; a failure is `goto out`). Two nodes of two CPUs, a
 * pinned spinner on each CPU (every tick runs; nothing may move), each load_balance()
 * priced at 10 us (lb_base). cpu0's and cpu2's SCHED_SOFTIRQ raised at one instant t0
 * mid-jiffy with both their levels (MC, NUMA) due: both balance MC at t0 and come to NUMA
 * at t0 + 10 us; cpu0's event is first, takes the lock and holds it for its 10 us, so
 * cpu2's finds it held and skips the level: no balance, its last_balance kept, and
 * rq->next_balance left at that due time, in the past, so cpu2's next tick (the next
 * jiffy boundary) raises the softirq again and the level balances then (MC is not due).
 * Without the lock, cpu2's NUMA level balanced at t0 + 10 us beside cpu0's.
 */
TEST(sched_balance_softirq, a_numa_level_due_while_another_cpu_holds_balancing_is_skipped_till_the_next_tick)
{
    symmetric_machine_spec ms;
    ms.name = "test-2s2c";
    ms.sockets = 2;
    ms.cores_per_socket = 2;
    cost_params costs = sched_fixture::no_costs();
    set_cost(costs, "lb_base=10000", "serialize test");
    sched_fixture t(make_symmetric_machine(ms, "test"), "6.5", 1, "", costs);
    for (int cpu = 0; cpu < 4; ++cpu)
        t.spawn("serialize-spin", testlib::spin(), cpu, 0, cpu);
    const sim_dur tick = static_cast<sim_dur>(t.k->config().params.tick_nsec());
    t.run_for(secs(1) + tick / 2);
    const auto& doms = [&](int cpu) -> const std::vector<std::unique_ptr<sched_domain>>& {
        return t.k->topology().cpu(cpu).domains;
    };
    const auto count = [](const sched_domain& sd) {
        u64 n = 0;
        for (const u64 c : sd.stats.lb_count)
            n += c;
        return n;
    };
    for (const int cpu : {0, 2}) {
        ASSERT_EQ(doms(cpu).size(), 2u) << "MC and NUMA";
        ASSERT_TRUE(doms(cpu)[1]->has(SD_SERIALIZE));
        ASSERT_FALSE(doms(cpu)[0]->has(SD_SERIALIZE));
        ASSERT_FALSE(t.k->lb().softirq_walk(cpu).active);
        for (auto& sd : doms(cpu)) {
            sd->last_balance = jiffies(*t.k) - get_sd_balance_interval(*t.k, *sd, true);
            sd->stats = {};
        }
        t.k->cpu_rq(cpu).idle_balance = false;
    }
    for (const int cpu : {1, 3}) // their own balances stay out of the way
        t.k->cpu_rq(cpu).next_balance = jiffies(*t.k) + 1000;
    t.k->lb().balancing = {};
    rq& rq2 = t.k->cpu_rq(2);
    const u64 numa2_last = doms(2)[1]->last_balance;
    const sim_time t0 = t.sim.now();
    sched_balance_softirq(*t.k, t.k->cpu_rq(0));
    sched_balance_softirq(*t.k, rq2);
    EXPECT_EQ(count(*doms(0)[0]), 1u);
    EXPECT_EQ(count(*doms(2)[0]), 1u);
    t.run_for(usecs(10) + 1);
    EXPECT_EQ(count(*doms(0)[1]), 1u) << "cpu0 took the lock";
    EXPECT_EQ(count(*doms(2)[1]), 0u) << "cpu2 found it held: goto out";
    EXPECT_EQ(doms(2)[1]->last_balance, numa2_last);
    EXPECT_EQ(t.k->lb().balancing.until, t0 + usecs(20)) << "held until cpu0's NUMA work is done";
    EXPECT_EQ(t.k->lb().balancing.balanced, 1u);
    EXPECT_EQ(t.k->lb().balancing.skipped, 1u);
    t.run_for(usecs(100));
    EXPECT_FALSE(t.k->lb().softirq_walk(2).active);
    EXPECT_LE(rq2.next_balance, jiffies(*t.k)) << "the next tick raises SCHED_SOFTIRQ again";
    const sim_time next_tick = (t0 / tick + 1) * tick;
    t.run_for(next_tick - t.sim.now() - 1);
    EXPECT_EQ(count(*doms(2)[1]), 0u);
    t.run_for(usecs(1));
    EXPECT_EQ(count(*doms(2)[1]), 1u) << "retried at cpu2's next tick, the lock free";
    EXPECT_EQ(count(*doms(2)[0]), 1u) << "MC not due again";
    EXPECT_EQ(doms(2)[1]->last_balance, jiffies(*t.k));
    EXPECT_EQ(t.k->lb().balancing.balanced, 2u);
    EXPECT_EQ(t.k->lb().balancing.skipped, 1u);
}

/*
 * The nohz idle balance walk in time (kernel: _nohz_idle_balance(), 6.5, sndrzt/linux-6.5
 * 4f5cdb332210): the kicked CPU walks nohz.idle_cpus_mask from this_cpu + 1 and runs
 * rebalance_domains(CPU_IDLE) for each due CPU, all of it its own work. The machine of
 * rebal1_walk_case (2 LLCs x 2 cores x SMT2; domains SMT, MC = the LLC, PKG), every CPU
 * idle and tickless for a second, every CPU's balance due, each load_balance() that walks
 * the groups priced at 10 us (lb_base), one should_we_balance() turns away at nothing.
 * cpu0 is kicked. should_we_balance() lets a CPU balance a level only as the first idle
 * CPU of its local group, so cpu1 balances SMT (MC's group {0,1} is cpu0's turn): 10 us;
 * cpu2 SMT and MC: 20 us; cpu3 10; cpu4 SMT, MC and PKG (its group {4..7}): 30; cpu5 10;
 * cpu6 20; cpu7 10; cpu0, last, 30: 140 us, charged to cpu0, a level at a time.
 */
struct nohzwalk_case {
    sched_fixture t;
    static constexpr int all_due = -1, none_due = -2;
    // rebal1_walk_case's prices: each load_balance() 10 us (lb_base), nothing else; every
    // CPU's balance due (or only `due`'s, or none's: the others' next_balance a second on)
    nohzwalk_case() : nohzwalk_case(rebal1_walk_case::rebal1_costs(), all_due) {}
    nohzwalk_case(cost_params costs, int due) : t(two_llc_smt2(), "6.5", 1, "", costs)
    {
        t.run_for(secs(1));
        for (int cpu = 0; cpu < 8; ++cpu) {
            EXPECT_TRUE(t.k->idle_cpu(cpu));
            EXPECT_TRUE(t.k->lb().nohz.idle_cpus_mask.test(cpu));
            EXPECT_GE(jiffies(*t.k), t.k->cpu_rq(cpu).next_balance);
            if (due != all_due && cpu != due)
                t.k->cpu_rq(cpu).next_balance = jiffies(*t.k) + 1000; // not due
            for (auto& sd : t.k->topology().cpu(cpu).domains)
                sd->stats = {};
        }
        nohz_balances0 = t.k->lb().nohz.nohz_balances;
        t.k->set_this_cpu(0);
    }
    u64 nohz_balances0 = 0;
    u64 attempts(int cpu, std::size_t level)
    {
        return t.k->topology().cpu(cpu).domains[level]->stats.lb_count[CPU_IDLE];
    }
    u64 all_attempts()
    {
        u64 n = 0;
        for (int cpu = 0; cpu < 8; ++cpu)
            for (auto& sd : t.k->topology().cpu(cpu).domains)
                n += sd->stats.lb_count[CPU_IDLE];
        return n;
    }
    u64 balanced_cpus() { return t.k->lb().nohz.nohz_balances - nohz_balances0; }
};

/*
 * At the kick only cpu1's SMT level has balanced and cpu0 owes its 10 us; the walk ends
 * when cpu0 has done all 140 us, cpu0's own PKG level last. No balanced CPU owes any of
 * it. (Before lane nohzwalk the whole walk ran at the kick's instant, uncharged: checked,
 * this test failed there with all 8 CPUs balanced at t0 and nothing owed.)
 */
TEST(nohz_idle_balance, the_kicked_cpu_walks_a_level_at_a_time_and_pays_for_it)
{
    nohzwalk_case c;
    rq& rq0 = c.t.k->cpu_rq(0);
    const sim_time t0 = c.t.sim.now();
    std::vector<u64> charged0;
    for (int cpu = 0; cpu < 8; ++cpu)
        charged0.push_back(c.t.k->charges().cpu(cpu).charged_ns);
    nohz_idle_balance(*c.t.k, rq0);
    EXPECT_TRUE(c.t.k->lb().ilb_walk(0).active);
    EXPECT_EQ(c.all_attempts(), 1u);
    EXPECT_EQ(c.attempts(1, 0), 1u) << "cpu1 first: this_cpu + 1";
    EXPECT_EQ(c.balanced_cpus(), 1u);
    EXPECT_EQ(c.t.k->charges().owed_until(rq0), t0 + usecs(10));
    c.t.run_for(usecs(130) - 1);
    EXPECT_TRUE(c.t.k->lb().ilb_walk(0).active);
    EXPECT_EQ(c.balanced_cpus(), 8u) << "cpu0 itself, last, from t0 + 110 us";
    EXPECT_EQ(c.attempts(0, 2), 0u) << "cpu0's PKG level at t0 + 130 us";
    c.t.run_for(usecs(10));
    EXPECT_EQ(c.attempts(0, 2), 1u);
    EXPECT_TRUE(c.t.k->lb().ilb_walk(0).active) << "its work done at t0 + 140 us";
    c.t.run_for(2);
    EXPECT_FALSE(c.t.k->lb().ilb_walk(0).active);
    EXPECT_EQ(c.t.k->charges().cpu(0).charged_ns - charged0[0], usecs(140));
    for (int cpu = 1; cpu < 8; ++cpu)
        EXPECT_EQ(c.t.k->charges().cpu(cpu).charged_ns, charged0[static_cast<std::size_t>(cpu)])
            << "cpu" << cpu << " owes none of it";
}

/*
 * A task woken onto the kicked CPU sets its need_resched(): the walk stops at its next
 * CPU (after cpu1's 10 us), nohz.next_balance keeps its value (the abort path), and the
 * task runs then. (Checked: fails before lane nohzwalk, which balanced all 8 at t0.)
 */
TEST(nohz_idle_balance, a_task_woken_on_the_kicked_cpu_stops_the_walk_at_its_next_cpu)
{
    nohzwalk_case c;
    rq& rq0 = c.t.k->cpu_rq(0);
    const u64 next_balance = c.t.k->lb().nohz.next_balance;
    nohz_idle_balance(*c.t.k, rq0);
    task_struct& w = c.t.spawn("nohzwalk-wakee", testlib::spin(), 0, 0, 0);
    EXPECT_TRUE(rq0.need_resched);
    c.t.run_for(usecs(5));
    EXPECT_NE(rq0.curr, &w) << "the wakee waits for the walk's work so far";
    c.t.run_for(usecs(100));
    EXPECT_FALSE(c.t.k->lb().ilb_walk(0).active);
    EXPECT_EQ(c.balanced_cpus(), 1u) << "stopped before cpu2";
    EXPECT_EQ(c.attempts(2, 0), 0u);
    EXPECT_EQ(c.t.k->lb().nohz.next_balance, next_balance);
    EXPECT_EQ(rq0.curr, &w);
}

/*
 * The walk reads the machine as it finds it: a task woken onto cpu5 while cpu0 works on
 * cpu1..cpu4 makes cpu5 no longer idle_cpu() when the walk gets there, and it is skipped;
 * the rest are balanced. (Checked: fails before lane nohzwalk, where cpu5 was balanced at
 * t0.)
 */
TEST(nohz_idle_balance, a_cpu_busy_by_the_time_the_walk_reaches_it_is_skipped)
{
    nohzwalk_case c;
    nohz_idle_balance(*c.t.k, c.t.k->cpu_rq(0));
    c.t.spawn("nohzwalk-busy", testlib::spin(), 5, 0, 5);
    c.t.run_for(usecs(300));
    EXPECT_FALSE(c.t.k->lb().ilb_walk(0).active);
    EXPECT_EQ(c.attempts(5, 0), 0u) << "cpu5 skipped";
    EXPECT_EQ(c.attempts(6, 0), 1u);
    EXPECT_EQ(c.balanced_cpus(), 7u);
}

/*
 * A kick whose IPI reaches cpu0 during its own SCHED_SOFTIRQ run waits for the run's end
 * (the softirq's pending bit); the tick raises SCHED_SOFTIRQ again meanwhile, and a task
 * woken onto cpu0 makes it busy. At the run's end the kick starts no walk (nohz_csd_func():
 * not idle), so run_rebalance_domains() does the CPU's own balance: cpu0's SMT level, due
 * again, balances a second time. (Checked: before 46bb614 the raise was dropped with the
 * kick, and SMT balanced once.)
 */
TEST(nohz_idle_balance, a_kick_deferred_past_a_softirq_run_that_finds_its_cpu_busy_leaves_the_own_run)
{
    rebal1_walk_case c;
    sched_balance_softirq(*c.t.k, c.rq0());
    ASSERT_TRUE(c.t.k->lb().softirq_walk(0).active);
    nohz_idle_balance(*c.t.k, c.rq0());
    EXPECT_TRUE(c.t.k->lb().ilb_walk(0).kicked) << "deferred: the softirq is running";
    EXPECT_FALSE(c.t.k->lb().ilb_walk(0).active);
    sched_balance_softirq(*c.t.k, c.rq0());
    EXPECT_TRUE(c.t.k->lb().softirq_walk(0).raised);
    c.t.spawn("nohzwalk-busy0", testlib::spin(), 0, 0, 0);
    ASSERT_FALSE(c.t.k->idle_cpu(0));
    c.t.k->topology().cpu(0).domains[0]->last_balance = 0; // SMT due again
    c.t.k->cpu_rq(0).next_balance = 0;
    c.t.run_for(usecs(100));
    EXPECT_FALSE(c.t.k->lb().ilb_walk(0).active) << "no walk: cpu0 is busy";
    EXPECT_FALSE(c.t.k->lb().softirq_walk(0).active);
    u64 smt = 0;
    for (const u64 n : c.doms()[0]->stats.lb_count)
        smt += n;
    EXPECT_EQ(smt, 2u) << "the own run after the first";
}

/*
 * Lane nohzcost: who reads the lines. In 6.5's _nohz_idle_balance() (sndrzt/linux-6.5
 * 4f5cdb332210, kernel/sched/fair.c) rebalance_domains(rq, CPU_IDLE) runs on the kicked CPU,
 * so should_we_balance()'s idle_cpu() reads and update_sg_lb_stats()'s rq reads are that
 * CPU's loads, whatever CPU they balance for. nohzwalk_case's machine (cores {0,4}, {1,5} in
 * LLC0, {2,6}, {3,7} in LLC1, one socket), each load_balance() that walks the groups 10 us
 * (lb_base), a line between the LLCs 10 us (line_pkg) and every other line free; only cpu2's
 * balance due. cpu0, kicked, balances cpu2's SMT ({2},{6}), MC ({2,6},{3,7}) and DIE
 * ({2,3,6,7},{0,1,4,5}) levels; each lets cpu2 balance (the first idle CPU of its group;
 * those should_we_balance() reads are inside lb_base for an attempt that walks the groups),
 * and update_sg_lb_stats() reads every CPU of the domain. From cpu0 each read of an LLC1
 * CPU costs 10 us and of an LLC0 CPU nothing: SMT 10 + 2 x 10, MC 10 + 4 x 10, DIE
 * 10 + 4 x 10: 130 us. Priced from cpu2 (before lane nohzcost) it was SMT 10, MC 10, DIE
 * 10 + 4 x 10 (LLC0's CPUs): 70 us. (Checked: fails there with 70 us.)
 */
struct nohzcost_reader_case : nohzwalk_case {
    nohzcost_reader_case()
        : nohzwalk_case(rebal1_walk_case::rebal1_costs_with("line_pkg=10000",
                                                            "nohzcost reader test"),
                        2)
    {
    }
};

TEST(nohz_idle_balance, the_kicked_cpu_reads_the_balanced_cpus_lines_from_where_it_is)
{
    nohzcost_reader_case c;
    rq& rq0 = c.t.k->cpu_rq(0);
    nohz_idle_balance(*c.t.k, rq0);
    c.t.run_for(usecs(500));
    const lb_state::nohz_walk& nw = c.t.k->lb().ilb_walk(0);
    EXPECT_FALSE(nw.active);
    EXPECT_EQ(nw.balanced, 1) << "cpu2 only";
    for (const auto& sd : c.t.k->topology().cpu(2).domains)
        EXPECT_EQ(sd->stats.lb_count[CPU_IDLE], 1u) << sd->name;
    EXPECT_EQ(nw.work, static_cast<u64>(usecs(130)));
}

/*
 * Lane nohzcost: the walk's upkeep. 6.5's _nohz_idle_balance() (sndrzt/linux-6.5
 * 4f5cdb332210; the same in 5.15.0, 6.1.0, 6.6.87, 6.12.y, 6.18.2) calls
 * update_nohz_stats() for each idle CPU it visits: update_blocked_averages() under that
 * CPU's rq lock if the CPU has blocked load (set when its tick stopped) and was not updated
 * in this jiffy; and for a CPU whose balance is due it takes the rq lock to update the
 * clock. All on the kicked CPU. nohzwalk_case's machine, idle and tickless for a second,
 * no CPU due, each rq lock's hold 1 us (rq_lock_hold), lines free: every CPU still has the
 * blocked-load flag of its boot-time tick stop, so cpu0's walk updates all eight, 1 us
 * each, one after another: 8 us, charged to cpu0; with nothing left to decay each flag is
 * cleared. A second walk in the same jiffy, with the flags set again (a tick stop), updates
 * none (the jiffy gate); one in the next jiffy updates all eight again. (Checked: fails
 * before lane nohzcost, where the walk charged nothing and took no time.)
 */
struct nohzcost_stats_case : nohzwalk_case {
    nohzcost_stats_case()
        : nohzwalk_case(rebal1_walk_case::rebal1_costs_with("rq_lock_hold=1000",
                                                            "nohzcost stats test"),
                        none_due)
    {
    }
    u64 charged0() { return t.k->charges().cpu(0).charged_ns; }
    void walk()
    {
        nohz_idle_balance(*t.k, t.k->cpu_rq(0));
        t.run_for(usecs(100));
        EXPECT_FALSE(t.k->lb().ilb_walk(0).active);
    }
};

TEST(nohz_idle_balance, each_visited_cpus_blocked_averages_cost_the_kicked_cpu_once_a_jiffy)
{
    nohzcost_stats_case c;
    for (int cpu = 0; cpu < 8; ++cpu)
        ASSERT_TRUE(c.t.k->cpu_rq(cpu).has_blocked_load) << "cpu" << cpu << ": set at boot";
    const sim_time t0 = c.t.sim.now();
    const u64 before = c.charged0();
    nohz_idle_balance(*c.t.k, c.t.k->cpu_rq(0));
    EXPECT_EQ(c.t.k->charges().owed_until(c.t.k->cpu_rq(0)), t0 + usecs(1)) << "cpu1's update";
    EXPECT_EQ(c.t.k->lb().ilb_walk(0).visited, 1) << "cpu2 when cpu1's is done";
    c.t.run_for(usecs(100));
    const lb_state::nohz_walk& nw = c.t.k->lb().ilb_walk(0);
    EXPECT_FALSE(nw.active);
    EXPECT_EQ(nw.visited, 8);
    EXPECT_EQ(nw.balanced, 0);
    EXPECT_EQ(nw.upkeep, static_cast<u64>(usecs(8)));
    EXPECT_EQ(c.charged0() - before, static_cast<u64>(usecs(8)));
    for (int cpu = 1; cpu < 8; ++cpu) {
        EXPECT_FALSE(c.t.k->cpu_rq(cpu).has_blocked_load) << "cpu" << cpu << ": nothing to decay";
        EXPECT_EQ(c.t.k->charges().cpu(cpu).charged_ns, 0u) << "cpu" << cpu << " pays none of it";
    }
    // The flags set again (a tick stop), the same jiffy: no update.
    for (int cpu = 0; cpu < 8; ++cpu)
        c.t.k->cpu_rq(cpu).has_blocked_load = true;
    ASSERT_EQ(jiffies(*c.t.k), c.t.k->cpu_rq(1).last_blocked_load_update_tick);
    c.walk();
    EXPECT_EQ(c.t.k->lb().ilb_walk(0).upkeep, 0u);
    // The next jiffy: all eight again.
    const sim_dur tick = static_cast<sim_dur>(c.t.k->config().params.tick_nsec());
    c.t.run_for(tick);
    ASSERT_GT(jiffies(*c.t.k), c.t.k->cpu_rq(1).last_blocked_load_update_tick);
    for (int cpu = 0; cpu < 8; ++cpu)
        c.t.k->cpu_rq(cpu).next_balance = jiffies(*c.t.k) + 1000;
    c.walk();
    EXPECT_EQ(c.t.k->lb().ilb_walk(0).upkeep, static_cast<u64>(usecs(8)));
}

/*
 * run_rebalance_domains() (6.5; sched_balance_softirq() from 6.10, the same) calls
 * update_blocked_averages(this_cpu) before rebalance_domains(): the CPU takes its own rq
 * lock first. rebal1_walk_case's scene with each rq lock's hold 1 us: cpu0 owes 1 us + SMT's
 * 10 us at the tick, and its three levels are done at +31 us. (Checked: 10 and 30 us before
 * lane nohzcost.)
 */
TEST(sched_balance_softirq, the_cpus_own_blocked_average_update_takes_its_rq_lock_first)
{
    rebal1_walk_case c(rebal1_walk_case::rebal1_costs_with("rq_lock_hold=1000",
                                                           "nohzcost softirq test"));
    const sim_time t0 = c.t.sim.now();
    sched_balance_softirq(*c.t.k, c.rq0());
    EXPECT_EQ(c.t.k->charges().owed_until(c.rq0()), t0 + usecs(11));
    c.t.run_for(usecs(100));
    EXPECT_EQ(c.idle_count(2), 1u);
    EXPECT_EQ(c.t.k->charges().cpu(0).charged_ns, static_cast<u64>(usecs(31)));
}

/*
 * The run's start state (fair_select.cc jiffies()): the machine has been up
 * SCHED_CLOCK_AT_START and idle since sd_init() stamped every domain's last_balance with
 * boot's jiffies (kernel/sched/topology.c, v6.5), and no ILB with NOHZ_BALANCE_KICK has run
 * since, so an idle CPU's periodic levels are all overdue: the first softirq after the start
 * balances every level, NUMA included, though the run is 100 us old and the NUMA interval
 * (64 CPUs: 64 ms, 16 jiffies at HZ 250) has not passed within it. With jiffies counted from
 * the run's start (the model until this test) no level was due before 4 ms and NUMA not
 * before 64 ms.
 */
TEST(sched_balance_softirq, an_idle_cpus_numa_level_is_due_at_the_runs_first_balance)
{
    sched_fixture t(two_amd_nodes("test-2s32", 32, 8), "6.5");
    t.run_for(usecs(100));
    const int cpu = 32; // node 1, its LLC's and its node's first idle CPU (should_we_balance())
    rq& r = t.k->cpu_rq(cpu);
    ASSERT_TRUE(t.k->idle_cpu(cpu));
    sched_domain* numa = t.k->topology().cpu(cpu).sd_numa;
    ASSERT_NE(numa, nullptr);
    const auto& doms = t.k->topology().cpu(cpu).domains;
    ASSERT_EQ(doms.back().get(), numa);
    ASSERT_EQ(numa->span_weight, 64);
    const unsigned long interval = get_sd_balance_interval(*t.k, *numa, false);
    EXPECT_EQ(interval, 16u);
    EXPECT_EQ(numa->last_balance, 0u) << "boot's jiffies";
    EXPECT_GE(jiffies(*t.k), numa->last_balance + interval) << "overdue as the run starts";
    EXPECT_GE(jiffies(*t.k), r.next_balance);
    r.idle_balance = true; // the first tick or ILB to find it idle
    t.k->set_this_cpu(cpu);
    sched_balance_softirq(*t.k, r);
    t.run_for(msecs(1));
    for (const auto& sd : doms)
        EXPECT_EQ(sd->stats.lb_count[CPU_IDLE], 1u) << sd->name;
    EXPECT_EQ(numa->last_balance, jiffies(*t.k));
    EXPECT_LT(t.k->now(), msecs(2));
}

} // namespace
} // namespace schedlab
