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
#include <vector>

namespace schedlab::testlib {

/// A machine of `cores` cores x `smt` threads in one LLC, one socket.
machine small_machine(int cores, int smt = 1);

/// One rq per CPU of `m`, each with its own idle task (pid 0) current: what the
/// per-CPU parts (cpu_charges, the idle governor) need without a kernel.
struct idle_rqs {
    std::vector<std::unique_ptr<task_struct>> idle;
    std::vector<std::unique_ptr<rq>> rqs;

    explicit idle_rqs(const machine& m);
    rq& operator[](int cpu) { return *rqs[static_cast<std::size_t>(cpu)]; }
};

struct sched_fixture {
    machine m;
    simulation sim;
    std::unique_ptr<run_context> ctx; ///< the kernel's cost model and decision log
    std::unique_ptr<kernel> k;

    sched_fixture(machine mach, const std::string& kernel_spec, u64 seed = 1,
                  const std::string& features = "", cost_params costs = no_costs());
    /// A kernel resolved already (e.g. with an ext policy of the test's own: kc.ext).
    sched_fixture(machine mach, kernel_config kc, u64 seed = 1, cost_params costs = no_costs());
    static cost_params no_costs(); ///< zero context-switch and syscall costs, no jitter

    task_struct& spawn(const std::string& comm, std::unique_ptr<task_behaviour> b, int cpu = 0,
                       int nice = 0, int pin_cpu = -1);
    void run_for(sim_dur d) { k->run(sim.now() + d); }
};

/// Runs forever in `chunk`-sized CPU bursts.
std::unique_ptr<task_behaviour> spin(sim_dur chunk = msecs(100));
/// Runs `run` ns then sleeps `sleep` ns, forever (or `loops` times, then exits).
std::unique_ptr<task_behaviour> run_sleep(sim_dur run, sim_dur sleep, int loops = -1);
/// Runs `run` ns of CPU work once, then exits.
std::unique_ptr<task_behaviour> run_then_exit(sim_dur run);
/// Any behaviour from a lambda.
std::unique_ptr<task_behaviour> behaviour(std::function<task_action(syscalls&, task_struct&)> f);

/*
 * Work conservation in the Wasted-Cores sense: no CPU stays idle for longer
 * than the balancing of the domain it shares with a CPU that has a waiting
 * task allowed to run on it can take. Call sample() periodically. The
 * kernel's own rules set the bound: an idle CPU balances a domain every
 * balance_interval (up to max_interval after balanced attempts); a cache-hot
 * task may be refused cache_nice_tries + 1 times, each failure resetting the
 * interval to min_interval; plus two ticks for the NOHZ kick and its IPI.
 */
struct wasted_cores_checker {
    kernel& k;
    std::vector<sim_time> idle_with_waiting_since; ///< per CPU, -1 when not in violation
    sim_dur worst = 0;       ///< largest excess over the bound seen
    std::string worst_what;  ///< description of that case, with the rq dump

    explicit wasted_cores_checker(kernel& kk);
    void sample();
    int open_now() const;

private:
    int last_src_ = -1;
    const sched_domain* pull_domain(int cpu);
};

} // namespace schedlab::testlib
