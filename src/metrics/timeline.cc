// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/timeline.h"

#include <algorithm>

namespace schedlab {

timeline_recorder::timeline_recorder(int nr_cpus, sim_time from, sim_time to,
                                     std::size_t max_events)
    : max_events_(max_events), since_(static_cast<std::size_t>(nr_cpus), 0),
      running_(static_cast<std::size_t>(nr_cpus), 0),
      idle_since_(static_cast<std::size_t>(nr_cpus), -1),
      idle_state_(static_cast<std::size_t>(nr_cpus), 0)
{
    t_.from = from;
    t_.to = to;
    t_.slices.resize(static_cast<std::size_t>(nr_cpus));
    t_.idle.resize(static_cast<std::size_t>(nr_cpus));
}

/// Whether one more record fits; the first that does not cuts the window at `ts`.
bool timeline_recorder::room(sim_time ts)
{
    if (events_ < max_events_) {
        ++events_;
        return true;
    }
    full_ = true;
    if (!t_.cut && ts < t_.to) {
        t_.cut = true;
        t_.to = std::max(ts, t_.from);
    }
    return false;
}

void timeline_recorder::slice(int cpu, sim_time start, sim_time end, int pid)
{
    const sim_time s = std::max(start, t_.from), e = std::min(end, t_.to);
    if (pid == 0 || s >= e)
        return;
    // Past the limit the window is cut at this slice's end; the runs then still going (at most
    // one per CPU) are kept up to the cut, so the window stays complete.
    if (!room(end) && !(full_ && s < t_.to))
        return;
    t_.slices[static_cast<std::size_t>(cpu)].push_back({s, std::min(e, t_.to), pid});
}

// As slice(): an idle period past the limit is kept only up to the cut.
void timeline_recorder::idle_period(int cpu, sim_time end)
{
    const auto c = static_cast<std::size_t>(cpu);
    const sim_time start = idle_since_[c];
    idle_since_[c] = -1;
    const sim_time s = std::max(start, t_.from), e = std::min(end, t_.to);
    if (start < 0 || s >= e)
        return;
    if (!room(end) && !(full_ && s < t_.to))
        return;
    t_.idle[c].push_back({s, std::min(e, t_.to), idle_state_[c]});
}

void timeline_recorder::cpu_idle(const trace_cpu_idle& e)
{
    // An entry without an exit before it (never from the scheduler) closes the open period.
    idle_period(e.cpu_id, e.ts);
    if (e.state == PWR_EVENT_EXIT)
        return;
    idle_since_[static_cast<std::size_t>(e.cpu_id)] = e.ts;
    idle_state_[static_cast<std::size_t>(e.cpu_id)] = e.state;
}

void timeline_recorder::sched_switch(const trace_sched_switch& e)
{
    const auto cpu = static_cast<std::size_t>(e.cpu);
    slice(e.cpu, since_[cpu], e.ts, running_[cpu]);
    running_[cpu] = e.next_pid;
    since_[cpu] = e.ts;
    if (e.next_pid == 0)
        return;
    const auto pid = static_cast<std::size_t>(e.next_pid);
    if (e.ts >= t_.from && e.ts < t_.to && !t_.comms.contains(e.next_pid))
        t_.comms.emplace(e.next_pid, *e.next_comm);
    if (pid < waking_.size() && waking_[pid].ts >= 0) {
        const pending w = waking_[pid];
        waking_[pid] = {};
        // drawn when either end is inside the window
        if (w.ts < t_.to && e.ts >= t_.from && room(w.ts))
            t_.wakeups.push_back({w.ts, w.cpu, e.ts, e.cpu, e.next_pid});
    }
}

void timeline_recorder::sched_waking(const trace_sched_wakeup& e)
{
    const auto pid = static_cast<std::size_t>(e.pid);
    if (pid >= waking_.size())
        waking_.resize(pid + 1);
    if (waking_[pid].ts < 0) // the first of several wakeups before the task runs
        waking_[pid] = {e.ts, e.cpu};
}

void timeline_recorder::sched_wakeup_new(const trace_sched_wakeup& e) { sched_waking(e); }

void timeline_recorder::sched_migrate_task(const trace_sched_migrate_task& e)
{
    if (e.ts >= t_.from && e.ts < t_.to && room(e.ts)) {
        t_.migrations.push_back({e.ts, e.pid, e.orig_cpu, e.dest_cpu});
        if (!t_.comms.contains(e.pid))
            t_.comms.emplace(e.pid, *e.comm);
    }
}

timeline timeline_recorder::finish(sim_time end)
{
    for (std::size_t cpu = 0; cpu < running_.size(); ++cpu) {
        slice(static_cast<int>(cpu), since_[cpu], end, running_[cpu]);
        idle_period(static_cast<int>(cpu), end);
    }
    if (!t_.cut)
        t_.to = std::min(t_.to, std::max(end, t_.from));
    // wakeups are recorded at the wakee's switch-in, so they are sorted by `run`; the slices of
    // a CPU by start (one task at a time per CPU)
    return std::move(t_);
}

} // namespace schedlab
