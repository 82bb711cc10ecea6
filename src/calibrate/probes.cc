// SPDX-License-Identifier: GPL-2.0-only
#include "calibrate/probes.h"

#include <fmt/format.h>

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <sstream>
#include <pthread.h>
#include <time.h>
#include <memory>
#include <thread>

namespace schedlab::calibrate {

namespace {

using clock_type = std::chrono::steady_clock;

double ns_between(clock_type::time_point a, clock_type::time_point b)
{
    return std::chrono::duration<double, std::nano>(b - a).count();
}

double seconds_since(clock_type::time_point a)
{
    return std::chrono::duration<double>(clock_type::now() - a).count();
}

/* A cpu_set for one CPU, allocated before any fork (CPU_ALLOC is malloc). */
class one_cpu_set {
public:
    explicit one_cpu_set(int cpu) : cpu_(cpu)
    {
        if (cpu < 0 || cpu >= (1 << 16))
            throw probe_error(fmt::format("CPU {} is out of range", cpu));
        set_ = CPU_ALLOC(cpu + 1);
        size_ = CPU_ALLOC_SIZE(cpu + 1);
        CPU_ZERO_S(size_, set_);
        CPU_SET_S(cpu, size_, set_);
    }
    ~one_cpu_set() { CPU_FREE(set_); }
    one_cpu_set(const one_cpu_set&) = delete;
    one_cpu_set& operator=(const one_cpu_set&) = delete;

    /// Pins the calling thread; async-signal-safe (a bare system call).
    bool pin() const { return sched_setaffinity(0, size_, set_) == 0; }
    void pin_or_throw() const
    {
        if (!pin())
            throw probe_error(fmt::format("cannot run on CPU {}: {}", cpu_, std::strerror(errno)));
    }

private:
    int cpu_;
    cpu_set_t* set_;
    std::size_t size_;
};

/*
 * Runs f on a new thread and rethrows what it threw: probes pin the thread
 * they run on, never the caller's.
 */
template <typename F> auto on_thread(F&& f)
{
    using R = decltype(f());
    std::optional<R> result;
    std::exception_ptr error;
    std::thread t([&] {
        try {
            result.emplace(f());
        } catch (...) {
            error = std::current_exception();
        }
    });
    t.join();
    if (error)
        std::rethrow_exception(error);
    return *result;
}

/* Runs `one_run` (returns a sample) within the budget. */
stats repeat(const budget& b, const std::function<double()>& one_run)
{
    std::vector<double> samples;
    const auto start = clock_type::now();
    while (static_cast<int>(samples.size()) < b.max_runs) {
        samples.push_back(one_run());
        if (static_cast<int>(samples.size()) >= b.min_runs && seconds_since(start) >= b.seconds)
            break;
    }
    return summarise(samples);
}

void close_fd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

struct pipe_pair {
    int fd[2] = {-1, -1};
    pipe_pair()
    {
        if (::pipe2(fd, O_CLOEXEC) != 0)
            throw probe_error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    ~pipe_pair()
    {
        close_fd(fd[0]);
        close_fd(fd[1]);
    }
    pipe_pair(const pipe_pair&) = delete;
    pipe_pair& operator=(const pipe_pair&) = delete;
};

/// An AF_UNIX stream socketpair (fd[1] writes, fd[0] reads), closed with its owner.
struct socket_pair {
    int fd[2] = {-1, -1};
    socket_pair()
    {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) != 0)
            throw probe_error(fmt::format("socketpair: {}", std::strerror(errno)));
    }
    ~socket_pair()
    {
        close_fd(fd[0]);
        close_fd(fd[1]);
    }
    socket_pair(const socket_pair&) = delete;
    socket_pair& operator=(const socket_pair&) = delete;
};

void write_all(int fd, const char* what)
{
    const char c = 'x';
    if (::write(fd, &c, 1) != 1)
        throw probe_error(fmt::format("{}: write: {}", what, std::strerror(errno)));
}

void read_one(int fd, const char* what)
{
    char c;
    const ssize_t r = ::read(fd, &c, 1);
    if (r != 1)
        throw probe_error(fmt::format("{}: read: {}", what, r == 0 ? "end of file" : std::strerror(errno)));
}

/* Blocks SIGPIPE on this (probe) thread so a dead child gives EPIPE, not a killed process. */
void block_sigpipe()
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &s, nullptr);
}

void drain_sigpipe()
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    const timespec zero{0, 0};
    while (sigtimedwait(&s, nullptr, &zero) == SIGPIPE) {
    }
}

/* The pipe ping-pong child: pin, say whether that worked, then echo bytes until EOF. */
[[noreturn]] void ping_pong_child(const one_cpu_set& cpu, int in, int out, bool batch = false)
{
    const sched_param param{};
    char c = cpu.pin() && (!batch || sched_setscheduler(0, SCHED_BATCH, &param) == 0) ? 'P' : 'X';
    if (::write(out, &c, 1) != 1 || c == 'X')
        _exit(3);
    for (;;) {
        if (::read(in, &c, 1) != 1)
            _exit(0);
        if (::write(out, &c, 1) != 1)
            _exit(0);
    }
}

