// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost model applied to CPUs (cpu_charges.h), on hand-built runqueues
 * without a kernel: a charge to an idle CPU keeps it busy into its next task,
 * a charge to a busy CPU moves its burst's end, segments spend their overhead
 * first, SMT sharing re-rates a sibling's burst, and the accounting adds the
 * segment in progress. Then the run_context (run_context.h) a kernel is handed:
 * the kernel charges and explains through it, and it serves one kernel.
 */
#include "sched/cpu_charges.h"
#include "sched/run_context.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

struct no_op_handler final : event_handler {
    void fire(u64) override {}
};

// Two CPUs (SMT siblings when smt), each an rq with its idle task current.
struct charges_fixture {
    machine m;
    simulation sim{1};
    testlib::idle_rqs cpus{m};
    std::vector<std::unique_ptr<rq>>& rqs = cpus.rqs;
    cpu_charges charges;
    task_struct task;
    no_op_handler h;

    explicit charges_fixture(int smt, cost_params p = {})
        : m(testlib::small_machine(2 / smt, smt)), charges(sim, m, p)
    {
        charges.attach(rqs);
        task.pid = 1;
        task.tgid = 1;
    }
    // When the only pending event, a burst's completion, fires.
    sim_time burst_end() const { return sim.queue().next_time(); }
    // `task` becomes cpu's current task with `work` ns left, its burst started now.
    rq& run(int cpu, sim_dur work)
    {
        rq& r = *rqs[static_cast<std::size_t>(cpu)];
        r.curr = &task;
        task.cpu = cpu;
        task.work_left = work;
        charges.cm().core_busy_changed(cpu, true);
        r.work_event = sim.after(charges.begin_segment(r), event_prio::task_work, &h);
        return r;
    }
};

TEST(cpu_charges, a_charge_to_an_idle_cpu_is_carried_into_its_next_task)
{
    charges_fixture f(1);
    rq& r0 = *f.rqs[0];
    f.charges.charge_cpu(r0, 300, ACCT_BALANCE);
    EXPECT_EQ(f.charges.cpu(0).acct.idle_work[ACCT_BALANCE], 300);
    EXPECT_EQ(f.charges.cpu(0).idle_busy_until, 300);
    EXPECT_EQ(f.charges.cpu(0).charged_ns, 300u);
    // A task arriving at once waits for the work still owed: its segment is 300 ns longer.
    f.run(0, 1000);
    EXPECT_EQ(f.burst_end(), 1300);
    EXPECT_EQ(f.charges.cpu(0).acct.carried, 300);
    f.charges.charge_cpu(r0, 0, ACCT_IPI);
    f.charges.charge_cpu(r0, -5, ACCT_IPI);
    EXPECT_EQ(f.charges.cpu(0).charged_ns, 300u) << "nothing charged for no time";
}

TEST(cpu_charges, a_charge_to_a_busy_cpu_moves_its_burst_end)
{
    charges_fixture f(1);
    rq& r = f.run(1, 1000);
    EXPECT_EQ(f.burst_end(), 1000);
    f.sim.run_until(400);
    f.charges.charge_cpu(r, 250, ACCT_LOCK_HOLD);
    EXPECT_EQ(f.task.work_left, 600) << "400 ns of the work done";
    EXPECT_EQ(f.burst_end(), 400 + 250 + 600);
    // Halfway through the charge, the accounting holds what the segment spent so far.
    f.sim.run_until(500);
    const cpu_time_accounting a = f.charges.cpu_accounting(r);
    EXPECT_EQ(a.spent[ACCT_LOCK_HOLD], 100);
    EXPECT_EQ(a.task, 400);
    // Ending the segment there leaves the rest of the charge owed.
    f.charges.end_segment(r);
    EXPECT_EQ(f.charges.cpu(1).pending[ACCT_LOCK_HOLD], 150);
    EXPECT_EQ(f.task.work_left, 600);
}

TEST(cpu_charges, a_busy_smt_sibling_slows_a_running_burst)
{
    cost_params p;
    p.smt_pct = 50;
    charges_fixture f(2, p);
    f.run(0, 1000);
    EXPECT_EQ(f.burst_end(), 1000) << "alone on its core: full rate";
    f.sim.run_until(200);
    // The sibling starts running something: cpu0's remaining 800 ns take twice as long.
    f.charges.cm().core_busy_changed(1, true);
    f.charges.update_smt_rates(1);
    EXPECT_EQ(f.charges.cpu(0).seg_rate_pct, 50u);
    EXPECT_EQ(f.burst_end(), 200 + 1600);
}

