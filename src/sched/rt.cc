// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rt scheduling class (kernel/sched/rt.c, kernel/sched/cpupri.c):
 * SCHED_FIFO and SCHED_RR tasks of priorities 1..99 in a FIFO per priority,
 * above the fair class; SCHED_RR's timeslice at the tick; the root rt_rq's
 * bandwidth throttling (sched_rt_runtime_us per sched_rt_period_us) in the
 * profiles before v6.12; and the placement of RT tasks across the root
 * domain by cpupri: select_task_rq_rt() at wakeup, push_rt_tasks() when a
 * CPU has more RT tasks than it runs, pull_rt_task() (or, with RT_PUSH_IPI,
 * the push-IPI chain across the overloaded CPUs) when a CPU lowers its
 * priority. docs/classes.md says what is modelled and what is not.
 *
 * Read against kernel/sched/rt.c of v5.15, v6.6 and v6.12. The versions differ
 * here in: the overload rule (rt_nr_migratory up to v6.6, pushable_tasks from
 * v6.7, kernel_behaviour::rt_overload_pushable) and the default bandwidth
 * control (gone in v6.12, kernel_behaviour::rt_bandwidth_default). Locks are
 * not simulated beyond their cost: a push or pull that the kernel does under
 * double_lock_balance() is atomic here, so find_lock_lowest_rq()'s retries
 * never happen.
 */
#include "sched/core.h"
#include "sched/move_queued_task.h"

#include "sim/bug.h"

#include <bit>

namespace schedlab {

namespace {

// kernel: kernel/sched/cpupri.c convert_prio(), v5.11+ (934fc3314b39): 0..98 -> 99..1, 99 -> NORMAL.
int convert_prio(int prio)
{
    if (prio == CPUPRI_INVALID)
        return CPUPRI_INVALID;
    if (prio < MAX_RT_PRIO - 1)
        return MAX_RT_PRIO - 1 - prio;
    if (prio == MAX_RT_PRIO)
        return CPUPRI_HIGHER; // a CPU with DL tasks (inc_dl_deadline())
    return CPUPRI_NORMAL; // MAX_RT_PRIO - 1: no RT task queued
}

int sched_find_first_bit(const rt_prio_array& a)
{
    if (a.bitmap[0])
        return std::countr_zero(a.bitmap[0]);
    return 64 + std::countr_zero(a.bitmap[1]);
}

void set_prio_bit(rt_prio_array& a, int prio)
{
    a.bitmap[prio >> 6] |= 1ULL << (prio & 63);
}

void clear_prio_bit(rt_prio_array& a, int prio)
{
    a.bitmap[prio >> 6] &= ~(1ULL << (prio & 63));
}

bool rt_task(const task_struct& p)
{
    return rt_prio(p.prio);
}

bool task_current(const rq& r, const task_struct& p)
{
    return r.curr == &p;
}

} // namespace

/* ---- cpupri (kernel/sched/cpupri.c) ---- */

// kernel: kernel/sched/cpupri.c cpupri_init() + rq_online_rt(), 6.6: every CPU starts at
// CPUPRI_NORMAL (its rt_rq's highest_prio.curr is MAX_RT_PRIO - 1).
void cpupri_init(kernel& k)
{
    cpupri& cp = k.rd().cpupri;
    cp.pri_to_cpu.assign(CPUPRI_NR_PRIORITIES, cpupri::vec{0, cpumask(k.nr_cpu_ids())});
    cp.cpu_to_pri.assign(static_cast<std::size_t>(k.nr_cpu_ids()), CPUPRI_INVALID);
    k.rd().rto_mask = cpumask(k.nr_cpu_ids());
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu)
        cpupri_set(k.rd().cpupri, cpu, k.cpu_rq(cpu).rt.highest_prio.curr);
}

// kernel: kernel/sched/cpupri.c cpupri_set(), 6.6 (no memory barriers to model).
void cpupri_set(cpupri& cp, int cpu, int newpri)
{
    int& currpri = cp.cpu_to_pri[static_cast<std::size_t>(cpu)];
    newpri = convert_prio(newpri);
    if (newpri == currpri)
        return;
    if (newpri != CPUPRI_INVALID) {
        cpupri::vec& v = cp.pri_to_cpu[static_cast<std::size_t>(newpri)];
        v.mask.set(cpu);
        ++v.count;
    }
    if (currpri != CPUPRI_INVALID) {
        cpupri::vec& v = cp.pri_to_cpu[static_cast<std::size_t>(currpri)];
        --v.count;
        v.mask.clear(cpu);
    }
    currpri = newpri;
}

/*
 * kernel: kernel/sched/cpupri.c cpupri_find() -> cpupri_find_fitness() without a fitness
 * function, 6.6: the lowest cpupri vector below p's priority that holds a CPU p may run
 * on; lowest_mask (if given) gets those CPUs. Every CPU is active here.
 */
