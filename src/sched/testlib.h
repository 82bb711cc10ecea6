// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Test support for the scheduler: a kernel on a small generated machine with
 * every invariant check on, and scripted task behaviours that need no
 * workload layer.
 */
#include "machine/presets.h"
#include "sched/core.h"

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>

namespace schedlab::testlib {

/// A machine of `cores` cores x `smt` threads in one LLC, one socket.
machine small_machine(int cores, int smt = 1);

struct sched_fixture {
    machine m;
    simulation sim;
    std::unique_ptr<kernel> k;

    sched_fixture(machine mach, const std::string& kernel_spec, u64 seed = 1,
                  const std::string& features = "", cost_params costs = no_costs());
    static cost_params no_costs(); ///< zero context-switch and syscall costs, no jitter

    task_struct& spawn(const std::string& comm, std::unique_ptr<task_behaviour> b, int cpu = 0,
                       int nice = 0, int pin_cpu = -1);
    void run_for(sim_dur d) { k->run(sim.now() + d); }
};

/// Runs forever in `chunk`-sized CPU bursts.
std::unique_ptr<task_behaviour> spin(sim_dur chunk = msecs(100));
/// Runs `run` ns then sleeps `sleep` ns, forever (or `loops` times, then exits).
std::unique_ptr<task_behaviour> run_sleep(sim_dur run, sim_dur sleep, int loops = -1);
/// Any behaviour from a lambda.
std::unique_ptr<task_behaviour> behaviour(std::function<task_action(kernel&, task_struct&)> f);

} // namespace schedlab::testlib
