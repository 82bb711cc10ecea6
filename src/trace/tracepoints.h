// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Scheduler tracepoints as plain records, with the field names of
 * include/trace/events/sched.h (and power:cpu_idle of
 * include/trace/events/power.h). The scheduler emits them to every attached
 * sink; sinks (metrics, trace exporters) only observe and never change
 * scheduler state.
 */
#include "sim/time.h"

#include <string>
#include <vector>

namespace schedlab {

/// prev_state as the sched_switch tracepoint prints it.
enum class trace_task_state : u8 { R, S, D, X };

struct trace_sched_switch {
    sim_time ts;
    int cpu;
    int prev_pid;
    const std::string* prev_comm;
    trace_task_state prev_state;
    bool prev_preempted; ///< "R+" in ftrace output
    int next_pid;
    const std::string* next_comm;
    int prev_prio = 120; ///< p->prio (include/linux/sched/prio.h: 120 + nice, 99 - rt_priority)
    int next_prio = 120;
};

/// The context a wakeup event is emitted in: a task's (process context), or the hardirq
/// of a timer's expiry (hrtimer_wakeup()) or of the wake-list IPI (sched_ttwu_pending()),
/// which a real trace's flags column shows as 'h'.
enum class trace_irq_ctx : u8 { task, hardirq };

/// sched_waking (on the waker's CPU), sched_wakeup (target CPU), sched_wakeup_new.
struct trace_sched_wakeup {
    sim_time ts;
    int cpu;        ///< CPU the event is emitted on
    int pid;
    const std::string* comm;
    int target_cpu;
    int prio = 120; ///< p->prio
    trace_irq_ctx ctx = trace_irq_ctx::task;
};

struct trace_sched_migrate_task {
    sim_time ts;
    int pid;
    const std::string* comm;
    int orig_cpu;
    int dest_cpu;
    int prio = 120; ///< p->prio
};

struct trace_sched_process {
    sim_time ts;
    int cpu;
    int pid;        ///< child (fork) or exiting task
    int parent_pid; ///< fork only
    const std::string* comm;
    int prio = 120; ///< p->prio (sched_process_exit prints it; sched_process_fork has none)
};

/// PWR_EVENT_EXIT of include/trace/events/power.h: -1 as the u32 state, 4294967295 printed.
inline constexpr u32 PWR_EVENT_EXIT = 0xffffffffu;

/// power:cpu_idle: the C-state index a CPU enters (0 poll, 1 C1, 2 deep), or PWR_EVENT_EXIT
/// when it leaves it.
struct trace_cpu_idle {
    sim_time ts;
    u32 state;
    int cpu_id;
};

class trace_sink {
public:
    virtual ~trace_sink() = default;
    virtual void sched_switch(const trace_sched_switch&) {}
    virtual void sched_waking(const trace_sched_wakeup&) {}
    virtual void sched_wakeup(const trace_sched_wakeup&) {}
    virtual void sched_wakeup_new(const trace_sched_wakeup&) {}
    virtual void sched_migrate_task(const trace_sched_migrate_task&) {}
    virtual void sched_process_fork(const trace_sched_process&) {}
    virtual void sched_process_exit(const trace_sched_process&) {}
    virtual void cpu_idle(const trace_cpu_idle&) {}
};

} // namespace schedlab
