// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * hackbench as `perf bench sched messaging` (tools/perf/bench/sched-messaging.c;
 * docs/workloads.md). Per group, 20 receivers each own one channel
 * (a pipe with -p, else an AF_UNIX SOCK_STREAM socketpair) and 20 senders
 * each write 100 bytes to every receiver's channel, round-robin, `loops`
 * times; every receiver reads 20 * loops messages of 100 bytes. All workers
 * announce themselves on a shared "ready" channel and poll a shared "wake"
 * channel; the main task times from its write to "wake" (a thundering herd)
 * until it has reaped every worker. Groups never talk to each other.
 *
 * Pipes hold pipe->mutex (workload/mutex.h): 20 senders write to each receiver's
 * pipe, so they contend for it. Not modelled: the socket locks, cache/memory effects of the
 * copies beyond costs().copy_per_kib, fd-table and mm sharing costs other
 * than fork_process vs fork_thread, and perf's output format option (-f).
 */
#include "workload/program.h"
#include "workload/workload.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

struct messaging_params {
    static constexpr unsigned num_fds = 20; ///< perf: hard-coded receivers (and senders) per group
    static constexpr unsigned datasize = 100; ///< perf: DATASIZE bytes per message

    unsigned groups = 10; ///< -g/--group
    unsigned loops = 100; ///< -l/--nr_loops
    bool pipe = false;    ///< -p/--pipe: pipe() instead of socketpair()
    bool thread = false;  ///< -t/--thread: pthreads instead of fork()
};

/// Parses perf's options (the argv after "messaging"); config_error names a bad option.
messaging_params parse_messaging_options(const std::vector<std::string>& args);

class messaging_workload final : public workload {
public:
    explicit messaging_workload(messaging_params mp) : mp_(mp) {}

    std::string name() const override { return "sched/messaging"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override;
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;
    std::string summary() const override { return state_.mutex_summary(); }

    const messaging_params& params() const { return mp_; }
    const workload_state& state() const { return state_; }
    unsigned nr_workers() const { return mp_.groups * 2 * messaging_params::num_fds; }
    /// Workers that have exited so far.
    u64 nr_workers_exited() const;
    /// Bytes read by the receivers from their group channels.
    u64 bytes_received() const;
    /// gettimeofday() stop - start, microsecond resolution, once finished.
    std::optional<sim_dur> elapsed_usec() const;
    task_struct* main_task() const { return main_; }

private:
    task_code run_main(task_context& t, channel& ready, channel& wake);
    task_code run_receiver(task_context& t, channel& ready, channel& wake, channel& ch);
    task_code run_sender(task_context& t, channel& ready, channel& wake, unsigned group);

    messaging_params mp_;
    workload_state state_;
    std::vector<channel*> group_channels_;
    std::vector<counter*> exit_counters_; ///< process mode: one; thread mode: one per worker
    counter* wait_chldexit_ = nullptr;    ///< process mode: the parent's wait queue
    task_struct* main_ = nullptr;
};

std::unique_ptr<workload> make_messaging_workload(const std::vector<std::string>& args);

/// perf's "Total time" line from an elapsed time in microseconds: " %14s: %lu.%03lu [sec]".
std::string perf_total_time_line(sim_dur usec);

} // namespace schedlab
