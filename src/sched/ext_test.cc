// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ext class (ext.cc) and its built-in policies: each expectation follows
 * by hand from kernel/sched/ext.c of v6.12 (and, for the 6.18 profile's default select_cpu,
 * 6.18.2's kernel/sched/ext_idle.c) and the policy under test, on a
 * machine without costs (testlib::sched_fixture::no_costs), HZ=250 (a 4 ms
 * tick, ticks at multiples of 4 ms), SCX_SLICE_DFL = 20 ms.
 */
#include "machine/presets.h"
#include "sched/ext_load.h"
#include "sched/testlib.h"
#include "sim/config_error.h"

#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

using testlib::sched_fixture;
using testlib::small_machine;

constexpr u64 USER_DSQ = 7;

/* ---- test policies: a table of the test's own callbacks ---- */

schedlab_ext_ops base_ops(const char* name)
{
    schedlab_ext_ops o{};
    o.abi_version = SCHEDLAB_EXT_ABI_VERSION;
    o.name = name;
    return o;
}

kernel_config with_policy(const schedlab_ext_ops* ops, const std::string& spec = "6.12")
{
    kernel_config kc = make_kernel_config(spec);
    auto h = std::make_shared<ext_policy_handle>();
    h->name = ops->name;
    h->ops = ops;
    kc.ext = h;
    return kc;
}

s32 create_user_dsq(schedlab_ext_ctx* ctx);
void consume_user_dsq(schedlab_ext_ctx* ctx, s32 cpu, schedlab_ext_task* prev);

/// A policy around USER_DSQ: created at init, consumed at dispatch, `enqueue` inserting.
schedlab_ext_ops user_dsq_ops(const char* name,
                              void (*enqueue)(schedlab_ext_ctx*, schedlab_ext_task*, u64))
{
    schedlab_ext_ops o = base_ops(name);
    o.enqueue = enqueue;
    o.dispatch = consume_user_dsq;
    o.init = create_user_dsq;
    return o;
}

s32 create_user_dsq(schedlab_ext_ctx* ctx)
{
    return scx_bpf_create_dsq(ctx, USER_DSQ, -1);
}

void consume_user_dsq(schedlab_ext_ctx* ctx, s32 /*cpu*/, schedlab_ext_task* /*prev*/)
{
    scx_bpf_dsq_move_to_local(ctx, USER_DSQ);
}

s32 keep_prev_cpu(schedlab_ext_ctx* /*ctx*/, schedlab_ext_task* /*p*/, s32 prev_cpu, u64)
{
    return prev_cpu;
}

/// CPU time p has had, including the part of its current run no update_curr() counted yet.
u64 ran(const sched_fixture& t, const task_struct& p)
{
    const rq& r = t.k->cpu_rq(p.cpu);
    return p.se.sum_exec_runtime +
           (r.curr == &p ? sched_clock_at(t.k->now()) - p.se.exec_start : 0);
}

/* ---- the spec ---- */

TEST(ext_class, the_spec_loads_a_policy_on_6_12_only)
{
    EXPECT_TRUE(make_kernel_config("6.12+ext:simple").ext);
    EXPECT_TRUE(make_kernel_config("6.18+ext:llc").ext);
    EXPECT_EQ(make_kernel_config("6.12+ext:simple").delta_string(), "ext:simple");
    EXPECT_FALSE(make_kernel_config("6.12").ext);
    auto error_of = [](const std::string& spec) {
        try {
            make_kernel_config(spec);
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error_of("6.6+ext:simple").find("has no sched_ext"), std::string::npos);
    EXPECT_NE(error_of("6.12+ext:nope").find("unknown ext policy 'nope'"), std::string::npos);
    EXPECT_NE(error_of("6.12+ext:simple+ext:llc").find("two ext policies"), std::string::npos);
    EXPECT_NE(error_of("6.12+ext:").find("names no policy"), std::string::npos);
    EXPECT_NE(error_of("6.12+ext:/nonexistent/policy.so").find("cannot load ext policy"),
              std::string::npos);
}

TEST(ext_class, with_a_policy_every_fair_policy_task_runs_in_the_ext_class)
{
    sched_fixture t(small_machine(2), "6.12+ext:simple_fifo");
    task_struct& a = t.spawn("a", testlib::spin());
    task_opts o;
    o.comm = "rt";
    o.policy = SCHED_FIFO;
    o.rt_priority = 10;
    task_struct& rt = t.k->spawn(testlib::spin(), o);
    EXPECT_EQ(a.sched_class, &ext_sched_class);
    EXPECT_EQ(rt.sched_class, &rt_sched_class) << "the rt class stays above ext";
    sched_fixture f(small_machine(2), "6.12");
    EXPECT_EQ(f.spawn("a", testlib::spin()).sched_class, &fair_sched_class);
}

/* ---- DSQ order ---- */

void fifo_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    scx_bpf_dsq_insert(ctx, p, USER_DSQ, SCX_SLICE_DFL, enq_flags);
}

TEST(ext_class, a_fifo_dsq_runs_tasks_in_arrival_order_one_slice_each)
{
    // a, b, c (30 ms each) arrive at t=0 in that order on one CPU. Each runs a 20 ms slice
    // (the tick at 20 ms finds it used up), goes back to the DSQ's tail through ops.enqueue(),
    // and the next runs: a 0-20, b 20-40, c 40-60, a 60-70, b 70-80, c 80-90.
    static schedlab_ext_ops ops = user_dsq_ops("test_fifo", fifo_enqueue);
    sched_fixture t(small_machine(1), with_policy(&ops));
    task_struct& a = t.spawn("a", testlib::run_then_exit(msecs(30)));
    task_struct& b = t.spawn("b", testlib::run_then_exit(msecs(30)));
    task_struct& c = t.spawn("c", testlib::run_then_exit(msecs(30)));
    t.run_for(msecs(200));
    EXPECT_EQ(a.exit_time, msecs(70));
    EXPECT_EQ(b.exit_time, msecs(80));
    EXPECT_EQ(c.exit_time, msecs(90));
    EXPECT_EQ(t.k->scx()->exit.kind, 0);
}

void vtime_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    // later tasks first: vtime falls with the pid
    scx_bpf_dsq_insert_vtime(ctx, p, USER_DSQ, SCX_SLICE_DFL, 1000 - static_cast<u64>(p->pid),
                             enq_flags);
}

