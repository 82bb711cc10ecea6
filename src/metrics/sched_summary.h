// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The scheduler summary printed after a benchmark's own output: context
 * switches, migrations, wakeup-to-run latency and per-CPU utilisation.
 * Computed from the tracepoints alone (a trace_sink), the way a user would
 * compute them from a `perf sched record` or trace-cmd recording, so the
 * same numbers can be compared with real traces.
 */
#include "metrics/histogram.h"
#include "trace/tracepoints.h"
#include "trace/wakeup_target.h"

#include <string>
#include <vector>

namespace schedlab {

struct sched_summary_result {
    sim_time begin = 0, end = 0;
    u64 switches = 0;    ///< every sched_switch, to and from the idle task too (rq->nr_switches)
    u64 voluntary = 0;   ///< prev left in a sleep state (S, D) or exited (X)
    u64 involuntary = 0; ///< prev preempted while runnable (R+)
    u64 migrations = 0;  ///< sched_migrate_task
    u64 forks = 0;       ///< sched_process_fork by a task (parent pid > 0: not a spawn)
    u64 wakeups = 0;     ///< sched_waking + sched_wakeup_new
    log_histogram wakeup_latency; ///< sched_waking / sched_wakeup_new -> sched_switch in, ns
    /// Run length: a task's switch-in to its switch-out on that CPU, ns (a run still going at
    /// finish() is not counted: it has no end)
    log_histogram run_length;
    std::vector<sim_dur> busy; ///< per CPU: time running a non-idle task in [begin, end]
    /// Per sched_waking: where the wakee ran next against the waking's CPU and its previous
    /// CPU (trace/wakeup_target.h; sched_wakeup_new is not counted)
    wakeup_target_counts wakeup_targets;

    double utilisation(int cpu) const;
    /// The text block printed after the benchmark's output ("# " prefixed lines).
    std::string format() const;
};

class sched_summary final : public trace_sink {
public:
    explicit sched_summary(int nr_cpus);

    void sched_switch(const trace_sched_switch& e) override;
    void sched_waking(const trace_sched_wakeup& e) override;
    void sched_wakeup_new(const trace_sched_wakeup& e) override;
    void sched_migrate_task(const trace_sched_migrate_task&) override { ++r_.migrations; }
    void sched_process_fork(const trace_sched_process& e) override { r_.forks += e.parent_pid > 0; }

    /// Closes open busy intervals at `end` and returns the result (the wakeups whose wakee
    /// has not run yet counted as not run).
    sched_summary_result finish(sim_time end);

private:
    /// A wakeup's count and its pending waking time (sched_waking and sched_wakeup_new).
    void count_wakeup(const trace_sched_wakeup& e);
    sched_summary_result r_;
    std::vector<sim_time> running_since_; ///< per CPU: start of the current non-idle run, -1 idle
    std::vector<sim_time> waking_;        ///< per pid: pending sched_waking time, -1 none
    wakeup_target_tracker targets_;
};

} // namespace schedlab
