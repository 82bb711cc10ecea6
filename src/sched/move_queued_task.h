// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The move of a queued task between two locked runqueues, shared by the rt and dl
 * push/pull paths (rt.cc, deadline.cc).
 */
#include "sched/core.h"

namespace schedlab {

/*
 * model: the move push_rt_task()/pull_rt_task() and push_dl_task()/pull_dl_task() make
 * with both rq locks held (6.6: deactivate_task(), set_task_cpu(), activate_task()), the
 * sequence later kernels name move_queued_task_locked(). Differs: the locks are charged
 * by the callers (find_lock_lowest_rq(), find_lock_later_rq(), the pulls), not here.
 */
inline void move_queued_task_locked(kernel& k, rq& src, rq& dst, task_struct& p)
{
    k.deactivate_task(src, p, 0);
    k.set_task_cpu(p, dst.cpu);
    k.update_rq_clock(dst);
    k.activate_task(dst, p, 0);
}

} // namespace schedlab
