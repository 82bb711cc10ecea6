// SPDX-License-Identifier: GPL-2.0-only
#include "trace/ftrace_parse.h"

#include "sim/config_error.h"
#include "sim/sha256.h"

#include <fmt/format.h>
#include <lzma.h>
#include <traceevent/event-parse.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string.h> // sigabbrev_np (GNU)
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The libtracecmd calls used, declared as trace-cmd/trace-cmd.h (3.1) declares them: that
 * header includes tracefs.h, whose inline tracefs_hist_start() passes an int as an enum and
 * does not compile as C++.
 */
extern "C" {
struct tracecmd_input;
struct tracecmd_input* tracecmd_open_head(const char* file, int flags);
int tracecmd_init_data(struct tracecmd_input* handle);
void tracecmd_close(struct tracecmd_input* handle);
struct tep_record* tracecmd_read_data(struct tracecmd_input* handle, int cpu);
void tracecmd_free_record(struct tep_record* record);
struct tep_handle* tracecmd_get_tep(struct tracecmd_input* handle);
}

namespace schedlab {

namespace {
constexpr int TRACECMD_FL_LOAD_NO_PLUGINS = 1 << 0; // enum tracecmd_open_flags
} // namespace

/* ------------------------------------------------------------------------ */
/* Input: plain, xz, zstd or gzip, read in chunks                            */

/// A byte stream of a file, decompressed as its magic bytes say.
class ftrace_input {
public:
    virtual ~ftrace_input() = default;
    /// Up to `n` bytes into `buf`; 0 at the end. config_error(path) on a read or stream error.
    virtual std::size_t read(char* buf, std::size_t n) = 0;
    /// Bytes of the file read so far (compressed bytes for a compressed file).
    virtual u64 consumed() const = 0;
};

namespace {

constexpr std::size_t chunk_bytes = 1 << 20;
/// The kernel's limits (include/linux/threads.h PID_MAX_LIMIT on 64-bit; Kconfig NR_CPUS with
/// MAXSMP): larger numbers are not a real trace's, and would size per-pid and per-CPU tables.
constexpr int pid_max_limit = 4 * 1024 * 1024;
constexpr int nr_cpus_limit = 8192;
/// A timestamp past this many seconds (285 years of uptime) is not a trace's; nanoseconds of
/// it fit in an s64.
constexpr s64 max_trace_seconds = 9'000'000'000;
/// A line longer than this is not ftrace text (the longest scheduler event is ~200 bytes).
constexpr std::size_t max_line_bytes = 1 << 16;

class file_handle {
public:
    explicit file_handle(const std::string& path) : path_(path)
    {
        f_ = std::fopen(path.c_str(), "rb");
        if (!f_)
            throw config_error(path,
                               fmt::format("cannot open the trace: {}", std::strerror(errno)));
    }
    ~file_handle() { std::fclose(f_); }
    file_handle(const file_handle&) = delete;
    file_handle& operator=(const file_handle&) = delete;
    std::size_t read(void* buf, std::size_t n)
    {
        const std::size_t got = std::fread(buf, 1, n, f_);
        if (got < n && std::ferror(f_))
            throw config_error(path_, "read error: the trace cannot be read (a directory?)");
        consumed_ += got;
        return got;
    }
    u64 consumed() const { return consumed_; }

private:
    std::string path_;
    std::FILE* f_ = nullptr;
    u64 consumed_ = 0;
};

class xz_input final : public ftrace_input {
public:
    explicit xz_input(const std::string& path) : path_(path), f_(path), in_(chunk_bytes)
    {
        if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
            throw config_error(path, "liblzma: cannot start an xz decoder");
    }
    ~xz_input() override { lzma_end(&s_); }
    std::size_t read(char* buf, std::size_t n) override
    {
        if (done_)
            return 0;
        s_.next_out = reinterpret_cast<u8*>(buf);
        s_.avail_out = n;
        while (s_.avail_out == n) {
            lzma_action action = LZMA_RUN;
            if (s_.avail_in == 0 && !eof_) {
                s_.avail_in = f_.read(in_.data(), in_.size());
                s_.next_in = reinterpret_cast<const u8*>(in_.data());
                eof_ = s_.avail_in == 0;
            }
            if (eof_)
                action = LZMA_FINISH;
            const lzma_ret r = lzma_code(&s_, action);
            if (r == LZMA_STREAM_END) {
                done_ = true;
                break;
            }
            if (r == LZMA_BUF_ERROR && eof_)
                throw config_error(path_, "the xz stream is truncated");
            if (r != LZMA_OK)
                throw config_error(path_, fmt::format("not a valid xz stream (liblzma error {})",
                                                      static_cast<int>(r)));
        }
        return n - s_.avail_out;
    }

    u64 consumed() const override { return f_.consumed(); }

private:
    std::string path_;
    file_handle f_;
    std::vector<char> in_;
    lzma_stream s_ = LZMA_STREAM_INIT;
    bool eof_ = false, done_ = false;
};

class zstd_input final : public ftrace_input {
public:
    explicit zstd_input(const std::string& path) : path_(path), f_(path), in_(ZSTD_DStreamInSize())
    {
        d_ = ZSTD_createDCtx();
    }
    ~zstd_input() override { ZSTD_freeDCtx(d_); }
    std::size_t read(char* buf, std::size_t n) override
    {
        ZSTD_outBuffer out{buf, n, 0};
        while (out.pos == 0) {
            if (ib_.pos == ib_.size) {
                ib_.size = f_.read(in_.data(), in_.size());
                ib_.src = in_.data();
                ib_.pos = 0;
                if (ib_.size == 0) {
                    if (last_ != 0)
                        throw config_error(path_, "the zstd stream is truncated");
                    return 0;
                }
            }
            last_ = ZSTD_decompressStream(d_, &out, &ib_);
            if (ZSTD_isError(last_))
                throw config_error(
                    path_, fmt::format("not a valid zstd stream ({})", ZSTD_getErrorName(last_)));
        }
        return out.pos;
    }

