// SPDX-License-Identifier: GPL-2.0-only
/*
 * The event heap alone, for counting under cachegrind (docs/performance.md, "The event
 * heap's positions, counted"): fills the queue with --pending events, then --ops times
 * takes the earliest (pop(), or with --take the engine's take() that leaves the root
 * vacant) and schedules one a pseudo-random delay of 1..100000 ns after it: the loop of
 * bench/core_loop_bench.cc's BM_event_queue_push_pop, with a fixed number of operations,
 * so that two runs of different --ops give the counts per operation by difference.
 * Prints the operations, the last event's time and how many fired (equal on two builds
 * when the heap's order is the same).
 *
 *   valgrind --tool=cachegrind --cache-sim=yes --D1=49152,12,64 --LL=1048576,8,64 \
 *     build/bench/event_queue_counts --pending 4096 --ops 600000 [--take]
 */
#include "sim/event_queue.h"
#include "sim/rng.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace {

using namespace schedlab;

struct null_handler final : event_handler {
    u64 fired = 0;
    void fire(u64) override { ++fired; }
};

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"the event heap alone: --pending events queued, --ops take + schedule"};
    u64 pending = 4096;
    u64 ops = 100000;
    bool take = false;
    app.add_option("--pending", pending, "events kept queued")->check(CLI::Range(u64{1}, u64{1} << 26));
    app.add_option("--ops", ops, "operations (take the earliest, schedule one)");
    app.add_flag("--take", take, "take() into a vacant root, as the engine does, instead of pop()");
    CLI11_PARSE(app, argc, argv);

    event_queue q;
    null_handler h;
    rng_stream rng(1, "bench");
    for (u64 i = 0; i < pending; ++i)
        q.schedule(static_cast<sim_time>(rng.below(100000)), event_prio::task_work, &h, 0);
    sim_time last = 0;
    for (u64 i = 0; i < ops; ++i) {
        const auto ev = take ? q.take() : q.pop();
        ev.handler->fire(ev.arg);
        last = ev.when;
        q.schedule(ev.when + 1 + static_cast<sim_time>(rng.below(100000)), event_prio::task_work,
                   &h, 0);
    }
    fmt::print("ops={} last={} fired={}\n", ops, last, h.fired);
    return 0;
}
