// SPDX-License-Identifier: GPL-2.0-only
/*
 * The reduced SHARED_RUNQ v3 fidelity check that CI runs (issue 8; the full
 * suite is bench/fidelity/shared-runq-v3.sh, scored by `schedlab fidelity`).
 * It asserts only the robust, qualitative part of Gautham R. Shenoy's result
 * on the 2-socket 512-CPU Zen4c machine (ZOc7i7wM0x4hF4vL@BLR-5CG11610CF.amd.com,
 * data/reference/shared-runq-v3-bergamo-2s): at 128 tbench clients, SHARED_RUNQ
 * v3 loses throughput against its base and the task-group ratelimit gets part
 * of the loss back. The published explosion of newly-idle balancing (DIE x400,
 * NUMA x970) is not asserted: the model produced it (x2000 at DIE) only while
 * a forked child started in zero time, which crowded tbench's 256 processes into
 * a few LLCs at start; with the children's start-up costed (start_process,
 * start_thread, start_remote) forks spread over all 32 LLCs and both arms
 * balance newly-idle about as often (docs/validation.md, "The CI check"; the
 * measurement: `git show ac26993:docs/validation.md`, "Re-run after session 4's
 * start costs (seed 1)"). The
 * counts are recorded, not checked.
 *
 * Each run simulates 512 CPUs for ~3 s; the three run side by side and took
 * 166 s in `.ci/run`'s Release build of f29702e on this project's 2-vCPU guest
 * (beside the other tests, `ctest -j 2`), so the test is built only there (not
 * in Debug or sanitizer builds).
 */
#include "experiment/run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>

namespace schedlab {
namespace {

struct tbench_outcome {
    double throughput = 0; ///< MB/s, dbench's "Throughput" line
    double newidle_die = 0, newidle_numa = 0;
};

/* One tbench -t 2 128 run on bergamo-2s. */
tbench_outcome tbench128(const std::string& kernel)
{
    run_spec spec;
    spec.machine = "bergamo-2s";
    spec.kernel = kernel;
    spec.seed = 1;
    spec.workload_argv = {"tbench", "-t", "2", "128"};
    const run_result r = execute_run(spec);
    EXPECT_TRUE(r.finished) << kernel;
    tbench_outcome o;
    for (const auto& m : r.metrics)
        if (m.name == "throughput")
            o.throughput = m.value;
    EXPECT_TRUE(r.schedstat.has_value()) << kernel;
    if (r.schedstat)
        for (const auto& c : *r.schedstat)
            if (c.idle_type == "newly_idle" && c.counter == "lb_count") {
                if (c.domain == "DIE")
                    o.newidle_die = c.value;
                else if (c.domain == "NUMA")
                    o.newidle_numa = c.value;
            }
    return o;
}

/* One test, so that its three runs share the CPUs in one process (runs share nothing). */
TEST(shared_runq_v3_bergamo, tbench_128_clients_regresses_and_the_tg_ratelimit_recovers_part)
{
    auto tip_f = std::async(std::launch::async, tbench128, "tip-2023-08");
    auto v3_f = std::async(std::launch::async, tbench128, "tip-2023-08+shared_runq_v3");
    const tbench_outcome fix = tbench128("tip-2023-08+shared_runq_v3+tg_ratelimit");
    const tbench_outcome tip = tip_f.get(), v3 = v3_f.get();
    RecordProperty("tip_mb_s", std::to_string(tip.throughput));
    RecordProperty("v3_mb_s", std::to_string(v3.throughput));
    RecordProperty("v3_tgfix_mb_s", std::to_string(fix.throughput));

    ASSERT_GT(tip.throughput, 0);
    // Seeds 1-3 lose 26-28% (published: -78.7%).
    EXPECT_LT(v3.throughput, 0.85 * tip.throughput) << "published: -78.7%";
    // Published 666 -> 281426 (DIE) and 25 -> 24234 (NUMA); see the comment at the top.
    RecordProperty("die_newidle_tip", std::to_string(tip.newidle_die));
    RecordProperty("die_newidle_v3", std::to_string(v3.newidle_die));
    RecordProperty("numa_newidle_tip", std::to_string(tip.newidle_numa));
    RecordProperty("numa_newidle_v3", std::to_string(v3.newidle_numa));
    // The task-group ratelimit gets part of the loss back (published: -78.7% -> -46.6%).
    EXPECT_GT(fix.throughput, v3.throughput);
    EXPECT_LT(fix.throughput, tip.throughput);
}

} // namespace
} // namespace schedlab
