// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line end to end: subcommand output, a whole hackbench run,
 * determinism of the printed result, and the exit code and message of the
 * real binary for every kind of bad input.
 */
#include "cli/commands.h"

#include "cli/bin_test_support.h"

#include "sim/config_error.h"
#include "sim/test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedlab {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using test_support::slurp;
using ::testing::Not;

TEST(cmd_machines, lists_every_preset)
{
    std::ostringstream out;
    EXPECT_EQ(cmd_machines(out), 0);
    for (const char* name : {"bergamo-2s", "milan-2s", "spr-2s", "ryzen-7950x", "skylake-18c",
                             "host"})
        EXPECT_THAT(out.str(), HasSubstr(name));
}

TEST(cmd_topology, prints_the_bergamo_domain_tree_like_the_kernel)
{
    std::ostringstream out;
    EXPECT_EQ(cmd_topology(out, "bergamo-2s", false, false), 0);
    const std::string s = out.str();
    EXPECT_THAT(s, HasSubstr("CPU0 attaching sched-domain(s):\n domain-0: span=0,256 level=SMT\n"));
    EXPECT_THAT(s, HasSubstr("  domain-1: span=0-7,256-263 level=MC\n"));
    EXPECT_THAT(s, HasSubstr("   domain-2: span=0-127,256-383 level=DIE\n"));
    EXPECT_THAT(s, HasSubstr("    domain-3: span=0-511 level=NUMA\n"));
}

TEST(cmd_features, marks_features_a_kernel_lacks)
{
    std::ostringstream out;
    cmd_features(out, "");
    EXPECT_THAT(out.str(), ::testing::ContainsRegex("PLACE_LAG +on +on +on +- +- +-"));
    EXPECT_THAT(out.str(), ::testing::ContainsRegex("DELAY_DEQUEUE +on +on +- +- +- +-"));
    EXPECT_THAT(out.str(), ::testing::ContainsRegex("NI_RANDOM +on +- +- +- +- +-"));
    std::ostringstream one;
    cmd_features(one, "6.6+NO_RUN_TO_PARITY");
    EXPECT_THAT(one.str(), ::testing::ContainsRegex("RUN_TO_PARITY +off"));
}

std::string run_hackbench(u64 seed, const std::string& machine = "skylake-18c")
{
    run_options o;
    o.machine = machine;
    o.kernel = "6.6";
    o.seed = seed;
    o.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "20"};
    std::ostringstream out, err;
    EXPECT_EQ(cmd_run(out, err, o), 0) << err.str();
    return out.str();
}

TEST(cmd_run, hackbench_prints_perf_output_then_the_scheduler_summary)
{
    const std::string s = run_hackbench(7);
    EXPECT_THAT(s, HasSubstr("# 20 sender and receiver processes per group"));
    EXPECT_THAT(s, ::testing::ContainsRegex("Total time: [0-9]+\\.[0-9]{3} \\[sec\\]"));
    EXPECT_THAT(s, HasSubstr("# context switches:"));
    EXPECT_THAT(s, HasSubstr("# wakeup-to-run latency (us): p50"));
    EXPECT_THAT(s, HasSubstr("# per-cpu utilisation (%):"));
}

