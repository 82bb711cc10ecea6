// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ext scheduling class (kernel/sched/ext.c of v6.12, sched_ext): a policy
 * outside the kernel decides, through callbacks (struct schedlab_ext_ops,
 * include/schedlab/ext_policy.h: the C ABI in place of BPF), where runnable
 * tasks wait and which CPU runs them; the class keeps them in dispatch queues
 * (DSQs: a local one per CPU that the CPU runs from, the global one, the
 * policy's own, FIFO or vtime-ordered), runs each for its slice, and ejects a
 * policy that breaks the contract or stalls a task, sending every task back
 * to the fair class (scx_ops_disable_workfn()).
 *
 * Read against kernel/sched/ext.c of v6.12 (f0e1a0643a59 "sched_ext: Implement
 * BPF extensible scheduler class" and the 6.12 fixes, e.g. 30dd3b13f9de: prev
 * with slice left is kept). Where v6.13+ differ: the kfuncs' names
 * (scx_bpf_dsq_insert/dsq_move_to_local for 6.12's scx_bpf_dispatch/consume);
 * the default select_cpu (scx_select_cpu_dfl()): 6.12.19's for the 6.12 profile,
 * 6.18.2's kernel/sched/ext_idle.c (its LLC and NUMA preference) for the 6.18 one.
 * docs/classes.md says what is modelled and what is not.
 *
 * Only the full switch: with a policy loaded every SCHED_NORMAL, SCHED_BATCH
 * and SCHED_IDLE task runs in the ext class (scx_switching_all, no
 * SCX_OPS_SWITCH_PARTIAL). No BPF: the callbacks are plain calls, their own
 * CPU time is not charged; DSQ locks are priced as rq locks (costs.def
 * rq_lock_hold: no measurement of their own).
 */
#include "sched/core.h"
#include "sched/fair.h"

#include <fmt/format.h>

#include "sim/bug.h"
#include "sim/config_error.h"

#include <algorithm>
#include <type_traits>

namespace schedlab {

namespace {

/* scx_exit_kind (enum scx_exit_kind, 6.12) */
constexpr int SCX_EXIT_ERROR = 1024;
constexpr int SCX_EXIT_ERROR_BPF = 1025;
constexpr int SCX_EXIT_ERROR_STALL = 1026;

constexpr int SCX_DSP_MAX_LOOPS = 32;                       // ext.c
constexpr sim_dur SCX_WATCHDOG_MAX_TIMEOUT = 30'000'000'000; // 30 * HZ
constexpr u64 SCX_ENQ_DSQ_PRIQ = 1ULL << 57;                 // internal: vtime insert

/* the event kinds of scx_sched::fire() */
enum : u64 { EV_WATCHDOG = 1ULL << 32, EV_DISABLE = 2ULL << 32, EV_DEFERRED = 3ULL << 32 };

// The ctx a callback receives is the first member of scx_ctx (standard layout).
scx_sched& sched_of(schedlab_ext_ctx* ctx)
{
    return *reinterpret_cast<scx_ctx*>(ctx)->self;
}

bool errored(const scx_sched& s)
{
    return s.exit.kind != 0;
}

/// The policy's view of p, brought up to date for a callback.
schedlab_ext_task* V(task_struct& p)
{
    schedlab_ext_task& v = p.scx.view;
    v.cpu = p.cpu;
    v.nr_cpus_allowed = p.nr_cpus_allowed;
    v.sum_exec_runtime = p.se.sum_exec_runtime;
    return &v;
}

/// Runs a callback as kernel context `kf` (scx_kf_mask), `ddsp` the task it may direct-dispatch.
struct op_scope {
    scx_sched& s;
    scx_sched::kf saved_op;
    task_struct* saved_task;
    op_scope(scx_sched& ss, scx_sched::kf kf, task_struct* ddsp = nullptr)
        : s(ss), saved_op(ss.in_op), saved_task(ss.ddsp_task)
    {
        s.in_op = kf;
        s.ddsp_task = ddsp;
    }
    ~op_scope()
    {
        s.in_op = saved_op;
        s.ddsp_task = saved_task;
    }
    op_scope(const op_scope&) = delete;
    op_scope& operator=(const op_scope&) = delete;
};

const char* op_name(scx_sched::kf k)
{
    switch (k) {
    case scx_sched::kf::select_cpu:
        return "ops.select_cpu()";
    case scx_sched::kf::enqueue:
        return "ops.enqueue()";
    case scx_sched::kf::dispatch:
        return "ops.dispatch()";
    case scx_sched::kf::rest:
        return "another callback";
    case scx_sched::kf::none:
        break;
    }
    return "outside any callback";
}

} // namespace

bool scx_vtime_less::operator()(const task_struct* a, const task_struct* b) const
{
    // kernel: ext.c scx_dsq_priq_less(): time_before64() on dsq_vtime; ties in insertion order.
    const s64 d = static_cast<s64>(a->scx.view.dsq_vtime - b->scx.view.dsq_vtime);
    if (d != 0)
        return d < 0;
    return a->scx.dsq_seq < b->scx.dsq_seq;
}

/* ------------------------------------------------------------------------ */
/* Errors and the disable path                                                */

/*
 * kernel: ext.c scx_ops_error_kind() / scx_ops_exit_kind(), 6.12: the first
 * error is recorded (kind, reason, message) and the disable work queued; the
 * class bypasses the policy from then on (scx_ops_bypass()). Differs: the
 * disable runs as an event at the same simulated time, not in a kthread, and
 * no callback but exit_task() and exit() is made after the error.
 */
void scx_ops_error_kind(kernel& k, int kind, const task_struct* p, int cpu, std::string msg)
{
    scx_sched& s = *k.scx();
    if (errored(s) || !s.enabled)
        return;
    s.exit.kind = kind;
    s.exit.reason = kind == SCX_EXIT_ERROR_STALL ? "runnable task stall"
                    : kind == SCX_EXIT_ERROR_BPF ? "scx_bpf_error"
                                                 : "runtime error";
    s.exit.msg = std::move(msg);
    s.exit.at = k.now();
    s.exit.cpu = cpu >= 0 ? cpu : k.smp_processor_id();
    s.exit.pid = p ? p->pid : -1;
    s.disable_event = k.sim().after(0, event_prio::softirq, &s, EV_DISABLE);
}

namespace {

void scx_error(kernel& k, const task_struct* p, std::string msg)
{
    scx_ops_error_kind(k, SCX_EXIT_ERROR, p, p ? p->cpu : -1, std::move(msg));
}

std::string task_name(const task_struct& p)
{
    return fmt::format("{}[{}]", p.comm, p.pid);
}

// kernel: ext.c ops_cpu_valid(), 6.12: a CPU the policy names must exist.
bool ops_cpu_valid(kernel& k, s64 cpu, const char* where, const task_struct* p = nullptr)
{
    if (cpu >= 0 && cpu < k.nr_cpu_ids())
        return true;
    scx_error(k, p, fmt::format("invalid CPU {} {}", cpu, where));
    return false;
}

/// Recovers the task behind a policy's pointer; a pointer that is none is an error.
task_struct* task_of_view(kernel& k, schedlab_ext_task* v, const char* helper)
{
    task_struct* p = v ? static_cast<task_struct*>(v->schedlab_private) : nullptr;
    if (!p || k.find_task_by_pid(v->pid) != p || &p->scx.view != v) {
        scx_error(k, nullptr, fmt::format("{}() called with an invalid task pointer", helper));
        return nullptr;
    }
    return p;
}

/* ---- runnable tracking for the watchdog ---- */

// kernel: ext.c set_task_runnable(), 6.12: runnable_at and rq->scx.runnable_list.
void set_task_runnable(kernel& k, rq& r, task_struct& p)
{
    if (p.scx.on_runnable_list)
        r.scx.runnable_list.erase(p.scx.runnable_node);
    p.scx.runnable_at = k.now();
    p.scx.runnable_node = r.scx.runnable_list.insert(r.scx.runnable_list.end(), &p);
    p.scx.on_runnable_list = true;
}

// kernel: ext.c clr_task_runnable(), 6.12.
void clr_task_runnable(rq& r, task_struct& p)
{
    if (!p.scx.on_runnable_list)
        return;
    r.scx.runnable_list.erase(p.scx.runnable_node);
    p.scx.on_runnable_list = false;
}

/* ---- dispatch queues ---- */

rq& rq_of_local(kernel& k, scx_dispatch_q& dsq)
{
    return k.cpu_rq(dsq.cpu);
}

void dsq_lock(kernel& k, scx_dispatch_q& dsq)
{
    if (!dsq.local)
        k.charges().lock_and_charge(*dsq.lock, k.smp_processor_id(), k.charges().params().rq_lock_hold);
}

/*
 * kernel: ext.c dispatch_enqueue(), 6.12: p joins dsq, at the tail (the head
 * with SCX_ENQ_HEAD or SCX_ENQ_PREEMPT) or in dsq_vtime order; built-in DSQs
 * are FIFO only and a DSQ holds one order at a time (errors otherwise, p goes
 * FIFO). A task entering a local DSQ reschedules its CPU if that runs a lower
 * class (the idle task), or, with SCX_ENQ_PREEMPT, ends the slice of its ext task.
 */
void dispatch_enqueue(kernel& k, scx_dispatch_q& dsq, task_struct& p, u64 enq_flags)
{
    SIM_BUG_ON(p.scx.dsq, "ext: {} is already on DSQ {:#x}", task_name(p), p.scx.dsq->id);
    dsq_lock(k, dsq);
    bool vtime = enq_flags & SCX_ENQ_DSQ_PRIQ;
    if (vtime && (dsq.id & SCX_DSQ_FLAG_BUILTIN)) {
        scx_error(k, &p, fmt::format("cannot use vtime ordering for built-in DSQs ({} into {:#x})",
                                     task_name(p), dsq.id));
        vtime = false;
    } else if (vtime && !dsq.list.empty()) {
        scx_error(k, &p, fmt::format("DSQ {:#x} already had FIFO-enqueued tasks ({})", dsq.id,
                                     task_name(p)));
        vtime = false;
    } else if (!vtime && !dsq.priq.empty()) {
        scx_error(k, &p, fmt::format("DSQ {:#x} already had PRIQ-enqueued tasks ({})", dsq.id,
                                     task_name(p)));
        vtime = true;
    }
    p.scx.dsq_seq = ++dsq.seq;
    if (vtime)
        dsq.priq.insert(&p);
    else if (enq_flags & (SCX_ENQ_HEAD | SCX_ENQ_PREEMPT))
        p.scx.dsq_list = dsq.list.insert(dsq.list.begin(), &p);
    else
        p.scx.dsq_list = dsq.list.insert(dsq.list.end(), &p);
    ++dsq.nr;
    p.scx.dsq = &dsq;
    p.scx.ops_state = scx_opss::NONE; // SCX_ENQ_CLEAR_OPSS: the policy let go of it

    if (dsq.local) {
        rq& r = rq_of_local(k, dsq);
        bool preempt = false;
        if ((enq_flags & SCX_ENQ_PREEMPT) && &p != r.curr &&
            r.curr->sched_class == &ext_sched_class) {
            r.curr->scx.view.slice = 0;
            preempt = true;
        }
        if (preempt || sched_class_above(&ext_sched_class, r.curr->sched_class))
            k.resched_curr(r);
    }
}

// kernel: ext.c dispatch_dequeue() / task_unlink_from_dsq(), 6.12.
void dispatch_dequeue(kernel& k, task_struct& p)
{
    scx_dispatch_q* dsq = p.scx.dsq;
    if (!dsq)
        return;
    dsq_lock(k, *dsq);
    if (!dsq->priq.empty() && dsq->priq.erase(&p))
        ;
    else
        dsq->list.erase(p.scx.dsq_list);
    --dsq->nr;
    p.scx.dsq = nullptr;
}

task_struct* first_task(scx_dispatch_q& dsq)
{
    if (!dsq.priq.empty())
        return *dsq.priq.begin();
    return dsq.list.empty() ? nullptr : dsq.list.front();
}

// kernel: ext.c find_user_dsq() / find_global_dsq(), 6.12.
scx_dispatch_q* find_user_dsq(scx_sched& s, u64 dsq_id)
{
    auto it = s.dsqs.find(dsq_id);
    return it == s.dsqs.end() ? nullptr : it->second.get();
}

// kernel: ext.c find_dsq_for_dispatch(), 6.12: SCX_DSQ_LOCAL is r's own.
scx_dispatch_q& find_dsq_for_dispatch(kernel& k, rq& r, u64 dsq_id, task_struct& p)
{
    scx_sched& s = *k.scx();
    if (dsq_id == SCX_DSQ_LOCAL)
        return r.scx.local_dsq;
    if ((dsq_id & SCX_DSQ_LOCAL_ON) == SCX_DSQ_LOCAL_ON) {
        const u64 cpu = dsq_id & SCX_DSQ_LOCAL_CPU_MASK;
        if (!ops_cpu_valid(k, static_cast<s64>(cpu), "in SCX_DSQ_LOCAL_ON dispatch verdict", &p))
            return s.dsq_global;
        return k.cpu_rq(static_cast<int>(cpu)).scx.local_dsq;
    }
    if (dsq_id == SCX_DSQ_GLOBAL)
        return s.dsq_global;
    if (scx_dispatch_q* dsq = find_user_dsq(s, dsq_id))
        return *dsq;
    scx_error(k, &p, fmt::format("non-existent DSQ {:#x} for {}", dsq_id, task_name(p)));
    return s.dsq_global;
}

/*
 * kernel: ext.c move_remote_task_to_local_dsq(), 6.12: p leaves its rq and
 * joins dst's local DSQ (sticky_cpu makes enqueue_task_scx() put it there).
 * The CPU doing it takes both rq locks.
 */
void move_remote_task_to_local_dsq(kernel& k, task_struct& p, u64 enq_flags, rq& src, rq& dst)
{
    const int this_cpu = k.smp_processor_id();
    if (src.cpu != this_cpu)
        k.charges().lock_and_charge(src.lock, this_cpu, k.charges().params().rq_lock_hold);
    if (dst.cpu != this_cpu)
        k.charges().lock_and_charge(dst.lock, this_cpu, k.charges().params().rq_lock_hold);
    k.update_rq_clock(src);
    k.deactivate_task(src, p, 0);
    k.set_task_cpu(p, dst.cpu);
    p.scx.sticky_cpu = dst.cpu;
    k.update_rq_clock(dst);
    dst.scx.extra_enq_flags = enq_flags;
    k.activate_task(dst, p, ENQUEUE_NOCLOCK);
    dst.scx.extra_enq_flags = 0;
    ++k.scx()->stats.consumed_remote;
}

// kernel: ext.c task_can_run_on_remote_rq(), 6.12 (no migration_disabled, every CPU online).
bool task_can_run_on_remote_rq(kernel& k, task_struct& p, rq& r, bool enforce)
{
    if (p.cpus_mask.test(r.cpu))
        return true;
    if (enforce)
        scx_error(k, &p, fmt::format("SCX_DSQ_LOCAL[_ON] verdict target cpu {} not allowed for {}",
                                     r.cpu, task_name(p)));
    return false;
}

/*
 * kernel: ext.c dispatch_to_local_dsq(), 6.12: into dst's local DSQ, moving p
 * there from its rq if dst is another CPU's; a CPU outside p's mask is an
 * error and p goes to the global DSQ.
 */
void dispatch_to_local_dsq(kernel& k, scx_dispatch_q& dst_dsq, task_struct& p, u64 enq_flags)
{
    rq& dst = rq_of_local(k, dst_dsq);
    rq& src = k.cpu_rq(p.cpu);
    if (&src == &dst) {
        dispatch_enqueue(k, dst_dsq, p, enq_flags);
        return;
    }
    if (!task_can_run_on_remote_rq(k, p, dst, true)) {
        dispatch_enqueue(k, k.scx()->dsq_global, p, enq_flags);
        return;
    }
    p.scx.ops_state = scx_opss::NONE;
    move_remote_task_to_local_dsq(k, p, enq_flags, src, dst);
}

/*
 * kernel: ext.c consume_dispatch_q(), 6.12: the first task of dsq that may
 * run on r's CPU moves to r's local DSQ (from another rq if it is queued on one).
 */
bool consume_dispatch_q(kernel& k, rq& r, scx_dispatch_q& dsq)
{
    if (dsq.nr == 0)
        return false;
    dsq_lock(k, dsq);
    auto try_one = [&](task_struct* p) {
        if (p->cpu == r.cpu) {
            dispatch_dequeue(k, *p);
            dispatch_enqueue(k, r.scx.local_dsq, *p, 0);
            return true;
        }
        if (!task_can_run_on_remote_rq(k, *p, r, false))
            return false;
        dispatch_dequeue(k, *p);
        move_remote_task_to_local_dsq(k, *p, 0, k.cpu_rq(p->cpu), r);
        return true;
    };
    if (!dsq.priq.empty()) {
        for (task_struct* p : dsq.priq)
            if (try_one(p))
                return true;
    } else {
        for (task_struct* p : dsq.list)
            if (try_one(p))
                return true;
    }
    return false;
}

/* ---- direct dispatch ---- */

void run_deferred(kernel& k, rq& r);

// kernel: ext.c direct_dispatch(), 6.12: the verdict select_cpu()/enqueue() gave.
void direct_dispatch(kernel& k, rq& r, task_struct& p, u64 enq_flags)
{
    scx_sched& s = *k.scx();
    const u64 dsq_id = p.scx.ddsp_dsq_id;
    enq_flags |= p.scx.ddsp_enq_flags;
    p.scx.ddsp_dsq_id = SCX_DSQ_INVALID;
    p.scx.ddsp_enq_flags = 0;
    p.scx.ops_state = scx_opss::NONE;
    ++s.stats.direct_dispatches;
    scx_dispatch_q& dsq = find_dsq_for_dispatch(k, r, dsq_id, p);
    if (dsq.local && &dsq != &r.scx.local_dsq) {
        // Another CPU's local DSQ: its rq cannot be locked here; ddsp_deferred_locals.
        r.scx.deferred.push_back({&p, &dsq, enq_flags});
        if (!r.scx.in_wakeup)
            k.sim().after(0, event_prio::softirq, &s, EV_DEFERRED | static_cast<u32>(r.cpu));
        return;
    }
    dispatch_enqueue(k, dsq, p, enq_flags);
}

/*
 * kernel: ext.c do_enqueue_task(), 6.12: a task moved by a consume goes to
 * the local DSQ it was moved for; a task with a direct-dispatch verdict to
 * it; without ops.enqueue() (or once the policy erred) to the global DSQ;
 * otherwise to the policy, which may insert it at once or keep it.
 */
void do_enqueue_task(kernel& k, rq& r, task_struct& p, u64 enq_flags, int sticky_cpu)
{
    scx_sched& s = *k.scx();
    if (sticky_cpu == r.cpu) {
        p.scx.view.slice = p.scx.view.slice ? p.scx.view.slice : SCX_SLICE_DFL;
        dispatch_enqueue(k, r.scx.local_dsq, p, enq_flags);
        return;
    }
    if (!errored(s) && p.scx.ddsp_dsq_id != SCX_DSQ_INVALID) {
        direct_dispatch(k, r, p, enq_flags);
        return;
    }
    if (errored(s) || !s.ops.enqueue) {
        p.scx.view.slice = SCX_SLICE_DFL;
        dispatch_enqueue(k, s.dsq_global, p, enq_flags);
        return;
    }
    p.scx.ops_state = scx_opss::QUEUED;
    {
        op_scope scope(s, scx_sched::kf::enqueue, &p);
        s.ops.enqueue(&s.cx.ctx, V(p), enq_flags);
    }
    if (!errored(s) && p.scx.ddsp_dsq_id != SCX_DSQ_INVALID)
        direct_dispatch(k, r, p, enq_flags);
}

// kernel: ext.c process_ddsp_deferred_locals(), 6.12: the direct dispatches to other CPUs.
void run_deferred(kernel& k, rq& r)
{
    auto list = std::move(r.scx.deferred);
    r.scx.deferred.clear();
    for (const scx_deferred& d : list) {
        task_struct& p = *d.p;
        if (p.scx.dsq || !(p.scx.flags & SCX_TASK_QUEUED) || p.cpu != r.cpu || r.curr == &p)
            continue; // dequeued, moved or running meanwhile
        dispatch_to_local_dsq(k, *d.dsq, p, d.enq_flags);
    }
}

} // namespace

/* ------------------------------------------------------------------------ */
/* Idle CPU tracking and the default select_cpu                              */

namespace {

bool sched_smt_active(const kernel& k)
{
    return k.scx()->smt_active;
}

// kernel: ext.c test_and_clear_cpu_idle(), 6.12: claims an idle CPU (and its core's idle bit).
bool test_and_clear_cpu_idle(kernel& k, int cpu)
{
    scx_sched& s = *k.scx();
    if (sched_smt_active(k)) {
        const cpumask& smt = s.smt_mask[static_cast<std::size_t>(cpu)];
        bool any = false;
        for_each_cpu(c, smt)
        {
            any = any || s.idle_smt.test(c);
        }
        if (any)
            for_each_cpu(c, smt)
            {
                s.idle_smt.clear(c);
            }
    }
    const bool was = s.idle_cpu.test(cpu);
    s.idle_cpu.clear(cpu);
    return was;
}

/*
 * kernel: ext.c scx_pick_idle_cpu(), 6.12: a wholly idle core first (SMT), then any idle CPU.
 * Also 6.18.2's ext_idle.c pick_idle_cpu_in_node() and scx_pick_idle_cpu() for
 * NUMA_NO_NODE, the only node they see while SCX_OPS_BUILTIN_IDLE_PER_NODE is off (no
 * modelled policy can set it: the ABI accepts no flags), so no node walk.
 */
int scx_pick_idle_cpu(kernel& k, const cpumask& allowed, u64 flags)
{
    scx_sched& s = *k.scx();
    for (;;) {
        int cpu = k.nr_cpu_ids();
        if (sched_smt_active(k)) {
            cpu = cpumask_any_and_distribute(k, s.idle_smt, allowed);
            if (cpu >= k.nr_cpu_ids() && (flags & SCX_PICK_IDLE_CORE))
                return -16; // -EBUSY
        }
        if (cpu >= k.nr_cpu_ids()) {
            cpu = cpumask_any_and_distribute(k, s.idle_cpu, allowed);
            if (cpu >= k.nr_cpu_ids())
                return -16;
        }
        if (test_and_clear_cpu_idle(k, cpu))
            return cpu;
    }
}

/*
 * kernel: ext.c scx_select_cpu_dfl(), 6.12 (read at 6.12.19, wishday/linux-6.12.y
 * 21ae40e85ea7), its tests in the kernel's order: a sync wakeup takes the waker's CPU if idle
 * CPUs remain, the waker is not PF_EXITING (as in every version from v6.12), its local DSQ is
 * empty and p may run there; then (SMT) prev if its whole core is idle, any wholly idle core;
 * prev if idle; any idle CPU; else prev (not found). 6.12 has no nr_cpus_allowed test and no
 * test of prev in the sync block.
 */
int select_cpu_dfl_6_12(kernel& k, task_struct& p, int prev_cpu, int wake_flags, bool* found)
{
    scx_sched& s = *k.scx();
    *found = false;
    if (wake_flags & WF_SYNC) {
        const int cpu = k.smp_processor_id();
        if (!s.idle_cpu.empty() && !(k.current()->flags & PF_EXITING) &&
            k.cpu_rq(cpu).scx.local_dsq.nr == 0 && p.cpus_mask.test(cpu)) {
            *found = true;
            return cpu;
        }
    }
    if (sched_smt_active(k)) {
        if (s.idle_smt.test(prev_cpu) && test_and_clear_cpu_idle(k, prev_cpu)) {
            *found = true;
            return prev_cpu;
        }
        const int cpu = scx_pick_idle_cpu(k, p.cpus_mask, SCX_PICK_IDLE_CORE);
        if (cpu >= 0) {
            *found = true;
            return cpu;
        }
    }
    if (test_and_clear_cpu_idle(k, prev_cpu)) {
        *found = true;
        return prev_cpu;
    }
    const int cpu = scx_pick_idle_cpu(k, p.cpus_mask, 0);
    if (cpu >= 0) {
        *found = true;
        return cpu;
    }
    return prev_cpu;
}

// kernel: ext_idle.c llc_span() / numa_span(), 6.18.2: sd_llc's span; sd_numa's first group's.
const cpumask* llc_span(const kernel& k, int cpu)
{
    const sched_domain* sd = k.topology().cpu(cpu).sd_llc;
    return sd ? &sd->span : nullptr;
}

const cpumask* numa_span(const kernel& k, int cpu)
{
    const sched_domain* sd = k.topology().cpu(cpu).sd_numa;
    return sd && !sd->groups.empty() ? &sd->groups.front().span : nullptr;
}

/*
 * The CPUs of span that p may use (6.18.2 scx_select_cpu_dfl()'s llc_cpus / numa_cpus): the
 * span itself when p may run anywhere (task_affinity_all()), else its intersection with
 * p->cpus_ptr in `local` (the kernel's per-CPU scratch mask), none when that is empty.
 */
const cpumask* task_span(const kernel& k, const task_struct& p, const cpumask* span, cpumask& local)
{
    if (!span)
        return nullptr;
    if (p.cpus_mask.weight() >= k.nr_cpu_ids())
        return span;
    local = p.cpus_mask & *span;
    return local.empty() ? nullptr : &local;
}

/*
 * kernel: ext_idle.c scx_select_cpu_dfl(), 6.18.2 (gfunkmonk/linux-6.18.2 062668f4d006), for
 * its two modelled callers (cpus_allowed NULL, flags 0): prev counts only when p may run there
 * (is_prev_allowed). A sync wakeup takes an idle prev sharing the waker's LLC, else the
 * waker's CPU on 6.12's conditions; then (SMT) prev if its whole core is idle, a wholly idle
 * core in prev's LLC, in prev's node, anywhere; prev if idle; an idle CPU in prev's LLC, in
 * prev's node, anywhere; -EBUSY. The LLC and node steps run only when
 * scx_idle_update_selcpu_topology() enabled them. The waker test reads the global idle mask:
 * 6.18.2 as released reads idle_cpumask(cpu_to_node(waker)), a per-node mask nothing updates
 * while per-node tracking is off; db08b1940f4b fixed it, queued for 6.18-stable (review
 * Message-ID 20260408175938.915489578@linuxfoundation.org; which 6.18.y took it was not
 * checked). The model follows the fix, as 6.12's test.
 * model: SCX_PICK_IDLE_IN_NODE, cpus_allowed and per-node masks are not reachable (no
 * scx_bpf_select_cpu_and(), no ops flags).
 */
int select_cpu_dfl_6_18(kernel& k, task_struct& p, int prev_cpu, int wake_flags)
{
    scx_sched& s = *k.scx();
    const cpumask& allowed = p.cpus_mask;
    const bool is_prev_allowed = allowed.test(prev_cpu);
    cpumask local_numa(0), local_llc(0);
    const cpumask* numa_cpus =
        s.selcpu_topo_numa ? task_span(k, p, numa_span(k, prev_cpu), local_numa) : nullptr;
    const cpumask* llc_cpus =
        s.selcpu_topo_llc ? task_span(k, p, llc_span(k, prev_cpu), local_llc) : nullptr;
    if (wake_flags & WF_SYNC) {
        const int cpu = k.smp_processor_id();
        if (is_prev_allowed && k.topology().cpus_share_cache(cpu, prev_cpu) &&
            test_and_clear_cpu_idle(k, prev_cpu))
            return prev_cpu;
        if (!(k.current()->flags & PF_EXITING) && k.cpu_rq(cpu).scx.local_dsq.nr == 0 &&
            !s.idle_cpu.empty() && allowed.test(cpu))
            return cpu;
    }
    if (sched_smt_active(k)) {
        if (is_prev_allowed && s.idle_smt.test(prev_cpu) && test_and_clear_cpu_idle(k, prev_cpu))
            return prev_cpu;
        for (const cpumask* cpus : {llc_cpus, numa_cpus, &allowed}) {
            if (!cpus)
                continue;
            const int cpu = scx_pick_idle_cpu(k, *cpus, SCX_PICK_IDLE_CORE);
            if (cpu >= 0)
                return cpu;
        }
    }
    if (is_prev_allowed && test_and_clear_cpu_idle(k, prev_cpu))
        return prev_cpu;
    for (const cpumask* cpus : {llc_cpus, numa_cpus}) {
        if (!cpus)
            continue;
        const int cpu = scx_pick_idle_cpu(k, *cpus, 0);
        if (cpu >= 0)
            return cpu;
    }
    return scx_pick_idle_cpu(k, allowed, 0);
}

/*
 * kernel: ext_idle.c scx_idle_update_selcpu_topology(), 6.18.2 (at enable): the LLC step when
 * the first CPU's LLC is smaller than the machine; the NUMA step when its node is too
 * (numa_weight(): sd_numa's first group) and some CPU's LLC is not its node
 * (llc_numa_mismatch()). model: every CPU is online; hotplug is not modelled.
 */
void scx_idle_update_selcpu_topology(kernel& k, scx_sched& s)
{
    const int cpu = 0;
    const int n = k.nr_cpu_ids();
    auto llc_weight = [&k](int c) {
        const cpumask* span = llc_span(k, c);
        return span ? span->weight() : 0;
    };
    auto numa_weight = [&k](int c) {
        const cpumask* span = numa_span(k, c);
        return span ? span->weight() : 0;
    };
    const int nr_llc = llc_weight(cpu);
    s.selcpu_topo_llc = nr_llc > 0 && nr_llc < n;
    const int nr_numa = numa_weight(cpu);
    bool mismatch = false;
    for (int c = 0; c < n && !mismatch; ++c)
        mismatch = llc_weight(c) != numa_weight(c);
    s.selcpu_topo_numa = nr_numa > 0 && nr_numa < n && mismatch;
}

} // namespace

/*
 * scx_select_cpu_dfl() of the profile's version (kernel_behaviour::scx_select_cpu_6_18);
 * *found when an idle CPU was claimed, else prev_cpu (6.18's -EBUSY, as its callers map it).
 */
int scx_select_cpu_dfl(kernel& k, task_struct& p, int prev_cpu, int wake_flags, bool* found)
{
    if (!k.config().behaviour.scx_select_cpu_6_18)
        return select_cpu_dfl_6_12(k, p, prev_cpu, wake_flags, found);
    const int cpu = select_cpu_dfl_6_18(k, p, prev_cpu, wake_flags);
    *found = cpu >= 0;
    return cpu >= 0 ? cpu : prev_cpu;
}

/*
 * kernel: ext.c __scx_update_idle(), 6.12 (from the idle class's
 * set_next_task/put_prev_task): the CPU's idle bit, and its core's when every
 * sibling is idle. Called when the CPU switches to or from its idle task.
 */
void scx_update_idle(kernel& k, rq& r, bool idle)
{
    scx_sched* s = k.scx();
    if (!s || !s->enabled)
        return;
    const cpumask& smt = s->smt_mask[static_cast<std::size_t>(r.cpu)];
    if (idle) {
        s->idle_cpu.set(r.cpu);
        if (sched_smt_active(k)) {
            bool all = true;
            for_each_cpu(c, smt)
            {
                all = all && s->idle_cpu.test(c);
            }
            if (all)
                for_each_cpu(c, smt)
                {
                    s->idle_smt.set(c);
                }
        }
    } else {
        s->idle_cpu.clear(r.cpu);
        if (sched_smt_active(k) && s->idle_smt.test(r.cpu))
            for_each_cpu(c, smt)
            {
                s->idle_smt.clear(c);
            }
    }
}

// kernel: ext.c task_should_scx(), 6.12: with a policy enabled, every task of the fair policies.
bool task_should_scx(const kernel& k, const task_struct& p)
{
    const scx_sched* s = k.scx();
    if (!s || !s->enabled || s->exit.kind != 0)
        return false;
    return p.policy == SCHED_NORMAL || p.policy == SCHED_BATCH || p.policy == SCHED_IDLE ||
           p.policy == SCHED_EXT;
}

bool scx_enabled(const kernel& k)
{
    const scx_sched* s = k.scx();
    return s && s->enabled;
}

/* ------------------------------------------------------------------------ */
/* The class hooks                                                            */

namespace {

// kernel: ext.c update_curr_scx(), 6.12: runtime accounting and the slice's countdown.
void update_curr_scx(kernel& k, rq& r)
{
    task_struct& curr = *r.curr;
    if (curr.sched_class != &ext_sched_class)
        return;
    const u64 now = r.clock_task;
    const u64 delta = now > curr.se.exec_start ? now - curr.se.exec_start : 0;
    curr.se.sum_exec_runtime += delta;
    curr.se.exec_start = now;
    u64& slice = curr.scx.view.slice;
    if (slice != SCX_SLICE_INF)
        slice -= std::min(slice, delta);
    (void)k;
}

/*
 * kernel: ext.c enqueue_task_scx(), 6.12: the task counts on the rq, becomes
 * runnable for the watchdog, ops.runnable() hears of it (not for a move
 * between rqs), and do_enqueue_task() places it.
 */
void enqueue_task_scx(kernel& k, rq& r, task_struct& p, int flags)
{
    scx_sched& s = *k.scx();
    const int sticky_cpu = p.scx.sticky_cpu;
    p.scx.sticky_cpu = -1;
    u64 enq_flags = static_cast<u64>(flags & (ENQUEUE_WAKEUP | ENQUEUE_HEAD)) | r.scx.extra_enq_flags;
    SIM_BUG_ON(p.scx.flags & SCX_TASK_QUEUED, "ext: {} enqueued twice", task_name(p));
    if (flags & ENQUEUE_WAKEUP)
        r.scx.in_wakeup = true;
    set_task_runnable(k, r, p);
    p.scx.flags |= SCX_TASK_QUEUED;
    ++r.scx.nr_running;
    add_nr_running(r, 1);
    k.lb().lb_stats_changed(r.cpu); // nr_running: the fair balancer's group sums
    if (s.ops.runnable && !errored(s) && p.on_rq != TASK_ON_RQ_MIGRATING) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.runnable(&s.cx.ctx, V(p), enq_flags);
    }
    do_enqueue_task(k, r, p, enq_flags, sticky_cpu);
}

// kernel: ext.c ops_dequeue(), 6.12: a task still with the policy is taken back from it.
void ops_dequeue(scx_sched& s, task_struct& p, u64 deq_flags)
{
    if (p.scx.ops_state != scx_opss::QUEUED)
        return;
    p.scx.ops_state = scx_opss::NONE;
    if (s.ops.dequeue && !errored(s)) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.dequeue(&s.cx.ctx, V(p), deq_flags);
    }
}

void scx_ops_exit_task(scx_sched& s, task_struct& p)
{
    if (s.ops.exit_task) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.exit_task(&s.cx.ctx, V(p));
    }
}

/*
 * kernel: ext.c dequeue_task_scx(), 6.12: the task leaves the policy, its DSQ
 * and the rq; a running one is stopping (runnable false), and ops.quiescent()
 * hears of it unless it is moving between rqs. Differs: a dead task's
 * ops.exit_task() is called here (the kernel calls it from sched_ext_free()
 * when the task_struct is freed).
 */
bool dequeue_task_scx(kernel& k, rq& r, task_struct& p, int flags)
{
    scx_sched& s = *k.scx();
    SIM_BUG_ON(!(p.scx.flags & SCX_TASK_QUEUED), "ext: {} dequeued but not queued", task_name(p));
    const u64 deq_flags = static_cast<u64>(flags & DEQUEUE_SLEEP);
    ops_dequeue(s, p, deq_flags);
    if (r.curr == &p) {
        update_curr_scx(k, r);
        if (s.ops.stopping && !errored(s)) {
            op_scope scope(s, scx_sched::kf::rest);
            s.ops.stopping(&s.cx.ctx, V(p), false);
        }
    }
    if (s.ops.quiescent && !errored(s) && p.on_rq != TASK_ON_RQ_MIGRATING) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.quiescent(&s.cx.ctx, V(p), deq_flags);
    }
    p.scx.flags &= ~SCX_TASK_QUEUED;
    --r.scx.nr_running;
    sub_nr_running(r, 1);
    k.lb().lb_stats_changed(r.cpu);
    clr_task_runnable(r, p);
    dispatch_dequeue(k, p);
    if ((p.__state & TASK_DEAD) && s.enabled)
        scx_ops_exit_task(s, p);
    return true;
}

