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
    t.migration_cost = sp.migration_cost_ns;
    t.nr_latency = sp.nr_latency;
    return t;
}

namespace {
template <typename F> void for_each_cost(cost_params& c, F&& f)
{
    f("context_switch", c.context_switch);
    f("pipe_write", c.pipe_write);
    f("pipe_read", c.pipe_read);
    f("socket_send", c.socket_send);
    f("socket_recv", c.socket_recv);
    f("copy_per_kib", c.copy_per_kib);
    f("wakeup", c.wakeup);
    f("futex_wait", c.futex_wait);
    f("futex_wake", c.futex_wake);
    f("nanosleep", c.nanosleep);
    f("poll", c.poll);
    f("fork_process", c.fork_process);
    f("fork_thread", c.fork_thread);
    f("exit", c.exit);
    f("wait_child", c.wait_child);
    f("gettime", c.gettime);
    f("tcp_send", c.tcp_send);
    f("tcp_recv", c.tcp_recv);
    f("udp_send", c.udp_send);
    f("udp_recv", c.udp_recv);
    f("softirq_rx", c.softirq_rx);
    f("exec", c.exec);
    f("ipi_wakeup", c.ipi_wakeup);
    f("idle_scan_probe", c.idle_scan_probe);
    f("lb_base", c.lb_base);
    f("lb_scan_per_cpu", c.lb_scan_per_cpu);
    f("lb_migrate_task", c.lb_migrate_task);
}
} // namespace

std::vector<std::pair<std::string, sim_dur>> cost_list(const cost_params& c)
{
    std::vector<std::pair<std::string, sim_dur>> v;
    cost_params copy = c;
    for_each_cost(copy, [&](const char* name, sim_dur& val) { v.emplace_back(name, val); });
    v.emplace_back("jitter_pct", c.jitter_pct);
    return v;
}

void set_cost(cost_params& c, const std::string& assignment, const std::string& where)
{
    const auto eq = assignment.find('=');
    if (eq == std::string::npos)
        throw config_error(where, fmt::format("'{}' is not NAME=NANOSECONDS", assignment));
    const std::string name = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    s64 v = 0;
    const auto res = std::from_chars(value.data(), value.data() + value.size(), v);
    if (res.ec != std::errc() || res.ptr != value.data() + value.size() || v < 0)
        throw config_error(where, fmt::format("cost '{}': '{}' is not a non-negative integer "
                                              "number of nanoseconds",
                                              name, value));
    if (name == "jitter_pct") {
        if (v > 100)
            throw config_error(where, "jitter_pct must be between 0 and 100");
        c.jitter_pct = static_cast<u32>(v);
        return;
    }
    bool found = false;
    std::vector<std::string> names{"jitter_pct"};
    for_each_cost(c, [&](const char* n, sim_dur& val) {
        names.emplace_back(n);
        if (name == n) {
            val = v;
            found = true;
        }
    });
    if (!found) {
        const std::string hint = nearest_name(name, names);
        throw config_error(where, fmt::format("unknown cost '{}'{}; see `schedlab costs`", name,
                                              hint.empty() ? ""
                                                           : fmt::format(" (did you mean '{}'?)",
                                                                         hint)));
    }
}

} // namespace schedlab
