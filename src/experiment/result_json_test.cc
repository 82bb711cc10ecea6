// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/result_json.h"

#include "sim/config_error.h"
#include "sim/test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ordered_json = nlohmann::ordered_json;

run_spec small_run(u64 seed)
{
    run_spec s;
    s.machine = "skylake-18c";
    s.kernel = "6.6+NO_RUN_TO_PARITY";
    s.seed = seed;
    s.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "5"};
    s.check = "sampled";
    s.arm = "6.6+NO_RUN_TO_PARITY";
    s.load = "1";
    s.run_index = 2;
    return s;
}

TEST(run_result, carries_provenance_metrics_and_the_summary)
{
    const run_result r = execute_run(small_run(3));
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.provenance.machine, "skylake-18c");
    EXPECT_EQ(r.provenance.kernel_base, "6.6");
    EXPECT_EQ(r.provenance.feature_delta, "NO_RUN_TO_PARITY");
    EXPECT_THAT(r.provenance.features, HasSubstr("NO_RUN_TO_PARITY"));
    EXPECT_EQ(r.provenance.seed, 3u);
    EXPECT_FALSE(r.provenance.git_sha.empty());
    ASSERT_EQ(r.metrics.size(), 1u);
    EXPECT_EQ(r.metrics[0].name, "time");
    EXPECT_GT(r.metrics[0].value, 0);
    EXPECT_GT(r.summary.switches, 0u);
    EXPECT_EQ(r.summary.busy_ns.size(), static_cast<std::size_t>(r.provenance.nr_cpus));
    EXPECT_NE(r.schedule_digest, 0u);
    EXPECT_THAT(r.benchmark_output, HasSubstr("Total time:"));
    // schedstat: every level of skylake-18c (SMT, MC), bottom-up, with the newly-idle counters
    ASSERT_TRUE(r.schedstat);
    EXPECT_EQ(r.schedstat->front().domain, "SMT");
    EXPECT_EQ(r.schedstat->back().domain, "MC");
    const auto newidle = std::find_if(r.schedstat->begin(), r.schedstat->end(), [](const auto& c) {
        return c.idle_type == "newly_idle" && c.counter == "lb_count" && c.domain == "MC";
    });
    ASSERT_NE(newidle, r.schedstat->end());
}

TEST(run_result, json_round_trip_is_exact)
{
    run_result r = execute_run(small_run(5));
    r.schedstat = std::vector<schedstat_counter>{{"SMT", "newly_idle", "lb_count", 1986},
                                                 {"MC", "newly_idle", "lb_count", 1954},
                                                 {"MC", "any", "ttwu_wake_remote", 12}};
    const std::string text = to_json(r).dump(1);
    const std::vector<run_result> back = parse_results(text, "mem");
    ASSERT_EQ(back.size(), 1u);
    const run_result& b = back[0];
    EXPECT_EQ(to_json(b).dump(1), text); // every member survives, in order
    EXPECT_EQ(b.schedule_digest, r.schedule_digest);
    EXPECT_EQ(b.metrics[0].value, r.metrics[0].value); // doubles exactly
    EXPECT_EQ(b.provenance.costs, r.provenance.costs);
    ASSERT_TRUE(b.schedstat);
    EXPECT_EQ((*b.schedstat)[0].domain, "SMT"); // kernel order kept, not sorted
    EXPECT_EQ((*b.schedstat)[1].value, 1954);
    EXPECT_EQ(b.arm, "6.6+NO_RUN_TO_PARITY");
    EXPECT_EQ(b.run_index, 2);
}

