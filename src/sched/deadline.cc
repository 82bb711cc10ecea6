// SPDX-License-Identifier: GPL-2.0-only
/*
 * The deadline scheduling class (kernel/sched/deadline.c, cpudeadline.c):
 * SCHED_DEADLINE tasks in an EDF queue per CPU above the rt class, each a
 * constant-bandwidth server (runtime per period, throttled at exhaustion until
 * its replenishment timer), admitted by sched_setattr() against the root
 * domain's bandwidth; global EDF by push and pull through cpudl; and, in the
 * profiles that have it (v6.12+), the fair server: a deferred dl_server per CPU
 * that runs fair tasks starved by RT ones for 50 ms of each second.
 * docs/classes.md says what is modelled and what is not.
 *
 * Read against kernel/sched/deadline.c and cpudeadline.c of v5.15, v6.6 and
 * v6.12. The versions differ here in: the DL-overload rule (dl_nr_migratory up
 * to v6.6; from v6.7, 5fe7765997b1, a pushable task: the same series as the rt
 * class's 612f769edd06, kernel_behaviour::rt_overload_pushable), whether DL
 * runtime counts against the root rt_rq's bandwidth (while it exists:
 * kernel_behaviour::rt_bandwidth_default) and the fair server
 * (kernel_behaviour::fair_server). The class's functions are free functions
 * reached through dl_sched_class; they keep the kernel's names.
 */
#include "sched/core.h"
#include "sched/move_queued_task.h"

#include "sim/bug.h"

#include <fmt/format.h>

#include <limits>

