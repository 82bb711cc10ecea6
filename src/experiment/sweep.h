// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A sweep: the product of machines, kernels (arms, the first the baseline),
 * benchmarks with their load lists, and seeds, read from a spec file in TOML
 * or JSON (docs/sweeps.md). Each (machine, benchmark) is one experiment,
 * planned as `compare` plans one (plan.h), so its tables are what `compare`
 * would print for the same arms, loads and runs.
 */
#include "experiment/plan.h"

#include <string>
#include <vector>

namespace schedlab {

struct sweep_benchmark {
    std::string name; ///< e.g. "tbench"; default: the command's words before its options
    std::vector<std::string> argv;  ///< the command line without the load list
    std::vector<std::string> loads; ///< the load option's values; empty: the command as written
};

struct sweep_spec {
    std::string file; ///< where it was read from (for messages)
    std::string name; ///< default: the file's name without its extension
    std::vector<std::string> machines;
    std::vector<std::string> kernels; ///< arms, the first the baseline
    std::string features;             ///< toggles applied to every arm
    std::vector<std::string> costs;   ///< NAME=NS overrides
    int runs = 5;                     ///< per arm and load: seeds seed..seed+runs-1
    u64 seed = 1;
    double time_limit_s = 600;
    std::string check;
    std::vector<sweep_benchmark> benchmarks;
};

/// The most runs one sweep may plan (a plan holds every run's inputs in memory).
inline constexpr std::size_t max_sweep_runs = 1'000'000;

/// Parses a spec; `toml` picks the syntax. Errors are config_error naming the
/// file, the line (TOML) and the key.
sweep_spec parse_sweep_spec(const std::string& text, const std::string& file, bool toml);
/// Reads a spec file: TOML unless its name ends in .json.
sweep_spec read_sweep_spec(const std::string& path);

struct sweep_experiment {
    std::string name; ///< "<sweep>/<machine>/<benchmark>"
    std::string machine;
    compare_plan plan; ///< runs in compare's order: load, arm, run index
};

struct sweep_plan {
    std::vector<sweep_experiment> experiments; ///< machine-major, then benchmark
    std::vector<run_spec> runs;                ///< every experiment's runs, in order
    std::vector<std::size_t> experiment_of;    ///< per run: its experiment
};

/// Expands and validates every experiment (config_error before anything runs).
sweep_plan plan_sweep(const sweep_spec& spec);

} // namespace schedlab
