// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trace in the JSON trace-event format (Chromium catapult's "Trace Event Format"
 * document: an object whose "traceEvents" array holds events with "ph", "ts" in
 * microseconds, "pid", "tid", "name"), which Perfetto's UI and chrome://tracing open.
 * One process, "CPUs", with a thread per CPU: each task's run on a CPU is a complete event
 * ("ph":"X", switch in to switch out, named by its comm, its pid and the prev_state it left
 * in), each sched_waking an instant event ("ph":"i") on the CPU it fired on.
 */
#include "trace/export_ftrace.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace schedlab {

namespace {

/// ns as the format's microseconds, exactly: "1234.567".
std::string json_us(sim_time ns)
{
    return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

} // namespace

void ftrace_exporter::write_json(output_file& f, int nr_cpus) const
{
    // Comms as JSON strings, escaped once (bytes that are not UTF-8 become U+FFFD).
    std::vector<std::string> comm(comms_.size());
    for (std::size_t i = 0; i < comms_.size(); ++i)
        comm[i] = nlohmann::json(comms_[i]).dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace);
    std::string buf = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
    buf += R"({"ph":"M","pid":0,"tid":0,"name":"process_name","args":{"name":"CPUs"}})";
    int cpus = nr_cpus;
    for (const record& r : records_)
        cpus = std::max(cpus, r.cpu + 1);
    for (int c = 0; c < cpus; ++c)
        buf += fmt::format(",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":\"thread_name\","
                           "\"args\":{{\"name\":\"CPU {0}\"}}}}"
                           ",\n{{\"ph\":\"M\",\"pid\":0,\"tid\":{0},\"name\":\"thread_sort_index\","
                           "\"args\":{{\"sort_index\":{0}}}}}",
                           c);
    struct running {
        int pid = 0;
        u32 comm = 0;
        sim_time since = -1;
    };
    std::vector<running> on(static_cast<std::size_t>(cpus));
    sim_time last = 0;
    const auto slice = [&](int cpu, const running& r, sim_time until, const char* state) {
        buf += fmt::format(",\n{{\"ph\":\"X\",\"pid\":0,\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},"
                           "\"args\":{{\"pid\":{},\"prev_state\":\"{}\"}}}}",
                           cpu, json_us(r.since), json_us(until - r.since), comm[r.comm], r.pid,
                           state);
    };
    for (const record& r : records_) {
        last = std::max(last, r.ts);
        if (r.k == kind::sched_switch) {
            running& cur = on[static_cast<std::size_t>(r.cpu)];
            if (cur.since >= 0 && cur.pid != 0)
                slice(r.cpu, cur, r.ts, state_string(r.prev_state));
            cur = {r.pid2, r.comm2, r.ts};
        } else if (r.k == kind::waking) {
            buf += fmt::format(",\n{{\"ph\":\"i\",\"s\":\"t\",\"pid\":0,\"tid\":{},\"ts\":{},"
                               "\"name\":\"sched_waking\",\"args\":{{\"comm\":{},\"pid\":{},"
                               "\"prio\":{},\"target_cpu\":{}}}}}",
                               r.cpu, json_us(r.ts), comm[r.comm], r.pid, r.prio, r.pid2);
        }
        if (buf.size() > (1u << 20)) {
            f.write(buf);
            buf.clear();
        }
    }
    for (int c = 0; c < cpus; ++c) { // still running when the trace ends
        const running& cur = on[static_cast<std::size_t>(c)];
        if (cur.since >= 0 && cur.pid != 0)
            slice(c, cur, last, "R");
    }
    buf += "\n]}\n";
    f.write(buf);
}

} // namespace schedlab