    u64 consumed() const override { return f_.consumed(); }

private:
    std::string path_;
    file_handle f_;
    std::vector<char> in_;
    ZSTD_inBuffer ib_{nullptr, 0, 0};
    ZSTD_DCtx* d_ = nullptr;
    std::size_t last_ = 0;
};

/// Plain text, or gzip (zlib's gzread passes uncompressed files through).
class gz_input final : public ftrace_input {
public:
    explicit gz_input(const std::string& path) : path_(path)
    {
        g_ = gzopen(path.c_str(), "rb");
        if (!g_)
            throw config_error(path,
                               fmt::format("cannot open the trace: {}", std::strerror(errno)));
        gzbuffer(g_, 1 << 17);
    }
    ~gz_input() override { gzclose(g_); }
    std::size_t read(char* buf, std::size_t n) override
    {
        const int got = gzread(g_, buf, static_cast<unsigned>(n));
        if (got < 0) {
            int err = 0;
            const char* msg = gzerror(g_, &err);
            throw config_error(path_, fmt::format("read error: {}", msg ? msg : "unknown"));
        }
        if (got == 0 && !gzeof(g_))
            throw config_error(path_, "read error: the trace cannot be read (a directory?)");
        if (got == 0 && gzdirect(g_) == 0) {
            int err = 0;
            gzerror(g_, &err);
            if (err == Z_BUF_ERROR)
                throw config_error(path_, "the gzip stream is truncated");
        }
        return static_cast<std::size_t>(got);
    }
    u64 consumed() const override
    {
        const z_off_t at = gzoffset(g_); // the compressed offset (the file's, read directly)
        return at < 0 ? 0 : static_cast<u64>(at);
    }

private:
    std::string path_;
    gzFile g_ = nullptr;
};

std::unique_ptr<ftrace_input> open_input(const std::string& path)
{
    unsigned char magic[6] = {};
    std::size_t got = 0;
    {
        file_handle f(path);
        got = f.read(magic, sizeof magic);
    }
    static const unsigned char xz_magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
    static const unsigned char zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};
    if (got == 6 && std::memcmp(magic, xz_magic, 6) == 0)
        return std::make_unique<xz_input>(path);
    if (got >= 4 && std::memcmp(magic, zstd_magic, 4) == 0)
        return std::make_unique<zstd_input>(path);
    return std::make_unique<gz_input>(path);
}

/* ------------------------------------------------------------------------ */
/* Field helpers                                                             */

bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

bool to_int(std::string_view s, int& v)
{
    if (s.empty())
        return false;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
}

/// Where "key=" starts a field in `fields` (at the start or after a space), or npos.
std::size_t find_key(std::string_view fields, std::string_view key, std::size_t from = 0)
{
    for (std::size_t p = fields.find(key, from); p != std::string_view::npos;
         p = fields.find(key, p + 1)) {
        if ((p == 0 || fields[p - 1] == ' ') && p + key.size() < fields.size() + 1 &&
            fields.substr(p + key.size(), 1) == "=")
            return p;
    }
    return std::string_view::npos;
}

} // namespace

/* ------------------------------------------------------------------------ */
/* trace-cmd .dat files: libtracecmd and libtraceevent in a child process    */

/*
 * libtracecmd (Debian's 3.1.6) is not hardened against corrupt files: on a .dat cut short
 * past its headers, tracecmd_open() cleaned up its failed tracecmd_init_data() with a
 * tracecmd_close() that walked CPU data never set up (SIGSEGV). So libtracecmd never runs in
 * schedlab's own process. dat_source forks a child (dat_child) that opens the file with
 * libtracecmd, merges the per-CPU records by timestamp, turns each into an ftrace_event and
 * sends it over a pipe in the frames of `dat_wire`; the parent decodes them one at a time
 * (a 64 KiB pipe and buffers on both sides: memory does not grow with the file). A child
 * that dies (a signal) or exits without its end frame is a config_error naming the file; a
 * child that finds bad input sends the error, which the parent throws as its own. The child
 * never closes its handle: it _exit()s, and the kernel frees what it had.
 *
 * fork(), not posix_spawn() of /proc/self/exe with an internal subcommand: the reader is
 * library code that every program linking schedlab_trace runs (the CLI, the test programs,
 * the fuzz targets), and only the CLI could answer a subcommand. The child of a threaded
 * process (compare --jobs reads traces on worker threads) has only the forking thread, and a
 * lock another thread held at the fork stays held in it. What the child relies on: glibc's
 * fork() resets malloc's arena locks and the stdio list lock in the child (a glibc guarantee
 * beyond POSIX, which allows only async-signal-safe calls there); the child touches no other
 * state a lock guards: no FILE of the parent (stdout and stderr, where libtracecmd and
 * libtraceevent print their messages, become a stream of its own, discarded), no iostream,
 * no locale, no dlopen() (TRACECMD_FL_LOAD_NO_PLUGINS), no thread; it throws no exception
 * (an error is a frame, then _exit()); it never returns into the caller's code.
 */

namespace {

/// The .dat child's frames: a kind byte, then the kind's body, in the host's byte order.
namespace dat_wire {
constexpr char header = 'H'; ///< s32: the CPU count
constexpr char record = 'R'; ///< record_head, then its strings
constexpr char error = 'E';  ///< u32 where length, u32 what length, the two strings
constexpr char end = 'Z';    ///< no body: every record was sent

/// A record's fixed part; its five strings follow in the order of `len`.
struct record_head {
    s64 ts;
    s32 cpu, curr_pid, pid, prio, pid2, prio2, target_cpu, dest_cpu;
    u32 len[5]; ///< curr_comm, name, comm, comm2, prev_state
    u8 ctx, type, pad[2];
};
static_assert(sizeof(record_head) == 64);
} // namespace dat_wire

/// The child's exit codes (the parent reports any status other than 0 after the end frame).
constexpr int dat_child_bad_input = 2; ///< it sent an error frame
constexpr int dat_child_no_parent = 3; ///< the parent stopped reading (a failed write)
constexpr std::size_t dat_pipe_chunk = 64 << 10;

/*
 * The child's side: libtracecmd's handle, the merge across CPUs (one pending record per CPU)
 * and the conversion to an ftrace_event's fields, written to the pipe in frames.
 */
class dat_child {
public:
    dat_child(const std::string& path, int fd) : path_(path), fd_(fd)
    {
        out_.reserve(dat_pipe_chunk);
    }