TEST(ext_class, a_vtime_dsq_runs_tasks_in_dsq_vtime_order)
{
    // vtime 1000 - pid: c (pid 3) runs first, then b, then a; 10 ms each, within one slice.
    static schedlab_ext_ops ops = user_dsq_ops("test_vtime", vtime_enqueue);
    sched_fixture t(small_machine(1), with_policy(&ops));
    task_struct& a = t.spawn("a", testlib::run_then_exit(msecs(10)));
    task_struct& b = t.spawn("b", testlib::run_then_exit(msecs(10)));
    task_struct& c = t.spawn("c", testlib::run_then_exit(msecs(10)));
    t.run_for(msecs(100));
    EXPECT_EQ(c.exit_time, msecs(10));
    EXPECT_EQ(b.exit_time, msecs(20));
    EXPECT_EQ(a.exit_time, msecs(30));
    EXPECT_EQ(t.k->scx()->exit.kind, 0);
}

TEST(ext_class, simple_shares_the_cpu_by_weight_among_waiting_tasks)
{
    // scx_simple's vtime: a task's dsq_vtime advances by used slice * 100 / weight; nice 0 is
    // weight 100, nice 5 (335) is 33. The running task is not in the shared DSQ when its CPU
    // dispatches (balance before put_prev), so two tasks on one CPU simply alternate:
    {
        sched_fixture t(small_machine(1), "6.12+ext:simple");
        task_struct& n0 = t.spawn("n0", testlib::spin());
        task_struct& n5 = t.spawn("n5", testlib::spin(), 0, 5);
        EXPECT_EQ(n0.scx.view.weight, 100u);
        EXPECT_EQ(n5.scx.view.weight, 33u);
        t.run_for(msecs(200));
        EXPECT_EQ(ran(t, n0), static_cast<u64>(msecs(100)));
        EXPECT_EQ(ran(t, n5), static_cast<u64>(msecs(100)));
    }
    // With two nice-0 tasks a, b and the nice-5 c, by hand: a 0-20, b 20-40, c 40-60, then
    // a and b three slices each (their vtimes 20..80 stay below c's 60.6 ms until both pass
    // it) and c one: c's share is 1/7, its weight's 33/233, within a slice over 1.4 s.
    sched_fixture t(small_machine(1), "6.12+ext:simple");
    task_struct& a = t.spawn("a", testlib::spin());
    task_struct& b = t.spawn("b", testlib::spin());
    task_struct& c = t.spawn("c", testlib::spin(), 0, 5);
    t.run_for(msecs(60));
    EXPECT_EQ(ran(t, c), static_cast<u64>(msecs(20)));
    t.run_for(msecs(140));
    EXPECT_EQ(ran(t, c), static_cast<u64>(msecs(40))) << "c again at 180-200 ms";
    t.run_for(msecs(1200));
    EXPECT_NEAR(static_cast<double>(ran(t, c)), 1400e6 / 7, 20e6);
    EXPECT_EQ(ran(t, a) + ran(t, b) + ran(t, c), static_cast<u64>(msecs(1400)));
}

/* ---- kick_cpu ---- */

void kick_idle_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    scx_bpf_dsq_insert(ctx, p, USER_DSQ, SCX_SLICE_DFL, enq_flags);
    scx_bpf_kick_cpu(ctx, 1, SCX_KICK_IDLE);
}

