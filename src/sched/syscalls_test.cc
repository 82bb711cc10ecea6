// SPDX-License-Identifier: GPL-2.0-only
/*
 * The system calls (syscalls.h): the workload layer's only way into the
 * kernel model. Each is the kernel's or the cost model's own function; these
 * tests pin what the facade adds: getrusage(RUSAGE_CHILDREN) and the charging
 * of shared kernel objects' cache lines to the reading CPU.
 */
#include "sched/syscalls.h"

#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using testlib::sched_fixture;

TEST(syscalls, rusage_children_counts_the_exited_descendants_only)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    syscalls& sys = t.k->sys();
    task_struct* grandchild = nullptr;
    task_struct* child = nullptr;
    task_struct& parent =
        t.spawn("parent", testlib::behaviour([&](syscalls& s, task_struct& p) {
                    if (child)
                        return task_action::cpu(msecs(50)); // outlives its children
                    task_opts o;
                    o.comm = "child";
                    child = &s.fork(p, testlib::behaviour([&](syscalls& s2, task_struct& c) {
                                        if (grandchild)
                                            return task_action::do_exit();
                                        task_opts g;
                                        g.comm = "grandchild";
                                        grandchild =
                                            &s2.fork(c, testlib::run_then_exit(msecs(3)), g);
                                        return task_action::cpu(msecs(2));
                                    }),
                                    o);
                    return task_action::cpu(msecs(1));
                }));
    task_struct& stranger = t.spawn("stranger", testlib::run_then_exit(msecs(4)), 1);
    t.run_for(msecs(30));

    ASSERT_NE(child, nullptr);
    ASSERT_NE(grandchild, nullptr);
    ASSERT_GE(child->exit_time, 0);
    ASSERT_GE(grandchild->exit_time, 0);
    ASSERT_GE(stranger.exit_time, 0);
    EXPECT_EQ(sys.rusage_children(parent),
              static_cast<sim_dur>(child->se.sum_exec_runtime + grandchild->se.sum_exec_runtime));
    EXPECT_EQ(sys.rusage_children(*child), static_cast<sim_dur>(grandchild->se.sum_exec_runtime));
    EXPECT_EQ(sys.rusage_children(stranger), 0);
    EXPECT_EQ(parent.exit_time, -1) << "still running: not its own child";
}

TEST(syscalls, pull_lines_charges_the_transfer_by_distance_to_the_readers_cpu)
{
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 40;
    sched_fixture t(testlib::small_machine(2), "6.6", 1, "", c);
    int steps = 0;
    task_struct& reader = t.spawn(
        "reader", testlib::behaviour([&](syscalls& s, task_struct& p) {
            if (steps++ == 0) {
                s.pull_lines(p, p.cpu, 5);     // its own CPU's lines: free
                s.pull_lines(p, -1, 5);        // never used before: free
                s.pull_lines(p, 1 - p.cpu, 5); // the other CPU's: 5 transfers within the LLC
                return task_action::cpu(usecs(10));
            }
            return task_action::do_exit();
        }),
        0, 0, 0);
    t.run_for(msecs(1));
    ASSERT_GE(reader.exit_time, 0);
    const cpu_time_accounting a = t.k->charges().cpu_accounting(t.k->cpu_rq(0));
    EXPECT_EQ(a.spent[ACCT_LOCK_HOLD], 5 * 40);
}

TEST(syscalls, pull_data_lines_says_whether_the_lines_moved)
{
    cost_params c = sched_fixture::no_costs();
    c.line_llc = 40;
    c.l2_kib = 1024;
    sched_fixture t(testlib::small_machine(2), "6.6", 1, "", c);
    syscalls& sys = t.k->sys();
    const u64 stamp = sys.data_stamp(1);
    sys.data_touch(1, 100);
    bool same = true;
    bool other = false;
    int steps = 0;
    t.spawn("reader", testlib::behaviour([&](syscalls& s, task_struct& p) {
                if (steps++ == 0) {
                    same = s.pull_data_lines(p, p.cpu, s.data_stamp(p.cpu), 2);
                    other = s.pull_data_lines(p, 1, stamp, 2);
                    return task_action::cpu(usecs(10));
                }
                return task_action::do_exit();
            }),
            0, 0, 0);
    t.run_for(msecs(1));
    EXPECT_FALSE(same) << "written on the reader's own CPU, still in its caches";
    EXPECT_TRUE(other) << "written on another CPU of the LLC: pulled";
    EXPECT_EQ(t.k->charges().cpu_accounting(t.k->cpu_rq(0)).spent[ACCT_LOCK_HOLD], 2 * 40);
}

} // namespace
} // namespace schedlab
