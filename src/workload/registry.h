// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The workloads schedlab knows, in one explicit table (no static-init
 * registration), looked up by the benchmark's own command line: the argv
 * after schedlab's "--", e.g. {"perf", "bench", "sched", "messaging", "-g", "4"}.
 */
#include "workload/workload.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct workload_info {
    std::string command; ///< the command prefix, e.g. "perf bench sched messaging"
    std::string description;
    std::string options; ///< accepted options, e.g. "-g/--group N, ..."
    /// The option that sets the benchmark's load (what a comparison sweeps):
    /// an option name ("-g", "--instances") or "ARG1" for the first
    /// positional argument (tbench N); empty if the workload has none (rt-app).
    std::string load_option;
};

/// argv with the load set to `value`: the load option replaced (or appended
/// if absent), or the first positional argument for "ARG1". config_error if
/// the command is unknown.
std::vector<std::string> with_load(const std::vector<std::string>& argv, const std::string& value);

/// Every known workload command (aliases included), in table order.
std::vector<workload_info> known_workloads();

/// Builds the workload a command line names. An unknown command or a bad
/// option is a config_error (the former lists the known commands).
std::unique_ptr<workload> make_workload(const std::vector<std::string>& argv);

} // namespace schedlab
