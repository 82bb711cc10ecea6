// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Reading real scheduler traces: a streaming parser of ftrace text, as
 * /sys/kernel/tracing/trace (and trace_pipe) print it and as `trace-cmd report`
 * prints a .dat file, for the scheduler's tracepoints (include/trace/events/sched.h):
 * sched_switch, sched_waking, sched_wakeup, sched_wakeup_new, sched_migrate_task,
 * sched_process_fork, sched_process_exit, sched_process_exec. Other events are
 * counted and skipped.
 *
 * Two layers:
 * - ftrace_reader turns lines into ftrace_events, exactly as printed. The file
 *   may be plain, xz (liblzma), zstd or gzip compressed (told by its magic
 *   bytes) and is read in bounded chunks, never whole. A trace-cmd .dat file
 *   (its magic) is read with libtracecmd instead, its records merged across
 *   CPUs by time; "FILE:LINE" then names the record's number.
 * - sched_trace_reader adds what a consumer of real traces has to reconstruct
 *   (the quirks listed in data/traces/README.md and docs/replay.md), each counted in
 *   sched_trace_quirks and none guessed silently: a CPU whose idle-to-task
 *   sched_switch is not recorded gets an inferred switch, emitted before the
 *   first event whose TASK-PID column names the task; the TASK-PID comm, a
 *   cached and possibly stale value, is never used (the event fields are).
 *
 * Errors are config_errors naming "FILE:LINE": lost events ("CPU:N [LOST M
 * EVENTS]"), a line that is not ftrace text (a foreign format), a timestamp
 * before the previous line's (unsorted input, e.g. concatenated per-CPU
 * trace_pipe_raw dumps), a known event with a missing field, a CPU beyond the
 * header's count, and a truncated file (a last line without its newline, a
 * truncated xz/zstd/gzip stream).
 *
 * Accepted line layouts:
 *   tracefs:   "  <comm>-<pid>  [001] d..2.   594.131032: sched_switch: prev_comm=..."
 *              (4- or 5-character flags; the third is the irq context)
 *   trace-cmd: " <comm>-<pid> [000]   860.857087869: sched_switch:  a:1 [120] R ==> b:2 [120]"
 *              (no flags with -t; the sched plugin's compact field layout)
 */
#include "sim/time.h"

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace schedlab {

enum class ftrace_event_type : u8 {
    sched_switch,
    sched_waking,
    sched_wakeup,
    sched_wakeup_new,
    sched_migrate_task,
    sched_process_fork,
    sched_process_exit,
    sched_process_exec,
    other,
};

/// The irq context of an event: the third character of tracefs's flags column.
enum class ftrace_context : u8 {
    unknown, ///< no flags column (trace-cmd report -t)
    task,    ///< '.': process context
    softirq, ///< 's'
    hardirq, ///< 'h', or 'H' (hardirq inside a softirq)
    nmi,     ///< 'z', 'Z'
};

/// An event without a prio field (sched_process_fork, a sched_process_exit without one). Not -1:
/// a SCHED_DEADLINE task's p->prio is -1 (MAX_DL_PRIO - 1), and the events print it as such.
inline constexpr int ftrace_no_prio = std::numeric_limits<int>::min();

/// One event as printed. String views point into the reader's line buffer: valid until next().
struct ftrace_event {
    u64 line = 0;
    sim_time ts = 0; ///< nanoseconds, as printed (microsecond traces: multiples of 1000)
    int cpu = 0;
    int curr_pid = 0;           ///< the TASK-PID column: the task current on `cpu`
    std::string_view curr_comm; ///< TASK-PID's comm: a cached value, possibly stale
    ftrace_context ctx = ftrace_context::unknown;
    ftrace_event_type type = ftrace_event_type::other;
    std::string_view name; ///< the event's name
    int pid = -1;          ///< switch: prev_pid; fork: the parent; others: the task
    std::string_view comm; ///< switch: prev_comm; fork: the parent's comm; others: the task's
    int prio = ftrace_no_prio;
    std::string_view prev_state; ///< switch: "R", "R+", "S", "D", "I", "X", "Z", ...
    int pid2 = -1;               ///< switch: next_pid; fork: child_pid; exec: old_pid
    std::string_view comm2;      ///< switch: next_comm; fork: child_comm
    int prio2 = ftrace_no_prio;
    int target_cpu = -1; ///< wakeups: target_cpu; migrate: orig_cpu
    int dest_cpu = -1;   ///< migrate
    // Set by sched_trace_reader only:
    bool inferred = false; ///< a switch-in the trace did not record (see sched_trace_quirks)
    sim_time ts_lo = 0;    ///< inferred: the earliest it can have happened (the CPU's last
                           ///< event before it); ts is the latest (the event that revealed it)

    /// In process context, or not known not to be (a trace without the flags column).
    bool in_task_context() const
    {
        return ctx == ftrace_context::task || ctx == ftrace_context::unknown;
    }
    /// switch: prev left runnable (R, R+; "?" or nothing after an inferred switch).
    bool prev_runnable() const
    {
        return prev_state.empty() || prev_state[0] == 'R' || prev_state[0] == '?';
    }
    /// switch: prev exited (X, Z).
    bool prev_dead() const
    {
        return !prev_state.empty() && (prev_state[0] == 'X' || prev_state[0] == 'Z');
    }
};

/// What the text reader saw.
struct ftrace_parse_stats {
    std::string format; ///< "tracefs" or "trace-cmd report" (flags column or not)
    u64 lines = 0;
    u64 events = 0;                     ///< event lines, of any type
    std::map<std::string, u64> skipped; ///< events of other types, by name
    int header_cpus = -1;               ///< "#P:N" or "cpus=N"; -1 when the header has neither
    int timestamp_digits = 0; ///< digits after the point: 6 (tracefs, us) or 9 (trace-cmd, ns)
    /// "##### CPU N buffer started ####" markers (the ring buffer overwrote older events of
    /// that CPU): the CPU and the timestamp of the first event after the marker.
    std::vector<std::pair<int, sim_time>> buffer_starts;
};

class ftrace_input;
class dat_source;

/// Events of an ftrace text file, one at a time. config_error("FILE:LINE", ...) on bad input.
class ftrace_reader {
public:
    /// Opens `path` (config_error(path) if it cannot be read); compression is told by magic.
    explicit ftrace_reader(std::string path);
    ~ftrace_reader();
    ftrace_reader(const ftrace_reader&) = delete;
    ftrace_reader& operator=(const ftrace_reader&) = delete;

    /// The next event; false at the end of the file.
    bool next(ftrace_event& e);
    const ftrace_parse_stats& stats() const { return stats_; }
    const std::string& path() const { return path_; }
    /// "FILE:LINE" of the current line, for messages.
    std::string where() const;
    /// Bytes of the file read so far and its size, for progress (0 and 0 for a .dat file,
    /// whose records libtracecmd reads).
    u64 bytes_read() const;
    u64 file_bytes() const { return file_bytes_; }

private:
    bool next_line(std::string_view& line);
    bool parse_line(std::string_view line, ftrace_event& e);
    bool parse_header_line(std::string_view t);
    std::size_t parse_task_cpu(std::string_view t, ftrace_event& e, int& pid, int& cpu);
    std::string_view parse_flags(std::string_view t, std::string_view rest, ftrace_event& e);
    s64 parse_timestamp(std::string_view t, std::string_view stamp);
    void accept_record(const ftrace_event& e);
    [[noreturn]] void not_ftrace(std::string_view t) const;
    void parse_fields(std::string_view fields, ftrace_event& e);
    void check_pids(const ftrace_event& e) const;
    [[noreturn]] void fail(const std::string& what) const;

    std::string path_;
    std::unique_ptr<ftrace_input> in_;
    std::unique_ptr<dat_source> dat_; ///< a trace-cmd .dat file, read with libtracecmd
    std::string buf_;
    std::size_t pos_ = 0;
    bool eof_ = false;
    u64 line_no_ = 0;
    sim_time last_ts_ = -1;
    u64 last_ts_line_ = 0;
    int pending_buffer_start_ = -1;
    ftrace_parse_stats stats_;
    u64 file_bytes_ = 0;
};

/// The trace quirks sched_trace_reader handled.
struct sched_trace_quirks {
    /// Per CPU: switch-ins inferred because the trace has no sched_switch into the task
    /// (this kernel does not record idle-to-task switches on CPU 1).
    std::vector<u64> inferred_switch_ins;
    /// Inferred switches whose previous task was not the idle task: a task-to-task switch
    /// is missing (a lost or unrecorded event); the previous task's state is unknown ("?").
    u64 inferred_from_task = 0;
    /// Events whose TASK-PID comm differs from the task's comm in the event fields
    /// (a stale comm cache); the pid and the fields are used.
    u64 stale_task_comms = 0;
    /// Wakeups seen in each context (for cause attribution): task, softirq, hardirq, nmi, unknown.
    u64 wakings_by_context[5] = {};
    /// Recorded idle-to-task switches that follow a sched_wakeup of that task on the same CPU
    /// (an IPI or a timer interrupt on the idle CPU), by the gap between the two: how long an
    /// idle CPU takes from the wakeup to the switch, measured where the switch is recorded.
    std::map<sim_dur, u64> idle_wakeup_to_switch;

    u64 total_inferred() const;
    /// The median of idle_wakeup_to_switch; -1 when no such switch was recorded.
    sim_dur median_idle_wakeup_to_switch() const;
};

/// Scheduler events with the trace's quirks reconciled (see the file comment).
class sched_trace_reader {
public:
    explicit sched_trace_reader(std::string path) : r_(std::move(path)) {}

    /// The next event (an inferred switch comes before the event that revealed it).
    bool next(ftrace_event& e);
    const ftrace_parse_stats& stats() const { return r_.stats(); }
    const sched_trace_quirks& quirks() const { return q_; }
    /// The CPU count: the header's, or one more than the highest CPU seen so far if larger.
    int nr_cpus() const;
    std::string where() const { return r_.where(); }
    const std::string& path() const { return r_.path(); }
    u64 bytes_read() const { return r_.bytes_read(); }
    u64 file_bytes() const { return r_.file_bytes(); }

private:
    struct cpu_state {
        int curr = -1;         ///< pid current on the CPU; -1 before its first event
        sim_time last_ts = -1; ///< its last event
        int last_wakeup = -1;  ///< the pid its last event woke (sched_wakeup), else -1
    };
    cpu_state& cpu(int c);
    void note_comm(int pid, std::string_view comm);

    ftrace_reader r_;
    sched_trace_quirks q_;
    std::vector<cpu_state> cpus_;
    std::unordered_map<int, std::string> comms_; ///< pid -> comm from the fields
    ftrace_event held_;
    bool have_held_ = false;
    int max_cpu_ = -1;
};

/// The SHA-256 of the trace file's bytes as stored (compressed or not), as 64 hex digits:
/// what identifies a trace by content (a replay's results-store key). Reads the file in
/// 1 MiB chunks; config_error(path) if it cannot be read.
std::string trace_file_sha256(const std::string& path);

} // namespace schedlab