bool cpupri_find(const cpupri& cp, const task_struct& p, cpumask* lowest_mask)
{
    const int task_pri = convert_prio(p.prio);
    for (int idx = 0; idx < task_pri; ++idx) {
        const cpupri::vec& v = cp.pri_to_cpu[static_cast<std::size_t>(idx)];
        if (!v.count || !v.mask.intersects(p.cpus_mask))
            continue;
        if (lowest_mask)
            *lowest_mask = v.mask & p.cpus_mask;
        return true;
    }
    return false;
}

/*
 * kernel: lib/cpumask.c cpumask_any_and_distribute(), 5.15-6.12: the next CPU of both
 * masks after the one this CPU returned last (a per-CPU variable), wrapping.
 */
int cpumask_any_and_distribute(kernel& k, const cpumask& a, const cpumask& b)
{
    int& prev = k.cpu_rq(k.smp_processor_id()).distribute_cpu_mask_prev;
    const cpumask both = a & b;
    int next = both.next(prev + 1);
    if (next >= k.nr_cpu_ids())
        next = both.first();
    if (next < k.nr_cpu_ids())
        prev = next;
    return next;
}

/* ---- the rt_rq ---- */

// kernel: kernel/sched/rt.c init_rt_rq() and init_rt_bandwidth(def_rt_bandwidth), 6.6.
void init_rt_rq(const kernel& k, rt_rq& rt)
{
    rt.highest_prio.curr = rt.highest_prio.next = MAX_RT_PRIO - 1;
    rt.rt_runtime = k.config().params.rt_runtime_us < 0
                        ? RUNTIME_INF
                        : static_cast<u64>(k.config().params.rt_runtime_us) * 1000;
}

/// kernel: kernel/sched/sched.h rt_bandwidth_enabled(), with v6.12's removal of the
/// root rt_rq's default bandwidth (kernel_behaviour::rt_bandwidth_default).
bool rt_bandwidth_enabled(const kernel& k)
{
    return k.config().behaviour.rt_bandwidth_default && k.config().params.rt_runtime_us >= 0;
}

// kernel: kernel/sched/rt.c rt_set_overload() / rt_clear_overload(), 6.6.
void rt_set_overload(kernel& k, rq& r)
{
    k.rd().rto_mask.set(r.cpu);
    ++k.rd().rto_count;
}

void rt_clear_overload(kernel& k, rq& r)
{
    --k.rd().rto_count;
    k.rd().rto_mask.clear(r.cpu);
}

// kernel: kernel/sched/rt.c update_rt_migration(), <= 6.6 (removed by 612f769edd06, v6.7).
void update_rt_migration(kernel& k, rq& r)
{
    rt_rq& rt = r.rt;
    if (rt.rt_nr_migratory && rt.rt_nr_total > 1) {
        if (!rt.overloaded) {
            rt_set_overload(k, r);
            rt.overloaded = true;
        }
    } else if (rt.overloaded) {
        rt_clear_overload(k, r);
        rt.overloaded = false;
    }
}

/*
 * kernel: kernel/sched/rt.c enqueue_pushable_task(), 6.6 / 6.12: the plist ordered by
 * priority; from v6.7 the first pushable task makes the CPU RT-overloaded.
 */
void enqueue_pushable_task(kernel& k, rq& r, task_struct& p)
{
    if (p.rt.on_pushable)
        r.rt.pushable_tasks.erase(p.rt.pushable_node);
    p.rt.pushable_node = r.rt.pushable_tasks.emplace(p.prio, &p);
    p.rt.on_pushable = true;
    if (p.prio < r.rt.highest_prio.next)
        r.rt.highest_prio.next = p.prio;
    if (k.config().behaviour.rt_overload_pushable && !r.rt.overloaded) {
        rt_set_overload(k, r);
        r.rt.overloaded = true;
    }
}

// kernel: kernel/sched/rt.c dequeue_pushable_task(), 6.6 / 6.12.
void dequeue_pushable_task(kernel& k, rq& r, task_struct& p)
{
    if (p.rt.on_pushable) {
        r.rt.pushable_tasks.erase(p.rt.pushable_node);
        p.rt.on_pushable = false;
    }
    if (!r.rt.pushable_tasks.empty()) {
        r.rt.highest_prio.next = r.rt.pushable_tasks.begin()->first;
    } else {
        r.rt.highest_prio.next = MAX_RT_PRIO - 1;
        if (k.config().behaviour.rt_overload_pushable && r.rt.overloaded) {
            rt_clear_overload(k, r);
            r.rt.overloaded = false;
        }
    }
}

/*
 * kernel: kernel/sched/rt.c inc_rt_tasks() (inc_rt_prio, inc_rt_migration <= 6.6,
 * inc_rt_group -> start_rt_bandwidth) and dec_rt_tasks(), 6.6, for the root rt_rq.
 */