double pipe_round_trip_once(const one_cpu_set& a, const one_cpu_set& b, int cpu_b, int iters,
                            bool waking_write = false, bool batch_child = false,
                            bool settle = false, const std::function<void(bool)>& around_timed = {})
{
    pipe_pair to_child, to_parent;
    a.pin_or_throw();
    const pid_t pid = ::fork();
    if (pid < 0)
        throw probe_error(fmt::format("fork: {}", std::strerror(errno)));
    if (pid == 0) {
        ::close(to_child.fd[1]);
        ::close(to_parent.fd[0]);
        ping_pong_child(b, to_child.fd[0], to_parent.fd[1], batch_child);
    }
    close_fd(to_child.fd[0]);
    close_fd(to_parent.fd[1]);
    double ns = -1;
    std::string failure;
    try {
        char status = 0;
        if (::read(to_parent.fd[0], &status, 1) != 1 || status != 'P')
            throw probe_error(fmt::format("the ping-pong child cannot run on CPU {}", cpu_b));
        for (int i = 0; i < std::min(iters / 10 + 10, 500); ++i) { // warm up
            write_all(to_child.fd[1], "pipe ping-pong");
            read_one(to_parent.fd[0], "pipe ping-pong");
        }
        // Each round trip (or, waking_write, each waking write()) timed alone and the run's
        // median taken: another task's slice on either CPU (milliseconds, on a machine other
        // work loads) or a VM's host preemption lands in a few trips and would dominate their
        // mean (typical_per_op()).
        std::vector<double> samples;
        samples.reserve(static_cast<std::size_t>(iters));
        if (around_timed)
            around_timed(true);
        for (int i = 0; i < iters; ++i) {
            if (settle) {
                // Let the partner finish blocking first: a wakeup that finds it still
                // descheduling (on_cpu) on a CPU with one other task goes through the
                // wake list and an IPI instead (ttwu_queue_cond()'s WF_ON_CPU case),
                // which is not the direct remote enqueue this mode times. Bimodal
                // medians (2.6 or 13 us) came from that race before.
                const auto until = clock_type::now() + std::chrono::microseconds(50);
                while (clock_type::now() < until) {
                }
            }
            const auto t0 = clock_type::now();
            write_all(to_child.fd[1], "pipe ping-pong");
            if (waking_write)
                samples.push_back(ns_between(t0, clock_type::now()));
            read_one(to_parent.fd[0], "pipe ping-pong");
            if (!waking_write)
                samples.push_back(ns_between(t0, clock_type::now()));
        }
        if (around_timed)
            around_timed(false);
        ns = typical_per_op(samples, 1);
    } catch (const probe_error& e) {
        failure = e.what();
    }
    close_fd(to_child.fd[1]); // the child reads EOF and exits
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    drain_sigpipe();
    if (!failure.empty())
        throw probe_error(failure);
    return ns;
}

/* A cache line of its own. */
struct alignas(128) padded_atomic {
    std::atomic<std::uint64_t> v{0};
};

std::atomic<std::uint64_t> sink; // keeps the read loops from being optimised away

std::uint64_t sum_sequential(const std::uint64_t* p, std::size_t n)
{
    std::uint64_t a = 0, b = 0, c = 0, d = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) { // one load per 16 bytes is plenty to stream every line
        a += p[i];
        b += p[i + 2];
        c += p[i + 4];
        d += p[i + 6];
    }
    for (; i < n; ++i)
        a += p[i];
    return a + b + c + d;
}

/* Page-aligned, zero-filled memory, optionally first-touched by the caller. */
class big_buffer {
public:
    explicit big_buffer(std::size_t bytes) : bytes_(bytes)
    {
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw probe_error(fmt::format("cannot map {} MiB: {}", bytes >> 20, std::strerror(errno)));
        p_ = static_cast<std::uint64_t*>(p);
    }
    ~big_buffer() { ::munmap(p_, bytes_); }
    big_buffer(const big_buffer&) = delete;
    big_buffer& operator=(const big_buffer&) = delete;

    std::uint64_t* data() const { return p_; }
    std::size_t words() const { return bytes_ / sizeof(std::uint64_t); }
    /// Writes every word of [from, to) so its pages are allocated by (and near) the caller.
    void touch(std::size_t from, std::size_t to) const
    {
        for (std::size_t i = from; i < to; ++i)
            p_[i] = i;
    }

private:
    std::size_t bytes_;
    std::uint64_t* p_;
};

/* A fixed shuffle (xorshift, seed constant) of 0..n-1. */
std::vector<std::uint32_t> shuffled(std::uint32_t n)
{
    std::vector<std::uint32_t> v(n);
    for (std::uint32_t i = 0; i < n; ++i)
        v[i] = i;
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (std::uint32_t i = n; i > 1; --i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::swap(v[i - 1], v[x % i]);
    }
    return v;
}

} // namespace

std::vector<std::pair<int, cpu_ticks>> parse_proc_stat(const std::string& text)
{
    std::vector<std::pair<int, cpu_ticks>> out;
    std::istringstream in(text);
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
        // "cpuN user nice system idle iowait irq softirq steal [guest guest_nice]"
        if (line.rfind("cpu", 0) != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9')
            continue;
        std::istringstream words(line.substr(3));
        int cpu = -1;
        long long v[8];
        words >> cpu;
        for (long long& x : v)
            words >> x;
        if (!words || cpu < 0)
            throw probe_error(fmt::format("/proc/stat line {}: not 'cpuN' and 8 times: {}",
                                          line_no, line));
        out.push_back({cpu, cpu_ticks{v[0] + v[1] + v[2] + v[5] + v[6], v[3] + v[4], v[7]}});
    }
    return out;
}

std::vector<std::pair<int, cpu_ticks>> read_proc_stat()
{
    std::ifstream in("/proc/stat");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return parse_proc_stat(text.str());
    } catch (const probe_error&) {
        return {};
    }
}

std::optional<double> idle_share(const std::vector<std::pair<int, cpu_ticks>>& before,
                                 const std::vector<std::pair<int, cpu_ticks>>& after,
                                 const std::vector<int>& cpus)
{
    auto find = [](const auto& v, int cpu) -> const cpu_ticks* {
        for (const auto& [c, t] : v)
            if (c == cpu)
                return &t;
        return nullptr;
    };
    long long idle = 0, total = 0;
    for (const int cpu : cpus) {
        const cpu_ticks* a = find(before, cpu);
        const cpu_ticks* b = find(after, cpu);
        if (!a || !b)
            return std::nullopt;
        idle += b->idle - a->idle;
        total += (b->idle - a->idle) + (b->busy - a->busy) + (b->steal - a->steal);
    }
    if (total <= 0)
        return std::nullopt;
    return static_cast<double>(idle) / static_cast<double>(total);
}

double typical_per_op(const std::vector<double>& chunk_ns, int ops_per_chunk)
{
    if (ops_per_chunk < 1)
        throw probe_error("typical_per_op: no operations per chunk");
    std::vector<double> per_op;
    per_op.reserve(chunk_ns.size());
    for (const double ns : chunk_ns)
        per_op.push_back(ns / ops_per_chunk);
    return summarise(std::move(per_op)).median;
}

stats summarise(std::vector<double> samples)
{
    if (samples.empty())
        throw probe_error("no samples");
    std::sort(samples.begin(), samples.end());
    stats s;
    const std::size_t n = samples.size();
    s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    s.min = samples.front();
    s.max = samples.back();
    s.runs = static_cast<int>(n);
    return s;
}

