// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The cost model's prices applied to CPUs: what the kernel's work costs
 * (cost_model.h prices it) becomes time a CPU spends, which delays what the
 * CPU runs. model: the kernel has nothing of the kind; on a real machine the
 * work simply takes the time.
 *
 * A CPU runs its current task's work in bursts (core.cc starts and ends them
 * with events); a burst is cut into segments, each first the kernel time owed
 * to the CPU (context switch, cache refill, locks, balancing, IPIs), then the
 * task's own work at the rate SMT sharing allows. A charge to a busy CPU ends
 * the segment in progress and starts another with the charge in front (the
 * burst's completion event moves); a charge to an idle CPU keeps it busy
 * (cpu_charge_state::idle_busy_until) into the next task's first segment.
 * Where the time went is kept per CPU (cpu_charge_state::acct) and read with
 * cpu_accounting().
 *
 * The scheduler and, through the system calls (syscalls.h), the workloads
 * charge CPUs only here; the per-CPU state is cpu_charge_state, held here, so
 * that struct rq (sched.h) keeps the kernel's fields. A run builds one in its
 * run_context (run_context.h) and hands it to the kernel, which attach()es it
 * to its runqueues.
 */
#include "machine/costs.h"
#include "machine/machine.h"
#include "sched/cost_model.h"
#include "sched/sched.h"
#include "sim/simulation.h"

#include <array>
#include <memory>
#include <vector>

namespace schedlab {

/*
 * model: one CPU's accounting: the segment of its current burst, the kernel time owed to
 * it, where its time went, and its idle governor's state. The kernel has none of it but
 * the governor's (the work simply takes the time).
 *
 * One per CPU in a vector; the fields every burst touches come first, the totals after
 * them. (Each on cache lines of its own, alignas(64), measured worse: 2.2% more misses of a
 * 1 MiB L2 under bench/cachegrind.sh, for 0.4% fewer L1 misses; docs/performance.md.)
 */
struct cpu_charge_state {
    sim_time seg_start = 0;        ///< when the current burst segment began
    sim_dur seg_overhead = 0;      ///< overhead (switch, refill, locks...) at its start
    sim_dur busy_time = 0;         ///< time not running the idle task
    sim_time idle_busy_until = 0;  ///< an idle CPU busy with kernel work until then
    /// Every ns of kernel work charged to this CPU so far (charge_cpu()): differences
    /// of it are the elapsed time of a kernel path, as sched_clock_cpu() gives it.
    u64 charged_ns = 0;
    /// Of charged_ns, the tg->load_avg line's waits and transfers (charge_line(),
    /// lock_line_and_charge()): an rq lock held across them is held that much longer.
    u64 line_ns = 0;
    /// Of charged_ns, the IPIs' sending time (remote_notify_delay()'s ipi_send): an rq lock
    /// held across a send is held that much longer (hold_across_send()).
    u64 ipi_send_ns = 0;
    /// Of charged_ns, the SHARED_RUNQ shard locks' waits and holds and the list nodes' lines
    /// taken under them (lock_shard_and_charge(), charge_shard()): an rq lock held across a
    /// push, an unlink or a pop is held that much longer (hold_across_shard()).
    u64 shard_ns = 0;
    u32 seg_rate_pct = 100;        ///< progress rate of the segment's work (SMT sharing)
    sim_dur seg_cat[ACCT_NR] = {}; ///< the segment's overhead by category
    sim_dur pending[ACCT_NR] = {}; ///< charged to this CPU, not yet spent by a burst
    cpu_idle_state idle;           ///< the idle governor's (cost_model.h)
    /// notified in its idle loop (remote_notify_delay()): the way out of do_idle() to the
    /// switch (do_idle_exit) is owed once a task is to run
    bool do_idle_exit_owed = false;
    /// ... and one of those notifications was its own timer: hrtimer_interrupt()'s
    /// reprogramming (hrtimer_interrupt_reprogram) is owed too
    bool by_own_timer = false;
    /// the end of the tracepoint writes charged to this CPU so far (charge_tracepoint()):
    /// a local preemption's switch and the IPIs its path sends come after them
    sim_time tracepoint_until = 0;
    cpu_time_accounting acct;
    /*
     * kernel: arch/x86's per-CPU struct tlb_state (cpu_tlbstate): loaded_mm, next_asid and
     * ctxs[TLB_NR_DYN_ASIDS], the mm each dynamic ASID (PCID) was last given to. model: an
     * mm is its tgid (threads share it; the idle task borrows the last one, lazy TLB), 0
     * being init_mm, loaded at boot into ASID 0 (initialize_tlbstate_and_flush()).
     */
    static constexpr int TLB_NR_DYN_ASIDS = 6;
    int loaded_mm = 0;
    u16 next_asid = 1;
    std::array<int, TLB_NR_DYN_ASIDS> asid_mm = {0, -1, -1, -1, -1, -1};
};

class cpu_charges {
public:
    /// The cost model of `m` priced from `p`; charges move events of `sim`. Unusable until
    /// attach()ed to the runqueues of the kernel it serves (run_context.h).
    cpu_charges(simulation& sim, const machine& m, const cost_params& p);
    cpu_charges(const cpu_charges&) = delete;
    cpu_charges& operator=(const cpu_charges&) = delete;

    /// Binds these charges to a kernel's runqueues, by CPU (a charge names its CPU; SMT
    /// sharing re-rates a sibling's burst): once, by the kernel's constructor, one rq per
    /// CPU of the machine.
    void attach(const std::vector<std::unique_ptr<rq>>& rqs);

    cost_model& cm() { return cm_; }
    const cost_model& cm() const { return cm_; }
    const cost_params& params() const { return cm_.params(); }
    /// The idle governor's view of r's CPU: the C-state it is in while idle
    /// (find_idlest_group_cpu() reads its exit latency, as the kernel's idle_get_state()).
    const cpu_idle_state& idle_state(const rq& r) const { return state(r).idle; }
    cpu_idle_state& idle_state(const rq& r) { return state(r).idle; }

    /* ---- prices of a task's own work ---- */

    /// A cost of p's (a syscall's, a context switch's) with p's jitter applied (jitter_pct).
    sim_dur jittered(task_struct& p, sim_dur base) const
    {
        return p.rng.jitter(base, static_cast<u32>(cm_.params().jitter_pct));
    }
    /// model: what exit() costs the task: a thread-group leader runs the process
    /// exit (atexit, library destructors, mm teardown: exit), any other thread
    /// only do_exit() (exit_thread).
    sim_dur exit_cost(const task_struct& p) const
    {
        return p.tgid == p.pid ? cm_.params().exit : cm_.params().exit_thread;
    }
    /// model: the CPU a new child spends before its program's first step
    /// (ret_from_fork, the C library's start-up): a process's or a thread's, plus
    /// start_remote when its first CPU is not its creator's.
    sim_dur start_cost(const task_struct& p, int creator_cpu) const
    {
        return (p.tgid == p.pid ? cm_.params().start_process : cm_.params().start_thread) +
               (p.cpu != creator_cpu ? cm_.params().start_remote : 0);
    }

    /* ---- kernel time charged to CPUs ---- */

    /// Charges kernel time to a CPU: it delays the CPU's current or next task.
    void charge_cpu(rq& r, sim_dur ns, acct_cat category);
    /// model: r's CPU emits one enabled sched tracepoint (sched_tracepoint, 0 when tracing
    /// is off): its ring-buffer write, charged to it at once (it delays the CPU's task, or
    /// its switch when idle), and the end of that CPU's writes moves on by it.
    void charge_tracepoint(rq& r)
    {
        if (cm_.params().sched_tracepoint > 0) // tracing off (0) on every hot path but replay's
            charge_tracepoint_write(r);
    }
    /// The tracepoint writes r's CPU still has to finish from now (0 if none): what its
    /// path does after them (an IPI it sends, a local preemption's switch) waits that long.
    sim_dur tracepoint_owed(const rq& r) const
    {
        if (cm_.params().sched_tracepoint <= 0)
            return 0; // tracing off: no per-CPU state to read on the IPI and resched paths
        const sim_time until = state(r).tracepoint_until;
        return until > sim_.now() ? until - sim_.now() : 0;
    }
    /// Takes a lock (cost_model::lock_acquire) and charges the time to `cpu`
    /// (lock_spin / lock_hold).
    void lock_and_charge(contended_lock& l, int cpu, sim_dur hold);
    /// lock_and_charge() of the tg->load_avg line (an atomic write), its spin and hold
    /// counted in the CPU's line_ns.
    void lock_line_and_charge(contended_lock& l, int cpu, sim_dur hold);
    /// charge_cpu() of a tg->load_avg read's wait or transfer, counted in the CPU's line_ns.
    void charge_line(rq& r, sim_dur ns, acct_cat category)
    {
        if (ns <= 0)
            return;
        charge_cpu(r, ns, category);
        state(r).line_ns += static_cast<u64>(ns);
    }
    /// The tg->load_avg line time charged to `cpu` so far (cpu_charge_state::line_ns).
    u64 line_ns(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)].line_ns; }
    /*
     * kernel: the rq lock is held across the enqueue or dequeue that reads tg->load_avg
     * (update_cfs_group()) and writes it (update_tg_load_avg()): try_to_wake_up()'s
     * ttwu_do_activate() and sched_ttwu_pending() under the target's lock, __schedule()'s
     * deactivate_task() under the CPU's own, detach_tasks() and attach_tasks() under the
     * busiest's and this rq's (kernel/sched/core.c and fair.c, v6.5, sndrzt/linux-6.5
     * 4f5cdb332210). model: a lock's hold (rq_lock_hold) is a constant charged when it is
     * taken, before the path under it; this extends l, taken by `cpu` (still its last
     * holder), by the line time `cpu` was charged since `line_ns_before` (line_ns()), so
     * another CPU taking l waits for that too.
     */
    void hold_across_lines(contended_lock& l, int cpu, u64 line_ns_before);
    /// The IPI sending time charged to `cpu` so far (cpu_charge_state::ipi_send_ns).
    u64 ipi_send_ns(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)].ipi_send_ns; }
    /*
     * kernel: ttwu_queue() -> ttwu_do_activate(), 5.15 to 6.18 (sndrzt/linux-5.15 75c6ad16ec64,
     * krr-io/linux-6.1.0 2a410d07ec5e, sndrzt/linux-6.5 4f5cdb332210, gfunkmonk/linux-6.18.2
     * 062668f4d006): the waker holds the target's rq lock from activate_task() through
     * wakeup_preempt() (check_preempt_curr() before 6.7) -> resched_curr() ->
     * smp_send_reschedule() to ttwu_do_wakeup()'s sched_wakeup, and releases it after; the
     * target's __schedule() takes the same lock before its pick. model: extends l, taken by
     * `cpu` (still its last holder), by the IPI sending time `cpu` was charged since
     * `ipi_send_ns_before` (ipi_send_ns()), so another CPU taking l waits for the send too.
     * Differs: the tracepoint write after the send (sched_tracepoint, tracing only) is not
     * added to the hold.
     */
    void hold_across_send(contended_lock& l, int cpu, u64 ipi_send_ns_before);
    /// lock_and_charge() of a SHARED_RUNQ shard's lock, its spin and hold counted in the
    /// CPU's shard_ns.
    void lock_shard_and_charge(contended_lock& l, int cpu, sim_dur hold);
    /// charge_cpu() of a list node's line written under a shard's lock, counted in the
    /// CPU's shard_ns.
    void charge_shard(rq& r, sim_dur ns, acct_cat category)
    {
        if (ns <= 0)
            return;
        charge_cpu(r, ns, category);
        state(r).shard_ns += static_cast<u64>(ns);
    }
    /// The shard time charged to `cpu` so far (cpu_charge_state::shard_ns).
    u64 shard_ns(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)].shard_ns; }
    /*
     * kernel: SHARED_RUNQ v3 (20230809221218.163894-7/-8-void@manifault.com, base tip
     * 88c56cfeaec4) and v4 (20231212003141.216236-7-void@manifault.com): the push and the
     * unlink run from __enqueue_entity() and __dequeue_entity(), under the lock of the rq
     * whose cfs_rq they change; shared_runq_pick_next_task() pops (each shard's
     * raw_spin_lock() in shared_runq_pop_task()) before it drops this rq's lock
     * (raw_spin_rq_unlock()), so the shard lock's wait and hold, and the lines written
     * under it, are inside that rq lock's hold. model: extends l, taken by `cpu` (still its
     * last holder), by the shard time `cpu` was charged since `shard_ns_before`
     * (shard_ns()), so another CPU taking l waits for it too; returns what it added (0 if
     * another CPU took l since).
     */
    sim_dur hold_across_shard(contended_lock& l, int cpu, u64 shard_ns_before);
    /// Runs `path` (what `cpu` does under l, which it holds) and holds l across the line
    /// time charged to `cpu` meanwhile (hold_across_lines()).
    template <typename F> void under_lock(contended_lock& l, int cpu, F&& path)
    {
        const u64 before = line_ns(cpu);
        path();
        hold_across_lines(l, cpu, before);
    }
    /// model: a waker on `waker_cpu` enqueueing on r, another CPU's runqueue, pulls
    /// its hot lines (wakeup_remote_lines).
    void pull_rq_lines(rq& r, int waker_cpu);
    /// The delay before r's CPU notices a wakeup or reschedule from `sender_cpu`
    /// (cost_model::remote_notify); an IPI's sending time is charged to the sender.
    sim_dur remote_notify_delay(rq& r, int sender_cpu, cost_model::notify by);
    /// model: when r's CPU is done with the kernel work charged to it so far (now if
    /// none is owed): what it does next in the kernel's order - the next step of the
    /// path being charged - happens then. An idle CPU's owed work ends at
    /// idle_busy_until; a busy one's at its segment's overhead end.
    sim_time owed_until(const rq& r) const;
    /// A CPU's accounting up to now, including the segment in progress.
    cpu_time_accounting cpu_accounting(const rq& r) const;
    /// A CPU's charge state (its segment, what it owes, its accounting so far, its idle
    /// governor's state).
    const cpu_charge_state& cpu(int cpu) const { return cpus_[static_cast<std::size_t>(cpu)]; }

    /* ---- the idle governor (cpuidle) ---- */

    /// r's CPU switches to its idle task: the menu governor (menu_select(), version `v`)
    /// picks a C-state and decides whether the tick stops (`tick` the tick period,
    /// `next_tick` when it fires next, `next_timer` the CPU's next timer known, -1 none),
    /// and the period is traced as entered. It begins once the work owed by the switch is
    /// done (switch_to_idle()).
    cost_model::idle_choice cpuidle_enter(rq& r, menu_version v, sim_dur tick, sim_time next_tick,
                                          sim_time next_timer);
    /// r's idle CPU is woken by its own tick (kept at cpuidle_enter()): the governor learns
    /// of it (menu_reflect() with the tick noted) and selects again, for a new idle period.
    cost_model::idle_choice cpuidle_tick(rq& r, menu_version v, sim_dur tick);
    /// r's CPU switches away from its idle task: the period ends; true if its entry was
    /// traced (power:cpu_idle's exit is owed; CPUs start idle without an entry).
    bool cpuidle_exit(rq& r);
    /// r's idle CPU is to switch to a task (need_resched): if an interrupt woke it in its
    /// idle loop (remote_notify_delay()), it first pays the way out of do_idle() to the
    /// switch (do_idle_exit), once, as idle work. True if it charged (the switch waits).
    bool charge_do_idle_exit(rq& r);

    /* ---- the context switch (__schedule()) ---- */

    /// r's CPU switches to a task: it owes next's context switch (jittered), the refill
    /// of next's working set there, and switch_mm_flush when next's mm must take a new
    /// ASID on this CPU (switch_mm()).
    void switch_in(rq& r, task_struct& next);
    /// kernel: switch_mm_irqs_off() and choose_new_asid() (arch/x86/mm/tlb.c): r's CPU
    /// loads the mm of tgid `mm`; true if that takes a flush (a new ASID slot).
    bool switch_mm(rq& r, int mm);
    /// r's CPU switches to its idle task: the kernel work owed (charged during this
    /// __schedule()) keeps it busy, as idle work. (Its C-state: cpuidle_enter().)
    void switch_to_idle(rq& r);

    /* ---- the segments of a burst ---- */

    /// Starts r's current task's segment now: the time until it ends (its owed kernel
    /// time, then its work at the SMT rate).
    sim_dur begin_segment(rq& r);
    /// Ends r's segment now: what it spent and what the task progressed.
    void end_segment(rq& r);
    /// r's burst completed now: its segment's overhead spent, the rest the task's.
    void burst_done(rq& r);
    /// A burst going on with a new segment: its completion event moves in place.
    void restart_segment(rq& r);
    /// Re-rates the bursts of cpu's busy SMT siblings when cpu starts or stops
    /// running a task.
    void update_smt_rates(int cpu);

private:
    void charge_tracepoint_write(rq& r);
    /// lock_acquire() of l by `cpu`, its spin and hold charged by `charge` (charge_cpu,
    /// charge_line or charge_shard: which per-CPU counters also count them).
    template <typename Charge>
    void lock_and_charge_with(contended_lock& l, int cpu, sim_dur hold, Charge charge);
    /// l, taken by `cpu` and still last held by it, is held `ns` longer; returns what it
    /// added (0 if another CPU took l since).
    sim_dur hold_longer(contended_lock& l, int cpu, sim_dur ns);
    cpu_charge_state& state(const rq& r) { return cpus_[static_cast<std::size_t>(r.cpu)]; }
    const cpu_charge_state& state(const rq& r) const
    {
        return cpus_[static_cast<std::size_t>(r.cpu)];
    }

    simulation& sim_;
    cost_model cm_;
    const std::vector<std::unique_ptr<rq>>* rqs_ = nullptr; ///< the kernel's (attach())
    std::vector<cpu_charge_state> cpus_; ///< by CPU
};

} // namespace schedlab
