// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A kernel sleeping mutex (struct mutex) as the tasks of a workload contend for it:
 * the pipe's pipe->mutex (channel.h).
 *
 * kernel: kernel/locking/mutex.c, 6.x (read at the 6.1-6.6 structure:
 * __mutex_trylock_common(), mutex_optimistic_spin(), mutex_spin_on_owner(),
 * __mutex_lock_common(), __mutex_unlock_slowpath(), __mutex_handoff()):
 *  - mutex_lock(): a free mutex (no owner) is taken at once, whoever waits for it
 *    (__mutex_trylock() ignores MUTEX_FLAG_WAITERS; only HANDOFF/PICKUP stop it);
 *  - held by a task running on a CPU: the caller spins (optimistic spinning, queued
 *    FIFO on the OSQ MCS lock) until the owner releases it or leaves its CPU; a
 *    spinner whose owner is not on a CPU goes to the slow path;
 *  - slow path: the task joins the tail of lock->wait_list (FIFO) and sleeps
 *    (TASK_UNINTERRUPTIBLE); woken, it tries again; the waiter at the head of the
 *    list that finds the mutex taken again sets MUTEX_FLAG_HANDOFF
 *    (__mutex_trylock_or_handoff(lock, first)) and spins as a waiter while the owner
 *    runs (mutex_optimistic_spin() with its waiter, outside the OSQ), else sleeps;
 *  - mutex_unlock(): with HANDOFF set, the owner gives the mutex to the first waiter
 *    (__mutex_handoff(): owner = that waiter | PICKUP) instead of releasing it, and
 *    wakes it; else it releases it and, if there are waiters, wakes the first one
 *    (wake_q, a plain wakeup: no WF_SYNC). The woken waiter stays on the list until
 *    it holds the mutex.
 * model: the mutex is the owner, the HANDOFF flag, the OSQ's spinners in order and
 * the wait list. A spinner spins in bursts of its own CPU time (the kernel accounts
 * optimistic spinning to the spinning task): to the owner's expected release (its
 * acquisition plus its hold, if it keeps running) plus the transfer of the owner
 * line from the owner's CPU (line_*, at least an atomic_op): it sees the release
 * one line transfer after it. At a release, the first OSQ spinner still on a CPU
 * becomes the owner (it is spinning on the owner field); it starts its hold when its
 * spin burst ends.
 * Differs: the kernel spins with preemption disabled and stops on need_resched();
 * the model's spin burst is preemptible like any CPU time and a spinner checks the
 * owner only at the end of each burst (a spinner whose owner left its CPU mid-burst
 * notices at the burst's end); the OSQ's own queueing cost and its need_resched()
 * exits are not modelled; the wait_lock spinlock is not a contended lock here.
 * A mutex holder is preempted like any running task in kernel code: by default (no
 * `+preempt=` kernel term) anywhere, at once; under preempt=none/voluntary only at the
 * call's return to user mode (voluntary also at mutex_lock()'s might_sleep(), before the
 * mutex is taken: task.cc start_call()); under preempt=full at once by an IPI or the tick;
 * under preempt=lazy as under full for a full reschedule, and at the call's return to user
 * mode or the next tick for the fair class's lazy one (sched/core.cc preempt_defers()).
 */
#include "sched/sched.h"
#include "sim/time.h"

#include <deque>

namespace schedlab {

class syscalls;

/// Counters of one mutex, for tests and the run's report.
struct mutex_stats {
    u64 acquisitions = 0;
    u64 contended = 0; ///< acquisitions that found it held (spun or slept)
    u64 spins = 0;     ///< spin bursts
    sim_dur spin_ns = 0;
    u64 sleeps = 0;    ///< times a task slept on the wait list
    u64 handoffs = 0;  ///< unlocks that handed it to the first waiter (MUTEX_FLAG_HANDOFF)
    u64 wakeups = 0;   ///< waiters woken by unlocks

    mutex_stats& operator+=(const mutex_stats& o)
    {
        acquisitions += o.acquisitions;
        contended += o.contended;
        spins += o.spins;
        spin_ns += o.spin_ns;
        sleeps += o.sleeps;
        handoffs += o.handoffs;
        wakeups += o.wakeups;
        return *this;
    }
};

/// One task's mutex_lock() in progress (the kernel's struct mutex_waiter, on its stack).
struct mutex_waiter {
    bool in_osq = false;       ///< queued as an optimistic spinner
    bool on_wait_list = false; ///< on lock->wait_list (__mutex_add_waiter())
    bool slept = false;        ///< has slept in this mutex_lock() (schedule_preempt_disabled())
    bool contended = false;    ///< this acquisition found the mutex held
};

/// kernel: struct mutex (kernel/locking/mutex.c; see the file comment).
class mutex {
public:
    enum class lock_result : u8 {
        acquired, ///< the caller holds it: it runs its hold next
        spin,     ///< the caller spins `spin` ns (its own CPU time), then tries again
        sleep,    ///< the caller is on the wait list, TASK_UNINTERRUPTIBLE: sleep
    };

    /*
     * One attempt of mutex_lock() by p (current on its CPU) at sys.now(); `hold` is
     * how long p will hold it if it gets it (its CPU time to the unlock, for
     * spinners' estimates). On lock_result::spin, `spin` is the burst to spin.
     */
    lock_result lock(syscalls& sys, task_struct& p, mutex_waiter& w, sim_dur hold, sim_dur& spin);
    /// mutex_unlock() by its owner p: returns the number of tasks woken (0 or 1).
    int unlock(syscalls& sys, task_struct& p);

    const task_struct* owner() const { return owner_; }
    bool handoff() const { return handoff_; }
    std::size_t nr_waiters() const { return wait_list_.size(); }
    std::size_t nr_spinners() const { return osq_.size(); }
    const mutex_stats& stats() const { return stats_; }

private:
    struct osq_node {
        task_struct* p;
        mutex_waiter* w;
        sim_dur hold;
        sim_time spin_end; ///< when its current spin burst ends
    };
    struct wait_node {
        task_struct* p;
        mutex_waiter* w;
        sim_dur hold; ///< its hold once it has the mutex
    };

    void acquired(task_struct& p, mutex_waiter& w, sim_time now, sim_dur hold);
    void leave_osq(const task_struct& p, mutex_waiter& w);
    void leave_wait_list(const task_struct& p, mutex_waiter& w);

    task_struct* owner_ = nullptr;
    bool handoff_ = false;  ///< MUTEX_FLAG_HANDOFF
    sim_time release_at_ = 0; ///< the owner's expected unlock, if it keeps running
    std::deque<osq_node> osq_;
    std::deque<wait_node> wait_list_;
    mutex_stats stats_;
};

} // namespace schedlab
