// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * `perf bench sched pipe` (tools/perf/bench/sched-pipe.c):
 * two tasks ping-pong a 4-byte token through two pipes, `loops` times.
 *
 * Two loop shapes exist in perf's history:
 * - classic (perf up to early 2025): task 0 reads then writes, task 1 writes
 *   then reads, so one token circulates (strict ping-pong);
 * - 2025 (Dirk Gouders' "fix enforced blocking reads in worker_thread"): both
 *   tasks write then read, so two tokens are in flight.
 * perf has no option for this; schedlab selects it with --variant=classic|2025,
 * which is NOT a perf option (default: classic).
 *
 * Not modelled: -G/--cgroups (no task groups yet), -n/--nonblocking (epoll),
 * newer write-size options; perf's output format option (-f).
 */
#include "workload/program.h"
#include "workload/workload.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

enum class pipe_loop_variant { classic, v2025 };

struct perf_pipe_params {
    static constexpr u64 msg_size = 4; ///< sizeof(int)

    unsigned loops = 1'000'000;                             ///< -l/--loop
    bool threaded = false;                                  ///< -T/--threaded
    pipe_loop_variant variant = pipe_loop_variant::classic; ///< --variant (schedlab only)
};

/// Parses perf's options (the argv after "pipe"); config_error names a bad option.
perf_pipe_params parse_perf_pipe_options(const std::vector<std::string>& args);

class perf_pipe_workload final : public workload {
public:
    explicit perf_pipe_workload(perf_pipe_params pp) : pp_(pp) {}

    std::string name() const override { return "sched/pipe"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override;
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;
    std::string summary() const override { return state_.mutex_summary(); }

    const perf_pipe_params& params() const { return pp_; }
    const workload_state& state() const { return state_; }
    std::optional<sim_dur> elapsed_usec() const;
    task_struct* main_task() const { return main_; }

private:
    task_code run_main(task_context& t);
    task_code run_worker(task_context& t, int nr);

    perf_pipe_params pp_;
    workload_state state_;
    task_struct* main_ = nullptr;
    channel* pipe_1_ = nullptr; ///< worker 1 -> worker 0
    channel* pipe_2_ = nullptr; ///< worker 0 -> worker 1
    counter* join_[2] = {};     ///< threaded: pthread_join() of each worker
    counter* chld_ = nullptr;   ///< processes: the main task's wait_chldexit
};

std::unique_ptr<workload> make_perf_pipe_workload(const std::vector<std::string>& args);

} // namespace schedlab
