// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/runner.h"

#include "experiment/plan.h"
#include "experiment/result_json.h"
#include "sim/config_error.h"
#include "sim/simulation.h"
#include "sim/test_support.h"
#include "trace/tracepoints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

compare_spec small_compare()
{
    compare_spec c;
    c.machine = "skylake-18c";
    c.arms = {"6.6", "6.5"};
    c.runs = 2;
    c.seed = 10;
    c.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1,2", "-l", "5"};
    c.check = "sampled";
    return c;
}

TEST(plan_compare, pairs_seeds_across_arms_and_loads)
{
    const compare_plan p = plan_compare(small_compare());
    ASSERT_EQ(p.runs.size(), 8u); // 2 loads x 2 arms x 2 runs
    EXPECT_EQ(p.info.loads, (std::vector<std::string>{"1", "2"}));
    EXPECT_EQ(p.info.load_option, "-g");
    for (const run_spec& s : p.runs)
        EXPECT_EQ(s.seed, 10u + static_cast<u64>(s.run_index));
    EXPECT_EQ(p.runs[6].kernel, "6.5");
    EXPECT_EQ(p.runs[6].run_index, 0);
    EXPECT_EQ(p.runs[6].load, "2");
    EXPECT_EQ(p.runs[6].workload_argv[5], "2");
}

TEST(plan_compare, rejects_bad_arms_before_running)
{
    compare_spec c = small_compare();
    c.arms = {"6.6", "6.6"};
    EXPECT_THROW(plan_compare(c), config_error);
    c.arms = {"6.6", "6.6+NO_RUN_TO_PARTY"};
    try {
        plan_compare(c);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("NO_RUN_TO_PARTY"));
    }
    c = small_compare();
    c.runs = 0;
    EXPECT_THROW(plan_compare(c), config_error);
}

