// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Trace export in the ftrace text format of /sys/kernel/tracing/trace (the
 * layout of the recordings in data/traces), which Perfetto's UI,
 * trace-cmd users' scripts and `perf script`-style parsers read:
 *
 *   # tracer: nop
 *   ...
 *              <idle>-0       [001] d..2.     0.001234: sched_switch: prev_comm=swapper/1 ...
 *
 * Columns: TASK-PID is the task current on that CPU when the event fired
 * ("<idle>-0" for the idle task), CPU#, five flag characters, the timestamp
 * in seconds with microsecond resolution, the event and its fields in the
 * kernel's TP_printk format (6.6).
 *
 * Not modelled, printed as constants: the flags column ("d..2." for
 * scheduler events under the rq lock, "....." for fork/exit, "d..1." for
 * power:cpu_idle, called with interrupts off in the idle loop). prio is the
 * task's p->prio (120 + nice, 99 - rt_priority), as the kernel prints it. sched_migrate_task
 * carries no CPU in schedlab's record, so it is printed on the CPU of the
 * event that preceded it (the waker's sched_waking, or the fork).
 */
#include "sim/file_io.h"
#include "trace/tracepoints.h"

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace schedlab {

enum class trace_compression { none, zstd, gzip };

/// What a trace file's name asks for: ".zst" zstd, ".gz" gzip, anything else plain text; the
/// suffixes of other compressors (.xz, .bz2, .lz4, ...) are a config_error("--trace").
trace_compression trace_compression_for(const std::string& path);

class ftrace_exporter final : public trace_sink {
public:
    void sched_switch(const trace_sched_switch& e) override;
    void sched_waking(const trace_sched_wakeup& e) override;
    void sched_wakeup(const trace_sched_wakeup& e) override;
    void sched_wakeup_new(const trace_sched_wakeup& e) override;
    void sched_migrate_task(const trace_sched_migrate_task& e) override;
    void sched_process_fork(const trace_sched_process& e) override;
    void sched_process_exit(const trace_sched_process& e) override;
    void cpu_idle(const trace_cpu_idle& e) override;

    std::size_t nr_events() const { return records_.size(); }

    /// The whole trace as text; `nr_cpus` goes into the "#P:" header field.
    void write(std::ostream& out, int nr_cpus) const;
    /// Writes to an output file (not committed), compressed as its name asks
    /// (trace_compression_for).
    void write(output_file& f, int nr_cpus) const;
    /// The trace as a trace-cmd data file (version 6, trace-cmd.dat.v6(5); export_dat.cc),
    /// which `trace-cmd report` and KernelShark read; write() and write_file() choose it for a
    /// name ending in ".dat".
    void write_dat(output_file& f, int nr_cpus) const;
    /// The trace in the JSON trace-event format, which Perfetto's UI and chrome://tracing
    /// open (export_json.cc): a thread per CPU with each task's runs and wakings; write() and
    /// write_file() choose it for a name ending in ".json".
    void write_json(output_file& f, int nr_cpus) const;
    /// Writes to a file atomically, zstd-compressed when the name ends in ".zst", gzip when in
    /// ".gz", a trace-cmd .dat when in ".dat", JSON trace events when in ".json". Throws config_error("--trace", ...) when the
    /// file cannot be written.
    void write_file(const std::string& path, int nr_cpus) const;

private:
    enum class kind : u8 {
        sched_switch, waking, wakeup, wakeup_new, migrate, fork, exit, cpu_idle
    };
    struct record {
        sim_time ts;
        kind k;
        u8 prev_state;       ///< switch: trace_task_state, +0x80 when preempted; waking and
                             ///< wakeup: the trace_irq_ctx it was emitted in
        int cpu;             ///< CPU whose buffer holds the event
        int curr_pid;        ///< TASK-PID column
        u32 curr_comm;
        int pid;             ///< switch: prev_pid; fork: parent; others: the task
        u32 comm;
        int pid2;            ///< switch: next_pid; fork: child; wakeups: target_cpu; migrate: orig_cpu;
                             ///< cpu_idle: the state (u32 bits)
        u32 comm2;           ///< switch: next_comm; fork: child comm
        int dest_cpu;        ///< migrate only
        s16 prio;            ///< p->prio of `pid` (switch: prev_prio; fork: none)
        s16 prio2;           ///< switch: next_prio
    };

    /// prev_state as sched_switch prints it (R, S, D, X; R+ for a preempted task).
    static const char* state_string(u8 code);
    /// A waking or wakeup emitted in hardirq context (a timer's expiry, the wake-list IPI).
    /// model: printed with the flags and preempt count of the hrtimer_wakeup() path of a
    /// real 6.18 trace (data/traces/schbench_m1_t2_r3: waking "d.h3.", wakeup "d.h4."), for
    /// the IPI's wakeups too (a real one prints "dNh2.": one lock fewer, need_resched).
    static bool hardirq(const record& r);
    /// A .dat record's common_flags and common_preempt_count, as the text's flags column
    /// prints them (TRACE_FLAG_IRQS_OFF "d", TRACE_FLAG_HARDIRQ "h"; the digit).
    static std::pair<u8, u8> common_flags(const record& r);
    u32 intern(const std::string& comm);
    u32 comm_of(int pid, u32 fallback) const;
    void note_comm(int pid, u32 comm);
    void ensure_cpu(int cpu);
    void push(record r);
    void format_line(std::string& buf, const record& r) const;

    std::vector<record> records_;
    std::vector<std::string> comms_;
    std::map<std::string, u32> comm_index_;
    std::vector<int> curr_pid_;  ///< per CPU: pid running now
    std::vector<u32> curr_comm_;
    std::vector<u32> pid_comm_;  ///< per pid: last comm seen (index + 1; 0 = none)
    int last_cpu_ = 0;
};

} // namespace schedlab
