// SPDX-License-Identifier: GPL-2.0-only
/*
 * Aaron Lu's tg->load_avg ratelimit ("tgfix"; RFC
 * 20230816024831.682107-2-aaron.lu@intel.com, merged for v6.7 as tip
 * afc1996859a2 "sched/fair: Ratelimit update to tg->load_avg"), as a
 * registered patch set (patchset.h): the delta tg_ratelimit applies it to
 * earlier bases behind the schedlab-named TG_LOAD_AVG_RATELIMIT feature, and
 * the kernels that merged it (kernel_behaviour::tg_load_avg_ratelimit:
 * tip-2023-12, 6.12 on) have it unconditionally.
 */
#include "sched/core.h"

namespace schedlab {

namespace {
/*
 * kernel: kernel/sched/fair.c update_tg_load_avg(), v6.7: return at once if
 * this cfs_rq updated tg->load_avg less than a millisecond ago (its
 * last_update_tg_load_avg, which update_tg_load_avg() sets on each update).
 * Differs: the model's clock is rq_clock_task, not sched_clock_cpu().
 */
bool tg_ratelimit_update_tg_load_avg(kernel& k, const cfs_rq& cfs)
{
    if (!k.config().behaviour.tg_load_avg_ratelimit &&
        !k.feats().test(__SCHED_FEAT_TG_LOAD_AVG_RATELIMIT))
        return false;
    return cfs.rq_->clock_task - cfs.last_update_tg_load_avg < NSEC_PER_MSEC;
}
} // namespace

const sched_patchset tg_ratelimit_patchset = {
    .group = "tg_ratelimit",
    .merged = [](const kernel_config& kc) { return kc.behaviour.tg_load_avg_ratelimit; },
    .update_tg_load_avg = tg_ratelimit_update_tg_load_avg,
};

} // namespace schedlab
