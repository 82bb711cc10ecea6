// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A benchmark model: creates its tasks in a kernel, and prints the
 * benchmark's own output from what its tasks recorded.
 *
 * Use (the CLI does this):
 *     auto w = make_workload(argv);   // registry.h; throws config_error
 *     w->setup(k.sys());              // spawns the benchmark's main task
 *     k.run(limit);
 *     fmt::print("{}", w->report());
 */
#include "sim/time.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

class syscalls;

/// One figure of a benchmark's result, as the benchmark itself reports it.
struct workload_metric {
    std::string name;       ///< e.g. "time", "usecs/op", "ops/sec"
    std::string unit;       ///< e.g. "s", "us", "ops/s"
    double value = 0;
    bool higher_is_better = false;
};

class workload {
public:
    virtual ~workload() = default;

    /// The benchmark's own name, e.g. "sched/messaging".
    virtual std::string name() const = 0;
    /// The canonical command line with every option explicit, e.g.
    /// "perf bench sched messaging --group 10 --nr_loops 100".
    virtual std::string command_line() const = 0;
    /// Creates the workload's objects and spawns its first task(s) on CPU 0.
    /// Called once, before the kernel runs.
    virtual void setup(syscalls& sys) = 0;
    /// True once the benchmark has taken its final timestamp.
    virtual bool finished() const = 0;
    /// The benchmark's output, in its own format (perf's, byte for byte where possible).
    virtual std::string report() const = 0;
    /// The result as named figures (empty until finished()), for tables and comparisons.
    virtual std::vector<workload_metric> metrics() const = 0;
    /// Lines for the run summary about the kernel objects the workload's tasks shared
    /// ("# pipe mutexes: ..."), each starting with "# "; "" (the default): none.
    virtual std::string summary() const { return ""; }
    /// Why a finished run measured nothing ("" when it measured something): such a run is an
    /// error, not a figure of 0 (tbench whose clients were still warming up at its time limit).
    virtual std::string measured_nothing() const { return ""; }
    /// Why an unfinished run could never have finished ("" when it could: the time limit
    /// stopped it): every task left waits for another's wake, which bad input can make (a
    /// replayed trace whose events contradict each other). Such a run is an error naming the
    /// input, not a run cut short.
    virtual std::string stalled() const { return ""; }
    /// A new instance for another run, sharing this one's immutable inputs (a replay's trace,
    /// read once however many runs replay it); nullptr (the default): the caller builds one
    /// from the argv. Must not depend on setup() having been called.
    virtual std::unique_ptr<workload> fresh() const { return nullptr; }
    /// What identifies the workload's input files by content, for a run's identity (the
    /// results store's key); "" (the default): the workload reads no file and its argv and
    /// command line identify it. Non-empty, it replaces them: a file edited in place is a
    /// new run, the same file at two paths the same run.
    virtual std::string content_identity() const { return ""; }
    /// Where the kernel's tick grid falls against the run's time 0, for a tick of `tick_nsec`
    /// (sched_params::tick_phase_ns): 0 (the default) for a run that starts on a tick; a
    /// replay's from its trace.
    virtual u64 tick_phase_ns(u64 tick_nsec) const
    {
        (void)tick_nsec;
        return 0;
    }
};

} // namespace schedlab
