// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * What the per-CPU timeline of the HTML report draws, recorded from the
 * tracepoints of one run (a trace_sink, like the ftrace exporter and the
 * scheduler summary): per CPU the intervals a task ran (sched_switch in to
 * out; the gaps are the idle task), each wakeup from the waker's CPU at
 * sched_waking / sched_wakeup_new to where and when the wakee was switched in,
 * each sched_migrate_task, and the idle periods with their C-state
 * (power:cpu_idle, entry to PWR_EVENT_EXIT). Only a time window is kept, and at most
 * `max_events` records: past that the window is cut short (timeline::cut_at).
 * Observing only: it never changes the schedule.
 */
#include "trace/tracepoints.h"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace schedlab {

struct timeline_slice {
    sim_time start, end;
    int pid;
};

struct timeline_wakeup {
    sim_time waking;  ///< sched_waking (or sched_wakeup_new)
    int waker_cpu;    ///< the CPU the waking event fired on
    sim_time run;     ///< the wakee's next sched_switch in
    int run_cpu;
    int pid;
};

struct timeline_migration {
    sim_time ts;
    int pid, orig_cpu, dest_cpu;
};

/// A CPU in a C-state: power:cpu_idle `state` at `start` to PWR_EVENT_EXIT at `end`.
struct timeline_idle {
    sim_time start, end;
    u32 state; ///< 0 poll, 1 C1, 2 deep (sched/cost_model.h cpu_idle_state::state)
};

struct timeline {
    sim_time from = 0, to = 0; ///< the window (to: cut short when the record limit was reached)
    bool cut = false;          ///< the record limit cut the window at `to`
    std::vector<std::vector<timeline_slice>> slices; ///< per CPU, by start
    std::vector<timeline_wakeup> wakeups;            ///< by `run`
    std::vector<timeline_migration> migrations;      ///< by ts
    std::vector<std::vector<timeline_idle>> idle;    ///< per CPU, by start
    std::map<int, std::string> comms;                ///< pid -> comm, tasks seen in the window
    // Where each CPU sits, for grouping (the caller fills them from the machine)
    std::vector<int> cpu_llc, cpu_node;
    std::string title; ///< what ran: machine, kernel, benchmark, seed
};

class timeline_recorder final : public trace_sink {
public:
    /// Keeps [from, to) of a run on `nr_cpus` CPUs, at most max_events records.
    timeline_recorder(int nr_cpus, sim_time from, sim_time to, std::size_t max_events);

    void sched_switch(const trace_sched_switch& e) override;
    void sched_waking(const trace_sched_wakeup& e) override;
    void sched_wakeup_new(const trace_sched_wakeup& e) override;
    void sched_migrate_task(const trace_sched_migrate_task& e) override;
    void cpu_idle(const trace_cpu_idle& e) override;

    /// Closes the runs still going at `end` (or the window's end) and returns the timeline.
    timeline finish(sim_time end);

private:
    bool room(sim_time ts);
    void slice(int cpu, sim_time start, sim_time end, int pid);
    void idle_period(int cpu, sim_time end);

    timeline t_;
    std::size_t max_events_, events_ = 0;
    bool full_ = false; ///< the record limit was reached (the window may end before the cut)
    std::vector<sim_time> since_;   ///< per CPU: when the running task was switched in
    std::vector<int> running_;      ///< per CPU: its pid, 0 idle
    std::vector<sim_time> idle_since_; ///< per CPU: power:cpu_idle entry, -1 none open
    std::vector<u32> idle_state_;
    struct pending {
        sim_time ts = -1;
        int cpu = -1;
    };
    std::vector<pending> waking_; ///< per pid
};

} // namespace schedlab
