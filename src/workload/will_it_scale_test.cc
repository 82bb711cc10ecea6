// SPDX-License-Identifier: GPL-2.0-only
/*
 * will-it-scale context_switch1: options, hwloc-order binding, the ping-pong
 * counter, the harness's samples and average.
 */
#include "workload/will_it_scale.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::test_env;

std::string wis_error(const std::vector<std::string>& args)
{
    return test_support::error_of([&] { parse_wis_options(args, false); }, "(accepted)");
}

TEST(context_switch1_options, defaults_and_rejections)
{
    const wis_params wp = parse_wis_options({"-t", "4", "-m"}, true);
    EXPECT_TRUE(wp.threads);
    EXPECT_EQ(wp.tasks, 4u);
    EXPECT_EQ(wp.iterations, 5u);
    EXPECT_EQ(wp.binding, wis_binding::smt);
    EXPECT_EQ(wp.warmup, 5u);
    EXPECT_EQ(parse_wis_options({"-n"}, false).binding, wis_binding::none);
    EXPECT_THAT(wis_error({"-s", "0"}), HasSubstr("'-s'"));
    EXPECT_THAT(wis_error({"-t", "0"}), HasSubstr("'-t'"));
    EXPECT_THAT(wis_error({"-m", "-n"}), HasSubstr("'-m' and '-n'"));
    EXPECT_THAT(wis_error({"--interval", "0"}), HasSubstr("'--interval'"));
    EXPECT_THAT(wis_error({"-x"}), HasSubstr("'-x'"));
}

TEST(context_switch1_binding, copies_take_cores_in_hwloc_order_or_single_threads_with_m)
{
    symmetric_machine_spec s;
    s.name = "2c-smt2";
    s.cores_per_socket = 2;
    s.threads_per_core = 2;
    const machine m = make_symmetric_machine(s, s.name);
    ASSERT_EQ(m.nr_cpus(), 4);
    // Core 0 = CPUs {0, 2} (siblings n and n + nr_cores), core 1 = {1, 3}.
    const cpumask c0 = wis_binding_mask(m, wis_binding::core, 0);
    EXPECT_EQ(c0.weight(), 2);
    EXPECT_TRUE(c0.test(0));
    EXPECT_EQ(c0.weight(), m.smt_mask(0).weight());
    EXPECT_TRUE(m.smt_mask(0).test(c0.next(1)));
    const cpumask c2 = wis_binding_mask(m, wis_binding::core, 2); // wraps to core 0
    EXPECT_EQ(c2.weight(), 2);
    EXPECT_TRUE(c2.test(0));
    // -m: PU 0 and PU 1 are the two threads of core 0.
    const cpumask p0 = wis_binding_mask(m, wis_binding::smt, 0);
    const cpumask p1 = wis_binding_mask(m, wis_binding::smt, 1);
    EXPECT_EQ(p0.weight(), 1);
    EXPECT_EQ(p1.weight(), 1);
    EXPECT_TRUE(m.smt_mask(0).test(p1.first()));
    EXPECT_EQ(wis_binding_mask(m, wis_binding::none, 0).weight(), 4);
}

struct cs_run {
    std::unique_ptr<context_switch1_workload> w;
    std::unique_ptr<test_env> t;
};

cs_run run_cs(const std::vector<std::string>& args, bool threads, int cores, u64 seed = 1)
{
    cs_run r;
    r.t = std::make_unique<test_env>(cores, seed);
    r.t->k.set_check_level(check_level::sampled, 64);
    r.w = std::make_unique<context_switch1_workload>(parse_wis_options(args, threads));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(60));
    return r;
}

TEST(context_switch1, a_copy_and_its_partner_share_the_copys_core_and_count_two_per_round_trip)
{
    const cs_run r = run_cs({"-t", "2", "-s", "2", "--warmup", "1", "--interval", "0.02"}, false, 4);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    for (unsigned i = 0; i < 2; ++i) {
        const task_struct* c = r.w->copies()[i];
        const task_struct* p = r.w->partners()[i];
        ASSERT_NE(c, nullptr);
        ASSERT_NE(p, nullptr);
        // Cores 0 and 1 of a machine without SMT: each pair is confined to one CPU.
        EXPECT_EQ(c->nr_cpus_allowed, 1);
        EXPECT_TRUE(c->cpus_mask.test(static_cast<int>(i)));
        EXPECT_EQ(p->cpus_mask.first(), c->cpus_mask.first()) << "the partner inherits the binding";
        EXPECT_NE(p->tgid, c->tgid) << "processes build";
        EXPECT_EQ(r.w->counters()[i] % 2, 0u);
        // Strict ping-pong on one CPU: two context switches per round trip.
        const u64 round_trips = r.w->counters()[i] / 2;
        EXPECT_NEAR(static_cast<double>(c->nvcsw + c->nivcsw + p->nvcsw + p->nivcsw),
                    2.0 * static_cast<double>(round_trips),
                    4.0 + 0.01 * static_cast<double>(round_trips));
    }
}

TEST(context_switch1, the_harness_prints_warmup_samples_then_the_average)
{
    const cs_run r = run_cs({"-t", "1", "-s", "2", "--warmup", "1", "--interval", "0.02"}, true, 2);
    ASSERT_TRUE(r.w->finished());
    const std::string out = r.w->report();
    // warm-up 1: samples 0 and 1 print before "measurement" comes after sample 1;
    // samples 2 and 3 are averaged.
    EXPECT_THAT(out, MatchesRegex("testcase:Context switch via pipes\n"
                                  "warmup\n"
                                  "min:[0-9]+ max:[0-9]+ total:[0-9]+\n"
                                  "min:[0-9]+ max:[0-9]+ total:[0-9]+\n"
                                  "measurement\n"
                                  "min:[0-9]+ max:[0-9]+ total:([0-9]+)\n"
                                  "min:[0-9]+ max:[0-9]+ total:([0-9]+)\n"
                                  "average:[0-9]+\n"));
    EXPECT_EQ(r.w->partners()[0]->tgid, r.w->copies()[0]->tgid) << "threads build";
    const auto m = r.w->metrics();
    ASSERT_EQ(m.size(), 2u);
    EXPECT_DOUBLE_EQ(m[0].value, static_cast<double>(r.w->average()) / 0.02);
    EXPECT_GT(m[0].value, 50'000.0);
}

TEST(context_switch1, unbound_copies_may_spread_their_pairs)
{
    const cs_run r = run_cs({"-t", "1", "-s", "1", "-n", "--warmup", "0", "--interval", "0.02"},
                            false, 2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_EQ(r.w->copies()[0]->nr_cpus_allowed, 2);
    EXPECT_EQ(r.w->partners()[0]->nr_cpus_allowed, 2);
}

TEST(context_switch1, the_same_seed_gives_the_same_schedule)
{
    const std::vector<std::string> a = {"-t", "3", "-s", "1", "--warmup", "0", "--interval", "0.01"};
    const cs_run x = run_cs(a, false, 2, 4);
    const cs_run y = run_cs(a, false, 2, 4);
    EXPECT_EQ(x.t->k.schedule_digest(), y.t->k.schedule_digest());
    EXPECT_EQ(x.w->report(), y.w->report());
}

} // namespace
} // namespace schedlab