TEST(run_result, keeps_the_wakeup_latency_and_run_length_distributions)
{
    const run_result r = execute_run(small_run(3));
    const run_sched_summary& s = r.summary;
    auto total = [](const histogram_buckets& b) {
        u64 n = 0;
        for (const auto& [lo, c] : b)
            n += c;
        return n;
    };
    EXPECT_GT(s.wakeup_latency_count, 0u);
    EXPECT_EQ(total(s.wakeup_latency_hist), s.wakeup_latency_count);
    EXPECT_GT(s.run_length_count, 0u);
    EXPECT_EQ(total(s.run_length_hist), s.run_length_count);
    EXPECT_LE(s.run_length_p50_ns, s.run_length_p99_ns);
    EXPECT_LE(s.run_length_p99_ns, s.run_length_max_ns);
    EXPECT_LE(s.run_length_hist.back().first, s.run_length_max_ns);
    // a file without them (written before they were kept) reads as empty distributions
    ordered_json j = to_json(r);
    j["sched_summary"].erase("wakeup_latency_hist");
    j["sched_summary"].erase("run_length_count");
    const run_result old = run_result_from_json(j, "old");
    EXPECT_TRUE(old.summary.wakeup_latency_hist.empty());
    EXPECT_EQ(old.summary.run_length_count, 0u);
    // malformed ones are named
    auto error = [&](const std::function<void(ordered_json&)>& edit) {
        ordered_json bad = to_json(r);
        edit(bad["sched_summary"]["run_length_hist"]);
        try {
            run_result_from_json(bad, "f.json");
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_THAT(error([](ordered_json& h) { h["sub_bits"] = 7; }),
                HasSubstr("f.json.sched_summary.run_length_hist: sub_bits 7 is not 4"));
    EXPECT_THAT(error([](ordered_json& h) { h["count"].push_back(1); }),
                HasSubstr("run_length_hist: lowest_ns has"));
    EXPECT_THAT(error([](ordered_json& h) { h["lowest_ns"][1] = 0; }),
                HasSubstr("lowest_ns[1] = 0 does not ascend"));
    EXPECT_THAT(error([](ordered_json& h) { h["count"][0] = -1; }),
                HasSubstr("member \"count\"[0] is out of range"));
}

TEST(run_result, a_collection_file_round_trips_and_a_result_without_schedstat_is_valid)
{
    run_result r = execute_run(small_run(1));
    r.schedstat.reset(); // results written before schedstat existed
    experiment_info info;
    info.arms = {"6.6+NO_RUN_TO_PARITY"};
    info.loads = {"1"};
    info.runs = 3; // small_run() is run index 2
    const std::string text = results_to_string({r, r}, info);
    EXPECT_THAT(text, HasSubstr("\"format\": \"schedlab-results-v1\""));
    const auto back = parse_results(text, "mem");
    ASSERT_EQ(back.size(), 2u);
    EXPECT_FALSE(back[1].schedstat);
    EXPECT_EQ(results_to_string(back, info), text);
}

TEST(parse_results, names_the_file_and_the_problem)
{
    auto message = [](const std::string& text) {
        try {
            parse_results(text, "res.json");
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_THAT(message("{"), HasSubstr("res.json: not valid JSON"));
    EXPECT_THAT(message("[]"), HasSubstr("res.json: not a schedlab result file"));
    EXPECT_THAT(message(R"({"format": "schedlab-result-v9"})"), HasSubstr("unknown format"));
    EXPECT_THAT(message(R"({"format": "schedlab-result-v1"})"),
                HasSubstr("missing member \"provenance\""));
    EXPECT_THAT(message(R"({"format": "schedlab-results-v1", "runs": 3})"),
                HasSubstr("\"runs\" is missing or not an array"));

    const run_result r = execute_run(small_run(1));
    auto j = to_json(r);
    j["schedule_digest"] = "xyz";
    EXPECT_THAT(message(j.dump()), HasSubstr("schedule_digest \"xyz\" is not hexadecimal"));
    j = to_json(r);
    j["provenance"]["seed"] = "seven";
    EXPECT_THAT(message(j.dump()),
                HasSubstr("res.json.provenance: member \"seed\" is not an integer (string)"));
}

// Issue 16: a number beyond a double aborted (nlohmann out_of_range 406); 1e300 as a counter
// was cast to an integer with undefined behaviour; an experiment's metadata was ignored.
TEST(parse_results, numbers_are_checked_and_the_experiment_describes_its_runs)
{
    const run_result r = execute_run(small_run(1));
    std::string one = to_json(r).dump(1);
    auto with_events = [&](const std::string& v) {
        std::string t = one;
        const auto at = t.find("\"events_fired\": ") + 16;
        t.replace(at, t.find_first_of(",\n", at) - at, v);
        return t;
    };
    auto message = [](const std::string& text) {
        return test_support::error_of([&] { parse_results(text, "res.json"); });
    };
    EXPECT_THAT(message(with_events("1e400")),
                HasSubstr("res.json: not valid JSON: [json.exception.out_of_range.406] number "
                          "overflow parsing '1e400'"));
    EXPECT_EQ(message(with_events("1e300")),
              "res.json: member \"events_fired\" is not an integer (number)");
    EXPECT_EQ(message(with_events("-1")), "res.json: member \"events_fired\" is out of range (-1)");
    EXPECT_THAT(message(std::string(100, '[') + std::string(100, ']')),
                HasSubstr("res.json:1:65: nested more than 64 levels deep"));

    experiment_info info;
    info.arms = {"6.6+NO_RUN_TO_PARITY"};
    info.loads = {"1"};
    info.runs = 3;
    EXPECT_EQ(parse_results(results_to_string({r}, info), "ok.json").size(), 1u);
    auto bad = [&](auto change) {
        experiment_info i = info;
        change(i);
        return message(results_to_string({r}, i));
    };
    EXPECT_EQ(bad([](experiment_info& i) { i.arms.clear(); }),
              "res.json: experiment: \"arms\" is empty; a comparison has at least one arm");
    EXPECT_EQ(bad([](experiment_info& i) { i.runs = -5; }),
              "res.json: experiment: \"runs\" is -5; a comparison has at least one run per arm "
              "and load");
    EXPECT_EQ(bad([](experiment_info& i) {
                  i.loads = {"2", "4"};
              }),
              "res.json: experiment: a run at load '1', which \"loads\" does not list");
    EXPECT_EQ(bad([](experiment_info& i) { i.arms = {"6.6"}; }),
              "res.json: experiment: a run of arm '6.6+NO_RUN_TO_PARITY', which \"arms\" does not "
              "list");
}

TEST(run_result, a_run_that_measured_nothing_says_so_in_its_file)
{
    run_result r = execute_run(small_run(1));
    EXPECT_EQ(r.measured_nothing, "");
    r.measured_nothing = "tbench measured nothing: ...";
    EXPECT_EQ(run_result_from_json(to_json(r), "m").measured_nothing, r.measured_nothing);
}
} // namespace
} // namespace schedlab