std::vector<int> allowed_cpus()
{
    std::vector<int> out;
    for (int ncpus = 1024; ncpus <= (1 << 16); ncpus *= 4) {
        cpu_set_t* set = CPU_ALLOC(ncpus);
        const std::size_t size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            for (int c = 0; c < ncpus; ++c)
                if (CPU_ISSET_S(c, size, set))
                    out.push_back(c);
            CPU_FREE(set);
            return out;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            break;
    }
    throw probe_error(fmt::format("sched_getaffinity: {}", std::strerror(errno)));
}

pipe_syscalls probe_pipe_syscalls(int cpu, int ops, const budget& b)
{
    return on_thread([&] {
        const one_cpu_set where(cpu);
        where.pin_or_throw();
        pipe_pair p;
        ops = std::clamp(ops, 1, 4096); // stays below the 64 KiB pipe capacity: never blocks
        std::vector<double> writes, reads;
        const auto start = clock_type::now();
        for (int run = 0; run <= b.max_runs; ++run) { // run 0 warms up
            const auto t0 = clock_type::now();
            for (int i = 0; i < ops; ++i)
                write_all(p.fd[1], "pipe write");
            const auto t1 = clock_type::now();
            for (int i = 0; i < ops; ++i)
                read_one(p.fd[0], "pipe read");
            const auto t2 = clock_type::now();
            if (run == 0)
                continue; // warm-up
            writes.push_back(ns_between(t0, t1) / ops);
            reads.push_back(ns_between(t1, t2) / ops);
            if (static_cast<int>(writes.size()) >= b.min_runs && seconds_since(start) >= b.seconds)
                break;
        }
        return pipe_syscalls{summarise(writes), summarise(reads)};
    });
}

socket_syscalls probe_socket_syscalls(int cpu, int channels, int depth, int bytes,
                                      const budget& b)
{
    return on_thread([&] {
        const one_cpu_set where(cpu);
        where.pin_or_throw();
        channels = std::clamp(channels, 1, 256);
        depth = std::clamp(depth, 1, 200);   // 200 x (100 B + skb overhead) fits the 208 KiB sndbuf
        bytes = std::clamp(bytes, 1, 256);
        std::vector<socket_pair> socks(static_cast<std::size_t>(channels));
        std::vector<char> buf(static_cast<std::size_t>(bytes), 'x');
        const auto n = static_cast<double>(channels) * depth;
        std::vector<double> writes, reads;
        const auto start = clock_type::now();
        for (int run = 0; run <= b.max_runs; ++run) { // run 0 warms up
            const auto t0 = clock_type::now();
            for (int d = 0; d < depth; ++d)
                for (auto& sp : socks)
                    if (::write(sp.fd[1], buf.data(), buf.size()) != static_cast<ssize_t>(buf.size()))
                        throw probe_error(fmt::format("socket write: {}", std::strerror(errno)));
            const auto t1 = clock_type::now();
            for (int d = 0; d < depth; ++d)
                for (auto& sp : socks)
                    if (::read(sp.fd[0], buf.data(), buf.size()) != static_cast<ssize_t>(buf.size()))
                        throw probe_error(fmt::format("socket read: {}", std::strerror(errno)));
            const auto t2 = clock_type::now();
            if (run == 0)
                continue;
            writes.push_back(ns_between(t0, t1) / n);
            reads.push_back(ns_between(t1, t2) / n);
            if (static_cast<int>(writes.size()) >= b.min_runs && seconds_since(start) >= b.seconds)
                break;
        }
        return socket_syscalls{summarise(writes), summarise(reads)};
    });
}

socket_cross_read probe_socket_cross_read(int cpu_a, int cpu_b, int channels, int depth,
                                          int bytes, const budget& b)
{
    channels = std::clamp(channels, 1, 256);
    depth = std::clamp(depth, 1, 200); // fits the sndbuf: the writer never blocks
    bytes = std::clamp(bytes, 1, 256);
    std::vector<socket_pair> socks(static_cast<std::size_t>(channels));
    const auto n = static_cast<double>(channels) * depth;
    auto fill = [&](int cpu) {
        on_thread([&] {
            const one_cpu_set where(cpu);
            where.pin_or_throw();
            std::vector<char> buf(static_cast<std::size_t>(bytes), 'x');
            for (int d = 0; d < depth; ++d)
                for (auto& sp : socks)
                    if (::write(sp.fd[1], buf.data(), buf.size()) != static_cast<ssize_t>(buf.size()))
                        throw probe_error(fmt::format("socket write: {}", std::strerror(errno)));
            return 0;
        });
    };
    return on_thread([&] {
        const one_cpu_set reader(cpu_a);
        reader.pin_or_throw();
        std::vector<char> buf(static_cast<std::size_t>(bytes));
        auto drain = [&] {
            const auto t0 = clock_type::now();
            for (int d = 0; d < depth; ++d)
                for (auto& sp : socks)
                    if (::read(sp.fd[0], buf.data(), buf.size()) != static_cast<ssize_t>(buf.size()))
                        throw probe_error(fmt::format("socket read: {}", std::strerror(errno)));
            return ns_between(t0, clock_type::now()) / n;
        };
        fill(cpu_a); // warm-up
        drain();
        std::vector<double> local, remote;
        const auto start = clock_type::now();
        while (static_cast<int>(local.size()) < b.max_runs) {
            fill(cpu_a);
            local.push_back(drain());
            fill(cpu_b);
            remote.push_back(drain());
            if (static_cast<int>(local.size()) >= b.min_runs && seconds_since(start) >= b.seconds)
                break;
        }
        return socket_cross_read{summarise(local), summarise(remote)};
    });
}

