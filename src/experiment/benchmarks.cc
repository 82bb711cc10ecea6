// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/benchmarks.h"

#include "sim/config_error.h"
#include "workload/hackbench.h"
#include "workload/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace schedlab {

namespace {

bool has_flag(const std::vector<std::string>& args, const char* short_flag, const char* long_flag)
{
    return std::any_of(args.begin(), args.end(),
                       [&](const std::string& a) { return a == short_flag || a == long_flag; });
}

// mmtests configs: hackbench-{process,thread}-{pipes,sockets}
std::string mmtests_hackbench_name(const std::vector<std::string>& args)
{
    return fmt::format("hackbench-{}-{}", has_flag(args, "-t", "--thread") ? "thread" : "process",
                       has_flag(args, "-p", "--pipe") ? "pipes" : "sockets");
}

std::string mmtests_perfpipe_name(const std::vector<std::string>&) { return "perfpipe"; }
std::string mmtests_tbench_name(const std::vector<std::string>&) { return "tbench4"; }
std::string mmtests_schbench_name(const std::vector<std::string>&) { return "schbench"; }
std::string mmtests_netperf_name(const std::vector<std::string>& args)
{
    return has_flag(args, "UDP_RR", "UDP_RR") ? "netperf-udp-rr" : "netperf-tcp-rr";
}

/*
 * lkp-tests programs/hackbench/parse: throughput = kb / time with
 * kb = (tasks * messages * bytes) >> 10 from hackbench's "(== N tasks)" and
 * "Each sender will pass M messages of B bytes" lines, in KB/s. Its
 * hackbench runs the same groups of 20 senders and 20 receivers
 * (fds = 20, datasize = 100 by default), with `-g nr_threads`; lkp takes the
 * best time of a run's iterations, and a schedlab run has one.
 */
double lkp_hackbench_throughput(const std::vector<std::string>& argv, double time_s)
{
    const std::size_t skip = argv.size() > 0 && argv[0] == "hackbench" ? 1 : 4;
    const messaging_params mp = parse_messaging_options(std::vector<std::string>(
        argv.begin() + static_cast<long>(std::min(skip, argv.size())), argv.end()));
    const unsigned long long tasks =
        static_cast<unsigned long long>(mp.groups) * 2 * messaging_params::num_fds;
    const unsigned long long kb = (tasks * mp.loops * messaging_params::datasize) >> 10;
    return static_cast<double>(kb) / time_s;
}

/// programs/perf-bench-sched-pipe/parse reads perf's integer "N ops/sec".
double lkp_integer_part(const std::vector<std::string>&, double v)
{
    return std::trunc(v);
}

// Names as the posted tables use them (docs/compare.md); lkp's stats as its
// programs/<testcase>/parse prints them (intel/lkp-tests).
// clang-format off
const std::vector<lkp_stat_info> lkp_hackbench = {{"time", "throughput", &lkp_hackbench_throughput}};
const std::vector<lkp_stat_info> lkp_pipe = {{"ops/sec", "ops_per_sec", &lkp_integer_part}};
const std::vector<lkp_stat_info> lkp_tbench = {{"throughput", "throughput_MB/s"},
                                               {"max_latency", "max_latency"}};
const std::vector<lkp_stat_info> lkp_netperf = {{"trans/s/instance", "Throughput_tps"},
                                                {"trans/s", "Throughput_total_tps"}};
const std::vector<lkp_stat_info> lkp_schbench = {{"wakeup_p50", "wakeup_latency_50%_us"},
                                                 {"wakeup_p99", "wakeup_latency_99%_us"},
                                                 {"request_p50", "request_latency_50%_us"},
                                                 {"request_p99", "request_latency_99%_us"}};

const std::vector<benchmark_info> table = {
    {{"perf", "bench", "sched", "messaging"}, "groups", "hackbench", "hackbench", "nr_threads", lkp_hackbench, 4, &mmtests_hackbench_name},
    {{"hackbench"},                           "groups", "hackbench", "hackbench", "nr_threads", lkp_hackbench, 4, &mmtests_hackbench_name},
    {{"perf", "bench", "sched", "pipe"},      "loops", "perf-pipe", "perf-bench-sched-pipe", "loops", lkp_pipe, 2, &mmtests_perfpipe_name},
    {{"tbench"},                              "clients", "tbench", "tbench", "nr_threads", lkp_tbench, 2, &mmtests_tbench_name},
    {{"netperf"},                             "clients", "netperf", "netperf", "nr_threads", lkp_netperf, 2, &mmtests_netperf_name},
    {{"schbench"},                            "workers", "schbench", "schbench", "worker_threads", lkp_schbench, 2, &mmtests_schbench_name},
};
// clang-format on

/// The workload table's entry whose command starts argv (the longest), or null.
const workload_info* workload_of(const std::vector<std::string>& argv,
                                 const std::vector<workload_info>& known)
{
    std::size_t best = 0;
    const workload_info* found = nullptr;
    for (const workload_info& w : known) {
        std::vector<std::string> words;
        std::size_t start = 0;
        while (start <= w.command.size()) {
            const std::size_t sp = w.command.find(' ', start);
            words.push_back(w.command.substr(start, sp == std::string::npos ? sp : sp - start));
            if (sp == std::string::npos)
                break;
            start = sp + 1;
        }
        if (words.size() > best && argv.size() >= words.size() &&
            std::equal(words.begin(), words.end(), argv.begin())) {
            best = words.size();
            found = &w;
        }
    }
    return found;
}

/// True when the workload's load is its first positional argument (tbench N).
bool load_is_first_argument(const std::vector<std::string>& argv)
{
    const std::vector<workload_info> known = known_workloads();
    const workload_info* w = workload_of(argv, known);
    return w && w->load_option == "ARG1";
}

/// Where the load value sits in argv, found through the workload table's
/// with_load(): the token it rewrites, and the part of the token before the value.
struct load_pos {
    std::size_t token = std::string::npos;
    std::string prefix; ///< "" for a separate value, "-g" for "-g4", "--group=" for "--group=4"
    bool separate_option = false; ///< the value follows an option token (argv[token - 1])
};

load_pos find_load(const std::vector<std::string>& argv)
{
    static const std::string marker = "\x01load\x01";
    const std::vector<workload_info> known = known_workloads();
    if (const workload_info* w = workload_of(argv, known); w && w->load_option.empty())
        return {}; // rt-app FILE: one load, the file (compared across kernels as it is)
    const std::vector<std::string> probe = with_load(argv, marker); // config_error if unknown
    load_pos pos;
    if (probe.size() != argv.size())
        return pos; // with_load appended the option: the command line has no load
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (probe[i] == argv[i])
            continue;
        const std::size_t at = probe[i].find(marker);
        if (at == std::string::npos)
            continue;
        pos.token = i;
        pos.prefix = probe[i].substr(0, at);
        pos.separate_option = at == 0 && !load_is_first_argument(argv);
        return pos;
    }
    return pos;
}

} // namespace

