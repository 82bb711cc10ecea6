// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * rt-app JSON workloads (scheduler-tools/rt-app 1.0 as packaged by Debian;
 * doc/tutorial.txt): `rt-app FILE.json`. The file's
 * tasks, phases, instances and loops become threads running their events
 * in order: run, runtime, sleep, timer, lock/unlock, wait/signal/broad/sync,
 * suspend/resume, barrier, fork, yield, mem/iorun/memrun, sem_post/sem_wait.
 *
 * What is kept: SCHED_OTHER/BATCH/IDLE with "priority" as the nice value,
 * SCHED_FIFO/RR with "priority", SCHED_DEADLINE with dl-runtime, dl-period and
 * dl-deadline (or the legacy runtime/period/deadline; in usec, as rt-app's:
 * period defaults to runtime, deadline to period; a thread whose request the
 * kernel refuses, e.g. -EBUSY, is an error naming file, task and key),
 * task-level "cpus", "delay", "instance" (0: only via fork), loops, the
 * global "duration" (the use case stops then). What is ignored, with one
 * warning per key: logging (logdir, log_basename, log_size, ftrace,
 * gnuplot), calibration (a run event is its duration of CPU at full
 * capacity), lock_pages, pi_enabled (no priority inheritance), io_device,
 * mem_buffer_size, cumulative_slack, the legacy "resources" object,
 * nodes_membind. What is not modelled is an error naming the key unless
 * --downgrade-unmodelled: util_min/util_max, taskgroup, and phase-level
 * cpus/policy/priority/dl-* (no sched_setaffinity/sched_setattr while
 * running yet). rt-app 0.x files (exec/period/lock_order/resources per task) are
 * refused, as are malformed files, with file:line:col.
 *
 * `--duration SECONDS` (schedlab only) overrides global.duration, so files
 * meant to run forever can be run briefly. At the end of the duration the
 * threads stop at their next event (a blocked thread at once) as rt-app's
 * shutdown does; a run event in progress completes first.
 *
 * The report summarises rt-app's per-thread log (one line per thread:
 * activations of its phases, run time, mean period, worst slack and timer
 * wakeup latency); rt-app writes those as log files.
 */
#include "workload/program.h"
#include "workload/rtapp_json.h"
#include "workload/workload.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

/// One event of a phase, after parsing.
struct rtapp_event {
    enum kind_t : u8 {
        run, runtime, sleep, timer, lock, unlock, wait, signal, broad, sync, suspend, resume,
        barrier, fork, yield, mem, iorun, sem_post, sem_wait,
    } kind;
    std::string key;      ///< as written ("run0")
    sim_dur ns = 0;       ///< run, runtime, sleep, timer period; mem/iorun: CPU time
    std::string ref;      ///< the resource / timer / task / condition name
    std::string mutex;    ///< wait, sync
    bool absolute = false; ///< timer mode
    int line = 0;
};

struct rtapp_phase {
    std::string name;
    long long loop = 1;
    std::vector<rtapp_event> events;
};

struct rtapp_task {
    std::string name;
    long long instance = 1;
    long long loop = -1;     ///< -1: forever
    sim_dur delay = 0;
    int policy = 0;          ///< SCHED_NORMAL / SCHED_BATCH / SCHED_IDLE / SCHED_FIFO / SCHED_RR
    int nice = 0;
    int rt_priority = 0;     ///< SCHED_FIFO / SCHED_RR: 1..99 ("priority", default 10)
    /// SCHED_DEADLINE: dl-runtime, dl-deadline, dl-period in ns (rt-app's defaults applied)
    u64 dl_runtime = 0, dl_deadline = 0, dl_period = 0;
    std::string dl_key;      ///< the key that asked for the reservation (errors name it)
    int dl_line = 0;         ///< ... and its line
    std::vector<int> cpus;   ///< empty: all
    std::vector<rtapp_phase> phases;
    int line = 0;
};

struct rtapp_config {
    std::string file;
    sim_dur duration = -1; ///< -1: until every thread ends
    std::vector<rtapp_task> tasks;
    std::map<std::string, u32> barrier_users; ///< barrier -> instances x uses
    std::vector<std::string> warnings;        ///< one per ignored key
};

/// Parses an rt-app file (already read); config_error with file:line:col on bad input,
/// and for a scheduling request the model cannot honour unless `downgrade`
/// (--downgrade-unmodelled: then a warning, and the request is ignored).
rtapp_config rtapp_parse(const rtj_value& root, const std::string& file, bool downgrade = false);

