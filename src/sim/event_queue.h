// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The event queue: a binary min-heap keyed by (when, prio, seq).
 *
 * - `when` is simulated time in ns;
 * - `prio` is a named priority that orders events due at the same instant
 *   (lower fires first), in the spirit of gem5's Event::Priority;
 * - `seq` is the insertion sequence, so equal (when, prio) fire FIFO.
 * The key never involves pointers, so the order is the same on every run.
 *
 * Events are cancellable through their event_id. Cancellation is lazy: the
 * heap entry stays and is skipped when it reaches the top.
 */
#include "sim/time.h"

#include <vector>

namespace schedlab {

/// Orders events due at the same instant. Lower values fire first.
enum class event_prio : s8 {
    hrtimer = 0,    ///< timer expiry (timed sleeps, hrtimers): wakes tasks before others act
    ipi = 10,       ///< remote wakeup delivery (wakelist / reschedule IPI)
    task_work = 20, ///< a running task's CPU burst completes
    resched = 25,   ///< deferred __schedule() on a CPU (need_resched handling)
    tick = 30,      ///< scheduler tick
    softirq = 40,   ///< SCHED_SOFTIRQ (periodic / nohz balancing)
    sample = 90,    ///< sampled self-checks and statistics
    stop = 100,     ///< end of the measured interval
};

/// Receives fired events. The 64-bit argument lets one handler serve many objects.
class event_handler {
public:
    virtual void fire(u64 arg) = 0;

protected:
    ~event_handler() = default;
};

struct event_id {
    u32 slot = ~0u;
    u64 seq = 0;
    bool valid() const { return slot != ~0u; }
};

class event_queue {
public:
    event_id schedule(sim_time when, event_prio prio, event_handler* h, u64 arg);
    /// Returns true if the event was pending and is now cancelled.
    bool cancel(event_id id);
    bool pending(event_id id) const;

    bool empty() const { return live_ == 0; }
    std::size_t size() const { return live_; }
    /// Time of the earliest live event; only valid when !empty().
    sim_time next_time();

    struct fired {
        sim_time when;
        event_handler* handler;
        u64 arg;
    };
    /// Removes and returns the earliest live event; requires !empty().
    fired pop();

    u64 scheduled_total() const { return seq_; }
    /// Events cancelled while pending (each leaves a dead heap entry until it surfaces).
    u64 cancelled_total() const { return cancelled_; }
    /// Heap entries, live and dead.
    std::size_t heap_entries() const { return heap_.size(); }

private:
    struct entry {
        sim_time when;
        s8 prio;
        u64 seq;
        u32 slot;
    };
    struct slot {
        event_handler* handler = nullptr;
        u64 arg = 0;
        u64 seq = 0;
        bool alive = false;
    };
    static bool later(const entry& a, const entry& b)
    {
        if (a.when != b.when)
            return a.when > b.when;
        if (a.prio != b.prio)
            return a.prio > b.prio;
        return a.seq > b.seq;
    }
    void drop_dead_top();

    std::vector<entry> heap_;
    std::vector<slot> slots_;
    std::vector<u32> free_;
    u64 seq_ = 0;
    u64 cancelled_ = 0;
    std::size_t live_ = 0;
};

} // namespace schedlab
