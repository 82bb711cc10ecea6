// SPDX-License-Identifier: GPL-2.0-only
/*
 * SHARED_RUNQ v3 / v4 mechanisms (docs/kernels.md names the patch mails).
 */
#include "sched/fair.h"
#include "sched/fair_balance.h"
#include "sched/fair_shared_runq.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <set>

namespace schedlab {
namespace {

using testlib::sched_fixture;

TEST(shared_runq_shards, follow_the_amd_numbering_of_milan)
{
    sched_fixture t(load_machine("milan-2s"), "tip-2023-08+shared_runq_v3");
    kernel& k = *t.k;
    // CCX0 = CPUs 0-7 and their siblings 128-135: 16 CPUs, ceil(16 / 6) = 3 shards.
    ASSERT_EQ(k.cpu_rq(0).srq->shards.size(), 3u);
    for (int cpu : {0, 1, 6, 7, 132, 133})
        EXPECT_EQ(k.cpu_rq(cpu).shard_idx, 0) << "cpu" << cpu;
    for (int cpu : {2, 3, 128, 129, 134, 135})
        EXPECT_EQ(k.cpu_rq(cpu).shard_idx, 1) << "cpu" << cpu;
    for (int cpu : {4, 5, 130, 131})
        EXPECT_EQ(k.cpu_rq(cpu).shard_idx, 2) << "cpu" << cpu;
    EXPECT_EQ(k.cpu_rq(0).srq, k.cpu_rq(135).srq) << "one queue per LLC";
    EXPECT_NE(k.cpu_rq(0).srq, k.cpu_rq(8).srq);
    EXPECT_EQ(k.srq().shared_runqs.size(), 16u);
}

TEST(sched_patchset, each_is_registered_under_its_deltas_group)
{
    EXPECT_EQ(find_patchset("shared_runq"), &shared_runq_patchset);
    EXPECT_EQ(find_patchset("sis_short"), &sis_short_patchset);
    EXPECT_EQ(find_patchset("stacking"), &stacking_patchset);
    EXPECT_EQ(find_patchset("no_such_group"), nullptr);
    std::string groups;
    for (const kernel_delta_info& d : kernel_deltas())
        groups += d.name + ":" + d.group + " ";
    EXPECT_EQ(groups, "shared_runq_v3:shared_runq shared_runq_v3_noopt:shared_runq "
                      "shared_runq_v4:shared_runq tg_ratelimit:tg_ratelimit "
                      "sis_short_v6:sis_short stacking:stacking ");
}

TEST(shared_runq_shards, are_absent_without_the_patch)
{
    sched_fixture t(load_machine("milan-2s"), "tip-2023-08");
    EXPECT_EQ(t.k->cpu_rq(0).srq, nullptr);
    EXPECT_TRUE(t.k->srq().shared_runqs.empty());
}

/// Three spinners on cpu0 of a 4-CPU LLC, allowed anywhere once queued there;
/// cpus 1-3 run pinned fillers, so no balancing moves them meanwhile.
struct queued_case {
    sched_fixture t;
    std::vector<task_struct*> ts;
    explicit queued_case(const char* spec, cost_params costs = sched_fixture::no_costs())
        : t(testlib::small_machine(4), spec, 1, "", std::move(costs))
    {
        for (int cpu = 1; cpu < 4; ++cpu)
            t.spawn(fmt::format("filler{}", cpu), testlib::spin(), 0, 0, cpu);
        for (int i = 0; i < 3; ++i)
            ts.push_back(&t.spawn(fmt::format("s{}", i), testlib::spin(), 0, 0, 0));
        t.run_for(msecs(9)); // a few tick preemptions: waiting tasks re-enter the tree
        for (auto* p : ts) {
            p->cpus_mask.set_all();
            p->nr_cpus_allowed = 4;
        }
        t.k->set_this_cpu(1);
    }
    shared_runq_shard& shard0() { return t.k->cpu_rq(0).srq->shards[0]; }
};

TEST(shared_runq_enqueue_task, lists_exactly_the_waiting_unpinned_tasks_in_insertion_order)
{
    queued_case c("tip-2023-08+shared_runq_v3");
    // Pinned tasks are never pushed; re-queue them now that they may move.
    EXPECT_TRUE(c.shard0().list.empty()) << "pinned when they entered the tree";
    c.t.run_for(msecs(8)); // two more preemptions push the preempted ones
    std::size_t waiting = 0;
    for (auto* p : c.ts)
        waiting += (p->shard != nullptr);
    EXPECT_EQ(c.shard0().list.size(), waiting);
    EXPECT_GE(waiting, 1u);
    for (auto* p : c.shard0().list)
        EXPECT_NE(c.t.k->cpu_rq(0).curr, p) << "the running task is never listed";
}

TEST(shared_runq_pick_next_task, moves_the_head_to_the_pulling_cpu)
{
    queued_case c("tip-2023-08+shared_runq_v3");
    c.t.run_for(msecs(8));
    ASSERT_FALSE(c.shard0().list.empty());
    task_struct* head = c.shard0().list.front();
    rq& src = c.t.k->cpu_rq(0);
    rq& dst = c.t.k->cpu_rq(1);
    const unsigned src_before = src.nr_running;
    const u64 src_locks = src.lock.acquisitions;
    const u64 dst_locks = dst.lock.acquisitions;
    EXPECT_EQ(shared_runq_pick_next_task(*c.t.k, dst), 1);
    // v3 6/7: task_rq_lock() takes the source rq's lock; move_queued_task() drops it
    // and takes this rq's, held on into the pick.
    EXPECT_EQ(src.lock.acquisitions, src_locks + 1);
    EXPECT_EQ(dst.lock.acquisitions, dst_locks + 1);
    EXPECT_EQ(head->cpu, 1);
    EXPECT_EQ(src.nr_running, src_before - 1);
    EXPECT_EQ(dst.nr_running, 2u) << "its filler and the pulled task";
    EXPECT_EQ(c.t.k->srq().stats.pulls_moved, 1u);
    EXPECT_NE(head->shard, nullptr) << "v3 re-pushes it on its new CPU's shard";
    c.t.k->check_all();
}

// A lone sleeper waking on an idle CPU: v3 pushes it at every wakeup (and
// unlinks it at the pick right after); v4 never, as the rq was empty.
u64 lone_sleeper_pushes(const char* spec)
{
    sched_fixture t(testlib::small_machine(4), spec);
    task_struct& p = t.spawn("sleeper", testlib::run_sleep(usecs(50), usecs(500)));
    t.run_for(msecs(20));
    EXPECT_GT(p.sched_info_.pcount, 10u);
    EXPECT_EQ(t.k->srq().stats.pushes, t.k->srq().stats.removals) << spec;
    return t.k->srq().stats.pushes;
}

TEST(shared_runq_enqueue_task, v4_does_not_push_onto_an_empty_rq)
{
    EXPECT_GT(lone_sleeper_pushes("tip-2023-08+shared_runq_v3"), 10u);
    EXPECT_EQ(lone_sleeper_pushes("tip-2023-12+shared_runq_v4"), 0u);
}

// kernel: p->shared_runq_node is part of the task, so a push allocates nothing. The model's
// shard is a std::list: the nodes its unlinks and pops free are kept for its next pushes
// (shared_runq_shard::spare). A lone sleeper on a 4-CPU LLC (one shard) is pushed at every
// wakeup and unlinked at the pick right after: the shard makes one node, once, and holds
// it, listed or spare, from then on (a node freed at the unlink would leave it none).
TEST(shared_runq_enqueue_task, a_shard_pushes_with_the_nodes_its_unlinks_freed)
{
    sched_fixture t(testlib::small_machine(4), "tip-2023-08+shared_runq_v3");
    t.spawn("sleeper", testlib::run_sleep(usecs(50), usecs(500)));
    t.run_for(msecs(10));
    ASSERT_EQ(t.k->cpu_rq(0).srq->shards.size(), 1u);
    const shared_runq_shard& shard = t.k->cpu_rq(0).srq->shards[0];
    auto held = [&] {
        std::set<const void*> nodes;
        for (const auto& node : shard.list)
            nodes.insert(&node);
        for (const auto& node : shard.spare)
            nodes.insert(&node);
        return nodes;
    };
    const u64 pushes = t.k->srq().stats.pushes;
    EXPECT_GT(pushes, 5u);
    const std::set<const void*> first = held();
    EXPECT_EQ(first.size(), 1u) << "one task: one node, listed or spare";
    t.run_for(msecs(10));
    EXPECT_GT(t.k->srq().stats.pushes, pushes + 5);
    EXPECT_EQ(held(), first) << "the same node at every push";
}

TEST(shared_runq_pick_next_task, skips_a_head_not_allowed_here)
{
    queued_case c("tip-2023-08+shared_runq_v3");
    c.t.run_for(msecs(8));
    ASSERT_FALSE(c.shard0().list.empty());
    task_struct* head = c.shard0().list.front();
    head->cpus_mask.clear(1);
    head->nr_cpus_allowed = 3;
    const int r = shared_runq_pick_next_task(*c.t.k, c.t.k->cpu_rq(1));
    EXPECT_EQ(r, 0) << "one shard: only its head is examined";
    EXPECT_EQ(c.t.k->srq().stats.head_not_allowed, 1u);
    EXPECT_EQ(head->shard, &c.shard0()) << "left in place";
}

// kernel: shared_runq_push_task() is a store the pushing CPU makes in __enqueue_entity(),
// after the work before it (enqueue_entity()'s update_load_avg(), the rest of what it
// was doing); until then another CPU's shared_runq_pop_task() finds the shard empty.
// Here cpu2 pushes s0 while it owes 20 us of work, then s1 with nothing owed: s1 is
// listed first, a pop from cpu1 takes s1, and s0 only once cpu2 has reached its push.
TEST(shared_runq_enqueue_task, a_push_is_seen_once_the_pushing_cpu_reaches_it)
{
    queued_case c("tip-2023-08+shared_runq_v3");
    c.t.run_for(msecs(8));
    kernel& k = *c.t.k;
    rq& src = k.cpu_rq(0);
    std::vector<task_struct*> waiting;
    for (auto* p : c.ts)
        if (src.curr != p) {
            shared_runq_dequeue_task(k, *p); // unlisted, if listed: pushed again below
            waiting.push_back(p);
        }
    ASSERT_EQ(waiting.size(), 2u) << "three spinners on cpu0: two wait";
    ASSERT_TRUE(c.shard0().list.empty());
    task_struct& s0 = *waiting[0];
    task_struct& s1 = *waiting[1];
    k.set_this_cpu(2);
    k.charges().charge_cpu(k.cpu_rq(2), usecs(20), ACCT_LOCK_SPIN);
    const sim_time t0 = k.now();
    EXPECT_EQ(k.charges().owed_until(k.cpu_rq(2)), t0 + usecs(20));
    shared_runq_enqueue_task(k, src, s0);
    EXPECT_EQ(s0.shard_visible, t0 + usecs(20));
    EXPECT_EQ(shared_runq_pick_next_task(k, k.cpu_rq(1)), 0) << "cpu2 has not pushed s0 yet";

    k.set_this_cpu(3);
    shared_runq_enqueue_task(k, src, s1);
    EXPECT_EQ(s1.shard_visible, t0) << "cpu3 owes nothing";
    EXPECT_EQ(c.shard0().list.front(), &s1) << "the shard lists pushes in the order they happen";
    EXPECT_EQ(shared_runq_pick_next_task(k, k.cpu_rq(1)), 1);
    EXPECT_EQ(s1.cpu, 1);

    c.t.run_for(usecs(20));
    ASSERT_EQ(s0.cpu, 0);
    ASSERT_EQ(s0.shard, &c.shard0());
    shared_runq_dequeue_task(k, s1); // v3 re-pushed it on cpu1 (this LLC's one shard)
    EXPECT_EQ(shared_runq_pick_next_task(k, k.cpu_rq(1)), 1) << "pushed by now";
    EXPECT_EQ(s0.cpu, 1);
}

/// queued_case with only the shard lock's hold (50 ns) and a line within the LLC (20 ns)
/// costed, its two waiting spinners pushed and unlinked by cpu1: the shard is empty and
/// their nodes and the lock's line were last written there.
struct line_case : queued_case {
    static constexpr sim_dur hold = 50, line = 20;
    static cost_params costs()
    {
        cost_params c = sched_fixture::no_costs();
        set_cost(c, fmt::format("shard_lock_hold={}", hold), "test");
        set_cost(c, fmt::format("line_llc={}", line), "test");
        return c;
    }
    std::vector<task_struct*> waiting;
    line_case() : queued_case("tip-2023-08+shared_runq_v3", costs())
    {
        t.run_for(msecs(8));
        t.k->set_this_cpu(1);
        for (auto* p : ts)
            if (t.k->cpu_rq(0).curr != p) {
                shared_runq_dequeue_task(*t.k, *p); // if listed
                waiting.push_back(p);
            }
        for (auto* p : waiting)
            shared_runq_enqueue_task(*t.k, t.k->cpu_rq(0), *p);
        for (auto* p : waiting)
            shared_runq_dequeue_task(*t.k, *p);
    }
    /// How far `op`, run on `cpu`, moves the end of the shard lock's holds on from when
    /// it could take the lock (now, or the end of the hold it waits for).
    template <typename F> sim_dur hold_of(int cpu, F&& op)
    {
        t.k->set_this_cpu(cpu);
        const sim_time start = std::max(t.k->now(), shard0().lock.busy_until);
        op();
        return shard0().lock.busy_until - start;
    }
};

// kernel: list_add_tail() under the shard lock writes the pushed task's node and the old
// tail's (another task_struct's line); list_del_init() writes the node and both its
// neighbours'. Each is last written by the CPU that last linked or unlinked next to it,
// so the hold takes those lines from their CPUs, and the next holder waits for it.
TEST(shared_runq_enqueue_task, a_push_and_an_unlink_hold_the_lock_across_the_neighbours_lines)
{
    line_case c;
    ASSERT_EQ(c.waiting.size(), 2u);
    ASSERT_TRUE(c.shard0().list.empty());
    kernel& k = *c.t.k;
    task_struct& s0 = *c.waiting[0];
    task_struct& s1 = *c.waiting[1];
    const sim_dur hold = line_case::hold, line = line_case::line;
    ASSERT_EQ(s0.shard_node_line.last_cpu, 1) << "cpu1 unlinked it";
    ASSERT_EQ(c.shard0().lock.last_cpu, 1);
    const shared_runq_stats before = k.srq().stats;
    // cpu2 pushes s0 on the empty shard: the lock's line and s0's node, both from cpu1
    EXPECT_EQ(c.hold_of(2, [&] { shared_runq_enqueue_task(k, k.cpu_rq(0), s0); }),
              hold + line + line);
    // cpu3 pushes s1 after it: the lock's line from cpu2, s1's node from cpu1, s0's from cpu2
    EXPECT_EQ(c.hold_of(3, [&] { shared_runq_enqueue_task(k, k.cpu_rq(0), s1); }), hold + 3 * line);
    EXPECT_EQ(s0.shard_node_line.last_cpu, 3) << "s1's push wrote s0->next";
    // cpu1 unlinks s0: the lock's line, s0's node and s1's (its next), all from cpu3
    EXPECT_EQ(c.hold_of(1, [&] { shared_runq_dequeue_task(k, s0); }), hold + 3 * line);
    // cpu1 again: s1 is alone, its node and the lock's line are cpu1's now
    EXPECT_EQ(c.hold_of(1, [&] { shared_runq_dequeue_task(k, s1); }), hold);
    const shared_runq_stats& st = k.srq().stats;
    EXPECT_EQ(st.node_lines - before.node_lines, 1u + 2u + 2u);
    EXPECT_EQ(st.node_line_ns - before.node_line_ns, 5 * line);
}

// kernel: shared_runq_pop_task()'s list_del_init() of the head writes its node and the
// next one's (the head's `next` is on the lock's own line); a head not allowed here is
// only read.
TEST(shared_runq_pick_next_task, a_pop_takes_the_first_node_and_the_next_ones_line)
{
    line_case c;
    kernel& k = *c.t.k;
    task_struct& s0 = *c.waiting[0];
    task_struct& s1 = *c.waiting[1];
    k.set_this_cpu(2);
    shared_runq_enqueue_task(k, k.cpu_rq(0), s0);
    k.set_this_cpu(3);
    shared_runq_enqueue_task(k, k.cpu_rq(0), s1);
    const u64 lines = k.srq().stats.node_lines;
    const sim_dur ns = k.srq().stats.node_line_ns;
    s0.cpus_mask.clear(1);
    s0.nr_cpus_allowed = 3;
    k.set_this_cpu(1);
    EXPECT_EQ(shared_runq_pick_next_task(k, k.cpu_rq(1)), 0) << "one shard, its head not allowed";
    EXPECT_EQ(k.srq().stats.node_lines, lines) << "a head not allowed is only read";
    EXPECT_EQ(s0.shard_node_line.last_cpu, 3);
    k.set_this_cpu(2);
    EXPECT_EQ(shared_runq_pick_next_task(k, k.cpu_rq(2)), 1);
    EXPECT_EQ(s0.cpu, 2);
    EXPECT_EQ(s1.shard_node_line.last_cpu, 2) << "the pop wrote s1->prev";
    // s0's node and s1's from cpu3; v3's re-push of s0 on cpu2 then finds both here
    EXPECT_EQ(k.srq().stats.node_lines, lines + 2);
    EXPECT_EQ(k.srq().stats.node_line_ns, ns + 2 * line_case::line);
}

// kernel: v3 pushes from __enqueue_entity(), with the rq's lock held (a remote wakeup's
// ttwu_do_activate() under the target's lock, taken by the waker): a waker whose push waits
// for the shard's lock, held by another CPU's push, waits with cpu0's lock held, and the
// next CPU taking cpu0's lock (another waker, a balancer, a pull) waits for that wait, the
// shard lock's hold and the lines written under it too. A push by a CPU that does not hold
// the rq's lock (here cpu3's, as from another rq of the shard) lengthens nothing.
TEST(shared_runq_enqueue_task, a_push_holds_the_rq_lock_across_the_shard_locks_wait_and_hold)
{
    line_case c;
    ASSERT_EQ(c.waiting.size(), 2u);
    kernel& k = *c.t.k;
    task_struct& s0 = *c.waiting[0];
    task_struct& s1 = *c.waiting[1];
    rq& r0 = k.cpu_rq(0);
    const sim_time now = k.now();
    const sim_time r0_free = r0.lock.busy_until;
    k.set_this_cpu(3);
    shared_runq_enqueue_task(k, r0, s0);
    EXPECT_EQ(r0.lock.busy_until, r0_free) << "cpu3 does not hold cpu0's lock";
    const sim_time shard_free = c.shard0().lock.busy_until;
    ASSERT_GT(shard_free, now) << "cpu3 holds the shard's lock";

    k.set_this_cpu(2); // a waker: cpu0's lock, then the push under it
    k.charges().lock_and_charge(r0.lock, 2, 0);
    const sim_time r0_held = r0.lock.busy_until;
    const u64 rq_hold_before = k.srq().stats.rq_hold_ns;
    const sim_dur spin_before = c.shard0().lock.wait_total;
    shared_runq_enqueue_task(k, r0, s1);
    EXPECT_EQ(c.shard0().lock.wait_total - spin_before, shard_free - now) << "cpu2 waited";
    const sim_dur shard_time = c.shard0().lock.busy_until - now; // its wait, hold and lines
    EXPECT_EQ(shard_time, (shard_free - now) + line_case::hold + 3 * line_case::line)
        << "the lock's line and s1's node from cpu1, s0's from cpu3";
    EXPECT_EQ(r0.lock.busy_until, std::max(r0_held, now) + shard_time);
    EXPECT_EQ(k.srq().stats.rq_hold_ns - rq_hold_before, static_cast<u64>(shard_time));

    k.set_this_cpu(1); // the next CPU to take cpu0's lock
    const sim_dur waited = r0.lock.wait_total;
    k.charges().lock_and_charge(r0.lock, 1, 0);
    EXPECT_EQ(r0.lock.wait_total - waited, std::max(r0_held, now) + shard_time - now);
}

// kernel: the unlink runs from __dequeue_entity() under task_rq(p)'s lock: the pick's
// set_next_entity() on cpu0 under its own, taken in __schedule(): cpu0's lock is held
// across the unlink's wait for the shard lock and its hold.
TEST(shared_runq_dequeue_task, an_unlink_holds_the_rq_lock_across_the_shard_lock)
{
    line_case c;
    kernel& k = *c.t.k;
    task_struct& s0 = *c.waiting[0];
    task_struct& s1 = *c.waiting[1];
    rq& r0 = k.cpu_rq(0);
    const sim_time now = k.now();
    k.set_this_cpu(2);
    shared_runq_enqueue_task(k, r0, s0);
    k.set_this_cpu(3);
    shared_runq_enqueue_task(k, r0, s1);
    const sim_time shard_free = c.shard0().lock.busy_until;
    ASSERT_GT(shard_free, now);
    k.set_this_cpu(0);
    k.charges().lock_and_charge(r0.lock, 0, 0);
    const sim_time r0_held = r0.lock.busy_until;
    shared_runq_dequeue_task(k, s0);
    const sim_dur shard_time = c.shard0().lock.busy_until - now;
    EXPECT_GT(shard_time, shard_free - now + line_case::hold) << "a wait, the hold, the lines";
    EXPECT_EQ(r0.lock.busy_until, std::max(r0_held, now) + shard_time);
}

// kernel: shared_runq_pick_next_task() pops with this rq's lock held, and drops it only
// once the pop is over (v3 6/7-7/7, v4 6/8): a pop that waits for a shard lock held by a
// push, and finds a head it may not take, has held this rq's lock for that wait and hold.
TEST(shared_runq_pick_next_task, a_pop_holds_this_rq_lock_across_the_shard_lock)
{
    line_case c;
    kernel& k = *c.t.k;
    task_struct& s0 = *c.waiting[0];
    rq& r1 = k.cpu_rq(1);
    const sim_time now = k.now();
    k.set_this_cpu(3);
    shared_runq_enqueue_task(k, k.cpu_rq(0), s0);
    const sim_time shard_free = c.shard0().lock.busy_until;
    ASSERT_GT(shard_free, now);
    s0.cpus_mask.clear(1);
    s0.nr_cpus_allowed = 3;
    k.set_this_cpu(1);
    k.charges().lock_and_charge(r1.lock, 1, 0); // __schedule()'s
    const sim_time r1_held = r1.lock.busy_until;
    EXPECT_EQ(shared_runq_pick_next_task(k, r1), 0) << "its one shard's head is not allowed";
    const sim_dur shard_time = c.shard0().lock.busy_until - now;
    EXPECT_EQ(shard_time, (shard_free - now) + line_case::hold + line_case::line)
        << "the wait, then the hold with the lock's line from cpu3";
    EXPECT_EQ(r1.lock.busy_until, std::max(r1_held, now) + shard_time);
}

// kernel: the pull's move_queued_task() dequeues under the source rq's lock, and the
// dequeue of a migrating task writes tg->load_avg (DO_DETACH, update_tg_load_avg()): a
// puller waiting for that line holds the source's lock meanwhile, so the next CPU taking
// it (the source's own schedule(), a waker) waits for the line too. (This rq's lock is
// held the same way across the enqueue's write, DO_ATTACH, which here waits for nothing:
// the puller wrote the line last.)
TEST(shared_runq_pick_next_task, a_pull_holds_the_source_rqs_lock_across_the_detachs_tg_load_avg_wait)
{
    auto src_lock_held_for = [](sim_dur line_busy_for) {
        queued_case c("tip-2023-08+shared_runq_v3");
        c.t.run_for(msecs(8));
        EXPECT_FALSE(c.shard0().list.empty());
        kernel& k = *c.t.k;
        rq& src = k.cpu_rq(0);
        EXPECT_NE(src.cfs.tg, nullptr);
        contended_lock& line = src.cfs.tg->load_avg_line;
        line.last_cpu = 2; // a transaction of cpu2's on the line, in flight for line_busy_for
        line.busy_until = k.now() + line_busy_for;
        k.set_this_cpu(1);
        EXPECT_EQ(shared_runq_pick_next_task(k, k.cpu_rq(1)), 1);
        return src.lock.busy_until - k.now();
    };
    const sim_dur free_line = src_lock_held_for(0);
    EXPECT_EQ(src_lock_held_for(usecs(50)), free_line + usecs(50))
        << "the detach's 50 us wait for the line is inside the source rq's lock";
}

// v3 pulls before every gate; v4 only when the root domain is overloaded.
TEST(sched_balance_newidle, shared_runq_v3_pulls_before_the_gates_and_v4_after_the_overload_gate)
{
    for (const char* spec : {"tip-2023-08+shared_runq_v3", "tip-2023-12+shared_runq_v4"}) {
        queued_case c(spec);
        c.t.run_for(msecs(8));
        ASSERT_FALSE(c.shard0().list.empty()) << spec;
        c.t.k->rd().overload = false;
        rq& dst = c.t.k->cpu_rq(1);
        dst.avg_idle = 0;
        sched_balance_newidle(*c.t.k, dst);
        const bool v3 = std::string(spec).find("v3") != std::string::npos;
        EXPECT_EQ(c.t.k->srq().stats.pulls_moved, v3 ? 1u : 0u) << spec;
    }
}

// kernel: v3's shared_runq_pick_next_task() returns -1 for a popped task it could not
// move (running, or gone, by the time it holds the task's rq lock); pick_next_task_fair()
// then returns RETRY_TASK, __pick_next_task() restarts, and balance_fair() goes newly
// idle once more; the class picks that follow do not balance again. So an idle CPU
// pops at most two heads per pick: here the first two are running elsewhere (as after a
// race with their CPUs' picks), and the third, movable, stays listed.
TEST(pick_next_task_fair, a_v3_pop_that_moves_nothing_restarts_the_pick_once)
{
    sched_fixture t(testlib::small_machine(4), "tip-2023-08+shared_runq_v3");
    kernel& k = *t.k;
    task_struct& a = t.spawn("a", testlib::spin(), 0, 0, 0);
    task_struct& b = t.spawn("b", testlib::spin(), 0, 0, 0);
    task_struct& d = t.spawn("d", testlib::spin(), 0, 0, 2);
    t.run_for(msecs(1));
    task_struct& running0 = k.cpu_rq(0).curr == &a ? a : b;
    task_struct& queued0 = &running0 == &a ? b : a;
    ASSERT_EQ(k.cpu_rq(2).curr, &d);
    for (task_struct* p : {&a, &b, &d}) {
        p->cpus_mask.set_all();
        p->nr_cpus_allowed = 4;
    }
    ASSERT_EQ(queued0.shard, nullptr) << "pinned when it was queued";
    k.set_this_cpu(1);
    shared_runq_enqueue_task(k, k.cpu_rq(0), running0);
    shared_runq_enqueue_task(k, k.cpu_rq(2), d);
    shared_runq_enqueue_task(k, k.cpu_rq(0), queued0);
    rq& idle = k.cpu_rq(1);
    ASSERT_EQ(idle.cfs.nr_running, 0u);
    EXPECT_EQ(pick_next_task_fair(k, idle, nullptr), nullptr);
    EXPECT_EQ(k.srq().stats.pops_not_moved, 2u);
    EXPECT_EQ(k.srq().stats.pulls_moved, 0u);
    EXPECT_NE(queued0.shard, nullptr) << "the third head is left for the next idle entry";
    EXPECT_EQ(queued0.cpu, 0);
}

// kernel: v3's newidle_balance() gate: sd = sd_llc, then sd->parent when sd_llc is set:
// on a machine whose LLC is the top domain there is no gating domain, so only
// rd->overload closes the gate (the domain loop's own avg_idle check still applies).
TEST(sched_balance_newidle, v3_has_no_gate_domain_when_the_llc_is_the_top_domain)
{
    struct sink final : decision_sink {
        int gate_closed = 0;
        void decision(const sched_decision& d) override
        {
            gate_closed += d.text.find("gate closed") != std::string::npos;
        }
    };
    for (const char* spec : {"tip-2023-08", "tip-2023-08+shared_runq_v3"}) {
        sched_fixture t(testlib::small_machine(4), spec);
        kernel& k = *t.k;
        ASSERT_NE(k.topology().cpu(1).sd_llc, nullptr);
        ASSERT_EQ(k.topology().cpu(1).sd_llc->parent, nullptr) << "one LLC, the top domain";
        sink s;
        k.decisions().set_sink(&s);
        k.rd().overload = true;
        rq& r = k.cpu_rq(1);
        r.avg_idle = 0;
        k.topology().cpu(1).sd()->max_newidle_lb_cost = usecs(100);
        k.set_this_cpu(1);
        sched_balance_newidle(k, r);
        k.decisions().set_sink(nullptr);
        const bool v3 = std::string(spec).find("v3") != std::string::npos;
        EXPECT_EQ(s.gate_closed, v3 ? 0 : 1) << spec;
    }
}

// kernel: v3 6/7 (20230809221218.163894-7-void@manifault.com) gates newidle_balance() on
// sd_llc->parent's max_newidle_lb_cost; Gautham Shenoy's "noopt" reverted that hunk
// (ZOc7i7wM0x4hF4vL@BLR-5CG11610CF.amd.com), so it gates on rq->sd as 6.5 does. An
// avg_idle between the two domains' costs closes v3's gate and opens noopt's and tip's.
TEST(sched_balance_newidle, v3_gates_on_the_domain_above_the_llc_and_noopt_on_rq_sd)
{
    struct sink final : decision_sink {
        std::string gate;
        void decision(const sched_decision& d) override
        {
            if (d.text.rfind("gate ", 0) == 0)
                gate = d.text;
        }
    };
    for (const char* spec :
         {"tip-2023-08", "tip-2023-08+shared_runq_v3", "tip-2023-08+shared_runq_v3_noopt"}) {
        sched_fixture t(load_machine("milan-2s"), spec);
        kernel& k = *t.k;
        const cpu_sched_domains& cd = k.topology().cpu(1);
        ASSERT_NE(cd.sd_llc, nullptr);
        ASSERT_NE(cd.sd_llc->parent, nullptr) << "milan-2s has domains above the LLC";
        ASSERT_NE(cd.sd(), cd.sd_llc->parent);
        cd.sd()->max_newidle_lb_cost = usecs(1);
        cd.sd_llc->parent->max_newidle_lb_cost = usecs(40);
        sink s;
        k.decisions().set_sink(&s);
        k.rd().overload = true;
        rq& r = k.cpu_rq(1);
        r.avg_idle = usecs(20);
        k.set_this_cpu(1);
        sched_balance_newidle(k, r);
        k.decisions().set_sink(nullptr);
        const bool v3_opt = std::string(spec) == "tip-2023-08+shared_runq_v3";
        const std::string& gate_name = v3_opt ? cd.sd_llc->parent->name : cd.sd()->name;
        EXPECT_EQ(s.gate.rfind(v3_opt ? "gate closed" : "gate open", 0), 0u)
            << spec << ": " << s.gate;
        EXPECT_NE(s.gate.find("gate " + gate_name + " "), std::string::npos)
            << spec << ": " << s.gate;
    }
}

// kernel: v3 6/7's "Skip <= LLC domains" hunk (20230809221218.163894-7-void@manifault.com)
// assigns only the gate's sd: the domain loop that follows is for_each_domain(this_cpu, sd),
// which starts again at rq->sd (K Prateek Nayak, 3e32bec6-5e59-c66a-7676-7d15df2c961c@amd.com;
// v3's code has no skip inside the loop, which v4 6/8 added). So once v3's gate is open,
// the pass walks SMT and the LLC before the domains above it, as tip's does; only v4 skips
// the SMT and LLC levels. By hand on milan-2s's cpu1 with nothing to pull anywhere and an
// avg_idle above every domain's cost: tip, v3 and noopt balance SMT, MC, DIE and NUMA in
// that order; v4 (tip-2023-12) only DIE and NUMA.
TEST(sched_balance_newidle, v3_past_its_gate_walks_the_domains_from_rq_sd)
{
    struct sink final : decision_sink {
        std::vector<std::string> passes;
        void decision(const sched_decision& d) override
        {
            if (d.text.find(" domain_cost=") != std::string::npos)
                passes.push_back(d.text.substr(0, d.text.find(' ')));
        }
    };
    for (const char* spec : {"tip-2023-08", "tip-2023-08+shared_runq_v3",
                             "tip-2023-08+shared_runq_v3_noopt", "tip-2023-12+shared_runq_v4"}) {
        sched_fixture t(load_machine("milan-2s"), spec);
        kernel& k = *t.k;
        const cpu_sched_domains& cd = k.topology().cpu(1);
        std::vector<std::string> all;
        std::vector<std::string> above_llc;
        bool past_llc = false;
        for (const auto& sd : cd.domains) {
            sd->max_newidle_lb_cost = usecs(1);
            all.push_back(sd->name);
            if (past_llc)
                above_llc.push_back(sd->name);
            past_llc = past_llc || sd.get() == cd.sd_llc;
        }
        ASSERT_EQ(all.size(), 4u) << "SMT, MC, DIE and NUMA";
        ASSERT_EQ(above_llc.size(), 2u);
        sink s;
        k.decisions().set_sink(&s);
        k.rd().overload = true;
        rq& r = k.cpu_rq(1);
        r.avg_idle = msecs(1);
        k.set_this_cpu(1);
        EXPECT_EQ(sched_balance_newidle(k, r), 0) << spec;
        k.decisions().set_sink(nullptr);
        const bool v4 = std::string(spec).find("v4") != std::string::npos;
        EXPECT_EQ(s.passes, v4 ? above_llc : all) << spec;
    }
}

TEST(sched_feat_set, switching_shared_runq_off_drains_the_shards)
{
    queued_case c("tip-2023-08+shared_runq_v3");
    c.t.run_for(msecs(8));
    ASSERT_FALSE(c.shard0().list.empty());
    c.t.k->sched_feat_set(__SCHED_FEAT_SHARED_RUNQ, false);
    EXPECT_TRUE(c.shard0().list.empty());
    for (auto* p : c.ts)
        EXPECT_EQ(p->shard, nullptr);
    c.t.run_for(msecs(20));
    EXPECT_TRUE(c.shard0().list.empty()) << "nothing is pushed while off";
}

} // namespace
} // namespace schedlab

