// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The scheduler's tunables (sysctl / debugfs knobs) and the CPU costs of the
 * operations a task performs. Both are plain values handed to a simulation
 * at construction; nothing here is global.
 */
#include "machine/costs.h"
#include "sim/time.h"

#include <string>
#include <utility>
#include <vector>

namespace schedlab {

/// Which fair-class policy the kernel profile runs.
enum class fair_policy { cfs, eevdf };

/// The kernel's normalised tunables, before the CPU-count scaling of
/// update_sysctl() / sched_init_granularity(). Names follow the sysctl/debugfs files.
struct sched_params {
    fair_policy policy = fair_policy::eevdf;
    u32 hz = 250;                             ///< CONFIG_HZ: tick = 1e9 / hz ns
    u64 base_slice_ns = 750'000;              ///< sysctl_sched_base_slice, normalised; 6.18 700'000
    u64 latency_ns = 6'000'000;               ///< CFS sysctl_sched_latency (normalised)
    u64 min_granularity_ns = 750'000;         ///< CFS sysctl_sched_min_granularity (normalised)
    u64 wakeup_granularity_ns = 1'000'000;    ///< CFS sysctl_sched_wakeup_granularity (normalised)
    u64 idle_min_granularity_ns = 750'000; ///< CFS sysctl_sched_idle_min_granularity (not scaled)
    u64 migration_cost_ns = 500'000;          ///< sysctl_sched_migration_cost (not scaled)
    u32 nr_migrate = 32;                      ///< sysctl_sched_nr_migrate
    u32 nr_latency = 8;                       ///< CFS sched_nr_latency
    bool tunable_scaling_log = true;          ///< SCHED_TUNABLESCALING_LOG (the default)
    bool autogroup = true;                    ///< kernel.sched_autogroup_enabled (distribution default)
    u64 rt_period_us = 1'000'000;             ///< kernel.sched_rt_period_us (kernel/sched/core.c)
    s64 rt_runtime_us = 950'000;              ///< kernel.sched_rt_runtime_us; -1: no limit
    u32 rr_timeslice_ms = 100;                ///< kernel.sched_rr_timeslice_ms (RR_TIMESLICE)

    /// The jiffy grid's phase: the ticks fall at tick_phase_ns + k * tick_nsec() of simulated
    /// time (0: on multiples of the tick). Not a tunable: where the run's time 0 falls against
    /// the kernel's ticks, which a replayed trace records (workload::tick_phase_ns()).
    u64 tick_phase_ns = 0;

    u64 tick_nsec() const { return 1'000'000'000ULL / hz; }
    /// The first jiffy boundary (a tick of the grid) after t.
    sim_time next_tick_after(sim_time t) const
    {
        const s64 tick = static_cast<s64>(tick_nsec());
        const s64 phase = static_cast<s64>(tick_phase_ns % tick_nsec());
        const s64 d = t - phase;
        const s64 k = d >= 0 ? d / tick + 1 : -((-d) / tick);
        return phase + k * tick;
    }
};

/// The tunables after boot-time scaling for a machine of nr_cpus CPUs.
struct sched_tunables {
    u64 base_slice;       ///< sysctl_sched_base_slice
    u64 latency;          ///< sysctl_sched_latency
    u64 min_granularity;  ///< sysctl_sched_min_granularity
    u64 wakeup_granularity;
    u64 idle_min_granularity; ///< sysctl_sched_idle_min_granularity: update_sysctl() leaves it
    u64 migration_cost;
    u32 nr_latency;
    u32 factor;           ///< 1 + ilog2(min(nr_cpus, 8)) with log scaling
};

/// kernel: kernel/sched/fair.c get_update_sysctl_factor() + update_sysctl(), 5.15-6.6.
sched_tunables scale_tunables(const sched_params& sp, int nr_cpus);

/* The CPU and hardware costs (cost_params) are part of the machine: machine/costs.h. */

} // namespace schedlab