    [[noreturn]] void run()
    {
        tracecmd_input* h = tracecmd_open_head(path_.c_str(), TRACECMD_FL_LOAD_NO_PLUGINS);
        if (!h)
            fail(path_, "libtracecmd cannot read this trace-cmd .dat file");
        if (tracecmd_init_data(h) < 0)
            fail(path_, "libtracecmd cannot read the CPU data of this trace-cmd .dat file: it "
                        "is truncated or corrupt");
        tep_ = tracecmd_get_tep(h);
        const int nr_cpus = tep_get_cpus(tep_);
        if (nr_cpus <= 0 || nr_cpus > nr_cpus_limit)
            fail(path_, fmt::format("a .dat file of {} CPUs", nr_cpus));
        put(&dat_wire::header, 1);
        const s32 n32 = nr_cpus;
        put(&n32, sizeof n32);
        std::vector<tep_record*> next(static_cast<std::size_t>(nr_cpus), nullptr);
        for (int c = 0; c < nr_cpus; ++c)
            next[static_cast<std::size_t>(c)] = tracecmd_read_data(h, c);
        for (u64 n = 1;; ++n) {
            int best = -1;
            for (int c = 0; c < nr_cpus; ++c) {
                const tep_record* r = next[static_cast<std::size_t>(c)];
                if (r && (best < 0 || r->ts < next[static_cast<std::size_t>(best)]->ts))
                    best = c;
            }
            if (best < 0)
                break;
            tep_record* r = next[static_cast<std::size_t>(best)];
            next[static_cast<std::size_t>(best)] = tracecmd_read_data(h, best);
            if (r->missed_events != 0)
                fail(fmt::format("{}:{}", path_, n), // as ftrace_reader::where() names it
                     fmt::format("CPU {} lost events before this record: a replay would miss "
                                 "the tasks' switches and wakeups",
                                 best));
            convert(r, best);
            tracecmd_free_record(r);
        }
        put(&dat_wire::end, 1);
        flush();
        _exit(0); // the handle is not closed (see above)
    }

private:
    void put(const void* p, std::size_t n)
    {
        if (out_.size() + n > dat_pipe_chunk && !out_.empty())
            flush();
        out_.append(static_cast<const char*>(p), n);
    }
    void flush()
    {
        for (std::size_t off = 0; off < out_.size();) {
            const ssize_t w = ::write(fd_, out_.data() + off, out_.size() - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(dat_child_no_parent);
            off += static_cast<std::size_t>(w);
        }
        out_.clear();
    }
    /// Sends the error for the parent to throw as config_error(where, what), and exits.
    [[noreturn]] void fail(const std::string& where, const std::string& what)
    {
        const u32 len[2] = {static_cast<u32>(where.size()), static_cast<u32>(what.size())};
        put(&dat_wire::error, 1);
        put(len, sizeof len);
        put(where.data(), where.size());
        put(what.data(), what.size());
        flush();
        _exit(dat_child_bad_input);
    }

    long long field(tep_event* ev, tep_record* r, const char* name)
    {
        unsigned long long v = 0;
        if (tep_get_field_val(nullptr, ev, name, r, &v, 0) != 0)
            fail(path_, fmt::format("{} without its '{}' field", ev->name, name));
        return static_cast<long long>(v);
    }
    std::string_view text(tep_event* ev, tep_record* r, const char* name)
    {
        int len = 0;
        const char* p = static_cast<const char*>(tep_get_field_raw(nullptr, ev, name, r, &len, 0));
        if (!p)
            fail(path_, fmt::format("{} without its '{}' field", ev->name, name));
        return {p, strnlen(p, static_cast<std::size_t>(std::max(len, 0)))};
    }

    void convert(tep_record* r, int cpu)
    {
        dat_wire::record_head h{};
        std::string_view s[5]; // curr_comm, name, comm, comm2, prev_state
        h.ts = static_cast<s64>(r->ts);
        h.cpu = cpu;
        h.curr_pid = tep_data_pid(tep_, r);
        const char* cc = tep_data_comm_from_pid(tep_, h.curr_pid);
        s[0] = h.curr_pid == 0 ? "<idle>" : cc ? cc : "<...>";
        const int flags = tep_data_flags(tep_, r);
        // Bits of the common_flags field (kernel/trace/trace.h, trace_flag_type): NMI 0x40,
        // HARDIRQ 0x08, SOFTIRQ 0x10.
        h.ctx = static_cast<u8>((flags & 0x40)   ? ftrace_context::nmi
                                : (flags & 0x08) ? ftrace_context::hardirq
                                : (flags & 0x10) ? ftrace_context::softirq
                                                 : ftrace_context::task);
        h.pid = h.pid2 = h.target_cpu = h.dest_cpu = -1;
        h.prio = h.prio2 = ftrace_no_prio;
        ftrace_event_type type = ftrace_event_type::other;
        tep_event* ev = tep_find_event_by_record(tep_, r);
        s[1] = ev && ev->name ? ev->name : "unknown";
        const std::string_view n = ev ? s[1] : std::string_view();
        const auto num = [&](const char* name) { return static_cast<s32>(field(ev, r, name)); };
        if (n == "sched_switch") {
            type = ftrace_event_type::sched_switch;
            s[2] = text(ev, r, "prev_comm");
            h.pid = num("prev_pid");
            h.prio = num("prev_prio");
            s[4] = state_string(field(ev, r, "prev_state"));
            s[3] = text(ev, r, "next_comm");
            h.pid2 = num("next_pid");
            h.prio2 = num("next_prio");
        } else if (n == "sched_waking" || n == "sched_wakeup" || n == "sched_wakeup_new") {
            type = n == "sched_waking"   ? ftrace_event_type::sched_waking
                   : n == "sched_wakeup" ? ftrace_event_type::sched_wakeup
                                         : ftrace_event_type::sched_wakeup_new;
            s[2] = text(ev, r, "comm");
            h.pid = num("pid");
            h.prio = num("prio");
            h.target_cpu = num("target_cpu");
        } else if (n == "sched_migrate_task") {
            type = ftrace_event_type::sched_migrate_task;
            s[2] = text(ev, r, "comm");
            h.pid = num("pid");
            h.prio = num("prio");
            h.target_cpu = num("orig_cpu");
            h.dest_cpu = num("dest_cpu");
        } else if (n == "sched_process_fork") {
            type = ftrace_event_type::sched_process_fork;
            s[2] = text(ev, r, "parent_comm");
            h.pid = num("parent_pid");
            s[3] = text(ev, r, "child_comm");
            h.pid2 = num("child_pid");
        } else if (n == "sched_process_exit") {
            type = ftrace_event_type::sched_process_exit;
            s[2] = text(ev, r, "comm");
            h.pid = num("pid");
        } else if (n == "sched_process_exec") {
            type = ftrace_event_type::sched_process_exec;
            h.pid = num("pid");
            h.pid2 = num("old_pid");
        }
        h.type = static_cast<u8>(type);
        for (int i = 0; i < 5; ++i)
            h.len[i] = static_cast<u32>(s[i].size());
        put(&dat_wire::record, 1);
        put(&h, sizeof h);
        for (const std::string_view v : s)
            put(v.data(), v.size());
    }

    /*
     * prev_state as the tracepoint prints it (include/trace/events/sched.h,
     * __trace_sched_switch_state(), 6.x): 0 "R", TASK_REPORT_MAX (0x100) "R+", else the
     * letters of the TASK_REPORT bits S D T t X Z P I.
     */
    std::string_view state_string(long long v)
    {
        static const char letters[] = "SDTtXZPI";
        if (v & 0x100)
            return "R+";
        state_.clear();
        for (int bit = 0; bit < 8; ++bit)
            if (v & (1LL << bit)) {
                if (!state_.empty())
                    state_ += '|';
                state_ += letters[bit];
            }
        if (state_.empty())
            state_ = "R";
        return state_;
    }

    const std::string& path_;
    int fd_;
    std::string out_;
    tep_handle* tep_ = nullptr;
    std::string state_;
};

/*
 * What runs in the child between fork() and dat_child::run(): a crash signal kills it (the
 * host's handlers, e.g. a sanitizer's or libFuzzer's, are the parent's business), it dies with
 * the thread that forked it, it holds no descriptor but its pipe (another reader's pipe kept
 * open here would delay that reader's end of file), and stdio goes to a stream of its own.
 */
[[noreturn]] void start_dat_child(const std::string& path, int fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(dat_child_no_parent);
    sigset_t crash;
    sigemptyset(&crash);
    for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGPIPE}) {
        struct sigaction sa {};
        sa.sa_handler = SIG_DFL;
        sigaction(sig, &sa, nullptr);
        sigaddset(&crash, sig);
    }
    sigprocmask(SIG_UNBLOCK, &crash, nullptr);
    if (fd > 3)
        close_range(3, static_cast<unsigned>(fd) - 1, 0);
    close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
    // libtracecmd prints to stdout ("File possibly truncated") and, through libtraceevent, to
    // stderr: a FILE of the parent's may be locked by another thread, or hold the parent's
    // unwritten output. The child's own stream (the variables are glibc's to set) drops them.
    char sink[4096];
    if (std::FILE* own = fmemopen(sink, sizeof sink, "w")) {
        stdout = own;
        stderr = own;
    }
    dat_child(path, fd).run();
}

} // namespace