TEST(cpu_charges, a_lock_is_charged_to_the_cpu_that_takes_it)
{
    cost_params p = testlib::sched_fixture::no_costs();
    charges_fixture f(1, p);
    contended_lock l;
    l.busy_until = 500; // held elsewhere until 500 ns
    f.charges.lock_and_charge(l, 1, 40);
    EXPECT_EQ(f.charges.cpu(1).acct.idle_work[ACCT_LOCK_SPIN], 500);
    EXPECT_EQ(f.charges.cpu(1).acct.idle_work[ACCT_LOCK_HOLD], 40);
    EXPECT_EQ(f.charges.cpu(0).charged_ns, 0u);
}

TEST(cpu_charges, a_task_s_prices_follow_its_kind)
{
    cost_params p;
    p.jitter_pct = 0;
    charges_fixture f(1, p);
    task_struct thread;
    thread.pid = 2;
    thread.tgid = 1;
    thread.cpu = 1;
    EXPECT_EQ(f.charges.exit_cost(f.task), p.exit);
    EXPECT_EQ(f.charges.exit_cost(thread), p.exit_thread);
    EXPECT_EQ(f.charges.start_cost(thread, 1), p.start_thread);
    EXPECT_EQ(f.charges.start_cost(thread, 0), p.start_thread + p.start_remote);
    EXPECT_EQ(f.charges.jittered(f.task, 1234), 1234) << "no jitter at jitter_pct 0";
}

/*
 * switch_mm_irqs_off() / choose_new_asid() (arch/x86/mm/tlb.c), worked by hand: CPU 0
 * boots with init_mm in ASID 0 and next_asid 1. Each mm not holding a slot takes
 * next_asid's (1, 2, ... 5, then 0 with next_asid reset to 1) and pays switch_mm_flush;
 * the loaded mm again, or an mm still holding a slot, pays nothing more than
 * context_switch.
 */
struct switch_mm_fixture {
    cost_params p = flush_costs();
    charges_fixture f{1, p};
    rq& r = *f.rqs[0];
    std::vector<task_struct> tasks = std::vector<task_struct>(10);

    static cost_params flush_costs()
    {
        cost_params c = testlib::sched_fixture::no_costs();
        c.context_switch = 1000;
        c.switch_mm_flush = 700;
        return c;
    }
    // What switching CPU 0 to a task of tgid `mm` (pid `pid`) adds to its context-switch
    // time.
    sim_dur switch_to(int pid, int mm)
    {
        task_struct& t = tasks.at(static_cast<std::size_t>(pid));
        t.pid = pid;
        t.tgid = mm;
        const sim_dur before = f.charges.cpu(0).pending[ACCT_CONTEXT_SWITCH];
        f.charges.switch_in(r, t);
        return f.charges.cpu(0).pending[ACCT_CONTEXT_SWITCH] - before;
    }
};

TEST(switch_mm, a_switch_between_processes_flushes_only_when_the_next_mm_has_no_asid)
{
    switch_mm_fixture s;
    EXPECT_EQ(s.switch_to(1, 1), 1700) << "process 1's first run on the CPU: ASID 1, flushed";
    EXPECT_EQ(s.switch_to(2, 2), 1700) << "process 2: ASID 2, flushed";
    EXPECT_EQ(s.switch_to(1, 1), 1000) << "process 1 still holds ASID 1: CR3 without a flush";
    EXPECT_EQ(s.switch_to(2, 2), 1000);
    EXPECT_EQ(s.switch_to(1, 1), 1000);
}

TEST(switch_mm, threads_of_one_process_share_its_mm)
{
    switch_mm_fixture s;
    EXPECT_EQ(s.switch_to(1, 1), 1700) << "the process's first run: a new ASID";
    EXPECT_EQ(s.switch_to(2, 1), 1000) << "another thread of it: real_prev == next";
    EXPECT_EQ(s.switch_to(3, 1), 1000);
    EXPECT_EQ(s.switch_to(1, 1), 1000);
}

TEST(switch_mm, the_idle_task_keeps_the_last_mm_loaded)
{
    switch_mm_fixture s;
    EXPECT_EQ(s.switch_to(1, 1), 1700);
    // To idle: no switch_mm (lazy TLB); the idle task's own switch charges no context switch.
    s.f.charges.switch_to_idle(s.r);
    EXPECT_EQ(s.f.charges.cpu(0).idle_busy_until, 1700) << "only process 1's switch owed";
    EXPECT_EQ(s.switch_to(1, 1), 1000) << "back from idle to the borrowed mm: nothing to load";
    s.f.charges.switch_to_idle(s.r);
    EXPECT_EQ(s.switch_to(2, 2), 1700) << "from idle to another process: a new ASID";
}