stats probe_pipe_round_trip(int cpu_a, int cpu_b, int iters, const budget& b, bool busy_target,
                            bool waking_write)
{
    return on_thread([&] {
        block_sigpipe();
        const one_cpu_set a(cpu_a), bset(cpu_b);
        /* Both CPUs kept busy by SCHED_IDLE spinners: each wakeup preempts one (a
         * reschedule IPI to a running CPU) instead of bringing a CPU out of idle. */
        std::atomic<bool> stop{false};
        std::atomic<int> spinning{0}, failed{0};
        int failed_errno[2] = {0, 0};
        std::vector<std::thread> spinners;
        struct joiner {
            std::atomic<bool>& stop;
            std::vector<std::thread>& threads;
            ~joiner()
            {
                stop.store(true);
                for (auto& t : threads)
                    t.join();
            }
        } join_spinners{stop, spinners};
        if (busy_target) {
            for (int i = 0; i < 2; ++i)
                spinners.emplace_back([&, i] {
                    const sched_param param{};
                    if (!(i ? bset : a).pin() || sched_setscheduler(0, SCHED_IDLE, &param) != 0) {
                        failed_errno[i] = errno;
                        failed.fetch_add(1);
                        return;
                    }
                    spinning.fetch_add(1);
                    while (!stop.load(std::memory_order_relaxed)) {
                    }
                });
            while (spinning.load() + failed.load() < 2)
                std::this_thread::yield();
            if (failed.load() > 0)
                throw probe_error(fmt::format("cannot keep CPUs {} and {} busy with SCHED_IDLE "
                                              "threads: {}",
                                              cpu_a, cpu_b,
                                              std::strerror(failed_errno[0] ? failed_errno[0]
                                                                            : failed_errno[1])));
        }
        /* A short trial sizes the runs: a slow wakeup path (a VM waking an idle vCPU can
         * take 100 us) must not stretch the probe far past its budget. */
        /* The waking write()s with both sides SCHED_BATCH: a BATCH wakee never preempts its
         * waker (check_preempt_wakeup_fair()), so on one CPU the timed write() is the wakeup
         * alone, not the wakeup and the partner's whole turn run at its return to user space
         * (which made the same-CPU write dearer than the cross-CPU one on a guest whose IPI
         * send does not exit). The partner's reply does not preempt this thread either, so
         * every write finds the partner blocked in read(). */
        if (waking_write) {
            const sched_param param{};
            if (sched_setscheduler(0, SCHED_BATCH, &param) != 0)
                throw probe_error(fmt::format("cannot make the writer SCHED_BATCH: {}",
                                              std::strerror(errno)));
        }
        const double per_trip = pipe_round_trip_once(a, bset, cpu_b, 20);
        const double fit = b.seconds / std::max(b.min_runs, 1) / std::max(per_trip, 1.0) * 1e9;
        iters = std::clamp(static_cast<int>(fit), std::min(20, std::max(iters, 1)), std::max(iters, 1));
        return repeat(b, [&] {
            return pipe_round_trip_once(a, bset, cpu_b, iters, waking_write, waking_write);
        });
    });
}

ring_buffer_counts parse_ring_buffer_stats(const std::string& text)
{
    ring_buffer_counts c;
    bool entries = false, overrun = false;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        long long v = 0;
        if (std::sscanf(line.c_str(), "entries: %lld", &v) == 1)
            c.entries = v, entries = true;
        else if (std::sscanf(line.c_str(), "overrun: %lld", &v) == 1)
            c.overrun = v, overrun = true;
    }
    if (!entries || !overrun)
        throw probe_error(fmt::format("the ring buffer's stats have no `{}:` line",
                                      entries ? "overrun" : "entries"));
    return c;
}

const char* const traced_sched_events[7] = {"sched:sched_switch",       "sched:sched_waking",
                                            "sched:sched_wakeup",       "sched:sched_wakeup_new",
                                            "sched:sched_migrate_task", "sched:sched_process_fork",
                                            "sched:sched_process_exit"};

namespace {

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw probe_error(fmt::format("cannot read {}", path));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/* Writes `text` to a tracefs file (truncating it unless `append`). */
void write_text(const std::string& path, const std::string& text, bool append = false)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
    if (fd < 0)
        throw probe_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(text.size()))
        throw probe_error(
            fmt::format("cannot write '{}' to {}: {}", text, path, std::strerror(err)));
}

std::string first_word(const std::string& s)
{
    std::istringstream in(s);
    std::string w;
    in >> w;
    return w;
}

} // namespace

tracepoint_cost probe_tracepoint_cost(int cpu, int iters, const budget& b,
                                      const std::string& tracefs)
{
    const std::string on_path = tracefs + "/tracing_on";
    if (::access(on_path.c_str(), W_OK) != 0)
        throw probe_error(fmt::format("{} is not writable ({}): tracefs needs root and a mount",
                                      on_path, std::strerror(errno)));
    if (first_word(read_text(on_path)) != "0")
        throw probe_error(fmt::format("{} is 1: tracing is in use, not touched", on_path));
    if (!first_word(read_text(tracefs + "/set_event")).empty())
        throw probe_error(fmt::format("{}/set_event lists enabled events: tracing is in use, "
                                      "not touched",
                                      tracefs));
    const std::string cpu_dir = fmt::format("{}/per_cpu/cpu{}", tracefs, cpu);
    const std::string tracer = first_word(read_text(tracefs + "/current_tracer"));
    const std::string buffer_kb = first_word(read_text(cpu_dir + "/buffer_size_kb"));
    struct restore {
        const std::string &tracefs, &cpu_dir, &tracer, &buffer_kb;
        ~restore()
        {
            try {
                write_text(tracefs + "/tracing_on", "0");
                write_text(tracefs + "/set_event", "");
                write_text(tracefs + "/trace", "");
                write_text(tracefs + "/current_tracer", tracer);
                write_text(cpu_dir + "/buffer_size_kb", buffer_kb);
            } catch (const probe_error&) {
            }
        }
    } restore_after{tracefs, cpu_dir, tracer, buffer_kb};
    write_text(tracefs + "/current_tracer", "nop");
    // About 5 events of ~50 bytes a round trip (with the warm-up), twice over.
    write_text(cpu_dir + "/buffer_size_kb",
               std::to_string(std::max<long long>(1024, 2LL * (iters + 600) * 5 * 64 / 1024)));

    return on_thread([&] {
        block_sigpipe();
        const one_cpu_set a(cpu);
        std::vector<double> untraced, traced, per_event, per_trip;
        const auto start = clock_type::now();
        while (static_cast<int>(per_event.size()) < b.max_runs) {
            write_text(tracefs + "/set_event", "");
            untraced.push_back(pipe_round_trip_once(a, a, cpu, iters));
            for (const char* e : traced_sched_events)
                write_text(tracefs + "/set_event", std::string(e) + "\n", true);
            write_text(tracefs + "/trace", "");
            traced.push_back(
                pipe_round_trip_once(a, a, cpu, iters, false, false, false,
                                     [&](bool on) { write_text(on_path, on ? "1" : "0"); }));
            const ring_buffer_counts c = parse_ring_buffer_stats(read_text(cpu_dir + "/stats"));
            if (c.overrun > 0)
                throw probe_error(
                    fmt::format("CPU {}'s ring buffer overran ({} events lost)", cpu, c.overrun));
            const double events = static_cast<double>(c.entries) / iters;
            if (events < 1)
                throw probe_error(fmt::format("{} events in CPU {}'s ring buffer for {} round "
                                              "trips: the events were not recorded",
                                              c.entries, cpu, iters));
            per_trip.push_back(events);
            per_event.push_back((traced.back() - untraced.back()) / events);
            if (static_cast<int>(per_event.size()) >= b.min_runs &&
                seconds_since(start) >= b.seconds)
                break;
        }
        tracepoint_cost r;
        r.untraced_ns = summarise(untraced);
        r.traced_ns = summarise(traced);
        r.per_event_ns = summarise(per_event);
        r.events_per_round_trip = summarise(per_trip).median;
        return r;
    });
}