const std::vector<benchmark_info>& benchmark_table() { return table; }

const benchmark_info* find_benchmark(const std::vector<std::string>& argv)
{
    for (const benchmark_info& b : table)
        if (argv.size() >= b.command.size() &&
            std::equal(b.command.begin(), b.command.end(), argv.begin()))
            return &b;
    return nullptr;
}

load_sweep expand_load_list(const std::vector<std::string>& argv)
{
    load_sweep s;
    const load_pos pos = find_load(argv);
    if (pos.token == std::string::npos) {
        s.argv_per_load.push_back(argv);
        return s;
    }
    s.option = pos.separate_option ? argv[pos.token - 1] : pos.prefix.empty() ? "the first argument"
                                                                               : pos.prefix;
    const std::string list = argv[pos.token].substr(pos.prefix.size());
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = list.find(',', start);
        const std::string v = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                             : comma - start);
        if (v.empty())
            throw config_error("benchmark",
                               fmt::format("empty value in the load list '{}' of {}", list, s.option));
        if (std::find(s.loads.begin(), s.loads.end(), v) != s.loads.end())
            throw config_error("benchmark",
                               fmt::format("load {} appears twice in '{}' of {}", v, list, s.option));
        s.loads.push_back(v);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    for (const std::string& v : s.loads) {
        std::vector<std::string> a = argv;
        a[pos.token] = pos.prefix + v;
        s.argv_per_load.push_back(std::move(a));
    }
    return s;
}

std::vector<std::string> argv_without_load(const std::vector<std::string>& argv)
{
    load_pos pos;
    try {
        pos = find_load(argv);
    } catch (const config_error&) {
        return argv; // an unknown command: nothing to take out
    }
    if (pos.token == std::string::npos)
        return argv;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < argv.size(); ++i)
        if (i != pos.token && !(pos.separate_option && i + 1 == pos.token))
            out.push_back(argv[i]);
    return out;
}

} // namespace schedlab