namespace schedlab {

namespace {

/// kernel: kernel/sched/deadline.c sysctl_sched_dl_period_max / _min (us), v5.9+
/// (Message-ID 20190726161357.397880775@infradead.org).
constexpr u64 sysctl_sched_dl_period_max = 1ULL << 22;
constexpr u64 sysctl_sched_dl_period_min = 100;
/// kernel: kernel/sched/deadline.c dl_server_min_res, v6.12 (a110a81c52a9).
constexpr u64 dl_server_min_res = 1'000'000;
/// kernel: kernel/sched/deadline.c the fair server's parameters, v6.12: 50 ms per 1 s.
constexpr u64 fair_server_runtime = 50'000'000;
constexpr u64 fair_server_period = 1'000'000'000;

bool dl_time_before(u64 a, u64 b)
{
    return static_cast<s64>(a - b) < 0;
}

bool dl_entity_preempt(const sched_dl_entity& a, const sched_dl_entity& b)
{
    return dl_time_before(a.deadline, b.deadline);
}

bool dl_task(const task_struct& p)
{
    return p.sched_class == &dl_sched_class;
}

bool dl_is_implicit(const sched_dl_entity& dl_se)
{
    return dl_se.dl_deadline == dl_se.dl_period;
}

bool dl_runtime_exceeded(const sched_dl_entity& dl_se)
{
    return dl_se.runtime <= 0;
}

rq& rq_of_dl_se(kernel& k, sched_dl_entity& dl_se)
{
    return dl_se.dl_server ? *dl_se.rq_ : k.cpu_rq(dl_se.owner->cpu);
}

bool is_leftmost(const sched_dl_entity& dl_se, const dl_rq& dl)
{
    return dl_se.on_rq && !dl.root.empty() && dl.root.begin()->second == &dl_se;
}

bool has_pushable_dl_tasks(const rq& r)
{
    return !r.dl.pushable_dl_tasks_root.empty();
}

bool dl_task_is_earliest_deadline(const task_struct& p, const rq& r)
{
    return !r.dl.dl_nr_running || dl_time_before(p.dl.deadline, r.dl.earliest_dl.curr);
}

/* ---- cpudl (kernel/sched/cpudeadline.c) ---- */

/// kernel: cpudeadline.c cpudl_maximum(): the CPU whose earliest deadline is the latest.
/// Differs: a heap in the kernel, whose root among equal deadlines depends on its history;
/// the lowest CPU number here. -1: no CPU has DL tasks.
int cpudl_maximum(const cpudl& cp)
{
    int best = -1;
    for (std::size_t cpu = 0; cpu < cp.dl.size(); ++cpu)
        if (cp.valid[cpu] && (best < 0 || dl_time_before(cp.dl[static_cast<std::size_t>(best)],
                                                         cp.dl[cpu])))
            best = static_cast<int>(cpu);
    return best;
}

// kernel: cpudeadline.c cpudl_set(), 6.6: cpu's earliest deadline; it is no longer free.
void cpudl_set(cpudl& cp, int cpu, u64 dl)
{
    cp.dl[static_cast<std::size_t>(cpu)] = dl;
    cp.valid[static_cast<std::size_t>(cpu)] = true;
    cp.free_cpus.clear(cpu);
}

// kernel: cpudeadline.c cpudl_clear(), 6.6: cpu has no DL task.
void cpudl_clear(cpudl& cp, int cpu)
{
    cp.valid[static_cast<std::size_t>(cpu)] = false;
    cp.free_cpus.set(cpu);
}

/*
 * kernel: cpudeadline.c cpudl_find(), 6.6 (no capacity fitness): with a mask, the free
 * CPUs p may use; else (or with none free) the CPU of the latest earliest deadline,
 * if p may run there and its deadline is earlier.
 */
bool cpudl_find(const cpudl& cp, const task_struct& p, cpumask* later_mask)
{
    if (later_mask) {
        *later_mask = cp.free_cpus & p.cpus_mask;
        if (!later_mask->empty())
            return true;
    }
    const int best_cpu = cpudl_maximum(cp);
    if (best_cpu >= 0 && p.cpus_mask.test(best_cpu) &&
        dl_time_before(p.dl.deadline, cp.dl[static_cast<std::size_t>(best_cpu)])) {
        if (later_mask)
            later_mask->set(best_cpu);
        return true;
    }
    return false;
}

/* ---- overload and the pushable tree ---- */

// kernel: deadline.c dl_set_overload() / dl_clear_overload(), 6.6.
void dl_set_overload(kernel& k, rq& r)
{
    k.rd().dlo_mask.set(r.cpu);
    ++k.rd().dlo_count;
    r.dl.overloaded = true;
}

void dl_clear_overload(kernel& k, rq& r)
{
    --k.rd().dlo_count;
    k.rd().dlo_mask.clear(r.cpu);
    r.dl.overloaded = false;
}

// kernel: deadline.c update_dl_migration(), <= 6.6 (removed by 5fe7765997b1, v6.7).
void update_dl_migration(kernel& k, rq& r)
{
    if (r.dl.dl_nr_migratory && r.dl.dl_nr_running > 1) {
        if (!r.dl.overloaded)
            dl_set_overload(k, r);
    } else if (r.dl.overloaded) {
        dl_clear_overload(k, r);
    }
}

/*
 * kernel: deadline.c enqueue_pushable_dl_task(), 6.6 / 6.12: an rbtree by deadline;
 * earliest_dl.next follows its leftmost; from v6.7 a pushable task makes the CPU
 * DL-overloaded.
 */
void enqueue_pushable_dl_task(kernel& k, rq& r, task_struct& p)
{
    SIM_BUG_ON(p.dl.on_pushable, "pid {} is pushable twice", p.pid);
    auto& root = r.dl.pushable_dl_tasks_root;
    p.dl.pushable_node = root.emplace_hint(root.upper_bound(p.dl.deadline), p.dl.deadline, &p);
    p.dl.on_pushable = true;
    if (p.dl.pushable_node == root.begin())
        r.dl.earliest_dl.next = p.dl.deadline;
    if (k.config().behaviour.rt_overload_pushable && !r.dl.overloaded)
        dl_set_overload(k, r);
}

// kernel: deadline.c dequeue_pushable_dl_task(), 6.6 / 6.12.
void dequeue_pushable_dl_task(kernel& k, rq& r, task_struct& p)
{
    if (!p.dl.on_pushable)
        return;
    auto& root = r.dl.pushable_dl_tasks_root;
    const bool leftmost = p.dl.pushable_node == root.begin();
    auto next = root.erase(p.dl.pushable_node);
    p.dl.on_pushable = false;
    if (leftmost && next != root.end())
        r.dl.earliest_dl.next = next->first;
    if (k.config().behaviour.rt_overload_pushable && root.empty() && r.dl.overloaded)
        dl_clear_overload(k, r);
}

/* ---- the dl_rq ---- */

// kernel: deadline.c inc_dl_deadline(), 6.6: the first DL task marks the CPU CPUPRI_HIGHER.
void inc_dl_deadline(kernel& k, rq& r, u64 deadline)
{
    dl_rq& dl = r.dl;
    if (dl.earliest_dl.curr == 0 || dl_time_before(deadline, dl.earliest_dl.curr)) {
        if (dl.earliest_dl.curr == 0)
            cpupri_set(k.rd().cpupri, r.cpu, MAX_RT_PRIO); // CPUPRI_HIGHER (b13772f8135c, v5.11)
        dl.earliest_dl.curr = deadline;
        cpudl_set(k.rd().cpudl, r.cpu, deadline);
    }
}

// kernel: deadline.c dec_dl_deadline(), 6.6.
void dec_dl_deadline(kernel& k, rq& r)
{
    dl_rq& dl = r.dl;
    if (!dl.dl_nr_running) {
        dl.earliest_dl.curr = 0;
        dl.earliest_dl.next = 0;
        cpudl_clear(k.rd().cpudl, r.cpu);
        cpupri_set(k.rd().cpupri, r.cpu, r.rt.highest_prio.curr);
    } else {
        dl.earliest_dl.curr = dl.root.begin()->first;
        cpudl_set(k.rd().cpudl, r.cpu, dl.earliest_dl.curr);
    }
}

/*
 * kernel: deadline.c inc_dl_tasks() / dec_dl_tasks(), 6.6 (inc_dl_migration <= 6.6) and
 * 6.12 (a server is counted in dl_nr_running but not in rq->nr_running).
 */
void inc_dl_tasks(kernel& k, rq& r, sched_dl_entity& dl_se)
{
    ++r.dl.dl_nr_running;
    if (!dl_se.dl_server) {
        add_nr_running(r, 1);
        k.lb().lb_stats_changed(r.cpu);
    }
    inc_dl_deadline(k, r, dl_se.deadline);
    if (!k.config().behaviour.rt_overload_pushable && !dl_se.dl_server) {
        if (dl_se.owner->nr_cpus_allowed > 1)
            ++r.dl.dl_nr_migratory;
        update_dl_migration(k, r);
    }
}

void dec_dl_tasks(kernel& k, rq& r, sched_dl_entity& dl_se)
{
    SIM_BUG_ON(!r.dl.dl_nr_running, "cpu{}: dl_nr_running underflow", r.cpu);
    --r.dl.dl_nr_running;
    if (!dl_se.dl_server) {
        SIM_BUG_ON(!r.nr_running, "cpu{}: nr_running underflow (dl)", r.cpu);
        sub_nr_running(r, 1);
        k.lb().lb_stats_changed(r.cpu);
    }
    dec_dl_deadline(k, r);
    if (!k.config().behaviour.rt_overload_pushable && !dl_se.dl_server) {
        if (dl_se.owner->nr_cpus_allowed > 1)
            --r.dl.dl_nr_migratory;
        update_dl_migration(k, r);
    }
}

// kernel: deadline.c __enqueue_dl_entity(), 6.6: into the tree by deadline, FIFO on ties.
void __enqueue_dl_entity(kernel& k, sched_dl_entity& dl_se)
{
    rq& r = rq_of_dl_se(k, dl_se);
    SIM_BUG_ON(dl_se.on_rq, "dl entity enqueued twice on cpu{}", r.cpu);
    dl_se.rb_node = r.dl.root.emplace_hint(r.dl.root.upper_bound(dl_se.deadline), dl_se.deadline,
                                           &dl_se);
    dl_se.on_rq = true;
    inc_dl_tasks(k, r, dl_se);
}

// kernel: deadline.c __dequeue_dl_entity(), 6.6.
void __dequeue_dl_entity(kernel& k, sched_dl_entity& dl_se)
{
    if (!dl_se.on_rq)
        return;
    rq& r = rq_of_dl_se(k, dl_se);
    r.dl.root.erase(dl_se.rb_node);
    dl_se.on_rq = false;
    dec_dl_tasks(k, r, dl_se);
}

/* ---- the constant-bandwidth server ---- */

/*
 * kernel: deadline.c replenish_dl_new_period(), 6.6 / 6.12: a new instance from now;
 * a deferred server (6.12) not running for a starvation waits for its zero-laxity time.
 */
void replenish_dl_new_period(sched_dl_entity& dl_se, const rq& r)
{
    dl_se.deadline = r.clock + dl_se.dl_deadline;
    dl_se.runtime = static_cast<s64>(dl_se.dl_runtime);
    if (dl_se.dl_defer && !dl_se.dl_defer_running) {
        dl_se.dl_throttled = true;
        dl_se.dl_defer_armed = true;
    }
}

// kernel: deadline.c setup_new_dl_entity(), 6.6.
void setup_new_dl_entity(kernel& k, sched_dl_entity& dl_se)
{
    if (dl_se.dl_throttled)
        return;
    replenish_dl_new_period(dl_se, rq_of_dl_se(k, dl_se));
}

/*
 * kernel: deadline.c start_dl_timer(), 6.6 / 6.12: the replenishment timer at the next
 * period (a deferred server's at its zero-laxity time, deadline - runtime), an rq-clock
 * time moved to the timer's clock by their difference now. False: that time is more
 * than a microsecond past (ktime_us_delta() < 0); an armed timer stays.
 */
bool start_dl_timer(kernel& k, sched_dl_entity& dl_se)
{
    const rq& r = rq_of_dl_se(k, dl_se);
    u64 act = dl_se.dl_defer_armed ? dl_se.deadline - static_cast<u64>(dl_se.runtime)
                                    : dl_se.deadline - dl_se.dl_deadline + dl_se.dl_period;
    const s64 now = k.now();
    act += static_cast<u64>(now) - r.clock; // delta = now - rq_clock(rq)
    if ((static_cast<s64>(act) - now) / 1000 < 0)
        return false;
    if (!k.sim().pending(dl_se.dl_timer)) {
        const u64 arg = dl_se.dl_server ? dl_state::SERVER_BIT | static_cast<u64>(dl_se.rq_->cpu)
                                        : static_cast<u64>(dl_se.owner->pid);
        dl_se.dl_timer = k.sim().at(std::max<s64>(static_cast<s64>(act), now),
                                    event_prio::hrtimer, &k.dl(), arg);
    }
    return true;
}

void cancel_dl_timer(kernel& k, sched_dl_entity& dl_se)
{
    if (k.sim().pending(dl_se.dl_timer))
        k.sim().cancel(dl_se.dl_timer);
    dl_se.dl_timer = {};
}

bool dl_entity_overflow(const sched_dl_entity& dl_se, u64 t);

/*
 * kernel: deadline.c replenish_dl_entity(), 6.6 / 6.12: whole periods are added until
 * the runtime is positive; an instance that lagged behind now restarts from now. A
 * deferred server (6.12) replenished at its zero-laxity time whose runtime no longer
 * fits before its deadline gets a new period from now; one not running for a starvation
 * is throttled again and armed for its zero-laxity time.
 */
void replenish_dl_entity(kernel& k, sched_dl_entity& dl_se)
{
    rq& r = rq_of_dl_se(k, dl_se);
    SIM_BUG_ON(dl_se.dl_runtime == 0, "replenishing a DL entity without runtime");
    if (dl_se.dl_deadline == 0 || (dl_se.dl_defer_armed && dl_entity_overflow(dl_se, r.clock))) {
        dl_se.deadline = r.clock + dl_se.dl_deadline;
        dl_se.runtime = static_cast<s64>(dl_se.dl_runtime);
    }
    if (dl_se.dl_yielded && dl_se.runtime > 0)
        dl_se.runtime = 0;
    while (dl_se.runtime <= 0) {
        dl_se.deadline += dl_se.dl_period;
        dl_se.runtime += static_cast<s64>(dl_se.dl_runtime);
    }
    if (dl_time_before(dl_se.deadline, r.clock)) // "sched: DL replenish lagged too much"
        replenish_dl_new_period(dl_se, r);
    dl_se.dl_yielded = false;
    dl_se.dl_throttled = false;
    if (dl_se.dl_defer_armed) {
        dl_se.dl_defer_armed = false;
        return;
    }
    if (dl_se.dl_defer && !dl_se.dl_defer_running &&
        dl_time_before(r.clock, dl_se.deadline - static_cast<u64>(dl_se.runtime)) &&
        rq_root_cfs(r).nr_running) { // server_has_tasks(): fair_server_has_tasks()
        dl_se.dl_defer_armed = true;
        dl_se.dl_throttled = true;
        if (!start_dl_timer(k, dl_se)) {
            cancel_dl_timer(k, dl_se);
            dl_se.dl_defer_armed = false;
            dl_se.dl_throttled = false;
        }
    }
}

/*
 * kernel: deadline.c dl_entity_overflow(), 6.6: would the remaining runtime, used
 * before the current deadline, exceed the reserved density? (runtime / (deadline - t)
 * > dl_runtime / dl_deadline, cross-multiplied in units of 1 << DL_SCALE ns.)
 */
bool dl_entity_overflow(const sched_dl_entity& dl_se, u64 t)
{
    const u64 left = (dl_se.dl_deadline >> DL_SCALE) * (static_cast<u64>(dl_se.runtime) >> DL_SCALE);
    const u64 right = ((dl_se.deadline - t) >> DL_SCALE) * (dl_se.dl_runtime >> DL_SCALE);
    return dl_time_before(right, left);
}

// kernel: deadline.c update_dl_revised_wakeup(), 6.6: a constrained task keeps its
// deadline with the runtime its density allows until then.
void update_dl_revised_wakeup(sched_dl_entity& dl_se, const rq& r)
{
    const u64 laxity = dl_se.deadline - r.clock;
    dl_se.runtime = static_cast<s64>((dl_se.dl_density * laxity) >> BW_SHIFT);
}

/*
 * kernel: deadline.c update_dl_entity(), 6.6 / 6.12: the CBS wakeup rule. A past
 * deadline, or a remaining runtime that would overflow the bandwidth until it, starts
 * a new instance (a constrained task that is not late gets the revised wakeup instead).
 * A deferred server (6.12) that keeps its deadline is armed unless running.
 */
void update_dl_entity(kernel& k, sched_dl_entity& dl_se)
{
    rq& r = rq_of_dl_se(k, dl_se);
    if (dl_time_before(dl_se.deadline, r.clock) || dl_entity_overflow(dl_se, r.clock)) {
        if (!dl_is_implicit(dl_se) && !dl_time_before(dl_se.deadline, r.clock)) {
            update_dl_revised_wakeup(dl_se, r);
            return;
        }
        replenish_dl_new_period(dl_se, r);
    } else if (dl_se.dl_server && dl_se.dl_defer && !dl_se.dl_defer_running) {
        dl_se.dl_defer_armed = true;
        dl_se.dl_throttled = true;
    }
}

/*
 * kernel: deadline.c enqueue_dl_entity(), 6.6 / 6.12: the wakeup rule at a wakeup, a
 * replenishment when the timer (or an exhausted runtime without one) asks for it, a new
 * instance for a task that never ran (the kernel's sched_setattr() path, ENQUEUE_RESTORE
 * with a zero deadline: model: a task is created with its policy). A server that is
 * still throttled (deferred) waits for its timer instead.
 */
void enqueue_dl_entity(kernel& k, sched_dl_entity& dl_se, int flags)
{
    if (flags & ENQUEUE_WAKEUP)
        update_dl_entity(k, dl_se);
    else if (flags & ENQUEUE_REPLENISH)
        replenish_dl_entity(k, dl_se);
    else if (dl_se.deadline == 0)
        setup_new_dl_entity(k, dl_se);
    if (dl_se.dl_server) {
        if (dl_se.dl_throttled && start_dl_timer(k, dl_se))
            return;
        if (dl_se.dl_throttled) {
            cancel_dl_timer(k, dl_se);
            dl_se.dl_defer_armed = false;
            dl_se.dl_throttled = false;
        }
    }
    __enqueue_dl_entity(k, dl_se);
}

// kernel: deadline.c dequeue_dl_entity(), 6.6 (no GRUB: no task_non_contending()).
void dequeue_dl_entity(kernel& k, sched_dl_entity& dl_se)
{
    __dequeue_dl_entity(k, dl_se);
}

void enqueue_task_dl(kernel& k, rq& r, task_struct& p, int flags);

/*
 * kernel: deadline.c dl_check_constrained_dl(), 6.6: a constrained task woken after its
 * deadline but before its next period waits, throttled, for that period.
 */
void dl_check_constrained_dl(kernel& k, sched_dl_entity& dl_se)
{
    const rq& r = rq_of_dl_se(k, dl_se);
    const u64 next_period = dl_se.deadline - dl_se.dl_deadline + dl_se.dl_period;
    if (dl_time_before(dl_se.deadline, r.clock) && dl_time_before(r.clock, next_period)) {
        if (!start_dl_timer(k, dl_se))
            return;
        dl_se.dl_throttled = true;
        if (dl_se.runtime > 0)
            dl_se.runtime = 0;
    }
}

/*
 * kernel: deadline.c update_curr_dl_se(), 6.6 / 6.12 (no GRUB scaling): the entity's
 * runtime is charged; exhausted (or yielded), it is throttled and leaves the tree until
 * its replenishment timer, or is replenished at once when the timer cannot be set. A
 * deferred server (6.12) throttled for its deferral that used up its runtime in the
 * background (fair tasks ran anyway) starts a new deferred period instead.
 */
void update_curr_dl_se(kernel& k, rq& r, sched_dl_entity& dl_se, s64 delta_exec)
{
    if (delta_exec <= 0) {
        if (!dl_se.dl_yielded)
            return;
    } else {
        if (dl_se.dl_server && dl_se.dl_throttled && !dl_se.dl_defer)
            return;
        dl_se.runtime -= delta_exec;
        if (dl_se.dl_defer && dl_se.dl_throttled && dl_runtime_exceeded(dl_se)) {
            dl_se.dl_defer_running = false;
            cancel_dl_timer(k, dl_se);
            replenish_dl_new_period(dl_se, r);
            const bool started = start_dl_timer(k, dl_se);
            SIM_BUG_ON(!started, "cpu{}: the fair server's deferral timer is in the past", r.cpu);
            return;
        }
    }
    if (dl_runtime_exceeded(dl_se) || dl_se.dl_yielded) {
        dl_se.dl_throttled = true;
        ++dl_se.nr_throttled;
        dequeue_dl_entity(k, dl_se);
        if (!dl_se.dl_server)
            dequeue_pushable_dl_task(k, r, *dl_se.owner);
        if (!start_dl_timer(k, dl_se)) {
            if (dl_se.dl_server)
                enqueue_dl_entity(k, dl_se, ENQUEUE_REPLENISH);
            else
                enqueue_task_dl(k, r, *dl_se.owner, ENQUEUE_REPLENISH);
        }
        if (!is_leftmost(dl_se, r.dl))
            k.resched_curr(r);
    }
}

/*
 * kernel: deadline.c update_curr_dl(), 6.6: curr's runtime; while the root rt_rq has a
 * bandwidth (<= v6.11) DL time counts in its rt_time too (sched_rt_bandwidth_account()).
 */
void update_curr_dl(kernel& k, rq& r)
{
    task_struct& curr = *r.curr;
    sched_dl_entity& dl_se = curr.dl;
    if (!dl_task(curr) || !dl_se.on_rq)
        return;
    const s64 delta_exec = static_cast<s64>(r.clock_task - curr.se.exec_start);
    if (delta_exec <= 0) {
        update_curr_dl_se(k, r, dl_se, 0);
        return;
    }
    curr.se.exec_start = r.clock_task; // update_curr_common()
    curr.se.sum_exec_runtime += static_cast<u64>(delta_exec);
    update_curr_dl_se(k, r, dl_se, delta_exec);
    if (rt_bandwidth_enabled(k) && (k.rt().rt_period_active || r.rt.rt_time < r.rt.rt_runtime))
        r.rt.rt_time += static_cast<u64>(delta_exec);
}

/* ---- the class hooks ---- */

/*
 * kernel: deadline.c enqueue_task_dl(), 6.6: a throttled task waits for its timer
 * (which enqueues it with ENQUEUE_REPLENISH); a queued task that is not running and
 * may migrate is pushable.
 */
void enqueue_task_dl(kernel& k, rq& r, task_struct& p, int flags)
{
    if (!p.dl.dl_throttled && !dl_is_implicit(p.dl))
        dl_check_constrained_dl(k, p.dl);
    if (p.dl.dl_throttled && !(flags & ENQUEUE_REPLENISH))
        return;
    enqueue_dl_entity(k, p.dl, flags);
    if (r.curr != &p && p.nr_cpus_allowed > 1)
        enqueue_pushable_dl_task(k, r, p);
}

// kernel: deadline.c dequeue_task_dl(), 6.6 (no GRUB).
bool dequeue_task_dl(kernel& k, rq& r, task_struct& p, int /*flags*/)
{
    update_curr_dl(k, r);
    dequeue_dl_entity(k, p.dl);
    dequeue_pushable_dl_task(k, r, p);
    return true;
}

/*
 * kernel: deadline.c yield_task_dl(), 6.6: the task gives up the rest of this instance
 * (update_curr_dl() throttles it until its next period).
 */
void yield_task_dl(kernel& k, rq& r)
{
    r.curr->dl.dl_yielded = true;
    k.update_rq_clock(r);
    update_curr_dl(k, r);
}

// kernel: deadline.c check_preempt_equal_dl(), 6.6.
void check_preempt_equal_dl(kernel& k, rq& r, task_struct& p)
{
    const cpudl& cp = k.rd().cpudl;
    if (r.curr->nr_cpus_allowed == 1 || !cpudl_find(cp, *r.curr, nullptr))
        return;
    if (p.nr_cpus_allowed != 1 && cpudl_find(cp, p, nullptr))
        return;
    k.resched_curr(r);
}

// kernel: deadline.c wakeup_preempt_dl() (check_preempt_curr_dl() in 6.6): EDF.
void wakeup_preempt_dl(kernel& k, rq& r, task_struct& p, int /*wake_flags*/)
{
    if (dl_entity_preempt(p.dl, r.curr->dl)) {
        k.resched_curr(r);
        return;
    }
    if (p.dl.deadline == r.curr->dl.deadline && !r.need_resched)
        check_preempt_equal_dl(k, r, p);
}

void push_dl_tasks(kernel& k, rq& r);

// kernel: deadline.c set_next_task_dl(), 6.6: the first pick queues the push of the rest.
void set_next_task_dl(kernel& k, rq& r, task_struct& p, bool first)
{
    p.se.exec_start = r.clock_task;
    dequeue_pushable_dl_task(k, r, p);
    if (!first)
        return;
    if (has_pushable_dl_tasks(r))
        k.queue_balance_callback(r, push_dl_tasks);
}

/*
 * kernel: deadline.c pick_next_task_dl() -> pick_task_dl(), 6.6 / 6.12: the entity of
 * the earliest deadline; a server picks a task of its class (the fair server: the fair
 * class's pick) or, having none, yields its instance.
 */
task_struct* pick_next_task_dl(kernel& k, rq& r, task_struct* /*prev*/)
{
    for (;;) {
        if (!r.dl.dl_nr_running)
            return nullptr;
        sched_dl_entity& dl_se = *r.dl.root.begin()->second;
        if (!dl_se.dl_server) {
            task_struct& p = *dl_se.owner;
            set_next_task_dl(k, r, p, true);
            return &p;
        }
        if (task_struct* p = fair_sched_class.pick_next_task(k, r, nullptr)) {
            ++k.dl().fair_server_runs;
            return p;
        }
        dl_se.dl_yielded = true;
        update_curr_dl_se(k, r, dl_se, 0);
    }
}

// kernel: deadline.c put_prev_task_dl(), 6.6: a preempted migratable task is pushable.
void put_prev_task_dl(kernel& k, rq& r, task_struct& p)
{
    update_curr_dl(k, r);
    if (p.dl.on_rq && p.nr_cpus_allowed > 1)
        enqueue_pushable_dl_task(k, r, p);
}

/*
 * kernel: deadline.c find_later_rq(), 6.6: the CPUs cpudl finds (free ones, else the
 * one of the latest deadline if p's is earlier): p's own, else this CPU or the next of
 * the mask in the nearest SD_WAKE_AFFINE domain, else this CPU, else any. -1: none.
 */
int find_later_rq(kernel& k, task_struct& p)
{
    if (p.nr_cpus_allowed == 1)
        return -1;
    cpumask later_mask(k.nr_cpu_ids());
    if (!cpudl_find(k.rd().cpudl, p, &later_mask))
        return -1;
    return find_cpu_near(k, later_mask, p.cpu);
}

/*
 * kernel: deadline.c find_lock_later_rq(), 6.6: the later CPU if p would be its earliest
 * deadline. Taking its lock cannot race here, so no retries.
 */
rq* find_lock_later_rq(kernel& k, task_struct& p, rq& r)
{
    const int cpu = find_later_rq(k, p);
    if (cpu == -1 || cpu == r.cpu)
        return nullptr;
    rq& later = k.cpu_rq(cpu);
    if (!dl_task_is_earliest_deadline(p, later))
        return nullptr;
    k.charges().lock_and_charge(later.lock, k.smp_processor_id(), k.charges().params().rq_lock_hold);
    return &later;
}

/*
 * kernel: deadline.c push_dl_task(), 6.6: the earliest pushable task moves to a later
 * CPU, unless it should preempt this CPU's (migratable) task instead. True: one moved.
 */
bool push_dl_task(kernel& k, rq& r)
{
    if (!r.dl.overloaded || !has_pushable_dl_tasks(r))
        return false;
    task_struct& next_task = *r.dl.pushable_dl_tasks_root.begin()->second;
    SIM_BUG_ON(r.curr == &next_task || next_task.cpu != r.cpu || !task_on_rq_queued(next_task) ||
                   next_task.nr_cpus_allowed <= 1,
               "cpu{}: pid {} is not pushable", r.cpu, next_task.pid);
    if (dl_task(*r.curr) && dl_time_before(next_task.dl.deadline, r.curr->dl.deadline) &&
        r.curr->nr_cpus_allowed > 1) {
        k.resched_curr(r);
        return false;
    }
    rq* later = find_lock_later_rq(k, next_task, r);
    if (!later)
        return false;
    if (k.decisions().on())
        k.decisions().log(k.now(), k.smp_processor_id(), "push_dl_task",
                          fmt::format("pid {} ({}) deadline {} cpu{} -> cpu{} (earliest there {})",
                                      next_task.pid, next_task.comm, next_task.dl.deadline, r.cpu,
                                      later->cpu, later->dl.earliest_dl.curr));
    move_queued_task_locked(k, r, *later, next_task);
    k.resched_curr(*later);
    ++k.dl().dl_pushes;
    return true;
}

// kernel: deadline.c push_dl_tasks(), 6.6.
void push_dl_tasks(kernel& k, rq& r)
{
    while (push_dl_task(k, r)) {
    }
}

/*
 * kernel: deadline.c pull_dl_task(), 6.6: from each DL-overloaded CPU, the earliest
 * pushable task this CPU may run, if it would be this CPU's earliest deadline, beats
 * what was pulled so far and does not preempt its own CPU's task.
 */
void pull_dl_task(kernel& k, rq& this_rq)
{
    const int this_cpu = this_rq.cpu;
    root_domain& rd = k.rd();
    if (!rd.dlo_count)
        return;
    bool resched = false;
    u64 dmin = static_cast<u64>(std::numeric_limits<s64>::max());
    for_each_cpu(cpu, rd.dlo_mask)
    {
        if (cpu == this_cpu)
            continue;
        rq& src = k.cpu_rq(cpu);
        if (this_rq.dl.dl_nr_running &&
            dl_time_before(this_rq.dl.earliest_dl.curr, src.dl.earliest_dl.next))
            continue;
        k.charges().lock_and_charge(src.lock, this_cpu, k.charges().params().rq_lock_hold);
        if (src.dl.dl_nr_running <= 1)
            continue;
        task_struct* p = nullptr; // pick_earliest_pushable_dl_task()
        for (const auto& [deadline, t] : src.dl.pushable_dl_tasks_root)
            if (!t->on_cpu && t->cpus_mask.test(this_cpu)) {
                p = t;
                break;
            }
        if (!p || !dl_time_before(p->dl.deadline, dmin) ||
            !dl_task_is_earliest_deadline(*p, this_rq))
            continue;
        if (dl_time_before(p->dl.deadline, src.curr->dl.deadline))
            continue;
        move_queued_task_locked(k, src, this_rq, *p);
        dmin = p->dl.deadline;
        ++k.dl().dl_pulls;
        resched = true;
    }
    if (resched)
        k.resched_curr(this_rq);
}

/*
 * kernel: deadline.c select_task_rq_dl(), 6.6 (no capacity fitness): a wakee whose CPU
 * runs a DL task it cannot preempt (or one pinned there) goes to the later CPU, if it
 * would be that CPU's earliest deadline. Not at fork (5.15: SD_BALANCE_WAKE only).
 */
int select_task_rq_dl(kernel& k, task_struct& p, int cpu, int wake_flags)
{
    if (!(wake_flags & WF_TTWU))
        return cpu;
    const task_struct& curr = *k.cpu_rq(cpu).curr;
    const bool select_rq = dl_task(curr) &&
                           (curr.nr_cpus_allowed < 2 || !dl_entity_preempt(p.dl, curr.dl)) &&
                           p.nr_cpus_allowed > 1;
    if (select_rq) {
        const int target = find_later_rq(k, p);
        if (target != -1 && dl_task_is_earliest_deadline(p, k.cpu_rq(target)))
            cpu = target;
    }
    return cpu;
}

// kernel: deadline.c task_tick_dl(), 6.6 (no HRTICK_DL: it is off in every profile).
void task_tick_dl(kernel& k, rq& r, task_struct& /*p*/, int /*queued*/)
{
    update_curr_dl(k, r);
}

// kernel: deadline.c balance_dl(), 6.6: a DL task leaving the CPU pulls first.
bool balance_dl(kernel& k, rq& r, task_struct& prev)
{
    if (!prev.dl.on_rq && dl_task(prev)) // need_pull_dl_task()
        pull_dl_task(k, r);
    return r.dl.dl_nr_running > 0;
}

// kernel: deadline.c task_woken_dl(), 6.6.
void task_woken_dl(kernel& k, rq& r, task_struct& p)
{
    if (!p.on_cpu && !r.need_resched && p.nr_cpus_allowed > 1 && dl_task(*r.curr) &&
        (r.curr->nr_cpus_allowed < 2 || !dl_entity_preempt(p.dl, r.curr->dl)))
        push_dl_tasks(k, r);
}

/*
 * kernel: deadline.c task_dead_dl(), 6.6: the task's bandwidth leaves the root domain
 * (__dl_sub(); no GRUB extra_bw). Its replenishment timer, if armed, is cancelled
 * (model: the kernel's holds a task reference and finds a dead task not throttled or
 * not queued).
 */
void task_dead_dl(kernel& k, task_struct& p)
{
    k.rd().dl_bw.total_bw -= p.dl.dl_bw;
    cancel_dl_timer(k, p.dl);
}

/* ---- admission ---- */

/// kernel: deadline.c dl_bw_cpus() / dl_bw_capacity(), 6.6: the root domain's CPUs (all
/// here) at SCHED_CAPACITY_SCALE each, or the sum of their capacities.
u64 dl_bw_capacity(const kernel& k)
{
    u64 cap = 0;
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu)
        cap += k.mach().cpus[static_cast<std::size_t>(cpu)].capacity;
    return cap;
}

/// kernel: kernel/sched/sched.h __dl_overflow(), 6.6: cap_scale(bw, cap) < total - old + new.
bool __dl_overflow(const dl_bw& b, u64 cap, u64 old_bw, u64 new_bw)
{
    return b.bw != -1 &&
           ((static_cast<u64>(b.bw) * cap) >> SCHED_CAPACITY_SHIFT) < b.total_bw - old_bw + new_bw;
}

} // namespace