TEST(ext_class, kick_idle_sends_an_idle_cpu_to_dispatch)
{
    // a and b arrive on cpu0 at t=0 into a user DSQ; select_cpu keeps cpu0. cpu0 takes a.
    // Without a kick nothing wakes cpu1: b waits for a's slice (20 ms). With SCX_KICK_IDLE on
    // cpu1 at each enqueue, cpu1 dispatches at once (its reschedule, queued by a's enqueue,
    // comes before cpu0's, queued by the wakeup check after it): it moves a over from cpu0's
    // rq, and cpu0 takes b.
    static schedlab_ext_ops no_kick = [] {
        schedlab_ext_ops o = user_dsq_ops("test_no_kick", fifo_enqueue);
        o.select_cpu = keep_prev_cpu;
        return o;
    }();
    static schedlab_ext_ops kick = [] {
        schedlab_ext_ops o = no_kick;
        o.name = "test_kick";
        o.enqueue = kick_idle_enqueue;
        return o;
    }();
    {
        sched_fixture t(small_machine(2), with_policy(&no_kick));
        t.spawn("a", testlib::spin());
        task_struct& b = t.spawn("b", testlib::spin());
        t.run_for(msecs(30));
        EXPECT_EQ(b.cpu, 0);
        EXPECT_EQ(ran(t, b), static_cast<u64>(msecs(10)));
    }
    {
        sched_fixture t(small_machine(2), with_policy(&kick));
        task_struct& a = t.spawn("a", testlib::spin());
        task_struct& b = t.spawn("b", testlib::spin());
        t.run_for(msecs(30));
        EXPECT_EQ(a.cpu, 1);
        EXPECT_EQ(b.cpu, 0);
        EXPECT_EQ(ran(t, a), static_cast<u64>(msecs(30)));
        EXPECT_EQ(ran(t, b), static_cast<u64>(msecs(30)));
        EXPECT_EQ(t.k->scx()->stats.consumed_remote, 1u);
    }
}

void kick_preempt_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    scx_bpf_dsq_insert(ctx, p, USER_DSQ, SCX_SLICE_DFL, enq_flags);
    scx_bpf_kick_cpu(ctx, 0, SCX_KICK_PREEMPT);
}

void kick_plain_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 enq_flags)
{
    scx_bpf_dsq_insert(ctx, p, USER_DSQ, SCX_SLICE_DFL, enq_flags);
    scx_bpf_kick_cpu(ctx, 0, 0);
}

TEST(ext_class, kick_preempt_ends_the_running_slice)
{
    // a spins on the one CPU; b arrives at 5 ms. SCX_KICK_PREEMPT zeroes a's slice: b runs at
    // once. A plain kick reschedules, but balance_scx() keeps a (slice left): b waits until
    // a's slice ends at 20 ms.
    static schedlab_ext_ops preempt = user_dsq_ops("test_kick_preempt", kick_preempt_enqueue);
    static schedlab_ext_ops plain = [] {
        schedlab_ext_ops o = preempt;
        o.name = "test_kick_plain";
        o.enqueue = kick_plain_enqueue;
        return o;
    }();
    for (const schedlab_ext_ops* ops : {&preempt, &plain}) {
        sched_fixture t(small_machine(1), with_policy(ops));
        t.spawn("a", testlib::spin());
        t.run_for(msecs(5));
        task_struct& b = t.spawn("b", testlib::run_then_exit(msecs(1)));
        t.run_for(msecs(30));
        EXPECT_EQ(b.sched_info_.run_delay, static_cast<u64>(ops == &preempt ? 0 : msecs(15)))
            << ops->name;
    }
}

/* ---- cpu_release / cpu_acquire ---- */

struct release_counts {
    int released, acquired;
};

void count_release(schedlab_ext_ctx* ctx, s32 /*cpu*/)
{
    ++static_cast<release_counts*>(ctx->state)->released;
}

void count_acquire(schedlab_ext_ctx* ctx, s32 /*cpu*/)
{
    ++static_cast<release_counts*>(ctx->state)->acquired;
}

TEST(ext_class, an_rt_task_takes_the_cpu_from_ext_and_gives_it_back)
{
    // An RT task arriving at 5 ms preempts the ext task a (cpu_release); a waits at the head of
    // the local DSQ with its slice left, and when the RT task exits at 7 ms the next balance
    // gives the CPU back (cpu_acquire) and a runs on.
    static schedlab_ext_ops ops = [] {
        schedlab_ext_ops o = base_ops("test_release");
        o.state_size = sizeof(release_counts);
        o.cpu_release = count_release;
        o.cpu_acquire = count_acquire;
        return o;
    }();
    sched_fixture t(small_machine(1), with_policy(&ops));
    task_struct& a = t.spawn("a", testlib::spin());
    t.run_for(msecs(5));
    task_opts o;
    o.comm = "rt";
    o.policy = SCHED_FIFO;
    o.rt_priority = 10;
    task_struct& rt = t.k->spawn(testlib::run_then_exit(msecs(2)), o);
    t.run_for(msecs(5));
    const auto& c = *reinterpret_cast<const release_counts*>(t.k->scx()->state.data());
    EXPECT_EQ(c.released, 1);
    EXPECT_EQ(c.acquired, 1);
    EXPECT_EQ(rt.exit_time, msecs(7));
    EXPECT_EQ(ran(t, a), static_cast<u64>(msecs(8)));
}

/* ---- the watchdog ---- */

void keep_task(schedlab_ext_ctx* /*ctx*/, schedlab_ext_task* /*p*/, u64 /*enq_flags*/) {}

