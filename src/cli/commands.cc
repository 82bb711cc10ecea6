// SPDX-License-Identifier: GPL-2.0-only
#include "cli/commands.h"

#include "machine/presets.h"
#include "metrics/sched_summary.h"
#include "sched/core.h"
#include "sched/profiles.h"
#include "sched/stats.h"
#include "sched/topology.h"
#include "sim/config_error.h"
#include "workload/registry.h"

#include <fmt/format.h>

namespace schedlab {

#ifndef SCHEDLAB_GIT_SHA
#define SCHEDLAB_GIT_SHA "unknown"
#endif
#ifndef SCHEDLAB_VERSION
#define SCHEDLAB_VERSION "0.0.0"
#endif

const char* schedlab_version() { return SCHEDLAB_VERSION " (git " SCHEDLAB_GIT_SHA ")"; }

int cmd_machines(std::ostream& out)
{
    out << fmt::format("{:<14} {}\n", "NAME", "DESCRIPTION");
    for (const auto& p : machine_presets())
        out << fmt::format("{:<14} {}\n", p.name, p.description);
    out << "\nAlso accepted wherever a machine is expected: a machine JSON file "
           "(docs/machine-format.md) or the output of `lscpu -p` saved to a file.\n";
    return 0;
}

int cmd_topology(std::ostream& out, const std::string& machine_spec, bool verbose, bool pkg_name)
{
    const machine m = load_machine(machine_spec);
    topology_params tp;
    tp.pkg_name = pkg_name;
    const sched_topology t = build_sched_domains(m, tp);
    out << fmt::format("# machine {}: {} CPUs, {} cores, {} LLCs, {} packages, {} NUMA nodes\n",
                       m.name, m.nr_cpus(), m.nr_cores(), m.nr_llcs(), m.nr_packages(),
                       m.nr_nodes());
    out << sched_domain_debug(t, m, verbose);
    return 0;
}

int cmd_kernels(std::ostream& out)
{
    out << fmt::format("{:<8} {:<6} {}\n", "PROFILE", "POLICY", "DESCRIPTION");
    for (const auto& p : kernel_profiles()) {
        const kernel_config kc = make_kernel_config(p.name);
        out << fmt::format("{:<8} {:<6} {}\n", p.name,
                           kc.params.policy == fair_policy::eevdf ? "EEVDF" : "CFS",
                           p.description);
    }
    out << "\nA profile may be followed by +FEATURE / +NO_FEATURE terms: --kernel "
           "6.6+NO_RUN_TO_PARITY.\n";
    return 0;
}

int cmd_features(std::ostream& out, const std::string& kernel)
{
    std::vector<kernel_config> cols;
    if (kernel.empty()) {
        for (const auto& p : kernel_profiles())
            cols.push_back(make_kernel_config(p.name));
    } else {
        cols.push_back(make_kernel_config(kernel, "--kernel"));
    }
    std::string head = fmt::format("{:<24}", "FEATURE");
    for (const auto& kc : cols)
        head += fmt::format(" {:>7}", kc.base);
    out << head << "  MODELLED  MEANING\n";
    for (const auto& f : sched_feat_table()) {
        std::string line = fmt::format("{:<24}", f.name);
        for (const auto& kc : cols)
            line += fmt::format(" {:>7}", kc.has_feature(f.id) ? (kc.features.test(f.id) ? "on" : "off")
                                                                : "-");
        line += fmt::format("  {:<8}  {}\n", f.modelled ? "yes" : "no", f.help);
        out << line;
    }
    out << "\n'-': the kernel does not have the feature (naming it is an error). MODELLED no: "
           "accepted and listed, but its mechanism is not simulated yet.\n";
    return 0;
}

int cmd_costs(std::ostream& out, const cost_params& c)
{
    out << fmt::format("{:<16} {:>10}\n", "COST", "NS");
    for (const auto& [name, v] : cost_list(c))
        out << fmt::format("{:<16} {:>10}\n", name, v);
    out << "\nOverride with `schedlab run --cost NAME=NS`. Defaults and their reasoning: "
           "src/sched/params.h.\n";
    return 0;
}

int cmd_run(std::ostream& out, std::ostream& err, const run_options& o)
{
    // Build and validate everything before simulating: all user errors surface here.
    const machine m = load_machine(o.machine);
    kernel_config kc = make_kernel_config(o.kernel, "--kernel");
    if (!o.features.empty())
        apply_features(kc, o.features, "--features");
    cost_params costs;
    for (const auto& c : o.costs)
        set_cost(costs, c, "--cost");
    std::unique_ptr<workload> w = make_workload(o.workload_argv);
    for (const auto& warning : kc.warnings)
        err << "schedlab: warning: " << warning << "\n";

    simulation sim(o.seed);
    kernel k(sim, m, kc, costs);
    if (!o.check.empty())
        k.set_check_level(o.check == "every" ? check_level::every : check_level::sampled);
    sched_summary summary(m.nr_cpus());
    k.add_sink(&summary);
    w->setup(k);
    const auto limit = static_cast<sim_time>(o.time_limit_s * 1e9);
    k.run(limit);

    if (!w->finished()) {
        err << fmt::format("schedlab: the benchmark did not finish within the {} s simulated "
                           "time limit (--time-limit)\n",
                           o.time_limit_s);
        return 3;
    }
    out << w->report();
    if (!o.no_summary) {
        const sched_summary_result r = summary.finish(sim.now());
        out << "\n";
        out << fmt::format("# schedlab {}: machine {} ({} CPUs), kernel {} ({}), seed {}\n",
                           schedlab_version(), m.name, m.nr_cpus(), kc.spec,
                           kc.params.policy == fair_policy::eevdf ? "EEVDF" : "CFS", o.seed);
        if (!kc.delta_string().empty())
            out << fmt::format("# features changed from the profile: {}\n", kc.delta_string());
        out << r.format();
        out << fmt::format("# schedule digest: {:016x}  ({} events)\n", k.schedule_digest(),
                           sim.events_fired());
    }
    if (!o.schedstat.empty()) {
        out << "\n" << schedstat_table(k);
        if (o.schedstat == "raw")
            out << "\n" << schedstat_v15(k);
    }
    return 0;
}

} // namespace schedlab
