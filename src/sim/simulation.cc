// SPDX-License-Identifier: GPL-2.0-only
#include "sim/simulation.h"

#include "sim/bug.h"

namespace schedlab {

event_id simulation::at(sim_time when, event_prio prio, event_handler* h, u64 arg)
{
    SIM_BUG_ON(when < now_, "event scheduled in the past: {} < now {}", when, now_);
    return q_.schedule(when, prio, h, arg);
}

bool simulation::reschedule(event_id id, sim_time when)
{
    SIM_BUG_ON(when < now_, "event rescheduled into the past: {} < now {}", when, now_);
    return q_.reschedule(id, when);
}

void simulation::on_progress(u64 every, std::function<void(const simulation&)> f)
{
    progress_every_ = f ? every : 0;
    progress_left_ = progress_every_;
    progress_ = std::move(f);
}

u64 simulation::run_until(sim_time limit)
{
    const u64 first = fired_;
    stopped_ = false;
    while (!stopped_ && !q_.empty()) {
        if (q_.next_time() > limit)
            break;
        pending_sum_ += q_.size();
        heap_entries_sum_ += q_.heap_entries();
        const auto ev = q_.take(); // the root stays vacant for the handler's first event
        SIM_BUG_ON(ev.when < now_, "time went backwards: {} < {}", ev.when, now_);
        now_ = ev.when;
        ev.handler->fire(ev.arg);
        q_.settle();
        ++fired_;
        if (progress_left_ != 0 && --progress_left_ == 0) {
            progress_left_ = progress_every_;
            progress_(*this);
        }
    }
    // Unless stopped, the run lasted until the limit, even if nothing happened last.
    if (!stopped_ && limit > now_)
        now_ = limit;
    return fired_ - first;
}

} // namespace schedlab
