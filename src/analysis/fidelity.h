// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The scorer of the SHARED_RUNQ v3 fidelity suite (project issue 8): AMD's
 * published tables (data/reference/shared-runq-v3-bergamo-2s, one CSV
 * per benchmark in AMD's "norm [pct imp](CV)" form) beside the same tables
 * computed from `schedlab compare --json` results, and the share of the
 * published changes whose sign our runs reproduce.
 *
 * Our cells are the comparison's AMD cells (compare.h: amd_pct_imp, amd_cv);
 * only the norm is re-based, to tip's mean in the table's first row, as the
 * published norm is. Numbers only: report/fidelity_text.h prints them.
 */
#include "analysis/compare.h"
#include "experiment/run.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace schedlab {

inline constexpr const char* fidelity_format_v1 = "schedlab-fidelity-v1";

/// A published column and the schedlab kernel spec that models it.
struct reference_arm {
    const char* column; ///< the CSV's column prefix, e.g. "v3_tgfix"
    const char* kernel; ///< e.g. "tip-2023-08+shared_runq_v3+tg_ratelimit"
};

/// tip, v3, v3_tgfix, v3_tgfix_noopt, in the reference files' column order.
const std::vector<reference_arm>& reference_arms();

/// A kernel spec with its +terms sorted ("A+y+x" -> "A+x+y"): deltas apply in
/// any order, so specs that differ only in the order of terms are one kernel.
std::string canonical_kernel_spec(const std::string& spec);

/// The reference column an arm label models ("" when none).
std::string reference_column_of(const std::string& arm_label);

/// One published cell: AMD's norm [pct imp](CV).
struct amd_cell {
    double norm = 0;
    double pct_imp = 0; ///< vs tip in the same row, positive = better
    double cv = 0;
};

/// One published benchmark table (e.g. hackbench.csv).
struct reference_table {
    std::string file;                ///< as named in errors (the path read)
    std::string row_header;          ///< the first column's header: "groups", "kernel_op", ...
    std::vector<std::string> arms;   ///< column prefixes in file order, the first "tip"
    std::vector<std::string> labels; ///< rows as published: "1-groups", "512", "Copy"
    std::vector<std::string> keys;   ///< the load (or STREAM op) of each row: "1", "512", "Copy"
    std::string label_suffix;        ///< "-groups" when labels are "N-groups", else ""
    std::vector<std::vector<amd_cell>> cells; ///< [row][arm]
};

/// Parses a benchmark CSV (header "<rows>,tip_norm,tip_pct_imp,tip_cv,v3_norm,...").
/// Throws config_error("where:line", ...) for a malformed header or row.
reference_table parse_reference_table(const std::string& text, const std::string& where);

/// One row of newidle_lb_counts.csv: tbench newly-idle lb_count at one domain level,
/// a per-CPU mean over one run (published_newidle_run_s), not a sum over CPUs.
struct newidle_reference_row {
    std::string domain;  ///< "SMT", "MC", "DIE", "NUMA"
    std::string clients; ///< the tbench load, e.g. "128"
    double no_shared_runq = 0, shared_runq = 0;
};

/*
 * What a count of newidle_lb_counts.csv is. Gautham Shenoy's counts
 * (ZOc7i7wM0x4hF4vL@BLR-5CG11610CF.amd.com, "collect the newidle balance counts via
 * schedstat") are the lb_count[CPU_NEWLY_IDLE] field of /proc/schedstat as his
 * sched-scoreboard reports it at system level ("cpu: all_cpus (avg)", "domain: DIE
 * cpus = all_cpus (avg)" in ZN3dW5Gvcb0LFWjs@BLR-5CG11610CF.amd.com): the difference
 * of two snapshots around the benchmark, summed over the CPUs and divided by their
 * number (sched-scoreboard at commit 4a8e830fdb9b, main() of its schedstat_parser.py:
 * scaler_div by the CPU count).
 * So a published count is a per-CPU mean over one run; AMD's tbench runs are
 * `tbench -c client.txt -t 60` (7daee7bc-bf4c-ab24-dbf2-467371ee72e1@amd.com, the same
 * team's command lines; the mail with the counts gives no duration, and the one
 * capture whose span ZN3dW5Gvcb0LFWjs shows lasted 39133 jiffies: 39 s at HZ=1000, 157 s
 * at HZ=250, neither stated; so 60 s is an assumption, good to a factor of ~2.6). The same mail's
 * funccount figures agree with this reading: at 128 clients without SHARED_RUNQ
 * find_busiest_group() runs 2-4 M times a second on the machine, where the counts read
 * per CPU over 60 s give 3.5 M newly-idle load_balance() calls a second and read as a
 * sum over CPUs would give 6.9 k.
 */
inline constexpr double published_newidle_run_s = 60;

/// Parses newidle_lb_counts.csv; throws config_error("where:line", ...).
std::vector<newidle_reference_row> parse_newidle_reference(const std::string& text,
                                                           const std::string& where);

/// What one published table measures and how results are matched to it.
struct fidelity_benchmark {
    const char* name;      ///< e.g. "hackbench", "schbench wakeup p99"
    const char* file;      ///< e.g. "hackbench.csv"
    const char* workload;  ///< first words of the canonical command line, e.g. "tbench"
    const char* metric;    ///< our metric, e.g. "time"; "" = every metric is a row (STREAM)
    int stream_ntimes = 0; ///< STREAM: the --ntimes the table is for
};

/// The suite's tables, in the order they are printed.
const std::vector<fidelity_benchmark>& fidelity_benchmarks();

/// Our side of one table: the comparison's AMD cells, by row key and reference column.
struct measured_cell {
    double amean = 0; ///< for the norm
    double pct_imp = 0, cv = 0;
};
struct measured_table {
    std::string source; ///< what ran, e.g. "tbench -t 5 -c ... on bergamo-2s, 5 runs per arm"
    std::vector<std::string> keys; ///< row keys (loads, or STREAM ops)
    std::vector<std::string> arms; ///< reference columns, the first "tip"
    std::vector<std::vector<std::optional<measured_cell>>> cells; ///< [row][arm]; none: no samples
};

/// The measured table of one published table from a comparison whose baseline
/// is tip. Arms that model no published column are left out. Throws
/// config_error(where, ...) when the baseline is not tip, or the STREAM runs
/// have more than one load.
measured_table measured_from_comparison(const comparison& c, const fidelity_benchmark& b,
                                        const std::string& where);

/// One (row, published column) of a table, both sides.
struct fidelity_row {
    std::string key, label, arm;
    std::optional<amd_cell> published, ours; ///< none: that side did not run the row
    /// Both sides ran it (ours a number), not tip, published |pct imp| >= threshold and not 0.
    bool scored = false;
    bool agree = false;     ///< scored, and our pct imp has the published sign
    bool within_2x = false; ///< agree, and |ours| is within a factor of 2 of |published|
};

struct fidelity_count {
    int scored = 0, agree = 0, within_2x = 0;
    double pct() const { return scored ? 100.0 * agree / scored : 0; }
    fidelity_count& operator+=(const fidelity_count& o);
};

struct fidelity_table {
    std::string name, file;
    std::string source;              ///< measured_table::source; "" when not run
    std::string norm_key;            ///< the row our norm is relative to; "" when not run
    std::vector<std::string> labels; ///< row order: published rows, then our extra rows
    std::vector<std::string> arms;   ///< the published columns
    std::vector<fidelity_row> rows;  ///< [label][arm], row-major
    fidelity_count count;
};

/// Matches our table (nullptr: not run) with a published one and scores it.
fidelity_table score_table(const fidelity_benchmark& b, const reference_table& ref,
                           const measured_table* ours, double threshold);

/// tbench newly-idle lb_count per (domain level, clients), means over runs.
struct newidle_measurement {
    std::string without_arm, with_arm; ///< the arm labels compared
    struct cell {
        std::string domain, clients;
        double without = 0, with = 0; ///< lb_count summed over CPUs, whole run
        /// CPU-seconds the counts cover: CPUs x simulated seconds of the whole run, mean
        /// over the arm's runs at that load (0: the runs carry no duration)
        double without_cpu_s = 0, with_cpu_s = 0;
    };
    std::vector<cell> cells;
};

/// From a tbench comparison carrying schedstat: "with" is the v3_tgfix_noopt arm
/// (the kernel newidle_lb_counts.csv measured), else v3; "without" is that arm
/// with +NO_SHARED_RUNQ when present, else tip. None when no such arms or counters.
/// `runs` are the compared runs: their CPU count and simulated time give cpu_s.
std::optional<newidle_measurement> measured_newidle(const comparison& c,
                                                    const std::vector<run_result>& runs);

struct newidle_row {
    std::string domain, clients;
    std::optional<double> ref_without, ref_with; ///< published: per-CPU mean over a run
    std::optional<double> ours_without, ours_with; ///< ours: summed over CPUs, whole run
    /// both sides per CPU per second: the published count / published_newidle_run_s,
    /// ours / (CPUs x simulated seconds)
    std::optional<double> ref_without_rate, ref_with_rate, ours_without_rate, ours_with_rate;
};

/// Published rows in file order, then our rows the reference lacks.
std::vector<newidle_row> match_newidle(const std::vector<newidle_reference_row>& ref,
                                       const newidle_measurement& ours);

/// with / without, or none when either is missing or without is 0.
std::optional<double> newidle_ratio(const std::optional<double>& without,
                                    const std::optional<double>& with);

/// Every published table, read from a reference directory.
struct reference_data {
    std::string dir;
    std::vector<reference_table> tables; ///< one per fidelity_benchmarks() entry, same order
    std::vector<newidle_reference_row> newidle;
};

/// Reads every CSV of the suite from `dir`; throws config_error naming a missing
/// file, or the file and line of a malformed row.
reference_data read_reference_dir(const std::string& dir);

/// The runs of one results file.
struct results_input {
    std::string file;
    std::vector<run_result> runs;
};

struct fidelity_report {
    std::string reference_dir;
    double threshold = 5;
    std::vector<fidelity_table> tables; ///< fidelity_benchmarks() order
    fidelity_count total;
    std::optional<newidle_measurement> newidle_ours;
    std::vector<newidle_row> newidle; ///< empty when the tbench runs carry no schedstat
    std::vector<std::string> notes;   ///< e.g. another machine, arms left out
};

/// Groups the runs by benchmark command line (several files may hold one
/// benchmark's loads), compares each group and scores it against its
/// published tables. Throws config_error naming the files for runs of an
/// unknown benchmark, a baseline other than tip, or two groups for one table.
fidelity_report score_fidelity(const reference_data& ref, const std::vector<results_input>& inputs,
                               double threshold);

/// The report as schedlab-fidelity-v1 JSON: threshold, totals, every row.
nlohmann::ordered_json fidelity_to_json(const fidelity_report& r);

} // namespace schedlab
