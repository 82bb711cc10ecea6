// SPDX-License-Identifier: GPL-2.0-only
/*
 * will-it-scale context_switch1: see will_it_scale.h.
 */
#include "workload/will_it_scale.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace schedlab {

wis_params parse_wis_options(const std::vector<std::string>& args, bool threads)
{
    const std::string where =
        threads ? "context_switch1_threads" : "context_switch1_processes";
    wis_params wp;
    wp.threads = threads;
    bool smt = false;
    bool none = false;
    std::string interval;
    const std::vector<option_spec> specs = {
        {.short_name = 't', .uinteger = &wp.tasks, .help = "copies"},
        {.short_name = 's', .uinteger = &wp.iterations, .help = "samples"},
        {.short_name = 'm', .flag = &smt, .help = "bind to SMT threads"},
        {.short_name = 'n', .flag = &none, .help = "no binding"},
        {.long_name = "warmup", .uinteger = &wp.warmup, .help = "schedlab only: warm-up samples"},
        {.long_name = "interval", .text = &interval, .help = "schedlab only: sample period"},
    };
    parse_options(args, specs, where);
    if (wp.tasks == 0 || wp.tasks > 1024) // MAX_TASKS
        throw config_error(where, "option '-t' must be between 1 and 1024 (MAX_TASKS)");
    if (wp.iterations == 0)
        throw config_error(where, "option '-s': 0 (run until killed) is not modelled");
    if (smt && none)
        throw config_error(where, "options '-m' and '-n' exclude each other");
    wp.binding = smt ? wis_binding::smt : none ? wis_binding::none : wis_binding::core;
    if (!interval.empty()) {
        wp.interval = parse_seconds(interval, "--interval", where);
        if (wp.interval < msecs(1))
            throw config_error(where, "option '--interval' must be at least 0.001 s");
    }
    return wp;
}

/*
 * model: hwloc's logical order, as main.c walks it: cores in the order of
 * their machine-wide id (package by package), the PUs of a core together,
 * in CPU-number order. Copy i takes object i modulo the number of objects.
 */
cpumask wis_binding_mask(const machine& m, wis_binding b, unsigned i)
{
    cpumask mask(m.nr_cpus());
    if (b == wis_binding::none) {
        mask = m.all();
        return mask;
    }
    std::map<int, std::vector<int>> cores; // core id -> its CPUs, ascending
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu)
        cores[m.cpus[static_cast<std::size_t>(cpu)].core].push_back(cpu);
    std::vector<std::vector<int>> objs;
    for (auto& [id, cpus] : cores) {
        if (b == wis_binding::core)
            objs.push_back(cpus);
        else
            for (int cpu : cpus)
                objs.push_back({cpu});
    }
    for (int cpu : objs[i % objs.size()])
        mask.set(cpu);
    return mask;
}

std::string context_switch1_workload::command_line() const
{
    return fmt::format("{} -t {} -s {}{} --warmup {} --interval {}", name(), wp_.tasks,
                       wp_.iterations,
                       wp_.binding == wis_binding::smt    ? " -m"
                       : wp_.binding == wis_binding::none ? " -n"
                                                          : "",
                       wp_.warmup, static_cast<double>(wp_.interval) / 1e9);
}

// main.c's once-a-second loop body: per-copy deltas, min/max/total, the average.
void context_switch1_workload::sample()
{
    u64 sum = 0;
    u64 mn = std::numeric_limits<u64>::max();
    u64 mx = 0;
    for (std::size_t i = 0; i < iterations_.size(); ++i) {
        const u64 diff = iterations_[i] - prev_[i];
        mn = std::min(mn, diff);
        mx = std::max(mx, diff);
        sum += diff;
        prev_[i] = iterations_[i];
    }
    out_ += fmt::format("min:{} max:{} total:{}\n", mn, mx, sum);
    if (iter_ == wp_.warmup)
        out_ += "measurement\n";
    if (iter_++ > wp_.warmup)
        total_ += sum;
    if (iter_ > wp_.iterations + wp_.warmup) {
        average_ = total_ / wp_.iterations;
        out_ += fmt::format("average:{}\n", average_);
        stop_ = true;
    }
}

