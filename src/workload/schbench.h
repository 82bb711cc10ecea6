// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * schbench (masoncl/schbench): message threads hand work to
 * worker threads through a futex handshake and measure the wakeup latency
 * (the message thread's timestamp to the worker running) and, in v1.x, the
 * request latency and the requests per second.
 *
 * Two versions, chosen with --variant (schedlab's option; schbench has
 * none): `v1` (default; the April 2023 rewrite and later: per-CPU lock,
 * matrix-multiply "think time" with a cache footprint, usleep per request,
 * RPS mode -R) and `old` (<= 2021: workers spin -c usec, the message thread
 * spins -C usec and sleeps -s usec + jitter; latency percentiles only).
 *
 * The latency histograms are schbench's (fio's "plat" buckets: 8 bits of
 * precision, 19 groups, bucket midpoints reported), at gettimeofday()'s
 * microsecond resolution; zero deltas are not recorded, as schbench does.
 *
 * Not modelled: pipe mode (-p), auto-RPS (-A), CPU pinning (-M/-W/-P), JSON
 * output (-j), --split, old schbench's RPS and auto modes; the matrix
 * arithmetic's cache misses (its CPU time is a fixed ns per multiply-add).
 */
#include "workload/program.h"
#include "workload/workload.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

/*
 * model: schbench's (and fio's) latency histogram: values below 512 are
 * exact; above, each power of two is split into 256 buckets; a percentile
 * is the midpoint of the bucket where the running count first reaches
 * p% of the samples (calc_percentiles()).
 */
class plat_histogram {
public:
    static constexpr unsigned PLAT_BITS = 8;
    static constexpr unsigned PLAT_VAL = 1u << PLAT_BITS;
    static constexpr unsigned PLAT_GROUP_NR = 19;
    static constexpr unsigned PLAT_NR = PLAT_GROUP_NR * PLAT_VAL;

    static unsigned val_to_idx(unsigned val);
    static unsigned idx_to_val(unsigned idx);

    void add(unsigned v);
    void merge(const plat_histogram& o);
    void clear() { *this = plat_histogram(); }
    u64 nr_samples() const { return nr_; }
    unsigned min() const { return min_; }
    unsigned max() const { return max_; }

    struct pct {
        double p;
        unsigned value;
        u64 samples; ///< samples between the previous percentile's bucket and this one
    };
    /// The percentiles of `list` (ascending), as schbench computes them.
    std::vector<pct> percentiles(const std::vector<double>& list) const;

private:
    std::vector<u32> plat_ = std::vector<u32>(PLAT_NR, 0);
    u64 nr_ = 0;
    unsigned min_ = 0;
    unsigned max_ = 0;
};

/*
 * schedlab's own figure (schbench prints none): each wakeup's latency at the simulator's
 * nanosecond resolution, and where schbench's microsecond percentile sits inside its
 * microsecond. schbench's delta is usec(woken) - usec(stamp) (gettimeofday() in both
 * threads), which is floor(x / 1000) for x the ns from the start of the stamp's microsecond
 * to the worker's timestamp; zero deltas (x < 1000) are not recorded, as schbench does. So
 * a percentile of x, in ns, is schbench's percentile (below 512 us, where its buckets are
 * exact) and its place inside the microsecond; shifting every x by the same ns shows how
 * far each wakeup would have to move for the printed value to change. Values are kept in
 * 1 ns buckets up to NS_RANGE and counted past it.
 */
class wakeup_ns_histogram {
public:
    static constexpr s64 NS_RANGE = s64{1} << 16;

    void add(sim_time stamp, sim_time woken);
    void clear();
    u64 nr() const { return nr_; } ///< every wakeup, recorded by schbench or not (delta 0)
    /// schbench's p-th percentile in us of the deltas, had every timestamp come `shift` ns
    /// later (earlier if negative); -1 if it lies past NS_RANGE, 0 if no delta is recorded.
    s64 printed(double p, s64 shift) const;
    /// The p-th percentile in ns of x over the wakeups schbench records (x >= 1000), as its
    /// percentiles() ranks them; -1 past NS_RANGE.
    s64 offset_percentile(double p) const;
    /// The p-th percentile in ns of woken - stamp over every wakeup; -1 past NS_RANGE.
    s64 latency_percentile(double p) const;
    /// The fewest ns every wakeup would take longer (dir > 0) or shorter (dir < 0) for the
    /// printed p-th percentile to move by a microsecond that way; -1 if none in range.
    s64 shift_to_move(double p, int dir) const;

private:
    std::vector<u32> x_;   ///< by x
    std::vector<u32> lat_; ///< by woken - stamp
    u64 x_over_ = 0;
    u64 lat_over_ = 0;
    u64 nr_ = 0;
};

