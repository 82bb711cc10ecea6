// SPDX-License-Identifier: GPL-2.0-only
/*
 * The results store through the commands: compare --store resuming and
 * skipping, sweep specs, report / export / fidelity from a store, shards and
 * merge, and the binary interrupted mid-sweep (SIGKILL, SIGINT) then resumed.
 */
#include "cli/commands.h"

#include "sim/config_error.h"
#include "sim/scratch_dir_test_support.h"
#include "sim/test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using test_support::slurp;
using ::testing::Not;

compare_options small_compare_stored(const std::string& store, int runs = 2)
{
    compare_options o;
    o.spec.machine = "skylake-18c";
    o.spec.arms = {"6.6", "6.6+NO_RUN_TO_PARITY"};
    o.spec.runs = runs;
    o.spec.seed = 3;
    o.spec.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1,2", "-l", "5"};
    o.spec.check = "sampled";
    o.jobs = 2;
    o.store_path = store;
    o.tables.format = "amd";
    return o;
}

TEST(compare_store, keeps_every_run_and_runs_only_what_is_missing)
{
    const test_support::scratch_files files;
    const std::string store = files.path("compare.sqlite");
    std::ostringstream out1, err1, out2, err2, out3, err3, mem, memerr;
    ASSERT_EQ(cmd_compare(out1, err1, small_compare_stored(store)), 0) << err1.str();
    ASSERT_EQ(cmd_compare(out2, err2, small_compare_stored(store)), 0) << err2.str();
    EXPECT_EQ(out1.str(), out2.str()); // tables from the store are the same
    EXPECT_THAT(err2.str(), HasSubstr("8 runs planned; 8 already in " + store + ", 0 to run"));
    ASSERT_EQ(cmd_compare(mem, memerr, small_compare_stored("")), 0); // no store: the same tables
    EXPECT_EQ(out1.str(), mem.str());
    // one more run per arm and load: only the 4 new seeds run
    ASSERT_EQ(cmd_compare(out3, err3, small_compare_stored(store, 3)), 0) << err3.str();
    EXPECT_THAT(err3.str(), HasSubstr("12 runs planned; 8 already in"));
    EXPECT_THAT(err3.str(), HasSubstr("4 to run"));
    results_store s(store, false);
    EXPECT_EQ(s.run_count(), 12u);
    EXPECT_EQ(s.experiments().size(), 2u); // the 2-run and the 3-run compares

    // report from the store prints both experiments; --experiment picks one
    report_options r;
    r.files = {store};
    r.tables.format = "amd";
    std::ostringstream rep, rerr;
    ASSERT_EQ(cmd_report(rep, rerr, r), 0);
    EXPECT_THAT(rep.str(), HasSubstr("## experiment 1 perf bench sched messaging -l 5 on "
                                     "skylake-18c: 8 of 8 runs stored"));
    r.experiments = {"2"};
    std::ostringstream one;
    ASSERT_EQ(cmd_report(one, rerr, r), 0);
    EXPECT_EQ(one.str(), out3.str()); // one experiment: exactly compare's tables
    r.experiments = {"nosuch*"};
    EXPECT_THROW(cmd_report(one, rerr, r), config_error);
}

const char* const spec_text = R"(name = "t"
machines = ["skylake-18c"]
kernels = ["6.6", "6.5"]
runs = 2
seed = 1
check = "sampled"

[[benchmarks]]
command = "perf bench sched messaging -l 5"
loads = [1, 2]

[[benchmarks]]
name = "pipe"
command = "perf bench sched pipe -l 200"
)";

std::string write_spec(const test_support::scratch_files& files, const std::string& name,
                       const std::string& text = spec_text)
{
    return files.write(name, text);
}

/// Sweeps `spec` into `store` on 2 jobs; returns what it printed on stdout.
std::string sweep_into(const std::string& spec, const std::string& store)
{
    sweep_options o;
    o.spec_path = spec;
    o.store_path = store;
    o.jobs = 2;
    std::ostringstream out, err;
    EXPECT_EQ(cmd_sweep(out, err, o), 0) << err.str();
    return out.str();
}

