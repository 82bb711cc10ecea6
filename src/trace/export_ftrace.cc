// SPDX-License-Identifier: GPL-2.0-only
#include "trace/export_ftrace.h"

#include "sim/config_error.h"

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <functional>
#include <memory>

namespace schedlab {

const char* ftrace_exporter::state_string(u8 code)
{
    if (code & 0x80)
        return "R+";
    switch (static_cast<trace_task_state>(code)) {
    case trace_task_state::R: return "R";
    case trace_task_state::S: return "S";
    case trace_task_state::D: return "D";
    case trace_task_state::X: return "X";
    }
    return "R";
}

namespace {

constexpr const char* header_fmt =
    "# tracer: nop\n"
    "#\n"
    "# entries-in-buffer/entries-written: {0}/{0}   #P:{1}\n"
    "#\n"
    "#                                _-----=> irqs-off/BH-disabled\n"
    "#                               / _----=> need-resched\n"
    "#                              | / _---=> hardirq/softirq\n"
    "#                              || / _--=> preempt-depth\n"
    "#                              ||| / _-=> migrate-disable\n"
    "#                              |||| /     delay\n"
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
    "#              | |         |   |||||     |         |\n";

} // namespace

u32 ftrace_exporter::intern(const std::string& comm)
{
    // TASK_COMM_LEN is 16 including the NUL: the kernel keeps 15 characters.
    const std::string c = comm.substr(0, 15);
    const auto it = comm_index_.find(c);
    if (it != comm_index_.end())
        return it->second;
    const u32 idx = static_cast<u32>(comms_.size());
    comms_.push_back(c);
    comm_index_.emplace(c, idx);
    return idx;
}

void ftrace_exporter::note_comm(int pid, u32 comm)
{
    const auto p = static_cast<std::size_t>(pid);
    if (p >= pid_comm_.size())
        pid_comm_.resize(p + 1, 0);
    pid_comm_[p] = comm + 1;
}

u32 ftrace_exporter::comm_of(int pid, u32 fallback) const
{
    const auto p = static_cast<std::size_t>(pid);
    return p < pid_comm_.size() && pid_comm_[p] ? pid_comm_[p] - 1 : fallback;
}

void ftrace_exporter::ensure_cpu(int cpu)
{
    while (static_cast<int>(curr_pid_.size()) <= cpu) {
        const int c = static_cast<int>(curr_pid_.size());
        curr_pid_.push_back(0);
        curr_comm_.push_back(intern(fmt::format("swapper/{}", c)));
    }
}

void ftrace_exporter::push(record r)
{
    ensure_cpu(r.cpu);
    r.curr_pid = curr_pid_[static_cast<std::size_t>(r.cpu)];
    r.curr_comm = curr_comm_[static_cast<std::size_t>(r.cpu)];
    last_cpu_ = r.cpu;
    records_.push_back(r);
}

void ftrace_exporter::sched_switch(const trace_sched_switch& e)
{
    const u32 prev = intern(*e.prev_comm), next = intern(*e.next_comm);
    u8 state = static_cast<u8>(e.prev_state);
    if (e.prev_preempted)
        state |= 0x80;
    push({e.ts, kind::sched_switch, state, e.cpu, 0, 0, e.prev_pid, prev, e.next_pid, next, 0,
          static_cast<s16>(e.prev_prio), static_cast<s16>(e.next_prio)});
    curr_pid_[static_cast<std::size_t>(e.cpu)] = e.next_pid;
    curr_comm_[static_cast<std::size_t>(e.cpu)] = next;
    note_comm(e.prev_pid, prev);
    note_comm(e.next_pid, next);
}

void ftrace_exporter::sched_waking(const trace_sched_wakeup& e)
{
    const u32 c = intern(*e.comm);
    note_comm(e.pid, c);
    push({e.ts, kind::waking, static_cast<u8>(e.ctx), e.cpu, 0, 0, e.pid, c, e.target_cpu, 0, 0,
          static_cast<s16>(e.prio), 0});
}

void ftrace_exporter::sched_wakeup(const trace_sched_wakeup& e)
{
    const u32 c = intern(*e.comm);
    note_comm(e.pid, c);
    push({e.ts, kind::wakeup, static_cast<u8>(e.ctx), e.cpu, 0, 0, e.pid, c, e.target_cpu, 0, 0,
          static_cast<s16>(e.prio), 0});
}

void ftrace_exporter::sched_wakeup_new(const trace_sched_wakeup& e)
{
    const u32 c = intern(*e.comm);
    note_comm(e.pid, c);
    push({e.ts, kind::wakeup_new, 0, e.cpu, 0, 0, e.pid, c, e.target_cpu, 0, 0,
          static_cast<s16>(e.prio), 0});
}

void ftrace_exporter::sched_migrate_task(const trace_sched_migrate_task& e)
{
    const u32 c = intern(*e.comm);
    note_comm(e.pid, c);
    push({e.ts, kind::migrate, 0, last_cpu_, 0, 0, e.pid, c, e.orig_cpu, 0, e.dest_cpu,
          static_cast<s16>(e.prio), 0});
}

void ftrace_exporter::sched_process_fork(const trace_sched_process& e)
{
    ensure_cpu(e.cpu);
    const u32 child = intern(*e.comm);
    // The parent's comm: the current task's when it is the parent (always, for a
    // fork() call; the idle task for a task spawned at boot), else the last seen.
    const std::size_t cpu = static_cast<std::size_t>(e.cpu);
    const u32 parent = curr_pid_[cpu] == e.parent_pid ? curr_comm_[cpu] : comm_of(e.parent_pid, child);
    note_comm(e.pid, child);
    push({e.ts, kind::fork, 0, e.cpu, 0, 0, e.parent_pid, parent, e.pid, child, 0, 0, 0});
}

void ftrace_exporter::sched_process_exit(const trace_sched_process& e)
{
    const u32 c = intern(*e.comm);
    push({e.ts, kind::exit, 0, e.cpu, 0, 0, e.pid, c, 0, 0, 0, static_cast<s16>(e.prio), 0});
}

void ftrace_exporter::cpu_idle(const trace_cpu_idle& e)
{
    const int waker_cpu = last_cpu_; // sched_migrate_task follows the scheduler's events only
    push({e.ts, kind::cpu_idle, 0, e.cpu_id, 0, 0, 0, 0, static_cast<int>(e.state), 0, 0, 0, 0});
    last_cpu_ = waker_cpu;
}

bool ftrace_exporter::hardirq(const record& r)
{
    return (r.k == kind::waking || r.k == kind::wakeup) &&
           r.prev_state == static_cast<u8>(trace_irq_ctx::hardirq);
}

void ftrace_exporter::format_line(std::string& buf, const record& r) const
{
    auto out = std::back_inserter(buf);
    const char* flags = (r.k == kind::fork || r.k == kind::exit) ? "....."
                        : r.k == kind::cpu_idle                   ? "d..1."
                        : !hardirq(r)                             ? "d..2."
                        : r.k == kind::waking                     ? "d.h3."
                                                                  : "d.h4.";
    const std::string& task = r.curr_pid == 0 ? std::string("<idle>") : comms_[r.curr_comm];
    const u64 ts = static_cast<u64>(r.ts);
    fmt::format_to(out, "{:>16}-{:<7} [{:03}] {} {:>5}.{:06}: ", task, r.curr_pid, r.cpu, flags,
                   ts / 1'000'000'000, ts % 1'000'000'000 / 1000);
    switch (r.k) {
    case kind::sched_switch:
        fmt::format_to(out,
                       "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={} ==> "
                       "next_comm={} next_pid={} next_prio={}\n",
                       comms_[r.comm], r.pid, r.prio,
                       r.pid == 0 ? "R" : state_string(r.prev_state), comms_[r.comm2], r.pid2,
                       r.prio2);
        break;
    case kind::waking:
    case kind::wakeup:
    case kind::wakeup_new:
        fmt::format_to(out, "{}: comm={} pid={} prio={} target_cpu={:03}\n",
                       r.k == kind::waking   ? "sched_waking"
                       : r.k == kind::wakeup ? "sched_wakeup"
                                             : "sched_wakeup_new",
                       comms_[r.comm], r.pid, r.prio, r.pid2);
        break;
    case kind::migrate:
        fmt::format_to(out, "sched_migrate_task: comm={} pid={} prio={} orig_cpu={} dest_cpu={}\n",
                       comms_[r.comm], r.pid, r.prio, r.pid2, r.dest_cpu);
        break;
    case kind::fork:
        fmt::format_to(out, "sched_process_fork: comm={} pid={} child_comm={} child_pid={}\n",
                       comms_[r.comm], r.pid, comms_[r.comm2], r.pid2);
        break;
    case kind::exit:
        fmt::format_to(out, "sched_process_exit: comm={} pid={} prio={}\n", comms_[r.comm], r.pid,
                       r.prio);
        break;
    case kind::cpu_idle: // TP_printk("state=%lu cpu_id=%lu"): PWR_EVENT_EXIT is 4294967295
        fmt::format_to(out, "cpu_idle: state={} cpu_id={}\n", static_cast<u32>(r.pid2), r.cpu);
        break;
    }
}

namespace {

/// Where the text goes: a byte sink, optionally through a zstd or gzip compressor.
class trace_output {
public:
    using sink = std::function<void(const char*, std::size_t)>;

