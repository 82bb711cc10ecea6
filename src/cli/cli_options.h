// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * What the subcommands' command-line declarations share (CLI11 is included by the cli
 * layer only: cli_main.cc and the files that declare each subcommand's options).
 */
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace schedlab {

/*
 * A number within [lo, hi] (or (lo, hi] when lo_open), with the range in the message: CLI11's
 * own PositiveNumber prints DBL_MAX's 309 digits and lets NaN through.
 */
CLI::Validator number_in(double lo, double hi, bool lo_open, const std::string& unit);

/// The inputs of report, export and fidelity: stores or result files (`what` says which
/// and the default), and -e/--experiment (`which` says what selects one; repeatable).
void add_input_options(CLI::App* cmd, std::vector<std::string>& files, const std::string& what,
                       std::vector<std::string>& experiments, const std::string& which);

} // namespace schedlab
