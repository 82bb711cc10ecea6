// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The ext class's data (kernel/sched/ext.c, include/linux/sched/ext.h of
 * v6.12): a task's sched_ext_entity, a dispatch queue (struct
 * scx_dispatch_q), the rq's scx_rq (its local DSQ), and scx_sched, the
 * kernel-wide state of the loaded policy (the kernel's statics: the ops, the
 * global and user DSQs, the idle masks, the watchdog, the exit info). Included
 * by sched.h; the class is ext.cc, the built-in policies ext_simple.cc and
 * ext_llc.cc, the loader of policies ext_load.cc.
 */
#include "machine/cpumask.h"
#include "sim/event_queue.h"
#include "sim/time.h"

#include <schedlab/ext_policy.h>

#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace schedlab {

class kernel;
struct task_struct;
struct rq;

/// kernel: include/linux/sched/ext.h enum scx_ent_flags (the ones modelled).
enum : u32 {
    SCX_TASK_QUEUED = 1u << 0, ///< on ext's runqueue (enqueue_task_scx .. dequeue_task_scx)
};

/// kernel: ext.c enum scx_ops_state: where an enqueued task is.
enum class scx_opss : u8 {
    NONE,   ///< not with the policy: in a DSQ, running, or not queued
    QUEUED, ///< with the policy (after ops.enqueue(), until inserted or dequeued)
};

struct scx_vtime_less {
    bool operator()(const task_struct* a, const task_struct* b) const;
};

/// struct scx_dispatch_q: a FIFO or a vtime-ordered queue (never both at once).
struct scx_dispatch_q {
    u64 id = 0;
    u32 nr = 0;
    bool local = false;  ///< a CPU's local DSQ (rq->scx.local_dsq)
    int cpu = -1;        ///< its CPU
    std::list<task_struct*> list;                ///< FIFO order
    std::set<task_struct*, scx_vtime_less> priq; ///< vtime order (dsq_vtime, then seq)
    u64 seq = 0;                                 ///< insertion counter (ties, FIFO)
    struct contended_lock* lock = nullptr;       ///< dsq->lock (scx_sched owns it)
};

/// struct sched_ext_entity (p->scx).
struct sched_ext_entity {
    schedlab_ext_task view{};  ///< what the policy reads; slice, dsq_vtime, policy_data live here
    scx_dispatch_q* dsq = nullptr;
    std::list<task_struct*>::iterator dsq_list; ///< position in dsq->list (FIFO DSQs)
    u64 dsq_seq = 0;             ///< order among equal vtimes
    u32 flags = 0;               ///< SCX_TASK_*
    scx_opss ops_state = scx_opss::NONE;
    u64 ddsp_dsq_id = SCX_DSQ_INVALID; ///< direct dispatch verdict (select_cpu / enqueue)
    u64 ddsp_enq_flags = 0;
    int sticky_cpu = -1;         ///< moved to this CPU's local DSQ by a consume
    sim_time runnable_at = 0;    ///< when it last became runnable without running (watchdog)
    bool on_runnable_list = false;
    std::list<task_struct*>::iterator runnable_node; ///< in rq->scx.runnable_list
    u32 dsp_round = 0;           ///< dispatch-buffer round that last took it (double inserts)
};

/// A direct dispatch to another CPU's local DSQ, done once the rq lock is free.
struct scx_deferred {
    task_struct* p;
    scx_dispatch_q* dsq;
    u64 enq_flags;
};

/// struct scx_rq (rq->scx).
struct scx_rq {
    scx_dispatch_q local_dsq;
    std::vector<scx_deferred> deferred; ///< ddsp_deferred_locals
    u64 extra_enq_flags = 0;    ///< rq->scx.extra_enq_flags: of a task being moved here
    bool in_wakeup = false;     ///< SCX_RQ_IN_WAKEUP: task_woken_scx() will run the deferred
    std::list<task_struct*> runnable_list; ///< runnable ext tasks, by runnable_at
    unsigned nr_running = 0;
    bool bal_keep = false;      ///< SCX_RQ_BAL_KEEP: balance_scx() keeps prev running
    bool in_balance = false;    ///< SCX_RQ_IN_BALANCE
    bool cpu_released = false;  ///< ops.cpu_release() was called, cpu_acquire() is owed
};

/// Counters of the ext class, for the run summary, tests and the bench.
struct scx_stats {
    u64 dispatch_calls = 0;     ///< ops.dispatch() calls
    u64 direct_dispatches = 0;  ///< inserted at select_cpu() / enqueue()
    u64 consumed_remote = 0;    ///< tasks moved to another CPU's local DSQ
    u64 kicks = 0;
    u64 stale_inserts = 0;      ///< inserts of a task no longer with the policy (ignored)
};