remote_wakeup probe_remote_wakeup(int cpu_a, int cpu_b, int iters, const budget& b)
{
    return on_thread([&] {
        block_sigpipe();
        const one_cpu_set a(cpu_a), bset(cpu_b);
        iters = std::max(iters, 1);
        remote_wakeup out;
        // The partner on the writer's own CPU: a local wakeup that does not preempt.
        out.local =
            repeat(b, [&] { return pipe_round_trip_once(a, a, cpu_a, iters, true, true, true); });
        // The partner on cpu_b, which a nice-0 spinner keeps busy.
        std::atomic<bool> stop{false}, started{false}, failed{false};
        std::thread spinner([&] {
            if (!bset.pin())
                failed.store(true);
            started.store(true);
            while (!failed.load() && !stop.load(std::memory_order_relaxed)) {
            }
        });
        while (!started.load())
            std::this_thread::yield();
        try {
            if (failed.load())
                throw probe_error(fmt::format("cannot keep CPU {} busy: {}", cpu_b,
                                              std::strerror(errno)));
            out.remote =
                repeat(b, [&] { return pipe_round_trip_once(a, bset, cpu_b, iters, true, true, true); });
        } catch (...) {
            stop.store(true);
            spinner.join();
            throw;
        }
        stop.store(true);
        spinner.join();
        return out;
    });
}

stats probe_line_round_trip(int cpu_a, int cpu_b, int iters, const budget& b)
{
    constexpr int line_chunk = 64;
    const one_cpu_set a(cpu_a), bset(cpu_b);
    iters = std::max(iters, 1);
    const double run_limit_s = std::max(2.0, b.seconds); // one run never spins longer than this
    return on_thread([&] { return repeat(b, [&] {
        padded_atomic line, ready, abort;
        std::string failure;
        std::thread partner([&] {
            if (!bset.pin()) {
                failure = fmt::format("cannot run on CPU {}: {}", cpu_b, std::strerror(errno));
                abort.v.store(1);
                return;
            }
            ready.v.fetch_add(1);
            for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(iters); ++i) {
                unsigned spins = 0;
                while (line.v.load(std::memory_order_acquire) != 2 * i + 1)
                    if (++spins % 65536 == 0 && abort.v.load(std::memory_order_relaxed))
                        return;
                line.v.store(2 * i + 2, std::memory_order_release);
            }
        });
        double ns = -1;
        try {
            a.pin_or_throw();
            const auto wait_from = clock_type::now();
            while (ready.v.load() == 0 && !abort.v.load()) {
                if (seconds_since(wait_from) > run_limit_s)
                    throw probe_error("the cache-line partner thread did not start");
                std::this_thread::yield();
            }
            if (abort.v.load())
                throw probe_error(failure);
            // Timed in chunks of line_chunk round trips (a clock read per trip would weigh on
            // a ~100 ns trip), the run's figure the median chunk's: a chunk in which another
            // task ran on either CPU (a slice of milliseconds on a loaded machine) is an
            // outlier, where the mean of the whole run counted it (typical_per_op()).
            std::vector<double> chunks;
            chunks.reserve(static_cast<std::size_t>(iters / line_chunk + 1));
            const auto t0 = clock_type::now();
            auto c0 = t0;
            for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(iters); ++i) {
                line.v.store(2 * i + 1, std::memory_order_release);
                unsigned spins = 0;
                while (line.v.load(std::memory_order_acquire) != 2 * i + 2)
                    if (++spins % 65536 == 0 && seconds_since(t0) > run_limit_s)
                        throw probe_error(fmt::format("cache-line ping-pong between CPUs {} and "
                                                      "{} made no progress for {} s",
                                                      cpu_a, cpu_b, run_limit_s));
                if ((i + 1) % line_chunk == 0) {
                    const auto c1 = clock_type::now();
                    chunks.push_back(ns_between(c0, c1));
                    c0 = c1;
                }
            }
            ns = chunks.empty() ? ns_between(t0, clock_type::now()) / iters
                                : typical_per_op(chunks, line_chunk);
        } catch (...) {
            abort.v.store(1);
            partner.join();
            throw;
        }
        partner.join();
        return ns;
    }); });
}

stats probe_random_read(int reader_cpu, int owner_cpu, std::size_t bytes, bool warm,
                        const budget& b)
{
    constexpr std::size_t line_words = 64 / sizeof(std::uint64_t);
    constexpr std::uint32_t window_lines = (2u << 20) / 64;
    bytes = std::max<std::size_t>(bytes, 64 * 1024) / 64 * 64;
    const big_buffer buf(bytes);
    const std::size_t lines = bytes / 64;
    const std::uint32_t window = static_cast<std::uint32_t>(std::min<std::size_t>(lines, window_lines));
    const std::vector<std::uint32_t> order = shuffled(window);
    on_thread([&] {
        const one_cpu_set owner(owner_cpu);
        owner.pin_or_throw();
        buf.touch(0, buf.words());
        return 0;
    });
    return on_thread([&] {
        const one_cpu_set reader(reader_cpu);
        reader.pin_or_throw();
        auto pass = [&] {
            std::uint64_t sum = 0;
            const std::uint64_t* p = buf.data();
            for (std::size_t base = 0; base + window <= lines; base += window)
                for (std::uint32_t i = 0; i < window; ++i)
                    sum += p[(base + order[i]) * line_words];
            sink.store(sum, std::memory_order_relaxed);
        };
        const std::size_t read_lines = lines / window * window;
        if (warm)
            pass();
        return repeat(b, [&] {
            const auto t0 = clock_type::now();
            pass();
            return ns_between(t0, clock_type::now()) / (static_cast<double>(read_lines) * 64 / 1024);
        });
    });
}

