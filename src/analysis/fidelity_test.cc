// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fidelity scorer on hand-made tables: parsing the published CSVs (good
 * and malformed, errors naming file:line), matching rows and arms, the sign
 * score at its edges (a cell exactly at the threshold, a row our side lacks,
 * a zero change), the re-based norm, the newly-idle lb_count table, and the
 * published reference directory itself.
 */
#include "analysis/fidelity.h"

#include "sim/config_error.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

/// The message of the config_error `f` throws ("" when it throws none).
using test_support::error_of;

const char* small_csv = "groups,tip_norm,tip_pct_imp,tip_cv,v3_norm,v3_pct_imp,v3_cv\n"
                        "1-groups,1.00,-0.00,4.22,0.92,7.75,9.09\r\n"
                        "\n"
                        "2-groups,0.88,-0.00,11.65,0.85,2.95,10.77\n";

TEST(fidelity_parse, reads_labels_keys_arms_and_cells)
{
    const reference_table t = parse_reference_table(small_csv, "h.csv");
    EXPECT_EQ(t.row_header, "groups");
    EXPECT_EQ(t.arms, (std::vector<std::string>{"tip", "v3"}));
    EXPECT_EQ(t.labels, (std::vector<std::string>{"1-groups", "2-groups"}));
    EXPECT_EQ(t.keys, (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(t.label_suffix, "-groups");
    ASSERT_EQ(t.cells.size(), 2u);
    EXPECT_DOUBLE_EQ(t.cells[0][1].norm, 0.92);
    EXPECT_DOUBLE_EQ(t.cells[0][1].pct_imp, 7.75);
    EXPECT_DOUBLE_EQ(t.cells[1][0].cv, 11.65);

    const reference_table s = parse_reference_table(
        "kernel_op,tip_norm,tip_pct_imp,tip_cv\nCopy,1.00,0.00,0.53\nScale,0.95,0.00,0.23\n",
        "s.csv");
    EXPECT_EQ(s.keys, (std::vector<std::string>{"Copy", "Scale"}));
    EXPECT_EQ(s.label_suffix, "");
}

TEST(fidelity_parse, malformed_tables_name_file_and_line)
{
    const std::string head = "groups,tip_norm,tip_pct_imp,tip_cv,v3_norm,v3_pct_imp,v3_cv\n";
    EXPECT_THAT(
        error_of([&] { parse_reference_table(head + "1-groups,1.00,-0.00,4.22\n", "h.csv"); }),
        HasSubstr("h.csv:2: expected 7 fields, found 4"));
    // line numbers count blank lines
    EXPECT_THAT(error_of([&] {
                    parse_reference_table(head + "1-groups,1,0,1,1,0,1\n\n2-groups,1,0,1,1,x5,1\n",
                                          "h.csv");
                }),
                HasSubstr("h.csv:4: column 6 (v3_pct_imp): 'x5' is not a number"));
    EXPECT_THAT(
        error_of([&] { parse_reference_table(head + "1-groups,1,0,1,1,nan,1\n", "h.csv"); }),
        HasSubstr("h.csv:2: column 6"));
    EXPECT_THAT(error_of([&] { parse_reference_table(head + "1-groups,1,0,1,1,,1\n", "h.csv"); }),
                HasSubstr("h.csv:2: column 6 (v3_pct_imp): '' is not a number"));
    EXPECT_THAT(error_of([&] {
                    parse_reference_table(head + "1-groups,1,0,1,1,0,1\n1-groups,1,0,1,1,0,1\n",
                                          "h.csv");
                }),
                HasSubstr("h.csv:3: row '1-groups' appears twice"));
    EXPECT_THAT(
        error_of([] { parse_reference_table("groups,tip_norm,tip_cv,tip_pct_imp\n", "h.csv"); }),
        HasSubstr("h.csv:1: columns 3 and 4"));
    EXPECT_THAT(error_of([] {
                    parse_reference_table("groups,v4_norm,v4_pct_imp,v4_cv\n1,1,0,1\n", "h.csv");
                }),
                HasSubstr("h.csv:1: unknown arm 'v4'"));
    EXPECT_THAT(error_of([] {
                    parse_reference_table("groups,v3_norm,v3_pct_imp,v3_cv\n1,1,0,1\n", "h.csv");
                }),
                HasSubstr("h.csv:1: the first arm is 'v3'"));
    EXPECT_THAT(error_of([&] { parse_reference_table(head, "h.csv"); }), HasSubstr("no rows"));
    EXPECT_THAT(error_of([] { parse_reference_table("", "h.csv"); }), HasSubstr("h.csv: empty"));
}

TEST(fidelity_parse, newidle_counts_good_and_malformed)
{
    const auto rows = parse_newidle_reference(
        "domain,clients,no_shared_runq,shared_runq\nDIE,64,1288,59596\nNUMA,64,28,9138\n", "n.csv");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].domain, "DIE");
    EXPECT_EQ(rows[0].clients, "64");
    EXPECT_DOUBLE_EQ(rows[0].no_shared_runq, 1288);
    EXPECT_DOUBLE_EQ(rows[1].shared_runq, 9138);

    EXPECT_THAT(error_of([] { parse_newidle_reference("domain,clients,a,b\n", "n.csv"); }),
                HasSubstr("n.csv:1: expected the header"));
    EXPECT_THAT(error_of([] {
                    parse_newidle_reference(
                        "domain,clients,no_shared_runq,shared_runq\nDIE,64,1288\n", "n.csv");
                }),
                HasSubstr("n.csv:2: expected 4 fields, found 3"));
    EXPECT_THAT(error_of([] {
                    parse_newidle_reference(
                        "domain,clients,no_shared_runq,shared_runq\nDIE,6x,1,2\n", "n.csv");
                }),
                HasSubstr("n.csv:2: clients '6x'"));
    EXPECT_THAT(error_of([] {
                    parse_newidle_reference(
                        "domain,clients,no_shared_runq,shared_runq\nDIE,64,1,-2\n", "n.csv");
                }),
                HasSubstr("n.csv:2: column 4 (shared_runq): '-2' is not a count"));
}

