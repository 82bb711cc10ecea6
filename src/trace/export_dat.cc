// SPDX-License-Identifier: GPL-2.0-only
/*
 * --trace FILE.dat: the exporter's records as a trace-cmd data file, version 6, as
 * trace-cmd.dat.v6(5) (Debian's trace-cmd package) describes it: the initial format,
 * the ring buffer's header_page and header_event descriptions, one format file per
 * event, the pid->comm map (saved_cmdlines), then "flyrecord" and per CPU its data
 * as ring-buffer pages. libtracecmd's public API only reads such files (its writer
 * is private to trace-cmd), so the container is written here; `trace-cmd report` and
 * libtracecmd (trace/ftrace_parse.h's .dat input) read it back in the tests.
 *
 * The events' layouts are schedlab's own: the fields and names of the kernel's
 * tracepoints (include/trace/events/sched.h, power.h), which trace-cmd's sched
 * plugin and libtraceevent read by name, with simple print formats. A page holds
 * events as the kernel's ring buffer lays them out (kernel/trace/ring_buffer.c, read
 * by libtraceevent's kbuffer): a 32-bit header of type_len (5 bits: the payload's
 * length in 4-byte words) and time_delta (27 bits, from the previous event), and a
 * TIME_EXTEND (type 30) event before a delta that does not fit.
 */
#include "trace/export_ftrace.h"

#include <fmt/format.h>

#include <cstring>

namespace schedlab {

namespace {

constexpr u32 page_size = 4096;
constexpr u32 page_header = 16; // u64 timestamp, u64 commit (64-bit long)
constexpr u32 page_data = page_size - page_header;
constexpr u32 time_extend_type = 30;      // RINGBUF_TYPE_TIME_EXTEND
constexpr u64 max_delta = (1u << 27) - 1; // time_delta's 27 bits

// Event ids of this file (each format file gives its own; any distinct values do).
enum : u16 {
    id_switch = 1001,
    id_waking,
    id_wakeup,
    id_wakeup_new,
    id_migrate,
    id_fork,
    id_exit,
    id_cpu_idle,
};

constexpr const char* header_page_text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                         "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                         "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                         "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

constexpr const char* header_event_text = "# compressed entry header\n"
                                          "\ttype_len    :    5 bits\n"
                                          "\ttime_delta  :   27 bits\n"
                                          "\tarray       :   32 bits\n"
                                          "\n"
                                          "\tpadding     : type == 29\n"
                                          "\ttime_extend : type == 30\n"
                                          "\ttime_stamp : type == 31\n"
                                          "\tdata max type_len  == 28\n";

constexpr const char* common_fields =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

struct event_format {
    const char* system;
    const char* name;
    u16 id;
    const char* fields; // after the common fields, offsets from the record's start
    const char* print;  // "print fmt: ..."
};

// sched_waking, sched_wakeup and sched_wakeup_new share their fields (the sched_wakeup_template
// class of the tracepoints).
constexpr const char* wakeup_fields = "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
                                      "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
                                      "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
                                      "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n";
constexpr const char* wakeup_print =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";

// prev_state's values as the tracepoint defines them: 0 running, TASK_INTERRUPTIBLE 0x1,
// TASK_UNINTERRUPTIBLE 0x2, EXIT_DEAD 0x10, and TASK_REPORT_MAX 0x100 for a preemption.
const event_format formats[] = {
    {"sched", "sched_switch", id_switch,
     "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
     "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
     "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
     "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
     "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
     "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
     "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
     "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d "
     "next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
     "__print_symbolic(REC->prev_state, { 0, \"R\" }, { 1, \"S\" }, { 2, \"D\" }, "
     "{ 16, \"X\" }, { 256, \"R+\" }), REC->next_comm, REC->next_pid, REC->next_prio"},
    {"sched", "sched_waking", id_waking, wakeup_fields, wakeup_print},
    {"sched", "sched_wakeup", id_wakeup, wakeup_fields, wakeup_print},
    {"sched", "sched_wakeup_new", id_wakeup_new, wakeup_fields, wakeup_print},
    {"sched", "sched_migrate_task", id_migrate,
     "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
     "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
     "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
     "\tfield:int orig_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
     "\tfield:int dest_cpu;\toffset:36;\tsize:4;\tsigned:1;\n",
     "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, "
     "REC->orig_cpu, REC->dest_cpu"},
    {"sched", "sched_process_fork", id_fork,
     "\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
     "\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
     "\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:0;\n"
     "\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;\n",
     "\"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, REC->parent_pid, "
     "REC->child_comm, REC->child_pid"},
    {"sched", "sched_process_exit", id_exit,
     "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
     "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
     "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n",
     "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio"},
    {"power", "cpu_idle", id_cpu_idle,
     "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n"
     "\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
     "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id"},
};

std::string format_file(const event_format& f)
{
    return fmt::format("name: {}\nID: {}\nformat:\n{}{}\nprint fmt: {}\n", f.name, f.id,
                       common_fields, f.fields, f.print);
}

/// Little-endian integers into a byte string.
template <class T> void put(std::string& s, T v)
{
    for (std::size_t i = 0; i < sizeof(T); ++i)
        s.push_back(static_cast<char>((static_cast<u64>(v) >> (8 * i)) & 0xff));
}
template <class T> void put_at(std::string& s, std::size_t at, T v)
{
    for (std::size_t i = 0; i < sizeof(T); ++i)
        s[at + i] = static_cast<char>((static_cast<u64>(v) >> (8 * i)) & 0xff);
}

void put_comm(std::string& s, const std::string& c)
{
    char buf[16] = {};
    std::memcpy(buf, c.data(), std::min<std::size_t>(c.size(), 15));
    s.append(buf, 16);
}

/// One CPU's ring-buffer pages.
class cpu_pages {
public:
    void add(sim_time ts, const std::string& payload)
    {
        const u32 len = static_cast<u32>((payload.size() + 3) & ~std::size_t{3});
        const u64 t = static_cast<u64>(ts);
        u64 delta = page_.empty() ? 0 : t - last_;
        const u32 need = 4 + len + (delta > max_delta ? 8 : 0);
        if (page_.empty() || used_ + need > page_data) {
            start_page(t);
            delta = 0;
        }
        if (delta > max_delta) { // TIME_EXTEND: the delta's low 27 bits, then the rest
            put<u32>(page_, time_extend_type | static_cast<u32>((delta & max_delta) << 5));
            put<u32>(page_, static_cast<u32>(delta >> 27));
            used_ += 8;
            delta = 0;
        }
        put<u32>(page_, (len / 4) | static_cast<u32>(delta << 5));
        page_ += payload;
        page_.append(len - payload.size(), '\0');
        used_ += 4 + len;
        last_ = t;
    }
    /// The pages, the last one closed.
    std::string finish()
    {
        close_page();
        return std::move(data_);
    }

private:
    void start_page(u64 t)
    {
        close_page();
        page_.clear();
        put<u64>(page_, t);
        put<u64>(page_, 0); // commit, set when the page is closed
        used_ = 0;
        last_ = t;
    }
    void close_page()
    {
        if (page_.empty())
            return;
        put_at<u64>(page_, 8, used_);
        page_.resize(page_size, '\0');
        data_ += page_;
        page_.clear();
    }

