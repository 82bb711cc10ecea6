// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Task programs: task behaviour as data, a small list of operations (run,
 * read, write, poll, futex, sleep, fork, exit, loops, ...) built with
 * program_builder, for behaviour that is data rather than code (tests,
 * generated or replayed workloads). run_program() executes one with the
 * system calls of task.h, the one form of task behaviour; benchmarks write
 * their roles as task_code coroutines directly.
 *
 * The shared objects a program touches (channels, futexes, barriers,
 * counters, marks) live in a workload_state that outlives the run; programs
 * hold plain pointers to them.
 */
#include "sched/syscalls.h"
#include "workload/channel.h"
#include "workload/task.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace schedlab {

class syscalls;
class program;
using program_ptr = std::shared_ptr<const program>;

/// The shared objects of one run, owned by the workload; they outlive the kernel's tasks.
class workload_state {
public:
    workload_state() = default;
    workload_state(const workload_state&) = delete;
    workload_state& operator=(const workload_state&) = delete;

    pipe_channel& make_pipe(std::string name);
    unix_stream_channel& make_socketpair(std::string name, unix_stream_params params = {});
    futex& make_futex(std::string name, u32 val = 0);
    barrier& make_barrier(std::string name, u32 parties);
    counter& make_counter(std::string name, int wake_flags = 0);
    /// Any other kind of channel (e.g. net.h's tcp_channel): make_channel<tcp_channel>("c2s").
    template <class C, class... Args> C& make_channel(std::string name, Args&&... args)
    {
        auto c = std::make_unique<C>(std::move(name), std::forward<Args>(args)...);
        C& r = *c;
        channels_.push_back(std::move(c));
        return r;
    }

    /// Records `name` at time t (a program's mark op: gettimeofday()).
    void mark(std::string name, sim_time t) { marks_.emplace_back(std::move(name), t); }
    /// The time of the last mark called `name`, if any.
    std::optional<sim_time> mark_time(const std::string& name) const;
    const std::vector<std::pair<std::string, sim_time>>& marks() const { return marks_; }

    const std::vector<std::unique_ptr<channel>>& channels() const { return channels_; }
    /// The run summary's line about its channels' mutexes (pipe->mutex), "" if none was
    /// taken: acquisitions, contended ones, spinning, sleeps and hand-offs, summed.
    std::string mutex_summary() const;
    const std::vector<std::unique_ptr<counter>>& counters() const { return counters_; }

private:
    std::vector<std::unique_ptr<channel>> channels_;
    std::vector<std::unique_ptr<futex>> futexes_;
    std::vector<std::unique_ptr<barrier>> barriers_;
    std::vector<std::unique_ptr<counter>> counters_;
    std::vector<std::pair<std::string, sim_time>> marks_;
};

/// User-space code run by a `user` op: returns the CPU time it took (0: none).
using user_fn = std::function<sim_dur(syscalls& sys, task_struct& p)>;
/// The condition of a `loop_while` / `break_if` op, evaluated in user space at no cost.
using loop_cond = std::function<bool(syscalls& sys, task_struct& p)>;
/// The absolute wake-up time of a `sleep_until` op.
using time_fn = std::function<sim_time(syscalls& sys, task_struct& p)>;

/// One operation of a program (a flat record; only the fields of its kind are used).
struct op {
    enum kind_t : u8 {
        run,          ///< consume `ns` of CPU
        run_uniform,  ///< consume a uniform duration in [ns, ns_hi]
        run_exp,      ///< consume an exponential duration of mean `ns`
        write,        ///< write `n` bytes to `ch` (blocking, all of them)
        read,         ///< read `n` bytes from `ch`, looping on short reads
        poll,         ///< poll(POLLIN) on `ch` until readable, consuming nothing
        futex_wait,   ///< futex_wait(fx, expected = n)
        futex_wake,   ///< futex_wake(fx, nr = n)
        futex_store,  ///< fx->val = n (a user-space store, no syscall)
        sleep,        ///< nanosleep(ns)
        fork,         ///< fork()/pthread_create() of `child`
        exit,         ///< exit(): signal the exit counter, do_exit()
        barrier_wait, ///< pthread_barrier_wait(bar)
        wait_for,     ///< sleep until ctr->value >= n (wait(), pthread_join())
        signal,       ///< ctr->value += 1 and wake its waiters
        mark,         ///< record now() under `name` (gettimeofday())
        yield,        ///< sched_yield()
        loop,         ///< repeat the ops up to the matching end_loop `n` times
        loop_while,   ///< repeat the ops up to the matching end_loop while `cond` holds
        end_loop,
        user,         ///< user-space code `fn` (bookkeeping, timestamps): no syscall
        close,        ///< close the writing end of `ch` (readers then see EOF)
        break_if,     ///< leave the innermost loop if `cond` holds
        sleep_until,  ///< clock_nanosleep(TIMER_ABSTIME) until the time `until` returns
        syscall,      ///< a syscall with no modelled effect: charges costs().*cost
    } kind;
    sim_dur ns = 0;
    sim_dur ns_hi = 0;
    u64 n = 0;
    channel* ch = nullptr;
    futex* fx = nullptr;
    barrier* bar = nullptr;
    counter* ctr = nullptr;
    program_ptr child;
    fork_opts child_opts;
    std::string name;
    user_fn fn;                           ///< user: the code
    loop_cond cond;                       ///< loop_while, break_if: the condition
    time_fn until;                        ///< sleep_until: the absolute time
    std::function<u64()> target;          ///< wait_for: a target evaluated at each check
    sim_dur cost_params::*cost = nullptr; ///< wait_for, syscall: the syscall cost charged per call
    std::size_t jump = 0;                 ///< loop: index of its end_loop; end_loop: of its loop
};

