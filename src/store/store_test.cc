// SPDX-License-Identifier: GPL-2.0-only
#include "store/store.h"

#include "experiment/plan.h"
#include "sim/config_error.h"
#include "sim/scratch_dir_test_support.h"
#include "store/execute.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

run_result fake_run(const std::string& arm, const std::string& load, u64 seed, double value)
{
    run_result r;
    run_provenance& p = r.provenance;
    p.schedlab_version = "0.1.0";
    p.git_sha = "abc";
    p.machine = "skylake-18c";
    p.machine_spec = "skylake-18c";
    p.nr_cpus = 36;
    p.kernel_spec = arm;
    p.kernel_base = "6.6";
    p.policy = "EEVDF";
    p.features = "PLACE_LAG";
    p.costs = {{"context_switch", 1500}};
    p.seed = seed;
    p.argv = {"perf", "bench", "sched", "messaging", "-g", load};
    p.command_line = "perf bench sched messaging -g " + load;
    p.time_limit_s = 600;
    r.arm = arm;
    r.load = load;
    r.run_index = static_cast<int>(seed - 1);
    r.finished = true;
    r.metrics = {{"time", "s", value, false}, {"other", "x", 2 * value, true}};
    r.summary.switches = 7;
    r.summary.busy_ns = {1, 2, 3};
    r.schedule_digest = 0x1234 + seed;
    r.events_fired = 99;
    r.schedstat = std::vector<schedstat_counter>{{"MC", "idle", "lb_count", 5}};
    r.benchmark_output = "Total time: 1.000 [sec]\n";
    r.summary_text = "# summary\n";
    return r;
}

stored_experiment experiment_of(const std::vector<std::pair<std::string, run_result>>& runs)
{
    stored_experiment e;
    e.kind = "compare";
    e.name = "hackbench on skylake-18c";
    e.machine = "skylake-18c";
    e.info.command = "schedlab compare ...";
    e.info.arms = {"6.6", "6.5"};
    e.info.loads = {"1"};
    e.info.load_option = "-g";
    e.info.runs = 2;
    e.info.seed = 1;
    for (const auto& [key, r] : runs)
        e.runs.push_back({key, r.arm, r.load, r.run_index});
    return e;
}

TEST(results_store, keeps_runs_by_key_and_reads_them_back_whole_or_for_tables)
{
    const test_support::scratch_files files;
    const std::string path = files.path("roundtrip.sqlite");
    std::vector<std::pair<std::string, run_result>> runs;
    for (const char* arm : {"6.6", "6.5"})
        for (u64 seed : {1, 2})
            runs.emplace_back(sha256_hex(fmt::format("{}/{}", arm, seed)),
                              fake_run(arm, "1", seed, 1.0 + static_cast<double>(seed)));
    runs[1].second.metrics[0].value = std::nan("");
    {
        results_store s(path, true);
        EXPECT_EQ(s.run_count(), 0u);
        for (const auto& [key, r] : runs)
            EXPECT_TRUE(s.put(key, r));
        EXPECT_FALSE(s.put(runs[0].first, runs[0].second)); // already stored: kept
        EXPECT_EQ(s.contains({runs[0].first, "nosuchkey"}), (std::vector<bool>{true, false}));
        EXPECT_EQ(s.record_experiment(experiment_of(runs)), 1);
        EXPECT_EQ(s.record_experiment(experiment_of(runs)), 1); // the same one again
    }
    results_store s(path, false); // reopened
    EXPECT_EQ(s.run_count(), 4u);
    const auto exps = s.experiments();
    ASSERT_EQ(exps.size(), 1u);
    EXPECT_EQ(exps[0].info.arms, (std::vector<std::string>{"6.6", "6.5"}));
    EXPECT_EQ(exps[0].info.command, "schedlab compare ...");
    ASSERT_EQ(exps[0].runs.size(), 4u);

    const auto full = s.load(exps[0], store_detail::full);
    ASSERT_EQ(full.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        run_result want = runs[i].second;
        EXPECT_EQ(to_json(full[i]).dump(), to_json(want).dump()) << i;
    }
    const auto light = s.load(exps[0], store_detail::tables);
    ASSERT_EQ(light.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        const run_result& want = runs[i].second;
        EXPECT_EQ(light[i].arm, want.arm);
        EXPECT_EQ(light[i].provenance.argv, want.provenance.argv);
        EXPECT_EQ(light[i].provenance.seed, want.provenance.seed);
        EXPECT_EQ(light[i].schedule_digest, want.schedule_digest);
        ASSERT_EQ(light[i].metrics.size(), 2u);
        EXPECT_EQ(light[i].metrics[1].name, "other");
        EXPECT_TRUE(light[i].metrics[1].higher_is_better);
    }
    EXPECT_TRUE(std::isnan(light[1].metrics[0].value)); // NaN survives (as NULL)
    // each arm's first run carries the whole provenance
    EXPECT_EQ(light[0].provenance.costs, runs[0].second.provenance.costs);
    EXPECT_EQ(light[2].provenance.costs, runs[2].second.provenance.costs);
    EXPECT_TRUE(light[1].provenance.costs.empty());
}

