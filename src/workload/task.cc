// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coroutine form of task behaviour and its system calls (see task.h).
 */
#include "workload/task.h"

#include "sim/bug.h"

#include <algorithm>
#include <utility>

namespace schedlab {

/* ------------------------------------------------------------------------ */
/* task_code: sub-routines                                                    */

std::coroutine_handle<> task_code::await_suspend(handle caller) noexcept
{
    promise_type& callee = h_.promise();
    callee.ctx = caller.promise().ctx;
    callee.parent = caller;
    callee.ctx->current_ = h_;
    return h_; // symmetric transfer: start the sub-routine at once
}

std::coroutine_handle<> task_code::promise_type::final_awaiter::await_suspend(handle h) noexcept
{
    promise_type& pr = h.promise();
    if (pr.parent) {
        pr.ctx->current_ = pr.parent;
        return pr.parent; // continue the caller
    }
    return std::noop_coroutine(); // the task's own coroutine ended: back to the runner
}

/* ------------------------------------------------------------------------ */
/* task_context                                                               */

sim_time task_context::now() const
{
    return sys_->now() + tail_;
}

const cost_params& task_context::costs() const
{
    return sys_->costs();
}

sim_dur task_context::charge(sim_dur base) const
{
    return sys_->charge(*p_, base);
}

/*
 * model: the return to user mode of a system call lies after its tail (the wakeups' cost
 * and the return path; see add_tail()), before the user-space code and the next call. The
 * default joins them in one burst; with a preemption model the tail (with what is owed)
 * is a kernel-mode burst of its own and the next burst starts past the return to user
 * (task_action::from_user), where exit_to_user_mode_loop() acts on need_resched. User-mode
 * work of no length after a tail (a replay's net burst of 0: its traced time was all the
 * kernel's) keeps that return as a burst of no length: the call's exit runs
 * exit_to_user_mode_loop() whatever the user code then does (kernel/entry/common.c, 6.18:
 * gfunkmonk/linux-6.18.2 062668f4d006).
 */
task_action task_context::cpu(sim_dur ns, bool user, bool might_resched_after)
{
    const sim_dur prefix = owed_ + tail_;
    owed_ = 0;
    tail_ = 0;
    if (!sys_->preempt_points())
        return task_action::cpu(ns + prefix);
    task_action a = task_action::cpu(ns);
    a.user = user;
    a.from_user = user || ret_pending_;
    a.returned = sys_returned_; // after the tail `k` below when there is one
    a.might_resched_after = might_resched_after;
    if (prefix > 0) {
        task_action k = task_action::cpu(prefix);
        k.user = false;
        k.from_user = false;
        if (ns <= 0 && !user)
            return k; // the return to user comes after it (ret_pending_ kept)
        // User-mode work of no length (a replayed net burst of 0) still starts past the
        // return to user mode: `a`, of no length, is that preemption point.
        ret_pending_ = false;
        sys_returned_ = false;
        next_ = a;
        return k;
    }
    ret_pending_ = false;
    sys_returned_ = false;
    return a;
}

/*
 * kernel: kernel/entry/common.c syscall_exit_to_user_mode() -> exit_to_user_mode_loop(), v6.18
 * (gfunkmonk/linux-6.18.2 062668f4d006): every system call returns to user mode through the
 * loop that calls schedule() on need_resched, so two system calls have a preemption point
 * between them under every preemption model. model: a call that starts with CPU time (its
 * entry cost) gets that point from its burst (cpu(): task_action::from_user); one that acts
 * first gets it from calls::return_point, which a caller puts before it where the two are
 * separate system calls (a replayed trace's wait after its wake: the wait's entry is in its
 * traced burst). Not put between a call's own parts (futex_wait()'s entry and its sleep_on:
 * one system call, no return between). A burst of no length; nothing when the last call was
 * user-mode work or without a preemption model.
 */
std::optional<task_action> task_context::return_point()
{
    if (!ret_pending_ || !sys_returned_ || !sys_->preempt_points())
        return std::nullopt;
    task_action a = task_action::cpu(0);
    a.user = false;
    a.from_user = true;
    a.returned = true;
    ret_pending_ = false;
    sys_returned_ = false;
    return a;
}

sim_dur task_context::wake_cost(int nr) const
{
    return nr > 0 ? sys_->charge(*p_, sys_->costs().wakeup * nr) : 0;
}

/*
 * model: one step of a wake-all's walk (struct wake_walk, channel.h): first the burst of the
 * cost of the wakee woken last (its costs().wakeup, jittered, after what the kernel charged
 * the CPU for its try_to_wake_up(): the scan, the rq lock and lines or the IPI's send, which
 * the CPU pays at the burst's start and at whose end a direct activation enqueues it,
 * kernel::ttwu_queue_direct()), then the next wakee's try_to_wake_up(). A wait queue's walk
 * runs under the queue's spin_lock_irqsave(): its bursts are task_action::nopreempt, but for
 * the cost of the entry before each bookmark break; a wake_up_q() walk is preemptible.
 * Differs: the kernel's try_to_wake_up() enqueues before the rest of its path; here the rest
 * (costs().wakeup) is paid after the enqueue, before the next wakee's selection.
 */
std::optional<task_action> task_context::walk_step()
{
    for (;;) {
        if (owed_ + tail_ > 0) {
            task_action a = cpu(0);
            a.nopreempt = walk_.nopreempt;
            // its end is a preempt_enable(): try_to_wake_up()'s in a wake_up_q() walk, the
            // lock's drop at a wait queue walk's bookmark or end
            a.preempt_enable_after = !walk_.nopreempt || walk_.next == walk_.pending.size();
            return a;
        }
        if (walk_.next == walk_.pending.size()) {
            walk_.reset();
            return std::nullopt;
        }
        const wake_walk::entry e = walk_.pending[walk_.next++];
        walk_.nopreempt = e.nopreempt;
        if (sys_->try_to_wake_up(*e.p, TASK_NORMAL, e.wake_flags))
            add_tail(wake_cost(1));
    }
}

int task_context::walk_finish()
{
    int woken = 0;
    for (; walk_.next < walk_.pending.size(); ++walk_.next) {
        const wake_walk::entry& e = walk_.pending[walk_.next];
        if (sys_->try_to_wake_up(*e.p, TASK_NORMAL, e.wake_flags))
            ++woken;
    }
    walk_.reset();
    owe(wake_cost(woken));
    return woken;
}

call_awaiter<calls::fork> task_context::fork(std::unique_ptr<task_behaviour> child,
                                             const fork_opts& opts)
{
    SIM_BUG_ON(opts.notify, "fork of a prepared behaviour with an exit notification: pass it to "
                            "make_task()");
    return call_awaiter<calls::fork>(*this, std::move(child), opts);
}

/* ------------------------------------------------------------------------ */
/* the system calls                                                           */

namespace calls {

std::optional<task_action> run::step(task_context& t)
{
    if (!started) {
        started = true;
        if (ns > 0 || t.owed() > 0 || t.tail() > 0)
            return t.cpu(ns, true);
    }
    t.user_work_done();
    return std::nullopt;
}

std::optional<task_action> syscall::step(task_context& t)
{
    if (started)
        return std::nullopt;
    started = true;
    return t.cpu(t.charge(base));
}

/*
 * model: fs/exec.c bprm_execve() (6.5): sched_exec() once the binary is open, then the rest of
 * the exec (costs().exec, all of it charged after the placement: the open before it is not
 * split out). If the stopper moves the task, the cost runs on the new CPU: the stopper's
 * event comes at the same instant as the burst's start and preempts it.
 */
std::optional<task_action> exec::step(task_context& t)
{
    if (started)
        return std::nullopt;
    started = true;
    t.sys().sched_exec(t.task());
    return t.cpu(t.charge(t.costs().exec));
}

// model: a vDSO gettimeofday(): the time is read at the end of its cost.
std::optional<task_action> gettime::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(t.costs().gettime));
    }
    now = t.now();
    return std::nullopt;
}

