// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * STREAM (jeffhammond/STREAM stream.c with OpenMP): T
 * threads run Copy, Scale, Add and Triad over three arrays of N doubles,
 * each kernel an OpenMP parallel for (static equal chunks) ending in a
 * barrier, NTIMES times; the best time of each kernel (first repetition
 * excluded) gives "Best Rate MB/s".
 *
 * STREAM has no run-time options: N, NTIMES are compile-time and the thread
 * count is OMP_NUM_THREADS. schedlab takes them as --array-size,
 * --ntimes and --threads (an OMP_NUM_THREADS=N word before "stream" also
 * works), and the bandwidth model as --core-bw, --llc-bw, --node-bw (GB/s).
 *
 * model: memory bandwidth is a resource of the workload layer for now: a
 * running STREAM thread moves data at min(core-bw, llc-bw / running STREAM
 * threads in its LLC, node-bw / those in its NUMA node), re-evaluated every
 * 50 us slice, so threads stacked on one LLC or node share its bandwidth and
 * the slowest thread sets each kernel's time through the barrier. The
 * lead's cost-model issue will move bandwidth into the machine description.
 * Not modelled: cache effects (the arrays are assumed far larger than the
 * LLCs), NUMA placement of the pages (each thread's chunk is local to where
 * it runs), OpenMP's spin-then-sleep barrier (it sleeps at once), the
 * validation arithmetic.
 */
#include "workload/program.h"
#include "workload/workload.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

struct stream_params {
    unsigned threads = 0;             ///< --threads / OMP_NUM_THREADS (0: one per CPU, as OpenMP)
    u64 array_size = 10'000'000;      ///< --array-size (STREAM_ARRAY_SIZE)
    unsigned ntimes = 10;             ///< --ntimes (NTIMES)
    double core_bw = 20.0;            ///< --core-bw GB/s: one thread alone
    double llc_bw = 40.0;             ///< --llc-bw GB/s: shared by an LLC's threads
    double node_bw = 100.0;           ///< --node-bw GB/s: shared by a NUMA node's threads
};

stream_params parse_stream_options(const std::vector<std::string>& args);

class stream_workload final : public workload {
public:
    explicit stream_workload(stream_params sp) : sp_(sp) {}

    std::string name() const override { return "stream"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override { return finished_; }
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;

    static constexpr const char* labels[4] = {"Copy:      ", "Scale:     ", "Add:       ",
                                              "Triad:     "};
    /// Bytes a kernel moves over the whole arrays (2 or 3 arrays of 8-byte doubles).
    double kernel_bytes(int j) const;
    /// times[j][k] in seconds (microsecond resolution), as STREAM records them.
    const std::vector<std::array<double, 4>>& times() const { return times_; }
    double best_rate(int j) const; ///< MB/s
    unsigned nr_threads() const { return nthreads_; }
    const std::vector<task_struct*>& team() const { return team_; }
    /// Largest number of team threads seen running at once on one LLC.
    unsigned max_llc_sharing() const { return max_llc_share_; }
    /// Per parallel region: the first thread's start and the last thread's end of its work.
    const std::vector<std::pair<sim_time, sim_time>>& regions() const { return regions_; }

    // per-thread model state, used by the team's programs
    struct thread_state {
        bool in_phase = false;
        double remaining = 0; ///< bytes left in the current kernel
    };

private:
    sim_dur slice(task_context& t, unsigned th);
    u64 chunk_elems(unsigned t) const;
    task_code run_main(task_context& t);
    task_code run_team(task_context& t, unsigned th);

    stream_params sp_;
    workload_state state_;
    unsigned nthreads_ = 0;
    std::vector<thread_state> ts_;
    std::vector<task_struct*> team_;
    std::vector<std::array<double, 4>> times_;
    double test_time_ = 0;
    sim_time t0_ = 0;
    unsigned max_llc_share_ = 0;
    std::vector<std::pair<sim_time, sim_time>> regions_;
    std::vector<u64> region_bytes_; ///< bytes per element of each region, in order
    barrier* start_ = nullptr;      ///< the parallel regions' start barrier
    barrier* end_ = nullptr;        ///< ... and end barrier
    counter* joined_ = nullptr;     ///< the team threads' exits
    bool finished_ = false;
};

std::unique_ptr<workload> make_stream_workload(const std::vector<std::string>& args);

} // namespace schedlab
