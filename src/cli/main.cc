// SPDX-License-Identifier: GPL-2.0-only
/*
 * The schedlab command line. The only place that includes CLI11.
 *
 * Exit codes: 0 success; 2 a user error (bad flag, unknown name, malformed
 * file), with a message naming the input; 3 a run that did not finish within
 * its simulated time limit. A simulator bug aborts with the scheduler state.
 */
#include "calibrate/calibrate.h"
#include "cli/commands.h"
#include "cli/mpi.h"

#include "sim/config_error.h"
#include "trace/sched_latency.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <unistd.h>

using namespace schedlab;

namespace {

/*
 * A number within [lo, hi] (or (lo, hi] when lo_open), with the range in the message: CLI11's
 * own PositiveNumber prints DBL_MAX's 309 digits and lets NaN through.
 */
CLI::Validator number_in(double lo, double hi, bool lo_open, const std::string& unit)
{
    const std::string range =
        fmt::format("{}{}, {}]{}", lo_open ? "(" : "[", lo, hi, unit.empty() ? "" : " " + unit);
    return CLI::Validator(
        [=](std::string& value) -> std::string {
            double v = 0;
            try {
                std::size_t used = 0;
                v = std::stod(value, &used);
                if (used != value.size())
                    return fmt::format("'{}' is not a number", value);
            } catch (const std::exception&) {
                return fmt::format("'{}' is not a number", value);
            }
            if (!(lo_open ? v > lo : v >= lo) || !(v <= hi)) // NaN fails both
                return fmt::format("{} is outside {}", value, range);
            return "";
        },
        "in " + range);
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"schedlab: a deterministic discrete-event simulator of the Linux CPU "
                 "scheduler",
                 "schedlab"};
    app.set_version_flag("--version", "schedlab " + std::string(schedlab_version()));
    app.require_subcommand(1);
    app.footer("Run `schedlab COMMAND --help` for a command's options. Documentation: "
               "README.md and docs/.");

    auto* machines = app.add_subcommand("machines", "List the machine presets");

    std::string topo_machine;
    bool topo_verbose = false;
    bool topo_pkg = false;
    auto* topology = app.add_subcommand(
        "topology", "Print a machine's sched domains the way the kernel's sched_domain_debug does");
    topology->add_option("machine", topo_machine, "Preset name, machine JSON file or lscpu -p output")
        ->required();
    topology->add_flag("-v,--verbose", topo_verbose,
                       "Also print each domain's flags and balancing parameters");
    topology->add_flag("--pkg", topo_pkg, "Name the package level PKG, as kernels from 6.7 do");

    auto* kernels = app.add_subcommand("kernels", "List the kernel profiles");

    std::string feat_kernel;
    auto* features = app.add_subcommand(
        "features", "List the sched features, their default per kernel profile and meaning");
    features->add_option("--kernel", feat_kernel, "Only this kernel profile (with its toggles)");

    std::string costs_machine = "host";
    std::vector<std::string> costs_set;
    auto* costs = app.add_subcommand(
        "costs", "List a machine's costs: value, unit, meaning and where each value comes from");
    costs->add_option("machine", costs_machine,
                      "Preset name, machine JSON file or lscpu -p output (default: host)");
    costs->add_option("--cost", costs_set, "Override NAME=VALUE (repeatable)")
        ->allow_extra_args(false);

    calibrate::options cal;
    bool cal_no_perf = false;
    auto* calibrate_cmd = app.add_subcommand(
        "calibrate", "Measure this machine's costs with real runs and write a machine file that "
                     "the host preset uses");
    calibrate_cmd->add_option("-o,--output", cal.output,
                              "Machine file to write (default: $SCHEDLAB_HOST_MACHINE, else "
                              "$XDG_CONFIG_HOME/schedlab/host.json or ~/.config/schedlab/host.json)");
    calibrate_cmd->add_flag("--quick", cal.quick, "Shorter runs: about 2 s instead of 10");
    calibrate_cmd->add_flag("--no-perf", cal_no_perf,
                            "Do not run perf bench: no exit cost of its child processes, no "
                            "`perf bench sched pipe` cross-check");

