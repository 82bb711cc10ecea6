// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mel Gorman's "Reduce stacking and overscheduling" (Oct 2021, base
 * 5.15-rc3, never merged; 20211021145603.5313-1-mgorman@techsingularity.net,
 * patch 2 resent as 20220124100312.32573-1-mgorman@techsingularity.net), as
 * the patch set of the delta `stacking` (patchset.h): patch 1
 * COUPLE_WAKEE_FLIPS (with Mike Galbraith) in record_wakee() and wake_wide(),
 * patch 2 SCALE_WAKEUP_GRAN in CFS's wakeup_gran(). Each hook tests its
 * feature bit, which the delta turns on.
 */
#include "sched/core.h"

namespace schedlab {

namespace {

bool feat(const kernel& k, sched_feat_id f)
{
    return k.feats().test(f);
}

/*
 * kernel: record_wakee() + COUPLE_WAKEE_FLIPS (patch 1): the wakee of a waker
 * with more than 2 * llc_size times its flips gains a flip too.
 */
void record_wakee_coupled(kernel& k, task_struct& waker, task_struct& wakee)
{
    if (!feat(k, __SCHED_FEAT_COUPLE_WAKEE_FLIPS))
        return;
    const int cpu = k.smp_processor_id();
    const u32 min = static_cast<u32>(k.topology().cpu(cpu).sd_llc_size) << 1;
    if (waker.wakee_flips > wakee.wakee_flips * min) {
        wakee.wakee_flips++;
        k.cpu_rq(cpu).stats.wakee_flips_coupled++;
    }
}

/*
 * kernel: wake_wide() + COUPLE_WAKEE_FLIPS (patch 1): a slave below the factor
 * no longer keeps the wakeup affine once the master's flips reach
 * (factor / 2) * factor.
 */
int wake_wide_coupled(kernel& k, u32 master, u32 slave, u32 factor)
{
    if (!feat(k, __SCHED_FEAT_COUPLE_WAKEE_FLIPS))
        return -1;
    if ((slave < factor && master < (factor >> 1) * factor) || master < slave * factor)
        return 0;
    return 1;
}

/*
 * kernel: wakeup_gran() + SCALE_WAKEUP_GRAN (patch 2, 6.5-era CFS): plus
 * min_granularity while curr has run less than min_granularity since it was
 * last picked.
 */
u64 wakeup_gran_scaled(const kernel& k, const sched_entity& curr, u64 gran)
{
    const u64 min_gran = k.tunables().min_granularity;
    if (feat(k, __SCHED_FEAT_SCALE_WAKEUP_GRAN) &&
        curr.sum_exec_runtime - curr.prev_sum_exec_runtime < min_gran)
        gran += min_gran;
    return gran;
}

} // namespace

const sched_patchset stacking_patchset = {
    .group = "stacking",
    .record_wakee = record_wakee_coupled,
    .wake_wide = wake_wide_coupled,
    .wakeup_gran = wakeup_gran_scaled,
};

} // namespace schedlab
