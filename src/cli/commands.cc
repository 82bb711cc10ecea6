// SPDX-License-Identifier: GPL-2.0-only
#include "cli/commands.h"

#include "analysis/compare.h"
#include "analysis/fidelity.h"
#include "cli/interrupt.h"
#include "experiment/result_json.h"
#include "experiment/runner.h"
#include "machine/machine_costs.h"
#include "machine/presets.h"
#include "report/fidelity_text.h"
#include "report/html.h"
#include "report/text.h"
#include "sched/core.h"
#include "sched/profiles.h"
#include "sched/stats.h"
#include "sched/topology.h"
#include "sim/config_error.h"
#include "sim/file_io.h"
#include "store/execute.h"
#include "trace/export_ftrace.h"
#include "workload/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

namespace schedlab {

namespace {

/// An output the user asked for ("" = none), opened now so a bad path fails before any run.
output_file open_output(const std::string& path, const std::string& flag)
{
    return path.empty() ? output_file{} : output_file(path, flag);
}

/*
 * The decision log, streamed to its file as the run makes decisions (a long run's log is
 * gigabytes). A write error stops the writing and is reported after the run, since no
 * error is thrown from inside a simulation.
 */
class explain_writer final : public decision_sink {
public:
    explicit explain_writer(output_file& f) : f_(f) {}
    void decision(const sched_decision& d) override
    {
        if (!error_.empty())
            return;
        try {
            f_.write(fmt::format("{:>14.6f} cpu{:<4} {:<16} {}\n", static_cast<double>(d.ts) / 1e9,
                                 d.cpu, d.what, d.text));
        } catch (const config_error& e) {
            error_ = e.what();
        }
    }
    void finish()
    {
        if (!error_.empty())
            throw config_error("", error_);
        f_.commit();
    }

private:
    output_file& f_;
    std::string error_;
};

} // namespace

#ifndef SCHEDLAB_VERSION
#define SCHEDLAB_VERSION "0.0.0"
#endif
#ifndef SCHEDLAB_REFERENCE_DIR
#define SCHEDLAB_REFERENCE_DIR "data/reference"
#endif
#ifndef SCHEDLAB_INSTALLED_REFERENCE_DIR
#define SCHEDLAB_INSTALLED_REFERENCE_DIR "../share/schedlab/reference"
#endif

const char* schedlab_version()
{
    static const std::string v = fmt::format("{} (git {})", SCHEDLAB_VERSION, schedlab_git_sha());
    return v.c_str();
}

u64 parse_seed(const std::string& text, const std::string& flag)
{
    u64 v = 0;
    const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
    const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || res.ptr != text.data() + text.size())
        throw config_error(flag, fmt::format("'{}' is not a seed (a whole number from 0 to "
                                             "18446744073709551615)",
                                             text));
    if (res.ec == std::errc::result_out_of_range)
        throw config_error(flag, fmt::format("{} is larger than the largest seed, "
                                             "18446744073709551615 (2^64-1)",
                                             text));
    return v;
}

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
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu)
        out << sched_domain_debug_cpu(t, cpu, verbose);
    return 0;
}

int cmd_kernels(std::ostream& out)
{
    out << fmt::format("{:<12} {:<6} {}\n", "PROFILE", "POLICY", "DESCRIPTION");
    for (const auto& p : kernel_profiles()) {
        const kernel_config kc = make_kernel_config(p.name);
        out << fmt::format("{:<12} {:<6} {}\n", p.name,
                           kc.params.policy == fair_policy::eevdf ? "EEVDF" : "CFS",
                           p.description);
    }
    out << fmt::format("\n{:<22} {}\n", "DELTA", "WHAT IT CHANGES (features it provides; source)");
    for (const auto& d : kernel_deltas()) {
        std::string feats;
        for (sched_feat_id f : d.features)
            feats += fmt::format("{}{}", feats.empty() ? "" : " ", sched_feat_table()[f].name);
        out << fmt::format("{:<22} {}\n{:<22}   features: {}; {}\n", d.name, d.description, "",
                           feats, d.source);
    }
    out << "\nA profile may be followed by +delta and +FEATURE / +NO_FEATURE terms, deltas "
           "first: --kernel 6.6+NO_RUN_TO_PARITY, --kernel tip-2023-08+shared_runq_v3+NO_SHARED_RUNQ. "
           "docs/kernels.md gives the sources.\n";
    return 0;
}

