// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * `replay TRACE`: a recorded workload re-run on a simulated machine and kernel.
 * Each task of a real scheduler trace (trace/ftrace_parse.h) is rebuilt as a
 * list of steps (replay_steps: compact, decoded one at a time by the task's
 * coroutine as it runs them, with the system calls of task.h) from what the
 * trace shows it did:
 *
 *  - run(ns): the CPU time between the points below, summed over the task's
 *    run intervals (a preemption does not end a burst: the simulated scheduler
 *    decides preemption), divided by the speed factor --speed;
 *  - each block (a sched_switch out in a sleep state: S, D, I, ...) with its
 *    cause, read from the sched_waking that ended it:
 *      woken by a traced task X in process context -> a dependency edge: X's
 *        program signals the task's counter at the point in its CPU time where
 *        the trace shows the waking, the task waits for it (wait_for);
 *      woken in hardirq context -> a timer (hrtimer: nanosleep, futex and poll
 *        timeouts): sleep(the traced block length);
 *      woken in softirq or NMI context, from the idle task, or by a task not
 *        selected -> an external arrival: sleep_until(the traced time);
 *      a waking recorded just before the switch out (the task was already in
 *        __schedule(): no event of its own in between) ends that block too;
 *      no waking before the task ran again (a trace gap) -> also an external
 *        arrival at the time it ran, counted as "unknown";
 *  - fork (sched_process_fork by a selected task) and exit (the switch out
 *    after sched_process_exit).
 *
 * A waking that ends no block (the task had not yet slept: ttwu_runnable) is no
 * edge. A dependency wake of X by T in the burst that X's dependency wake of T started
 * (T's first such) is marked a reply, X's wake a request (replay_step::flags); only
 * --deps reply replays them differently. The waker-to-wakee edges keep causality: when a
 * different placement delays a waker, its wakees wait for it, as on the machine.
 *
 * Tasks are selected by comm (--comm REGEX: any comm a task had in the trace
 * matches; default: every task that is not a kernel thread, told by the comm
 * prefixes of kernel_thread_comm()). The trace's statistics over the selected
 * tasks (a sched_summary fed the trace's events, other tasks counted as idle)
 * are kept beside the behaviour for the trace-vs-replay table.
 *
 * Policy and nice: a task whose traced prio is 100-139 (a fair task's 120 +
 * nice) replays at that nice, one at 0-98 (99 - rt_priority) as a SCHED_FIFO
 * task (--rt-policy rr: SCHED_RR; the prio cannot tell them) at that
 * rt_priority; a root from its spawn, a forked child inherits its parent's, as
 * fork() does, and a different traced prio is reported. Not modelled yet:
 * deadline tasks (prio -1: replayed as nice 0 fair tasks, with a WARNING line
 * in the report; no scheduler tracepoint carries runtime, deadline or period),
 * SCHED_BATCH/SCHED_IDLE (the trace's prio cannot tell them from SCHED_NORMAL), affinity (no
 * scheduler event carries it), a prio change mid-trace (reported), threads vs
 * processes (every fork is a process fork), sched_stat_runtime.
 */
#include "metrics/sched_summary.h"
#include "trace/ftrace_parse.h"
#include "workload/program.h"
#include "workload/replay_flips.h"
#include "workload/workload.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace schedlab {

struct replay_options {
    std::string comm_regex; ///< --comm: ECMAScript regex; "" every non-kernel task
    double speed = 1.0;     ///< --speed: the simulated CPU's speed relative to the traced one
    /// --bursts net (true, the default): a traced burst is the task's whole CPU time between
    /// two points, kernel work included (the end of the context switch into it, the wakeups
    /// it does, the syscalls around its blocks); the simulation charges its own model of that
    /// work, so each run step consumes the traced time less what the simulation charged the
    /// task since the previous run step (none when that exceeds it); the runs between the
    /// task's last block or other step and its traced exit also give up the exit cost the
    /// simulation charges at the exit (a traced last burst holds the exit's work: atexit
    /// handlers, library destructors, do_exit()). --bursts gross: as traced.
    bool net_bursts = true;
    /// --deps count: a block ended by a traced task waits until the task's n-th such wake,
    /// by any waker (a counter per wakee: any writer's data lets a reader through); --deps
    /// flow (the default) and keep wait likewise. --deps edge (true): until the n-th wake of
    /// this task by the waker that ended it in the trace (a counter per waker->wakee pair:
    /// the happens-before the trace shows, and no other).
    bool edge_deps = false;
    /// --deps keep: as count, but every traced dependency block blocks: a wait whose wake
    /// came before the task reached it (its waker ran ahead of it, against the trace's order)
    /// still puts the task to sleep, woken at once (a nanosleep of 1 ns: schedule() and the
    /// wakeup path, from a timer on the task's CPU), instead of passing without a switch.
    /// The replay then has the trace's voluntary switches and wakeups by construction.
    bool keep_blocks = false;
    /// --deps flow (the default): as count, and each task's dependency wakes are
    /// flow-controlled with a window of one traced hand-off: its k-th dependency wake in the
    /// trace's order, by whichever waker, waits until the task has passed its (k-1)-th
    /// dependency wait (a modelled "buffer full" wait; the wakee's pass wakes the waker). The
    /// window is the trace's: each traced wake ends a block the wakee is in, so no task ever
    /// has two dependency wakes outstanding there. The channel is the wakee's, shared by its
    /// wakers, as a reader's socket or pipe is shared by its writers (perf bench messaging:
    /// one per receiver, written by every sender of its group): a window per (waker, wakee)
    /// pair would let each of N wakers be one hand-off ahead at once. A model
    /// of the coupling a socket's or pipe's fill makes, which the trace does not record; not
    /// the kernel's (docs/replay.md, "Flow control per wakee"). False for --deps count, edge
    /// and keep.
    bool flow = true;
    /// --deps reply: as flow, but for the trace's request-reply pairs (replay_step::request
    /// and reply) the requester's wait for its reply is the flow control: a request is not
    /// held, and a reply waits until the request it answers has been made (the one of the
    /// same index among the requester's requests to the replier), never running ahead of it.
    /// docs/replay.md, "Requests and replies". False for the other --deps modes.
    bool reply_deps = false;
    /// --sync-wakes: a dependency wake is a WF_SYNC wakeup (the waker will sleep soon), as
    /// pipe_write() and a unix socket's sock_def_readable() make; a trace does not say which
    /// wakings were sync. Default: plain wakeups (wake_flags 0).
    bool sync_wakes = false;
    /// --softirq-wakes: a sched_waking in softirq context while a selected task is current on
    /// the CPU (the flags' third character 's') is that task's wake, a dependency edge like
    /// one in process context, not an external arrival (the default). A softirq that a task's
    /// own local_bh_enable() runs (net/core/dev.c __dev_queue_xmit(): rcu_read_unlock_bh()
    /// -> do_softirq()) does its work: loopback TCP's receive (loopback_xmit() queues the
    /// packet on the sending CPU's backlog, net_rx_action() delivers it and
    /// sock_def_readable() wakes the reader) is the sender's send. A softirq run at an
    /// interrupt's exit while the task happened to be current is not, and the trace cannot
    /// tell the two apart: the option is the user's claim that the first kind dominates
    /// (docs/replay.md, "The tbench traces").
    bool softirq_wakes = false;
    /// --rt-policy rr: a task traced at an RT prio (0-98) replays as SCHED_RR, not
    /// SCHED_FIFO (the default): sched_switch and sched_waking print p->prio only, the same
    /// 99 - rt_priority for either policy, so a trace cannot tell them apart.
    bool rt_rr = false;
    /// --wakee-flips N: the wakee_flips (record_wakee()'s count, which wake_wide() reads) each
    /// replayed task that the trace does not show forked by a replayed task starts with: its
    /// flips from before the trace, which no tracepoint records. A child forked in the replay
    /// inherits its parent's (kernel::fork(), as dup_task_struct() copies them).
    /// --wakee-flips trace (infer_wakee_flips, the default): each such task's own count, read
    /// from its first wakeups in the trace (replay_flips.h), 0 where they do not tell it.
    /// docs/replay.md, "The wake-all's turn is wake_wide()".
    u32 root_wakee_flips = 0;
    bool infer_wakee_flips = true;
    /// --quiet: no progress on stderr while the trace is read (shown only on a terminal).
    /// Not part of the run's identity.
    bool quiet = false;
};

/// One step of a rebuilt task behaviour, in the traced machine's time.
struct replay_step {
    enum kind_t : u8 {
        run,         ///< consume `ns` of CPU (before --speed)
        wake,        ///< wake task `pid` (signal the this->pid counter): a dependency edge, the
                     ///< `k`-th dependency wake of `pid` in the trace's order (from any waker);
                     ///< `flags`: its part in a request-reply pair
        wait,        ///< wait until the pid->this counter reaches `k`: the k-th wake of this
                     ///< task by task `pid` that ended a block
        sleep,       ///< a timed sleep of `ns`
        sleep_until, ///< an external arrival: sleep until `ns` after the trace's start
        fork,        ///< fork task `pid`
        exit,
        /// a wakeup, in this task's context or by an interrupt while it ran, of task `pid`,
        /// which is not replayed (outside the selection): a fair task allowed on more than
        /// one CPU, as far as the trace tells (not a per-CPU kernel thread by its comm).
        /// Replayed as the record_wakee() of that wakeup only (syscalls::record_absent_wakee).
        wake_absent,
        pending, ///< a block whose cause is not read yet (never in a finished trace)
    } kind = run;
    s64 ns = 0;
    int pid = -1;
    u64 k = 0;
    /// A wake step's part in a request-reply pair of the trace (both may be set): T was
    /// blocked, X's dependency wake of T ended that block (X's step: a request), and T's
    /// first dependency wake of X after it, before T blocked or exited again, is the reply
    /// (T's step). Read from the trace alone; only --deps reply replays them differently.
    enum flag_t : u8 { request = 1, reply = 2 };
    u8 flags = 0;
};

/*
 * A task's steps, stored compactly and read in order: each step is a kind byte and LEB128
 * varints (zigzag for signed values), about 4 bytes a step against replay_step's 32. The
 * replayed task decodes its next step when it reaches it (replay_workload::run_task), so a
 * run holds no op list per task: on bench/gen_ftrace.py's 1 GB trace the op lists of every
 * task were 3.9 GB (docs/replay.md, "Large traces").
 */
class replay_steps {
public:
    void push(const replay_step& s);
    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    std::size_t bytes() const { return code_.size(); }
    void shrink_to_fit() { code_.shrink_to_fit(); }
    /// Every step, decoded (tests, small traces).
    std::vector<replay_step> decode() const;

    /// Reads the steps in order.
    class cursor {
    public:
        explicit cursor(const replay_steps& s) : s_(&s) {}
        /// The next step into `s`; false after the last.
        bool next(replay_step& s);

    private:
        const replay_steps* s_;
        std::size_t at_ = 0;
    };

private:
    std::vector<u8> code_;
    std::size_t n_ = 0;
};

struct replay_task {
    int pid = 0;
    std::string comm; ///< the last comm the trace gave it
    int parent = -1;  ///< the selected task that forked it, -1 for a root
    int first_cpu = 0;
    /// The task's prio as the trace's event fields give it (p->prio: 120 + nice for a fair
    /// task, below 100 for an RT one, -1 for a deadline one), the first seen; ftrace_no_prio
    /// if no event gave one.
    int prio = ftrace_no_prio;
    bool prio_changed = false; ///< another prio later in the trace (not replayed)
    sim_dur start = 0;         ///< roots: when the task starts, from the trace's start
    replay_steps steps;
};

/// Why blocks ended (see the file comment).
struct replay_causes {
    u64 dependency = 0, timer = 0, external = 0, unknown = 0;
    u64 non_blocking_wakings = 0; ///< wakings of a selected task that was not blocked
    /// Wakings of tasks not replayed by a replayed one (its context, or an interrupt while it
    /// was current): the wake_absent steps; and of those, the ones left out because the
    /// wakee is a per-CPU kernel thread or not a fair task (no select_task_rq_fair()).
    u64 absent_wakes = 0, absent_wakes_skipped = 0;
    /// Of the causes above, wakings recorded before the switch out of the block they end:
    /// the waker ran while the task was inside __schedule() (its last own event before).
    u64 early = 0;
    /// Request-reply pairs (replay_step::request and reply): dependency wakes of a task
    /// that answered, within the burst it started, the dependency wake of it by its wakee.
    u64 replies = 0;
    /// Of those, replies the trace implies without a waking: the requester, preempted by its
    /// replier, was runnable when the reply came (builder::implied_reply in replay.cc).
    u64 implied_replies = 0;
};

/// A trace read for replay: the selected tasks' behaviour and the trace's statistics.
struct replay_trace {
    std::string path;
    std::string sha256; ///< of the file's bytes (trace_file_sha256): the trace's identity
    int nr_cpus = 0; ///< of the traced machine
    /// Where an idle-to-task switch was not recorded, it is placed this long after the idle
    /// CPU's last event: the median delay where such switches are recorded (-1: none).
    sim_dur idle_switch_delay = -1;
    sim_time t0 = 0, t1 = 0;        ///< the replayed window: the selected tasks' first and
                                    ///< last events (trace timestamps)
    std::vector<replay_task> tasks; ///< in order of first appearance
    replay_causes causes;
    sched_summary_result summary; ///< the trace's statistics, selected tasks only
    ftrace_parse_stats parse;
    sched_trace_quirks quirks;
    std::vector<std::string> warnings; ///< what was handled, for the user to see
    /// Tasks traced at a deadline prio (-1): replayed as nice-0 SCHED_NORMAL tasks, since no
    /// scheduler tracepoint carries a deadline task's runtime, deadline or period; the
    /// replay's report says so in a WARNING line.
    u64 deadline_tasks = 0;
    /// The selected tasks that existed before the window (not forked in it), by how each is
    /// first seen: a trace cut out of a longer recording (or started while they ran) begins
    /// with them mid-run. `running`: first seen as the task current on a CPU (its CPU time
    /// before that event is not replayed: at most `running_unseen` ns in all, from the
    /// window's start); `runnable`: first seen switched in with no waking of it in the window
    /// (it was woken, or preempted, before the window: replayed runnable from the start);
    /// `asleep`: first seen woken (replayed blocked from the start until that waking).
    struct {
        u64 running = 0, runnable = 0, asleep = 0;
        sim_dur running_unseen = 0;
    } before_window;
    /// sched_waking events in the trace (of any task): without any, no block has a cause
    /// and the trace's waking->run latencies and wakeup targets are unknown.
    u64 sched_waking_events = 0;
    /// The times (from t0) of the window's events in softirq context (the flags column's
    /// 's'), the first replay_softirq_kept of them: where the traced kernel's ticks fell
    /// (replay_tick_phase()).
    std::vector<sim_time> softirq_events;
    /// The tasks not forked by a selected task whose first wakeups of their family tell their
    /// wakee_flips at the start (replay_flips.h), with that evidence.
    std::vector<flips_root> flips_roots;
};

/// How many softirq-context events replay_trace::softirq_events keeps.
inline constexpr std::size_t replay_softirq_kept = 1u << 16;

/// The phase (ns from the replay's time 0, in [0, tick)) of the traced kernel's tick grid for a
/// tick of `tick` ns, from the trace's softirq-context events, or -1 where they show none.
/// model: a tick's interrupt ends in the softirqs it raised (RCU's, the timer wheel's), whose
/// wakeups the trace records in softirq context a few us after the tick; the ticks of every
/// CPU share one grid (tick_sched_timer() on jiffy boundaries, no skew_tick). The grid is the
/// 100 us window of phases (mod tick) that holds the most of those events, taken when it holds
/// at least half of them and 8 or more (other interrupts' softirqs, e.g. loopback networking's
/// in task context, fall at any phase: a trace they dominate shows no grid); the phase is that
/// window's 10th percentile event.
sim_time replay_tick_phase(const replay_trace& t, sim_dur tick);

/// The nice a task replays at: its traced prio - 120 for a fair task's prio, else 0.
int replay_nice(const replay_task& t);

/// How a task replays, from its traced prio (p->prio): 0-98 an RT task (SCHED_FIFO, or
/// SCHED_RR with --rt-policy rr) at rt_priority 99 - prio; 100-139 SCHED_NORMAL at nice
/// prio - 120; anything else (-1: SCHED_DEADLINE, 99, or no prio) SCHED_NORMAL at nice 0.
struct replay_sched {
    int policy = 0; ///< SCHED_NORMAL
    int rt_priority = 0;
    int nice = 0;
    bool operator==(const replay_sched&) const = default;
};
replay_sched replay_sched_of(const replay_task& t, const replay_options& o);

/// True for the comm of a kernel thread (kworker/, ksoftirqd/, rcu_, migration/, ...).
bool kernel_thread_comm(std::string_view comm);

/// Hashes `path` (trace_file_sha256), reads it (two streaming passes) and rebuilds the selected
/// tasks; config_error naming the file and line, or the option, on bad input.
replay_trace load_replay_trace(const std::string& path, const replay_options& o);

/// The replay workload: argv after "replay": TRACE [--comm REGEX] [--speed F].
class replay_workload final : public workload {
public:
    replay_workload(std::shared_ptr<const replay_trace> trace, replay_options o);

    std::string name() const override { return "replay"; }
    std::string command_line() const override;
    /// The same trace and options, for another run: the trace is not read again.
    std::unique_ptr<workload> fresh() const override;
    /// "replay sha256:HEX" and the options: the trace by content, not by path.
    std::string content_identity() const override;
    void setup(syscalls& sys) override;
    bool finished() const override;
    /// Every task left waits on a dependency wake or a flow-control hold that no task can
    /// make any more (a trace whose events contradict each other: see replay.cc).
    std::string stalled() const override;
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;
    /// The traced kernel's tick grid (replay_tick_phase()), 0 where the trace shows none.
    u64 tick_phase_ns(u64 tick_nsec) const override;

    const replay_trace& trace() const { return *trace_; }

private:
    /// The options as command_line() prints them (after the trace).
    std::string options_text() const;
    /// The report's line on the wakee_flips the tasks not forked by a replayed one start with.
    std::string wakee_flips_report() const;
    /// Task `idx`'s code: its steps as system calls, each decoded when the task reaches it.
    task_code run_task(task_context& t, std::size_t idx);
    /// run_task()'s run step `s`: the burst to run (--speed; --bursts net: net_burst(), with
    /// the exit's work looked ahead once per stretch of runs and wakes before the exit, in
    /// `looked_ahead` and `exit_work`), or nullopt for a traced burst that rounds to nothing.
    std::optional<sim_dur> run_step_burst(task_context& t, std::size_t idx, const replay_step& s,
                                          const replay_steps::cursor& cur, bool& looked_ahead,
                                          sim_dur& exit_work);
    /// run_task()'s wake_absent step: the waker's wake of traced pid `pid`, not replayed
    /// (syscalls::record_absent_wakee() on a stand-in task made on first use).
    void wake_absent(task_context& t, int pid);
    /// --bursts net: what a traced burst of `ns` leaves once the kernel work the simulation
    /// charged task `idx` since its previous run step is taken out: the work run and the
    /// work owed (`owed`: what the task's calls since then charged that it has not run yet,
    /// paid at the start of this burst).
    /// `also`: modelled work still to come (the exit's) taken out of this burst too, as far
    /// as it goes; what it took is subtracted from `also`.
    sim_dur net_burst(std::size_t idx, sim_dur ns, syscalls& sys, const task_struct& p,
                      sim_dur owed, sim_dur& also);
    /// The counter of the dependency edges from task `waker` to task `wakee` (by index).
    counter& edge(std::size_t waker, std::size_t wakee);
    /// p's CPU time so far, the part of its current run included.
    static sim_dur task_runtime(syscalls& sys, const task_struct& p);

    std::shared_ptr<const replay_trace> trace_;
    replay_options o_;
    workload_state state_;
    /// (waker, wakee); --deps count uses (wakee, wakee) for every waker.
    std::map<std::pair<std::size_t, std::size_t>, counter*> edges_;
    /// --deps flow, per task: the dependency waits it has passed (from every waker).
    std::vector<u64> passed_;
    /// --deps flow: the waker held until task `wakee` passes its n-th dependency wait, by
    /// (wakee, n); one at most (the wake of index n + 1 in the wakee's traced order).
    std::map<std::pair<std::size_t, u64>, std::size_t> holder_;
    /// --deps flow, per task: the counter it waits on while a wake it makes is held, made on
    /// first use (one per waker, not per hold: the run's counters stay bounded).
    std::vector<counter*> hold_;
    counter& hold_counter(std::size_t waker);
    std::unordered_map<int, std::size_t> pid_index_;
    /// The tasks not replayed that replayed ones woke (wake_absent steps), by traced pid:
    /// identities for the wakers' last_wakee, never queued (syscalls::record_absent_wakee).
    std::unordered_map<int, std::unique_ptr<task_struct>> absent_;
    u64 absent_wakes_run_ = 0; ///< wake_absent steps replayed
    /// Per task: its CPU time up to which the simulation's kernel work has been subtracted.
    std::vector<sim_dur> runtime_mark_;
    sim_dur kernel_subtracted_ = 0; ///< traced burst time replaced by modelled kernel work
    counter* exited_ = nullptr;
    sim_time last_exit_ = -1;
    /// Dependency waits that slept until their wake, and ones whose wake came first (the
    /// traced block lost; --deps keep: slept 1 ns anyway).
    u64 waits_slept_ = 0, waits_wake_first_ = 0;
    /// Of the waits whose wake came first, the ones that found later wakes of the task there
    /// too (its counter past the wait's target: two or more wakes outstanding at once).
    u64 waits_piled_ = 0;
    /// --deps flow: dependency wakes that waited for the wakee to pass its previous
    /// dependency wait.
    u64 flow_held_ = 0;
    /// --deps reply, per (requester, replier): the requests made and the replies made.
    struct pair_count {
        u64 requests = 0, replies = 0;
    };
    std::map<std::pair<std::size_t, std::size_t>, pair_count> replies_;
    /// --deps reply, per task: 1 + the index of the requester whose request its reply waits
    /// for (on its hold counter); 0 none.
    std::vector<std::size_t> awaiting_request_;
    /// --deps reply: reply steps replayed, and those that waited for their request.
    u64 replies_run_ = 0, replies_waited_ = 0;
    /// model: what each task waits on now, for stalled(): a dependency wait (its counter,
    /// the target, the traced waker's pid, the wait's number), a flow-control hold (its
    /// hold counter and target, the wakee's index, the wake's index k) or a reply's wait for
    /// its request (its hold counter, the requester's index); none while it runs, sleeps on
    /// a timer, or has not been forked or has exited.
    struct replay_wait {
        /// request: --deps reply, a reply step waiting for the request it answers.
        enum kind_t : std::uint8_t { none, dependency, held, request } kind = none;
        const counter* c = nullptr;
        u64 target = 0;
        /// dependency: the traced waker's pid; held, request: the wakee's index
        std::size_t other = 0;
        u64 n = 0; ///< dependency: the wait's number; held: the wake's k
        sim_time since = 0;
    };
    std::vector<replay_wait> waiting_;
    /// Per task: 0 not forked yet, 1 forked (spawned) and not exited, 2 exited.
    std::vector<std::uint8_t> life_;
    /// Per task not forked by a replayed one: the wakee_flips it starts with (--wakee-flips N,
    /// or read from the trace on this run's machine: infer_wakee_flips()).
    std::vector<u32> start_flips_;
};

/// Parses the replay's arguments; config_error names a bad one.
std::unique_ptr<workload> make_replay_workload(const std::vector<std::string>& args);

} // namespace schedlab
