// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/plan.h"

#include "sim/config_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace schedlab {

compare_plan plan_compare(const compare_spec& spec)
{
    if (spec.arms.empty())
        throw config_error("--kernel", "give at least one arm (--kernel SPEC, repeatable)");
    for (std::size_t i = 0; i < spec.arms.size(); ++i)
        if (std::find(spec.arms.begin(), spec.arms.begin() + static_cast<long>(i), spec.arms[i]) !=
            spec.arms.begin() + static_cast<long>(i))
            throw config_error("--kernel", fmt::format("arm '{}' is given twice", spec.arms[i]));
    if (spec.runs < 1 || spec.runs > max_compare_runs)
        throw config_error("--runs",
                           fmt::format("{} is outside [1, {}]", spec.runs, max_compare_runs));
    if (spec.seed > std::numeric_limits<u64>::max() - static_cast<u64>(spec.runs - 1))
        throw config_error("--seed", fmt::format("{} + {} runs passes the largest seed, 2^64-1",
                                                 spec.seed, spec.runs));
    if (spec.workload_argv.empty())
        throw config_error("benchmark", "no benchmark command line after --");

    const load_sweep sweep = expand_load_list(spec.workload_argv);
    // Every run's result is held until the tables are printed: bound them before planning.
    const u64 total = static_cast<u64>(sweep.argv_per_load.size()) * spec.arms.size() *
                      static_cast<u64>(spec.runs);
    if (total > max_compare_total_runs)
        throw config_error("--runs", fmt::format("{} loads x {} arms x {} runs = {} runs, more "
                                                 "than the {} a comparison holds",
                                                 sweep.argv_per_load.size(), spec.arms.size(),
                                                 spec.runs, total, max_compare_total_runs));
    compare_plan plan;
    plan.info.arms = spec.arms;
    plan.info.loads = sweep.loads;
    plan.info.load_option = sweep.option;
    plan.info.runs = spec.runs;
    plan.info.seed = spec.seed;

    for (std::size_t l = 0; l < sweep.argv_per_load.size(); ++l) {
        for (const std::string& arm : spec.arms) {
            for (int r = 0; r < spec.runs; ++r) {
                run_spec rs;
                rs.machine = spec.machine;
                rs.kernel = arm;
                rs.features = spec.features;
                rs.costs = spec.costs;
                rs.seed = spec.seed + static_cast<u64>(r);
                rs.workload_argv = sweep.argv_per_load[l];
                rs.time_limit_s = spec.time_limit_s;
                rs.check = spec.check;
                rs.arm = arm;
                rs.load = sweep.loads.empty() ? "" : sweep.loads[l];
                rs.run_index = r;
                // Validate each distinct (arm, load) once, before anything is simulated.
                if (r == 0)
                    prepare_run(rs);
                plan.runs.push_back(std::move(rs));
            }
        }
    }
    return plan;
}

} // namespace schedlab
