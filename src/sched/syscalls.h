// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The system calls: the kernel model's surface for simulated user space.
 *
 * The workload layer (task code and the kernel objects tasks share: wait
 * queues, pipes, sockets, futexes) reaches the scheduler only through this
 * header: creating and ending tasks, blocking and waking them, timers,
 * charging CPU time, the cache lines of shared kernel objects, and the
 * current time. It sees task_struct (a task's identity, its CPU, its
 * random stream) but none of the scheduler's machinery.
 *
 * The contract every system call follows (workload/task.h writes each once):
 * a syscall's CPU cost is consumed first (charge()), its effect happens when
 * that CPU time ends, and the wakeups it made are charged right after. A
 * blocking call queues the task on a wait queue and returns a block action;
 * try_to_wake_up() makes it runnable again and it retries where it stopped.
 */
#include "machine/costs.h"
#include "machine/cpumask.h"
#include "machine/machine.h"
#include "sched/sched.h"
#include "sim/time.h"

#include <memory>
#include <string>

namespace schedlab {

class kernel;

/// How a new task is created by syscalls::spawn / syscalls::fork.
struct task_opts {
    std::string comm = "task";
    int nice = 0;
    int policy = SCHED_NORMAL;
    int rt_priority = 0;    ///< SCHED_FIFO / SCHED_RR: 1..99; 0 for the other policies
    sched_dl_attr dl;       ///< SCHED_DEADLINE: runtime, deadline, period (sched_setattr())
    cpumask allowed;        ///< empty: inherit (fork) or all CPUs (spawn)
    int cpu = -1;           ///< spawn only: the CPU the creating context runs on (default 0)
    bool thread = false;    ///< share the parent's tgid (CLONE_THREAD)
    u32 footprint_kib = 16; ///< hot working set per run, for the cache-refill cost
    /// The task calls setsid() before anything else: a session of its own, so with
    /// autogroup on an autogroup of its own (kernel/sys.c ksys_setsid() ->
    /// sched_autogroup_create_attach()). Else it stays in its parent's session (fork:
    /// sched_autogroup_fork()), or, for spawn(), the benchmark's (the first autogroup).
    bool setsid = false;
};

/// The system calls of one kernel instance (kernel::sys()).
class syscalls {
public:
    explicit syscalls(kernel& k) : k_(k) {}
    syscalls(const syscalls&) = delete;
    syscalls& operator=(const syscalls&) = delete;

    /* ---- time and the machine ---- */
    sim_time now() const;
    int nr_cpu_ids() const;
    /// kernel: per_cpu(sd_llc_size, cpu): the CPUs sharing `cpu`'s last-level cache.
    int llc_size(int cpu) const;
    const machine& mach() const;
    const cost_params& costs() const;
    /// The kernel has a preemption model (`+preempt=`): the task layer splits a burst where
    /// a system call returns to user mode and marks each burst's mode (task_action::user).
    bool preempt_points() const { return preempt_points_; }

    /* ---- tasks ---- */
    /// Creates a task as if forked by init and wakes it (wake_up_new_task()).
    task_struct& spawn(std::unique_ptr<task_behaviour> b, const task_opts& o);
    /// fork()/clone() from the current task `parent`, from inside its step().
    task_struct& fork(task_struct& parent, std::unique_ptr<task_behaviour> b, const task_opts& o);
    /// execve()'s sched_exec() by the current task p, from inside its step() (kernel::sched_exec()).
    void sched_exec(task_struct& p);
    /// model: what exit() costs the task: a thread-group leader's process exit
    /// (costs().exit) or another thread's do_exit() (costs().exit_thread).
    sim_dur exit_cost(const task_struct& p) const;
    /// model: the kernel work charged to p's CPU while p is current that p has not run yet
    /// (cpu_charges::owed_until()): what its calls so far charged the CPU beyond their own
    /// bursts (a remote wakeup's runqueue lock, lines and IPI send), which p pays at the start
    /// of its next burst; 0 if p is not current.
    sim_dur kernel_work_owed(const task_struct& p) const;
    /// kernel/signal.c exit_signals(), called first in kernel/exit.c do_exit() (v6.5): marks
    /// the current task p PF_EXITING before the exit's work, so the wakeups of its exit
    /// (exit_notify()'s of the parent) are not sync (select_task_rq_fair()).
    void exit_signals(task_struct& p);
    /// getrusage(RUSAGE_CHILDREN): the CPU time of p's descendants that have exited.
    sim_dur rusage_children(const task_struct& p) const;

    /* ---- blocking and waking ---- */
    /// try_to_wake_up(): false if p was not in one of `state`'s sleep states.
    bool try_to_wake_up(task_struct& p, unsigned state, int wake_flags);
    bool wake_up_process(task_struct& p) { return try_to_wake_up(p, TASK_NORMAL, 0); }
    /// Arms p's hrtimer to wake it `ns` from now (schedule_hrtimeout()); p then blocks.
    void schedule_timeout(task_struct& p, sim_dur ns);
    /// hrtimer_nanosleep(): as schedule_timeout(), with the expiry range of p's timer slack.
    void hrtimer_nanosleep(task_struct& p, sim_dur ns);
    /// model: try_to_wake_up(), by the current task `waker` (or an interrupt while it is
    /// current), of a fair task this run does not simulate (a replayed trace's task outside
    /// the selection), allowed on more than one CPU and not queued. `absent` stands for it
    /// (its identity as a last_wakee; it is never queued). Of that wakeup only
    /// select_task_rq_fair()'s record_wakee() is modelled: the waker's wakee flips, which
    /// wake_wide() reads at the waker's later wakeups; the absent task's placement, enqueue
    /// and run are not, and no CPU is charged (a replayed burst holds the traced work).
    void record_absent_wakee(task_struct& waker, task_struct& absent);
    /// model: p's wakee_flips as counted before the run (a replay root's --wakee-flips),
    /// their decay stamp (wakee_flip_decay_ts) at the current jiffy: the count is the one
    /// at this instant, halved by record_wakee() a second on, not at p's first wakeup (the
    /// run starts SCHED_CLOCK_AT_START after boot's jiffies, fair_select.cc jiffies()).
    void set_wakee_flips(task_struct& p, u32 flips);

    /* ---- CPU time ---- */
    /// A syscall cost with the task's jitter applied (costs().jitter_pct, p's own stream).
    sim_dur charge(task_struct& p, sim_dur base);

    /* ---- the cache lines of shared kernel objects (the cost model) ---- */
    /// `lines` lines of a kernel object last used on CPU `from` are used on p's CPU:
    /// their transfer by distance is charged to that CPU (nothing for its own lines).
    void pull_lines(const task_struct& p, int from, u64 lines);
    /// p reads `lines` lines of data written on CPU `from` when that core's traffic
    /// was `stamp`: charged to p's CPU if they move (cost_model::data_lines_cost());
    /// true if they did.
    bool pull_data_lines(const task_struct& p, int from, u64 stamp, u64 lines);
    /// One cache line's transfer from CPU `from` to CPU `to`, by distance (line_*; 0 on one CPU).
    sim_dur line_cost(int from, int to) const;
    /// The data traffic of `cpu`'s core so far, to stamp data written there.
    u64 data_stamp(int cpu) const;
    /// `bytes` of data pass through `cpu`'s core.
    void data_touch(int cpu, u64 bytes);

private:
    friend class kernel;
    /// set once by kernel's constructor (sys_ is built before the kernel's config): read on
    /// every burst of every task, so not a call into the kernel
    bool preempt_points_ = false;
    kernel& k_;
};

} // namespace schedlab