TEST(ext_class, the_watchdog_ejects_a_policy_that_stalls_a_task)
{
    // The policy keeps every task and never dispatches. timeout_ms 100: the watchdog looks
    // every 50 ms; at 100 ms a has waited exactly the timeout (not past it), at 150 ms it has
    // waited past it: the policy is ejected then and a runs in the fair class from 150 ms.
    static schedlab_ext_ops ops = [] {
        schedlab_ext_ops o = user_dsq_ops("test_stall", keep_task);
        o.timeout_ms = 100;
        return o;
    }();
    sched_fixture t(small_machine(1), with_policy(&ops));
    task_struct& a = t.spawn("a", testlib::spin());
    t.run_for(msecs(200));
    const scx_exit& e = t.k->scx()->exit;
    EXPECT_EQ(e.kind, 1026);
    EXPECT_EQ(e.reason, "runnable task stall");
    EXPECT_EQ(e.msg, "a[1] failed to run for 0.150s");
    EXPECT_EQ(e.at, msecs(150));
    EXPECT_EQ(e.pid, a.pid);
    EXPECT_EQ(e.cpu, 0);
    EXPECT_FALSE(scx_enabled(*t.k));
    EXPECT_EQ(a.sched_class, &fair_sched_class);
    EXPECT_EQ(ran(t, a), static_cast<u64>(msecs(50)));
    task_struct& late = t.spawn("late", testlib::spin());
    EXPECT_EQ(late.sched_class, &fair_sched_class) << "new tasks go to fair once ejected";
}

/* ---- contract errors: each ejects the policy, naming the task, CPU and time ---- */

struct err_state {
    schedlab_ext_task* last;
};

void insert_twice_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 f)
{
    scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, f);
    scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, f);
}

void remember_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 /*f*/)
{
    static_cast<err_state*>(ctx->state)->last = p;
}

void dispatch_twice(schedlab_ext_ctx* ctx, s32 /*cpu*/, schedlab_ext_task* /*prev*/)
{
    if (schedlab_ext_task* p = static_cast<err_state*>(ctx->state)->last) {
        scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
        scx_bpf_dsq_insert(ctx, p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, 0);
    }
}

void missing_dsq_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 f)
{
    scx_bpf_dsq_insert(ctx, p, 42, SCX_SLICE_DFL, f);
}

void cpu1_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 f)
{
    scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL_ON | 1, SCX_SLICE_DFL, f);
}

void cpu7_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 f)
{
    scx_bpf_dsq_insert(ctx, p, SCX_DSQ_LOCAL_ON | 7, SCX_SLICE_DFL, f);
}

void vtime_global_enqueue(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 f)
{
    scx_bpf_dsq_insert_vtime(ctx, p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, 0, f);
}

void insert_from_running(schedlab_ext_ctx* ctx, schedlab_ext_task* p)
{
    scx_bpf_dsq_insert(ctx, p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, 0);
}

void error_from_running(schedlab_ext_ctx* ctx, schedlab_ext_task* /*p*/)
{
    scx_bpf_error(ctx, "policy gave up");
}

s32 bad_select_cpu(schedlab_ext_ctx* /*ctx*/, schedlab_ext_task* /*p*/, s32 /*prev*/, u64)
{
    return 9;
}

struct contract_case {
    const char* what;
    schedlab_ext_ops ops;
    int kind;
    std::string msg;
    sim_time at;
};

TEST(ext_class, each_broken_contract_ejects_the_policy_and_the_task_runs_on_in_fair)
{
    // a (pid 1, pinned to cpu0 of two) arrives at t=0 and needs 10 ms. Each policy breaks
    // the contract at a's first enqueue or dispatch (t=0) or at its first run (running(),
    // t=0); the policy is ejected at t=0 and a runs in the fair class, exiting at 10 ms.
    auto mk = [](const char* name) { return base_ops(name); };
    std::vector<contract_case> cases;
    {
        schedlab_ext_ops o = mk("twice_direct");
        o.enqueue = insert_twice_enqueue;
        cases.push_back({"direct dispatch twice", o, 1024, "a[1] already direct-dispatched", 0});
    }
    {
        schedlab_ext_ops o = mk("twice_dispatch");
        o.state_size = sizeof(err_state);
        o.enqueue = remember_enqueue;
        o.dispatch = dispatch_twice;
        cases.push_back({"inserted twice by one dispatch", o, 1024,
                         "a[1] inserted twice by one ops.dispatch() on cpu0", 0});
    }
    {
        schedlab_ext_ops o = mk("missing_dsq");
        o.enqueue = missing_dsq_enqueue;
        cases.push_back({"a DSQ that does not exist", o, 1024, "non-existent DSQ 0x2a for a[1]", 0});
    }
    {
        schedlab_ext_ops o = mk("outside_mask");
        o.enqueue = cpu1_enqueue;
        cases.push_back({"a CPU outside the mask", o, 1024,
                         "SCX_DSQ_LOCAL[_ON] verdict target cpu 1 not allowed for a[1]", 0});
    }
    {
        schedlab_ext_ops o = mk("no_such_cpu");
        o.enqueue = cpu7_enqueue;
        cases.push_back({"a CPU that does not exist", o, 1024,
                         "invalid CPU 7 in SCX_DSQ_LOCAL_ON dispatch verdict", 0});
    }
    {
        schedlab_ext_ops o = mk("vtime_builtin");
        o.enqueue = vtime_global_enqueue;
        cases.push_back({"vtime order on a built-in DSQ", o, 1024,
                         "cannot use vtime ordering for built-in DSQs (a[1] into "
                         "0x8000000000000001)",
                         0});
    }
    {
        schedlab_ext_ops o = mk("insert_in_running");
        o.running = insert_from_running;
        cases.push_back({"an insert from running()", o, 1024,
                         "scx_bpf_dsq_insert() for a[1] called from another callback: only "
                         "select_cpu(), enqueue() and dispatch() may insert",
                         0});
    }
    {
        schedlab_ext_ops o = mk("bpf_error");
        o.running = error_from_running;
        cases.push_back({"scx_bpf_error()", o, 1025, "policy gave up", 0});
    }
    for (const contract_case& c : cases) {
        SCOPED_TRACE(c.what);
        sched_fixture t(small_machine(2), with_policy(&c.ops));
        task_struct& a = t.spawn("a", testlib::run_then_exit(msecs(10)), 0, 0, 0);
        t.run_for(msecs(50));
        const scx_exit& e = t.k->scx()->exit;
        EXPECT_EQ(e.kind, c.kind);
        EXPECT_EQ(e.msg, c.msg);
        EXPECT_EQ(e.at, c.at);
        EXPECT_EQ(e.cpu, 0);
        EXPECT_EQ(a.exit_time, msecs(10));
    }
    {
        SCOPED_TRACE("select_cpu() returning a CPU that does not exist");
        schedlab_ext_ops o = mk("bad_select");
        o.select_cpu = bad_select_cpu;
        sched_fixture t(small_machine(2), with_policy(&o));
        task_struct& a = t.spawn("a", testlib::run_then_exit(msecs(10)));
        t.run_for(msecs(50));
        EXPECT_EQ(t.k->scx()->exit.msg, "invalid CPU 9 from ops.select_cpu()");
        EXPECT_EQ(t.k->scx()->exit.pid, a.pid);
        EXPECT_EQ(a.exit_time, msecs(10));
    }
}

