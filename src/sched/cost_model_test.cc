// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost model (cost_model.h) on its own: line transfers, locks, data in
 * private caches, refill by distance, the idle governor, IPIs, SMT sharing;
 * then on minimal scenarios through the kernel: the prices applied to CPUs,
 * idle-state exits, and the time accounting.
 */
#include "metrics/sched_summary.h"
#include "sched/cost_model.h"
#include "sched/testlib.h"
#include "trace/tracepoints.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>

namespace schedlab {
namespace {

using testlib::sched_fixture;

machine two_llc_machine(int smt = 1)
{
    symmetric_machine_spec s;
    s.name = "test-2llc";
    s.cores_per_socket = 8;
    s.threads_per_core = smt;
    s.cores_per_llc = 4;
    return make_symmetric_machine(s, "test");
}

TEST(lock_acquire, a_contended_lock_serialises_its_users_in_arrival_order)
{
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 20;
    const machine m = testlib::small_machine(4);
    const cost_model cm(m, c);
    const sim_time now = usecs(7);
    contended_lock l;
    const auto a = cm.lock_acquire(l, 1, 300, now);
    const auto b = cm.lock_acquire(l, 2, 300, now);
    const auto d = cm.lock_acquire(l, 3, 300, now);
    EXPECT_EQ(a.first, 0) << "the first comes in free";
    EXPECT_EQ(a.second, 300) << "no previous owner: no line transfer";
    EXPECT_EQ(b.first, 300) << "the second spins while the first holds it";
    EXPECT_EQ(b.second, 320) << "then holds it, after pulling the line from cpu1";
    EXPECT_EQ(d.first, 620);
    EXPECT_EQ(l.contended, 2u);
    EXPECT_EQ(l.busy_until, now + 940);
}

TEST(data_lines_cost, data_stays_warm_where_it_was_written_until_the_private_caches_turn_over)
{
    cost_params c = sched_fixture::no_costs();
    c.line_smt = 5;
    c.line_llc = 60;
    c.line_pkg = 90;
    c.l2_kib = 1024;
    const machine m = two_llc_machine(2);
    cost_model cm(m, c);
    // CPUs 0 and 8 are SMT siblings (numbered as Linux does), 0 and 1 share an LLC, 0 and 4
    // do not.
    const u64 stamp = cm.data_stamp(0);
    cm.data_touch(0, 1000); // the data itself
    EXPECT_FALSE(cm.data_lines_cost(0, stamp, 0, 3)) << "warm where it was written";
    ASSERT_EQ(m.distance(0, 8), cpu_distance::smt);
    ASSERT_EQ(m.distance(0, 4), cpu_distance::package);
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 8, 3), 3 * 5) << "the sibling shares the caches";
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 1, 3), 3 * 60);
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 4, 3), 3 * 90);
    cm.data_touch(1, 1024 * 1024); // another core's traffic leaves CPU 0's caches alone
    EXPECT_FALSE(cm.data_lines_cost(0, stamp, 0, 3));
    cm.data_touch(8, 1024 * 1024 - 1000); // the sibling's traffic evicts from the same core
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 0, 3), 3 * 60) << "lost: an LLC hit per line";
    EXPECT_EQ(cm.data_stamp(8), cm.data_stamp(0)) << "one clock per core";
}

TEST(data_lines_cost, lines_lost_from_the_private_caches_cost_an_llc_hit_not_a_transfer)
{
    // A line the reader's own core wrote and lost from L2 comes from the LLC: no other
    // core holds it, so it costs the LLC's load latency (llc_hit), not line_llc, the
    // bounce of a line between two cores (190 against ~11 ns on this project's guest).
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 190;
    c.llc_hit = 11;
    c.l2_kib = 1024;
    const machine m = two_llc_machine(2);
    cost_model cm(m, c);
    const u64 stamp = cm.data_stamp(0);
    cm.data_touch(0, 1024 * 1024);
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 0, 5), 5 * 11) << "lost on the writer's own core";
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 8, 5), 5 * 11) << "... or read by its SMT sibling";
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 1, 5), 5 * 190) << "another core: still a transfer";
    c.llc_hit = 0; // no figure (every preset): the transfer, as before llc_hit existed
    cost_model unset(m, c);
    const u64 s2 = unset.data_stamp(0);
    unset.data_touch(0, 1024 * 1024);
    EXPECT_EQ(unset.data_lines_cost(0, s2, 0, 5), 5 * 190);
}

TEST(data_lines_cost, data_read_on_another_core_of_the_llc_costs_line_data_llc_when_measured)
{
    cost_params c = sched_fixture::no_costs();
    c.line_smt = 5;
    c.line_llc = 190;
    c.line_pkg = 300;
    c.line_data_llc = 7;
    c.l2_kib = 1024;
    const machine m = two_llc_machine(2);
    const cost_model cm(m, c);
    const u64 stamp = cm.data_stamp(0);
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 1, 5), 5 * 7) << "another core of the LLC";
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 8, 5), 5 * 5) << "the SMT sibling: line_smt";
    EXPECT_EQ(cm.data_lines_cost(0, stamp, 4, 5), 5 * 300) << "another LLC: line_pkg";
    c.line_data_llc = 0; // no figure (every preset): line_llc, as before
    const cost_model unset(m, c);
    EXPECT_EQ(unset.data_lines_cost(0, stamp, 1, 5), 5 * 190);
}

TEST(lock_acquire, a_cpu_never_spins_on_its_own_earlier_hold)
{
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 20;
    const machine m = testlib::small_machine(4);
    const cost_model cm(m, c);
    const sim_time now = 0;
    contended_lock l;
    cm.lock_acquire(l, 1, 300, now);
    const auto again = cm.lock_acquire(l, 1, 300, now);
    EXPECT_EQ(again.first, 0) << "its first hold is its own work, already charged";
    EXPECT_EQ(again.second, 300);
    EXPECT_EQ(l.busy_until, now + 600) << "the second hold follows the first";
    EXPECT_EQ(l.contended, 0u);
    const auto other = cm.lock_acquire(l, 2, 300, now);
    EXPECT_EQ(other.first, 600) << "another CPU waits for both";
}

TEST(cost_model, line_cost_follows_the_distance_and_nothing_moves_from_nowhere)
{
    cost_params c = sched_fixture::no_costs();
    c.line_smt = 5;
    c.line_llc = 60;
    c.line_pkg = 90;
    const machine m = two_llc_machine(2);
    const cost_model cm(m, c);
    EXPECT_EQ(cm.line_cost(-1, 3), 0) << "no previous owner";
    EXPECT_EQ(cm.line_cost(0, 0), 0);
    EXPECT_EQ(cm.line_cost(0, 8), 5) << "SMT siblings";
    EXPECT_EQ(cm.line_cost(0, 1), 60) << "same LLC";
    EXPECT_EQ(cm.line_cost(0, 4), 90) << "same package, other LLC";
}

TEST(cost_model, idle_select_takes_the_deepest_state_the_prediction_fits)
{
    cost_params c = sched_fixture::no_costs();
    c.cstate_c1_residency = usecs(2);
    c.cstate_deep_residency = usecs(300);
    const machine m = testlib::small_machine(2);
    const cost_model cm(m, c);
    EXPECT_EQ(cm.idle_select(usecs(1)), 0) << "shorter than C1's residency: poll";
    EXPECT_EQ(cm.idle_select(usecs(2)), 1);
    EXPECT_EQ(cm.idle_select(usecs(299)), 1);
    EXPECT_EQ(cm.idle_select(usecs(300)), 2);
}