void inc_rt_tasks(kernel& k, rq& r, task_struct& p)
{
    rt_rq& rt = r.rt;
    ++rt.rt_nr_running;
    if (p.policy == SCHED_RR)
        ++rt.rr_nr_running;
    const int prev_prio = rt.highest_prio.curr;
    if (p.prio < prev_prio) {
        rt.highest_prio.curr = p.prio;
        cpupri_set(k.rd().cpupri, r.cpu, p.prio); // inc_rt_prio_smp()
    }
    if (!k.config().behaviour.rt_overload_pushable) {
        ++rt.rt_nr_total;
        if (p.nr_cpus_allowed > 1)
            ++rt.rt_nr_migratory;
        update_rt_migration(k, r);
    }
    start_rt_bandwidth(k);
}

void dec_rt_tasks(kernel& k, rq& r, task_struct& p)
{
    rt_rq& rt = r.rt;
    SIM_BUG_ON(!rt.rt_nr_running, "cpu{}: rt_nr_running underflow (pid {})", r.cpu, p.pid);
    --rt.rt_nr_running;
    if (p.policy == SCHED_RR)
        --rt.rr_nr_running;
    // dec_rt_prio(): the list of p's priority was updated before
    const int prev_prio = rt.highest_prio.curr;
    if (!rt.rt_nr_running)
        rt.highest_prio.curr = MAX_RT_PRIO - 1;
    else if (p.prio == prev_prio)
        rt.highest_prio.curr = sched_find_first_bit(*rt.active);
    if (rt.highest_prio.curr != prev_prio)
        cpupri_set(k.rd().cpupri, r.cpu, rt.highest_prio.curr); // dec_rt_prio_smp()
    if (!k.config().behaviour.rt_overload_pushable) {
        --rt.rt_nr_total;
        if (p.nr_cpus_allowed > 1)
            --rt.rt_nr_migratory;
        update_rt_migration(k, r);
    }
}

// kernel: kernel/sched/rt.c enqueue_top_rt_rq(), 6.6: the RT tasks count in rq->nr_running
// unless the rt_rq is throttled.
void enqueue_top_rt_rq(kernel& k, rq& r)
{
    rt_rq& rt = r.rt;
    if (rt.rt_queued || rt.rt_throttled)
        return;
    if (rt.rt_nr_running) {
        add_nr_running(r, rt.rt_nr_running);
        rt.rt_queued = true;
        k.lb().lb_stats_changed(r.cpu);
    }
}

// kernel: kernel/sched/rt.c dequeue_top_rt_rq(), 6.6.
void dequeue_top_rt_rq(kernel& k, rq& r)
{
    rt_rq& rt = r.rt;
    if (!rt.rt_queued)
        return;
    SIM_BUG_ON(r.nr_running < rt.rt_nr_running, "cpu{}: nr_running {} < rt_nr_running {}", r.cpu,
               r.nr_running, rt.rt_nr_running);
    sub_nr_running(r, rt.rt_nr_running);
    rt.rt_queued = false;
    k.lb().lb_stats_changed(r.cpu);
}

/*
 * kernel: kernel/sched/rt.c enqueue_rt_entity() -> dequeue_rt_stack(),
 * __enqueue_rt_entity(), enqueue_top_rt_rq(), 6.6: p joins the tail (the head with
 * ENQUEUE_HEAD) of its priority's list.
 */
void enqueue_rt_entity(kernel& k, rq& r, task_struct& p, int flags)
{
    dequeue_top_rt_rq(k, r);
    rt_prio_array& array = *r.rt.active;
    std::list<task_struct*>& queue = array.queue[p.prio];
    p.rt.run_list = (flags & ENQUEUE_HEAD) ? queue.insert(queue.begin(), &p)
                                           : queue.insert(queue.end(), &p);
    set_prio_bit(array, p.prio);
    p.rt.on_rq = true;
    inc_rt_tasks(k, r, p);
    enqueue_top_rt_rq(k, r);
}

// kernel: kernel/sched/rt.c dequeue_rt_entity() -> __dequeue_rt_entity(), 6.6.
void dequeue_rt_entity(kernel& k, rq& r, task_struct& p)
{
    dequeue_top_rt_rq(k, r);
    rt_prio_array& array = *r.rt.active;
    std::list<task_struct*>& queue = array.queue[p.prio];
    queue.erase(p.rt.run_list);
    if (queue.empty())
        clear_prio_bit(array, p.prio);
    p.rt.on_rq = false;
    dec_rt_tasks(k, r, p);
    enqueue_top_rt_rq(k, r);
}

// kernel: kernel/sched/rt.c requeue_task_rt() -> requeue_rt_entity(), 6.6.
void requeue_task_rt(rq& r, task_struct& p, bool head)
{
    if (!p.rt.on_rq)
        return;
    std::list<task_struct*>& queue = r.rt.active->queue[p.prio];
    queue.splice(head ? queue.begin() : queue.end(), queue, p.rt.run_list);
}

/* ---- bandwidth ---- */

