// SPDX-License-Identifier: GPL-2.0-only
/*
 * schbench: the fio-style histogram, options of both versions, the futex
 * handshake's latencies, the per-CPU lock, RPS mode and the output.
 */
#include "workload/schbench.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::test_env;

TEST(plat_histogram, values_below_512_are_exact_and_larger_ones_report_bucket_midpoints)
{
    for (unsigned v : {0u, 1u, 255u, 256u, 511u})
        EXPECT_EQ(plat_histogram::idx_to_val(plat_histogram::val_to_idx(v)), v);
    // 512..1023: buckets of 2, reported at their middle (truncated): 1000 -> [1000, 1001] -> 1001.
    EXPECT_EQ(plat_histogram::val_to_idx(1000), 2 * 256u + 244);
    EXPECT_EQ(plat_histogram::idx_to_val(plat_histogram::val_to_idx(1000)), 1001u);
    // 2^15..2^16: buckets of 128: 62528 is the midpoint 32768 + 232 * 128 + 64.
    EXPECT_EQ(plat_histogram::idx_to_val(plat_histogram::val_to_idx(62500)), 62528u);
}

TEST(plat_histogram, percentiles_walk_the_buckets_as_schbench_does)
{
    plat_histogram h;
    for (unsigned v = 1; v <= 100; ++v)
        h.add(v);
    const auto p = h.percentiles({50.0, 90.0, 99.0, 99.9});
    ASSERT_EQ(p.size(), 4u);
    EXPECT_EQ(p[0].value, 50u);
    EXPECT_EQ(p[0].samples, 50u);
    EXPECT_EQ(p[1].value, 90u);
    EXPECT_EQ(p[1].samples, 40u);
    EXPECT_EQ(p[2].value, 99u);
    EXPECT_EQ(p[2].samples, 9u);
    EXPECT_EQ(p[3].value, 100u);
    EXPECT_EQ(p[3].samples, 1u);
    EXPECT_EQ(h.min(), 1u);
    EXPECT_EQ(h.max(), 100u);
}

// schedlab's ns figure: schbench's delta is floor(x / 1000), x the ns from the start of the
// stamp's microsecond; zero deltas are not recorded; a uniform shift moves every x.
TEST(wakeup_ns_histogram, places_schbenchs_percentile_inside_its_microsecond)
{
    wakeup_ns_histogram h;
    EXPECT_EQ(h.printed(99.0, 0), 0);
    EXPECT_EQ(h.shift_to_move(99.0, 1), -1);
    for (int i = 0; i < 98; ++i)
        h.add(usecs(10 * i), usecs(10 * i) + 1500); // x 1500: delta 1
    h.add(700, 3000);                               // x 3000, latency 2300: delta 3
    h.add(999, 2299);                               // x 2299: delta 2
    h.add(5000, 5400);                              // x 400: delta 0, not recorded
    EXPECT_EQ(h.nr(), 101u);
    // 100 recorded; 99% is 99 of them: 98 at 1 us, the 99th at 2 us.
    EXPECT_EQ(h.printed(99.0, 0), 2);
    EXPECT_EQ(h.offset_percentile(99.0), 2299);
    EXPECT_EQ(h.offset_percentile(50.0), 1500);
    EXPECT_EQ(h.latency_percentile(99.0), 1500); // 400, 98 x 1500, 1300, 2300
    EXPECT_EQ(h.latency_percentile(100.0), 2300);
    // Up: 701 ns more puts the 2299 at 3000, a second delta of 3 (the 400 is recorded from
    // 600 on: 99 of 101 at 1-2 us is below 99%); 700 leaves it at 2999.
    EXPECT_EQ(h.printed(99.0, 700), 2);
    EXPECT_EQ(h.printed(99.0, 701), 3);
    EXPECT_EQ(h.shift_to_move(99.0, 1), 701);
    // Down: 300 ns less puts the 2299 at 1999 (99 of 100 at 1 us).
    EXPECT_EQ(h.printed(99.0, -299), 2);
    EXPECT_EQ(h.printed(99.0, -300), 1);
    EXPECT_EQ(h.shift_to_move(99.0, -1), 300);
    // Past the 1 ns buckets' range the percentile is not placed.
    wakeup_ns_histogram far;
    far.add(0, wakeup_ns_histogram::NS_RANGE + 5);
    EXPECT_EQ(far.printed(99.0, 0), -1);
    EXPECT_EQ(far.latency_percentile(99.0), -1);
    h.clear();
    EXPECT_EQ(h.nr(), 0u);
    EXPECT_EQ(h.printed(99.0, 0), 0);
}

