// SPDX-License-Identifier: GPL-2.0-only
/*
 * --trace FILE.dat: the same events as the text export, read back through libtracecmd
 * (trace/ftrace_parse.h's .dat input) and by Debian's `trace-cmd report`.
 */
#include "trace/export_ftrace.h"
#include "trace/ftrace_parse.h"

#include "sim/config_error.h"
#include "sim/open_descriptors_test_support.h"
#include "sim/scratch_dir_test_support.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

namespace schedlab {
namespace {

using test_support::scratch_dir;
using ::testing::HasSubstr;

const std::string a = "a", b = "a task named b", swapper0 = "swapper/0", swapper1 = "swapper/1";

/*
 * Two tasks ping-pong across two CPUs 200 times (more than one 4 KiB page per CPU), with a
 * 0.5 s gap (a time delta past the ring buffer's 27 bits: a TIME_EXTEND event), a
 * preemption, a migration, a fork, an exit and power:cpu_idle. `rounds` more ping-pongs
 * make a file whose records fill the .dat reader's pipe.
 */
ftrace_exporter sample(int rounds = 200)
{
    ftrace_exporter x;
    sim_time t = 1'000'000'000;
    x.sched_switch({t, 0, 0, &swapper0, trace_task_state::R, false, 10, &a});
    x.sched_process_fork({t + 1000, 0, 11, 10, &b});
    x.sched_wakeup_new({t + 2000, 0, 11, &b, 1});
    x.cpu_idle({t + 2500, PWR_EVENT_EXIT, 1});
    x.sched_switch({t + 3000, 1, 0, &swapper1, trace_task_state::R, false, 11, &b});
    for (int i = 0; i < rounds; ++i) {
        t += i == 100 ? 500'000'000 : 7'000;
        x.sched_waking({t, 0, 11, &b, 1});
        x.sched_wakeup({t + 900, 1, 11, &b, 1});
        x.sched_switch({t + 1000, 0, 10, &a, trace_task_state::S, false, 0, &swapper0});
        x.sched_switch({t + 2000, 1, 11, &b, trace_task_state::S, false, 0, &swapper1});
        x.cpu_idle({t + 2100, 1, 1});
        x.sched_switch({t + 3000, 0, 0, &swapper0, trace_task_state::R, false, 10, &a});
    }
    x.sched_switch({t + 10'000, 0, 10, &a, trace_task_state::R, true, 0, &swapper0});
    x.sched_waking({t + 11'000, 1, 10, &a, 0});
    x.sched_migrate_task({t + 11'000, 10, &a, 0, 1});
    x.sched_process_exit({t + 20'000, 1, 11, 0, &b});
    x.sched_switch({t + 21'000, 1, 11, &b, trace_task_state::X, false, 10, &a});
    return x;
}

using row = std::tuple<int, sim_time, int, int, int, std::string, std::string, int, int, int>;

/// Per CPU, the events as the parser gives them (timestamps to the microsecond the text has).
std::map<int, std::vector<row>> read(const std::string& path)
{
    std::map<int, std::vector<row>> per_cpu;
    ftrace_reader r(path);
    ftrace_event e;
    while (r.next(e))
        per_cpu[e.cpu].emplace_back(static_cast<int>(e.type), e.ts / 1000, e.curr_pid, e.pid,
                                    e.pid2, std::string(e.comm), std::string(e.prev_state),
                                    e.target_cpu, e.dest_cpu, e.type == ftrace_event_type::other);
    return per_cpu;
}

class export_dat : public scratch_dir {};

TEST_F(export_dat, libtracecmd_reads_the_events_of_the_text)
{
    const ftrace_exporter x = sample();
    x.write_file(path("t.txt"), 2);
    x.write_file(path("t.dat"), 2);
    const auto text = read(path("t.txt"));
    const auto dat = read(path("t.dat"));
    ASSERT_EQ(text.size(), 2u);
    EXPECT_EQ(dat, text);
    std::size_t n = 0;
    for (const auto& [cpu, v] : dat)
        n += v.size();
    EXPECT_EQ(n, x.nr_events());
}

// A .dat cut short past its headers: tracecmd_open() cleaned up its failed
// tracecmd_init_data() with a tracecmd_close() that crashed inside libtracecmd 3.1.6
// (SIGSEGV, `schedlab replay` exit 139). libtracecmd runs in a child process now, which
// sends this error and exits without closing its handle.
TEST_F(export_dat, a_dat_file_cut_short_after_its_headers_is_an_error)
{
    sample().write_file(path("t.dat"), 2);
    std::ifstream in(path("t.dat"), std::ios::binary);
    const std::string full{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ASSERT_GT(full.size(), 3u * 4096);
    for (const std::size_t keep : {full.size() - 4096, full.size() - 1}) {
        {
            std::ofstream out(path("cut.dat"), std::ios::binary | std::ios::trunc);
            out << full.substr(0, keep);
        }
        try {
            ftrace_reader r(path("cut.dat"));
            ftrace_event e;
            while (r.next(e)) {
            }
            ADD_FAILURE() << "a .dat cut to " << keep << " of " << full.size() << " bytes was read";
        } catch (const config_error& err) {
            EXPECT_EQ(std::string(err.what()),
                      path("cut.dat") + ": libtracecmd cannot read the CPU data of this "
                                        "trace-cmd .dat file: it is truncated or corrupt")
                << keep;
        }
    }
}

using test_support::open_descriptors;

/// The pids of this process's children, from /proc/PID/stat's fourth field (the parent).
std::vector<pid_t> children()
{
    std::vector<pid_t> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream in(entry.path() / "stat");
        std::string stat;
        std::getline(in, stat);
        const std::size_t paren = stat.rfind(')'); // the comm may hold spaces and parens
        if (paren == std::string::npos)
            continue;
        std::istringstream rest(stat.substr(paren + 1));
        std::string state;
        pid_t ppid = 0;
        if (rest >> state >> ppid && ppid == getpid())
            out.push_back(std::stoi(name));
    }
    return out;
}

/// No child left to reap: waitpid() finds none at all.
bool no_child_left()
{
    errno = 0;
    return waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

/// The message of the config_error reading `path` to its end throws ("" if none).
std::string error_reading(const std::string& path)
{
    try {
        ftrace_reader r(path);
        ftrace_event e;
        while (r.next(e)) {
        }
    } catch (const config_error& err) {
        return err.what();
    }
    return "";
}

// A record's pid is what its bytes say: a .dat is held to the text's PID_MAX_LIMIT, and the
// error names the record (a pid of 2139127808, one byte of a .dat mutated, had a replay
// allocate 4 GB before it was refused).
TEST_F(export_dat, a_pid_beyond_pid_max_limit_is_an_error_naming_the_record)
{
    ftrace_exporter x = sample();
    x.sched_waking({3'000'000'000, 0, 4'194'305, &b, 1}); // PID_MAX_LIMIT + 1
    x.write_file(path("t.dat"), 2);
    EXPECT_EQ(error_reading(path("t.dat")),
              fmt::format("{}:{}: sched_waking: pid 4194305 is beyond the kernel's "
                          "PID_MAX_LIMIT (4194304)",
                          path("t.dat"), x.nr_events()));
}

// libtracecmd runs in a child process (trace/ftrace_parse.cc, dat_source), one per reader:
// reaped, its pipe closed, whether the reader reads to the end, stops early or never reads.
TEST_F(export_dat, the_dat_reader_leaves_no_child_or_descriptor_behind)
{
    const ftrace_exporter x = sample(3000); // 18 000 records: more than the pipe holds
    x.write_file(path("t.dat"), 2);
    const int fds = open_descriptors();
    ASSERT_TRUE(no_child_left());
    for (const std::size_t stop_after : {std::size_t{0}, std::size_t{1}, x.nr_events()}) {
        SCOPED_TRACE(stop_after);
        {
            ftrace_reader r(path("t.dat"));
            EXPECT_EQ(children().size(), 1u);
            EXPECT_EQ(open_descriptors(), fds + 1); // the pipe's end
            ftrace_event e;
            std::size_t n = 0;
            while (n < stop_after && r.next(e))
                ++n;
            EXPECT_EQ(n, stop_after);
            if (stop_after == x.nr_events()) {
                EXPECT_FALSE(r.next(e));
                EXPECT_TRUE(no_child_left()); // reaped at the end, before the reader goes
            }
        }
        EXPECT_EQ(open_descriptors(), fds);
        EXPECT_TRUE(no_child_left());
    }
    // The same after an error (the cut file of the test above).
    const std::string full = slurp(path("t.dat"));
    write("cut.dat", full.substr(0, full.size() / 2));
    EXPECT_THAT(error_reading(path("cut.dat")), HasSubstr("truncated or corrupt"));
    EXPECT_EQ(open_descriptors(), fds);
    EXPECT_TRUE(no_child_left());
}

// A child that dies of a signal while the parent reads: the records it sent are read, then
// an error naming the file and the signal. Sent from here, so the test does not depend on
// one of libtracecmd's crashes.
TEST_F(export_dat, a_dat_reader_killed_by_a_signal_is_an_error_naming_the_file)
{
    sample(3000).write_file(path("t.dat"), 2);
    const int fds = open_descriptors();
    ftrace_reader r(path("t.dat"));
    const std::vector<pid_t> kids = children();
    ASSERT_EQ(kids.size(), 1u);
    ASSERT_EQ(kill(kids[0], SIGSEGV), 0);
    std::string what;
    try {
        ftrace_event e;
        while (r.next(e)) {
        }
    } catch (const config_error& err) {
        what = err.what();
    }
    EXPECT_EQ(what, path("t.dat") + ": libtracecmd could not read this trace-cmd .dat file "
                                    "(killed by SIGSEGV): it is corrupt or truncated");
    EXPECT_EQ(open_descriptors(), fds);
    EXPECT_TRUE(no_child_left());
}

// One byte of an event's print format changed ("REC->prev_state" in sched_switch's
// __print_symbolic() as "REC->prev_s>ate"): libtraceevent 1.7.1 (Debian 12) crashes parsing
// it inside tracecmd_open_head() (SIGSEGV; `schedlab replay` exited 139 before the reader's
// child process). Found by mutating a `schedlab run --trace` .dat (docs/testing.md, lane
// datiso).
TEST_F(export_dat, a_dat_file_libtraceevent_crashes_on_is_an_error_naming_the_file)
{
    sample().write_file(path("t.dat"), 2);
    std::string bytes = slurp(path("t.dat"));
    const std::size_t at = bytes.find("__print_symbolic(REC->prev_state, {");
    ASSERT_NE(at, std::string::npos);
    bytes[at + std::string_view("__print_symbolic(REC->prev_s").size()] = '>';
    write("bad.dat", bytes);
    const int fds = open_descriptors();
    EXPECT_EQ(error_reading(path("bad.dat")),
              path("bad.dat") + ": libtracecmd could not read this trace-cmd .dat file (killed "
                                "by SIGSEGV): it is corrupt or truncated");
    EXPECT_EQ(open_descriptors(), fds);
    EXPECT_TRUE(no_child_left());
}

/*
 * --trace FILE.json: the JSON trace-event format Perfetto's UI opens, checked against the
 * format's rules (an object with a "traceEvents" array; every event a "ph", "pid", "tid" and
 * "name"; a complete event "ts" and "dur" in microseconds) and read back: per CPU, the run
 * slices do not overlap and add up to the busy time of the text export read by the parser,
 * and every sched_waking is an instant event.
 */
TEST_F(export_dat, json_trace_events_hold_the_runs_of_the_text)
{
    ftrace_exporter x = sample();
    const std::string odd = "q\"uote\\d\x01"; // escaped in the JSON, not breaking it
    x.sched_switch({3'000'000'000, 0, 0, &swapper0, trace_task_state::R, false, 12, &odd});
    x.sched_switch({3'000'004'000, 0, 12, &odd, trace_task_state::S, false, 0, &swapper0});
    x.write_file(path("t.json"), 2);
    x.write_file(path("t.txt"), 2);

    std::ifstream in(path("t.json"));
    const nlohmann::json doc = nlohmann::json::parse(in);
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
    const nlohmann::json& events = doc.at("traceEvents");
    ASSERT_TRUE(events.is_array());
    std::map<int, std::vector<std::pair<double, double>>> slices; // per CPU: (ts, dur) in us
    std::map<std::string, int> names;
    int wakings = 0;
    for (const nlohmann::json& ev : events) {
        ASSERT_TRUE(ev.at("ph").is_string()) << ev;
        ASSERT_TRUE(ev.at("pid").is_number_integer()) << ev;
        ASSERT_TRUE(ev.at("tid").is_number_integer()) << ev;
        ASSERT_TRUE(ev.at("name").is_string()) << ev;
        const std::string ph = ev.at("ph");
        if (ph == "X") {
            ASSERT_TRUE(ev.at("ts").is_number() && ev.at("dur").is_number()) << ev;
            EXPECT_GE(ev.at("dur").get<double>(), 0) << ev;
            slices[ev.at("tid")].emplace_back(ev.at("ts"), ev.at("dur"));
            ++names[ev.at("name")];
        } else if (ph == "i") {
            EXPECT_EQ(ev.at("name"), "sched_waking");
            ++wakings;
        } else {
            EXPECT_EQ(ph, "M") << ev;
        }
    }
    EXPECT_EQ(wakings, 201);
    EXPECT_EQ(names[odd], 1);
    EXPECT_EQ(names[a], 202);

    // The busy time per CPU, from the text export read back by the parser: the time from
    // each switch to a task to the CPU's next switch (or the trace's end).
    std::map<int, sim_time> busy, since;
    std::map<int, int> curr;
    sim_time last = 0;
    ftrace_reader r(path("t.txt"));
    ftrace_event e;
    while (r.next(e)) {
        last = e.ts;
        if (e.type == ftrace_event_type::sched_switch) {
            if (curr[e.cpu] != 0)
                busy[e.cpu] += e.ts - since[e.cpu];
            curr[e.cpu] = e.pid2;
            since[e.cpu] = e.ts;
        }
    }
    for (const auto& [cpu, pid] : curr)
        if (pid != 0)
            busy[cpu] += last - since[cpu];
    for (auto& [cpu, s] : slices) {
        SCOPED_TRACE(cpu);
        std::sort(s.begin(), s.end());
        double sum = 0, end = 0;
        for (const auto& [ts, dur] : s) {
            EXPECT_GE(ts, end - 1e-6); // no overlap
            end = ts + dur;
            sum += dur;
        }
        EXPECT_NEAR(sum * 1000, static_cast<double>(busy[cpu]), 0.5);
    }
    EXPECT_EQ(slices.size(), 2u);
}

TEST_F(export_dat, trace_cmd_report_reads_it)
{
    if (std::system("command -v trace-cmd > /dev/null 2>&1") != 0) { // --version exits 255
        // CI (.ci/run sets SCHEDLAB_CI) must run this test, not skip it.
        if (const char* ci = std::getenv("SCHEDLAB_CI"); ci && *ci)
            FAIL() << "trace-cmd is not installed, and SCHEDLAB_CI is set: CI must run this test "
                      "(scripts/install-deps.sh installs trace-cmd)";
        GTEST_SKIP() << "trace-cmd is not installed (scripts/install-deps.sh installs it)";
    }
    const ftrace_exporter x = sample();
    x.write_file(path("t.dat"), 2);
    const std::string cmd = fmt::format("trace-cmd report '{}' 2>&1", path("t.dat"));
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;)
        out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
    std::istringstream in(out);
    std::string line;
    std::map<std::string, int> events;
    int lines = 0;
    while (std::getline(in, line)) {
        ++lines;
        const std::size_t colon = line.find(": ");
        const std::size_t name = colon == std::string::npos ? colon : line.find(':', colon + 2);
        if (name != std::string::npos)
            ++events[line.substr(colon + 2, name - colon - 2)];
    }
    ASSERT_EQ(lines, 1 + static_cast<int>(x.nr_events())) << out.substr(0, 2000); // + "cpus=2"
    EXPECT_EQ(events["sched_switch"], 2 + 3 * 200 + 2);
    EXPECT_EQ(events["sched_waking"], 201);
    EXPECT_EQ(events["cpu_idle"], 201);
    EXPECT_THAT(out, HasSubstr("cpus=2\n"));
    // trace-cmd's sched plugin prints the switch compactly, with its state letters: as for
    // a real recording (docs/replay.md), a preempted task as R and EXIT_DEAD as Z.
    EXPECT_THAT(out, HasSubstr("sched_switch:         a:10 [120] S ==> swapper/0:0 [120]"));
    EXPECT_THAT(out, HasSubstr("1.501403: sched_switch:         a:10 [120] R ==> swapper/0:0"));
    EXPECT_THAT(out, HasSubstr("a task named b:11 [120] Z ==> a:10 [120]"));
    EXPECT_THAT(out, HasSubstr("sched_migrate_task:   comm=a pid=10 prio=120 orig_cpu=0 "
                               "dest_cpu=1"));
    EXPECT_THAT(out, HasSubstr("1.500"));          // after the 0.5 s gap
    EXPECT_THAT(out, HasSubstr("a task named b")); // a comm with spaces, 15 characters kept
}

} // namespace
} // namespace schedlab