// kernel: kernel/sched/rt.c start_rt_bandwidth(), 6.6: the period timer fires at once, then
// every period (hrtimer_forward_now() of an expired timer).
void start_rt_bandwidth(kernel& k)
{
    rt_state& rs = k.rt();
    if (!rt_bandwidth_enabled(k) || rs.rt_period_active)
        return;
    rs.rt_period_active = true;
    rs.rt_period_timer =
        k.sim().after(0, event_prio::hrtimer, rs.handler(), rt_state::period_timer);
}

// kernel: kernel/sched/rt.c sched_rt_period_timer(), 6.6: one period per expiry here.
void sched_rt_period_timer(kernel& k)
{
    rt_state& rs = k.rt();
    rs.rt_period_timer = {};
    const bool idle = do_sched_rt_period_timer(k, 1);
    if (idle) {
        rs.rt_period_active = false;
        return;
    }
    rs.rt_period_timer = k.sim().after(static_cast<sim_dur>(k.config().params.rt_period_us) * 1000,
                                       event_prio::hrtimer, rs.handler(), rt_state::period_timer);
}

/*
 * kernel: kernel/sched/rt.c do_sched_rt_period_timer(), 6.6 (!CONFIG_RT_GROUP_SCHED,
 * RT_RUNTIME_SHARE off): each CPU's rt_time is paid back by one runtime per period;
 * a throttled rt_rq below its runtime again is unthrottled and requeued
 * (sched_rt_rq_enqueue(), which also reschedules its CPU). True: the timer may stop.
 */
bool do_sched_rt_period_timer(kernel& k, int overrun)
{
    bool idle = true;
    bool throttled = false;
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu) {
        rq& r = k.cpu_rq(cpu);
        rt_rq& rt = r.rt;
        bool enqueue = false;
        rt.rt_runtime = k.config().params.rt_runtime_us < 0
                            ? RUNTIME_INF
                            : static_cast<u64>(k.config().params.rt_runtime_us) * 1000;
        if (rt.rt_time) {
            k.update_rq_clock(r);
            const u64 runtime = rt.rt_runtime;
            rt.rt_time -= std::min(rt.rt_time, static_cast<u64>(overrun) * runtime);
            if (rt.rt_throttled && rt.rt_time < runtime) {
                rt.rt_throttled = false;
                enqueue = true;
            }
            if (rt.rt_time || rt.rt_nr_running)
                idle = false;
        } else if (rt.rt_nr_running) {
            idle = false;
            if (!rt.rt_throttled)
                enqueue = true;
        }
        if (rt.rt_throttled)
            throttled = true;
        if (enqueue && rt.rt_nr_running) { // sched_rt_rq_enqueue()
            k.set_this_cpu(cpu); // model: the expiry is handled where the rq is (no IPI priced)
            enqueue_top_rt_rq(k, r);
            k.resched_curr(r);
        }
    }
    if (!throttled && !rt_bandwidth_enabled(k))
        return true;
    return idle;
}

/*
 * kernel: kernel/sched/rt.c sched_rt_runtime_exceeded(), 6.6 (RT_RUNTIME_SHARE off, so
 * no balance_runtime()): past its runtime the rt_rq is throttled and leaves rq->nr_running.
 */
bool sched_rt_runtime_exceeded(kernel& k, rq& r)
{
    rt_rq& rt = r.rt;
    const u64 runtime = rt.rt_runtime;
    if (rt.rt_throttled)
        return true;
    if (runtime >= static_cast<u64>(k.config().params.rt_period_us) * 1000)
        return false;
    if (rt.rt_time > runtime) {
        if (runtime) {
            rt.rt_throttled = true; // "sched: RT throttling activated"
            ++rt.nr_throttled;
        } else {
            rt.rt_time = 0;
        }
        if (rt.rt_throttled) {
            dequeue_top_rt_rq(k, r); // sched_rt_rq_dequeue()
            return true;
        }
    }
    return false;
}

/*
 * kernel: kernel/sched/rt.c update_curr_rt() + core.c update_curr_common(), 6.6: curr's
 * runtime, and the rt_rq's rt_time against its bandwidth (v6.12: RT groups only, none here).
 */
void update_curr_rt(kernel& k, rq& r)
{
    task_struct& curr = *r.curr;
    if (curr.sched_class != &rt_sched_class)
        return;
    const s64 delta_exec = static_cast<s64>(r.clock_task - curr.se.exec_start);
    if (delta_exec <= 0)
        return;
    curr.se.exec_start = r.clock_task;
    curr.se.sum_exec_runtime += static_cast<u64>(delta_exec);
    if (!rt_bandwidth_enabled(k) || r.rt.rt_runtime == RUNTIME_INF)
        return;
    r.rt.rt_time += static_cast<u64>(delta_exec);
    if (sched_rt_runtime_exceeded(k, r)) {
        k.resched_curr(r);
        start_rt_bandwidth(k); // do_start_rt_bandwidth()
    }
}

/* ---- class hooks ---- */

