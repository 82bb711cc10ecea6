// SPDX-License-Identifier: GPL-2.0-only
#include "calibrate/calibrate.h"

#include "machine/machine_costs.h"
#include "machine/machine_parse.h"
#include "machine/presets.h"
#include "sim/config_error.h"
#include "sim/file_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace schedlab::calibrate {

namespace {

namespace fs = std::filesystem;

long long rounded(double v, long long at_least)
{
    return std::max(at_least, static_cast<long long>(std::llround(v)));
}

std::string runs_of(const stats& s, const char* unit)
{
    return fmt::format("median of {} runs (min {:.1f}, max {:.1f} {})", s.runs, s.min, s.max, unit);
}

std::string of_creations(const stats& s)
{
    return fmt::format("median of {} creations (min {:.0f}, max {:.0f} ns)", s.runs, s.min, s.max);
}

stats in_ms(stats s)
{
    s.median *= 1e3;
    s.min *= 1e3;
    s.max *= 1e3;
    return s;
}

std::string mib(std::size_t bytes)
{
    return fmt::format("{} MiB", bytes >> 20);
}

} // namespace

cpu_pairs pick_pairs(const machine& m, const std::vector<int>& real_of_dense,
                     const std::vector<int>& allowed)
{
    cpu_pairs p;
    auto ok = [&](int dense) {
        return dense < static_cast<int>(real_of_dense.size()) &&
               std::binary_search(allowed.begin(), allowed.end(), real_of_dense[dense]);
    };
    for (int i = 0; i < m.nr_cpus(); ++i) {
        if (!ok(i))
            continue;
        for (int j = i + 1; j < m.nr_cpus(); ++j) {
            if (!ok(j))
                continue;
            const cpu_desc& x = m.cpus[i];
            const cpu_desc& y = m.cpus[j];
            auto& slot = x.core == y.core                               ? p.smt
                         : x.llc == y.llc                               ? p.llc
                         : x.package == y.package && x.node == y.node ? p.pkg
                                                                        : p.remote;
            if (!slot)
                slot = std::make_pair(real_of_dense[i], real_of_dense[j]);
        }
    }
    return p;
}

namespace {

/* The derived costs in order, each source stamped with the measurement's date; notes. */
struct derived_costs {
    const raw_measurements& raw;
    std::vector<measured_cost> out;
    std::vector<std::string>& notes;