int cmd_features(std::ostream& out, const std::string& kernel)
{
    std::vector<kernel_config> cols;
    if (kernel.empty()) {
        for (const auto& p : kernel_profiles())
            if (p.main)
                cols.push_back(make_kernel_config(p.name));
    } else {
        cols.push_back(make_kernel_config(kernel, "--kernel"));
    }
    std::string head = fmt::format("{:<24}", "FEATURE");
    for (const auto& kc : cols)
        head += fmt::format(" {:>{}}", kc.spec, std::max<std::size_t>(7, kc.spec.size()));
    out << head << "  MODELLED  MEANING\n";
    for (const auto& f : sched_feat_table()) {
        std::string line = fmt::format("{:<24}", f.name);
        for (const auto& kc : cols)
            line += fmt::format(" {:>{}}", kc.has_feature(f.id) ? (kc.features.test(f.id) ? "on" : "off")
                                                                 : "-",
                                std::max<std::size_t>(7, kc.spec.size()));
        line += fmt::format("  {:<8}  {}\n", f.modelled ? "yes" : "no", f.help);
        out << line;
    }
    out << "\n'-': the kernel does not have the feature (naming it is an error unless a "
           "kernel delta provides it). MODELLED no: accepted and listed, but its mechanism is "
           "not simulated yet.\n";
    for (const auto& d : kernel_deltas()) {
        std::string feats;
        for (sched_feat_id f : d.features)
            feats += fmt::format("{}{}", feats.empty() ? "" : " ", sched_feat_table()[f].name);
        out << fmt::format("  +{} provides {}\n", d.name, feats);
    }
    if (kernel.empty())
        out << "Columns are the release profiles; `schedlab features --kernel X` shows another "
               "profile or spec (e.g. tip-2023-08+shared_runq_v3), `schedlab kernels` lists "
               "them all.\n";
    return 0;
}

int cmd_costs(std::ostream& out, const std::string& machine,
              const std::vector<std::string>& overrides)
{
    out << costs_report(load_machine(machine), overrides);
    return 0;
}

int cmd_run(std::ostream& out, std::ostream& err, const run_options& o)
{
    run_spec spec;
    spec.machine = o.machine;
    spec.kernel = o.kernel;
    spec.features = o.features;
    spec.costs = o.costs;
    spec.seed = o.seed;
    spec.workload_argv = o.workload_argv;
    spec.time_limit_s = o.time_limit_s;
    spec.check = o.check;
    // Build and validate everything before simulating: all user errors surface here.
    const auto prepared = prepare_run(spec);
    // The outputs are opened (and so checked) before the run; each is written to a temporary
    // file and renamed over its target only once complete.
    if (!o.trace_path.empty())
        trace_compression_for(o.trace_path);
    output_file trace_out = open_output(o.trace_path, "--trace");
    output_file explain_out = open_output(o.explain_path, "--explain");
    output_file json_out = open_output(o.json_path, "--json");
    for (const auto& warning : run_warnings(*prepared))
        err << "schedlab: warning: " << warning << "\n";

    ftrace_exporter trace;
    run_hooks hooks;
    if (trace_out.is_open())
        hooks.extra_sinks.push_back(&trace);
    std::string schedstat_table_text, schedstat_raw_text;
    if (!o.schedstat.empty())
        hooks.after_run = [&](const kernel& k) {
            schedstat_table_text = schedstat_table(k);
            if (o.schedstat == "raw")
                schedstat_raw_text = schedstat_v15(k);
        };
    explain_writer explain(explain_out);
    if (explain_out.is_open())
        hooks.decisions = &explain;
    const run_result r = execute_run(*prepared, hooks);
    if (trace_out.is_open()) {
        trace.write(trace_out, r.provenance.nr_cpus);
        trace_out.commit();
    }
    if (explain_out.is_open())
        explain.finish();
    if (json_out.is_open()) {
        json_out.write(to_json(r).dump(1) + "\n");
        json_out.commit();
    }

    if (!r.finished) {
        err << fmt::format("schedlab: the benchmark did not finish within the {} s simulated "
                           "time limit (--time-limit)\n",
                           o.time_limit_s);
        return 3;
    }
    out << r.benchmark_output;
    if (!r.measured_nothing.empty())
        throw config_error("benchmark", r.measured_nothing);
    if (!o.no_summary) {
        const run_provenance& p = r.provenance;
        out << "\n";
        out << fmt::format("# schedlab {}: machine {} ({} CPUs), kernel {} ({}), seed {}\n",
                           schedlab_version(), p.machine, p.nr_cpus, p.kernel_spec, p.policy, p.seed);
        if (!p.feature_delta.empty())
            out << fmt::format("# features changed from the profile: {}\n", p.feature_delta);
        out << r.summary_text;
        out << fmt::format("# schedule digest: {:016x}  ({} events)\n", r.schedule_digest,
                           r.events_fired);
    }
    if (!schedstat_table_text.empty())
        out << '\n' << schedstat_table_text;
    if (!schedstat_raw_text.empty())
        out << '\n' << schedstat_raw_text;
    return 0;
}

