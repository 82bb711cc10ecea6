// SPDX-License-Identifier: GPL-2.0-only
/*
 * The schedlab command line: the subcommands, each declared by its own add_*_command()
 * (commands.h) in the file of its command, and the exit codes. CLI11 is included by the
 * cli layer only. In the cli library, where the other files that include CLI11 are (one
 * compile of its headers in a unity build), and not in main.cc (cli_main.h).
 *
 * Exit codes: 0 success; 2 a user error (bad flag, unknown name, malformed
 * file), with a message naming the input; 3 a run that did not finish within
 * its simulated time limit. A simulator bug aborts with the scheduler state.
 */
#include "cli/cli_main.h"

#include "cli/commands.h"
#include "cli/mpi.h"

#include "sim/config_error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

namespace schedlab {

int cli_main(int argc, char** argv)
{
    CLI::App app{"schedlab: a deterministic discrete-event simulator of the Linux CPU "
                 "scheduler",
                 "schedlab"};
    app.set_version_flag("--version", "schedlab " + std::string(schedlab_version()));
    app.require_subcommand(1);
    app.footer("Run `schedlab COMMAND --help` for a command's options. Documentation: "
               "README.md and docs/.");

    std::string command_line; // compare records it in its results file
    for (int i = 0; i < argc; ++i)
        command_line += (i ? " " : "") + std::string(argv[i]);
    int rc = 0;
    add_machines_command(app, rc);
    add_topology_command(app, rc);
    add_kernels_command(app, rc);
    add_features_command(app, rc);
    add_costs_command(app, rc);
    add_calibrate_command(app, rc);
    add_run_command(app, rc);
    add_replay_command(app, rc);
    add_latency_command(app, rc);
    add_compare_command(app, rc, command_line);
    add_report_command(app, rc);
    add_sweep_command(app, rc);
    add_export_command(app, rc);
    add_store_command(app, rc);
    add_fidelity_command(app, rc);

    // "schedlab bogus" names the word it did not understand (CLI11 would say "A subcommand is
    // required").
    if (argc >= 2 && argv[1][0] != '-') {
        std::vector<std::string> names;
        for (const CLI::App* sub : app.get_subcommands({}))
            names.push_back(sub->get_name());
        if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
            const std::string hint = nearest_name(argv[1], names);
            std::fprintf(stderr, "schedlab: error: unknown command '%s'%s; the commands are %s\n",
                         argv[1],
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint).c_str(),
                         fmt::format("{}", fmt::join(names, ", ")).c_str());
            return 2;
        }
    }
    // The command runs in its subcommand's callback, once the whole command line has parsed.
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const config_error& e) {
        std::fprintf(stderr, "schedlab: error: %s\n", e.what());
        mpi_world::abort_if_distributed(2); // the other ranks would wait for this one
        return 2;
    }
    return rc;
}

} // namespace schedlab
