// SPDX-License-Identifier: GPL-2.0-only
/*
 * schbench, old (<= 2021) and v1.x: see schbench.h.
 */
#include "workload/schbench.h"

#include "sched/sched.h"
#include "sched/syscalls.h"
#include "sim/bug.h"
#include "sim/config_error.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace schedlab {

/* ------------------------------------------------------------------------ */
/* plat_histogram                                                             */

unsigned plat_histogram::val_to_idx(unsigned val)
{
    const unsigned msb = val == 0 ? 0 : static_cast<unsigned>(std::bit_width(val)) - 1;
    if (msb <= PLAT_BITS)
        return val; // exact below 2 * PLAT_VAL
    const unsigned error_bits = msb - PLAT_BITS;
    const unsigned base = (error_bits + 1) << PLAT_BITS;
    const unsigned offset = (PLAT_VAL - 1) & (val >> error_bits);
    return std::min(base + offset, PLAT_NR - 1);
}

unsigned plat_histogram::idx_to_val(unsigned idx)
{
    SIM_BUG_ON(idx >= PLAT_NR, "plat index {} out of range", idx);
    if (idx < (PLAT_VAL << 1))
        return idx;
    const unsigned error_bits = (idx >> PLAT_BITS) - 1;
    const unsigned base = 1u << (error_bits + PLAT_BITS);
    const unsigned k = idx % PLAT_VAL;
    // The middle of the bucket, truncated as schbench's unsigned conversion does.
    return base + static_cast<unsigned>((k + 0.5) * static_cast<double>(1u << error_bits));
}

void plat_histogram::add(unsigned v)
{
    max_ = std::max(max_, v);
    if (min_ == 0 || v < min_)
        min_ = v;
    ++plat_[val_to_idx(v)];
    ++nr_;
}

void plat_histogram::merge(const plat_histogram& o)
{
    for (unsigned i = 0; i < PLAT_NR; ++i)
        plat_[i] += o.plat_[i];
    nr_ += o.nr_;
    max_ = std::max(max_, o.max_);
    if (min_ == 0 || o.min_ < min_)
        min_ = o.min_;
}