    void add(const char* name, long long v, const std::string& how)
    {
        out.push_back({name, v, fmt::format("{}: {}", raw.stamp, how)});
    }
};

/* The pipe syscalls, and the context switch and wakeup left of the same-CPU round trip. */
void derive_syscall_and_switch_costs(const raw_measurements& raw, derived_costs& d)
{
    auto& notes = d.notes;
    if (raw.syscalls) {
        const auto& s = *raw.syscalls;
        d.add("pipe_write", rounded(s.write_ns.median, 1),
              fmt::format("1-byte write() to a pipe nobody waits on, CPU {}; {}", raw.cpu,
                          runs_of(s.write_ns, "ns")));
        d.add("pipe_read", rounded(s.read_ns.median, 1),
              fmt::format("1-byte read() of a pipe holding data, CPU {}; {}", raw.cpu,
                          runs_of(s.read_ns, "ns")));
    }

    double switch_and_wake = -1;
    if (raw.same_cpu_round_trip && raw.syscalls) {
        const double rt = raw.same_cpu_round_trip->median;
        switch_and_wake = rt / 2 - raw.syscalls->write_ns.median - raw.syscalls->read_ns.median;
        const std::string how = fmt::format(
            "pipe ping-pong between two processes pinned to CPU {}: round trip {:.0f} ns = 2 x "
            "(write + read + wakeup + context switch, with a runqueue-lock hold in each of the "
            "last two), {}; the {:.0f} ns left after write and read split 4:2:1:1 between "
            "context_switch, wakeup and the two rq_lock_hold, as the costs.def defaults are",
            raw.cpu, rt, runs_of(*raw.same_cpu_round_trip, "ns"), switch_and_wake);
        if (switch_and_wake > 0) {
            d.add("context_switch", rounded(switch_and_wake / 2, 1), how);
            d.add("wakeup", rounded(switch_and_wake / 4, 1), how);
            d.add("rq_lock_hold", rounded(switch_and_wake / 8, 1), how);
        } else {
            notes.push_back(fmt::format("context_switch, wakeup: not set; the same-CPU round trip "
                                        "({:.0f} ns) left nothing after the pipe syscalls",
                                        rt));
        }
    }
}

/* The wakeup IPI, the idle exit and the sender's side of the IPI, from the cross-CPU probes. */
void derive_ipi_and_idle_exit_costs(const raw_measurements& raw, derived_costs& d)
{
    auto& notes = d.notes;
    if (raw.cross_cpu_round_trip_busy && raw.same_cpu_round_trip) {
        const double busy = raw.cross_cpu_round_trip_busy->median;
        const double same = raw.same_cpu_round_trip->median;
        const double ipi = (busy - same) / 2;
        if (ipi > 0)
            d.add(
                "ipi_wakeup", rounded(ipi, 1),
                fmt::format("pipe ping-pong across CPUs {} and {} ({}), both kept busy by "
                            "SCHED_IDLE spinners so each wakeup reaches a running CPU: round trip "
                            "{:.0f} ns against {:.0f} ns on one CPU, half the difference; {}",
                            raw.cross_pair.first, raw.cross_pair.second, raw.cross_kind, busy, same,
                            runs_of(*raw.cross_cpu_round_trip_busy, "ns")));
        else
            notes.push_back(fmt::format("ipi_wakeup: not set; the busy cross-CPU round trip "
                                        "({:.0f} ns) was not slower than the same-CPU one ({:.0f} "
                                        "ns)",
                                        busy, same));
        /* A CPU that only answers the ping-pong is busy, per round trip, with its own write,
         * read, wakeup and switch: half the same-CPU round trip, less than half of a
         * cross-CPU one. Idle less than half the time, its CPUs ran other tasks, and a
         * wakeup found them busy, not in an idle state: the figure is that work's, not
         * an idle exit's. */
        const bool loaded = raw.cross_idle_share && *raw.cross_idle_share < 0.5;
        if (raw.cross_cpu_round_trip && loaded) {
            notes.push_back(fmt::format(
                "cstate_c1_exit: not measured; CPUs {} and {} were idle {:.0f}% of the idle "
                "ping-pong (/proc/stat; a CPU that only answers it idles more than half the "
                "time): other tasks ran there, so its wakeups found them busy, not idle. "
                "Calibrate on an otherwise idle machine",
                raw.cross_pair.first, raw.cross_pair.second, *raw.cross_idle_share * 100));
        } else if (raw.cross_cpu_round_trip) {
            const double idle = raw.cross_cpu_round_trip->median;
            const double exit = (idle - busy) / 2;
            const bool one_routine = raw.one_idle_state || raw.no_idle_driver;
            const std::string how = fmt::format(
                "the same ping-pong with both CPUs idle between messages: round trip {:.0f} ns "
                "against {:.0f} ns busy, half the difference (the idle state a CPU picks for "
                "such short idles, exit included){}{}; {}",
                idle, busy,
                raw.one_idle_state   ? "; the only enabled idle state"
                : raw.no_idle_driver ? "; no cpuidle driver (sysfs current_driver 'none'): "
                                       "default_idle_call()'s one routine for every idle"
                                     : "",
                raw.cross_idle_share
                    ? fmt::format("; the two CPUs idle {:.0f}% of it (/proc/stat)",
                                  *raw.cross_idle_share * 100)
                    : "",
                runs_of(*raw.cross_cpu_round_trip, "ns"));
            if (exit > 0) {
                d.add("cstate_c1_exit", rounded(exit, 1), how);
                if (one_routine)
                    d.add("cstate_deep_exit", rounded(exit, 1), how);
            } else {
                notes.push_back(fmt::format("cstate_c1_exit: not measured; the idle cross-CPU "
                                            "round trip ({:.0f} ns) was not slower than the busy "
                                            "one ({:.0f} ns): the CPUs poll when idle",
                                            idle, busy));
            }
        }
    } else if (raw.cross_cpu_round_trip && raw.same_cpu_round_trip) {
        const double cross = raw.cross_cpu_round_trip->median;
        const double same = raw.same_cpu_round_trip->median;
        const double ipi = (cross - same) / 2;
        if (ipi > 0) {
            d.add("ipi_wakeup", rounded(ipi, 1),
                  fmt::format("pipe ping-pong across CPUs {} and {} ({}): round trip {:.0f} ns "
                              "against {:.0f} ns on one CPU; half the difference (each direction "
                              "adds the wakeup IPI and the target's idle exit), {}",
                              raw.cross_pair.first, raw.cross_pair.second, raw.cross_kind, cross,
                              same, runs_of(*raw.cross_cpu_round_trip, "ns")));
        } else {
            notes.push_back(fmt::format("ipi_wakeup: not set; the cross-CPU round trip ({:.0f} "
                                        "ns, CPUs {} and {}) was not slower than the same-CPU "
                                        "one ({:.0f} ns)",
                                        cross, raw.cross_pair.first, raw.cross_pair.second, same));
        }
    }

    if (raw.same_cpu_waking_write && raw.cross_cpu_waking_write && raw.waking_write_idle_share &&
        *raw.waking_write_idle_share < 0.5) {
        notes.push_back(fmt::format(
            "ipi_send: not measured; CPUs {} and {} were idle {:.0f}% of the cross-CPU waking "
            "write()s (/proc/stat): other tasks ran there, so the partner's CPU was not the "
            "idle one this measures. Calibrate on an otherwise idle machine",
            raw.cross_pair.first, raw.cross_pair.second, *raw.waking_write_idle_share * 100));
    } else if (raw.same_cpu_waking_write && raw.cross_cpu_waking_write) {
        const double same = raw.same_cpu_waking_write->median;
        const double cross = raw.cross_cpu_waking_write->median;
        if (cross > same)
            d.add("ipi_send", rounded(cross - same, 1),
                  fmt::format("the write() that wakes the ping-pong partner, both SCHED_BATCH "
                              "(no wakeup preempts): {:.0f} ns when the partner idles on CPU {}, "
                              "{:.0f} ns on the writer's own CPU {}; the difference is the "
                              "sender's side of the IPI{}; {}",
                              cross, raw.cross_pair.second, same, raw.cpu,
                              raw.waking_write_idle_share
                                  ? fmt::format(" (the two CPUs idle {:.0f}% of it, /proc/stat)",
                                                *raw.waking_write_idle_share * 100)
                                  : "",
                              runs_of(*raw.cross_cpu_waking_write, "ns")));
        else
            notes.push_back(fmt::format("ipi_send: not set; a write() waking a task on another "
                                        "CPU ({:.0f} ns) was not slower than on the same CPU "
                                        "({:.0f} ns)",
                                        cross, same));
    }
}

/* wakeup_remote_lines: a wakeup onto a busy CPU's runqueue, in line_llc transfers. */
void derive_remote_wakeup_lines(const raw_measurements& raw, derived_costs& d)
{
    auto& notes = d.notes;
    if (raw.remote_wake) {
        const auto llc = std::find_if(raw.lines.begin(), raw.lines.end(),
                                      [](const auto& l) { return l.cost == "line_llc"; });
        // The fastest run: each run forks a new partner, and on some hosts whole runs take
        // another path (this project's KVM guest: run medians of 2.6-2.9 us or 13-16 us, the
        // second an IPI's cost, as if the wakeup went through the wake list). The direct
        // enqueue on the busy CPU's runqueue, which this cost is, is the faster mode.
        const double local = raw.remote_wake->local.median, remote = raw.remote_wake->remote.min;
        const double line = llc == raw.lines.end() ? 0 : llc->round_trip.median / 2; // one way
        if (line <= 0)
            notes.push_back("wakeup_remote_lines: not set (line_llc was not measured)");
        else if (remote - local < line / 2) // rounds to no line: not slower, as far as measured
            notes.push_back(fmt::format("wakeup_remote_lines: not set; waking a task on busy CPU "
                                        "{} ({:.0f} ns) was not slower than on the waker's CPU "
                                        "({:.0f} ns) by half a line_llc ({:.1f} ns)",
                                        raw.cross_pair.second, remote, local, line / 2));
        else {
            d.add(
                "wakeup_remote_lines", rounded((remote - local) / line, 1),
                fmt::format("the write() that wakes a SCHED_BATCH partner (no preemption): "
                            "{:.0f} ns with the partner on busy CPU {} (a nice-0 spinner: the "
                            "writer enqueues there itself; the fastest run's median), {:.0f} ns "
                            "on the writer's CPU {}; the difference over line_llc ({:.1f} ns); {}",
                            remote, raw.cross_pair.second, local, raw.cross_pair.first, line,
                            runs_of(raw.remote_wake->remote, "ns")));
        }
    }
}

/* Thread and process creation, and the exit of a process on top of a thread's. */
void derive_creation_and_exit_costs(const raw_measurements& raw, derived_costs& d)
{
    auto& notes = d.notes;
    if (raw.creation) {
        const task_creation& c = *raw.creation;
        const int a = raw.creation_cpus.first, b = raw.creation_cpus.second;
        d.add("fork_thread", rounded(c.thread_create.median, 10),
              fmt::format(
                  "the creator's CPU time (CLOCK_THREAD_CPUTIME_ID) around pthread_create() "
                  "of a thread pinned to its own CPU {}, batches of threads alive at once; {}",
                  a, of_creations(c.thread_create)));
        d.add("start_thread", rounded(c.thread_start.median, 10),
              fmt::format("a new thread's own CPU time at its start routine's first line, created "
                          "onto its creator's CPU {}; {}",
                          a, of_creations(c.thread_start)));
        d.add("fork_process", rounded(c.process_fork.median, 10),
              fmt::format(
                  "the parent's CPU time around fork() of this process (schedlab), CPU {}; {}", a,
                  of_creations(c.process_fork)));
        d.add("start_process", rounded(c.process_start.median, 10),
              fmt::format("a forked child's own CPU time (CLOCK_PROCESS_CPUTIME_ID) when fork() "
                          "returns in it, CPU {}; {}",
                          a, of_creations(c.process_start)));
        if (c.thread_start_remote) {
            const double extra = c.thread_start_remote->median - c.thread_start.median;
            d.add(
                "start_remote", rounded(std::max(0.0, extra), 0),
                fmt::format("a new thread's CPU time at its first line when created onto CPU {} "
                            "instead of its creator's CPU {} ({}), less start_thread ({:.0f} ns): "
                            "the mm's first run there",
                            b, a, of_creations(*c.thread_start_remote), c.thread_start.median));
        }
    }

    /* perf's Total time is wall time on the one CPU perf and its children are pinned to, which
     * they keep busy (160 tasks passing messages) but for perf's start-up: with less than 3/4
     * of that wall time as their own CPU time, other tasks had the CPU a quarter of the time
     * or more, and the difference between the two modes scales with them (1.0-1.8 ms a child
     * at load average 8-15 on the 2-vCPU guest, against ~0.47 ms measured there idle). */
    if (raw.perf_exit_process && raw.perf_exit_thread && raw.perf_exit_children > 0 &&
        raw.perf_exit_cpu_share && *raw.perf_exit_cpu_share < 0.75) {
        notes.push_back(fmt::format(
            "exit: not measured; perf bench and its children had {:.0f}% of CPU {} during their "
            "runs (CPU time over wall time, getrusage): other tasks ran there and perf's "
            "wall-clock Total time holds their time. Calibrate on an otherwise idle machine",
            *raw.perf_exit_cpu_share * 100, raw.cpu));
    } else if (raw.perf_exit_process && raw.perf_exit_thread && raw.perf_exit_children > 0) {
        const double proc = raw.perf_exit_process->median, thr = raw.perf_exit_thread->median;
        const double extra = (proc - thr) * 1e9 / raw.perf_exit_children;
        if (extra > 0)
            d.add("exit", rounded(static_cast<double>(raw.exit_thread_ns) + extra, 1),
                  fmt::format("`perf bench sched messaging -g 4 -l 1` on CPU {}: {:.3f} s with {} "
                              "child processes, {:.3f} s with threads ({}; {}); the difference per "
                              "child on top of exit_thread ({} ns): a process's exit runs its "
                              "libraries' destructors and tears down its mm",
                              raw.cpu, proc, raw.perf_exit_children, thr,
                              runs_of(in_ms(*raw.perf_exit_process), "ms"),
                              runs_of(in_ms(*raw.perf_exit_thread), "ms"), raw.exit_thread_ns));
        else
            notes.push_back(fmt::format("exit: not set; perf bench sched messaging -g 4 -l 1 was not "
                                        "slower with processes ({:.3f} s) than with threads "
                                        "({:.3f} s)",
                                        proc, thr));
    }
}

/* The cache-line transfers by distance, the refill rates and the memory bandwidths. */
void derive_memory_costs(const raw_measurements& raw, derived_costs& d)
{
    for (const auto& l : raw.lines)
        d.out.push_back(
            {l.cost, rounded(l.round_trip.median / 2, 1),
             fmt::format("{}: cache line bounced between pinned threads on CPUs {} and "
                         "{} (std::atomic store / load): round trip {:.1f} ns, half of "
                         "it; {}",
                         raw.stamp, l.a, l.b, l.round_trip.median, runs_of(l.round_trip, "ns"))});

    if (raw.refill_llc)
        d.add("refill_llc_per_kib", rounded(raw.refill_llc->median, 1),
              fmt::format("one load per line, shuffled, of a warm {} buffer (in the LLC, larger "
                          "than L2), CPU {}; {}",
                          mib(raw.refill_llc_bytes), raw.cpu, runs_of(*raw.refill_llc, "ns/KiB")));
    if (raw.chase_llc && raw.chase_l2) {
        const double extra = raw.chase_llc->median - raw.chase_l2->median;
        if (extra >= 0.5)
            d.add("llc_hit", rounded(extra, 1),
                  fmt::format("a pointer chase (one dependent load per line, shuffled) on CPU {}: "
                              "{:.1f} ns per load in a warm {} buffer (in the LLC, larger than "
                              "L2), {:.1f} ns in a {} one (in L2); the difference, what a line "
                              "costs more from the LLC than from the private caches; {}; {}",
                              raw.cpu, raw.chase_llc->median, mib(raw.refill_llc_bytes),
                              raw.chase_l2->median, fmt::format("{} KiB", raw.chase_l2_bytes >> 10),
                              runs_of(*raw.chase_llc, "ns"), runs_of(*raw.chase_l2, "ns")));
        else
            d.notes.push_back(fmt::format("llc_hit: not set (a load from the LLC buffer, {:.1f} "
                                          "ns, was not slower than one from L2, {:.1f} ns)",
                                          raw.chase_llc->median, raw.chase_l2->median));
    }
    if (raw.socket_cross) {
        // The lines the model counts for one such read (unix_stream_channel::read() in
        // workload/channel.cc): SKB_LINES (3) and one per 64 bytes of the message.
        // The first read of each socket also takes its state lines from the writer's core,
        // which the model charges apart (UNIX_STATE_LINES, 4, at line_llc): once per socket.
        const int lines = 3 + (raw.socket_bytes + 63) / 64;
        const auto& x = *raw.socket_cross;
        const auto llc = std::find_if(raw.lines.begin(), raw.lines.end(),
                                      [](const auto& l) { return l.cost == "line_llc"; });
        const double state = llc == raw.lines.end() || raw.socket_cross_depth <= 0
                                 ? 0.0
                                 : 4 * llc->round_trip.median / 2 / raw.socket_cross_depth;
        const double extra = x.remote.median - x.local.median - state;
        d.add("line_data_llc", rounded(extra / lines, 1),
              fmt::format("read() of {}-byte messages that a thread on CPU {} wrote into {} AF_UNIX "
                          "stream socket pairs, {} deep, drained on CPU {} ({}): {:.1f} ns, "
                          "against {:.1f} ns when CPU {} wrote them; the difference, less the "
                          "socket's 4 state lines at line_llc once per socket ({:.1f} ns a read), "
                          "over the {} lines the model counts for such a read (an skb's 3 and one "
                          "per 64 bytes), at least 1 ns; {}; {}",
                          raw.socket_bytes, raw.cross_pair.second, raw.socket_cross_channels,
                          raw.socket_cross_depth, raw.cross_pair.first, raw.cross_kind,
                          x.remote.median, x.local.median, raw.cross_pair.first, state, lines,
                          runs_of(x.remote, "ns"), runs_of(x.local, "ns")));
    }
    if (raw.refill_mem)
        d.add("refill_mem_per_kib", rounded(raw.refill_mem->median, 1),
              fmt::format("one load per line, shuffled within 2 MiB windows, of a {} buffer, CPU "
                          "{}; {}",
                          mib(raw.refill_mem_bytes), raw.cpu, runs_of(*raw.refill_mem, "ns/KiB")));
    if (raw.refill_remote)
        d.add("refill_remote_per_kib", rounded(raw.refill_remote->median, 1),
              fmt::format("as refill_mem_per_kib, the buffer first touched on another node; {}",
                          runs_of(*raw.refill_remote, "ns/KiB")));

    if (raw.bw_llc) {
        const std::string how =
            fmt::format("sequential read of a {} buffer by {} threads, one per CPU of an LLC{}; {}",
                        mib(raw.bw_bytes), raw.bw_llc_cpus,
                        raw.bw_llc_is_node ? " (the LLC is the whole node)" : "",
                        runs_of(*raw.bw_llc, "MB/s"));
        d.add("mem_bw_llc_mbs", rounded(raw.bw_llc->median, 1), how);
        if (raw.bw_llc_is_node)
            d.add("mem_bw_node_mbs", rounded(raw.bw_llc->median, 1), how);
    }
    if (raw.bw_node && !raw.bw_llc_is_node)
        d.add("mem_bw_node_mbs", rounded(raw.bw_node->median, 1),
              fmt::format("sequential read of a {} buffer by {} threads, one per CPU of a node; {}",
                          mib(raw.bw_bytes), raw.bw_node_cpus, runs_of(*raw.bw_node, "MB/s")));
}

} // namespace