/// kernel: kernel/sched/sched.h to_ratio(), 6.6.
u64 to_ratio(u64 period, u64 runtime)
{
    if (runtime == RUNTIME_INF)
        return 1ULL << BW_SHIFT;
    if (period == 0)
        return 0;
    return (runtime << BW_SHIFT) / period;
}

/*
 * kernel: kernel/sched/core.c __sched_setscheduler() (the SCHED_DEADLINE checks) with
 * deadline.c __checkparam_dl() and sched_dl_overflow(), 6.6, for a task becoming
 * SCHED_DEADLINE: parameters out of range are -EINVAL, an affinity smaller than the
 * root domain -EPERM, a bandwidth that does not fit -EBUSY; admitted, p's parameters
 * are set (__setparam_dl()) and its bandwidth added to the root domain's (__dl_add()).
 */
std::string sched_dl_setattr(kernel& k, task_struct& p, const sched_dl_attr& attr)
{
    const u64 period = attr.sched_period ? attr.sched_period : attr.sched_deadline;
    if (attr.sched_deadline == 0 || attr.sched_runtime < (1ULL << DL_SCALE) ||
        (attr.sched_deadline >> 63) || (attr.sched_period >> 63) ||
        period < attr.sched_deadline || attr.sched_deadline < attr.sched_runtime ||
        period < sysctl_sched_dl_period_min * 1000 || period > sysctl_sched_dl_period_max * 1000)
        return fmt::format("-EINVAL: runtime {} ns, deadline {} ns, period {} ns: the kernel wants "
                           "runtime >= 1024 ns, runtime <= deadline <= period and a period of "
                           "100 us to 4.19 s (__checkparam_dl())",
                           attr.sched_runtime, attr.sched_deadline, attr.sched_period);
    dl_bw& b = k.rd().dl_bw;
    if (!(p.cpus_mask == k.mach().all()) || b.bw == 0)
        return "-EPERM: a SCHED_DEADLINE task must be allowed on every CPU of its root domain "
               "(here the whole machine)";
    const u64 new_bw = to_ratio(period, attr.sched_runtime);
    const u64 cap = dl_bw_capacity(k);
    if (__dl_overflow(b, cap, 0, new_bw))
        return fmt::format("-EBUSY: bandwidth {:.4f} CPUs does not fit: {:.4f} of the root "
                           "domain's {:.4f} (sched_rt_runtime_us / sched_rt_period_us of each of "
                           "its {} CPUs) is admitted already (sched_dl_overflow())",
                           static_cast<double>(new_bw) / (1 << BW_SHIFT),
                           static_cast<double>(b.total_bw) / (1 << BW_SHIFT),
                           static_cast<double>((static_cast<u64>(b.bw) * cap) >>
                                               SCHED_CAPACITY_SHIFT) /
                               (1 << BW_SHIFT),
                           k.nr_cpu_ids());
    b.total_bw += new_bw;
    sched_dl_entity& dl_se = p.dl;
    dl_se.dl_runtime = attr.sched_runtime;
    dl_se.dl_deadline = attr.sched_deadline;
    dl_se.dl_period = period;
    dl_se.dl_bw = new_bw;
    dl_se.dl_density = to_ratio(attr.sched_deadline, attr.sched_runtime);
    dl_se.owner = &p;
    return "";
}