// kernel: ext.c yield_task_scx(), 6.12 (no ops.yield in the ABI): the slice ends.
void yield_task_scx(kernel& /*k*/, rq& r)
{
    r.curr->scx.view.slice = 0;
}

// kernel: ext.c wakeup_preempt_scx(), 6.12: nothing; preemption is the policy's (kick_cpu).
void wakeup_preempt_scx(kernel& /*k*/, rq& /*r*/, task_struct& /*p*/, int /*wake_flags*/) {}

/*
 * kernel: ext.c flush_dispatch_buf() / finish_dispatch(), 6.12: the inserts
 * ops.dispatch() made, in order; one of a task no longer with the policy
 * (dequeued or inserted since) is ignored, as the kernel's qseq test does.
 */
void flush_dispatch_buf(kernel& k, rq& r)
{
    scx_sched& s = *k.scx();
    auto buf = std::move(s.dsp_buf);
    s.dsp_buf.clear();
    for (auto& [p, dsq_id, enq_flags] : buf) {
        if (errored(s))
            break;
        if (p->scx.ops_state != scx_opss::QUEUED || !(p->scx.flags & SCX_TASK_QUEUED)) {
            ++s.stats.stale_inserts;
            continue;
        }
        p->scx.ops_state = scx_opss::NONE;
        scx_dispatch_q& dsq = find_dsq_for_dispatch(k, r, dsq_id, *p);
        if (dsq.local)
            dispatch_to_local_dsq(k, dsq, *p, enq_flags);
        else
            dispatch_enqueue(k, dsq, *p, enq_flags);
    }
}

