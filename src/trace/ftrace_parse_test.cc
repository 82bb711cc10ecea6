// SPDX-License-Identifier: GPL-2.0-only
#include "trace/ftrace_parse.h"

#include "sim/config_error.h"
#include "sim/scratch_dir_test_support.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace schedlab {
namespace {

using test_support::scratch_dir;
using ::testing::HasSubstr;

const std::string traces_dir = std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/";

constexpr const char* tracefs_header = "# tracer: nop\n"
                                       "#\n"
                                       "# entries-in-buffer/entries-written: 9/9   #P:2\n"
                                       "#\n"
                                       "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
                                       "#              | |         |   |||||     |         |\n";

/// An event with copies of its strings (an event's views are valid only until the next read).
struct owned_event : ftrace_event {
    std::string curr_comm, comm, comm2, prev_state;
    explicit owned_event(const ftrace_event& e)
        : ftrace_event(e), curr_comm(e.curr_comm), comm(e.comm), comm2(e.comm2),
          prev_state(e.prev_state)
    {
    }
};

template <class Reader> std::vector<owned_event> read_all(Reader& r)
{
    std::vector<owned_event> v;
    ftrace_event e;
    while (r.next(e))
        v.emplace_back(e);
    return v;
}

/// The message of the config_error reading `path` throws ("" if none).
std::string error_of(const std::string& path)
{
    try {
        sched_trace_reader r(path);
        ftrace_event e;
        while (r.next(e)) {
        }
    } catch (const config_error& err) {
        return err.what();
    }
    return "";
}

class ftrace_parse : public scratch_dir {};

TEST_F(ftrace_parse, tracefs_fields_and_context)
{
    const std::string p = write(
        "t.txt",
        std::string(tracefs_header) +
            " record_tracefs.-14052   [001] .....   594.130973: sched_process_fork: "
            "comm=record_tracefs. pid=14052 child_comm=record_tracefs. child_pid=14053\n"
            "          <idle>-0       [000] d..2.   594.131032: sched_switch: prev_comm=swapper/0 "
            "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=Web Content next_pid=14053 "
            "next_prio=120\n"
            "          <idle>-0       [001] d.s4.   594.131563: sched_waking: comm=Web Content "
            "pid=14053 prio=120 target_cpu=000\n"
            "          <idle>-0       [001] d.s4.   594.131566: sched_migrate_task: comm=perf "
            "pid=14053 prio=120 orig_cpu=0 dest_cpu=1\n"
            " sched-messaging-14053   [001] dNh5.   594.131570: sched_wakeup: comm=x pid=9 "
            "prio=100 target_cpu=001\n"
            "            perf-14053   [000] d..2.   594.132449: sched_switch: prev_comm=perf "
            "prev_pid=14053 prev_prio=120 prev_state=R+ ==> next_comm=swapper/0 next_pid=0 "
            "next_prio=120\n"
            "            perf-14053   [000] .....   594.133000: sched_process_exit: comm=perf "
            "pid=14053 prio=120 group_dead=1\n"
            "            perf-14053   [000] .....   594.133001: irq_handler_entry: irq=1 name=x\n");
    ftrace_reader r(p);
    const auto v = read_all(r);
    ASSERT_EQ(v.size(), 8u);
    EXPECT_EQ(r.stats().header_cpus, 2);
    EXPECT_EQ(r.stats().format, "tracefs");
    EXPECT_EQ(r.stats().timestamp_digits, 6);
    EXPECT_EQ(v[0].type, ftrace_event_type::sched_process_fork);
    EXPECT_EQ(v[0].pid, 14052);
    EXPECT_EQ(v[0].pid2, 14053);
    EXPECT_EQ(v[0].comm2, "record_tracefs.");
    EXPECT_EQ(v[0].curr_comm, "record_tracefs.");
    EXPECT_EQ(v[0].ts, 594'130'973'000);
    EXPECT_EQ(v[1].type, ftrace_event_type::sched_switch);
    EXPECT_EQ(v[1].comm2, "Web Content"); // a comm with a space
    EXPECT_EQ(v[1].pid2, 14053);
    EXPECT_EQ(v[1].prev_state, "R");
    EXPECT_EQ(v[2].type, ftrace_event_type::sched_waking);
    EXPECT_EQ(v[2].ctx, ftrace_context::softirq);
    EXPECT_EQ(v[2].comm, "Web Content");
    EXPECT_EQ(v[2].target_cpu, 0);
    EXPECT_EQ(v[3].type, ftrace_event_type::sched_migrate_task);
    EXPECT_EQ(v[3].target_cpu, 0);
    EXPECT_EQ(v[3].dest_cpu, 1);
    EXPECT_EQ(v[4].ctx, ftrace_context::hardirq);
    EXPECT_EQ(v[4].prio, 100);
    EXPECT_EQ(v[5].prev_state, "R+");
    EXPECT_EQ(v[5].ctx, ftrace_context::task);
    EXPECT_EQ(v[6].type, ftrace_event_type::sched_process_exit);
    EXPECT_EQ(v[7].type, ftrace_event_type::other);
    EXPECT_EQ(r.stats().skipped.at("irq_handler_entry"), 1u);
}

// The fields are searched in the tracepoint's order from where the previous one ended; a
// field between them (an older kernel's "success=1") or out of that order is still read.
TEST_F(ftrace_parse, fields_out_of_the_usual_order)
{
    const std::string p =
        write("t.txt",
              std::string(tracefs_header) +
                  "          <idle>-0       [001] d.s4.   594.131563: sched_waking: comm=a b "
                  "pid=14053 prio=120 success=1 target_cpu=003\n"
                  "          <idle>-0       [001] d.s4.   594.131564: sched_wakeup: target_cpu=001 "
                  "prio=110 comm=b pid=7\n"
                  "            perf-5       [000] .....   594.131565: sched_process_exit: prio=130 "
                  "comm=perf pid=5 group_dead=1\n");
    ftrace_reader r(p);
    const auto v = read_all(r);
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0].comm, "a b");
    EXPECT_EQ(v[0].pid, 14053);
    EXPECT_EQ(v[0].prio, 120);
    EXPECT_EQ(v[0].target_cpu, 3);
    EXPECT_EQ(v[1].comm, "b");
    EXPECT_EQ(v[1].pid, 7);
    EXPECT_EQ(v[1].prio, 110);
    EXPECT_EQ(v[1].target_cpu, 1);
    EXPECT_EQ(v[2].pid, 5);
    EXPECT_EQ(v[2].prio, 130);
}

