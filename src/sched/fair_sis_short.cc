// SPDX-License-Identifier: GPL-2.0-only
/*
 * SIS_SHORT v6, Chen Yu's "sched/fair: Introduce SIS_SHORT to wake up short
 * task on current CPU" (Feb 2023, base v6.2-rc6 tip, never merged;
 * cover.1677069490.git.yu.c.chen@intel.com), as the patch set of the delta
 * sis_short_v6 (patchset.h). Patch 1/2's dur_avg is kept by
 * dequeue_task_fair() in every profile; patch 2/2's two placement hooks are
 * here, registered for the delta's group "sis_short".
 */
#include "sched/core.h"

namespace schedlab {

/*
 * kernel: is_short_task(), SIS_SHORT v6 2/2: a task that flips no wakees and
 * whose average CPU time between voluntary sleeps (dur_avg, 0 until its first
 * sleep) is below an eighth of min_granularity (375 us at factor 4).
 */
bool is_short_task(const kernel& k, const task_struct& p)
{
    return sched_feat_of(k, SIS_SHORT) && !p.is_idle_task() && p.wakee_flips == 0 &&
           p.se.dur_avg != 0 && p.se.dur_avg * 8 < k.tunables().min_granularity;
}

/*
 * kernel: wake_affine_idle() + SIS_SHORT v6 2/2 (hook A): as a last choice, the
 * waker's CPU when it runs only one task and that task is short, sync or not.
 * -1: no choice.
 */
int sis_short_wake_affine(kernel& k, int this_cpu)
{
    if (!sched_feat_of(k, SIS_SHORT))
        return -1;
    rq& this_rq = k.cpu_rq(this_cpu);
    if (this_rq.nr_running == 1 && this_rq.curr && is_short_task(k, *this_rq.curr)) {
        this_rq.stats.sis_short_affine++;
        return this_cpu;
    }
    return -1;
}

/*
 * kernel: select_idle_cpu() + SIS_SHORT v6 2/2 (hook B): no scan when SIS_UTIL
 * asks for less than 60% of the LLC (LLC util above ~50%), no idle core is
 * known, the wakeup is on the waker's CPU, which runs at most one task, and
 * both it and p are short.
 */
bool sis_short_select_idle_cpu(kernel& k, task_struct& p, const sched_domain& sd,
                               bool has_idle_core, int target, int nr)
{
    rq& this_rq = k.cpu_rq(k.smp_processor_id());
    if (sched_feat_of(k, SIS_SHORT) && !has_idle_core && k.smp_processor_id() == target &&
        5 * nr < 3 * sd.span_weight && k.cpu_rq(target).nr_running <= 1 &&
        is_short_task(k, p) && this_rq.curr && is_short_task(k, *this_rq.curr)) {
        this_rq.stats.sis_short_target++;
        return true;
    }
    return false;
}

const sched_patchset sis_short_patchset = {
    .group = "sis_short",
    .wake_affine_idle = [](kernel& k, int this_cpu) { return sis_short_wake_affine(k, this_cpu); },
    .select_idle_cpu = [](kernel& k, task_struct& p, const sched_domain& sd, bool has_idle_core,
                          int target, int nr) {
        return sis_short_select_idle_cpu(k, p, sd, has_idle_core, target, nr);
    },
};

} // namespace schedlab