std::vector<measured_cost> derive_costs(const raw_measurements& raw,
                                        std::vector<std::string>& notes)
{
    derived_costs d{raw, {}, notes};
    derive_syscall_and_switch_costs(raw, d);
    derive_ipi_and_idle_exit_costs(raw, d);
    /* kernel: kernel/sched/idle.c cpuidle_idle_call() (6.18): with no cpuidle driver every
     * idle is default_idle_call(), one routine whatever the idle's length, and
     * idle_get_state() has no state: there is no deeper state than the one the idle
     * ping-pong times. When that was not measured (a loaded machine), the deep state still
     * is not a deeper one: it takes the C1 figure the machine has, not costs.def's 50 us. */
    const auto has = [&](const char* name) {
        return std::any_of(d.out.begin(), d.out.end(),
                           [&](const measured_cost& c) { return c.name == name; });
    };
    if (raw.no_idle_driver && !has("cstate_deep_exit") && raw.c1_exit_ns > 0)
        d.out.push_back(
            {"cstate_deep_exit", raw.c1_exit_ns,
             fmt::format("{}: not measured; no cpuidle driver (sysfs current_driver 'none'): "
                         "every idle is default_idle_call()'s one routine and there is no deeper "
                         "state, so it is cstate_c1_exit's {} ns (the sysfs or default figure: "
                         "the idle exit itself was not measured, see the notes)",
                         raw.stamp.rfind("measured by ", 0) == 0
                             ? "set by " + raw.stamp.substr(12)
                             : raw.stamp,
                         raw.c1_exit_ns)});
    derive_remote_wakeup_lines(raw, d);
    if (raw.sockets) {
        const std::string shape = fmt::format(
            "{}-byte messages over {} AF_UNIX stream socket pairs written round-robin, {} deep, "
            "then read back (perf bench sched messaging's message size and one group's sockets; "
            "no waiters), CPU {}",
            raw.socket_bytes, raw.socket_channels, raw.socket_depth, raw.cpu);
        d.add("socket_send", rounded(raw.sockets->write_ns.median, 1),
              fmt::format("write() of {}; {}", shape, runs_of(raw.sockets->write_ns, "ns")));
        d.add("socket_recv", rounded(raw.sockets->read_ns.median, 1),
              fmt::format("read() of {}; {}", shape, runs_of(raw.sockets->read_ns, "ns")));
    }

    derive_creation_and_exit_costs(raw, d);
    if (raw.mm_ring_process && raw.mm_ring_thread) {
        const double proc = raw.mm_ring_process->median, thr = raw.mm_ring_thread->median;
        if (proc > thr)
            d.add("switch_mm_flush", rounded(proc - thr, 1),
                  fmt::format("a ring of {} tasks passing a byte through pipes on CPU {}, each hop "
                              "a context switch: {:.0f} ns of CPU time per hop with processes "
                              "({}), {:.0f} ns with threads of one process ({}); the difference: "
                              "with more mms than the CPU's six dynamic ASIDs, every switch "
                              "between processes takes a new one and flushes the TLB",
                              raw.mm_ring_tasks, raw.cpu, proc, runs_of(*raw.mm_ring_process, "ns"),
                              thr, runs_of(*raw.mm_ring_thread, "ns")));
        else
            d.notes.push_back(fmt::format("switch_mm_flush: not set; a ring of {} processes "
                                          "({:.0f} ns per hop) was not slower than one of {} "
                                          "threads ({:.0f} ns)",
                                          raw.mm_ring_tasks, proc, raw.mm_ring_tasks, thr));
    }
    derive_memory_costs(raw, d);
    if (raw.smt_share)
        d.add("smt_pct", std::clamp<long long>(std::llround(raw.smt_share->median), 1, 100),
              fmt::format("an integer loop on SMT siblings {} and {} at once, against one alone "
                          "(loop-specific: real code shares a core differently); {}",
                          raw.smt_pair.first, raw.smt_pair.second, runs_of(*raw.smt_share, "%")));
    return d.out;
}