/*
 * kernel: ext.c balance_scx() -> balance_one(), 6.12: before every pick. A
 * CPU taken back from a higher class tells the policy (cpu_acquire); prev
 * keeps the CPU while it has slice left; else the local DSQ, the global DSQ,
 * and ops.dispatch() (up to SCX_DSP_MAX_LOOPS rounds while it inserts) fill
 * the local DSQ; with nothing found, a still runnable prev runs on
 * (SCX_OPS_ENQ_LAST is not modelled).
 */
bool balance_scx(kernel& k, rq& r, task_struct& prev)
{
    if (!scx_enabled(k))
        return false;
    scx_sched& s = *k.scx();
    r.scx.in_balance = true;
    auto done = [&](bool has_tasks) {
        r.scx.in_balance = false;
        return has_tasks;
    };
    if (r.scx.cpu_released) {
        if (s.ops.cpu_acquire && !errored(s)) {
            op_scope scope(s, scx_sched::kf::rest);
            s.ops.cpu_acquire(&s.cx.ctx, r.cpu);
        }
        r.scx.cpu_released = false;
    }
    const bool prev_on_scx = prev.sched_class == &ext_sched_class;
    const bool prev_on_rq = prev_on_scx && (prev.scx.flags & SCX_TASK_QUEUED);
    auto keep_prev = [&] { // SCX_RQ_BAL_KEEP: prev runs on with the slice it has left
        if (!prev_on_rq || !prev.scx.view.slice)
            return false;
        r.scx.bal_keep = true;
        return true;
    };
    auto has_tasks = [&] { // the local DSQ, else the global DSQ's first task that may run here
        return r.scx.local_dsq.nr || consume_dispatch_q(k, r, s.dsq_global);
    };
    if (prev_on_scx) {
        update_curr_scx(k, r);
        if (!errored(s) && keep_prev())
            return done(true);
    }
    if (has_tasks())
        return done(true);
    if (s.ops.dispatch && !errored(s)) {
        for (int loops = SCX_DSP_MAX_LOOPS;;) {
            std::size_t inserted;
            {
                op_scope scope(s, scx_sched::kf::dispatch);
                s.dsp_cpu = r.cpu;
                ++s.dsp_round;
                ++s.stats.dispatch_calls;
                s.ops.dispatch(&s.cx.ctx, r.cpu, prev_on_scx ? V(prev) : nullptr);
                inserted = s.dsp_buf.size();
            }
            flush_dispatch_buf(k, r);
            if (keep_prev() || has_tasks())
                return done(true);
            if (inserted == 0 || errored(s))
                break;
            if (--loops == 0) {
                // ext.c: break out so the watchdog can run; kick to come back.
                k.resched_curr(r);
                break;
            }
        }
    }
    if (prev_on_rq) {
        r.scx.bal_keep = true;
        return done(true);
    }
    return done(false);
}

