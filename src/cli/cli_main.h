// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The schedlab program's main() (main.cc) calls cli_main() and includes nothing else: the
 * command line (cli_main.cc) is compiled in the cli library with the other files that include
 * CLI11, so the program's own file does not compile CLI11's headers again.
 */

namespace schedlab {

/// The schedlab command line: parses argv, runs the subcommand, returns the exit code
/// (cli_main.cc lists them).
int cli_main(int argc, char** argv);

} // namespace schedlab