TEST(fidelity_parse, the_published_reference_directory)
{
    const reference_data d =
        read_reference_dir(SCHEDLAB_REFERENCE_DIR "/shared-runq-v3-bergamo-2s");
    ASSERT_EQ(d.tables.size(), fidelity_benchmarks().size());
    for (const reference_table& t : d.tables)
        EXPECT_EQ(t.arms, (std::vector<std::string>{"tip", "v3", "v3_tgfix", "v3_tgfix_noopt"}))
            << t.file;
    EXPECT_EQ(d.tables[0].keys.size(), 5u);     // hackbench 1..16 groups
    EXPECT_EQ(d.tables[1].keys.back(), "2048"); // tbench
    EXPECT_EQ(d.tables[2].labels.back(), "512-clients");
    EXPECT_EQ(d.newidle.size(), 44u); // 4 levels x 11 client counts
    EXPECT_THAT(error_of([] { read_reference_dir("/nonexistent/ref"); }),
                HasSubstr("/nonexistent/ref"));
}

TEST(fidelity_arms, kernel_specs_map_to_the_published_columns_in_any_term_order)
{
    EXPECT_EQ(reference_column_of("tip-2023-08"), "tip");
    EXPECT_EQ(reference_column_of("tip-2023-08+shared_runq_v3"), "v3");
    EXPECT_EQ(reference_column_of("tip-2023-08+tg_ratelimit+shared_runq_v3"), "v3_tgfix");
    EXPECT_EQ(reference_column_of("tip-2023-08+shared_runq_v3_noopt+tg_ratelimit"),
              "v3_tgfix_noopt");
    EXPECT_EQ(reference_column_of("tip-2023-08+shared_runq_v3+NO_SHARED_RUNQ"), "");
    EXPECT_EQ(reference_column_of("6.6"), "");
    EXPECT_EQ(canonical_kernel_spec("a+z+b"), "a+b+z");
}

