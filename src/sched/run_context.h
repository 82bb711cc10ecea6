// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * What a run hands the kernel it simulates besides the machine and the profile: the
 * cost model applied to the CPUs (cpu_charges.h) and the decision log (decision_log.h).
 *
 * model: neither is the kernel's state. On a real machine the work simply takes the
 * time, and nothing explains the scheduler's choices; both are the simulator's, so
 * the kernel does not own them. Whoever builds a kernel (the experiment layer's
 * execute_run(), the test fixtures, the benchmarks) builds one run_context for it,
 * keeps it alive while the kernel lives, and sets the decision log's sink on it. The
 * kernel binds the charges to its runqueues once, in its constructor
 * (cpu_charges::attach), and reaches both only through kernel::charges() and
 * kernel::decisions(); a context serves one kernel.
 */
#include "machine/costs.h"
#include "machine/machine.h"
#include "sched/cpu_charges.h"
#include "sched/decision_log.h"
#include "sim/simulation.h"

namespace schedlab {

struct run_context {
    /// The cost model of machine `m` priced from `costs`, charging time on `sim`.
    run_context(simulation& sim, const machine& m, const cost_params& costs)
        : charges(sim, m, costs)
    {
    }
    run_context(const run_context&) = delete;
    run_context& operator=(const run_context&) = delete;

    cpu_charges charges;    ///< the cost model applied to the CPUs
    decision_log decisions; ///< off unless a sink is set
};

} // namespace schedlab
