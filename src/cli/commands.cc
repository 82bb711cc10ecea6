// SPDX-License-Identifier: GPL-2.0-only
#include "cli/commands.h"

#include "analysis/compare.h"
#include "analysis/fidelity.h"
#include "calibrate/calibrate.h"
#include "cli/cli_options.h"
#include "cli/interrupt.h"
#include "cli/mpi.h"
#include "experiment/result_json.h"
#include "experiment/runner.h"
#include "machine/machine_costs.h"
#include "machine/presets.h"
#include "metrics/timeline.h"
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
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>

namespace schedlab {

namespace {

/// An output the user asked for ("" = none), opened now so a bad path fails before any run.
output_file open_output(const std::string& path, const std::string& flag)
{
    return path.empty() ? output_file{} : output_file(path, flag);
}

} // namespace

explain_writer::explain_writer(output_file& f) : f_(f) {}

void explain_writer::decision(const sched_decision& d)
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

void explain_writer::finish()
{
    if (!error_.empty())
        throw config_error("", error_);
    f_.commit();
}

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
           "first: --kernel 6.6+NO_RUN_TO_PARITY, --kernel "
           "tip-2023-08+shared_runq_v3+NO_SHARED_RUNQ. "
           "A +preempt=none|voluntary|full|lazy term picks the preemption model (the preempt= "
           "boot parameter; lazy, PREEMPT_LAZY, is v6.13+: 6.18 only); the default is "
           "voluntary (x86's defconfig and the distributions' kernels); +preempt=instant, "
           "schedlab's own, acts on a reschedule at once wherever the task is (the schedules "
           "before the models). "
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

namespace {

/// The most records a run's timeline keeps (runs, wakeups, migrations; about 25 bytes each in
/// the page): past it the window is cut short, and the page says so.
constexpr std::size_t timeline_max_records = 1'000'000;

/// --timeline-window FROM,TO in simulated seconds, as [from, to) ns; "" is the whole run.
std::pair<sim_time, sim_time> parse_timeline_window(const std::string& w, double time_limit_s)
{
    const sim_time limit = static_cast<sim_time>(time_limit_s * 1e9);
    if (w.empty())
        return {0, limit};
    const std::size_t comma = w.find(',');
    double v[2] = {0, 0};
    const std::string part[2] = {w.substr(0, comma),
                                 comma == std::string::npos ? "" : w.substr(comma + 1)};
    for (int i = 0; i < 2; ++i) {
        const char* b = part[i].data();
        const char* e = b + part[i].size();
        const auto [ptr, ec] = std::from_chars(b, e, v[i]);
        if (part[i].empty() || ec != std::errc() || ptr != e || !std::isfinite(v[i]))
            throw config_error("--timeline-window",
                               fmt::format("'{}' is not FROM,TO in simulated seconds (e.g. "
                                           "0.5,0.52)",
                                           w));
    }
    if (!(v[0] >= 0 && v[0] < v[1] && v[1] <= time_limit_s))
        throw config_error("--timeline-window",
                           fmt::format("'{}': need 0 <= FROM < TO <= the time limit ({} s)", w,
                                       time_limit_s));
    return {static_cast<sim_time>(std::llround(v[0] * 1e9)),
            static_cast<sim_time>(std::llround(v[1] * 1e9))};
}

/// The timeline of one run: a recorder to attach to it, and the page's data once it is done.
class timeline_capture {
public:
    timeline_capture(const std::string& machine_spec, std::pair<sim_time, sim_time> window)
    {
        const machine m = load_machine(machine_spec); // prepare_run() loaded it: cannot fail
        for (const cpu_desc& c : m.cpus) {
            llc_.push_back(c.llc);
            node_.push_back(c.node);
        }
        rec_.emplace(m.nr_cpus(), window.first, window.second, timeline_max_records);
        rec_window_from_ = window.first;
    }
    trace_sink* sink() { return &*rec_; }