/* ---- scoring hand-made tables ---- */

const fidelity_benchmark bench{"hackbench", "hackbench.csv", "perf bench sched messaging", "time",
                               0};

/// Published: tip, v3 and v3_tgfix at 1, 2 and 4 groups.
reference_table published()
{
    return parse_reference_table(
        "groups,tip_norm,tip_pct_imp,tip_cv,v3_norm,v3_pct_imp,v3_cv,v3_tgfix_norm,"
        "v3_tgfix_pct_imp,v3_tgfix_cv\n"
        "1-groups,1.00,-0.00,1.00,0.95,5.00,1.00,0.96,4.99,1.00\n"     // exactly at / just below
        "2-groups,2.00,-0.00,1.00,2.40,-20.00,1.00,1.80,10.00,1.00\n"  // ours: zero change, 2x
        "4-groups,4.00,-0.00,1.00,3.00,25.00,1.00,5.00,-25.00,1.00\n", // ours lacks this row
        "hackbench.csv");
}

measured_table ours()
{
    measured_table m;
    m.source = "test";
    m.arms = {"tip", "v3", "v3_tgfix"};
    m.keys = {"1", "2", "8"};
    m.cells = {
        {measured_cell{10, 0, 1}, measured_cell{9, 1.0, 2}, measured_cell{9, 30.0, 2}},
        {measured_cell{20, 0, 1}, measured_cell{20, 0.0, 2}, measured_cell{18, 20.0, 2}},
        {measured_cell{80, 0, 1}, measured_cell{70, 12.5, 2}, std::nullopt},
    };
    return m;
}

const fidelity_row& row_of(const fidelity_table& t, const std::string& key, const std::string& arm)
{
    for (const fidelity_row& r : t.rows)
        if (r.key == key && r.arm == arm)
            return r;
    throw std::runtime_error("no row " + key + " " + arm);
}

TEST(fidelity_score, threshold_edge_missing_rows_and_a_zero_change)
{
    const measured_table m = ours();
    const fidelity_table t = score_table(bench, published(), &m, 5);
    EXPECT_EQ(t.labels, (std::vector<std::string>{"1-groups", "2-groups", "4-groups", "8-groups"}));
    ASSERT_EQ(t.rows.size(), 4u * 3u);

    // exactly at the threshold: scored; our +1.0 has the sign, but not within 2x of 5
    const fidelity_row& at = row_of(t, "1", "v3");
    EXPECT_TRUE(at.scored);
    EXPECT_TRUE(at.agree);
    EXPECT_FALSE(at.within_2x);
    // just below: listed, not scored
    EXPECT_FALSE(row_of(t, "1", "v3_tgfix").scored);
    // tip is never scored
    EXPECT_FALSE(row_of(t, "1", "tip").scored);
    // a zero change does not reproduce -20
    const fidelity_row& zero = row_of(t, "2", "v3");
    EXPECT_TRUE(zero.scored);
    EXPECT_FALSE(zero.agree);
    // exactly twice the published 10: agrees, within a factor of 2
    const fidelity_row& twice = row_of(t, "2", "v3_tgfix");
    EXPECT_TRUE(twice.agree);
    EXPECT_TRUE(twice.within_2x);
    // a row our side lacks: not run, not scored
    const fidelity_row& lacking = row_of(t, "4", "v3");
    EXPECT_TRUE(lacking.published.has_value());
    EXPECT_FALSE(lacking.ours.has_value());
    EXPECT_FALSE(lacking.scored);
    // a row the reference lacks: listed with the table's label form, not scored
    const fidelity_row& extra = row_of(t, "8", "v3");
    EXPECT_EQ(extra.label, "8-groups");
    EXPECT_FALSE(extra.published.has_value());
    EXPECT_TRUE(extra.ours.has_value());
    EXPECT_FALSE(extra.scored);
    // an arm without samples at a load is not run there
    EXPECT_FALSE(row_of(t, "8", "v3_tgfix").ours.has_value());

    EXPECT_EQ(t.count.scored, 3);
    EXPECT_EQ(t.count.agree, 2);
    EXPECT_EQ(t.count.within_2x, 1);
    EXPECT_NEAR(t.count.pct(), 66.666666, 1e-4);
}

