// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The result file formats (docs/compare.md has the full description):
 *
 *   schedlab-result-v1   one run_result (schedlab run --json FILE)
 *   schedlab-results-v1  {"format", "experiment": {...}, "runs": [result-v1, ...]}
 *                        (schedlab compare --json FILE)
 *
 * Readers ignore members they do not know, so optional members (such as
 * "schedstat") can be added without a format bump; a change of meaning of an
 * existing member bumps the version.
 */
#include "experiment/run.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace schedlab {

inline constexpr const char* result_format_v1 = "schedlab-result-v1";
inline constexpr const char* results_format_v1 = "schedlab-results-v1";
/// Input bounds: a result file's size and its JSON nesting (the format nests 5 deep).
inline constexpr std::size_t max_results_file_bytes = std::size_t{1} << 30;
inline constexpr int max_json_depth = 64;

/// What a compare invocation asked for, stored beside its runs.
struct experiment_info {
    std::string command; ///< the schedlab command line that produced the runs
    std::vector<std::string> arms;
    std::vector<std::string> loads;
    std::string load_option; ///< e.g. "-g"; "" if the benchmark has no load list
    int runs = 0;
    u64 seed = 0; ///< run r of every arm uses seed + r
};

nlohmann::ordered_json to_json(const run_result& r);
/// The wakeup targets as result files keep them: each class's count (any waker), those of
/// them by an interrupt or an untraced task, the wakeups not placed and not run.
nlohmann::ordered_json wakeup_targets_to_json(const wakeup_target_counts& c);
/// Throws config_error(where, ...) naming the missing or malformed member.
run_result run_result_from_json(const nlohmann::ordered_json& j, const std::string& where);

std::string results_to_string(const std::vector<run_result>& runs, const experiment_info& info);
void write_results_file(const std::string& path, const std::vector<run_result>& runs,
                        const experiment_info& info);
void write_result_file(const std::string& path, const run_result& r);

/// Reads either format; appends the runs. Throws config_error naming the file.
std::vector<run_result> read_results_file(const std::string& path);
std::vector<run_result> parse_results(const std::string& text, const std::string& where);

} // namespace schedlab
