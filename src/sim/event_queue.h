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
 * An entry is 16 bytes: the time, and one word of priority, sequence and the slot
 * that holds the event's handler and argument. The sequence field is 32 bits; when it
 * runs out, the pending events are renumbered 1..n in their order (renumber()), which
 * keeps every comparison between them, so the order events fire in is unchanged.
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

#include <cstddef>
#include <new>
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
    /// The most insertion sequences handed out between two renumberings.
    static constexpr u64 max_seq_limit = (u64{1} << 32) - 1;
    event_queue() = default;
    /// For tests: renumber when the sequence reaches `seq_limit` (>= 2) instead of 2^32 - 1.
    explicit event_queue(u64 seq_limit);

    event_id schedule(sim_time when, event_prio prio, event_handler* h, u64 arg);
    /// Returns true if the event was pending and is now cancelled.
    bool cancel(event_id id);
    bool pending(event_id id) const
    {
        return id.slot < index_.size() && index_[id.slot].gen == id.gen &&
               index_[id.slot].pos != npos;
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
        const slot& s = slots_[heap_[min_child(0)].slot()];
        return {s.handler, s.arg};
    }
    /// Closes a root take() left vacant: the last leaf sifts down into it.
    void settle()
    {
        if (hole_)
            close_hole();
    }

    /// Insertion sequences handed out: events scheduled plus reschedules.
    u64 scheduled_total() const { return scheduled_; }
    /// Times the pending events' sequences were renumbered (renumber()).
    u64 renumbered_total() const { return renumbered_; }
    /// Events cancelled while pending.
    u64 cancelled_total() const { return cancelled_; }
    /// Reschedules of pending events (each would have been a cancel and a schedule).
    u64 rescheduled_total() const { return rescheduled_; }
    /// Heap entries: with immediate removal, the pending events.
    std::size_t heap_entries() const { return size(); }

private:
    static constexpr u32 npos = ~0u;
    static constexpr std::size_t arity = 4;
    static constexpr int slot_bits = 25; ///< at most 2^25 events pending at once (slots 0 .. 2^25 - 1)
    static constexpr int prio_shift = 57; ///< event_prio is 0..127: 7 bits
    static constexpr u64 slot_mask = (u64{1} << slot_bits) - 1;
    static constexpr u64 seq_mask = ((u64{1} << prio_shift) - 1) & ~slot_mask;
    static_assert(prio_shift - slot_bits == 32, "the sequence field holds max_seq_limit");

    /*
     * A heap entry: the key (when, prio, seq) packed into two words, so that
     * before() is one 128-bit comparison the compiler makes branch-free. The slot of
     * the event's handler and argument sits below the sequence: sequences of pending
     * events are distinct, so the slot bits never decide a comparison. Signed `when`
     * is biased by 2^63, which keeps its order as an unsigned word.
     */
    struct entry {
        u64 when;  ///< the event's time + 2^63
        u64 order; ///< prio << prio_shift | seq << slot_bits | slot
        u32 slot() const { return static_cast<u32>(order & slot_mask); }
    };
    static_assert(sizeof(entry) == 16);
    static u64 biased(sim_time when) { return static_cast<u64>(when) ^ (u64{1} << 63); }
    static sim_time unbiased(u64 key) { return static_cast<sim_time>(key ^ (u64{1} << 63)); }
    static bool before(const entry& a, const entry& b)
    {
        using u128 = unsigned __int128;
        return (static_cast<u128>(a.when) << 64 | a.order) <
               (static_cast<u128>(b.when) << 64 | b.order);
    }
    /*
     * A slot: what an event does, read once when it fires (and by peek_next()). Where
     * the event sits in the heap is kept apart, in index_: place() writes it at every
     * level of every sift, and 8 bytes a slot stay in the first-level cache where the
     * 24 bytes of handler, argument, generation and position together did not.
     */
    struct slot {
        event_handler* handler = nullptr;
        u64 arg = 0;
    };
    struct slot_index {
        u32 pos = npos; ///< index in heap_, npos while free
        u32 gen = 0;    ///< bumped when the slot is freed: stale ids stop matching
    };
    u64 next_order(u64 prio_and_slot);
    void renumber();
    void place(std::size_t pos, const entry& e)
    {
        heap_[pos] = e;
        index_[e.slot()].pos = static_cast<u32>(pos);
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

    /*
     * The heap's storage: 64-byte aligned, entry 0 three entries into its first line,
     * so that the four children of every node (4p+1 .. 4p+4) share one cache line and
     * a sift reads one line a level.
     */
    template <class T>
    struct line_allocator {
        using value_type = T;
        line_allocator() = default;
        template <class U>
        line_allocator(const line_allocator<U>&) noexcept
        {
        }
        T* allocate(std::size_t n)
        {
            return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
        }
        void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
        friend bool operator==(const line_allocator&, const line_allocator&) { return true; }
    };
    struct family_aligned_entries {
        static constexpr std::size_t lead = 3; ///< unused entries before entry 0
        std::vector<entry, line_allocator<entry>> v =
            std::vector<entry, line_allocator<entry>>(lead);
        entry* data() { return v.data() + lead; }
        const entry* data() const { return v.data() + lead; }
        std::size_t size() const { return v.size() - lead; }
        bool empty() const { return v.size() == lead; }
        entry& operator[](std::size_t i) { return v[lead + i]; }
        const entry& operator[](std::size_t i) const { return v[lead + i]; }
        entry& front() { return v[lead]; }
        const entry& front() const { return v[lead]; }
        const entry& back() const { return v.back(); }
        void push_back(const entry& e) { v.push_back(e); }
        void pop_back() { v.pop_back(); }
    };

    family_aligned_entries heap_;
    std::vector<slot> slots_;
    std::vector<slot_index> index_; ///< parallel to slots_
    std::vector<u32> free_;
    u64 seq_ = 0; ///< the last sequence handed out since the last renumbering
    u64 seq_limit_ = max_seq_limit;
    u64 scheduled_ = 0;
    u64 renumbered_ = 0;
    u64 cancelled_ = 0;
    u64 rescheduled_ = 0;
    bool hole_ = false; ///< heap_[0] is vacant (take()); heap_ holds the live events after it
};

} // namespace schedlab