TEST(fidelity_score, our_norm_is_rebased_to_tip_in_the_published_first_row)
{
    const measured_table m = ours();
    const fidelity_table t = score_table(bench, published(), &m, 5);
    EXPECT_EQ(t.norm_key, "1");
    EXPECT_DOUBLE_EQ(row_of(t, "2", "tip").ours->norm, 2.0);
    EXPECT_DOUBLE_EQ(row_of(t, "2", "v3_tgfix").ours->norm, 1.8);
    // pct imp and CV are the comparison's own
    EXPECT_DOUBLE_EQ(row_of(t, "2", "v3_tgfix").ours->pct_imp, 20.0);
    EXPECT_DOUBLE_EQ(row_of(t, "2", "v3_tgfix").ours->cv, 2.0);

    // without the first published row, our own first row is the base
    measured_table late = ours();
    late.keys[0] = "16";
    const fidelity_table u = score_table(bench, published(), &late, 5);
    EXPECT_EQ(u.norm_key, "16");
    EXPECT_DOUBLE_EQ(row_of(u, "2", "tip").ours->norm, 2.0);
}

TEST(fidelity_score, threshold_zero_still_skips_published_zero_changes_and_not_run_tables)
{
    const measured_table m = ours();
    const fidelity_table t = score_table(bench, published(), &m, 0);
    EXPECT_EQ(t.count.scored, 4); // 1-groups both arms, 2-groups both arms; tip's -0.00 never
    const fidelity_table none = score_table(bench, published(), nullptr, 5);
    EXPECT_EQ(none.count.scored, 0);
    EXPECT_TRUE(none.source.empty());
    EXPECT_EQ(none.rows.size(), 9u);
    for (const fidelity_row& r : none.rows)
        EXPECT_FALSE(r.ours.has_value());
}

/* ---- from runs: comparisons, the tip baseline, newidle ---- */

run_result sample_run(const std::string& arm, const std::string& load, double value, int index,
                      const std::string& machine = "bergamo-2s")
{
    run_result r;
    r.provenance.machine = machine;
    r.provenance.nr_cpus = 512;
    r.provenance.kernel_spec = arm;
    r.provenance.kernel_base = "tip-2023-08";
    r.provenance.policy = "CFS";
    r.provenance.argv = {"tbench", load, "-t", "2"};
    r.provenance.command_line = "tbench -t 2 -c client.txt " + load + " 127.0.0.1";
    r.arm = arm;
    r.load = load;
    r.run_index = index;
    r.finished = true;
    r.metrics = {{"throughput", "MB/s", value, true}, {"max_latency", "ms", 1, false}};
    r.summary.simulated_ns = 2'000'000'000; // -t 2
    // newly-idle lb_count grows with the load, tenfold with SHARED_RUNQ
    const double scale = arm == "tip-2023-08" ? 1 : 10;
    r.schedstat = std::vector<schedstat_counter>{
        {"MC", "newly_idle", "lb_count", scale * std::stod(load) * (index + 1)},
        {"DIE", "newly_idle", "lb_count", scale * 2 * std::stod(load)},
        {"DIE", "idle", "lb_count", 7},
    };
    return r;
}

std::vector<run_result> tbench_runs(const std::vector<std::string>& arms)
{
    std::vector<run_result> runs;
    for (const std::string load : {"64", "128"})
        for (std::size_t a = 0; a < arms.size(); ++a)
            for (int i = 0; i < 2; ++i)
                runs.push_back(
                    sample_run(arms[a], load, 100.0 - 30.0 * static_cast<double>(a) + i, i));
    return runs;
}

