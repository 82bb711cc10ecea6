// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patch-set registry (patchset.h): which patch sets a kernel applies, by
 * delta or because its version merged the patch, and that a mainline kernel
 * has no hook at any hook point.
 */
#include "sched/patchset.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

using testlib::sched_fixture;

std::string applied(const kernel& k)
{
    std::string s;
    for (const sched_patchset* ps : k.patches().sets)
        s += std::string(s.empty() ? "" : " ") + ps->group;
    return s;
}

TEST(sched_patchset_registry, holds_every_patch_set_once)
{
    std::string groups;
    for (const sched_patchset* ps : sched_patchset_registry())
        groups += std::string(groups.empty() ? "" : " ") + ps->group;
    EXPECT_EQ(groups, "shared_runq sis_short stacking ni_random tg_ratelimit");
    EXPECT_EQ(find_patchset("ni_random"), &ni_random_patchset);
    EXPECT_EQ(find_patchset("tg_ratelimit"), &tg_ratelimit_patchset);
}

TEST(sched_patchset_registry, a_mainline_kernel_has_no_hook_but_its_merged_patches)
{
    for (const char* spec : {"5.15", "6.1", "6.6", "6.12", "tip-2023-08"}) {
        sched_fixture t(testlib::small_machine(2), spec);
        const patchset_hooks& h = t.k->patches();
        EXPECT_EQ(applied(*t.k), std::string(spec) == "6.12" ? "tg_ratelimit" : "") << spec;
        EXPECT_TRUE(h.enqueue_entity.empty() && h.dequeue_entity.empty() && h.feat_set.empty() &&
                    h.wake_affine_idle.empty() && h.select_idle_cpu.empty() &&
                    h.record_wakee.empty() && h.wake_wide.empty() && h.wakeup_gran.empty() &&
                    h.newidle_enter.empty() && h.newidle_gate_domain.empty() &&
                    h.newidle_overloaded.empty() && h.newidle_skip_domain.empty() &&
                    h.newidle_domain.empty() && h.newidle_balanced.empty())
            << spec;
        // 6.12 merged the ratelimit (a hook of its own kind: update_tg_load_avg).
        EXPECT_EQ(h.update_tg_load_avg.size(), std::string(spec) == "6.12" ? 1u : 0u) << spec;
    }
}

TEST(sched_patchset_registry, merged_patches_apply_without_a_delta)
{
    {
        sched_fixture t(testlib::small_machine(2), "6.18");
        EXPECT_EQ(applied(*t.k), "ni_random tg_ratelimit");
        EXPECT_EQ(t.k->patches().newidle_domain.size(), 1u);
        EXPECT_EQ(t.k->patches().newidle_balanced.size(), 1u);
    }
    {
        // NI_RANDOM switched off still keeps its statistics, as the patch does.
        sched_fixture t(testlib::small_machine(2), "6.18+NO_NI_RANDOM");
        EXPECT_EQ(applied(*t.k), "ni_random tg_ratelimit");
    }
    {
        sched_fixture t(testlib::small_machine(2), "tip-2023-12");
        EXPECT_EQ(applied(*t.k), "tg_ratelimit");
    }
}

TEST(sched_patchset_registry, deltas_apply_theirs_once_in_delta_order)
{
    {
        sched_fixture t(testlib::small_machine(2), "tip-2023-08+shared_runq_v3+tg_ratelimit");
        EXPECT_EQ(applied(*t.k), "shared_runq tg_ratelimit");
        const patchset_hooks& h = t.k->patches();
        EXPECT_EQ(h.newidle_enter.size(), 1u);
        EXPECT_EQ(h.newidle_gate_domain.size(), 1u);
        EXPECT_EQ(h.newidle_overloaded.size(), 1u);
        EXPECT_EQ(h.newidle_skip_domain.size(), 1u);
        EXPECT_EQ(h.update_tg_load_avg.size(), 1u);
    }
    {
        sched_fixture t(testlib::small_machine(2), "tip-2023-12+shared_runq_v4");
        EXPECT_EQ(applied(*t.k), "shared_runq tg_ratelimit") << "the delta's, then the merged";
    }
    patchset_hooks h;
    EXPECT_TRUE(h.add(stacking_patchset));
    EXPECT_FALSE(h.add(stacking_patchset)) << "a patch set's hooks are added once";
    EXPECT_EQ(h.wake_wide.size(), 1u);
    EXPECT_TRUE(h.has(stacking_patchset));
    EXPECT_FALSE(h.has(sis_short_patchset));
}

/*
 * The ratelimit hook: a cfs_rq of a group updates tg->load_avg at most once a
 * millisecond where the patch applies, at every change above 1/64 elsewhere.
 */
TEST(update_tg_load_avg, the_ratelimit_applies_where_the_patch_does)
{
    for (const char* spec : {"tip-2023-08", "tip-2023-08+tg_ratelimit",
                             "tip-2023-08+tg_ratelimit+NO_TG_LOAD_AVG_RATELIMIT", "tip-2023-12"}) {
        sched_fixture t(testlib::small_machine(2), spec);
        cfs_rq& cfs = t.k->cpu_rq(0).cfs;
        ASSERT_NE(cfs.tg, nullptr) << "autogroup on";
        cfs.rq_->clock_task = 10 * NSEC_PER_MSEC;
        cfs.avg.load_avg = 1024;
        cfs.tg_load_avg_contrib = 0;
        cfs.last_update_tg_load_avg = cfs.rq_->clock_task - NSEC_PER_MSEC / 2;
        const long before = cfs.tg->load_avg;
        update_tg_load_avg(*t.k, cfs, 0);
        const std::string s = spec;
        const bool limited = s == "tip-2023-08+tg_ratelimit" || s == "tip-2023-12";
        EXPECT_EQ(cfs.tg->load_avg - before, limited ? 0 : 1024) << spec;
        // A millisecond after the last update the change goes in everywhere.
        cfs.last_update_tg_load_avg = cfs.rq_->clock_task - NSEC_PER_MSEC;
        cfs.avg.load_avg = 2048;
        const long mid = cfs.tg->load_avg;
        update_tg_load_avg(*t.k, cfs, 0);
        EXPECT_EQ(cfs.tg->load_avg - mid, limited ? 2048 : 1024) << spec;
    }
}

} // namespace
} // namespace schedlab
