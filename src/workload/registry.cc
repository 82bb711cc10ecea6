// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workload table (see registry.h).
 */
#include "workload/registry.h"

#include "sim/config_error.h"
#include "workload/hackbench.h"
#include "workload/kbuild.h"
#include "workload/netperf.h"
#include "workload/perf_pipe.h"
#include "workload/replay.h"
#include "workload/rt_app.h"
#include "workload/schbench.h"
#include "workload/stream.h"
#include "workload/tbench.h"
#include "workload/will_it_scale.h"

#include <fmt/format.h>

#include <algorithm>

namespace schedlab {

namespace {

struct workload_entry {
    std::vector<std::string> command; ///< argv prefix
    std::unique_ptr<workload> (*make)(const std::vector<std::string>& args);
    const char* description;
    const char* options;
    const char* load_option;
    /// For load_option "ARG1": the options that take a separate value, so the
    /// positional argument can be found.
    std::vector<std::string> value_options = {};
};

const workload_entry workload_table[] = {
    {{"perf", "bench", "sched", "messaging"},
     &make_messaging_workload,
     "hackbench: groups of 20 senders spraying 100-byte messages at 20 receivers",
     "-g/--group N (10), -l/--nr_loops N (100), -p/--pipe, -t/--thread", "-g"},
    {{"hackbench"},
     &make_messaging_workload,
     "alias of 'perf bench sched messaging' (perf's options, not rt-tests')",
     "-g/--group N (10), -l/--nr_loops N (100), -p/--pipe, -t/--thread", "-g"},
    {{"perf", "bench", "sched", "pipe"},
     &make_perf_pipe_workload,
     "two tasks ping-pong a 4-byte token through two pipes",
     "-l/--loop N (1000000), -T/--threaded, --variant=classic|2025 (schedlab only)", "-l"},
    {{"tbench"},
     &make_tbench_workload,
     "dbench's network mode: N client/server process pairs over loopback TCP",
     "N (clients, required; the load), -t SECONDS (5; dbench 600), -c client.txt|client-tiny.txt, "
     "[127.0.0.1]",
     "ARG1",
     {"-t", "--timelimit", "-c", "--loadfile", "-T", "--tcp-options", "-B", "--backend", "-D",
      "--directory", "-R", "--target-rate", "--clients-per-process"}},
    {{"netperf"},
     &make_netperf_workload,
     "netperf TCP_RR/UDP_RR request/response over loopback",
     "--instances N (1; the load, schedlab only), -t TCP_RR|UDP_RR, -l SECONDS|-TRANS (10), "
     "-H 127.0.0.1, -P 0|1, -c, -C, -- -r REQ[,RSP] (1,1) -s/-S SND[,RCV] -D",
     "--instances"},
    {{"schbench"},
     &make_schbench_workload,
     "message threads hand requests to workers via futexes; wakeup/request latency, RPS",
     "--variant=v1|old (v1; schedlab only), -m N (1; old 2), -t N (ncpus/m; old 16; the load), "
     "-r S (30), -w S, -i S (10), -z S; v1: -F KB (256), -n N (5), -s USEC (100), -L, -C, "
     "-R RPS; old: -s USEC, -c USEC, -C USEC (30000), -j",
     "-t"},
    {{"context_switch1_processes"},
     &make_context_switch1_processes,
     "will-it-scale: -t copies, each a process pair ping-ponging a byte through two pipes",
     "-t N (1; the load), -s N (5), -m (bind to SMT threads), -n (no binding), --warmup N (5), "
     "--interval S (1) (the last two schedlab only)",
     "-t"},
    {{"context_switch1_threads"},
     &make_context_switch1_threads,
     "will-it-scale: -t copies, each a thread pair ping-ponging a byte through two pipes",
     "-t N (1; the load), -s N (5), -m, -n, --warmup N (5), --interval S (1)",
     "-t"},
    {{"stream"},
     &make_stream_workload,
     "STREAM Copy/Scale/Add/Triad with OpenMP threads over a shared memory bandwidth",
     "--threads N (OMP_NUM_THREADS; ncpus; the load), --array-size N (10000000), --ntimes N (10), "
     "--core-bw/--llc-bw/--node-bw GB/s (20/40/100) (all schedlab: STREAM has no options)",
     "--threads"},
    {{"make"},
     &make_kbuild_workload,
     "a kernel build under /usr/bin/time: fork/exec compile jobs, archives, a serial link tail",
     "-j [N] (1; no N: unlimited; the load), [targets], -s, -C DIR; schedlab only: --objects N "
     "(2400), --dirs N (40), --compile-ms MS (600)",
     "-j"},
    {{"rt-app"},
     &make_rtapp_workload,
     "an rt-app JSON use case: tasks, phases, instances, loops and events",
     "FILE.json, --duration SECONDS (schedlab only: overrides global.duration)",
     ""},
    {{"replay"},
     &make_replay_workload,
     "a recorded workload: each task of an ftrace sched trace rebuilt and re-run (docs/replay.md)",
     "TRACE (tracefs or trace-cmd report text, .xz/.zst/.gz, or a trace-cmd .dat), "
     "--comm REGEX (every non-kernel task), --speed F (1)",
     ""},
};

std::string join(const std::vector<std::string>& v, std::size_t n)
{
    std::string s;
    for (std::size_t i = 0; i < n && i < v.size(); ++i)
        s += (i ? " " : "") + v[i];
    return s;
}

} // namespace

std::vector<workload_info> known_workloads()
{
    std::vector<workload_info> v;
    for (const workload_entry& e : workload_table)
        v.push_back({join(e.command, e.command.size()), e.description, e.options, e.load_option});
    return v;
}

namespace {
const workload_entry* find_entry(const std::vector<std::string>& argv)
{
    for (const workload_entry& e : workload_table) {
        if (argv.size() >= e.command.size() &&
            std::equal(e.command.begin(), e.command.end(), argv.begin()))
            return &e;
    }
    return nullptr;
}
} // namespace

std::vector<std::string> with_load(const std::vector<std::string>& argv, const std::string& value)
{
    // "OMP_NUM_THREADS=N stream": environment words before the command, as make_workload().
    std::size_t env = 0;
    while (env < argv.size() && argv[env].find('=') != std::string::npos && argv[env][0] != '-')
        ++env;
    const workload_entry* e =
        find_entry(std::vector<std::string>(argv.begin() + static_cast<long>(env), argv.end()));
    if (!e) {
        make_workload(argv); // throws the "unknown workload" error
        throw config_error("workload", "no benchmark command after the environment words");
    }
    std::vector<std::string> out = argv;
    const std::size_t first = env + e->command.size();
    const std::string opt = e->load_option;
    if (opt.empty())
        throw config_error("workload", fmt::format("'{}' has no load option to vary",
                                                   join(e->command, e->command.size())));
    if (opt == "ARG1") {
        for (std::size_t i = first; i < out.size(); ++i) {
            const std::string& a = out[i];
            if (a == "--")
                break;
            if (!a.empty() && a[0] == '-') {
                if (std::find(e->value_options.begin(), e->value_options.end(), a) !=
                    e->value_options.end())
                    ++i;
                continue;
            }
            out[i] = value;
            return out;
        }
        out.push_back(value);
        return out;
    }
    std::size_t end = out.size();
    for (std::size_t i = first; i < out.size(); ++i) {
        const std::string& a = out[i];
        if (a == "--") {
            end = i;
            break;
        }
        if (a == opt && i + 1 < out.size()) {
            out[i + 1] = value;
            return out;
        }
        const bool is_long = opt.size() > 2 && opt[1] == '-';
        if (is_long && a.rfind(opt + "=", 0) == 0) {
            out[i] = opt + "=" + value;
            return out;
        }
        if (!is_long && a.size() > opt.size() && a.rfind(opt, 0) == 0) {
            out[i] = opt + value; // "-g4"
            return out;
        }
    }
    out.insert(out.begin() + static_cast<long>(end), {opt, value});
    return out;
}

std::unique_ptr<workload> make_workload(const std::vector<std::string>& argv_in)
{
    // "OMP_NUM_THREADS=N stream": the environment of an OpenMP benchmark.
    std::vector<std::string> argv = argv_in;
    std::vector<std::string> env;
    while (!argv.empty() && argv[0].find('=') != std::string::npos && argv[0][0] != '-') {
        env.push_back(argv[0]);
        argv.erase(argv.begin());
    }
    for (const std::string& e : env) {
        const std::string name = e.substr(0, e.find('='));
        if (name != "OMP_NUM_THREADS" || argv.empty() || argv[0] != "stream")
            throw config_error("workload",
                               fmt::format("environment '{}' is not modelled (only "
                                           "OMP_NUM_THREADS=N before 'stream')",
                                           e));
        argv.push_back("--threads");
        argv.push_back(e.substr(e.find('=') + 1));
    }
    for (const workload_entry& e : workload_table) {
        if (argv.size() < e.command.size())
            continue;
        if (!std::equal(e.command.begin(), e.command.end(), argv.begin()))
            continue;
        return e.make(std::vector<std::string>(argv.begin() + static_cast<long>(e.command.size()),
                                               argv.end()));
    }

    // Unknown: name what was given (up to the first option) and list the known commands.
    std::size_t n = 0;
    while (n < argv.size() && n < 4 && !argv[n].empty() && argv[n][0] != '-')
        ++n;
    const std::string given = argv.empty() ? std::string("(nothing)") : join(argv, n);
    std::vector<std::string> names;
    std::string list;
    for (const workload_info& w : known_workloads()) {
        names.push_back(w.command);
        list += fmt::format("\n  {:<28} {}", w.command, w.description);
    }
    const std::string hint = nearest_name(given, names);
    throw config_error("workload",
                       fmt::format("unknown workload '{}'{}; known workloads:{}", given,
                                   hint.empty() ? "" : " (did you mean '" + hint + "'?)", list));
}

} // namespace schedlab
