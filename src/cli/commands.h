// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The subcommands, separate from argument parsing so tests can call them
 * and read their output. Each throws config_error for user errors and
 * returns the process exit code otherwise.
 */
#include "analysis/compare.h"
#include "experiment/plan.h"
#include "sched/decision_log.h"
#include "sched/params.h"
#include "store/execute.h"
#include "store/store.h"
#include "sim/file_io.h"
#include "trace/export_ftrace.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace schedlab {

struct latency_options;

const char* schedlab_version();

/// --jobs at most (threads of one process running simulations).
inline constexpr int max_jobs = 1024;

/// A seed as given on the command line: decimal digits, 0 to 2^64-1; config_error(flag)
/// otherwise (no sign, no wrap-around, no saturation).
u64 parse_seed(const std::string& text, const std::string& flag);

struct run_options {
    std::string machine = "host";
    std::string kernel = "6.6";
    std::string features;
    u64 seed = 1;
    std::vector<std::string> costs;
    double time_limit_s = 600;
    std::string check; ///< "" = the build's default (every in debug builds, sampled in release)
    bool no_summary = false;
    std::string schedstat; ///< "" off; "table": per-level summary; "raw": also /proc/schedstat v15
    std::string trace_path; ///< --trace FILE: ftrace text export (.zst: zstd-compressed)
    std::string explain_path; ///< --explain FILE: the decision log (placements, balance attempts)
    std::string json_path;  ///< --json FILE: the run_result (schedlab-result-v1)
    std::string html_path;  ///< --html FILE: the report of this run with its per-CPU timeline
    std::string timeline_window; ///< --timeline-window FROM,TO: simulated seconds ("": the run)
    std::vector<std::string> workload_argv;
    bool progress_tty = false; ///< draw a progress line (stderr is a terminal)
};

/// What to print from a comparison (compare and report share it).
struct table_options {
    std::string format = "all";     ///< amd, mmtests, lkp or all
    std::string significance = "ci"; ///< mmtests rule: ci (2024+) or ttest (2018-2024)
    bool schedstat = false;          ///< also print the schedstat difference tables
    std::string html_path;           ///< --html FILE
};

struct compare_options {
    compare_spec spec;
    int jobs = 0;                 ///< 0: the hardware threads
    std::string store_path; ///< --store FILE (the CLI's default: default_store_path()); "": none
    std::string json_path;        ///< --json FILE: every run (schedlab-results-v1)
    table_options tables;
    bool progress_tty = false;    ///< draw the progress bar (stderr is a terminal)
    std::string command_line;     ///< recorded in the results file
    std::string timeline;         ///< --timeline ARM,LOAD,RUN: that run's timeline in --html
    std::string timeline_window;  ///< --timeline-window FROM,TO (simulated seconds)
};

struct report_options {
    std::vector<std::string> files;       ///< result files or stores; none: the default store
    std::vector<std::string> experiments; ///< --experiment: ids or name patterns (stores only)
    table_options tables;
};

struct fidelity_options {
    std::vector<std::string> files; ///< results of compare --json (schedlab-results-v1) or stores
    std::vector<std::string> experiments; ///< --experiment: ids or name patterns (stores only)
    std::string reference_dir;      ///< "": the source tree's data/reference/shared-runq-v3-bergamo-2s
    double threshold = 5;           ///< score cells whose published |pct imp| is at least this
    std::string json_path;          ///< --json FILE: the score and rows (schedlab-fidelity-v1)
};

struct sweep_options {
    std::string spec_path;  ///< the sweep spec (TOML, or JSON when it ends in .json)
    std::string store_path; ///< --store FILE (the CLI's default: default_store_path())
    int jobs = 0;           ///< 0: the hardware threads (1 per rank under MPI)
    std::string shard;      ///< --shard i/N; "" all
    bool dry_run = false;   ///< print the plan and what would run, run nothing
    bool progress_tty = false;
};

