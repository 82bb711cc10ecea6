// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Tests: lines of tracefs text (the layout of /sys/kernel/tracing/trace) for small
 * hand-made traces.
 */
#include <fmt/format.h>

#include <string>

namespace schedlab::test_support {

/// One tracefs line: TASK-PID on CPU at microsecond `us`, flags, event and fields.
inline std::string line(const std::string& task, int cpu, const char* flags, long us,
                        const std::string& ev)
{
    return fmt::format("{:>16} [{:03}] {} {:>5}.{:06}: {}\n", task, cpu, flags, us / 1000000,
                       us % 1000000, ev);
}

/// A sched_switch's fields, both tasks at prio 120.
inline std::string sw(const std::string& prev, int prev_pid, const char* state,
                      const std::string& next, int next_pid)
{
    return fmt::format("sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={} ==> "
                       "next_comm={} next_pid={} next_prio=120",
                       prev, prev_pid, state, next, next_pid);
}

} // namespace schedlab::test_support