TEST(fidelity_runs, measured_table_reuses_the_comparisons_amd_cells)
{
    const comparison c =
        compare_runs(tbench_runs({"tip-2023-08", "tip-2023-08+shared_runq_v3", "6.6"}));
    const measured_table m = measured_from_comparison(c, fidelity_benchmarks()[1], "r.json");
    EXPECT_EQ(m.arms, (std::vector<std::string>{"tip", "v3"})); // 6.6 models no column
    EXPECT_EQ(m.keys, (std::vector<std::string>{"64", "128"}));
    ASSERT_TRUE(m.cells[0][1].has_value());
    EXPECT_DOUBLE_EQ(m.cells[0][1]->pct_imp, c.metrics[0].cells[0][1].amd_pct_imp);
    EXPECT_DOUBLE_EQ(m.cells[0][1]->cv, c.metrics[0].cells[0][1].amd_cv);
    EXPECT_LT(m.cells[0][1]->pct_imp, 0);

    const comparison wrong =
        compare_runs(tbench_runs({"tip-2023-08+shared_runq_v3", "tip-2023-08"}));
    EXPECT_THAT(
        error_of([&] { measured_from_comparison(wrong, fidelity_benchmarks()[1], "r.json"); }),
        HasSubstr("r.json: the baseline arm (the first --kernel) is "
                  "'tip-2023-08+shared_runq_v3'"));
}

TEST(fidelity_newidle, tip_against_v3_and_the_published_counts)
{
    const std::vector<run_result> runs = tbench_runs({"tip-2023-08", "tip-2023-08+shared_runq_v3"});
    const comparison c = compare_runs(runs);
    const auto m = measured_newidle(c, runs);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->without_arm, "tip-2023-08");
    EXPECT_EQ(m->with_arm, "tip-2023-08+shared_runq_v3");
    ASSERT_EQ(m->cells.size(), 4u); // MC and DIE at 64 and 128; idle lb_count left out
    const std::vector<newidle_reference_row> ref = {{"MC", "64", 181406, 133978},
                                                    {"NUMA", "64", 28, 9138}};
    const std::vector<newidle_row> rows = match_newidle(ref, *m);
    ASSERT_EQ(rows.size(), 5u); // 2 published (NUMA not run), then MC 128, DIE 64, DIE 128
    EXPECT_EQ(rows[0].domain, "MC");
    EXPECT_DOUBLE_EQ(*rows[0].ours_without, 64 * 1.5); // mean of 64 and 128
    EXPECT_DOUBLE_EQ(*rows[0].ours_with, 640 * 1.5);
    EXPECT_DOUBLE_EQ(*newidle_ratio(rows[0].ours_without, rows[0].ours_with), 10);
    EXPECT_NEAR(*newidle_ratio(rows[0].ref_without, rows[0].ref_with), 133978.0 / 181406, 1e-12);
    EXPECT_FALSE(rows[1].ours_with.has_value());
    EXPECT_FALSE(newidle_ratio(rows[1].ours_without, rows[1].ours_with).has_value());
    EXPECT_FALSE(rows[2].ref_with.has_value());
    EXPECT_EQ(rows[2].domain + "/" + rows[2].clients, "MC/128");
    EXPECT_EQ(rows[3].domain + "/" + rows[3].clients, "DIE/64");
    EXPECT_FALSE(newidle_ratio(0.0, 5.0).has_value());

    // the published counts are of v3_tgfix_noopt with and without the feature: preferred when run
    const std::vector<run_result> four =
        tbench_runs({"tip-2023-08", "tip-2023-08+shared_runq_v3",
                     "tip-2023-08+shared_runq_v3_noopt+tg_ratelimit",
                     "tip-2023-08+tg_ratelimit+shared_runq_v3_noopt+NO_SHARED_RUNQ"});
    const auto n = measured_newidle(compare_runs(four), four);
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->with_arm, "tip-2023-08+shared_runq_v3_noopt+tg_ratelimit");
    EXPECT_EQ(n->without_arm, "tip-2023-08+tg_ratelimit+shared_runq_v3_noopt+NO_SHARED_RUNQ");

    const std::vector<run_result> tip = tbench_runs({"tip-2023-08"});
    EXPECT_FALSE(measured_newidle(compare_runs(tip), tip).has_value());
}

