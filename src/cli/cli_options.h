// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * What the subcommands' command-line declarations share (CLI11 is included by the cli
 * layer only: main.cc and the files that declare each subcommand's options).
 */
#include <CLI/CLI.hpp>

#include <string>

namespace schedlab {

/*
 * A number within [lo, hi] (or (lo, hi] when lo_open), with the range in the message: CLI11's
 * own PositiveNumber prints DBL_MAX's 309 digits and lets NaN through.
 */
CLI::Validator number_in(double lo, double hi, bool lo_open, const std::string& unit);

} // namespace schedlab