stats probe_pointer_chase(int cpu, std::size_t bytes, const budget& b)
{
    constexpr std::size_t line_words = 64 / sizeof(std::uint64_t);
    bytes = std::min<std::size_t>(std::max<std::size_t>(bytes, 64 * 1024), 1u << 30) / 64 * 64;
    const std::size_t lines = bytes / 64;
    const big_buffer buf(bytes);
    // Best effort: where THP is off the chase also pays 4 KiB TLB misses, which the
    // kernel's slab objects (in the direct map's large pages) do not.
    (void)::madvise(buf.data(), bytes, MADV_HUGEPAGE);
    const std::vector<std::uint32_t> order = shuffled(static_cast<std::uint32_t>(lines));
    return on_thread([&] {
        const one_cpu_set where(cpu);
        where.pin_or_throw();
        std::uint64_t* p = buf.data();
        // One cycle through every line: order[i] -> order[i + 1], the last back to the first.
        for (std::size_t i = 0; i < lines; ++i)
            p[order[i] * line_words] = order[(i + 1) % lines] * line_words;
        constexpr int chunk = 1 << 14, chunks = 64; // ~0.2 ms a chunk from the LLC
        std::uint64_t at = 0;
        auto chase = [&](std::size_t n) {
            for (std::size_t i = 0; i < n; ++i)
                at = p[at];
        };
        chase(lines); // warm: every line once, into whatever cache holds the buffer
        // A run's figure is its median chunk (typical_per_op()): a chunk into which another
        // task's slice fell finds the buffer partly evicted.
        const stats s = repeat(b, [&] {
            std::vector<double> chunk_ns;
            chunk_ns.reserve(chunks);
            for (int c = 0; c < chunks; ++c) {
                const auto t0 = clock_type::now();
                chase(chunk);
                chunk_ns.push_back(ns_between(t0, clock_type::now()));
            }
            return typical_per_op(chunk_ns, chunk);
        });
        sink.store(at, std::memory_order_relaxed);
        return s;
    });
}

stats probe_stream_read(const std::vector<int>& cpus, std::size_t bytes, const budget& b)
{
    if (cpus.empty())
        throw probe_error("no CPUs to read with");
    const std::size_t n = cpus.size();
    bytes = std::max<std::size_t>(bytes, n * 4096) / (n * 4096) * (n * 4096);
    const big_buffer buf(bytes);
    const std::size_t slice = buf.words() / n;
    std::vector<std::unique_ptr<one_cpu_set>> sets;
    for (int c : cpus)
        sets.push_back(std::make_unique<one_cpu_set>(c));

    /* One run: every thread reads its slice once; the span from the first start to the last end. */
    auto team = [&](bool touch_only) {
        std::vector<clock_type::time_point> begin(n), end(n);
        std::vector<std::string> failures(n);
        std::atomic<std::size_t> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < n; ++t)
            threads.emplace_back([&, t] {
                const bool pinned = sets[t]->pin();
                if (!pinned)
                    failures[t] = fmt::format("cannot run on CPU {}: {}", cpus[t], std::strerror(errno));
                ready.fetch_add(1);
                while (!go.load())
                    std::this_thread::yield();
                if (!pinned)
                    return;
                begin[t] = clock_type::now();
                if (touch_only)
                    buf.touch(t * slice, (t + 1) * slice);
                else
                    sink.store(sum_sequential(buf.data() + t * slice, slice),
                               std::memory_order_relaxed);
                end[t] = clock_type::now();
            });
        while (ready.load() < n)
            std::this_thread::yield();
        go.store(true);
        for (auto& th : threads)
            th.join();
        for (const auto& f : failures)
            if (!f.empty())
                throw probe_error(f);
        const auto first = *std::min_element(begin.begin(), begin.end());
        const auto last = *std::max_element(end.begin(), end.end());
        const double seconds = ns_between(first, last) / 1e9;
        return static_cast<double>(slice * n * sizeof(std::uint64_t)) / seconds / 1e6;
    };
    team(true); // first touch, by the readers, so the pages sit on their node
    return repeat(b, [&] { return team(false); });
}

stats probe_pair_share(int cpu_a, int cpu_b, double seconds_per_phase, const budget& b)
{
    const one_cpu_set a(cpu_a), bset(cpu_b);
    /* Iterations of a loop with four independent integer chains in `seconds`. */
    auto spin = [](double seconds) {
        std::uint64_t x0 = 1, x1 = 2, x2 = 3, x3 = 4, n = 0;
        const auto t0 = clock_type::now();
        for (;;) {
            for (int i = 0; i < 4096; ++i) {
                x0 = x0 * 6364136223846793005ULL + 1;
                x1 ^= x1 << 7;
                x2 += x2 >> 3 | 1;
                x3 = (x3 << 1) ^ x0;
            }
            n += 4096;
            if (seconds_since(t0) >= seconds)
                break;
        }
        sink.store(x0 + x1 + x2 + x3, std::memory_order_relaxed);
        return static_cast<double>(n) / seconds_since(t0);
    };
    return repeat(b, [&] {
        const double alone = on_thread([&] {
            a.pin_or_throw();
            return spin(seconds_per_phase);
        });
        double rate_a = 0, rate_b = 0;
        std::string failure;
        std::thread other([&] {
            if (!bset.pin())
                failure = fmt::format("cannot run on CPU {}", cpu_b);
            else
                rate_b = spin(seconds_per_phase);
        });
        try {
            rate_a = on_thread([&] {
                a.pin_or_throw();
                return spin(seconds_per_phase);
            });
        } catch (...) {
            other.join();
            throw;
        }
        other.join();
        if (!failure.empty())
            throw probe_error(failure);
        return 100.0 * (rate_a + rate_b) / 2 / alone;
    });
}