/*
 * kernel: ext.c set_next_task_scx(), 6.12: p leaves its DSQ to run; the policy
 * hears ops.running(); it is no longer waiting for the watchdog.
 */
void set_next_task_scx(kernel& k, rq& r, task_struct& p)
{
    scx_sched& s = *k.scx();
    if (p.scx.flags & SCX_TASK_QUEUED) {
        ops_dequeue(s, p, 0);
        dispatch_dequeue(k, p);
    }
    p.se.exec_start = r.clock_task;
    if (s.ops.running && !errored(s) && (p.scx.flags & SCX_TASK_QUEUED)) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.running(&s.cx.ctx, V(p));
    }
    clr_task_runnable(r, p);
}

/*
 * kernel: ext.c pick_task_scx(), 6.12: prev if balance_scx() kept it (a
 * fresh SCX_SLICE_DFL if its slice ran out), else the head of the local DSQ.
 * Differs: the model's picks set their task as current (6.6's
 * pick_next_task shape), so set_next_task_scx() runs here.
 */
task_struct* pick_next_task_scx(kernel& k, rq& r, task_struct* /*prev*/)
{
    if (!scx_enabled(k))
        return nullptr;
    task_struct& prev = *r.curr;
    const bool keep = r.scx.bal_keep;
    r.scx.bal_keep = false;
    if (keep && prev.sched_class == &ext_sched_class && (prev.scx.flags & SCX_TASK_QUEUED)) {
        if (!prev.scx.view.slice)
            prev.scx.view.slice = SCX_SLICE_DFL;
        return &prev;
    }
    task_struct* p = first_task(r.scx.local_dsq);
    if (!p)
        return nullptr;
    set_next_task_scx(k, r, *p);
    return p;
}

