// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task placement: select_task_rq_fair() and the idle-CPU searches.
 *
 * This is the placeholder rule of the core issue, deliberately simple and
 * documented as such in docs/kernel-map.md: no wake_affine, no wake_wide,
 * no SIS_UTIL/SIS_PROP scan limit, no find_idlest_group hierarchy. The
 * mainline wakeup path replaces these bodies without changing the callers.
 */
#include "sched/core.h"

namespace schedlab {

/*
 * kernel: kernel/sched/fair.c select_task_rq_fair(), 6.6 - simplified:
 * fork/exec take the slow path (find_idlest_cpu), wakeups the fast path
 * (select_idle_sibling around prev_cpu). wake_affine and the domain walk are
 * not modelled yet, so a wakee never moves towards its waker's LLC.
 */
int kernel::select_task_rq_fair(task_struct& p, int prev_cpu, int wake_flags)
{
    if (wake_flags & (WF_FORK | WF_EXEC))
        return find_idlest_cpu(p, smp_processor_id());
    return select_idle_sibling(p, prev_cpu, prev_cpu);
}

/*
 * kernel: kernel/sched/fair.c select_idle_sibling(), 6.6 - simplified: target
 * if idle, else the first idle CPU of target's LLC in wrap-around order from
 * target + 1 (no scan limit, no idle-core preference), else target.
 */
int kernel::select_idle_sibling(task_struct& p, int prev, int target)
{
    (void)prev;
    if (p.cpus_mask.test(target) && idle_cpu(target))
        return target;
    const cpu_sched_domains& cd = topo_.cpu(target);
    if (!cd.sd_llc)
        return target;
    int found = -1;
    for_each_cpu_wrap(cd.sd_llc->span, target + 1, [&](int cpu) {
        if (p.cpus_mask.test(cpu) && idle_cpu(cpu)) {
            found = cpu;
            return false;
        }
        return true;
    });
    return found >= 0 ? found : target;
}

/*
 * kernel: kernel/sched/fair.c find_idlest_cpu() (sched_balance_find_dst_cpu()
 * from 6.10) - simplified: the allowed CPU with the fewest runnable tasks,
 * idle CPUs first, scanning from the forking CPU in wrap-around order; no
 * group hierarchy, load or NUMA imbalance rules.
 */
int kernel::find_idlest_cpu(task_struct& p, int cpu)
{
    int best = -1;
    unsigned best_nr = ~0u;
    for_each_cpu_wrap(p.cpus_mask, cpu, [&](int i) {
        const unsigned nr = idle_cpu(i) ? 0 : cpu_rq(i).nr_running + 1;
        if (nr < best_nr) {
            best_nr = nr;
            best = i;
        }
        return best_nr != 0;
    });
    return best >= 0 ? best : p.cpus_mask.first();
}

} // namespace schedlab