TEST(switch_mm, six_processes_keep_their_asids_and_a_seventh_makes_every_switch_flush)
{
    switch_mm_fixture s;
    // Six processes round robin: each takes a slot once (ASIDs 1-5, then 0 over init_mm).
    for (int mm = 1; mm <= 6; ++mm)
        EXPECT_EQ(s.switch_to(mm, mm), 1700) << "process " << mm << "'s first run";
    for (int lap = 0; lap < 2; ++lap)
        for (int mm = 1; mm <= 6; ++mm)
            EXPECT_EQ(s.switch_to(mm, mm), 1000) << "process " << mm << " holds its ASID";
    // A seventh takes ASID 1 from process 1, which then takes ASID 2 from process 2, ...:
    // the cycle of seven always finds its next mm evicted.
    for (int lap = 0; lap < 2; ++lap)
        for (int mm = 7; mm <= 13; ++mm) {
            const int pid = mm == 7 ? 7 : mm - 7;
            EXPECT_EQ(s.switch_to(pid, pid), 1700) << "process " << pid << " in a cycle of 7";
        }
}

TEST(switch_mm, costs_nothing_and_draws_no_jitter_by_default)
{
    cost_params p; // switch_mm_flush 0, context_switch jittered
    ASSERT_EQ(p.switch_mm_flush, 0);
    charges_fixture f(1, p);
    task_struct t1, t2;
    t1.pid = t1.tgid = 1;
    t2.pid = t2.tgid = 2;
    t1.rng = rng_stream(7, "task/1");
    t2.rng = rng_stream(7, "task/2");
    rng_stream r1(7, "task/1"), r2(7, "task/2");
    // Alternating processes take new ASIDs (flushes), yet each switch costs only its
    // jittered context_switch, one draw from the task's stream, as before the model.
    sim_dur expected = 0;
    for (int i = 0; i < 4; ++i) {
        f.charges.switch_in(*f.rqs[0], i % 2 ? t2 : t1);
        expected += (i % 2 ? r2 : r1).jitter(p.context_switch, static_cast<u32>(p.jitter_pct));
    }
    EXPECT_EQ(f.charges.cpu(0).pending[ACCT_CONTEXT_SWITCH], expected);
    EXPECT_EQ(t1.rng.next_u64(), r1.next_u64()) << "no extra draw from the task's stream";
    EXPECT_EQ(t2.rng.next_u64(), r2.next_u64());
}

TEST(switch_mm, a_kernel_charges_it_at_its_context_switches)
{
    // Seven spinners on one CPU: as processes each switch is to an evicted mm; as threads
    // of one process only the first run loads it.
    for (const bool threads : {false, true}) {
        cost_params p = testlib::sched_fixture::no_costs();
        p.switch_mm_flush = 700;
        testlib::sched_fixture t(testlib::small_machine(1), "6.6", 1, "", p);
        int first = -1;
        for (int i = 0; i < 7; ++i) {
            task_struct& task = t.spawn("s" + std::to_string(i), testlib::spin(), 0);
            if (first < 0)
                first = task.pid;
            if (threads)
                task.tgid = first;
        }
        t.run_for(msecs(200));
        const rq& r = t.k->cpu_rq(0);
        // Spent, in the segment in progress, or still owed: every ns charged so far.
        const cpu_charge_state& st = t.ctx->charges.cpu(0);
        const sim_dur charged = st.acct.spent[ACCT_CONTEXT_SWITCH] +
                                st.seg_cat[ACCT_CONTEXT_SWITCH] + st.pending[ACCT_CONTEXT_SWITCH];
        ASSERT_GT(r.nr_switches, 14u) << "the spinners take turns";
        if (threads)
            EXPECT_EQ(charged, 700) << "one mm: loaded once";
        else
            EXPECT_EQ(charged, 700 * static_cast<sim_dur>(r.nr_switches)) << "every switch flushes";
    }
}

struct counting_sink final : decision_sink {
    int select_task_rq = 0;
    void decision(const sched_decision& d) override
    {
        if (d.what == "select_task_rq")
            ++select_task_rq;
    }
};

TEST(run_context, the_kernel_charges_and_explains_through_the_context_it_is_handed)
{
    testlib::sched_fixture t(testlib::small_machine(2), "6.6", 1, "", cost_params{});
    EXPECT_EQ(&t.k->charges(), &t.ctx->charges);
    EXPECT_EQ(&t.k->decisions(), &t.ctx->decisions);
    counting_sink sink;
    t.ctx->decisions.set_sink(&sink); // as execute_run() does, on the context
    t.spawn("a", testlib::run_sleep(usecs(200), usecs(300)), 0);
    t.spawn("b", testlib::run_sleep(usecs(200), usecs(300)), 1);
    t.run_for(msecs(5));
    EXPECT_GT(sink.select_task_rq, 0) << "wakeups explained through the context's log";
    EXPECT_GT(t.ctx->charges.cpu(0).charged_ns + t.ctx->charges.cpu(1).charged_ns, 0u)
        << "context switches and wakeups charged through the context's charges";
}

TEST(run_context, serves_one_kernel)
{
    testlib::sched_fixture t(testlib::small_machine(2), "6.6");
    EXPECT_DEATH(kernel(t.sim, t.m, make_kernel_config("6.6"), *t.ctx),
                 "attached to a second kernel");
}

} // namespace
} // namespace schedlab
