// SPDX-License-Identifier: GPL-2.0-only
/*
 * `schedlab replay TRACE`: a recorded workload re-run on a simulated machine and
 * kernel (workload/replay.h), with the usual run summary and a table of the
 * trace's statistics beside the replay's (docs/replay.md).
 */
#include "cli/commands.h"

#include "experiment/run.h"
#include "sim/config_error.h"
#include "trace/sched_latency.h"
#include "workload/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
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
    row("wakeups", static_cast<double>(a.wakeups), static_cast<double>(b.wakeups), 0);
    const auto us = [](u64 ns) { return static_cast<double>(ns) / 1000.0; };
    row("wakeup-to-run p50 (us)", us(a.wakeup_latency.percentile(50)), us(b.wakeup_latency_p50_ns),
        1);
    row("wakeup-to-run p99 (us)", us(a.wakeup_latency.percentile(99)), us(b.wakeup_latency_p99_ns),
        1);
    row("wakeup-to-run max (us)", us(a.wakeup_latency.max()), us(b.wakeup_latency_max_ns), 1);
    row("migrations", static_cast<double>(a.migrations), static_cast<double>(b.migrations), 0);
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
    return s;
}

int cmd_replay(std::ostream& out, std::ostream& err, const replay_command_options& o)
{
    std::vector<std::string> argv = {"replay", o.trace,  "--speed", o.speed,     "--bursts",
                                     o.bursts, "--deps", o.deps,    "--rt-policy", o.rt_policy};
    if (o.sync_wakes)
        argv.push_back("--sync-wakes");
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
    const run_result r = execute_run(*prepared, hooks);
    trace.commit(r.provenance.nr_cpus);
    if (!r.finished)
        return unfinished_run(err, "the replay", o.time_limit_s);
    out << r.benchmark_output;
    print_run_summary(out, r);
    out << "\n" << format_replay_table(t, r);
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

} // namespace schedlab
