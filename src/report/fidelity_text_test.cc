// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fidelity report's text: our AMD cells above the published ones with
 * the agreement marks, "not run" / "not published" cells, the score lines
 * and the newly-idle table.
 */
#include "report/fidelity_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

fidelity_report small_report()
{
    const fidelity_benchmark b{"hackbench", "hackbench.csv", "perf bench sched messaging", "time",
                               0};
    const reference_table ref =
        parse_reference_table("groups,tip_norm,tip_pct_imp,tip_cv,v3_norm,v3_pct_imp,v3_cv\n"
                              "1-groups,1.00,-0.00,4.22,0.92,7.75,9.09\n"
                              "2-groups,0.88,-0.00,11.65,0.85,-12.95,10.77\n",
                              "hackbench.csv");
    measured_table m;
    m.source = "perf bench sched messaging -p (time), bergamo-2s, up to 5 runs per arm";
    m.arms = {"tip", "v3"};
    m.keys = {"1", "4"};
    m.cells = {{measured_cell{2.0, -0.0, 1.5}, measured_cell{1.8, 10.0, 2.5}},
               {measured_cell{3.0, -0.0, 1.0}, measured_cell{3.3, -10.0, 1.0}}};
    fidelity_report r;
    r.reference_dir = "/ref";
    r.tables.push_back(score_table(b, ref, &m, 5));
    r.tables.push_back(score_table(b, ref, nullptr, 5));
    r.tables.back().name = "other";
    r.total = r.tables[0].count;
    r.newidle_ours = newidle_measurement{"tip-2023-08", "tip-2023-08+shared_runq_v3", {}};
    // published per CPU over 60 s; ours summed over 512 CPUs over 5 s (2560 CPU-seconds)
    r.newidle = {{"DIE", "64", 1288.0, 59596.0, 100.0, 250.0, 1288.0 / 60, 59596.0 / 60,
                  100.0 / 2560, 250.0 / 2560},
                 {"NUMA", "64", 28.0, 9138.0, {}, {}, 28.0 / 60, 9138.0 / 60, {}, {}}};
    return r;
}

TEST(fidelity_text, ours_above_published_with_marks_and_scores)
{
    const std::string s = render_fidelity(small_report());
    EXPECT_THAT(s, HasSubstr("Test          : hackbench (hackbench.csv)\n"));
    EXPECT_THAT(s, HasSubstr("Norm          : ours relative to tip at 1"));
    EXPECT_THAT(s, HasSubstr("Case:                tip[pct imp](CV)          v3[pct imp](CV)\n"));
    EXPECT_THAT(s,
                HasSubstr(" 1-groups ours     1.00 [ -0.00]( 1.50)       0.90 [ 10.00]( 2.50) +\n"
                          "          AMD      1.00 [ -0.00]( 4.22)       0.92 [  7.75]( 9.09)\n"));
    EXPECT_THAT(s,
                HasSubstr(" 2-groups ours                not run                  not run\n"
                          "          AMD      0.88 [ -0.00](11.65)       0.85 [-12.95](10.77)\n"));
    EXPECT_THAT(s, HasSubstr(" 4-groups ours     1.50 [ -0.00]( 1.00)       1.65 [-10.00]( 1.00)\n"
                             "          AMD           not published            not published\n"));
    EXPECT_THAT(s, HasSubstr("sign agreement: 1 of 1 rows (100%), 1 within a factor of 2\n"));
    EXPECT_THAT(s, HasSubstr("Ours          : not run (2 published rows)\n"));
    EXPECT_THAT(s, HasSubstr("  other      not run\n"));
    EXPECT_THAT(s, HasSubstr("  overall    sign agreement: 1 of 1 rows (100%)"));
    EXPECT_THAT(s, HasSubstr("per CPU per second"));
    EXPECT_THAT(
        s, HasSubstr(
               "DIE         64      0.039     0.098    2.50       21.5       993   46.27    0.00182\n"));
    EXPECT_THAT(
        s, HasSubstr(
               "NUMA        64          -         -       -      0.467       152  326.36          -\n"));
}

TEST(fidelity_text, no_scored_rows)
{
    EXPECT_EQ(render_fidelity_count({}), "sign agreement: 0 of 0 rows (-)");
}

} // namespace
} // namespace schedlab
