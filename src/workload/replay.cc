// SPDX-License-Identifier: GPL-2.0-only
#include "workload/replay.h"

#include "sched/params.h"
#include "sched/syscalls.h"
#include "sim/bug.h"
#include "sim/config_error.h"
#include "trace/progress.h"
#include "workload/options.h"
#include "workload/replay_flips.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <iostream>
#include <map>
#include <regex>
#include <unordered_map>

namespace schedlab {

bool kernel_thread_comm(std::string_view comm)
{
    // Kernel threads are named by kthread_create() callers; these are the ones a scheduler
    // trace shows (kernel/workqueue.c, kernel/softirq.c, kernel/rcu, kernel/stop_machine.c,
    // kernel/cpu.c, mm/, fs/jbd2, kernel/irq/manage.c, ...).
    static const std::string_view prefixes[] = {
        "swapper/",     "kworker/",     "ksoftirqd/", "rcu_",         "rcuog/",          "rcuop/",
        "rcuos/",       "migration/",   "cpuhp/",     "idle_inject/", "watchdog/",       "irq/",
        "jbd2/",        "kcompactd",    "kswapd",     "khugepaged",   "kthreadd",        "kauditd",
        "khungtaskd",   "oom_reaper",   "kdevtmpfs",  "kblockd",      "writeback",       "ksmd",
        "kintegrityd",  "pr/",          "card",       "scsi_",        "ext4-rsv-conver", "xfs",
        "btrfs",        "hwrng",        "kstrp",      "zswap",        "ipv6_addrconf",   "netns",
        "mm_percpu_wq", "inet_frag_wq", "tpm_dev_wq", "md",           "edac-poller",
    };
    for (const std::string_view p : prefixes)
        if (comm.starts_with(p))
            return true;
    return false;
}

int replay_nice(const replay_task& t)
{
    // include/linux/sched/prio.h: a fair task's prio is NICE_TO_PRIO(nice) = 120 + nice,
    // in [MAX_RT_PRIO, MAX_PRIO) = [100, 140).
    return t.prio >= 100 && t.prio < 140 ? t.prio - 120 : 0;
}

replay_sched replay_sched_of(const replay_task& t, const replay_options& o)
{
    // include/linux/sched/prio.h and kernel/sched/core.c normal_prio(): an RT task's prio is
    // MAX_RT_PRIO - 1 - rt_priority (rt_priority 1..99: prio 98..0), a fair task's
    // NICE_TO_PRIO(nice) = 120 + nice, a deadline task's MAX_DL_PRIO - 1 = -1.
    replay_sched r;
    if (t.prio >= 0 && t.prio < MAX_RT_PRIO - 1) {
        r.policy = o.rt_rr ? SCHED_RR : SCHED_FIFO;
        r.rt_priority = MAX_RT_PRIO - 1 - t.prio;
    } else {
        r.nice = replay_nice(t);
    }
    return r;
}

namespace {

void put_varint(std::vector<u8>& out, u64 v)
{
    while (v >= 0x80) {
        out.push_back(static_cast<u8>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<u8>(v));
}

u64 get_varint(const std::vector<u8>& in, std::size_t& at)
{
    u64 v = 0;
    for (int shift = 0;; shift += 7) {
        SIM_BUG_ON(at >= in.size() || shift > 63, "replay step {}: a truncated varint", at);
        const u8 b = in[at++];
        v |= static_cast<u64>(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

u64 zigzag(s64 v)
{
    return (static_cast<u64>(v) << 1) ^ static_cast<u64>(v >> 63);
}
s64 unzigzag(u64 v)
{
    return static_cast<s64>(v >> 1) ^ -static_cast<s64>(v & 1);
}

} // namespace

// A step's first byte: its kind in the low 4 bits, a wake's flags (replay_step::flag_t) in
// the high 4.
constexpr u8 step_kind_mask = 0x0f;
constexpr int step_flags_shift = 4;

void replay_steps::push(const replay_step& s)
{
    SIM_BUG_ON(s.kind > step_kind_mask || s.flags >> (8 - step_flags_shift) ||
                   (s.flags && s.kind != replay_step::wake),
               "replay step: kind {} with flags {}", static_cast<int>(s.kind),
               static_cast<int>(s.flags));
    code_.push_back(static_cast<u8>(s.kind | s.flags << step_flags_shift));
    switch (s.kind) {
    case replay_step::run:
    case replay_step::sleep:
    case replay_step::sleep_until:
        put_varint(code_, zigzag(s.ns));
        break;
    case replay_step::wait:
        put_varint(code_, zigzag(s.pid));
        put_varint(code_, s.k);
        break;
    case replay_step::wake:
        put_varint(code_, zigzag(s.pid));
        put_varint(code_, s.k);
        break;
    case replay_step::fork:
    case replay_step::wake_absent:
        put_varint(code_, zigzag(s.pid));
        break;
    case replay_step::exit:
    case replay_step::pending:
        break;
    }
    ++n_;
}

bool replay_steps::cursor::next(replay_step& s)
{
    const std::vector<u8>& in = s_->code_;
    if (at_ >= in.size())
        return false;
    s = {};
    s.kind = static_cast<replay_step::kind_t>(in[at_] & step_kind_mask);
    s.flags = static_cast<u8>(in[at_++] >> step_flags_shift);
    switch (s.kind) {
    case replay_step::run:
    case replay_step::sleep:
    case replay_step::sleep_until:
        s.ns = unzigzag(get_varint(in, at_));
        break;
    case replay_step::wait:
        s.pid = static_cast<int>(unzigzag(get_varint(in, at_)));
        s.k = get_varint(in, at_);
        break;
    case replay_step::wake:
        s.pid = static_cast<int>(unzigzag(get_varint(in, at_)));
        s.k = get_varint(in, at_);
        break;
    case replay_step::fork:
    case replay_step::wake_absent:
        s.pid = static_cast<int>(unzigzag(get_varint(in, at_)));
        break;
    case replay_step::exit:
    case replay_step::pending:
        break;
    default:
        SIM_BUG_ON(true, "replay step at byte {}: kind {} is not a step", at_ - 1,
                   static_cast<int>(s.kind));
    }
    return true;
}

std::vector<replay_step> replay_steps::decode() const
{
    std::vector<replay_step> v;
    v.reserve(n_);
    cursor c(*this);
    replay_step s;
    while (c.next(s))
        v.push_back(s);
    return v;
}

namespace {

const std::string no_comm;

trace_task_state summary_state(std::string_view s)
{
    if (s.empty() || s.front() == 'R' || s.front() == '?')
        return trace_task_state::R;
    if (s.front() == 'S')
        return trace_task_state::S;
    if (s.front() == 'X' || s.front() == 'Z')
        return trace_task_state::X;
    return trace_task_state::D;
}

bool is_block_state(std::string_view s)
{
    return !s.empty() && s.front() != 'R' && s.front() != '?';
}
bool is_dead_state(std::string_view s)
{
    return !s.empty() && (s.front() == 'X' || s.front() == 'Z');
}

/// Pass 1: every pid's comms and first and last events.
struct pid_info {
    std::vector<std::string> comms;
    sim_time first = -1, last = -1;
    int first_cpu = 0;
};

void note(std::unordered_map<int, pid_info>& m, int pid, std::string_view comm, sim_time ts,
          int cpu)
{
    if (pid <= 0)
        return;
    pid_info& p = m[pid];
    if (p.first < 0) {
        p.first = ts;
        p.first_cpu = cpu;
    }
    p.last = ts;
    if (!comm.empty() && std::find(p.comms.begin(), p.comms.end(), comm) == p.comms.end())
        p.comms.emplace_back(comm);
}

/// Pass 2's per-task state.
struct task_track {
    int idx = -1;               ///< into replay_trace::tasks
    sim_time on_cpu_since = -1; ///< start of the CPU time not yet accounted
    s64 pending = 0;            ///< CPU time not yet emitted as a run step
    bool blocked = false;
    sim_time block_ts = 0;
    std::size_t block_step = 0; ///< the pending step
    bool exiting = false, exited = false;
    /// Dependency wakes received, per waker pid: the target of the waker->task counter.
    std::unordered_map<int, u64> wakes;
    /// Dependency wakes received from every waker: the index, in the trace's order, of the
    /// next one (its wake step's k).
    u64 dep_wakes = 0;
    /// The steps from the first that may still change (a pending block, a tentative wake)
    /// on: step `base` is open.front(). The ones before are final, in the task's steps.
    std::deque<replay_step> open;
    std::size_t base = 0;
    /// This task's tentative wake steps: an early waking of another task (see `early`), or a
    /// wake that ended another task's block while that task's burst may still reply to it
    /// (the other's `req_waker`).
    std::vector<std::size_t> tentative;
    /// The request of this task's current burst: the dependency wake of it that ended its
    /// last block, step `req_step` of task `req_waker`, held tentative there until this
    /// task's first dependency wake of req_waker (the reply: both steps marked) or its next
    /// block or exit (no reply). -1: none open.
    int req_waker = -1;
    std::size_t req_step = 0;
    /// The selected task that preempted this one (its switch out in R with that task next),
    /// until this task runs again; -1: none.
    int preempted_by = -1;
    std::size_t size() const { return base + open.size(); }
    replay_step& at(std::size_t i) { return open[i - base]; }
    /// A waking while the task was still on its CPU, after its last own event: it may be
    /// in __schedule() already, and the waking then ends the block its switch out records.
    struct {
        sim_time ts = -1; ///< -1: none
        ftrace_context ctx = ftrace_context::unknown;
        int waker = -1; ///< a selected waker: its tentative wake step follows
        std::size_t waker_step = 0;
        /// The waker's burst was started by this task's wake of it (this task's step
        /// `req_step`, still tentative): if the early waking ends a block, it is the reply.
        bool reply = false;
        std::size_t req_step = 0;
    } early;
};

class builder {
public:
    builder(replay_trace& t, const std::unordered_map<int, pid_info>& info,
            const std::unordered_map<int, bool>& selected, sim_dur idle_switch_delay,
            bool softirq_wakes)
        : t_(t), info_(info), selected_(selected), summary_(t.nr_cpus),
          idle_switch_delay_(idle_switch_delay), softirq_wakes_(softirq_wakes)
    {
    }

    void event(const ftrace_event& e);
    void waking(const ftrace_event& e, bool in_window, sim_time rel);
    void finish();

private:
    bool sel(int pid) const
    {
        const auto it = selected_.find(pid);
        return it != selected_.end() && it->second;
    }
    task_track& track(int pid, sim_time ts, bool forked);
    void flush(task_track& k, sim_time ts);
    void push(task_track& k, replay_step s)
    {
        k.open.push_back(s);
        commit(k);
    }
    /// Moves k's steps that can no longer change into its task's compact steps (all of them
    /// if `all`): the builder holds only the open ones, not the whole behaviour.
    void commit(task_track& k, bool all = false);
    void resolve(task_track& k, replay_step s, u64* counter);
    void cancel_early(task_track& k);
    void settle_tentative(task_track& k);
    /// Step `at` of w, a wake, is no longer held: it may be committed.
    void untentative(task_track& w, std::size_t at);
    /// k's burst ended (a block, an exit, the trace's end) with its request unanswered.
    void close_request(task_track& k);
    /// The wake at step `reply` of `replier` answers the request at step `req` of
    /// `requester` (requester's wake of replier, which started the replier's burst).
    void mark_reply(task_track& requester, std::size_t req, task_track& replier, std::size_t reply);
    /// k blocks with its request unanswered: a reply the trace implies (see the definition).
    void implied_reply(task_track& k, sim_time ts);
    int pid_of(const task_track& k) const { return t_.tasks[static_cast<std::size_t>(k.idx)].pid; }
    void resolve_early(task_track& k, sim_time ts);
    void summary_switch(const ftrace_event& e, sim_time ts);
    /// The task's prio from an event's fields (after the event made its track).
    void note_prio(int pid, int prio);
    /// The switch at ts; the trace's table (summary_) takes it at summary_ts.
    void switched(const ftrace_event& e, sim_time ts, sim_time summary_ts);
    /// A selected task's waking (its own, or an interrupt's while it ran) of a task not
    /// selected: a wake_absent step of the waker, unless the kernel would not have called
    /// select_task_rq_fair() for that wakee.
    void absent_waking(const ftrace_event& e);

    replay_trace& t_;
    const std::unordered_map<int, pid_info>& info_;
    const std::unordered_map<int, bool>& selected_;
    std::unordered_map<int, task_track> tracks_;
    sched_summary summary_;
    sim_dur idle_switch_delay_; ///< -1: none measured (inferred switches at their latest)
    bool softirq_wakes_;        ///< --softirq-wakes: a softirq waking is the current task's
    bool created_ = false;      ///< the last track() call created the task
    std::unordered_map<int, sim_time> last_wakeup_; ///< pid -> its last sched_waking/wakeup(_new)
    /// Per (requester, replier) pid: the requests answered by a traced reply, and those that
    /// were not while the requester was not preempted by the replier (implied_reply).
    std::map<std::pair<int, int>, std::pair<u64, u64>> answered_;
    /// The selected tasks' wakee_flips as forms of their roots' (replay_flips.h).
    flips_reader flips_;
};

task_track& builder::track(int pid, sim_time ts, bool forked)
{
    task_track& k = tracks_[pid];
    created_ = k.idx < 0;
    if (!created_)
        return k;
    k.idx = static_cast<int>(t_.tasks.size());
    replay_task rt;
    rt.pid = pid;
    const pid_info& pi = info_.at(pid);
    rt.comm = pi.comms.empty() ? fmt::format("pid{}", pid) : pi.comms.back();
    rt.first_cpu = pi.first_cpu;
    // A task the trace did not see forked existed before the window: it starts at 0.
    rt.start = forked ? std::max<sim_time>(ts - t_.t0, 0) : 0;
    flips_.root(pid, t_.t0 + rt.start);
    t_.tasks.push_back(std::move(rt));
    return k;
}

void builder::flush(task_track& k, sim_time ts)
{
    if (k.on_cpu_since >= 0) {
        k.pending += ts - std::max(k.on_cpu_since, t_.t0);
        k.on_cpu_since = ts;
    }
    if (k.pending > 0)
        push(k, {replay_step::run, k.pending, -1, 0});
    k.pending = 0;
}

void builder::commit(task_track& k, bool all)
{
    std::size_t hold = k.size();
    if (!all) {
        if (k.blocked)
            hold = std::min(hold, k.block_step);
        for (const std::size_t i : k.tentative)
            hold = std::min(hold, i);
    }
    replay_steps& steps = t_.tasks[static_cast<std::size_t>(k.idx)].steps;
    for (; k.base < hold; ++k.base) {
        steps.push(k.open.front());
        k.open.pop_front();
    }
}

void builder::untentative(task_track& w, std::size_t at)
{
    const auto it = std::find(w.tentative.begin(), w.tentative.end(), at);
    SIM_BUG_ON(it == w.tentative.end(), "task {}: no tentative wake step {}",
               t_.tasks[static_cast<std::size_t>(w.idx)].pid, at);
    w.tentative.erase(it);
    commit(w);
}

/// The waker's tentative wake step for k's early waking is decided: it may be committed.
void builder::settle_tentative(task_track& k)
{
    untentative(tracks_.at(k.early.waker), k.early.waker_step);
}

void builder::close_request(task_track& k)
{
    if (k.req_waker < 0)
        return;
    const int w = k.req_waker;
    k.req_waker = -1;
    task_track& x = tracks_.at(w);
    // Not answered, where the trace could have shown a reply (implied_reply)
    if (!(x.at(k.req_step).flags & replay_step::request) && x.preempted_by != pid_of(k))
        ++answered_[{w, pid_of(k)}].second;
    untentative(x, k.req_step);
}

/*
 * model: a reply the trace implies. try_to_wake_up() records sched_waking only for a task in
 * a sleep state, so a reply to a requester that its replier preempted (on the requester's CPU,
 * the wakeup preemption of the request) wakes nothing and leaves no event: the requester's
 * later wait finds the reply already there (schbench, masoncl/schbench 513e18bbb8f0 and
 * src/workload/schbench.cc: a worker's msg_and_wait() marks its futex BLOCKED, fposts the
 * message thread and fwait()s; the message thread's fpost() of it turns the word to RUNNING
 * and calls futex_wake() with no waiter, so the worker's fwait() returns at once; a pipe
 * ping-pong's reply to a preempted writer the same). The trace shows the case:
 * X's dependency wake of T ended T's block (the request), X was switched out runnable with T
 * next on its CPU, and T blocked again before X ran, with no wake of X in that burst. When T
 * answered most of X's requests the trace can show (those with X not preempted by T: more
 * answered by a traced reply than not, so far in the trace), T's burst gets a wake of X at its
 * end (the reply, marked as one) and X a dependency wait for it where it was preempted. The
 * replay then keeps the trace's case (the wait finds its wake) where T preempts X again and
 * makes X block and T wake it where they run apart, as the program would. A program that does
 * not answer (perf bench messaging's receivers) has fewer traced replies than unanswered
 * requests, and gets none.
 */
void builder::implied_reply(task_track& k, sim_time ts)
{
    if (k.req_waker < 0)
        return;
    task_track& x = tracks_.at(k.req_waker);
    const int t_pid = pid_of(k);
    if (x.preempted_by != t_pid || x.blocked || x.exited || x.on_cpu_since >= 0)
        return;
    const auto [replied, unanswered] = answered_[{k.req_waker, t_pid}];
    if (replied <= unanswered)
        return;
    flush(k, ts);
    // The reply, marked as it is pushed (the step may be committed at once).
    replay_step reply{replay_step::wake, 0, k.req_waker, ++x.dep_wakes};
    reply.flags |= replay_step::reply;
    push(k, reply);
    x.at(k.req_step).flags |= replay_step::request;
    ++t_.causes.replies;
    flush(x, ts);
    push(x, {replay_step::wait, 0, t_pid, ++x.wakes[t_pid]});
    ++t_.causes.implied_replies;
    close_request(k); // x.preempted_by is still k's: not counted as unanswered
    x.preempted_by = -1;
}

/*
 * model: a request-reply pair, read from the trace's order alone: T blocked, X's
 * sched_waking of T in X's context ended that block (X's wake step: the request), and T's
 * first dependency wake of X after it, before T blocked or exited again (T's wake step: the
 * reply). A waking recorded before X's switch out counts once that switch out makes it end
 * a block (resolve_early). Not a pair: T's wakes of other tasks in that burst, a wake of X
 * after T blocked again, a block ended by a timer, an interrupt or a task not selected. The
 * request step stays tentative (uncommitted) in X's steps until T's burst decides.
 */
void builder::mark_reply(task_track& requester, std::size_t req, task_track& replier,
                         std::size_t reply)
{
    requester.at(req).flags |= replay_step::request;
    replier.at(reply).flags |= replay_step::reply;
    ++t_.causes.replies;
    ++answered_[{pid_of(requester), pid_of(replier)}].first; // traced: implied_reply()'s count
}

void builder::cancel_early(task_track& k)
{
    if (k.early.ts < 0)
        return;
    if (k.early.waker >= 0) { // the waker's tentative wake step becomes nothing
        tracks_.at(k.early.waker).at(k.early.waker_step) = {replay_step::run, 0, -1, 0};
        settle_tentative(k);
    }
    if (k.early.reply) // k's request to the waker: no reply came
        untentative(k, k.early.req_step);
    k.early = {};
}

void builder::resolve_early(task_track& k, sim_time ts)
{
    ++t_.causes.early;
    --t_.causes.non_blocking_wakings;
    if (k.early.waker >= 0) {
        const int waker = k.early.waker;
        flips_.record_wakee(waker, pid_of(k), ts); // placed once the switch out is done
        task_track& w = tracks_.at(waker);
        w.at(k.early.waker_step).k = ++k.dep_wakes;
        if (k.early.reply) { // the waker answered k's request
            mark_reply(k, k.early.req_step, w, k.early.waker_step);
            untentative(k, k.early.req_step);
        }
        // The waker's wake step stays tentative: the request of k's burst from here.
        k.req_waker = waker;
        k.req_step = k.early.waker_step;
        resolve(k, {replay_step::wait, 0, waker, ++k.wakes[waker]}, &t_.causes.dependency);
    } else if (k.early.ctx == ftrace_context::hardirq) {
        resolve(k, {replay_step::sleep, 0, -1, 0}, &t_.causes.timer);
    } else {
        resolve(k, {replay_step::sleep_until, std::max<sim_time>(ts - t_.t0, 0), -1, 0},
                &t_.causes.external);
    }
    k.early = {};
}

void builder::resolve(task_track& k, replay_step s, u64* counter)
{
    k.at(k.block_step) = s;
    k.blocked = false;
    ++*counter;
    commit(k);
}

void builder::summary_switch(const ftrace_event& e, sim_time ts)
{
    const int prev = sel(e.pid) ? e.pid : 0, next = sel(e.pid2) ? e.pid2 : 0;
    if (prev == 0 && next == 0)
        return;
    trace_sched_switch s{ts,    e.cpu, prev,    &no_comm, summary_state(e.prev_state),
                         false, next,  &no_comm};
    summary_.sched_switch(s);
}

void builder::switched(const ftrace_event& e, sim_time ts, sim_time summary_ts)
{
    const sim_time rel = ts - t_.t0;
    if (summary_ts <= t_.t1)
        summary_switch(e, summary_ts - t_.t0);
    if (sel(e.pid)) {
        task_track& k = track(e.pid, ts, false);
        if (k.on_cpu_since >= 0) {
            k.pending += ts - std::max(k.on_cpu_since, t_.t0);
            k.on_cpu_since = -1;
        }
        if (k.exiting || is_dead_state(e.prev_state) || is_block_state(e.prev_state))
            flips_.blocked(e.pid);
        if (k.exiting || is_dead_state(e.prev_state)) {
            cancel_early(k);
            close_request(k);
            if (!k.exited) {
                flush(k, ts);
                push(k, {replay_step::exit, 0, -1, 0});
                k.exited = true;
            }
        } else if (is_block_state(e.prev_state) && !k.blocked) {
            implied_reply(k, ts);
            close_request(k); // the burst ended: a wake of its requester after is no reply
            flush(k, ts);
            k.blocked = true;
            k.block_ts = ts;
            k.block_step = k.size();
            push(k, {replay_step::pending, 0, -1, 0});
            if (k.early.ts >= 0)
                resolve_early(k, ts);
        } else {
            cancel_early(k);
            if (!is_block_state(e.prev_state))
                k.preempted_by = sel(e.pid2) ? e.pid2 : -1;
        }
    }
    if (sel(e.pid2)) {
        task_track& k = track(e.pid2, ts, false);
        k.preempted_by = -1;
        flips_.placed_on(e.pid2, e.cpu);
        const bool first_seen = created_;
        if (k.blocked) {
            // Ran again with no waking recorded: a gap in the trace. The arrival is
            // the time it ran.
            resolve(k, {replay_step::sleep_until, std::max<sim_time>(rel, 0), -1, 0},
                    &t_.causes.unknown);
        }
        // CPU time is counted from the switch (an inferred one: from its estimate).
        k.on_cpu_since = ts;
        // First seen switched in, with no waking of it in the window: it was runnable when
        // the window began (woken, or preempted, before it; a waking is recorded whatever
        // wakes the task), so it replays runnable from the start, as it was.
        t_.before_window.runnable += first_seen;
    }
}

/// True for the comm of a kernel thread bound to one CPU (kworker/N:M, ksoftirqd/N, ...): the
/// kernel calls no select_task_rq() to wake one (nr_cpus_allowed is 1).
bool per_cpu_kthread_comm(std::string_view comm)
{
    // kernel/workqueue.c names a per-CPU pool's worker kworker/CPU:ID (an unbound one
    // kworker/uPOOL:ID); kernel/softirq.c ksoftirqd/N, kernel/stop_machine.c migration/N,
    // kernel/cpu.c cpuhp/N, drivers/powercap idle_inject/N, kernel/rcu rcuc/N.
    if (comm.starts_with("kworker/"))
        return comm.size() > 8 && comm[8] >= '0' && comm[8] <= '9';
    static const std::string_view prefixes[] = {"ksoftirqd/", "migration/", "cpuhp/",
                                                "idle_inject/", "rcuc/", "watchdog/"};
    for (const std::string_view p : prefixes)
        if (comm.starts_with(p))
            return true;
    return false;
}

void builder::absent_waking(const ftrace_event& e)
{
    if (e.ts > t_.t1)
        return;
    // kernel: select_task_rq() calls the class's select_task_rq only for a task allowed on
    // more than one CPU; record_wakee() is in the fair class's (a prio of 100-139). A wakee
    // without a prio field counts as fair.
    const bool fair = e.prio == ftrace_no_prio || (e.prio >= 100 && e.prio < 140);
    if (!fair || per_cpu_kthread_comm(e.comm)) {
        ++t_.causes.absent_wakes_skipped;
        return;
    }
    task_track& w = track(e.curr_pid, e.ts, false);
    if (w.exited)
        return;
    flush(w, e.ts);
    push(w, {replay_step::wake_absent, 0, e.pid, 0});
    flips_.record_wakee(e.curr_pid, e.pid, e.ts);
    ++t_.causes.absent_wakes;
}

void builder::note_prio(int pid, int prio)
{
    if (prio == ftrace_no_prio || !sel(pid))
        return;
    const auto it = tracks_.find(pid);
    if (it == tracks_.end() || it->second.idx < 0)
        return;
    replay_task& rt = t_.tasks[static_cast<std::size_t>(it->second.idx)];
    if (rt.prio == ftrace_no_prio)
        rt.prio = prio;
    else if (rt.prio != prio)
        rt.prio_changed = true;
}

/*
 * A sched_waking of a task: its summary line, and what the waking means for the task's
 * behaviour (the end of a block: a timer, a dependency on the waker, an external arrival; or a
 * waking of a task not blocked). Part of event().
 */
void builder::waking(const ftrace_event& e, bool in_window, sim_time rel)
{
    ++t_.sched_waking_events;
    last_wakeup_[e.pid] = e.ts;
    if (!sel(e.pid)) {
        if (e.curr_pid > 0 && e.curr_pid != e.pid && sel(e.curr_pid))
            absent_waking(e);
        return;
    }
    // In the task's context; with --softirq-wakes also a softirq's while it is current
    // (replay_options::softirq_wakes).
    const bool task_ctx =
        e.in_task_context() || (softirq_wakes_ && e.ctx == ftrace_context::softirq);
    if (in_window) {
        // The summary tells process context from an interrupt (softirq, NMI: as hardirq).
        const trace_irq_ctx ctx = task_ctx ? trace_irq_ctx::task : trace_irq_ctx::hardirq;
        summary_.sched_waking({rel, e.cpu, e.pid, &no_comm, e.target_cpu, 120, ctx});
    }
    task_track& k = track(e.pid, e.ts, false);
    const bool first_seen = created_;
    note_prio(e.pid, e.prio);
    if (!k.blocked && k.size() == 0 && k.on_cpu_since < 0 && !k.exited) {
        // First seen being woken: it was asleep since before the window.
        t_.before_window.asleep += first_seen;
        k.blocked = true;
        k.block_ts = std::max(e.ts, t_.t0);
        k.block_step = 0;
        push(k, {replay_step::pending, 0, -1, 0});
    }
    const bool by_task = task_ctx && e.curr_pid != 0 && e.curr_pid != e.pid && sel(e.curr_pid);
    if (!k.blocked) {
        ++t_.causes.non_blocking_wakings;
        if (k.on_cpu_since >= 0 && !k.exited && e.curr_pid != e.pid) {
            cancel_early(k);
            k.early.ts = e.ts;
            k.early.ctx = e.ctx;
            if (by_task) {
                task_track& w = track(e.curr_pid, e.ts, false);
                flush(w, e.ts);
                k.early.waker = e.curr_pid;
                k.early.waker_step = w.size();
                w.tentative.push_back(w.size());
                push(w, {replay_step::wake, 0, e.pid, 0});
                if (w.req_waker == e.pid) {
                    // w's first wake of the task whose wake started w's burst: a reply
                    // if it ends a block; k's request step stays held until then.
                    k.early.reply = true;
                    k.early.req_step = w.req_step;
                    w.req_waker = -1;
                }
            }
        }
        return;
    }
    // A placed wakeup: select_task_rq_fair()'s record_wakee() on the current task, whatever
    // the context.
    if (e.curr_pid > 0 && e.curr_pid != e.pid && sel(e.curr_pid)) {
        flips_.record_wakee(e.curr_pid, e.pid, e.ts);
        if (by_task)
            flips_.placed(e.curr_pid, e.pid, e.cpu, e.target_cpu);
    }
    if (e.ctx == ftrace_context::hardirq) {
        resolve(k, {replay_step::sleep, e.ts - k.block_ts, -1, 0}, &t_.causes.timer);
    } else if (by_task) {
        task_track& w = track(e.curr_pid, e.ts, false);
        flush(w, e.ts);
        // Held tentative: the request of k's burst, until k replies to w or blocks.
        const std::size_t at = w.size();
        w.tentative.push_back(at);
        push(w, {replay_step::wake, 0, e.pid, ++k.dep_wakes});
        if (w.req_waker == e.pid) { // w answers k, whose wake of w started w's burst
            mark_reply(k, w.req_step, w, at);
            close_request(w);
        }
        resolve(k, {replay_step::wait, 0, e.curr_pid, ++k.wakes[e.curr_pid]},
                &t_.causes.dependency);
        k.req_waker = e.curr_pid;
        k.req_step = at;
    } else {
        resolve(k, {replay_step::sleep_until, std::max<sim_time>(rel, 0), -1, 0},
                &t_.causes.external);
    }
}

void builder::event(const ftrace_event& e)
{
    // Before the window (a CPU's older events were overwritten): the tasks' state is read
    // from their first events inside it.
    if (e.ts < t_.t0)
        return;
    const bool in_window = e.ts <= t_.t1;
    const sim_time rel = e.ts - t_.t0;
    if (in_window && e.ctx == ftrace_context::softirq &&
        t_.softirq_events.size() < replay_softirq_kept)
        t_.softirq_events.push_back(rel);
    // A selected task first seen as the one running on a CPU: it was running when the window
    // began (a task forked in the window has its track from the fork). Its CPU time counts
    // from here: what it ran before is not in the trace.
    if (e.curr_pid > 0 && !e.inferred && sel(e.curr_pid) && !tracks_.contains(e.curr_pid)) {
        track(e.curr_pid, e.ts, false).on_cpu_since = e.ts;
        ++t_.before_window.running;
        t_.before_window.running_unseen += e.ts - t_.t0;
    }
    // The task did something after an early waking (other than switching out): it was not in
    // __schedule() then, so that waking ended no block.
    if (e.curr_pid > 0 && !(e.type == ftrace_event_type::sched_switch && e.pid == e.curr_pid))
        if (const auto it = tracks_.find(e.curr_pid); it != tracks_.end())
            cancel_early(it->second);
    switch (e.type) {
    case ftrace_event_type::sched_switch: {
        sim_time at = e.ts;
        // An inferred switch-in from idle: the CPU's last event (the wakeup on the idle CPU)
        // plus the wakeup-to-switch delay measured where such switches are recorded, capped
        // by the event that revealed the task (docs/replay.md, "Limits", its "Inferred
        // switch-ins").
        if (e.inferred && e.pid == 0 && idle_switch_delay_ >= 0) {
            // Not before the task's last waking or wakeup (an idle CPU polling for
            // need_resched records no event of its own).
            const auto w = last_wakeup_.find(e.pid2);
            const sim_time base = std::max(e.ts_lo, w == last_wakeup_.end() ? 0 : w->second);
            at = std::min(e.ts, base + idle_switch_delay_);
        }
        // model: an inferred switch-in after a task not replayed (its switch-out unrecorded:
        // schbench_m1_t2_r3's three tokio-rt-worker -> worker switches on CPU 1) starts the
        // replayed task's CPU time at the CPU's previous event, the earliest the switch can
        // be, not at the revealing event: the replay does not run that task, so the choice
        // only sets the selected task's run. The latest drops the selected task's whole
        // unrecorded run (1.5-5.0 ms of a schbench worker's 6.2 ms request there: its timer
        // wake to its request took 6.29, 6.35 and 6.67 ms, the median 6.25); the earliest
        // adds the unreplayed task's, which the trace does not show. The trace's table keeps
        // the revealing event (the rule the spread's draws were read with). Not for a
        // replayed previous task: both shares are replayed.
        sim_time run_at = at;
        if (e.inferred && e.pid != 0 && !sel(e.pid) && sel(e.pid2)) {
            const auto w = last_wakeup_.find(e.pid2);
            run_at =
                std::min(e.ts, std::max(e.ts_lo, w == last_wakeup_.end() ? e.ts_lo : w->second));
        }
        switched(e, run_at, at);
        flips_.cpu_switched(e.cpu, e.pid2);
        if (!e.inferred) {
            note_prio(e.pid, e.prio);
            note_prio(e.pid2, e.prio2);
        }
        return;
    }
    case ftrace_event_type::sched_wakeup:
        last_wakeup_[e.pid] = e.ts;
        flips_.cpu_woken(e.pid, e.target_cpu);
        if (sel(e.pid))
            flips_.placed_on(e.pid, e.target_cpu);
        break;
    case ftrace_event_type::sched_waking:
        waking(e, in_window, rel);
        break;
    case ftrace_event_type::sched_wakeup_new:
        last_wakeup_[e.pid] = e.ts;
        note_prio(e.pid, e.prio);
        if (sel(e.pid) && in_window)
            summary_.sched_wakeup_new({rel, e.cpu, e.pid, &no_comm, e.target_cpu});
        break;
    case ftrace_event_type::sched_migrate_task:
        if (sel(e.pid) && in_window)
            summary_.sched_migrate_task({rel, e.pid, &no_comm, e.target_cpu, e.dest_cpu});
        break;
    case ftrace_event_type::sched_process_fork: {
        if (!sel(e.pid2))
            break;
        task_track& c = track(e.pid2, e.ts, true);
        (void)c;
        if (sel(e.pid) && in_window)
            summary_.sched_process_fork({rel, e.cpu, e.pid2, e.pid, &no_comm});
        if (sel(e.pid)) {
            task_track& p = track(e.pid, e.ts, false);
            task_track& child = tracks_[e.pid2];
            if (!p.exited) {
                t_.tasks[static_cast<std::size_t>(child.idx)].parent = e.pid;
                flips_.fork(e.pid, e.pid2);
                flush(p, e.ts);
                push(p, {replay_step::fork, 0, e.pid2, 0});
            }
        }
        break;
    }
    case ftrace_event_type::sched_process_exit:
        if (sel(e.pid))
            track(e.pid, e.ts, false).exiting = true;
        break;
    default:
        break;
    }
}

void builder::finish()
{
    for (auto& [pid, k] : tracks_)
        cancel_early(k); // the trace ended before the task switched out
    for (auto& [pid, k] : tracks_)
        close_request(k); // and in a burst: no reply
    for (auto& [pid, k] : tracks_) {
        if (k.idx < 0)
            continue;
        if (!k.exited) {
            flush(k, t_.t1);
            if (k.blocked && k.block_step + 1 == k.size()) // still asleep when the trace ended
                k.open.pop_back();
        }
        commit(k, true);
        t_.tasks[static_cast<std::size_t>(k.idx)].steps.shrink_to_fit();
    }
    t_.summary = summary_.finish(t_.t1 - t_.t0);
    t_.flips_roots = flips_.finish();
}

/// The notes on the tasks' policy and nice: what the traced prios give, and what they cannot.
void note_sched_policies(replay_trace& t, const replay_options& o)
{
    std::unordered_map<int, replay_sched> sched_of;
    for (const replay_task& rt : t.tasks)
        sched_of[rt.pid] = replay_sched_of(rt, o);
    u64 niced = 0, rt_prio = 0, other_prio = 0, changed = 0, child_differs = 0;
    for (const replay_task& rt : t.tasks) {
        niced += replay_nice(rt) != 0;
        rt_prio += sched_of[rt.pid].rt_priority > 0;
        // MAX_DL_PRIO - 1 = -1: __normal_prio() of a SCHED_DEADLINE task.
        t.deadline_tasks += rt.prio == -1;
        other_prio += rt.prio != ftrace_no_prio && rt.prio != -1 && rt.prio < 100 &&
                      sched_of[rt.pid].rt_priority == 0;
        changed += rt.prio_changed;
        child_differs += rt.parent >= 0 && !(sched_of[rt.pid] == sched_of[rt.parent]);
    }
    if (niced > 0)
        t.warnings.push_back(
            fmt::format("{} tasks replay at the nice their traced prio gives (prio - 120)", niced));
    if (rt_prio > 0)
        t.warnings.push_back(fmt::format(
            "{} tasks ran at an RT prio (0-98); they replay as {} tasks at rt_priority 99 - "
            "prio (a trace cannot tell SCHED_FIFO from SCHED_RR: --rt-policy {})",
            rt_prio, o.rt_rr ? "SCHED_RR" : "SCHED_FIFO", o.rt_rr ? "fifo" : "rr"));
    if (t.deadline_tasks > 0)
        t.warnings.push_back(fmt::format(
            "WARNING: {} tasks ran at a deadline prio (-1, SCHED_DEADLINE); they replay as "
            "nice-0 SCHED_NORMAL tasks: no scheduler tracepoint carries a deadline task's "
            "runtime, deadline or period",
            t.deadline_tasks));
    if (other_prio > 0)
        t.warnings.push_back(
            fmt::format("{} tasks ran at prio 99, which no SCHED_FIFO/RR task has; they replay as "
                        "nice-0 SCHED_NORMAL tasks",
                        other_prio));
    if (changed > 0)
        t.warnings.push_back(fmt::format("{} tasks changed prio during the trace (nice, PI "
                                         "boost); they replay at their first",
                                         changed));
    if (child_differs > 0)
        t.warnings.push_back(fmt::format(
            "{} forked tasks had another prio than their parent; a replayed fork inherits "
            "the parent's policy, rt_priority and nice",
            child_differs));
}

} // namespace

replay_trace load_replay_trace(const std::string& path, const replay_options& o)
{
    std::regex re;
    if (!o.comm_regex.empty()) {
        try {
            re = std::regex(o.comm_regex, std::regex::ECMAScript);
        } catch (const std::regex_error& err) {
            throw config_error("--comm", fmt::format("'{}' is not a valid regular expression: {}",
                                                     o.comm_regex, err.what()));
        }
    }
    // Pass 1: the tasks, their comms and the window.
    std::unordered_map<int, pid_info> info;
    replay_trace t;
    t.path = path;
    t.sha256 = trace_file_sha256(path);
    sim_time complete_from = 0;
    const bool show_progress = trace_progress_wanted(o.quiet);
    {
        sched_trace_reader r(path);
        trace_progress progress(std::cerr, "reading " + path + " (pass 1 of 2)", show_progress);
        ftrace_event e;
        while (r.next(e)) {
            progress.update_with([&] { return r.bytes_read(); }, r.file_bytes());
            if (e.type == ftrace_event_type::other)
                continue;
            note(info, e.curr_pid, {}, e.ts, e.cpu);
            note(info, e.pid, e.comm, e.ts, e.cpu);
            if (e.type == ftrace_event_type::sched_switch ||
                e.type == ftrace_event_type::sched_process_fork)
                note(info, e.pid2, e.comm2, e.ts, e.cpu);
        }
        if (r.stats().events == 0)
            throw config_error(path, "no trace events: an empty trace, or not ftrace text");
        t.nr_cpus = r.nr_cpus();
        t.idle_switch_delay = r.quirks().median_idle_wakeup_to_switch();
        for (const auto& [cpu, ts] : r.stats().buffer_starts)
            complete_from = std::max(complete_from, ts);
    }
    std::unordered_map<int, bool> selected;
    t.t0 = -1;
    for (const auto& [pid, pi] : info) {
        bool s = false;
        for (const std::string& c : pi.comms)
            s = s || (o.comm_regex.empty() ? !kernel_thread_comm(c) : std::regex_search(c, re));
        selected[pid] = s;
        if (s) {
            t.t0 = t.t0 < 0 ? pi.first : std::min(t.t0, pi.first);
            t.t1 = std::max(t.t1, pi.last);
        }
    }
    if (t.t0 < 0) {
        std::vector<std::pair<sim_time, std::string>> comms;
        for (const auto& [pid, pi] : info)
            if (!pi.comms.empty())
                comms.emplace_back(pi.first, pi.comms.back());
        std::sort(comms.begin(), comms.end());
        std::vector<std::string> names; // the first 12 distinct comms, earliest first
        for (const auto& [first, comm] : comms)
            if (names.size() < 12 && std::find(names.begin(), names.end(), comm) == names.end())
                names.push_back(comm);
        std::string list;
        for (const std::string& n : names)
            list += (list.empty() ? "" : ", ") + n;
        throw config_error(o.comm_regex.empty() ? path : "--comm",
                           fmt::format("no task of {} is selected{}; its tasks include {}", path,
                                       o.comm_regex.empty() ? " (all are kernel threads)"
                                                            : " by '" + o.comm_regex + "'",
                                       list));
    }
    if (complete_from > t.t0) {
        t.warnings.push_back(fmt::format(
            "a CPU's ring buffer overwrote its older events (\"buffer started\" marker); the "
            "replay starts at {:.6f}, where every CPU's events are complete",
            static_cast<double>(complete_from) / 1e9));
        t.t0 = complete_from;
    }
    if (t.t1 <= t.t0)
        throw config_error(path, "the selected tasks' events span no time: nothing to replay");

    // Pass 2: the behaviour and the statistics.
    sched_trace_reader r(path);
    builder b(t, info, selected, t.idle_switch_delay, o.softirq_wakes);
    {
        trace_progress progress(std::cerr, "reading " + path + " (pass 2 of 2)", show_progress);
        ftrace_event e;
        while (r.next(e)) {
            progress.update_with([&] { return r.bytes_read(); }, r.file_bytes());
            b.event(e);
        }
    }
    b.finish();
    t.parse = r.stats();
    t.quirks = r.quirks();
    note_sched_policies(t, o);
    if (t.quirks.total_inferred() > 0)
        t.warnings.push_back(fmt::format(
            "{} switch-ins were not recorded and are inferred from the next event naming the "
            "task ({} of them after a task other than idle)",
            t.quirks.total_inferred(), t.quirks.inferred_from_task));
    if (const auto& bw = t.before_window; bw.running + bw.runnable + bw.asleep > 0)
        t.warnings.push_back(fmt::format(
            "{} selected tasks existed before the window (not forked in it): {} running at its "
            "start (their CPU time before their first event, at most {:.3f} ms in all, is not "
            "replayed), {} runnable (first seen switched in, with no waking of them: replayed "
            "runnable from the start), {} asleep (first seen woken: replayed blocked until "
            "that waking)",
            bw.running + bw.runnable + bw.asleep, bw.running,
            static_cast<double>(bw.running_unseen) / 1e6, bw.runnable, bw.asleep));
    if (t.quirks.stale_task_comms > 0)
        t.warnings.push_back(fmt::format("{} events carry a stale comm in the TASK-PID column; "
                                         "the comm of the event fields is used",
                                         t.quirks.stale_task_comms));
    if (t.sched_waking_events == 0)
        t.warnings.push_back(
            "WARNING: the trace has no sched_waking events (record sched:sched_waking): no "
            "block has a known cause (each is replayed as an arrival at the time the task ran "
            "again), and the waking->run latencies and the wakeup targets of the trace are "
            "unknown ('-' in the table)");
    if (t.parse.format == "trace-cmd report" || t.parse.format == "perf script")
        t.warnings.push_back("no flags column: wakeups cannot be told from interrupts, so every "
                             "waking is attributed to the task current on its CPU");
    return t;
}

/* ------------------------------------------------------------------------ */
/* The workload                                                              */

replay_workload::replay_workload(std::shared_ptr<const replay_trace> trace, replay_options o)
    : trace_(std::move(trace)), o_(std::move(o))
{
}

std::string replay_workload::command_line() const
{
    return "replay " + trace_->path + options_text();
}

std::unique_ptr<workload> replay_workload::fresh() const
{
    return std::make_unique<replay_workload>(trace_, o_);
}

std::string replay_workload::content_identity() const
{
    return "replay sha256:" + trace_->sha256 + options_text();
}

std::string replay_workload::options_text() const
{
    std::string s;
    if (!o_.comm_regex.empty())
        s += " --comm '" + o_.comm_regex + "'";
    s += fmt::format(" --speed {}", o_.speed);
    if (!o_.net_bursts)
        s += " --bursts gross";
    if (o_.edge_deps)
        s += " --deps edge";
    else if (o_.reply_deps)
        s += " --deps reply";
    else if (o_.keep_blocks)
        s += " --deps keep";
    else if (!o_.flow)
        s += " --deps count";
    if (o_.sync_wakes)
        s += " --sync-wakes";
    if (o_.softirq_wakes)
        s += " --softirq-wakes";
    if (o_.rt_rr)
        s += " --rt-policy rr";
    if (!o_.infer_wakee_flips)
        s += fmt::format(" --wakee-flips {}", o_.root_wakee_flips);
    return s;
}

sim_dur replay_workload::task_runtime(syscalls& sys, const task_struct& p)
{
    // kernel: kernel/sched/cputime.c task_sched_runtime() (CLOCK_THREAD_CPUTIME_ID): the
    // accounted sum_exec_runtime plus the running task's time since update_curr(). Differs:
    // rq->clock_task is the rq clock (no IRQ or steal time is modelled), so the pending
    // delta is sched_clock_at(now) - exec_start without a clock update.
    return static_cast<sim_dur>(p.se.sum_exec_runtime) +
           static_cast<sim_dur>(sched_clock_at(sys.now()) - p.se.exec_start);
}

counter& replay_workload::edge(std::size_t waker, std::size_t wakee)
{
    counter*& c = edges_[{waker, wakee}];
    if (!c)
        c = &state_.make_counter(
            waker == wakee
                ? fmt::format("replay/{}/wake", trace_->tasks[wakee].pid)
                : fmt::format("replay/{}->{}", trace_->tasks[waker].pid, trace_->tasks[wakee].pid),
            o_.sync_wakes ? WF_SYNC : 0);
    return *c;
}

counter& replay_workload::hold_counter(std::size_t waker)
{
    counter*& c = hold_[waker];
    if (!c)
        c = &state_.make_counter(fmt::format("replay/{}/held", trace_->tasks[waker].pid),
                                 o_.sync_wakes ? WF_SYNC : 0);
    return *c;
}

/*
 * model: the kernel work a traced burst holds is what the simulation charged the task since
 * its previous run step, run or owed. A call's charges beyond its own burst (a remote
 * wakeup's runqueue lock, lines and IPI send: cpu_charges) and the tail of its wakeups are
 * paid at the start of the next burst, the traced one that holds the kernel's same work (the
 * rest of try_to_wake_up() after sched_waking), so they come out of it, not out of the burst
 * after (as when only the CPU time already run was counted: the waker then reached its next
 * block that much later than traced).
 */
sim_dur replay_workload::net_burst(std::size_t idx, sim_dur ns, syscalls& sys, const task_struct& p,
                                   sim_dur owed, sim_dur& also)
{
    const sim_dur now_rt = task_runtime(sys, p) + owed;
    sim_dur& mark = runtime_mark_[idx];
    const sim_dur kernel = std::max<sim_dur>(now_rt - mark, 0);
    sim_dur left = std::max<sim_dur>(ns - kernel, 0);
    const sim_dur ahead = std::min(left, also);
    left -= ahead;
    also -= ahead;
    kernel_subtracted_ += ns - left;
    mark = now_rt + left;
    return left;
}

namespace {

/*
 * Whether the steps after `cur` up to the task's traced exit are only runs and wakes: then
 * the traced CPU time from here to the exit holds the exit's own work (a child's exit wakes
 * its parent in exit_notify(), so a wake may come between the last runs).
 */
bool only_runs_and_wakes_to_exit(replay_steps::cursor cur)
{
    replay_step s;
    while (cur.next(s)) {
        if (s.kind == replay_step::exit)
            return true;
        if (s.kind != replay_step::run && s.kind != replay_step::wake &&
            s.kind != replay_step::wake_absent)
            return false;
    }
    return false; // alive at the end of the trace: no traced exit to take out
}

} // namespace

std::optional<sim_dur> replay_workload::run_step_burst(task_context& t, std::size_t idx,
                                                       const replay_step& s,
                                                       const replay_steps::cursor& cur,
                                                       bool& looked_ahead, sim_dur& exit_work)
{
    const auto ns = static_cast<sim_dur>(std::llround(static_cast<double>(s.ns) / o_.speed));
    if (ns <= 0)
        return std::nullopt;
    if (!o_.net_bursts)
        return ns;
    if (!looked_ahead) {
        looked_ahead = true;
        if (only_runs_and_wakes_to_exit(cur))
            exit_work = t.sys().exit_cost(t.task());
    }
    // --bursts net: the traced burst less the kernel work the simulation charged this task
    // since the previous burst was accounted (see net_bursts), and before the exit, less the
    // exit's.
    return net_burst(idx, ns, t.sys(), t.task(),
                     t.sys().kernel_work_owed(t.task()) + t.owed() + t.tail(), exit_work);
}

void replay_workload::wake_absent(task_context& t, int pid)
{
    std::unique_ptr<task_struct>& a = absent_[pid];
    if (!a) {
        a = std::make_unique<task_struct>();
        a->pid = -pid; // not a replayed task's pid
    }
    t.sys().record_absent_wakee(t.task(), *a);
    ++absent_wakes_run_;
}

/*
 * One task's steps as system calls, decoded one at a time (replay_steps::cursor): the run
 * holds the compact steps and this coroutine's frame per task, not an op list.
 */
task_code replay_workload::run_task(task_context& t, std::size_t idx)
{
    const replay_task& rt = trace_->tasks[idx];
    if (rt.parent < 0 && rt.start > 0) {
        // clock_nanosleep(TIMER_ABSTIME) to the traced start: the time is read after the
        // entry cost.
        co_await t.syscall(t.costs().nanosleep);
        const sim_dur left = rt.start - t.now();
        if (left > 0)
            co_await t.timeout_exact(left);
    }
    if (rt.parent < 0)
        t.sys().set_wakee_flips(t.task(), start_flips_[idx]); // as of now
    u64 nth_wait = 0; // the task's dependency waits so far
    replay_steps::cursor cur(rt.steps);
    replay_step s;
    // --bursts net: the exit cost still to take out of the runs before the traced exit, once
    // the steps left are runs and wakes up to it (looked ahead once per such stretch).
    bool looked_ahead = false;
    sim_dur exit_work = 0;
    for (;;) {
        const bool more = cur.next(s);
        if (!more)
            break;
        if (s.kind != replay_step::run && s.kind != replay_step::wake &&
            s.kind != replay_step::wake_absent)
            looked_ahead = false;
        switch (s.kind) {
        case replay_step::run:
            if (const std::optional<sim_dur> left =
                    run_step_burst(t, idx, s, cur, looked_ahead, exit_work))
                co_await t.run(*left);
            break;
        case replay_step::wake: {
            // --deps count: one counter per wakee, every waker signals it.
            const std::size_t wakee = pid_index_.at(s.pid);
            if (o_.reply_deps && (s.flags & replay_step::reply)) {
                // --deps reply: the reply to wakee's n-th request to this task waits for
                // that request (its wake signals the hold counter). No flow hold: the
                // requester passed its earlier waits before it asked.
                pair_count& pc = replies_[{wakee, idx}];
                if (pc.requests <= pc.replies) {
                    ++replies_waited_;
                    awaiting_request_[idx] = wakee + 1;
                    counter& h = hold_counter(idx);
                    waiting_[idx] = {replay_wait::request, &h, h.value + 1, wakee, s.k, t.now()};
                    co_await t.wait_for(h, h.value + 1);
                    waiting_[idx].kind = replay_wait::none;
                }
                ++pc.replies;
                ++replies_run_;
            } else if (o_.flow && s.k > 1 && passed_[wakee] < s.k - 1 &&
                       !(o_.reply_deps && (s.flags & replay_step::request))) {
                // (--deps reply: a request is not held; the requester's own wait for the
                // reply bounds it to one outstanding, as the trace's order does.)
                // The wakee's window is one hand-off: this is its k-th dependency wake in
                // the trace's order, made there after the wakee had passed its (k-1)-th
                // wait; until it has here, the waker waits (its hold counter, signalled by
                // that pass).
                ++flow_held_;
                holder_[{wakee, s.k - 1}] = idx;
                counter& h = hold_counter(idx);
                waiting_[idx] = {replay_wait::held, &h, h.value + 1, wakee, s.k, t.now()};
                co_await t.wait_for(h, h.value + 1);
                waiting_[idx].kind = replay_wait::none;
            }
            if (o_.reply_deps && (s.flags & replay_step::request)) {
                ++replies_[{idx, wakee}].requests;
                if (awaiting_request_[wakee] == idx + 1) { // its reply waits for this
                    awaiting_request_[wakee] = 0;
                    co_await t.signal(hold_counter(wakee));
                }
            }
            counter& c = o_.edge_deps ? edge(idx, wakee) : edge(wakee, wakee);
            co_await t.signal(c);
            break;
        }
        case replay_step::wait: {
            // The wait is a system call of its own (futex_wait(), read()): the return to user
            // mode of the call before it (a wake step's) comes first.
            co_await t.return_to_user();
            ++nth_wait;
            counter& c = o_.edge_deps ? edge(pid_index_.at(s.pid), idx) : edge(idx, idx);
            const u64 target = o_.edge_deps ? s.k : nth_wait;
            // The wake came first when the waker ran ahead of this task, against the
            // trace's order: the traced block is lost (--deps keep: kept, of no length).
            const bool wake_first = c.value >= target;
            ++(wake_first ? waits_wake_first_ : waits_slept_);
            // Two or more wakes there: wakes the trace's order never has outstanding at once
            // (each traced dependency wake ends a block its wakee is in).
            waits_piled_ += c.value > target;
            if (o_.keep_blocks && wake_first)
                co_await t.sleep_exact(1);
            waiting_[idx] = {replay_wait::dependency, &c, target, static_cast<std::size_t>(s.pid),
                             nth_wait, t.now()};
            co_await t.wait_for(c, target);
            waiting_[idx].kind = replay_wait::none;
            if (o_.flow) { // a waker held for this pass goes on
                const auto h = holder_.find({idx, ++passed_[idx]});
                if (h != holder_.end()) {
                    counter& held = hold_counter(h->second);
                    holder_.erase(h);
                    co_await t.signal(held);
                }
            }
            break;
        }
        case replay_step::sleep:
            if (s.ns > 0)
                co_await t.sleep_exact(s.ns);
            break;
        case replay_step::sleep_until: {
            co_await t.syscall(t.costs().nanosleep);
            const sim_dur left = s.ns - t.now();
            if (left > 0)
                co_await t.timeout_exact(left);
            break;
        }
        case replay_step::fork: {
            const std::size_t c = pid_index_.at(s.pid);
            fork_opts fo;
            fo.comm = trace_->tasks[c].comm;
            fo.notify = exited_;
            auto child = [this, c](task_context& ct) { return run_task(ct, c); };
            life_[c] = 1;
            co_await t.fork(child, fo);
            break;
        }
        case replay_step::wake_absent:
            wake_absent(t, s.pid);
            break;
        case replay_step::exit:
        case replay_step::pending:
            break;
        }
    }
    last_exit_ = std::max(last_exit_, t.sys().now());
    life_[idx] = 2;
    co_await t.run(0); // what the task still owes (wakeups it made) before its exit
}

void replay_workload::setup(syscalls& sys)
{
    const auto& tasks = trace_->tasks;
    exited_ = &state_.make_counter("replay/exited");
    runtime_mark_.assign(tasks.size(), 0);
    passed_.assign(tasks.size(), 0);
    hold_.assign(tasks.size(), nullptr);
    awaiting_request_.assign(tasks.size(), 0);
    waiting_.assign(tasks.size(), {});
    life_.assign(tasks.size(), 0);
    for (std::size_t i = 0; i < tasks.size(); ++i)
        pid_index_[tasks[i].pid] = i;
    start_flips_.assign(tasks.size(), o_.infer_wakee_flips ? 0 : o_.root_wakee_flips);
    if (o_.infer_wakee_flips)
        for (const flips_root& r : trace_->flips_roots)
            start_flips_[pid_index_.at(r.pid)] = infer_wakee_flips(
                r.evidence, [&sys](int cpu) { return sys.llc_size(cpu % sys.nr_cpu_ids()); });
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].parent >= 0)
            continue;
        task_opts to;
        to.comm = tasks[i].comm;
        to.cpu = tasks[i].first_cpu % sys.nr_cpu_ids();
        const replay_sched rs = replay_sched_of(tasks[i], o_);
        to.policy = rs.policy;
        to.rt_priority = rs.rt_priority;
        to.nice = rs.nice;
        life_[i] = 1;
        sys.spawn(make_task([this, i](task_context& t) { return run_task(t, i); }, exited_), to);
    }
}

bool replay_workload::finished() const
{
    return exited_ && exited_->value >= trace_->tasks.size();
}

/*
 * model: a replay cannot stall on a trace whose events agree with each other: every wait a
 * task's steps make (a dependency wait, a flow-control hold) is met by a step of another
 * task that comes earlier in the trace's order, so the steps complete in that order if in
 * no other. A trace whose events contradict each other breaks that: a sched_waking whose
 * waker (the TASK-PID column) the trace shows asleep, a task switched out on a CPU it was
 * not running on, events out of order within a CPU. Its tasks can end up each waiting
 * for another's wake; the run would then idle to --time-limit and look like a run cut short.
 * At the end of an unfinished run: when every task forked and not exited waits on a counter
 * below its target, nothing can signal any of them (counters are signalled only by the
 * replayed tasks' steps), and the input is the error.
 */
std::string replay_workload::stalled() const
{
    if (finished() || waiting_.empty())
        return "";
    std::vector<std::size_t> stuck;
    sim_time since = 0;
    for (std::size_t i = 0; i < waiting_.size(); ++i) {
        if (life_[i] != 1)
            continue;
        const replay_wait& w = waiting_[i];
        if (w.kind == replay_wait::none || w.c->value >= w.target)
            return ""; // running, runnable, on a timer, or about to go on
        stuck.push_back(i);
        since = std::max(since, w.since);
    }
    if (stuck.empty())
        return "";
    const auto& tasks = trace_->tasks;
    std::string who;
    constexpr std::size_t shown = 6;
    for (std::size_t j = 0; j < stuck.size() && j < shown; ++j) {
        const std::size_t i = stuck[j];
        const replay_wait& w = waiting_[i];
        who += j ? "; " : "";
        if (w.kind == replay_wait::request)
            who += fmt::format("pid {} ({}) holds its reply to pid {} until that task's request "
                               "reaches it",
                               tasks[i].pid, tasks[i].comm, tasks[w.other].pid);
        else if (w.kind == replay_wait::held)
            who += fmt::format("pid {} ({}) holds its wake of pid {} until that task has passed "
                               "its dependency wait number {} (it has passed {})",
                               tasks[i].pid, tasks[i].comm, tasks[w.other].pid, w.n - 1,
                               passed_[w.other]);
        else if (o_.edge_deps)
            who += fmt::format("pid {} ({}) waits for wake number {} of it by pid {} ({} came)",
                               tasks[i].pid, tasks[i].comm, w.target, w.other, w.c->value);
        else
            who += fmt::format("pid {} ({}) waits for its dependency wake number {} ({} came; "
                               "the trace's waker: pid {})",
                               tasks[i].pid, tasks[i].comm, w.target, w.c->value, w.other);
    }
    if (stuck.size() > shown)
        who += fmt::format("; and {} more", stuck.size() - shown);
    return fmt::format(
        "{}: the replay stalled at {:.6f} s: each of the {} tasks left waits for a wake that "
        "only another of them can make ({}). A trace whose events agree never stalls a replay "
        "(docs/replay.md, \"A replay that stalls\"): check the trace for a sched_waking whose "
        "waker it shows asleep, a task switched out on a CPU it was not running on, or lost "
        "events",
        trace_->path, static_cast<double>(since) / 1e9, stuck.size(), who);
}

sim_time replay_tick_phase(const replay_trace& t, sim_dur tick)
{
    constexpr sim_dur window = 100'000;
    if (tick <= window || t.softirq_events.size() < 8)
        return -1;
    std::vector<sim_time> ph;
    ph.reserve(t.softirq_events.size());
    for (const sim_time e : t.softirq_events)
        ph.push_back(e % tick);
    std::sort(ph.begin(), ph.end());
    // The window [ph[i], ph[i] + window) around the circle: a two-pointer count.
    const std::size_t n = ph.size();
    std::size_t best = 0, best_n = 0, j = 0;
    for (std::size_t i = 0; i < n; ++i) {
        j = std::max(j, i);
        auto at = [&](std::size_t k) { return k < n ? ph[k] : ph[k - n] + tick; };
        while (j < i + n && at(j) < ph[i] + window)
            ++j;
        if (j - i > best_n) {
            best_n = j - i;
            best = i;
        }
    }
    if (2 * best_n < n)
        return -1;
    const std::size_t k = best + best_n / 10;
    return k < n ? ph[k] : ph[k - n];
}

u64 replay_workload::tick_phase_ns(u64 tick_nsec) const
{
    const sim_time p = replay_tick_phase(*trace_, static_cast<sim_dur>(tick_nsec));
    return p < 0 ? 0 : static_cast<u64>(p);
}

std::string replay_workload::report() const
{
    const replay_trace& t = *trace_;
    std::string s =
        fmt::format("# replay of {}: {} tasks, {} CPUs traced, {:.6f} s traced\n", t.path,
                    t.tasks.size(), t.nr_cpus, static_cast<double>(t.t1 - t.t0) / 1e9);
    std::size_t nr_steps = 0, step_bytes = 0;
    for (const replay_task& rt : t.tasks) {
        nr_steps += rt.steps.size();
        step_bytes += rt.steps.bytes();
    }
    s += fmt::format("# behaviour: {} steps in {} bytes\n", nr_steps, step_bytes);
    s += fmt::format("# blocks ended by: a traced task {}, a timer {}, an external arrival {}, "
                     "unknown {} ({} by a waking recorded before the switch out)\n",
                     t.causes.dependency, t.causes.timer, t.causes.external, t.causes.unknown,
                     t.causes.early);
    s += fmt::format("# dependency waits: {} slept until their wake, {} found it already there "
                     "(its waker ran ahead; {} found more wakes than that one){}\n",
                     waits_slept_, waits_wake_first_, waits_piled_,
                     o_.keep_blocks ? "; --deps keep: those slept 1 ns, so the trace's voluntary "
                                      "switches and wakeups are kept by construction"
                                    : ": the traced block is lost");
    s += fmt::format("# wakeups of tasks not replayed, by replayed ones (their context or an "
                     "interrupt while they ran): {} replayed as the waker's record_wakee() "
                     "only ({} in this run), {} left out (per-CPU kernel threads, non-fair "
                     "tasks: no select_task_rq_fair())\n",
                     t.causes.absent_wakes, absent_wakes_run_, t.causes.absent_wakes_skipped);
    // The tick the run uses (prepare_run(): kc.params.tick_nsec(); CONFIG_HZ is the same in
    // every profile, sched_params::hz).
    const sched_params params;
    if (const sim_time p = replay_tick_phase(t, static_cast<sim_dur>(params.tick_nsec())); p >= 0)
        s += fmt::format("# ticks: the traced kernel's {} ms tick grid (HZ={}) at {:.3f} ms from "
                         "time 0, from its {} softirq-context events; the replay's ticks fall "
                         "on it\n",
                         static_cast<double>(params.tick_nsec()) / 1e6, params.hz,
                         static_cast<double>(p) / 1e6, t.softirq_events.size());
    s += wakee_flips_report();
    if (o_.flow)
        s += fmt::format("# flow control (--deps {}): {} dependency wakes waited for their "
                         "wakee to pass its previous dependency wait (a modelled buffer-full "
                         "wait, not in the trace)\n",
                         o_.reply_deps ? "reply" : "flow", flow_held_);
    if (o_.reply_deps)
        s += fmt::format("# replies (--deps reply): the trace has {} request-reply pairs; "
                         "{} replies made, {} of them waited for their request (requests are "
                         "not flow-held)\n",
                         t.causes.replies, replies_run_, replies_waited_);
    if (t.causes.implied_replies > 0)
        s += fmt::format("# implied replies: {} replies to a requester its replier had preempted "
                         "(no waking recorded: the requester was runnable), replayed as a wake "
                         "at the end of the replier's burst and the requester's wait for it\n",
                         t.causes.implied_replies);
    if (t.deadline_tasks > 0)
        s += fmt::format("# WARNING: {} SCHED_DEADLINE tasks (traced prio -1) replayed as nice-0 "
                         "SCHED_NORMAL tasks: the trace has no runtime, deadline or period\n",
                         t.deadline_tasks);
    if (t.sched_waking_events == 0)
        s += "# WARNING: the trace has no sched_waking events: every block replays as an "
             "arrival, and the trace's waking->run latencies and wakeup targets are unknown\n";
    if (o_.net_bursts)
        s += fmt::format("# modelled kernel work subtracted from the traced bursts: {:.6f} s "
                         "(--bursts net)\n",
                         static_cast<double>(kernel_subtracted_) / 1e9);
    if (finished())
        s += fmt::format("replay: elapsed {:.6f} s (traced {:.6f} s)\n",
                         static_cast<double>(last_exit_) / 1e9,
                         static_cast<double>(t.t1 - t.t0) / 1e9);
    else
        s += "replay: not finished when the run stopped\n";
    return s;
}

std::vector<workload_metric> replay_workload::metrics() const
{
    if (!finished())
        return {};
    return {{"elapsed", "s", static_cast<double>(last_exit_) / 1e9, false}};
}

std::string replay_workload::wakee_flips_report() const
{
    if (!o_.infer_wakee_flips)
        return fmt::format("# wakee flips at the start (--wakee-flips {}): every task not forked "
                           "by a replayed one\n",
                           o_.root_wakee_flips);
    std::string s = "# wakee flips at the start, read from the trace (--wakee-flips trace):";
    for (const flips_root& r : trace_->flips_roots) {
        u64 w = 0, p = 0;
        for (const flips_evidence& e : r.evidence) {
            w += e.where == wakeup_target::waker;
            p += e.where == wakeup_target::prev && e.prev_busy;
        }
        const auto it = pid_index_.find(r.pid);
        s += fmt::format(" pid {} {} ({} of its first wakeups of its children on the waker's CPU, "
                         "{} on a busy previous one);",
                         r.pid, it == pid_index_.end() ? 0 : start_flips_[it->second], w, p);
    }
    return s + " 0 for the other tasks not forked by a replayed one\n";
}

std::unique_ptr<workload> make_replay_workload(const std::vector<std::string>& args)
{
    replay_options o;
    std::string speed, bursts, deps, rt_policy, wakee_flips;
    std::vector<std::string> positional;
    const std::vector<option_spec> specs = {
        {0, "comm", nullptr, nullptr, &o.comm_regex,
         "select the tasks whose comm matches REGEX (default: every non-kernel task)"},
        {0, "speed", nullptr, nullptr, &speed,
         "the simulated CPU's speed relative to the traced one (default 1)"},
        {0, "bursts", nullptr, nullptr, &bursts,
         "net: each traced burst less the kernel work the simulation charges (default); "
         "gross: as traced"},
        {0, "sync-wakes", &o.sync_wakes, nullptr, nullptr,
         "dependency wakes are WF_SYNC wakeups, as pipe and socket writes make"},
        {0, "softirq-wakes", &o.softirq_wakes, nullptr, nullptr,
         "a waking in softirq context while a replayed task is current is that task's wake "
         "(a dependency edge), as a loopback send's receive softirq is; default: an external "
         "arrival"},
        {0, "deps", nullptr, nullptr, &deps,
         "flow: as count, and a task's k-th dependency wake (by any waker) waits until the "
         "task has passed its (k-1)-th dependency wait (default); reply: as flow, but a "
         "traced request is not held and its reply waits for it; count: a block waits for "
         "the task's n-th "
         "dependency wake by any waker; edge: for the n-th wake by the task that ended it in "
         "the trace; keep: as count, and a wait whose wake came first still sleeps (1 ns)"},
        {0, "quiet", &o.quiet, nullptr, nullptr,
         "no progress on stderr while the trace is read (shown only on a terminal)"},
        {0, "rt-policy", nullptr, nullptr, &rt_policy,
         "fifo: tasks traced at an RT prio replay as SCHED_FIFO (default); rr: as SCHED_RR "
         "(a trace cannot tell them apart)"},
        {0, "wakee-flips", nullptr, nullptr, &wakee_flips,
         "the wakee_flips each task not forked by a replayed task starts with (not traced); "
         "trace (default): each one's read from its first wakeups of its children in the "
         "trace, 0 where they do not tell it; a forked child inherits its parent's"},
    };
    parse_options(args, specs, "replay", &positional);
    if (positional.size() != 1)
        throw config_error("replay",
                           positional.empty()
                               ? std::string("the trace file is missing: replay TRACE "
                                             "[--comm REGEX] [--speed F] [--bursts net|gross] "
                                             "[--deps flow|reply|count|edge|keep] [--sync-wakes] "
                                             "[--softirq-wakes] "
                                             "[--rt-policy fifo|rr] [--wakee-flips trace|N]")
                               : fmt::format("one trace file, got {}", positional.size()));
    if (!speed.empty()) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(speed, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != speed.size() || !(v >= 0.01 && v <= 100))
            throw config_error("--speed",
                               fmt::format("'{}' is not a number in [0.01, 100]", speed));
        o.speed = v;
    }
    if (!bursts.empty()) {
        if (bursts != "net" && bursts != "gross")
            throw config_error("--bursts", fmt::format("'{}' is not net or gross", bursts));
        o.net_bursts = bursts == "net";
    }
    if (!deps.empty()) {
        if (deps != "count" && deps != "edge" && deps != "keep" && deps != "flow" &&
            deps != "reply")
            throw config_error("--deps",
                               fmt::format("'{}' is not flow, reply, count, edge or keep", deps));
        o.edge_deps = deps == "edge";
        o.keep_blocks = deps == "keep";
        o.flow = deps == "flow" || deps == "reply";
        o.reply_deps = deps == "reply";
    }
    if (!rt_policy.empty()) {
        if (rt_policy != "fifo" && rt_policy != "rr")
            throw config_error("--rt-policy", fmt::format("'{}' is not fifo or rr", rt_policy));
        o.rt_rr = rt_policy == "rr";
    }
    if (!wakee_flips.empty() && wakee_flips != "trace") {
        o.infer_wakee_flips = false;
        o.root_wakee_flips = static_cast<u32>(
            parse_integer(wakee_flips, "--wakee-flips", "--wakee-flips", 0, 1000000));
    }
    auto t = std::make_shared<const replay_trace>(load_replay_trace(positional[0], o));
    return std::make_unique<replay_workload>(std::move(t), std::move(o));
}

} // namespace schedlab
