// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * One run: what to simulate (run_spec) and what came out (run_result).
 *
 * A run_spec is validated by prepare_run(), which raises every user error
 * (config_error naming the flag) before anything is simulated; execute_run()
 * then builds a fresh simulation + kernel, runs the workload and returns an
 * immutable run_result with its provenance. Runs share nothing, so any number
 * can execute in parallel threads (runner.h) with identical results.
 */
#include "metrics/histogram.h"
#include "sim/time.h"
#include "trace/wakeup_target.h"
#include "workload/workload.h"

#include "sched/core.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace schedlab {

class trace_sink;
class kernel;

/// The inputs of one run, as the user spells them.
struct run_spec {
    std::string machine = "host";  ///< preset, machine JSON or lscpu -p file
    std::string kernel = "6.6";    ///< profile with optional +FEATURE terms
    std::string features;          ///< further toggles, comma separated
    std::vector<std::string> costs; ///< NAME=NS overrides
    u64 seed = 1;
    std::vector<std::string> workload_argv;
    double time_limit_s = 600;
    std::string check;             ///< "", "sampled" or "every"

    // Where the run sits in an experiment (empty / 0 for a single run).
    std::string arm;  ///< arm label, e.g. "6.6+NO_RUN_TO_PARITY"
    std::string load; ///< the load value of this run, e.g. "4" for -g 4
    int run_index = 0;
};

/// Where a result came from: enough to run it again and get the same digest.
struct run_provenance {
    std::string schedlab_version; ///< PROJECT_VERSION
    std::string git_sha;          ///< SCHEDLAB_GIT_SHA at build time
    std::string machine;          ///< the machine's name
    std::string machine_spec;     ///< as given (--machine)
    int nr_cpus = 0;
    std::string kernel_spec;      ///< as given, e.g. "6.6+NO_RUN_TO_PARITY"
    std::string kernel_base;      ///< profile, e.g. "6.6"
    std::string policy;           ///< "EEVDF" or "CFS"
    std::string features_arg;     ///< --features as given
    std::string features;         ///< effective, kernel_config::features_string()
    std::string feature_delta;    ///< toggles that differ from the profile
    std::vector<std::pair<std::string, s64>> costs; ///< every cost, effective values (ns)
    u64 seed = 0;
    std::vector<std::string> argv; ///< the benchmark command line as given
    std::string command_line;      ///< the workload's canonical command line
    double time_limit_s = 0;
};

/// The scheduler summary's numbers (metrics/sched_summary.h), kept in results.
struct run_sched_summary {
    s64 simulated_ns = 0;
    u64 switches = 0;
    u64 voluntary = 0;
    u64 involuntary = 0;
    u64 migrations = 0;
    u64 forks = 0; ///< by a task, not the run's spawns (optional in result files: 0 before)
    u64 wakeups = 0;
    u64 wakeup_latency_count = 0;
    u64 wakeup_latency_p50_ns = 0;
    u64 wakeup_latency_p99_ns = 0;
    u64 wakeup_latency_max_ns = 0;
    u64 run_length_count = 0; ///< runs of a task on a CPU, switch-in to switch-out
    u64 run_length_p50_ns = 0;
    u64 run_length_p99_ns = 0;
    u64 run_length_max_ns = 0;
    std::vector<s64> busy_ns; ///< per CPU
    /// Where each woken task ran next (trace/wakeup_target.h; optional in result files: zero
    /// when the file predates it)
    wakeup_target_counts wakeup_targets;
    /// The two distributions at summary_histogram_sub_bits (optional in result files: empty
    /// when the file predates them)
    histogram_buckets wakeup_latency_hist, run_length_hist;
};

/// Buckets per octave of the stored distributions: 2^4, so a bucket spans under 6.25 % of its
/// values (the summary's exact-ish percentiles come from the 2^7 histograms).
inline constexpr int summary_histogram_sub_bits = 4;

/*
 * /proc/schedstat-style counters of a run, for the schedstat difference
 * tables: one entry per (sched-domain level name, idle type, counter), e.g.
 * ("MC", "newly_idle", "lb_count", 1954), summed over CPUs, in the order the
 * kernel prints them. Optional: results without it stay valid.
 */