    /// The timeline once the run is done; a window starting after the run ended is warned of.
    timeline finish(const run_result& r, std::ostream& err)
    {
        if (rec_window_from_ > 0 && rec_window_from_ >= r.summary.simulated_ns)
            err << fmt::format("schedlab: warning: --timeline-window starts at {} s, after the run "
                               "ended ({:.6f} s): the timeline is empty\n",
                               static_cast<double>(rec_window_from_) / 1e9,
                               static_cast<double>(r.summary.simulated_ns) / 1e9);
        timeline t = rec_->finish(r.summary.simulated_ns); // the run starts at 0
        t.cpu_llc = llc_;
        t.cpu_node = node_;
        const run_provenance& p = r.provenance;
        t.title = fmt::format("{}machine {} ({} CPUs), kernel {} ({}), seed {}: {}",
                              r.arm.empty() ? "" : fmt::format("arm {}, load {}, run {}: ", r.arm,
                                                               r.load.empty() ? "-" : r.load,
                                                               r.run_index),
                              p.machine, p.nr_cpus, p.kernel_spec, p.policy, p.seed,
                              p.command_line);
        return t;
    }

private:
    std::optional<timeline_recorder> rec_;
    sim_time rec_window_from_ = 0;
    std::vector<int> llc_, node_;
};

/*
 * compare --timeline ARM,LOAD,RUN: the run of the plan it names (ARM: the position of its
 * --kernel from 1, or its spec; LOAD: one of the load list's values, "-" without one; RUN: the
 * run index from 0, seed --seed + RUN).
 */
const run_spec& timeline_run(const compare_plan& plan, const std::string& what)
{
    auto bad = [&](const std::string& why) {
        return config_error("--timeline", fmt::format("'{}': {} (ARM,LOAD,RUN, e.g. 2,{},0)", what,
                                                      why,
                                                      plan.info.loads.empty()
                                                          ? "-"
                                                          : plan.info.loads.front()));
    };
    const std::size_t c1 = what.find(','), c2 = c1 == std::string::npos
                                                     ? std::string::npos
                                                     : what.find(',', c1 + 1);
    if (c2 == std::string::npos || what.find(',', c2 + 1) != std::string::npos)
        throw bad("not three comma-separated fields");
    const std::string arm = what.substr(0, c1), load = what.substr(c1 + 1, c2 - c1 - 1),
                      run = what.substr(c2 + 1);
    std::string arm_spec = arm;
    int arm_pos = 0;
    if (const auto [p, ec] = std::from_chars(arm.data(), arm.data() + arm.size(), arm_pos);
        ec == std::errc() && p == arm.data() + arm.size()) {
        if (arm_pos < 1 || arm_pos > static_cast<int>(plan.info.arms.size()))
            throw bad(fmt::format("arm {} is not one of 1..{}", arm_pos, plan.info.arms.size()));
        arm_spec = plan.info.arms[static_cast<std::size_t>(arm_pos - 1)];
    } else if (std::find(plan.info.arms.begin(), plan.info.arms.end(), arm) ==
               plan.info.arms.end()) {
        throw bad(fmt::format("no arm '{}'", arm));
    }
    const std::string load_key = load == "-" ? "" : load;
    int run_index = -1;
    if (const auto [p, ec] = std::from_chars(run.data(), run.data() + run.size(), run_index);
        ec != std::errc() || p != run.data() + run.size() || run_index < 0 ||
        run_index >= plan.info.runs)
        throw bad(fmt::format("run '{}' is not one of 0..{}", run, plan.info.runs - 1));
    for (const run_spec& r : plan.runs)
        if (r.arm == arm_spec && r.load == load_key && r.run_index == run_index)
            return r;
    throw bad(plan.info.loads.empty() ? std::string("the benchmark has no load list: give '-'")
                                      : fmt::format("no load '{}'", load));
}

} // namespace

int unfinished_run(std::ostream& err, const std::string& what, double time_limit_s)
{
    err << fmt::format("schedlab: {} did not finish within the {} s simulated time limit "
                       "(--time-limit)\n",
                       what, time_limit_s);
    return 3;
}

trace_file_output::trace_file_output(const std::string& path)
{
    if (path.empty())
        return;
    trace_compression_for(path); // an unsupported suffix is refused before the file is made
    f_ = output_file(path, "--trace");
}

void trace_file_output::commit(int nr_cpus)
{
    if (!f_.is_open())
        return;
    trace_.write(f_, nr_cpus);
    f_.commit();
}

void print_run_summary(std::ostream& out, const run_result& r)
{
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

int cmd_run(std::ostream& out, std::ostream& err, const run_options& o)
{
    const run_spec spec{.machine = o.machine, .kernel = o.kernel, .features = o.features,
                        .costs = o.costs, .seed = o.seed, .workload_argv = o.workload_argv,
                        .time_limit_s = o.time_limit_s, .check = o.check};
    // Build and validate everything before simulating: all user errors surface here.
    const auto prepared = prepare_run(spec);
    // The outputs are opened (and so checked) before the run; each is written to a temporary
    // file and renamed over its target only once complete.
    trace_file_output trace(o.trace_path);
    output_file explain_out = open_output(o.explain_path, "--explain");
    output_file json_out = open_output(o.json_path, "--json");
    if (!o.timeline_window.empty() && o.html_path.empty())
        throw config_error("--timeline-window", "the timeline is drawn in the --html report: "
                                                "give --html FILE too");
    const auto [tl_from, tl_to] = parse_timeline_window(o.timeline_window, o.time_limit_s);
    output_file html_out = open_output(o.html_path, "--html");
    for (const auto& warning : run_warnings(*prepared))
        err << "schedlab: warning: " << warning << "\n";

    run_hooks hooks;
    if (trace_sink* t = trace.sink())
        hooks.extra_sinks.push_back(t);
    std::optional<timeline_capture> tl_capture;
    if (html_out.is_open()) {
        tl_capture.emplace(o.machine, std::pair{tl_from, tl_to});
        hooks.extra_sinks.push_back(tl_capture->sink());
    }
    std::string schedstat_table_text, schedstat_raw_text;
    hooks.idle_gaps = !o.schedstat.empty();
    if (!o.schedstat.empty())
        hooks.after_run = [&](const kernel& k) {
            schedstat_table_text = schedstat_table(k) + format_idle_gap(k);
            if (o.schedstat == "raw")
                schedstat_raw_text = schedstat_v15(k);
        };
    explain_writer explain(explain_out);
    if (explain_out.is_open())
        hooks.decisions = &explain;
    std::optional<run_progress_line> progress;
    if (o.progress_tty) {
        progress.emplace(err);
        hooks.progress = std::ref(*progress);
    }
    const run_result r = execute_run(*prepared, hooks);
    if (progress)
        progress->finish();
    trace.commit(r.provenance.nr_cpus);
    if (explain_out.is_open())
        explain.finish();
    if (json_out.is_open()) {
        json_out.write(to_json(r).dump(1) + "\n");
        json_out.commit();
    }

    if (!r.finished)
        return unfinished_run(err, "the benchmark", o.time_limit_s);
    out << r.benchmark_output;
    if (!r.measured_nothing.empty())
        throw config_error("benchmark", r.measured_nothing);
    if (html_out.is_open()) {
        const timeline tl = tl_capture->finish(r, err);
        write_html_report(html_out, compare_runs({r}), &tl);
    }
    if (!o.no_summary)
        print_run_summary(out, r);
    if (!schedstat_table_text.empty())
        out << '\n' << schedstat_table_text;
    if (!schedstat_raw_text.empty())
        out << '\n' << schedstat_raw_text;
    return 0;
}

namespace {

void print_tables(std::ostream& out, const comparison& c, const table_options& t, output_file& html,
                  const timeline* tl = nullptr)
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
        write_html_report(html, c, tl);
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
    if ((!o.timeline.empty() || !o.timeline_window.empty()) && o.tables.html_path.empty())
        throw config_error(o.timeline.empty() ? "--timeline-window" : "--timeline",
                           "the timeline is drawn in the --html report: give --html FILE too");
    if (!o.timeline_window.empty() && o.timeline.empty())
        throw config_error("--timeline-window", "give the run with --timeline ARM,LOAD,RUN");
    const run_spec* tl_spec = o.timeline.empty() ? nullptr : &timeline_run(plan, o.timeline);
    const auto tl_window = parse_timeline_window(o.timeline_window, o.spec.time_limit_s);
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
    std::optional<timeline> tl;
    if (tl_spec) {
        // The run again, with the recorder: the same inputs and seed give the same schedule.
        timeline_capture capture(tl_spec->machine, tl_window);
        run_hooks hooks;
        hooks.extra_sinks.push_back(capture.sink());
        tl = capture.finish(execute_run(*tl_spec, hooks), err);
    }
    print_tables(out, compare_runs(results, rule), o.tables, html_out, tl ? &*tl : nullptr);
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

// ----------------------------------------------------------------------------------------------
// The command line of these subcommands (CLI11)

void add_machines_command(CLI::App& app, int& rc)
{
    app.add_subcommand("machines", "List the machine presets")->callback([&rc] {
        rc = cmd_machines(std::cout);
    });
}

void add_topology_command(CLI::App& app, int& rc)
{
    struct options {
        std::string machine;
        bool verbose = false;
        bool pkg = false;
    };
    auto o = std::make_shared<options>();
    auto* topology = app.add_subcommand(
        "topology", "Print a machine's sched domains the way the kernel's sched_domain_debug does");
    topology->add_option("machine", o->machine, "Preset name, machine JSON file or lscpu -p output")
        ->required();
    topology->add_flag("-v,--verbose", o->verbose,
                       "Also print each domain's flags and balancing parameters");
    topology->add_flag("--pkg", o->pkg, "Name the package level PKG, as kernels from 6.7 do");
    topology->callback([o, &rc] { rc = cmd_topology(std::cout, o->machine, o->verbose, o->pkg); });
}

void add_kernels_command(CLI::App& app, int& rc)
{
    app.add_subcommand("kernels", "List the kernel profiles")->callback([&rc] {
        rc = cmd_kernels(std::cout);
    });
}

void add_features_command(CLI::App& app, int& rc)
{
    auto kernel = std::make_shared<std::string>();
    auto* features = app.add_subcommand(
        "features", "List the sched features, their default per kernel profile and meaning");
    features->add_option("--kernel", *kernel, "Only this kernel profile (with its toggles)");
    features->callback([kernel, &rc] { rc = cmd_features(std::cout, *kernel); });
}

void add_costs_command(CLI::App& app, int& rc)
{
    struct options {
        std::string machine = "host";
        std::vector<std::string> set;
    };
    auto o = std::make_shared<options>();
    auto* costs = app.add_subcommand(
        "costs", "List a machine's costs: value, unit, meaning and where each value comes from");
    costs->add_option("machine", o->machine,
                      "Preset name, machine JSON file or lscpu -p output (default: host)");
    costs->add_option("--cost", o->set, "Override NAME=VALUE (repeatable)")
        ->allow_extra_args(false);
    costs->callback([o, &rc] { rc = cmd_costs(std::cout, o->machine, o->set); });
}

void add_calibrate_command(CLI::App& app, int& rc)
{
    struct options {
        calibrate::options cal;
        bool no_perf = false;
        bool no_tracefs = false;
    };
    auto o = std::make_shared<options>();
    auto* calibrate_cmd = app.add_subcommand(
        "calibrate", "Measure this machine's costs with real runs and write a machine file that "
                     "the host preset uses");
    calibrate_cmd->add_option(
        "-o,--output", o->cal.output,
        "Machine file to write (default: $SCHEDLAB_HOST_MACHINE, else "
        "$XDG_CONFIG_HOME/schedlab/host.json or ~/.config/schedlab/host.json)");
    calibrate_cmd->add_flag("--quick", o->cal.quick, "Shorter runs: about 2 s instead of 10");
    calibrate_cmd->add_flag("--no-perf", o->no_perf,
                            "Do not run perf bench: no exit cost of its child processes, no "
                            "`perf bench sched pipe` cross-check");
    calibrate_cmd->add_flag("--no-tracefs", o->no_tracefs,
                            "Do not time the sched tracepoints in tracefs (it is left alone anyway "
                            "when not writable or in use)");
    calibrate_cmd->callback([o, &rc] {
        o->cal.perf = !o->no_perf;
        o->cal.tracefs = !o->no_tracefs;
        rc = calibrate::cmd_calibrate(std::cout, std::cerr, o->cal);
    });
}

void add_run_command(CLI::App& app, int& rc)
{
    struct options {
        run_options ro;
        std::string seed = "1";
        bool schedstat = false, schedstat_raw = false;
    };
    auto o = std::make_shared<options>();
    run_options& ro = o->ro;
    auto* run = app.add_subcommand(
        "run", "Run a benchmark on a simulated machine and kernel: schedlab run [OPTIONS] -- "
               "BENCHMARK ARGS...");
    run->add_option("-m,--machine", ro.machine, "Preset name, machine JSON file or lscpu -p output")
        ->capture_default_str();
    run->add_option("-k,--kernel", ro.kernel,
                    "Kernel profile with optional +delta, +FEATURE/+NO_FEATURE and "
                    "+preempt=none|voluntary|full|lazy|instant terms (default voluntary), e.g. "
                    "6.6+NO_RUN_TO_PARITY, 6.18+preempt=none")
        ->capture_default_str();
    run->add_option("-f,--features", ro.features,
                    "Feature toggles in the kernel's spelling, comma separated (NO_X turns X off)");
    run->add_option("-s,--seed", o->seed,
                    "Random seed (0 to 2^64-1); the same seed gives the same result")
        ->capture_default_str();
    run->add_option("--cost", ro.costs,
                    "Override a cost: NAME=NANOSECONDS (repeatable); see "
                    "`schedlab costs`")
        ->allow_extra_args(false);
    run->add_option("--time-limit", ro.time_limit_s,
                    "Stop after this many simulated seconds (exit 3 if unfinished)")
        ->capture_default_str()
        ->check(number_in(0, max_time_limit_s, true, "seconds"));
    run->add_option(
           "--check", ro.check,
           "Invariant checks: 'sampled' (every 1024 schedules; release default) or 'every' "
           "(after every schedule; debug default, slow)")
        ->check(CLI::IsMember({"sampled", "every"}));
    run->add_flag("--no-summary", ro.no_summary, "Print only the benchmark's own output");
    run->add_flag("--schedstat", o->schedstat,
                  "Print the load-balance counters per domain level and idle type");
    run->add_flag("--schedstat-raw", o->schedstat_raw,
                  "Also print them as /proc/schedstat version 15, for schedstat tools");
    run->add_option("--explain", ro.explain_path,
                    "Write the decision log to FILE: which branch of select_task_rq_fair placed "
                    "each wakeup and why, and every load-balance attempt's outcome");
    run->add_option("--trace", ro.trace_path,
                    "Write the scheduler tracepoints in ftrace text format to FILE "
                    "(zstd-compressed if FILE ends in .zst, gzip if .gz), or as a trace-cmd "
                    "data file if it ends in .dat (trace-cmd report, KernelShark), or as JSON "
                    "trace events if it ends in .json (Perfetto's UI)");
    run->add_option("--json", ro.json_path,
                    "Write the result with its provenance to FILE (schedlab-result-v1)");
    run->add_option("--html", ro.html_path,
                    "Write a self-contained HTML report of this run to FILE: the distributions "
                    "and the per-CPU timeline");
    run->add_option("--timeline-window", ro.timeline_window,
                    "The timeline's window FROM,TO in simulated seconds (default: the whole "
                    "run, cut short after 10^6 records)");
    run->add_option("benchmark", ro.workload_argv,
                    "The benchmark command line after --, e.g. perf bench sched messaging -g 4 -p")
        ->required();
    run->callback([o, &rc] {
        o->ro.seed = parse_seed(o->seed, "--seed");
        o->ro.schedstat = o->schedstat_raw ? "raw" : o->schedstat ? "table" : "";
        o->ro.progress_tty = isatty(fileno(stderr)) != 0;
        rc = cmd_run(std::cout, std::cerr, o->ro);
    });
}

namespace {

/* The options of the tables compare and report print. */
void add_table_options(CLI::App* cmd, table_options& t)
{
    cmd->add_option("--format", t.format, "Tables to print: amd, mmtests, lkp or all")
        ->capture_default_str()
        ->check(CLI::IsMember({"amd", "mmtests", "lkp", "all"}));
    cmd->add_option("--significance", t.significance,
                    "mmtests significance rule for the asterisks: ci (2024+: the mean +- "
                    "1.96 stddev intervals do not overlap) or ttest (2018-2024: p < 0.10)")
        ->capture_default_str()
        ->check(CLI::IsMember({"ci", "ttest"}));
    cmd->add_flag("--schedstat", t.schedstat,
                  "Also print the schedstat counter differences per domain level and idle type");
    cmd->add_option("--html", t.html_path,
                    "Write a self-contained HTML report with charts to FILE");
}

} // namespace

void add_compare_command(CLI::App& app, int& rc, std::string command_line)
{
    struct options {
        compare_options co;
        std::string seed = "1";
        std::string store;
        bool no_store = false;
    };
    auto o = std::make_shared<options>();
    compare_options& co = o->co;
    co.spec.runs = 5;
    co.command_line = std::move(command_line);
    auto* compare = app.add_subcommand(
        "compare", "A/B comparison: arms x loads x runs in parallel, printed as the LKML "
                   "tables: schedlab compare --kernel A --kernel B [OPTIONS] -- BENCHMARK ARGS...");
    compare
        ->add_option("-m,--machine", co.spec.machine,
                     "Preset name, machine JSON file or lscpu -p output")
        ->capture_default_str();
    compare
        ->add_option("-k,--kernel", co.spec.arms,
                     "An arm: kernel profile with optional +delta, +FEATURE/+NO_FEATURE and "
                     "+preempt=none|voluntary|full|lazy|instant terms (default voluntary; "
                     "repeatable; the first is the baseline)")
        ->required()
        ->allow_extra_args(false); // one value per --kernel, so "--kernel B -- bench" works
    compare->add_option("-f,--features", co.spec.features,
                        "Feature toggles applied to every arm, comma separated");
    compare->add_option("--runs", co.spec.runs, "Runs per arm and load (seeds SEED..SEED+RUNS-1)")
        ->capture_default_str()
        ->check(number_in(1, max_compare_runs, false, ""));
    compare->add_option("-j,--jobs", co.jobs, "Parallel runs (default: the hardware threads)")
        ->check(number_in(1, max_jobs, false, ""));
    compare
        ->add_option("-s,--seed", o->seed,
                     "Seed of run 0; run r of every arm uses SEED + r (paired arms)")
        ->capture_default_str();
    compare->add_option("--cost", co.spec.costs, "Override a cost: NAME=NANOSECONDS (repeatable)")
        ->allow_extra_args(false);
    compare
        ->add_option("--time-limit", co.spec.time_limit_s,
                     "Stop each run after this many simulated seconds")
        ->capture_default_str()
        ->check(number_in(0, max_time_limit_s, true, "seconds"));
    compare->add_option("--check", co.spec.check, "Invariant checks: 'sampled' or 'every'")
        ->check(CLI::IsMember({"sampled", "every"}));
    compare->add_option("--json", co.json_path,
                        "Write every run with its provenance to FILE (schedlab-results-v1)");
    auto* store_opt = compare->add_option(
        "--store", o->store,
        "Results store (SQLite): each run is written as it finishes and runs already stored are "
        "not run again (default: $SCHEDLAB_STORE, else $XDG_DATA_HOME/schedlab/results.sqlite or "
        "~/.local/share/schedlab/results.sqlite)");
    compare
        ->add_flag("--no-store", o->no_store,
                   "Keep the runs in memory only (an interrupted compare then keeps nothing)")
        ->excludes(store_opt);
    add_table_options(compare, co.tables);
    compare->add_option("--timeline", co.timeline,
                        "Draw one run's per-CPU timeline in the --html report: ARM,LOAD,RUN (ARM "
                        "from 1 in --kernel order or its spec, LOAD a value of the load list or "
                        "- without one, RUN from 0: seed --seed + RUN); the run is simulated "
                        "again with the recorder");
    compare->add_option("--timeline-window", co.timeline_window,
                        "The timeline's window FROM,TO in simulated seconds (default: the whole "
                        "run, cut short after 10^6 records)");
    compare
        ->add_option("benchmark", co.spec.workload_argv,
                     "The benchmark after --, with a comma-separated load list in its own load "
                     "option, e.g. perf bench sched messaging -g 1,2,4,8 -p")
        ->required();
    compare->callback([o, &rc] {
        compare_options& c = o->co;
        c.spec.seed = parse_seed(o->seed, "--seed");
        c.progress_tty = isatty(fileno(stderr)) != 0;
        if (launched_ranks() > 1)
            throw config_error("compare", "started as one of several MPI ranks, each of which "
                                          "would run the whole compare; distribute runs with "
                                          "`schedlab sweep` (docs/sweeps.md)");
        if (!o->no_store) {
            c.store_path = o->store.empty() ? default_store_path() : o->store;
            if (c.store_path.empty())
                throw config_error("--store", "no default store ($HOME is not set): give "
                                              "--store FILE or --no-store");
        }
        rc = cmd_compare(std::cout, std::cerr, c);
    });
}

void add_report_command(CLI::App& app, int& rc)
{
    auto rpo = std::make_shared<report_options>();
    auto* report = app.add_subcommand(
        "report", "Print the tables (and --html) again from a results store (one set per "
                  "experiment) or from result files of compare --json or run --json");
    add_input_options(report, rpo->files,
                      "Stores, or result files (schedlab-results-v1 or -result-v1), which are "
                      "merged into one comparison (default: the default store)",
                      rpo->experiments,
                      ": an id or a name pattern such as 'shared-runq-v3/*/tbench' (repeatable; "
                      "`schedlab store list` lists them)");
    add_table_options(report, rpo->tables);
    report->callback([rpo, &rc] { rc = cmd_report(std::cout, std::cerr, *rpo); });
}

void add_fidelity_command(CLI::App& app, int& rc)
{
    auto fo = std::make_shared<fidelity_options>();
    auto* fidelity = app.add_subcommand(
        "fidelity", "Score results of compare --json against the published SHARED_RUNQ v3 tables "
                    "(bergamo-2s): our AMD tables beside AMD's, and the sign agreement");
    add_input_options(fidelity, fo->files,
                      "Results files of schedlab compare --json (schedlab-results-v1), or "
                      "stores (default: the default store)",
                      fo->experiments, " (id or name pattern; repeatable)");
    fidelity->add_option(
        "--reference", fo->reference_dir,
        "Directory of the published CSVs (default: " + default_fidelity_reference_dir() + ")");
    fidelity
        ->add_option("--threshold", fo->threshold,
                     "Score the cells whose published |pct imp| is at least this (percent)")
        ->capture_default_str()
        ->check(number_in(0, 100, false, "percent"));
    fidelity->add_option("--json", fo->json_path,
                         "Also write the score and every row to FILE (schedlab-fidelity-v1)");
    fidelity->callback([fo, &rc] { rc = cmd_fidelity(std::cout, std::cerr, *fo); });
}

} // namespace schedlab
