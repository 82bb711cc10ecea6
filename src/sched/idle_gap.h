// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * model: counters of idle CPUs beside waiting tasks, of where wakeups land and of
 * SIS_UTIL's scan depth (issue 21, "tbench at 1024 clients"). Counting only: nothing here
 * is read by the scheduler, so no schedule moves; they are kept only when the run's observer
 * asks (idle_gap_stats::on, from run_hooks::idle_gaps, which `schedlab run --schedstat` sets),
 * and other runs skip their work (the saving was not measured). The kernel has no such
 * counters; the
 * closest are schedstat's run_delay (a task's time queued) and the idle time in
 * /proc/stat, which do not say whether the two overlap within an LLC.
 *
 * "Idle" is rq->nr_running == 0 (a CPU between its last task's dequeue and its next
 * enqueue, the newly-idle balance's time included); "waiting" is nr_running - 1 on a CPU
 * running more than one task. The integrals are over the whole run, in CPU-ns (idle) and
 * task-ns (waiting), per LLC (sd_llc_shared) and over the machine.
 */
#include "sim/time.h"

#include <array>
#include <cstddef>
#include <vector>

namespace schedlab {

struct idle_gap_stats {
    /// Counting at all: off unless the run's observer asks (run_hooks::idle_gaps, which
    /// `schedlab run --schedstat` sets); off, every counter stays 0 and no hook does work.
    bool on = false;
    /// Adds n to counter c when counting.
    void add(u64& c, u64 n = 1) const
    {
        if (on)
            c += n;
    }

    /// One group of CPUs (an LLC, or the machine): its counts now and its integrals so far.
    struct span_state {
        int idle = 0;            ///< CPUs with nr_running == 0
        u64 waiting = 0;         ///< sum over its CPUs of nr_running - 1 where nr_running >= 2
        sim_time since = 0;      ///< the integrals are up to here
        u64 idle_ns = 0;         ///< CPU-ns idle
        u64 idle_waiting_ns = 0; ///< CPU-ns idle while a task of the span waited
        u64 waiting_ns = 0;      ///< task-ns waiting
        u64 waiting_idle_ns = 0; ///< task-ns waiting while a CPU of the span was idle
        /// Brings the integrals to `now` with the counts as they were.
        void advance(sim_time now);
    };

    /// Idle spells (nr_running == 0 from its start to its end) by length, in buckets.
    static constexpr std::array<sim_dur, 11> spell_bounds = {
        500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000, 500000, 1000000};
    static constexpr std::size_t nr_spell_buckets = spell_bounds.size() + 1;
    struct spell_bucket {
        u64 count = 0;
        u64 ns = 0;
        u64 llc_waiting = 0;      ///< spells that began while a task of the CPU's LLC waited
        u64 llc_waiting_ns = 0;   ///< ... their length
        u64 gate_open = 0;        ///< ... whose avg_idle at their start reached the LLC's gate
        u64 longer_than_gate = 0; ///< ... which lasted at least that gate
        u64 avg_idle_sum = 0;     ///< ... their avg_idle at the start, summed
        u64 gate_sum = 0;         ///< ... and their gate
    };
    std::array<spell_bucket, nr_spell_buckets> spells{};

    /// Sizes the state: `llc_of_cpu` the LLC index of each CPU (-1: none), all CPUs idle
    /// from time 0; `llc_weight` each LLC's CPUs, its nr_idle_scan at the start (core.cc).
    void init(const std::vector<int>& llc_of_cpu, const std::vector<int>& llc_weight);
    /// `cpu`'s nr_running became `nr` at `now`; at a spell's start, whether its avg_idle
    /// reached `gate` (the gate's cost to reach its LLC's pass).
    void nr_running_changed(int cpu, unsigned nr, sim_time now, u64 avg_idle, u64 gate);

    std::vector<span_state> llcs;
    span_state machine;

    /* placement (select_task_rq_fair(), on wakeups only) */
    u64 wakeups = 0;
    u64 placed_on_idle = 0; ///< the CPU chosen had nr_running == 0 at the choice
    u64 wait_after_idle_ns = 0, waits_after_idle = 0; ///< wakeup to run, placed on an idle CPU
    u64 wait_after_busy_ns = 0, waits_after_busy = 0; ///< ... on a busy one

    /// select_task_rq_fair()'s branch and select_idle_sibling()'s (decision_log's names, static
    /// strings; sis null when it was not called), with how many wakeups took them.
    struct placement_count {
        const char* select = nullptr;
        const char* sis = nullptr;
        u64 count = 0;
        u64 on_idle = 0; ///< ... of which chose a CPU with no task
    };
    std::vector<placement_count> placements;
    void placed(const char* select, const char* sis, bool on_idle);

    /* select_idle_cpu() */
    u64 sic_calls = 0;
    u64 sic_scan_zero = 0;        ///< SIS_UTIL: nr_idle_scan == 0, returned -1 without a scan
    u64 sic_depth_out = 0;        ///< the scan depth ran out
    u64 sic_found = 0;            ///< returned an idle CPU (or core)
    u64 sic_none = 0;             ///< scanned the LLC and found none
    u64 sic_idle_core = 0;        ///< called with has_idle_core
    u64 sic_nr_idle_scan_sum = 0; ///< nr_idle_scan read, summed over the SIS_UTIL calls

    /* update_idle_cpu_scan(): per LLC, time-weighted nr_idle_scan */
    u64 scan_calls = 0;    ///< update_idle_cpu_scan() past its gates (SIS_UTIL, the LLC's domain)
    u64 scan_util_sum = 0; ///< ... the x = sum_util / llc_weight they read, summed
    u64 scan_updates = 0;  ///< ... that changed nr_idle_scan
    std::vector<sim_time> scan_since;
    std::vector<int> scan_value;
    u64 scan_value_ns = 0; ///< sum over LLCs of nr_idle_scan x time
    u64 scan_zero_ns = 0;  ///< LLC-ns with nr_idle_scan == 0
    /// LLC `llc`'s nr_idle_scan became `value` at `now`.
    void nr_idle_scan_set(int llc, int value, sim_time now);

    /* per CPU */
    std::vector<unsigned> nr;
    std::vector<int> llc_of;
    std::vector<sim_time> spell_start;
    std::vector<u8> spell_llc_waiting, spell_gate_open;
    std::vector<u64> spell_gate, spell_avg_idle;
};

} // namespace schedlab
