// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Wakeup targets: where a woken task ran next, against the two CPUs the kernel's
 * placement weighs. kernel: kernel/sched/fair.c select_task_rq_fair(), 6.6-6.18:
 * wake_affine() chooses between this_cpu (the CPU running try_to_wake_up(): the
 * waker's, or an interrupt's) and prev_cpu (task_cpu(p)), and select_idle_sibling()
 * may then take another CPU of that LLC. Both CPUs are in the sched_waking event
 * (include/trace/events/sched.h): it is emitted from the waking context (the
 * CPU the event is recorded on) and its target_cpu is task_cpu(p), the wakee's
 * previous CPU; the CPU it ran on is its next sched_switch in. So the classes
 * are read off a trace as `perf sched timehist -w` users read its rows (the
 * waking's CPU column, the wakee's previous CPU, the CPU it next ran on):
 *
 *   waker  ran on the waking CPU, which is not its previous CPU
 *   prev   ran on its previous CPU; the waking ran on another CPU
 *   both   ran on its previous CPU, which is also where the waking ran (it
 *          belongs to both of the first two classes, so it is its own)
 *   other  ran on neither
 *
 * Each placed wakeup is also told by its waker: a traced task in process
 * context, or not (an interrupt, the idle task, a task the trace or the replay
 * does not select). Not placed at all: a waking of a task that was running or
 * runnable (try_to_wake_up() then takes ttwu_runnable(): no select_task_rq()),
 * and a wakee that had not run again when the trace or run ended.
 *
 * wakeup_target_tracker reads the classes off sched_switch and sched_waking
 * alone; it is the one code behind the trace's and the replay's columns of
 * `schedlab replay`'s table (metrics/sched_summary.h) and `schedlab latency
 * --wakeups`. A waking of a task that is on a CPU is decided at the task's
 * switch out: out in a sleep state, the waking ended that block (the wakee was
 * in __schedule(): try_to_wake_up() waits for p->on_cpu, then places it) and
 * its next switch in is where it went; out runnable, or exiting, it was not
 * placed. sched_wakeup_new (a fork's placement) is not a wakeup target.
 */
#include "sim/time.h"

#include <array>
#include <vector>

namespace schedlab {

enum class wakeup_target : u8 { waker, prev, both, other };
inline constexpr int nr_wakeup_targets = 4;

/// The class of a wakeup that was recorded on `waking_cpu`, of a task whose previous CPU was
/// `prev_cpu`, which next ran on `ran_cpu`.
constexpr wakeup_target classify_wakeup_target(int waking_cpu, int prev_cpu, int ran_cpu)
{
    if (ran_cpu == prev_cpu)
        return waking_cpu == prev_cpu ? wakeup_target::both : wakeup_target::prev;
    return ran_cpu == waking_cpu ? wakeup_target::waker : wakeup_target::other;
}

/// Who ran the waking: a traced (selected) task in process context, or anything else.
enum class waker_kind : u8 { task, other };

struct wakeup_target_counts {
    /// [waker_kind][wakeup_target]: the placed wakeups
    std::array<std::array<u64, nr_wakeup_targets>, 2> placed{};
    u64 not_placed = 0; ///< the wakee was running or runnable at the waking (ttwu_runnable())
    u64 not_run = 0;    ///< placed, but the wakee had not run again at the end

    void add(waker_kind k, wakeup_target t) { ++placed[static_cast<int>(k)][static_cast<int>(t)]; }
    /// Placed wakeups of class t, by either kind of waker.
    u64 of(wakeup_target t) const
    {
        return placed[0][static_cast<int>(t)] + placed[1][static_cast<int>(t)];
    }
    u64 placed_by(waker_kind k) const
    {
        u64 n = 0;
        for (const u64 c : placed[static_cast<int>(k)])
            n += c;
        return n;
    }
    u64 total() const
    {
        return placed_by(waker_kind::task) + placed_by(waker_kind::other) + not_placed + not_run;
    }
    bool operator==(const wakeup_target_counts&) const = default;
};

/// Wakeup targets from the scheduler tracepoints, as they come (see the file comment).
class wakeup_target_tracker {
public:
    explicit wakeup_target_tracker(int nr_cpus) : curr_(static_cast<std::size_t>(nr_cpus), 0) {}

    /// sched_waking of `pid` recorded on `cpu`, its target_cpu `prev_cpu`; `task_ctx`: in
    /// process context (not a hardirq, softirq or NMI).
    void waking(int cpu, int pid, int prev_cpu, bool task_ctx);
    /// sched_switch on `cpu` from `prev_pid` (0: idle) in a runnable state (R, R+) or not,
    /// `prev_exited` (X, Z), to `next_pid`.
    void switched(int cpu, int prev_pid, bool prev_runnable, bool prev_exited, int next_pid);
    /// The counts so far, the wakees that have not run yet counted as not run (the tracker
    /// keeps them open: it may be asked again).
    wakeup_target_counts counts() const;

private:
    /// Per pid (6 bytes: a trace's pids run to 4M).
    struct wake_track {
        enum state_t : u8 {
            asleep,        ///< blocked, or not seen yet
            running,       ///< on a CPU
            running_woken, ///< on a CPU, and woken there: decided at its switch out
            runnable,      ///< switched out runnable (preempted): a waking finds it queued
            woken,         ///< woken and placed, not yet run: classed at its switch in
        };
        s16 waking_cpu = -1; ///< woken, running_woken: the waking's CPU
        s16 prev_cpu = -1;   ///< ... and its previous CPU (sched_waking's target_cpu)
        state_t state = asleep;
        waker_kind by = waker_kind::other;
    };
    wake_track& track(int pid);
    void placed(const wake_track& w, int cpu)
    {
        c_.add(w.by, classify_wakeup_target(w.waking_cpu, w.prev_cpu, cpu));
    }

    wakeup_target_counts c_;
    std::vector<int> curr_; ///< per CPU: the task running, 0 idle (or not seen yet)
    std::vector<wake_track> wake_;
};

/// The class's key in JSON (--json) output.
constexpr const char* wakeup_target_name(wakeup_target t)
{
    switch (t) {
    case wakeup_target::waker:
        return "waker_cpu";
    case wakeup_target::prev:
        return "prev_cpu";
    case wakeup_target::both:
        return "prev_is_waker_cpu";
    case wakeup_target::other:
        return "other_cpu";
    }
    return "?";
}

} // namespace schedlab
