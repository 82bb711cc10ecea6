// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * An A/B experiment: arms x loads x runs, expanded into run_specs.
 *
 * Seeds are paired: run r of every arm and load uses seed + r, so arm A's
 * run r and arm B's run r see the same random streams and differ only by
 * the arm's kernel.
 */
#include "experiment/benchmarks.h"
#include "experiment/result_json.h"
#include "experiment/run.h"

#include <string>
#include <vector>

namespace schedlab {

/// Bounds of a comparison: runs per arm and load, and runs in all (each run's result, about
/// 30 KiB with its schedstat counters and texts, is kept until the tables print).
inline constexpr int max_compare_runs = 10000;
inline constexpr u64 max_compare_total_runs = 100000;

struct compare_spec {
    std::string machine = "host";
    std::vector<std::string> arms;   ///< kernel specs, the first is the baseline
    std::string features;            ///< toggles applied to every arm
    std::vector<std::string> costs;
    int runs = 5;
    u64 seed = 1;
    std::vector<std::string> workload_argv; ///< may hold a load list, e.g. -g 1,2,4
    double time_limit_s = 600;
    std::string check;
};

struct compare_plan {
    std::vector<run_spec> runs; ///< load-major, then arm, then run index
    experiment_info info;
};

/// Expands and validates (every run is prepared once); throws config_error.
compare_plan plan_compare(const compare_spec& spec);

} // namespace schedlab
