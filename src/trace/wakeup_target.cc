// SPDX-License-Identifier: GPL-2.0-only
#include "trace/wakeup_target.h"

namespace schedlab {

wakeup_target_tracker::wake_track& wakeup_target_tracker::track(int pid)
{
    if (static_cast<std::size_t>(pid) >= wake_.size())
        wake_.resize(static_cast<std::size_t>(pid) + 1);
    return wake_[static_cast<std::size_t>(pid)];
}

void wakeup_target_tracker::waking(int cpu, int pid, int prev_cpu, bool task_ctx)
{
    if (pid <= 0)
        return;
    if (static_cast<std::size_t>(cpu) >= curr_.size())
        curr_.resize(static_cast<std::size_t>(cpu) + 1, 0);
    wake_track& w = track(pid);
    // The waker is the task current on the waking's CPU when the waking runs in its process
    // context.
    const int curr = curr_[static_cast<std::size_t>(cpu)];
    const waker_kind by =
        task_ctx && curr != 0 && curr != pid ? waker_kind::task : waker_kind::other;
    switch (w.state) {
    case wake_track::asleep:
    case wake_track::running:
        w.state = w.state == wake_track::asleep ? wake_track::woken : wake_track::running_woken;
        w.waking_cpu = static_cast<s16>(cpu);
        w.prev_cpu = static_cast<s16>(prev_cpu);
        w.by = by;
        break;
    case wake_track::running_woken:
        // Woken again before it switched out: the earlier waking found it running.
        ++c_.not_placed;
        w.waking_cpu = static_cast<s16>(cpu);
        w.prev_cpu = static_cast<s16>(prev_cpu);
        w.by = by;
        break;
    case wake_track::runnable: // preempted, still queued: ttwu_runnable()
    case wake_track::woken:    // woken before and not run since: the first placement counts
        ++c_.not_placed;
        break;
    }
}

void wakeup_target_tracker::switched(int cpu, int prev_pid, bool prev_runnable, bool prev_exited,
                                     int next_pid)
{
    if (static_cast<std::size_t>(cpu) >= curr_.size())
        curr_.resize(static_cast<std::size_t>(cpu) + 1, 0);
    curr_[static_cast<std::size_t>(cpu)] = next_pid > 0 ? next_pid : 0;
    if (prev_pid > 0) {
        wake_track& w = track(prev_pid);
        if (w.state == wake_track::running_woken && !prev_runnable && !prev_exited) {
            w.state = wake_track::woken; // the waking ended this block: placed at its switch in
        } else {
            if (w.state == wake_track::running_woken) // it ran on (or exited): not placed
                ++c_.not_placed;
            else if (w.state == wake_track::woken) // its switch in was not seen: it ran here
                placed(w, cpu);
            w.state = prev_runnable ? wake_track::runnable : wake_track::asleep;
        }
    }
    if (next_pid > 0) {
        wake_track& w = track(next_pid);
        if (w.state == wake_track::woken)
            placed(w, cpu);
        else if (w.state == wake_track::running_woken) // its switch out was not seen
            ++c_.not_placed;
        w.state = wake_track::running;
    }
}

wakeup_target_counts wakeup_target_tracker::counts() const
{
    wakeup_target_counts c = c_;
    for (const wake_track& w : wake_) {
        if (w.state == wake_track::woken) // placed, and not run before the end
            ++c.not_run;
        else if (w.state == wake_track::running_woken) // ran on to the end
            ++c.not_placed;
    }
    return c;
}

} // namespace schedlab
