// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/run.h"

#include "schedlab_git_sha.h" // generated at build time (cmake/GitSha.cmake)

#include "machine/machine_costs.h"
#include "machine/machine_parse.h"
#include "machine/presets.h"
#include "metrics/sched_summary.h"
#include "sched/core.h"
#include "sched/ext_load.h"
#include "sched/profiles.h"
#include "sched/stats.h"
#include "sim/config_error.h"
#include "workload/registry.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace schedlab {

#ifndef SCHEDLAB_VERSION
#define SCHEDLAB_VERSION "0.0.0"
#endif

const char* schedlab_version_string() { return SCHEDLAB_VERSION; }
const char* schedlab_git_sha() { return SCHEDLAB_GIT_SHA; }

std::string run_result::arm_label() const
{
    if (!arm.empty())
        return arm;
    if (provenance.features_arg.empty())
        return provenance.kernel_spec;
    return provenance.kernel_spec + " --features " + provenance.features_arg;
}

struct prepared_run {
    run_spec spec;
    machine m;
    kernel_config kc;
    cost_params costs;
    std::string command_line;
    /// The workload as validated; each run takes a fresh() instance of it (a replay's trace
    /// is read here once, not again per run).
    std::shared_ptr<const workload> prototype;
};

std::shared_ptr<const prepared_run> prepare_run(const run_spec& spec)
{
    if (!(spec.time_limit_s > 0 && spec.time_limit_s <= max_time_limit_s)) // NaN too
        throw config_error("--time-limit", fmt::format("{} is outside (0, {}] seconds",
                                                       spec.time_limit_s, max_time_limit_s));
    if (!spec.check.empty() && spec.check != "every" && spec.check != "sampled")
        throw config_error("--check", fmt::format("'{}' is neither 'every' nor 'sampled'", spec.check));
    machine m = load_machine(spec.machine);
    kernel_config kc = make_kernel_config(spec.kernel, "--kernel");
    if (!spec.features.empty())
        apply_features(kc, spec.features, "--features");
    check_cost_overrides_unique(spec.costs, "--cost");
    cost_params costs = m.costs; // the machine's costs, then the --cost overrides
    for (const auto& c : spec.costs)
        apply_cost_override(costs, c, "--cost");
    std::shared_ptr<const workload> w = make_workload(spec.workload_argv);
    kc.params.tick_phase_ns = w->tick_phase_ns(kc.params.tick_nsec());
    std::string command_line = w->command_line();
    return std::make_shared<prepared_run>(prepared_run{spec, std::move(m), std::move(kc), costs,
                                                       std::move(command_line), std::move(w)});
}

std::string inputs_but_seed(const run_spec& s)
{
    std::string k = s.machine + '\x1f' + s.kernel + '\x1f' + s.features + '\x1f' +
                    fmt::format("{}", s.time_limit_s) + '\x1f' + s.check;
    for (const std::string& c : s.costs)
        k += '\x1e' + c;
    k += '\x1f';
    for (const std::string& a : s.workload_argv)
        k += '\x1e' + a;
    return k;
}

std::string run_identity(const prepared_run& pr)
{
    nlohmann::ordered_json costs = nlohmann::ordered_json::object();
    for (const auto& [name, v] : cost_list(pr.costs))
        costs[name] = v;
    const nlohmann::ordered_json j = {
        {"schedlab_version", schedlab_version_string()},
        {"git_sha", schedlab_git_sha()},
        {"machine", machine_to_json(pr.m)},
        {"kernel_spec", pr.spec.kernel},
        {"features_arg", pr.spec.features},
        {"features", pr.kc.features_string()},
        {"costs_ns", costs},
        {"argv", pr.spec.workload_argv},
        {"command_line", pr.command_line},
        {"time_limit_s", pr.spec.time_limit_s},
    };
    nlohmann::ordered_json jp = j;
    if (pr.kc.ext && !pr.kc.ext->sha256.empty()) // a loaded ext policy: by its file's content too
        jp["ext_policy_sha256"] = pr.kc.ext->sha256;
    const std::string content = pr.prototype->content_identity();
    if (content.empty())
        return jp.dump();
    // A workload reading a file: named by its content, not by the path in its argv.
    nlohmann::ordered_json jc = jp;
    jc.erase("argv");
    jc.erase("command_line");
    jc["workload"] = content;
    return jc.dump();
}

const workload& prepared_workload(const prepared_run& prepared)
{
    return *prepared.prototype;
}

const std::vector<std::string>& run_warnings(const prepared_run& prepared)
{
    return prepared.kc.warnings;
}

run_result execute_run(const prepared_run& pr, const run_hooks& hooks)
{
    return execute_run_as(pr, pr.spec, hooks);
}

