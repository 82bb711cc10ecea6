// SPDX-License-Identifier: GPL-2.0-only
/*
 * NI_RANDOM, Peter Zijlstra's proportional newidle balance (v6.19,
 * 33cf66d88306 "sched/fair: Proportional newidle balance"; backported to
 * 6.18.5), as a registered patch set (patchset.h): a merged patch, so no
 * delta applies it; every kernel whose profile has the NI_RANDOM feature
 * has it (the 6.18 profile).
 *
 * sched_balance_newidle() tries each domain with the probability of its
 * recent success rate (a 1024-sided die against 1 + newidle_ratio), and a
 * success then counts 1024 / (1 + ratio) times, standing for the attempts
 * skipped, so that the ratio estimates the unskipped rate. The statistics
 * are kept whether or not the feature bit is set, as the patch keeps them.
 */
#include "sched/core.h"

#include <fmt/format.h>

namespace schedlab {

/*
 * kernel: kernel/sched/fair.c update_newidle_stats(), v6.19 (6.18.5 stable):
 * count a newidle attempt and its weighted success; every 1024 attempts the
 * success count becomes the ratio and both counts halve (a decaying window).
 * Differs: called for every attempt; the kernel's `if (cost)` guard (the
 * attempt took measurable time) always holds there, not with zero model costs.
 */
void update_newidle_stats(sched_domain& sd, u32 success)
{
    ++sd.newidle_call;
    sd.newidle_success += success;
    if (sd.newidle_call >= 1024) {
        sd.newidle_ratio = sd.newidle_success;
        sd.newidle_call /= 2;
        sd.newidle_success /= 2;
    }
}

namespace {
/*
 * kernel: sched_balance_newidle()'s domain loop, v6.19: with NI_RANDOM, throw
 * the die (sched_rng(): the CPU's own stream) and skip sd, counting a failed
 * attempt, unless it lands at or below 1 + newidle_ratio; a success then
 * weighs (1024 + weight / 2) / weight. Without the bit every domain is tried
 * with weight 1.
 */
u32 ni_random_newidle_domain(kernel& k, rq& this_rq, sched_domain& sd)
{
    if (!k.feats().test(__SCHED_FEAT_NI_RANDOM))
        return 1;
    const u32 d1k = static_cast<u32>(this_rq.sched_rnd_state.next_u64() >> 32) % 1024;
    const u32 weight = 1 + sd.newidle_ratio;
    if (d1k > weight) {
        update_newidle_stats(sd, 0);
        if (k.decisions().on())
            k.decisions().log(k.now(), this_rq.cpu, "newidle_balance",
                              fmt::format("{}: NI_RANDOM skip (die {} > 1 + newidle_ratio {})",
                                          sd.name, d1k, sd.newidle_ratio));
        return 0;
    }
    return (1024 + weight / 2) / weight;
}
} // namespace

const sched_patchset ni_random_patchset = {
    .group = "ni_random",
    .merged = [](const kernel_config& kc) { return kc.has_feature(__SCHED_FEAT_NI_RANDOM); },
    .newidle_domain = ni_random_newidle_domain,
    // kernel: sched_balance_newidle(), after sched_balance_rq(): the attempt's weighted success.
    .newidle_balanced = [](kernel&, sched_domain& sd,
                           u32 success) { update_newidle_stats(sd, success); },
};

} // namespace schedlab