double cputime_ns(clockid_t clock)
{
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

/*
 * One batch of `n` threads created from the calling thread (pinned to its CPU), each
 * pinned to `child_cpu`, one after another: each is created once the previous one has
 * started (it reports through a pipe, then waits for the batch to end). Every thread
 * gets a fresh stack (mmap()ed here, 64 KiB: perf bench's workers ask for
 * PTHREAD_STACK_MIN), so no start reuses memory an earlier thread warmed, as none does
 * in a benchmark's creation burst (glibc would reuse the stacks of joined threads).
 * Returns the creator's CPU time per pthread_create() (with the stack's mmap()) and each
 * thread's own CPU time at its start routine's first line.
 */
void create_thread_batch(int child_cpu, int n, std::vector<double>& create_ns,
                         std::vector<double>& start_ns)
{
    constexpr std::size_t stack_bytes = 64 << 10;
    struct shared {
        pipe_pair gate, report;
        std::vector<double> start;
    } sh;
    sh.start.assign(static_cast<std::size_t>(n), -1);
    struct arg {
        shared* sh;
        std::size_t i;
    };
    std::vector<arg> args(static_cast<std::size_t>(n));
    std::vector<pthread_t> threads;
    std::vector<void*> stacks;
    threads.reserve(static_cast<std::size_t>(n));
    if (child_cpu < 0 || child_cpu >= (1 << 16))
        throw probe_error(fmt::format("CPU {} is out of range", child_cpu));
    std::string failure;
    cpu_set_t* set = CPU_ALLOC(child_cpu + 1);
    const std::size_t size = CPU_ALLOC_SIZE(child_cpu + 1);
    CPU_ZERO_S(size, set);
    CPU_SET_S(child_cpu, size, set);
    for (int i = 0; i < n && failure.empty(); ++i) {
        // Timed from the stack's mmap(), which pthread_create() does itself otherwise.
        const double t0 = cputime_ns(CLOCK_THREAD_CPUTIME_ID);
        void* stack = ::mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) {
            failure = fmt::format("mmap of a thread stack: {}", std::strerror(errno));
            break;
        }
        stacks.push_back(stack);
        pthread_attr_t attr;
        if (::pthread_attr_init(&attr) != 0) {
            failure = "pthread_attr_init failed";
            break;
        }
        int e = ::pthread_attr_setaffinity_np(&attr, size, set);
        if (e != 0)
            failure = fmt::format("cannot create a thread on CPU {}: {}", child_cpu, std::strerror(e));
        else if ((e = ::pthread_attr_setstack(&attr, stack, stack_bytes)) != 0)
            failure = fmt::format("pthread_attr_setstack: {}", std::strerror(e));
        if (!failure.empty()) {
            ::pthread_attr_destroy(&attr);
            break;
        }
        args[static_cast<std::size_t>(i)] = {&sh, static_cast<std::size_t>(i)};
        pthread_t t;
        e = ::pthread_create(
            &t, &attr,
            [](void* a) -> void* {
                auto* x = static_cast<arg*>(a);
                x->sh->start[x->i] = cputime_ns(CLOCK_THREAD_CPUTIME_ID);
                char c = 'x';
                if (::write(x->sh->report.fd[1], &c, 1) != 1)
                    return nullptr;
                while (::read(x->sh->gate.fd[0], &c, 1) < 0 && errno == EINTR) {
                }
                return nullptr;
            },
            &args[static_cast<std::size_t>(i)]);
        const double t1 = cputime_ns(CLOCK_THREAD_CPUTIME_ID);
        ::pthread_attr_destroy(&attr);
        if (e != 0) {
            failure = fmt::format("pthread_create: {}", std::strerror(e));
            break;
        }
        threads.push_back(t);
        create_ns.push_back(t1 - t0);
        char c;
        if (::read(sh.report.fd[0], &c, 1) != 1)
            failure = fmt::format("pipe read: {}", std::strerror(errno));
    }
    CPU_FREE(set);
    for (std::size_t i = 0; i < threads.size(); ++i)
        if (::write(sh.gate.fd[1], "x", 1) != 1)
            failure = fmt::format("pipe write: {}", std::strerror(errno));
    for (pthread_t t : threads)
        ::pthread_join(t, nullptr);
    for (void* stack : stacks)
        ::munmap(stack, stack_bytes);
    if (!failure.empty())
        throw probe_error(failure);
    for (std::size_t i = 0; i < threads.size(); ++i)
        if (sh.start[i] >= 0)
            start_ns.push_back(sh.start[i]);
}

task_creation probe_task_creation(int cpu_a, int cpu_b, int creations, const budget& b)
{
    return on_thread([&] {
        const one_cpu_set where(cpu_a);
        where.pin_or_throw();
        creations = std::clamp(creations, 1, 1000);
        std::vector<double> create, start, start_remote, fork_ns, fork_start;
        const auto begin = clock_type::now();
        for (int run = 0; run < b.max_runs; ++run) {
            create_thread_batch(cpu_a, creations, create, start);
            if (cpu_b >= 0) {
                std::vector<double> unused;
                create_thread_batch(cpu_b, creations, unused, start_remote);
            }
            for (int i = 0; i < creations; ++i) {
                pipe_pair back;
                const double t0 = cputime_ns(CLOCK_THREAD_CPUTIME_ID);
                const pid_t pid = ::fork();
                if (pid == 0) {
                    // The child: only async-signal-safe calls (this process has threads).
                    const double c = cputime_ns(CLOCK_PROCESS_CPUTIME_ID);
                    const bool ok = ::write(back.fd[1], &c, sizeof c) == sizeof c;
                    ::_exit(ok ? 0 : 1);
                }
                const double t1 = cputime_ns(CLOCK_THREAD_CPUTIME_ID);
                if (pid < 0)
                    throw probe_error(fmt::format("fork: {}", std::strerror(errno)));
                double c = -1;
                const bool got = ::read(back.fd[0], &c, sizeof c) == sizeof c;
                int status = 0;
                ::waitpid(pid, &status, 0);
                if (!got || c < 0)
                    throw probe_error("a forked child did not report its CPU time");
                fork_ns.push_back(t1 - t0);
                fork_start.push_back(c);
            }
            if (run + 1 >= b.min_runs && seconds_since(begin) >= b.seconds)
                break;
        }
        if (start.empty() || (cpu_b >= 0 && start_remote.empty()))
            throw probe_error("no created thread reported its CPU time");
        task_creation r{summarise(create), summarise(start), summarise(fork_ns),
                        summarise(fork_start), std::nullopt};
        if (cpu_b >= 0)
            r.thread_start_remote = summarise(start_remote);
        return r;
    });
}

