// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workload table (see registry.h).
 */
#include "workload/registry.h"

#include "sim/config_error.h"
#include "workload/hackbench.h"
#include "workload/perf_pipe.h"

#include <fmt/format.h>

namespace schedlab {

namespace {

struct workload_entry {
    std::vector<std::string> command; ///< argv prefix
    std::unique_ptr<workload> (*make)(const std::vector<std::string>& args);
    const char* description;
    const char* options;
};

const workload_entry workload_table[] = {
    {{"perf", "bench", "sched", "messaging"},
     &make_messaging_workload,
     "hackbench: groups of 20 senders spraying 100-byte messages at 20 receivers",
     "-g/--group N (10), -l/--nr_loops N (100), -p/--pipe, -t/--thread"},
    {{"hackbench"},
     &make_messaging_workload,
     "alias of 'perf bench sched messaging' (perf's options, not rt-tests')",
     "-g/--group N (10), -l/--nr_loops N (100), -p/--pipe, -t/--thread"},
    {{"perf", "bench", "sched", "pipe"},
     &make_perf_pipe_workload,
     "two tasks ping-pong a 4-byte token through two pipes",
     "-l/--loop N (1000000), -T/--threaded, --variant=classic|2025 (schedlab only)"},
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
        v.push_back({join(e.command, e.command.size()), e.description, e.options});
    return v;
}

std::unique_ptr<workload> make_workload(const std::vector<std::string>& argv)
{
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
