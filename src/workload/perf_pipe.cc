// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf bench sched pipe: see perf_pipe.h.
 */
#include "workload/perf_pipe.h"

#include "sched/core.h"
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
void perf_pipe_workload::setup(kernel& k)
{
    const u64 sz = perf_pipe_params::msg_size;
    pipe_channel& pipe_1 = state_.make_pipe("pipe_1");
    pipe_channel& pipe_2 = state_.make_pipe("pipe_2");

    auto worker = [&](program_builder& b, int nr) {
        channel& rd = nr == 0 ? pipe_1 : pipe_2;
        channel& wr = nr == 0 ? pipe_2 : pipe_1;
        b.loop(pp_.loops, [&](program_builder& body) {
            if (nr == 0 && pp_.variant == pipe_loop_variant::classic)
                body.read(rd, sz).write(wr, sz);
            else
                body.write(wr, sz).read(rd, sz);
        });
    };
    auto worker_program = [&](int nr) {
        program_builder b;
        worker(b, nr);
        b.exit();
        return b.build();
    };

    program_builder main;
    main.mark("start");
    if (pp_.threaded) {
        counter& join0 = state_.make_counter("td0/join", 0);
        counter& join1 = state_.make_counter("td1/join", 0);
        main.fork(worker_program(0), {.comm = comm_pipe, .thread = true, .notify = &join0});
        main.fork(worker_program(1), {.comm = comm_pipe, .thread = true, .notify = &join1});
        main.wait_for(join0, 1, &cost_params::wait_child);
        main.wait_for(join1, 1, &cost_params::wait_child);
    } else {
        counter& chld = state_.make_counter("wait_chldexit", WF_SYNC);
        main.fork(worker_program(0), {.comm = comm_pipe, .thread = false, .notify = &chld});
        worker(main, 1);
        main.wait_for(chld, 1, &cost_params::wait_child);
    }
    main.mark("stop");
    main.exit();

    task_opts to;
    to.comm = comm_pipe;
    to.cpu = 0;
    main_ = &k.spawn(make_program_task(main.build(), state_), to);
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