/// What ejected the policy (struct scx_exit_info).
struct scx_exit {
    int kind = 0;               ///< 0: not ejected; SCX_EXIT_ERROR...
    std::string reason;
    std::string msg;
    sim_time at = -1;
    int cpu = -1;
    int pid = -1;
};

/// A policy to run: a built-in's ops or a loaded shared object's (ext_load.cc).
struct ext_policy_handle {
    std::string name;  ///< as given after "ext:" ("simple", "./my_policy.so")
    const schedlab_ext_ops* ops = nullptr;
    std::shared_ptr<void> dl; ///< the dlopen() handle of a loaded policy (dlclose at the end)
    std::string sha256;       ///< a loaded policy's file content (results are keyed by it)
};

struct scx_sched;

/// The context a policy's callbacks receive: ctx first, so the helpers find their scx_sched.
struct scx_ctx {
    schedlab_ext_ctx ctx{};
    scx_sched* self = nullptr;
};

/*
 * The kernel-wide state of the ext class (ext.c's statics: scx_ops, the enable
 * state, scx_dsq_global, dsq_hash, idle_masks, the watchdog, scx_exit_info),
 * one per kernel instance (kernel::scx()). Also the context the policy's
 * callbacks receive (its ctx->state) and the event handler of the watchdog
 * and of the disable work.
 */
struct scx_sched final : event_handler {
    scx_sched(kernel& k, std::shared_ptr<const ext_policy_handle> policy);
    ~scx_sched();
    scx_sched(const scx_sched&) = delete;
    scx_sched& operator=(const scx_sched&) = delete;

    kernel& k;
    std::shared_ptr<const ext_policy_handle> policy;
    const schedlab_ext_ops& ops;
    scx_ctx cx;
    std::vector<unsigned char> state; ///< cx.ctx.state
    bool enabled = false;     ///< scx_enabled() && scx_switched_all() (full switch only)
    scx_dispatch_q dsq_global;
    std::map<u64, std::unique_ptr<scx_dispatch_q>> dsqs; ///< user DSQs by id (dsq_hash)
    std::vector<std::unique_ptr<struct contended_lock>> locks; ///< the DSQs' locks
    cpumask idle_cpu;         ///< idle_masks.cpu
    cpumask idle_smt;         ///< idle_masks.smt: CPUs whose whole core is idle
    std::vector<cpumask> smt_mask; ///< cpu_smt_mask() per CPU
    bool smt_active = false;  ///< sched_smt_active(): some core has more than one thread
    std::vector<int> llc_of;  ///< per CPU: its LLC's index, 0..nr_llcs-1
    /// 6.18 (kernel_behaviour::scx_select_cpu_6_18): the scx_selcpu_topo_llc and
    /// scx_selcpu_topo_numa static keys, set at enable (scx_idle_update_selcpu_topology())
    bool selcpu_topo_llc = false;
    bool selcpu_topo_numa = false;
    int nr_llcs = 0;
    sim_dur watchdog_timeout = 0;
    event_id watchdog_event;
    event_id disable_event;
    scx_exit exit;
    scx_stats stats;

    /* the callback in progress (scx_kf_mask): what the helpers may do */
    enum class kf : u8 { none, select_cpu, enqueue, dispatch, rest } in_op = kf::none;
    task_struct* ddsp_task = nullptr;   ///< the task select_cpu()/enqueue() may insert
    int dsp_cpu = -1;                   ///< the CPU dispatch() runs for
    u32 dsp_round = 0;                  ///< counts dispatch() calls
    std::vector<std::tuple<task_struct*, u64, u64>> dsp_buf; ///< (task, dsq id, enq flags)

    void fire(u64 arg) override;
};

} // namespace schedlab

namespace schedlab {

/* ext.cc's functions the core calls at the kernel's call sites */

/// scx_enabled(): a policy is loaded and not ejected (6.12: and every fair task switched).
bool scx_enabled(const kernel& k);
/// task_should_scx(): p's policy runs in the ext class (sched_fork(), __setscheduler_class()).
bool task_should_scx(const kernel& k, const task_struct& p);
/// __scx_update_idle(): r's CPU switches to (idle) or from its idle task.
void scx_update_idle(kernel& k, rq& r, bool idle);
/// scx_select_cpu_dfl(): the default placement (6.12.19 or 6.18.2, by the profile); *found when
/// an idle CPU was claimed.
int scx_select_cpu_dfl(kernel& k, task_struct& p, int prev_cpu, int wake_flags, bool* found);
/// The ext class's invariants on r (kernel::check_rq()): appends what is wrong to errs.
void check_scx_rq(const kernel& k, const rq& r, std::string& errs);
/// scx_ops_error_kind(): ejects the policy (at once, in an event) for the reason given.
void scx_ops_error_kind(kernel& k, int kind, const task_struct* p, int cpu, std::string msg);

} // namespace schedlab
