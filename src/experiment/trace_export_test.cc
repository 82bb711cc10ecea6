// SPDX-License-Identifier: GPL-2.0-only
/*
 * A run's ftrace export read back: the text parses, one task runs per CPU at
 * a time, every switch-out names the task that was switched in, and the run
 * intervals add up to the busy time of the run's scheduler summary.
 */
#include "experiment/run.h"
#include "trace/export_ftrace.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace schedlab {
namespace {

struct trace_line {
    std::string task; ///< TASK-PID column comm
    int pid = 0;      ///< TASK-PID column pid
    int cpu = 0;
    s64 ts_us = 0;
    std::string event;
    std::map<std::string, std::string> f;
};

/// Parses one event line; false if it does not have the ftrace layout.
bool parse_line(const std::string& line, trace_line& out)
{
    const std::size_t lb = line.find(" [");
    if (lb == std::string::npos || line.size() < lb + 7 || line[lb + 5] != ']')
        return false;
    const std::string taskpid = line.substr(0, lb);
    const std::size_t dash = taskpid.rfind('-');
    if (dash == std::string::npos)
        return false;
    out.task = taskpid.substr(taskpid.find_first_not_of(' '), dash - taskpid.find_first_not_of(' '));
    out.pid = std::stoi(taskpid.substr(dash + 1));
    out.cpu = std::stoi(line.substr(lb + 2, 3));
    // "] d..2. " then "%5lu.%06lu: "
    const std::size_t ts_end = line.find(": ", lb);
    const std::string ts = line.substr(lb + 13, ts_end - (lb + 13));
    const std::size_t dot = ts.find('.');
    if (dot == std::string::npos || ts.size() - dot - 1 != 6)
        return false;
    out.ts_us = std::stoll(ts.substr(0, dot)) * 1'000'000 + std::stoll(ts.substr(dot + 1));
    const std::size_t ev_end = line.find(": ", ts_end + 2);
    out.event = line.substr(ts_end + 2, ev_end - ts_end - 2);
    std::istringstream fields(line.substr(ev_end + 2));
    std::string tok;
    while (fields >> tok) {
        const std::size_t eq = tok.find('=');
        if (eq != std::string::npos)
            out.f[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    return true;
}

std::string zstd_decompress(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string comp = ss.str();
    ZSTD_DCtx* d = ZSTD_createDCtx();
    std::string out;
    std::vector<char> buf(ZSTD_DStreamOutSize());
    ZSTD_inBuffer ib{comp.data(), comp.size(), 0};
    while (ib.pos < ib.size) {
        ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
        const std::size_t r = ZSTD_decompressStream(d, &ob, &ib);
        EXPECT_FALSE(ZSTD_isError(r));
        if (ZSTD_isError(r))
            break;
        out.append(buf.data(), ob.pos);
    }
    ZSTD_freeDCtx(d);
    return out;
}

TEST(ftrace_export, a_hackbench_run_reads_back_consistently)
{
    run_spec s;
    s.machine = "skylake-18c";
    s.kernel = "6.6";
    s.seed = 4;
    s.check = "sampled";
    s.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "2", "-l", "10"};
    ftrace_exporter x;
    const run_result r = execute_run(s, {{&x}, {}});
    ASSERT_TRUE(r.finished);
    const int nr_cpus = r.provenance.nr_cpus;

    const std::string path = ::testing::TempDir() + "/schedlab-trace-test.txt.zst";
    x.write_file(path, nr_cpus);
    const std::string text = zstd_decompress(path);
    std::remove(path.c_str());
    std::ostringstream plain;
    x.write(plain, nr_cpus);
    ASSERT_EQ(text, plain.str()); // the .zst file holds exactly the text export

    std::istringstream in(text);
    std::string line;
    std::vector<int> curr(static_cast<std::size_t>(nr_cpus), 0);
    std::vector<s64> since(static_cast<std::size_t>(nr_cpus), -1);
    std::vector<s64> busy_us(static_cast<std::size_t>(nr_cpus), 0);
    std::vector<int> intervals(static_cast<std::size_t>(nr_cpus), 0);
    std::map<int, int> running_on; // pid -> cpu
    std::vector<bool> in_cstate(static_cast<std::size_t>(nr_cpus), false);
    std::size_t cstate_entries = 0;
    std::size_t nr_lines = 0, switches = 0, migrations = 0, wakeups = 0;
    s64 last_ts = 0;
    std::string header_count;
    while (std::getline(in, line)) {
        if (line.starts_with("# entries-in-buffer/entries-written: "))
            header_count = line.substr(37, line.find('/', 37) - 37);
        if (line.starts_with("#"))
            continue;
        trace_line t;
        ASSERT_TRUE(parse_line(line, t)) << line;
        ++nr_lines;
        ASSERT_GE(t.ts_us, last_ts) << "timestamps go backwards: " << line;
        last_ts = t.ts_us;
        ASSERT_LT(t.cpu, nr_cpus);
        const auto cpu = static_cast<std::size_t>(t.cpu);
        // The TASK-PID column names the task current on that CPU.
        ASSERT_EQ(t.pid, curr[cpu]) << line;
        ASSERT_EQ(t.pid == 0, t.task == "<idle>") << line;
        if (t.event == "sched_switch") {
            ++switches;
            const int prev = std::stoi(t.f.at("prev_pid")), next = std::stoi(t.f.at("next_pid"));
            ASSERT_EQ(prev, curr[cpu]) << "switch-out of a task that was not switched in: " << line;
            ASSERT_FALSE(prev == 0 && in_cstate[cpu]) << "left idle before its cpu_idle exit: " << line;
            if (prev != 0) {
                busy_us[cpu] += t.ts_us - since[cpu];
                ++intervals[cpu];
                running_on.erase(prev);
            }
            if (next != 0) {
                // one CPU at a time
                ASSERT_EQ(running_on.count(next), 0u) << "pid " << next << " already runs: " << line;
                running_on[next] = t.cpu;
                since[cpu] = t.ts_us;
            }
            curr[cpu] = next;
        } else if (t.event == "cpu_idle") {
            // power:cpu_idle: an entry while the idle task runs, then its exit, in turn
            const auto state = std::stoull(t.f.at("state"));
            ASSERT_EQ(std::stoi(t.f.at("cpu_id")), t.cpu) << line;
            ASSERT_EQ(curr[cpu], 0) << "cpu_idle on a busy CPU: " << line;
            if (state == 4294967295ULL) {
                ASSERT_TRUE(in_cstate[cpu]) << "an exit without an entry: " << line;
            } else {
                ASSERT_LE(state, 2u) << line;
                ASSERT_FALSE(in_cstate[cpu]) << "two entries: " << line;
                ++cstate_entries;
            }
            in_cstate[cpu] = state != 4294967295ULL;
        } else if (t.event == "sched_migrate_task") {
            ++migrations;
        } else if (t.event == "sched_waking" || t.event == "sched_wakeup_new") {
            ++wakeups;
        } else {
            ASSERT_TRUE(t.event == "sched_wakeup" || t.event == "sched_process_fork" ||
                        t.event == "sched_process_exit")
                << line;
        }
    }
    EXPECT_EQ(header_count, std::to_string(nr_lines));
    EXPECT_EQ(nr_lines, x.nr_events());
    EXPECT_GT(cstate_entries, 0u);
    EXPECT_EQ(switches, r.summary.switches);
    EXPECT_EQ(migrations, r.summary.migrations);
    EXPECT_EQ(wakeups, r.summary.wakeups);
    EXPECT_TRUE(running_on.empty()) << "every benchmark task has exited and switched out";

    // Run intervals against the summary's busy time: microsecond timestamps
    // truncate each end, so each interval may be off by less than 1 us.
    const s64 end_us = r.summary.simulated_ns / 1000;
    s64 total_trace = 0, total_summary = 0;
    int total_intervals = 0;
    for (std::size_t cpu = 0; cpu < curr.size(); ++cpu) {
        if (curr[cpu] != 0) {
            busy_us[cpu] += end_us - since[cpu];
            ++intervals[cpu];
        }
        EXPECT_NEAR(static_cast<double>(busy_us[cpu] * 1000),
                    static_cast<double>(r.summary.busy_ns[cpu]), 1000.0 * (intervals[cpu] + 1))
            << "cpu " << cpu;
        total_trace += busy_us[cpu];
        total_summary += r.summary.busy_ns[cpu];
        total_intervals += intervals[cpu];
    }
    EXPECT_GT(total_intervals, 100);
    EXPECT_NEAR(static_cast<double>(total_trace * 1000), static_cast<double>(total_summary),
                1000.0 * total_intervals);
}

} // namespace
} // namespace schedlab
