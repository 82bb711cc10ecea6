// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf bench sched messaging (hackbench): see hackbench.h.
 */
#include "workload/hackbench.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "workload/options.h"

#include <fmt/format.h>

namespace schedlab {

namespace {
const char* const where_messaging = "perf bench sched messaging";
const char* const comm_messaging = "sched-messaging"; // perf bench sets "<collection>-<bench>"
} // namespace

messaging_params parse_messaging_options(const std::vector<std::string>& args)
{
    messaging_params mp;
    const std::vector<option_spec> specs = {
        {.short_name = 'p',
         .long_name = "pipe",
         .flag = &mp.pipe,
         .help = "Use pipe() instead of socketpair()"},
        {.short_name = 't',
         .long_name = "thread",
         .flag = &mp.thread,
         .help = "Be multi thread instead of multi process"},
        {.short_name = 'g',
         .long_name = "group",
         .uinteger = &mp.groups,
         .help = "Specify number of groups"},
        {.short_name = 'l',
         .long_name = "nr_loops",
         .uinteger = &mp.loops,
         .help = "Specify the number of loops to run (default: 100)"},
    };
    parse_options(args, specs, where_messaging);
    if (mp.groups == 0)
        throw config_error(where_messaging, "option '-g/--group' must be at least 1");
    if (mp.loops == 0)
        throw config_error(where_messaging, "option '-l/--nr_loops' must be at least 1");
    // 2 x num_fds workers per group and the main task; 2.5 KB per task measured (3.4 KB with
    // -t), 4 KB used (docs/testing.md).
    check_task_count(
        static_cast<double>(mp.groups) * 2 * messaging_params::num_fds + 1, 4e3,
        fmt::format("{} groups x {} workers", mp.groups, 2 * messaging_params::num_fds),
        where_messaging);
    return mp;
}

std::string messaging_workload::command_line() const
{
    return fmt::format("perf bench sched messaging --group {} --nr_loops {}{}{}", mp_.groups,
                       mp_.loops, mp_.pipe ? " --pipe" : "", mp_.thread ? " --thread" : "");
}

/*
 * model: tools/perf/bench/sched-messaging.c bench_sched_messaging(), group(),
 * sender(), receiver(), ready(), reap_worker() (perf 6.x), task by task:
 * - main: creates "ready" and "wake" channels, then per group 20 receivers
 *   (each with its own channel) and 20 senders, in that order (fork() or
 *   pthread_create(): costs fork_process / fork_thread); reads one byte per
 *   worker from "ready"; gettimeofday(start); writes one byte to "wake";
 *   reaps every worker (wait() for any child, or pthread_join() in creation
 *   order: wait_child each); gettimeofday(stop).
 * - every worker: writes 1 byte to "ready", poll()s "wake".
 * - receiver: reads num_fds * loops messages of 100 bytes, looping on short reads.
 * - sender: for each loop, writes 100 bytes to each receiver of its group in turn.
 * Differs: the fd closes of process mode are not modelled (no cost).
 */
void messaging_workload::setup(syscalls& sys)
{
    const unsigned nfds = messaging_params::num_fds;
    auto fdpair = [&](const std::string& name) -> channel& {
        if (mp_.pipe)
            return state_.make_pipe(name);
        return state_.make_socketpair(name);
    };
    channel& ready = fdpair("ready");
    channel& wake = fdpair("wake");

    if (!mp_.thread) // exit_notify() -> __wake_up_parent(): a sync wakeup
        wait_chldexit_ = &state_.make_counter("wait_chldexit", WF_SYNC);
    for (unsigned g = 0; g < mp_.groups; ++g) {
        for (unsigned i = 0; i < nfds; ++i)
            group_channels_.push_back(&fdpair(fmt::format("group{}/fd{}", g, i)));
        if (mp_.thread) {
            // pthread_join(): futex on the CLONE_CHILD_CLEARTID word, no WF_SYNC.
            for (unsigned i = 0; i < nfds; ++i)
                exit_counters_.push_back(
                    &state_.make_counter(fmt::format("group{}/receiver{}/join", g, i), 0));
            for (unsigned i = 0; i < nfds; ++i)
                exit_counters_.push_back(
                    &state_.make_counter(fmt::format("group{}/sender{}/join", g, i), 0));
        }
    }
    if (wait_chldexit_)
        exit_counters_.push_back(wait_chldexit_);

    task_opts to;
    to.comm = comm_messaging;
    to.cpu = 0;
    main_ = &sys.spawn(make_task([&](task_context& t) { return run_main(t, ready, wake); }), to);
}

task_code messaging_workload::run_main(task_context& t, channel& ready, channel& wake)
{
    const unsigned nfds = messaging_params::num_fds;
    fork_opts fo;
    fo.comm = comm_messaging;
    fo.thread = mp_.thread;
    fo.notify = wait_chldexit_;
    std::size_t worker = 0; // thread mode: its join counter
    for (unsigned g = 0; g < mp_.groups; ++g) {
        for (unsigned i = 0; i < nfds; ++i) {
            channel& ch = *group_channels_[g * nfds + i];
            if (mp_.thread)
                fo.notify = exit_counters_[worker++];
            co_await t.fork([&](task_context& c) { return run_receiver(c, ready, wake, ch); }, fo);
        }
        for (unsigned i = 0; i < nfds; ++i) {
            if (mp_.thread)
                fo.notify = exit_counters_[worker++];
            co_await t.fork([&](task_context& c) { return run_sender(c, ready, wake, g); }, fo);
        }
    }

    const u64 total = nr_workers();
    for (u64 i = 0; i < total; ++i) {
        const bool got = co_await t.read(ready, 1);
        if (!got)
            break;
    }
    const sim_time start = co_await t.gettime();
    state_.mark("start", start);
    co_await t.write(wake, 1);
    if (mp_.thread) {
        for (counter* c : exit_counters_)
            co_await t.wait_for(*c, 1, &cost_params::wait_child);
    } else {
        for (u64 i = 0; i < total; ++i)
            co_await t.wait_for(*wait_chldexit_, i + 1, &cost_params::wait_child);
    }
    const sim_time stop = co_await t.gettime();
    state_.mark("stop", stop);
}

// receiver(): reads num_fds * loops messages, looping on short reads.
task_code messaging_workload::run_receiver(task_context& t, channel& ready, channel& wake,
                                           channel& ch)
{
    co_await t.write(ready, 1);
    co_await t.poll(wake);
    const u64 n = static_cast<u64>(messaging_params::num_fds) * mp_.loops;
    for (u64 i = 0; i < n; ++i) {
        const bool got = co_await t.read(ch, messaging_params::datasize);
        if (!got)
            break;
    }
}

// sender(): for each loop, one message to each receiver of its group in turn.
task_code messaging_workload::run_sender(task_context& t, channel& ready, channel& wake,
                                         unsigned group)
{
    const unsigned nfds = messaging_params::num_fds;
    co_await t.write(ready, 1);
    co_await t.poll(wake);
    for (unsigned l = 0; l < mp_.loops; ++l)
        for (unsigned i = 0; i < nfds; ++i)
            co_await t.write(*group_channels_[group * nfds + i], messaging_params::datasize);
}

bool messaging_workload::finished() const
{
    return state_.mark_time("stop").has_value();
}

u64 messaging_workload::nr_workers_exited() const
{
    u64 n = 0;
    for (const counter* c : exit_counters_)
        n += c->value;
    return n;
}

u64 messaging_workload::bytes_received() const
{
    u64 n = 0;
    for (const channel* ch : group_channels_)
        n += ch->stats().bytes_read;
    return n;
}

std::optional<sim_dur> messaging_workload::elapsed_usec() const
{
    const auto start = state_.mark_time("start");
    const auto stop = state_.mark_time("stop");
    if (!start || !stop)
        return std::nullopt;
    // gettimeofday() has microsecond resolution: each timestamp is truncated.
    return *stop / NSEC_PER_USEC - *start / NSEC_PER_USEC;
}

std::string perf_total_time_line(sim_dur usec)
{
    const sim_dur sec = usec / 1'000'000;
    const sim_dur msec = (usec % 1'000'000) / 1000; // truncated, like diff.tv_usec / USEC_PER_MSEC
    return fmt::format(" {:>14}: {}.{:03} [sec]\n", "Total time", sec, msec);
}

std::string messaging_workload::report() const
{
    const char* what = mp_.thread ? "threads" : "processes";
    std::string out = "# Running 'sched/messaging' benchmark:\n";
    out += fmt::format("# {} sender and receiver {} per group\n", messaging_params::num_fds, what);
    out += fmt::format("# {} groups == {} {} run\n\n", mp_.groups, nr_workers(), what);
    if (const auto us = elapsed_usec())
        out += perf_total_time_line(*us);
    else
        out +=
            fmt::format("# schedlab: not finished ({} of {} workers exited when the run stopped)\n",
                        nr_workers_exited(), nr_workers());
    return out;
}

std::vector<workload_metric> messaging_workload::metrics() const
{
    const auto us = elapsed_usec();
    if (!us)
        return {};
    // perf prints the time truncated to ms; the metric keeps the microseconds it measured.
    return {{"time", "s", static_cast<double>(*us) / 1e6, false}};
}

std::unique_ptr<workload> make_messaging_workload(const std::vector<std::string>& args)
{
    return std::make_unique<messaging_workload>(parse_messaging_options(args));
}

} // namespace schedlab