TEST(cost_model, remote_notify_prices_the_ipi_and_the_idle_exit_and_teaches_the_governor)
{
    cost_params c = sched_fixture::no_costs();
    c.cstate_deep_exit = usecs(80);
    c.ipi_wakeup = usecs(5);
    c.ipi_send = usecs(2);
    c.cstate_polls = 0;
    const machine m = testlib::small_machine(2);
    cost_model cm(m, c);
    cpu_idle_state idle;
    idle.state = 2;
    idle.since = usecs(100);
    idle.selected = true;
    const auto woken = cm.remote_notify(idle, true, cost_model::notify::ipi, usecs(500));
    EXPECT_EQ(woken.delay, usecs(80) + usecs(5)) << "leaves the deep state, then takes the IPI";
    EXPECT_EQ(woken.sender, usecs(2));
    EXPECT_EQ(woken.idle_exit, usecs(80)) << "the idle exit, without the IPI";
    // menu_reflect(): the residency from the entry to the return, the exit included, is
    // learnt at the next selection; a second wakeup of the same period teaches nothing.
    EXPECT_TRUE(idle.menu.needs_update);
    EXPECT_EQ(idle.menu.last_residency_ns, static_cast<u64>(usecs(400) + usecs(80)));
    EXPECT_EQ(idle.menu.last_state_idx, 2);
    EXPECT_FALSE(idle.menu.tick_wakeup);
    const auto by_timer = cm.remote_notify(idle, true, cost_model::notify::timer, usecs(600));
    EXPECT_EQ(by_timer.delay, usecs(80)) << "its own timer: no IPI";
    EXPECT_EQ(by_timer.sender, 0);
    EXPECT_EQ(idle.menu.last_residency_ns, static_cast<u64>(usecs(400) + usecs(80)))
        << "one period, reflected once";
    const auto running = cm.remote_notify(idle, false, cost_model::notify::ipi, usecs(700));
    EXPECT_EQ(running.delay, usecs(5));
    EXPECT_EQ(running.idle_exit, 0) << "a running CPU has no idle state to leave";
    const wakeup_costs& w = cm.wakeup_cost_totals();
    EXPECT_EQ(w.idle_exits, 2u);
    EXPECT_EQ(w.idle_exits_deep, 2u);
    EXPECT_EQ(w.idle_ipis, 1u);
    EXPECT_EQ(w.ipis, 1u);
}

TEST(cost_model, smt_rate_pct_counts_the_busy_cpus_of_a_core)
{
    cost_params c = sched_fixture::no_costs();
    c.smt_pct = 62;
    const machine m = two_llc_machine(2);
    cost_model cm(m, c);
    ASSERT_TRUE(cm.smt_active());
    ASSERT_EQ(cm.smt_siblings(0), (std::vector<int>{0, 8}));
    cm.core_busy_changed(0, true);
    EXPECT_EQ(cm.smt_rate_pct(0, true), 100u) << "alone on its core";
    EXPECT_EQ(cm.smt_rate_pct(8, false), 62u) << "a task arriving on the sibling would share";
    cm.core_busy_changed(8, true);
    EXPECT_EQ(cm.smt_rate_pct(0, true), 62u);
    cm.core_busy_changed(8, false);
    EXPECT_EQ(cm.smt_rate_pct(0, true), 100u);
}

TEST(cost_model, a_task_leaving_a_core_finds_it_cooler_after_another_task_ran_there)
{
    const machine m = two_llc_machine();
    cost_model cm(m, cost_params{});
    const cost_params& c = cm.params();
    task_struct p, other;
    p.footprint_kib = 256;
    other.footprint_kib = static_cast<u32>(c.l2_kib);
    EXPECT_EQ(cm.cache_refill_cost(p, 0, 0), 256 * c.refill_mem_per_kib) << "first run: memory";
    cm.task_arrives(p, 0);
    cm.task_leaves(p, 0, usecs(10));
    EXPECT_EQ(p.last_ran_cpu, 0);
    const sim_dur warm = cm.cache_refill_cost(p, 0, usecs(10));
    cm.task_arrives(other, 0); // a private cache's worth of someone else's lines
    const sim_dur after_other = cm.cache_refill_cost(p, 0, usecs(10));
    EXPECT_EQ(warm, 0) << "just left: every line still in the private caches";
    EXPECT_GT(after_other, warm) << "the other task's lines evicted them";
    EXPECT_LT(after_other, 256 * c.refill_mem_per_kib) << "the LLC still has most of them";
}

TEST(charge_cpu, a_spinning_cpu_delays_its_running_task)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    task_struct& p = t.spawn("work", testlib::run_then_exit(msecs(1)), 0, 0, 1);
    t.run_for(usecs(100));
    contended_lock l;
    l.busy_until = t.sim.now() + usecs(50); // held elsewhere for 50 more us
    t.k->charges().lock_and_charge(l, 1, 0);
    t.run_for(msecs(5));
    EXPECT_EQ(p.__state, TASK_DEAD);
    EXPECT_EQ(p.exit_time, msecs(1) + usecs(50)) << "the 1 ms burst ends 50 us late";
    EXPECT_EQ(t.k->charges().cpu_accounting(t.k->cpu_rq(1)).spent[ACCT_LOCK_SPIN], usecs(50));
}

TEST(cache_refill_cost, a_cross_llc_migration_of_a_1_mib_task_costs_more_than_a_same_llc_one)
{
    sched_fixture t(two_llc_machine(), "6.6", 1, "", cost_params{});
    ASSERT_FALSE(t.k->topology().cpus_share_cache(0, 4));
    ASSERT_TRUE(t.k->topology().cpus_share_cache(0, 1));
    task_struct p;
    p.footprint_kib = 1024;
    p.last_ran_cpu = 0;
    p.last_ran_end = t.sim.now();
    const sim_dur same_cpu = t.k->charges().cm().cache_refill_cost(p, 0, t.sim.now());
    const sim_dur same_llc = t.k->charges().cm().cache_refill_cost(p, 1, t.sim.now());
    const sim_dur other_llc = t.k->charges().cm().cache_refill_cost(p, 4, t.sim.now());
    EXPECT_LT(same_cpu, same_llc) << "its lines are still in cpu0's private caches";
    EXPECT_LT(same_llc, other_llc) << "the LLC still has them, the other LLC does not";
    const cost_params& c = t.k->charges().params();
    EXPECT_EQ(same_llc, 1024 * c.refill_llc_per_kib);
    EXPECT_EQ(other_llc, 1024 * c.refill_mem_per_kib);
}

TEST(cache_refill_cost, a_long_sleep_or_other_tasks_cool_the_caches)
{
    sched_fixture t(two_llc_machine(), "6.6", 1, "", cost_params{});
    const cost_params& c = t.k->charges().params();
    task_struct p;
    p.footprint_kib = 256;
    p.last_ran_cpu = 0;
    p.last_ran_end = t.sim.now();
    const sim_dur warm = t.k->charges().cm().cache_refill_cost(p, 0, t.sim.now());
    t.run_for(c.cache_halflife); // half the private lines are gone
    const sim_dur cooler = t.k->charges().cm().cache_refill_cost(p, 0, t.sim.now());
    EXPECT_GT(cooler, warm);
    t.run_for(100 * c.llc_halflife); // everything is gone
    EXPECT_EQ(t.k->charges().cm().cache_refill_cost(p, 0, t.sim.now()), 256 * c.refill_mem_per_kib);
}

TEST(smt_rate_pct, two_busy_siblings_slow_each_other)
{
    // cpu0 and cpu8 are SMT siblings (first-threads numbering, 8 cores).
    auto finish_time = [](int second_cpu) {
        cost_params c = sched_fixture::no_costs();
        c.smt_pct = 62;
        sched_fixture t(two_llc_machine(2), "6.6", 1, "", c);
        task_struct& a = t.spawn("a", testlib::run_then_exit(msecs(10)), 0, 0, 0);
        t.spawn("b", testlib::run_then_exit(msecs(10)), 0, 0, second_cpu);
        t.run_for(msecs(100));
        return a.exit_time;
    };
    EXPECT_EQ(finish_time(1), msecs(10)) << "another core: full speed";
    const sim_time shared = finish_time(8);
    EXPECT_EQ(shared, msecs(10) * 100 / 62 + 1) << "a sibling: 62% of a core";
}

