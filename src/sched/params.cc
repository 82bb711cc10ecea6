// SPDX-License-Identifier: GPL-2.0-only
#include "sched/params.h"

#include "sim/config_error.h"

#include <algorithm>
#include <bit>
#include <charconv>

namespace schedlab {

/*
 * kernel: kernel/sched/fair.c get_update_sysctl_factor() + update_sysctl(),
 * 5.15-6.6: factor = 1 + ilog2(min(nr_cpus, 8)) under the default
 * SCHED_TUNABLESCALING_LOG, so 4 on machines with 8 or more CPUs.
 */
sched_tunables scale_tunables(const sched_params& sp, int nr_cpus)
{
    const u32 cpus = static_cast<u32>(std::min(std::max(nr_cpus, 1), 8));
    const u32 factor = sp.tunable_scaling_log ? 1 + (std::bit_width(cpus) - 1) : 1;
    sched_tunables t{};
    t.factor = factor;
    t.base_slice = sp.base_slice_ns * factor;
    t.latency = sp.latency_ns * factor;
    t.min_granularity = sp.min_granularity_ns * factor;
    t.wakeup_granularity = sp.wakeup_granularity_ns * factor;
    // update_sysctl()'s SET_SYSCTL() list is min_granularity, latency and wakeup_granularity
    // (6.1-rc7, 6.5): the SCHED_IDLE floor of sched_slice() keeps its 0.75 ms on any machine.
    t.idle_min_granularity = sp.idle_min_granularity_ns;
    t.migration_cost = sp.migration_cost_ns;
    t.nr_latency = sp.nr_latency;
    return t;
}

} // namespace schedlab