/*
 * The parent's side: the child's frames decoded into ftrace_events, one at a time.
 */
class dat_source {
public:
    explicit dat_source(const std::string& path) : path_(path), buf_(dat_pipe_chunk)
    {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            throw config_error(path, fmt::format("cannot make a pipe to read it through: {}",
                                                 std::strerror(errno)));
        const pid_t parent = getpid();
        pid_ = fork();
        if (pid_ < 0) {
            const int err = errno;
            ::close(fds[0]);
            ::close(fds[1]);
            throw config_error(
                path, fmt::format("cannot start a process to read it: {}", std::strerror(err)));
        }
        if (pid_ == 0)
            start_dat_child(path_, fds[1], parent);
        ::close(fds[1]);
        fd_ = fds[0];
        try {
            if (!fill(1) || buf_[pos_] != dat_wire::header)
                frame_not_read();
            if (!fill(1 + sizeof(s32)))
                frame_not_read();
            s32 n = 0;
            std::memcpy(&n, buf_.data() + pos_ + 1, sizeof n);
            pos_ += 1 + sizeof n;
            nr_cpus_ = n;
        } catch (...) {
            finish(true);
            throw;
        }
    }
    ~dat_source() { finish(true); }
    dat_source(const dat_source&) = delete;
    dat_source& operator=(const dat_source&) = delete;
    int nr_cpus() const { return nr_cpus_; }

    /// The next record (the earliest over the CPUs); false at the end.
    bool next(ftrace_event& e)
    {
        if (done_)
            return false;
        if (!fill(1))
            frame_not_read();
        if (buf_[pos_] == dat_wire::end) {
            ++pos_;
            done_ = true;
            finish(false);
            if (!(WIFEXITED(status_) && WEXITSTATUS(status_) == 0) && status_ != -1)
                child_failed();
            return false;
        }
        if (buf_[pos_] != dat_wire::record)
            frame_not_read();
        dat_wire::record_head h;
        if (!fill(1 + sizeof h))
            frame_not_read();
        std::memcpy(&h, buf_.data() + pos_ + 1, sizeof h);
        u64 total = 0;
        for (const u32 l : h.len)
            total += l;
        if (!fill(1 + sizeof h + total))
            frame_not_read();
        const char* p = buf_.data() + pos_ + 1 + sizeof h;
        std::string* const store[5] = {&curr_comm_, &name_, &comm_, &comm2_, &state_};
        for (int i = 0; i < 5; ++i) {
            store[i]->assign(p, h.len[i]);
            p += h.len[i];
        }
        pos_ += 1 + sizeof h + total;
        e.ts = h.ts;
        e.cpu = h.cpu;
        e.curr_pid = h.curr_pid;
        e.curr_comm = curr_comm_;
        e.ctx = static_cast<ftrace_context>(h.ctx);
        e.type = static_cast<ftrace_event_type>(h.type);
        e.name = name_;
        e.pid = h.pid;
        e.prio = h.prio;
        e.pid2 = h.pid2;
        e.prio2 = h.prio2;
        e.target_cpu = h.target_cpu;
        e.dest_cpu = h.dest_cpu;
        e.comm = h.len[2] ? std::string_view(comm_) : std::string_view();
        e.comm2 = h.len[3] ? std::string_view(comm2_) : std::string_view();
        e.prev_state = h.len[4] ? std::string_view(state_) : std::string_view();
        e.inferred = false;
        e.ts_lo = e.ts;
        return true;
    }

private:
    /// At least `n` unread bytes in buf_; false when the pipe ends first.
    bool fill(std::size_t n)
    {
        while (end_ - pos_ < n) {
            // Room for the frame, and for a read of a useful size: the unread bytes moved to
            // the front, the buffer grown for a frame larger than it.
            if (buf_.size() - pos_ < n || buf_.size() - end_ < dat_pipe_chunk / 4) {
                std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
                end_ -= pos_;
                pos_ = 0;
                if (buf_.size() < n)
                    buf_.resize(n);
            }
            const ssize_t got = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                const int err = errno;
                finish(true);
                throw config_error(path_, fmt::format("reading the records from the process "
                                                      "that reads the file: {}",
                                                      std::strerror(err)));
            }
            if (got == 0)
                return false;
            end_ += static_cast<std::size_t>(got);
        }
        return true;
    }

    /// The pipe ended before a whole frame, or the frame is the child's error: the child's
    /// error, or how it ended.
    [[noreturn]] void frame_not_read()
    {
        if (end_ > pos_ && buf_[pos_] == dat_wire::error) {
            u32 len[2] = {0, 0};
            if (fill(1 + sizeof len)) {
                std::memcpy(len, buf_.data() + pos_ + 1, sizeof len);
                if (fill(1 + sizeof len + u64{len[0]} + len[1])) {
                    const std::size_t at = pos_ + 1 + sizeof len; // after fill() moved them
                    std::string where(buf_.data() + at, len[0]);
                    std::string what(buf_.data() + at + len[0], len[1]);
                    finish(false);
                    throw config_error(std::move(where), what);
                }
            }
        }
        finish(false);
        child_failed();
    }

    [[noreturn]] void child_failed() const
    {
        std::string how;
        if (status_ == -1)
            how = "its exit status is unknown";
        else if (WIFSIGNALED(status_)) {
            const char* abbrev = sigabbrev_np(WTERMSIG(status_));
            how = abbrev ? fmt::format("killed by SIG{}", abbrev)
                         : fmt::format("killed by signal {}", WTERMSIG(status_));
        } else
            how = fmt::format("exit status {}", WEXITSTATUS(status_));
        throw config_error(path_, fmt::format("libtracecmd could not read this trace-cmd .dat "
                                              "file ({}): it is corrupt or truncated",
                                              how));
    }

    /// Closes the pipe and reaps the child (killed first with `kill`: a reader stopped early).
    /// status_ is its wait status, or -1 when it cannot be known (SIGCHLD ignored).
    void finish(bool kill) noexcept
    {
        if (fd_ >= 0) {
            ::close(fd_);
            fd_ = -1;
        }
        if (pid_ > 0) {
            if (kill)
                ::kill(pid_, SIGKILL);
            int st = 0;
            pid_t r;
            while ((r = ::waitpid(pid_, &st, 0)) < 0 && errno == EINTR) {
            }
            status_ = r == pid_ ? st : -1;
            pid_ = -1;
        }
    }

    std::string path_;
    pid_t pid_ = -1;
    int fd_ = -1;
    int status_ = -1;
    bool done_ = false;
    std::vector<char> buf_;
    std::size_t pos_ = 0, end_ = 0;
    int nr_cpus_ = 0;
    std::string curr_comm_, name_, comm_, comm2_, state_;
};