/* ---- the built-in policies ---- */

TEST(ext_class, llc_keeps_tasks_in_their_llc_and_kicks_another_llc_when_full)
{
    // Two LLCs of two CPUs. a and b (forked on cpu0) find idle CPUs in cpu0's LLC (0, then 1).
    // c and d find none: they wait in LLC 0's DSQ and enqueue kicks an idle CPU elsewhere
    // (cpu2, then cpu3 in distribute order), which steals them from LLC 0's DSQ.
    machine m = small_machine(4);
    for (auto& c : m.cpus)
        c.llc = c.core / 2;
    sched_fixture t(std::move(m), "6.12+ext:llc");
    task_struct& a = t.spawn("a", testlib::spin());
    task_struct& b = t.spawn("b", testlib::spin());
    task_struct& c = t.spawn("c", testlib::spin());
    task_struct& d = t.spawn("d", testlib::spin());
    t.run_for(msecs(10));
    EXPECT_EQ(a.cpu, 0);
    EXPECT_EQ(b.cpu, 1);
    EXPECT_EQ(c.cpu, 2);
    EXPECT_EQ(d.cpu, 3);
    for (task_struct* p : {&a, &b, &c, &d})
        EXPECT_EQ(ran(t, *p), static_cast<u64>(msecs(10))) << p->comm;
}

// The two sync tests' setting: p (pinned at spawn) may run anywhere, and this CPU is cpu0, where
// the waker runs with an empty local DSQ.
void wake_from_cpu0(sched_fixture& t, const task_struct& waker, task_struct& p)
{
    p.cpus_mask.set_all();
    p.nr_cpus_allowed = p.cpus_mask.weight();
    t.k->set_this_cpu(0);
    ASSERT_EQ(t.k->current(), &waker);
    ASSERT_EQ(t.k->cpu_rq(0).scx.local_dsq.nr, 0u);
}

/*
 * scx_select_cpu_dfl()'s sync rule (v6.12 to 6.18.2: every version tests current->flags): the
 * waker's CPU, if its local DSQ is empty and idle CPUs remain, unless the waker is PF_EXITING
 * (an exiting child waking its parent). The waker spins alone on cpu0, prev cpu1 is busy, cpus
 * 2-3 are idle: sync -> cpu0; an exiting waker -> the idle-CPU search, cpu2.
 */
TEST(ext_class, the_default_select_cpu_keeps_a_sync_wakee_off_an_exiting_wakers_cpu)
{
    for (const bool exiting : {false, true}) {
        sched_fixture t(small_machine(4), "6.12+ext:simple");
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        t.spawn("busy1", testlib::spin(), 1, 0, 1);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
        t.run_for(msecs(1));
        ASSERT_NO_FATAL_FAILURE(wake_from_cpu0(t, waker, p));
        if (exiting)
            waker.flags |= PF_EXITING;
        bool found = false;
        EXPECT_EQ(scx_select_cpu_dfl(*t.k, p, 1, WF_TTWU | WF_SYNC, &found), exiting ? 2 : 0)
            << (exiting ? "exiting" : "sync");
        EXPECT_TRUE(found);
    }
}

/*
 * scx_select_cpu_dfl()'s sync block at 6.12.19 (wishday/linux-6.12.y 21ae40e85ea7) tests only
 * the waker's CPU: no test of prev there (6.18.2 takes an idle prev that shares the waker's LLC
 * first). The waker spins alone on cpu0, p's prev cpu1 is idle, as are cpus 2-3, one LLC: a
 * sync wakeup -> cpu0 (found), not the idle prev; cpu1 stays in the idle mask.
 */
