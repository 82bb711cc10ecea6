// SPDX-License-Identifier: GPL-2.0-only
/*
 * Work conservation (Wasted-Cores style, see testlib::wasted_cores_checker)
 * under hackbench on every machine preset: the wakeup path and all three
 * balancing paths (newly idle, periodic, NOHZ idle) together must not leave
 * a CPU idle beyond the kernel's own balancing bound while a task waits in
 * a domain it shares.
 */
#include "sched/testlib.h"
#include "workload/registry.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

class hackbench_work_conservation : public ::testing::TestWithParam<const char*> {};

TEST_P(hackbench_work_conservation, no_cpu_idles_past_its_balance_bound_while_work_waits)
{
    const machine m = load_machine(GetParam());
    testlib::sched_fixture t(m, "6.6", 11, "", cost_params{});
    t.k->set_check_level(check_level::sampled, 4096);
    // Enough groups to oversubscribe the machine (40 tasks per group).
    const int groups = std::max(2, m.nr_cpus() / 20);
    auto w = make_workload({"perf", "bench", "sched", "messaging", "-g", std::to_string(groups),
                            "-l", "30"});
    w->setup(t.k->sys());
    testlib::wasted_cores_checker check(*t.k);
    while (!w->finished() && t.sim.now() < secs(20)) {
        t.run_for(usecs(100));
        check.sample();
    }
    ASSERT_TRUE(w->finished());
    EXPECT_EQ(check.worst, 0) << check.worst_what;
}

INSTANTIATE_TEST_SUITE_P(presets, hackbench_work_conservation,
                         ::testing::Values("skylake-18c", "ryzen-7950x", "milan-2s", "spr-2s",
                                           "bergamo-2s", "icelake-2s", "host"),
                         [](const auto& param_info) {
                             std::string s = param_info.param;
                             for (char& c : s)
                                 if (c == '-')
                                     c = '_';
                             return s;
                         });

} // namespace
} // namespace schedlab