struct export_options {
    std::vector<std::string> files; ///< stores or result files; none: the default store
    std::vector<std::string> experiments;
    std::string format = "csv"; ///< csv or json
    bool schedstat = false;     ///< csv: the schedstat counters instead of the metrics
    std::string output;         ///< -o FILE; "": standard output
};

struct replay_command_options {
    std::string trace;            ///< the trace file
    std::string machine = "host";
    std::string kernel = "6.18";  ///< the traced kernel's profile
    std::string comm;             ///< --comm REGEX; "" every non-kernel task
    std::string speed = "1";      ///< --speed F, as given (validated with the workload's options)
    std::string bursts = "net";   ///< --bursts net|gross (validated likewise)
    std::string deps = "flow";    ///< --deps flow|count|edge|keep (validated likewise)
    bool sync_wakes = false;      ///< --sync-wakes
    bool softirq_wakes = false;   ///< --softirq-wakes
    std::string rt_policy = "fifo"; ///< --rt-policy fifo|rr
    std::string wakee_flips = "trace"; ///< --wakee-flips trace|N (checked with the options)
    bool quiet = false;             ///< --quiet: no progress on stderr
    std::string trace_path;       ///< --trace FILE: the replay's tracepoints (ftrace text)
    std::string json_path; ///< --json FILE: the run's result and the trace's figures
    std::string explain_path; ///< --explain FILE: the decision log (as schedlab run --explain)
    u64 seed = 1;
    std::vector<std::string> costs;
    double time_limit_s = 600;
};

/// The fidelity suite's default reference directory: an installed one beside the binary,
/// else the source tree's data/reference (fixed at build time).
std::string default_fidelity_reference_dir();

int cmd_machines(std::ostream& out);
int cmd_topology(std::ostream& out, const std::string& machine, bool verbose, bool pkg_name);
int cmd_kernels(std::ostream& out);
int cmd_features(std::ostream& out, const std::string& kernel);
/// Every cost of the machine with value, unit, meaning and source; `overrides` are --cost terms.
int cmd_costs(std::ostream& out, const std::string& machine,
              const std::vector<std::string>& overrides);
int cmd_run(std::ostream& out, std::ostream& err, const run_options& o);
/// A trace replayed (workload/replay.h): the run summary and the trace-vs-replay table.
int cmd_replay(std::ostream& out, std::ostream& err, const replay_command_options& o);
/// `schedlab latency TRACE`: the per-task table, then (o.wakeups) the per-wakeup rows, which
/// wait in a temporary file as the trace is read so that memory stays bounded.
int cmd_latency(std::ostream& out, const std::string& trace, const latency_options& o);
/// Arms x loads x runs in parallel, then the tables (exit 3 if a run did not finish).
int cmd_compare(std::ostream& out, std::ostream& err, const compare_options& o);
/// The tables and HTML again from stored results.
int cmd_report(std::ostream& out, std::ostream& err, const report_options& o);
/// Every run of a sweep spec that the store lacks (of this shard), kept as each finishes.
int cmd_sweep(std::ostream& out, std::ostream& err, const sweep_options& o);
/// Runs as CSV (one row per run and metric, or schedstat counter) or JSON.
int cmd_export(std::ostream& out, std::ostream& err, const export_options& o);
/// Copies the runs and experiments of `inputs` into the store `output` (created if missing).
int cmd_store_merge(std::ostream& out, const std::string& output,
                    const std::vector<std::string>& inputs);
/// A store's experiments: id, name, runs stored of planned, arms, benchmark.
int cmd_store_list(std::ostream& out, const std::string& store);
/// The SHARED_RUNQ v3 fidelity suite: our tables beside AMD's and the sign agreement.
/// Returns 0 whatever the score (it is a report); config_error for bad input.
int cmd_fidelity(std::ostream& out, std::ostream& err, const fidelity_options& o);

/*
 * The command line (CLI11): each adds its subcommand to `app` with its options and a callback
 * that runs the command once the command line has parsed and leaves its exit code in `rc`
 * (config_error escapes app.parse()). Each is in the file of its command; main() adds them in
 * the order `schedlab --help` lists them.
 */
