// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/sched_summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace schedlab {

sched_summary::sched_summary(int nr_cpus)
    : running_since_(static_cast<std::size_t>(nr_cpus), -1), targets_(nr_cpus)
{
    r_.busy.assign(static_cast<std::size_t>(nr_cpus), 0);
}

void sched_summary::count_wakeup(const trace_sched_wakeup& e)
{
    ++r_.wakeups;
    if (static_cast<std::size_t>(e.pid) >= waking_.size())
        waking_.resize(static_cast<std::size_t>(e.pid) + 1, -1);
    // A task woken twice before it runs keeps the first timestamp, as latency
    // tools measuring waking -> switch-in do.
    if (waking_[static_cast<std::size_t>(e.pid)] < 0)
        waking_[static_cast<std::size_t>(e.pid)] = e.ts;
}

void sched_summary::sched_waking(const trace_sched_wakeup& e)
{
    count_wakeup(e);
    targets_.waking(e.cpu, e.pid, e.target_cpu, e.ctx == trace_irq_ctx::task);
}

void sched_summary::sched_wakeup_new(const trace_sched_wakeup& e)
{
    // A forked task's first placement (select_task_rq(SD_BALANCE_FORK)) has no previous CPU
    // to weigh: it is a wakeup and has a latency, but no wakeup target.
    count_wakeup(e);
}

void sched_summary::sched_switch(const trace_sched_switch& e)
{
    const auto cpu = static_cast<std::size_t>(e.cpu);
    ++r_.switches;
    targets_.switched(e.cpu, e.prev_pid, e.prev_state == trace_task_state::R,
                      e.prev_state == trace_task_state::X, e.next_pid);
    if (e.prev_pid != 0) {
        if (e.prev_state == trace_task_state::R)
            ++r_.involuntary;
        else
            ++r_.voluntary;
        if (running_since_[cpu] >= 0) {
            r_.busy[cpu] += e.ts - running_since_[cpu];
            r_.run_length.add(static_cast<u64>(e.ts - running_since_[cpu]));
        }
        running_since_[cpu] = -1;
    }
    if (e.next_pid != 0) {
        running_since_[cpu] = e.ts;
        const auto pid = static_cast<std::size_t>(e.next_pid);
        if (pid < waking_.size() && waking_[pid] >= 0) {
            r_.wakeup_latency.add(static_cast<u64>(e.ts - waking_[pid]));
            waking_[pid] = -1;
        }
    }
}

sched_summary_result sched_summary::finish(sim_time end)
{
    for (std::size_t cpu = 0; cpu < running_since_.size(); ++cpu)
        if (running_since_[cpu] >= 0) {
            r_.busy[cpu] += end - running_since_[cpu];
            running_since_[cpu] = end;
        }
    r_.end = end;
    sched_summary_result r = r_;
    r.wakeup_targets = targets_.counts();
    return r;
}

double sched_summary_result::utilisation(int cpu) const
{
    const sim_dur span = end - begin;
    return span > 0 ? static_cast<double>(busy[static_cast<std::size_t>(cpu)]) /
                          static_cast<double>(span)
                    : 0.0;
}

std::string sched_summary_result::format() const
{
    const double secs = static_cast<double>(end - begin) / 1e9;
    std::string s;
    s += fmt::format("# schedlab: simulated {:.6f} s\n", secs);
    s += fmt::format("# context switches: {} (voluntary {}, involuntary {}); cpu switches incl. "
                     "idle: {}\n",
                     voluntary + involuntary, voluntary, involuntary, switches);
    s += fmt::format("# migrations: {}\n", migrations);
    auto us = [](u64 ns) { return static_cast<double>(ns) / 1000.0; };
    s += fmt::format("# wakeup-to-run latency (us): p50 {:.1f}  p99 {:.1f}  max {:.1f}  "
                     "(n={})\n",
                     us(wakeup_latency.percentile(50)), us(wakeup_latency.percentile(99)),
                     us(wakeup_latency.max()), wakeup_latency.count());
    const int n = static_cast<int>(busy.size());
    double sum = 0;
    int min_cpu = 0, max_cpu = 0;
    for (int cpu = 0; cpu < n; ++cpu) {
        sum += utilisation(cpu);
        if (utilisation(cpu) < utilisation(min_cpu))
            min_cpu = cpu;
        if (utilisation(cpu) > utilisation(max_cpu))
            max_cpu = cpu;
    }
    s += fmt::format("# cpu utilisation: mean {:.1f}%  min {:.1f}% (cpu{})  max {:.1f}% (cpu{})\n",
                     n ? 100.0 * sum / n : 0.0, 100.0 * utilisation(min_cpu), min_cpu,
                     100.0 * utilisation(max_cpu), max_cpu);
    s += "# per-cpu utilisation (%):\n";
    for (int row = 0; row < n; row += 16) {
        const int last = std::min(n, row + 16) - 1;
        std::string line = fmt::format("#   cpu{:>3}-{:<3}", row, last);
        for (int cpu = row; cpu <= last; ++cpu)
            line += fmt::format(" {:3.0f}", 100.0 * utilisation(cpu));
        s += line + "\n";
    }
    return s;
}

} // namespace schedlab