/*
 * kernel: deadline.c dl_server_apply_params() (init) + the fair server's set-up in
 * dl_server_start(), 6.12: 50 ms per 1 s, a deferred server whose bandwidth is admitted
 * in the root domain like a task's (__dl_add()). Differs: the kernel sets each CPU's up
 * at its first fair enqueue after boot; a benchmark starts on a machine that has been up,
 * so every CPU's is set up at once, its last instance long past (deadline 0: the first
 * dl_server_start() starts a new, deferred one).
 */
void fair_server_init(kernel& k, rq& r)
{
    sched_dl_entity& dl_se = r.fair_server;
    dl_se.rq_ = &r;
    const u64 new_bw = to_ratio(fair_server_period, fair_server_runtime);
    dl_bw& b = k.rd().dl_bw;
    if (__dl_overflow(b, dl_bw_capacity(k), 0, new_bw))
        return; // -EBUSY: the server stays disabled (dl_runtime 0), as the kernel's
    b.total_bw += new_bw;
    dl_se.dl_runtime = fair_server_runtime;
    dl_se.dl_deadline = fair_server_period;
    dl_se.dl_period = fair_server_period;
    dl_se.dl_bw = new_bw;
    dl_se.dl_density = to_ratio(dl_se.dl_deadline, dl_se.dl_runtime);
    dl_se.dl_server = true;
    dl_se.dl_defer = true;
}