// kernel: kernel/sched/rt.c enqueue_task_rt(), 6.6.
void enqueue_task_rt(kernel& k, rq& r, task_struct& p, int flags)
{
    enqueue_rt_entity(k, r, p, flags);
    if (!task_current(r, p) && p.nr_cpus_allowed > 1)
        enqueue_pushable_task(k, r, p);
}

// kernel: kernel/sched/rt.c dequeue_task_rt(), 6.6 (6.12: returns true).
bool dequeue_task_rt(kernel& k, rq& r, task_struct& p, int /*flags*/)
{
    update_curr_rt(k, r);
    dequeue_rt_entity(k, r, p);
    dequeue_pushable_task(k, r, p);
    return true;
}

// kernel: kernel/sched/rt.c yield_task_rt(), 6.6: curr goes to the tail of its priority.
void yield_task_rt(kernel& /*k*/, rq& r)
{
    requeue_task_rt(r, *r.curr, false);
}

/*
 * kernel: kernel/sched/rt.c check_preempt_equal_prio(), 6.6: an equal-priority wakee
 * goes first if curr could run elsewhere and the wakee could not.
 */
void check_preempt_equal_prio(kernel& k, rq& r, task_struct& p)
{
    if (r.curr->nr_cpus_allowed == 1 || !cpupri_find(k.rd().cpupri, *r.curr, nullptr))
        return;
    if (p.nr_cpus_allowed != 1 && cpupri_find(k.rd().cpupri, p, nullptr))
        return;
    requeue_task_rt(r, p, true);
    k.resched_curr(r);
}

// kernel: kernel/sched/rt.c wakeup_preempt_rt() (check_preempt_curr_rt() in 6.6).
void wakeup_preempt_rt(kernel& k, rq& r, task_struct& p, int /*wake_flags*/)
{
    if (p.prio < r.curr->prio) {
        k.resched_curr(r);
        return;
    }
    if (p.prio == r.curr->prio && !r.need_resched)
        check_preempt_equal_prio(k, r, p);
}

/*
 * kernel: kernel/sched/rt.c set_next_task_rt(), 6.6: p becomes current (its runtime
 * clock starts, it is no longer pushable) and, as the first pick, queues the push of
 * what else is pushable here (rt_queue_push_tasks()).
 */
void set_next_task_rt(kernel& k, rq& r, task_struct& p, bool first)
{
    p.se.exec_start = r.clock_task;
    if (p.rt.on_rq)
        dequeue_pushable_task(k, r, p);
    if (!first)
        return;
    if (!r.rt.pushable_tasks.empty())
        k.queue_balance_callback(r, push_rt_tasks);
}

/*
 * kernel: kernel/sched/rt.c pick_next_task_rt() -> pick_task_rt() ->
 * _pick_next_task_rt(), 6.6: the head of the highest non-empty priority, unless the
 * rt_rq is throttled (sched_rt_runnable()).
 */
task_struct* pick_next_task_rt(kernel& k, rq& r)
{
    if (!r.rt.rt_queued)
        return nullptr;
    const int idx = sched_find_first_bit(*r.rt.active);
    SIM_BUG_ON(idx >= MAX_RT_PRIO, "cpu{}: rt_nr_running {} but an empty bitmap", r.cpu,
               r.rt.rt_nr_running);
    task_struct* p = r.rt.active->queue[idx].front();
    set_next_task_rt(k, r, *p, true);
    return p;
}

// kernel: kernel/sched/rt.c put_prev_task_rt(), 6.6: a preempted migratable task is pushable.
void put_prev_task_rt(kernel& k, rq& r, task_struct& p)
{
    update_curr_rt(k, r);
    if (p.rt.on_rq && p.nr_cpus_allowed > 1)
        enqueue_pushable_task(k, r, p);
}

/*
 * kernel: kernel/sched/rt.c select_task_rq_rt(), 6.6 (no capacity fitness): a wakee
 * whose CPU runs an RT task it cannot preempt (or one pinned there) goes to the CPU
 * cpupri finds lowest, if that CPU's highest RT priority is below the wakee's.
 */
int select_task_rq_rt(kernel& k, task_struct& p, int cpu, int wake_flags)
{
    if (!(wake_flags & (WF_TTWU | WF_FORK)))
        return cpu;
    const task_struct* curr = k.cpu_rq(cpu).curr;
    const bool test = rt_task(*curr) && (curr->nr_cpus_allowed < 2 || curr->prio <= p.prio);
    if (test) {
        const int target = find_lowest_rq(k, p);
        if (target != -1 && p.prio < k.cpu_rq(target).rt.highest_prio.curr)
            cpu = target;
    }
    return cpu;
}

/*
 * kernel: kernel/sched/rt.c task_tick_rt(), 6.6 (no RLIMIT_RTTIME watchdog, no RT PELT):
 * SCHED_RR's timeslice runs out after sched_rr_timeslice ticks; the task goes to the
 * tail of its priority if it is not alone there.
 */
