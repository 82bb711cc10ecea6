// SPDX-License-Identifier: GPL-2.0-only
/*
 * `schedlab replay TRACE`: a recorded workload re-run on a simulated machine and
 * kernel (workload/replay.h), with the usual run summary and a table of the
 * trace's statistics beside the replay's (docs/replay.md).
 */
#include "cli/commands.h"

#include "cli/cli_options.h"

#include "experiment/result_json.h"
#include "experiment/run.h"
#include "sim/config_error.h"
#include "sim/file_io.h"
#include "trace/sched_latency.h"
#include "workload/replay.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

namespace schedlab {

namespace {

std::string ratio(double trace, double replay)
{
    if (trace == 0)
        return replay == 0 ? "1.00" : "-";
    return fmt::format("{:.2f}", replay / trace);
}

} // namespace

std::string format_replay_table(const replay_trace& t, const run_result& r)
{
    const sched_summary_result& a = t.summary;
    const run_sched_summary& b = r.summary;
    std::string s;
    const auto row = [&](const std::string& what, double x, double y, int decimals) {
        s += fmt::format("# {:<30} {:>12.{}f} {:>12.{}f} {:>9}\n", what, x, decimals, y, decimals,
                         ratio(x, y));
    };
    const double span_a = static_cast<double>(a.end - a.begin) / 1e9;
    const double span_b = static_cast<double>(b.simulated_ns) / 1e9;
    s += fmt::format("# trace vs replay: {} tasks; trace {} CPUs, replay {} CPUs\n", t.tasks.size(),
                     t.nr_cpus, r.provenance.nr_cpus);
    s += fmt::format("# {:<30} {:>12} {:>12} {:>9}\n", "", "trace", "replay", "ratio");
    row("span (s)", span_a, span_b, 6);
    row("context switches, voluntary", static_cast<double>(a.voluntary),
        static_cast<double>(b.voluntary), 0);
    row("context switches, involuntary", static_cast<double>(a.involuntary),
        static_cast<double>(b.involuntary), 0);
    row("context switches per second",
        span_a > 0 ? static_cast<double>(a.voluntary + a.involuntary) / span_a : 0,
        span_b > 0 ? static_cast<double>(b.voluntary + b.involuntary) / span_b : 0, 0);
    // A trace without sched_waking has neither its wakeups nor their latencies and targets.
    const bool no_wakings = t.sched_waking_events == 0;
    const auto wake_row = [&](const std::string& what, double x, double y, int decimals) {
        if (!no_wakings)
            return row(what, x, y, decimals);
        s += fmt::format("# {:<30} {:>12} {:>12.{}f} {:>9}\n", what, "-", y, decimals, "-");
    };
    wake_row("wakeups", static_cast<double>(a.wakeups), static_cast<double>(b.wakeups), 0);
    const auto us = [](u64 ns) { return static_cast<double>(ns) / 1000.0; };
    wake_row("wakeup-to-run p50 (us)", us(a.wakeup_latency.percentile(50)),
             us(b.wakeup_latency_p50_ns), 1);
    wake_row("wakeup-to-run p99 (us)", us(a.wakeup_latency.percentile(99)),
             us(b.wakeup_latency_p99_ns), 1);
    wake_row("wakeup-to-run max (us)", us(a.wakeup_latency.max()), us(b.wakeup_latency_max_ns), 1);
    // Wakeup targets (trace/wakeup_target.h): counts, with their share of the placed
    // wakeups (of every sched_waking for the two rows of the unplaced).
    const wakeup_target_counts &wa = a.wakeup_targets, &wb = b.wakeup_targets;
    const auto share = [&](const wakeup_target_counts& c, u64 n, bool of_all) {
        const u64 of =
            of_all ? c.total() : c.placed_by(waker_kind::task) + c.placed_by(waker_kind::other);
        return of > 0 ? fmt::format("{} ({:.0f}%)", n,
                                    100.0 * static_cast<double>(n) / static_cast<double>(of))
                      : fmt::format("{}", n);
    };
    const auto target_row = [&](const std::string& what, u64 x, u64 y, bool of_all) {
        s += fmt::format("# {:<30} {:>12} {:>12} {:>9}\n", what,
                         no_wakings ? "-" : share(wa, x, of_all), share(wb, y, of_all),
                         no_wakings ? "-" : ratio(static_cast<double>(x), static_cast<double>(y)));
    };
    for (const auto& [cls, what] : {std::pair{wakeup_target::waker, "wakeup target: waker's CPU"},
                                    std::pair{wakeup_target::prev, "wakeup target: previous CPU"},
                                    std::pair{wakeup_target::both, "wakeup target: prev = waker's"},
                                    std::pair{wakeup_target::other, "wakeup target: other CPU"}})
        target_row(what, wa.of(cls), wb.of(cls), false);
    target_row("placed by irq/untraced waker", wa.placed_by(waker_kind::other),
               wb.placed_by(waker_kind::other), false);
    target_row("wakeups not placed (runnable)", wa.not_placed, wb.not_placed, true);
    target_row("wakeups placed, not run", wa.not_run, wb.not_run, true);
    row("migrations", static_cast<double>(a.migrations), static_cast<double>(b.migrations), 0);
    row("forks", static_cast<double>(a.forks), static_cast<double>(b.forks), 0);
    const int na = static_cast<int>(a.busy.size()), nb = static_cast<int>(b.busy_ns.size());
    const auto util_b = [&](int cpu) {
        return b.simulated_ns > 0
                   ? 100.0 * static_cast<double>(b.busy_ns[static_cast<std::size_t>(cpu)]) /
                         static_cast<double>(b.simulated_ns)
                   : 0.0;
    };
    if (std::max(na, nb) <= 16) {
        for (int cpu = 0; cpu < std::max(na, nb); ++cpu) {
            const std::string what = fmt::format("cpu{} utilisation (%)", cpu);
            if (cpu < na && cpu < nb)
                row(what, 100.0 * a.utilisation(cpu), util_b(cpu), 1);
            else
                s += fmt::format("# {:<30} {:>12} {:>12} {:>9}\n", what,
                                 cpu < na ? fmt::format("{:.1f}", 100.0 * a.utilisation(cpu)) : "-",
                                 cpu < nb ? fmt::format("{:.1f}", util_b(cpu)) : "-", "-");
        }
    }
    double sum_a = 0, sum_b = 0;
    for (int cpu = 0; cpu < na; ++cpu)
        sum_a += a.utilisation(cpu);
    for (int cpu = 0; cpu < nb; ++cpu)
        sum_b += util_b(cpu) / 100.0;
    row("CPUs busy (sum of utilisation)", sum_a, sum_b, 2);
    // Idle: every CPU's span less its busy time (the trace's other tasks count as idle).
    row("CPU idle time (s, all CPUs)", span_a * na - sum_a * span_a, span_b * nb - sum_b * span_b,
        6);
    return s;
}

nlohmann::ordered_json replay_trace_json(const replay_trace& t)
{
    const sched_summary_result& a = t.summary;
    std::vector<s64> idle_ns;
    for (const sim_dur b : a.busy)
        idle_ns.push_back((a.end - a.begin) - b);
    return {
        {"path", t.path},
        {"sha256", t.sha256},
        {"nr_cpus", t.nr_cpus},
        {"tasks", t.tasks.size()},
        {"blocks_ended_by",
         {{"traced_task", t.causes.dependency},
          {"timer", t.causes.timer},
          {"external", t.causes.external},
          {"unknown", t.causes.unknown},
          {"waking_before_switch_out", t.causes.early}}},
        {"deadline_tasks", t.deadline_tasks},
        {"sched_summary",
         {{"span_ns", a.end - a.begin},
          {"voluntary", a.voluntary},
          {"involuntary", a.involuntary},
          {"migrations", a.migrations},
          {"forks", a.forks},
          {"wakeups", a.wakeups},
          {"wakeup_latency_count", a.wakeup_latency.count()},
          {"wakeup_latency_p50_ns", a.wakeup_latency.percentile(50)},
          {"wakeup_latency_p99_ns", a.wakeup_latency.percentile(99)},
          {"wakeup_latency_max_ns", a.wakeup_latency.max()},
          {"busy_ns", a.busy},
          {"idle_ns", idle_ns},
          // null: the trace has no sched_waking events to read them from
          {"wakeup_targets", t.sched_waking_events == 0
                                 ? nlohmann::ordered_json()
                                 : wakeup_targets_to_json(a.wakeup_targets)}}},
        {"sched_waking_events", t.sched_waking_events},
        {"notes", t.warnings},
    };
}

int cmd_replay(std::ostream& out, std::ostream& err, const replay_command_options& o)
{
    std::vector<std::string> argv = {"replay", o.trace,  "--speed", o.speed,     "--bursts",
                                     o.bursts, "--deps", o.deps,    "--rt-policy", o.rt_policy,
                                     "--wakee-flips", o.wakee_flips};
    if (o.sync_wakes)
        argv.push_back("--sync-wakes");
    if (o.softirq_wakes)
        argv.push_back("--softirq-wakes");
    if (o.quiet)
        argv.push_back("--quiet");
    if (!o.comm.empty()) {
        argv.push_back("--comm");
        argv.push_back(o.comm);
    }
    const run_spec spec{.machine = o.machine, .kernel = o.kernel, .costs = o.costs, .seed = o.seed,
                        .workload_argv = argv, .time_limit_s = o.time_limit_s};
    const auto prepared = prepare_run(spec); // every user error (the trace's too) surfaces here
    trace_file_output trace(o.trace_path);
    output_file json_out = o.json_path.empty() ? output_file{} : output_file(o.json_path, "--json");
    output_file explain_out =
        o.explain_path.empty() ? output_file{} : output_file(o.explain_path, "--explain");
    // The trace as prepare_run() read it (once: the run replays the same one).
    const replay_trace& t =
        dynamic_cast<const replay_workload&>(prepared_workload(*prepared)).trace();
    for (const std::string& w : t.warnings)
        err << "schedlab: note: " << o.trace << ": " << w << "\n";
    for (const auto& warning : run_warnings(*prepared))
        err << "schedlab: warning: " << warning << "\n";

    run_hooks hooks;
    if (trace_sink* ts = trace.sink())
        hooks.extra_sinks.push_back(ts);
    explain_writer explain(explain_out);
    if (explain_out.is_open())
        hooks.decisions = &explain;
    const run_result r = execute_run(*prepared, hooks);
    trace.commit(r.provenance.nr_cpus);
    if (explain_out.is_open())
        explain.finish();
    if (!r.finished)
        return unfinished_run(err, "the replay", o.time_limit_s);
    out << r.benchmark_output;
    print_run_summary(out, r);
    out << "\n" << format_replay_table(t, r);
    if (json_out.is_open()) {
        // The run's result (schedlab run --json's) and the trace's side of the table.
        nlohmann::ordered_json j = to_json(r);
        j["replay_trace"] = replay_trace_json(t);
        json_out.write(j.dump(1) + "\n");
        json_out.commit();
    }
    return 0;
}

int cmd_latency(std::ostream& out, const std::string& trace, const latency_options& o)
{
    if (!o.wakeups) {
        print_latency(out, sched_latency(trace, o));
        return 0;
    }
    // The per-wakeup view follows the per-task table, which needs the whole trace: its rows
    // wait in a temporary file (deleted on close), not in memory.
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> spill(std::tmpfile(), &std::fclose);
    if (!spill)
        throw config_error("--wakeups", fmt::format("cannot create a temporary file for the "
                                                    "per-wakeup rows: {}",
                                                    std::strerror(errno)));
    const auto write_failed = [] {
        return config_error("--wakeups", fmt::format("cannot write the per-wakeup rows to a "
                                                     "temporary file: {}",
                                                     std::strerror(errno)));
    };
    const latency_result r = sched_latency(trace, o, [&](const wakeup_row& w) {
        const std::string row = format_wakeup_row(w);
        if (std::fwrite(row.data(), 1, row.size(), spill.get()) != row.size())
            throw write_failed();
    });
    print_latency(out, r);
    if (r.wakeups_total == 0)
        return 0;
    print_wakeups_header(out);
    if (std::fflush(spill.get()) != 0)
        throw write_failed();
    std::rewind(spill.get());
    std::vector<char> buf(1 << 20);
    for (std::size_t got; (got = std::fread(buf.data(), 1, buf.size(), spill.get())) > 0;)
        out.write(buf.data(), static_cast<std::streamsize>(got));
    print_wakeups_footer(out, r);
    return 0;
}

// ----------------------------------------------------------------------------------------------
// The command line of replay and latency (CLI11)

void add_replay_command(CLI::App& app, int& rc)
{
    struct options {
        replay_command_options rpl;
        std::string seed = "1";
    };
    auto o = std::make_shared<options>();
    replay_command_options& rpl = o->rpl;
    auto* replay = app.add_subcommand(
        "replay", "Re-run a recorded workload: each task of an ftrace sched trace rebuilt (CPU "
                  "bursts, who woke it, timers, forks, exits) and simulated on a machine and "
                  "kernel; prints the run summary and the trace's statistics beside the "
                  "replay's (docs/replay.md)");
    replay
        ->add_option("trace", rpl.trace,
                     "The trace: /sys/kernel/tracing/trace or trace-cmd report text, plain or "
                     ".xz/.zst/.gz, or a trace-cmd .dat file")
        ->required();
    replay
        ->add_option("-m,--machine", rpl.machine,
                     "Preset name, machine JSON file or lscpu -p output")
        ->capture_default_str();
    replay
        ->add_option("-k,--kernel", rpl.kernel,
                     "Kernel profile with optional +FEATURE/+NO_FEATURE and "
                     "+preempt=none|voluntary|full|lazy|instant terms (default: 6.18, "
                     "the shared traces' kernel; their guest ran +preempt=none)")
        ->capture_default_str();
    replay->add_option("--comm", rpl.comm,
                       "Replay only the tasks whose comm matches this regular expression (any "
                       "comm a task had; default: every task that is not a kernel thread)");
    replay
        ->add_option("--speed", rpl.speed,
                     "The simulated CPU's speed relative to the traced one: CPU bursts are "
                     "divided by it")
        ->capture_default_str();
    replay
        ->add_option("--bursts", rpl.bursts,
                     "net: each traced CPU burst less the kernel work the simulation charges "
                     "the task (context switches, wakeups, forks); gross: as traced")
        ->capture_default_str();
    replay
        ->add_option("--deps", rpl.deps,
                     "flow: as count, and a task's k-th dependency wake (by any waker) waits "
                     "until the task has passed its (k-1)-th dependency wait (a window of one "
                     "traced hand-off per wakee); count: a block ended by a traced task "
                     "waits for the task's n-th such wake by any waker; edge: for the n-th "
                     "wake by the waker the "
                     "trace shows; keep: as count, and a wait whose wake came first still "
                     "sleeps (1 ns), so every traced block is kept; reply: as flow, but a "
                     "request (a wake of a task that then wakes this one back in the same burst) "
                     "is not held, and the reply waits for its request (docs/replay.md)")
        ->capture_default_str();
    replay->add_flag("--sync-wakes", rpl.sync_wakes,
                     "Replay dependency wakes as WF_SYNC wakeups, as pipe and socket writes make "
                     "(a trace does not say which were)");
    replay->add_flag("--softirq-wakes", rpl.softirq_wakes,
                     "A waking in softirq context while a replayed task is current is that "
                     "task's wake (a dependency edge), as loopback TCP's receive, run in the "
                     "sender's own softirq, is; default: an external arrival (docs/replay.md)");
    replay
        ->add_option("--rt-policy", rpl.rt_policy,
                     "fifo: tasks traced at an RT prio (0-98) replay as SCHED_FIFO at "
                     "rt_priority 99 - prio; rr: as SCHED_RR (a trace cannot tell them apart)")
        ->capture_default_str();
    replay
        ->add_option("--wakee-flips", rpl.wakee_flips,
                     "The wakee_flips (record_wakee()'s count, read by wake_wide()) each task "
                     "not forked by a replayed task starts with (not traced); trace: each "
                     "one's read from its first wakeups of its children in the trace, 0 where "
                     "they do not tell it; a child forked in the replay inherits its parent's, "
                     "as in the kernel")
        ->capture_default_str();
    replay->add_flag("--quiet", rpl.quiet,
                     "No progress on stderr while the trace is read (shown only on a terminal)");
    replay->add_option("--trace", rpl.trace_path,
                       "Write the replay's scheduler tracepoints in ftrace text format to FILE "
                       "(.zst, .gz compressed) or as a trace-cmd .dat, which schedlab replay "
                       "reads too, or as JSON trace events (.json: Perfetto's UI)");
    replay->add_option("--json", rpl.json_path,
                       "Write the run's result (as schedlab run --json) with the trace's side of "
                       "the table (replay_trace: switches, wakeups, latency, migrations, forks, "
                       "busy and idle time per CPU, the blocks' causes) to FILE");
    replay->add_option("--explain", rpl.explain_path,
                       "Write the decision log to FILE, as schedlab run --explain does: each "
                       "placement's branch (wake_wide, wake_affine, select_idle_sibling), each "
                       "balance attempt; with --trace T, `schedlab latency T --explain FILE` joins "
                       "it to the wakeups");
    replay->add_option("-s,--seed", o->seed, "Random seed (0 to 2^64-1)")->capture_default_str();
    replay->add_option("--cost", rpl.costs, "Override a cost: NAME=NANOSECONDS (repeatable)")
        ->allow_extra_args(false);
    replay
        ->add_option("--time-limit", rpl.time_limit_s,
                     "Stop after this many simulated seconds (exit 3 if unfinished)")
        ->capture_default_str()
        ->check(number_in(0, max_time_limit_s, true, "seconds"));
    replay->callback([o, &rc] {
        o->rpl.seed = parse_seed(o->seed, "--seed");
        rc = cmd_replay(std::cout, std::cerr, o->rpl);
    });
}

void add_latency_command(CLI::App& app, int& rc)
{
    struct options {
        latency_options lat;
        std::string trace;
        bool pids = false;
    };
    auto o = std::make_shared<options>();
    latency_options& lat = o->lat;
    auto* latency = app.add_subcommand(
        "latency", "Scheduling delays per task from a trace, in the layout of perf sched "
                   "latency, and per wakeup with --wakeups (perf sched timehist -w); the reason "
                   "each wakeup was placed where it was, from schedlab run's --explain log");
    latency
        ->add_option("trace", o->trace,
                     "The trace: tracefs or trace-cmd report text (plain, .xz/.zst/.gz), a "
                     "trace-cmd .dat file, or schedlab run/replay's --trace output")
        ->required();
    latency->add_flag("--pids", o->pids, "One row per pid (default: merged by comm, as perf)");
    latency->add_option("--sort", lat.sort, "Sort keys: runtime, switch, avg, max, pid")
        ->capture_default_str();
    latency->add_flag("--wakeups", lat.wakeups,
                      "Also list every wakeup: waker, wakee, the CPU it was placed on and ran on, "
                      "its delay");
    latency->add_option("--explain", lat.explain_path,
                        "The decision log of the run that wrote the trace (schedlab run or replay "
                        "--explain FILE): each wakeup's placement reason");
    latency->add_flag("--quiet", lat.quiet,
                      "No progress on stderr while the trace is read (shown only on a terminal)");
    latency->callback([o, &rc] {
        o->lat.merge_by_comm = !o->pids;
        if (!o->lat.explain_path.empty())
            o->lat.wakeups = true;
        rc = cmd_latency(std::cout, o->trace, o->lat);
    });
}

} // namespace schedlab