// Runs 10 us (noting when each run starts in `starts`), then sleeps `sleep` on a timer, forever.
std::unique_ptr<task_behaviour> run_10us_then_sleep(std::shared_ptr<std::vector<sim_time>> starts,
                                                    sim_dur sleep)
{
    auto phase = std::make_shared<int>(0);
    return testlib::behaviour([=](syscalls& k, task_struct& p) {
        if (*phase == 0) {
            starts->push_back(k.now());
            *phase = 1;
            return task_action::cpu(usecs(10));
        }
        *phase = 0;
        k.schedule_timeout(p, sleep);
        return task_action::sleep();
    });
}

TEST(idle_exit_latency, a_cpu_in_the_deep_state_wakes_later)
{
    // A task that sleeps 5 ms between 10 us runs: how late, past the 5 ms, it runs again.
    auto lateness = [](sim_dur deep_exit, sim_dur deep_wake = 0) {
        cost_params c = sched_fixture::no_costs();
        c.cstate_deep_exit = deep_exit;
        c.cstate_deep_wake = deep_wake;
        c.cstate_deep_residency = usecs(300);
        c.cstate_c1_residency = usecs(2);
        c.cstate_c1_exit = 1000;
        sched_fixture t(testlib::small_machine(2), "6.6", 1, "", c);
        auto starts = std::make_shared<std::vector<sim_time>>();
        t.spawn("sleeper", run_10us_then_sleep(starts, msecs(5)), 0, 0, 1);
        t.run_for(msecs(100));
        EXPECT_GT(starts->size(), 10u);
        // The last gap: the governor has learned that idle periods are long.
        const sim_dur gap = (*starts)[starts->size() - 1] - (*starts)[starts->size() - 2];
        return gap - msecs(5) - usecs(10);
    };
    EXPECT_EQ(lateness(usecs(80)), usecs(80)) << "the timer's CPU leaves the deep state first";
    EXPECT_EQ(lateness(usecs(10)), usecs(10));
    // A measured wake time (cstate_deep_wake) is what the wakeup waits for; the declared
    // exit latency stays the governor's figure.
    EXPECT_EQ(lateness(usecs(400), usecs(10)), usecs(10));
    EXPECT_EQ(lateness(usecs(400), 0), usecs(400)) << "none measured: the declared latency";
}

TEST(idle_work, an_idle_cpu_switches_to_its_wakee_after_the_work_it_owes)
{
    // kernel: kernel/sched/idle.c do_idle(): an idle CPU reaches schedule_idle() once the
    // interrupt work it was woken for is done. Here the timer's wakeup holds cpu1's rq lock
    // for rq_lock_hold (20 us, charged to idle cpu1): the switch to the wakee comes after
    // it, and only the switch's own lock hold is left in front of the wakee's work (both
    // were in front of it, 40 us, while the switch came at the wakeup).
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    sched_fixture t(testlib::small_machine(2), "6.6", 1, "", c);
    struct switches final : trace_sink {
        std::vector<trace_sched_switch> in; ///< switches from the idle task
        void sched_switch(const trace_sched_switch& s) override
        {
            if (s.prev_pid == 0 && s.cpu == 1)
                in.push_back(s);
        }
    } rec;
    t.k->add_sink(&rec);
    auto starts = std::make_shared<std::vector<sim_time>>();
    t.spawn("sleeper", run_10us_then_sleep(starts, msecs(1)), 0, 0, 1);
    t.run_for(msecs(5));
    ASSERT_GE(starts->size(), 3u);
    ASSERT_GE(rec.in.size(), 3u);
    // The last wake: the switch from idle, then 20 us of the switch's own lock hold.
    const sim_time switched = rec.in.back().ts;
    EXPECT_EQ(starts->back() - switched, usecs(20));
}

/*
 * The scene of the two tests below: a waker pinned to cpu0 polls in 1 us steps; a sleeper
 * spawned on cpu1 (pinned there if `sleeper_pin` is 1) runs 10 us and sleeps, and once
 * cpu1 is in its __schedule() to idle after it, the waker calls `at_wake()` and wakes the
 * sleeper, still prev there. Spawns the waker, runs 100 us, spawns the sleeper and returns;
 * the caller runs on.
 */
struct prev_wake {
    task_struct* sleeper = nullptr;
    bool woke = false;
    std::shared_ptr<int> ran = std::make_shared<int>(0); ///< the sleeper's steps
};

std::shared_ptr<prev_wake> wake_prev_in_schedule_to_idle(sched_fixture& t, int sleeper_pin,
                                                         std::function<void()> at_wake)
{
    auto st = std::make_shared<prev_wake>();
    kernel& kk = *t.k;
    t.spawn("waker", testlib::behaviour([st, &kk, at_wake](syscalls& k, task_struct&) {
                if (!st->woke && st->sleeper && kk.cpu_rq(1).in_schedule) {
                    st->woke = true;
                    at_wake();
                    k.wake_up_process(*st->sleeper);
                }
                return task_action::cpu(usecs(1));
            }),
            0, 0, 0);
    t.run_for(usecs(100));
    st->sleeper = &t.spawn("sleeper", testlib::behaviour([ran = st->ran](syscalls&, task_struct&) {
                               if ((*ran)++ % 2 == 0)
                                   return task_action::cpu(usecs(10));
                               return task_action::sleep();
                           }),
                           1, 0, sleeper_pin);
    return st;
}

TEST(idle_work, a_cpu_in_schedule_to_idle_is_not_idle_and_keeps_its_prev)
{
    // kernel: kernel/sched/core.c __schedule(), idle_cpu() and try_to_wake_up(), 6.6:
    // rq->curr stays prev (on_cpu) until context_switch(), so while cpu1 pays for its
    // switch to idle (here the rq lock's 20 us hold) idle_cpu(1) is false, and a wakeup
    // of prev meanwhile goes to cpu1's wake list (ttwu_queue_wakelist(p, task_cpu(p)):
    // ttwu_queue_cond() holds, cpu1 having nr_running == 0) without select_task_rq(),
    // which would have sent it to an idle cpu2 or cpu3 since cpu1 is not idle.
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    sched_fixture t(testlib::small_machine(4), "6.6", 1, "", c);
    kernel& kk = *t.k;
    // The waker notes what it saw when it woke the sleeper.
    bool cpu1_idle_then = true;
    const auto w = wake_prev_in_schedule_to_idle(t, -1, [&] { cpu1_idle_then = kk.idle_cpu(1); });
    t.run_for(usecs(200));
    ASSERT_TRUE(w->woke);
    EXPECT_FALSE(cpu1_idle_then) << "the kernel's rq->curr is still the sleeper";
    EXPECT_EQ(w->sleeper->cpu, 1) << "on_cpu: queued on its own CPU, no select_task_rq()";
    EXPECT_GE(*w->ran, 3) << "it ran again";
    EXPECT_EQ(kk.nr_migrations(), 0u);
}

/// For the wake-path tests below: a task's sched_waking, sched_wakeup and switch from idle on
/// its CPU, in order.
struct wake_steps final : trace_sink {
    int pid = -1;
    std::vector<sim_time> waking, wakeup, switched_in;
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
        if (s.next_pid == pid && s.prev_pid == 0)
            switched_in.push_back(s.ts);
    }
};

