// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * `schedlab latency TRACE`: the views of `perf sched latency` and `perf sched
 * timehist -w` computed from a scheduler trace (trace/ftrace_parse.h: tracefs
 * text, trace-cmd report text or .dat, and schedlab's own --trace output).
 *
 * Per task (or per comm, merged): its runtime (switch-in to switch-out), its
 * switches out, and its scheduling delays: from the moment it became runnable
 * (its sched_waking or sched_wakeup_new, or a switch out in state R: preempted)
 * to its next switch in, with the longest one's start, end and CPU (where it
 * waited). The definitions are perf's (tools/perf/builtin-sched.c: a delay per
 * switch in, measured from the wakeup or from the preempting switch out),
 * except that a delay starts at sched_waking, as the replay's statistics do
 * (metrics/sched_summary.h), where perf takes sched_wakeup.
 *
 * Per wakeup: the waking's time, CPU and waker, the wakee and the CPU it was
 * placed on (sched_wakeup's target_cpu, or the CPU it next ran on), the delay
 * until it ran, and, given a decision log (`schedlab run --explain FILE`), the
 * branch of select_task_rq that placed it.
 */
#include "sim/time.h"
#include "trace/wakeup_target.h"

#include <cstddef>
#include <deque>
#include <functional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace schedlab {

/// The most wakeup rows sched_latency holds with a wakeup_sink: a row waits until its wakee
/// runs and every earlier row was passed on; past this many, the oldest goes without its
/// delay (latency_result::wakeups_cut). About 150 bytes a row: some 40 MB.
inline constexpr std::size_t latency_wakeup_window = 1 << 18;

struct latency_options {
    bool merge_by_comm = true; ///< one row per comm (perf sched latency's default); else per pid
    std::string sort = "avg,max,switch,runtime"; ///< --sort keys, perf's default order
    bool wakeups = false;                        ///< print the per-wakeup view too
    std::string explain_path; ///< --explain FILE: the decision log of the traced run
    /// With a wakeup_sink, the most wakeup rows held (see latency_wakeup_window).
    std::size_t wakeup_window = latency_wakeup_window;
    bool quiet = false; ///< --quiet: no progress on stderr (there is none unless it is a terminal)
};

/// One row of the per-task table.
struct latency_row {
    std::string comm;
    int pid = 0;    ///< the pid (merged rows: the lowest)
    int merged = 1; ///< how many pids the row merges
    sim_dur runtime = 0;
    u64 switches = 0; ///< switches out
    u64 delays = 0;   ///< delays measured (switch-ins after a wakeup or a preemption)
    sim_dur total_delay = 0;
    sim_dur max_delay = 0;
    sim_time max_start = 0, max_end = 0;
    int max_cpu = -1; ///< the CPU the longest delay ended on (where the task waited)
};

/// One wakeup of the per-wakeup view.
struct wakeup_row {
    sim_time ts = 0; ///< the sched_waking (or sched_wakeup_new)
    int cpu = 0;     ///< the CPU that ran it
    int waker = 0;   ///< the task current there (0: idle, an interrupt)
    std::string waker_comm;
    int wakee = 0;
    std::string wakee_comm;
    bool is_new = false; ///< sched_wakeup_new
    int prev_cpu = -1;   ///< the wakee's CPU before (sched_waking's target_cpu)
    int target_cpu = -1; ///< where it was placed (sched_wakeup's target_cpu)
    sim_time ran = -1;   ///< its next switch in; -1 if it did not run before the trace ended
    int ran_cpu = -1;
    std::string reason; ///< the decision log's select_task_rq text, if given
};

struct latency_result {
    std::vector<latency_row> rows;   ///< sorted as asked
    std::vector<wakeup_row> wakeups; ///< without a wakeup_sink: every wakeup, in time order
    u64 wakeups_total = 0;           ///< wakeups seen (with --wakeups)
    /// Wakeups passed on before their wakee ran because wakeup_window later ones were waiting
    /// behind them (their delay is unknown: "-").
    u64 wakeups_cut = 0;
    std::size_t wakeup_window = 0; ///< latency_options::wakeup_window
    sim_dur total_runtime = 0;
    u64 total_switches = 0;
    u64 inferred_switch_ins = 0; ///< switch-ins the trace did not record (placed as replay does)
    u64 explained = 0;           ///< wakeups with a reason from the decision log
    /// With --wakeups: where each sched_waking's wakee ran next (trace/wakeup_target.h, the
    /// code of schedlab replay's table), over every task of the trace
    wakeup_target_counts targets;
    u64 sched_waking_events = 0; ///< none: no wakeup targets can be told
    std::string path;
};

/// Receives the per-wakeup rows, in time order, each once its wakee ran (or could not).
using wakeup_sink = std::function<void(const wakeup_row&)>;

/// Reads `path` once; config_error naming the file and line, or the option, on bad input.
/// With o.wakeups, the rows go to `sink` as they complete (memory bounded by
/// latency_wakeup_window), or without one into latency_result::wakeups (memory grows with the
/// trace's wakeups).
latency_result sched_latency(const std::string& path, const latency_options& o,
                             const wakeup_sink& sink = {});

/// The per-task table in the layout of `perf sched latency`, then the per-wakeup view of
/// latency_result::wakeups if any (print_wakeups_*: the same view from a wakeup_sink).
void print_latency(std::ostream& out, const latency_result& r);
/// The per-wakeup view's heading, one row, and its closing lines.
void print_wakeups_header(std::ostream& out);
std::string format_wakeup_row(const wakeup_row& w);
void print_wakeups_footer(std::ostream& out, const latency_result& r);

} // namespace schedlab