TEST(cmd_run, output_is_bit_identical_for_a_seed_and_differs_across_seeds)
{
    const std::string a = run_hackbench(7), b = run_hackbench(7), c = run_hackbench(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(cmd_run, rejects_bad_input_before_simulating)
{
    run_options o;
    o.machine = "skylake-18c";
    o.workload_argv = {"perf", "bench", "sched", "messaging"};
    std::ostringstream out, err;
    o.features = "NO_RUN_TO_PARTY";
    EXPECT_THROW(cmd_run(out, err, o), config_error);
    o.features = "";
    o.costs = {"nosuch=1"};
    EXPECT_THROW(cmd_run(out, err, o), config_error);
}

/* ---- compare, report, run --trace/--json ---- */

compare_options small_compare_jobs(int jobs, const std::string& json)
{
    compare_options o;
    o.spec.machine = "skylake-18c";
    o.spec.arms = {"6.6", "6.5"};
    o.spec.runs = 2;
    o.spec.seed = 3;
    o.spec.check = "sampled";
    o.spec.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1,2", "-l", "5"};
    o.jobs = jobs;
    o.json_path = json;
    return o;
}

TEST(cmd_compare, prints_three_formats_identically_for_one_and_two_jobs)
{
    const std::string j1 = ::testing::TempDir() + "/cmp-j1.json", j2 = ::testing::TempDir() + "/cmp-j2.json";
    std::ostringstream out1, out2, err1, err2;
    ASSERT_EQ(cmd_compare(out1, err1, small_compare_jobs(1, j1)), 0) << err1.str();
    ASSERT_EQ(cmd_compare(out2, err2, small_compare_jobs(2, j2)), 0) << err2.str();
    EXPECT_EQ(out1.str(), out2.str());
    EXPECT_EQ(slurp(j1), slurp(j2));
    const std::string s = out1.str();
    EXPECT_THAT(s, HasSubstr("hackbench-process-sockets\n"));                 // mmtests
    EXPECT_THAT(s, HasSubstr("\nAmean     1 "));
    EXPECT_THAT(s, HasSubstr("Case:           6.6[pct imp](CV)    6.5[pct imp](CV)\n")); // AMD
    EXPECT_THAT(s, HasSubstr(" 2-groups     1.00 [ -0.00]("));
    EXPECT_THAT(s, HasSubstr("         %stddev     %change         %stddev\n")); // lkp
    EXPECT_THAT(s, HasSubstr("# baseline 6.6: 2 runs, kernel 6.6 (EEVDF)"));
    // non-tty progress: plain lines ending with the last run
    EXPECT_THAT(err1.str(), HasSubstr("schedlab: 8/8 runs done (100%)"));

    // report re-renders the same tables from the stored results
    report_options r;
    r.files = {j1};
    std::ostringstream rep, rerr;
    ASSERT_EQ(cmd_report(rep, rerr, r), 0);
    EXPECT_EQ(rep.str(), s);
    r.tables.format = "amd";
    std::ostringstream amd;
    cmd_report(amd, rerr, r);
    EXPECT_THAT(amd.str(), Not(HasSubstr("%stddev")));
    EXPECT_THAT(amd.str(), HasSubstr("Statistic     : AMean"));
    std::remove(j1.c_str());
    std::remove(j2.c_str());
}

TEST(cmd_compare, rejects_bad_input_before_simulating)
{
    std::ostringstream out, err;
    compare_options o = small_compare_jobs(1, "");
    o.spec.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1,,2"};
    EXPECT_THROW(cmd_compare(out, err, o), config_error);
    o = small_compare_jobs(1, "");
    o.spec.arms = {"6.6", "6.6+NO_RUN_TO_PARTY"};
    EXPECT_THROW(cmd_compare(out, err, o), config_error);
    o = small_compare_jobs(1, "");
    o.tables.format = "csv";
    EXPECT_THROW(cmd_compare(out, err, o), config_error);
    EXPECT_EQ(err.str(), ""); // nothing ran
}

/// The config_error message `f` throws; "accepted" when it throws none.
template <typename F>
std::string error_of(F f)
{
    try {
        f();
    } catch (const config_error& e) {
        return e.what();
    }
    return "accepted";
}

TEST(cmd_compare, html_with_one_runs_timeline)
{
    const std::string html = ::testing::TempDir() + "/cmp-timeline.html";
    compare_options o = small_compare_jobs(1, "");
    o.tables.html_path = html;
    o.timeline = "6.5,2,1";
    std::ostringstream out, err;
    ASSERT_EQ(cmd_compare(out, err, o), 0) << err.str();
    const std::string h = slurp(html);
    EXPECT_THAT(h, HasSubstr("<p>arm 6.5, load 2, run 1: machine skylake-18c (36 CPUs), kernel "
                             "6.5 (CFS), seed 4: "));
    EXPECT_THAT(h, HasSubstr("id=\"timeline-data\">{\"from\":0,"));
    EXPECT_THAT(h, HasSubstr("<section id=\"distributions\">"));
    std::remove(html.c_str());
}

TEST(cmd_compare, a_bad_timeline_is_refused_before_simulating)
{
    for (const char* t : {"3,1,0", "0,1,0", "6.7,1,0", "1,3,0", "1,1,2", "1,1,-1", "1,1", "1,1,0,0",
                          "x"}) {
        compare_options o = small_compare_jobs(1, "");
        o.tables.html_path = ::testing::TempDir() + "/never.html";
        o.timeline = t;
        std::ostringstream out, err;
        EXPECT_THAT(error_of([&] { cmd_compare(out, err, o); }), HasSubstr("--timeline: '")) << t;
        EXPECT_EQ(err.str(), "") << t; // nothing ran
    }
    compare_options o = small_compare_jobs(1, "");
    o.timeline = "1,1,0"; // without --html
    std::ostringstream out, err;
    EXPECT_THROW(cmd_compare(out, err, o), config_error);
    o.tables.html_path = ::testing::TempDir() + "/never.html";
    o.timeline_window = "0.5,0.1";
    EXPECT_THROW(cmd_compare(out, err, o), config_error);
}

TEST(cmd_run, trace_and_json_files)
{
    const std::string trace = ::testing::TempDir() + "/run-trace.txt";
    const std::string json = ::testing::TempDir() + "/run.json";
    run_options o;
    o.machine = "skylake-18c";
    o.seed = 2;
    o.check = "sampled";
    o.trace_path = trace;
    o.json_path = json;
    o.workload_argv = {"perf", "bench", "sched", "pipe", "-l", "200"};
    std::ostringstream out, err;
    ASSERT_EQ(cmd_run(out, err, o), 0) << err.str();
    const std::string t = slurp(trace);
    EXPECT_TRUE(t.starts_with("# tracer: nop\n"));
    EXPECT_THAT(t, HasSubstr("#P:36\n"));
    EXPECT_THAT(t, HasSubstr(": sched_switch: prev_comm="));
    // power:cpu_idle as the kernel prints it: the state entered, 4294967295 on exit
    EXPECT_THAT(t, ContainsRegex("<idle>-0 +\\[[0-9]+\\] d\\.\\.1\\. +[0-9.]+: cpu_idle: "
                                 "state=[012] cpu_id=[0-9]+\n"));
    EXPECT_THAT(t, HasSubstr(": cpu_idle: state=4294967295 cpu_id="));
    const std::string j = slurp(json);
    EXPECT_THAT(j, HasSubstr("\"format\": \"schedlab-result-v1\""));
    // the printed digest is the stored one
    const std::size_t at = out.str().find("# schedule digest: ");
    ASSERT_NE(at, std::string::npos);
    EXPECT_THAT(j, HasSubstr("\"schedule_digest\": \"" + out.str().substr(at + 19, 16) + "\""));
    std::remove(trace.c_str());
    std::remove(json.c_str());
}

TEST(cmd_run, html_report_with_the_timeline_and_the_same_schedule)
{
    const std::string html = ::testing::TempDir() + "/run-report.html";
    run_options o;
    o.machine = "skylake-18c";
    o.seed = 2;
    o.check = "sampled";
    o.workload_argv = {"perf", "bench", "sched", "pipe", "-l", "200"};
    std::ostringstream plain, err;
    ASSERT_EQ(cmd_run(plain, err, o), 0) << err.str();
    o.html_path = html;
    o.timeline_window = "0,0.001";
    std::ostringstream out;
    ASSERT_EQ(cmd_run(out, err, o), 0) << err.str();
    EXPECT_EQ(out.str(), plain.str()); // recording the timeline leaves the schedule alone
    const std::string h = slurp(html);
    EXPECT_THAT(h, HasSubstr("<title>schedlab run: perfpipe on skylake-18c</title>"));
    EXPECT_THAT(h, HasSubstr("<section id=\"timeline-section\">"));
    EXPECT_THAT(h, HasSubstr("Window 0.000000 s to 0.001000 s"));
    EXPECT_THAT(h, HasSubstr("id=\"timeline-data\">{\"from\":0,\"span\":1000000,"));
    // idle periods with their C-state: (start, end, state) on some CPU
    EXPECT_THAT(h, ContainsRegex("\"idle\":\\[(\\[\\],)*\\[[0-9]+,[0-9]+,[012][],]"));
    EXPECT_THAT(h, HasSubstr("<section id=\"distributions\">"));
    EXPECT_THAT(h, HasSubstr("wakeup-to-run latency per arm"));
    std::remove(html.c_str());
}

TEST(cmd_run, a_bad_timeline_window_is_refused_before_simulating)
{
    run_options o;
    o.machine = "skylake-18c";
    o.time_limit_s = 10;
    o.html_path = ::testing::TempDir() + "/never.html";
    o.workload_argv = {"perf", "bench", "sched", "pipe", "-l", "200"};
    for (const char* w : {"1", "0.2,0.1", "0,11", "a,b", "-1,2", "0,nan", "0,1,2"}) {
        o.timeline_window = w;
        std::ostringstream out, err;
        EXPECT_THAT(error_of([&] { cmd_run(out, err, o); }), HasSubstr("--timeline-window")) << w;
        EXPECT_EQ(out.str(), "") << w;
    }
}

/* ---- fidelity ---- */

TEST(cmd_fidelity, scores_a_tiny_compare_against_the_published_tables)
{
    const std::string json = ::testing::TempDir() + "/fid-results.json";
    const std::string out_json = ::testing::TempDir() + "/fid-score.json";
    compare_options c = small_compare_jobs(2, json);
    c.spec.arms = {"tip-2023-08", "tip-2023-08+shared_runq_v3"};
    c.spec.runs = 1;
    std::ostringstream cout_, cerr_;
    ASSERT_EQ(cmd_compare(cout_, cerr_, c), 0) << cerr_.str();

    fidelity_options o;
    o.files = {json};
    o.json_path = out_json;
    std::ostringstream out, err;
    EXPECT_EQ(cmd_fidelity(out, err, o), 0);
    const std::string s = out.str();
    EXPECT_THAT(s, HasSubstr("Test          : hackbench (hackbench.csv)\n"));
    EXPECT_THAT(s, HasSubstr("ran on skylake-18c; the published figures are from bergamo-2s"));
    EXPECT_THAT(s, ::testing::ContainsRegex(" 1-groups ours +1.00 \\[ -0.00\\]"));
    EXPECT_THAT(s, HasSubstr(" 4-groups ours                not run"));
    EXPECT_THAT(s, HasSubstr("Test          : tbench (tbench.csv)\nOurs          : not run"));
    EXPECT_THAT(s, ::testing::ContainsRegex("overall +sign agreement: [01] of 1 rows"));
    EXPECT_THAT(slurp(out_json), HasSubstr("\"format\": \"schedlab-fidelity-v1\""));

    o.threshold = 50; // nothing published changed hackbench by 50 %
    std::ostringstream none;
    EXPECT_EQ(cmd_fidelity(none, err, o), 0);
    EXPECT_THAT(none.str(), HasSubstr("overall               sign agreement: 0 of 0 rows (-)"));

    o.reference_dir = ::testing::TempDir() + "/no-such-reference";
    EXPECT_THROW(cmd_fidelity(none, err, o), config_error);
    std::remove(json.c_str());
    std::remove(out_json.c_str());
}

/* ---- the binary: exit codes and messages ---- */

test_support::bin_result run_bin(const std::string& args)
{
    return test_support::schedlab_bin(args);
}

TEST(schedlab_binary, unknown_flag_exits_2_naming_the_flag)
{
    const auto r = run_bin("run --bogus -- perf bench sched pipe");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("--bogus"));
}

TEST(schedlab_binary, unknown_preset_exits_2_with_a_hint)
{
    const auto r = run_bin("run --machine milan-s2 -- perf bench sched pipe -l 10");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("milan-s2"));
    EXPECT_THAT(r.output, HasSubstr("milan-2s"));
}