std::string export_json(const std::string& store)
{
    export_options e;
    e.files = {store};
    e.format = "json";
    std::ostringstream out, err;
    EXPECT_EQ(cmd_export(out, err, e), 0);
    return out.str();
}

TEST(sweep, tables_are_compares_and_shards_merge_into_the_whole)
{
    const test_support::scratch_files files;
    const std::string spec = write_spec(files, "sweep.toml");
    const std::string whole = files.path("sweep-whole.sqlite");
    EXPECT_THAT(sweep_into(spec, whole),
                HasSubstr("sweep t: 2 experiments, 12 of 12 runs stored in " + whole));
    sweep_options o;
    o.spec_path = spec;
    o.jobs = 2;

    // the hackbench experiment's tables are those of the same compare
    compare_options c = small_compare_stored("", 2);
    c.spec.arms = {"6.6", "6.5"};
    c.spec.seed = 1;
    std::ostringstream cmp, cerr_;
    ASSERT_EQ(cmd_compare(cmp, cerr_, c), 0);
    report_options r;
    r.files = {whole};
    r.experiments = {"t/*/hackbench"};
    r.tables.format = "amd";
    std::ostringstream rep, rerr;
    ASSERT_EQ(cmd_report(rep, rerr, r), 0);
    EXPECT_EQ(rep.str(), cmp.str());

    // shards 1/2 and 2/2 into two stores, merged: the same store as the whole sweep
    const std::string a = files.path("sweep-a.sqlite"), b = files.path("sweep-b.sqlite"),
                      merged = files.path("sweep-merged.sqlite");
    for (const auto& [shard, store] : {std::pair{"1/2", a}, std::pair{"2/2", b}}) {
        sweep_options so = o;
        so.shard = shard;
        so.store_path = store;
        std::ostringstream sout, serr;
        ASSERT_EQ(cmd_sweep(sout, serr, so), 0) << serr.str();
        EXPECT_THAT(serr.str(), HasSubstr(std::string("(shard ") + shard[0] + " of 2: 6 runs)"));
        EXPECT_THAT(sout.str(), HasSubstr("6 of 12 runs stored"));
    }
    std::ostringstream mout;
    ASSERT_EQ(cmd_store_merge(mout, merged, {a, b}), 0);
    EXPECT_THAT(mout.str(), HasSubstr(merged + ": 12 runs, 2 experiments"));
    EXPECT_EQ(export_json(merged), export_json(whole));

    // a dry run says what is stored and what would run
    sweep_options dry = o;
    dry.store_path = a;
    dry.dry_run = true;
    std::ostringstream dout, derr;
    ASSERT_EQ(cmd_sweep(dout, derr, dry), 0);
    EXPECT_THAT(dout.str(), ::testing::ContainsRegex("t/skylake-18c/hackbench +8 +4 +4"));
    EXPECT_THAT(dout.str(), ::testing::ContainsRegex("total +12 +6 +6"));
}

TEST(export_, csv_has_one_row_per_run_and_metric_and_json_every_run)
{
    const test_support::scratch_files files;
    const std::string store = files.path("export.sqlite");
    std::ostringstream out, err;
    ASSERT_EQ(cmd_compare(out, err, small_compare_stored(store)), 0);
    export_options e;
    e.files = {store};
    const std::string csv_path = files.path("export.csv");
    e.output = csv_path;
    ASSERT_EQ(cmd_export(out, err, e), 0);
    const std::string csv = slurp(csv_path);
    std::istringstream lines(csv);
    std::string header, line;
    std::getline(lines, header);
    EXPECT_EQ(header, "experiment,arm,load,run_index,seed,machine,nr_cpus,kernel_spec,features_arg,"
                      "benchmark,finished,metric,unit,value,higher_is_better,schedule_digest,key");
    int rows = 0;
    while (std::getline(lines, line))
        ++rows;
    EXPECT_EQ(rows, 8); // 8 runs x 1 metric (time)
    EXPECT_THAT(csv, HasSubstr("experiment 1 perf bench sched messaging -l 5 on skylake-18c,"
                               "6.6+NO_RUN_TO_PARITY,2,1,4,skylake-18c,36,6.6+NO_RUN_TO_PARITY,,"
                               "perf bench sched messaging -l 5,1,time,s,"));

    e.schedstat = true;
    e.output = "";
    std::ostringstream ss;
    ASSERT_EQ(cmd_export(ss, err, e), 0);
    EXPECT_THAT(ss.str(), HasSubstr(",MC,newly_idle,lb_count,"));

    e.schedstat = false;
    e.format = "json";
    std::ostringstream js;
    ASSERT_EQ(cmd_export(js, err, e), 0);
    const auto j = nlohmann::json::parse(js.str());
    EXPECT_EQ(j["format"], "schedlab-export-v1");
    ASSERT_EQ(j["experiments"].size(), 1u);
    EXPECT_EQ(j["experiments"][0]["runs"].size(), 8u);
    EXPECT_EQ(j["experiments"][0]["runs"][0]["key"].get<std::string>().size(), 64u);

    e.format = "xml";
    EXPECT_THROW(cmd_export(js, err, e), config_error);
}

