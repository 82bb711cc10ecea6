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