TEST(run_all, results_are_identical_for_one_and_two_jobs)
{
    const compare_plan p = plan_compare(small_compare());
    std::vector<std::size_t> seen;
    const auto one = run_all(p.runs, 1, [&](std::size_t done, std::size_t total) {
        EXPECT_EQ(total, 8u);
        seen.push_back(done);
    });
    const auto two = run_all(p.runs, 2);
    EXPECT_EQ(seen, (std::vector<std::size_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    ASSERT_EQ(one.size(), two.size());
    EXPECT_EQ(results_to_string(one, p.info), results_to_string(two, p.info));
    // collected by index: result i is the run of spec i
    for (std::size_t i = 0; i < one.size(); ++i) {
        EXPECT_EQ(two[i].provenance.seed, p.runs[i].seed);
        EXPECT_EQ(two[i].load, p.runs[i].load);
    }
    // the same seed under EEVDF and CFS gives different schedules
    EXPECT_NE(one[0].schedule_digest, one[2].schedule_digest);
}

TEST(format_run_progress, one_line_redrawn_in_place)
{
    EXPECT_EQ(format_run_progress(0.5125, 12345678, 4.4),
              "\rschedlab run: simulated 0.512 s, 12.3 M events, 0.116 simulated s/s, elapsed "
              "0:04\x1b[K");
    EXPECT_EQ(format_run_progress(0, 0, 0),
              "\rschedlab run: simulated 0.000 s, 0.0 M events, 0 simulated s/s, elapsed 0:00\x1b[K");
}

TEST(run_progress_line, clears_only_a_line_it_drew)
{
    std::ostringstream out;
    {
        run_progress_line line(out);
        line.finish();
    }
    EXPECT_EQ(out.str(), "") << "nothing drawn, nothing to clear";
}

// The progress hook reads the run between events: the same schedule with it as without.
TEST(execute_run, a_progress_hook_is_called_and_changes_nothing)
{
    const compare_plan p = plan_compare(small_compare());
    const run_result plain = execute_run(p.runs[0]);
    run_hooks hooks;
    hooks.progress_every = 100;
    u64 calls = 0, last_events = 0;
    hooks.progress = [&](const simulation& sim) {
        ++calls;
        EXPECT_EQ(sim.events_fired(), last_events + 100);
        last_events = sim.events_fired();
    };
    const run_result watched = execute_run(p.runs[0], hooks);
    ASSERT_GT(plain.events_fired, 1000u);
    EXPECT_EQ(calls, plain.events_fired / 100);
    EXPECT_EQ(watched.schedule_digest, plain.schedule_digest);
    EXPECT_EQ(watched.events_fired, plain.events_fired);
    EXPECT_EQ(watched.benchmark_output, plain.benchmark_output);
}

// before_run sees the kernel built, with the extra sinks attached, before the first event: a
// sink that keeps it (bench/node_timeline.cc) reads the state as the run goes, and the
// schedule is the one without it.
TEST(execute_run, before_run_sees_the_kernel_before_the_first_event_and_changes_nothing)
{
    const compare_plan p = plan_compare(small_compare());
    const run_result plain = execute_run(p.runs[0]);
    struct reader final : trace_sink {
        const kernel* k = nullptr;
        u64 switches = 0, read_with_kernel = 0;
        void sched_switch(const trace_sched_switch& e) override
        {
            ++switches;
            if (k && k->cpu_rq(e.cpu).cpu == e.cpu && k->now() == e.ts)
                ++read_with_kernel;
        }
    } sink;
    run_hooks hooks;
    hooks.extra_sinks.push_back(&sink);
    u64 events_at_before = 1;
    hooks.before_run = [&](const kernel& k) {
        sink.k = &k;
        events_at_before = k.sim().events_fired();
    };
    const run_result watched = execute_run(p.runs[0], hooks);
    EXPECT_EQ(events_at_before, 0u);
    ASSERT_GT(sink.switches, 100u);
    EXPECT_EQ(sink.read_with_kernel, sink.switches);
    EXPECT_EQ(watched.schedule_digest, plain.schedule_digest);
    EXPECT_EQ(watched.events_fired, plain.events_fired);
}

// The idle-gap counters (sched/idle_gap.h) are kept only when the run's observer asks
// (`schedlab run --schedstat`): off, they stay 0; on, they count; the schedule is the same.
TEST(execute_run, idle_gap_counters_are_kept_only_when_asked_and_change_nothing)
{
    const compare_plan p = plan_compare(small_compare());
    struct gap_counts {
        u64 wakeups = 0, placed_on_idle = 0, sic_calls = 0, waits = 0;
        sim_time machine_since = 0;
    };
    auto run_with = [&](bool idle_gaps, gap_counts& got) {
        run_hooks hooks;
        hooks.idle_gaps = idle_gaps;
        hooks.after_run = [&](const kernel& k) {
            const idle_gap_stats& g = k.lb().gap;
            got = {g.wakeups, g.placed_on_idle, g.sic_calls,
                   g.waits_after_idle + g.waits_after_busy, g.machine.since};
        };
        return execute_run(p.runs[0], hooks);
    };
    gap_counts off, on;
    const run_result plain = run_with(false, off);
    const run_result counted = run_with(true, on);
    EXPECT_EQ(off.wakeups, 0u);
    EXPECT_EQ(off.placed_on_idle, 0u);
    EXPECT_EQ(off.sic_calls, 0u);
    EXPECT_EQ(off.waits, 0u);
    EXPECT_EQ(off.machine_since, 0) << "no nr_running change was integrated";
    EXPECT_GT(on.wakeups, 10u);
    EXPECT_GT(on.sic_calls, 0u);
    EXPECT_GT(on.waits, 0u);
    EXPECT_GT(on.machine_since, 0);
    EXPECT_EQ(counted.schedule_digest, plain.schedule_digest);
    EXPECT_EQ(counted.events_fired, plain.events_fired);
    EXPECT_EQ(counted.benchmark_output, plain.benchmark_output);
}

TEST(format_progress, bar_with_eta_on_a_terminal_and_plain_lines_otherwise)
{
    // 10 of 40 done in 5 s: 0.5 s per run, 30 left -> 15 s
    EXPECT_EQ(format_progress(10, 40, 5.0, true, 20),
              "\r[#####...............] 10/40   25%  elapsed 0:05  ETA 0:15\x1b[K");
    EXPECT_EQ(format_progress(10, 40, 5.0, false),
              "schedlab: 10/40 runs done (25%), elapsed 5 s, ETA 15 s\n");
    EXPECT_EQ(format_progress(0, 3, 0.0, false), "schedlab: 0/3 runs done (0%), elapsed 0 s, ETA ?\n");
    EXPECT_EQ(format_progress(3, 3, 4000.0, true, 4), "\r[####] 3/3  100%  elapsed 1:06:40  ETA 0:00\x1b[K");
}

// Issue 16: compare --runs 1000000 ran out of memory; seeds wrapped past 2^64-1.
TEST(plan_compare, bounds_the_runs_and_the_seeds_before_planning)
{
    compare_spec c = small_compare();
    c.runs = max_compare_runs + 1;
    EXPECT_THAT(test_support::error_of([&] { plan_compare(c); }),
                HasSubstr("--runs: 10001 is outside [1, 10000]"));
    c = small_compare();
    c.runs = 10000;
    c.arms = {"6.6", "6.5", "6.1", "5.15", "6.12", "6.18"};
    EXPECT_EQ(test_support::error_of([&] { plan_compare(c); }),
              "--runs: 2 loads x 6 arms x 10000 runs = 120000 runs, more than the 100000 a "
              "comparison holds");
    c = small_compare();
    c.seed = 18446744073709551615ULL;
    EXPECT_EQ(test_support::error_of([&] { plan_compare(c); }),
              "--seed: 18446744073709551615 + 2 runs passes the largest seed, 2^64-1");
}
} // namespace
} // namespace schedlab
