// SPDX-License-Identifier: GPL-2.0-only
/*
 * schbench, old (<= 2021) and v1.x: see schbench.h.
 */
#include "workload/schbench.h"

#include "sched/core.h"
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
    // the machine); 40 KiB per task measured (docs/testing.md).
    check_task_count(static_cast<double>(m) * (static_cast<double>(t) + 1), 40e3,
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

enum class role { main, message, worker };

/*
 * One schbench thread (main, message thread or worker) as a state machine.
 * Each state either finishes at once or returns the CPU time of the
 * syscall or computation it starts; the next state applies its effect when
 * that time has been consumed, as program_task does (program.h).
 */
class schbench_thread final : public task_behaviour {
public:
    schbench_thread(schbench_workload& w, role r, int self) : w_(w), role_(r), self_(self) {}

    task_action step(kernel& k, task_struct& p) override;

private:
    enum st : u8 {
        // main
        M_CREATE, M_CREATED, M_TICK, M_TICKED, M_SLEEP, M_STOP, M_JOIN, M_JOIN_POSTED, M_DONE,
        // message thread
        C_CREATE, C_CREATED, L_TOP, L_STAMPED, L_POST_NEXT, L_POSTED, L_AFTER_WAKE, L_FWAIT,
        L_FWAIT_SYS, L_OLD_SPIN, L_OLD_SLEEP, L_OLD_SLEPT,
        R_TOP, R_STARTED, R_NEXT, R_STAMPED, R_ALLOCATED, R_POSTED, R_BUSY_SLEPT, R_END,
        R_END_STAMPED, R_WAIT_SLEPT,
        S_WAKE, S_STAMPED, S_POST_NEXT, S_POSTED, S_JOIN_NEXT, S_JOIN_POSTED, S_JOIN_WAIT,
        // worker
        W_TOP, W_OLD_SPIN, W_STAMPED, W_MSG_POSTED, W_FWAIT, W_FWAIT_SYS, W_WOKEN, W_REQ,
        W_CAL_SLEPT, W_CAL_WOKE, W_REQ_STARTED, W_USLEPT, W_LOCK, W_SPIN, W_LOCKED, W_MATH_DONE, W_REQ_DONE,
        // all
        X_EXIT, X_EXITED,
    };

    task_action cpu(sim_dur ns)
    {
        ns += owed_;
        owed_ = 0;
        return task_action::cpu(ns);
    }
    task_action sys(kernel& k, task_struct& p, sim_dur cost, st next)
    {
        st_ = next;
        return cpu(k.charge(p, cost));
    }
    /// fpost(): wake `t` if it was blocked; returns the syscall's cost (0 if none).
    bool fpost_needed(schbench_workload::thread_data& t)
    {
        if (t.futex != FUTEX_BLOCKED)
            return false;
        t.futex = FUTEX_RUNNING;
        return true;
    }

    schbench_workload& w_;
    role role_;
    int self_;
    st st_ = W_TOP;
    bool started_ = false;
    sim_dur owed_ = 0;
    // loop cursors
    std::size_t i_ = 0;
    std::vector<int> batch_;
    sim_time stamp_ = 0;
    sim_time spin_until_ = 0;
    int lock_cpu_ = -1;
    sim_time work_start_ = 0;
    bool have_req_ = false;
    int cur_tid_ = 0;
    u64 rps_i_ = 0;
    sim_time rps_start_ = 0;
};

task_action schbench_thread::step(kernel& k, task_struct& p)
{
    const cost_params& c = k.costs();
    const schbench_params& sp = w_.params();
    const bool old = sp.variant == schbench_variant::old;
    const bool rps_mode = !old && sp.rps > 0;
    schbench_workload::thread_data& me = w_.td(self_);
    const unsigned nw = w_.workers_per_message();
    auto wake_cost = [&](int nr) { return nr > 0 ? k.charge(p, c.wakeup * nr) : sim_dur{0}; };

    if (!started_) {
        started_ = true;
        me.task = &p;
        me.start = k.now();
        st_ = role_ == role::main ? M_CREATE : role_ == role::message ? C_CREATE : W_TOP;
        i_ = 0;
    }

    for (int guard = 0;; ++guard) {
        SIM_BUG_ON(guard > 1'000'000, "schbench pid {} stuck in state {}", p.pid,
                   static_cast<int>(st_));
        switch (st_) {
        /* ---- main: sleep_for_runtime() ---- */
        case M_CREATE:
            if (i_ == w_.params().message_threads) {
                st_ = M_TICK;
                continue;
            }
            return sys(k, p, c.fork_thread, M_CREATED);
        case M_CREATED: {
            const int idx = static_cast<int>(i_ * (nw + 1));
            task_opts o;
            o.comm = "schbench-msg";
            o.thread = true;
            k.fork(p, std::make_unique<schbench_thread>(w_, role::message, idx), o);
            ++i_;
            st_ = M_CREATE;
            continue;
        }
        case M_TICK:
            return sys(k, p, c.gettime, M_TICKED);
        case M_TICKED:
            w_.main_tick(k);
            if (w_.main_done) {
                st_ = M_STOP;
                continue;
            }
            return sys(k, p, c.nanosleep, M_SLEEP);
        case M_SLEEP:
            k.schedule_timeout(p, secs(1));
            st_ = M_TICK;
            return task_action::sleep();
        case M_STOP:
            w_.stopping = true;
            i_ = 0;
            st_ = M_JOIN;
            continue;
        case M_JOIN: {
            if (i_ == w_.params().message_threads) {
                st_ = M_DONE;
                continue;
            }
            auto& m = w_.td(static_cast<int>(i_ * (nw + 1)));
            if (!have_req_) { // first: fpost the message thread
                have_req_ = true;
                if (fpost_needed(m))
                    return sys(k, p, c.futex_wake, M_JOIN_POSTED);
            }
            if (m.join->value < 1) {
                m.join->waiters.add(p);
                return task_action::sleep();
            }
            have_req_ = false;
            ++i_;
            return cpu(k.charge(p, c.wait_child));
        }
        case M_JOIN_POSTED: {
            auto& m = w_.td(static_cast<int>(i_ * (nw + 1)));
            const int nr = m.futex_waiters.wake_up(k, 1, 0);
            st_ = M_JOIN;
            if (nr)
                return cpu(wake_cost(nr));
            continue;
        }
        case M_DONE:
            st_ = X_EXIT;
            continue;

        /* ---- message thread ---- */
        case C_CREATE:
            if (i_ == nw) {
                st_ = rps_mode ? R_TOP : L_TOP;
                continue;
            }
            return sys(k, p, c.fork_thread, C_CREATED);
        case C_CREATED: {
            task_opts o;
            o.comm = "schbench-worker";
            o.thread = true;
            const int widx = self_ + 1 + static_cast<int>(i_);
            w_.td(widx).msg = self_;
            k.fork(p, std::make_unique<schbench_thread>(w_, role::worker, widx), o);
            ++i_;
            st_ = C_CREATE;
            continue;
        }
        case L_TOP: // run_msg_thread(): futex = BLOCKED; xlist_wake_all()
            me.futex = FUTEX_BLOCKED;
            batch_ = std::move(me.posted);
            me.posted.clear();
            return sys(k, p, c.gettime, L_STAMPED);
        case L_STAMPED:
        case S_STAMPED:
            for (int wi : batch_)
                w_.td(wi).wake_time = k.now();
            i_ = 0;
            st_ = st_ == L_STAMPED ? L_POST_NEXT : S_POST_NEXT;
            continue;
        case L_POST_NEXT:
        case S_POST_NEXT: {
            const bool stopping_pass = st_ == S_POST_NEXT;
            if (i_ == batch_.size()) {
                if (stopping_pass) {
                    i_ = 0;
                    have_req_ = false;
                    st_ = S_JOIN_NEXT;
                } else {
                    st_ = L_AFTER_WAKE;
                }
                continue;
            }
            auto& t = w_.td(batch_[i_]);
            ++i_;
            if (fpost_needed(t))
                return sys(k, p, c.futex_wake, stopping_pass ? S_POSTED : L_POSTED);
            continue;
        }
        case L_POSTED:
        case S_POSTED: {
            const int nr = w_.td(batch_[i_ - 1]).futex_waiters.wake_up(k, 1, 0);
            st_ = st_ == L_POSTED ? L_POST_NEXT : S_POST_NEXT;
            if (nr)
                return cpu(wake_cost(nr));
            continue;
        }
        case L_AFTER_WAKE:
            if (w_.stopping) {
                st_ = S_WAKE;
                continue;
            }
            st_ = L_FWAIT;
            continue;
        case L_FWAIT: // fwait(): wait for a post
            if (me.futex == FUTEX_RUNNING) {
                me.futex = FUTEX_BLOCKED;
                st_ = old ? L_OLD_SPIN : L_TOP;
                spin_until_ = k.now() + sp.old_message_cputime;
                continue;
            }
            return sys(k, p, c.futex_wait, L_FWAIT_SYS);
        case L_FWAIT_SYS:
            st_ = L_FWAIT;
            if (me.futex == FUTEX_BLOCKED) {
                me.futex_waiters.add_exclusive(p);
                return task_action::sleep();
            }
            continue;
        case L_OLD_SPIN: // old: spin message_cputime (a gettimeofday loop: wall time)
            if (k.now() >= spin_until_) {
                st_ = L_OLD_SLEEP;
                continue;
            }
            return cpu(std::min(wall_spin_chunk, spin_until_ - k.now()));
        case L_OLD_SLEEP:
            return sys(k, p, c.nanosleep, L_OLD_SLEPT);
        case L_OLD_SLEPT: {
            // usleep(sleeptime + rand() % (sleeptime / 4))
            const sim_dur base = sp.old_sleeptime;
            const sim_dur q = base / NSEC_PER_USEC / 4;
            const sim_dur extra = q > 0 ? usecs(static_cast<s64>(p.rng.below(static_cast<u64>(q)))) : 0;
            k.schedule_timeout(p, base + extra);
            st_ = L_TOP;
            return task_action::sleep();
        }

        /* ---- message thread, v1 RPS mode: run_rps_thread() ---- */
        case R_TOP:
            return sys(k, p, c.gettime, R_STARTED);
        case R_STARTED:
            rps_start_ = k.now();
            rps_i_ = 0;
            st_ = R_NEXT;
            continue;
        case R_NEXT: {
            const u64 per_msg = sp.rps / sp.message_threads;
            if (rps_i_ >= per_msg || w_.stopping) {
                st_ = R_END;
                continue;
            }
            ++rps_i_;
            return sys(k, p, c.gettime, R_STAMPED);
        }
        case R_STAMPED: {
            const int widx = self_ + 1 + (cur_tid_ % static_cast<int>(nw));
            ++cur_tid_;
            auto& t = w_.td(widx);
            stamp_ = k.now();
            if (t.pending > rps_batch)
                return sys(k, p, c.nanosleep, R_BUSY_SLEPT);
            ++t.pending;
            i_ = static_cast<std::size_t>(widx);
            return sys(k, p, c.gettime, R_ALLOCATED); // allocate_request(): gettimeofday
        }
        case R_ALLOCATED: {
            auto& t = w_.td(static_cast<int>(i_));
            t.requests.push_back(k.now());
            t.wake_time = stamp_;
            if (fpost_needed(t))
                return sys(k, p, c.futex_wake, R_POSTED);
            st_ = R_NEXT;
            continue;
        }
        case R_POSTED: {
            const int nr = w_.td(static_cast<int>(i_)).futex_waiters.wake_up(k, 1, 0);
            st_ = R_NEXT;
            if (nr)
                return cpu(wake_cost(nr));
            continue;
        }
        case R_BUSY_SLEPT:
            // usleep(100) for a worker with too much pending, then the next request.
            k.schedule_timeout(p, usecs(100));
            st_ = R_NEXT;
            return task_action::sleep();
        case R_END:
            return sys(k, p, c.gettime, R_END_STAMPED);
        case R_END_STAMPED: {
            const sim_dur delta = (usec_of(k.now()) - usec_of(rps_start_)) * NSEC_PER_USEC;
            if (!w_.stopping && delta < secs(1)) {
                stamp_ = secs(1) - delta;
                return sys(k, p, c.nanosleep, R_WAIT_SLEPT);
            }
            if (w_.stopping) {
                // fpost every worker, then join them (S_JOIN_NEXT posts again: harmless).
                i_ = 0;
                have_req_ = false;
                st_ = S_JOIN_NEXT;
                continue;
            }
            st_ = R_TOP;
            continue;
        }
        case R_WAIT_SLEPT:
            k.schedule_timeout(p, stamp_);
            st_ = R_END;
            return task_action::sleep();

        /* ---- message thread: stopping ---- */
        case S_WAKE:
            batch_ = std::move(me.posted);
            me.posted.clear();
            return sys(k, p, c.gettime, S_STAMPED);
        case S_JOIN_NEXT: { // for each worker: fpost(), pthread_join()
            if (i_ == nw) {
                st_ = X_EXIT;
                continue;
            }
            auto& t = w_.td(self_ + 1 + static_cast<int>(i_));
            if (!have_req_) {
                have_req_ = true;
                if (fpost_needed(t))
                    return sys(k, p, c.futex_wake, S_JOIN_POSTED);
            }
            st_ = S_JOIN_WAIT;
            continue;
        }
        case S_JOIN_POSTED: {
            auto& t = w_.td(self_ + 1 + static_cast<int>(i_));
            const int nr = t.futex_waiters.wake_up(k, 1, 0);
            st_ = S_JOIN_WAIT;
            if (nr)
                return cpu(wake_cost(nr));
            continue;
        }
        case S_JOIN_WAIT: {
            auto& t = w_.td(self_ + 1 + static_cast<int>(i_));
            if (t.join->value < 1) {
                t.join->waiters.add(p);
                return task_action::sleep();
            }
            ++i_;
            have_req_ = false;
            st_ = S_JOIN_NEXT;
            return cpu(k.charge(p, c.wait_child));
        }

        /* ---- worker ---- */
        case W_TOP:
            if (w_.stopping) {
                st_ = X_EXIT;
                continue;
            }
            if (old) {
                // old: spin cputime (random in [1, cputime] with -j), count a loop, then post.
                sim_dur spin = sp.old_cputime;
                if (sp.old_jitter && spin > NSEC_PER_USEC)
                    spin = usecs(1 + static_cast<s64>(p.rng.below(
                                         static_cast<u64>(spin / NSEC_PER_USEC))));
                spin_until_ = k.now() + spin;
                st_ = W_OLD_SPIN;
                continue;
            }
            // msg_and_wait(): futex = BLOCKED; gettimeofday(&wake_time)
            me.futex = FUTEX_BLOCKED;
            return sys(k, p, c.gettime, W_STAMPED);
        case W_OLD_SPIN:
            if (k.now() >= spin_until_) {
                ++me.loop_count;
                me.runtime = k.now() - me.start;
                me.futex = FUTEX_BLOCKED;
                return sys(k, p, c.gettime, W_STAMPED);
            }
            return cpu(std::min(wall_spin_chunk, spin_until_ - k.now()));
        case W_STAMPED: {
            me.wake_time = k.now();
            if (rps_mode) {
                me.pending = 0;
                if (!me.requests.empty()) { // request_splice()
                    me.futex = FUTEX_RUNNING;
                    have_req_ = true;
                    st_ = W_REQ;
                    continue;
                }
            } else {
                w_.td(me.msg).posted.push_back(self_); // xlist_add()
            }
            auto& m = w_.td(me.msg);
            if (fpost_needed(m))
                return sys(k, p, c.futex_wake, W_MSG_POSTED);
            st_ = W_FWAIT;
            continue;
        }
        case W_MSG_POSTED: {
            const int nr = w_.td(me.msg).futex_waiters.wake_up(k, 1, 0);
            st_ = W_FWAIT;
            if (nr)
                return cpu(wake_cost(nr));
            continue;
        }
        case W_FWAIT:
            if (w_.stopping || me.futex == FUTEX_RUNNING) {
                if (me.futex == FUTEX_RUNNING)
                    me.futex = FUTEX_BLOCKED;
                return sys(k, p, c.gettime, W_WOKEN);
            }
            return sys(k, p, c.futex_wait, W_FWAIT_SYS);
        case W_FWAIT_SYS:
            st_ = W_FWAIT;
            if (me.futex == FUTEX_BLOCKED && !w_.stopping) {
                me.futex_waiters.add_exclusive(p);
                return task_action::sleep();
            }
            continue;
        case W_WOKEN: {
            const sim_time delta = usec_of(k.now()) - usec_of(me.wake_time);
            if (delta > 0)
                me.wakeup_stats.add(static_cast<unsigned>(delta));
            if (old || rps_mode) {
                st_ = W_TOP; // old: spin next; RPS: splice the requests
                continue;
            }
            have_req_ = false;
            st_ = W_REQ;
            continue;
        }
        case W_REQ:
            if (rps_mode && have_req_ && me.requests.empty()) {
                have_req_ = false;
                st_ = W_TOP;
                continue;
            }
            if (sp.calibrate && sp.sleep > 0) // calibrate: usleep before the timestamp
                return sys(k, p, c.nanosleep, W_CAL_SLEPT);
            return sys(k, p, c.gettime, W_REQ_STARTED);
        case W_CAL_SLEPT:
            k.schedule_timeout(p, sp.sleep);
            st_ = W_CAL_WOKE;
            return task_action::sleep();
        case W_CAL_WOKE:
            return sys(k, p, c.gettime, W_REQ_STARTED);
        case W_REQ_STARTED:
            work_start_ = k.now();
            if (!sp.calibrate && sp.sleep > 0) // simulated networking, a fresh timeslice
                return sys(k, p, c.nanosleep, W_USLEPT);
            st_ = W_LOCK;
            continue;
        case W_USLEPT:
            k.schedule_timeout(p, sp.sleep);
            st_ = W_LOCK;
            return task_action::sleep();
        case W_LOCK: // lock_this_cpu(): spin with trylock on this CPU's lock
            if (sp.no_locking) {
                st_ = W_LOCKED;
                continue;
            }
            lock_cpu_ = p.cpu;
            st_ = W_SPIN;
            continue;
        case W_SPIN: {
            task_struct*& holder = w_.cpu_lock[static_cast<std::size_t>(lock_cpu_)];
            if (holder == nullptr) {
                holder = &p;
                if (p.cpu != lock_cpu_) { // got it, but we migrated: unlock, again
                    holder = nullptr;
                    st_ = W_LOCK;
                    continue;
                }
                st_ = W_LOCKED;
                continue;
            }
            ++w_.lock_spins_;
            return cpu(spin_chunk);
        }
        case W_LOCKED:
            st_ = W_MATH_DONE;
            return cpu(w_.math_ns());
        case W_MATH_DONE:
            if (!sp.no_locking)
                w_.cpu_lock[static_cast<std::size_t>(lock_cpu_)] = nullptr;
            return sys(k, p, c.gettime, W_REQ_DONE);
        case W_REQ_DONE: {
            me.runtime = k.now() - me.start;
            if (rps_mode && !me.requests.empty())
                me.requests.erase(me.requests.begin());
            ++me.loop_count;
            const sim_time delta = usec_of(k.now()) - usec_of(work_start_);
            if (delta > 0)
                me.request_stats.add(static_cast<unsigned>(delta));
            if (rps_mode && have_req_ && !me.requests.empty()) {
                st_ = W_REQ;
                continue;
            }
            have_req_ = false;
            st_ = W_TOP;
            continue;
        }

        /* ---- exit ---- */
        case X_EXIT:
            if (role_ == role::main)
                w_.main_exit(k);
            return sys(k, p, k.exit_cost(p), X_EXITED);
        case X_EXITED:
            if (me.join) {
                ++me.join->value;
                me.join->waiters.wake_up_all(k, 0); // the CLONE_CHILD_CLEARTID futex
            }
            return task_action::do_exit();
        }
        SIM_BUG_ON(true, "schbench: unknown state {}", static_cast<int>(st_));
    }
}

} // namespace

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
void schbench_workload::setup(kernel& k)
{
    if (sp_.variant == schbench_variant::v1 && sp_.threads == 0) {
        workers_ = (static_cast<unsigned>(k.nr_cpu_ids()) + sp_.message_threads - 1) /
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
    cpu_lock.assign(static_cast<std::size_t>(k.nr_cpu_ids()), nullptr);

    const unsigned m = sp_.message_threads;
    td_.assign(static_cast<std::size_t>(m) * (workers_ + 1) + 1, thread_data{});
    for (std::size_t i = 0; i + 1 < td_.size(); ++i)
        td_[i].join = &state_.make_counter(fmt::format("join{}", i), 0);

    task_opts o;
    o.comm = "schbench";
    o.cpu = 0;
    const int main_idx = static_cast<int>(td_.size()) - 1;
    k.spawn(std::make_unique<schbench_thread>(*this, role::main, main_idx), o);
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

void schbench_workload::main_tick(kernel& k)
{
    const sim_time now = k.now();
    if (start_ == 0 && last_calc_ == 0) {
        start_ = last_calc_ = last_rps_calc_ = zero_time_ = now;
    }
    const bool old = sp_.variant == schbench_variant::old;
    const sim_time runtime_delta = (usec_of(now) - usec_of(start_)) * NSEC_PER_USEC;
    if (runtime_delta >= sp_.runtime)
        main_done = true;
    auto reset = [&] {
        rps_stats_.clear();
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

void schbench_workload::main_exit(kernel& k)
{
    (void)k;
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

std::unique_ptr<workload> make_schbench_workload(const std::vector<std::string>& args)
{
    return std::make_unique<schbench_workload>(parse_schbench_options(args));
}

} // namespace schedlab