std::string tracepoint_note(const raw_measurements& raw)
{
    const tracepoint_cost& t = *raw.tracepoint;
    return fmt::format(
        "sched_tracepoint: {} ns an event (median of {} pairs of runs, {:.0f}-{:.0f}): the pipe "
        "ping-pong on CPU {} took {:.2f} us a round trip untraced and {:.2f} us with the sched "
        "events of a trace recording enabled in tracefs, {:.2f} events a round trip. Not "
        "written to the machine file (a kernel runs untraced); for a replay of a trace recorded "
        "on this machine: --cost sched_tracepoint={}",
        rounded(t.per_event_ns.median, 0), t.per_event_ns.runs, t.per_event_ns.min,
        t.per_event_ns.max, raw.cpu, t.untraced_ns.median / 1000, t.traced_ns.median / 1000,
        t.events_per_round_trip, rounded(t.per_event_ns.median, 0));
}

namespace {

std::string today_utc()
{
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
    return buf;
}

std::string cpu_model()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            std::string v = colon == std::string::npos ? "" : line.substr(colon + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    return "";
}

/* Dense machine CPU numbers -> the kernel's (machine_from_sysfs renumbers online CPUs in order). */
std::vector<int> real_cpu_numbers(const machine& m, std::vector<std::string>& notes)
{
    std::ifstream in("/sys/devices/system/cpu/online");
    std::string text;
    std::getline(in, text);
    std::vector<int> online;
    try {
        if (!text.empty())
            online = parse_cpulist(text, "/sys/devices/system/cpu/online");
    } catch (const config_error&) {
        online.clear();
    }
    if (static_cast<int>(online.size()) == m.nr_cpus())
        return online;
    notes.push_back(fmt::format("/sys/devices/system/cpu/online lists {} CPUs, sysfs topology {}: "
                                "assuming CPU numbers 0..{}",
                                online.size(), m.nr_cpus(), m.nr_cpus() - 1));
    std::vector<int> identity(m.nr_cpus());
    for (int i = 0; i < m.nr_cpus(); ++i)
        identity[i] = i;
    return identity;
}

struct plan {
    budget syscalls, pipe, line, refill_llc, refill_mem, bw, smt, remote_wake;
    int syscall_ops, pipe_iters, line_iters, perf_loops, perf_exit_runs, remote_wake_iters;
    double smt_phase;
    std::size_t big_bytes_cap;
};

plan make_plan(bool quick)
{
    if (quick)
        return {{3, 5, 0.05},  {3, 5, 0.15}, {3, 5, 0.05}, {3, 3, 0.05}, {3, 3, 0.1},
                {3, 3, 0.15},  {3, 3, 0.1},  {3, 3, 0.1},  256,          1000,
                5000,          10000,        3,            20,           0.02,
                64u << 20};
    return {{3, 15, 0.3}, {3, 11, 1.0}, {3, 11, 0.4}, {3, 9, 0.4}, {3, 5, 0.8},
            {3, 7, 1.0},  {3, 5, 0.5},  {5, 7, 0.6},  256,          5000,
            20000,        100000,       7,            50,           0.05,
            1024u << 20};
}

/* Runs one probe; a failure becomes a note and leaves the cost at its default. */
template <typename F> void attempt(const char* what, std::vector<std::string>& notes,
                                   std::ostream& progress, F&& f)
{
    progress << "  " << what << " ..." << std::flush;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        f();
        progress << fmt::format(" {:.2f} s\n",
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                                    .count());
    } catch (const probe_error& e) {
        progress << " skipped\n";
        notes.push_back(fmt::format("{}: not measured ({})", what, e.what()));
    }
}

