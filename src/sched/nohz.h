// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * NOHZ idle balancing's state: the tickless idle CPUs, whose periodic
 * balancing an idle CPU kicked from a busy tick does on their behalf
 * (nohz_balancer_kick(), kick_ilb(), nohz_idle_balance() in fair_balance.cc).
 *
 * kernel: kernel/sched/fair.c `static struct { ... } nohz` and
 * rq->nohz_tick_stopped, 6.6. Differs: no nr_cpus count (the mask is asked
 * directly), no has_blocked/needs_update (blocked load is decayed by every
 * balancing CPU, never by a blocked-load-only kick), and one "kick pending"
 * flag for the machine in place of the per-CPU NOHZ_BALANCE_KICK bits
 * (nohz_flags()): the model kicks at most one ILB CPU at a time, as
 * find_new_ilb() picks one.
 */
#include "machine/cpumask.h"
#include "sim/time.h"

#include <vector>

namespace schedlab {

class nohz_state {
public:
    explicit nohz_state(int nr_cpus)
        : idle_cpus_mask(nr_cpus), tick_stopped_(static_cast<std::size_t>(nr_cpus), 0)
    {
    }

    /// kernel: nohz.idle_cpus_mask: the CPUs whose tick is stopped.
    cpumask idle_cpus_mask;
    /// kernel: nohz.next_balance (jiffies): the earliest next balance of those CPUs.
    u64 next_balance = 0;
    /// model: an ILB kick is on its way (NOHZ_BALANCE_KICK of the kicked CPU).
    bool ilb_kicked = false;

    /* counters for the run summary (not kernel state) */
    u64 tick_stops = 0;              ///< CPUs that stopped their tick (nohz_balance_enter_idle())
    u64 idle_entries_tick_kept = 0;  ///< idle entries whose governor kept the tick
    u64 idle_ticks = 0;              ///< kept ticks that found their CPU idle
    u64 ilb_kicks = 0;               ///< kick_ilb() IPIs sent
    u64 nohz_balances = 0;           ///< rebalances run by an ILB for a tickless CPU

    /// kernel: rq->nohz_tick_stopped.
    bool tick_stopped(int cpu) const { return tick_stopped_[static_cast<std::size_t>(cpu)] != 0; }
    /// The tick of cpu stops (nohz_balance_enter_idle()): false if it was stopped already.
    bool stop_tick(int cpu)
    {
        if (tick_stopped(cpu))
            return false;
        tick_stopped_[static_cast<std::size_t>(cpu)] = 1;
        idle_cpus_mask.set(cpu);
        return true;
    }
    /// The tick of cpu runs again (nohz_balance_exit_idle()): false if it was running.
    bool restart_tick(int cpu)
    {
        if (!tick_stopped(cpu))
            return false;
        tick_stopped_[static_cast<std::size_t>(cpu)] = 0;
        idle_cpus_mask.clear(cpu);
        return true;
    }

private:
    std::vector<u8> tick_stopped_;
};

} // namespace schedlab
