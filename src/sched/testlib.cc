// SPDX-License-Identifier: GPL-2.0-only
#include "sched/testlib.h"

namespace schedlab::testlib {

machine small_machine(int cores, int smt)
{
    symmetric_machine_spec s;
    s.name = fmt::format("test-{}c-smt{}", cores, smt);
    s.cores_per_socket = cores;
    s.threads_per_core = smt;
    return make_symmetric_machine(s, "testlib");
}

cost_params sched_fixture::no_costs()
{
    cost_params c;
    for (auto& [name, v] : cost_list(c))
        set_cost(c, fmt::format("{}=0", name), "testlib");
    return c;
}

sched_fixture::sched_fixture(machine mach, const std::string& kernel_spec, u64 seed,
                             const std::string& features, cost_params costs)
    : m(std::move(mach)), sim(seed)
{
    kernel_config kc = make_kernel_config(kernel_spec);
    if (!features.empty())
        apply_features(kc, features, "testlib");
    k = std::make_unique<kernel>(sim, m, kc, costs);
    k->set_check_level(check_level::every);
}

task_struct& sched_fixture::spawn(const std::string& comm, std::unique_ptr<task_behaviour> b,
                                  int cpu, int nice, int pin_cpu)
{
    task_opts o;
    o.comm = comm;
    o.cpu = cpu;
    o.nice = nice;
    if (pin_cpu >= 0) {
        o.allowed = cpumask(m.nr_cpus());
        o.allowed.set(pin_cpu);
    }
    return k->spawn(std::move(b), o);
}

namespace {
struct lambda_behaviour final : task_behaviour {
    std::function<task_action(kernel&, task_struct&)> f;
    task_action step(kernel& k, task_struct& p) override { return f(k, p); }
};
} // namespace

std::unique_ptr<task_behaviour> behaviour(std::function<task_action(kernel&, task_struct&)> f)
{
    auto b = std::make_unique<lambda_behaviour>();
    b->f = std::move(f);
    return b;
}

std::unique_ptr<task_behaviour> spin(sim_dur chunk)
{
    return behaviour([chunk](kernel&, task_struct&) { return task_action::cpu(chunk); });
}

std::unique_ptr<task_behaviour> run_sleep(sim_dur run, sim_dur sleep, int loops)
{
    // phase 0: run; phase 1: sleep
    auto phase = std::make_shared<int>(0);
    auto left = std::make_shared<int>(loops);
    return behaviour([=](kernel& k, task_struct& p) {
        if (*phase == 0) {
            if (*left == 0)
                return task_action::do_exit();
            *phase = 1;
            return task_action::cpu(run);
        }
        *phase = 0;
        if (*left > 0)
            --*left;
        k.schedule_timeout(p, sleep);
        return task_action::sleep();
    });
}

} // namespace schedlab::testlib