TEST(ext_class, the_default_select_cpu_sync_wakeup_does_not_test_prev_first_on_6_12)
{
    sched_fixture t(small_machine(4), "6.12+ext:simple");
    task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
    t.run_for(msecs(1));
    ASSERT_NO_FATAL_FAILURE(wake_from_cpu0(t, waker, p));
    ASSERT_TRUE(t.k->scx()->idle_cpu.test(1));
    ASSERT_TRUE(t.k->topology().cpus_share_cache(0, 1));
    bool found = false;
    EXPECT_EQ(scx_select_cpu_dfl(*t.k, p, 1, WF_TTWU | WF_SYNC, &found), 0);
    EXPECT_TRUE(found);
    EXPECT_TRUE(t.k->scx()->idle_cpu.test(1)) << "prev not claimed";
}

/*
 * 6.12.19's scx_select_cpu_dfl() has no nr_cpus_allowed test: its sync block applies to a task
 * allowed on one CPU too. (Its callers, select_task_rq_scx() and the scx_bpf_select_cpu_dfl()
 * kfunc from ops.select_cpu(), see only tasks with nr_cpus_allowed > 1, core.c's
 * select_task_rq() calling the class only for those; so this pins the function's order for a
 * state no run reaches.) p is allowed only on cpu0, where the waker spins; cpus 1-3 are idle;
 * prev 0. Sync: the waker's CPU 0, found. Without the sync flag: prev is busy, no idle core or
 * CPU in p's mask: prev 0, not found.
 */
TEST(ext_class, the_default_select_cpu_sync_block_has_no_nr_cpus_allowed_test_on_6_12)
{
    for (const bool sync : {true, false}) {
        sched_fixture t(small_machine(4), "6.12+ext:simple");
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
        t.run_for(msecs(1));
        p.cpus_mask.clear_all();
        p.cpus_mask.set(0);
        p.nr_cpus_allowed = p.cpus_mask.weight();
        t.k->set_this_cpu(0);
        ASSERT_EQ(t.k->current(), &waker);
        ASSERT_EQ(t.k->cpu_rq(0).scx.local_dsq.nr, 0u);
        bool found = false;
        EXPECT_EQ(scx_select_cpu_dfl(*t.k, p, 0, WF_TTWU | (sync ? WF_SYNC : 0), &found), 0);
        EXPECT_EQ(found, sync) << (sync ? "sync" : "not sync");
    }
}

/* ---- scx_select_cpu_dfl() on 6.18: 6.18.2's kernel/sched/ext_idle.c ---- */

/// sockets x cores_per_socket cores, cores_per_llc cores per LLC, smt threads per core; one
/// node per socket; CPU n + cores is thread 1 of CPU n's core (first_threads_then_siblings).
machine llc_machine(int sockets, int cores_per_socket, int cores_per_llc, int smt = 1)
{
    symmetric_machine_spec s;
    s.name = fmt::format("test-{}s{}c-llc{}-smt{}", sockets, cores_per_socket, cores_per_llc, smt);
    s.sockets = sockets;
    s.cores_per_socket = cores_per_socket;
    s.cores_per_llc = cores_per_llc;
    s.threads_per_core = smt;
    return make_symmetric_machine(s, "ext_test");
}

/*
 * A wakee p whose prev is `prev` (it ran there once and sleeps), spinners pinned on `busy`, the
 * first of them current on this CPU; p may then run anywhere. this CPU's
 * cpumask_any_and_distribute() cursor is set to `cursor`, so each pick's result follows by hand.
 */
struct wakee_setting {
    sched_fixture t;
    task_struct* p = nullptr;
    wakee_setting(machine m, const std::string& spec, int prev, std::initializer_list<int> busy,
                  int cursor)
        : t(std::move(m), spec)
    {
        for (const int cpu : busy)
            t.spawn(fmt::format("busy{}", cpu), testlib::spin(), cpu, 0, cpu);
        p = &t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), prev, 0, prev);
        t.run_for(msecs(1));
        p->cpus_mask.set_all();
        p->nr_cpus_allowed = p->cpus_mask.weight();
        t.k->set_this_cpu(*busy.begin());
        t.k->cpu_rq(*busy.begin()).distribute_cpu_mask_prev = cursor;
    }
    int select(int prev, int wake_flags, bool* found)
    {
        return scx_select_cpu_dfl(*t.k, *p, prev, wake_flags, found);
    }
};

/*
 * 6.18.2's sync block first keeps p on an idle prev that shares the waker's LLC
 * (cpus_share_cache()), then tests the waker's CPU. The setting of
 * the_default_select_cpu_sync_wakeup_does_not_test_prev_first_on_6_12 (waker alone on cpu0,
 * prev cpu1 idle, one LLC): 6.18 -> cpu1, found, claimed; 6.12 -> cpu0.
 */