/*
 * kernel: deadline.c init_dl_rq(), init_dl_bw() and cpudeadline.c cpudl_init(), 6.6:
 * every CPU free, the limit sched_rt_runtime_us / sched_rt_period_us per CPU (none
 * with sched_rt_runtime_us -1); 6.12: each CPU's fair server.
 */
void init_dl(kernel& k)
{
    root_domain& rd = k.rd();
    const int n = k.nr_cpu_ids();
    rd.cpudl.dl.assign(static_cast<std::size_t>(n), 0);
    rd.cpudl.valid.assign(static_cast<std::size_t>(n), false);
    rd.cpudl.free_cpus = k.mach().all();
    rd.dlo_mask = cpumask(n);
    const sched_params& params = k.config().params;
    rd.dl_bw.bw = params.rt_runtime_us < 0
                      ? -1
                      : static_cast<s64>(to_ratio(params.rt_period_us,
                                                  static_cast<u64>(params.rt_runtime_us)));
    rd.dl_bw.total_bw = 0;
    if (k.config().behaviour.fair_server)
        for (int cpu = 0; cpu < n; ++cpu)
            fair_server_init(k, k.cpu_rq(cpu));
}

/*
 * kernel: deadline.c dl_server_start(), 6.12: the server is queued by the wakeup rule
 * (deferred: armed for its zero-laxity time instead) and the CPU rescheduled unless a
 * DL task of an earlier deadline runs. fair.c enqueue_task_fair() first charges the idle
 * time that ends here (dl_server_update_idle_time()).
 */
