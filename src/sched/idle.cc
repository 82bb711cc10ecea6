// SPDX-License-Identifier: GPL-2.0-only
/*
 * The idle scheduling class (kernel/sched/idle.c): the last class in the
 * order, whose only task is each CPU's idle task (swapper/N), picked when no
 * other class has one. The idle loop itself (cpuidle, the C-state) is the
 * cost model's (cost_model.h idle_select) and __schedule()'s.
 */
#include "sched/core.h"

#include "sim/bug.h"

namespace schedlab {

namespace {

/*
 * kernel: kernel/sched/idle.c select_task_rq_idle(), 6.6: an idle task stays
 * on its CPU (it is never woken through try_to_wake_up() here).
 */
int select_task_rq_idle(kernel& /*k*/, task_struct& p, int /*prev_cpu*/, int /*wake_flags*/)
{
    return p.cpu;
}

// kernel: kernel/sched/idle.c wakeup_preempt_idle() (check_preempt_curr_idle() in 6.6).
void wakeup_preempt_idle(kernel& k, rq& r, task_struct& /*p*/, int /*wake_flags*/)
{
    k.resched_curr(r);
}

/*
 * kernel: kernel/sched/idle.c pick_next_task_idle() + set_next_task_idle(), 6.6.
 * Differs: set_next_task_idle()'s update_idle_core() runs in __schedule() only
 * when the CPU switches to its idle task, not again when it stays idle.
 */
task_struct* pick_next_task_idle(kernel& /*k*/, rq& r, task_struct* /*prev*/)
{
    r.stats.sched_goidle++;
    r.idle->se.exec_start = r.clock_task; // 6.12, for the fair server's idle time
    return r.idle;
}

// kernel: kernel/sched/idle.c has no enqueue_task; dequeue_task_idle() reports the bug.
void enqueue_task_idle(kernel& /*k*/, rq& r, task_struct& p, int /*flags*/)
{
    SIM_BUG_ON(true, "cpu{}: enqueue of idle task pid {}", r.cpu, p.pid);
}

bool dequeue_task_idle(kernel& /*k*/, rq& r, task_struct& p, int /*flags*/)
{
    SIM_BUG_ON(true, "cpu{}: bad: scheduling from the idle thread (pid {})", r.cpu, p.pid);
    return true;
}

// kernel: kernel/sched/idle.c put_prev_task_idle(), 6.6: nothing to do; 6.12: the fair
// server's idle time (the core's fast path calls it too, as pick_next_task_fair() does).
void put_prev_task_idle(kernel& k, rq& r, task_struct& prev)
{
    if (k.config().behaviour.fair_server)
        dl_server_update_idle_time(k, r, prev);
}

// kernel: kernel/sched/idle.c task_tick_idle(), 6.6: nothing to do.
void task_tick_idle(kernel& /*k*/, rq& /*r*/, task_struct& /*curr*/, int /*queued*/) {}

} // namespace

// kernel: kernel/sched/idle.c DEFINE_SCHED_CLASS(idle), 6.6 (the hooks the model calls).
const sched_class idle_sched_class = {
    .name = "idle",
    .order = 5,
    .policies = 0,
    .enqueue_task = enqueue_task_idle,
    .dequeue_task = dequeue_task_idle,
    .wakeup_preempt = wakeup_preempt_idle,
    .pick_next_task = pick_next_task_idle,
    .select_task_rq = select_task_rq_idle,
    .task_tick = task_tick_idle,
    .put_prev_task = put_prev_task_idle,
};

} // namespace schedlab