namespace {

void print_tables(std::ostream& out, const comparison& c, const table_options& t, output_file& html)
{
    const bool all = t.format == "all";
    out << render_provenance(c, all || t.format == "mmtests");
    if (all || t.format == "mmtests")
        out << "\n" << render_mmtests(c);
    if (all || t.format == "amd")
        out << "\n" << render_amd(c);
    if (all || t.format == "lkp")
        out << "\n" << render_lkp(c);
    if (t.schedstat && !c.schedstat.empty())
        out << "\n" << render_schedstat(c);
    if (html.is_open())
        write_html_report(html, c);
}

significance_rule parse_rule(const std::string& s)
{
    if (s == "ci")
        return significance_rule::ci;
    if (s == "ttest")
        return significance_rule::ttest;
    throw config_error("--significance", fmt::format("'{}' is neither 'ci' nor 'ttest'", s));
}

void check_format(const std::string& f)
{
    if (f != "all" && f != "amd" && f != "mmtests" && f != "lkp")
        throw config_error("--format", fmt::format("'{}' is not one of amd, mmtests, lkp, all", f));
}

} // namespace

int cmd_compare(std::ostream& out, std::ostream& err, const compare_options& o)
{
    check_format(o.tables.format);
    const significance_rule rule = parse_rule(o.tables.significance);
    if (!o.tables.html_path.empty())
        load_chart_libraries(); // fail before simulating when the report cannot be written
    if (o.jobs < 0)
        throw config_error("--jobs", "must be at least 1");
    compare_plan plan = plan_compare(o.spec);
    plan.info.command = o.command_line;
    output_file json_out = open_output(o.json_path, "--json");
    output_file html_out = open_output(o.tables.html_path, "--html");
    const int jobs = o.jobs > 0 ? o.jobs : default_jobs();
    std::vector<run_result> results;
    if (o.store_path.empty()) {
        const interrupt_guard guard([&](int signo) {
            err << fmt::format("\nschedlab: interrupted ({}): the finished runs were not kept "
                               "(--no-store); with a store (the default, or --store FILE) they "
                               "are, and the same command resumes\n",
                               signal_name(signo));
            err.flush();
        });
        progress_meter meter(err, o.progress_tty);
        results = run_all(plan.runs, jobs, std::ref(meter));
    } else {
        results_store store(o.store_path, true);
        stored_experiment e = stored_experiment_of(plan, "compare", o.spec.machine);
        e.id = store.record_experiment(e);
        std::vector<std::string> keys;
        for (const auto& r : e.runs)
            keys.push_back(r.key);
        run_plan_into_store(err, store, plan.runs, keys, shard{}, jobs, o.progress_tty);
        results = store.load(e, store_detail::full);
    }
    if (json_out.is_open()) {
        json_out.write(results_to_string(results, plan.info));
        json_out.commit();
    }
    int unfinished = 0;
    std::vector<const run_result*> empty;
    for (const run_result& r : results) {
        unfinished += !r.finished;
        if (r.finished && !r.measured_nothing.empty())
            empty.push_back(&r);
    }
    if (!empty.empty())
        throw config_error("benchmark",
                           fmt::format("{} of {} runs measured nothing (the first: "
                                       "arm {} load {} seed {}): {}",
                                       empty.size(), results.size(), empty[0]->arm_label(),
                                       empty[0]->load, empty[0]->provenance.seed,
                                       empty[0]->measured_nothing));
    if (unfinished == static_cast<int>(results.size())) {
        err << fmt::format("schedlab: no run finished within the {} s simulated time limit "
                           "(--time-limit)\n", o.spec.time_limit_s);
        return 3;
    }
    print_tables(out, compare_runs(results, rule), o.tables, html_out);
    if (unfinished) {
        err << fmt::format("schedlab: {} of {} runs did not finish within the {} s simulated time "
                           "limit and were left out\n", unfinished, results.size(),
                           o.spec.time_limit_s);
        return 3;
    }
    return 0;
}