namespace schedlab {
namespace {

// Each delta changes only what it names: with its features switched off, a run
// is bit-identical to the same run on the base profile.
u64 digest_for(const std::string& spec)
{
    symmetric_machine_spec s;
    s.name = "test-2llc-smt2";
    s.cores_per_socket = 8;
    s.threads_per_core = 2;
    s.cores_per_llc = 4;
    testlib::sched_fixture t(make_symmetric_machine(s, "test"), spec, 9, "", cost_params{});
    for (int i = 0; i < 40; ++i)
        t.spawn(fmt::format("w{}", i), testlib::behaviour([](syscalls& k, task_struct& p) {
                    if (p.rng.below(3))
                        return task_action::cpu(k.charge(p, usecs(150)));
                    k.schedule_timeout(p, static_cast<sim_dur>(p.rng.below(usecs(300))));
                    return task_action::sleep();
                }));
    t.run_for(msecs(60));
    return t.k->schedule_digest();
}

TEST(kernel_deltas, with_their_features_off_runs_are_bit_identical_to_the_base)
{
    EXPECT_EQ(digest_for("tip-2023-08"), digest_for("tip-2023-08+shared_runq_v3+NO_SHARED_RUNQ"));
    EXPECT_EQ(digest_for("tip-2023-12"), digest_for("tip-2023-12+shared_runq_v4+NO_SHARED_RUNQ"));
    EXPECT_EQ(digest_for("tip-2023-02"), digest_for("tip-2023-02+sis_short_v6+NO_SIS_SHORT"));
    EXPECT_EQ(digest_for("tip-2023-08"),
              digest_for("tip-2023-08+tg_ratelimit+NO_TG_LOAD_AVG_RATELIMIT"));
    EXPECT_EQ(digest_for("5.15-rc3"),
              digest_for("5.15-rc3+stacking+NO_COUPLE_WAKEE_FLIPS+NO_SCALE_WAKEUP_GRAN"));
    // ... and with them on, the schedule changes (the test can see a difference).
    EXPECT_NE(digest_for("tip-2023-08"), digest_for("tip-2023-08+shared_runq_v3"));
}

} // namespace
} // namespace schedlab
