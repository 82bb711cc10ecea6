// SPDX-License-Identifier: GPL-2.0-only
/*
 * STREAM with OpenMP threads: see stream.h.
 */
#include "workload/stream.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <limits>

namespace schedlab {

namespace {
const char* const where_stream = "stream";
constexpr sim_dur bw_slice = usecs(50); ///< how often a thread's bandwidth share is re-evaluated
const char* const hline = "-------------------------------------------------------------\n";

double gbps(const std::string& v, const char* opt)
{
    double d = 0;
    const auto res = std::from_chars(v.data(), v.data() + v.size(), d);
    if (v.empty() || res.ec != std::errc() || res.ptr != v.data() + v.size() || !(d > 0) ||
        d > 1e6)
        throw config_error(where_stream,
                           fmt::format("option '{}' expects a positive GB/s, got '{}'", opt, v));
    return d;
}

/// mysecond(): gettimeofday() as seconds, microsecond resolution.
double mysecond(sim_time t) { return static_cast<double>(t / NSEC_PER_USEC) * 1e-6; }
} // namespace

stream_params parse_stream_options(const std::vector<std::string>& args)
{
    stream_params sp;
    std::string size;
    std::string core;
    std::string llc;
    std::string node;
    unsigned threads = UINT_MAX; // not given: one per CPU
    const std::vector<option_spec> specs = {
        {.long_name = "threads", .uinteger = &threads, .help = "OMP_NUM_THREADS"},
        {.long_name = "array-size", .text = &size, .help = "STREAM_ARRAY_SIZE"},
        {.long_name = "ntimes", .uinteger = &sp.ntimes, .help = "NTIMES"},
        {.long_name = "core-bw", .text = &core, .help = "GB/s of one thread"},
        {.long_name = "llc-bw", .text = &llc, .help = "GB/s shared per LLC"},
        {.long_name = "node-bw", .text = &node, .help = "GB/s shared per NUMA node"},
    };
    parse_options(args, specs, where_stream);
    if (threads == 0)
        throw config_error(where_stream, "option '--threads' (OMP_NUM_THREADS) must be at least 1; "
                                         "leave it out for one thread per CPU");
    if (threads != UINT_MAX) {
        // 1.0 KB per thread measured, 2 KB used (docs/testing.md).
        check_task_count(threads, 2e3, fmt::format("{} threads", threads), where_stream);
        sp.threads = threads;
    }
    if (!size.empty())
        sp.array_size = static_cast<u64>(
            parse_integer(size, "--array-size", where_stream, 1, 1'000'000'000'000LL));
    if (sp.ntimes < 2)
        throw config_error(where_stream, "option '--ntimes' must be at least 2 (the first "
                                         "repetition is discarded)");
    if (!core.empty())
        sp.core_bw = gbps(core, "--core-bw");
    if (!llc.empty())
        sp.llc_bw = gbps(llc, "--llc-bw");
    if (!node.empty())
        sp.node_bw = gbps(node, "--node-bw");
    return sp;
}

std::string stream_workload::command_line() const
{
    return fmt::format("stream --threads {} --array-size {} --ntimes {} --core-bw {} --llc-bw {} "
                       "--node-bw {}",
                       sp_.threads, sp_.array_size, sp_.ntimes, sp_.core_bw, sp_.llc_bw,
                       sp_.node_bw);
}

double stream_workload::kernel_bytes(int j) const
{
    return static_cast<double>((j < 2 ? 2 : 3) * 8) * static_cast<double>(sp_.array_size);
}

u64 stream_workload::chunk_elems(unsigned t) const
{
    // schedule(static) without a chunk: equal blocks, the first N % T threads one longer.
    const u64 q = sp_.array_size / nthreads_;
    const u64 r = sp_.array_size % nthreads_;
    return q + (t < r ? 1 : 0);
}

/*
 * model: the bandwidth share of thread t for the next slice (see stream.h):
 * the running team threads are counted per LLC and per node of their CPU.
 */
sim_dur stream_workload::slice(task_context& t, unsigned th)
{
    const machine& m = t.sys().mach();
    const cpu_desc& mine = m.cpus[static_cast<std::size_t>(t.task().cpu)];
    unsigned n_llc = 0;
    unsigned n_node = 0;
    for (unsigned s = 0; s < nthreads_; ++s) {
        const task_struct* q = team_[s];
        if (!q || !ts_[s].in_phase || !q->on_cpu)
            continue;
        const cpu_desc& d = m.cpus[static_cast<std::size_t>(q->cpu)];
        n_llc += d.llc == mine.llc;
        n_node += d.node == mine.node;
    }
    n_llc = std::max(1u, n_llc);
    n_node = std::max(1u, n_node);
    max_llc_share_ = std::max(max_llc_share_, n_llc);
    // GB/s == bytes per ns.
    const double rate = std::min({sp_.core_bw, sp_.llc_bw / n_llc, sp_.node_bw / n_node});
    thread_state& ts = ts_[th];
    const double need = ts.remaining / rate;
    const sim_dur dt = std::max<sim_dur>(1, std::min<sim_dur>(bw_slice, static_cast<sim_dur>(std::ceil(need))));
    ts.remaining = std::max(0.0, ts.remaining - rate * static_cast<double>(dt));
    return dt;
}

/*
 * model: stream.c main() under GCC's OpenMP (libgomp), task by task:
 * - the main thread (on CPU 0) creates T - 1 team threads at the first
 *   parallel region (pthread_create; they inherit nothing but the process)
 *   and takes part as thread 0;
 * - every parallel region: the main thread reads the clock (mysecond(),
 *   only around the timed kernels), the team passes a start barrier (the
 *   workers sleep between regions), each thread moves its static chunk's
 *   bytes at its bandwidth share, and all meet at the end barrier before
 *   the main thread reads the clock again;
 * - the regions: the initialisation (a, b, c written: 24 bytes/element),
 *   the timer-granularity test (a = 2a: 16 bytes/element), then NTIMES x
 *   Copy (16), Scale (16), Add (24), Triad (24).
 */
void stream_workload::setup(syscalls& sys)
{
    nthreads_ = sp_.threads ? sp_.threads : static_cast<unsigned>(sys.nr_cpu_ids());
    const unsigned n = nthreads_;
    ts_.assign(n, thread_state{});
    team_.assign(n, nullptr);
    times_.assign(sp_.ntimes, std::array<double, 4>{});
    start_ = &state_.make_barrier("omp/start", n);
    end_ = &state_.make_barrier("omp/end", n);
    joined_ = &state_.make_counter("omp/join", 0);

    // Bytes per element of each region, in order: init, test, then ntimes x 4 kernels.
    region_bytes_ = {24, 16};
    for (unsigned k2 = 0; k2 < sp_.ntimes; ++k2)
        for (int j = 0; j < 4; ++j)
            region_bytes_.push_back(j < 2 ? 16 : 24);
    regions_.assign(region_bytes_.size(), {std::numeric_limits<sim_time>::max(), 0});

    task_opts o;
    o.comm = "stream";
    o.cpu = 0;
    sys.spawn(make_task([this](task_context& t) { return run_main(t); }), o);
}

task_code stream_workload::run_main(task_context& t)
{
    const fork_opts team{.comm = "stream", .thread = true, .notify = joined_};
    for (unsigned th = 1; th < nthreads_; ++th)
        co_await t.fork([this, th](task_context& c) { return run_team(c, th); }, team);
    co_await run_team(t, 0); // the main thread is thread 0 of the team
    co_await t.wait_for(*joined_, nthreads_ - 1, &cost_params::wait_child);
    finished_ = true;
}

// Team thread `th`: every parallel region, its static chunk at its bandwidth share.
task_code stream_workload::run_team(task_context& t, unsigned th)
{
    team_[th] = &t.task();
    for (std::size_t r = 0; r < region_bytes_.size(); ++r) {
        const bool clocked = th == 0 && r != 0; // mysecond() around the region
        if (clocked) {
            co_await t.syscall(t.costs().gettime);
            t0_ = t.now();
        }
        co_await t.barrier_wait(*start_);
        ts_[th].in_phase = true;
        ts_[th].remaining = static_cast<double>(region_bytes_[r] * chunk_elems(th));
        regions_[r].first = std::min(regions_[r].first, t.now());
        while (ts_[th].remaining > 0)
            co_await t.run(slice(t, th));
        ts_[th].in_phase = false;
        regions_[r].second = std::max(regions_[r].second, t.now());
        co_await t.barrier_wait(*end_);
        if (clocked) {
            co_await t.syscall(t.costs().gettime);
            const double dt = mysecond(t.now()) - mysecond(t0_);
            if (r == 1)
                test_time_ = dt;
            else
                times_[(r - 2) / 4][(r - 2) % 4] = dt;
        }
    }
}

double stream_workload::best_rate(int j) const
{
    double mn = 1e300;
    for (std::size_t k = 1; k < times_.size(); ++k)
        mn = std::min(mn, times_[k][static_cast<std::size_t>(j)]);
    return mn > 0 ? 1e-6 * kernel_bytes(j) / mn : 0.0;
}

std::string stream_workload::report() const
{
    std::string out = hline;
    out += "STREAM version $Revision: 5.10 $\n";
    out += hline;
    out += "This system uses 8 bytes per array element.\n";
    out += hline;
    const double array_mib = static_cast<double>(sp_.array_size) * 8 / 1048576.0;
    out += fmt::format("Array size = {} (elements), Offset = 0 (elements)\n", sp_.array_size);
    out += fmt::format("Memory per array = {:.1f} MiB (= {:.1f} GiB).\n", array_mib, array_mib / 1024);
    out += fmt::format("Total memory required = {:.1f} MiB (= {:.1f} GiB).\n", 3 * array_mib,
                       3 * array_mib / 1024);
    out += fmt::format("Each kernel will be executed {} times.\n", sp_.ntimes);
    out += " The *best* time for each kernel (excluding the first iteration)\n";
    out += " will be used to compute the reported bandwidth.\n";
    out += hline;
    out += fmt::format("Number of Threads requested = {}\n", nthreads_);
    out += fmt::format("Number of Threads counted = {}\n", nthreads_);
    out += hline;
    if (!finished_)
        return out + "# schedlab: not finished when the run stopped\n";
    const long us = std::lround(test_time_ * 1e6);
    out += "Your clock granularity/precision appears to be 1 microseconds.\n";
    out += fmt::format("Each test below will take on the order of {} microseconds.\n", us);
    out += fmt::format("   (= {} clock ticks)\n", us);
    out += "Increase the size of the arrays if this shows that\n";
    out += "you are not getting at least 20 clock ticks per test.\n";
    out += hline;
    out += "WARNING -- The above is only a rough guideline.\n";
    out += "For best results, please be sure you know the\n";
    out += "precision of your system timer.\n";
    out += hline;
    out += "Function    Best Rate MB/s  Avg time     Min time     Max time\n";
    for (int j = 0; j < 4; ++j) {
        double avg = 0;
        double mn = 1e300;
        double mx = 0;
        for (std::size_t k = 1; k < times_.size(); ++k) {
            const double t = times_[k][static_cast<std::size_t>(j)];
            avg += t;
            mn = std::min(mn, t);
            mx = std::max(mx, t);
        }
        avg /= static_cast<double>(times_.size() - 1);
        out += fmt::format("{}{:12.1f}  {:11.6f}  {:11.6f}  {:11.6f}\n", labels[j],
                           1e-6 * kernel_bytes(j) / mn, avg, mn, mx);
    }
    out += hline;
    out += "Solution Validates: avg error less than 1.000000e-13 on all three arrays\n";
    out += hline;
    return out;
}

std::vector<workload_metric> stream_workload::metrics() const
{
    if (!finished_)
        return {};
    return {{"Copy", "MB/s", best_rate(0), true},
            {"Scale", "MB/s", best_rate(1), true},
            {"Add", "MB/s", best_rate(2), true},
            {"Triad", "MB/s", best_rate(3), true}};
}

std::unique_ptr<workload> make_stream_workload(const std::vector<std::string>& args)
{
    return std::make_unique<stream_workload>(parse_stream_options(args));
}

} // namespace schedlab
