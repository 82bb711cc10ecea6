// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/benchmarks.h"

#include "sim/config_error.h"

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

// clang-format off
const std::vector<benchmark_info> table = {
    {{"perf", "bench", "sched", "messaging"}, {"-g", "--group"}, "groups",
     "hackbench", "hackbench", 4, &mmtests_hackbench_name},
    {{"hackbench"}, {"-g", "--group"}, "groups",
     "hackbench", "hackbench", 4, &mmtests_hackbench_name},
    {{"perf", "bench", "sched", "pipe"}, {}, "",
     "perf-pipe", "perf-bench-sched-pipe", 2, &mmtests_perfpipe_name},
};
// clang-format on

bool prefix_matches(const benchmark_info& b, const std::vector<std::string>& argv)
{
    return argv.size() >= b.command.size() &&
           std::equal(b.command.begin(), b.command.end(), argv.begin());
}

/// Index of the load option's value in argv and the spelling used; npos if absent.
struct load_pos {
    std::size_t token = std::string::npos; ///< index of the token holding the value
    std::size_t value_at = 0;               ///< offset of the value inside that token
    std::size_t option_token = std::string::npos;
    std::string option;
};

load_pos find_load(const benchmark_info& b, const std::vector<std::string>& argv)
{
    load_pos pos;
    for (std::size_t i = b.command.size(); i < argv.size(); ++i) {
        for (const std::string& opt : b.load_options) {
            if (argv[i] == opt) {
                if (i + 1 >= argv.size())
                    throw config_error("benchmark", fmt::format("{} needs a value", opt));
                if (pos.token != std::string::npos)
                    throw config_error("benchmark", fmt::format("{} is given twice", opt));
                pos = {i + 1, 0, i, opt};
            } else if (opt.starts_with("--") && argv[i].starts_with(opt + "=")) {
                if (pos.token != std::string::npos)
                    throw config_error("benchmark", fmt::format("{} is given twice", opt));
                pos = {i, opt.size() + 1, i, opt};
            }
        }
    }
    return pos;
}

} // namespace

const std::vector<benchmark_info>& benchmark_table() { return table; }

const benchmark_info* find_benchmark(const std::vector<std::string>& argv)
{
    for (const benchmark_info& b : table)
        if (prefix_matches(b, argv))
            return &b;
    return nullptr;
}

load_sweep expand_load_list(const std::vector<std::string>& argv)
{
    load_sweep s;
    const benchmark_info* b = find_benchmark(argv);
    const load_pos pos = b ? find_load(*b, argv) : load_pos{};
    if (pos.token == std::string::npos) {
        s.argv_per_load.push_back(argv);
        return s;
    }
    s.option = pos.option;
    const std::string list = argv[pos.token].substr(pos.value_at);
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = list.find(',', start);
        const std::string v = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                             : comma - start);
        if (v.empty())
            throw config_error("benchmark",
                               fmt::format("empty value in the load list '{}' of {}", list, pos.option));
        if (std::find(s.loads.begin(), s.loads.end(), v) != s.loads.end())
            throw config_error("benchmark",
                               fmt::format("load {} appears twice in '{}' of {}", v, list, pos.option));
        s.loads.push_back(v);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    for (const std::string& v : s.loads) {
        std::vector<std::string> a = argv;
        a[pos.token] = argv[pos.token].substr(0, pos.value_at) + v;
        s.argv_per_load.push_back(std::move(a));
    }
    return s;
}

std::vector<std::string> argv_without_load(const std::vector<std::string>& argv)
{
    const benchmark_info* b = find_benchmark(argv);
    const load_pos pos = b ? find_load(*b, argv) : load_pos{};
    if (pos.token == std::string::npos)
        return argv;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < argv.size(); ++i)
        if (i != pos.token && i != pos.option_token)
            out.push_back(argv[i]);
    return out;
}

} // namespace schedlab