/*
 * kernel: ext.c put_prev_task_scx(), 6.12: a runnable prev is stopping; with
 * slice left (a higher class took the CPU) it waits at the head of the local
 * DSQ, else it goes back through do_enqueue_task(). Differs: the model puts
 * prev before the picks, so a prev that balance_scx() kept (and no higher
 * class has a task to take the CPU) is left as it is, as the kernel's
 * put_prev_set_next_task(prev, prev) does.
 */
void put_prev_task_scx(kernel& k, rq& r, task_struct& p)
{
    scx_sched& s = *k.scx();
    update_curr_scx(k, r);
    if (!(p.scx.flags & SCX_TASK_QUEUED))
        return;
    if (r.scx.bal_keep && r.nr_running == r.scx.nr_running)
        return;
    r.scx.bal_keep = false;
    if (s.ops.stopping && !errored(s)) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.stopping(&s.cx.ctx, V(p), true);
    }
    set_task_runnable(k, r, p);
    if (p.scx.view.slice && !errored(s)) {
        dispatch_enqueue(k, r.scx.local_dsq, p, SCX_ENQ_HEAD);
        return;
    }
    do_enqueue_task(k, r, p, 0, -1);
}

/*
 * kernel: ext.c switch_class(), 6.12: a higher class takes the CPU from the
 * ext class: ops.cpu_release() once (cpu_acquire() follows at the next balance).
 */
void switch_class_scx(kernel& k, rq& r, task_struct& next)
{
    scx_sched& s = *k.scx();
    if (!s.ops.cpu_release || !s.enabled || errored(s))
        return;
    if (sched_class_above(&ext_sched_class, next.sched_class))
        return;
    if (!r.scx.cpu_released) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.cpu_release(&s.cx.ctx, r.cpu);
        r.scx.cpu_released = true;
    }
}

