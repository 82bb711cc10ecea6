// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * `schedlab calibrate`: measures this host's costs with real runs and
 * writes a machine file (the host topology from sysfs plus the measured
 * costs, each with a "measured by schedlab calibrate on DATE: how" source).
 * The `host` preset reads that file (machine/presets.h, make_host_machine).
 *
 * What is measured (probes.h), and which cost it gives:
 *   - 1-byte pipe write()/read() with nobody waiting     -> pipe_write, pipe_read
 *   - pipe ping-pong between two processes on one CPU    -> context_switch, wakeup
 *   - the same across two CPUs kept busy (SCHED_IDLE     -> ipi_wakeup
 *     spinners), and across two idle CPUs                -> cstate_c1_exit (the difference)
 *   - a cache line bounced between two pinned threads    -> line_smt / line_llc /
 *                                                           line_pkg / line_remote
 *   - a pointer chase in the LLC less one in L2          -> llc_hit
 *   - socket reads of messages another core of the LLC  -> line_data_llc
 *     wrote, less reads of the reader's own
 *   - shuffled reads of a buffer in the LLC / in DRAM    -> refill_llc_per_kib /
 *     (/ in another node's DRAM)                            refill_mem_per_kib /
 *                                                           refill_remote_per_kib
 *   - sequential reads by every CPU of an LLC / a node   -> mem_bw_llc_mbs, mem_bw_node_mbs
 *   - two busy SMT siblings against one                  -> smt_pct
 *   - a pipe ring of 8 processes on one CPU against     -> switch_mm_flush
 *     8 threads, CPU time per hop (more mms than x86's
 *     six dynamic ASIDs: every process switch flushes)
 *   - pthread_create() and fork(), as CPU time of the    -> fork_thread, fork_process,
 *     creator and of the new task until it starts           start_thread, start_process,
 *     (the thread on the creator's CPU and on another)      start_remote
 *   - `perf bench sched pipe`, when perf runs            -> a cross-check, reported only
 *   - the one-CPU ping-pong with a trace recording's     -> sched_tracepoint, reported
 *     sched events enabled in tracefs, against without     only (a traced kernel's cost:
 *     (root, tracefs unused)                                not written to the file)
 * Each is the median of repeated short runs within a time budget (about
 * 10 s in all, 2 s with --quick).
 */
#include "calibrate/probes.h"
#include "machine/machine.h"

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace schedlab::calibrate {

struct options {
    std::string output; ///< "" = default_host_machine_path() (where the host preset looks)
    bool quick = false; ///< shorter runs: about 2 s instead of 10
    bool perf = true;   ///< if perf works: time its children's exit, cross-check with its pipe
    /// if tracefs is writable and unused: the sched tracepoints' cost (reported, not written)
    bool tracefs = true;
};

/// Pairs of real CPU numbers at each distance, as far as this machine and affinity allow.
struct cpu_pairs {
    std::optional<std::pair<int, int>> smt, llc, pkg, remote;
};

/*
 * The first allowed pair at each distance: SMT siblings, same LLC (other
 * core), same package and node (other LLC), other package or node.
 * real_of_dense maps the machine's dense CPU numbers to the kernel's.
 */
cpu_pairs pick_pairs(const machine& m, const std::vector<int>& real_of_dense,
                     const std::vector<int>& allowed);

/// What the probes returned (absent: not measured), with what they ran on.
struct raw_measurements {
    std::string stamp; ///< "measured by schedlab calibrate on DATE"
    int cpu = -1;      ///< the CPU of the single-CPU probes
    std::optional<pipe_syscalls> syscalls;
    std::optional<stats> same_cpu_round_trip;
    std::optional<stats> cross_cpu_round_trip;      ///< the target CPUs idle between messages
    std::optional<stats> cross_cpu_round_trip_busy; ///< both CPUs kept busy (SCHED_IDLE spinners)
    std::optional<stats> same_cpu_waking_write;     ///< the write() that wakes the partner, one CPU
    std::optional<stats> cross_cpu_waking_write;    ///< ... across the CPUs, the partner's idle
    bool one_idle_state = false; ///< sysfs has one enabled idle state: it is also the deep one
    /// sysfs cpuidle/current_driver "none": every idle is default_idle_call()'s one routine
    /// (HLT or MWAIT C1), so the measured idle exit is also the deep state's
    bool no_idle_driver = false;
    /// the machine's cstate_c1_exit before calibration (sysfs or the default): with no cpuidle
    /// driver and no measured idle exit, the deep state takes it (there is no deeper state)
    long long c1_exit_ns = 0;
    /// the share of the idle ping-pong's wall time its two CPUs spent idle (/proc/stat);
    /// absent when not read
    std::optional<double> cross_idle_share;
    std::optional<double> waking_write_idle_share; ///< the same, for cross_cpu_waking_write
    std::pair<int, int> cross_pair{-1, -1};
    std::string cross_kind; ///< "same LLC", ...
    struct line {
        std::string cost; ///< line_smt, line_llc, line_pkg or line_remote
        int a = -1, b = -1;
        stats round_trip;
    };
    std::vector<line> lines;
    std::optional<stats> refill_llc, refill_mem, refill_remote;
    std::size_t refill_llc_bytes = 0, refill_mem_bytes = 0;
    /// probe_pointer_chase() on raw.cpu: ns per load in the refill_llc buffer (an LLC hit)
    /// and in one a quarter of L2 (an L2 hit)
    std::optional<stats> chase_llc, chase_l2;
    std::size_t chase_l2_bytes = 0;
    std::optional<stats> bw_llc, bw_node;
    int bw_llc_cpus = 0, bw_node_cpus = 0;
    bool bw_llc_is_node = false; ///< one measurement gives both
    std::size_t bw_bytes = 0;
    std::optional<stats> smt_share;
    std::pair<int, int> smt_pair{-1, -1};
    std::optional<remote_wakeup> remote_wake; ///< on raw.cross_pair
    std::optional<socket_syscalls> sockets;
    int socket_channels = 0, socket_depth = 0, socket_bytes = 0;
    /// probe_socket_cross_read() on raw.cross_pair (socket_cross_channels x socket_cross_depth
    /// messages of socket_bytes), when it is a same-LLC pair
    std::optional<socket_cross_read> socket_cross;
    int socket_cross_channels = 0, socket_cross_depth = 0;
    std::optional<task_creation> creation;
    std::pair<int, int> creation_cpus{-1, -1}; ///< the creator's CPU, the remote child's (or -1)
    /// `perf bench sched messaging -g 4 -l 1` on one CPU in process and in thread mode
    /// (seconds): the same work but for how its children exit.
    std::optional<stats> perf_exit_process, perf_exit_thread;
    int perf_exit_children = 0;
    /// the median over those runs of perf's and its children's CPU time over the run's wall
    /// time (getrusage); absent when not read
    std::optional<double> perf_exit_cpu_share;
    long long exit_thread_ns = 0; ///< the machine's exit_thread, which the difference adds to
    /// probe_mm_ring() on raw.cpu, as processes and as threads: CPU time per hop (ns)
    std::optional<stats> mm_ring_process, mm_ring_thread;
    int mm_ring_tasks = 0;
    /// probe_tracepoint_cost() on raw.cpu
    std::optional<tracepoint_cost> tracepoint;
};

struct measured_cost {
    std::string name;
    long long value;
    std::string source;
};

/// Turns the raw numbers into costs with sources; `notes` gets what could not be derived.
std::vector<measured_cost> derive_costs(const raw_measurements& raw, std::vector<std::string>& notes);

/// The note that reports sched_tracepoint (raw.tracepoint), which is not written to the
/// machine file: it is a traced kernel's cost, for the replay of a trace recorded here.
std::string tracepoint_note(const raw_measurements& raw);

struct result {
    machine m; ///< the host from sysfs, with the measured costs set
    std::vector<measured_cost> measured;
    std::vector<std::string> notes; ///< probes skipped and why; the perf cross-check
    double seconds = 0;             ///< wall time of the measurements
};

/// Measures this machine; progress lines go to `progress`.
result run(const options& o, std::ostream& progress);

/// The subcommand: measure, write the machine file, print what was measured. Returns 0.
int cmd_calibrate(std::ostream& out, std::ostream& err, const options& o);

} // namespace schedlab::calibrate