TEST(schedlab_binary, unknown_feature_exits_2_naming_it)
{
    const auto r = run_bin("run --machine skylake-18c --features NO_RUN_TO_PARTY -- perf bench "
                           "sched pipe -l 10");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("--features: unknown sched feature 'NO_RUN_TO_PARTY'"));
}

TEST(schedlab_binary, unknown_kernel_exits_2)
{
    const auto r = run_bin("run --kernel 9.9 -- perf bench sched pipe -l 10");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("unknown kernel profile '9.9'"));
}

TEST(schedlab_binary, malformed_machine_file_exits_2_naming_the_file)
{
    const std::string path = ::testing::TempDir() + "/bad-machine.json";
    std::ofstream(path) << "{ \"format\": \"schedlab-machine-v1\", \"generate\": { \"sockets\": 2,\n"
                           "  \"cores_per_socket\": }\n}\n";
    const auto r = run_bin("topology " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("bad-machine.json"));
}

TEST(schedlab_binary, unknown_benchmark_exits_2)
{
    const auto r = run_bin("run --machine skylake-18c -- nosuchbench -x");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("nosuchbench"));
}

TEST(schedlab_binary, compare_and_report_exit_codes)
{
    auto r = run_bin("compare --machine skylake-18c --kernel 6.6 --kernel 9.9 -- perf bench sched "
                     "messaging -g 1");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("unknown kernel profile '9.9'"));
    r = run_bin("compare --machine skylake-18c --kernel 6.6 --runs 2 -- perf bench sched messaging "
                "-g 2,2");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("load 2 appears twice"));
    r = run_bin("report /nonexistent/results.json");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("/nonexistent/results.json"));
    r = run_bin("compare --machine skylake-18c --kernel 6.6 --runs 1 --jobs 2 --check sampled "
                "--format mmtests -- perf bench sched messaging -g 1 -l 3");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("hackbench-process-sockets"));
}