/*
 * model: will-it-scale main.c + tests/context_switch1.c, task by task:
 * - the harness (on CPU 0) creates each copy with the binding of its hwloc
 *   object (processes: fork() after sched_setaffinity(); threads:
 *   pthread_create() with an affinity attribute), writes one byte to the
 *   start pipe every copy polls, then every second samples the counters;
 *   after warm-up + -s samples it prints the average and (model) stops the
 *   copies through a flag instead of killing them, and reaps them;
 * - a copy polls the start pipe, creates its partner (fork() or
 *   pthread_create(), inheriting the binding), then loops "write 1 byte to
 *   pipe A, read 1 byte from pipe B, counter += 2" until stopped; it then
 *   closes A, so the partner's read returns 0;
 * - the partner loops "read 1 byte from A, write it to B".
 */
void context_switch1_workload::setup(syscalls& sys)
{
    const unsigned n = wp_.tasks;
    const bool thr = wp_.threads;
    iterations_.assign(n, 0);
    prev_.assign(n, 0);
    copies_.assign(n, nullptr);
    partners_.assign(n, nullptr);
    start_ = &state_.make_pipe("start");
    reaped_ = &state_.make_counter("harness/reap", thr ? 0 : WF_SYNC);
    objs_.assign(n, copy_objs{});
    for (unsigned i = 0; i < n; ++i) {
        objs_[i].a = &state_.make_pipe(fmt::format("copy{}/a", i));
        objs_[i].b = &state_.make_pipe(fmt::format("copy{}/b", i));
        objs_[i].partner_exit =
            &state_.make_counter(fmt::format("copy{}/partner", i), thr ? 0 : WF_SYNC);
    }

    task_opts o;
    o.comm = "context_switch1"; // TASK_COMM_LEN truncates both builds' names to this
    o.cpu = 0;
    sys.spawn(make_task([this](task_context& t) { return run_harness(t); }), o);
}

task_code context_switch1_workload::run_harness(task_context& t)
{
    for (unsigned i = 0; i < wp_.tasks; ++i) {
        fork_opts fo{.comm = "", .thread = wp_.threads, .notify = reaped_};
        fo.allowed = wis_binding_mask(t.sys().mach(), wp_.binding, i);
        co_await t.fork([this, i](task_context& c) { return run_copy(c, i); }, fo);
    }
    co_await t.write(*start_, 1);
    out_ += "testcase:Context switch via pipes\nwarmup\n";
    const sim_time start = co_await t.gettime();
    state_.mark("start", start);
    while (!stop_) {
        co_await t.sleep(wp_.interval);
        sample();
    }
    const sim_time stop = co_await t.gettime();
    state_.mark("stop", stop);
    co_await t.wait_for(*reaped_, wp_.tasks, &cost_params::wait_child);
    finished_ = true;
}

task_code context_switch1_workload::run_copy(task_context& t, unsigned i)
{
    const copy_objs& o = objs_[i];
    copies_[i] = &t.task();
    co_await t.poll(*start_);
    const fork_opts partner{.comm = "", .thread = wp_.threads, .notify = o.partner_exit};
    co_await t.fork([this, i](task_context& c) { return run_partner(c, i); }, partner);
    while (!stop_) {
        co_await t.write(*o.a, 1);
        const bool got = co_await t.read(*o.b, 1);
        if (!got)
            break;
        iterations_[i] += 2;
    }
    co_await t.close(*o.a);
    co_await t.wait_for(*o.partner_exit, 1, &cost_params::wait_child);
}

task_code context_switch1_workload::run_partner(task_context& t, unsigned i)
{
    const copy_objs& o = objs_[i];
    partners_[i] = &t.task();
    for (;;) {
        const bool got = co_await t.read(*o.a, 1);
        if (!got)
            break; // the copy closed its end
        co_await t.write(*o.b, 1);
    }
}

std::string context_switch1_workload::report() const
{
    if (finished_)
        return out_;
    return out_ + "# schedlab: not finished when the run stopped\n";
}

std::vector<workload_metric> context_switch1_workload::metrics() const
{
    if (!finished_)
        return {};
    const double per_s = static_cast<double>(average_) / (static_cast<double>(wp_.interval) / 1e9);
    return {{"average", "ops/s", per_s, true},
            {"per_task_ops", "ops/s", per_s / static_cast<double>(wp_.tasks), true}};
}

std::unique_ptr<workload> make_context_switch1_processes(const std::vector<std::string>& args)
{
    return std::make_unique<context_switch1_workload>(parse_wis_options(args, false));
}

std::unique_ptr<workload> make_context_switch1_threads(const std::vector<std::string>& args)
{
    return std::make_unique<context_switch1_workload>(parse_wis_options(args, true));
}

} // namespace schedlab