namespace {
/*
 * model: the part of a channel call's jittered CPU time `total` (of unjittered cost
 * `base`) spent holding its mutex: `locked` of `base`, scaled (no second draw from the
 * task's stream).
 */
sim_dur locked_share(sim_dur total, sim_dur base, sim_dur locked)
{
    if (base <= 0 || locked <= 0)
        return 0;
    return std::min(total, total * locked / base);
}

/// One attempt of mutex_lock(): nullopt once held, else the spin burst or the sleep.
std::optional<task_action> lock_step(task_context& t, mutex& m, mutex_waiter& w, sim_dur hold)
{
    sim_dur spin = 0;
    switch (m.lock(t.sys(), t.task(), w, hold, spin)) {
    case mutex::lock_result::acquired:
        return std::nullopt;
    case mutex::lock_result::spin: {
        task_action a = t.cpu(spin);
        if (!t.next_pending())
            a.spin = true; // else `a` is what was owed, before the spin (next_)
        else
            t.mark_next_spin();
        return a;
    }
    case mutex::lock_result::sleep:
        break;
    }
    return task_action::sleep();
}

/*
 * A write's first step: its entry + copy cost (`base`, jittered once; read::step splits
 * its copy off, below). With a mutex, only the part before mutex_lock() runs now;
 * `hold`, the jittered share of `locked`, runs once the mutex is taken (locked_part()).
 */
task_action start_call(task_context& t, const mutex* m, sim_dur base, sim_dur locked, phase& ph,
                       sim_dur& hold)
{
    const sim_dur total = t.charge(base);
    if (!m) {
        ph = phase::syscall;
        return t.cpu(total);
    }
    hold = locked_share(total, base, locked);
    ph = phase::lock;
    // kernel: mutex_lock() begins with might_sleep(), a might_resched() point (voluntary).
    return t.cpu(total - hold, false, true);
}

/// phase::lock: mutex_lock(), then the held part; nullopt once the call may act.
std::optional<task_action> locked_part(task_context& t, mutex& m, mutex_waiter& w, phase& ph,
                                       sim_dur& hold)
{
    if (auto a = lock_step(t, m, w, hold))
        return a;
    ph = phase::syscall;
    if (hold > 0)
        return t.cpu(std::exchange(hold, 0));
    return std::nullopt;
}
} // namespace

