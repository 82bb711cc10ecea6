// SPDX-License-Identifier: GPL-2.0-only
#include "sim/event_queue.h"
#include "sim/simulation.h"

#include <gtest/gtest.h>

#include <thread>
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
