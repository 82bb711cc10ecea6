// SPDX-License-Identifier: GPL-2.0-only
/*
 * The system calls (see syscalls.h): each is the kernel's own function, or
 * the cost model's for the cache lines of shared kernel objects.
 */
#include "sched/syscalls.h"

#include "sched/core.h"
#include "sched/fair.h"

#include "sim/bug.h"

namespace schedlab {

sim_time syscalls::now() const
{
    return k_.now();
}

int syscalls::nr_cpu_ids() const
{
    return k_.nr_cpu_ids();
}

int syscalls::llc_size(int cpu) const
{
    return k_.topology().cpu(cpu).sd_llc_size;
}

const machine& syscalls::mach() const
{
    return k_.mach();
}

const cost_params& syscalls::costs() const
{
    return k_.charges().params();
}

task_struct& syscalls::spawn(std::unique_ptr<task_behaviour> b, const task_opts& o)
{
    return k_.spawn(std::move(b), o);
}

void syscalls::sched_exec(task_struct& p)
{
    k_.sched_exec(p);
}

task_struct& syscalls::fork(task_struct& parent, std::unique_ptr<task_behaviour> b,
                            const task_opts& o)
{
    return k_.fork(parent, std::move(b), o);
}

sim_dur syscalls::exit_cost(const task_struct& p) const
{
    return k_.charges().exit_cost(p);
}

sim_dur syscalls::kernel_work_owed(const task_struct& p) const
{
    const rq& r = k_.cpu_rq(p.cpu);
    if (r.curr != &p)
        return 0;
    return k_.charges().owed_until(r) - k_.now();
}

/*
 * kernel: kernel/signal.c exit_signals(), v6.5 (sndrzt/linux-6.5 4f5cdb332210): sets PF_EXITING
 * (under siglock, after retargeting pending group signals); do_exit() calls it before exit_mm()
 * and exit_notify(). Differs: no signals, so only the flag.
 */
void syscalls::exit_signals(task_struct& p)
{
    p.flags |= PF_EXITING;
}

// kernel: kernel/sys.c getrusage(RUSAGE_CHILDREN): the reaped descendants' times (sum_exec_runtime
// here).
sim_dur syscalls::rusage_children(const task_struct& p) const
{
    sim_dur total = 0;
    for (const auto& t : k_.tasks()) {
        if (t->exit_time < 0)
            continue;
        for (int a = t->parent_pid; a > 0;) {
            if (a == p.pid) {
                total += static_cast<sim_dur>(t->se.sum_exec_runtime);
                break;
            }
            const task_struct* up = k_.find_task_by_pid(a);
            a = up ? up->parent_pid : 0;
        }
    }
    return total;
}

bool syscalls::try_to_wake_up(task_struct& p, unsigned state, int wake_flags)
{
    return k_.try_to_wake_up(p, state, wake_flags);
}

void syscalls::schedule_timeout(task_struct& p, sim_dur ns)
{
    k_.schedule_timeout(p, ns);
}

void syscalls::hrtimer_nanosleep(task_struct& p, sim_dur ns)
{
    k_.schedule_timeout(p, ns, kernel::nanosleep_slack(p));
}

// kernel: kernel/sched/core.c try_to_wake_up() -> select_task_rq(), which calls the class's
// select_task_rq only for a task with nr_cpus_allowed > 1 (v6.18.38) -> kernel/sched/fair.c
// select_task_rq_fair(), whose WF_TTWU branch calls record_wakee(p) on `current` first,
// whatever the context, then wake_wide() (6.6; the same in the tree that
// 20250325120952.GJ36322@noisy.programming.kicks-ass.net patches, March 2025; a 6.18 fair.c
// was not read). Model: that call alone, for a wakee the run does not simulate (syscalls.h).
void syscalls::record_absent_wakee(task_struct& waker, task_struct& absent)
{
    SIM_BUG_ON(k_.current() != &waker, "record_absent_wakee: pid {} is not current on cpu {}",
               waker.pid, k_.smp_processor_id());
    SIM_BUG_ON(absent.on_rq, "record_absent_wakee: the absent task is queued");
    record_wakee(k_, absent);
}

void syscalls::set_wakee_flips(task_struct& p, u32 flips)
{
    p.wakee_flips = flips;
    p.wakee_flip_decay_ts = jiffies(k_);
}

sim_dur syscalls::charge(task_struct& p, sim_dur base)
{
    return k_.charges().jittered(p, base);
}

void syscalls::pull_lines(const task_struct& p, int from, u64 lines)
{
    if (from < 0 || from == p.cpu)
        return;
    k_.charges().charge_cpu(k_.cpu_rq(p.cpu), static_cast<sim_dur>(lines) * k_.charges().cm().line_cost(from, p.cpu),
                  ACCT_LOCK_HOLD);
}

bool syscalls::pull_data_lines(const task_struct& p, int from, u64 stamp, u64 lines)
{
    const auto d = k_.charges().cm().data_lines_cost(from, stamp, p.cpu, lines);
    if (!d)
        return false;
    k_.charges().charge_cpu(k_.cpu_rq(p.cpu), *d, ACCT_LOCK_HOLD);
    return true;
}

sim_dur syscalls::line_cost(int from, int to) const
{
    return k_.charges().cm().line_cost(from, to);
}

u64 syscalls::data_stamp(int cpu) const
{
    return k_.charges().cm().data_stamp(cpu);
}

void syscalls::data_touch(int cpu, u64 bytes)
{
    k_.charges().cm().data_touch(cpu, bytes);
}

} // namespace schedlab