/* ------------------------------------------------------------------------ */
/* ftrace_reader                                                             */

namespace {

/// A trace is opened more than once (its format told by its first bytes; a replay hashes it
/// and reads it twice): a pipe or a device would lose what the first opening read.
void require_regular_file(const std::string& path)
{
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || st.type() == std::filesystem::file_type::not_found)
        return; // opening it names the error (file_handle)
    if (st.type() != std::filesystem::file_type::regular)
        throw config_error(path, "not a regular file (a pipe, e.g. trace_pipe or stdin, or a "
                                 "directory): a trace is read more than once; save it to a "
                                 "file first");
}

bool is_dat_file(const std::string& path)
{
    // A trace-cmd file starts with 0x17 0x08 'D' "tracing" (Documentation/trace-cmd/
    // trace-cmd.dat.v7.5.txt in trace-cmd's tree).
    unsigned char magic[10] = {};
    file_handle f(path);
    return f.read(magic, sizeof magic) == sizeof magic && std::memcmp(magic,
                                                                      "\x17\x08"
                                                                      "Dtracing",
                                                                      10) == 0;
}

} // namespace

ftrace_reader::ftrace_reader(std::string path) : path_(std::move(path))
{
    require_regular_file(path_);
    if (is_dat_file(path_)) {
        dat_ = std::make_unique<dat_source>(path_);
        stats_.format = "trace-cmd .dat";
        stats_.header_cpus = dat_->nr_cpus();
        stats_.timestamp_digits = 9;
    } else {
        in_ = open_input(path_);
        std::error_code ec;
        const auto size = std::filesystem::file_size(path_, ec);
        file_bytes_ = ec ? 0 : static_cast<u64>(size);
    }
}

ftrace_reader::~ftrace_reader() = default;

u64 ftrace_reader::bytes_read() const
{
    return in_ ? in_->consumed() : 0;
}

std::string ftrace_reader::where() const
{
    return fmt::format("{}:{}", path_, line_no_);
}

void ftrace_reader::fail(const std::string& what) const
{
    throw config_error(where(), what);
}

bool ftrace_reader::next_line(std::string_view& line)
{
    for (;;) {
        const std::size_t nl = buf_.find('\n', pos_);
        if (nl != std::string::npos) {
            line = std::string_view(buf_).substr(pos_, nl - pos_);
            pos_ = nl + 1;
            ++line_no_;
            return true;
        }
        if (buf_.size() - pos_ > max_line_bytes) {
            ++line_no_;
            fail(fmt::format("a line longer than {} bytes: not ftrace text", max_line_bytes));
        }
        buf_.erase(0, pos_);
        pos_ = 0;
        if (eof_) {
            if (buf_.empty())
                return false;
            ++line_no_;
            fail("the last line has no newline: the trace is truncated");
        }
        const std::size_t old = buf_.size();
        buf_.resize(old + chunk_bytes);
        const std::size_t got = in_->read(buf_.data() + old, chunk_bytes);
        buf_.resize(old + got);
        if (got == 0)
            eof_ = true;
    }
}

bool ftrace_reader::next(ftrace_event& e)
{
    if (dat_) {
        if (!dat_->next(e))
            return false;
        ++stats_.events;
        e.line = line_no_ = stats_.events; // where() names the record
        // A record's numbers are whatever its bytes say: held to the text's bounds (a pid
        // of 2^31 had a replay allocate gigabytes; parse_timestamp()'s seconds).
        if (e.ts < 0 || e.ts > max_trace_seconds * NSEC_PER_SEC)
            fail(fmt::format("a timestamp of {} ns: beyond {} s, not a trace's", e.ts,
                             max_trace_seconds));
        if (e.curr_pid < 0 || e.curr_pid > pid_max_limit)
            fail(fmt::format("common_pid {} is outside the kernel's pids (0 to PID_MAX_LIMIT, "
                             "{})",
                             e.curr_pid, pid_max_limit));
        if (e.type == ftrace_event_type::other)
            ++stats_.skipped[std::string(e.name)];
        else
            check_pids(e);
        if (e.ts < last_ts_)
            fail("a record before the previous one in time");
        last_ts_ = e.ts;
        return true;
    }
    std::string_view line;
    while (next_line(line)) {
        ++stats_.lines;
        if (parse_line(line, e))
            return true;
    }
    return false;
}

/* A comment or header line ("#P:N", "cpus=N", a buffer-start marker): true when `t` is one. */
bool ftrace_reader::parse_header_line(std::string_view t)
{
    if (t.front() == '#') {
        // "##### CPU 1 buffer started ####": older events of that CPU were overwritten.
        int c = -1;
        if (t.starts_with("##### CPU ") && t.find("buffer started") != std::string_view::npos) {
            const std::string_view rest = t.substr(10);
            if (!to_int(rest.substr(0, rest.find(' ')), c) || c < 0)
                fail(fmt::format("a malformed buffer-start marker: '{}'", t));
            pending_buffer_start_ = c;
            return true;
        }
        const std::size_t p = t.find("#P:");
        if (p != std::string_view::npos && to_int(trim(t.substr(p + 3)), c) && c > 0)
            stats_.header_cpus = c;
        return true;
    }
    if (t.starts_with("cpus=") && stats_.events == 0) { // trace-cmd report's first line
        int c = 0;
        if (!to_int(t.substr(5), c) || c <= 0)
            fail(fmt::format("a malformed header line: '{}'", t));
        stats_.header_cpus = c;
        return true;
    }
    return false;
}