std::vector<int> allowed_in(const machine& m, const std::vector<int>& real,
                            const std::vector<int>& allowed,
                            const std::function<bool(const cpu_desc&)>& keep)
{
    std::vector<int> out;
    for (int i = 0; i < m.nr_cpus(); ++i)
        if (keep(m.cpus[i]) && std::binary_search(allowed.begin(), allowed.end(), real[i]))
            out.push_back(real[i]);
    return out;
}

/* One calibration's probes: the plan, the host and the CPUs this process may use. */
struct host_probes {
    const plan& p;
    const machine& m;
    const std::vector<int>& real;     ///< dense CPU number -> the kernel's
    const std::vector<int>& allowed;  ///< the kernel's CPU numbers this process may use, sorted
    int first = -1, dense_first = -1; ///< the single-CPU probes' CPU (kernel's, dense)
    cpu_pairs pairs;                  ///< a CPU pair at each distance
    raw_measurements& raw;
    std::vector<std::string>& notes;
    std::ostream& progress;

    void probe_pipes();
    void probe_cache_lines();
    void probe_memory();
    void probe_tasks(const options& o);
    void perf_cross_check(const options& o);
};

/* The pipe syscalls and ping-pongs: on one CPU, and across the nearest pair of CPUs idle, waking
 * and busy. */
