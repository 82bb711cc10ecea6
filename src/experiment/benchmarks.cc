// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/benchmarks.h"

#include "sim/config_error.h"
#include "workload/registry.h"

#include <fmt/format.h>

#include <algorithm>

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

// Names as the posted tables use them (benchmarks.md section 8).
// clang-format off
const std::vector<benchmark_info> table = {
    {{"perf", "bench", "sched", "messaging"}, "groups", "hackbench", "hackbench", 4, &mmtests_hackbench_name},
    {{"hackbench"},                           "groups", "hackbench", "hackbench", 4, &mmtests_hackbench_name},
    {{"perf", "bench", "sched", "pipe"},      "loops", "perf-pipe", "perf-bench-sched-pipe", 2, &mmtests_perfpipe_name},
    {{"tbench"},                              "clients", "tbench", "tbench", 2, &mmtests_tbench_name},
    {{"netperf"},                             "clients", "netperf", "netperf", 2, &mmtests_netperf_name},
    {{"schbench"},                            "workers", "schbench", "schbench", 2, &mmtests_schbench_name},
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