std::string schbench_error(const std::vector<std::string>& args)
{
    return test_support::error_of([&] { parse_schbench_options(args); }, "(accepted)");
}

TEST(schbench_options, each_version_has_its_defaults_and_meanings)
{
    schbench_params v1 = parse_schbench_options({});
    EXPECT_EQ(v1.variant, schbench_variant::v1);
    EXPECT_EQ(v1.message_threads, 1u);
    EXPECT_EQ(v1.threads, 0u);
    EXPECT_EQ(v1.runtime, secs(30));
    EXPECT_EQ(v1.cache_footprint_kb, 256u);
    EXPECT_EQ(v1.operations, 5u);
    EXPECT_EQ(v1.sleep, usecs(100));
    v1 = parse_schbench_options({"-m", "2", "-t", "4", "-r", "5", "-w", "3", "-s", "50", "-L"});
    EXPECT_EQ(v1.warmup, 0) << "schbench drops the warm-up when -r < 30";
    EXPECT_EQ(v1.sleep, usecs(50));
    EXPECT_TRUE(v1.no_locking);
    EXPECT_TRUE(parse_schbench_options({"-C"}).no_locking) << "-C implies -L";

    const schbench_params old = parse_schbench_options({"--variant=old", "-s", "10000", "-c", "2000"});
    EXPECT_EQ(old.variant, schbench_variant::old);
    EXPECT_EQ(old.message_threads, 2u);
    EXPECT_EQ(old.threads, 16u);
    EXPECT_EQ(old.warmup, secs(5));
    EXPECT_EQ(old.old_sleeptime, usecs(10000));
    EXPECT_EQ(old.old_cputime, usecs(2000));
    EXPECT_EQ(old.old_message_cputime, usecs(30000));
}

TEST(schbench_options, bad_and_unmodelled_options_are_rejected_by_name)
{
    EXPECT_THAT(schbench_error({"--variant=2019"}), HasSubstr("'--variant'"));
    EXPECT_THAT(schbench_error({"-p", "4096"}), HasSubstr("'-p' is not modelled"));
    EXPECT_THAT(schbench_error({"-A", "90"}), HasSubstr("'-A' is not modelled"));
    EXPECT_THAT(schbench_error({"-M", "auto"}), HasSubstr("'-M' is not modelled"));
    EXPECT_THAT(schbench_error({"-r", "0"}), HasSubstr("'-r'"));
    EXPECT_THAT(schbench_error({"-m", "0"}), HasSubstr("'-m'"));
    EXPECT_THAT(schbench_error({"-F", "x"}), HasSubstr("'-F'"));
    EXPECT_THAT(schbench_error({"--variant=old", "-R", "100"}), HasSubstr("'-R' is not modelled"));
    EXPECT_THAT(schbench_error({"--variant=old", "-F", "64"}), HasSubstr("'-F'"));
    EXPECT_THAT(schbench_error({"--bogus"}), HasSubstr("'--bogus'"));
}

struct sb_run {
    std::unique_ptr<schbench_workload> w;
    std::unique_ptr<test_env> t;
};