TEST(ext_class, the_default_select_cpu_sync_wakeup_keeps_an_idle_cache_affine_prev_on_6_18)
{
    for (const std::string v : {"6.18", "6.12"}) {
        sched_fixture t(small_machine(4), v + "+ext:simple");
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 1, 0, 1);
        t.run_for(msecs(1));
        ASSERT_NO_FATAL_FAILURE(wake_from_cpu0(t, waker, p));
        ASSERT_TRUE(t.k->scx()->idle_cpu.test(1));
        bool found = false;
        EXPECT_EQ(scx_select_cpu_dfl(*t.k, p, 1, WF_TTWU | WF_SYNC, &found), v == "6.18" ? 1 : 0)
            << v;
        EXPECT_TRUE(found) << v;
        EXPECT_EQ(t.k->scx()->idle_cpu.test(1), v != "6.18") << v << ": prev claimed";
    }
}

/*
 * 6.18.2 tests prev only when p may run there (is_prev_allowed); 6.12.19 claims an idle prev
 * whatever p's mask. One LLC of four CPUs; spinners on cpu0 and cpu2; p's prev cpu1 is idle
 * but p may run only on cpus 2-3 (its affinity changed while it slept). Not sync: 6.12 ->
 * prev 1; 6.18 -> the one idle CPU p may use, 3.
 */
TEST(ext_class, the_default_select_cpu_tests_prev_only_where_p_may_run_on_6_18)
{
    for (const std::string v : {"6.18", "6.12"}) {
        wakee_setting w(small_machine(4), v + "+ext:simple", 1, {0, 2}, 0);
        w.p->cpus_mask.clear_all();
        w.p->cpus_mask.set(2);
        w.p->cpus_mask.set(3);
        w.p->nr_cpus_allowed = w.p->cpus_mask.weight();
        ASSERT_TRUE(w.t.k->scx()->idle_cpu.test(1));
        bool found = false;
        EXPECT_EQ(w.select(1, WF_TTWU, &found), v == "6.18" ? 3 : 1) << v;
        EXPECT_TRUE(found) << v;
    }
}

/*
 * 6.18.2 looks for an idle CPU in prev's LLC before any (scx_selcpu_topo_llc: the first CPU's
 * LLC is smaller than the machine). Two LLCs of two CPUs (0-1, 2-3), no SMT; a spinner on
 * prev 0; cpus 1-3 idle; the cursor at 1. 6.12: the next idle CPU after 1, cpu2; 6.18: the
 * idle CPU of LLC {0, 1}, cpu1.
 */
TEST(ext_class, the_default_select_cpu_prefers_an_idle_cpu_in_prevs_llc_on_6_18)
{
    for (const std::string v : {"6.18", "6.12"}) {
        wakee_setting w(llc_machine(1, 4, 2), v + "+ext:simple", 0, {0}, 1);
        ASSERT_FALSE(w.t.k->topology().cpus_share_cache(1, 2));
        EXPECT_EQ(w.t.k->scx()->selcpu_topo_llc, v == "6.18");
        EXPECT_FALSE(w.t.k->scx()->selcpu_topo_numa) << "one node";
        bool found = false;
        EXPECT_EQ(w.select(0, WF_TTWU, &found), v == "6.18" ? 1 : 2) << v;
        EXPECT_TRUE(found) << v;
    }
}

/*
 * Then in prev's node (scx_selcpu_topo_numa: the node is smaller than the machine and its
 * LLCs are smaller than it). Two nodes of two LLCs of two CPUs (node 0: cpus 0-3), no SMT;
 * spinners on cpu0 (prev) and cpu1, so prev's LLC has no idle CPU; cpus 2-7 idle; the cursor
 * at 3. 6.12: the next idle CPU after 3, cpu4 (node 1); 6.18: none in LLC {0, 1}, then node
 * 0's idle {2, 3} from the cursor, wrapping: cpu2.
 */
TEST(ext_class, the_default_select_cpu_prefers_an_idle_cpu_in_prevs_node_on_6_18)
{
    for (const std::string v : {"6.18", "6.12"}) {
        wakee_setting w(llc_machine(2, 4, 2), v + "+ext:simple", 0, {0, 1}, 3);
        EXPECT_EQ(w.t.k->scx()->selcpu_topo_llc, v == "6.18");
        EXPECT_EQ(w.t.k->scx()->selcpu_topo_numa, v == "6.18");
        bool found = false;
        EXPECT_EQ(w.select(0, WF_TTWU, &found), v == "6.18" ? 2 : 4) << v;
        EXPECT_TRUE(found) << v;
    }
}

/*
 * With SMT, a wholly idle core in prev's LLC, then in prev's node, before one anywhere. Two
 * nodes of two LLCs of two 2-thread cores: CPU n + 8 is CPU n's sibling; LLC 0 is cores 0-1
 * (cpus 0, 1, 8, 9), node 0 cores 0-3.
 * - A spinner on prev 0, the cursor at 1: idle cores' CPUs {1-7, 9-15}. 6.12: the next after
 *   1, cpu2; 6.18: LLC 0's {1, 9}: cpu9.
 * - Spinners on cpu0 (prev) and cpu1, so LLC 0 has no idle core; the cursor at 3. 6.12: cpu4
 *   (node 1); 6.18: node 0's {2, 3, 10, 11} after 3: cpu10.
 */