TEST(idle_work, a_wakeup_of_a_cpu_in_schedule_to_idle_sends_the_ipi_a_running_cpu_takes)
{
    // kernel: kernel/sched/idle.c do_idle() and kernel/sched/core.c
    // send_call_function_single_ipi() (6.18): the idle task's TIF_POLLING_NRFLAG is clear
    // while it is not running ("Our polling bit is clear if we're not scheduled") and
    // do_idle() sets it only when it starts. A wakeup of prev while cpu1 is still in its
    // __schedule() to idle (the rq lock's 20 us hold) goes to cpu1's wake list, and
    // set_nr_if_polling(rq->idle) is false, so the IPI is sent whether or not cpu1's idle
    // states poll (cstate_polls 1: MWAIT, 0: HLT); cpu1 has entered no C-state, so the
    // wakee is activated after the IPI's delivery to a running CPU (ipi_wakeup, 5 us) and
    // no idle exit is paid. Before, the wakeup was priced as one of an idle CPU: the
    // exit latency of the state the governor picked at the switch (the deep state's
    // 50 us here: the first idle, predicted long) and, with polling states, no IPI.
    // The IPI, delivered 5 us after the waking, is taken only when interrupts come back on
    // at the end of that __schedule() (kernel::irqs_on_after_schedule(), lane nibirq): 20 us
    // after the switch, the waking's instant here (before, at its delivery: 5 us).
    for (const int polls : {1, 0}) {
        SCOPED_TRACE(fmt::format("cstate_polls={}", polls));
        cost_params c = sched_fixture::no_costs();
        c.rq_lock_hold = usecs(20);
        c.cstate_polls = polls;
        c.ipi_wakeup = usecs(5);
        c.ipi_send = usecs(1);
        c.cstate_c1_exit = usecs(1);
        c.cstate_c1_residency = usecs(2);
        c.cstate_deep_exit = usecs(50);
        c.cstate_deep_residency = usecs(300);
        sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
        kernel& kk = *t.k;
        wake_steps rec;
        kk.add_sink(&rec);
        wakeup_costs before;
        const auto w = wake_prev_in_schedule_to_idle(
            t, 1, [&] { before = kk.charges().cm().wakeup_cost_totals(); });
        rec.pid = w->sleeper->pid;
        t.run_for(usecs(300));
        ASSERT_TRUE(w->woke);
        ASSERT_EQ(rec.waking.size(), 1u);
        ASSERT_EQ(rec.wakeup.size(), 1u);
        EXPECT_EQ(rec.wakeup[0] - rec.waking[0], usecs(20)) << "the IPI, with interrupts on";
        const wakeup_costs after = kk.charges().cm().wakeup_cost_totals();
        EXPECT_EQ(after.ipis - before.ipis, 1u) << "sent: the polling bit is not set yet";
        EXPECT_EQ(after.idle_exits - before.idle_exits, 0u) << "no C-state was entered";
        EXPECT_GE(*w->ran, 3) << "it ran again";
    }
}

/// For the IPI tests: spawns "waker" on cpu0, which runs 10 us, then wakes `sleeper`
/// (calling `before_wake` with the time first, when given) and sleeps 1 ms, over and over.
void spawn_periodic_waker(sched_fixture& t, task_struct& sleeper,
                          std::function<void(sim_time)> before_wake = {})
{
    auto phase = std::make_shared<int>(0);
    t.spawn("waker", testlib::behaviour([=, &sleeper](syscalls& k, task_struct& p) {
                if (*phase == 0) {
                    *phase = 1;
                    return task_action::cpu(usecs(10));
                }
                *phase = 0;
                if (before_wake)
                    before_wake(k.now());
                k.wake_up_process(sleeper);
                k.schedule_timeout(p, msecs(1));
                return task_action::sleep();
            }),
            0, 0, 0);
}

/// The IPI tests' scene: "sleeper" on cpu1, which spawn_periodic_waker()'s waker on cpu0
/// wakes over and over, run 5 ms with `rec` (which must outlive t's runs) recording the
/// sleeper's steps; its last wakeup, step by step.
struct last_wakeup {
    sim_dur waking_to_wakeup = -1; ///< sched_waking (waker's CPU) to sched_wakeup (cpu1)
    sim_dur wakeup_to_switch = -1; ///< sched_wakeup to the switch to the sleeper
};
last_wakeup run_woken_sleeper(sched_fixture& t, wake_steps& rec)
{
    t.k->add_sink(&rec);
    task_struct& sleeper = t.spawn(
        "sleeper", testlib::behaviour([](syscalls&, task_struct&) { return task_action::sleep(); }),
        1, 0, 1);
    rec.pid = sleeper.pid;
    spawn_periodic_waker(t, sleeper);
    t.run_for(msecs(5));
    if (rec.switched_in.size() < 3 || rec.waking.empty() ||
        rec.wakeup.size() != rec.waking.size()) {
        ADD_FAILURE() << "the sleeper was woken " << rec.waking.size() << " times, switched in "
                      << rec.switched_in.size();
        return {};
    }
    const std::size_t n = rec.switched_in.size() - 1;
    const std::size_t w = rec.waking.size() - 1;
    return {rec.wakeup[w] - rec.waking[w], rec.switched_in[n] - rec.wakeup[w]};
}

TEST(idle_work,
     an_idle_cpu_woken_by_its_own_timer_reprograms_it_and_leaves_do_idle_before_the_switch)
{
    // kernel: kernel/time/hrtimer.c hrtimer_interrupt() and kernel/sched/idle.c do_idle(),
    // 6.18, as tracefs shows the path on a 6.18.44 guest (docs/replay.md, lane replay9):
    // the timer's handler wakes the sleeper (sched_waking, sched_wakeup), then programs
    // the clockevent for the next expiry; the CPU leaves the handler, then do_idle()
    // (tick_nohz_idle_exit()), and schedule_idle() switches. So the switch comes
    // hrtimer_interrupt_reprogram + do_idle_exit after the wakeup (7 us here), the C1
    // exit (1 us) before the waking; with both costs 0, at the wakeup, as before.
    for (const sim_dur exit : {sim_dur{0}, usecs(4)}) {
        SCOPED_TRACE(fmt::format("do_idle_exit={}", exit));
        cost_params c = sched_fixture::no_costs();
        c.cstate_c1_exit = c.cstate_deep_exit = usecs(1);
        c.cstate_polls = 0;
        c.do_idle_exit = exit;
        c.hrtimer_interrupt_reprogram = exit == 0 ? 0 : usecs(3);
        sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
        wake_steps rec;
        t.k->add_sink(&rec);
        auto starts = std::make_shared<std::vector<sim_time>>();
        rec.pid = t.spawn("sleeper", run_10us_then_sleep(starts, msecs(1)), 0, 0, 1).pid;
        t.run_for(msecs(5));
        ASSERT_GE(rec.switched_in.size(), 3u);
        ASSERT_GE(rec.waking.size(), 2u); // the first switch-in is the new task's
        const std::size_t n = rec.switched_in.size() - 1;
        const std::size_t w = rec.waking.size() - 1;
        EXPECT_EQ(rec.wakeup[w], rec.waking[w]) << "the wakeup is in the handler";
        EXPECT_EQ(rec.switched_in[n] - rec.wakeup[w], exit == 0 ? 0 : usecs(7))
            << "reprogramming, then the way out of do_idle()";
        // The sleep's timer expired 1 ms after the previous run's end; the C1 exit comes
        // before the handler's waking.
        EXPECT_EQ(starts->back() - rec.switched_in[n], 0);
    }
}

TEST(idle_work, an_idle_cpu_woken_by_the_wake_list_ipi_leaves_do_idle_without_reprogramming)
{
    // kernel: as above, for a wakeup by another CPU: the wake-list IPI's handler
    // (sched_ttwu_pending(): sched_wakeup on the wakee's CPU, in hardirq context) sets
    // need_resched; no clockevent write in the handler, so only do_idle_exit lies between
    // the wakeup and the switch (4 us), the C1 exit (3 us) and the IPI (5 us) before the
    // wakeup. A CPU woken while still in __schedule() to idle never entered do_idle()'s
    // loop and owes nothing (the last check).
    cost_params c = sched_fixture::no_costs();
    c.cstate_c1_exit = c.cstate_deep_exit = usecs(3);
    c.ipi_wakeup = usecs(5);
    c.cstate_polls = 0;
    c.do_idle_exit = usecs(4);
    c.hrtimer_interrupt_reprogram = usecs(50); // not the timer's handler: never charged
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
    wake_steps rec;
    const last_wakeup last = run_woken_sleeper(t, rec);
    EXPECT_EQ(last.waking_to_wakeup, usecs(3) + usecs(5)) << "the exit, the IPI";
    EXPECT_EQ(last.wakeup_to_switch, usecs(4)) << "do_idle()'s way out only";
}