enum class schbench_variant { v1, old };

struct schbench_params {
    schbench_variant variant = schbench_variant::v1; ///< --variant (schedlab only)
    unsigned message_threads = 1; ///< -m (old: 2)
    unsigned threads = 0;         ///< -t workers per message thread (v1: 0 = ceil(ncpus / m); old: 16)
    sim_dur runtime = secs(30);   ///< -r
    sim_dur warmup = 0;           ///< -w (old: 5 s)
    sim_dur interval = secs(10);  ///< -i
    sim_dur zerotime = 0;         ///< -z
    // v1.x
    u64 cache_footprint_kb = 256; ///< -F
    u64 operations = 5;           ///< -n
    sim_dur sleep = usecs(100);   ///< -s sleep_usec
    bool no_locking = false;      ///< -L
    bool calibrate = false;       ///< -C (v1: calibrate; implies -L)
    u64 rps = 0;                  ///< -R requests per second (v1)
    // old
    sim_dur old_sleeptime = usecs(30'000);      ///< -s
    sim_dur old_cputime = usecs(30'000);        ///< -c
    sim_dur old_message_cputime = usecs(30'000); ///< -C
    bool old_jitter = false;                    ///< -j
    /// Model: CPU time of one multiply-add of the matrix "think time" (an
    /// L2-resident naive triple loop, about two cycles at 4 GHz).
    double ns_per_mac = 0.5;
};

schbench_params parse_schbench_options(const std::vector<std::string>& args);

/*
 * model: one request's matrix-math time relative to its median, in parts per million,
 * at a uniform u_ppm in [0, 1'000'000): the piecewise linear inverse CDF through a
 * measured run's min, p50, p90, p99, p99.9 and max. The math of schbench.c's
 * do_some_math() is the same instructions every request (a fixed naive product, no
 * data-dependent branch), so its variation is the machine's. The knots are this
 * project's 2-vCPU KVM guest (AMD EPYC), masoncl/schbench 24e32b8 `schbench -C -m 1
 * -t 1 -r 10` (calibration mode: the math alone; one worker, so no CPU sharing inside
 * the guest): 2931 requests, min 2963, p50 3172, p90 3236, p99 3540, p99.9 4552,
 * max 4891 us (data/machines/schbench-calibrate-t1.txt). Not a figure of the published
 * bergamo-2s, which published no request spread.
 */
u64 schbench_math_factor_ppm(u64 u_ppm);

class schbench_workload final : public workload {
public:
    explicit schbench_workload(schbench_params sp) : sp_(sp) {}

    std::string name() const override { return "schbench"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override { return finished_; }
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;
    /// "# schbench wakeup latency in ns ...": the wakeups at ns resolution (wakeup_ns());
    /// "# schbench per-CPU locks ...": the per-CPU lock's contention (v1 with locking).
    std::string summary() const override;

    /*
     * schedlab's own figures of schbench's per-CPU lock (not printed by schbench): a
     * request's trylock loop finds its CPU's lock held when the holder was preempted on
     * that CPU (a wakeup preempted it) or migrated away while holding it; the spinner then
     * runs until the holder has run to its unlock.
     */
    struct lock_stats {
        u64 requests = 0;          ///< do_work() calls that took the lock
        u64 episodes = 0;          ///< of them, those whose first trylock found the lock held
        sim_dur spin_ns = 0;       ///< CPU time spun in trylock loops
        u64 holder_preempted = 0;  ///< episodes whose holder was queued, not running, on the lock's CPU
        u64 holder_elsewhere = 0;  ///< episodes whose holder was on another CPU (running or queued)
        u64 unlocks_moved = 0;     ///< unlocks on a CPU other than the lock's (migrated while holding)
    };
    /// Since the run's start, and since the last zeroing of the statistics (-w, -z).
    const lock_stats& lock_total() const { return lock_total_; }
    const lock_stats& lock_window() const { return lock_window_; }

    /// Per thread (message thread or worker) state, schbench's thread_data.
    struct thread_data {
        u32 futex = 0; ///< FUTEX_BLOCKED (0) / FUTEX_RUNNING (1)
        wait_queue futex_waiters;
        sim_time wake_time = 0;
        int msg = -1;             ///< worker: index of its message thread
        std::vector<int> posted;  ///< message thread: the workers on its list (xlist)
        std::vector<sim_time> requests; ///< worker, RPS mode: pending requests
        u64 pending = 0;
        plat_histogram wakeup_stats;
        plat_histogram request_stats;
        u64 loop_count = 0;
        sim_time start = 0;
        sim_dur runtime = 0;
        counter* join = nullptr;
        task_struct* task = nullptr;
    };

    const schbench_params& params() const { return sp_; }
    unsigned workers_per_message() const { return workers_; }
    const std::vector<thread_data>& threads() const { return td_; }
    /// The combined histograms of the last report (final once finished()).
    const plat_histogram& wakeup() const { return final_wakeup_; }
    const plat_histogram& request() const { return final_request_; }
    const plat_histogram& rps() const { return rps_stats_; }
    /// The wakeups at ns resolution, over the same window as wakeup().
    const wakeup_ns_histogram& wakeup_ns() const { return wakeup_ns_; }
    u64 total_requests() const;
    /// Matrix size and CPU time of one request's math (v1).
    u64 matrix_size() const { return matrix_size_; }
    sim_dur math_ns() const { return math_ns_; }
    u64 lock_spins() const { return lock_spins_; }

private:
    thread_data& td(int i) { return td_[static_cast<std::size_t>(i)]; }
    bool old() const { return sp_.variant == schbench_variant::old; }
    void main_tick(sim_time now); ///< sleep_for_runtime(): one pass of its loop
    void main_exit();             ///< the final statistics, after the joins
    task_code run_main(task_context& t, int self);
    task_code run_message(task_context& t, int self);
    task_code run_rps(task_context& t, int self);
    task_code run_worker(task_context& t, int self);
    task_code join(task_context& t, thread_data& th);
    task_code fwait(task_context& t, thread_data& me);
    task_code worker_fwait(task_context& t, thread_data& me);
    task_code wake_posted(task_context& t, thread_data& me);
    task_code do_work(task_context& t, thread_data& me);
    void combine(plat_histogram& wake, plat_histogram& req, u64& loops, sim_dur& runtime) const;
    void show(std::string& out, const plat_histogram& h, const char* label, const char* units,
              u64 runtime_s, bool rps_list) const;
    void sched_delay(u64& msg_us, u64& worker_us) const;

    schbench_params sp_;
    workload_state state_;
    unsigned workers_ = 0;
    std::vector<thread_data> td_; ///< message thread i at i * (workers + 1), its workers after it
    std::vector<int> msg_index_;
    u64 matrix_size_ = 0;
    sim_dur math_ns_ = 0;
    std::string out_;
    bool finished_ = false;
    // sleep_for_runtime() state
    sim_time start_ = 0;
    sim_time last_calc_ = 0;
    sim_time last_rps_calc_ = 0;
    sim_time zero_time_ = 0;
    u64 last_loop_count_ = 0;
    bool warmup_done_ = false;
    plat_histogram rps_stats_;
    plat_histogram final_wakeup_;
    plat_histogram final_request_;
    wakeup_ns_histogram wakeup_ns_; ///< since the last zeroing (schedlab's figure)
    bool stopping_ = false;              ///< -r has passed: every thread winds down
    bool main_done_ = false;             ///< sleep_for_runtime() has returned
    std::vector<task_struct*> cpu_lock_; ///< per-CPU lock holder (v1 -L off)
    u64 lock_spins_ = 0;
    lock_stats lock_total_;
    lock_stats lock_window_;
};

std::unique_ptr<workload> make_schbench_workload(const std::vector<std::string>& args);

} // namespace schedlab
