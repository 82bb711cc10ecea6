// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program builder and interpreter (see program.h).
 */
#include "workload/program.h"

#include "sched/core.h"
#include "sim/bug.h"

#include <fmt/format.h>

namespace schedlab {

/* ------------------------------------------------------------------------ */
/* workload_state                                                             */

pipe_channel& workload_state::make_pipe(std::string name)
{
    auto c = std::make_unique<pipe_channel>(std::move(name));
    pipe_channel& r = *c;
    channels_.push_back(std::move(c));
    return r;
}

unix_stream_channel& workload_state::make_socketpair(std::string name, unix_stream_params params)
{
    auto c = std::make_unique<unix_stream_channel>(std::move(name), params);
    unix_stream_channel& r = *c;
    channels_.push_back(std::move(c));
    return r;
}

futex& workload_state::make_futex(std::string name, u32 val)
{
    futexes_.push_back(std::make_unique<futex>());
    futex& f = *futexes_.back();
    f.name = std::move(name);
    f.val = val;
    return f;
}

barrier& workload_state::make_barrier(std::string name, u32 parties)
{
    SIM_BUG_ON(parties == 0, "barrier {} with no parties", name);
    barriers_.push_back(std::make_unique<barrier>());
    barrier& b = *barriers_.back();
    b.name = std::move(name);
    b.parties = parties;
    return b;
}

counter& workload_state::make_counter(std::string name, int wake_flags)
{
    counters_.push_back(std::make_unique<counter>());
    counter& c = *counters_.back();
    c.name = std::move(name);
    c.wake_flags = wake_flags;
    return c;
}

std::optional<sim_time> workload_state::mark_time(const std::string& name) const
{
    for (auto it = marks_.rbegin(); it != marks_.rend(); ++it)
        if (it->first == name)
            return it->second;
    return std::nullopt;
}

/* ------------------------------------------------------------------------ */
/* program_builder                                                            */

program_builder& program_builder::push(op o)
{
    ops_.push_back(std::move(o));
    return *this;
}

program_builder& program_builder::run(sim_dur ns)
{
    SIM_BUG_ON(ns < 0, "run({}) with a negative duration", ns);
    return push({.kind = op::run, .ns = ns});
}

program_builder& program_builder::run_uniform(sim_dur lo, sim_dur hi)
{
    SIM_BUG_ON(lo < 0 || hi < lo, "run_uniform({}, {}) is not a range", lo, hi);
    return push({.kind = op::run_uniform, .ns = lo, .ns_hi = hi});
}

program_builder& program_builder::run_exponential(sim_dur mean)
{
    SIM_BUG_ON(mean < 0, "run_exponential({}) with a negative mean", mean);
    return push({.kind = op::run_exp, .ns = mean});
}

program_builder& program_builder::write(channel& ch, u64 bytes)
{
    SIM_BUG_ON(bytes == 0, "write of 0 bytes to {}", ch.name());
    return push({.kind = op::write, .n = bytes, .ch = &ch});
}

program_builder& program_builder::read(channel& ch, u64 bytes)
{
    SIM_BUG_ON(bytes == 0, "read of 0 bytes from {}", ch.name());
    return push({.kind = op::read, .n = bytes, .ch = &ch});
}

program_builder& program_builder::poll(channel& ch)
{
    return push({.kind = op::poll, .ch = &ch});
}

program_builder& program_builder::futex_wait(futex& f, u32 expected)
{
    return push({.kind = op::futex_wait, .n = expected, .fx = &f});
}

program_builder& program_builder::futex_wake(futex& f, u32 nr)
{
    return push({.kind = op::futex_wake, .n = nr, .fx = &f});
}

program_builder& program_builder::futex_store(futex& f, u32 val)
{
    return push({.kind = op::futex_store, .n = val, .fx = &f});
}

program_builder& program_builder::sleep(sim_dur ns)
{
    SIM_BUG_ON(ns < 0, "sleep({}) with a negative duration", ns);
    return push({.kind = op::sleep, .ns = ns});
}

program_builder& program_builder::fork(program_ptr child, fork_opts opts)
{
    SIM_BUG_ON(!child, "fork of a null program");
    op o{.kind = op::fork};
    o.child = std::move(child);
    o.child_opts = std::move(opts);
    return push(std::move(o));
}

program_builder& program_builder::exit()
{
    return push({.kind = op::exit});
}

program_builder& program_builder::barrier_wait(barrier& b)
{
    return push({.kind = op::barrier_wait, .bar = &b});
}

program_builder& program_builder::wait_for(counter& c, u64 target, sim_dur cost_params::*cost)
{
    op o{.kind = op::wait_for, .n = target, .ctr = &c};
    o.cost = cost;
    return push(std::move(o));
}

program_builder& program_builder::wait_for(counter& c, std::function<u64()> target,
                                           sim_dur cost_params::*cost)
{
    SIM_BUG_ON(!target, "wait_for without a target");
    op o{.kind = op::wait_for, .ctr = &c};
    o.cost = cost;
    o.target = std::move(target);
    return push(std::move(o));
}

program_builder& program_builder::signal(counter& c)
{
    return push({.kind = op::signal, .ctr = &c});
}

program_builder& program_builder::mark(std::string name)
{
    op o{.kind = op::mark};
    o.name = std::move(name);
    return push(std::move(o));
}

program_builder& program_builder::yield()
{
    return push({.kind = op::yield});
}

program_builder& program_builder::begin_loop(u64 count)
{
    open_loops_.push_back(ops_.size());
    return push({.kind = op::loop, .n = count});
}

program_builder& program_builder::end_loop()
{
    SIM_BUG_ON(open_loops_.empty(), "end_loop() without begin_loop()");
    const std::size_t begin = open_loops_.back();
    open_loops_.pop_back();
    ops_[begin].jump = ops_.size();
    return push({.kind = op::end_loop, .jump = begin});
}

program_builder& program_builder::begin_loop_while(loop_cond cond)
{
    SIM_BUG_ON(!cond, "loop_while without a condition");
    open_loops_.push_back(ops_.size());
    op o{.kind = op::loop_while};
    o.cond = std::move(cond);
    return push(std::move(o));
}

program_builder& program_builder::loop_while(loop_cond cond,
                                             const std::function<void(program_builder&)>& body)
{
    begin_loop_while(std::move(cond));
    body(*this);
    return end_loop();
}

program_builder& program_builder::user(user_fn fn)
{
    SIM_BUG_ON(!fn, "user op without code");
    op o{.kind = op::user};
    o.fn = std::move(fn);
    return push(std::move(o));
}

program_builder& program_builder::close(channel& ch)
{
    return push({.kind = op::close, .ch = &ch});
}

program_builder& program_builder::syscall(sim_dur cost_params::*cost)
{
    SIM_BUG_ON(!cost, "syscall op without a cost");
    op o{.kind = op::syscall};
    o.cost = cost;
    return push(std::move(o));
}

program_builder& program_builder::break_if(loop_cond cond)
{
    SIM_BUG_ON(!cond, "break_if without a condition");
    op o{.kind = op::break_if};
    o.cond = std::move(cond);
    return push(std::move(o));
}

program_builder& program_builder::sleep_until(time_fn until)
{
    SIM_BUG_ON(!until, "sleep_until without a time");
    op o{.kind = op::sleep_until};
    o.until = std::move(until);
    return push(std::move(o));
}

program_builder& program_builder::loop(u64 count, const std::function<void(program_builder&)>& body)
{
    begin_loop(count);
    body(*this);
    return end_loop();
}

program_ptr program_builder::build()
{
    SIM_BUG_ON(!open_loops_.empty(), "{} loop(s) left open", open_loops_.size());
    auto p = std::make_shared<const program>(std::move(ops_));
    ops_.clear();
    return p;
}

/* ------------------------------------------------------------------------ */
/* program_task: the interpreter                                              */

program_task::program_task(program_ptr prog, workload_state& state, counter* exit_notify)
    : prog_(std::move(prog)), state_(&state), exit_notify_(exit_notify)
{
    SIM_BUG_ON(!prog_, "program_task without a program");
}

void program_task::break_loop()
{
    if (loops_.empty())
        return; // not in a loop: the read just returns 0
    const std::size_t begin = loops_.back().begin;
    loops_.pop_back();
    pc_ = prog_->ops()[begin].jump + 1;
    phase_ = phase::fresh;
    started_ = false;
    waited_ = false;
    left_ = 0;
    io_ = {};
}

void program_task::advance()
{
    ++pc_;
    phase_ = phase::fresh;
    started_ = false;
    waited_ = false;
    left_ = 0;
    io_ = {};
}

task_action program_task::cpu(sim_dur ns)
{
    ns += owed_;
    owed_ = 0;
    return task_action::cpu(ns);
}

/*
 * model: kernel/exit.c do_exit(): the exit work is charged, then
 * exit_notify() wakes the parent (do_notify_parent(), WF_SYNC) or the joiner
 * (CLONE_CHILD_CLEARTID futex wake), then the final schedule(). The wakeup
 * cost is folded into the exit cost (kernel::exit_cost(): a process's exit or a
 * thread's).
 */
task_action program_task::do_exit_op(kernel& k, task_struct& p)
{
    if (phase_ == phase::fresh) {
        phase_ = phase::syscall;
        return cpu(k.charge(p, k.exit_cost(p)));
    }
    if (exit_notify_) {
        ++exit_notify_->value;
        exit_notify_->waiters.wake_up_all(k, exit_notify_->wake_flags);
    }
    exited_ = true;
    return task_action::do_exit();
}

/*
 * One call runs the task's zero-cost ops and returns at the first one that
 * consumes CPU, blocks or exits. Per op:
 * - write/read: the channel's syscall (channel.h) after its entry + copy cost.
 * - poll: model: fs/select.c do_poll(): register, sleep, re-poll when woken.
 * - futex_wait/futex_wake: model: kernel/futex/waitwake.c (see struct futex).
 * - sleep: model: kernel/time/hrtimer.c hrtimer_nanosleep(): arm, sleep, wake by the timer.
 * - fork: model: kernel/fork.c kernel_clone(): the child starts at the end of the fork cost.
 * - wait_for: model: kernel/exit.c do_wait() (or a futex join): check, sleep, re-check.
 * - signal: model: an event count + wake_up_all() of its waiters.
 * - mark: model: a vDSO gettimeofday(): the time is read at the end of its cost.
 * - user: model: user-space code between syscalls; runs at once, then its CPU time.
 * - close: model: close() of the last writer; only the wakeups it makes are charged.
 * - sleep_until: model: clock_nanosleep(TIMER_ABSTIME): the time is taken after the entry cost.
 */
task_action program_task::step(kernel& k, task_struct& p)
{
    const cost_params& costs = k.costs();
    const std::vector<op>& ops = prog_->ops();
    auto wake_cost = [&](int nr) -> sim_dur { return nr > 0 ? k.charge(p, costs.wakeup * nr) : 0; };

    for (int guard = 0;; ++guard) {
        SIM_BUG_ON(guard > 10'000'000, "pid {} ({}): program made no progress at op {}", p.pid,
                   p.comm, pc_);
        if (pc_ >= ops.size())
            return do_exit_op(k, p);
        const op& o = ops[pc_];

        switch (o.kind) {
        case op::run:
            advance();
            if (o.ns > 0 || owed_ > 0)
                return cpu(o.ns);
            continue;
        case op::run_uniform: {
            const sim_dur ns = p.rng.range(o.ns, o.ns_hi);
            advance();
            return cpu(ns);
        }
        case op::run_exp: {
            const sim_dur ns = p.rng.exponential(o.ns);
            advance();
            return cpu(ns);
        }

        case op::write:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                io_ = {.want = o.n};
                return cpu(k.charge(p, o.ch->write_syscall_cost(costs, o.n)));
            }
            io_.nr_woken = 0;
            if (!o.ch->write(k, p, io_)) {
                owed_ += wake_cost(io_.nr_woken);
                return task_action::sleep();
            }
            {
                const int nr = io_.nr_woken;
                advance();
                return cpu(wake_cost(nr));
            }

        case op::read:
            // perf's readers loop on short reads: each pass is a new read() syscall.
            if (!started_) {
                started_ = true;
                left_ = o.n;
            }
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                io_ = {.want = left_};
                return cpu(k.charge(p, o.ch->read_syscall_cost(costs, left_)));
            }
            io_.nr_woken = 0;
            if (!o.ch->read(k, p, io_)) {
                owed_ += wake_cost(io_.nr_woken);
                return task_action::sleep();
            }
            if (io_.eof) {
                // read() returned 0: the benchmark leaves its loop.
                const int nr = io_.nr_woken;
                advance();
                break_loop();
                if (nr > 0)
                    return cpu(wake_cost(nr));
                continue;
            }
            {
                const int nr = io_.nr_woken;
                left_ -= io_.done;
                if (left_ == 0) {
                    advance();
                } else {
                    phase_ = phase::fresh;
                    io_ = {};
                }
                return cpu(wake_cost(nr));
            }

        case op::poll:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.poll));
            }
            if (!o.ch->poll(k, p))
                return task_action::sleep(); // do_poll(): woken, it polls again
            advance();
            continue;

        case op::futex_wait:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.futex_wait));
            }
            if (!waited_ && o.fx->val == static_cast<u32>(o.n)) {
                o.fx->waiters.add_exclusive(p);
                waited_ = true;
                return task_action::sleep();
            }
            advance(); // -EAGAIN, or woken by futex_wake
            continue;

        case op::futex_wake: {
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.futex_wake));
            }
            const int nr = o.n ? o.fx->waiters.wake_up(k, static_cast<int>(o.n), 0) : 0;
            advance();
            return cpu(wake_cost(nr));
        }

        case op::futex_store:
            o.fx->val = static_cast<u32>(o.n);
            advance();
            continue;

        case op::sleep:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.nanosleep));
            }
            if (!waited_) {
                waited_ = true;
                k.schedule_timeout(p, o.ns);
                return task_action::sleep();
            }
            advance();
            continue;

        case op::fork: {
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(
                    k.charge(p, o.child_opts.thread ? costs.fork_thread : costs.fork_process));
            }
            task_opts to;
            to.comm = o.child_opts.comm.empty() ? p.comm : o.child_opts.comm;
            to.nice = p.static_prio_nice;
            to.policy = p.policy;
            to.thread = o.child_opts.thread;
            if (o.child_opts.allowed.nr_cpu_ids())
                to.allowed = o.child_opts.allowed;
            k.fork(p, std::make_unique<program_task>(o.child, *state_, o.child_opts.notify), to);
            advance();
            continue;
        }

        case op::exit:
            return do_exit_op(k, p);

        case op::barrier_wait: {
            barrier& b = *o.bar;
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.futex_wait));
            }
            if (!waited_) {
                if (++b.arrived == b.parties) {
                    b.arrived = 0;
                    ++b.generation;
                    const int nr = b.waiters.wake_up_all(k, 0);
                    advance();
                    return cpu(k.charge(p, costs.futex_wake) + wake_cost(nr));
                }
                generation_ = b.generation;
                waited_ = true;
                b.waiters.add_exclusive(p);
                return task_action::sleep();
            }
            if (b.generation == generation_) {
                b.waiters.add_exclusive(p);
                return task_action::sleep();
            }
            advance();
            continue;
        }

        case op::wait_for:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                if (o.cost)
                    return cpu(k.charge(p, costs.*(o.cost)));
            }
            if (o.ctr->value < (o.target ? o.target() : o.n)) {
                o.ctr->waiters.add(p);
                return task_action::sleep();
            }
            advance();
            continue;

        case op::signal: {
            ++o.ctr->value;
            const int nr = o.ctr->waiters.wake_up_all(k, o.ctr->wake_flags);
            advance();
            if (nr > 0)
                return cpu(wake_cost(nr));
            continue;
        }

        case op::mark:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.gettime));
            }
            state_->mark(o.name, k.now());
            advance();
            continue;

        case op::yield:
            advance();
            return {task_action::yield, 0};

        case op::loop:
            if (o.n == 0) {
                pc_ = o.jump + 1;
            } else {
                loops_.push_back({o.n, pc_});
                ++pc_;
            }
            continue;

        case op::loop_while:
            if (!o.cond(k, p)) {
                pc_ = o.jump + 1;
            } else {
                loops_.push_back({0, pc_});
                ++pc_;
            }
            continue;

        case op::end_loop: {
            SIM_BUG_ON(loops_.empty(), "pid {}: end_loop at {} outside a loop", p.pid, pc_);
            const op& head = ops[o.jump];
            const bool again =
                head.kind == op::loop_while ? head.cond(k, p) : --loops_.back().left > 0;
            if (again) {
                pc_ = o.jump + 1;
            } else {
                loops_.pop_back();
                ++pc_;
            }
            continue;
        }

        case op::user: {
            const sim_dur ns = o.fn(k, p);
            SIM_BUG_ON(ns < 0, "pid {}: user op at {} returned {} ns", p.pid, pc_, ns);
            advance();
            if (ns > 0 || owed_ > 0)
                return cpu(ns);
            continue;
        }

        case op::syscall:
            advance();
            return cpu(k.charge(p, costs.*(o.cost)));

        case op::break_if:
            if (o.cond(k, p)) {
                advance();
                break_loop();
            } else {
                advance();
            }
            continue;

        case op::sleep_until:
            if (phase_ == phase::fresh) {
                phase_ = phase::syscall;
                return cpu(k.charge(p, costs.nanosleep));
            }
            if (!waited_) {
                const sim_time when = o.until(k, p);
                if (when > k.now()) {
                    waited_ = true;
                    k.schedule_timeout(p, when - k.now());
                    return task_action::sleep();
                }
            }
            advance();
            continue;

        case op::close: {
            const int nr = o.ch->close_write(k);
            advance();
            if (nr > 0)
                return cpu(wake_cost(nr));
            continue;
        }
        }
        SIM_BUG_ON(true, "pid {}: unknown op kind {}", p.pid, static_cast<int>(o.kind));
    }
}

} // namespace schedlab
