// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The subcommands, separate from argument parsing so tests can call them
 * and read their output. Each throws config_error for user errors and
 * returns the process exit code otherwise.
 */
#include "sched/params.h"

#include <ostream>
#include <string>
#include <vector>

namespace schedlab {

const char* schedlab_version();

struct run_options {
    std::string machine = "host";
    std::string kernel = "6.6";
    std::string features;
    u64 seed = 1;
    std::vector<std::string> costs;
    double time_limit_s = 600;
    std::string check; ///< "" = the build's default (every in debug builds, sampled in release)
    bool no_summary = false;
    std::string schedstat; ///< "" off; "table": per-level summary; "raw": also /proc/schedstat v15
    std::vector<std::string> workload_argv;
};

int cmd_machines(std::ostream& out);
int cmd_topology(std::ostream& out, const std::string& machine, bool verbose, bool pkg_name);
int cmd_kernels(std::ostream& out);
int cmd_features(std::ostream& out, const std::string& kernel);
int cmd_costs(std::ostream& out, const cost_params& c);
int cmd_run(std::ostream& out, std::ostream& err, const run_options& o);

} // namespace schedlab