/*
 * The published counts are per-CPU means over a 60 s run (sched-scoreboard's
 * "all_cpus (avg)", ZOc7i7wM0x4hF4vL@BLR-5CG11610CF.amd.com); ours are sums over the
 * CPUs over the simulated run. Compared, both are per CPU per second. The scorer before
 * this compared the two raw numbers, which differ by the CPU count (512) times the
 * ratio of the durations (here 60 s against 2 s).
 */
TEST(fidelity_newidle, both_sides_become_per_cpu_per_second)
{
    std::vector<run_result> runs = tbench_runs({"tip-2023-08", "tip-2023-08+shared_runq_v3"});
    for (run_result& r : runs)
        if (r.run_index == 1)
            r.summary.simulated_ns = 4'000'000'000; // runs of 2 s and 4 s: 3 s on average
    const auto m = measured_newidle(compare_runs(runs), runs);
    ASSERT_TRUE(m.has_value());
    ASSERT_FALSE(m->cells.empty());
    EXPECT_EQ(m->cells[0].domain + "/" + m->cells[0].clients, "MC/64");
    EXPECT_DOUBLE_EQ(m->cells[0].without_cpu_s, 512.0 * 3);
    EXPECT_DOUBLE_EQ(m->cells[0].with_cpu_s, 512.0 * 3);

    // the published SMT count at 128 clients without SHARED_RUNQ: 219570 per CPU in 60 s
    const reference_data ref =
        read_reference_dir(SCHEDLAB_REFERENCE_DIR "/shared-runq-v3-bergamo-2s");
    const std::vector<newidle_row> rows = match_newidle(ref.newidle, *m);
    const auto at = [&](const std::string& d, const std::string& n) {
        for (const newidle_row& r : rows)
            if (r.domain == d && r.clients == n)
                return r;
        ADD_FAILURE() << d << "/" << n;
        return newidle_row{};
    };
    const newidle_row smt128 = at("SMT", "128");
    EXPECT_DOUBLE_EQ(*smt128.ref_without, 219570);
    EXPECT_NEAR(*smt128.ref_without_rate, 3659.5, 1e-9);
    EXPECT_NEAR(*smt128.ref_with_rate, 649880.0 / 60, 1e-9);
    EXPECT_FALSE(smt128.ours_without_rate.has_value()); // we ran no SMT counters

    // ours at MC/64: tip's mean count 96 over 1536 CPU-seconds, v3's 960
    const newidle_row mc64 = at("MC", "64");
    EXPECT_DOUBLE_EQ(*mc64.ours_without, 96);
    EXPECT_DOUBLE_EQ(*mc64.ours_without_rate, 96.0 / 1536);
    EXPECT_DOUBLE_EQ(*mc64.ours_with_rate, 960.0 / 1536);
    EXPECT_DOUBLE_EQ(*mc64.ref_without_rate, 181406.0 / 60);

    // runs that carry no duration give no rate, not a division by zero
    for (run_result& r : runs)
        r.summary.simulated_ns = 0;
    const auto z = measured_newidle(compare_runs(runs), runs);
    ASSERT_TRUE(z.has_value());
    EXPECT_FALSE(match_newidle(ref.newidle, *z).front().ours_without_rate.has_value());

    const nlohmann::ordered_json j = [&] {
        fidelity_report r;
        r.newidle_ours = m;
        r.newidle = rows;
        return fidelity_to_json(r);
    }();
    EXPECT_EQ(j["newidle_lb_count"]["published_run_s"], 60);
    bool seen = false;
    for (const auto& row : j["newidle_lb_count"]["rows"])
        if (row["domain"] == "MC" && row["clients"] == "64") {
            seen = true;
            EXPECT_DOUBLE_EQ(row["ours_without_per_cpu_s"].get<double>(), 96.0 / 1536);
            EXPECT_DOUBLE_EQ(row["ours_over_published_without"].get<double>(),
                             (96.0 / 1536) / (181406.0 / 60));
        }
    EXPECT_TRUE(seen);
}