std::vector<plat_histogram::pct> plat_histogram::percentiles(const std::vector<double>& list) const
{
    std::vector<pct> out;
    if (list.empty())
        return out;
    u64 sum = 0;
    std::size_t j = 0;
    for (unsigned i = 0; i < PLAT_NR && j < list.size(); ++i) {
        sum += plat_[i];
        while (j < list.size() &&
               static_cast<double>(sum) >= list[j] / 100.0 * static_cast<double>(nr_)) {
            out.push_back({list[j], idx_to_val(i), sum});
            ++j;
        }
    }
    // Counts between consecutive percentiles (schbench subtracts the running total).
    u64 last = 0;
    for (std::size_t i = 1; i < out.size(); ++i) {
        last += out[i - 1].samples;
        out[i].samples -= last;
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* wakeup_ns_histogram (schedlab's figure)                                    */

void wakeup_ns_histogram::add(sim_time stamp, sim_time woken)
{
    if (x_.empty()) {
        x_.assign(static_cast<std::size_t>(NS_RANGE), 0);
        lat_.assign(static_cast<std::size_t>(NS_RANGE), 0);
    }
    const s64 x = static_cast<s64>(woken - stamp / NSEC_PER_USEC * NSEC_PER_USEC);
    const s64 lat = static_cast<s64>(woken - stamp);
    if (x < NS_RANGE)
        ++x_[static_cast<std::size_t>(x)];
    else
        ++x_over_;
    if (lat < NS_RANGE)
        ++lat_[static_cast<std::size_t>(lat)];
    else
        ++lat_over_;
    ++nr_;
}

void wakeup_ns_histogram::clear()
{
    std::fill(x_.begin(), x_.end(), 0);
    std::fill(lat_.begin(), lat_.end(), 0);
    x_over_ = lat_over_ = nr_ = 0;
}

namespace {
/// Samples of `h` (1 ns buckets, `over` past them) in [a, b); b past the range takes `over`.
u64 schb_ns_count(const std::vector<u32>& h, u64 over, s64 a, s64 b)
{
    const s64 n = static_cast<s64>(h.size());
    u64 c = 0;
    for (s64 i = std::max<s64>(a, 0); i < std::min(b, n); ++i)
        c += h[static_cast<std::size_t>(i)];
    if (b > n)
        c += over;
    return c;
}

/// The first ns value at which the running count of `h` reaches p% of `total` (as
/// plat_histogram::percentiles()), from `from` on; -1 past the range.
s64 schb_ns_percentile(const std::vector<u32>& h, s64 from, u64 total, double p)
{
    if (total == 0)
        return 0;
    u64 sum = 0;
    for (s64 i = std::max<s64>(from, 0); i < static_cast<s64>(h.size()); ++i) {
        sum += h[static_cast<std::size_t>(i)];
        if (static_cast<double>(sum) >= p / 100.0 * static_cast<double>(total))
            return i;
    }
    return -1;
}

/// Running counts of `h`: pre[i] is the samples below i ns.
std::vector<u64> schb_ns_prefix(const std::vector<u32>& h)
{
    std::vector<u64> pre(h.size() + 1, 0);
    for (std::size_t i = 0; i < h.size(); ++i)
        pre[i + 1] = pre[i] + h[i];
    return pre;
}

/// wakeup_ns_histogram::printed() on the running counts of x and the count past them.
s64 schb_printed_from(const std::vector<u64>& pre, u64 over, double p, s64 shift)
{
    const s64 n = static_cast<s64>(pre.size()) - 1;
    const auto below = [&](s64 b) {
        return pre[static_cast<std::size_t>(std::clamp<s64>(b, 0, n))];
    };
    const s64 lo = 1000 - shift; // x is recorded once x + shift >= 1000
    const u64 total = pre[static_cast<std::size_t>(n)] - below(lo) + over;
    if (total == 0)
        return 0;
    for (s64 v = 1;; ++v) {
        const s64 hi = 1000 * (v + 1) - shift; // x + shift < 1000 (v + 1): a delta of v at most
        if (hi > n)
            return -1;
        if (static_cast<double>(below(hi) - below(lo)) >= p / 100.0 * static_cast<double>(total))
            return v;
    }
}
} // namespace

s64 wakeup_ns_histogram::printed(double p, s64 shift) const
{
    if (x_.empty())
        return 0;
    return schb_printed_from(schb_ns_prefix(x_), x_over_, p, shift);
}

s64 wakeup_ns_histogram::offset_percentile(double p) const
{
    if (x_.empty())
        return 0;
    return schb_ns_percentile(x_, 1000, schb_ns_count(x_, x_over_, 1000, NS_RANGE + 1), p);
}

s64 wakeup_ns_histogram::latency_percentile(double p) const
{
    if (lat_.empty())
        return 0;
    return schb_ns_percentile(lat_, 0, nr_, p);
}

s64 wakeup_ns_histogram::shift_to_move(double p, int dir) const
{
    if (x_.empty())
        return -1;
    const std::vector<u64> pre = schb_ns_prefix(x_);
    const s64 now = schb_printed_from(pre, x_over_, p, 0);
    if (now <= 0)
        return -1;
    const s64 step = dir > 0 ? 1 : -1;
    for (s64 d = 1; d < NS_RANGE; ++d) {
        const s64 v = schb_printed_from(pre, x_over_, p, step * d);
        if (v < 0)
            return -1;
        if (dir > 0 ? v > now : v < now)
            return d;
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* the math's variation                                                       */

u64 schbench_math_factor_ppm(u64 u_ppm)
{
    // (quantile, time / p50) in ppm: data/machines/schbench-calibrate-t1.txt's request
    // latencies, 2963 / 3172, 1, 3236 / 3172, 3540 / 3172, 4552 / 3172, 4891 / 3172 us.
    struct knot {
        u64 u;
        u64 f;
    };
    static constexpr knot table[] = {
        {0, 934'111},         {500'000, 1'000'000}, {900'000, 1'020'177},
        {990'000, 1'116'015}, {999'000, 1'435'057}, {1'000'000, 1'541'929},
    };
    SIM_BUG_ON(u_ppm >= 1'000'000, "quantile {} ppm out of range", u_ppm);
    std::size_t i = 1;
    while (table[i].u <= u_ppm)
        ++i;
    const knot& a = table[i - 1];
    const knot& b = table[i];
    return a.f + (b.f - a.f) * (u_ppm - a.u) / (b.u - a.u);
}

/* ------------------------------------------------------------------------ */
/* options                                                                    */

namespace {
const char* const where_schbench = "schbench";

sim_dur usec_value(const std::string& v, const char* opt)
{
    return usecs(parse_integer(v, opt, where_schbench, 0, 1'000'000'000'000LL));
}
} // namespace

schbench_params parse_schbench_options(const std::vector<std::string>& args)
{
    // The variant decides what the other options mean: find it first.
    std::string variant = "v1";
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i].rfind("--variant=", 0) == 0)
            variant = args[i].substr(10);
        else if (args[i] == "--variant" && i + 1 < args.size())
            variant = args[i + 1];
    }
    schbench_params sp;
    if (variant == "old") {
        sp.variant = schbench_variant::old;
        sp.message_threads = 2;
        sp.threads = 16;
        sp.warmup = secs(5);
    } else if (variant != "v1") {
        throw config_error(where_schbench,
                           fmt::format("option '--variant' expects 'v1' or 'old', got '{}'",
                                       variant));
    }
    const bool old = sp.variant == schbench_variant::old;

    unsigned m = sp.message_threads;
    unsigned t = sp.threads;
    std::string runtime, warmup, interval, zero, footprint, ops, sleep, rps, cputime, msgtime;
    std::string unused;
    std::string variant_opt;
    bool flag_unused = false;
    std::vector<option_spec> specs = {
        {.long_name = "variant", .text = &variant_opt,
         .help = "schedlab only: v1 (2023 rewrite, default) or old (<= 2021)"},
        {.short_name = 'm', .long_name = "message-threads", .uinteger = &m},
        {.short_name = 't', .long_name = "threads", .uinteger = &t},
        {.short_name = 'r', .long_name = "runtime", .text = &runtime},
        {.short_name = 'w', .long_name = "warmuptime", .text = &warmup},
        {.short_name = 'i', .long_name = "intervaltime", .text = &interval},
        {.short_name = 'z', .long_name = "zerotime", .text = &zero},
        {.short_name = 'p', .long_name = "pipe", .text = &unused,
         .unsupported = "pipe mode is not modelled"},
        {.short_name = 'A', .long_name = "auto-rps", .text = &unused,
         .unsupported = "auto-RPS is not modelled"},
        {.short_name = 'j', .long_name = old ? "jitter" : "json",
         .flag = old ? &sp.old_jitter : nullptr, .text = old ? nullptr : &unused,
         .unsupported = old ? "" : "JSON output is not modelled"},
    };
    if (old) {
        specs.push_back({.short_name = 's', .long_name = "sleeptime", .text = &sleep});
        specs.push_back({.short_name = 'c', .long_name = "cputime", .text = &cputime});
        specs.push_back({.short_name = 'C', .long_name = "message_cputime", .text = &msgtime});
        specs.push_back({.short_name = 'R', .long_name = "rps", .text = &unused,
                         .unsupported = "old schbench's RPS mode is not modelled"});
        specs.push_back({.short_name = 'a', .long_name = "auto", .flag = &flag_unused,
                         .unsupported = "old schbench's auto mode is not modelled"});
    } else {
        specs.push_back({.short_name = 'F', .long_name = "cache_footprint", .text = &footprint});
        specs.push_back({.short_name = 'n', .long_name = "operations", .text = &ops});
        specs.push_back({.short_name = 's', .long_name = "sleep_usec", .text = &sleep});
        specs.push_back({.short_name = 'L', .long_name = "no-locking", .flag = &sp.no_locking});
        specs.push_back({.short_name = 'C', .long_name = "calibrate", .flag = &sp.calibrate});
        specs.push_back({.short_name = 'R', .long_name = "rps", .text = &rps});
        specs.push_back({.short_name = 'M', .long_name = "message-cpus", .text = &unused,
                         .unsupported = "CPU pinning is not modelled yet"});
        specs.push_back({.short_name = 'W', .long_name = "worker-cpus", .text = &unused,
                         .unsupported = "CPU pinning is not modelled yet"});
        specs.push_back({.short_name = 'P', .long_name = "pin", .text = &unused,
                         .unsupported = "CPU pinning is not modelled yet"});
        specs.push_back({.short_name = 'J', .long_name = "jobname", .text = &unused,
                         .unsupported = "JSON output is not modelled"});
    }
    parse_options(args, specs, where_schbench);
    sp.message_threads = m;
    sp.threads = t;
    if (m == 0)
        throw config_error(where_schbench, "option '-m' must be at least 1");
    if (old && t == 0)
        throw config_error(where_schbench, "option '-t' must be at least 1");
    // A message thread with its workers each (v1's -t 0: one per CPU, checked at setup against
    // the machine); 42 KB per task measured, 45 KB used (docs/testing.md).
    check_task_count(static_cast<double>(m) * (static_cast<double>(t) + 1), 45e3,
                     fmt::format("{} message threads x {} workers", m, t), where_schbench);
    // schbench takes whole seconds; fractions are accepted here, since short simulated runs
    // are common.
    auto seconds = [](const std::string& v, const char* opt) {
        const sim_dur d = parse_seconds(v, opt, where_schbench);
        if (d > secs(1'000'000))
            throw config_error(where_schbench, fmt::format("option '{}': {} is out of range "
                                                           "[0, 1000000] seconds",
                                                           opt, v));
        return d;
    };
    if (!runtime.empty())
        sp.runtime = seconds(runtime, "-r");
    if (sp.runtime == 0)
        throw config_error(where_schbench, "option '-r': 0 (run forever) is not modelled");
    if (!warmup.empty())
        sp.warmup = seconds(warmup, "-w");
    if (!interval.empty())
        sp.interval = seconds(interval, "-i");
    if (!zero.empty())
        sp.zerotime = seconds(zero, "-z");
    if (!footprint.empty())
        sp.cache_footprint_kb =
            static_cast<u64>(parse_integer(footprint, "-F", where_schbench, 1, 1 << 24));
    if (!ops.empty())
        sp.operations = static_cast<u64>(parse_integer(ops, "-n", where_schbench, 0, 1 << 20));
    if (!rps.empty())
        sp.rps = static_cast<u64>(parse_integer(rps, "-R", where_schbench, 0, 100'000'000));
    if (old) {
        if (!sleep.empty())
            sp.old_sleeptime = usec_value(sleep, "-s");
        if (!cputime.empty())
            sp.old_cputime = usec_value(cputime, "-c");
        if (!msgtime.empty())
            sp.old_message_cputime = usec_value(msgtime, "-C");
    } else {
        if (!sleep.empty())
            sp.sleep = usec_value(sleep, "-s");
        if (sp.calibrate)
            sp.no_locking = true; // schbench: calibrate_only implies skip_locking
        if (sp.runtime < secs(30))
            sp.warmup = 0; // schbench: "if (runtime < 30) warmuptime = 0"
    }
    return sp;
}

std::string schbench_workload::command_line() const
{
    auto s_of = [](sim_dur d) { return static_cast<double>(d) / 1e9; };
    if (sp_.variant == schbench_variant::old)
        return fmt::format("schbench --variant=old -m {} -t {} -r {} -w {} -i {} -z {} -s {} -c {} "
                           "-C {}{}",
                           sp_.message_threads, sp_.threads, s_of(sp_.runtime), s_of(sp_.warmup),
                           s_of(sp_.interval), s_of(sp_.zerotime), sp_.old_sleeptime / 1000,
                           sp_.old_cputime / 1000, sp_.old_message_cputime / 1000,
                           sp_.old_jitter ? " -j" : "");
    return fmt::format("schbench --variant=v1 -m {} -t {} -r {} -w {} -i {} -z {} -F {} -n {} -s {} "
                       "-R {}{}{}",
                       sp_.message_threads, sp_.threads, s_of(sp_.runtime), s_of(sp_.warmup),
                       s_of(sp_.interval), s_of(sp_.zerotime), sp_.cache_footprint_kb,
                       sp_.operations, sp_.sleep / 1000, sp_.rps, sp_.no_locking ? " -L" : "",
                       sp_.calibrate ? " -C" : "");
}

/* ------------------------------------------------------------------------ */
/* the threads                                                                */

namespace {

constexpr u32 FUTEX_BLOCKED = 0;
constexpr u32 FUTEX_RUNNING = 1;
constexpr sim_dur spin_chunk = usecs(5);     ///< trylock spin granularity
constexpr sim_dur wall_spin_chunk = msecs(1); ///< old schbench's gettimeofday spin granularity
constexpr u64 rps_batch = 128;               ///< schbench: at most this many pending per worker

inline sim_time usec_of(sim_time t) { return t / NSEC_PER_USEC; } // gettimeofday() resolution

/// fpost()'s CAS of BLOCKED -> RUNNING: true when `t` was blocked and needs the futex_wake.
bool fpost_needed(schbench_workload::thread_data& t)
{
    if (t.futex != FUTEX_BLOCKED)
        return false;
    t.futex = FUTEX_RUNNING;
    return true;
}

} // namespace

/*
 * The threads, as schbench.c writes them (see setup() for the model). A
 * thread's first act is to record its task and start time.
 */

// main(): create the message threads, sleep_for_runtime(), stop and join them.
task_code schbench_workload::run_main(task_context& t, int self)
{
    thread_data& me = td(self);
    me.task = &t.task();
    me.start = t.now();
    for (unsigned i = 0; i < sp_.message_threads; ++i) {
        const int idx = static_cast<int>(i * (workers_ + 1));
        const fork_opts msg{.comm = "schbench-msg", .thread = true, .notify = td(idx).join};
        co_await t.fork([this, idx](task_context& c) { return run_message(c, idx); }, msg);
    }
    for (;;) {
        co_await t.gettime();
        main_tick(t.now());
        if (main_done_)
            break;
        co_await t.sleep(secs(1));
    }
    stopping_ = true;
    for (unsigned i = 0; i < sp_.message_threads; ++i) {
        thread_data& m = td(static_cast<int>(i * (workers_ + 1)));
        if (fpost_needed(m))
            co_await t.futex_wake(m.futex_waiters, 1);
        co_await join(t, m);
    }
    main_exit();
}

// pthread_join(): sleep until the thread has exited, then the syscall's cost.
task_code schbench_workload::join(task_context& t, thread_data& th)
{
    while (th.join->value < 1)
        co_await t.sleep_on(th.join->waiters, false);
    co_await t.syscall(t.costs().wait_child);
}

// fwait() of a message thread: sleep while its futex is BLOCKED, then block it again.
task_code schbench_workload::fwait(task_context& t, thread_data& me)
{
    for (;;) {
        if (me.futex == FUTEX_RUNNING) {
            me.futex = FUTEX_BLOCKED;
            co_return;
        }
        co_await t.syscall(t.costs().futex_wait);
        if (me.futex == FUTEX_BLOCKED)
            co_await t.sleep_on(me.futex_waiters);
    }
}

// xlist_wake_all(): one timestamp for the whole list, then fpost() each worker on it.
task_code schbench_workload::wake_posted(task_context& t, thread_data& me)
{
    const std::vector<int> batch = std::move(me.posted);
    me.posted.clear();
    const sim_time now = co_await t.gettime();
    for (const int wi : batch)
        td(wi).wake_time = now;
    for (const int wi : batch)
        if (fpost_needed(td(wi)))
            co_await t.futex_wake(td(wi).futex_waiters, 1);
}

/*
 * message_thread(): create the workers, then run_msg_thread() (wake the
 * posted workers, fwait; old: spin -C, usleep -s + jitter) or, with -R,
 * run_rps_thread(); once stopping, wake the list once more and fpost and
 * join every worker.
 */
task_code schbench_workload::run_message(task_context& t, int self)
{
    thread_data& me = td(self);
    me.task = &t.task();
    me.start = t.now();
    const fork_opts worker{.comm = "schbench-worker", .thread = true, .notify = nullptr};
    for (unsigned i = 0; i < workers_; ++i) {
        const int widx = self + 1 + static_cast<int>(i);
        td(widx).msg = self;
        fork_opts o = worker;
        o.notify = td(widx).join;
        co_await t.fork([this, widx](task_context& c) { return run_worker(c, widx); }, o);
    }
    if (!old() && sp_.rps > 0) {
        co_await run_rps(t, self);
    } else {
        for (;;) {
            me.futex = FUTEX_BLOCKED;
            co_await wake_posted(t, me);
            if (stopping_)
                break;
            co_await fwait(t, me);
            if (old()) {
                // spin message_cputime of wall time (a gettimeofday loop), then usleep.
                const sim_time until = t.now() + sp_.old_message_cputime;
                while (t.now() < until)
                    co_await t.run(std::min(wall_spin_chunk, until - t.now()));
                co_await t.syscall(t.costs().nanosleep);
                // usleep(sleeptime + rand() % (sleeptime / 4))
                const sim_dur q = sp_.old_sleeptime / NSEC_PER_USEC / 4;
                const sim_dur extra =
                    q > 0 ? usecs(static_cast<s64>(t.rng().below(static_cast<u64>(q)))) : 0;
                co_await t.timeout(sp_.old_sleeptime + extra);
            }
        }
        co_await wake_posted(t, me);
    }
    for (unsigned i = 0; i < workers_; ++i) {
        thread_data& w = td(self + 1 + static_cast<int>(i));
        if (fpost_needed(w))
            co_await t.futex_wake(w.futex_waiters, 1);
        co_await join(t, w);
    }
}

// run_rps_thread(): -R/m requests a second, round-robin on the workers, until stopping.
task_code schbench_workload::run_rps(task_context& t, int self)
{
    const u64 per_msg = sp_.rps / sp_.message_threads;
    int cur_tid = 0;
    for (;;) {
        const sim_time start = co_await t.gettime();
        for (u64 n = 0; n < per_msg && !stopping_; ++n) {
            const sim_time stamp = co_await t.gettime();
            thread_data& w = td(self + 1 + (cur_tid % static_cast<int>(workers_)));
            ++cur_tid;
            if (w.pending > rps_batch) {
                co_await t.sleep(usecs(100)); // too much pending: usleep(100), next request
                continue;
            }
            ++w.pending;
            const sim_time allocated = co_await t.gettime(); // allocate_request()
            w.requests.push_back(allocated);
            w.wake_time = stamp;
            if (fpost_needed(w))
                co_await t.futex_wake(w.futex_waiters, 1);
        }
        // Sleep out the rest of the second.
        for (;;) {
            const sim_time now = co_await t.gettime();
            const sim_dur delta = (usec_of(now) - usec_of(start)) * NSEC_PER_USEC;
            if (stopping_ || delta >= secs(1))
                break;
            co_await t.sleep(secs(1) - delta);
        }
        if (stopping_)
            co_return; // the caller fposts and joins every worker
    }
}

/*
 * worker_thread(): msg_and_wait() (mark itself blocked, stamp, post itself
 * to its message thread - RPS: splice its pending requests instead - fpost
 * it, fwait), record the wakeup latency, then do_work(); old: spin -c usec
 * of wall time first, and no request.
 */
task_code schbench_workload::run_worker(task_context& t, int self)
{
    thread_data& me = td(self);
    me.task = &t.task();
    me.start = t.now();
    const bool rps_mode = !old() && sp_.rps > 0;
    while (!stopping_) {
        if (old()) {
            sim_dur spin = sp_.old_cputime;
            if (sp_.old_jitter && spin > NSEC_PER_USEC)
                spin = usecs(
                    1 + static_cast<s64>(t.rng().below(static_cast<u64>(spin / NSEC_PER_USEC))));
            const sim_time until = t.now() + spin;
            while (t.now() < until)
                co_await t.run(std::min(wall_spin_chunk, until - t.now()));
            ++me.loop_count;
            me.runtime = t.now() - me.start;
        }
        me.futex = FUTEX_BLOCKED;
        me.wake_time = co_await t.gettime();
        bool have_req = false;
        if (rps_mode) {
            me.pending = 0;
            if (!me.requests.empty()) { // request_splice()
                me.futex = FUTEX_RUNNING;
                have_req = true;
            }
        } else {
            td(me.msg).posted.push_back(self); // xlist_add()
        }
        if (!have_req) {
            thread_data& m = td(me.msg);
            if (fpost_needed(m))
                co_await t.futex_wake(m.futex_waiters, 1);
            co_await worker_fwait(t, me);
            const sim_time woken = co_await t.gettime();
            const sim_time delta = usec_of(woken) - usec_of(me.wake_time);
            if (delta > 0)
                me.wakeup_stats.add(static_cast<unsigned>(delta));
            wakeup_ns_.add(me.wake_time, woken); // schedlab's figure, not schbench's
            if (old() || rps_mode)
                continue; // old: spin next; RPS: splice the requests
        }
        do {
            if (rps_mode && have_req && me.requests.empty())
                break;
            co_await do_work(t, me);
        } while (rps_mode && have_req && !me.requests.empty());
    }
}

// A worker's fwait(): as a message thread's, but it also stops waiting once stopping.
task_code schbench_workload::worker_fwait(task_context& t, thread_data& me)
{
    for (;;) {
        if (stopping_ || me.futex == FUTEX_RUNNING) {
            if (me.futex == FUTEX_RUNNING)
                me.futex = FUTEX_BLOCKED;
            co_return;
        }
        co_await t.syscall(t.costs().futex_wait);
        if (me.futex == FUTEX_BLOCKED && !stopping_)
            co_await t.sleep_on(me.futex_waiters);
    }
}

/*
 * One request (do_work() and its timing): usleep(-s) (-C: before the
 * timestamp), lock this CPU's lock (trylock spins; again on the new CPU if
 * the task migrated meanwhile), the matrix math, unlock, the request latency.
 */
task_code schbench_workload::do_work(task_context& t, thread_data& me)
{
    const bool rps_mode = !old() && sp_.rps > 0;
    if (sp_.calibrate && sp_.sleep > 0)
        co_await t.sleep(sp_.sleep);
    const sim_time work_start = co_await t.gettime();
    if (!sp_.calibrate && sp_.sleep > 0) // simulated networking, a fresh timeslice
        co_await t.sleep(sp_.sleep);
    int lock_cpu = -1;
    if (!sp_.no_locking) {
        lock_cpu = t.task().cpu;
        bool spun = false;
        for (;;) {
            task_struct*& holder = cpu_lock_[static_cast<std::size_t>(lock_cpu)];
            if (holder == nullptr) {
                if (t.task().cpu == lock_cpu) {
                    holder = &t.task();
                    break;
                }
                lock_cpu = t.task().cpu; // got it, but we migrated: unlock, again
                continue;
            }
            if (!spun) { // schedlab's figures only: where the holder is at the first trylock
                spun = true;
                const bool here = holder->cpu == lock_cpu;
                for (lock_stats* ls : {&lock_total_, &lock_window_}) {
                    ++ls->episodes;
                    if (here && !holder->on_cpu)
                        ++ls->holder_preempted;
                    else if (!here)
                        ++ls->holder_elsewhere;
                }
            }
            ++lock_spins_;
            lock_total_.spin_ns += spin_chunk;
            lock_window_.spin_ns += spin_chunk;
            co_await t.run(spin_chunk);
        }
        ++lock_total_.requests;
        ++lock_window_.requests;
    }
    sim_dur math = math_ns_;
    if (const sim_dur var = t.costs().schbench_math_var; var > 0) {
        // model: math_ns_ is the median; the measured variation, its deviation scaled by var %.
        const s64 f = static_cast<s64>(schbench_math_factor_ppm(t.rng().below(1'000'000)));
        const s64 scaled = 1'000'000 + (f - 1'000'000) * static_cast<s64>(var) / 100;
        math = std::max<s64>(0, static_cast<s64>(math_ns_) * scaled / 1'000'000);
    }
    if (const sim_dur spread = t.costs().schbench_math_spread; spread > 0) // a probe, 0 by default
        math += static_cast<sim_dur>(t.rng().below(static_cast<u64>(spread)));
    co_await t.run(math);
    if (!sp_.no_locking) {
        cpu_lock_[static_cast<std::size_t>(lock_cpu)] = nullptr;
        if (t.task().cpu != lock_cpu) {
            ++lock_total_.unlocks_moved;
            ++lock_window_.unlocks_moved;
        }
    }
    const sim_time done = co_await t.gettime();
    me.runtime = done - me.start;
    if (rps_mode && !me.requests.empty())
        me.requests.erase(me.requests.begin());
    ++me.loop_count;
    const sim_time delta = usec_of(done) - usec_of(work_start);
    if (delta > 0)
        me.request_stats.add(static_cast<unsigned>(delta));
}

/* ------------------------------------------------------------------------ */
/* the workload                                                               */

/*
 * model: schbench.c main() / message_thread() / worker_thread() /
 * run_msg_thread() / run_rps_thread() / msg_and_wait() / xlist_wake_all() /
 * do_work() / sleep_for_runtime() (v1.x, 2025), and the 2021 loop for old:
 * - main (on CPU 0) creates the message threads (pthread_create), then once
 *   a second samples the requests per second and every -i seconds prints
 *   the percentiles; at -r it sets `stopping`, fposts and joins the message
 *   threads, and prints the final statistics;
 * - a message thread creates its -t workers, then loops: mark itself
 *   blocked, splice its list of posted workers, take one gettimeofday() and
 *   stamp it into each, fpost (futex wake) each in turn, then fwait for a
 *   post (old: spin -C usec of wall time, usleep -s + rand()%(-s/4)); in RPS
 *   mode it instead queues -R/m requests a second round-robin on its
 *   workers (fposting each) and sleeps out the second;
 * - a worker (v1) marks itself blocked, stamps wake_time, puts itself on the
 *   list, fposts its message thread, fwaits; woken, it records the wakeup
 *   latency and runs one request: usleep(-s), lock this CPU's lock (spinning
 *   on trylock; retrying if it migrated), -n matrix multiplications (CPU
 *   time), unlock, record the request latency; old workers spin -c usec of
 *   wall time, then post and wait.
 * fpost() only makes the futex_wake syscall when the target was blocked
 * (the CAS of BLOCKED -> RUNNING); fwait() only sleeps while it is blocked.
 */
void schbench_workload::setup(syscalls& sys)
{
    if (sp_.variant == schbench_variant::v1 && sp_.threads == 0) {
        workers_ = (static_cast<unsigned>(sys.nr_cpu_ids()) + sp_.message_threads - 1) /
                   sp_.message_threads;
        out_ += fmt::format("setting worker threads to {}\n", workers_);
    } else {
        workers_ = sp_.threads;
    }
    matrix_size_ = static_cast<u64>(
        std::sqrt(static_cast<double>(sp_.cache_footprint_kb * 1024 / 3 / sizeof(u64))));
    const double macs = static_cast<double>(matrix_size_ * matrix_size_ * matrix_size_) *
                        static_cast<double>(sp_.operations);
    math_ns_ = static_cast<sim_dur>(macs * sp_.ns_per_mac);
    cpu_lock_.assign(static_cast<std::size_t>(sys.nr_cpu_ids()), nullptr);

    const unsigned m = sp_.message_threads;
    td_.assign(static_cast<std::size_t>(m) * (workers_ + 1) + 1, thread_data{});
    for (std::size_t i = 0; i + 1 < td_.size(); ++i)
        td_[i].join = &state_.make_counter(fmt::format("join{}", i), 0);

    task_opts o;
    o.comm = "schbench";
    o.cpu = 0;
    const int main_idx = static_cast<int>(td_.size()) - 1;
    sys.spawn(make_task([this, main_idx](task_context& t) { return run_main(t, main_idx); }), o);
}

u64 schbench_workload::total_requests() const
{
    u64 n = 0;
    for (std::size_t i = 0; i + 1 < td_.size(); ++i)
        if (i % (workers_ + 1) != 0)
            n += td_[i].loop_count;
    return n;
}

void schbench_workload::combine(plat_histogram& wake, plat_histogram& req, u64& loops,
                                sim_dur& runtime) const
{
    wake.clear();
    req.clear();
    loops = 0;
    runtime = 0;
    for (std::size_t i = 0; i + 1 < td_.size(); ++i) {
        if (i % (workers_ + 1) == 0)
            continue; // a message thread
        wake.merge(td_[i].wakeup_stats);
        req.merge(td_[i].request_stats);
        loops += td_[i].loop_count;
        runtime += td_[i].runtime;
    }
}

void schbench_workload::sched_delay(u64& msg_us, u64& worker_us) const
{
    // /proc/<tid>/schedstat: run_delay / pcount, averaged over the threads.
    u64 msg = 0;
    u64 wrk = 0;
    for (std::size_t i = 0; i + 1 < td_.size(); ++i) {
        const task_struct* p = td_[i].task;
        const u64 d = p && p->sched_info_.pcount ? p->sched_info_.run_delay / p->sched_info_.pcount : 0;
        (i % (workers_ + 1) == 0 ? msg : wrk) += d;
    }
    msg_us = msg / sp_.message_threads / 1000;
    worker_us = wrk / (static_cast<u64>(sp_.message_threads) * std::max(1u, workers_)) / 1000;
}

void schbench_workload::show(std::string& out, const plat_histogram& h, const char* label,
                             const char* units, u64 runtime_s, bool rps_list) const
{
    if (sp_.variant == schbench_variant::old) {
        // 2021: "Latency percentiles (usec) runtime T (s) (N total samples)", 7 lines.
        const auto pcts = h.percentiles({50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9});
        out += fmt::format("{} percentiles ({}) runtime {} (s) ({} total samples)\n", label, units,
                           runtime_s, h.nr_samples());
        for (const auto& q : pcts)
            out += fmt::format("\t{}{:.1f}th: {} ({} samples)\n", q.p == 99.0 ? "*" : "", q.p,
                               q.value, q.samples);
        out += fmt::format("\tmin={}, max={}\n", h.min(), h.max());
        return;
    }
    // v1.x show_latencies(): plist {20, 50, 90, 99, 99.9}, masks select the lines.
    const auto pcts = h.percentiles({20.0, 50.0, 90.0, 99.0, 99.9});
    out += fmt::format("{} percentiles ({}) runtime {} (s) ({} total samples)\n", label, units,
                       runtime_s, h.nr_samples());
    for (const auto& q : pcts) {
        const bool shown = rps_list ? q.p <= 90.0 : q.p >= 50.0;
        if (!shown)
            continue;
        const bool star = rps_list ? q.p == 50.0 : q.p == 99.0;
        out += fmt::format("\t{}{:.1f}th: {:<10} ({} samples)\n", star ? "* " : "  ", q.p, q.value,
                           q.samples);
    }
    out += fmt::format("\t  min={}, max={}\n", h.min(), h.max());
}

void schbench_workload::main_tick(sim_time now)
{
    if (start_ == 0 && last_calc_ == 0) {
        start_ = last_calc_ = last_rps_calc_ = zero_time_ = now;
    }
    const bool old = sp_.variant == schbench_variant::old;
    const sim_time runtime_delta = (usec_of(now) - usec_of(start_)) * NSEC_PER_USEC;
    if (runtime_delta >= sp_.runtime)
        main_done_ = true;
    auto reset = [&] {
        rps_stats_.clear();
        lock_window_ = lock_stats{};
        wakeup_ns_.clear();
        for (std::size_t i = 0; i + 1 < td_.size(); ++i) {
            td_[i].wakeup_stats.clear();
            td_[i].request_stats.clear();
        }
    };
    if ((old || sp_.rps == 0) && runtime_delta > sp_.warmup && !warmup_done_ && sp_.warmup > 0) {
        warmup_done_ = true;
        out_ += "warmup done, zeroing stats\n";
        zero_time_ = now;
        reset();
    } else {
        const sim_time delta_us = usec_of(now) - usec_of(last_rps_calc_);
        u64 loops = 0;
        plat_histogram wake;
        plat_histogram req;
        sim_dur rt = 0;
        combine(wake, req, loops, rt);
        // (loops - last) * USEC_PER_SEC / delta: NaN (0/0) at the first pass becomes 0.
        const double rps = delta_us > 0 ? static_cast<double>(loops - last_loop_count_) * 1e6 /
                                              static_cast<double>(delta_us)
                                        : 0.0;
        last_loop_count_ = loops;
        last_rps_calc_ = now;
        if (!old)
            rps_stats_.add(static_cast<unsigned>(rps));
        if (now - last_calc_ >= sp_.interval) {
            last_calc_ = now;
            const u64 rs = static_cast<u64>(runtime_delta / NSEC_PER_SEC);
            if (old) {
                show(out_, wake, "Latency", "usec", rs, false);
            } else {
                show(out_, wake, "Wakeup Latencies", "usec", rs, false);
                show(out_, req, "Request Latencies", "usec", rs, false);
                show(out_, rps_stats_, "RPS", "requests", rs, true);
                u64 mu = 0;
                u64 wu = 0;
                sched_delay(mu, wu);
                out_ += fmt::format("sched delay: message {} (usec) worker {} (usec)\n", mu, wu);
                out_ += fmt::format("current rps: {:.2f}\n", rps);
            }
        }
    }
    if (sp_.zerotime > 0 && now - zero_time_ > sp_.zerotime) {
        zero_time_ = now;
        reset();
    }
}

void schbench_workload::main_exit()
{
    u64 loops = 0;
    sim_dur rt = 0;
    combine(final_wakeup_, final_request_, loops, rt);
    const u64 rs = static_cast<u64>(sp_.runtime / NSEC_PER_SEC);
    if (sp_.variant == schbench_variant::old) {
        show(out_, final_wakeup_, "Latency", "usec", rs, false);
    } else {
        show(out_, final_wakeup_, "Wakeup Latencies", "usec", rs, false);
        show(out_, final_request_, "Request Latencies", "usec", rs, false);
        show(out_, rps_stats_, "RPS", "requests", rs, true);
        out_ += fmt::format("average rps: {:.2f}\n",
                            static_cast<double>(loops) / static_cast<double>(rs));
        u64 mu = 0;
        u64 wu = 0;
        sched_delay(mu, wu);
        out_ += fmt::format("sched delay: message {} (usec) worker {} (usec)\n", mu, wu);
    }
    finished_ = true;
}

std::string schbench_workload::report() const
{
    if (finished_)
        return out_;
    return out_ + "# schedlab: not finished when the run stopped\n";
}

std::vector<workload_metric> schbench_workload::metrics() const
{
    if (!finished_)
        return {};
    auto p = [](const plat_histogram& h, double q) -> double {
        const auto v = h.percentiles({q});
        return v.empty() ? 0.0 : v[0].value;
    };
    std::vector<workload_metric> m = {
        {"wakeup_p50", "us", p(final_wakeup_, 50.0), false},
        {"wakeup_p99", "us", p(final_wakeup_, 99.0), false},
    };
    if (sp_.variant == schbench_variant::v1) {
        m.push_back({"request_p50", "us", p(final_request_, 50.0), false});
        m.push_back({"request_p99", "us", p(final_request_, 99.0), false});
        m.push_back({"rps_p50", "requests/s", p(rps_stats_, 50.0), true});
        m.push_back({"average_rps", "requests/s",
                     static_cast<double>(total_requests()) /
                         (static_cast<double>(sp_.runtime) / 1e9),
                     true});
    }
    return m;
}

std::string schbench_workload::summary() const
{
    std::string out;
    if (wakeup_ns_.nr() > 0) {
        const wakeup_ns_histogram& h = wakeup_ns_;
        const auto ns = [](s64 v) {
            return v < 0 ? std::string("past the range") : fmt::format("{}", v);
        };
        const s64 p99 = h.printed(99.0, 0);
        const s64 x99 = h.offset_percentile(99.0);
        out += fmt::format(
            "# schbench wakeups in ns ({}; schedlab's figure): {} wakeups, stamp to the "
            "worker's timestamp p50 {} p90 {} p99 {} p99.9 {}; ",
            sp_.zerotime > 0 || sp_.warmup > 0 ? "since the last zeroing" : "whole run", h.nr(),
            ns(h.latency_percentile(50.0)), ns(h.latency_percentile(90.0)),
            ns(h.latency_percentile(99.0)), ns(h.latency_percentile(99.9)));
        if (p99 > 0 && x99 >= 0)
            out += fmt::format("the printed p99, {} us, is {} ns from the start of the stamp's "
                               "microsecond ({} ns into it): {} ns more on every wakeup would "
                               "print {}, {} ns less {}\n",
                               p99, x99, x99 - 1000 * p99, ns(h.shift_to_move(99.0, 1)),
                               p99 + 1, ns(h.shift_to_move(99.0, -1)), p99 - 1);
        else
            out += "the printed p99 lies past the ns range\n";
    }
    if (sp_.variant != schbench_variant::v1 || sp_.no_locking || lock_total_.requests == 0)
        return out;
    auto line = [](const char* what, const lock_stats& ls) {
        const double pct = ls.requests > 0 ? 100.0 * static_cast<double>(ls.episodes) /
                                                 static_cast<double>(ls.requests)
                                           : 0.0;
        const double avg_ms = ls.episodes > 0 ? static_cast<double>(ls.spin_ns) / 1e6 /
                                                    static_cast<double>(ls.episodes)
                                              : 0.0;
        return fmt::format("# schbench per-CPU locks ({}): {} of {} requests found the lock held "
                           "({:.2f}%), spinning {:.3f} ms ({:.3f} ms each); the holder was "
                           "preempted on that CPU in {}, on another CPU in {}; {} unlocks on "
                           "another CPU than the lock's (the holder migrated while holding)\n",
                           what, ls.episodes, ls.requests, pct,
                           static_cast<double>(ls.spin_ns) / 1e6, avg_ms, ls.holder_preempted,
                           ls.holder_elsewhere, ls.unlocks_moved);
    };
    out += line("whole run", lock_total_);
    if (sp_.zerotime > 0 || sp_.warmup > 0)
        out += line("since the last zeroing", lock_window_);
    return out;
}

std::unique_ptr<workload> make_schbench_workload(const std::vector<std::string>& args)
{
    return std::make_unique<schbench_workload>(parse_schbench_options(args));
}

} // namespace schedlab
