// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program builder and run_program() (see program.h).
 */
#include "workload/program.h"

#include "sched/syscalls.h"
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

std::string workload_state::mutex_summary() const
{
    mutex_stats st;
    u64 nr = 0;
    for (const auto& c : channels_)
        if (const auto* p = dynamic_cast<const pipe_channel*>(c.get())) {
            st += p->pipe_mutex().stats();
            ++nr;
        }
    if (st.acquisitions == 0)
        return "";
    return fmt::format("# pipe mutexes ({}): {} acquisitions, {} contended; {} spin bursts "
                       "({:.3f} ms spinning), {} sleeps, {} hand-offs, {} waiters woken\n",
                       nr, st.acquisitions, st.contended, st.spins,
                       static_cast<double>(st.spin_ns) / 1e6, st.sleeps, st.handoffs, st.wakeups);
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
    // model: every counter the workloads make with WF_SYNC stands for a wait queue woken
    // with __wake_up_sync_key() (a parent's wait_chldexit, a listener's accept queue), every
    // other one for a futex's or a SysV semaphore's waiters, which wake_up_q() wakes.
    c.wake_q = (wake_flags & WF_SYNC) == 0;
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
/* run_program: an op list as a task's code                                   */

/*
 * Each op is the system call of the same name (task.h), or user-space
 * control flow: loops, conditions and user code run at no cost, and the CPU
 * time a user op returns is consumed after it.
 */
task_code run_program(task_context& t, program_ptr prog, workload_state& state)
{
    const std::vector<op>& ops = prog->ops();
    struct open_loop {
        u64 left;          ///< iterations left (loop); unused by loop_while
        std::size_t begin; ///< index of the loop / loop_while op
    };
    std::vector<open_loop> loops; ///< the open loops, innermost last
    std::size_t pc = 0;
    // Leaves the innermost loop (after an EOF or a break_if): past its end_loop.
    auto break_loop = [&] {
        if (loops.empty())
            return; // not in a loop: the read just returns 0
        pc = ops[loops.back().begin].jump + 1;
        loops.pop_back();
    };

    while (pc < ops.size()) {
        const op& o = ops[pc++];
        switch (o.kind) {
        case op::run:
            co_await t.run(o.ns);
            break;
        case op::run_uniform:
            co_await t.run(t.rng().range(o.ns, o.ns_hi));
            break;
        case op::run_exp:
            co_await t.run(t.rng().exponential(o.ns));
            break;
        case op::write:
            co_await t.write(*o.ch, o.n);
            break;
        case op::read: {
            const bool got = co_await t.read(*o.ch, o.n);
            if (!got)
                break_loop(); // read() returned 0: the benchmark leaves its loop
            break;
        }
        case op::poll:
            co_await t.poll(*o.ch);
            break;
        case op::futex_wait:
            co_await t.futex_wait(*o.fx, static_cast<u32>(o.n));
            break;
        case op::futex_wake:
            co_await t.futex_wake(*o.fx, static_cast<u32>(o.n));
            break;
        case op::futex_store:
            o.fx->val = static_cast<u32>(o.n);
            break;
        case op::sleep:
            co_await t.sleep(o.ns);
            break;
        case op::fork:
            co_await t.fork([&](task_context& c) { return run_program(c, o.child, state); },
                            o.child_opts);
            break;
        case op::exit:
            co_return;
        case op::barrier_wait:
            co_await t.barrier_wait(*o.bar);
            break;
        case op::wait_for:
            if (o.target)
                co_await t.wait_for(*o.ctr, o.target, o.cost);
            else
                co_await t.wait_for(*o.ctr, o.n, o.cost);
            break;
        case op::signal:
            co_await t.signal(*o.ctr);
            break;
        case op::mark: {
            const sim_time now = co_await t.gettime();
            state.mark(o.name, now);
            break;
        }
        case op::yield:
            co_await t.yield();
            break;
        case op::loop:
            if (o.n == 0)
                pc = o.jump + 1;
            else
                loops.push_back({o.n, pc - 1});
            break;
        case op::loop_while:
            if (!o.cond(t.sys(), t.task()))
                pc = o.jump + 1;
            else
                loops.push_back({0, pc - 1});
            break;
        case op::end_loop: {
            SIM_BUG_ON(loops.empty(), "pid {}: end_loop at {} outside a loop", t.task().pid,
                       pc - 1);
            const op& head = ops[o.jump];
            const bool again = head.kind == op::loop_while ? head.cond(t.sys(), t.task())
                                                           : --loops.back().left > 0;
            if (again)
                pc = o.jump + 1;
            else
                loops.pop_back();
            break;
        }
        case op::user: {
            const sim_dur ns = o.fn(t.sys(), t.task());
            SIM_BUG_ON(ns < 0, "pid {}: user op at {} returned {} ns", t.task().pid, pc - 1, ns);
            co_await t.run(ns);
            break;
        }
        case op::syscall:
            co_await t.syscall(t.costs().*(o.cost));
            break;
        case op::break_if:
            if (o.cond(t.sys(), t.task()))
                break_loop();
            break;
        case op::sleep_until: {
            // clock_nanosleep(TIMER_ABSTIME): the time is taken after the entry cost.
            co_await t.syscall(t.costs().nanosleep);
            const sim_time when = o.until(t.sys(), t.task());
            if (when > t.now())
                co_await t.timeout(when - t.now());
            break;
        }
        case op::close:
            co_await t.close(*o.ch);
            break;
        }
    }
}

std::unique_ptr<task_behaviour> make_program_task(program_ptr prog, workload_state& state,
                                                  counter* exit_notify)
{
    SIM_BUG_ON(!prog, "a program task without a program");
    return make_task([&](task_context& t) { return run_program(t, std::move(prog), state); },
                     exit_notify);
}

} // namespace schedlab
