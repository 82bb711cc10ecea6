// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A replayed task's wakee_flips at the trace's start, read from the trace.
 *
 * kernel: kernel/sched/fair.c record_wakee() and wake_wide(), 6.18 (gfunkmonk/linux-6.18.2
 * 062668f4d006): select_task_rq_fair() runs record_wakee(p) on `current` for every
 * WF_TTWU wakeup (halve its wakee_flips once a second, count a flip for a wakee other than
 * its last_wakee), then wake_wide(p), which skips wake_affine() when the smaller of the
 * waker's and the wakee's flips reaches sd_llc_size and the larger is at least sd_llc_size
 * times it. kernel/fork.c dup_task_struct() copies the whole task_struct, so a child starts
 * with its parent's flips, decay stamp and last_wakee (__sched_fork() leaves them).
 *
 * A task the trace does not show forked by a replayed task (a root) starts with flips no
 * tracepoint records. Every other count is a function of a root's: record_wakee() adds one
 * or halves, a fork copies, so each task's count is ((N + add) >> shift) + plus, N its
 * root's starting count (flips_form). At a root's wakeup of a task of its family (the
 * tasks it forked, and theirs), wake_wide() is then a function of N alone, and where the
 * wakee was placed tells it (its sched_wakeup's target_cpu; its next switch in where no
 * sched_wakeup is recorded; a balancer's move before it runs does not count): on the
 * waker's CPU (not its previous) it was not wide (a wide wakeup goes to
 * select_idle_sibling(p, prev, prev), and the waker's CPU runs the waker); on its previous
 * CPU while that CPU was busy it is taken as wide. On an idle previous CPU it tells
 * nothing: wake_affine_idle() returns an idle prev_cpu whether or not the wakeup was wide.
 *
 * model: a root's starting wakee_flips is the least N whose wake_wide() verdicts, with
 * record_wakee() run over the trace's placed wakings from N, agree with the most of the
 * root's first burst of wakeups of its family (from its first such wakeup to its next
 * block or exit): a wakeup on the waker's CPU counts for "not wide", one on a busy previous
 * CPU for "wide"; "both" and "other" count for neither. Inferred: that a wakeup on the
 * previous CPU was wide (wake_affine() could have chosen prev too; the placements at
 * perf bench messaging's wake-all, its main process's wakeup of its children newest first,
 * turn from the waker's CPU to the previous one at one wakee and stay there, which is
 * wake_wide()'s turn: docs/replay.md, "The wake-all's turn is wake_wide()"); that the
 * root's last_wakee at the start is none of the traced tasks; a decay stamp at its start
 * (as syscalls::set_wakee_flips()), and a jiffy of params.h's CONFIG_HZ 250 (the trace does
 * not give the traced kernel's). N = 0 unless the burst has wakeups of both kinds: placements
 * of one kind only (all on the waker's CPU, or all on a busy previous one) are explained as
 * well by N = 0, wake_affine() choosing that CPU each time, and it is the turn from one to
 * the other that wake_wide() makes and the loads do not (docs/replay.md, "Where replayed
 * wakeups land": prev's load at perf bench messaging's wake-all, computed from the trace).
 */
#include "sim/time.h"
#include "trace/wakeup_target.h"

#include <unordered_map>
#include <vector>

namespace schedlab {

/// A task's wakee_flips as a function of N, its root's count at the trace's start:
/// ((N + add) >> shift) + plus.
struct flips_form {
    u64 add = 0;
    u32 shift = 0;
    u64 plus = 0;
    bool constant = false; ///< halved past any N that matters: plus alone

    u64 at(u64 n) const { return constant ? plus : ((n + add) >> shift) + plus; }
    /// record_wakee(): a wakee other than the last.
    void flip() { ++plus; }
    /// record_wakee(): the once-a-second halving. floor((floor(x / 2^s) + b) / 2) =
    /// floor((x + b 2^s) / 2^(s+1)), so the form keeps its shape.
    void halve();
    bool operator==(const flips_form&) const = default;
};

/// One wakeup of a root's first burst of wakeups of its family.
struct flips_evidence {
    flips_form waker, wakee; ///< their flips at wake_wide() (the waker's after record_wakee())
    int cpu = 0;             ///< the waking's CPU in the trace (its sd_llc_size is wake_wide()'s)
    wakeup_target where = wakeup_target::other; ///< where the wakee was placed
    /// Its previous CPU was busy at the waking: running a task, or with a task placed on it
    /// that had not run yet (the trace's view of idle_cpu(); a wakeup queued on its wakelist
    /// whose sched_wakeup comes later is not seen).
    bool prev_busy = false;
};

struct flips_root {
    int pid = 0;
    std::vector<flips_evidence> evidence;
};

/// kernel: wake_wide()'s test on two counts (fair_select.cc wake_wide(), without patch sets).
bool flips_wide(u64 waker, u64 wakee, u64 llc_size);

/// The root's starting flips (the model in the file comment): `llc_size(cpu)` gives the
/// sd_llc_size of a traced CPU on the machine that stands for the traced one.
template <class LlcSize>
u32 infer_wakee_flips(const std::vector<flips_evidence>& ev, LlcSize llc_size)
{
    constexpr u32 max_flips = 1024;
    bool seen_affine = false, seen_wide = false;
    for (const flips_evidence& e : ev) {
        seen_affine = seen_affine || e.where == wakeup_target::waker;
        seen_wide = seen_wide || (e.where == wakeup_target::prev && e.prev_busy);
    }
    if (!seen_affine || !seen_wide)
        return 0; // one kind of placement: wake_affine() alone explains it as well
    u32 best = 0;
    long best_score = -1;
    for (u32 n = 0; n <= max_flips; ++n) {
        long score = 0;
        for (const flips_evidence& e : ev) {
            const bool wide =
                flips_wide(e.waker.at(n), e.wakee.at(n), static_cast<u64>(llc_size(e.cpu)));
            score += (e.where == wakeup_target::waker && !wide) ||
                     (e.where == wakeup_target::prev && e.prev_busy && wide);
        }
        if (score > best_score) {
            best_score = score;
            best = n;
        }
    }
    return best;
}

/// The flips forms of the selected tasks, from the trace's events in order (the replay
/// builder feeds it), and each root's evidence.
class flips_reader {
public:
    /// A selected task's first event at `ts` (its fork, or its first event in the window).
    void root(int pid, sim_time ts);
    /// A selected task forked a selected one: the child's count is the parent's.
    void fork(int parent, int child);
    /// A placed wakeup of `wakee` (a waking that ran select_task_rq_fair()) while selected
    /// task `waker` was current, in any context.
    void record_wakee(int waker, int wakee, sim_time ts);
    /// After record_wakee(): the wakeup was in `waker`'s process context, recorded on
    /// `cpu`, of a selected task whose previous CPU was `prev_cpu`.
    void placed(int waker, int wakee, int cpu, int prev_cpu);
    /// `pid` was placed on `cpu` (its sched_wakeup's target_cpu), or, the first event after
    /// its waking where no sched_wakeup is recorded, switched in on `cpu`.
    void placed_on(int pid, int cpu);
    /// `pid` switched out in a sleep state, or exited.
    void blocked(int pid);
    /// Any task: `next` switched in on `cpu` (0: idle).
    void cpu_switched(int cpu, int next);
    /// Any task: `pid` was placed on `cpu` (sched_wakeup), to run there.
    void cpu_woken(int pid, int cpu);
    /// The roots with evidence, in the order their bursts began.
    std::vector<flips_root> finish();

private:
    struct state {
        flips_form f;
        u64 decay_jiffy = 0;
        int last_wakee = 0; ///< 0: none traced
        int root = 0;       ///< the pid whose N the form is of
    };
    struct pending {
        flips_evidence e;
        int root = 0;
        int prev_cpu = 0;
    };
    bool busy(int cpu) const
    {
        const auto c = static_cast<std::size_t>(cpu);
        return (c < curr_.size() && curr_[c] != 0) || (c < queued_.size() && queued_[c] > 0);
    }

    std::unordered_map<int, state> s_;
    std::vector<int> curr_;                    ///< per CPU: the task running, 0 idle
    std::vector<int> queued_;                  ///< per CPU: tasks placed there, not run yet
    std::unordered_map<int, int> queued_on_;   ///< by pid: the CPU it was placed on, not run yet
    std::unordered_map<int, pending> pending_; ///< by wakee: placed, not run yet
    /// Per root: its burst's evidence index in out_, or -1 once the burst ended.
    std::unordered_map<int, long> burst_;
    std::vector<flips_root> out_;
};

} // namespace schedlab