/*
 * kernel: ext.c select_task_rq_scx(), 6.12: the policy's select_cpu() (which
 * may direct-dispatch p), an invalid CPU being an error; without one, the
 * default (scx_select_cpu_dfl()) inserts p into the local DSQ of the idle CPU
 * it finds.
 */
int select_task_rq_scx(kernel& k, task_struct& p, int prev_cpu, int wake_flags)
{
    scx_sched& s = *k.scx();
    if (wake_flags & WF_EXEC)
        return prev_cpu;
    if (s.ops.select_cpu && !errored(s)) {
        s32 cpu;
        {
            op_scope scope(s, scx_sched::kf::select_cpu, &p);
            cpu = s.ops.select_cpu(&s.cx.ctx, V(p), prev_cpu, static_cast<u64>(wake_flags));
        }
        if (ops_cpu_valid(k, cpu, "from ops.select_cpu()", &p))
            return cpu;
        return prev_cpu;
    }
    bool found = false;
    const int cpu = scx_select_cpu_dfl(k, p, prev_cpu, wake_flags, &found);
    if (found) {
        p.scx.view.slice = SCX_SLICE_DFL;
        p.scx.ddsp_dsq_id = SCX_DSQ_LOCAL;
    }
    return cpu;
}

/*
 * kernel: ext.c task_tick_scx(), 6.12: the slice counts down; ops.tick(); a
 * slice at 0 reschedules.
 */
void task_tick_scx(kernel& k, rq& r, task_struct& curr, int /*queued*/)
{
    scx_sched& s = *k.scx();
    update_curr_scx(k, r);
    if (errored(s))
        curr.scx.view.slice = 0;
    else if (s.ops.tick) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.tick(&s.cx.ctx, V(curr));
    }
    if (!curr.scx.view.slice)
        k.resched_curr(r);
}

/*
 * kernel: ext.c scx_ops_init_task() + scx_ops_enable_task(), 6.12 (from
 * sched_fork()/sched_post_fork()): the entity's start, ops.init_task() (a
 * failure is an error here; the kernel fails the fork) and ops.enable().
 */
void task_fork_scx(kernel& k, task_struct& p)
{
    scx_sched& s = *k.scx();
    schedlab_ext_task& v = p.scx.view;
    v = schedlab_ext_task{};
    v.pid = p.pid;
    v.tgid = p.tgid;
    v.comm = p.comm.c_str();
    v.nice = p.static_prio_nice;
    // sched_weight_to_cgroup(): DIV_ROUND_CLOSEST(weight * 100, 1024), clamped to 1..10000
    v.weight = std::clamp<u32>((p.se.load.weight * 100 + 512) / 1024, 1, 10000);
    v.slice = SCX_SLICE_DFL;
    v.schedlab_private = &p;
    if (errored(s))
        return;
    if (s.ops.init_task) {
        s32 rc;
        {
            op_scope scope(s, scx_sched::kf::rest);
            rc = s.ops.init_task(&s.cx.ctx, V(p), true);
        }
        if (rc != 0) {
            scx_error(k, &p, fmt::format("ops.init_task() failed ({}) for {}", rc, task_name(p)));
            return;
        }
    }
    if (s.ops.enable) {
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.enable(&s.cx.ctx, V(p));
    }
}

// kernel: ext.c task_woken_scx(), 6.12: the deferred direct dispatches of a wakeup.
void task_woken_scx(kernel& k, rq& r, task_struct& /*p*/)
{
    r.scx.in_wakeup = false;
    if (!r.scx.deferred.empty())
        run_deferred(k, r);
}

} // namespace

/*
 * kernel: kernel/sched/ext.c DEFINE_SCHED_CLASS(ext), 6.12 (the hooks the
 * model calls). It runs SCHED_EXT; with a policy loaded, also every
 * SCHED_NORMAL/BATCH/IDLE task (task_should_scx(), the full switch).
 */
const sched_class ext_sched_class = {
    .name = "ext",
    .order = 4,
    .policies = 1u << SCHED_EXT,
    .enqueue_task = enqueue_task_scx,
    .dequeue_task = dequeue_task_scx,
    .yield_task = yield_task_scx,
    .wakeup_preempt = wakeup_preempt_scx,
    .pick_next_task = pick_next_task_scx,
    .select_task_rq = select_task_rq_scx,
    .migrate_task_rq = nullptr,
    .task_tick = task_tick_scx,
    .task_fork = task_fork_scx,
    .put_prev_task = put_prev_task_scx,
    .balance = balance_scx,
    .task_woken = task_woken_scx,
    .switch_class = switch_class_scx,
};

/* ------------------------------------------------------------------------ */
/* The kfuncs (struct schedlab_ext_helpers)                                   */

