// SPDX-License-Identifier: GPL-2.0-only
#include "sim/event_queue.h"
#include "sim/simulation.h"

#include "sim/rng.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <tuple>
#include <vector>

namespace schedlab {
namespace {

struct recorder final : event_handler {
    std::vector<u64> fired;
    void fire(u64 arg) override { fired.push_back(arg); }
};

TEST(event_queue, orders_by_time_then_priority_then_insertion)
{
    event_queue q;
    recorder r;
    q.schedule(20, event_prio::tick, &r, 1);
    q.schedule(10, event_prio::tick, &r, 2);
    q.schedule(10, event_prio::hrtimer, &r, 3);
    q.schedule(10, event_prio::tick, &r, 4);
    q.schedule(10, event_prio::hrtimer, &r, 5);
    std::vector<u64> order;
    while (!q.empty())
        order.push_back(q.pop().arg);
    EXPECT_EQ(order, (std::vector<u64>{3, 5, 2, 4, 1}));
}

TEST(event_queue, cancelled_events_never_fire_and_slots_are_reused_safely)
{
    event_queue q;
    recorder r;
    const event_id a = q.schedule(5, event_prio::tick, &r, 1);
    const event_id b = q.schedule(6, event_prio::tick, &r, 2);
    EXPECT_TRUE(q.cancel(a));
    EXPECT_FALSE(q.cancel(a)) << "double cancel must report false";
    EXPECT_FALSE(q.pending(a));
    EXPECT_TRUE(q.pending(b));
    EXPECT_EQ(q.size(), 1u);
    // A new event may reuse a's slot; the stale id must not cancel it.
    q.schedule(7, event_prio::tick, &r, 3);
    EXPECT_FALSE(q.cancel(a));
    std::vector<u64> order;
    while (!q.empty())
        order.push_back(q.pop().arg);
    EXPECT_EQ(order, (std::vector<u64>{2, 3}));
}

TEST(event_queue, a_rescheduled_event_keeps_its_id_and_fires_as_if_scheduled_anew)
{
    event_queue q;
    recorder r;
    const event_id a = q.schedule(10, event_prio::tick, &r, 1);
    q.schedule(10, event_prio::tick, &r, 2);
    q.schedule(30, event_prio::tick, &r, 3);
    // Moved to the same instant, a goes behind 2 (a new insertion sequence)...
    EXPECT_TRUE(q.reschedule(a, 10));
    EXPECT_TRUE(q.pending(a)) << "the id stays valid";
    // ... and later events keep their order against it.
    q.schedule(10, event_prio::tick, &r, 4);
    EXPECT_EQ(q.size(), 4u);
    std::vector<u64> order;
    while (!q.empty())
        order.push_back(q.pop().arg);
    EXPECT_EQ(order, (std::vector<u64>{2, 1, 4, 3}));
    EXPECT_FALSE(q.pending(a)) << "fired: the id is stale";
    EXPECT_FALSE(q.reschedule(a, 50)) << "a stale id moves nothing";
    EXPECT_TRUE(q.empty());
}

TEST(event_queue, cancelled_events_leave_the_heap_at_once)
{
    event_queue q;
    recorder r;
    std::vector<event_id> ids;
    for (int i = 0; i < 100; ++i)
        ids.push_back(q.schedule(1000 + i, event_prio::tick, &r, static_cast<u64>(i)));
    for (int i = 0; i < 100; i += 2)
        EXPECT_TRUE(q.cancel(ids[static_cast<std::size_t>(i)]));
    EXPECT_EQ(q.size(), 50u);
    EXPECT_EQ(q.heap_entries(), 50u);
    EXPECT_EQ(q.cancelled_total(), 50u);
    EXPECT_EQ(q.next_time(), 1001);
}

/*
 * The queue against a reference model (an ordered map keyed by (when, prio,
 * seq), where a reschedule is a cancel plus a schedule): the same random mix of
 * schedules, cancels, reschedules, pops and takes (a pop that leaves the root
 * vacant) must fire the same events in the same order, and report the same
 * pending set.
 */
TEST(event_queue, peek_next_names_the_event_after_the_one_taken)
{
    event_queue q;
    recorder r;
    q.schedule(30, event_prio::tick, &r, 1);
    q.schedule(10, event_prio::tick, &r, 2);
    q.schedule(20, event_prio::tick, &r, 3);
    q.schedule(20, event_prio::hrtimer, &r, 4);
    EXPECT_EQ(q.peek_next().handler, nullptr) << "no root is vacant before take()";
    EXPECT_EQ(q.take().arg, 2u);
    EXPECT_EQ(q.peek_next().handler, &r);
    EXPECT_EQ(q.peek_next().arg, 4u) << "at 20 the hrtimer fires before the tick";
    q.schedule(15, event_prio::tick, &r, 5); // fills the root: no hint until the next take()
    EXPECT_EQ(q.peek_next().handler, nullptr);
    EXPECT_EQ(q.take().arg, 5u);
    EXPECT_EQ(q.peek_next().arg, 4u);
    EXPECT_EQ(q.take().arg, 4u);
    EXPECT_EQ(q.peek_next().arg, 3u);
    EXPECT_EQ(q.take().arg, 3u);
    EXPECT_EQ(q.peek_next().arg, 1u);
    EXPECT_EQ(q.take().arg, 1u);
    EXPECT_EQ(q.peek_next().handler, nullptr) << "nothing left";
}

void check_event_queue_against_sorted_reference(event_queue& q)
{
    recorder r;
    using key = std::tuple<sim_time, int, u64>;
    std::map<key, u64> ref;      // key -> arg
    std::map<u64, key> ref_key;  // arg -> key, while pending
    std::map<u64, event_id> ids; // arg -> id
    u64 ref_seq = 0, next_arg = 0;
    sim_time now = 0;
    rng_stream rng(3, "event_queue_test");
    const event_prio prios[] = {event_prio::hrtimer, event_prio::ipi, event_prio::task_work,
                                event_prio::tick};
    for (int step = 0; step < 200000; ++step) {
        const u64 op = rng.below(10);
        if (op < 4 || ref.empty()) {
            const sim_time when = now + static_cast<sim_time>(rng.below(50));
            const event_prio p = prios[rng.below(4)];
            const u64 arg = next_arg++;
            ids[arg] = q.schedule(when, p, &r, arg);
            const key k{when, static_cast<int>(p), ++ref_seq};
            ref[k] = arg;
            ref_key[arg] = k;
        } else if (op < 6) {
            auto it = ref_key.begin();
            std::advance(it, static_cast<long>(rng.below(ref_key.size())));
            const u64 arg = it->first;
            ASSERT_TRUE(q.cancel(ids[arg]));
            ASSERT_FALSE(q.cancel(ids[arg]));
            ref.erase(it->second);
            ref_key.erase(it);
        } else if (op < 8) {
            auto it = ref_key.begin();
            std::advance(it, static_cast<long>(rng.below(ref_key.size())));
            const u64 arg = it->first;
            const sim_time when = now + static_cast<sim_time>(rng.below(50));
            ASSERT_TRUE(q.reschedule(ids[arg], when));
            ref.erase(it->second);
            const key k{when, std::get<1>(it->second), ++ref_seq};
            ref[k] = arg;
            it->second = k;
        } else {
            // take() leaves the root vacant until the next change of the queue.
            const auto f = op == 8 ? q.pop() : q.take();
            const auto first = ref.begin();
            ASSERT_EQ(f.when, std::get<0>(first->first)) << "step " << step;
            ASSERT_EQ(f.arg, first->second) << "step " << step;
            ASSERT_FALSE(q.pending(ids[f.arg]));
            now = f.when;
            ref_key.erase(f.arg);
            ref.erase(first);
            // peek_next(): while the root is vacant, the event that fires next if nothing
            // earlier is scheduled; nothing once pop() closed the root.
            const auto hint = q.peek_next();
            if (op == 8 || ref.empty()) {
                ASSERT_EQ(hint.handler, nullptr) << "step " << step;
            } else {
                ASSERT_EQ(hint.handler, &r) << "step " << step;
                ASSERT_EQ(hint.arg, ref.begin()->second) << "step " << step;
            }
        }
        ASSERT_EQ(q.size(), ref.size());
    }
    for (const auto& [arg, k] : ref_key)
        EXPECT_TRUE(q.pending(ids[arg]));
}

TEST(event_queue, matches_a_sorted_reference_under_random_operations)
{
    event_queue q;
    check_event_queue_against_sorted_reference(q);
    EXPECT_EQ(q.renumbered_total(), 0u);
}

// The same, with the sequence field made to run out every few hundred insertions (249
// renumberings): each
// renumbering must keep the pending events' order, whatever the heap holds (a vacant
// root after take() included).
TEST(event_queue, matches_a_sorted_reference_when_sequences_are_renumbered)
{
    event_queue q(600);
    check_event_queue_against_sorted_reference(q);
    EXPECT_GT(q.renumbered_total(), 200u);
}

TEST(event_queue, renumbered_sequences_keep_insertion_order_at_one_instant)
{
    event_queue q(4); // the fifth sequence renumbers the pending events
    recorder r;
    std::vector<u64> order;
    for (u64 i = 0; i < 3; ++i)
        q.schedule(10, event_prio::tick, &r, i); // sequences 1, 2, 3
    order.push_back(q.pop().arg);
    q.schedule(10, event_prio::tick, &r, 3);    // sequence 4
    q.schedule(10, event_prio::hrtimer, &r, 4); // 1, 2, 3 renumbered 1, 2, 3; then 4
    EXPECT_EQ(q.renumbered_total(), 1u);
    order.push_back(q.pop().arg);
    order.push_back(q.pop().arg);
    q.schedule(10, event_prio::tick, &r, 5); // 2, 3 renumbered 1, 2; then 3
    EXPECT_EQ(q.renumbered_total(), 2u);
    while (!q.empty())
        order.push_back(q.pop().arg);
    EXPECT_EQ(order, (std::vector<u64>{0, 4, 1, 2, 3, 5}));
    EXPECT_EQ(q.scheduled_total(), 6u);
}

TEST(simulation, run_until_stops_at_the_limit_and_keeps_later_events)
{
    simulation sim(1);
    recorder r;
    sim.at(100, event_prio::tick, &r, 1);
    sim.at(200, event_prio::tick, &r, 2);
    EXPECT_EQ(sim.run_until(150), 1u);
    EXPECT_EQ(sim.now(), 150) << "the clock reaches the limit";
    EXPECT_EQ(sim.run_until(1000), 1u);
    EXPECT_EQ(r.fired, (std::vector<u64>{1, 2}));
}

TEST(simulation, on_progress_is_called_every_n_events_across_run_until_calls)
{
    simulation sim(1);
    recorder r;
    for (int i = 0; i < 10; ++i)
        sim.at(10 * i, event_prio::tick, &r, static_cast<u64>(i));
    std::vector<u64> seen;
    sim.on_progress(4, [&](const simulation& s) { seen.push_back(s.events_fired()); });
    EXPECT_EQ(sim.run_until(45), 5u);
    EXPECT_EQ(sim.run_until(1000), 5u);
    EXPECT_EQ(seen, (std::vector<u64>{4, 8}));
    sim.on_progress(4, nullptr);
    sim.at(2000, event_prio::tick, &r, 10);
    EXPECT_EQ(sim.run_until(3000), 1u);
    EXPECT_EQ(seen.size(), 2u) << "removed";
}

// Several simulations in one process, on several threads, do not interfere.
TEST(simulation, independent_instances_on_threads_give_identical_results)
{
    auto run_one = [](u64 seed) {
        simulation sim(seed);
        struct chain final : event_handler {
            simulation* s;
            rng_stream rng{0, ""};
            u64 sum = 0;
            void fire(u64 n) override
            {
                sum = sum * 31 + static_cast<u64>(s->now());
                if (n > 0)
                    s->after(static_cast<sim_dur>(rng.below(1000)) + 1, event_prio::tick, this,
                             n - 1);
            }
        } c;
        c.s = &sim;
        c.rng = sim.rng("chain");
        sim.at(0, event_prio::tick, &c, 10000);
        sim.run_until(1LL << 62);
        return c.sum;
    };
    const u64 expect = run_one(7);
    std::vector<u64> got(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] { got[i] = run_one(7); });
    for (auto& t : threads)
        t.join();
    for (u64 g : got)
        EXPECT_EQ(g, expect);
    EXPECT_NE(run_one(8), expect);
}

} // namespace
} // namespace schedlab