void add_machines_command(CLI::App& app, int& rc);
void add_topology_command(CLI::App& app, int& rc);
void add_kernels_command(CLI::App& app, int& rc);
void add_features_command(CLI::App& app, int& rc);
void add_costs_command(CLI::App& app, int& rc);
void add_calibrate_command(CLI::App& app, int& rc);
void add_run_command(CLI::App& app, int& rc);
void add_replay_command(CLI::App& app, int& rc);
void add_latency_command(CLI::App& app, int& rc);
/// `command_line`: the whole command line, recorded in the results file.
void add_compare_command(CLI::App& app, int& rc, std::string command_line);
void add_report_command(CLI::App& app, int& rc);
void add_sweep_command(CLI::App& app, int& rc);
void add_export_command(CLI::App& app, int& rc);
/// `store merge` and `store list`.
void add_store_command(CLI::App& app, int& rc);
void add_fidelity_command(CLI::App& app, int& rc);

/* Shared by the subcommands (commands.cc, store_commands.cc, replay_command.cc). */

/// The "# schedlab ..." block after a run's benchmark output: machine, kernel, seed, the
/// scheduler summary and the schedule digest.
void print_run_summary(std::ostream& out, const run_result& r);

/// A run that did not finish within --time-limit: the message on `err`, and exit code 3.
int unfinished_run(std::ostream& err, const std::string& what, double time_limit_s);

/// --trace FILE of run and replay: opened (and so checked) before the run, fed the run's
/// tracepoints, written whole after it ("" = no trace).
class trace_file_output {
public:
    explicit trace_file_output(const std::string& path);
    trace_sink* sink() { return f_.is_open() ? &trace_ : nullptr; }
    /// Writes the tracepoints (nr_cpus: the "#P:" header field) and commits the file.
    void commit(int nr_cpus);

private:
    output_file f_;
    ftrace_exporter trace_;
};

/*
 * The decision log (--explain of run and replay), streamed to its file as the run makes
 * decisions (a long run's log is gigabytes). A write error stops the writing and is
 * reported after the run (finish()), since no error is thrown from inside a simulation.
 */
class explain_writer final : public decision_sink {
public:
    explicit explain_writer(output_file& f);
    void decision(const sched_decision& d) override;
    /// Throws the write error if there was one, else commits the file.
    void finish();

private:
    output_file& f_;
    std::string error_;
};

struct replay_trace;
/// The trace's statistics beside the replay's, one row per figure with their ratio.
std::string format_replay_table(const replay_trace& t, const run_result& r);

/// Runs the plan's runs of `sh` that the store lacks on `jobs` threads, each written to the
/// store as it finishes, with progress on `err`; SIGINT/SIGTERM keep what finished, say how to
/// resume and exit 130/143. Under mpirun (with MPI built in) the ranks share the runs.
void run_plan_into_store(std::ostream& err, results_store& store, const std::vector<run_spec>& runs,
                         const std::vector<std::string>& keys, const shard& sh, int jobs,
                         bool progress_tty);

/// Runs of one input: a result file, or one experiment of a store.
struct input_runs {
    std::string label; ///< the file, or "STORE: experiment ID NAME"
    std::vector<run_result> runs;
    std::vector<std::string> keys; ///< stores: each run's key; result files: none
    std::size_t planned = 0;       ///< experiments: runs planned (runs.size() when all are stored)
};
/// Called with each input and how many there are.
using input_fn = std::function<void(input_runs&& in, std::size_t count)>;
/// Reads result files (all of them one input when `merge_files`, as `report` merges them) or
/// stores (one input per selected experiment, read one at a time); none: the default store.
/// config_error before any input is passed on for a mix of files and stores, a selector no
/// experiment matches, or a bad file. Returns the number of inputs.
std::size_t for_each_input(const std::vector<std::string>& files,
                           const std::vector<std::string>& experiments, store_detail detail,
                           bool merge_files, const input_fn& fn);

} // namespace schedlab
