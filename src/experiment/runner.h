// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Executes many runs on a pool of threads. Each run is an independent
 * simulation (no shared state), results are stored by the index of their
 * spec and never by completion order, so the output is identical for any
 * number of jobs.
 */
#include "experiment/run.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace schedlab {

/// Called (serialised) after each run completes with the number done so far.
using progress_fn = std::function<void(std::size_t done, std::size_t total)>;

/// Default --jobs: the hardware threads (at least 1).
int default_jobs();

/// Called (serialised) with each run's spec index and result as soon as the run finishes.
using result_fn = std::function<void(std::size_t index, run_result&& result)>;

/*
 * Runs every spec on `jobs` threads and hands each result to `on_result` as it
 * finishes (in completion order; the index says which spec), keeping none:
 * a sweep of any size holds only the runs in flight. Each spec is prepared on
 * the thread that runs it, so validate specs first (plan_compare does). When
 * `stop` reads true, no further run starts; runs already started finish.
 * A run that throws stops the others from starting and its error is rethrown.
 */
void run_each(const std::vector<run_spec>& specs, int jobs, const result_fn& on_result,
              const progress_fn& progress = {}, const std::atomic<bool>* stop = nullptr);

/// Runs every spec; throws config_error before simulating if one is invalid.
std::vector<run_result> run_all(const std::vector<run_spec>& specs, int jobs,
                                const progress_fn& progress = {});

/*
 * Progress output. On a terminal: one line redrawn in place,
 *   [##########..........]  12/40  30%  elapsed 0:05  ETA 0:12
 * otherwise plain lines, at most one per second plus the last:
 *   schedlab: 12/40 runs done (30%), elapsed 5 s, ETA 12 s
 */
std::string format_progress(std::size_t done, std::size_t total, double elapsed_s, bool tty,
                            int bar_width = 30);

class progress_meter {
public:
    progress_meter(std::ostream& out, bool tty);
    void operator()(std::size_t done, std::size_t total);

private:
    std::ostream& out_;
    bool tty_;
    std::chrono::steady_clock::time_point start_;
    double last_line_s_ = -1;
};

/*
 * The progress of one long run on a terminal: a line redrawn in place,
 *   schedlab run: simulated 0.512 s, 12.3 M events, 0.11 simulated s/s, elapsed 0:04
 * and cleared when the run ends. Nothing when stderr is not a terminal.
 */
std::string format_run_progress(double simulated_s, u64 events, double elapsed_s);

class simulation;

/// Draws format_run_progress() at most four times a second; run_hooks::progress calls it.
class run_progress_line {
public:
    explicit run_progress_line(std::ostream& out);
    ~run_progress_line() { finish(); }
    run_progress_line(const run_progress_line&) = delete;
    run_progress_line& operator=(const run_progress_line&) = delete;
    void operator()(const simulation& sim);
    /// Clears the line if one was drawn.
    void finish();

private:
    std::ostream& out_;
    std::chrono::steady_clock::time_point start_;
    double last_s_ = 0;
    bool drawn_ = false;
};

} // namespace schedlab
