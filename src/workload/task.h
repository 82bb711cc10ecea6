// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The one form of task behaviour: a C++20 coroutine over system calls.
 *
 * A simulated task's user space is a coroutine taking its task_context:
 *
 *     task_code client(task_context& t, channel& c2s, channel& s2c)
 *     {
 *         for (;;) {
 *             co_await t.write(c2s, 100);            // write(): entry cost, effect, wakeups
 *             const bool got = co_await t.read(s2c, 100); // read(): false at end of file
 *             if (!got)
 *                 co_return;                         // exit(): the runner charges and notifies
 *             stats.count++;                         // user-space code between syscalls: free
 *         }
 *     }
 *     sys.spawn(make_task([&](task_context& t) { return client(t, c2s, s2c); }), opts);
 *
 * Two rules keep the code clear of GCC 12's coroutine bugs (both crash at
 * run time, seen with Debian's g++ 12.2):
 * - a co_await stands alone, as a statement (co_await t.run(ns);) or as the
 *   initialiser of a local (const bool got = co_await t.read(ch, n);); never
 *   inside a condition or a larger expression (if (!co_await ...) miscompiles);
 * - no temporary with a destructor is made inside a co_await's operand
 *   (co_await t.fork(f, fork_opts{...}) destroys the fork_opts twice): name
 *   such arguments first. The calls take their arguments by reference.
 * And as with any coroutine: a capturing lambda must not itself be a
 * coroutine (its frame would outlive the captures); make it call one.
 *
 * Every role of a benchmark is one function; each task has its own frame
 * (its locals are its state), so a thousand clients share one code path
 * instead of carrying a copy of an unrolled op list each. A coroutine may
 * co_await another task_code (a sub-routine such as schbench's fwait()).
 *
 * The system calls follow the kernel's contract (sched/syscalls.h): a syscall's CPU
 * cost is consumed first, its effect happens when that CPU time ends, and the
 * wakeups it made are charged (costs().wakeup each) right after, as the call's
 * tail, in one burst with the next call's entry cost (task_context::add_tail()).
 * model: fs/pipe.c pipe_write() (6.6) wakes rd_wait after __pipe_unlock(), the
 * last thing before its return; net/unix/af_unix.c unix_stream_sendmsg() calls
 * other->sk_data_ready() after queueing each skb; tcp_sendmsg() on loopback runs
 * the receive path and sk_data_ready() in the softirq at local_bh_enable(),
 * before send() returns (workload/net.h). The wakee becomes runnable at the end
 * of the copy, where the channel's call acts, and what the waker runs from there
 * to its next system call's effect (the rest of try_to_wake_up(), the return to
 * user space, the user-space code, the next call's entry and copy) is one
 * stretch of CPU time that no other CPU can observe: one burst, not two.
 * With a preemption model (the `+preempt=` kernel term) the tail is a kernel-mode
 * burst of its own, ended by the return to user mode, so that a reschedule waiting for
 * that return acts between the two (task_context::cpu(), sched/core.cc preempt_defers()).
 * Differs: user-space code with effects of its own (a workload's counters)
 * runs at the stretch's start, up to a wakeup cost early. A syscall
 * that must block queues the task and sleeps; when woken it retries where it
 * stopped, without paying the entry cost again. A read() pays its copy only once it
 * has found data (calls::read in task.cc): after the entry, or after its wakeup.
 * Each system call is written once, as a small state machine (a pending_call) that the runner
 * steps; the coroutine only resumes when its call has completed.
 *
 * Data-driven behaviour (program.h's op lists, later replayed traces) runs
 * through the same calls: run_program() is one coroutine that executes an
 * op list with them.
 */
#include "sched/syscalls.h"
#include "workload/channel.h"

#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace schedlab {

class syscalls;
class task_context;
struct task_opts;

/// A coroutine that is (part of) a task's user space: task_code f(task_context& t, ...).
class [[nodiscard]] task_code {
public:
    struct promise_type;
    using handle = std::coroutine_handle<promise_type>;

    struct promise_type {
        task_context* ctx = nullptr;
        std::coroutine_handle<> parent; ///< the coroutine awaiting this one (none: the task's own)

        task_code get_return_object() { return task_code(handle::from_promise(*this)); }
        std::suspend_always initial_suspend() noexcept { return {}; }
        /// Back to the awaiting coroutine, or (the task's outermost one) to the runner.
        struct final_awaiter {
            bool await_ready() noexcept { return false; }
            std::coroutine_handle<> await_suspend(handle h) noexcept;
            void await_resume() noexcept {}
        };
        final_awaiter final_suspend() noexcept { return {}; }
        void return_void() {}
        void unhandled_exception() { throw; }
    };

    task_code() = default;
    task_code(task_code&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    task_code& operator=(task_code&& o) noexcept
    {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    task_code(const task_code&) = delete;
    task_code& operator=(const task_code&) = delete;
    ~task_code() { reset(); }

    bool done() const { return !h_ || h_.done(); }
    handle get() const { return h_; }
    void reset()
    {
        if (h_)
            h_.destroy();
        h_ = {};
    }

    /// co_await of a sub-routine: runs it to its end, then continues the caller.
    bool await_ready() const noexcept { return done(); }
    std::coroutine_handle<> await_suspend(handle caller) noexcept;
    void await_resume() const noexcept {}

private:
    explicit task_code(handle h) : h_(h) {}
    handle h_;
};

/// One system call in progress, stepped by the runner until it completes.
class pending_call {
public:
    /// Advances the call at the current time: the action the task takes next
    /// (CPU time, sleep, yield), or nullopt once the call has completed.
    virtual std::optional<task_action> step(task_context& t) = 0;
    /// The call's first step only consumes CPU (its entry cost), with no effect before
    /// it: CPU time the previous call left to pay (task_context::tail()) can join it.
    virtual bool starts_with_cpu() const = 0;

protected:
    ~pending_call() = default;
};

/// The awaitable shape of every system call: suspends the coroutine and hands
/// the call to the runner; `Call` provides step() and result().
template <class Call> class call_awaiter final : public pending_call {
public:
    template <class... A>
    explicit call_awaiter(task_context& t, A&&... a) : t_(t), call_(std::forward<A>(a)...)
    {
    }
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<>) noexcept;
    auto await_resume() { return call_.result(); }
    std::optional<task_action> step(task_context& t) override { return call_.step(t); }
    bool starts_with_cpu() const override { return call_.starts_with_cpu(); }

private:
    task_context& t_;
    Call call_;
};

/// How a fork creates its child.
struct fork_opts {
    std::string comm;          ///< empty: inherit the parent's comm
    bool thread = false;       ///< clone(CLONE_VM|CLONE_THREAD...) (pthread_create) vs fork()
    counter* notify = nullptr; ///< signalled when the child exits (SIGCHLD / join futex)
    cpumask allowed; ///< empty: inherit the parent's affinity (else sched_setaffinity first)
};

/// A task behaviour from a coroutine factory: make_task([&](task_context& t) { return f(t, ...);
/// }).
template <class F>
std::unique_ptr<task_behaviour> make_task(F&& factory, counter* exit_notify = nullptr);

namespace calls {
/* The system calls' state machines (task.cc); use them through task_context. */
/*
 * A call's step: fresh (its entry cost next), lock (mutex_lock()), syscall (the call acts:
 * for read(), first its check for data), copy (read(): the copy's CPU time charged, the
 * call acts next), done.
 */
enum class phase : u8 { fresh, lock, syscall, copy, done };

struct run {
    explicit run(sim_dur ns) : ns(ns) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    sim_dur ns;
    bool started = false;
};
/// execve(): sched_exec() at its start (bprm_execve()), then costs().exec.
struct exec {
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    bool started = false;
};
struct syscall {
    explicit syscall(sim_dur base) : base(base) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    sim_dur base;
    bool started = false;
};
struct gettime {
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    sim_time result() const { return now; }
    phase ph = phase::fresh;
    sim_time now = 0;
};
struct write {
    write(channel& ch, u64 n) : ch(ch), n(n) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    channel& ch;
    u64 n;
    phase ph = phase::fresh;
    io_call io;
    mutex_waiter mw;  ///< taking the channel's io_mutex()
    sim_dur hold = 0; ///< CPU time to run holding it, once taken
};
struct read {
    read(channel& ch, u64 n, bool trunc = false) : ch(ch), left(n), trunc(trunc) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    bool result() const { return !eof; }
    channel& ch;
    u64 left;
    /// recv(MSG_TRUNC): a channel that discards such reads (channel::discards_truncated())
    /// charges no copy
    bool trunc;
    phase ph = phase::fresh;
    bool eof = false;
    io_call io;
    mutex_waiter mw;  ///< taking the channel's io_mutex()
    sim_dur hold = 0; ///< CPU time to run holding it, once taken (the fixed part's share)
    /// The jittered copy of `left` bytes (the share of the pass's one draw that
    /// copy_cost(left) is): charged, scaled to the bytes found, once data is there.
    sim_dur copy = 0;
};
struct poll {
    explicit poll(channel& ch) : ch(ch) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    channel& ch;
    phase ph = phase::fresh;
};
struct futex_wait {
    futex_wait(futex& fx, u32 expected) : fx(fx), expected(expected) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    futex& fx;
    u32 expected;
    phase ph = phase::fresh;
    bool waited = false;
};
struct futex_wake {
    futex_wake(wait_queue& waiters, u32 nr) : waiters(waiters), nr(nr) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    wait_queue& waiters;
    u32 nr;
    phase ph = phase::fresh;
};
struct timeout {
    timeout(sim_dur ns, bool slack) : ns(ns), slack(slack) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    sim_dur ns;
    bool slack; ///< the task's timer slack applies (hrtimer_nanosleep())
    bool waited = false;
};
struct nanosleep {
    /// `until` >= 0: clock_nanosleep(TIMER_ABSTIME) to that time; else sleep `ns`.
    /// `slack`: the task's timer slack applies (hrtimer_nanosleep()); else exactly `ns`.
    nanosleep(sim_dur ns, sim_time until, bool slack) : ns(ns), until(until), slack(slack) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    sim_dur ns;
    sim_time until;
    bool slack;
    phase ph = phase::fresh;
    bool waited = false;
};
struct fork {
    fork(std::unique_ptr<task_behaviour> child, const fork_opts& opts)
        : child(std::move(child)), opts(opts)
    {
    }
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    task_struct* result() const { return created; }
    std::unique_ptr<task_behaviour> child;
    fork_opts opts;
    phase ph = phase::fresh;
    task_struct* created = nullptr;
};
struct barrier_wait {
    explicit barrier_wait(barrier& b) : b(b) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return true; }
    void result() const {}
    barrier& b;
    phase ph = phase::fresh;
    bool waited = false;
    u64 generation = 0;
};
struct wait_for {
    wait_for(counter& c, u64 target, const std::function<u64()>& target_fn,
             sim_dur cost_params::*cost)
        : c(c), target(target), target_fn(target_fn), cost(cost)
    {
    }
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return cost != nullptr; }
    void result() const {}
    counter& c;
    u64 target;
    std::function<u64()> target_fn;
    sim_dur cost_params::*cost;
    phase ph = phase::fresh;
};
struct signal {
    explicit signal(counter& c) : c(c) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    counter& c;
    bool started = false;
};
struct close {
    explicit close(channel& ch) : ch(ch) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    channel& ch;
    bool started = false;
};
/// The return to user mode between two system calls, before one that acts first.
struct return_point {
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    bool started = false;
};
struct yield {
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    bool started = false;
};
struct sleep_on {
    sleep_on(wait_queue& wq, bool exclusive) : wq(wq), exclusive(exclusive) {}
    std::optional<task_action> step(task_context& t);
    bool starts_with_cpu() const { return false; }
    void result() const {}
    wait_queue& wq;
    bool exclusive;
    bool slept = false;
};
} // namespace calls

/*
 * A task's view of the kernel while its behaviour runs: the current time, its
 * own task_struct and random stream, CPU charging, and the system calls as
 * awaitables. One per task, owned by its coroutine_task.
 */
class task_context {
public:
    task_context() = default;
    task_context(const task_context&) = delete;
    task_context& operator=(const task_context&) = delete;

    /* ---- user space, no system call ---- */
    syscalls& sys() const { return *sys_; }
    task_struct& task() const { return *p_; }
    rng_stream& rng() const { return p_->rng; }
    sim_time now() const;
    const cost_params& costs() const;
    /// A syscall cost with the task's jitter applied (syscalls::charge()).
    sim_dur charge(sim_dur base) const;
    /// The CPU owed for `nr` wakeups (costs().wakeup each, jittered; 0 if none).
    sim_dur wake_cost(int nr) const;
    /// CPU time `ns` plus what earlier calls owed (wakeups made before a block)
    /// and the tail of the call before (see tail()).
    /// `user`: the burst is user-mode work (calls::run); else a system call's kernel part.
    /// With a preemption model (syscalls::preempt_points()) what is owed and the tail run as
    /// a kernel burst of their own, ended by the return to user mode, and `ns` after it.
    /// `might_resched_after`: the burst ends at a might_resched() (task_action).
    task_action cpu(sim_dur ns, bool user = false, bool might_resched_after = false);
    /// The return to user mode of the system call that completed, as a burst of no length
    /// (a preemption point), if one is pending (calls::return_point).
    std::optional<task_action> return_point();
    /// Adds CPU time the task pays at its next CPU burst (wakeups it made
    /// inside a call that then blocked, or in user-space code).
    void owe(sim_dur ns) { owed_ += ns; }
    sim_dur owed() const { return owed_; }
    /*
     * CPU time that ends a completed system call after its last effect (the
     * wakeups it made: the rest of try_to_wake_up() and the return to user
     * space). Nothing happens at its end, so the runner joins it to the next
     * call's entry cost in one burst (coroutine_task::step()) and pays it alone
     * only before a call that acts first (a sleep, a signal) or a yield. The
     * user-space code between the two calls runs at its start; now() reads
     * the time at its end, as that code would.
     */
    void add_tail(sim_dur ns) { tail_ += ns; }
    /// Called by calls::run as it completes: user-mode work ended, no system call, so no
    /// return to user mode follows it.
    void user_work_done() { user_work_done_ = true; }
    /// cpu() split off what was owed and holds the burst asked for, returned next.
    bool next_pending() const { return next_.has_value(); }
    /// That held burst is a mutex spin (task_action::spin).
    void mark_next_spin() { next_->spin = true; }
    sim_dur tail() const { return tail_; }
    /// The wake-all walk the task's calls hand their wakees to (struct wake_walk).
    wake_walk& walk() { return walk_; }

    /* ---- system calls (co_await them) ---- */
    /// Consumes `ns` of CPU (and what is owed); nothing if both are 0.
    call_awaiter<calls::run> run(sim_dur ns) { return call_awaiter<calls::run>(*this, ns); }
    /// A syscall whose only modelled effect is its CPU cost (jittered), e.g. costs().exec.
    call_awaiter<calls::syscall> syscall(sim_dur base)
    {
        return call_awaiter<calls::syscall>(*this, base);
    }
    /// execve() of a new binary: the kernel's sched_exec() (which may move the task to the
    /// idlest CPU through the stopper) at its start, then its cost (costs().exec, jittered).
    call_awaiter<calls::exec> exec() { return call_awaiter<calls::exec>(*this); }
    /// gettimeofday(): the time at the end of its cost.
    call_awaiter<calls::gettime> gettime() { return call_awaiter<calls::gettime>(*this); }
    /// write() of `n` bytes, blocking until all are written.
    call_awaiter<calls::write> write(channel& ch, u64 n)
    {
        return call_awaiter<calls::write>(*this, ch, n);
    }
    /// read() of `n` bytes, looping on short reads; false at end of file
    /// (read() returned 0: the benchmarks' "if (n == 0) break;").
    call_awaiter<calls::read> read(channel& ch, u64 n)
    {
        return call_awaiter<calls::read>(*this, ch, n);
    }
    /// recv(fd, buf, n, MSG_WAITALL|MSG_TRUNC) as read(): on a channel that discards
    /// truncated reads (a TCP socket: channel::discards_truncated()) the bytes are consumed
    /// without their copy; on any other, the same as read().
    call_awaiter<calls::read> recv_trunc(channel& ch, u64 n)
    {
        return call_awaiter<calls::read>(*this, ch, n, true);
    }
    /// poll(POLLIN) until readable (model: fs/select.c do_poll(): register, sleep, re-poll).
    call_awaiter<calls::poll> poll(channel& ch) { return call_awaiter<calls::poll>(*this, ch); }
    /// futex_wait(fx, expected) (model: kernel/futex/waitwake.c; see struct futex).
    call_awaiter<calls::futex_wait> futex_wait(futex& fx, u32 expected)
    {
        return call_awaiter<calls::futex_wait>(*this, fx, expected);
    }
    /// futex_wake(fx, nr).
    call_awaiter<calls::futex_wake> futex_wake(futex& fx, u32 nr)
    {
        return call_awaiter<calls::futex_wake>(*this, fx.waiters, nr);
    }
    /// futex_wake() of a futex word the workload keeps itself, whose waiters are `waiters`.
    call_awaiter<calls::futex_wake> futex_wake(wait_queue& waiters, u32 nr)
    {
        return call_awaiter<calls::futex_wake>(*this, waiters, nr);
    }
    /// nanosleep(ns) (model: kernel/time/hrtimer.c hrtimer_nanosleep(): arm, sleep, wake by the
    /// timer).
    call_awaiter<calls::nanosleep> sleep(sim_dur ns)
    {
        return call_awaiter<calls::nanosleep>(*this, ns, -1, true);
    }
    /// model: nanosleep(ns) whose timer fires exactly `ns` after it is armed (no slack): a
    /// replayed trace's timed sleep, whose traced length holds the real timer's slack.
    call_awaiter<calls::nanosleep> sleep_exact(sim_dur ns)
    {
        return call_awaiter<calls::nanosleep>(*this, ns, -1, false);
    }
    /// clock_nanosleep(TIMER_ABSTIME) until `when`, after the entry cost; no sleep if it has
    /// passed.
    call_awaiter<calls::nanosleep> sleep_until(sim_time when)
    {
        return call_awaiter<calls::nanosleep>(*this, 0, when, true);
    }
    /// The timer and sleep of a nanosleep() whose entry cost was paid already (its range
    /// is the task's timer slack, as hrtimer_nanosleep() sets it).
    call_awaiter<calls::timeout> timeout(sim_dur ns)
    {
        return call_awaiter<calls::timeout>(*this, ns, true);
    }
    /// model: a sleep of exactly `ns` (no slack): a replayed trace's sleep, whose traced
    /// length holds the real timer's slack already.
    call_awaiter<calls::timeout> timeout_exact(sim_dur ns)
    {
        return call_awaiter<calls::timeout>(*this, ns, false);
    }
    /// fork() / pthread_create() of a child running the code `factory` makes
    /// (factory(task_context&) -> task_code; opts.notify is signalled at its exit).
    /// model: kernel/fork.c kernel_clone(): the child starts at the end of the
    /// fork cost. Yields the child's task_struct.
    template <class F>
    requires std::is_invocable_r_v<task_code, F, task_context&> call_awaiter<calls::fork>
    fork(F&& factory, const fork_opts& opts)
    {
        auto child = make_task(std::forward<F>(factory), opts.notify);
        return call_awaiter<calls::fork>(*this, std::move(child), opts);
    }
    /// The same with a behaviour of another kind, which notifies its own exit.
    call_awaiter<calls::fork> fork(std::unique_ptr<task_behaviour> child, const fork_opts& opts);
    /// pthread_barrier_wait(b).
    call_awaiter<calls::barrier_wait> barrier_wait(barrier& b)
    {
        return call_awaiter<calls::barrier_wait>(*this, b);
    }
    /// Sleeps until c.value >= target (wait(), pthread_join(): check, sleep, re-check);
    /// `cost` (e.g. &cost_params::wait_child) is charged once, first.
    call_awaiter<calls::wait_for> wait_for(counter& c, u64 target,
                                           sim_dur cost_params::*cost = nullptr)
    {
        return call_awaiter<calls::wait_for>(*this, c, target, nullptr, cost);
    }
    /// The same, with a target evaluated at each check (it may grow meanwhile).
    call_awaiter<calls::wait_for> wait_for(counter& c, const std::function<u64()>& target,
                                           sim_dur cost_params::*cost = nullptr)
    {
        return call_awaiter<calls::wait_for>(*this, c, 0, target, cost);
    }
    /// c.value += 1 and wake its waiters (an event count).
    call_awaiter<calls::signal> signal(counter& c) { return call_awaiter<calls::signal>(*this, c); }
    /// close() of the writing end of `ch`: its readers see EOF once it is drained.
    call_awaiter<calls::close> close(channel& ch) { return call_awaiter<calls::close>(*this, ch); }
    /// sched_yield().
    call_awaiter<calls::yield> yield() { return call_awaiter<calls::yield>(*this); }
    /// The previous system call's return to user mode, as a preemption point of its own,
    /// before a call that acts first and is a separate system call (calls::return_point).
    call_awaiter<calls::return_point> return_to_user()
    {
        return call_awaiter<calls::return_point>(*this);
    }
    /// Queues the task on `wq` and sleeps until woken (the sleep half of a
    /// blocking call whose condition the caller checked).
    call_awaiter<calls::sleep_on> sleep_on(wait_queue& wq, bool exclusive = true)
    {
        return call_awaiter<calls::sleep_on>(*this, wq, exclusive);
    }

    /* ---- the task's end ---- */
    /// Runs when the task exits, after its exit cost and before its exit notification.
    void at_exit(std::function<void()> fn) { at_exit_ = std::move(fn); }
    /// Makes the task exit at its next step, wherever it is (a shutdown the
    /// workload drives; it removes the task from what it waits on itself).
    void kill() { killed_ = true; }

private:
    friend class coroutine_task;
    template <class Call> friend class call_awaiter;
    friend struct task_code::promise_type::final_awaiter;
    friend class task_code;

    syscalls* sys_ = nullptr;
    task_struct* p_ = nullptr;
    sim_dur owed_ = 0;
    sim_dur tail_ = 0;
    /// A call completed: a return to user mode lies after its tail (preemption models).
    bool ret_pending_ = false;
    /// ... and it was a system call, not user-mode work (calls::run): a real return to user
    /// mode (exit_to_user_mode_loop()) lies before the next burst (task_action::returned).
    bool sys_returned_ = false;
    /// The call that just completed was user-mode work (user_work_done()).
    bool user_work_done_ = false;
    /// The burst after a split-off tail (cpu()), returned at the next step.
    std::optional<task_action> next_;
    pending_call* call_ = nullptr;    ///< the system call in progress
    std::coroutine_handle<> current_; ///< the innermost running coroutine
    std::function<void()> at_exit_;
    bool killed_ = false;
    wake_walk walk_; ///< a wake-all's wakees left to wake, one per step (walk_step())
    /// The walk's next burst (the cost of the wakee woken last), or its next wakeup, or
    /// nullopt once it is over.
    std::optional<task_action> walk_step();
    /// Wakes the walk's remaining wakees at once (the task blocks, exits or is killed) and
    /// owes their cost: the number woken.
    int walk_finish();
};

template <class Call> void call_awaiter<Call>::await_suspend(std::coroutine_handle<>) noexcept
{
    t_.call_ = this;
}

/*
 * The runner: a task_behaviour that steps a task's coroutine and its system
 * calls. When the coroutine ends (or the task is killed) the task exits:
 * PF_EXITING (syscalls::exit_signals()), the exit cost (cpu_charges::exit_cost():
 * a process's or a thread's), then the at_exit hook, then its exit notification
 * wakes the waiters, then do_exit().
 * model: kernel/exit.c do_exit(): exit_signals() first, then exit_notify() wakes
 * the parent (do_notify_parent(), WF_SYNC, not sync for select_task_rq_fair() as
 * the waker is PF_EXITING) or the joiner (CLONE_CHILD_CLEARTID futex wake) before
 * the final schedule(); the wakeup cost is folded into the exit cost.
 */
class coroutine_task final : public task_behaviour {
public:
    explicit coroutine_task(counter* exit_notify = nullptr) : exit_notify_(exit_notify) {}
    task_context& context() { return ctx_; }
    void start(task_code code);

    task_action step(syscalls& sys, task_struct& p) override;
    bool exited() const { return exit_ == exit_phase::exited; }

private:
    enum class exit_phase : u8 { running, notify, exited };
    task_action exit_step();

    task_context ctx_;
    task_code code_;
    counter* exit_notify_;
    exit_phase exit_ = exit_phase::running;
};

template <class F> std::unique_ptr<task_behaviour> make_task(F&& factory, counter* exit_notify)
{
    auto b = std::make_unique<coroutine_task>(exit_notify);
    b->start(std::forward<F>(factory)(b->context()));
    return b;
}

} // namespace schedlab
