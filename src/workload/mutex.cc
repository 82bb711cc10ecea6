// SPDX-License-Identifier: GPL-2.0-only
/* A kernel sleeping mutex contended by tasks (mutex.h). */
#include "workload/mutex.h"

#include "sched/syscalls.h"
#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

void mutex::leave_osq(const task_struct& p, mutex_waiter& w)
{
    if (!w.in_osq)
        return;
    const auto it = std::find_if(osq_.begin(), osq_.end(), [&](const osq_node& n) { return n.p == &p; });
    SIM_BUG_ON(it == osq_.end(), "pid {} ({}) marked as a spinner but not in the OSQ", p.pid, p.comm);
    osq_.erase(it);
    w.in_osq = false;
}

void mutex::leave_wait_list(const task_struct& p, mutex_waiter& w)
{
    if (!w.on_wait_list)
        return;
    const auto it = std::find_if(wait_list_.begin(), wait_list_.end(),
                                 [&](const wait_node& n) { return n.p == &p; });
    SIM_BUG_ON(it == wait_list_.end(), "pid {} ({}) marked as a waiter but not on the wait list",
               p.pid, p.comm);
    wait_list_.erase(it); // __mutex_remove_waiter()
    w.on_wait_list = false;
}

void mutex::acquired(task_struct& p, mutex_waiter& w, sim_time now, sim_dur hold)
{
    leave_osq(p, w);
    leave_wait_list(p, w);
    owner_ = &p;
    release_at_ = now + hold;
    ++stats_.acquisitions;
    w = {};
}

// kernel: mutex_lock() -> __mutex_lock_common(), 6.x (see mutex.h).
mutex::lock_result mutex::lock(syscalls& sys, task_struct& p, mutex_waiter& w, sim_dur hold,
                               sim_dur& spin)
{
    const sim_time now = sys.now();
    spin = 0;
    // Handed to p at an unlock: as the OSQ's head spinner, or by __mutex_handoff() (PICKUP).
    if (owner_ == &p) {
        acquired(p, w, now, hold);
        return lock_result::acquired;
    }
    // __mutex_trylock(): a free mutex is anyone's (HANDOFF is only ever set while it is held).
    if (owner_ == nullptr) {
        SIM_BUG_ON(handoff_, "mutex free with MUTEX_FLAG_HANDOFF set");
        acquired(p, w, now, hold);
        return lock_result::acquired;
    }
    if (!w.contended) {
        w.contended = true;
        ++stats_.contended;
    }
    const bool first = w.on_wait_list && wait_list_.front().p == &p;
    // After schedule(): __mutex_trylock_or_handoff(lock, first) sets HANDOFF for the head waiter.
    if (first && w.slept)
        handoff_ = true;
    // mutex_optimistic_spin(): new contenders through the OSQ, the head waiter on its own;
    // mutex_can_spin_on_owner() / mutex_spin_on_owner(): only while the owner is on a CPU.
    if (owner_->on_cpu && (!w.on_wait_list || first)) {
        if (!w.on_wait_list && !w.in_osq) {
            osq_.push_back({&p, &w, hold, 0}); // osq_lock(): MCS queue, FIFO
            w.in_osq = true;
        }
        const sim_dur line = std::max(sys.line_cost(owner_->cpu, p.cpu), sys.costs().atomic_op);
        // At least 1 ns: its next look at the owner (a zero-cost machine has no line to wait for).
        spin = std::max<sim_dur>(1, (release_at_ > now ? release_at_ - now : 0) + line);
        if (w.in_osq)
            for (osq_node& n : osq_)
                if (n.p == &p)
                    n.spin_end = now + spin;
        ++stats_.spins;
        stats_.spin_ns += spin;
        return lock_result::spin;
    }
    // The slow path: __mutex_add_waiter() at the tail, then schedule_preempt_disabled().
    leave_osq(p, w);
    if (!w.on_wait_list) {
        wait_list_.push_back({&p, &w, hold});
        w.on_wait_list = true;
    }
    w.slept = true;
    ++stats_.sleeps;
    p.__state = TASK_UNINTERRUPTIBLE; // mutex_lock(): set_current_state(TASK_UNINTERRUPTIBLE)
    return lock_result::sleep;
}

// kernel: mutex_unlock() -> __mutex_unlock_slowpath(), 6.x (see mutex.h).
int mutex::unlock(syscalls& sys, task_struct& p)
{
    SIM_BUG_ON(owner_ != &p, "pid {} ({}) unlocks a mutex it does not hold", p.pid, p.comm);
    const sim_time now = sys.now();
    task_struct* next = nullptr;
    if (handoff_) {
        // __mutex_handoff(): the first waiter owns it (PICKUP) before it even runs.
        SIM_BUG_ON(wait_list_.empty(), "MUTEX_FLAG_HANDOFF with no waiter");
        handoff_ = false;
        next = wait_list_.front().p;
        owner_ = next;
        release_at_ = now + wait_list_.front().hold; // if it is spinning, it picks it up now
        ++stats_.handoffs;
    } else {
        owner_ = nullptr;
        // The OSQ's head spins on the owner field: it takes the mutex as soon as it sees
        // it free. Spinners no longer on a CPU have left the queue (need_resched()).
        while (!osq_.empty()) {
            const osq_node n = osq_.front();
            if (n.p->on_cpu) {
                owner_ = n.p;
                release_at_ = std::max(now, n.spin_end) + n.hold;
                break;
            }
            osq_.pop_front();
            n.w->in_osq = false;
        }
        if (!wait_list_.empty())
            next = wait_list_.front().p;
    }
    // wake_q: a plain wakeup of the first waiter; a waiter spinning on its CPU is running.
    if (next && sys.try_to_wake_up(*next, TASK_NORMAL, 0)) {
        ++stats_.wakeups;
        return 1;
    }
    return 0;
}

} // namespace schedlab