void dl_server_start(kernel& k, rq& r)
{
    sched_dl_entity& dl_se = r.fair_server;
    if (!r.nr_running)
        dl_server_update_idle_time(k, r, *r.curr);
    if (!dl_se.dl_runtime)
        return;
    dl_se.dl_server_active = true;
    enqueue_dl_entity(k, dl_se, ENQUEUE_WAKEUP);
    if (!dl_task(*r.curr) || dl_entity_preempt(dl_se, r.curr->dl))
        k.resched_curr(r);
}

// kernel: deadline.c dl_server_stop(), 6.12.
void dl_server_stop(kernel& k, rq& r)
{
    sched_dl_entity& dl_se = r.fair_server;
    if (!dl_se.dl_runtime)
        return;
    dequeue_dl_entity(k, dl_se);
    cancel_dl_timer(k, dl_se);
    dl_se.dl_defer_armed = false;
    dl_se.dl_throttled = false;
    dl_se.dl_server_active = false;
}

// kernel: deadline.c dl_server_update(), 6.12.
void dl_server_update(kernel& k, rq& r, s64 delta_exec)
{
    if (r.fair_server.dl_server_active && r.fair_server.dl_runtime)
        update_curr_dl_se(k, r, r.fair_server, delta_exec);
}

/*
 * kernel: deadline.c dl_server_update_idle_time(), 6.12 (with idle.c's
 * put_prev_task_idle() and set_next_task_idle(), which stamps the idle task's
 * exec_start): the idle time since is the server's background time.
 */
