// SPDX-License-Identifier: GPL-2.0-only
#include "sched/profiles.h"

#include "sim/config_error.h"

#include <gtest/gtest.h>
#include <gmock/gmock.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

std::string error_of(auto&& f)
{
    try {
        f();
    } catch (const config_error& e) {
        return e.what();
    }
    return "<no error>";
}

TEST(make_kernel_config, picks_the_policy_of_the_version)
{
    EXPECT_EQ(make_kernel_config("6.6").params.policy, fair_policy::eevdf);
    EXPECT_EQ(make_kernel_config("6.5").params.policy, fair_policy::cfs);
    EXPECT_EQ(make_kernel_config("5.15").params.policy, fair_policy::cfs);
}

TEST(make_kernel_config, applies_plus_joined_toggles)
{
    const kernel_config kc = make_kernel_config("6.6+NO_RUN_TO_PARITY+NEXT_BUDDY");
    EXPECT_FALSE(kc.features.test(__SCHED_FEAT_RUN_TO_PARITY));
    EXPECT_TRUE(kc.features.test(__SCHED_FEAT_NEXT_BUDDY));
    EXPECT_EQ(kc.delta_string(), "NEXT_BUDDY+NO_RUN_TO_PARITY");
}

TEST(make_kernel_config, rejects_an_unknown_profile_with_a_hint)
{
    EXPECT_THAT(error_of([] { make_kernel_config("6.7"); }),
                HasSubstr("unknown kernel profile '6.7'"));
    EXPECT_THAT(error_of([] { make_kernel_config("6.66"); }), HasSubstr("did you mean '6.6'"));
}

TEST(apply_features, rejects_unknown_names_with_a_hint)
{
    kernel_config kc = make_kernel_config("6.6");
    EXPECT_THAT(error_of([&] { apply_features(kc, "NO_RUN_TO_PARTY", "--features"); }),
                HasSubstr("--features: unknown sched feature 'NO_RUN_TO_PARTY' (did you mean "
                          "'NO_RUN_TO_PARITY'?)"));
}

TEST(apply_features, rejects_features_the_kernel_does_not_have)
{
    kernel_config kc = make_kernel_config("6.5");
    EXPECT_THAT(error_of([&] { apply_features(kc, "PLACE_LAG", "--features"); }),
                HasSubstr("does not exist in kernel 6.5"));
    kernel_config kc66 = make_kernel_config("6.6");
    EXPECT_THAT(error_of([&] { apply_features(kc66, "NO_GENTLE_FAIR_SLEEPERS", "x"); }),
                HasSubstr("does not exist in kernel 6.6"));
}

TEST(apply_features, accepts_kernel_spelling_lists)
{
    kernel_config kc = make_kernel_config("6.6");
    apply_features(kc, "NO_RUN_TO_PARITY,NO_PLACE_LAG WAKEUP_PREEMPTION", "--features");
    EXPECT_FALSE(kc.features.test(__SCHED_FEAT_RUN_TO_PARITY));
    EXPECT_FALSE(kc.features.test(__SCHED_FEAT_PLACE_LAG));
    EXPECT_THAT(kc.features_string(), HasSubstr("NO_PLACE_LAG"));
}

TEST(apply_features, warns_when_an_unmodelled_feature_is_toggled)
{
    kernel_config kc = make_kernel_config("6.6");
    apply_features(kc, "HRTICK", "--features");
    ASSERT_EQ(kc.warnings.size(), 1u);
    EXPECT_THAT(kc.warnings[0], HasSubstr("HRTICK"));
}

TEST(scale_tunables, uses_the_log_factor_capped_at_eight_cpus)
{
    sched_params sp;
    EXPECT_EQ(scale_tunables(sp, 1).factor, 1u);
    EXPECT_EQ(scale_tunables(sp, 2).factor, 2u);
    EXPECT_EQ(scale_tunables(sp, 4).factor, 3u);
    EXPECT_EQ(scale_tunables(sp, 7).factor, 3u);
    EXPECT_EQ(scale_tunables(sp, 8).factor, 4u);
    const sched_tunables t = scale_tunables(sp, 512);
    EXPECT_EQ(t.factor, 4u);
    EXPECT_EQ(t.base_slice, 3'000'000u);
    EXPECT_EQ(t.latency, 24'000'000u);
    EXPECT_EQ(t.min_granularity, 3'000'000u);
    EXPECT_EQ(t.wakeup_granularity, 4'000'000u);
    EXPECT_EQ(t.migration_cost, 500'000u);
}

TEST(set_cost, rejects_unknown_names_and_bad_values)
{
    cost_params c;
    set_cost(c, "pipe_write=900", "--cost");
    EXPECT_EQ(c.pipe_write, 900);
    EXPECT_THAT(error_of([&] { set_cost(c, "pipe_wirte=1", "--cost"); }),
                HasSubstr("did you mean 'pipe_write'"));
    EXPECT_THAT(error_of([&] { set_cost(c, "pipe_write=-1", "--cost"); }),
                HasSubstr("not a non-negative integer"));
    EXPECT_THAT(error_of([&] { set_cost(c, "pipe_write", "--cost"); }),
                HasSubstr("NAME=NANOSECONDS"));
}

} // namespace
} // namespace schedlab