TEST(schedlab_binary, store_commands_exit_2_naming_the_input)
{
    auto r = run_bin("sweep /nonexistent/spec.toml --store /tmp/x.sqlite");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("/nonexistent/spec.toml: cannot open the sweep spec"));
    const std::string spec = ::testing::TempDir() + "/bad-spec.toml";
    std::ofstream(spec) << "machines = [\"skylake-18c\"]\nkernels = [\"6.6\"]\nrunz = 2\n";
    r = run_bin("sweep " + spec);
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("bad-spec.toml:3: 'runz': unknown key (did you mean 'runs'?)"));
    r = run_bin("sweep " + spec + " --shard 3/2");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("--shard: shard 3 of 2"));
    const std::string text = ::testing::TempDir() + "/not-a-store.txt";
    std::ofstream(text) << "just text\n";
    r = run_bin("store merge " + ::testing::TempDir() + "/merged.sqlite " + text);
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("not-a-store.txt"));
    r = run_bin("store list /nonexistent/store.sqlite");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("/nonexistent/store.sqlite: no such store"));
    r = run_bin("export --format xml");
    EXPECT_EQ(r.status, 2);
    r = run_bin("compare --machine skylake-18c --kernel 6.6 --store a.sqlite --no-store -- perf "
                "bench sched pipe");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("excludes"));
}