/*
 * write(): the channel's syscall (channel.h) after its entry + copy cost. With a mutex
 * (pipe->mutex), the cost is split: the entry runs first, then mutex_lock(), then the
 * held part, at whose end the call acts and unlocks (inside the channel's call, before
 * its wakeups). A call that sleeps on the channel takes the mutex again when woken.
 */
std::optional<task_action> write::step(task_context& t)
{
    mutex* const m = ch.io_mutex();
    if (ph == phase::fresh) {
        io = {.want = n};
        return start_call(t, m, ch.write_syscall_cost(t.costs(), n),
                          ch.write_locked_cost(t.costs(), n), ph, hold);
    }
    if (ph == phase::done)
        return std::nullopt;
    if (ph == phase::lock)
        if (auto a = locked_part(t, *m, mw, ph, hold))
            return a;
    io.nr_woken = 0;
    io.walk = &t.walk(); // a wake-all's wakees after the first: the runner walks them
    if (!ch.write(t.sys(), t.task(), io)) {
        t.owe(t.wake_cost(io.nr_woken));
        if (m)
            ph = phase::lock; // woken: mutex_lock() again, held for no modelled time
        return task_action::sleep();
    }
    ph = phase::done;
    t.add_tail(t.wake_cost(io.nr_woken));
    return std::nullopt;
}