    trace_output(sink out, trace_compression c) : out_(std::move(out)), c_(c)
    {
        if (c_ == trace_compression::zstd) {
            cctx_ = ZSTD_createCCtx();
            if (!cctx_)
                throw config_error("--trace", "zstd: cannot create a compression context");
            ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
            zbuf_.resize(ZSTD_CStreamOutSize());
        } else if (c_ == trace_compression::gzip) {
            // windowBits 15 + 16: a gzip header and trailer, as gzip(1) writes.
            if (deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                             Z_DEFAULT_STRATEGY) != Z_OK)
                throw config_error("--trace", "zlib: cannot start a gzip stream");
            z_open_ = true;
            zbuf_.resize(1 << 16);
        }
    }
    ~trace_output()
    {
        ZSTD_freeCCtx(cctx_);
        if (z_open_)
            deflateEnd(&z_);
    }
    trace_output(const trace_output&) = delete;
    trace_output& operator=(const trace_output&) = delete;

    void put(const std::string& s)
    {
        switch (c_) {
        case trace_compression::none:
            out_(s.data(), s.size());
            break;
        case trace_compression::zstd:
            feed_zstd(s, ZSTD_e_continue);
            break;
        case trace_compression::gzip:
            feed_gzip(s, Z_NO_FLUSH);
            break;
        }
    }
    void finish()
    {
        if (c_ == trace_compression::zstd)
            feed_zstd("", ZSTD_e_end);
        else if (c_ == trace_compression::gzip)
            feed_gzip("", Z_FINISH);
    }

private:
    void feed_zstd(const std::string& s, ZSTD_EndDirective mode)
    {
        ZSTD_inBuffer in{s.data(), s.size(), 0};
        while (true) {
            ZSTD_outBuffer o{zbuf_.data(), zbuf_.size(), 0};
            const std::size_t left = ZSTD_compressStream2(cctx_, &o, &in, mode);
            if (ZSTD_isError(left))
                throw config_error("--trace", std::string("zstd: ") + ZSTD_getErrorName(left));
            out_(zbuf_.data(), o.pos);
            if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
                break;
        }
    }

