// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Measurements of the real machine for `schedlab calibrate`: each probe
 * runs a short timed loop several times on pinned CPUs (real CPU numbers,
 * as sched_setaffinity takes them) and reports the median. A probe that
 * cannot run (a CPU it may not use, a failed fork) throws probe_error.
 *
 * These are the only places in schedlab that read the wall clock or spawn
 * threads; they are never used by a simulation.
 */
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace schedlab::calibrate {

class probe_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// How long a probe may take: at least min_runs runs, then more until max_runs or `seconds`.
struct budget {
    int min_runs = 3;
    int max_runs = 15;
    double seconds = 0.5;
};

struct stats {
    double median = 0;
    double min = 0;
    double max = 0;
    int runs = 0;
};

/// The median, minimum and maximum of the samples (which must not be empty).
stats summarise(std::vector<double> samples);

/*
 * A run's figure from its timed chunks of ops_per_chunk operations each: the
 * median chunk, per operation. A chunk in which another task took the CPU (a
 * slice of milliseconds on a machine other work loads, a VM's host
 * preemption) is an outlier here, where the mean of the run counted it.
 */
double typical_per_op(const std::vector<double>& chunk_ns, int ops_per_chunk);

/// One CPU's times from /proc/stat, in USER_HZ ticks.
struct cpu_ticks {
    long long busy = 0;  ///< user, nice, system, irq, softirq (guest time is in user)
    long long idle = 0;  ///< idle and iowait
    long long steal = 0; ///< time the hypervisor ran something else
};

/// The `cpuN` lines of /proc/stat text, by N; throws probe_error on a malformed one.
std::vector<std::pair<int, cpu_ticks>> parse_proc_stat(const std::string& text);

/// /proc/stat now (empty if it cannot be read).
std::vector<std::pair<int, cpu_ticks>> read_proc_stat();

/*
 * The share of the time between two /proc/stat readings that `cpus` spent
 * idle (idle over idle + busy + steal, summed over them); nullopt when a CPU
 * is missing or no tick passed.
 */
std::optional<double> idle_share(const std::vector<std::pair<int, cpu_ticks>>& before,
                                 const std::vector<std::pair<int, cpu_ticks>>& after,
                                 const std::vector<int>& cpus);

/// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

/// Nanoseconds of one 1-byte write() and one 1-byte read() on a pipe nobody waits on.
struct pipe_syscalls {
    stats write_ns, read_ns;
};
pipe_syscalls probe_pipe_syscalls(int cpu, int ops_per_run, const budget& b);

/*
 * Nanoseconds of one write() and one read() of a `bytes`-byte message on an
 * AF_UNIX stream socket, as perf bench sched messaging sends them: `channels`
 * socket pairs written round-robin, `depth` messages deep into each (the skbs
 * pile up in the receive queues, as they do while a receiver waits to run),
 * then all read back. Nobody sleeps: no wakeups, only the two system calls.
 */
struct socket_syscalls {
    stats write_ns, read_ns;
};
socket_syscalls probe_socket_syscalls(int cpu, int channels, int depth, int bytes,
                                      const budget& b);

/*
 * The read() side of probe_socket_syscalls() on cpu_a when a thread on cpu_b wrote the
 * messages (`remote`) and when a thread on cpu_a did (`local`), runs alternating: `channels`
 * socket pairs filled `depth` deep by the writer, which has finished before the reads start
 * (no waiters, no wakeups). The difference is what reading data another core wrote costs.
 */
struct socket_cross_read {
    stats local, remote;
};
socket_cross_read probe_socket_cross_read(int cpu_a, int cpu_b, int channels, int depth,
                                          int bytes, const budget& b);

/*
 * Round trip of a 1-byte pipe ping-pong between this process (pinned to
 * cpu_a) and a forked child (pinned to cpu_b), as `perf bench sched pipe`
 * does in its default process mode: nanoseconds per round trip. A short
 * trial scales the runs down from round_trips_per_run when a round trip is
 * so slow that min_runs runs would overrun the budget. With busy_target
 * SCHED_IDLE threads spin on both CPUs, so each wakeup reaches a running
 * CPU (no idle exit). A run's figure is its median round trip, each timed
 * alone (typical_per_op()). With waking_write the result is instead the time
 * of the write() alone, the one that wakes the child (the median of a run's
 * writes), both sides SCHED_BATCH so no wakeup preempts: on top of a write
 * that wakes a task on the same CPU, a cross-CPU one pays for sending the IPI.
 */
stats probe_pipe_round_trip(int cpu_a, int cpu_b, int round_trips_per_run, const budget& b,
                            bool busy_target = false, bool waking_write = false);

/// A tracefs per_cpu/cpuN/stats text's `entries:` and `overrun:` counts; throws probe_error
/// naming the missing one.
struct ring_buffer_counts {
    long long entries = 0, overrun = 0;
};
ring_buffer_counts parse_ring_buffer_stats(const std::string& text);

/// The event set of a trace recording (../shared/traces/record_tracefs.sh, docs/replay.md).
extern const char* const traced_sched_events[7];

/*
 * What one enabled sched tracepoint costs the CPU that emits it (sched_tracepoint): the
 * pipe ping-pong of probe_pipe_round_trip() on one CPU, run after run without and with
 * traced_sched_events enabled in the tracefs at `tracefs` (tracing on during the timed
 * round trips only, into that CPU's ring buffer, sized for them), the events counted from
 * that CPU's ring-buffer stats (other tasks' events there included: a few). Per pair of
 * runs: (traced - untraced) / events per round trip. Throws probe_error, touching
 * nothing, when tracefs is not writable (not root, not mounted) or already in use (tracing
 * on, or events enabled); restores the tracer, the events, that CPU's buffer size and
 * tracing_on (off) after.
 */
struct tracepoint_cost {
    stats untraced_ns, traced_ns, per_event_ns;
    double events_per_round_trip = 0;
};
tracepoint_cost probe_tracepoint_cost(int cpu, int iters, const budget& b,
                                      const std::string& tracefs = "/sys/kernel/tracing");

/*
 * The write() that wakes a SCHED_BATCH partner (whose wakeup never preempts),
 * timed alone: `local` with the partner on the writer's CPU cpu_a, `remote`
 * with it on cpu_b while a nice-0 spinner keeps cpu_b busy, so the writer
 * takes cpu_b's runqueue lock and enqueues there itself (no wake list, no
 * IPI). The difference is what activating a task on another CPU's runqueue
 * costs the waker. The partner runs only when the spinner's slice ends, so
 * a round trip takes up to a tick: keep `iters` small.
 */
struct remote_wakeup {
    stats local, remote;
};
remote_wakeup probe_remote_wakeup(int cpu_a, int cpu_b, int iters, const budget& b);

/// Round trip of a cache line bounced between two pinned threads (std::atomic), in ns.
stats probe_line_round_trip(int cpu_a, int cpu_b, int round_trips_per_run, const budget& b);

/*
 * Nanoseconds per KiB to read `bytes` owned (first touched) by a thread on
 * owner_cpu from a thread on reader_cpu, one load per 64-byte line in a
 * shuffled order inside each 2 MiB window (so hardware prefetchers do not
 * hide the misses), the way a migrated task refills its working set. With
 * `warm` the buffer is read once before timing (it then sits in whatever
 * cache holds it).
 */
stats probe_random_read(int reader_cpu, int owner_cpu, std::size_t bytes, bool warm,
                        const budget& b);

/*
 * Nanoseconds per load of a pointer chase on `cpu`: a warm `bytes` buffer (rounded down to
 * whole 64-byte lines, at least 64 KiB) whose lines are linked into one cycle in a shuffled
 * order, each load's address read by the one before it, so no two overlap and no prefetcher
 * guesses the next: the load-to-use latency of the cache level the buffer fits in (a buffer
 * larger than L2 and inside the LLC: an LLC hit). Transparent huge pages are asked for
 * (madvise, where allowed), as the kernel's own objects sit in its direct map's large pages.
 * A run's figure is its median chunk of 16384 loads (typical_per_op()).
 */
stats probe_pointer_chase(int cpu, std::size_t bytes, const budget& b);

/// MB/s (10^6 bytes/s) of a sequential read of `bytes` split across threads pinned to `cpus`.
stats probe_stream_read(const std::vector<int>& cpus, std::size_t bytes, const budget& b);

/*
 * Progress of each of two threads busy on cpu_a and cpu_b at once, in
 * percent of one thread alone on cpu_a (an integer loop with some
 * instruction-level parallelism). About 100 for separate cores, less for
 * SMT siblings.
 */
stats probe_pair_share(int cpu_a, int cpu_b, double seconds_per_phase, const budget& b);

/*
 * A ring of `tasks` members on `cpu` passing one byte round through pipes, `laps`
 * times after a warm-up lap, as processes (this thread and forked children) or as
 * threads of this process: nanoseconds of the members' CPU time (each its own
 * CLOCK_THREAD_CPUTIME_ID over the timed laps, summed) per hop. Every hop is a
 * context switch to the next member; with more members than x86's six dynamic ASIDs
 * per CPU (TLB_NR_DYN_ASIDS), each switch between processes loads an mm whose ASID
 * was taken and flushes, which a switch between threads of one process never does.
 */
stats probe_mm_ring(int cpu, int tasks, int laps, bool processes, const budget& b);

/*
 * What creating a task costs, as CPU time (CLOCK_*_CPUTIME_ID), so preemption
 * between the creator and the child does not count: the creator's around
 * pthread_create() (the child pinned to the creator's CPU) and around fork();
 * the new thread's own at the first line of its start routine, created onto
 * the creator's CPU (`thread_start`) and onto cpu_b (`thread_start_remote`,
 * absent when cpu_b < 0); the forked child's own when fork() returns in it.
 * `creations` threads are alive at once (each waits for the batch to end), as
 * perf bench's workers are; processes are created and reaped one by one.
 */
struct task_creation {
    stats thread_create, thread_start, process_fork, process_start;
    std::optional<stats> thread_start_remote;
};
task_creation probe_task_creation(int cpu_a, int cpu_b, int creations, const budget& b);

/// `perf bench sched pipe -l LOOPS`: its usecs/op, or nullopt (with `why`) if perf does not run.
std::optional<double> perf_bench_pipe_usecs(int loops, std::string& why);

/*
 * `perf bench sched messaging ARGS` run on one CPU (the perf process and its
 * children inherit the affinity): its "Total time" in seconds, or nullopt
 * (with `why`) if perf does not run or prints no time.
 */
std::optional<double> perf_bench_messaging_seconds(const std::string& args, int cpu,
                                                   std::string& why,
                                                   double* cpu_share = nullptr);
/*
 * cpu_share, if given, gets the CPU time of perf and all its children
 * (getrusage(RUSAGE_CHILDREN) across the run) over the run's wall time: about 1
 * when they had their CPU to themselves, less when other tasks ran there (and
 * perf's wall-clock Total time holds their time too).
 */

} // namespace schedlab::calibrate
