// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * schedstat output: /proc/schedstat version 15, byte-compatible with what the
 * kernel prints (so existing tools such as sched-scoreboard parse it), and a
 * readable per-domain-level summary.
 */
#include "sched/topology.h"
#include "sim/time.h"

#include <string>
#include <vector>

namespace schedlab {

class kernel;

/// kernel: kernel/sched/stats.c show_schedstat(), 6.6 (SCHEDSTAT_VERSION 15).
std::string schedstat_v15(const kernel& k);

/// One domain level's counters summed over every CPU (levels bottom-up).
struct level_schedstat {
    std::string name; ///< "SMT", "MC", "DIE", "NUMA"...
    int span_weight = 0;
    sd_schedstat sum;
};
std::vector<level_schedstat> schedstat_per_level(const kernel& k);

/// The per-domain counters summed over all CPUs, one block per domain level
/// (SMT, MC, DIE, NUMA...) and idle type, with find_busiest_group() calls.
std::string schedstat_table(const kernel& k);

/// Where the CPUs' time went over [begin, now] and what delayed wakeups: the
/// cost model's accounting, as "# " lines for the run summary.
std::string format_cpu_accounting(const kernel& k, sim_time begin);

/// The counters of the experimental features that are on (SHARED_RUNQ,
/// SIS_SHORT, COUPLE_WAKEE_FLIPS) and of the task group's load_avg line, as
/// "# " lines; empty when none applies.
std::string format_feature_stats(const kernel& k);

/// The model's idle-gap counters (idle_gap.h) over the whole run: idle CPUs beside waiting
/// tasks, idle spells against the newly-idle gate, wakeup placement and SIS_UTIL's scan depth,
/// as "# " lines (printed with --schedstat).
std::string format_idle_gap(const kernel& k);

/// The kernel's "%*pb" bitmap form: 32-bit hex words, most significant first.
std::string cpumask_hex(const class cpumask& m);

} // namespace schedlab