void ftrace_reader::not_ftrace(std::string_view t) const
{
    fail(fmt::format("not ftrace text: expected 'TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: "
                     "FIELDS' (tracefs trace or trace-cmd report output) or 'COMM PID "
                     "[CPU] TIMESTAMP: SYSTEM:EVENT: FIELDS' (perf script), got '{}'",
                     t.substr(0, 80)));
}

/*
 * "TASK-PID [CPU]" (or perf script's "COMM PID [CPU]"): e.curr_comm, `pid` and `cpu`; returns
 * the position of the closing bracket.
 */
std::size_t ftrace_reader::parse_task_cpu(std::string_view t, ftrace_event& e, int& pid, int& cpu)
{
    // TASK-PID [CPU]: the comm may contain spaces and dashes, so find the first "-PID [CPU]".
    std::size_t bracket = std::string_view::npos;
    for (std::size_t b = t.find('['); b != std::string_view::npos; b = t.find('[', b + 1)) {
        const std::size_t close = t.find(']', b);
        if (close == std::string_view::npos || !to_int(t.substr(b + 1, close - b - 1), cpu))
            continue;
        std::size_t end = b;
        while (end > 0 && t[end - 1] == ' ')
            --end;
        std::size_t start = end;
        while (start > 0 && is_digit(t[start - 1]))
            --start;
        if (start == end || start == 0 || !to_int(t.substr(start, end - start), pid))
            continue;
        if (t[start - 1] == ' ' && stats_.format != "tracefs" &&
            stats_.format != "trace-cmd report") {
            // perf script: "COMM PID [CPU] SECONDS: SYSTEM:EVENT: FIELDS" (no flags column).
            stats_.format = "perf script";
            e.curr_comm = trim(t.substr(0, start - 1));
        } else if (t[start - 1] == '-' && stats_.format != "perf script") {
            e.curr_comm = t.substr(0, start - 1);
        } else {
            continue;
        }
        bracket = close;
        break;
    }
    if (bracket == std::string_view::npos || cpu < 0 || pid < 0)
        not_ftrace(t);
    return bracket;
}

/* The flags column (absent in trace-cmd report -t): e.ctx; returns what follows it. */
std::string_view ftrace_reader::parse_flags(std::string_view t, std::string_view rest,
                                            ftrace_event& e)
{
    // Flags (absent in trace-cmd report -t), then "SECONDS.FRACTION:".
    const std::size_t sp = rest.find(' ');
    std::string_view tok = rest.substr(0, sp);
    e.ctx = ftrace_context::unknown;
    if (!tok.empty() && !is_digit(tok.front())) {
        if (tok.size() < 4 || tok.size() > 6)
            not_ftrace(t);
        switch (tok[2]) {
        case '.':
            e.ctx = ftrace_context::task;
            break;
        case 's':
            e.ctx = ftrace_context::softirq;
            break;
        case 'h':
        case 'H':
            e.ctx = ftrace_context::hardirq;
            break;
        case 'z':
        case 'Z':
            e.ctx = ftrace_context::nmi;
            break;
        default:
            not_ftrace(t);
        }
        if (stats_.format.empty())
            stats_.format = "tracefs";
        rest = trim(rest.substr(sp == std::string_view::npos ? rest.size() : sp));
    } else if (stats_.format.empty()) {
        stats_.format = "trace-cmd report";
    }
    return rest;
}

/* "SECONDS.FRACTION" in nanoseconds; the same number of decimals on every line. */
s64 ftrace_reader::parse_timestamp(std::string_view t, std::string_view stamp)
{
    const std::size_t dot = stamp.find('.');
    s64 secs = 0;
    if (dot == std::string_view::npos || dot == 0 || dot + 1 >= stamp.size() || dot > 12)
        not_ftrace(t);
    {
        const auto [p, ec] = std::from_chars(stamp.data(), stamp.data() + dot, secs);
        if (ec != std::errc() || p != stamp.data() + dot || secs < 0 || secs > max_trace_seconds)
            not_ftrace(t);
    }
    const std::string_view frac = stamp.substr(dot + 1);
    if (frac.size() > 9 || !std::all_of(frac.begin(), frac.end(), is_digit))
        not_ftrace(t);
    s64 f = 0;
    std::from_chars(frac.data(), frac.data() + frac.size(), f);
    for (std::size_t i = frac.size(); i < 9; ++i)
        f *= 10;
    const int digits = static_cast<int>(frac.size());
    if (stats_.timestamp_digits == 0)
        stats_.timestamp_digits = digits;
    else if (stats_.timestamp_digits != digits)
        fail(fmt::format("a timestamp with {} decimals after lines with {}: mixed clocks or "
                         "formats in one file",
                         digits, stats_.timestamp_digits));
    return secs * NSEC_PER_SEC + f;
}

/* The line's CPU and pid within the kernel's limits, its time after the previous line's. */
void ftrace_reader::accept_record(const ftrace_event& e)
{
    if (e.cpu >= nr_cpus_limit)
        fail(fmt::format("CPU {} is beyond the kernel's largest NR_CPUS ({})", e.cpu,
                         nr_cpus_limit));
    if (e.curr_pid > pid_max_limit)
        fail(fmt::format("pid {} is beyond the kernel's PID_MAX_LIMIT ({})", e.curr_pid,
                         pid_max_limit));
    if (stats_.header_cpus > 0 && e.cpu >= stats_.header_cpus)
        fail(fmt::format("CPU {} but the header says the trace has {} CPUs", e.cpu,
                         stats_.header_cpus));
    if (e.ts < last_ts_)
        fail(fmt::format("timestamp {}.{:09} is before line {}'s {}.{:09}: the trace is not "
                         "sorted by time (tracefs and trace-cmd report print the CPUs merged in "
                         "time order)",
                         e.ts / NSEC_PER_SEC, e.ts % NSEC_PER_SEC, last_ts_line_,
                         last_ts_ / NSEC_PER_SEC, last_ts_ % NSEC_PER_SEC));
    last_ts_ = e.ts;
    last_ts_line_ = line_no_;
    if (pending_buffer_start_ >= 0) {
        stats_.buffer_starts.emplace_back(pending_buffer_start_, e.ts);
        pending_buffer_start_ = -1;
    }
}