struct schedstat_counter {
    std::string domain;    ///< "SMT", "MC", "DIE", "NUMA", ...
    std::string idle_type; ///< "idle", "busy", "newly_idle", or "any" for per-domain counters
    std::string counter;   ///< the sched-stats.rst field name, e.g. "lb_count"
    double value = 0;
};

struct run_result {
    run_provenance provenance;
    std::string arm;
    std::string load;
    int run_index = 0;
    bool finished = false; ///< the benchmark completed within the time limit
    std::vector<workload_metric> metrics;
    std::string measured_nothing; ///< finished, but the benchmark measured nothing: why
    run_sched_summary summary;
    u64 schedule_digest = 0;
    u64 events_fired = 0;
    std::optional<std::vector<schedstat_counter>> schedstat;
    std::string benchmark_output; ///< the workload's own report()
    std::string summary_text;     ///< the "# ..." scheduler summary block `schedlab run` prints

    /// The label of the arm: `arm`, else the kernel spec plus any --features.
    std::string arm_label() const;
};

const char* schedlab_version_string(); ///< "0.1.0"
const char* schedlab_git_sha();        ///< "1a2b3c4d5e6f" or "unknown"

struct prepared_run;

/// The longest --time-limit: 10^6 simulated seconds (11.6 days). sim_time counts int64
/// nanoseconds (up to 9.2 * 10^9 s); the bound leaves room for costs added to the clock.
inline constexpr double max_time_limit_s = 1e6;

/// Validates a spec and builds its inputs; throws config_error naming the bad input.
std::shared_ptr<const prepared_run> prepare_run(const run_spec& spec);
/// The workload as prepare_run() built and validated it (e.g. a replay's trace as read).
const workload& prepared_workload(const prepared_run& prepared);
/// Warnings about a prepared run's kernel (e.g. toggled features that are not modelled).
const std::vector<std::string>& run_warnings(const prepared_run& prepared);

/// The spec's inputs other than its seed (and its place in an experiment), as
/// one string: specs equal here prepare to the same run but for the seed.
std::string inputs_but_seed(const run_spec& spec);

/*
 * Everything that determines a prepared run's result except its seed, as
 * canonical JSON text: the schedlab version and git SHA, the machine as loaded
 * (machine_to_json: CPUs, caches, NUMA distances), the kernel spec, --features
 * and the effective feature string, every effective cost, the benchmark argv
 * and its canonical command line (for a workload that reads a file, a replay:
 * workload::content_identity() instead, the file's content hash and the
 * options), and the time limit. Two runs with equal
 * identities and seeds give bit-identical results; the results store keys runs
 * by a hash of the identity and the seed. (The --check level is left out: the
 * invariant checks observe a run without changing it.)
 */
std::string run_identity(const prepared_run& prepared);

/// Optional observers of one run.
struct run_hooks {
    /// also see every tracepoint (e.g. the ftrace exporter, the HTML timeline's recorder)
    std::vector<trace_sink*> extra_sinks;
    std::function<void(const kernel&)> after_run; ///< inspects the kernel once the run has stopped
    /// Sees the kernel once it is built and its sinks attached, before the first event (a
    /// sampler in extra_sinks keeps it to read the kernel's state as the run goes; reads only).
    std::function<void(const kernel&)> before_run;
    decision_sink* decisions = nullptr;           ///< the decision log, if wanted (--explain)
    /// Keep the model's idle-gap counters (sched/idle_gap.h; --schedstat prints them). They
    /// decide nothing: a run's schedule is the same with or without them.
    bool idle_gaps = false;
    /// Called every progress_every events during the run (run_progress_line); reads only.
    std::function<void(const simulation&)> progress;
    u64 progress_every = u64{1} << 18;
};

/// Simulates a prepared run. Thread-safe across runs (each builds its own simulation).
run_result execute_run(const prepared_run& prepared, const run_hooks& hooks = {});

/// Simulates `spec`, a run of the same inputs as `prepared` (equal inputs_but_seed; its seed
/// and place in an experiment may differ): an experiment prepares each input once (a replay's
/// trace is read once for all its runs).
run_result execute_run_as(const prepared_run& prepared, const run_spec& spec,
                          const run_hooks& hooks = {});

/// prepare_run + execute_run.
run_result execute_run(const run_spec& spec, const run_hooks& hooks = {});

/// The /proc/schedstat domain counters of a kernel, summed over CPUs per domain level.
std::vector<schedstat_counter> collect_schedstat(const kernel& k);

} // namespace schedlab