namespace {

kernel& K(schedlab_ext_ctx* ctx)
{
    return sched_of(ctx).k;
}

u64 h_now(schedlab_ext_ctx* ctx)
{
    return static_cast<u64>(K(ctx).now());
}

s32 h_nr_cpu_ids(schedlab_ext_ctx* ctx)
{
    return K(ctx).nr_cpu_ids();
}

s32 h_cpu_llc(schedlab_ext_ctx* ctx, s32 cpu)
{
    scx_sched& s = sched_of(ctx);
    if (!ops_cpu_valid(s.k, cpu, "in cpu_llc()"))
        return 0;
    return s.llc_of[static_cast<std::size_t>(cpu)];
}

s32 h_nr_llcs(schedlab_ext_ctx* ctx)
{
    return sched_of(ctx).nr_llcs;
}

s32 h_cpu_node(schedlab_ext_ctx* ctx, s32 cpu)
{
    kernel& k = K(ctx);
    if (!ops_cpu_valid(k, cpu, "in scx_bpf_cpu_node()"))
        return 0;
    return k.mach().cpus[static_cast<std::size_t>(cpu)].node;
}

// kernel: ext.c scx_bpf_create_dsq() / create_dsq(), 6.12: ids with the built-in flag are refused.
s32 h_create_dsq(schedlab_ext_ctx* ctx, u64 dsq_id, s32 /*node*/)
{
    scx_sched& s = sched_of(ctx);
    if (dsq_id & SCX_DSQ_FLAG_BUILTIN)
        return -22; // -EINVAL
    if (s.dsqs.count(dsq_id))
        return -17; // -EEXIST
    auto dsq = std::make_unique<scx_dispatch_q>();
    dsq->id = dsq_id;
    s.locks.push_back(std::make_unique<contended_lock>());
    dsq->lock = s.locks.back().get();
    s.dsqs.emplace(dsq_id, std::move(dsq));
    return 0;
}

/*
 * kernel: ext.c scx_dsq_insert_preamble() + scx_dsq_insert_commit() and
 * mark_direct_dispatch(), 6.12: from select_cpu()/enqueue() a direct
 * dispatch of the task being placed (once); from dispatch() an entry of the
 * dispatch buffer; from anywhere else an error. Differs: a task inserted twice
 * in one dispatch() is an error (the kernel drops the second silently).
 */
void insert(schedlab_ext_ctx* ctx, schedlab_ext_task* v, u64 dsq_id, u64 slice, u64 enq_flags,
            const char* helper)
{
    scx_sched& s = sched_of(ctx);
    kernel& k = s.k;
    if (errored(s))
        return;
    task_struct* p = task_of_view(k, v, helper);
    if (!p)
        return;
    if (enq_flags & (0xffULL << 56 & ~SCX_ENQ_DSQ_PRIQ)) {
        scx_error(k, p, fmt::format("invalid enq_flags {:#x} for {}", enq_flags, task_name(*p)));
        return;
    }
    if (slice)
        p->scx.view.slice = slice;
    else if (!p->scx.view.slice)
        p->scx.view.slice = 1;
    switch (s.in_op) {
    case scx_sched::kf::select_cpu:
    case scx_sched::kf::enqueue:
        if (p != s.ddsp_task) {
            if (p->scx.ddsp_dsq_id != SCX_DSQ_INVALID)
                scx_error(k, p, fmt::format("{} already direct-dispatched", task_name(*p)));
            else
                scx_error(k, p, fmt::format("scheduling for {} but trying to direct-dispatch {}",
                                            s.ddsp_task ? task_name(*s.ddsp_task) : "?",
                                            task_name(*p)));
            return;
        }
        if (p->scx.ddsp_dsq_id != SCX_DSQ_INVALID) {
            scx_error(k, p, fmt::format("{} already direct-dispatched", task_name(*p)));
            return;
        }
        p->scx.ddsp_dsq_id = dsq_id;
        p->scx.ddsp_enq_flags = enq_flags;
        return;
    case scx_sched::kf::dispatch:
        if (p->scx.dsp_round == s.dsp_round) {
            scx_error(k, p, fmt::format("{} inserted twice by one ops.dispatch() on cpu{}",
                                        task_name(*p), s.dsp_cpu));
            return;
        }
        p->scx.dsp_round = s.dsp_round;
        s.dsp_buf.emplace_back(p, dsq_id, enq_flags);
        return;
    case scx_sched::kf::rest:
    case scx_sched::kf::none:
        break;
    }
    scx_error(k, p, fmt::format("{}() for {} called from {}: only select_cpu(), enqueue() and "
                                "dispatch() may insert",
                                helper, task_name(*p), op_name(s.in_op)));
}

void h_dsq_insert(schedlab_ext_ctx* ctx, schedlab_ext_task* p, u64 dsq_id, u64 slice,
                  u64 enq_flags)
{
    insert(ctx, p, dsq_id, slice, enq_flags, "scx_bpf_dsq_insert");
}

void h_dsq_insert_vtime(schedlab_ext_ctx* ctx, schedlab_ext_task* v, u64 dsq_id, u64 slice,
                        u64 vtime, u64 enq_flags)
{
    if (v && !errored(sched_of(ctx)))
        v->dsq_vtime = vtime;
    insert(ctx, v, dsq_id, slice, enq_flags | SCX_ENQ_DSQ_PRIQ, "scx_bpf_dsq_insert_vtime");
}

/*
 * kernel: ext.c scx_bpf_dsq_move_to_local() (scx_bpf_consume() in 6.12), from
 * dispatch() only: the dispatch buffer is flushed first, then the first
 * task of the DSQ that may run here moves to this CPU's local DSQ.
 */
bool h_dsq_move_to_local(schedlab_ext_ctx* ctx, u64 dsq_id)
{
    scx_sched& s = sched_of(ctx);
    kernel& k = s.k;
    if (errored(s))
        return false;
    if (s.in_op != scx_sched::kf::dispatch) {
        scx_error(k, nullptr, fmt::format("scx_bpf_dsq_move_to_local() called from {}",
                                          op_name(s.in_op)));
        return false;
    }
    rq& r = k.cpu_rq(s.dsp_cpu);
    flush_dispatch_buf(k, r);
    scx_dispatch_q* dsq = dsq_id == SCX_DSQ_GLOBAL ? &s.dsq_global : find_user_dsq(s, dsq_id);
    if (!dsq) {
        scx_error(k, nullptr, fmt::format("scx_bpf_dsq_move_to_local(): non-existent DSQ {:#x}",
                                          dsq_id));
        return false;
    }
    return consume_dispatch_q(k, r, *dsq);
}

// kernel: ext.c scx_bpf_dsq_nr_queued(), 6.12: -ENOENT for a DSQ that does not exist.
s32 h_dsq_nr_queued(schedlab_ext_ctx* ctx, u64 dsq_id)
{
    scx_sched& s = sched_of(ctx);
    kernel& k = s.k;
    if (dsq_id == SCX_DSQ_LOCAL)
        return static_cast<s32>(k.cpu_rq(k.smp_processor_id()).scx.local_dsq.nr);
    if ((dsq_id & SCX_DSQ_LOCAL_ON) == SCX_DSQ_LOCAL_ON) {
        const u64 cpu = dsq_id & SCX_DSQ_LOCAL_CPU_MASK;
        if (!ops_cpu_valid(k, static_cast<s64>(cpu), "in scx_bpf_dsq_nr_queued()"))
            return -22;
        return static_cast<s32>(k.cpu_rq(static_cast<int>(cpu)).scx.local_dsq.nr);
    }
    const scx_dispatch_q* dsq = dsq_id == SCX_DSQ_GLOBAL ? &s.dsq_global : find_user_dsq(s, dsq_id);
    return dsq ? static_cast<s32>(dsq->nr) : -2; // -ENOENT
}

/*
 * kernel: ext.c scx_bpf_kick_cpu() -> kick_cpus_irq_workfn(), 6.12:
 * SCX_KICK_IDLE reschedules the CPU only if it idles; otherwise it is
 * rescheduled, its ext task's slice zeroed first with SCX_KICK_PREEMPT.
 * Differs: the irq_work runs at once (the reschedule still takes its IPI);
 * SCX_KICK_WAIT is not modelled.
 */
void h_kick_cpu(schedlab_ext_ctx* ctx, s32 cpu, u64 flags)
{
    scx_sched& s = sched_of(ctx);
    kernel& k = s.k;
    if (errored(s) || !ops_cpu_valid(k, cpu, "in scx_bpf_kick_cpu()"))
        return;
    ++s.stats.kicks;
    rq& r = k.cpu_rq(cpu);
    if (flags & SCX_KICK_IDLE) {
        const bool can_skip = !r.curr->is_idle_task() && !r.scx.in_balance;
        if (!can_skip)
            k.resched_curr(r);
        return;
    }
    if (r.curr->sched_class == &ext_sched_class && (flags & SCX_KICK_PREEMPT)) {
        if (cpu == k.smp_processor_id()) {
            k.update_rq_clock(r);
            update_curr_scx(k, r);
        }
        r.curr->scx.view.slice = 0;
    }
    k.resched_curr(r);
}

/*
 * kernel: ext.c scx_bpf_select_cpu_dfl(), 6.12: from ops.select_cpu() only. 6.18.2
 * (ext_idle.c, through select_cpu_from_kfunc()): from ops.enqueue() too, and a task allowed
 * on one CPU gets only the prev test (prev if p may run there and it was idle), not
 * scx_select_cpu_dfl(). model: no migration-disabled tasks, no unlocked (BPF test_run) calls.
 */
s32 h_select_cpu_dfl(schedlab_ext_ctx* ctx, schedlab_ext_task* v, s32 prev_cpu, u64 wake_flags,
                     bool* is_idle)
{
    scx_sched& s = sched_of(ctx);
    kernel& k = s.k;
    const bool v6_18 = k.config().behaviour.scx_select_cpu_6_18;
    *is_idle = false;
    if (s.in_op != scx_sched::kf::select_cpu && !(v6_18 && s.in_op == scx_sched::kf::enqueue)) {
        scx_error(k, nullptr, fmt::format("scx_bpf_select_cpu_dfl() called from {}",
                                          op_name(s.in_op)));
        return prev_cpu;
    }
    task_struct* p = task_of_view(k, v, "scx_bpf_select_cpu_dfl");
    if (!p || !ops_cpu_valid(k, prev_cpu, "in scx_bpf_select_cpu_dfl()", p))
        return prev_cpu;
    if (v6_18 && p->nr_cpus_allowed == 1) {
        *is_idle = p->cpus_mask.test(prev_cpu) && test_and_clear_cpu_idle(k, prev_cpu);
        return prev_cpu;
    }
    return scx_select_cpu_dfl(k, *p, prev_cpu, static_cast<int>(wake_flags), is_idle);
}

bool h_test_and_clear_cpu_idle(schedlab_ext_ctx* ctx, s32 cpu)
{
    kernel& k = K(ctx);
    if (!ops_cpu_valid(k, cpu, "in scx_bpf_test_and_clear_cpu_idle()"))
        return false;
    return test_and_clear_cpu_idle(k, cpu);
}

s32 h_pick_idle_cpu(schedlab_ext_ctx* ctx, schedlab_ext_task* v, u64 flags)
{
    kernel& k = K(ctx);
    task_struct* p = task_of_view(k, v, "scx_bpf_pick_idle_cpu");
    if (!p)
        return -16;
    return scx_pick_idle_cpu(k, p->cpus_mask, flags);
}

bool h_task_allowed_on(schedlab_ext_ctx* ctx, schedlab_ext_task* v, s32 cpu)
{
    kernel& k = K(ctx);
    task_struct* p = task_of_view(k, v, "task_allowed_on");
    if (!p || !ops_cpu_valid(k, cpu, "in task_allowed_on()", p))
        return false;
    return p->cpus_mask.test(cpu);
}

// kernel: ext.c scx_bpf_error_bstr(), 6.12: the policy ejects itself.
void h_error(schedlab_ext_ctx* ctx, const char* msg)
{
    kernel& k = K(ctx);
    scx_ops_error_kind(k, SCX_EXIT_ERROR_BPF, nullptr, -1, msg ? msg : "(null)");
}

constexpr schedlab_ext_helpers helpers = {
    .abi_version = SCHEDLAB_EXT_ABI_VERSION,
    .now = h_now,
    .nr_cpu_ids = h_nr_cpu_ids,
    .cpu_llc = h_cpu_llc,
    .nr_llcs = h_nr_llcs,
    .cpu_node = h_cpu_node,
    .create_dsq = h_create_dsq,
    .dsq_insert = h_dsq_insert,
    .dsq_insert_vtime = h_dsq_insert_vtime,
    .dsq_move_to_local = h_dsq_move_to_local,
    .dsq_nr_queued = h_dsq_nr_queued,
    .kick_cpu = h_kick_cpu,
    .select_cpu_dfl = h_select_cpu_dfl,
    .test_and_clear_cpu_idle = h_test_and_clear_cpu_idle,
    .pick_idle_cpu = h_pick_idle_cpu,
    .task_allowed_on = h_task_allowed_on,
    .error = h_error,
};

} // namespace

/* ------------------------------------------------------------------------ */
/* Enable, the watchdog, disable                                              */