/// An immutable op list, shared by every task that runs it.
class program {
public:
    explicit program(std::vector<op> ops) : ops_(std::move(ops)) {}
    const std::vector<op>& ops() const { return ops_; }
    std::size_t size() const { return ops_.size(); }

private:
    std::vector<op> ops_;
};

/// Builds a program: program_builder().write(ch, 100).loop(10, [&](auto& b) { ... }).build().
class program_builder {
public:
    program_builder& run(sim_dur ns);
    program_builder& run_uniform(sim_dur lo, sim_dur hi);
    program_builder& run_exponential(sim_dur mean);
    program_builder& write(channel& ch, u64 bytes);
    program_builder& read(channel& ch, u64 bytes);
    program_builder& poll(channel& ch);
    program_builder& futex_wait(futex& f, u32 expected);
    program_builder& futex_wake(futex& f, u32 nr);
    program_builder& futex_store(futex& f, u32 val);
    program_builder& sleep(sim_dur ns);
    program_builder& fork(program_ptr child, fork_opts opts = {});
    program_builder& exit();
    program_builder& barrier_wait(barrier& b);
    /// Sleeps until c.value >= target; `cost` (e.g. &cost_params::wait_child) is charged per call.
    program_builder& wait_for(counter& c, u64 target, sim_dur cost_params::*cost = nullptr);
    /// The same, with a target evaluated at each check (it may grow meanwhile).
    program_builder& wait_for(counter& c, std::function<u64()> target,
                              sim_dur cost_params::*cost = nullptr);
    program_builder& signal(counter& c);
    program_builder& mark(std::string name);
    program_builder& yield();
    /// Repeats what `body` emits `count` times (count 0 skips it).
    program_builder& loop(u64 count, const std::function<void(program_builder&)>& body);
    /// The same as loop(), in two calls.
    program_builder& begin_loop(u64 count);
    program_builder& end_loop();
    /// Repeats `body` while `cond` holds, checked before every iteration
    /// (a `while (!done)` on a shared flag, or a deadline).
    program_builder& loop_while(loop_cond cond, const std::function<void(program_builder&)>& body);
    program_builder& begin_loop_while(loop_cond cond);
    /// Runs user-space code: `fn` executes when the op is reached and the
    /// task then consumes the CPU time it returns. For the bookkeeping a
    /// benchmark does between syscalls (counters, timestamps, histograms).
    program_builder& user(user_fn fn);
    /// close() of the writing end of `ch`: its readers see EOF once it is drained.
    program_builder& close(channel& ch);
    /// A syscall whose only modelled effect is its CPU cost, e.g. &cost_params::exec.
    program_builder& syscall(sim_dur cost_params::*cost);
    /// Leaves the innermost loop when `cond` holds (a "if (done) break;").
    program_builder& break_if(loop_cond cond);
    /// clock_nanosleep(TIMER_ABSTIME): sleeps until the time `until` returns
    /// (evaluated when the op starts); no sleep if that time has passed.
    program_builder& sleep_until(time_fn until);

    /// Finishes the program; unbalanced loops are a bug in the caller.
    program_ptr build();

private:
    program_builder& push(op o);
    std::vector<op> ops_;
    std::vector<std::size_t> open_loops_;
};

/*
 * Runs a program as a task's code, with the system calls of task.h: one
 * coroutine for every op list. A program that runs off its end exits, as if
 * it called exit(). A read that hits end-of-file (read() returns 0) leaves
 * the innermost loop, as the benchmarks' "if (n == 0) break;" does.
 */
task_code run_program(task_context& t, program_ptr prog, workload_state& state);
/// A task that runs `prog`; `exit_notify` (may be null) is signalled when it exits.
std::unique_ptr<task_behaviour> make_program_task(program_ptr prog, workload_state& state,
                                                  counter* exit_notify = nullptr);

} // namespace schedlab