run_result execute_run_as(const prepared_run& pr, const run_spec& spec, const run_hooks& hooks)
{
    if (&spec != &pr.spec && inputs_but_seed(spec) != inputs_but_seed(pr.spec))
        throw std::logic_error("execute_run_as: the spec's inputs are not the prepared run's");
    run_result res;
    run_provenance& pv = res.provenance;
    pv.schedlab_version = schedlab_version_string();
    pv.git_sha = schedlab_git_sha();
    pv.machine = pr.m.name;
    pv.machine_spec = spec.machine;
    pv.nr_cpus = pr.m.nr_cpus();
    pv.kernel_spec = spec.kernel;
    pv.kernel_base = pr.kc.base;
    pv.policy = pr.kc.params.policy == fair_policy::eevdf ? "EEVDF" : "CFS";
    pv.features_arg = spec.features;
    pv.features = pr.kc.features_string();
    pv.feature_delta = pr.kc.delta_string();
    for (const auto& [name, v] : cost_list(pr.costs))
        pv.costs.emplace_back(name, v);
    pv.seed = spec.seed;
    pv.argv = spec.workload_argv;
    pv.command_line = pr.command_line;
    pv.time_limit_s = spec.time_limit_s;
    res.arm = spec.arm;
    res.load = spec.load;
    res.run_index = spec.run_index;

    std::unique_ptr<workload> w = pr.prototype->fresh();
    if (!w) // prepare_run() validated the command line, so this cannot throw
        w = make_workload(spec.workload_argv);
    simulation sim(spec.seed);
    run_context ctx(sim, pr.m, pr.costs); // the run's cost model and decision log
    kernel k(sim, pr.m, pr.kc, ctx);
    if (!spec.check.empty())
        k.set_check_level(spec.check == "every" ? check_level::every : check_level::sampled);
    sched_summary summary(pr.m.nr_cpus());
    k.add_sink(&summary);
    if (hooks.decisions)
        ctx.decisions.set_sink(hooks.decisions);
    k.lb().gap.on = hooks.idle_gaps;
    for (trace_sink* sink : hooks.extra_sinks)
        k.add_sink(sink);
    w->setup(k.sys());
    if (hooks.progress)
        sim.on_progress(hooks.progress_every, hooks.progress);
    if (hooks.before_run)
        hooks.before_run(k);
    k.run(static_cast<sim_time>(spec.time_limit_s * 1e9));
    if (const scx_sched* scx = k.scx(); scx && scx->exit.kind != 0) {
        // An ext policy that broke the contract or stalled a task was ejected (its tasks ran
        // on in the fair class): the run measured the fallback, not the policy.
        const scx_exit& e = scx->exit;
        throw config_error("--kernel",
                           fmt::format("ext policy '{}' was ejected at {:.9f} s on cpu{} ({}): {}; "
                                       "its tasks fell back to the fair class",
                                       scx->policy->name, static_cast<double>(e.at) / 1e9, e.cpu,
                                       e.reason, e.msg));
    }

    res.finished = w->finished();
    if (!res.finished)
        if (std::string why = w->stalled(); !why.empty())
            throw config_error("", why);
    res.metrics = w->metrics();
    res.measured_nothing = w->measured_nothing();
    res.benchmark_output = w->report();
    const sched_summary_result s = summary.finish(sim.now());
    run_sched_summary& rs = res.summary;
    rs.simulated_ns = s.end - s.begin;
    rs.switches = s.switches;
    rs.voluntary = s.voluntary;
    rs.involuntary = s.involuntary;
    rs.migrations = s.migrations;
    rs.forks = s.forks;
    rs.wakeups = s.wakeups;
    rs.wakeup_latency_count = s.wakeup_latency.count();
    rs.wakeup_latency_p50_ns = s.wakeup_latency.percentile(50);
    rs.wakeup_latency_p99_ns = s.wakeup_latency.percentile(99);
    rs.wakeup_latency_max_ns = s.wakeup_latency.max();
    rs.run_length_count = s.run_length.count();
    rs.run_length_p50_ns = s.run_length.percentile(50);
    rs.run_length_p99_ns = s.run_length.percentile(99);
    rs.run_length_max_ns = s.run_length.max();
    rs.wakeup_latency_hist = s.wakeup_latency.buckets(summary_histogram_sub_bits);
    rs.run_length_hist = s.run_length.buckets(summary_histogram_sub_bits);
    rs.busy_ns.assign(s.busy.begin(), s.busy.end());
    rs.wakeup_targets = s.wakeup_targets;
    res.summary_text =
        s.format() + format_cpu_accounting(k, s.begin) + format_feature_stats(k) + w->summary();
    res.schedule_digest = k.schedule_digest();
    res.events_fired = sim.events_fired();
    res.schedstat = collect_schedstat(k);
    if (hooks.after_run)
        hooks.after_run(k);
    return res;
}

run_result execute_run(const run_spec& spec, const run_hooks& hooks)
{
    return execute_run(*prepare_run(spec), hooks);
}

std::vector<schedstat_counter> collect_schedstat(const kernel& k)
{
    const std::vector<level_schedstat> levels = schedstat_per_level(k);
    // v15 idle-type order: CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE
    static const char* const idle_names[CPU_MAX_IDLE_TYPES] = {"idle", "busy", "newly_idle"};
    std::vector<schedstat_counter> out;
    for (const level_schedstat& level : levels) {
        const sd_schedstat& t = level.sum;
        for (int i = 0; i < CPU_MAX_IDLE_TYPES; ++i) {
            auto add = [&](const char* name, u64 v) {
                out.push_back({level.name, idle_names[i], name, static_cast<double>(v)});
            };
            add("lb_count", t.lb_count[i]);
            add("lb_balanced", t.lb_balanced[i]);
            add("lb_failed", t.lb_failed[i]);
            add("lb_imbalance", t.lb_imbalance[i]);
            add("lb_gained", t.lb_gained[i]);
            add("lb_hot_gained", t.lb_hot_gained[i]);
            add("lb_nobusyq", t.lb_nobusyq[i]);
            add("lb_nobusyg", t.lb_nobusyg[i]);
            add("fbg_count", t.fbg_count[i]); // find_busiest_group() calls (not in /proc/schedstat)
        }
        auto add = [&](const char* name, u64 v) {
            out.push_back({level.name, "any", name, static_cast<double>(v)});
        };
        add("alb_count", t.alb_count);
        add("alb_failed", t.alb_failed);
        add("alb_pushed", t.alb_pushed);
        add("ttwu_wake_remote", t.ttwu_wake_remote);
        add("ttwu_move_affine", t.ttwu_move_affine);
        add("ttwu_move_balance", t.ttwu_move_balance);
    }
    return out;
}

} // namespace schedlab
