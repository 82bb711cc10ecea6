// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A small command-line option parser with the conventions of perf's
 * tools/lib/subcmd/parse-options (the behaviour, not the code): short
 * options ("-g 4", "-g4", clustered booleans "-pt"), long options
 * ("--group 4", "--group=4", unambiguous prefixes "--gro=4"), "--no-NAME"
 * for booleans. Anything else is a config_error naming the offending option.
 */
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
/// ("perf bench sched messaging"). Positional arguments are rejected.
void parse_options(const std::vector<std::string>& args, const std::vector<option_spec>& specs,
                   const std::string& where);

/// "-g/--group N, -l/--nr_loops N, ..." for error messages and docs.
std::string options_summary(const std::vector<option_spec>& specs);

} // namespace schedlab
