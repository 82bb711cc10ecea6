// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A small command-line option parser with the conventions of perf's
 * tools/lib/subcmd/parse-options (the behaviour, not the code): short
 * options ("-g 4", "-g4", clustered booleans "-pt"), long options
 * ("--group 4", "--group=4", unambiguous prefixes "--gro=4"), "--no-NAME"
 * for booleans. Anything else is a config_error naming the offending option.
 */
#include "sim/time.h"

#include <string>
#include <vector>

namespace schedlab {

struct option_spec {
    char short_name = 0; ///< 0: long form only
    std::string long_name;
    bool* flag = nullptr;         ///< a boolean option (OPT_BOOLEAN), or
    unsigned* uinteger = nullptr; ///< an unsigned integer (OPT_UINTEGER), or
    std::string* text = nullptr;  ///< a string (OPT_STRING)
    std::string help;
    /// Set: the option is recognised but rejected with this explanation
    /// (a real option of the benchmark that schedlab does not model).
    std::string unsupported;
};

/// Parses `args` into the options' targets. `where` prefixes every error
/// ("perf bench sched messaging"). Positional arguments are rejected, unless
/// `positional` is given: then they are collected there, in order (as
/// getopt/popt leave them for the program), and "--" ends the options.
void parse_options(const std::vector<std::string>& args, const std::vector<option_spec>& specs,
                   const std::string& where, std::vector<std::string>* positional = nullptr);

/// A decimal integer (sign allowed) for option `name`; config_error otherwise.
long long parse_integer(const std::string& value, const std::string& name,
                        const std::string& where, long long min, long long max);
/// A non-negative decimal number of seconds ("10", "0.25") as ns; config_error otherwise.
sim_dur parse_seconds(const std::string& value, const std::string& name, const std::string& where);

/*
 * Benchmark sizes. A run holds every task the benchmark creates (its task_struct, program,
 * channels and the benchmark's own records), so a request that cannot fit is refused before
 * anything is allocated, with the estimate and the limits:
 *  - at most PID_MAX_LIMIT tasks, as the kernel itself (include/linux/threads.h: 4M on 64-bit);
 *  - at most half of this machine's memory, at `bytes_per_task` each: each benchmark's figure
 *    is the measured growth of the peak RSS per task (docs/testing.md, "Benchmark sizes").
 */
inline constexpr double pid_max_limit = 4 * 1024 * 1024;
/// config_error(where, ...) when `tasks` (what `how` says they are, e.g. "1000 groups x 40")
/// cannot be simulated.
void check_task_count(double tasks, double bytes_per_task, const std::string& how,
                      const std::string& where);

/// "-g/--group N, -l/--nr_loops N, ..." for error messages and docs.
std::string options_summary(const std::vector<option_spec>& specs);

} // namespace schedlab