/*
 * kernel: ext.c scx_ops_enable(), 6.12, at boot: the global DSQ, the local
 * DSQs, every CPU idle (reset_idle_masks()), ops.init() (a failure refuses
 * the policy), the watchdog every timeout / 2 (scx_watchdog_workfn()).
 */
scx_sched::scx_sched(kernel& kk, std::shared_ptr<const ext_policy_handle> pol)
    : k(kk), policy(std::move(pol)), ops(*policy->ops), idle_cpu(kk.nr_cpu_ids()),
      idle_smt(kk.nr_cpu_ids())
{
    static_assert(std::is_standard_layout_v<scx_ctx>);
    cx.ctx.h = &helpers;
    cx.self = this;
    state.assign(ops.state_size, 0);
    cx.ctx.state = state.empty() ? nullptr : state.data();
    dsq_global.id = SCX_DSQ_GLOBAL;
    locks.push_back(std::make_unique<contended_lock>());
    dsq_global.lock = locks.back().get();
    const int n = k.nr_cpu_ids();
    std::map<int, int> llc_index;
    for (int cpu = 0; cpu < n; ++cpu) {
        rq& r = k.cpu_rq(cpu);
        r.scx.local_dsq.id = SCX_DSQ_LOCAL;
        r.scx.local_dsq.local = true;
        r.scx.local_dsq.cpu = cpu;
        r.scx.local_dsq.lock = &r.lock;
        smt_mask.push_back(k.mach().smt_mask(cpu));
        const int llc = k.mach().cpus[static_cast<std::size_t>(cpu)].llc;
        auto [it, fresh] = llc_index.emplace(llc, static_cast<int>(llc_index.size()));
        (void)fresh;
        llc_of.push_back(it->second);
        idle_cpu.set(cpu);
        idle_smt.set(cpu);
    }
    nr_llcs = static_cast<int>(llc_index.size());
    smt_active = k.mach().smt_width() > 1;
    if (k.config().behaviour.scx_select_cpu_6_18)
        scx_idle_update_selcpu_topology(k, *this);
    watchdog_timeout =
        ops.timeout_ms ? static_cast<sim_dur>(ops.timeout_ms) * 1'000'000 : SCX_WATCHDOG_MAX_TIMEOUT;
    enabled = true;
    if (ops.init) {
        s32 rc;
        {
            op_scope scope(*this, kf::rest);
            rc = ops.init(&cx.ctx);
        }
        if (rc != 0)
            throw config_error("--kernel", fmt::format("ext policy '{}': ops.init() failed ({})",
                                                       policy->name, rc));
    }
    watchdog_event = k.sim().after(watchdog_timeout / 2, event_prio::softirq, this, EV_WATCHDOG);
}

scx_sched::~scx_sched() = default;

namespace {

/*
 * kernel: ext.c scx_watchdog_workfn() -> check_rq_for_timeouts(), 6.12: a
 * task runnable and not run for the timeout ejects the policy. Differs: ns,
 * not jiffies.
 */
void scx_watchdog(scx_sched& s)
{
    kernel& k = s.k;
    s.watchdog_event = {};
    if (!s.enabled || errored(s))
        return;
    for (int cpu = 0; cpu < k.nr_cpu_ids() && !errored(s); ++cpu) {
        const rq& r = k.cpu_rq(cpu);
        for (task_struct* p : r.scx.runnable_list) {
            const sim_dur waited = k.now() - p->scx.runnable_at;
            if (waited > s.watchdog_timeout) {
                const s64 ms = waited / 1'000'000;
                scx_ops_error_kind(k, SCX_EXIT_ERROR_STALL, p, cpu,
                                   fmt::format("{} failed to run for {}.{:03}s", task_name(*p),
                                               ms / 1000, ms % 1000));
                break;
            }
        }
    }
    if (!errored(s))
        s.watchdog_event = k.sim().after(s.watchdog_timeout / 2, event_prio::softirq, &s,
                                         EV_WATCHDOG);
}

/*
 * kernel: ext.c scx_ops_disable_workfn(), 6.12: every ext task goes to the
 * fair class (dequeued and put, its class switched, enqueued and set, as
 * sched_deq_and_put_task()/sched_enq_and_set_task() do; switched_to_fair()
 * checks preemption), ops.exit_task() for each, then ops.exit().
 */
void scx_ops_disable(scx_sched& s)
{
    kernel& k = s.k;
    s.disable_event = {};
    if (!s.enabled)
        return;
    if (s.watchdog_event.valid()) {
        k.sim().cancel(s.watchdog_event);
        s.watchdog_event = {};
    }
    const int saved_cpu = k.smp_processor_id();
    for (const auto& t : k.tasks()) {
        task_struct& p = *t;
        if (p.sched_class != &ext_sched_class || (p.__state & TASK_DEAD))
            continue;
        rq& r = k.cpu_rq(p.cpu);
        k.set_this_cpu(r.cpu);
        k.update_rq_clock(r);
        const bool queued = task_on_rq_queued(p);
        const bool running = r.curr == &p;
        if (queued)
            k.dequeue_task(r, p, DEQUEUE_SAVE | DEQUEUE_MOVE | DEQUEUE_NOCLOCK);
        if (running)
            update_curr_scx(k, r);
        p.scx.ddsp_dsq_id = SCX_DSQ_INVALID;
        p.scx.ops_state = scx_opss::NONE;
        scx_ops_exit_task(s, p);
        p.sched_class = &fair_sched_class;
        if (!p.se.slice)
            p.se.slice = k.tunables().base_slice; // __sched_fork()
        if (queued)
            k.enqueue_task(r, p, ENQUEUE_RESTORE | ENQUEUE_MOVE | ENQUEUE_NOCLOCK);
        if (running) { // set_next_task_fair(): for_each_sched_entity(), the group's first
            set_next_group_entity(k, r, task_cfs_rq(r, p));
            set_next_entity(k, task_cfs_rq(r, p), p.se);
        }
        if (queued) { // switched_to_fair()
            if (running)
                k.resched_curr(r);
            else
                k.wakeup_preempt(r, p, 0);
        }
    }
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu) {
        rq& r = k.cpu_rq(cpu);
        r.scx.deferred.clear();
        r.scx.bal_keep = false;
        SIM_BUG_ON(r.scx.nr_running || r.scx.local_dsq.nr, "ext: cpu{} keeps {} tasks after disable",
                   cpu, r.scx.nr_running);
    }
    k.set_this_cpu(saved_cpu);
    s.enabled = false;
    if (s.ops.exit) {
        const schedlab_ext_exit_info ei{s.exit.kind, s.exit.reason.c_str(), s.exit.msg.c_str()};
        op_scope scope(s, scx_sched::kf::rest);
        s.ops.exit(&s.cx.ctx, &ei);
    }
}

} // namespace

void scx_sched::fire(u64 arg)
{
    switch (arg & ~0xffffffffULL) {
    case EV_WATCHDOG:
        scx_watchdog(*this);
        break;
    case EV_DISABLE:
        scx_ops_disable(*this);
        break;
    case EV_DEFERRED: {
        rq& r = k.cpu_rq(static_cast<int>(arg & 0xffffffffULL));
        k.set_this_cpu(r.cpu);
        if (enabled && !errored(*this))
            run_deferred(k, r);
        break;
    }
    default:
        SIM_BUG_ON(true, "ext: unknown event {:#x}", arg);
    }
}

} // namespace schedlab

namespace schedlab {

void check_scx_rq(const kernel& k, const rq& r, std::string& errs)
{
    auto err = [&](const std::string& m) { errs += fmt::format("cpu{}: ext: {}\n", r.cpu, m); };
    if (r.cpu == 0) { // every CPU's count in one pass over the tasks, with cpu0's check
        std::vector<unsigned> queued(static_cast<std::size_t>(k.nr_cpu_ids()), 0);
        for (const auto& t : k.tasks())
            if (t->sched_class == &ext_sched_class && (t->scx.flags & SCX_TASK_QUEUED))
                ++queued[static_cast<std::size_t>(t->cpu)];
        for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu)
            if (queued[static_cast<std::size_t>(cpu)] != k.cpu_rq(cpu).scx.nr_running)
                errs += fmt::format("cpu{}: ext: nr_running {} but {} queued ext tasks\n", cpu,
                                    k.cpu_rq(cpu).scx.nr_running,
                                    queued[static_cast<std::size_t>(cpu)]);
    }
    const scx_dispatch_q& dsq = r.scx.local_dsq;
    if (dsq.nr != dsq.list.size() + dsq.priq.size())
        err(fmt::format("local DSQ nr {} but {} tasks", dsq.nr, dsq.list.size() + dsq.priq.size()));
    for (const task_struct* p : dsq.list) {
        if (p->cpu != r.cpu)
            err(fmt::format("{}[{}] on the local DSQ but task_cpu {}", p->comm, p->pid, p->cpu));
        if (p == r.curr)
            err(fmt::format("curr {}[{}] is on the local DSQ", p->comm, p->pid));
    }
}

} // namespace schedlab