bool ftrace_reader::parse_line(std::string_view line, ftrace_event& e)
{
    const std::string_view t = trim(line);
    if (t.empty() || parse_header_line(t))
        return false;
    if (t.find("[LOST") != std::string_view::npos ||
        t.find("EVENTS DROPPED") != std::string_view::npos ||
        t.find("PERF_RECORD_LOST") != std::string_view::npos) // perf script --show-lost-events
        fail(fmt::format("the trace lost events here ('{}'): a replay would miss the tasks' "
                         "switches and wakeups; record again with a larger buffer_size_kb",
                         t));
    int pid = -1, cpu = -1;
    const std::size_t bracket = parse_task_cpu(t, e, pid, cpu);
    std::string_view rest = parse_flags(t, trim(t.substr(bracket + 1)), e);
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos)
        not_ftrace(t);
    e.line = line_no_;
    e.ts = parse_timestamp(t, rest.substr(0, colon));
    e.cpu = cpu;
    e.curr_pid = pid;
    accept_record(e);
    rest = trim(rest.substr(colon + 1));
    std::size_t ncolon = rest.find(':');
    if (ncolon == std::string_view::npos ||
        rest.substr(0, ncolon).find(' ') != std::string_view::npos)
        not_ftrace(t);
    if (stats_.format == "perf script") { // "sched:sched_switch:": the event after its system
        rest = rest.substr(ncolon + 1);
        ncolon = rest.find(':');
        if (ncolon == std::string_view::npos || ncolon == 0 ||
            rest.substr(0, ncolon).find(' ') != std::string_view::npos)
            not_ftrace(t);
    }
    e.name = rest.substr(0, ncolon);
    ++stats_.events;
    e.inferred = false;
    e.ts_lo = e.ts;
    e.pid = e.pid2 = e.target_cpu = e.dest_cpu = -1;
    e.prio = e.prio2 = ftrace_no_prio;
    e.comm = e.comm2 = e.prev_state = {};
    static const std::pair<std::string_view, ftrace_event_type> known[] = {
        {"sched_switch", ftrace_event_type::sched_switch},
        {"sched_waking", ftrace_event_type::sched_waking},
        {"sched_wakeup", ftrace_event_type::sched_wakeup},
        {"sched_wakeup_new", ftrace_event_type::sched_wakeup_new},
        {"sched_migrate_task", ftrace_event_type::sched_migrate_task},
        {"sched_process_fork", ftrace_event_type::sched_process_fork},
        {"sched_process_exit", ftrace_event_type::sched_process_exit},
        {"sched_process_exec", ftrace_event_type::sched_process_exec},
    };
    e.type = ftrace_event_type::other;
    for (const auto& [n, k] : known)
        if (e.name == n)
            e.type = k;
    if (e.type == ftrace_event_type::other) {
        ++stats_.skipped[std::string(e.name)];
        return true;
    }
    parse_fields(trim(rest.substr(ncolon + 1)), e);
    return true;
}

void ftrace_reader::parse_fields(std::string_view f, ftrace_event& e)
{
    const auto missing = [&](std::string_view field) {
        fail(fmt::format("{} without its '{}' field: '{}'", e.name, field, f.substr(0, 120)));
    };
    // The fields are read in the order the tracepoint prints them, each searched from where
    // the previous one ended (one pass over the line, not one per field); a field out of that
    // order is searched from the start.
    std::size_t at = 0;
    const auto locate = [&](std::string_view key) {
        // Usually the key is right there: after the previous field's value and a space.
        for (std::size_t p = at; p <= at + 1 && p + key.size() < f.size(); ++p)
            if ((p == 0 || f[p - 1] == ' ') && f[p + key.size()] == '=' &&
                f.compare(p, key.size(), key) == 0)
                return p;
        std::size_t p = find_key(f, key, at);
        if (p == std::string_view::npos && at > 0)
            p = find_key(f, key);
        return p;
    };
    // A numeric "key=N" field.
    const auto num = [&](std::string_view key, int& v) {
        const std::size_t p = locate(key);
        if (p == std::string_view::npos)
            missing(key);
        std::string_view val = f.substr(p + key.size() + 1);
        val = val.substr(0, val.find(' '));
        if (!to_int(val, v))
            fail(fmt::format("{}: '{}={}' is not a number", e.name, key, val));
        at = p + key.size() + 1 + val.size();
    };
    // A comm: everything from "key=" to the next field `next` (a comm may contain spaces).
    const auto comm = [&](std::string_view key, std::string_view next) {
        const std::size_t p = locate(key);
        if (p == std::string_view::npos)
            missing(key);
        const std::size_t start = p + key.size() + 1;
        const std::size_t q = find_key(f, next, start);
        if (q == std::string_view::npos)
            missing(next);
        at = q;
        return f.substr(start, q - 1 - start);
    };
    // trace-cmd's sched plugin: "COMM:PID [PRIO]" (the comm may contain ':' and spaces).
    const auto compact_task = [&](std::string_view s, std::string_view& c, int& pid, int& prio) {
        s = trim(s);
        const std::size_t lb = s.rfind(" [");
        if (lb == std::string_view::npos || s.back() != ']')
            fail(fmt::format("{}: expected 'COMM:PID [PRIO]', got '{}'", e.name, s));
        const std::size_t cl = s.rfind(':', lb);
        if (cl == std::string_view::npos || !to_int(s.substr(cl + 1, lb - cl - 1), pid) ||
            !to_int(s.substr(lb + 2, s.size() - lb - 3), prio))
            fail(fmt::format("{}: expected 'COMM:PID [PRIO]', got '{}'", e.name, s));
        c = s.substr(0, cl);
    };
    switch (e.type) {
    case ftrace_event_type::sched_switch: {
        const std::size_t arrow = f.find(" ==> ");
        if (arrow == std::string_view::npos)
            missing("==>");
        if (find_key(f, "prev_comm") != std::string_view::npos) {
            e.comm = comm("prev_comm", "prev_pid");
            num("prev_pid", e.pid);
            num("prev_prio", e.prio);
            const std::size_t ps = locate("prev_state");
            if (ps == std::string_view::npos || ps > arrow)
                missing("prev_state");
            e.prev_state = trim(f.substr(ps + 11, arrow - ps - 11));
            at = arrow;
            e.comm2 = comm("next_comm", "next_pid");
            num("next_pid", e.pid2);
            num("next_prio", e.prio2);
        } else {
            std::string_view left = trim(f.substr(0, arrow));
            const std::size_t sp = left.rfind(' ');
            if (sp == std::string_view::npos)
                missing("prev_state");
            e.prev_state = left.substr(sp + 1);
            compact_task(left.substr(0, sp), e.comm, e.pid, e.prio);
            compact_task(f.substr(arrow + 5), e.comm2, e.pid2, e.prio2);
        }
        if (e.prev_state.empty())
            missing("prev_state");
        break;
    }
    case ftrace_event_type::sched_waking:
    case ftrace_event_type::sched_wakeup:
    case ftrace_event_type::sched_wakeup_new:
        if (find_key(f, "comm") != std::string_view::npos) {
            e.comm = comm("comm", "pid");
            num("pid", e.pid);
            num("prio", e.prio);
            num("target_cpu", e.target_cpu);
        } else {
            const std::size_t c = f.rfind(" CPU:");
            if (c == std::string_view::npos || !to_int(trim(f.substr(c + 5)), e.target_cpu))
                missing("CPU");
            std::string_view task = trim(f.substr(0, c));
            if (task.ends_with(" success=1"))
                task.remove_suffix(10);
            compact_task(task, e.comm, e.pid, e.prio);
        }
        break;
    case ftrace_event_type::sched_migrate_task:
        e.comm = comm("comm", "pid");
        num("pid", e.pid);
        num("prio", e.prio);
        num("orig_cpu", e.target_cpu);
        num("dest_cpu", e.dest_cpu);
        break;
    case ftrace_event_type::sched_process_fork:
        e.comm = comm("comm", "pid");
        num("pid", e.pid);
        e.comm2 = comm("child_comm", "child_pid");
        num("child_pid", e.pid2);
        break;
    case ftrace_event_type::sched_process_exit:
        e.comm = comm("comm", "pid");
        num("pid", e.pid);
        if (locate("prio") != std::string_view::npos)
            num("prio", e.prio);
        break;
    case ftrace_event_type::sched_process_exec: {
        num("pid", e.pid);
        num("old_pid", e.pid2);
        break;
    }
    case ftrace_event_type::other:
        break;
    }
    check_pids(e);
}

