// SPDX-License-Identifier: GPL-2.0-only
#include "sim/event_queue.h"

#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

event_queue::event_queue(u64 seq_limit) : seq_limit_(seq_limit)
{
    SIM_BUG_ON(seq_limit < 2 || seq_limit > max_seq_limit, "event sequence limit {} out of range",
               seq_limit);
}

u64 event_queue::next_order(u64 prio_and_slot)
{
    if (seq_ >= seq_limit_)
        renumber();
    ++scheduled_;
    return prio_and_slot | ++seq_ << slot_bits;
}

/*
 * The sequence field is exhausted: the pending events, in their order, take the
 * sequences 1..n. Every comparison between two of them comes out as before, so the
 * heap stays a heap and the order they fire in is unchanged; new events, numbered
 * from n + 1, still come after every pending one of the same time and priority.
 */
void event_queue::renumber()
{
    std::vector<u32> by_key;
    by_key.reserve(heap_.size());
    for (std::size_t i = hole_ ? 1 : 0; i < heap_.size(); ++i)
        by_key.push_back(static_cast<u32>(i));
    std::sort(by_key.begin(), by_key.end(),
              [this](u32 a, u32 b) { return before(heap_[a], heap_[b]); });
    u64 seq = 0;
    for (const u32 i : by_key)
        heap_[i].order = (heap_[i].order & ~seq_mask) | ++seq << slot_bits;
    SIM_BUG_ON(seq >= seq_limit_, "{} pending events exhaust the sequence limit {}", seq,
               seq_limit_);
    seq_ = seq;
    ++renumbered_;
}

event_id event_queue::schedule(sim_time when, event_prio prio, event_handler* h, u64 arg)
{
    SIM_BUG_ON(h == nullptr, "event scheduled without a handler");
    SIM_BUG_ON(static_cast<s8>(prio) < 0, "negative event priority {}", static_cast<int>(prio));
    u32 idx;
    if (!free_.empty()) {
        idx = free_.back();
        free_.pop_back();
    } else {
        SIM_BUG_ON(slots_.size() > slot_mask, "more than {} pending events", slot_mask + 1);
        idx = static_cast<u32>(slots_.size());
        slots_.emplace_back();
        index_.emplace_back();
    }
    slot& s = slots_[idx];
    s.handler = h;
    s.arg = arg;
    const u64 order = next_order(static_cast<u64>(static_cast<u8>(prio)) << prio_shift | idx);
    const entry e{biased(when), order};
    if (hole_) { // the root take() left: the new event sifts down from it
        hole_ = false;
        sift_down(0, e);
    } else {
        heap_.push_back(e);
        sift_up(heap_.size() - 1, e);
    }
    return event_id{idx, index_[idx].gen};
}

bool event_queue::cancel(event_id id)
{
    if (!pending(id))
        return false;
    settle();
    const std::size_t pos = index_[id.slot].pos;
    remove_at(pos);
    free_slot(id.slot);
    ++cancelled_;
    return true;
}

bool event_queue::reschedule(event_id id, sim_time when)
{
    if (!pending(id))
        return false;
    settle();
    const std::size_t pos = index_[id.slot].pos;
    entry e = heap_[pos];
    e.when = biased(when);
    e.order = next_order(e.order & ~seq_mask);
    ++rescheduled_;
    // The new key is later than the old one unless the time moved earlier.
    if (pos > 0 && before(e, heap_[(pos - 1) / arity]))
        sift_up(pos, e);
    else
        sift_down(pos, e);
    return true;
}

event_queue::fired event_queue::pop()
{
    const fired f = take();
    settle();
    return f;
}

event_queue::fired event_queue::take()
{
    settle();
    SIM_BUG_ON(heap_.empty(), "pop() on an empty event queue");
    const entry top = heap_.front();
    const slot& s = slots_[top.slot()];
    const fired f{unbiased(top.when), s.handler, s.arg};
    free_slot(top.slot());
    if (heap_.size() == 1)
        heap_.pop_back();
    else
        hole_ = true;
    return f;
}

void event_queue::close_hole()
{
    hole_ = false;
    const entry last = heap_.back();
    heap_.pop_back(); // at least one live entry follows the vacant root
    if (!heap_.empty())
        sift_down(0, last);
}

void event_queue::free_slot(u32 idx)
{
    slot_index& s = index_[idx];
    s.pos = npos;
    ++s.gen;
    free_.push_back(idx);
}

void event_queue::sift_up(std::size_t pos, const entry& e)
{
    while (pos > 0) {
        const std::size_t parent = (pos - 1) / arity;
        if (!before(e, heap_[parent]))
            break;
        place(pos, heap_[parent]);
        pos = parent;
    }
    place(pos, e);
}

void event_queue::sift_down(std::size_t pos, const entry& e)
{
    const std::size_t n = heap_.size();
    while (pos * arity + 1 < n) {
        const std::size_t best = min_child(pos);
        if (!before(heap_[best], e))
            break;
        place(pos, heap_[best]);
        pos = best;
    }
    place(pos, e);
}

void event_queue::remove_at(std::size_t pos)
{
    const entry last = heap_.back();
    heap_.pop_back();
    if (pos == heap_.size())
        return;
    if (pos > 0 && before(last, heap_[(pos - 1) / arity]))
        sift_up(pos, last);
    else
        sift_down(pos, last);
}

} // namespace schedlab
