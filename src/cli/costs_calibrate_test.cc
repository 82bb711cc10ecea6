// SPDX-License-Identifier: GPL-2.0-only
/* `schedlab costs [MACHINE]` and `schedlab calibrate`, through cmd_costs and the binary. */
#include "cli/commands.h"

#include "cli/bin_test_support.h"

#include "machine/machine_parse.h"
#include "sim/config_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using test_support::schedlab_bin;

TEST(cmd_costs, lists_a_preset_s_costs_with_their_sources)
{
    std::ostringstream out;
    EXPECT_EQ(cmd_costs(out, "spr-2s", {}), 0);
    EXPECT_THAT(out.str(), HasSubstr("# costs of machine spr-2s"));
    EXPECT_THAT(out.str(), HasSubstr("source: intel_idle spr_cstates: C6 exit_latency 290 us"));
    EXPECT_THAT(out.str(), HasSubstr("source: default: "));
}

TEST(cmd_costs, overrides_and_unknown_machines)
{
    std::ostringstream out;
    cmd_costs(out, "milan-2s", {"context_switch=900"});
    EXPECT_THAT(out.str(), HasSubstr("source: --cost context_switch=900"));
    EXPECT_THROW(cmd_costs(out, "milan-s2", {}), config_error);
    EXPECT_THROW(cmd_costs(out, "milan-2s", {"contex_switch=1"}), config_error);
}

TEST(schedlab_binary, costs_takes_a_machine_and_defaults_to_host)
{
    const auto preset = schedlab_bin("costs ryzen-7950x");
    EXPECT_EQ(preset.status, 0) << preset.output;
    EXPECT_THAT(preset.output, HasSubstr("# costs of machine ryzen-7950x"));
    EXPECT_THAT(preset.output, HasSubstr("up to 79.5 ns between CCDs"));

    const auto host = schedlab_bin("costs");
    EXPECT_EQ(host.status, 0) << host.output;
    EXPECT_THAT(host.output, HasSubstr("# costs of machine host"));

    const auto bad = schedlab_bin("costs ryzen-7950x --cost line_lcc=3");
    EXPECT_EQ(bad.status, 2);
    EXPECT_THAT(bad.output, HasSubstr("--cost: unknown cost 'line_lcc' (did you mean 'line_llc'?)"));

    const auto unknown = schedlab_bin("costs bergamo");
    EXPECT_EQ(unknown.status, 2);
    EXPECT_THAT(unknown.output, HasSubstr("did you mean 'bergamo-2s'?"));
}

TEST(schedlab_binary, run_takes_cost_overrides_before_the_benchmark)
{
    const std::string bench = " -- perf bench sched messaging -g 1 -l 2";
    const auto base = schedlab_bin("run -m ryzen-7950x --no-summary" + bench);
    ASSERT_EQ(base.status, 0) << base.output;
    const auto slow = schedlab_bin("run -m ryzen-7950x --no-summary --cost exit=5000000" + bench);
    ASSERT_EQ(slow.status, 0) << slow.output;
    EXPECT_NE(slow.output, base.output) << "forty 5 ms exits must show in the total time";
    const auto two = schedlab_bin("run -m ryzen-7950x --no-summary --cost exit=5000000 --cost "
                                  "socket_send=900" + bench);
    EXPECT_EQ(two.status, 0) << two.output;
    const auto bad = schedlab_bin("run -m ryzen-7950x --cost exit=-1" + bench);
    EXPECT_EQ(bad.status, 2) << bad.output;
}

TEST(schedlab_binary, calibrate_quick_writes_a_machine_file)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() /
                         ("schedlab_cli_calibrate_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const fs::path file = dir / "host.json";
    // --no-tracefs: the machine's tracefs is left to its user (tests run in parallel).
    const auto r =
        schedlab_bin("calibrate --quick --no-perf --no-tracefs --output " + file.string());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("pipe_write"));
    EXPECT_THAT(r.output, HasSubstr("Wrote " + file.string()));
    EXPECT_THAT(r.output, Not(HasSubstr("perf bench sched pipe ...")));
    EXPECT_THAT(r.output, Not(HasSubstr("exit of perf bench's child processes")));
    EXPECT_THAT(r.output, Not(HasSubstr("sched tracepoints (tracefs) ...")));
    EXPECT_THAT(r.output, HasSubstr("socket_send"));
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const machine m = machine_from_json(text.str(), file.string());
    EXPECT_GT(m.costs.pipe_write, 0);

    // The file is a machine like any other.
    const auto costs = schedlab_bin("costs " + file.string());
    EXPECT_EQ(costs.status, 0) << costs.output;
    EXPECT_THAT(costs.output, HasSubstr("source: measured by schedlab calibrate --quick on "));
    fs::remove_all(dir);

    const auto bad = schedlab_bin("calibrate --bogus");
    EXPECT_EQ(bad.status, 2);
}

} // namespace
} // namespace schedlab