namespace {

/* One member of the mm ring: a warm-up lap, then `laps` timed ones; member 0 starts
 * each lap. Its CPU time over the timed laps, or -1 if a pipe failed. Only
 * async-signal-safe calls: in a forked child of this multi-threaded process too. */
double mm_ring_member(int i, int n, int laps, const std::vector<std::unique_ptr<pipe_pair>>& ring)
{
    const int in = ring[static_cast<std::size_t>(i)]->fd[0];
    const int out = ring[static_cast<std::size_t>((i + 1) % n)]->fd[1];
    char c = 'x';
    double t0 = 0;
    for (int k = 0; k <= laps; ++k) {
        if (k == 1)
            t0 = cputime_ns(CLOCK_THREAD_CPUTIME_ID);
        if (i == 0 && ::write(out, &c, 1) != 1)
            return -1;
        if (::read(in, &c, 1) != 1)
            return -1;
        if (i != 0 && ::write(out, &c, 1) != 1)
            return -1;
    }
    return cputime_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

double mm_ring_once(int n, int laps, bool processes)
{
    std::vector<std::unique_ptr<pipe_pair>> ring;
    for (int i = 0; i < n; ++i)
        ring.push_back(std::make_unique<pipe_pair>());
    double total = 0;
    bool failed = false;
    if (processes) {
        pipe_pair report; // each child's CPU time, one double (< PIPE_BUF: one write)
        std::vector<pid_t> children;
        for (int i = 1; i < n; ++i) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                const double t = mm_ring_member(i, n, laps, ring);
                _exit(::write(report.fd[1], &t, sizeof t) == sizeof t && t >= 0 ? 0 : 1);
            }
            if (pid < 0) {
                // The members forked so far wait for a token that never comes: end them.
                for (const pid_t c : children)
                    ::kill(c, SIGKILL);
                for (const pid_t c : children)
                    ::waitpid(c, nullptr, 0);
                throw probe_error(fmt::format("fork: {}", std::strerror(errno)));
            }
            children.push_back(pid);
        }
        const double own = mm_ring_member(0, n, laps, ring);
        failed = own < 0;
        total += own;
        for (std::size_t i = 0; i < children.size() && !failed; ++i) {
            double t = -1;
            failed = ::read(report.fd[0], &t, sizeof t) != sizeof t || t < 0;
            total += t;
        }
        if (failed)
            for (const pid_t c : children)
                ::kill(c, SIGKILL);
        for (const pid_t c : children)
            ::waitpid(c, nullptr, 0);
    } else {
        std::vector<double> times(static_cast<std::size_t>(n), -1);
        std::vector<std::thread> members;
        for (int i = 1; i < n; ++i)
            members.emplace_back(
                [&, i] { times[static_cast<std::size_t>(i)] = mm_ring_member(i, n, laps, ring); });
        times[0] = mm_ring_member(0, n, laps, ring);
        if (times[0] < 0) // the others wait for a token: end their reads (EOF) instead
            for (auto& p : ring)
                close_fd(p->fd[1]);
        for (auto& t : members)
            t.join();
        for (const double t : times) {
            failed = failed || t < 0;
            total += t;
        }
    }
    if (failed)
        throw probe_error(fmt::format("mm ring of {}: pipe read or write failed", n));
    return total / (static_cast<double>(n) * laps);
}

} // namespace

stats probe_mm_ring(int cpu, int tasks, int laps, bool processes, const budget& b)
{
    if (tasks < 2 || laps < 1)
        throw probe_error(fmt::format("mm ring of {} tasks, {} laps: needs 2 and 1", tasks, laps));
    return on_thread([&] {
        block_sigpipe();
        const one_cpu_set on(cpu);
        on.pin_or_throw(); // members inherit this thread's affinity (clone, fork)
        return repeat(b, [&] { return mm_ring_once(tasks, laps, processes); });
    });
}

std::optional<double> perf_bench_pipe_usecs(int loops, std::string& why)
{
    const std::string cmd =
        fmt::format("timeout 20 perf bench sched pipe -l {} 2>&1 </dev/null", std::max(loops, 1));
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) {
        why = fmt::format("cannot run perf: {}", std::strerror(errno));
        return std::nullopt;
    }
    std::string out;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, f))
        out += chunk;
    const int status = ::pclose(f);
    // "       4.760650 usecs/op"
    const auto pos = out.find("usecs/op");
    if (status == 0 && pos != std::string::npos) {
        auto start = out.rfind('\n', pos);
        start = start == std::string::npos ? 0 : start + 1;
        try {
            const double v = std::stod(out.substr(start, pos - start));
            if (v > 0)
                return v;
        } catch (const std::exception&) {
        }
    }
    std::string first = out.substr(0, out.find('\n'));
    why = fmt::format("`{}` did not report usecs/op (exit status {}{}{})",
                      fmt::format("perf bench sched pipe -l {}", loops), status,
                      first.empty() ? "" : ": ", first);
    return std::nullopt;
}

std::optional<double> perf_bench_messaging_seconds(const std::string& args, int cpu,
                                                   std::string& why, double* cpu_share)
{
    const auto cpu_seconds = [] {
        rusage ru{};
        ::getrusage(RUSAGE_CHILDREN, &ru);
        return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    };
    const double cpu0 = cpu_seconds();
    const auto wall0 = clock_type::now();
    const std::string cmd =
        fmt::format("timeout 60 perf bench sched messaging {} 2>&1 </dev/null", args);
    std::string out;
    int status = -1;
    std::string failure;
    try {
        on_thread([&] {
            // popen() forks this (pinned) thread: perf and its children inherit the CPU.
            const one_cpu_set where(cpu);
            if (!where.pin()) {
                failure = fmt::format("cannot run on CPU {}: {}", cpu, std::strerror(errno));
                return 0;
            }
            FILE* f = ::popen(cmd.c_str(), "r");
            if (!f) {
                failure = fmt::format("cannot run perf: {}", std::strerror(errno));
                return 0;
            }
            char chunk[512];
            while (std::fgets(chunk, sizeof chunk, f))
                out += chunk;
            status = ::pclose(f);
            return 0;
        });
    } catch (const probe_error& e) {
        failure = e.what();
    }
    if (!failure.empty()) {
        why = failure;
        return std::nullopt;
    }
    if (cpu_share) {
        const double wall = seconds_since(wall0);
        *cpu_share = wall > 0 ? (cpu_seconds() - cpu0) / wall : 0;
    }
    // "     Total time: 0.019 [sec]"
    const auto pos = out.find("Total time:");
    if (status == 0 && pos != std::string::npos) {
        try {
            const double v = std::stod(out.substr(pos + 11));
            if (v >= 0) // printed in ms: a fast run reads 0.000
                return v;
        } catch (const std::exception&) {
        }
    }
    const std::string first = out.substr(0, out.find('\n'));
    why = fmt::format("`perf bench sched messaging {}` did not report its total time (exit status "
                      "{}{}{})",
                      args, status, first.empty() ? "" : ": ", first);
    return std::nullopt;
}
} // namespace schedlab::calibrate