void dl_server_update_idle_time(kernel& /*k*/, rq& r, task_struct& p)
{
    sched_dl_entity& dl_se = r.fair_server;
    if (!dl_se.dl_defer || dl_se.runtime < 0)
        return;
    const s64 delta_exec = static_cast<s64>(r.clock_task - p.se.exec_start);
    if (delta_exec < 0)
        return;
    dl_se.runtime -= delta_exec;
    if (dl_se.runtime < 0) {
        dl_se.dl_defer_running = false;
        dl_se.runtime = 0;
    }
    p.se.exec_start = r.clock_task;
}

void check_dl_rq(const kernel& k, const rq& r, std::string& errs)
{
    const dl_rq& dl = r.dl;
    auto err = [&](const std::string& e) { errs += fmt::format("cpu{}: {}\n", r.cpu, e); };
    unsigned n = 0;
    for (const auto& [deadline, se] : dl.root) {
        ++n;
        if (se->deadline != deadline || !se->on_rq || se->dl_throttled)
            err(fmt::format("dl entity in the tree at {}: deadline {} on_rq {} throttled {}",
                            deadline, se->deadline, se->on_rq, se->dl_throttled));
        if (!se->dl_server && (se->owner->cpu != r.cpu || !task_on_rq_queued(*se->owner)))
            err(fmt::format("pid {} in the dl tree: cpu {} on_rq {}", se->owner->pid,
                            se->owner->cpu, se->owner->on_rq));
    }
    if (n != dl.dl_nr_running)
        err(fmt::format("dl_nr_running {} but the tree holds {}", dl.dl_nr_running, n));
    const u64 earliest = dl.root.empty() ? 0 : dl.root.begin()->first;
    if (earliest != dl.earliest_dl.curr)
        err(fmt::format("earliest_dl.curr {} but the tree's first is {}", dl.earliest_dl.curr,
                        earliest));
    const cpudl& cp = k.rd().cpudl;
    const auto c = static_cast<std::size_t>(r.cpu);
    if (cp.valid[c] != (dl.dl_nr_running > 0) || cp.free_cpus.test(r.cpu) == cp.valid[c] ||
        (cp.valid[c] && cp.dl[c] != earliest))
        err(fmt::format("cpudl valid {} free {} dl {} but earliest {}", static_cast<bool>(cp.valid[c]),
                        cp.free_cpus.test(r.cpu), cp.dl[c], earliest));
    for (const auto& [deadline, p] : dl.pushable_dl_tasks_root)
        if (p == r.curr || !p->dl.on_rq || p->nr_cpus_allowed < 2 || p->dl.deadline != deadline)
            err(fmt::format("pid {} pushable but curr {} on_rq {} deadline {} (key {})", p->pid,
                            p == r.curr, p->dl.on_rq, p->dl.deadline, deadline));
    if (dl.overloaded != k.rd().dlo_mask.test(r.cpu))
        err(fmt::format("dl overloaded {} but dlo_mask has the CPU: {}", dl.overloaded,
                        k.rd().dlo_mask.test(r.cpu)));
}