/*
 * read(): the entry (and, with a mutex, the fixed part of the hold), then the check for
 * data; the copy only once data is there, for the bytes the attempt takes; then the call
 * acts. A read that must wait sleeps before its copy and pays it when woken.
 * kernel: fs/pipe.c pipe_read(), net/unix/af_unix.c unix_stream_read_generic() (its
 * recv_actor, unix_stream_read_actor(): skb_copy_datagram_msg()), net/ipv4/tcp.c
 * tcp_recvmsg_locked() (skb_copy_datagram_msg() after sk_wait_data()), net/ipv4/udp.c
 * udp_recvmsg() (the copy after __skb_recv_udp() has waited), v6.5 (sndrzt/linux-6.5
 * 4f5cdb332210): each finds data first (waiting when there is none) and copies only what it
 * found, up to the buffer. model: one draw of the task's jitter for the pass, as before; the
 * copy's share of it (copy_cost(left) of read_syscall_cost(left)) is held back and charged
 * after the check, scaled to the bytes found (read_ready()); for a pipe it runs under
 * pipe->mutex, after the held fixed part. A pass that finds `left` bytes at once costs what
 * it did in one burst, in two bursts ending where it did (on a core whose SMT sibling is busy
 * each is rounded up to a whole ns, so up to 1 ns later; the copy's end is inserted later, so
 * it fires after events due at the same ns inserted meanwhile: one burst for it moves
 * schedules, docs/performance.md). Differs: the fixed costs (pipe_read, socket_recv,
 * tcp_recv, udp_recv) are not split: all of each runs before the check
 * (tcp_recvmsg_locked()'s final tcp_cleanup_rbuf() and release_sock() come after the copy in
 * the kernel; no source gives their share). The attempt takes the bytes it found at
 * the check: data queued during the copy is left for the next pass (the kernel's socket
 * loops would take it; a pipe's writers wait for the mutex, so for pipes nothing differs);
 * another reader emptying a socket between the check and the act (no modelled workload has
 * two readers on one socket) makes the attempt wait and pay its copy again when woken.
 * perf's readers loop on short reads: each pass is a new read() syscall.
 * A recv(MSG_TRUNC) (task_context::recv_trunc()) on a channel that discards such reads
 * (TCP: tcp_recvmsg_locked() moves copied_seq on and frees the skbs without
 * skb_copy_datagram_msg() under MSG_TRUNC, 5.15.0, 6.5 and 6.18.2 alike) is charged
 * read_cost() alone (tcp_recv), its copy 0; lane faithfix.
 */
std::optional<task_action> read::step(task_context& t)
{
    mutex* const m = ch.io_mutex();
    if (ph == phase::fresh) {
        io = {.want = left};
        const cost_params& c = t.costs();
        // MSG_TRUNC on TCP: tcp_recvmsg_locked() skips skb_copy_datagram_msg()
        const bool discard = trunc && ch.discards_truncated();
        const sim_dur base = discard ? ch.read_cost(c) : ch.read_syscall_cost(c, left);
        const sim_dur total = t.charge(base);
        copy = discard ? 0 : locked_share(total, base, copy_cost(c, left));
        if (!m) {
            ph = phase::syscall;
            return t.cpu(total - copy);
        }
        // The hold's fixed part now; its copy part once data is found.
        hold = locked_share(total, base, ch.read_locked_cost(c, left)) - copy;
        ph = phase::lock;
        // kernel: mutex_lock() begins with might_sleep(), a might_resched() point (voluntary).
        return t.cpu(total - hold - copy, false, true);
    }
    if (ph == phase::done)
        return std::nullopt;
    if (ph == phase::lock)
        if (auto a = locked_part(t, *m, mw, ph, hold))
            return a;
    if (ph == phase::syscall) {
        io.want = left; // an attempt after a wait looks again for all it asks
        const u64 found = ch.read_ready(io);
        if (found > 0) {
            io.want = io.done + found; // the attempt takes what it found
            ph = phase::copy;
            const sim_dur c_left = copy_cost(t.costs(), left);
            const sim_dur ns =
                found == left || c_left <= 0 ? copy : copy * copy_cost(t.costs(), found) / c_left;
            if (ns > 0)
                return t.cpu(ns);
        }
    }
    io.nr_woken = 0;
    if (!ch.read(t.sys(), t.task(), io)) {
        t.owe(t.wake_cost(io.nr_woken));
        // woken: mutex_lock() again (no fixed part), then the check and the copy
        ph = m ? phase::lock : phase::syscall;
        return task_action::sleep();
    }
    t.add_tail(t.wake_cost(io.nr_woken));
    if (io.eof) {
        ph = phase::done;
        eof = true;
        return std::nullopt;
    }
    left -= io.done;
    if (left == 0) {
        ph = phase::done;
        return std::nullopt;
    }
    ph = phase::fresh; // a short read: the next read() pass, its entry cost after the tail
    io = {};
    return step(t);
}

std::optional<task_action> poll::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(t.costs().poll));
    }
    if (!ch.poll(t.sys(), t.task()))
        return task_action::sleep(); // do_poll(): woken, it polls again
    return std::nullopt;
}

std::optional<task_action> futex_wait::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(t.costs().futex_wait));
    }
    if (!waited && fx.val == expected) {
        fx.waiters.add_exclusive(t.task());
        waited = true;
        return task_action::sleep();
    }
    return std::nullopt; // -EAGAIN, or woken by futex_wake
}

