// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * SHARED_RUNQ v3/v4 (fair_shared_runq.cc), a patch set that hooks in through
 * the registry (patchset.h): its functions are free functions of the patch's
 * names taking the kernel first, called only from its hooks (and the stats and
 * tests), so a kernel without the patch runs none of them. Its state: per CPU
 * rq->srq and rq->shard_idx (the patch's rq->cfs.shared_runq and shard), per
 * task p->shard and p->shard_node, and kernel-wide the queues themselves and
 * their counters in struct shared_runq_state, which the kernel owns
 * (kernel::srq()).
 */
#include "sched/sched.h"

#include <memory>
#include <vector>

namespace schedlab {

class kernel;

/// SHARED_RUNQ's kernel-wide state: empty unless the patch set is applied.
struct shared_runq_state {
    std::vector<std::unique_ptr<shared_runq>> shared_runqs; ///< one per LLC
    shared_runq_stats stats;
};

bool shared_runq_active(const kernel& k);
void shared_runq_init(kernel& k);
void shared_runq_enqueue_task(kernel& k, rq& r, task_struct& p);
void shared_runq_dequeue_task(kernel& k, task_struct& p);
int shared_runq_pick_next_task(kernel& k, rq& r);
void shared_runq_drain(kernel& k);

} // namespace schedlab
