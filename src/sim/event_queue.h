// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The event queue: a 4-ary min-heap keyed by (when, prio, seq).
 *
 * - `when` is simulated time in ns;
 * - `prio` is a named priority that orders events due at the same instant
 *   (lower fires first), in the spirit of gem5's Event::Priority;
 * - `seq` is the insertion sequence, so equal (when, prio) fire FIFO.
 * The key never involves pointers, so the order is the same on every run;
 * every key is distinct, so the order does not depend on the heap's shape.
 *
 * Events are cancellable through their event_id. The heap is indexed (each
 * event knows its position), so a cancelled event leaves the heap at once
 * and a pending one can be moved to another time in place (reschedule()):
 * the heap holds only live events.
 *
 * take() is pop() for an engine that fires the event next: it leaves the root
 * vacant, and the next schedule() fills it, sifting the new event down from the
 * root. A handler usually schedules one event soon after its own, which then
 * stops near the top, where pop() + schedule() would sift the last leaf down the
 * whole height and the new event up again. The order events fire in depends
 * only on their keys, never on the heap's shape, so it is the same either way.
 */
#include "sim/time.h"

#include <vector>

namespace schedlab {

/// Orders events due at the same instant. Lower values fire first.
enum class event_prio : s8 {
    hrtimer = 0,    ///< timer expiry (timed sleeps, hrtimers): wakes tasks before others act
    ipi = 10,       ///< remote wakeup delivery (wakelist / reschedule IPI)
    task_work = 20, ///< a running task's CPU burst completes
    softirq_level = 23, ///< SCHED_SOFTIRQ's next level: the softirq ends before a deferred __schedule()
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

/// Names one scheduled event; stale once it fired or was cancelled.
struct event_id {
    u32 slot = ~0u;
    u32 gen = 0; ///< the slot's generation when the event was scheduled
    bool valid() const { return slot != ~0u; }
};

class event_queue {
public:
    event_id schedule(sim_time when, event_prio prio, event_handler* h, u64 arg);
    /// Returns true if the event was pending and is now cancelled.
    bool cancel(event_id id);
    bool pending(event_id id) const
    {
        return id.slot < slots_.size() && slots_[id.slot].gen == id.gen &&
               slots_[id.slot].pos != npos;
    }
    /// Moves a pending event to `when`: it then fires exactly as if it had been
    /// cancelled and scheduled anew now (same priority, handler and argument, a
    /// new insertion sequence), and `id` stays valid. False if it was not pending.
    bool reschedule(event_id id, sim_time when);

    bool empty() const { return size() == 0; }
    std::size_t size() const { return heap_.size() - (hole_ ? 1 : 0); }
    /// Time of the earliest event; only valid when !empty() and no root is vacant (settle()).
    sim_time next_time() const { return unbiased(heap_.front().when); }

    struct fired {
        sim_time when;
        event_handler* handler;
        u64 arg;
    };
    /// Removes and returns the earliest event; requires !empty().
    fired pop();
    /// pop(), leaving the root vacant for the next schedule() (see above); any other
    /// change of the queue, or settle(), first closes it.
    fired take();
    /// The handler and argument of the earliest pending event while take() left the root
    /// vacant: the event that fires next unless the handler now firing schedules one
    /// before it. A hint for prefetching what that event will touch, never for a
    /// decision; {nullptr, 0} when no root is vacant or nothing else is pending.
    struct next_hint {
        event_handler* handler;
        u64 arg;
    };
    next_hint peek_next() const
    {
        if (!hole_ || heap_.size() < 2)
            return {nullptr, 0};
        const slot& s = slots_[heap_[min_child(0)].slot];
        return {s.handler, s.arg};
    }
    /// Closes a root take() left vacant: the last leaf sifts down into it.
    void settle()
    {
        if (hole_)
            close_hole();
    }

    /// Insertion sequences handed out: events scheduled plus reschedules.
    u64 scheduled_total() const { return seq_; }
    /// Events cancelled while pending.
    u64 cancelled_total() const { return cancelled_; }
    /// Reschedules of pending events (each would have been a cancel and a schedule).
    u64 rescheduled_total() const { return rescheduled_; }
    /// Heap entries: with immediate removal, the pending events.
    std::size_t heap_entries() const { return size(); }

private:
    static constexpr u32 npos = ~0u;
    static constexpr std::size_t arity = 4;
    static constexpr int seq_bits = 56;

    /*
     * A heap entry: the key (when, prio, seq) packed into two words, so that
     * before() is one 128-bit comparison the compiler makes branch-free, and the
     * slot of the event's handler and argument. Signed `when` is biased by 2^63,
     * which keeps its order as an unsigned word.
     */
    struct entry {
        u64 when;  ///< the event's time + 2^63
        u64 order; ///< prio << seq_bits | seq
        u32 slot;
    };
    static u64 biased(sim_time when) { return static_cast<u64>(when) ^ (u64{1} << 63); }
    static sim_time unbiased(u64 key) { return static_cast<sim_time>(key ^ (u64{1} << 63)); }
    static bool before(const entry& a, const entry& b)
    {
        using u128 = unsigned __int128;
        return (static_cast<u128>(a.when) << 64 | a.order) <
               (static_cast<u128>(b.when) << 64 | b.order);
    }
    struct slot {
        event_handler* handler = nullptr;
        u64 arg = 0;
        u32 gen = 0;    ///< bumped when the slot is freed: stale ids stop matching
        u32 pos = npos; ///< index in heap_, npos while free
    };
    u64 next_order(u64 order_of_prio);
    void place(std::size_t pos, const entry& e)
    {
        heap_[pos] = e;
        slots_[e.slot].pos = static_cast<u32>(pos);
    }
    /*
     * The child of `pos` with the earliest key; `pos` must have a child. Which of four
     * children is earliest is a coin toss to the branch predictor, so a full family is
     * decided by a tournament whose outcomes are used as numbers, not jumps (the profile
     * of issue 14 had sift_down at 13-18% of a run, most of it mispredicted branches).
     */
    [[gnu::always_inline]] std::size_t min_child(std::size_t pos) const
    {
        const entry* h = heap_.data();
        const std::size_t first = pos * arity + 1;
        const std::size_t n = heap_.size();
        if (first + arity <= n) {
            const std::size_t a = first + static_cast<std::size_t>(before(h[first + 1], h[first]));
            const std::size_t b =
                first + 2 + static_cast<std::size_t>(before(h[first + 3], h[first + 2]));
            const std::size_t take_b = -static_cast<std::size_t>(before(h[b], h[a])); // 0 or ~0
            return a ^ ((a ^ b) & take_b);
        }
        std::size_t best = first;
        for (std::size_t c = first + 1; c < n; ++c)
            if (before(h[c], h[best]))
                best = c;
        return best;
    }
    void sift_up(std::size_t pos, const entry& e);
    void sift_down(std::size_t pos, const entry& e);
    void remove_at(std::size_t pos);
    void close_hole();
    void free_slot(u32 idx);

    std::vector<entry> heap_;
    std::vector<slot> slots_;
    std::vector<u32> free_;
    u64 seq_ = 0;
    u64 cancelled_ = 0;
    u64 rescheduled_ = 0;
    bool hole_ = false; ///< heap_[0] is vacant (take()); heap_ holds the live events after it
};

} // namespace schedlab