TEST_F(ftrace_parse, trace_cmd_report_layout)
{
    const std::string p = write(
        "r.txt",
        "cpus=2\n"
        " record_tracecmd-17055 [000]   860.857087869: sched_process_fork:   comm=record_tracecmd "
        "pid=17055 child_comm=record_tracecmd child_pid=17056\n"
        " record_tracecmd-17055 [000]   860.857105051: sched_wakeup_new:     record_tracecmd:17056 "
        "[120] CPU:001\n"
        " sched-messaging-17056 [001]   860.860743154: sched_waking:         comm=rcu_preempt "
        "pid=15 prio=120 target_cpu=001\n"
        " sched-messaging-17056 [001]   860.860768542: sched_switch:         perf:17056 [120] R "
        "==> rcu_preempt:15 [120]\n"
        "     rcu_preempt-15    [001]   860.860781245: sched_switch:         rcu_preempt:15 [120] "
        "W ==> a:b:17056 [120]\n");
    ftrace_reader r(p);
    const auto v = read_all(r);
    ASSERT_EQ(v.size(), 5u);
    EXPECT_EQ(r.stats().format, "trace-cmd report");
    EXPECT_EQ(r.stats().header_cpus, 2);
    EXPECT_EQ(r.stats().timestamp_digits, 9);
    EXPECT_EQ(v[1].type, ftrace_event_type::sched_wakeup_new);
    EXPECT_EQ(v[1].pid, 17056);
    EXPECT_EQ(v[1].target_cpu, 1);
    EXPECT_EQ(v[1].ts, 860'857'105'051);
    EXPECT_EQ(v[1].ctx, ftrace_context::unknown);
    EXPECT_EQ(v[2].pid, 15);
    EXPECT_EQ(v[3].comm, "perf");
    EXPECT_EQ(v[3].pid, 17056);
    EXPECT_EQ(v[3].prev_state, "R");
    EXPECT_EQ(v[3].pid2, 15);
    EXPECT_EQ(v[4].prev_state, "W");
    EXPECT_EQ(v[4].comm2, "a:b"); // the pid follows the last ':'
    EXPECT_EQ(v[4].pid2, 17056);
}

// perf script output of perf sched record: "COMM PID [CPU] SECONDS: SYSTEM:EVENT: FIELDS",
// comms with spaces, the event name padded, no flags column.
TEST_F(ftrace_parse, perf_script_layout)
{
    const std::string p = write(
        "p.txt",
        "            perf  5945 [000] 12814.103986:       sched:sched_waking: comm=migration/0 "
        "pid=18 prio=0 target_cpu=000\n"
        "     migration/0    18 [000] 12814.103994: sched:sched_migrate_task: comm=perf pid=5945 "
        "prio=120 orig_cpu=0 dest_cpu=1\n"
        "     migration/0    18 [000] 12814.103999: sched:sched_stat_runtime: comm=migration/0 "
        "pid=18 runtime=10285 [ns]\n"
        "   Web Content  1234 [001] 12814.104001:       sched:sched_switch: prev_comm=Web Content "
        "prev_pid=1234 prev_prio=120 prev_state=R+ ==> next_comm=exe next_pid=5881 "
        "next_prio=120\n");
    ftrace_reader r(p);
    const auto v = read_all(r);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(r.stats().format, "perf script");
    EXPECT_EQ(r.stats().timestamp_digits, 6);
    EXPECT_EQ(v[0].type, ftrace_event_type::sched_waking);
    EXPECT_EQ(v[0].curr_pid, 5945);
    EXPECT_EQ(v[0].curr_comm, "perf");
    EXPECT_EQ(v[0].pid, 18);
    EXPECT_EQ(v[0].ctx, ftrace_context::unknown);
    EXPECT_EQ(v[0].ts, 12814'103'986'000);
    EXPECT_EQ(v[1].type, ftrace_event_type::sched_migrate_task);
    EXPECT_EQ(v[1].dest_cpu, 1);
    EXPECT_EQ(v[2].type, ftrace_event_type::other);
    EXPECT_EQ(r.stats().skipped.at("sched_stat_runtime"), 1u);
    EXPECT_EQ(v[3].cpu, 1);
    EXPECT_EQ(v[3].curr_comm, "Web Content");
    EXPECT_EQ(v[3].comm, "Web Content");
    EXPECT_EQ(v[3].prev_state, "R+");
    EXPECT_EQ(v[3].pid2, 5881);
}

// The traced 6.18 guest does not record idle-to-task switches on CPU 1 (docs/replay.md).
TEST_F(ftrace_parse, infers_the_missing_switch_in)
{
    const std::string p = write(
        "t.txt", std::string(tracefs_header) +
                     "          <idle>-0       [001] d..2.   10.000000: sched_switch: prev_comm=a "
                     "prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 "
                     "next_prio=120\n"
                     "               a-8       [000] d..3.   10.000100: sched_waking: comm=a pid=7 "
                     "prio=120 target_cpu=001\n"
                     "          <idle>-0       [001] dNh2.   10.000104: sched_wakeup: comm=a pid=7 "
                     "prio=120 target_cpu=001\n"
                     "           stale-7       [001] d..3.   10.000109: sched_waking: comm=a pid=8 "
                     "prio=120 target_cpu=000\n"
                     "               a-7       [001] d..2.   10.000112: sched_switch: prev_comm=a "
                     "prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 "
                     "next_prio=120\n");
    sched_trace_reader r(p);
    const auto v = read_all(r);
    ASSERT_EQ(v.size(), 6u);
    // Before the first event naming task 7 on CPU 1: an inferred switch from idle.
    EXPECT_TRUE(v[3].inferred);
    EXPECT_EQ(v[3].type, ftrace_event_type::sched_switch);
    EXPECT_EQ(v[3].cpu, 1);
    EXPECT_EQ(v[3].pid, 0);
    EXPECT_EQ(v[3].pid2, 7);
    EXPECT_EQ(v[3].ts, 10'000'109'000);    // the latest: the event that revealed it
    EXPECT_EQ(v[3].ts_lo, 10'000'104'000); // the earliest: CPU 1's previous event
    EXPECT_EQ(v[4].type, ftrace_event_type::sched_waking);
    EXPECT_FALSE(v[4].inferred);
    EXPECT_EQ(r.quirks().inferred_switch_ins, (std::vector<u64>{0, 1}));
    EXPECT_EQ(r.quirks().inferred_from_task, 0u);
    EXPECT_EQ(r.quirks().stale_task_comms, 1u); // "stale-7" while task 7's comm is "a"
    EXPECT_EQ(r.quirks().wakings_by_context[0], 2u);
    EXPECT_EQ(r.quirks().median_idle_wakeup_to_switch(), -1); // no recorded idle->task switch
}

// Where idle-to-task switches are recorded, the delay from the idle CPU's sched_wakeup of the
// task to the switch: the estimate for the CPUs that do not record them.
TEST_F(ftrace_parse, measures_the_idle_wakeup_to_switch_delay)
{
    std::string t = tracefs_header;
    const long gaps_us[] = {1, 3, 2, 2, 9};
    long us = 0;
    for (const long g : gaps_us) {
        us += 100;
        t += fmt::format("          <idle>-0       [000] dNh2.   20.{:06}: sched_wakeup: comm=a "
                         "pid=7 prio=120 target_cpu=000\n",
                         us);
        us += g;
        t += fmt::format("          <idle>-0       [000] d..2.   20.{:06}: sched_switch: "
                         "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                         "next_comm=a next_pid=7 next_prio=120\n",
                         us);
        us += 10;
        t += fmt::format("               a-7       [000] d..2.   20.{:06}: sched_switch: "
                         "prev_comm=a prev_pid=7 prev_prio=120 prev_state=S ==> "
                         "next_comm=swapper/0 next_pid=0 next_prio=120\n",
                         us);
    }
    sched_trace_reader r(write("t.txt", t));
    read_all(r);
    EXPECT_EQ(r.quirks().idle_wakeup_to_switch.size(), 4u); // 1, 2 (twice), 3, 9 us
    EXPECT_EQ(r.quirks().median_idle_wakeup_to_switch(), 2000);
}

TEST_F(ftrace_parse, bad_input_names_the_line)
{
    const std::string ok = "          <idle>-0       [000] d..2.   10.000000: sched_switch: "
                           "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                           "next_comm=a next_pid=7 next_prio=120\n";
    const std::string earlier = "               a-7       [000] d..3.    9.000000: sched_waking: "
                                "comm=b pid=8 prio=120 target_cpu=000\n";
    EXPECT_THAT(error_of(write("lost.txt", std::string(tracefs_header) + ok +
                                               "CPU:1 [LOST 1234 EVENTS]\n" + ok)),
                HasSubstr("lost.txt:8: the trace lost events"));
    EXPECT_THAT(error_of(write("unsorted.txt", std::string(tracefs_header) + ok + earlier)),
                HasSubstr("unsorted.txt:8: timestamp 9.000000000 is before line 7's"));
    EXPECT_THAT(error_of(write("foreign.txt", "{\"traceEvents\": []}\n")),
                HasSubstr("foreign.txt:1: not ftrace text"));
    // perf script's layout, with fields that are not sched_switch's.
    EXPECT_THAT(error_of(write("perf.txt", "perf 123 [000] 10.000000: sched:sched_switch: a\n")),
                HasSubstr("perf.txt:1: sched_switch without"));
    EXPECT_THAT(error_of(write("perflost.txt", "perf 123 [000] 10.000000: PERF_RECORD_LOST "
                                               "lost 12\n")),
                HasSubstr("perflost.txt:1: the trace lost events"));
    EXPECT_THAT(error_of(write("perfnosys.txt", "perf 123 [000] 10.000000: sched_switch: a\n")),
                HasSubstr("perfnosys.txt:1: not ftrace text"));
    EXPECT_THAT(error_of(write("trunc.txt", std::string(tracefs_header) + ok + ok.substr(0, 60))),
                HasSubstr("trunc.txt:8: the last line has no newline: the trace is truncated"));
    EXPECT_THAT(error_of(write("field.txt", std::string(tracefs_header) +
                                                "               a-7       [000] d..3.   10.000000: "
                                                "sched_waking: comm=b prio=120 target_cpu=000\n")),
                HasSubstr("field.txt:7: sched_waking without its 'pid' field"));
    EXPECT_THAT(error_of(write("cpu.txt", std::string(tracefs_header) +
                                              "               a-7       [002] d..3.   10.000000: "
                                              "sched_waking: comm=b pid=8 prio=120 "
                                              "target_cpu=000\n")),
                HasSubstr("cpu.txt:7: CPU 2 but the header says the trace has 2 CPUs"));
    EXPECT_THAT(error_of(write("bigcpu.txt", "               a-7       [99999] d..3.   10.000000: "
                                             "sched_waking: comm=b pid=8 prio=120 "
                                             "target_cpu=000\n")),
                HasSubstr("bigcpu.txt:1: CPU 99999 is beyond the kernel's largest NR_CPUS"));
    EXPECT_THAT(error_of(write("bigpid.txt", "               a-7       [000] d..3.   10.000000: "
                                             "sched_waking: comm=b pid=2147483647 prio=120 "
                                             "target_cpu=000\n")),
                HasSubstr("bigpid.txt:1: sched_waking: pid 2147483647 is beyond"));
    EXPECT_THAT(error_of(path("missing.txt")), HasSubstr("missing.txt: cannot open the trace"));
    EXPECT_THAT(error_of(traces_dir), HasSubstr("not a regular file"));
    // A pipe (trace_pipe, stdin) is refused before it is opened: a trace is opened more than
    // once (its first bytes tell its format; a replay hashes it, then reads it twice).
    const std::string fifo = path("pipe");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_THAT(error_of(fifo), HasSubstr(fifo + ": not a regular file (a pipe"));
    EXPECT_THROW(trace_file_sha256(fifo), config_error);
}

TEST_F(ftrace_parse, truncated_xz_stream)
{
    const std::string full = slurp(traces_dir + "schbench_m1_t2_r3.trace.txt.xz");
    const std::string p = write("cut.txt.xz", full.substr(0, full.size() / 2));
    EXPECT_THAT(error_of(p), HasSubstr("cut.txt.xz: the xz stream is truncated"));
}

/*
 * The shared traces (data/traces, recorded on a 2-vCPU guest under 6.18): the recorded
 * sched_switch counts of their README and the inferred CPU-1 switch-ins. The README's counts
 * come from an independent script; these are this parser's, so they must agree.
 */
struct trace_counts {
    const char* file;
    u64 recorded_switches;
};

TEST(ftrace_parse_shared, recorded_switches_match_the_reference_counts)
{
    const trace_counts cases[] = {
        {"perf_messaging_g1_l200.trace.txt.xz", 9980},
        {"perf_messaging_g4_pipe_l100.trace.txt.xz", 5161},
        {"perf_pipe_l50000.trace.txt.xz", 150004},
        {"schbench_m1_t2_r3.trace.txt.xz", 3745},
    };
    for (const trace_counts& c : cases) {
        SCOPED_TRACE(c.file);
        sched_trace_reader r(traces_dir + c.file);
        ftrace_event e;
        u64 recorded = 0, inferred = 0;
        while (r.next(e))
            if (e.type == ftrace_event_type::sched_switch)
                ++(e.inferred ? inferred : recorded);
        EXPECT_EQ(recorded, c.recorded_switches);
        EXPECT_EQ(inferred, r.quirks().total_inferred());
        EXPECT_GT(r.quirks().inferred_switch_ins.at(1), 0u); // CPU 1's switch-ins are missing
        EXPECT_EQ(r.nr_cpus(), 2);
        EXPECT_EQ(r.stats().timestamp_digits, 6);
    }
}

// The .dat file (libtracecmd) and its `trace-cmd report -t` text hold the same events; the
// .dat has the irq context the text lacks.
TEST(ftrace_parse_shared, a_dat_file_reads_as_its_report_text)
{
    sched_trace_reader dat(traces_dir + "tracecmd_perf_messaging_g2_l100.dat");
    sched_trace_reader txt(traces_dir + "tracecmd_perf_messaging_g2_l100.report.txt.xz");
    ftrace_event a, b;
    u64 n = 0, irq = 0;
    for (;;) {
        const bool more_a = dat.next(a);
        const owned_event ea(a);
        const bool more_b = txt.next(b);
        ASSERT_EQ(more_a, more_b) << "event " << n;
        if (!more_a)
            break;
        ++n;
        SCOPED_TRACE(::testing::Message() << "event " << n << " at " << b.ts);
        ASSERT_EQ(ea.type, b.type);
        ASSERT_EQ(ea.ts, b.ts);
        ASSERT_EQ(ea.cpu, b.cpu);
        ASSERT_EQ(ea.curr_pid, b.curr_pid);
        ASSERT_EQ(ea.pid, b.pid);
        ASSERT_EQ(ea.pid2, b.pid2);
        ASSERT_EQ(ea.comm, b.comm);
        ASSERT_EQ(ea.inferred, b.inferred);
        // trace-cmd 3.1's sched plugin has its own letters: TASK_REPORT_IDLE (0x80) "W",
        // EXIT_DEAD (0x10) "Z", EXIT_ZOMBIE (0x20) "X", a preempted task (TASK_REPORT_MAX)
        // "R"; the tracepoint's own format, which tracefs prints, says "I", "X", "Z", "R+".
        if (ea.type == ftrace_event_type::sched_switch && !ea.inferred) {
            if (b.prev_state == "W") {
                ASSERT_EQ(ea.prev_state, "I");
            } else if (b.prev_state == "X") {
                ASSERT_EQ(ea.prev_state, "Z");
            } else if (b.prev_state == "Z") {
                ASSERT_EQ(ea.prev_state, "X");
            } else if (b.prev_state == "R") {
                ASSERT_TRUE(ea.prev_state == "R" || ea.prev_state == "R+") << ea.prev_state;
            } else {
                ASSERT_EQ(ea.prev_state, b.prev_state);
            }
        }
        if (ea.type == ftrace_event_type::sched_waking ||
            ea.type == ftrace_event_type::sched_wakeup) {
            ASSERT_EQ(ea.target_cpu, b.target_cpu);
        }
        irq += ea.ctx == ftrace_context::hardirq || ea.ctx == ftrace_context::softirq;
        if (!b.inferred) {
            EXPECT_EQ(b.ctx, ftrace_context::unknown);
        }
    }
    EXPECT_EQ(n, 15780u); // 15 779 records and one inferred switch-in
    EXPECT_EQ(dat.stats().format, "trace-cmd .dat");
    EXPECT_EQ(dat.nr_cpus(), 2);
    EXPECT_GT(irq, 0u);
}

TEST_F(ftrace_parse, a_truncated_dat_file_is_an_error)
{
    const std::string full = slurp(traces_dir + "tracecmd_perf_messaging_g2_l100.dat");
    EXPECT_THAT(error_of(write("cut.dat", full.substr(0, 4096))), HasSubstr("cut.dat"));
}

// perf_sched_pipe_l1000 (data/traces/README.md): perf sched record's events; the pipe pair
// shared one CPU, where the woken reader preempts the writer, which then finds its reply
// without blocking: one waking per loop, not two. No switch-in is inferred (perf records all).
TEST(ftrace_parse_shared, perf_script_of_perf_sched_record)
{
    sched_trace_reader r(traces_dir + "perf_sched_pipe_l1000.perf-script.txt.xz");
    ftrace_event e;
    std::map<ftrace_event_type, u64> n;
    while (r.next(e))
        ++n[e.type];
    EXPECT_EQ(r.stats().format, "perf script");
    EXPECT_EQ(r.stats().events, 5164u); // perf record: "5164 samples"
    EXPECT_EQ(r.quirks().total_inferred(), 0u);
    EXPECT_EQ(n[ftrace_event_type::sched_waking], 1027u);
    EXPECT_EQ(n[ftrace_event_type::sched_process_fork], 1u);
    EXPECT_EQ(n[ftrace_event_type::sched_wakeup], 0u); // perf sched record takes sched_waking
}

TEST(ftrace_parse_shared, trace_cmd_report_text)
{
    sched_trace_reader r(traces_dir + "tracecmd_perf_messaging_g2_l100.report.txt.xz");
    ftrace_event e;
    u64 events = 0;
    while (r.next(e))
        events += !e.inferred;
    EXPECT_EQ(r.stats().format, "trace-cmd report");
    EXPECT_EQ(r.stats().timestamp_digits, 9);
    EXPECT_EQ(events, r.stats().events);
    EXPECT_GT(events, 15000u);
}

} // namespace
} // namespace schedlab