TEST(idle_work, a_cpu_woken_in_schedule_to_idle_owes_no_way_out_of_do_idle)
{
    // The scene of a_wakeup_of_a_cpu_in_schedule_to_idle_sends_the_ipi_a_running_cpu_takes:
    // cpu1 is woken while it pays its switch to idle (20 us of rq lock), before do_idle()'s
    // loop: the switch back to the sleeper comes when that work is done, with no
    // do_idle_exit (80 us here, which would show) after the IPI's wakeup.
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(20);
    c.cstate_polls = 0;
    c.ipi_wakeup = usecs(5);
    c.do_idle_exit = usecs(80);
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
    wake_steps rec;
    t.k->add_sink(&rec);
    const auto w = wake_prev_in_schedule_to_idle(t, 1, [] {});
    rec.pid = w->sleeper->pid;
    t.run_for(usecs(300));
    ASSERT_TRUE(w->woke);
    ASSERT_EQ(rec.wakeup.size(), 1u);
    // The switch from idle back to the sleeper, after its wakeup (the earlier ones are its
    // first run's).
    const auto back = std::find_if(rec.switched_in.begin(), rec.switched_in.end(),
                                   [&](sim_time ts) { return ts >= rec.wakeup[0]; });
    ASSERT_NE(back, rec.switched_in.end());
    EXPECT_LT(*back - rec.wakeup[0], usecs(80));
}

TEST(sched_tracepoint, a_local_preemption_switches_after_the_wakings_and_wakeups_writes)
{
    // kernel: kernel/sched/core.c try_to_wake_up() and ttwu_do_activate() -> ttwu_do_wakeup()
    // (6.18): sched_waking at the start, then (here the wakee's CPU is the waker's) the
    // enqueue, wakeup_preempt() (an RT wakee over a fair curr: resched_curr()), and
    // sched_wakeup; the CPU reaches its preemption point after the path, so the switch to
    // the wakee comes after both ring-buffer writes (2 us here); with the cost 0 (tracing
    // off) at the waking, as before.
    for (const sim_dur tp : {sim_dur{0}, usecs(1)}) {
        SCOPED_TRACE(fmt::format("sched_tracepoint={}", tp));
        cost_params c = sched_fixture::no_costs();
        c.sched_tracepoint = tp;
        sched_fixture t(testlib::small_machine(1), "6.18", 1, "", c);
        wake_steps rec;
        t.k->add_sink(&rec);
        std::vector<sim_time> preempted; // the waker's switches to the RT task
        struct preemptions final : trace_sink {
            std::vector<sim_time>* out;
            explicit preemptions(std::vector<sim_time>* o) : out(o) {}
            void sched_switch(const trace_sched_switch& s) override
            {
                if (s.prev_preempted)
                    out->push_back(s.ts);
            }
        } pre(&preempted);
        t.k->add_sink(&pre);
        task_opts o;
        o.comm = "rt";
        o.policy = SCHED_FIFO;
        o.rt_priority = 50;
        task_struct& rt = t.k->spawn(
            testlib::behaviour([](syscalls&, task_struct&) { return task_action::sleep(); }), o);
        rec.pid = rt.pid;
        auto woke = std::make_shared<bool>(false);
        t.spawn("waker", testlib::behaviour([woke, &rt](syscalls& k, task_struct&) {
                    if (k.now() >= usecs(50) && !*woke) {
                        *woke = true;
                        k.wake_up_process(rt);
                    }
                    return task_action::cpu(usecs(10));
                }),
                0);
        t.run_for(usecs(200));
        ASSERT_EQ(rec.waking.size(), 1u);
        ASSERT_EQ(rec.wakeup.size(), 1u);
        ASSERT_EQ(preempted.size(), 1u);
        EXPECT_EQ(preempted[0] - rec.waking[0], 2 * tp) << "sched_waking's and sched_wakeup's";
    }
}

TEST(sched_tracepoint, the_waker_sends_the_wake_list_ipi_after_its_waking_write)
{
    // kernel: as above, for a wakee whose CPU is idle (TTWU_QUEUE): the waker writes
    // sched_waking, then queues the wakee and sends the IPI (1 us later here); the
    // target leaves C1 (3 us), takes the IPI (5 us) and in its handler enqueues and
    // writes sched_wakeup, after which it switches (1 us more). With the cost 0 the wakeup
    // comes 8 us after the waking and the switch at the wakeup (the first check's scene
    // in idle_work.an_idle_cpu_woken_by_the_wake_list_ipi_leaves_do_idle_without_reprogramming).
    for (const sim_dur tp : {sim_dur{0}, usecs(1)}) {
        SCOPED_TRACE(fmt::format("sched_tracepoint={}", tp));
        cost_params c = sched_fixture::no_costs();
        c.cstate_c1_exit = c.cstate_deep_exit = usecs(3);
        c.ipi_wakeup = usecs(5);
        c.cstate_polls = 0;
        c.sched_tracepoint = tp;
        sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
        wake_steps rec;
        const last_wakeup last = run_woken_sleeper(t, rec);
        EXPECT_EQ(last.waking_to_wakeup, tp + usecs(3) + usecs(5))
            << "the waking's write, the exit, the IPI";
        EXPECT_EQ(last.wakeup_to_switch, tp) << "the wakeup's write";
    }
}

/// For the sched_wakeup stamp tests below: every sched_waking and sched_wakeup of the run.
struct wakeup_events final : trace_sink {
    std::vector<trace_sched_wakeup> waking, wakeup;
    void sched_waking(const trace_sched_wakeup& w) override { waking.push_back(w); }
    void sched_wakeup(const trace_sched_wakeup& w) override { wakeup.push_back(w); }
};

TEST(sched_tracepoint, a_direct_remote_wakeup_is_written_on_the_wakers_cpu)
{
    // kernel: try_to_wake_up() -> ttwu_queue() without the wake list (NO_TTWU_QUEUE here;
    // a busy target in the waker's LLC does the same) -> ttwu_do_activate() ->
    // ttwu_do_wakeup(), 6.18: the waker locks cpu1's rq, enqueues, wakeup_preempt() ->
    // resched_curr() sends the IPI to idle cpu1, then writes sched_wakeup on its own CPU.
    // Before, the model wrote it on cpu1. target_cpu is 1. model: stamped at the waking: the
    // waker blocks in the step that woke, and its __schedule() (at the block in the model)
    // activates the wakee first (kernel::ttwu_direct_flush(); the kernel's comes the lock,
    // the lines and the IPI's send later).
    cost_params c = sched_fixture::no_costs();
    c.sched_tracepoint = usecs(1);
    c.rq_lock_hold = usecs(2);
    c.ipi_send = usecs(3);
    c.ipi_wakeup = usecs(5);
    c.cstate_polls = 0;
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "NO_TTWU_QUEUE", c);
    wakeup_events rec;
    t.k->add_sink(&rec);
    task_struct& sleeper = t.spawn(
        "sleeper", testlib::behaviour([](syscalls&, task_struct&) { return task_action::sleep(); }),
        1, 0, 1);
    spawn_periodic_waker(t, sleeper);
    t.run_for(msecs(3));
    std::vector<std::pair<trace_sched_wakeup, trace_sched_wakeup>> pairs; // the sleeper's
    for (const auto& wu : rec.wakeup)
        for (const auto& wk : rec.waking)
            if (wu.pid == sleeper.pid && wk.pid == sleeper.pid && wk.ts <= wu.ts &&
                (pairs.empty() || wk.ts > pairs.back().first.ts))
                pairs.emplace_back(wk, wu);
    ASSERT_GE(pairs.size(), 2u);
    for (const auto& [wk, wu] : pairs) {
        EXPECT_EQ(wk.cpu, 0);
        EXPECT_EQ(wu.cpu, 0) << "written by the waker's ttwu_do_wakeup()";
        EXPECT_EQ(wu.target_cpu, 1);
        EXPECT_EQ(wu.ts, wk.ts) << "model: at the waking";
    }
}