TEST(fidelity_runs, score_fidelity_groups_files_and_rejects_unknown_benchmarks)
{
    const reference_data ref =
        read_reference_dir(SCHEDLAB_REFERENCE_DIR "/shared-runq-v3-bergamo-2s");
    // one benchmark's loads over two files
    std::vector<run_result> all = tbench_runs({"tip-2023-08", "tip-2023-08+shared_runq_v3"});
    const std::vector<run_result> a(all.begin(), all.begin() + 4), b(all.begin() + 4, all.end());
    const fidelity_report r = score_fidelity(ref, {{"a.json", a}, {"b.json", b}}, 5);
    ASSERT_EQ(r.tables.size(), fidelity_benchmarks().size());
    const fidelity_table& tb = r.tables[1];
    EXPECT_EQ(tb.file, "tbench.csv");
    EXPECT_FALSE(tb.source.empty());
    EXPECT_TRUE(r.tables[0].source.empty()); // hackbench not run
    // v3 at 64 and 128 clients (-66.85, -78.74) scored, both reproduced (ours about -30 %)
    EXPECT_EQ(tb.count.scored, 2);
    EXPECT_EQ(tb.count.agree, 2);
    EXPECT_EQ(r.total.scored, 2);
    EXPECT_FALSE(r.newidle.empty());
    EXPECT_TRUE(r.notes.empty()) << r.notes.front();

    const nlohmann::ordered_json j = fidelity_to_json(r);
    EXPECT_EQ(j["format"], "schedlab-fidelity-v1");
    EXPECT_EQ(j["total"]["agree"], 2);
    EXPECT_EQ(j["benchmarks"][1]["rows"].size(), 12u * 4u);
    EXPECT_TRUE(j["benchmarks"][0]["source"].is_null());
    EXPECT_EQ(j["newidle_lb_count"]["with_arm"], "tip-2023-08+shared_runq_v3");

    // another machine: a note, not an error
    std::vector<run_result> milan;
    for (run_result x : a) {
        x.provenance.machine = "milan-2s";
        milan.push_back(x);
    }
    EXPECT_THAT(score_fidelity(ref, {{"m.json", milan}}, 5).notes.at(0),
                HasSubstr("m.json: ran on milan-2s"));

    // an unknown benchmark
    std::vector<run_result> pipe = a;
    for (run_result& x : pipe) {
        x.provenance.argv = {"perf", "bench", "sched", "pipe", "-l", "10"};
        x.provenance.command_line = "perf bench sched pipe --loop 10";
    }
    EXPECT_THAT(error_of([&] {
                    score_fidelity(ref, {{"p.json", pipe}}, 5);
                }),
                HasSubstr("p.json: no published table for 'perf bench sched pipe'"));
    // two result sets for one table
    std::vector<run_result> other = a;
    for (run_result& x : other)
        x.provenance.argv[3].assign(1, '3'); // -t 3 (assign("3") trips GCC 12's -Wrestrict)
    EXPECT_THAT(error_of([&] {
                    score_fidelity(ref, {{"a.json", a}, {"o.json", other}}, 5);
                }),
                HasSubstr("tbench.csv would be scored twice"));
    EXPECT_THAT(error_of([&] {
                    score_fidelity(ref, {{"e.json", {}}}, 5);
                }),
                HasSubstr("e.json: the results file holds no runs"));
}

} // namespace
} // namespace schedlab
