// SPDX-License-Identifier: GPL-2.0-only
#include "sim/event_queue.h"

#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

event_id event_queue::schedule(sim_time when, event_prio prio, event_handler* h, u64 arg)
{
    SIM_BUG_ON(h == nullptr, "event scheduled without a handler");
    u32 idx;
    if (!free_.empty()) {
        idx = free_.back();
        free_.pop_back();
    } else {
        idx = static_cast<u32>(slots_.size());
        slots_.emplace_back();
    }
    const u64 seq = ++seq_;
    slots_[idx] = slot{h, arg, seq, true};
    heap_.push_back(entry{when, static_cast<s8>(prio), seq, idx});
    std::push_heap(heap_.begin(), heap_.end(), later);
    ++live_;
    return event_id{idx, seq};
}

bool event_queue::pending(event_id id) const
{
    return id.valid() && id.slot < slots_.size() && slots_[id.slot].seq == id.seq &&
           slots_[id.slot].alive;
}

bool event_queue::cancel(event_id id)
{
    if (!pending(id))
        return false;
    slots_[id.slot].alive = false;
    --live_;
    ++cancelled_;
    return true;
}

void event_queue::drop_dead_top()
{
    while (!heap_.empty()) {
        const entry& top = heap_.front();
        const slot& s = slots_[top.slot];
        if (s.alive && s.seq == top.seq)
            return;
        // Dead entry: its slot can be reused once the entry is gone.
        const u32 idx = top.slot;
        const bool owned = s.seq == top.seq;
        std::pop_heap(heap_.begin(), heap_.end(), later);
        heap_.pop_back();
        if (owned)
            free_.push_back(idx);
    }
}

sim_time event_queue::next_time()
{
    drop_dead_top();
    SIM_BUG_ON(heap_.empty(), "next_time() on an empty event queue");
    return heap_.front().when;
}

event_queue::fired event_queue::pop()
{
    drop_dead_top();
    SIM_BUG_ON(heap_.empty(), "pop() on an empty event queue");
    const entry top = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    slot& s = slots_[top.slot];
    fired f{top.when, s.handler, s.arg};
    s.alive = false;
    free_.push_back(top.slot);
    --live_;
    return f;
}

} // namespace schedlab
