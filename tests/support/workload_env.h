// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Test scaffolding for the workload tests (the _test.cc files of src/workload): a small
 * machine, a kernel with every invariant check on, and helpers to spawn
 * programs or scripted tasks. It builds a whole kernel, as the experiment
 * layer does for a run, so it lives outside src/workload, whose code reaches
 * the kernel through sched/syscalls.h only.
 */
#include "machine/presets.h"
#include "sched/core.h"
#include "sched/profiles.h"
#include "workload/program.h"

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>

namespace schedlab::testing {

/// 1 socket, `cores` cores, no SMT, one LLC.
inline machine small_machine(int cores)
{
    symmetric_machine_spec s;
    s.name = fmt::format("test-1s-{}c", cores);
    s.cores_per_socket = cores;
    return make_symmetric_machine(s, s.name);
}

/// `c` with the hardware side of the cost model (cache refills, locks and cache
/// lines, IPIs and idle exits, scans and balancing) zeroed, so that tests can
/// check the system-call accounting exactly.
inline cost_params without_hardware_costs(cost_params c)
{
    for (sim_dur* v :
         {&c.ipi_wakeup, &c.cstate_c1_exit, &c.cstate_deep_exit, &c.line_smt, &c.line_llc,
          &c.line_pkg, &c.line_remote, &c.refill_llc_per_kib, &c.refill_mem_per_kib,
          &c.refill_remote_per_kib, &c.rq_lock_hold, &c.atomic_op, &c.idle_scan_probe, &c.lb_base,
          &c.lb_scan_per_cpu, &c.lb_migrate_task})
        *v = 0;
    return c;
}

/// The default costs without their random jitter, so that a test can check exact times.
inline cost_params no_jitter()
{
    cost_params c;
    c.jitter_pct = 0;
    return c;
}

struct test_env {
    explicit test_env(int cores, u64 seed = 1, const std::string& profile = "6.6",
                      cost_params costs = {})
        : m(small_machine(cores)), sim(seed), ctx(sim, m, without_hardware_costs(costs)),
          k(sim, m, make_kernel_config(profile), ctx)
    {
        k.set_check_level(check_level::every);
    }

    task_struct& spawn(program_ptr prog, workload_state& st, const std::string& comm, int cpu = 0,
                       counter* exit_notify = nullptr)
    {
        task_opts o;
        o.comm = comm;
        o.cpu = cpu;
        return k.spawn(make_program_task(std::move(prog), st, exit_notify), o);
    }

    /// Spawns a task pinned to `cpu`.
    task_struct& spawn_pinned(program_ptr prog, workload_state& st, const std::string& comm,
                              int cpu)
    {
        task_opts o;
        o.comm = comm;
        o.cpu = cpu;
        o.allowed = cpumask(m.nr_cpus());
        o.allowed.set(cpu);
        return k.spawn(make_program_task(std::move(prog), st), o);
    }

    /// Spawns a task of any behaviour pinned to `cpu`, with `policy` (SCHED_FIFO at
    /// rt_priority 50).
    task_struct& spawn_pinned(std::unique_ptr<task_behaviour> b, const std::string& comm, int cpu,
                              int policy = SCHED_NORMAL)
    {
        task_opts o;
        o.comm = comm;
        o.cpu = cpu;
        o.allowed = cpumask(m.nr_cpus());
        o.allowed.set(cpu);
        o.policy = policy;
        o.rt_priority = policy == SCHED_FIFO ? 50 : 0;
        return k.spawn(std::move(b), o);
    }

    machine m;
    simulation sim;
    run_context ctx; ///< the kernel's cost model and decision log
    kernel k;
};

/// A task whose step() is a test function; `n` counts its calls.
class scripted final : public task_behaviour {
public:
    using fn_t = std::function<task_action(syscalls&, task_struct&, int n)>;
    explicit scripted(fn_t f) : f_(std::move(f)) {}
    task_action step(syscalls& k, task_struct& p) override { return f_(k, p, n_++); }

private:
    fn_t f_;
    int n_ = 0;
};

inline task_struct& spawn_scripted(kernel& k, scripted::fn_t f, const std::string& comm,
                                   int cpu = 0)
{
    task_opts o;
    o.comm = comm;
    o.cpu = cpu;
    return k.spawn(std::make_unique<scripted>(std::move(f)), o);
}

} // namespace schedlab::testing
