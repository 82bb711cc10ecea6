// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * What `schedlab compare` and the report formats need to know about each
 * benchmark.
 *
 * The load option - the option of the benchmark's own command line that
 * takes a comma-separated load list in a compare ("-g 1,2,4,8" for
 * `perf bench sched messaging`, the first argument of tbench) - is declared
 * once, in the workload table (workload/registry.h: workload_info::load_option,
 * with_load()); each value of the list becomes one row of the tables.
 *
 * How the LKML table formats name a benchmark and its rows is in one explicit
 * table here (benchmarks.cc). A workload without an entry still works in a
 * compare, with generic names. Adding a benchmark: one row in benchmarks.cc
 * and one line in docs/compare.md.
 */
#include <string>
#include <vector>

namespace schedlab {

/*
 * One stat of lkp's tables: the key lkp-tests' parser for the program prints
 * (programs/<testcase>/parse) and the schedlab metric it is made from.
 * `from_metric` turns one run's metric value into lkp's value (the run's
 * benchmark argv given); null: the value as it is.
 */
struct lkp_stat_info {
    std::string metric; ///< schedlab's metric name, e.g. "time"
    std::string key;    ///< lkp's stat, without the testcase: "throughput"
    double (*from_metric)(const std::vector<std::string>& argv, double value) = nullptr;
};

struct benchmark_info {
    std::vector<std::string> command;      ///< argv prefix, e.g. {"perf","bench","sched","messaging"}
    std::string load_name;                 ///< what a load counts: "groups" (AMD rows "4-groups")
    std::string amd_test;                  ///< AMD's "Test :" name, e.g. "hackbench"
    std::string lkp_testcase;              ///< lkp's testcase, the stat key prefix
    std::string lkp_load_param;            ///< lkp's job parameter of the load: "nr_threads"
    /// The stats lkp's parser reports, in its order; metrics without one are not in lkp's table.
    std::vector<lkp_stat_info> lkp_stats;
    int mmtests_decimals = 2;              ///< mmtests DecimalPlaces (hackbench: 4)
    /// mmtests' table name from the benchmark's options, e.g. "hackbench-process-pipes".
    std::string (*mmtests_name)(const std::vector<std::string>& args) = nullptr;
};

/// The entry whose command prefixes argv, or nullptr.
const benchmark_info* find_benchmark(const std::vector<std::string>& argv);
/// Every entry, in table order (for docs and `schedlab compare --help`).
const std::vector<benchmark_info>& benchmark_table();

/// A benchmark command line with its load list taken out.
struct load_sweep {
    std::vector<std::string> loads;       ///< e.g. {"1","2","4","8"}; empty: no load option given
    std::string option;                   ///< the spelling found, e.g. "-g"
    /// One command line per load (or just the original when `loads` is empty).
    std::vector<std::vector<std::string>> argv_per_load;
};

/// Splits "-g 1,2,4" (or "-g1,2,4", "tbench 1,2,4", ... as the workload's load
/// option is spelled) into one command line per load. Throws config_error for
/// an unknown benchmark, or an empty or repeated value in the list.
load_sweep expand_load_list(const std::vector<std::string>& argv);

/// The command line with the load option and its value removed, for naming
/// the benchmark independently of the load.
std::vector<std::string> argv_without_load(const std::vector<std::string>& argv);

} // namespace schedlab
