// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * One simulation's engine: its clock, its event queue and its seed. A value
 * with no global state: any number of them may exist and run on any threads.
 * It knows nothing about scheduling.
 */
#include "sim/event_queue.h"
#include "sim/rng.h"

#include <functional>
#include <string_view>

namespace schedlab {

class simulation {
public:
    explicit simulation(u64 seed) : seed_(seed) {}

    sim_time now() const { return now_; }
    u64 seed() const { return seed_; }

    /// A named random stream of this simulation, independent of every other name.
    rng_stream rng(std::string_view name) const { return rng_stream(seed_, name); }

    event_id at(sim_time when, event_prio prio, event_handler* h, u64 arg = 0);
    event_id after(sim_dur delay, event_prio prio, event_handler* h, u64 arg = 0)
    {
        return at(now_ + delay, prio, h, arg);
    }
    bool cancel(event_id id) { return q_.cancel(id); }
    /// Moves a pending event to `when` (>= now), as a cancel and a new at() would, in place.
    bool reschedule(event_id id, sim_time when);
    bool pending(event_id id) const { return q_.pending(id); }

    /// Fires events in order until stop() is called or no event is due by
    /// `limit`; then, unless stopped, the clock reads `limit`. Returns the
    /// number of events fired.
    u64 run_until(sim_time limit);
    void stop() { stopped_ = true; }
    bool stopped() const { return stopped_; }

    u64 events_fired() const { return fired_; }
    /// Calls `f` after every `every` fired events, between two events (a progress display;
    /// it may read the simulation but must not schedule or cancel events). every = 0: none.
    void on_progress(u64 every, std::function<void(const simulation&)> f);
    /// Sums over fired events of the live events and of the heap entries (live and
    /// cancelled) pending as each was taken: divided by events_fired(), the mean
    /// queue depth a run worked at (for the benchmarks' bare-heap comparison).
    u64 pending_sum() const { return pending_sum_; }
    u64 heap_entries_sum() const { return heap_entries_sum_; }
    const event_queue& queue() const { return q_; }

private:
    sim_time now_ = 0;
    u64 seed_;
    event_queue q_;
    u64 fired_ = 0;
    std::function<void(const simulation&)> progress_;
    u64 progress_every_ = 0;
    u64 progress_left_ = 0; ///< events until the next progress call (0: none due)
    u64 pending_sum_ = 0;
    u64 heap_entries_sum_ = 0;
    bool stopped_ = false;
};

} // namespace schedlab