/*
 * The scene of the two tests below: a waker on cpu0 wakes an RT task of busy cpu1 (both
 * CPUs in one LLC, so the waker activates it itself: ttwu_queue() without the wake list)
 * and runs on; the RT wakee preempts cpu1's fair task, so wakeup_preempt() ->
 * resched_curr() sends the reschedule IPI, under cpu1's rq lock. cpu1's task blocks
 * `busy_for` after the run starts.
 */
struct ipi_send_scene {
    std::vector<sim_time> rt_steps; ///< the RT task's steps (its first is its spawn's)
    sim_time waking = -1, wakeup = -1, switch_to_rt = -1, busy_blocked = -1;
    int wakeup_cpu = -1;
};
ipi_send_scene run_ipi_send_scene(const cost_params& c, sim_dur busy_for)
{
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
    auto scene = std::make_shared<ipi_send_scene>();
    task_opts o;
    o.comm = "rt";
    o.policy = SCHED_FIFO;
    o.rt_priority = 50;
    o.allowed = cpumask(2);
    o.allowed.set(1);
    o.cpu = 1;
    task_struct& rt = t.k->spawn(testlib::behaviour([scene](syscalls& k, task_struct&) {
                                     scene->rt_steps.push_back(k.now());
                                     return task_action::sleep();
                                 }),
                                 o);
    struct rec final : trace_sink {
        ipi_send_scene* s;
        int pid;
        rec(ipi_send_scene* sc, int p) : s(sc), pid(p) {}
        void sched_waking(const trace_sched_wakeup& w) override
        {
            if (w.pid == pid)
                s->waking = w.ts;
        }
        void sched_wakeup(const trace_sched_wakeup& w) override
        {
            if (w.pid == pid) {
                s->wakeup = w.ts;
                s->wakeup_cpu = w.cpu;
            }
        }
        void sched_switch(const trace_sched_switch& sw) override
        {
            if (sw.next_pid == pid && s->waking >= 0)
                s->switch_to_rt = sw.ts;
        }
    } r(scene.get(), rt.pid);
    t.k->add_sink(&r);
    auto busy_phase = std::make_shared<int>(0);
    t.spawn("busy", testlib::behaviour([scene, busy_phase, busy_for](syscalls& k, task_struct&) {
                if ((*busy_phase)++ == 0)
                    return task_action::cpu(busy_for);
                if (scene->busy_blocked < 0)
                    scene->busy_blocked = k.now();
                return task_action::sleep();
            }),
            1, 0, 1);
    auto waker_phase = std::make_shared<int>(0);
    t.spawn("waker", testlib::behaviour([waker_phase, &rt](syscalls& k, task_struct&) {
                const int ph = (*waker_phase)++;
                if (ph == 0)
                    return task_action::cpu(usecs(50));
                if (ph == 1)
                    k.wake_up_process(rt);
                return ph < 3 ? task_action::cpu(usecs(10)) : task_action::sleep();
            }),
            0, 0, 0);
    t.run_for(usecs(200));
    return *scene;
}

TEST(sched_tracepoint, a_direct_remote_wakeups_sched_wakeup_follows_its_ipi_send)
{
    // kernel: ttwu_queue() -> ttwu_do_activate(), 5.15 to 6.18 (sndrzt/linux-6.5
    // 4f5cdb332210, gfunkmonk/linux-6.18.2 062668f4d006): activate_task(), wakeup_preempt()
    // -> resched_curr() -> smp_send_reschedule() to busy cpu1, then ttwu_do_wakeup() writes
    // sched_wakeup, all on the waker's CPU under cpu1's rq lock. The waker takes the lock
    // (2 us) and enqueues, then sends (3 us): sched_wakeup 5 us after sched_waking. Before,
    // it was stamped at the enqueue (2 us) and the send charged after it. cpu1 runs on
    // (busy 1 ms): it takes the IPI (5 us) and switches to the RT wakee after its stamp.
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(2);
    c.ipi_send = usecs(3);
    c.ipi_wakeup = usecs(5);
    const ipi_send_scene s = run_ipi_send_scene(c, msecs(1));
    ASSERT_GE(s.waking, 0);
    ASSERT_GE(s.wakeup, 0);
    EXPECT_EQ(s.wakeup_cpu, 0) << "the waker's ttwu_do_wakeup()";
    EXPECT_EQ(s.wakeup - s.waking, usecs(2) + usecs(3)) << "the lock's hold, then the send";
    EXPECT_GE(s.switch_to_rt, s.wakeup);
}

TEST(sched_tracepoint, the_target_picks_the_wakee_after_the_wakers_ipi_send)
{
    // kernel: as above; the waker holds cpu1's rq lock across the send to its
    // sched_wakeup write, and cpu1's __schedule() takes that lock before its pick. Here
    // the waking is at W (52 us: the spawns' locks come first), the enqueue at W + 2 (the
    // lock's hold), the send to W + 5; cpu1's fair task blocks at W + 3, during the send:
    // its __schedule() waits for the lock to W + 5 and holds it 2 us, so the RT wakee runs
    // at W + 7 (before, the waker's hold ended at the enqueue: W + 5).
    // model: the switch is decided at the block (W + 3; the wakee is queued) and the wakee
    // runs once the lock's wait and hold, charged to cpu1, are over; its sched_wakeup is
    // written at the switch, so the trace keeps the wakeup before the switch.
    cost_params c = sched_fixture::no_costs();
    c.rq_lock_hold = usecs(2);
    c.ipi_send = usecs(3);
    c.ipi_wakeup = usecs(5);
    const ipi_send_scene s = run_ipi_send_scene(c, usecs(51));
    const sim_time w = s.waking;
    ASSERT_EQ(w, usecs(52));
    ASSERT_EQ(s.busy_blocked, w + usecs(3)) << "the scene: cpu1 blocks during the send";
    ASSERT_EQ(s.rt_steps.size(), 2u);
    EXPECT_EQ(s.rt_steps[1], w + usecs(7)) << "after the send, as the rq lock is released";
    EXPECT_EQ(s.switch_to_rt, w + usecs(3));
    EXPECT_EQ(s.wakeup, s.switch_to_rt) << "written at the switch";
}

TEST(sched_tracepoint, a_wake_lists_wakeups_are_written_on_the_target)
{
    // kernel: sched_ttwu_pending() -> ttwu_do_activate() of each queued wakee, 6.18: on
    // the target CPU, in its IPI's handler. The waker wakes two sleepers of idle cpu1 in
    // one step: both go on cpu1's wake list (cpu1 still has nothing queued). A guard of
    // the wake list's case (the model wrote these on the target before too); model: both
    // at the handler's instant (the kernel's second comes after the first's write).
    cost_params c = sched_fixture::no_costs();
    c.sched_tracepoint = usecs(1);
    c.ipi_wakeup = usecs(5);
    c.cstate_polls = 0;
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
    wakeup_events rec;
    t.k->add_sink(&rec);
    const auto sleep = [] {
        return testlib::behaviour([](syscalls&, task_struct&) { return task_action::sleep(); });
    };
    task_struct& a = t.spawn("a", sleep(), 1, 0, 1);
    task_struct& b = t.spawn("b", sleep(), 1, 0, 1);
    auto phase = std::make_shared<int>(0);
    t.spawn("waker", testlib::behaviour([&a, &b, phase](syscalls& k, task_struct& p) {
                if (*phase == 0) {
                    *phase = 1;
                    return task_action::cpu(usecs(10));
                }
                *phase = 0;
                k.wake_up_process(a);
                k.wake_up_process(b);
                k.schedule_timeout(p, msecs(1));
                return task_action::sleep();
            }),
            0, 0, 0);
    t.run_for(usecs(500));
    std::vector<trace_sched_wakeup> wa, wb;
    for (const auto& w : rec.wakeup) {
        if (w.pid == a.pid)
            wa.push_back(w);
        else if (w.pid == b.pid)
            wb.push_back(w);
    }
    ASSERT_EQ(wa.size(), 1u);
    ASSERT_EQ(wb.size(), 1u);
    EXPECT_EQ(wa[0].cpu, 1);
    EXPECT_EQ(wb[0].cpu, 1);
    EXPECT_EQ(wa[0].target_cpu, 1);
    EXPECT_EQ(wb[0].target_cpu, 1);
    EXPECT_EQ(wa[0].ctx, trace_irq_ctx::hardirq) << "the IPI's handler";
    EXPECT_EQ(wb[0].ts, wa[0].ts) << "model: at the handler's instant";
}