/*
 * kernel: deadline.c dl_task_timer(), 6.6: the replenishment. A task that is no longer
 * queued is only replenished; a queued one is enqueued again and may preempt (EDF
 * against a DL curr, at once against any other class) and push.
 */
void dl_state::fire(u64 arg)
{
    if (arg & SERVER_BIT) {
        rq& r = k_.cpu_rq(static_cast<int>(arg & 0xffffffffu));
        r.fair_server.dl_timer = {};
        k_.set_this_cpu(r.cpu);
        // kernel: deadline.c dl_server_timer(), 6.12.
        sched_dl_entity& dl_se = r.fair_server;
        if (!dl_se.dl_throttled || !dl_se.dl_runtime)
            return;
        k_.update_rq_clock(r);
        if (!rq_root_cfs(r).nr_running) { // !server_has_tasks()
            replenish_dl_entity(k_, dl_se);
            return;
        }
        if (dl_se.dl_defer_armed) {
            // The fair tasks may still get the rest of the runtime in the background: push
            // the deferral to the new zero-laxity time.
            const u64 zero_lax = dl_se.deadline - static_cast<u64>(dl_se.runtime);
            if (dl_time_before(r.clock, zero_lax - dl_server_min_res)) {
                // hrtimer_forward_now(timer, deadline - rq_clock - runtime)
                dl_se.dl_timer = k_.sim().after(static_cast<s64>(zero_lax - r.clock),
                                                event_prio::hrtimer, this, arg);
                return;
            }
            dl_se.dl_defer_running = true;
        }
        enqueue_dl_entity(k_, dl_se, ENQUEUE_REPLENISH);
        if (!dl_task(*r.curr) || dl_entity_preempt(dl_se, r.curr->dl))
            k_.resched_curr(r);
        if (has_pushable_dl_tasks(r))
            push_dl_task(k_, r);
        return;
    }
    task_struct* p = k_.find_task_by_pid(static_cast<int>(arg));
    SIM_BUG_ON(!p, "dl_timer for unknown pid {}", arg);
    sched_dl_entity& dl_se = p->dl;
    dl_se.dl_timer = {};
    if (!dl_task(*p) || !dl_se.dl_throttled || (p->__state & TASK_DEAD))
        return;
    rq& r = k_.cpu_rq(p->cpu);
    k_.set_this_cpu(r.cpu); // model: the expiry is handled where the rq is (no IPI priced)
    k_.update_rq_clock(r);
    if (!task_on_rq_queued(*p)) {
        replenish_dl_entity(k_, dl_se);
        return;
    }
    enqueue_task_dl(k_, r, *p, ENQUEUE_REPLENISH);
    if (dl_task(*r.curr))
        wakeup_preempt_dl(k_, r, *p, 0);
    else
        k_.resched_curr(r);
    if (has_pushable_dl_tasks(r))
        push_dl_task(k_, r);
}

// kernel: kernel/sched/deadline.c DEFINE_SCHED_CLASS(dl), 6.6 (the hooks the model calls).
const sched_class dl_sched_class = {
    .name = "dl",
    .order = 1,
    .policies = 1u << SCHED_DEADLINE,
    .enqueue_task = enqueue_task_dl,
    .dequeue_task = dequeue_task_dl,
    .yield_task = yield_task_dl,
    .wakeup_preempt = wakeup_preempt_dl,
    .pick_next_task = pick_next_task_dl,
    .select_task_rq = select_task_rq_dl,
    .migrate_task_rq = nullptr,
    .task_tick = task_tick_dl,
    .task_fork = nullptr,
    .put_prev_task = put_prev_task_dl,
    .balance = balance_dl,
    .task_woken = task_woken_dl,
    .task_dead = task_dead_dl,
};

} // namespace schedlab
