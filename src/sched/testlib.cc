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

idle_rqs::idle_rqs(const machine& m)
{
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu) {
        auto r = std::make_unique<rq>();
        r->cpu = cpu;
        auto t = std::make_unique<task_struct>();
        t->pid = 0;
        t->cpu = cpu;
        r->idle = t.get();
        r->curr = t.get();
        idle.push_back(std::move(t));
        rqs.push_back(std::move(r));
    }
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
    ctx = std::make_unique<run_context>(sim, m, costs);
    k = std::make_unique<kernel>(sim, m, kc, *ctx);
    k->set_check_level(check_level::every);
}

sched_fixture::sched_fixture(machine mach, kernel_config kc, u64 seed, cost_params costs)
    : m(std::move(mach)), sim(seed)
{
    ctx = std::make_unique<run_context>(sim, m, costs);
    k = std::make_unique<kernel>(sim, m, std::move(kc), *ctx);
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
    std::function<task_action(syscalls&, task_struct&)> f;
    task_action step(syscalls& sys, task_struct& p) override { return f(sys, p); }
};
} // namespace

std::unique_ptr<task_behaviour> behaviour(std::function<task_action(syscalls&, task_struct&)> f)
{
    auto b = std::make_unique<lambda_behaviour>();
    b->f = std::move(f);
    return b;
}

std::unique_ptr<task_behaviour> spin(sim_dur chunk)
{
    return behaviour([chunk](syscalls&, task_struct&) { return task_action::cpu(chunk); });
}

std::unique_ptr<task_behaviour> run_then_exit(sim_dur run)
{
    auto done = std::make_shared<bool>(false);
    return behaviour([=](syscalls&, task_struct&) {
        if (*done)
            return task_action::do_exit();
        *done = true;
        return task_action::cpu(run);
    });
}

std::unique_ptr<task_behaviour> run_sleep(sim_dur run, sim_dur sleep, int loops)
{
    // phase 0: run; phase 1: sleep
    auto phase = std::make_shared<int>(0);
    auto left = std::make_shared<int>(loops);
    return behaviour([=](syscalls& k, task_struct& p) {
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

wasted_cores_checker::wasted_cores_checker(kernel& kk)
    : k(kk), idle_with_waiting_since(static_cast<std::size_t>(kk.nr_cpu_ids()), -1)
{
}

// The smallest domain of `cpu` holding a CPU with a waiting task allowed on `cpu`.
const sched_domain* wasted_cores_checker::pull_domain(int cpu)
{
    for (const auto& sd : k.topology().cpu(cpu).domains)
        for_each_cpu(j, sd->span) {
            const rq& r = k.cpu_rq(j);
            if (j == cpu || r.nr_running < 2)
                continue;
            for (const task_struct* p : r.cfs_tasks)
                if (p != r.curr && p->cpus_mask.test(cpu)) {
                    last_src_ = j;
                    return sd.get();
                }
        }
    return nullptr;
}

void wasted_cores_checker::sample()
{
    const sim_time now = k.now();
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu) {
        auto& since = idle_with_waiting_since[static_cast<std::size_t>(cpu)];
        const sched_domain* sd = k.idle_cpu(cpu) ? pull_domain(cpu) : nullptr;
        if (!sd) {
            since = -1;
            continue;
        }
        if (since < 0)
            since = now;
        const sim_dur waited = now - since;
        const sim_dur bound = msecs(sd->max_interval + (sd->cache_nice_tries + 1) * sd->min_interval) +
                              2 * static_cast<sim_dur>(k.config().params.tick_nsec());
        if (waited > bound && waited - bound > worst) {
            worst = waited - bound;
            std::string core;
            for_each_cpu(s, k.mach().smt_mask(last_src_))
                core += fmt::format(" cpu{}:{}", s, k.idle_cpu(s) ? "idle" : "busy");
            worst_what = fmt::format("cpu{} idle {} us while {} had waiting work on cpu{} "
                                     "(nr_running {}; its core:{}) (bound {} us)\n{}",
                                     cpu, waited / 1000, sd->name, last_src_,
                                     k.cpu_rq(last_src_).nr_running, core, bound / 1000,
                                     k.print_rq(cpu));
        }
    }
}

int wasted_cores_checker::open_now() const
{
    int n = 0;
    for (sim_time t : idle_with_waiting_since)
        n += t >= 0;
    return n;
}

} // namespace schedlab::testlib