std::optional<task_action> futex_wake::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(t.costs().futex_wake));
    }
    if (ph == phase::done)
        return std::nullopt;
    ph = phase::done;
    // kernel: futex_wake(), 6.5: the wakees are collected under hb->lock, then wake_up_q()
    const int woken = nr ? waiters.wake_up(t.sys(), static_cast<int>(nr), 0, &t.walk(), true) : 0;
    t.add_tail(t.wake_cost(woken));
    return std::nullopt;
}

std::optional<task_action> timeout::step(task_context& t)
{
    if (waited)
        return std::nullopt;
    waited = true;
    if (slack)
        t.sys().hrtimer_nanosleep(t.task(), ns);
    else
        t.sys().schedule_timeout(t.task(), ns);
    return task_action::sleep();
}

std::optional<task_action> nanosleep::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(t.costs().nanosleep));
    }
    if (waited)
        return std::nullopt;
    const sim_dur d = until >= 0 ? until - t.now() : ns;
    if (until >= 0 && d <= 0)
        return std::nullopt; // the time has passed: no sleep
    waited = true;
    if (slack)
        t.sys().hrtimer_nanosleep(t.task(), d);
    else
        t.sys().schedule_timeout(t.task(), d);
    return task_action::sleep();
}

std::optional<task_action> fork::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(opts.thread ? t.costs().fork_thread : t.costs().fork_process));
    }
    if (ph == phase::done)
        return std::nullopt;
    ph = phase::done;
    task_struct& p = t.task();
    task_opts to;
    to.comm = opts.comm.empty() ? p.comm : opts.comm;
    to.nice = p.static_prio_nice;
    to.policy = p.policy;
    to.rt_priority = p.rt_priority; // sched_fork(): a SCHED_FIFO/RR child keeps its parent's
    to.thread = opts.thread;
    if (opts.allowed.nr_cpu_ids())
        to.allowed = opts.allowed;
    created = &t.sys().fork(p, std::move(child), to);
    return std::nullopt;
}

std::optional<task_action> barrier_wait::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        return t.cpu(t.charge(t.costs().futex_wait));
    }
    if (ph == phase::done)
        return std::nullopt;
    if (!waited) {
        if (++b.arrived == b.parties) {
            b.arrived = 0;
            ++b.generation;
            const int nr = b.waiters.wake_up_all(t.sys(), 0, &t.walk(), true); // futex_wake()
            ph = phase::done;
            t.add_tail(t.charge(t.costs().futex_wake) + t.wake_cost(nr));
            return std::nullopt;
        }
        generation = b.generation;
        waited = true;
        b.waiters.add_exclusive(t.task());
        return task_action::sleep();
    }
    if (b.generation == generation) {
        b.waiters.add_exclusive(t.task());
        return task_action::sleep();
    }
    return std::nullopt;
}

// model: kernel/exit.c do_wait() (or a futex join): check, sleep, re-check.
std::optional<task_action> wait_for::step(task_context& t)
{
    if (ph == phase::fresh) {
        ph = phase::syscall;
        if (cost)
            return t.cpu(t.charge(t.costs().*cost));
    }
    if (c.value < (target_fn ? target_fn() : target)) {
        if (c.fifo)
            c.waiters.add_tail(t.task());
        else
            c.waiters.add(t.task());
        return task_action::sleep();
    }
    return std::nullopt;
}

/*
 * model: an event count + wake_up_all() of its waiters, walked in time (struct wake_walk).
 * kernel: a wait queue's __wake_up_common() under its lock (a parent's wait_chldexit, an accept
 * queue) or, for a futex's or SysV semaphore's waiters (counter::wake_q), wake_up_q() after the
 * lock (futex_wake(), do_semtimedop()), 6.5 (sndrzt/linux-6.5 4f5cdb332210).
 */
std::optional<task_action> signal::step(task_context& t)
{
    if (started)
        return std::nullopt;
    started = true;
    ++c.value;
    t.add_tail(t.wake_cost(c.waiters.wake_up_all(t.sys(), c.wake_flags, &t.walk(), c.wake_q)));
    return std::nullopt;
}