    run_options ro;
    auto* run = app.add_subcommand(
        "run", "Run a benchmark on a simulated machine and kernel: schedlab run [OPTIONS] -- "
               "BENCHMARK ARGS...");
    run->add_option("-m,--machine", ro.machine, "Preset name, machine JSON file or lscpu -p output")
        ->capture_default_str();
    run->add_option("-k,--kernel", ro.kernel,
                    "Kernel profile with optional +FEATURE/+NO_FEATURE terms, e.g. 6.6+NO_RUN_TO_PARITY")
        ->capture_default_str();
    run->add_option("-f,--features", ro.features,
                    "Feature toggles in the kernel's spelling, comma separated (NO_X turns X off)");
    std::string run_seed = "1";
    run->add_option("-s,--seed", run_seed,
                    "Random seed (0 to 2^64-1); the same seed gives the same result")
        ->capture_default_str();
    run->add_option("--cost", ro.costs, "Override a cost: NAME=NANOSECONDS (repeatable); see "
                                        "`schedlab costs`")
        ->allow_extra_args(false);
    run->add_option("--time-limit", ro.time_limit_s,
                    "Stop after this many simulated seconds (exit 3 if unfinished)")
        ->capture_default_str()
        ->check(number_in(0, max_time_limit_s, true, "seconds"));
    run->add_option("--check", ro.check,
                    "Invariant checks: 'sampled' (every 1024 schedules; release default) or 'every' "
                    "(after every schedule; debug default, slow)")
        ->check(CLI::IsMember({"sampled", "every"}));
    run->add_flag("--no-summary", ro.no_summary, "Print only the benchmark's own output");
    bool schedstat = false, schedstat_raw = false;
    run->add_flag("--schedstat", schedstat,
                  "Print the load-balance counters per domain level and idle type");
    run->add_flag("--schedstat-raw", schedstat_raw,
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

    replay_command_options rpl;
    auto* replay = app.add_subcommand(
        "replay", "Re-run a recorded workload: each task of an ftrace sched trace rebuilt (CPU "
                  "bursts, who woke it, timers, forks, exits) and simulated on a machine and "
                  "kernel; prints the run summary and the trace's statistics beside the "
                  "replay's (docs/replay.md)");
    replay->add_option("trace", rpl.trace,
                       "The trace: /sys/kernel/tracing/trace or trace-cmd report text, plain or "
                       ".xz/.zst/.gz, or a trace-cmd .dat file")
        ->required();
    replay->add_option("-m,--machine", rpl.machine, "Preset name, machine JSON file or lscpu -p output")
        ->capture_default_str();
    replay->add_option("-k,--kernel", rpl.kernel,
                       "Kernel profile with optional +FEATURE/+NO_FEATURE terms (default: 6.18, "
                       "the shared traces' kernel)")
        ->capture_default_str();
    replay->add_option("--comm", rpl.comm,
                       "Replay only the tasks whose comm matches this regular expression (any "
                       "comm a task had; default: every task that is not a kernel thread)");
    replay->add_option("--speed", rpl.speed,
                       "The simulated CPU's speed relative to the traced one: CPU bursts are "
                       "divided by it")
        ->capture_default_str();
    replay->add_option("--bursts", rpl.bursts,
                       "net: each traced CPU burst less the kernel work the simulation charges "
                       "the task (context switches, wakeups, forks); gross: as traced")
        ->capture_default_str();
    replay->add_option("--deps", rpl.deps,
                       "count: a block ended by a traced task waits for the task's n-th such "
                       "wake by any waker; edge: for the n-th wake by the waker the trace shows")
        ->capture_default_str();
    replay->add_flag("--sync-wakes", rpl.sync_wakes,
                     "Replay dependency wakes as WF_SYNC wakeups, as pipe and socket writes make "
                     "(a trace does not say which were)");
    replay->add_option("--rt-policy", rpl.rt_policy,
                       "fifo: tasks traced at an RT prio (0-98) replay as SCHED_FIFO at "
                       "rt_priority 99 - prio; rr: as SCHED_RR (a trace cannot tell them apart)")
        ->capture_default_str();
    replay->add_flag("--quiet", rpl.quiet,
                     "No progress on stderr while the trace is read (shown only on a terminal)");
    replay->add_option("--trace", rpl.trace_path,
                       "Write the replay's scheduler tracepoints in ftrace text format to FILE "
                       "(.zst, .gz compressed) or as a trace-cmd .dat, which schedlab replay "
                       "reads too, or as JSON trace events (.json: Perfetto's UI)");
    std::string replay_seed = "1";
    replay->add_option("-s,--seed", replay_seed, "Random seed (0 to 2^64-1)")->capture_default_str();
    replay->add_option("--cost", rpl.costs, "Override a cost: NAME=NANOSECONDS (repeatable)")
        ->allow_extra_args(false);
    replay->add_option("--time-limit", rpl.time_limit_s,
                       "Stop after this many simulated seconds (exit 3 if unfinished)")
        ->capture_default_str()
        ->check(number_in(0, max_time_limit_s, true, "seconds"));

    latency_options lat;
    std::string lat_trace;
    bool lat_pids = false;
    auto* latency = app.add_subcommand(
        "latency", "Scheduling delays per task from a trace, in the layout of perf sched "
                   "latency, and per wakeup with --wakeups (perf sched timehist -w); the reason "
                   "each wakeup was placed where it was, from schedlab run's --explain log");
    latency
        ->add_option("trace", lat_trace,
                     "The trace: tracefs or trace-cmd report text (plain, .xz/.zst/.gz), a "
                     "trace-cmd .dat file, or schedlab run/replay's --trace output")
        ->required();
    latency->add_flag("--pids", lat_pids, "One row per pid (default: merged by comm, as perf)");
    latency->add_option("--sort", lat.sort, "Sort keys: runtime, switch, avg, max, pid")
        ->capture_default_str();
    latency->add_flag("--wakeups", lat.wakeups,
                      "Also list every wakeup: waker, wakee, the CPU it was placed on and ran on, "
                      "its delay");
    latency->add_option("--explain", lat.explain_path,
                        "The decision log of the run that wrote the trace (schedlab run --explain "
                        "FILE): each wakeup's placement reason");
    latency->add_flag("--quiet", lat.quiet,
                      "No progress on stderr while the trace is read (shown only on a terminal)");

    auto add_table_options = [](CLI::App* cmd, table_options& t) {
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
    };

    compare_options co;
    co.spec.runs = 5;
    auto* compare = app.add_subcommand(
        "compare", "A/B comparison: arms x loads x runs in parallel, printed as the LKML "
                   "tables: schedlab compare --kernel A --kernel B [OPTIONS] -- BENCHMARK ARGS...");
    compare->add_option("-m,--machine", co.spec.machine,
                        "Preset name, machine JSON file or lscpu -p output")
        ->capture_default_str();
    compare->add_option("-k,--kernel", co.spec.arms,
                        "An arm: kernel profile with optional +FEATURE/+NO_FEATURE terms "
                        "(repeatable; the first is the baseline)")
        ->required()
        ->allow_extra_args(false); // one value per --kernel, so "--kernel B -- bench" works
    compare->add_option("-f,--features", co.spec.features,
                        "Feature toggles applied to every arm, comma separated");
    compare->add_option("--runs", co.spec.runs, "Runs per arm and load (seeds SEED..SEED+RUNS-1)")
        ->capture_default_str()
        ->check(number_in(1, max_compare_runs, false, ""));
    compare->add_option("-j,--jobs", co.jobs, "Parallel runs (default: the hardware threads)")
        ->check(number_in(1, max_jobs, false, ""));
    std::string compare_seed = "1";
    compare
        ->add_option("-s,--seed", compare_seed,
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
    std::string compare_store;
    bool compare_no_store = false;
    auto* store_opt = compare->add_option(
        "--store", compare_store,
        "Results store (SQLite): each run is written as it finishes and runs already stored are "
        "not run again (default: $SCHEDLAB_STORE, else $XDG_DATA_HOME/schedlab/results.sqlite or "
        "~/.local/share/schedlab/results.sqlite)");
    compare
        ->add_flag("--no-store", compare_no_store,
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
    compare->add_option("benchmark", co.spec.workload_argv,
                        "The benchmark after --, with a comma-separated load list in its own load "
                        "option, e.g. perf bench sched messaging -g 1,2,4,8 -p")
        ->required();

    report_options rpo;
    auto* report = app.add_subcommand(
        "report", "Print the tables (and --html) again from a results store (one set per "
                  "experiment) or from result files of compare --json or run --json");
    report->add_option("inputs", rpo.files,
                       "Stores, or result files (schedlab-results-v1 or -result-v1), which are "
                       "merged into one comparison (default: the default store)");
    report
        ->add_option("-e,--experiment", rpo.experiments,
                     "Only these experiments of the store: an id or a name pattern such as "
                     "'shared-runq-v3/*/tbench' (repeatable; `schedlab store list` lists them)")
        ->allow_extra_args(false);
    add_table_options(report, rpo.tables);

    sweep_options swo;
    auto* sweep = app.add_subcommand(
        "sweep", "Run a sweep spec (TOML or JSON: machines x kernels x benchmarks with their "
                 "loads x seeds) into a results store, resumably; under mpirun the ranks share "
                 "the runs (docs/sweeps.md)");
    sweep->add_option("spec", swo.spec_path, "The sweep spec (.toml, or .json)")->required();
    sweep->add_option("--store", swo.store_path,
                      "Results store (default: $SCHEDLAB_STORE, else "
                      "$XDG_DATA_HOME/schedlab/results.sqlite or "
                      "~/.local/share/schedlab/results.sqlite)");
    sweep
        ->add_option("-j,--jobs", swo.jobs,
                     "Parallel runs (default: the hardware threads; under MPI, 1 per rank)")
        ->check(number_in(1, max_jobs, false, ""));
    sweep->add_option("--shard", swo.shard,
                      "Run only shard i of N (i/N, from 1): run k of the plan is in shard "
                      "k mod N + 1; merge the shards' stores with `schedlab store merge`");
    sweep->add_flag("-n,--dry-run", swo.dry_run,
                    "Print each experiment's runs, how many are stored and how many would run");

    export_options exo;
    auto* export_cmd = app.add_subcommand(
        "export", "Write runs as CSV (one row per run and metric; for pandas and R) or JSON, "
                  "from a results store or result files");
    export_cmd->add_option("inputs", exo.files,
                           "Stores or result files (default: the default store)");
    export_cmd
        ->add_option("-e,--experiment", exo.experiments,
                     "Only these experiments of the store (id or name pattern; repeatable)")
        ->allow_extra_args(false);
    export_cmd->add_option("--format", exo.format, "csv or json")
        ->capture_default_str()
        ->check(CLI::IsMember({"csv", "json"}));
    export_cmd->add_flag("--schedstat", exo.schedstat,
                         "CSV of the schedstat counters (one row per run, domain level, idle type "
                         "and counter) instead of the metrics");
    export_cmd->add_option("-o,--output", exo.output, "Write to FILE (default: standard output)");

    auto* store_cmd = app.add_subcommand("store", "Manage results stores: merge, list");
    store_cmd->require_subcommand(1);
    std::string merge_out;
    std::vector<std::string> merge_in;
    auto* store_merge = store_cmd->add_subcommand(
        "merge", "Copy the runs and experiments of stores (e.g. the shards of a sweep) into "
                 "OUTPUT; runs already there are kept once");
    store_merge->add_option("output", merge_out, "The store to merge into (created if missing)")
        ->required();
    store_merge->add_option("inputs", merge_in, "Stores to merge")->required();
    std::string list_store;
    auto* store_list = store_cmd->add_subcommand(
        "list", "List a store's experiments: id, runs stored of planned, name and arms");
    store_list->add_option("store", list_store, "The store (default: the default store)");

    fidelity_options fo;
    auto* fidelity = app.add_subcommand(
        "fidelity", "Score results of compare --json against the published SHARED_RUNQ v3 tables "
                    "(bergamo-2s): our AMD tables beside AMD's, and the sign agreement");
    fidelity->add_option("inputs", fo.files,
                         "Results files of schedlab compare --json (schedlab-results-v1), or "
                         "stores (default: the default store)");
    fidelity
        ->add_option("-e,--experiment", fo.experiments,
                     "Only these experiments of the store (id or name pattern; repeatable)")
        ->allow_extra_args(false);
    fidelity->add_option("--reference", fo.reference_dir,
                         "Directory of the published CSVs (default: " +
                             default_fidelity_reference_dir() + ")");
    fidelity
        ->add_option("--threshold", fo.threshold,
                     "Score the cells whose published |pct imp| is at least this (percent)")
        ->capture_default_str()
        ->check(number_in(0, 100, false, "percent"));
    fidelity->add_option("--json", fo.json_path,
                         "Also write the score and every row to FILE (schedlab-fidelity-v1)");

    // "schedlab bogus" names the word it did not understand (CLI11 would say "A subcommand is
    // required").
    if (argc >= 2 && argv[1][0] != '-') {
        std::vector<std::string> names;
        for (const CLI::App* sub : app.get_subcommands({}))
            names.push_back(sub->get_name());
        if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
            const std::string hint = nearest_name(argv[1], names);
            std::fprintf(stderr, "schedlab: error: unknown command '%s'%s; the commands are %s\n",
                         argv[1],
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint).c_str(),
                         fmt::format("{}", fmt::join(names, ", ")).c_str());
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }

    try {
        if (*machines)
            return cmd_machines(std::cout);
        if (*topology)
            return cmd_topology(std::cout, topo_machine, topo_verbose, topo_pkg);
        if (*kernels)
            return cmd_kernels(std::cout);
        if (*features)
            return cmd_features(std::cout, feat_kernel);
        if (*costs)
            return cmd_costs(std::cout, costs_machine, costs_set);
        if (*calibrate_cmd) {
            cal.perf = !cal_no_perf;
            return calibrate::cmd_calibrate(std::cout, std::cerr, cal);
        }
        if (*run) {
            ro.seed = parse_seed(run_seed, "--seed");
            ro.schedstat = schedstat_raw ? "raw" : schedstat ? "table" : "";
            ro.progress_tty = isatty(fileno(stderr)) != 0;
            return cmd_run(std::cout, std::cerr, ro);
        }
        if (*replay) {
            rpl.seed = parse_seed(replay_seed, "--seed");
            return cmd_replay(std::cout, std::cerr, rpl);
        }
        if (*latency) {
            lat.merge_by_comm = !lat_pids;
            if (!lat.explain_path.empty())
                lat.wakeups = true;
            return cmd_latency(std::cout, lat_trace, lat);
        }
        if (*compare) {
            co.spec.seed = parse_seed(compare_seed, "--seed");
            co.progress_tty = isatty(fileno(stderr)) != 0;
            for (int i = 0; i < argc; ++i)
                co.command_line += (i ? " " : "") + std::string(argv[i]);
            if (launched_ranks() > 1)
                throw config_error("compare", "started as one of several MPI ranks, each of which "
                                              "would run the whole compare; distribute runs with "
                                              "`schedlab sweep` (docs/sweeps.md)");
            if (!compare_no_store) {
                co.store_path = compare_store.empty() ? default_store_path() : compare_store;
                if (co.store_path.empty())
                    throw config_error("--store", "no default store ($HOME is not set): give "
                                                  "--store FILE or --no-store");
            }
            return cmd_compare(std::cout, std::cerr, co);
        }
        if (*report)
            return cmd_report(std::cout, std::cerr, rpo);
        if (*sweep) {
            swo.progress_tty = isatty(fileno(stderr)) != 0;
            if (swo.store_path.empty())
                swo.store_path = default_store_path();
            const int rc = cmd_sweep(std::cout, std::cerr, swo);
            mpi_world::finalize();
            return rc;
        }
        if (*export_cmd)
            return cmd_export(std::cout, std::cerr, exo);
        if (*store_merge)
            return cmd_store_merge(std::cout, merge_out, merge_in);
        if (*store_list)
            return cmd_store_list(std::cout, list_store);
        if (*fidelity)
            return cmd_fidelity(std::cout, std::cerr, fo);
    } catch (const config_error& e) {
        std::fprintf(stderr, "schedlab: error: %s\n", e.what());
        mpi_world::abort_if_distributed(2); // the other ranks would wait for this one
        return 2;
    }
    return 0;
}
