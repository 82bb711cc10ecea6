// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf bench sched pipe: see perf_pipe.h.
 */
#include "workload/perf_pipe.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "workload/hackbench.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <climits>

namespace schedlab {

namespace {
const char* const where_pipe = "perf bench sched pipe";
const char* const comm_pipe = "sched-pipe"; // perf bench sets "<collection>-<bench>"
} // namespace

perf_pipe_params parse_perf_pipe_options(const std::vector<std::string>& args)
{
    perf_pipe_params pp;
    std::string variant = "classic";
    std::string cgroups;
    bool nonblocking = false;
    const std::vector<option_spec> specs = {
        {.short_name = 'l',
         .long_name = "loop",
         .uinteger = &pp.loops,
         .help = "Specify number of loops"},
        {.short_name = 'T',
         .long_name = "threaded",
         .flag = &pp.threaded,
         .help = "Specify threads/process based task setup"},
        {.long_name = "variant",
         .text = &variant,
         .help = "schedlab only, not a perf option: classic (read/write ping-pong, perf <= "
                 "early 2025) or 2025 (both tasks write then read)"},
        {.short_name = 'G',
         .long_name = "cgroups",
         .text = &cgroups,
         .unsupported = "task groups (cgroups) are not modelled yet"},
        {.short_name = 'n',
         .long_name = "nonblocking",
         .flag = &nonblocking,
         .unsupported = "O_NONBLOCK pipes with epoll are not modelled yet"},
    };
    parse_options(args, specs, where_pipe);
    if (pp.loops == 0)
        throw config_error(where_pipe, "option '-l/--loop' must be at least 1");
    if (variant == "classic")
        pp.variant = pipe_loop_variant::classic;
    else if (variant == "2025")
        pp.variant = pipe_loop_variant::v2025;
    else
        throw config_error(where_pipe, fmt::format("option '--variant' expects 'classic' or "
                                                   "'2025', got '{}'",
                                                   variant));
    return pp;
}

std::string perf_pipe_workload::command_line() const
{
    return fmt::format("perf bench sched pipe --loop {}{} --variant={}", pp_.loops,
                       pp_.threaded ? " --threaded" : "",
                       pp_.variant == pipe_loop_variant::classic ? "classic" : "2025");
}

/*
 * model: tools/perf/bench/sched-pipe.c bench_sched_pipe() and
 * worker_thread() (perf 6.x): pipe_1 carries task 1 -> task 0, pipe_2 task 0
 * -> task 1; gettimeofday(start) comes before the tasks are created. Process
 * mode: the main task forks task 0, runs task 1 itself, then waitpid()s.
 * Threaded: the main task creates both threads and joins them in order.
 * Each read loops on short reads (4 bytes arrive whole from a pipe anyway).
 */
void perf_pipe_workload::setup(syscalls& sys)
{
    pipe_1_ = &state_.make_pipe("pipe_1");
    pipe_2_ = &state_.make_pipe("pipe_2");
    if (pp_.threaded) {
        join_[0] = &state_.make_counter("td0/join", 0);
        join_[1] = &state_.make_counter("td1/join", 0);
    } else {
        chld_ = &state_.make_counter("wait_chldexit", WF_SYNC);
    }
    task_opts to;
    to.comm = comm_pipe;
    to.cpu = 0;
    main_ = &sys.spawn(make_task([this](task_context& t) { return run_main(t); }), to);
}

task_code perf_pipe_workload::run_main(task_context& t)
{
    const sim_time start = co_await t.gettime();
    state_.mark("start", start);
    if (pp_.threaded) {
        const fork_opts td0{.comm = comm_pipe, .thread = true, .notify = join_[0]};
        const fork_opts td1{.comm = comm_pipe, .thread = true, .notify = join_[1]};
        co_await t.fork([this](task_context& c) { return run_worker(c, 0); }, td0);
        co_await t.fork([this](task_context& c) { return run_worker(c, 1); }, td1);
        co_await t.wait_for(*join_[0], 1, &cost_params::wait_child);
        co_await t.wait_for(*join_[1], 1, &cost_params::wait_child);
    } else {
        const fork_opts child{.comm = comm_pipe, .thread = false, .notify = chld_};
        co_await t.fork([this](task_context& c) { return run_worker(c, 0); }, child);
        co_await run_worker(t, 1); // the main task is worker 1 itself
        co_await t.wait_for(*chld_, 1, &cost_params::wait_child);
    }
    const sim_time stop = co_await t.gettime();
    state_.mark("stop", stop);
}

// worker_thread(): `loops` round trips; worker 0 reads first (classic), 1 writes first.
task_code perf_pipe_workload::run_worker(task_context& t, int nr)
{
    const u64 sz = perf_pipe_params::msg_size;
    channel& rd = nr == 0 ? *pipe_1_ : *pipe_2_;
    channel& wr = nr == 0 ? *pipe_2_ : *pipe_1_;
    const bool read_first = nr == 0 && pp_.variant == pipe_loop_variant::classic;
    for (unsigned i = 0; i < pp_.loops; ++i) {
        if (read_first) {
            const bool got = co_await t.read(rd, sz);
            if (!got)
                break;
            co_await t.write(wr, sz);
        } else {
            co_await t.write(wr, sz);
            const bool got = co_await t.read(rd, sz);
            if (!got)
                break;
        }
    }
}

bool perf_pipe_workload::finished() const
{
    return state_.mark_time("stop").has_value();
}

std::optional<sim_dur> perf_pipe_workload::elapsed_usec() const
{
    const auto start = state_.mark_time("start");
    const auto stop = state_.mark_time("stop");
    if (!start || !stop)
        return std::nullopt;
    return *stop / NSEC_PER_USEC - *start / NSEC_PER_USEC;
}

std::vector<workload_metric> perf_pipe_workload::metrics() const
{
    const auto us = elapsed_usec();
    if (!us || pp_.loops == 0)
        return {};
    const double result_usec = static_cast<double>(*us);
    const double loops = static_cast<double>(pp_.loops);
    return {{"usecs/op", "us", result_usec / loops, false},
            {"ops/sec", "ops/s", result_usec > 0 ? loops / (result_usec / 1e6) : 0.0, true}};
}

std::string perf_pipe_workload::report() const
{
    std::string out = "# Running 'sched/pipe' benchmark:\n";
    out += fmt::format("# Executed {} pipe operations between two {}\n\n", pp_.loops,
                       pp_.threaded ? "threads" : "processes");
    const auto us = elapsed_usec();
    if (!us) {
        out += "# schedlab: not finished when the run stopped\n";
        return out;
    }
    out += perf_total_time_line(*us);
    out += "\n";
    const double result_usec = static_cast<double>(*us);
    const double loops = static_cast<double>(pp_.loops);
    out += fmt::format(" {:14.6f} usecs/op\n", loops > 0 ? result_usec / loops : 0.0);
    // perf: (int)(loops / (result_usec / USEC_PER_SEC)); guarded against 0 us here.
    const double ops = result_usec > 0 ? loops / (result_usec / 1e6) : 0.0;
    const int ops_i = ops >= static_cast<double>(INT_MAX) ? INT_MAX : static_cast<int>(ops);
    out += fmt::format(" {:14d} ops/sec\n", ops_i);
    return out;
}

std::unique_ptr<workload> make_perf_pipe_workload(const std::vector<std::string>& args)
{
    return std::make_unique<perf_pipe_workload>(parse_perf_pipe_options(args));
}

} // namespace schedlab