/* A known event's pids within the kernel's limits (its fields, whichever the format). */
void ftrace_reader::check_pids(const ftrace_event& e) const
{
    for (const int p : {e.pid, e.pid2})
        if (p > pid_max_limit)
            fail(fmt::format("{}: pid {} is beyond the kernel's PID_MAX_LIMIT ({})", e.name, p,
                             pid_max_limit));
    if (e.pid < 0 || (e.type == ftrace_event_type::sched_switch && e.pid2 < 0))
        fail(fmt::format("{}: a negative pid", e.name));
    if (e.type == ftrace_event_type::sched_process_fork && e.pid2 < 0)
        fail(fmt::format("{}: a negative child_pid", e.name));
}

/* ------------------------------------------------------------------------ */
/* sched_trace_reader                                                        */

u64 sched_trace_quirks::total_inferred() const
{
    u64 n = 0;
    for (const u64 v : inferred_switch_ins)
        n += v;
    return n;
}

sim_dur sched_trace_quirks::median_idle_wakeup_to_switch() const
{
    u64 n = 0;
    for (const auto& [gap, count] : idle_wakeup_to_switch)
        n += count;
    u64 seen = 0;
    for (const auto& [gap, count] : idle_wakeup_to_switch) {
        seen += count;
        if (2 * seen >= n)
            return gap;
    }
    return -1;
}

sched_trace_reader::cpu_state& sched_trace_reader::cpu(int c)
{
    if (static_cast<std::size_t>(c) >= cpus_.size()) {
        cpus_.resize(static_cast<std::size_t>(c) + 1);
        q_.inferred_switch_ins.resize(cpus_.size(), 0);
    }
    max_cpu_ = std::max(max_cpu_, c);
    return cpus_[static_cast<std::size_t>(c)];
}

int sched_trace_reader::nr_cpus() const
{
    return std::max(stats().header_cpus, max_cpu_ + 1); // a "#P:" line may come late
}

void sched_trace_reader::note_comm(int pid, std::string_view comm)
{
    std::string& c = comms_[pid];
    if (c != comm)
        c.assign(comm);
}

bool sched_trace_reader::next(ftrace_event& e)
{
    if (have_held_) {
        e = held_;
        have_held_ = false;
    } else if (!r_.next(e)) {
        return false;
    }
    if (e.inferred)
        return true;
    cpu_state& c = cpu(e.cpu);
    // The TASK-PID column names the task current on the CPU. When it is not the one the
    // recorded switches left there, a switch is missing: emit it first, at this event's time
    // (the latest it can have happened), with the CPU's previous event as the earliest.
    if (c.curr >= 0 && c.curr != e.curr_pid) {
        held_ = e;
        have_held_ = true;
        ftrace_event s = e;
        s.type = ftrace_event_type::sched_switch;
        s.name = "sched_switch";
        s.inferred = true;
        s.ts_lo = c.last_ts;
        s.pid = c.curr;
        s.prev_state = c.curr == 0 ? std::string_view("R") : std::string_view("?");
        s.pid2 = e.curr_pid;
        s.comm = s.comm2 = {};
        s.ctx = ftrace_context::task;
        if (const auto it = comms_.find(c.curr); it != comms_.end())
            s.comm = it->second;
        if (const auto it = comms_.find(e.curr_pid); it != comms_.end())
            s.comm2 = it->second;
        ++q_.inferred_switch_ins[static_cast<std::size_t>(e.cpu)];
        if (c.curr != 0)
            ++q_.inferred_from_task;
        c.curr = e.curr_pid;
        e = s;
        return true;
    }
    if (e.type == ftrace_event_type::sched_switch && e.pid == 0 && c.last_wakeup == e.pid2 &&
        c.last_ts >= 0)
        ++q_.idle_wakeup_to_switch[e.ts - c.last_ts];
    c.last_wakeup = e.type == ftrace_event_type::sched_wakeup && e.curr_pid == 0 ? e.pid : -1;
    c.last_ts = e.ts;
    if (c.curr < 0)
        c.curr = e.curr_pid;
    if (e.curr_pid != 0) {
        const auto it = comms_.find(e.curr_pid);
        if (it != comms_.end() && it->second != e.curr_comm)
            ++q_.stale_task_comms;
    }
    switch (e.type) {
    case ftrace_event_type::sched_switch:
        c.curr = e.pid2;
        note_comm(e.pid, e.comm);
        note_comm(e.pid2, e.comm2);
        break;
    case ftrace_event_type::sched_waking:
    case ftrace_event_type::sched_wakeup:
    case ftrace_event_type::sched_wakeup_new:
    case ftrace_event_type::sched_migrate_task:
    case ftrace_event_type::sched_process_exit:
        note_comm(e.pid, e.comm);
        if (e.type == ftrace_event_type::sched_waking)
            ++q_.wakings_by_context[static_cast<int>(e.ctx) == 0 ? 4 : static_cast<int>(e.ctx) - 1];
        break;
    case ftrace_event_type::sched_process_fork:
        note_comm(e.pid, e.comm);
        note_comm(e.pid2, e.comm2);
        break;
    default:
        break;
    }
    return true;
}

std::string trace_file_sha256(const std::string& path)
{
    require_regular_file(path);
    file_handle f(path);
    sha256 h;
    std::vector<char> buf(chunk_bytes);
    for (std::size_t got; (got = f.read(buf.data(), buf.size())) > 0;)
        h.update(buf.data(), got);
    return h.hex();
}

} // namespace schedlab