    std::string data_, page_;
    u32 used_ = 0;
    u64 last_ = 0;
};

} // namespace

std::pair<u8, u8> ftrace_exporter::common_flags(const record& r)
{
    if (r.k == kind::fork || r.k == kind::exit)
        return {0, 0}; // "....."
    if (hardirq(r))
        return {0x01 | 0x08, r.k == kind::waking ? 3 : 4}; // "d.h3." / "d.h4."
    return {0x01, r.k == kind::cpu_idle ? 1 : 2};           // "d..1." / "d..2."
}

void ftrace_exporter::write_dat(output_file& f, int nr_cpus) const
{
    int cpus = nr_cpus;
    for (const record& r : records_)
        cpus = std::max(cpus, r.cpu + 1);
    cpus = std::max(cpus, 1);

    // The events, per CPU, in the same fields and constants as the text (format_line).
    std::vector<cpu_pages> pages(static_cast<std::size_t>(cpus));
    std::string p;
    for (const record& r : records_) {
        p.clear();
        const u16 id = r.k == kind::sched_switch ? id_switch
                       : r.k == kind::waking     ? id_waking
                       : r.k == kind::wakeup     ? id_wakeup
                       : r.k == kind::wakeup_new ? id_wakeup_new
                       : r.k == kind::migrate    ? id_migrate
                       : r.k == kind::fork       ? id_fork
                       : r.k == kind::exit       ? id_exit
                                                 : id_cpu_idle;
        put<u16>(p, id);
        const auto [flags, preempt_count] = common_flags(r);
        put<u8>(p, flags);
        put<u8>(p, preempt_count);
        put<s32>(p, r.curr_pid);
        switch (r.k) {
        case kind::sched_switch: {
            s64 state = 0;
            if (r.pid != 0) {
                if (r.prev_state & 0x80)
                    state = 0x100;
                else
                    switch (static_cast<trace_task_state>(r.prev_state)) {
                    case trace_task_state::R:
                        state = 0;
                        break;
                    case trace_task_state::S:
                        state = 0x1;
                        break;
                    case trace_task_state::D:
                        state = 0x2;
                        break;
                    case trace_task_state::X:
                        state = 0x10;
                        break;
                    }
            }
            put_comm(p, comms_[r.comm]);
            put<s32>(p, r.pid);
            put<s32>(p, r.prio);
            put<s64>(p, state);
            put_comm(p, comms_[r.comm2]);
            put<s32>(p, r.pid2);
            put<s32>(p, r.prio2);
            break;
        }
        case kind::waking:
        case kind::wakeup:
        case kind::wakeup_new:
            put_comm(p, comms_[r.comm]);
            put<s32>(p, r.pid);
            put<s32>(p, r.prio);
            put<s32>(p, r.pid2);
            break;
        case kind::migrate:
            put_comm(p, comms_[r.comm]);
            put<s32>(p, r.pid);
            put<s32>(p, r.prio);
            put<s32>(p, r.pid2);
            put<s32>(p, r.dest_cpu);
            break;
        case kind::fork:
            put_comm(p, comms_[r.comm]);
            put<s32>(p, r.pid);
            put_comm(p, comms_[r.comm2]);
            put<s32>(p, r.pid2);
            break;
        case kind::exit:
            put_comm(p, comms_[r.comm]);
            put<s32>(p, r.pid);
            put<s32>(p, r.prio);
            break;
        case kind::cpu_idle:
            put<u32>(p, static_cast<u32>(r.pid2));
            put<u32>(p, static_cast<u32>(r.cpu));
            break;
        }
        pages[static_cast<std::size_t>(r.cpu)].add(r.ts, p);
    }

    // The header, in trace-cmd.dat.v6(5)'s order.
    std::string h;
    h += "\x17\x08\x44tracing";
    h += std::string("6\0", 2);
    put<u8>(h, 0); // little endian
    put<u8>(h, 8); // sizeof(long)
    put<u32>(h, page_size);
    h += std::string("header_page\0", 12);
    put<u64>(h, std::strlen(header_page_text));
    h += header_page_text;
    h += std::string("header_event\0", 13);
    put<u64>(h, std::strlen(header_event_text));
    h += header_event_text;
    put<u32>(h, 0); // no ftrace (function tracer) event formats
    put<u32>(h, 2); // systems: sched, power
    for (const char* sys : {"sched", "power"}) {
        h += sys;
        h.push_back('\0');
        u32 n = 0;
        for (const event_format& ef : formats)
            n += std::strcmp(ef.system, sys) == 0;
        put<u32>(h, n);
        for (const event_format& ef : formats)
            if (std::strcmp(ef.system, sys) == 0) {
                const std::string text = format_file(ef);
                put<u64>(h, text.size());
                h += text;
            }
    }
    put<u32>(h, 0); // kallsyms: none
    put<u32>(h, 0); // trace_printk formats: none
    std::string cmdlines;
    for (std::size_t pid = 1; pid < pid_comm_.size(); ++pid)
        if (pid_comm_[pid])
            cmdlines += fmt::format("{} {}\n", pid, comms_[pid_comm_[pid] - 1]);
    put<u64>(h, cmdlines.size());
    h += cmdlines;
    put<u32>(h, static_cast<u32>(cpus));
    h += std::string("flyrecord\0", 10);
    // Per CPU (offset, size); the data starts at the next page boundary.
    std::vector<std::string> data;
    data.reserve(pages.size());
    for (cpu_pages& c : pages)
        data.push_back(c.finish());
    const std::size_t table = h.size();
    h.append(16 * data.size(), '\0');
    u64 offset = (h.size() + page_size - 1) / page_size * page_size;
    for (std::size_t c = 0; c < data.size(); ++c) {
        put_at<u64>(h, table + 16 * c, offset);
        put_at<u64>(h, table + 16 * c + 8, data[c].size());
        offset += data[c].size();
    }
    h.resize((h.size() + page_size - 1) / page_size * page_size, '\0');
    f.write(h);
    for (const std::string& d : data)
        f.write(d);
}

} // namespace schedlab