TEST(fidelity_, scores_from_a_store_as_from_the_json_file)
{
    const test_support::scratch_files files;
    const std::string store = files.path("fidelity.sqlite");
    const std::string json = files.path("fidelity.json");
    compare_options c = small_compare_stored(store);
    c.spec.machine = "ryzen-7950x";
    c.spec.arms = {"tip-2023-08", "tip-2023-08+shared_runq_v3"};
    c.spec.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "5"};
    c.spec.runs = 1;
    c.json_path = json;
    std::ostringstream out, err;
    ASSERT_EQ(cmd_compare(out, err, c), 0) << err.str();
    fidelity_options f;
    f.files = {json};
    std::ostringstream from_json, from_store;
    ASSERT_EQ(cmd_fidelity(from_json, err, f), 0);
    f.files = {store};
    ASSERT_EQ(cmd_fidelity(from_store, err, f), 0);
    auto strip = [](std::string s) { // the input's name differs; everything else is the same
        std::string o;
        std::istringstream in(s);
        for (std::string l; std::getline(in, l);)
            if (l.find("fidelity.json") == std::string::npos &&
                l.find("experiment 1") == std::string::npos)
                o += l + "\n";
        return o;
    };
    EXPECT_THAT(from_store.str(), HasSubstr("sign agreement"));
    EXPECT_EQ(strip(from_store.str()), strip(from_json.str()));
}

/* ---- the binary: interrupted mid-sweep, then resumed ---- */

struct child {
    pid_t pid;
    std::string err_path;
};

/// Starts `schedlab ARGS...` with its stderr in the file `err_path` (stdout discarded).
child start_schedlab(const std::vector<std::string>& args, const std::string& err_path)
{
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(SCHEDLAB_BIN));
    for (const std::string& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        std::freopen(err_path.c_str(), "w", stderr);
        std::freopen("/dev/null", "w", stdout);
        execv(SCHEDLAB_BIN, argv.data());
        _exit(127);
    }
    return {pid, err_path};
}

child start_sweep(const std::string& spec, const std::string& store, const std::string& err_path)
{
    return start_schedlab({"sweep", spec, "--store", store, "--jobs", "2"}, err_path);
}