int cmd_report(std::ostream& out, std::ostream&, const report_options& o)
{
    check_format(o.tables.format);
    const significance_rule rule = parse_rule(o.tables.significance);
    output_file html_out = open_output(o.tables.html_path, "--html");
    const bool full = o.tables.schedstat || html_out.is_open();
    bool first = true;
    for_each_input(o.files, o.experiments, full ? store_detail::full : store_detail::tables, true,
                   [&](input_runs&& in, std::size_t count) {
                       if (count > 1 && html_out.is_open())
                           throw config_error("--html", fmt::format("{} experiments selected; an "
                                                                    "HTML report is of one (choose "
                                                                    "it with --experiment)",
                                                                    count));
                       if (count > 1 || in.planned != in.runs.size()) {
                           out << fmt::format("{}## {}: {} of {} runs stored\n", first ? "" : "\n",
                                              in.label, in.runs.size(), in.planned);
                           first = false;
                       }
                       if (in.runs.empty())
                           out << "(no runs stored yet)\n";
                       else
                           print_tables(out, compare_runs(in.runs, rule), o.tables, html_out);
                   });
    return 0;
}

std::string default_fidelity_reference_dir()
{
    // An installed schedlab: PREFIX/bin/schedlab finds PREFIX/share/schedlab/reference.
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const std::filesystem::path installed =
            (exe.parent_path() / SCHEDLAB_INSTALLED_REFERENCE_DIR / "shared-runq-v3-bergamo-2s")
                .lexically_normal();
        if (std::filesystem::is_directory(installed, ec))
            return installed.string();
    }
    return std::filesystem::path(SCHEDLAB_REFERENCE_DIR "/shared-runq-v3-bergamo-2s")
        .lexically_normal()
        .string();
}

int cmd_fidelity(std::ostream& out, std::ostream&, const fidelity_options& o)
{
    if (!(o.threshold >= 0))
        throw config_error("--threshold", "must be at least 0");
    // Read and check everything before printing anything.
    output_file json_out = open_output(o.json_path, "--json");
    const reference_data ref =
        read_reference_dir(o.reference_dir.empty() ? default_fidelity_reference_dir()
                                                   : o.reference_dir);
    std::vector<results_input> inputs;
    for_each_input(o.files, o.experiments, store_detail::full, false,
                   [&](input_runs&& in, std::size_t) {
                       inputs.push_back({in.label, std::move(in.runs)});
                   });
    const fidelity_report rep = score_fidelity(ref, inputs, o.threshold);
    if (json_out.is_open()) {
        json_out.write(fidelity_to_json(rep).dump(2) + "\n");
        json_out.commit();
    }
    out << render_fidelity(rep);
    return 0;
}

} // namespace schedlab