TEST(sched_tracepoint, every_tracepoint_the_run_emits_is_charged_once_to_a_cpu)
{
    // Every sched_switch, sched_waking, sched_wakeup, sched_migrate_task and
    // sched_process_exit of a run (tasks spawned as the run's setup emit no charged fork or
    // sched_wakeup_new) costs sched_tracepoint once, on some CPU: the accounting's
    // "tracepoints", busy or idle, is the count times the cost. The sleeps (200 us) leave the
    // CPUs idle part of the time: 6 migrations, with the run starting at jiffies 0 as with
    // it 68.7 s after boot. With 40 us sleeps both CPUs stayed busy and the scene's one
    // migration (at 36 ms) was gone once the start state made the first periodic balance
    // due at the first tick (fair_select.cc jiffies()).
    cost_params c = sched_fixture::no_costs();
    c.sched_tracepoint = 300;
    c.context_switch = 1000;
    sched_fixture t(testlib::small_machine(2), "6.18", 1, "", c);
    struct counter final : trace_sink {
        u64 n = 0;
        void sched_switch(const trace_sched_switch&) override { ++n; }
        void sched_waking(const trace_sched_wakeup&) override { ++n; }
        void sched_wakeup(const trace_sched_wakeup&) override { ++n; }
        void sched_migrate_task(const trace_sched_migrate_task&) override { ++n; }
        void sched_process_exit(const trace_sched_process&) override { ++n; }
    } rec;
    t.k->add_sink(&rec);
    for (int i = 0; i < 5; ++i)
        t.spawn(fmt::format("t{}", i), testlib::run_sleep(usecs(50 + 30 * i), usecs(200), 200), 0);
    t.run_for(secs(1));
    ASSERT_TRUE(t.k->all_exited());
    EXPECT_GT(t.k->nr_migrations(), 0u) << "the scene has migrations";
    sim_dur charged = 0;
    for (int cpu = 0; cpu < 2; ++cpu) {
        const cpu_time_accounting a = t.k->charges().cpu_accounting(t.k->cpu_rq(cpu));
        charged += a.spent[ACCT_TRACEPOINT] + a.idle_work[ACCT_TRACEPOINT];
    }
    EXPECT_GT(rec.n, 1000u);
    EXPECT_EQ(charged, static_cast<sim_dur>(rec.n) * 300);
}

TEST(wakeup_remote_lines, a_waker_enqueueing_on_a_busy_cpu_pulls_its_runqueue_lines)
{
    // cpu0 wakes a sleeper pinned to cpu1, which a spinner keeps busy (so the waker enqueues
    // there itself: no wake list), then one pinned to its own cpu0.
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 50;
    c.wakeup_remote_lines = 10;
    sched_fixture t(testlib::small_machine(2), "6.6", 1, "", c);
    task_struct& remote = t.spawn(
        "remote", testlib::behaviour([](syscalls&, task_struct&) { return task_action::sleep(); }),
        1, 0, 1);
    t.run_for(usecs(100));
    t.spawn("spin", testlib::spin(), 1, 0, 1);
    task_struct& local = t.spawn(
        "local", testlib::behaviour([](syscalls&, task_struct&) { return task_action::sleep(); }),
        0, 0, 0);
    t.run_for(msecs(1));
    ASSERT_NE(remote.__state, TASK_RUNNING);
    ASSERT_NE(local.__state, TASK_RUNNING);
    auto phase = std::make_shared<int>(0);
    t.spawn("waker", testlib::behaviour([&, phase](syscalls& k, task_struct&) {
                switch ((*phase)++) {
                case 0:
                    return task_action::cpu(usecs(10));
                case 1:
                    k.wake_up_process(remote);
                    return task_action::cpu(usecs(10));
                case 2:
                    k.wake_up_process(local);
                    return task_action::cpu(usecs(10));
                default:
                    return task_action::do_exit();
                }
            }),
            0, 0, 0);
    t.run_for(msecs(1));
    EXPECT_EQ(t.k->charges().cm().wakeup_cost_totals().remote_activations, 1u)
        << "the local wakeup pulls nothing";
    // Ten lines of cpu1's runqueue at 50 ns, plus its lock's line, charged to cpu0.
    EXPECT_EQ(t.k->charges().cpu_accounting(t.k->cpu_rq(0)).spent[ACCT_LOCK_HOLD], 10 * 50 + 50);
}

TEST(remote_notify, an_idle_cpu_that_halts_needs_the_ipi_and_its_sender_pays_for_it)
{
    // cpu0 wakes a task sleeping on idle cpu1 every 1 ms: how long until it runs, and
    // how much cpu0 spent sending IPIs.
    struct outcome {
        sim_dur latency;
        sim_dur ipi_time;
    };
    auto measure = [](sim_dur polls) {
        cost_params c = sched_fixture::no_costs();
        c.cstate_c1_exit = c.cstate_deep_exit = usecs(3);
        c.ipi_wakeup = usecs(5);
        c.ipi_send = usecs(2);
        c.cstate_polls = polls;
        sched_fixture t(testlib::small_machine(2), "6.6", 1, "", c);
        auto woken_at = std::make_shared<sim_time>(-1);
        auto latencies = std::make_shared<std::vector<sim_dur>>();
        task_struct& sleeper =
            t.spawn("sleeper", testlib::behaviour([=](syscalls& k, task_struct&) {
                        if (*woken_at >= 0)
                            latencies->push_back(k.now() - *woken_at);
                        return task_action::sleep();
                    }),
                    1, 0, 1);
        spawn_periodic_waker(t, sleeper, [=](sim_time now) { *woken_at = now; });
        t.run_for(msecs(20));
        EXPECT_GT(latencies->size(), 10u);
        const cpu_time_accounting a = t.k->charges().cpu_accounting(t.k->cpu_rq(0));
        return outcome{latencies->back(), a.spent[ACCT_IPI] + a.idle_work[ACCT_IPI]};
    };
    const outcome polling = measure(1), halting = measure(0);
    EXPECT_EQ(polling.latency, usecs(3)) << "need_resched is seen on leaving the C-state";
    EXPECT_EQ(polling.ipi_time, 0);
    EXPECT_EQ(halting.latency, usecs(3) + usecs(5)) << "the IPI first, then the exit";
    EXPECT_GT(halting.ipi_time, 0);
    EXPECT_EQ(halting.ipi_time % usecs(2), 0) << "whole IPIs";
}

