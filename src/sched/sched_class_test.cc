// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scheduling-class table (struct sched_class, sched.h) and the fair
 * class's two policies (fair_policy.h): which class and policy a task and a
 * profile get, and the core's class-level decisions.
 */
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace schedlab {
namespace {

using testlib::sched_fixture;
using testlib::small_machine;

TEST(sched_class, a_task_runs_in_the_class_of_its_policy_and_idle_in_the_idle_class)
{
    sched_fixture t(small_machine(2), "6.6");
    for (const int policy : {SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE}) {
        task_opts o;
        o.comm = fmt::format("policy{}", policy);
        o.policy = policy;
        task_struct& p = t.k->spawn(testlib::spin(), o);
        EXPECT_EQ(p.sched_class, &fair_sched_class) << o.comm;
    }
    for (int cpu = 0; cpu < 2; ++cpu)
        EXPECT_EQ(t.k->cpu_rq(cpu).idle->sched_class, &idle_sched_class);
}

TEST(sched_class, the_classes_are_in_the_kernels_order)
{
    EXPECT_TRUE(sched_class_above(&rt_sched_class, &fair_sched_class));
    EXPECT_TRUE(sched_class_above(&fair_sched_class, &idle_sched_class));
    EXPECT_FALSE(sched_class_above(&idle_sched_class, &fair_sched_class));
    EXPECT_FALSE(sched_class_above(&fair_sched_class, &fair_sched_class));
}

TEST(wakeup_preempt, a_fair_wakee_preempts_the_idle_class_at_once)
{
    // wake_up_new_task() -> wakeup_preempt(): the wakee's class is above rq->curr's
    // (idle), so the CPU is asked to reschedule without asking the fair class.
    sched_fixture t(small_machine(1), "6.6");
    rq& r = t.k->cpu_rq(0);
    ASSERT_TRUE(r.curr->is_idle_task());
    EXPECT_FALSE(r.need_resched);
    t.spawn("a", testlib::spin());
    EXPECT_TRUE(r.need_resched);
    t.run_for(msecs(1));
    EXPECT_EQ(r.curr->comm, "a");
    EXPECT_EQ(r.stats.sched_goidle, 0u) << "the idle class picked while a fair task was queued";
}

TEST(pick_next_task, falls_through_to_the_idle_class_when_the_fair_class_has_nothing)
{
    sched_fixture t(small_machine(1), "6.6");
    t.spawn("short", testlib::run_then_exit(msecs(1)));
    t.run_for(msecs(5));
    const rq& r = t.k->cpu_rq(0);
    EXPECT_TRUE(r.curr->is_idle_task());
    EXPECT_EQ(r.stats.sched_goidle, 1u) << "pick_next_task_idle() counts sched_goidle";
}

TEST(fair_policy, the_profile_chooses_eevdf_from_6_6_and_cfs_before)
{
    auto name = [](const char* spec) {
        sched_fixture t(small_machine(1), spec);
        return std::string(t.k->policy().name);
    };
    EXPECT_EQ(name("5.15"), "CFS");
    EXPECT_EQ(name("6.5"), "CFS");
    EXPECT_EQ(name("6.6"), "EEVDF");
    EXPECT_EQ(name("6.12"), "EEVDF");
}

TEST(fair_policy, eevdf_checks_its_avg_vruntime_sums_and_cfs_keeps_none)
{
    sched_fixture eevdf(small_machine(1), "6.6");
    eevdf.spawn("a", testlib::spin());
    eevdf.spawn("b", testlib::spin());
    eevdf.run_for(msecs(10));
    EXPECT_EQ(eevdf.k->cpu_rq(0).cfs.avg_load, NICE_0_LOAD) << "one queued, one running";
    EXPECT_DEATH(
        {
            eevdf.k->cpu_rq(0).cfs.avg_load += 1;
            eevdf.k->check_all();
        },
        "avg_vruntime [-0-9]+ / avg_load 1025 but the tree sums to");

    sched_fixture cfs(small_machine(1), "6.5");
    cfs.spawn("a", testlib::spin());
    cfs.spawn("b", testlib::spin());
    cfs.run_for(msecs(10));
    EXPECT_EQ(cfs.k->cpu_rq(0).cfs.avg_load, 0u);
    EXPECT_EQ(cfs.k->cpu_rq(0).cfs.avg_vruntime, 0);
    EXPECT_EQ(cfs.k->print_rq(0).find("avg_vruntime"), std::string::npos);
    EXPECT_NE(eevdf.k->print_rq(0).find("avg_vruntime"), std::string::npos);
}

TEST(fair_class, enqueues_reuse_the_timeline_and_cfs_tasks_nodes_that_dequeues_freed)
{
    /*
     * kernel: se->run_node and se->group_node are part of struct sched_entity, so
     * enqueue_entity() allocates nothing. The model keeps the std::set's and std::list's
     * nodes that dequeues free, for the next enqueues (kernel::fair_spares()): three
     * tasks on one CPU that run 1 ms and sleep 5 ms are dequeued and enqueued again and
     * again, and the CPU and the kernel's spares hold exactly the nodes of each ever
     * made, none freed and none made again, the whole run (a node freed at sleep would
     * leave them holding fewer than were made).
     */
    sched_fixture t(small_machine(1), "6.6");
    std::vector<task_struct*> tasks;
    std::set<const void*> list_nodes, tree_nodes; // every node seen, queued or spare
    int asleep_seen = 0;
    auto sample = [&] {
        const rq& r = t.k->cpu_rq(0);
        std::set<const void*> list_held, tree_held;
        for (const auto& node : r.cfs_tasks)
            list_held.insert(&node);
        for (const auto& node : t.k->fair_spares().group_nodes)
            list_held.insert(&node);
        for (const auto& node : r.cfs.tasks_timeline)
            tree_held.insert(&node);
        for (const auto& node : r.root_cfs.tasks_timeline) // the autogroup's entity on the root
            tree_held.insert(&node);
        for (const auto& node : t.k->fair_spares().run_nodes) {
            ASSERT_FALSE(node.empty());
            tree_held.insert(&node.value());
        }
        list_nodes.insert(list_held.begin(), list_held.end());
        tree_nodes.insert(tree_held.begin(), tree_held.end());
        // a node once made stays with the CPU, queued or spare, and is not made again
        ASSERT_EQ(list_held, list_nodes) << "a cfs_tasks node was freed or replaced";
        ASSERT_EQ(tree_held, tree_nodes) << "a timeline node was freed or replaced";
        for (const task_struct* q : tasks)
            asleep_seen += q->on_rq ? 0 : 1;
    };
    for (int i = 0; i < 3; ++i) {
        auto running = std::make_shared<bool>(false);
        tasks.push_back(&t.spawn(fmt::format("t{}", i),
                                 testlib::behaviour([&, running](syscalls& k, task_struct& p) {
                                     sample();
                                     if (!*running) {
                                         *running = true;
                                         return task_action::cpu(msecs(1));
                                     }
                                     *running = false;
                                     k.schedule_timeout(p, msecs(5));
                                     return task_action::sleep();
                                 })));
    }
    t.run_for(msecs(200));
    EXPECT_GT(asleep_seen, 100);
    for (const task_struct* q : tasks)
        EXPECT_GT(q->nvcsw, 20u) << q->comm << " slept and woke";
    EXPECT_GE(list_nodes.size(), 2u);
    EXPECT_LE(list_nodes.size(), 3u) << "no more cfs_tasks nodes than tasks";
    EXPECT_GE(tree_nodes.size(), 1u);
    EXPECT_LE(tree_nodes.size(), 4u) << "no more timeline nodes than tasks and the group entity";
    // Every queued task, the running one included, is on rq->cfs_tasks once.
    const rq& r = t.k->cpu_rq(0);
    EXPECT_EQ(r.cfs_tasks.size(), r.cfs.nr_running);
}

} // namespace
} // namespace schedlab