    void feed_gzip(const std::string& s, int flush)
    {
        // zlib counts in uInt: feed at most 1 GiB at a time.
        std::size_t done = 0;
        do {
            const std::size_t n = std::min<std::size_t>(s.size() - done, 1u << 30);
            z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data() + done));
            z_.avail_in = static_cast<uInt>(n);
            done += n;
            const int f = done == s.size() ? flush : Z_NO_FLUSH;
            int rc;
            do {
                z_.next_out = reinterpret_cast<Bytef*>(zbuf_.data());
                z_.avail_out = static_cast<uInt>(zbuf_.size());
                rc = deflate(&z_, f);
                if (rc == Z_STREAM_ERROR)
                    throw config_error("--trace", "zlib: deflate failed");
                out_(zbuf_.data(), zbuf_.size() - z_.avail_out);
            } while (z_.avail_out == 0 || (f == Z_FINISH && rc != Z_STREAM_END));
        } while (done < s.size());
    }

    sink out_;
    trace_compression c_;
    ZSTD_CCtx* cctx_ = nullptr;
    z_stream z_{};
    bool z_open_ = false;
    std::vector<char> zbuf_;
};

void write_records(trace_output& out, const std::string& header, std::size_t n,
                   const std::function<void(std::string&, std::size_t)>& line)
{
    std::string buf = header;
    for (std::size_t i = 0; i < n; ++i) {
        line(buf, i);
        if (buf.size() > (1 << 20)) {
            out.put(buf);
            buf.clear();
        }
    }
    out.put(buf);
    out.finish();
}

} // namespace

trace_compression trace_compression_for(const std::string& path)
{
    if (path.ends_with(".zst"))
        return trace_compression::zstd;
    if (path.ends_with(".gz"))
        return trace_compression::gzip;
    static const char* const others[] = {".xz",  ".bz2", ".lz4", ".lzma", ".lz", ".br", ".Z",
                                         ".zip", ".7z",  ".tgz", ".zstd", ".zz", ".sz"};
    for (const char* ext : others)
        if (path.ends_with(ext))
            throw config_error("--trace", fmt::format("'{}': {} compression is not supported; "
                                                      "name the file .zst (zstd), .gz (gzip) or "
                                                      "anything else for plain text",
                                                      path, ext));
    return trace_compression::none;
}

void ftrace_exporter::write(std::ostream& os, int nr_cpus) const
{
    trace_output out(
        [&](const char* p, std::size_t n) { os.write(p, static_cast<std::streamsize>(n)); },
        trace_compression::none);
    write_records(out, fmt::format(header_fmt, records_.size(), nr_cpus), records_.size(),
                  [&](std::string& buf, std::size_t i) { format_line(buf, records_[i]); });
}

void ftrace_exporter::write(output_file& f, int nr_cpus) const
{
    if (f.path().ends_with(".dat"))
        return write_dat(f, nr_cpus);
    if (f.path().ends_with(".json"))
        return write_json(f, nr_cpus);
    trace_output out(
        [&](const char* p, std::size_t n) {
            f.write({p, n});
        },
        trace_compression_for(f.path()));
    write_records(out, fmt::format(header_fmt, records_.size(), nr_cpus), records_.size(),
                  [&](std::string& buf, std::size_t i) { format_line(buf, records_[i]); });
}

void ftrace_exporter::write_file(const std::string& path, int nr_cpus) const
{
    trace_compression_for(path); // an unsupported compression before the file is touched
    output_file f(path, "--trace");
    write(f, nr_cpus);
    f.commit();
}

} // namespace schedlab