// model: close() of the last writer; only the wakeups it makes are charged (walked in time).
std::optional<task_action> close::step(task_context& t)
{
    if (started)
        return std::nullopt;
    started = true;
    t.add_tail(t.wake_cost(ch.close_write(t.sys(), &t.walk())));
    return std::nullopt;
}

std::optional<task_action> return_point::step(task_context& t)
{
    if (started)
        return std::nullopt;
    started = true;
    return t.return_point();
}

std::optional<task_action> yield::step(task_context&)
{
    if (started)
        return std::nullopt;
    started = true;
    return task_action::do_yield();
}

std::optional<task_action> sleep_on::step(task_context& t)
{
    if (slept)
        return std::nullopt;
    slept = true;
    if (exclusive)
        wq.add_exclusive(t.task());
    else
        wq.add(t.task());
    return task_action::sleep();
}

} // namespace calls

/* ------------------------------------------------------------------------ */
/* the runner                                                                 */

void coroutine_task::start(task_code code)
{
    SIM_BUG_ON(code.done(), "a task started with no code");
    code_ = std::move(code);
    code_.get().promise().ctx = &ctx_;
    ctx_.current_ = code_.get();
}

task_action coroutine_task::exit_step()
{
    if (exit_ == exit_phase::running) {
        exit_ = exit_phase::notify;
        // do_exit() starts with exit_signals(): PF_EXITING is set before the exit's work and
        // the wakeups of exit_notify() below.
        ctx_.sys().exit_signals(ctx_.task());
        return ctx_.cpu(ctx_.charge(ctx_.sys().exit_cost(ctx_.task())));
    }
    SIM_BUG_ON(exit_ != exit_phase::notify, "pid {} stepped after its exit", ctx_.task().pid);
    exit_ = exit_phase::exited;
    if (ctx_.at_exit_)
        ctx_.at_exit_();
    if (exit_notify_) {
        ++exit_notify_->value;
        exit_notify_->waiters.wake_up_all(ctx_.sys(), exit_notify_->wake_flags);
    }
    code_.reset(); // the task's frames go with it
    return task_action::do_exit();
}

/*
 * One call runs the task's user-space code up to its next system call and
 * steps that call, returning at the first action that consumes CPU, blocks
 * or exits; zero-cost calls complete in place.
 */
task_action coroutine_task::step(syscalls& sys, task_struct& p)
{
    ctx_.sys_ = &sys;
    ctx_.p_ = &p;
    if (ctx_.killed_ && exit_ == exit_phase::running && !code_.done()) {
        ctx_.call_ = nullptr; // abandon the call in progress (the workload dequeued the task)
        code_.reset();
        if (ctx_.walk_.active)
            ctx_.walk_finish();
    }
    if (ctx_.next_ && !ctx_.killed_) {
        const task_action a = *ctx_.next_;
        ctx_.next_.reset();
        return a;
    }
    ctx_.next_.reset();
    for (int guard = 0;; ++guard) {
        SIM_BUG_ON(guard > 10'000'000, "pid {} ({}): its code made no progress", p.pid, p.comm);
        // A wake-all's walk goes on before anything else the task does (struct wake_walk).
        if (ctx_.walk_.active)
            if (const std::optional<task_action> a = ctx_.walk_step())
                return *a;
        if (ctx_.call_) {
            // The previous call's tail, alone, before a call that acts first.
            if (ctx_.tail_ > 0 && !ctx_.call_->starts_with_cpu())
                return ctx_.cpu(0);
            if (const std::optional<task_action> a = ctx_.call_->step(ctx_)) {
                // A call that blocks or yields after a wake-all wakes the rest at once first.
                if (ctx_.walk_.active && a->kind != task_action::run)
                    ctx_.walk_finish();
                return *a;
            }
            ctx_.call_ = nullptr;
            ctx_.ret_pending_ = true; // the call returns to user mode (after its tail)
            ctx_.sys_returned_ = !std::exchange(ctx_.user_work_done_, false);
            if (ctx_.walk_.active)
                continue; // the walk, before the return to user mode
        }
        if (code_.done())
            return exit_step();
        ctx_.current_.resume();
        SIM_BUG_ON(!ctx_.call_ && !code_.done(), "pid {} ({}) suspended outside a system call",
                   p.pid, p.comm);
    }
}

} // namespace schedlab