TEST(schedlab_binary, fidelity_bad_input_exits_2_naming_the_file)
{
    auto r = run_bin("fidelity /nonexistent/results.json");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("/nonexistent/results.json: cannot open the result file"));

    const std::string wrong = ::testing::TempDir() + "/fid-wrong.json";
    std::ofstream(wrong) << "{\"format\": \"something-else\"}\n";
    r = run_bin("fidelity " + wrong);
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("fid-wrong.json"));

    // a malformed published table: file and line
    const std::string ref = ::testing::TempDir() + "/fid-ref";
    std::filesystem::remove_all(ref);
    std::filesystem::create_directory(ref);
    for (const auto& e : std::filesystem::directory_iterator(
             SCHEDLAB_REFERENCE_DIR "/shared-runq-v3-bergamo-2s"))
        std::ofstream(ref + "/" + e.path().filename().string()) << slurp(e.path().string());
    std::ofstream(ref + "/netperf.csv", std::ios::app) << "1024-clients,1.00,0.00\n";
    r = run_bin("fidelity --reference " + ref + " " + wrong);
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("netperf.csv:12: expected 13 fields, found 3"));
    std::filesystem::remove_all(ref);
    std::remove(wrong.c_str());
}

TEST(schedlab_binary, a_run_prints_the_benchmark_result)
{
    const auto r = run_bin("run --machine skylake-18c --kernel 6.5 --seed 3 -- perf bench sched "
                           "pipe -l 2000");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("usecs/op"));
    EXPECT_THAT(r.output, Not(HasSubstr("warning")));
}

} // namespace
} // namespace schedlab