TEST(update_cfs_group, a_reader_fetches_tg_load_avg_only_after_another_cpu_wrote_it)
{
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 20;
    c.line_pkg = 80;
    sched_fixture t(two_llc_machine(), "6.6", 1, "", c);
    kernel& k = *t.k;
    cfs_rq& reader = k.cpu_rq(5).cfs; // the other LLC than cpu0
    ASSERT_NE(reader.tg, nullptr);
    task_group& tg = *reader.tg;
    auto spent = [&] {
        const cpu_time_accounting a = k.charges().cpu_accounting(k.cpu_rq(5));
        return a.idle_work[ACCT_LOCK_HOLD] + a.idle_work[ACCT_LOCK_SPIN];
    };
    k.charges().lock_and_charge(tg.load_avg_line, 0, 10); // cpu0 writes tg->load_avg
    t.run_for(usecs(1));                        // ... and the write completes
    const sim_dur before = spent();
    update_cfs_group(k, reader, 5);
    EXPECT_EQ(spent() - before, 80) << "one transfer across LLCs";
    update_cfs_group(k, reader, 5);
    EXPECT_EQ(spent() - before, 80) << "the line is still shared: a hit";
    EXPECT_EQ(tg.load_avg_reads, 2u);
    EXPECT_EQ(tg.load_avg_read_misses, 1u);
    k.charges().lock_and_charge(tg.load_avg_line, 1, 10); // a second write, from cpu1 (same LLC as cpu0)
    update_cfs_group(k, reader, 5);
    EXPECT_GT(spent() - before, 160) << "waits for cpu1's write in flight, then fetches";
    EXPECT_EQ(tg.load_avg_read_misses, 2u);
}

TEST(update_cfs_group, the_cpu_running_the_enqueue_reads_the_line_whatever_runqueue_it_is)
{
    // calc_group_shares() reads tg->load_avg on the CPU executing the enqueue or
    // dequeue: a balancer or waker working on cpu5's runqueue from cpu1 pays the
    // fetch, and cpu5's own next read still misses.
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 20;
    c.line_pkg = 80;
    sched_fixture t(two_llc_machine(), "6.6", 1, "", c);
    kernel& k = *t.k;
    cfs_rq& remote = k.cpu_rq(5).cfs;
    task_group& tg = *remote.tg;
    auto spent = [&](int cpu) {
        const cpu_time_accounting a = k.charges().cpu_accounting(k.cpu_rq(cpu));
        return a.idle_work[ACCT_LOCK_HOLD] + a.idle_work[ACCT_LOCK_SPIN];
    };
    k.charges().lock_and_charge(tg.load_avg_line, 0, 10); // cpu0 writes tg->load_avg
    t.run_for(usecs(1));
    const sim_dur cpu1_before = spent(1), cpu5_before = spent(5);
    update_cfs_group(k, remote, 1); // cpu1 works on cpu5's cfs_rq
    EXPECT_EQ(spent(1) - cpu1_before, 20) << "cpu1 fetched it within the LLC";
    EXPECT_EQ(spent(5) - cpu5_before, 0);
    t.run_for(usecs(1)); // cpu1's fetch is done
    update_cfs_group(k, remote, 5);
    EXPECT_EQ(spent(5) - cpu5_before, 80) << "cpu5's own cache did not have it";
    EXPECT_EQ(tg.load_avg_read_misses, 2u);
}

TEST(update_cfs_group, after_a_write_only_each_llcs_first_reader_takes_the_line)
{
    // cpus 0-3 and 4-7 are two LLCs. After cpu0's write, cpu5 is the first reader in its
    // LLC: it takes the line for one transfer across LLCs (80). cpu6 and cpu7 read the
    // copy cpu5 brought into their LLC: they wait for it to arrive, then pay line_llc
    // (80 + 20 each), and the line stays free for others. cpu1 shares the writer's LLC,
    // whose copy is there already: 20, although the line is busy with cpu5's fetch.
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 20;
    c.line_pkg = 80;
    c.atomic_op = 10;
    sched_fixture t(two_llc_machine(), "6.6", 1, "", c);
    kernel& k = *t.k;
    task_group& tg = *k.cpu_rq(0).cfs.tg;
    auto write = [&](int cpu) { // update_tg_load_avg() with a change above 1/64
        cfs_rq& cfs = k.cpu_rq(cpu).cfs;
        cfs.avg.load_avg = static_cast<unsigned long>(cfs.tg_load_avg_contrib) + 1024;
        const u64 before = tg.load_avg_updates;
        update_tg_load_avg(k, cfs, cpu);
        ASSERT_EQ(tg.load_avg_updates, before + 1);
    };
    auto spent = [&](int cpu) {
        const cpu_time_accounting a = k.charges().cpu_accounting(k.cpu_rq(cpu));
        return a.idle_work[ACCT_LOCK_HOLD] + a.idle_work[ACCT_LOCK_SPIN];
    };
    auto read = [&](int cpu) {
        const sim_dur before = spent(cpu);
        update_cfs_group(k, k.cpu_rq(cpu).cfs, cpu);
        return spent(cpu) - before;
    };
    write(0);
    t.run_for(usecs(1)); // ... and the write completes
    const sim_time t0 = k.now();
    EXPECT_EQ(read(5), 80) << "the first reader of LLC 4-7 fetches it from cpu0";
    EXPECT_EQ(tg.load_avg_line.busy_until, t0 + 80);
    EXPECT_EQ(read(6), 80 + 20) << "waits for cpu5's copy, then reads it inside the LLC";
    EXPECT_EQ(read(7), 80 + 20) << "not queued behind cpu6: the copy serves both";
    EXPECT_EQ(read(1), 20) << "the writer's LLC holds the version";
    EXPECT_EQ(tg.load_avg_line.busy_until, t0 + 80) << "only cpu5's fetch took the line";
    EXPECT_EQ(read(6), 0) << "cpu6's own copy: a hit";
    EXPECT_EQ(tg.load_avg_read_misses, 4u);
    EXPECT_EQ(tg.load_avg_llc_hits, 3u);

    // cpu4 writes: it waits for cpu5's fetch (80), then takes the line from cpu0 (80) and
    // holds it for the atomic (10). Its LLC now has the version and cpu0's has not.
    write(4);
    EXPECT_EQ(tg.load_avg_line.busy_until, t0 + 80 + 80 + 10);
    EXPECT_EQ(read(6), 80 + 80 + 10 + 20) << "the copy in its LLC, once cpu4's write is done";
    EXPECT_EQ(read(1), 80 + 80 + 10 + 80) << "LLC 0-3's first reader fetches it from cpu4";
    EXPECT_EQ(tg.load_avg_line.busy_until, t0 + 80 + 80 + 10 + 80);
}

TEST(cpu_accounting, busy_time_matches_the_trace_and_the_breakdown_covers_every_cpu)
{
    sched_fixture t(two_llc_machine(2), "6.6", 3, "", cost_params{});
    sched_summary trace(t.m.nr_cpus());
    t.k->add_sink(&trace);
    for (int i = 0; i < 24; ++i)
        t.spawn(fmt::format("w{}", i), testlib::behaviour([](syscalls& k, task_struct& p) {
                    if (p.rng.below(3))
                        return task_action::cpu(k.charge(p, usecs(200)));
                    k.schedule_timeout(p, static_cast<sim_dur>(p.rng.below(usecs(400))));
                    return task_action::sleep();
                }));
    t.run_for(msecs(50));
    const sched_summary_result r = trace.finish(t.sim.now());
    sim_dur all_busy = 0, all_idle_work = 0;
    for (int cpu = 0; cpu < t.m.nr_cpus(); ++cpu) {
        const cpu_time_accounting a = t.k->charges().cpu_accounting(t.k->cpu_rq(cpu));
        sim_dur busy = a.task;
        for (sim_dur s : a.spent)
            busy += s;
        EXPECT_EQ(busy, r.busy[static_cast<std::size_t>(cpu)]) << "cpu" << cpu;
        all_busy += busy;
        for (sim_dur s : a.idle_work)
            all_idle_work += s;
        all_idle_work -= a.carried;
    }
    const sim_dur all = t.sim.now() * t.m.nr_cpus();
    EXPECT_GT(all_busy, 0);
    EXPECT_LE(all_busy + all_idle_work, all) << "kernel work while idle fits in the idle time";
}

} // namespace
} // namespace schedlab