TEST(ext_class, the_default_select_cpu_prefers_a_wholly_idle_core_in_prevs_llc_then_node_on_6_18)
{
    for (const std::string v : {"6.18", "6.12"}) {
        const bool v6_18 = v == "6.18";
        {
            wakee_setting w(llc_machine(2, 4, 2, 2), v + "+ext:simple", 0, {0}, 1);
            ASSERT_TRUE(w.t.k->topology().cpus_share_cache(0, 9));
            ASSERT_FALSE(w.t.k->topology().cpus_share_cache(0, 2));
            bool found = false;
            EXPECT_EQ(w.select(0, WF_TTWU, &found), v6_18 ? 9 : 2) << v << ": llc";
            EXPECT_TRUE(found) << v;
        }
        {
            wakee_setting w(llc_machine(2, 4, 2, 2), v + "+ext:simple", 0, {0, 1}, 3);
            EXPECT_EQ(w.t.k->scx()->selcpu_topo_numa, v6_18);
            bool found = false;
            EXPECT_EQ(w.select(0, WF_TTWU, &found), v6_18 ? 10 : 4) << v << ": node";
            EXPECT_TRUE(found) << v;
        }
    }
}

/*
 * The scx_bpf_select_cpu_dfl() kfunc from ops.enqueue(): an error at 6.12.19 (ops.select_cpu()
 * only); allowed at 6.18.2 (select_cpu_from_kfunc()), where a task allowed on one CPU gets
 * only the prev test. p is pinned to cpu0, where the waker spins with an empty local DSQ;
 * cpus 1-3 idle; a sync wakeup. The kfunc: prev 0 is busy, so 0 and not idle.
 * scx_select_cpu_dfl() itself would take the waker's CPU as idle (found).
 */
TEST(ext_class, the_select_cpu_dfl_kfunc_gives_a_one_cpu_task_only_the_prev_test_on_6_18)
{
    for (const std::string v : {"6.18", "6.12"}) {
        sched_fixture t(small_machine(4), v + "+ext:simple");
        task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
        task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 0);
        t.run_for(msecs(1));
        t.k->set_this_cpu(0);
        ASSERT_EQ(t.k->current(), &waker);
        ASSERT_EQ(p.nr_cpus_allowed, 1);
        scx_sched& s = *t.k->scx();
        s.in_op = scx_sched::kf::enqueue;
        bool is_idle = true;
        const s32 cpu =
            scx_bpf_select_cpu_dfl(&s.cx.ctx, &p.scx.view, 0, WF_TTWU | WF_SYNC, &is_idle);
        s.in_op = scx_sched::kf::none;
        EXPECT_EQ(cpu, 0) << v;
        EXPECT_FALSE(is_idle) << v;
        EXPECT_EQ(s.exit.kind != 0, v == "6.12") << v << ": an error only on 6.12";
        if (v == "6.18") {
            bool found = false;
            EXPECT_EQ(scx_select_cpu_dfl(*t.k, p, 0, WF_TTWU | WF_SYNC, &found), 0);
            EXPECT_TRUE(found) << "without the shortcut";
        }
    }
}

TEST(ext_class, simple_direct_dispatches_a_wakee_that_finds_an_idle_cpu)
{
    // Four spinners on four idle CPUs: each finds an idle CPU in select_cpu and runs there.
    sched_fixture t(small_machine(4), "6.12+ext:simple");
    std::vector<task_struct*> ts;
    for (int i = 0; i < 4; ++i)
        ts.push_back(&t.spawn(fmt::format("t{}", i), testlib::spin()));
    t.run_for(msecs(10));
    for (task_struct* p : ts)
        EXPECT_EQ(ran(t, *p), static_cast<u64>(msecs(10))) << p->comm;
    EXPECT_EQ(t.k->scx()->stats.direct_dispatches, 4u);
}

#ifdef SCHEDLAB_EXAMPLE_POLICY
TEST(ext_class, the_example_policy_runs_from_its_shared_object)
{
    // examples/ext_policy/fifo_policy.c: a and b find idle CPUs (0, 1) and run at once; c and
    // d wait in the shared FIFO. Slices are 5 ms but end at the next tick (8 ms): at 8 ms cpu0
    // takes c and cpu1 d (moved from cpu0's rq), a and b queue behind them, and so on: each
    // task runs 8 ms of every 16.
    const std::string spec = std::string("6.12+ext:") + SCHEDLAB_EXAMPLE_POLICY;
    kernel_config kc = make_kernel_config(spec);
    ASSERT_TRUE(kc.ext && kc.ext->ops);
    EXPECT_EQ(std::string(kc.ext->ops->name), "example_fifo");
    sched_fixture t(small_machine(2), kc);
    std::vector<task_struct*> ts;
    for (const char* n : {"a", "b", "c", "d"})
        ts.push_back(&t.spawn(n, testlib::spin()));
    t.run_for(msecs(96));
    for (task_struct* p : ts)
        EXPECT_EQ(ran(t, *p), static_cast<u64>(msecs(48))) << p->comm;
    EXPECT_EQ(t.k->scx()->exit.kind, 0);
    const u64* counts = reinterpret_cast<const u64*>(t.k->scx()->state.data());
    EXPECT_GT(counts[0], 0u) << "nr_enqueued";
    EXPECT_GT(counts[1], 0u) << "nr_dispatched";
}
#endif

} // namespace
} // namespace schedlab