sb_run run_schbench(const std::vector<std::string>& args, int cores, u64 seed = 1,
                    cost_params costs = {})
{
    sb_run r;
    r.t = std::make_unique<test_env>(cores, seed, "6.6", costs);
    r.t->k.set_check_level(check_level::sampled, 64);
    r.w = std::make_unique<schbench_workload>(parse_schbench_options(args));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(60));
    return r;
}

TEST(schbench_v1, every_request_follows_one_recorded_wakeup_and_lasts_sleep_plus_math)
{
    // Exactly periodic workers (costs.def schbench_math_var 0): with the math's variation a
    // worker can be woken within the microsecond it posted, a delta schbench does not record.
    cost_params flat;
    flat.schbench_math_var = 0;
    const sb_run r =
        run_schbench({"-m", "1", "-t", "2", "-r", "1", "-F", "16", "-n", "2"}, 4, 1, flat);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    EXPECT_EQ(r.w->matrix_size(), 26u); // sqrt(16 KiB / 3 / 8)
    const sim_dur math = r.w->math_ns();
    EXPECT_EQ(math, static_cast<sim_dur>(26 * 26 * 26 * 2 * 0.5));
    const u64 reqs = r.w->total_requests();
    EXPECT_GT(reqs, 1000u);
    // Each request is preceded by one handshake wakeup (+1 for the stop's last fpost).
    EXPECT_GE(r.w->wakeup().nr_samples() + 2, reqs);
    EXPECT_LE(r.w->wakeup().nr_samples(), reqs + 2);
    EXPECT_EQ(r.w->request().nr_samples(), reqs);
    // Request latency = usleep(100 us) + the math, with nothing else running; the sleep
    // lasts up to its 50 us timer slack more.
    EXPECT_GE(r.w->request().min(), (usecs(100) + math) / 1000);
    EXPECT_LE(r.w->request().max(), (usecs(150) + math) / 1000 + 20);
    // Message thread + 2 workers + main.
    EXPECT_EQ(r.t->k.tasks().size(), 4u);
    EXPECT_EQ(r.t->k.tasks()[1]->comm, "schbench-msg");
    EXPECT_EQ(r.t->k.tasks()[2]->comm, "schbench-worker");
    EXPECT_EQ(r.t->k.tasks()[2]->tgid, r.t->k.tasks()[0]->tgid);
    const auto m = r.w->metrics();
    ASSERT_EQ(m.size(), 6u);
    EXPECT_EQ(m[5].name, "average_rps");
    EXPECT_DOUBLE_EQ(m[5].value, static_cast<double>(reqs) / 1.0);
}

// The probe knob costs.def schbench_math_spread: 0 (the default) adds nothing; a spread adds
// a uniform draw to each request, so the request latencies (usleep + slack + math, nothing
// else running) fan out over it. schbench_math_var is off here, so the math is flat without.
TEST(schbench_v1, math_spread_cost_varies_each_request_by_a_draw_below_it)
{
    const auto spread_run = [](sim_dur spread) {
        cost_params c;
        c.schbench_math_var = 0;
        c.schbench_math_spread = spread;
        sb_run r;
        r.t = std::make_unique<test_env>(4, 1, "6.6", c);
        r.t->k.set_check_level(check_level::sampled, 64);
        r.w = std::make_unique<schbench_workload>(
            parse_schbench_options({"-m", "1", "-t", "2", "-r", "1", "-F", "16", "-n", "2"}));
        r.w->setup(r.t->k.sys());
        r.t->k.run(secs(60));
        return r;
    };
    const sb_run flat = spread_run(0);
    const sb_run spread = spread_run(usecs(400));
    ASSERT_TRUE(flat.w->finished());
    ASSERT_TRUE(spread.w->finished());
    const sim_dur math = flat.w->math_ns();
    // Without a spread the requests differ only by the sleep's 50 us of timer slack.
    EXPECT_LE(flat.w->request().max() - flat.w->request().min(), 50u + 20u);
    // With 400 us they cover most of it, and stay within it.
    EXPECT_GE(spread.w->request().max() - spread.w->request().min(), 300u);
    EXPECT_GE(spread.w->request().min(), (usecs(100) + math) / 1000);
    EXPECT_LE(spread.w->request().max(), (usecs(150) + math + usecs(400)) / 1000 + 20);
}

