// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * will-it-scale context_switch1 (antonblanchard/will-it-scale main.c and
 * tests/context_switch1.c), in its two builds:
 * `context_switch1_processes` and `context_switch1_threads`. The harness
 * starts -t copies, each bound (hwloc order) to one core by default, to one
 * hardware thread with -m, or not at all with -n; a copy creates a partner
 * (fork or pthread_create, inheriting the binding) and the two ping-pong a
 * byte through two pipes, the copy adding 2 to its counter per round trip.
 * Once a second the harness prints the per-copy deltas; after 5 warm-up
 * seconds it averages -s samples.
 *
 * schedlab additions (not will-it-scale options): --warmup N (the harness's
 * fixed 5 warm-up samples) and --interval SECONDS (its fixed 1 s sample
 * period), so tests can run short; with them the printed figures are per
 * interval, and metrics() converts to per second. -s 0 (run until killed,
 * main.c's default) is refused; schedlab's default -s is 5 (the README's).
 */
#include "machine/machine.h"
#include "workload/program.h"
#include "workload/workload.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

enum class wis_binding { core, smt, none };

struct wis_params {
    bool threads = false;                       ///< the _threads build (else _processes)
    unsigned tasks = 1;                         ///< -t
    unsigned iterations = 5;                    ///< -s samples averaged
    wis_binding binding = wis_binding::core;    ///< default, -m, -n
    unsigned warmup = 5;                        ///< --warmup (schedlab only; WARMUP_ITERATIONS)
    sim_dur interval = secs(1);                 ///< --interval (schedlab only)
};

wis_params parse_wis_options(const std::vector<std::string>& args, bool threads);

/// The CPUs copy `i` is bound to: hwloc's i-th core (or PU with -m), modulo their number.
cpumask wis_binding_mask(const machine& m, wis_binding b, unsigned i);

class context_switch1_workload final : public workload {
public:
    explicit context_switch1_workload(wis_params wp) : wp_(wp) {}

    std::string name() const override
    {
        return wp_.threads ? "context_switch1_threads" : "context_switch1_processes";
    }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override { return finished_; }
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;

    const wis_params& params() const { return wp_; }
    const std::vector<u64>& counters() const { return iterations_; }
    u64 average() const { return average_; }
    const workload_state& state() const { return state_; }
    /// The copies and their partners, as created.
    const std::vector<task_struct*>& copies() const { return copies_; }
    const std::vector<task_struct*>& partners() const { return partners_; }

private:
    void sample();
    task_code run_harness(task_context& t);
    task_code run_copy(task_context& t, unsigned i);
    task_code run_partner(task_context& t, unsigned i);

    struct copy_objs {
        pipe_channel* a = nullptr;       ///< copy -> partner
        pipe_channel* b = nullptr;       ///< partner -> copy
        counter* partner_exit = nullptr; ///< the copy's wait for its partner
    };

    wis_params wp_;
    workload_state state_;
    std::vector<u64> iterations_; ///< the per-copy counters in the shared area
    std::vector<u64> prev_;
    std::vector<task_struct*> copies_;
    std::vector<task_struct*> partners_;
    std::vector<copy_objs> objs_;
    pipe_channel* start_ = nullptr; ///< the start pipe every copy polls
    counter* reaped_ = nullptr;     ///< the harness's wait for the copies
    std::string out_;
    unsigned iter_ = 0;
    u64 total_ = 0;
    u64 average_ = 0;
    bool stop_ = false;
    bool finished_ = false;
};

std::unique_ptr<workload> make_context_switch1_processes(const std::vector<std::string>& args);
std::unique_ptr<workload> make_context_switch1_threads(const std::vector<std::string>& args);

} // namespace schedlab