void task_tick_rt(kernel& k, rq& r, task_struct& p, int /*queued*/)
{
    update_curr_rt(k, r);
    if (p.policy != SCHED_RR)
        return;
    if (--p.rt.time_slice)
        return;
    p.rt.time_slice = sched_rr_timeslice(k);
    if (r.rt.active->queue[p.prio].size() > 1) { // run_list.prev != run_list.next
        requeue_task_rt(r, p, false);
        k.resched_curr(r);
    }
}

/// kernel: kernel/sched/rt.c sched_rr_timeslice = RR_TIMESLICE (100 ms in ticks).
unsigned sched_rr_timeslice(const kernel& k)
{
    const u64 t = static_cast<u64>(k.config().params.rr_timeslice_ms) * k.config().params.hz / 1000;
    return static_cast<unsigned>(std::max<u64>(t, 1));
}

// kernel: kernel/sched/rt.c balance_rt(), 6.6: a CPU lowering its priority pulls first.
bool balance_rt(kernel& k, rq& r, task_struct& prev)
{
    if (!prev.rt.on_rq && r.rt.highest_prio.curr > prev.prio) // need_pull_rt_task()
        pull_rt_task(k, r);
    return r.rt.rt_queued; // sched_rt_runnable(); no stop or dl class
}

// kernel: kernel/sched/rt.c task_woken_rt(), 6.6.
void task_woken_rt(kernel& k, rq& r, task_struct& p)
{
    const bool need_to_push = !p.on_cpu && !r.need_resched && p.nr_cpus_allowed > 1 &&
                              rt_task(*r.curr) &&
                              (r.curr->nr_cpus_allowed < 2 || r.curr->prio <= p.prio);
    if (need_to_push)
        push_rt_tasks(k, r);
}

/* ---- push and pull ---- */

/*
 * kernel: kernel/sched/rt.c find_lowest_rq(), 6.6: among the CPUs of the lowest cpupri
 * below p, p's own CPU, else this CPU or the next of the mask in the nearest
 * SD_WAKE_AFFINE domain, else this CPU, else any. -1: none.
 */
int find_lowest_rq(kernel& k, task_struct& p)
{
    if (p.nr_cpus_allowed == 1)
        return -1;
    cpumask lowest_mask;
    if (!cpupri_find(k.rd().cpupri, p, &lowest_mask))
        return -1;
    return find_cpu_near(k, lowest_mask, p.cpu);
}

/*
 * kernel: the tail of rt.c find_lowest_rq() and deadline.c find_later_rq(), 6.6: p's
 * own CPU (task_cpu) if in the mask, else this CPU or the next of the mask in the
 * nearest SD_WAKE_AFFINE domain, else this CPU, else any (cpumask_any_distribute()).
 */
int find_cpu_near(kernel& k, const cpumask& mask, int task_cpu)
{
    if (mask.test(task_cpu))
        return task_cpu;
    int this_cpu = k.smp_processor_id();
    if (!mask.test(this_cpu))
        this_cpu = -1;
    for (const auto& sd : k.topology().cpu(task_cpu).domains) {
        if (!(sd->flags & SD_WAKE_AFFINE))
            continue;
        if (this_cpu != -1 && sd->span.test(this_cpu))
            return this_cpu;
        const int best_cpu = cpumask_any_and_distribute(k, mask, sd->span);
        if (best_cpu < k.nr_cpu_ids())
            return best_cpu;
    }
    if (this_cpu != -1)
        return this_cpu;
    const int any = cpumask_any_and_distribute(k, mask, mask);
    return any < k.nr_cpu_ids() ? any : -1;
}

/*
 * kernel: kernel/sched/rt.c find_lock_lowest_rq(), 6.6: the lowest CPU if it runs below
 * p's priority. Taking its lock cannot race here, so no retries.
 */
rq* find_lock_lowest_rq(kernel& k, task_struct& p, rq& r)
{
    const int cpu = find_lowest_rq(k, p);
    if (cpu == -1 || cpu == r.cpu)
        return nullptr;
    rq& lowest = k.cpu_rq(cpu);
    if (lowest.rt.highest_prio.curr <= p.prio)
        return nullptr;
    k.charges().lock_and_charge(lowest.lock, k.smp_processor_id(),
                                k.charges().params().rq_lock_hold); // double_lock_balance()
    return &lowest;
}

/*
 * kernel: kernel/sched/rt.c push_rt_task(), 6.6: the highest pushable task moves to
 * the lowest CPU, unless it should preempt this CPU's task instead. True: one moved.
 */
