// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ftrace text layout, line for line against a real recording
 * (data/traces/perf_messaging_g1_l200.trace.txt.xz: the fork of the
 * benchmark by the recorder's shell, its wakeup_new and first switch-in).
 */
#include "trace/export_ftrace.h"

#include "sim/config_error.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace schedlab {
namespace {

const std::string recorder = "record_tracefs.sh"; // truncated to 15 characters, as the kernel does
const std::string idle0_comm = "swapper/0", idle1_comm = "swapper/1";

std::string lines_after_header(const std::string& text)
{
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line))
        if (!line.starts_with("#"))
            out += line + "\n";
    return out;
}

TEST(ftrace_exporter, reproduces_lines_of_a_real_recording)
{
    ftrace_exporter x;
    x.sched_switch({594'130'000'000, 1, 0, &idle1_comm, trace_task_state::R, false, 14052, &recorder});
    x.sched_process_fork({594'130'973'000, 1, 14053, 14052, &recorder});
    x.sched_wakeup_new({594'130'986'000, 1, 14053, &recorder, 0});
    x.sched_switch({594'131'032'000, 0, 0, &idle0_comm, trace_task_state::R, false, 14053, &recorder});
    x.sched_switch({594'131'098'000, 1, 14052, &recorder, trace_task_state::S, false, 0, &idle1_comm});
    std::ostringstream out;
    x.write(out, 2);
    const std::string text = out.str();
    EXPECT_TRUE(text.starts_with("# tracer: nop\n#\n# entries-in-buffer/entries-written: 5/5   #P:2\n"));
    EXPECT_NE(text.find("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
                        "#              | |         |   |||||     |         |\n"),
              std::string::npos);
    EXPECT_EQ(
        lines_after_header(text),
        "          <idle>-0       [001] d..2.   594.130000: sched_switch: prev_comm=swapper/1 "
        "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=record_tracefs. next_pid=14052 "
        "next_prio=120\n"
        " record_tracefs.-14052   [001] .....   594.130973: sched_process_fork: "
        "comm=record_tracefs. pid=14052 child_comm=record_tracefs. child_pid=14053\n"
        " record_tracefs.-14052   [001] d..2.   594.130986: sched_wakeup_new: comm=record_tracefs. "
        "pid=14053 prio=120 target_cpu=000\n"
        "          <idle>-0       [000] d..2.   594.131032: sched_switch: prev_comm=swapper/0 "
        "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=record_tracefs. next_pid=14053 "
        "next_prio=120\n"
        " record_tracefs.-14052   [001] d..2.   594.131098: sched_switch: prev_comm=record_tracefs. "
        "prev_pid=14052 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 "
        "next_prio=120\n");
}

TEST(ftrace_exporter, preempted_tasks_print_r_plus_and_migrations_follow_the_waker)
{
    const std::string a = "worker", b = "waker";
    ftrace_exporter x;
    x.sched_switch({1'000, 2, 0, &idle0_comm, trace_task_state::R, false, 7, &b});
    x.sched_waking({2'000'000, 2, 9, &a, 0});
    x.sched_migrate_task({2'000'000, 9, &a, 0, 3});
    x.sched_switch({3'500'000, 2, 7, &b, trace_task_state::R, true, 9, &a});
    x.sched_process_exit({4'000'000, 2, 9, 7, &a});
    std::ostringstream out;
    x.write(out, 4);
    EXPECT_EQ(lines_after_header(out.str()),
              "          <idle>-0       [002] d..2.     0.000001: sched_switch: prev_comm=swapper/0 "
              "prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=waker next_pid=7 next_prio=120\n"
              "           waker-7       [002] d..2.     0.002000: sched_waking: comm=worker pid=9 "
              "prio=120 target_cpu=000\n"
              "           waker-7       [002] d..2.     0.002000: sched_migrate_task: comm=worker "
              "pid=9 prio=120 orig_cpu=0 dest_cpu=3\n"
              "           waker-7       [002] d..2.     0.003500: sched_switch: prev_comm=waker "
              "prev_pid=7 prev_prio=120 prev_state=R+ ==> next_comm=worker next_pid=9 "
              "next_prio=120\n"
              "          worker-9       [002] .....     0.004000: sched_process_exit: comm=worker "
              "pid=9 prio=120\n");
}

// A timer's wakeup (hrtimer_wakeup() in the timer interrupt) prints the hardirq flag, as a
// real trace does (data/traces/schbench_m1_t2_r3: "<idle>-0 [000] d.h3. ... sched_waking").
TEST(ftrace_exporter, wakeups_in_hardirq_context_print_h)
{
    const std::string a = "sleeper";
    ftrace_exporter x;
    x.sched_waking({2'000'000, 1, 9, &a, 1, 120, trace_irq_ctx::hardirq});
    x.sched_wakeup({2'001'000, 1, 9, &a, 1, 120, trace_irq_ctx::hardirq});
    x.sched_waking({3'000'000, 1, 9, &a, 1, 120});
    std::ostringstream out;
    x.write(out, 2);
    EXPECT_EQ(lines_after_header(out.str()),
              "          <idle>-0       [001] d.h3.     0.002000: sched_waking: comm=sleeper pid=9 "
              "prio=120 target_cpu=001\n"
              "          <idle>-0       [001] d.h4.     0.002001: sched_wakeup: comm=sleeper pid=9 "
              "prio=120 target_cpu=001\n"
              "          <idle>-0       [001] d..2.     0.003000: sched_waking: comm=sleeper pid=9 "
              "prio=120 target_cpu=001\n");
}

// prio, prev_prio and next_prio are the tasks' p->prio: 120 + nice, 99 - rt_priority.
TEST(ftrace_exporter, prints_each_tasks_prio)
{
    const std::string fair = "niced", rt = "fifo";
    ftrace_exporter x;
    x.sched_switch({1'000, 0, 0, &idle0_comm, trace_task_state::R, false, 7, &fair, 120, 125});
    x.sched_waking({2'000'000, 0, 9, &rt, 0, 49});
    x.sched_migrate_task({2'000'000, 9, &rt, 1, 0, 49});
    x.sched_wakeup({2'001'000, 0, 9, &rt, 0, 49});
    x.sched_switch({2'002'000, 0, 7, &fair, trace_task_state::R, true, 9, &rt, 125, 49});
    x.sched_process_exit({3'000'000, 0, 9, 7, &rt, 49});
    std::ostringstream out;
    x.write(out, 2);
    const std::string text = lines_after_header(out.str());
    for (const char* want :
         {"prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=niced "
          "next_pid=7 next_prio=125\n",
          "sched_waking: comm=fifo pid=9 prio=49 target_cpu=000\n",
          "sched_migrate_task: comm=fifo pid=9 prio=49 orig_cpu=1 dest_cpu=0\n",
          "sched_wakeup: comm=fifo pid=9 prio=49 target_cpu=000\n",
          "prev_comm=niced prev_pid=7 prev_prio=125 prev_state=R+ ==> next_comm=fifo next_pid=9 "
          "next_prio=49\n",
          "sched_process_exit: comm=fifo pid=9 prio=49\n"})
        EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
}

TEST(ftrace_exporter, cpu_idle_prints_the_state_and_the_exit_as_power_h_does)
{
    const std::string a = "worker";
    ftrace_exporter x;
    x.sched_switch({1'000, 1, 0, &idle0_comm, trace_task_state::R, false, 9, &a});
    x.sched_switch({2'000, 1, 9, &a, trace_task_state::S, false, 0, &idle0_comm});
    x.cpu_idle({2'000, 2, 1});
    x.cpu_idle({7'000, PWR_EVENT_EXIT, 1});
    std::ostringstream out;
    x.write(out, 2);
    const std::string text = lines_after_header(out.str());
    EXPECT_NE(text.find("          <idle>-0       [001] d..1.     0.000002: cpu_idle: state=2 "
                        "cpu_id=1\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("          <idle>-0       [001] d..1.     0.000007: cpu_idle: "
                        "state=4294967295 cpu_id=1\n"),
              std::string::npos)
        << text;
}

TEST(ftrace_exporter, an_unwritable_path_is_a_config_error_naming_the_flag)
{
    ftrace_exporter x;
    try {
        x.write_file("/nonexistent-dir/t.txt", 1);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "--trace");
    }
}

std::string gunzip(const std::string& path)
{
    gzFile g = gzopen(path.c_str(), "rb");
    EXPECT_NE(g, nullptr);
    std::string out;
    char buf[4096];
    int n;
    while (g && (n = gzread(g, buf, sizeof buf)) > 0)
        out.append(buf, static_cast<std::size_t>(n));
    if (g)
        gzclose(g);
    return out;
}

TEST(ftrace_exporter, a_gz_file_is_gzip_compressed)
{
    ftrace_exporter x;
    for (int i = 0; i < 2000; ++i)
        x.sched_switch({1000 * i, i % 2, 0, &idle1_comm, trace_task_state::R, false, 7, &recorder});
    std::ostringstream plain;
    x.write(plain, 2);
    const std::string path = ::testing::TempDir() + "/schedlab-ftrace-test.txt.gz";
    x.write_file(path, 2);
    std::ifstream raw(path, std::ios::binary);
    EXPECT_EQ(raw.get(), 0x1f); // the gzip magic, not plain text
    EXPECT_EQ(raw.get(), 0x8b);
    EXPECT_EQ(gunzip(path), plain.str());
    std::remove(path.c_str());
}

TEST(ftrace_exporter, other_compressions_are_refused_before_the_file_is_written)
{
    ftrace_exporter x;
    const std::string path = ::testing::TempDir() + "/schedlab-ftrace-test.txt.xz";
    try {
        x.write_file(path, 1);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "--trace: '" + path +
                      "': .xz compression is not supported; name the file .zst "
                      "(zstd), .gz (gzip) or anything else for plain text");
    }
    EXPECT_FALSE(std::ifstream(path).good());
    EXPECT_EQ(trace_compression_for("t.zst"), trace_compression::zstd);
    EXPECT_EQ(trace_compression_for("t.gz"), trace_compression::gzip);
    EXPECT_EQ(trace_compression_for("t.txt"), trace_compression::none);
}

} // namespace
} // namespace schedlab