void host_probes::probe_pipes()
{
    attempt("pipe write/read syscalls", notes, progress,
            [&] { raw.syscalls = probe_pipe_syscalls(first, p.syscall_ops, p.syscalls); });
    attempt("pipe ping-pong on one CPU", notes, progress, [&] {
        raw.same_cpu_round_trip = probe_pipe_round_trip(first, first, p.pipe_iters, p.pipe);
    });

    const std::pair<const char*, const std::optional<std::pair<int, int>>*> by_distance[] = {
        {"same LLC", &pairs.llc},
        {"same package, other LLC", &pairs.pkg},
        {"other package or node", &pairs.remote},
        {"SMT siblings", &pairs.smt}};
    for (const auto& [kind, pair] : by_distance)
        if (*pair) {
            raw.cross_pair = **pair;
            raw.cross_kind = kind;
            break;
        }
    raw.one_idle_state = m.costs_source.count("cstate_deep_exit") &&
                         m.costs_source.at("cstate_deep_exit").find("the only enabled state") !=
                             std::string::npos;
    {
        std::ifstream in("/sys/devices/system/cpu/cpuidle/current_driver");
        std::string driver;
        raw.no_idle_driver = std::getline(in, driver) && driver == "none";
    }
    if (raw.cross_pair.first >= 0) {
        attempt("pipe ping-pong across two idle CPUs", notes, progress, [&] {
            const auto before = read_proc_stat();
            raw.cross_cpu_round_trip = probe_pipe_round_trip(
                raw.cross_pair.first, raw.cross_pair.second, p.pipe_iters, p.pipe);
            raw.cross_idle_share = idle_share(before, read_proc_stat(),
                                              {raw.cross_pair.first, raw.cross_pair.second});
        });
        attempt("waking write() on one CPU and across two", notes, progress, [&] {
            raw.same_cpu_waking_write =
                probe_pipe_round_trip(first, first, p.pipe_iters, p.pipe, false, true);
            const auto before = read_proc_stat();
            raw.cross_cpu_waking_write = probe_pipe_round_trip(
                raw.cross_pair.first, raw.cross_pair.second, p.pipe_iters, p.pipe, false, true);
            raw.waking_write_idle_share = idle_share(
                before, read_proc_stat(), {raw.cross_pair.first, raw.cross_pair.second});
        });
        attempt("pipe ping-pong across two busy CPUs", notes, progress, [&] {
            raw.cross_cpu_round_trip_busy = probe_pipe_round_trip(
                raw.cross_pair.first, raw.cross_pair.second, p.pipe_iters, p.pipe, true);
        });
    } else
        notes.push_back("ipi_wakeup and cache-line transfers: not measured (one usable CPU)");
}

/* Cache-line ping-pong at each distance, and a wakeup onto a busy CPU's runqueue. */
void host_probes::probe_cache_lines()
{
    const std::pair<const char*, const std::optional<std::pair<int, int>>*> line_pairs[] = {
        {"line_smt", &pairs.smt},
        {"line_llc", &pairs.llc},
        {"line_pkg", &pairs.pkg},
        {"line_remote", &pairs.remote}};
    for (const auto& entry : line_pairs) {
        // Named copies, not structured bindings: C++20 lambdas may not capture those (clang).
        const char* const cost = entry.first;
        const std::optional<std::pair<int, int>>* const pair = entry.second;
        if (!*pair)
            continue;
        attempt(fmt::format("cache-line ping-pong for {}", cost).c_str(), notes, progress, [&] {
            const stats s = probe_line_round_trip((*pair)->first, (*pair)->second, p.line_iters,
                                                  p.line);
            raw.lines.push_back({cost, (*pair)->first, (*pair)->second, s});
        });
    }

    if (raw.cross_pair.first >= 0)
        attempt("waking a task on a busy CPU without preemption", notes, progress, [&] {
            raw.remote_wake = probe_remote_wakeup(raw.cross_pair.first, raw.cross_pair.second,
                                                  p.remote_wake_iters, p.remote_wake);
        });
}

/* Shuffled reads from the LLC, memory and another node's memory; the bandwidth of an LLC and a
 * node; SMT sharing. */
