// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The cost model: what the kernel's work costs in time on a given machine,
 * which the kernel itself does not have (it just runs and takes the time).
 * One component, asked by the scheduler core (sched/core.cc, the fair class)
 * and, through the system calls (sched/syscalls.h), by the workloads:
 *
 *  - cache lines and locks: a line's transfer by CPU distance (line_cost),
 *    data left in a writer's private caches (data_stamp/touch/lines_cost), and
 *    contended spinlocks and atomically written lines (lock_acquire);
 *  - refill by distance: a task's working set warm where it last ran,
 *    cooling with time and with other tasks' footprints (cache_refill_cost);
 *  - C-states and the idle governor: the state an idle CPU enters from its
 *    predicted idle length, and what leaving it costs (idle_select,
 *    idle_exit_latency);
 *  - IPIs: the delay before a remote CPU notices a wakeup and what the sender
 *    spends (remote_notify), with their totals (wakeup_cost_totals);
 *  - SMT sharing: busy siblings slow each other (smt_rate_pct, from the
 *    core's busy count the context switch keeps: core_busy_changed).
 *
 * Its parameters are cost_params (machine/costs.def: each cost's default,
 * unit and source). Its state is the caches' and cores' view of the machine:
 * per-core and per-LLC traffic clocks and busy counts. It never touches the
 * event queue or a runqueue's scheduling state: the time it prices is applied
 * to a CPU by cpu_charges (cpu_charges.h: charge_cpu, the bursts' segments),
 * where the per-CPU accounting of that time is kept (cpu_charge_state::acct,
 * cpu_accounting), and the idle governor's view of each CPU (cpu_idle_state).
 */
#include "machine/costs.h"
#include "machine/cpumask.h"
#include "machine/machine.h"
#include "sched/cpuidle_menu.h"
#include "sched/sched.h"
#include "sim/time.h"

#include <optional>
#include <utility>
#include <vector>

namespace schedlab {

/// Totals of the delays between a wakeup and the wakee's CPU acting on it.
struct wakeup_costs {
    u64 ipis = 0; ///< wake-list / reschedule IPIs to busy CPUs
    sim_dur ipi_delay = 0;
    u64 idle_exits = 0; ///< wakeups of idle CPUs
    sim_dur idle_exit_delay = 0;
    u64 idle_exits_deep = 0;    ///< ... of which from the deep C-state
    u64 idle_ipis = 0;          ///< ... of which needed an IPI (idle states that do not poll)
    u64 remote_activations = 0; ///< wakeups enqueued by the waker on another CPU's runqueue
};

/*
 * model: one CPU's idle governor state: the menu governor's per-CPU struct menu_device
 * (cpuidle_menu.h), the idle period it is in and the state it chose. The kernel keeps the
 * state entered in cpuidle_enter_state()'s index and the trace flag in trace_cpu_idle();
 * here they are the cost model's, as is `since` (cost_model::remote_notify() and a kept
 * tick end a period).
 */
struct cpu_idle_state {
    sim_time since = 0;             ///< when the CPU entered its idle state; -1 while busy
    u8 state = 0;                   ///< chosen C-state while idle: 0 poll, 1 C1, 2 deep (from
                                    ///< the start: cpu_charges' constructor)
    bool selected = false;          ///< menu_select() chose this period's state (not so for
                                    ///< the idle since the run began, nor once reflected)
    sim_time next_timer = -1;       ///< the CPU's next timer known at selection; -1 none
    bool traced = false;            ///< power:cpu_idle entered, its exit not yet emitted
    menu_device menu;               ///< the menu governor's per-CPU data
};

class cost_model {
public:
    cost_model(const machine& m, const cost_params& p);

    const cost_params& params() const { return p_; }
    const machine& mach() const { return m_; }

    /* ---- cache lines and locks ---- */

    /// Cache-line transfer between two CPUs, by distance (line_*); 0 from nowhere (-1).
    sim_dur line_cost(int from, int to) const
    {
        if (from < 0)
            return 0;
        switch (m_.distance(from, to)) {
        case cpu_distance::same:
            return 0;
        case cpu_distance::smt:
            return p_.line_smt;
        case cpu_distance::llc:
            return p_.line_llc;
        case cpu_distance::package:
            return p_.line_pkg;
        case cpu_distance::remote:
            return p_.line_remote;
        }
        return 0;
    }
    /*
     * model: data a task leaves for another (an skb, a pipe buffer) sits in the
     * private caches of the CPU that wrote it until enough other data passes
     * through that core: task footprints (as for cache_refill_cost()) and the
     * data itself. data_stamp() is that core's traffic so far in bytes;
     * data_touch() adds to it; data_lines_cost() is what reading `lines` lines
     * stamped `stamp` on CPU `from` costs on CPU `to`: a transfer by distance
     * from another CPU (within an LLC line_data_llc, when set, else line_llc),
     * an LLC hit per line (llc_hit, or line_llc when that is
     * 0) once `from`'s private caches (l2_kib) have seen more than their size
     * since; nullopt when the lines are still in the reader's private caches
     * (nothing moves).
     */
    u64 data_stamp(int cpu) const;
    void data_touch(int cpu, u64 bytes);
    std::optional<sim_dur> data_lines_cost(int from, u64 stamp, int to, u64 lines) const;
    /// Acquires a contended lock or cache line on `cpu` at `now` for `hold` ns;
    /// returns {spin, hold + transfer}: waiters spin in arrival order.
    std::pair<sim_dur, sim_dur> lock_acquire(contended_lock& l, int cpu, sim_dur hold,
                                             sim_time now) const;

    /* ---- refill by distance ---- */

    /// Refill time of p's working set when it starts running on cpu at `now`.
    sim_dur cache_refill_cost(const task_struct& p, int cpu, sim_time now) const;
    /// p stops running on cpu at `now`: where its working set is left warm.
    void task_leaves(task_struct& p, int cpu, sim_time now) const;
    /// p starts running on cpu: its footprint passes through the core's and LLC's caches.
    void task_arrives(const task_struct& p, int cpu);

    /* ---- C-states and the idle governor ---- */

    /// The deepest C-state (0 poll, 1 C1, 2 deep) whose target residency fits an idle of
    /// `predicted` (the state a CPU idle since before the run sits in).
    u8 idle_select(sim_dur predicted) const;
    /// The idle driver's table as the governor reads it: POLL, C1 and the deep state, with
    /// their declared exit latencies and target residencies (cstate_*).
    const cpuidle_driver_desc& idle_driver() const { return idle_driver_; }
    /// The governor's choice at an idle entry: the state, and whether the tick stops.
    struct idle_choice {
        u8 state = 0;
        bool stop_tick = true;
    };
    /// Exit latency of the C-state an idle CPU is in.
    sim_dur idle_exit_latency(const cpu_idle_state& idle) const;
    /// The declared exit latency of that state (what the kernel reads through
    /// idle_get_state(), not the measured wake): 0 poll, cstate_c1_exit, cstate_deep_exit.
    sim_dur declared_exit_latency(const cpu_idle_state& idle) const;

    /* ---- IPIs ---- */

    /// Who tells a remote CPU: this CPU by IPI, or the target's own timer interrupt.
    enum class notify { ipi, timer };
    struct notify_cost {
        sim_dur delay = 0;  ///< until r's CPU acts on it
        sim_dur sender = 0; ///< the notifying CPU's own time (ipi_send), 0 if none
        sim_dur idle_exit = 0; ///< the part of delay that is r's CPU leaving its C-state
    };
    /// A wakeup or reschedule at `now` of a CPU, `cpu_idle` if it runs its idle task
    /// (`idle` its governor state): ends an idle period (the governor learns its length;
    /// notify_cost::idle_exit) and counts the totals. A busy CPU is told by IPI only.
    notify_cost remote_notify(cpu_idle_state& idle, bool cpu_idle, notify by, sim_time now);
    void count_remote_activation() { wakeup_costs_.remote_activations++; }
    const wakeup_costs& wakeup_cost_totals() const { return wakeup_costs_; }

    /* ---- SMT sharing ---- */

    bool smt_active() const { return smt_active_; } ///< sched_smt_present: some core has siblings
    const cpumask& smt_mask(int cpu) const { return smt_masks_[static_cast<std::size_t>(cpu)]; }
    /// The CPUs of smt_mask(cpu), ascending: cheaper to walk than the full-width mask.
    const std::vector<int>& smt_siblings(int cpu) const
    {
        return smt_siblings_[static_cast<std::size_t>(cpu)];
    }
    int core_of(int cpu) const { return m_.cpus[static_cast<std::size_t>(cpu)].core; }
    /// cpu started (busy) or stopped (idle) running a task.
    void core_busy_changed(int cpu, bool busy)
    {
        core_busy_[static_cast<std::size_t>(core_of(cpu))] += busy ? 1 : -1;
    }
    /// Progress rate (%) of a task on cpu, `self_busy` if cpu itself runs one.
    u32 smt_rate_pct(int cpu, bool self_busy) const;
    /// Whether a CPU of cpu's core other than cpu runs a task (`self_busy`: cpu itself does).
    bool smt_siblings_busy(int cpu, bool self_busy) const
    {
        return core_busy_[static_cast<std::size_t>(core_of(cpu))] > (self_busy ? 1 : 0);
    }

private:
    const machine& m_;
    cost_params p_;
    bool smt_active_ = false;
    std::vector<cpumask> smt_masks_;             ///< cpu_smt_mask() per CPU, precomputed
    std::vector<std::vector<int>> smt_siblings_; ///< the same, as lists
    std::vector<int> core_busy_;                 ///< per core: CPUs not running their idle task
    std::vector<u64> core_footprint_clock_;      ///< KiB of task footprints run per core
    std::vector<u64> core_data_bytes_;           ///< bytes of channel data touched per core
    std::vector<u64> llc_footprint_clock_;       ///< ... per LLC
    wakeup_costs wakeup_costs_;
    cpuidle_driver_desc idle_driver_;
};

} // namespace schedlab