/// Waits until the store holds at least `n` runs (or `limit` passes); returns how many it holds.
std::size_t wait_for_runs(const std::string& store, std::size_t n, std::chrono::seconds limit)
{
    const auto end = std::chrono::steady_clock::now() + limit;
    std::size_t have = 0;
    while (std::chrono::steady_clock::now() < end) {
        if (std::filesystem::exists(store)) {
            try {
                results_store s(store, false);
                have = s.run_count();
            } catch (const config_error&) {
                have = 0; // being created
            }
            if (have >= n)
                break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return have;
}

const char* const long_spec = R"(name = "kill"
machines = ["skylake-18c"]
kernels = ["6.6", "6.5"]
runs = 10
check = "sampled"

[[benchmarks]]
command = "perf bench sched messaging -l 40"
loads = [1, 2]
)";

TEST(sweep_binary, killed_mid_way_then_resumed_loses_and_duplicates_nothing)
{
    const test_support::scratch_files files;
    const std::string spec = write_spec(files, "kill.toml", long_spec); // 40 runs
    const std::string reference = files.path("kill-ref.sqlite"), store = files.path("kill.sqlite");
    sweep_into(spec, reference);
    // SIGKILL: nothing runs at exit, a write may be cut off mid-transaction
    child c = start_sweep(spec, store, files.path("kill.stderr"));
    const std::size_t before = wait_for_runs(store, 3, std::chrono::seconds(120));
    kill(c.pid, SIGKILL);
    int status = 0;
    waitpid(c.pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    std::size_t killed_with = 0;
    {
        results_store s(store, false);
        killed_with = s.run_count();
    }
    EXPECT_GE(killed_with, before);
    EXPECT_LT(killed_with, 40u) << "the sweep finished before it was killed";

    // SIGINT: a clean stop that says how to resume
    c = start_sweep(spec, store, files.path("int.stderr"));
    wait_for_runs(store, killed_with + 2, std::chrono::seconds(120));
    kill(c.pid, SIGINT);
    waitpid(c.pid, &status, 0);
    const std::string said = slurp(c.err_path);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        GTEST_SKIP() << "the sweep finished before SIGINT reached it";
    }
    ASSERT_TRUE(WIFEXITED(status)) << said;
    EXPECT_EQ(WEXITSTATUS(status), 130) << said;
    EXPECT_THAT(said, HasSubstr("interrupted (SIGINT)"));
    EXPECT_THAT(said, HasSubstr("The same command runs only the"));
    EXPECT_THAT(said, HasSubstr(std::to_string(killed_with) + " already in"));

    // resumed: finishes only what is missing, and ends equal to the uninterrupted sweep
    EXPECT_THAT(sweep_into(spec, store), HasSubstr("40 of 40 runs stored"));
    EXPECT_EQ(export_json(store), export_json(reference));
    results_store s(store, false);
    EXPECT_EQ(s.run_count(), 40u);
    EXPECT_EQ(s.experiments().size(), 1u);
}

TEST(compare_binary, sigterm_keeps_the_finished_runs_and_the_same_command_finishes)
{
    const test_support::scratch_files files;
    const std::string store = files.path("term.sqlite");
    const std::vector<std::string> args = {
        "compare", "--machine", "skylake-18c", "--kernel", "6.6",  "--kernel",
        "6.5",     "--runs",    "5",           "--jobs",   "2",    "--store",
        store,     "--format",  "amd",         "--",       "perf", "bench",
        "sched",   "messaging", "-g",          "1,2",      "-l",   "40"}; // 20 runs
    child c = start_schedlab(args, files.path("term.stderr"));
    wait_for_runs(store, 3, std::chrono::seconds(120));
    kill(c.pid, SIGTERM);
    int status = 0;
    waitpid(c.pid, &status, 0);
    const std::string said = slurp(c.err_path);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        GTEST_SKIP() << "the compare finished before SIGTERM reached it";
    ASSERT_TRUE(WIFEXITED(status)) << said;
    EXPECT_EQ(WEXITSTATUS(status), 143) << said;
    EXPECT_THAT(said, HasSubstr("interrupted (SIGTERM)"));
    EXPECT_THAT(said, HasSubstr("The same command runs only the"));
    std::size_t kept = 0;
    {
        results_store s(store, false);
        kept = s.run_count();
    }
    EXPECT_GE(kept, 3u);
    EXPECT_LT(kept, 20u);

    // the same command: runs only the rest, and prints what a compare without a store prints
    compare_options o;
    o.spec.machine = "skylake-18c";
    o.spec.arms = {"6.6", "6.5"};
    o.spec.runs = 5;
    o.spec.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1,2", "-l", "40"};
    o.jobs = 2;
    o.tables.format = "amd";
    o.store_path = store;
    std::ostringstream resumed, rerr, plain, perr;
    ASSERT_EQ(cmd_compare(resumed, rerr, o), 0) << rerr.str();
    EXPECT_THAT(rerr.str(), HasSubstr(fmt::format("20 runs planned; {} already in", kept)));
    o.store_path = "";
    ASSERT_EQ(cmd_compare(plain, perr, o), 0);
    EXPECT_EQ(resumed.str(), plain.str());
}

} // namespace
} // namespace schedlab