void host_probes::probe_memory()
{
    const std::size_t l2 = static_cast<std::size_t>(m.costs.l2_kib) * 1024;
    const std::size_t llc = static_cast<std::size_t>(m.costs.llc_kib) * 1024;
    if (llc > 2 * l2) {
        raw.refill_llc_bytes = std::min<std::size_t>(
            std::min(llc / 2, std::max<std::size_t>(4 * l2, 1u << 20)), 16u << 20);
        attempt("shuffled reads from the LLC", notes, progress, [&] {
            raw.refill_llc = probe_random_read(first, first, raw.refill_llc_bytes, true,
                                               p.refill_llc);
        });
        raw.chase_l2_bytes = std::max<std::size_t>(l2 / 4, 64u << 10);
        attempt("a pointer chase in the LLC and in L2", notes, progress, [&] {
            raw.chase_llc = probe_pointer_chase(first, raw.refill_llc_bytes, p.refill_llc);
            raw.chase_l2 = probe_pointer_chase(first, raw.chase_l2_bytes, p.refill_llc);
        });
    } else {
        notes.push_back("refill_llc_per_kib: not measured (the LLC is not larger than L2)");
    }

    const std::size_t big = std::min(std::max<std::size_t>(2 * llc, 64u << 20), p.big_bytes_cap);
    if (big <= llc)
        notes.push_back(fmt::format("the memory probes use {} buffers, not larger than the {} "
                                    "LLC sysfs reports: refill_mem_per_kib and the bandwidths may "
                                    "include LLC hits (a VM may report its host's whole LLC)",
                                    mib(big), mib(llc)));
    raw.refill_mem_bytes = big;
    attempt("shuffled reads from memory", notes, progress, [&] {
        raw.refill_mem = probe_random_read(first, first, big, false, p.refill_mem);
    });
    if (m.nr_nodes() > 1) {
        const int my_node = m.cpus[dense_first].node;
        const auto others =
            allowed_in(m, real, allowed, [&](const cpu_desc& d) { return d.node != my_node; });
        if (!others.empty())
            attempt("shuffled reads from another node's memory", notes, progress, [&] {
                raw.refill_remote = probe_random_read(first, others.front(), big, false,
                                                      p.refill_mem);
            });
    }

    raw.bw_bytes = big;
    const cpu_desc& d0 = m.cpus[dense_first];
    const auto llc_cpus =
        allowed_in(m, real, allowed, [&](const cpu_desc& d) { return d.llc == d0.llc; });
    const auto node_cpus =
        allowed_in(m, real, allowed, [&](const cpu_desc& d) { return d.node == d0.node; });
    raw.bw_llc_cpus = static_cast<int>(llc_cpus.size());
    raw.bw_node_cpus = static_cast<int>(node_cpus.size());
    raw.bw_llc_is_node = llc_cpus == node_cpus;
    attempt("memory bandwidth of an LLC", notes, progress,
            [&] { raw.bw_llc = probe_stream_read(llc_cpus, big, p.bw); });
    if (!raw.bw_llc_is_node)
        attempt("memory bandwidth of a node", notes, progress,
                [&] { raw.bw_node = probe_stream_read(node_cpus, big, p.bw); });

    if (pairs.smt) {
        raw.smt_pair = *pairs.smt;
        attempt("SMT sharing", notes, progress, [&] {
            raw.smt_share =
                probe_pair_share(pairs.smt->first, pairs.smt->second, p.smt_phase, p.smt);
        });
    } else {
        notes.push_back("smt_pct: not measured (no SMT siblings this process may use)");
    }
}

/* AF_UNIX sockets, thread and process creation, and (--no-perf: not) the exit of perf bench's child
 * processes. */
void host_probes::probe_tasks(const options& o)
{
    raw.socket_channels = 20;
    raw.socket_depth = 100;
    raw.socket_bytes = 100;
    attempt("AF_UNIX socket write/read", notes, progress, [&] {
        raw.sockets = probe_socket_syscalls(first, raw.socket_channels, raw.socket_depth,
                                            raw.socket_bytes, p.syscalls);
    });

    if (raw.cross_pair.first >= 0 && raw.cross_kind == "same LLC") {
        // Ten deep: 200 skbs stay in the writer's L2, so the reads take lines from its core.
        raw.socket_cross_channels = 20;
        raw.socket_cross_depth = 10;
        attempt("AF_UNIX socket reads of another core's messages", notes, progress, [&] {
            raw.socket_cross = probe_socket_cross_read(
                raw.cross_pair.first, raw.cross_pair.second, raw.socket_cross_channels,
                raw.socket_cross_depth, raw.socket_bytes, p.syscalls);
        });
    } else {
        notes.push_back("line_data_llc: not measured (no two CPUs of one LLC this process may use)");
    }

    /* Eight members: more mms than TLB_NR_DYN_ASIDS (6), so as processes every switch
     * flushes; ~2 us of work per hop, so 500 laps are ~10 ms a run. */
    raw.mm_ring_tasks = 8;
    attempt("pipe ring of processes and of threads", notes, progress, [&] {
        raw.mm_ring_process = probe_mm_ring(first, raw.mm_ring_tasks, 500, true, p.syscalls);
        raw.mm_ring_thread = probe_mm_ring(first, raw.mm_ring_tasks, 500, false, p.syscalls);
    });

    attempt("thread and process creation", notes, progress, [&] {
        // The remote start is measured across the cross pair (the nearest two CPUs).
        const int creator = raw.cross_pair.first >= 0 ? raw.cross_pair.first : first;
        raw.creation = probe_task_creation(creator, raw.cross_pair.second, o.quick ? 30 : 100,
                                           p.syscalls);
        raw.creation_cpus = {creator, raw.cross_pair.second};
    });

    if (o.perf) {
        /* The exit of perf bench's children: one loop, pinned to one CPU, so nearly all of
         * the timed work is the 160 exits (and their reaping); four groups because perf
         * prints the time in ms. */
        progress << "  exit of perf bench's child processes ..." << std::flush;
        std::vector<double> procs, threads, shares;
        std::string why;
        for (int i = 0; i < p.perf_exit_runs && why.empty(); ++i) {
            double share = 0;
            if (auto s = perf_bench_messaging_seconds("-g 4 -l 1", first, why, &share)) {
                procs.push_back(*s);
                shares.push_back(share);
            }
            if (why.empty())
                if (auto s = perf_bench_messaging_seconds("-g 4 -l 1 -t", first, why, &share)) {
                    threads.push_back(*s);
                    shares.push_back(share);
                }
        }
        if (!shares.empty())
            raw.perf_exit_cpu_share = summarise(shares).median;
        if (why.empty() && !procs.empty() && !threads.empty()) {
            raw.perf_exit_process = summarise(procs);
            raw.perf_exit_thread = summarise(threads);
            raw.perf_exit_children = 160; // 4 groups of 20 senders + 20 receivers
            raw.exit_thread_ns = m.costs.exit_thread;
            progress << " done\n";
        } else {
            progress << " skipped\n";
            notes.push_back("exit: not measured (" + why + ")");
        }
    }
}