struct rtapp_params {
    std::string file;
    sim_dur duration = -2; ///< --duration; -2: the file's
    bool downgrade = false; ///< --downgrade-unmodelled
};

rtapp_params parse_rtapp_options(const std::vector<std::string>& args);

class rtapp_workload final : public workload {
public:
    rtapp_workload(rtapp_params rp, rtapp_config cfg) : rp_(std::move(rp)), cfg_(std::move(cfg)) {}

    std::string name() const override { return "rt-app"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override { return finished_; }
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;

    const rtapp_config& config() const { return cfg_; }
    const std::vector<std::string>& warnings() const { return cfg_.warnings; }
    sim_dur duration() const { return rp_.duration != -2 ? rp_.duration : cfg_.duration; }

    /// Per thread: what rt-app logs per phase activation, summed.
    struct thread_log {
        std::string name;
        const rtapp_task* task = nullptr;
        task_struct* p = nullptr;
        u64 activations = 0;
        sim_dur run = 0;          ///< CPU time of run/runtime events
        sim_dur period_sum = 0;   ///< sum of activation durations
        sim_dur slack_min = 0;
        bool has_slack = false;
        sim_dur wu_lat_max = 0;
        sim_dur wu_lat_sum = 0;
        u64 timer_wakeups = 0;
        u64 events = 0;           ///< events executed
        bool exited = false;
    };
    const std::vector<thread_log>& threads() const { return logs_; }

    /// The shared objects of the threads.
    struct sync_obj {
        task_struct* owner = nullptr; ///< mutex
        wait_queue waiters;
        u64 count = 0;                ///< semaphore value; barrier arrivals
        u64 generation = 0;           ///< barrier
        u32 parties = 0;              ///< barrier
    };
    struct timer_obj {
        bool init = false;
        sim_time next = 0;
    };

private:
    /// A thread's position in its task: phase, phase loop, event, task loop.
    struct cursor {
        std::size_t phase = 0;
        long long phase_iter = 0;
        std::size_t ev = 0;
        long long task_iter = 0;
        sim_time act_start = 0; ///< start of the current activation
    };
    /// What the shutdown needs of a thread.
    struct thread_ctl {
        task_struct* task = nullptr;
        task_context* ctx = nullptr;
        wait_queue* blocked_on = nullptr; ///< the queue it sleeps on, if any
        sim_time thread_start = 0;
    };
    sync_obj& mutex(const std::string& n) { return mutexes_[n]; }
    sync_obj& cond(const std::string& n) { return conds_[n]; }
    sync_obj& barrier(const std::string& n) { return barriers_[n]; }
    sync_obj& sem(const std::string& n) { return sems_[n]; }
    timer_obj& timer(const std::string& n) { return timers_[n]; }
    std::string resolve_timer(const std::string& ref, std::size_t log) const;
    void start_thread(syscalls& sys, task_struct* parent, const rtapp_task& t, int index);
    void stop_all(syscalls& sys);
    bool advance(cursor& cur, const rtapp_task& task, std::size_t log, sim_time now);
    call_awaiter<calls::sleep_on> block_on(task_context& t, wait_queue& wq, std::size_t log);
    task_code run_main(task_context& t);
    task_code run_thread(task_context& t, const rtapp_task& task, std::size_t log);
    task_code run_event(task_context& t, const rtapp_event& e, std::size_t log);
    task_code timer_event(task_context& t, const rtapp_event& e, std::size_t log);
    task_code cond_wait(task_context& t, const rtapp_event& e, std::size_t log);

    rtapp_params rp_;
    rtapp_config cfg_;
    workload_state state_;
    std::vector<thread_log> logs_;
    std::map<std::string, sync_obj> mutexes_;
    std::map<std::string, sync_obj> conds_;
    std::map<std::string, sync_obj> barriers_;
    std::map<std::string, sync_obj> sems_;
    std::map<std::string, timer_obj> timers_;
    std::map<std::string, int> fork_counts_;
    std::vector<thread_ctl> ctl_;   ///< per thread, as logs_
    std::vector<std::size_t> live_; ///< threads not yet exited, in start order
    counter* joined_ = nullptr;
    u64 nr_started_ = 0;
    sim_time start_ = 0;
    sim_time end_ = 0;
    bool finished_ = false;
};

std::unique_ptr<workload> make_rtapp_workload(const std::vector<std::string>& args);

} // namespace schedlab