// The variation table: its knots are the measured run's quantiles over its median, and it
// interpolates linearly between them.
TEST(schbench_v1, math_factor_table_passes_through_the_measured_quantiles)
{
    EXPECT_EQ(schbench_math_factor_ppm(0), 934'111u);         // min 2963 / p50 3172 us
    EXPECT_EQ(schbench_math_factor_ppm(500'000), 1'000'000u); // p50
    EXPECT_EQ(schbench_math_factor_ppm(900'000), 1'020'177u); // p90 3236
    EXPECT_EQ(schbench_math_factor_ppm(990'000), 1'116'015u); // p99 3540
    EXPECT_EQ(schbench_math_factor_ppm(999'000), 1'435'057u); // p99.9 4552
    EXPECT_EQ(schbench_math_factor_ppm(999'999), 1'541'822u); // towards max 4891
    EXPECT_EQ(schbench_math_factor_ppm(250'000), (934'111u + 1'000'000u) / 2);
    u64 last = 0;
    for (u64 u = 0; u < 1'000'000; u += 997) {
        EXPECT_GE(schbench_math_factor_ppm(u), last) << u;
        last = schbench_math_factor_ppm(u);
    }
}

// By default (costs.def schbench_math_var 100) each request's math is drawn from the measured
// table around math_ns(): with -s 0 and one worker per CPU a request is its math alone, so
// the request latencies show the table's shape; at 0 every request is the same length.
TEST(schbench_v1, each_requests_math_varies_as_the_measured_table_by_default)
{
    const auto var_run = [](sim_dur var) {
        cost_params c;
        c.schbench_math_var = var;
        sb_run r;
        r.t = std::make_unique<test_env>(4, 1, "6.6", c);
        r.t->k.set_check_level(check_level::sampled, 64);
        r.w = std::make_unique<schbench_workload>(parse_schbench_options(
            {"-m", "1", "-t", "2", "-r", "3", "-F", "256", "-n", "1", "-s", "0"}));
        r.w->setup(r.t->k.sys());
        r.t->k.run(secs(60));
        return r;
    };
    EXPECT_EQ(cost_params{}.schbench_math_var, 100);
    const sb_run var = var_run(cost_params{}.schbench_math_var);
    const sb_run flat = var_run(0);
    ASSERT_TRUE(var.w->finished());
    ASSERT_TRUE(flat.w->finished());
    const double math_us = static_cast<double>(var.w->math_ns()) / 1000.0; // 562 us
    ASSERT_GT(var.w->request().nr_samples(), 8000u);
    // Flat: every request the same length (to the microsecond of the histogram).
    EXPECT_LE(flat.w->request().max() - flat.w->request().min(), 1u);
    // Varied: within the table's min and max, p50 at the median, p90 and p99 near theirs.
    EXPECT_GE(var.w->request().min(), static_cast<unsigned>(0.934 * math_us));
    EXPECT_LE(var.w->request().max(), static_cast<unsigned>(1.542 * math_us) + 2);
    EXPECT_GE(var.w->request().max() - var.w->request().min(),
              static_cast<unsigned>(0.1 * math_us));
    const auto p = var.w->request().percentiles({50.0, 90.0, 99.0});
    ASSERT_EQ(p.size(), 3u);
    EXPECT_NEAR(p[0].value / math_us, 1.0, 0.005);
    EXPECT_NEAR(p[1].value / math_us, 1.020, 0.005);
    EXPECT_NEAR(p[2].value / math_us, 1.116, 0.06);
}

TEST(schbench_v1, output_has_the_three_blocks_and_the_averages)
{
    const sb_run r = run_schbench({"-t", "2", "-r", "1", "-i", "1", "-F", "16", "-n", "1"}, 2);
    const std::string out = r.w->report();
    EXPECT_THAT(out, ContainsRegex("^Wakeup Latencies percentiles \\(usec\\) runtime 1 \\(s\\) "
                                   "\\([0-9]+ total samples\\)\n"
                                   "\t  50\\.0th: [0-9 ]{10} \\([0-9]+ samples\\)\n"
                                   "\t  90\\.0th: [0-9 ]{10} \\([0-9]+ samples\\)\n"
                                   "\t\\* 99\\.0th: [0-9 ]{10} \\([0-9]+ samples\\)\n"
                                   "\t  99\\.9th: [0-9 ]{10} \\([0-9]+ samples\\)\n"
                                   "\t  min=[0-9]+, max=[0-9]+\n"
                                   "Request Latencies percentiles \\(usec\\) runtime 1 \\(s\\)"));
    EXPECT_THAT(out, ContainsRegex("RPS percentiles \\(requests\\) runtime 1 \\(s\\) \\([0-9]+ total "
                                   "samples\\)\n"
                                   "\t  20\\.0th: [0-9 ]{10} \\([0-9]+ samples\\)\n"
                                   "\t\\* 50\\.0th: [0-9 ]{10} \\([0-9]+ samples\\)\n"
                                   "\t  90\\.0th: [0-9 ]{10} \\([0-9]+ samples\\)\n"));
    EXPECT_THAT(out, ContainsRegex("current rps: [0-9]+\\.[0-9][0-9]\n"));
    EXPECT_THAT(out, ContainsRegex("\naverage rps: [0-9]+\\.[0-9][0-9]\n"
                                   "sched delay: message [0-9]+ \\(usec\\) worker [0-9]+ \\(usec\\)\n$"));
    const sb_run d = run_schbench({"-r", "1", "-F", "16", "-n", "1"}, 3);
    EXPECT_THAT(d.w->report(), HasSubstr("setting worker threads to 3\n"));
    EXPECT_EQ(d.w->workers_per_message(), 3u);
}

// -z zeroes the statistics (and the RPS samples) at the first once-a-second tick of
// the main thread more than -z seconds after the last zeroing: with -r 3 -z 2 that is the
// 2 s tick only, so the final percentiles are the third second's (the fidelity suite's
// schbench window, bench/fidelity/shared-runq-v3.sh). The schedule is the same.
TEST(schbench_v1, zerotime_two_of_a_three_second_run_keeps_the_third_second)
{
    const std::vector<std::string> base = {"-t", "2", "-r", "3", "-F", "16", "-n", "2"};
    std::vector<std::string> zeroed = base;
    zeroed.insert(zeroed.end(), {"-z", "2"});
    const sb_run whole = run_schbench(base, 4);
    const sb_run last = run_schbench(zeroed, 4);
    ASSERT_TRUE(whole.w->finished());
    ASSERT_TRUE(last.w->finished());
    EXPECT_EQ(last.w->total_requests(), whole.w->total_requests());
    const u64 all = whole.w->request().nr_samples();
    const u64 kept = last.w->request().nr_samples();
    // One second of three, within the first second's start-up and the stop.
    EXPECT_GT(kept * 100, all * 30);
    EXPECT_LT(kept * 100, all * 36);
    const u64 all_wake = whole.w->wakeup().nr_samples();
    const u64 kept_wake = last.w->wakeup().nr_samples();
    EXPECT_GT(kept_wake * 100, all_wake * 30);
    EXPECT_LT(kept_wake * 100, all_wake * 36);
    // The RPS samples of the ticks at 0, 1 and 2 s went with the zeroing; the 3 s tick's stays.
    EXPECT_THAT(whole.w->report(), HasSubstr("RPS percentiles (requests) runtime 3 (s) (4 total samples)"));
    EXPECT_THAT(last.w->report(), HasSubstr("RPS percentiles (requests) runtime 3 (s) (1 total samples)"));
}

TEST(schbench_v1, a_preempted_lock_holder_makes_the_others_on_its_cpu_spin)
{
    // Six workers, one CPU, 2 ms of math: wakeups preempt lock holders.
    const std::vector<std::string> a = {"-t", "6", "-r", "1", "-F", "256", "-n", "4", "-s", "50"};
    const sb_run locked = run_schbench(a, 1);
    std::vector<std::string> b = a;
    b.push_back("-L");
    const sb_run unlocked = run_schbench(b, 1);
    EXPECT_GT(locked.w->lock_spins(), 0u);
    EXPECT_EQ(unlocked.w->lock_spins(), 0u);
    EXPECT_LT(locked.w->total_requests(), unlocked.w->total_requests())
        << "spinning burns CPU the requests could have used";
}

// schedlab's own lock figures (the run summary): on one CPU every holder found at a first
// trylock was preempted there, none unlocks elsewhere, and the spin time is the loop's chunks.
TEST(schbench_v1, lock_figures_count_each_spin_episode_and_where_its_holder_was)
{
    const std::vector<std::string> a = {"-t", "6", "-r", "1", "-F", "256", "-n", "4", "-s", "50"};
    const sb_run one = run_schbench(a, 1);
    const auto& ls = one.w->lock_total();
    EXPECT_EQ(ls.requests, one.w->total_requests());
    EXPECT_GT(ls.episodes, 0u);
    EXPECT_LE(ls.episodes, ls.requests);
    EXPECT_EQ(ls.holder_preempted, ls.episodes);
    EXPECT_EQ(ls.holder_elsewhere, 0u);
    EXPECT_EQ(ls.unlocks_moved, 0u);
    EXPECT_EQ(ls.spin_ns, static_cast<sim_dur>(one.w->lock_spins()) * usecs(5));
    EXPECT_GE(ls.spin_ns, static_cast<sim_dur>(ls.episodes) * usecs(5));
    EXPECT_THAT(one.w->summary(), HasSubstr("# schbench per-CPU locks (whole run): "));
    EXPECT_THAT(one.w->summary(), Not(HasSubstr("since the last zeroing")));
    std::vector<std::string> b = a;
    b.push_back("-L");
    EXPECT_THAT(run_schbench(b, 1).w->summary(), Not(HasSubstr("per-CPU locks")));
    // The window restarts at the zeroing: with -z 2 of a 3 s run it holds the third second
    // (schbench zeroes every -z seconds). Eight workers: with six, the default model's
    // (voluntary) run has no spin episode after its first second (seven in all; eighteen
    // under +preempt=instant).
    const sb_run z = run_schbench({"-t", "8", "-r", "3", "-z", "2", "-F", "256", "-n", "1", "-s",
                                   "50"},
                                  1);
    EXPECT_GT(z.w->lock_window().episodes, 0u);
    EXPECT_LT(z.w->lock_window().requests, z.w->lock_total().requests);
    EXPECT_THAT(z.w->summary(), HasSubstr("(since the last zeroing)"));
}

TEST(schbench_v1, p99_wakeup_latency_rises_once_workers_exceed_the_cpus)
{
    const sb_run under = run_schbench({"-t", "2", "-r", "1", "-F", "64", "-n", "4"}, 4);
    const sb_run over = run_schbench({"-t", "16", "-r", "1", "-F", "64", "-n", "4"}, 4);
    const auto p99 = [](const sb_run& r) { return r.w->wakeup().percentiles({99.0}).at(0).value; };
    EXPECT_GT(p99(over), 10 * p99(under));
}

// The ns figure covers the printed histogram's window and agrees with its p99.
TEST(schbench_v1, the_ns_figure_agrees_with_the_printed_p99_over_the_same_window)
{
    const sb_run r = run_schbench({"-t", "2", "-r", "3", "-z", "2", "-F", "64", "-n", "4"}, 4);
    const wakeup_ns_histogram& h = r.w->wakeup_ns();
    const u64 printed = r.w->wakeup().percentiles({99.0}).at(0).value;
    ASSERT_GT(printed, 0u);
    ASSERT_LT(printed, 60u) << "inside the 1 ns buckets' range";
    EXPECT_GE(h.nr(), r.w->wakeup().nr_samples()); // and the zero deltas
    EXPECT_LT(h.nr(), r.w->total_requests()) << "zeroed after the second second";
    EXPECT_EQ(h.printed(99.0, 0), static_cast<s64>(printed));
    EXPECT_EQ(h.offset_percentile(99.0) / 1000, static_cast<s64>(printed));
    EXPECT_THAT(r.w->summary(),
                HasSubstr(fmt::format("# schbench wakeups in ns (since the last zeroing; "
                                      "schedlab's figure): {} wakeups",
                                      h.nr())));
    EXPECT_THAT(r.w->summary(), HasSubstr(fmt::format("the printed p99, {} us, is", printed)));
}

TEST(schbench_v1, rps_mode_queues_the_requested_rate_round_robin)
{
    const sb_run r = run_schbench({"-t", "4", "-r", "2", "-R", "400", "-F", "16", "-n", "1"}, 2);
    ASSERT_TRUE(r.w->finished());
    // 400 requests per second for two seconds, 100 a second per worker.
    EXPECT_EQ(r.w->total_requests(), 800u);
    for (const auto& td : r.w->threads()) {
        if (td.msg >= 0) {
            EXPECT_EQ(td.loop_count, 200u);
        }
    }
    // Queued 500 at a time per worker, more than 128 pending are skipped (schbench's batch limit).
    const sb_run burst = run_schbench({"-t", "4", "-r", "2", "-R", "4000", "-F", "16", "-n", "1"}, 2);
    EXPECT_LT(burst.w->total_requests(), 8000u);
    EXPECT_GT(burst.w->total_requests(), 2000u);
}

TEST(schbench_old, workers_spin_and_the_output_is_the_2021_block)
{
    const sb_run r = run_schbench({"--variant=old", "-m", "1", "-t", "2", "-r", "2", "-i", "1",
                                   "-s", "2000", "-c", "1000", "-C", "100"},
                                  2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    EXPECT_GT(r.w->wakeup().nr_samples(), 100u);
    EXPECT_EQ(r.w->request().nr_samples(), 0u);
    const std::string out = r.w->report();
    EXPECT_THAT(out, ContainsRegex("Latency percentiles \\(usec\\) runtime 2 \\(s\\) \\([0-9]+ total "
                                   "samples\\)\n"
                                   "\t50\\.0th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\t75\\.0th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\t90\\.0th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\t95\\.0th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\t\\*99\\.0th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\t99\\.5th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\t99\\.9th: [0-9]+ \\([0-9]+ samples\\)\n"
                                   "\tmin=[0-9]+, max=[0-9]+\n$"));
    // Each worker loop spins ~1 ms of wall time: at most ~2000 loops in 2 s for two workers.
    u64 loops = 0;
    for (const auto& td : r.w->threads())
        loops += td.msg >= 0 ? td.loop_count : 0;
    EXPECT_GT(loops, 200u);
    EXPECT_LE(loops, 4000u);
}

TEST(schbench, the_same_seed_gives_the_same_schedule)
{
    const std::vector<std::string> a = {"-t", "6", "-r", "1", "-F", "64", "-n", "2"};
    const sb_run x = run_schbench(a, 2, 9);
    const sb_run y = run_schbench(a, 2, 9);
    EXPECT_EQ(x.t->k.schedule_digest(), y.t->k.schedule_digest());
    EXPECT_EQ(x.w->report(), y.w->report());
}

} // namespace
} // namespace schedlab