TEST(results_store, a_second_schedule_under_one_key_is_a_determinism_bug)
{
    const test_support::scratch_files files;
    const std::string path = files.path("conflict.sqlite");
    results_store s(path, true);
    run_result r = fake_run("6.6", "1", 1, 1.0);
    s.put("k", r);
    r.schedule_digest ^= 1;
    try {
        s.put("k", r);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("determinism bug"));
    }
}

// Two sweeps or compares started together on a new store: each opens it, sees no schema and
// creates one; exactly one may, and the others must find it made (not fail with "table runs
// already exists"). Several rounds, four openers each, so the window between the check and
// the write lock is hit.
TEST(results_store, openers_racing_to_create_a_new_store_all_succeed)
{
    const test_support::scratch_files files;
    for (int round = 0; round < 20; ++round) {
        const std::string path = files.path("race-" + std::to_string(round) + ".sqlite");
        std::vector<std::string> errors(4);
        std::vector<std::thread> openers;
        for (std::size_t i = 0; i < errors.size(); ++i)
            openers.emplace_back([&, i] {
                try {
                    results_store s(path, true, "--store");
                } catch (const std::exception& e) {
                    errors[i] = e.what();
                }
            });
        for (auto& t : openers)
            t.join();
        for (const std::string& e : errors)
            EXPECT_EQ(e, "") << "round " << round;
        EXPECT_TRUE(looks_like_store(path));
    }
}

TEST(results_store, refuses_files_that_are_not_stores_naming_them)
{
    const test_support::scratch_files files;
    const std::string text = files.path("text.sqlite");
    std::ofstream(text) << "hello, not a database at all, long enough to be read\n";
    try {
        results_store s(text, false, "--store");
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("--store " + text));
        EXPECT_THAT(e.what(), HasSubstr("not an SQLite database"));
    }
    EXPECT_FALSE(looks_like_store(text));

    const std::string other = files.path("other.sqlite");
    sqlite3* db = nullptr;
    sqlite3_open(other.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    EXPECT_TRUE(looks_like_store(other));
    try {
        results_store s(other, true);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("not a schedlab store"));
    }

    const std::string newer = files.path("newer.sqlite");
    {
        results_store s(newer, true);
    }
    sqlite3_open(newer.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    try {
        results_store s(newer, false);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("store schema 99 is newer"));
    }
    try {
        results_store s(files.path("missing.sqlite"), false);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("no such store"));
    }
}

TEST(results_store, merge_adds_what_is_missing_once_and_refuses_conflicts)
{
    const test_support::scratch_files files;
    const std::string a = files.path("merge-a.sqlite"), b = files.path("merge-b.sqlite");
    std::vector<std::pair<std::string, run_result>> runs;
    for (u64 seed : {1, 2, 3})
        runs.emplace_back(fmt::format("key{}", seed), fake_run("6.6", "1", seed, 1.0));
    {
        results_store sa(a, true), sb(b, true);
        sa.put(runs[0].first, runs[0].second);
        sa.put(runs[1].first, runs[1].second);
        sb.put(runs[1].first, runs[1].second);
        sb.put(runs[2].first, runs[2].second);
        sb.record_experiment(experiment_of(runs));
    }
    results_store sa(a, false);
    const merge_stats st = sa.merge_from(b);
    EXPECT_EQ(st.runs_added, 1u);
    EXPECT_EQ(st.runs_present, 1u);
    EXPECT_EQ(st.experiments_added, 1u);
    EXPECT_EQ(sa.run_count(), 3u);
    const merge_stats again = sa.merge_from(b);
    EXPECT_EQ(again.runs_added, 0u);
    EXPECT_EQ(again.experiments_added, 0u);
    ASSERT_EQ(sa.experiments().size(), 1u);
    EXPECT_EQ(sa.load(sa.experiments()[0], store_detail::full).size(), 3u);

    const std::string c = files.path("merge-c.sqlite");
    {
        results_store sc(c, true);
        run_result other = runs[0].second;
        other.schedule_digest = 42;
        sc.put(runs[0].first, other);
    }
    try {
        sa.merge_from(c);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("determinism bug"));
    }
    EXPECT_EQ(sa.run_count(), 3u); // nothing of the refused merge
}