bool push_rt_task(kernel& k, rq& r)
{
    if (!r.rt.overloaded || r.rt.pushable_tasks.empty())
        return false;
    task_struct& next_task = *r.rt.pushable_tasks.begin()->second; // pick_next_pushable_task()
    SIM_BUG_ON(task_current(r, next_task) || next_task.cpu != r.cpu ||
                   !task_on_rq_queued(next_task) || next_task.nr_cpus_allowed <= 1,
               "cpu{}: pid {} is not pushable", r.cpu, next_task.pid);
    if (next_task.prio < r.curr->prio) {
        k.resched_curr(r);
        return false;
    }
    rq* lowest = find_lock_lowest_rq(k, next_task, r);
    if (!lowest)
        return false;
    if (k.decisions().on())
        k.decisions().log(
            k.now(), k.smp_processor_id(), "push_rt_task",
            fmt::format("pid {} ({}) prio {} cpu{} -> cpu{} (highest RT prio there {})",
                        next_task.pid, next_task.comm, next_task.prio, r.cpu, lowest->cpu,
                        lowest->rt.highest_prio.curr));
    move_queued_task_locked(k, r, *lowest, next_task);
    k.resched_curr(*lowest);
    ++k.rt().pushes;
    return true;
}

// kernel: kernel/sched/rt.c push_rt_tasks(), 6.6.
void push_rt_tasks(kernel& k, rq& r)
{
    while (push_rt_task(k, r)) {
    }
}

/*
 * kernel: kernel/sched/rt.c rto_next_cpu(), 6.6: the next RT-overloaded CPU of the
 * push-IPI chain, restarting once more if another pull asked meanwhile.
 */
int rto_next_cpu(kernel& k)
{
    for (;;) {
        const int cpu = k.rd().rto_mask.next(k.rd().rto_cpu + 1);
        k.rd().rto_cpu = cpu;
        if (cpu < k.nr_cpu_ids())
            return cpu;
        k.rd().rto_cpu = -1;
        const int next = k.rd().rto_loop_next;
        if (k.rd().rto_loop == next)
            break;
        k.rd().rto_loop = next;
    }
    return -1;
}

// model: irq_work_queue_on(&rd->rto_push_work, cpu): the IPI's delay, its sending time here.
void queue_rto_push_work(kernel& k, int cpu)
{
    const sim_dur d = cpu == k.smp_processor_id()
                          ? 0
                          : k.charges().remote_notify_delay(k.cpu_rq(cpu), k.smp_processor_id(),
                                                            cost_model::notify::ipi);
    k.sim().after(d, event_prio::ipi, k.rt().handler(), static_cast<u64>(cpu));
}

// kernel: kernel/sched/rt.c tell_cpu_to_push(), 6.6 (RT_PUSH_IPI).
void tell_cpu_to_push(kernel& k, rq& /*r*/)
{
    ++k.rd().rto_loop_next;
    if (k.rd().rto_loop_start)
        return; // rto_start_trylock() failed
    int cpu = -1;
    if (k.rd().rto_cpu < 0)
        cpu = rto_next_cpu(k);
    if (cpu >= 0)
        queue_rto_push_work(k, cpu);
}

// kernel: kernel/sched/rt.c rto_push_irq_work_func(), 6.6: push here, then pass it on.
void rto_push_irq_work_func(kernel& k, rq& r)
{
    k.set_this_cpu(r.cpu);
    if (!r.rt.pushable_tasks.empty()) {
        k.charges().lock_and_charge(r.lock, r.cpu, k.charges().params().rq_lock_hold);
        push_rt_tasks(k, r);
    }
    const int cpu = rto_next_cpu(k);
    if (cpu < 0)
        return;
    queue_rto_push_work(k, cpu);
}

/*
 * kernel: kernel/sched/rt.c pull_rt_task(), 6.6: when other CPUs are RT-overloaded,
 * with RT_PUSH_IPI they are asked to push (tell_cpu_to_push()); without, this CPU
 * takes from each the highest pushable task it may run that beats its own priority.
 */
void pull_rt_task(kernel& k, rq& this_rq)
{
    const int this_cpu = this_rq.cpu;
    if (!k.rd().rto_count)
        return;
    if (k.rd().rto_count == 1 && k.rd().rto_mask.test(this_cpu))
        return;
    if (sched_feat_of(k, RT_PUSH_IPI)) {
        tell_cpu_to_push(k, this_rq);
        return;
    }
    bool resched = false;
    for_each_cpu(cpu, k.rd().rto_mask)
    {
        if (cpu == this_cpu)
            continue;
        rq& src = k.cpu_rq(cpu);
        if (src.rt.highest_prio.next >= this_rq.rt.highest_prio.curr)
            continue;
        k.charges().lock_and_charge(src.lock, this_cpu,
                                    k.charges().params().rq_lock_hold); // double_lock_balance()
        task_struct* p = nullptr; // pick_highest_pushable_task()
        for (const auto& [prio, t] : src.rt.pushable_tasks)
            if (!t->on_cpu && t->cpus_mask.test(this_cpu)) {
                p = t;
                break;
            }
        if (!p || p->prio >= this_rq.rt.highest_prio.curr || p->prio < src.curr->prio)
            continue;
        move_queued_task_locked(k, src, this_rq, *p);
        ++k.rt().pulls;
        resched = true;
    }
    if (resched)
        k.resched_curr(this_rq);
}