/* `perf bench sched pipe`, unpinned, beside the pinned round trips: a note (not --no-perf). */
void host_probes::perf_cross_check(const options& o)
{
    if (o.perf) {
        progress << "  perf bench sched pipe ..." << std::flush;
        std::string why;
        if (auto us = perf_bench_pipe_usecs(p.perf_loops, why)) {
            progress << " done\n";
            notes.push_back(fmt::format(
                "cross-check: `perf bench sched pipe -l {}` = {:.2f} usecs/op (a round trip, two "
                "unpinned processes); pinned here: {} on one CPU, {} across CPUs",
                p.perf_loops, *us,
                raw.same_cpu_round_trip
                    ? fmt::format("{:.2f} us", raw.same_cpu_round_trip->median / 1000)
                    : "-",
                raw.cross_cpu_round_trip
                    ? fmt::format("{:.2f} us", raw.cross_cpu_round_trip->median / 1000)
                    : "-"));
        } else {
            progress << " skipped\n";
            notes.push_back("perf cross-check: " + why);
        }
    }
}

} // namespace

result run(const options& o, std::ostream& progress)
{
    const auto start = std::chrono::steady_clock::now();
    result res;
    res.m = make_sysfs_host_machine();
    machine& m = res.m;
    const std::string date = today_utc();
    const std::string model = cpu_model();
    m.name = "host";
    m.description = fmt::format(
        "this machine ({}{} CPUs), calibrated by schedlab calibrate{} on {}",
        model.empty() ? "" : model + ", ", m.nr_cpus(), o.quick ? " --quick" : "", date);

    const plan p = make_plan(o.quick);
    std::vector<std::string>& notes = res.notes;
    const std::vector<int> real = real_cpu_numbers(m, notes);
    std::vector<int> allowed = allowed_cpus();
    std::sort(allowed.begin(), allowed.end());
    int first = -1, dense_first = -1;
    for (int i = 0; i < m.nr_cpus() && first < 0; ++i)
        if (std::binary_search(allowed.begin(), allowed.end(), real[i]))
            first = real[i], dense_first = i;
    if (first < 0)
        throw config_error("calibrate", "this process may not run on any CPU the sysfs topology "
                                        "lists");

    raw_measurements raw;
    raw.stamp =
        fmt::format("measured by schedlab calibrate{} on {}", o.quick ? " --quick" : "", date);
    raw.cpu = first;
    raw.c1_exit_ns = m.costs.cstate_c1_exit;
    {
        std::ifstream in("/proc/loadavg");
        std::string a, b, c;
        if (in >> a >> b >> c)
            notes.push_back(fmt::format("load average when the measurements started: {} {} {} "
                                        "(on {} CPUs; other tasks' work moves the figures)",
                                        a, b, c, m.nr_cpus()));
    }
    progress << fmt::format("schedlab calibrate: measuring this machine ({} CPUs{}){}\n",
                            m.nr_cpus(), model.empty() ? "" : ", " + model,
                            o.quick ? ", quick" : "");

    host_probes h{p,   m,     real,    allowed, first, dense_first, pick_pairs(m, real, allowed),
                  raw, notes, progress};
    h.probe_pipes();
    h.probe_cache_lines();
    h.probe_memory();
    h.probe_tasks(o);

    std::vector<measured_cost> measured = derive_costs(raw, notes);
    for (const auto& c : measured) {
        try {
            set_machine_cost(m, c.name, c.value, c.source, "calibrate");
            res.measured.push_back(c);
        } catch (const config_error& e) {
            notes.push_back(
                fmt::format("{}: measured {} but not usable ({})", c.name, c.value, e.what()));
        }
    }

    if (o.tracefs) {
        attempt("sched tracepoints (tracefs)", notes, progress,
                [&] { raw.tracepoint = probe_tracepoint_cost(first, p.pipe_iters, p.pipe); });
        if (raw.tracepoint)
            notes.push_back(tracepoint_note(raw));
    }
    h.perf_cross_check(o);
    res.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return res;
}

int cmd_calibrate(std::ostream& out, std::ostream& err, const options& o)
{
    const std::string path = o.output.empty() ? default_host_machine_path() : o.output;
    if (path.empty())
        throw config_error("--output", "no default location (neither SCHEDLAB_HOST_MACHINE, "
                                       "XDG_CONFIG_HOME nor HOME is set); give --output FILE");
    {
        // The default location's directories are made for it; then the file is opened (an
        // unwritable path fails here, before anything is measured) and written atomically.
        std::error_code ec;
        const fs::path target(path);
        if (target.has_parent_path() && !fs::is_directory(path, ec))
            fs::create_directories(target.parent_path(), ec);
    }
    output_file file(path, "--output");

    const result r = run(o, err);
    const std::string text = machine_to_json(r.m);
    machine_from_json(text, path); // what we write must read back
    file.write(text);
    file.commit();

    out << fmt::format("{:<22} {:>9} {:<7} {}\n", "COST", "VALUE", "UNIT", "HOW");
    for (const auto& c : r.measured) {
        const cost_info* ci = find_cost(c.name);
        std::string how = c.source.substr(c.source.find(": ") + 2);
        out << fmt::format("{:<22} {:>9} {:<7} {}\n", c.name, c.value, ci ? ci->unit : "", how);
    }
    for (const auto& [name, source] : r.m.costs_source) {
        if (source.rfind("sysfs ", 0) != 0)
            continue;
        sim_dur value = 0;
        for (const auto& [n, v] : cost_list(r.m.costs))
            if (n == name)
                value = v;
        out << fmt::format("{:<22} {:>9} {:<7} {}\n", name, value,
                           find_cost(name) ? find_cost(name)->unit : "", source);
    }
    if (!r.notes.empty()) {
        out << "\nNotes:\n";
        for (const auto& n : r.notes)
            out << "  - " << n << "\n";
    }
    const bool is_host_file = path == default_host_machine_path();
    out << fmt::format("\nMeasured in {:.1f} s. Wrote {}{}.\n", r.seconds, path,
                       is_host_file ? "; the host preset uses it from now on"
                                    : "; use it with --machine " + path +
                                          " (or set SCHEDLAB_HOST_MACHINE to it)");
    return 0;
}

} // namespace schedlab::calibrate