TEST(default_store_path, follows_schedlab_store_then_xdg_then_home)
{
    const char* old_store = std::getenv("SCHEDLAB_STORE");
    const char* old_xdg = std::getenv("XDG_DATA_HOME");
    const std::string saved_store = old_store ? old_store : "", saved_xdg = old_xdg ? old_xdg : "";
    setenv("SCHEDLAB_STORE", "/x/s.sqlite", 1);
    EXPECT_EQ(default_store_path(), "/x/s.sqlite");
    unsetenv("SCHEDLAB_STORE");
    setenv("XDG_DATA_HOME", "/data", 1);
    EXPECT_EQ(default_store_path(), "/data/schedlab/results.sqlite");
    setenv("XDG_DATA_HOME", "relative", 1); // invalid per the XDG spec: ignored
    setenv("HOME", "/home/u", 1);
    EXPECT_EQ(default_store_path(), "/home/u/.local/share/schedlab/results.sqlite");
    if (old_store)
        setenv("SCHEDLAB_STORE", saved_store.c_str(), 1);
    if (old_xdg)
        setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
    else
        unsetenv("XDG_DATA_HOME");
}

TEST(plan_keys, differ_by_every_input_that_changes_a_run_and_only_by_those)
{
    compare_spec c;
    c.machine = "skylake-18c";
    c.arms = {"6.6", "6.6+NO_RUN_TO_PARITY"};
    c.runs = 2;
    c.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1,2", "-l", "5"};
    const compare_plan p = plan_compare(c);
    const std::vector<std::string> keys = plan_keys(p.runs);
    ASSERT_EQ(keys.size(), 8u);
    for (std::size_t i = 0; i < keys.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            EXPECT_NE(keys[i], keys[j]) << i << " " << j;
    EXPECT_EQ(plan_keys(p.runs), keys); // stable

    // --check observes without changing a run: same key; a cost override changes it
    std::vector<run_spec> one = {p.runs[0]};
    one[0].check = "every";
    EXPECT_EQ(plan_keys(one)[0], keys[0]);
    one[0].costs = {"wakeup=900"};
    EXPECT_NE(plan_keys(one)[0], keys[0]);
}

// A replay's key names its trace by content: the same file at two paths is one run, a file
// edited in place a new one (its old results are not reused).
TEST(plan_keys, name_a_replayed_trace_by_its_content_not_its_path)
{
    const test_support::scratch_files files;
    const std::string traces = std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/";
    const std::string a = files.path("trace-a.txt.xz"), b = files.path("trace-b.txt.xz");
    const auto copy = [](const std::string& from, const std::string& to) {
        std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
    };
    copy(traces + "schbench_m1_t2_r3.trace.txt.xz", a);
    copy(traces + "schbench_m1_t2_r3.trace.txt.xz", b);
    const auto key = [](const std::string& path) {
        run_spec r;
        r.machine = "skylake-18c";
        r.kernel = "6.18";
        r.workload_argv = {"replay", path, "--comm", "^schbench"};
        return plan_keys({r})[0];
    };
    const std::string key_a = key(a);
    EXPECT_EQ(key(b), key_a); // the same trace at another path

    // Edited in place: the messaging trace, whose tasks are selected by another --comm.
    copy(traces + "perf_messaging_g4_pipe_l100.trace.txt.xz", a);
    run_spec r;
    r.machine = "skylake-18c";
    r.kernel = "6.18";
    r.workload_argv = {"replay", a, "--comm", "^schbench"};
    EXPECT_THROW(plan_keys({r}), config_error); // no schbench task in it any more
    r.workload_argv = {"replay", a};
    const std::string edited = plan_keys({r})[0];
    copy(traces + "schbench_m1_t2_r3.trace.txt.xz", a);
    EXPECT_NE(plan_keys({r})[0], edited);
    EXPECT_EQ(key(a), key_a); // back to its first content: its first key
    std::filesystem::remove(a);
    std::filesystem::remove(b);
}

TEST(parse_shard, takes_i_of_n_from_one_and_names_the_flag)
{
    const shard s = parse_shard("2/3");
    EXPECT_EQ(s.index, 1u);
    EXPECT_EQ(s.count, 3u);
    EXPECT_FALSE(s.contains(0));
    EXPECT_TRUE(s.contains(1));
    EXPECT_TRUE(s.contains(4));
    for (const char* bad : {"0/3", "4/3", "1/0", "x/2", "1/", "/2", "1/2/3", "-1/2", ""}) {
        try {
            parse_shard(bad);
            FAIL() << bad;
        } catch (const config_error& e) {
            EXPECT_THAT(e.what(), HasSubstr("--shard")) << bad;
        }
    }
}

} // namespace
} // namespace schedlab