/* ---- checks ---- */

void check_rt_rq(const kernel& k, const rq& r, std::string& errs)
{
    const rt_rq& rt = r.rt;
    auto err = [&](const std::string& e) { errs += fmt::format("cpu{}: {}\n", r.cpu, e); };
    unsigned n = 0, rr = 0;
    int highest = MAX_RT_PRIO - 1;
    // The common case, no RT task here, without walking the 100 lists.
    const bool empty = !rt.rt_nr_running && !rt.active->bitmap[0] &&
                       rt.active->bitmap[1] == 1ULL << (MAX_RT_PRIO - 64);
    for (int prio = 0; prio < (empty ? 0 : MAX_RT_PRIO); ++prio) {
        const auto& queue = rt.active->queue[prio];
        const bool bit = rt.active->bitmap[prio >> 6] & (1ULL << (prio & 63));
        if (bit != !queue.empty())
            err(fmt::format("rt bitmap bit {} is {} but its list has {} tasks", prio, bit,
                            queue.size()));
        if (!queue.empty() && highest == MAX_RT_PRIO - 1)
            highest = prio;
        for (const task_struct* p : queue) {
            ++n;
            rr += p->policy == SCHED_RR;
            if (p->prio != prio || !p->rt.on_rq || p->cpu != r.cpu || !task_on_rq_queued(*p))
                err(fmt::format("pid {} on rt list {}: prio {} on_rq {} cpu {} task on_rq {}",
                                p->pid, prio, p->prio, p->rt.on_rq, p->cpu, p->on_rq));
        }
    }
    if (n != rt.rt_nr_running || rr != rt.rr_nr_running)
        err(fmt::format("rt_nr_running {} rr_nr_running {} but the lists hold {} and {}",
                        rt.rt_nr_running, rt.rr_nr_running, n, rr));
    if (highest != rt.highest_prio.curr)
        err(fmt::format("rt highest_prio.curr {} but the highest queued is {}",
                        rt.highest_prio.curr, highest));
    // With DL tasks, cpupri holds CPUPRI_HIGHER or a later RT update (last writer wins).
    if (!r.dl.dl_nr_running &&
        k.rd().cpupri.cpu_to_pri[static_cast<std::size_t>(r.cpu)] != convert_prio(highest))
        err(fmt::format("cpupri {} but the highest RT priority is {}",
                        k.rd().cpupri.cpu_to_pri[static_cast<std::size_t>(r.cpu)], highest));
    if (rt.rt_queued == rt.rt_throttled && rt.rt_nr_running)
        err(fmt::format("rt_rq queued {} throttled {} with {} tasks", rt.rt_queued,
                        rt.rt_throttled, rt.rt_nr_running));
    for (const auto& [prio, p] : rt.pushable_tasks)
        if (p == r.curr || !p->rt.on_rq || p->nr_cpus_allowed < 2 || p->prio != prio)
            err(fmt::format("pid {} pushable but curr {} on_rq {} allowed {}", p->pid,
                            p == r.curr, p->rt.on_rq, p->nr_cpus_allowed));
    if (r.curr->sched_class == &rt_sched_class && !r.curr->rt.on_rq &&
        r.curr->__state == TASK_RUNNING)
        err(fmt::format("rt curr pid {} is runnable but not queued", r.curr->pid));
    if (rt.overloaded != k.rd().rto_mask.test(r.cpu))
        err(fmt::format("rt overloaded {} but rto_mask has the CPU: {}", rt.overloaded,
                        k.rd().rto_mask.test(r.cpu)));
}

// kernel: kernel/sched/rt.c DEFINE_SCHED_CLASS(rt), 6.6 (the hooks the model calls).
const sched_class rt_sched_class = {
    .name = "rt",
    .order = 2,
    .policies = (1u << SCHED_FIFO) | (1u << SCHED_RR),
    .enqueue_task = enqueue_task_rt,
    .dequeue_task = dequeue_task_rt,
    .yield_task = yield_task_rt,
    .wakeup_preempt = wakeup_preempt_rt,
    .pick_next_task = [](kernel& k, rq& r,
                         task_struct* /*prev*/) { return pick_next_task_rt(k, r); },
    .select_task_rq = select_task_rq_rt,
    .migrate_task_rq = nullptr,
    .task_tick = task_tick_rt,
    .task_fork = nullptr,
    .put_prev_task = put_prev_task_rt,
    .balance = balance_rt,
    .task_woken = task_woken_rt,
};

/*
 * model: the rt class's timer and irq_work, as this state's events: def_rt_bandwidth's
 * period timer (sched_rt_period_timer()) and rd->rto_push_work on the CPU it names.
 */
void rt_state::fire(u64 arg)
{
    if (arg == period_timer)
        sched_rt_period_timer(k_);
    else
        rto_push_irq_work_func(k_, k_.cpu_rq(static_cast<int>(arg)));
}

} // namespace schedlab
