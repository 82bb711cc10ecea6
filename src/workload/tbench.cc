// SPDX-License-Identifier: GPL-2.0-only
/*
 * tbench (dbench's sockio backend + tbench_srv): see tbench.h.
 */
#include "workload/tbench.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "sim/rng.h"
#include "workload/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace schedlab {

namespace {
const char* const where_tbench = "tbench";

struct op_model {
    tbench_op op;
    const char* name;
    u32 weight; ///< lines of client.txt with the op
};

/*
 * model: the op mix of dbench 4.0's client.txt, its line counts per operation (the file as
 * Debian 12's dbench 4.0 package installs it, /usr/share/dbench/client.txt: 458344 lines;
 * bench/tbhost/loadfile_sizes.py counts them); Deltree is a no-op in sockio and Mkdir is
 * too rare to matter (2 and 1 lines), so neither is drawn.
 */
constexpr op_model op_table[] = {
    {tbench_op::NTCreateX, "NTCreateX", 79230},
    {tbench_op::Close, "Close", 58200},
    {tbench_op::Rename, "Rename", 3355},
    {tbench_op::Unlink, "Unlink", 16000},
    {tbench_op::Deltree, "Deltree", 0},
    {tbench_op::Mkdir, "Mkdir", 0},
    {tbench_op::Qpathinfo, "Qpathinfo", 71814},
    {tbench_op::Qfileinfo, "Qfileinfo", 12585},
    {tbench_op::Qfsinfo, "Qfsinfo", 13168},
    {tbench_op::Sfileinfo, "Sfileinfo", 6454},
    {tbench_op::Find, "Find", 27765},
    {tbench_op::WriteX, "WriteX", 39502},
    {tbench_op::ReadX, "ReadX", 124199},
    {tbench_op::LockX, "LockX", 258},
    {tbench_op::UnlockX, "UnlockX", 258},
    {tbench_op::Flush, "Flush", 5553},
};

/// {value, lines of client.txt with it}, ascending by value.
struct size_count {
    u32 value;
    u32 lines;
};

/*
 * model: the sizes of client.txt's lines (bench/tbhost/loadfile_sizes.py --cxx prints these
 * tables): ReadX's ret_size (sockio.c nb_readx(): the reply is 39 + 20 + ret_size bytes and
 * tbench counts ret_size), WriteX's size (nb_writex(): the request is 39 + 20 + size, counted)
 * and FIND_FIRST's count (nb_findfirst(): the reply is 39 + 90 * count). Their mean payload
 * is 5428.4 bytes per line of the file.
 */
constexpr size_count readx_sizes[] = {
    {2, 129}, {7, 258}, {8, 258}, {9, 129}, {12, 258}, {14, 258}, {15, 258}, {16, 258}, {20, 129},
    {24, 387}, {42, 129}, {46, 129}, {64, 258}, {90, 129}, {92, 258}, {149, 129}, {158, 129},
    {184, 387}, {248, 258}, {252, 129}, {256, 129}, {273, 129}, {276, 258}, {326, 129}, {399, 129},
    {400, 129}, {408, 129}, {485, 129}, {491, 129}, {512, 1161}, {543, 648}, {568, 129},
    {608, 129}, {640, 129}, {652, 129}, {725, 129}, {912, 129}, {935, 129}, {1024, 645},
    {1026, 129}, {1280, 129}, {1385, 129}, {1386, 129}, {1536, 387}, {1600, 129}, {1784, 129},
    {1980, 129}, {2048, 4644}, {2084, 387}, {2256, 129}, {2560, 258}, {3072, 387}, {3516, 129},
    {3771, 129}, {3799, 129}, {3814, 129}, {4096, 83172}, {4688, 129}, {4948, 129}, {6652, 129},
    {8192, 4644}, {8464, 129}, {10240, 258}, {10496, 129}, {16384, 1937}, {32768, 387},
    {61440, 16641},
};
constexpr size_count writex_sizes[] = {
    {1, 7424}, {4, 1}, {8, 1}, {49, 129}, {53, 258}, {64, 129}, {168, 129}, {491, 129}, {510, 387},
    {512, 129}, {543, 129}, {1856, 129}, {2048, 1677}, {4089, 1}, {4096, 9942}, {4112, 2},
    {7983, 129}, {8192, 1164}, {8866, 129}, {9298, 129}, {10438, 129}, {10575, 129}, {10845, 129},
    {11540, 129}, {11588, 129}, {11615, 129}, {11991, 129}, {12006, 129}, {12288, 130},
    {12543, 129}, {14984, 129}, {15360, 258}, {16050, 129}, {17654, 129}, {18630, 129},
    {19054, 129}, {19490, 129}, {19584, 130}, {19979, 130}, {22848, 129}, {26634, 129}, {26637, 1},
    {28489, 129}, {29253, 129}, {30118, 129}, {30183, 129}, {32768, 1}, {35257, 129}, {42388, 129},
    {42652, 129}, {46731, 129}, {51456, 129}, {53077, 129}, {57088, 129}, {57598, 129},
    {62591, 129}, {63488, 48}, {64850, 129}, {65536, 12658},
};
constexpr size_count find_counts[] = {
    {0, 14328}, {3, 2}, {4, 2}, {5, 138}, {6, 258}, {7, 130}, {9, 130}, {10, 129}, {11, 12386},
    {13, 2}, {17, 129}, {22, 2}, {26, 129},
};

/*
 * The values of `n` lines drawn from a table by stratified quantiles (the j-th takes the
 * value at cumulative fraction (2j + 1) / 2n), in an order shuffled with `r`: the lines'
 * mean follows the file's however few they are.
 */
template <std::size_t K>
std::vector<u64> stratified(const size_count (&table)[K], std::size_t n, rng_stream& r)
{
    u64 total = 0;
    for (const size_count& e : table)
        total += e.lines;
    std::vector<u64> v;
    v.reserve(n);
    std::size_t k = 0;
    u64 below = 0; // lines of the entries before table[k]
    for (std::size_t j = 0; j < n; ++j) {
        const u64 x = (2 * j + 1) * total / (2 * n);
        while (x >= below + table[k].lines) {
            below += table[k].lines;
            ++k;
        }
        v.push_back(table[k].value);
    }
    for (std::size_t i = v.size(); i > 1; --i)
        std::swap(v[i - 1], v[static_cast<std::size_t>(r.below(i))]);
    return v;
}

} // namespace

const char* tbench_op_name(tbench_op o)
{
    return op_table[static_cast<int>(o)].name;
}

/*
 * model: dbench's sockio.c turns each loadfile line into one exchange; the
 * request and reply sizes below follow sockio.c's message layouts (WriteX: 59 + size
 * / 55; ReadX: 59 / 59 + size; NTCreateX: 74 + 2 * name length / 87; Find:
 * reply 39 + 90 per entry; other metadata ops 40-90 / 39-84 bytes). The lines are
 * client.txt's in proportion: each op's count is its share of the file's lines (largest
 * remainder), in an order drawn once (independent of the seed); ReadX and WriteX sizes and
 * Find's entries are the file's, by stratified quantiles (stratified()), so the payload per
 * line is the file's (5388 bytes a line here, 5428 in the file). File names are 20-60
 * characters (drawn).
 */
std::vector<tbench_line> tbench_loadfile(const std::string& name)
{
    const bool tiny = name == "client-tiny.txt";
    const std::size_t nr_lines = tiny ? 357 : 1000;
    rng_stream r(0, "tbench/" + name); // a file: the same for every seed
    // Each op's count: its share of nr_lines, the remainders to the largest fractions.
    u64 total = 0;
    for (const op_model& m : op_table)
        total += m.weight;
    std::vector<std::size_t> count;
    std::vector<std::pair<u64, std::size_t>> rest; // (remainder, op), largest first
    std::size_t assigned = 0;
    for (std::size_t o = 0; o < std::size(op_table); ++o) {
        const u64 share = static_cast<u64>(op_table[o].weight) * nr_lines;
        count.push_back(static_cast<std::size_t>(share / total));
        assigned += count.back();
        rest.emplace_back(share % total, o);
    }
    std::stable_sort(rest.begin(), rest.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; assigned < nr_lines; ++i, ++assigned)
        ++count[rest[i].second];
    std::vector<tbench_op> ops;
    ops.reserve(nr_lines);
    for (std::size_t o = 0; o < count.size(); ++o)
        ops.insert(ops.end(), count[o], op_table[o].op);
    for (std::size_t i = ops.size(); i > 1; --i)
        std::swap(ops[i - 1], ops[static_cast<std::size_t>(r.below(i))]);
    const auto nr_of = [&](tbench_op o) { return count[static_cast<std::size_t>(o)]; };
    const std::vector<u64> reads = stratified(readx_sizes, nr_of(tbench_op::ReadX), r);
    const std::vector<u64> writes = stratified(writex_sizes, nr_of(tbench_op::WriteX), r);
    const std::vector<u64> finds = stratified(find_counts, nr_of(tbench_op::Find), r);
    std::size_t next_read = 0;
    std::size_t next_write = 0;
    std::size_t next_find = 0;
    std::vector<tbench_line> lines;
    lines.reserve(nr_lines);
    for (const tbench_op op : ops) {
        const u64 len = static_cast<u64>(r.range(20, 60));
        tbench_line l{op, 0, 39, 0};
        switch (op) {
        case tbench_op::NTCreateX: l.req = 74 + 2 * len; l.rsp = 87; break;
        case tbench_op::Close: l.req = 45; break;
        case tbench_op::Rename: l.req = 70 + 4 * len; break;
        case tbench_op::Unlink: l.req = 60 + 2 * len; break;
        case tbench_op::Deltree:
        case tbench_op::Mkdir: l.req = 60 + 2 * len; break;
        case tbench_op::Qpathinfo: l.req = 66 + 2 * len; l.rsp = 84; break;
        case tbench_op::Qfileinfo: l.req = 52; l.rsp = 84; break;
        case tbench_op::Qfsinfo: l.req = 48; l.rsp = 72; break;
        case tbench_op::Sfileinfo: l.req = 90; break;
        case tbench_op::Find:
            l.req = 78 + 2 * len;
            l.rsp = 39 + 90 * finds[next_find++];
            break;
        case tbench_op::WriteX:
            l.payload = writes[next_write++];
            l.req = 59 + l.payload;
            l.rsp = 55;
            break;
        case tbench_op::ReadX:
            l.payload = reads[next_read++];
            l.req = 59;
            l.rsp = 59 + l.payload;
            break;
        case tbench_op::LockX:
        case tbench_op::UnlockX: l.req = 63; break;
        case tbench_op::Flush: l.req = 41; break;
        case tbench_op::nr_ops: break;
        }
        lines.push_back(l);
    }
    return lines;
}

tbench_params parse_tbench_options(const std::vector<std::string>& args)
{
    tbench_params tp;
    std::string timelimit;
    std::string unused;
    std::string tcp_options;
    unsigned per_process = 1;
    bool run_once = false;
    std::vector<std::string> pos;
    const std::vector<option_spec> specs = {
        {.short_name = 't', .long_name = "timelimit", .text = &timelimit,
         .help = "seconds (dbench: 600; schedlab default 5, fractions allowed)"},
        {.short_name = 'c', .long_name = "loadfile", .text = &tp.loadfile,
         .help = "client.txt or client-tiny.txt (modelled op mix)"},
        {.short_name = 'T', .long_name = "tcp-options", .text = &tcp_options,
         .help = "TCP socket options (accepted; the model is TCP_NODELAY-like)"},
        {.short_name = 'B', .long_name = "backend", .text = &unused,
         .unsupported = "only the sockio backend (tbench) is modelled"},
        {.short_name = 'D', .long_name = "directory", .text = &unused,
         .unsupported = "tbench does no file I/O"},
        {.short_name = 'R', .long_name = "target-rate", .text = &unused,
         .unsupported = "rate pacing is not modelled"},
        {.long_name = "clients-per-process", .uinteger = &per_process,
         .help = "must be 1 (more clients per process is not modelled)"},
        {.long_name = "run-once", .flag = &run_once,
         .unsupported = "stopping at the end of the loadfile is not modelled"},
    };
    parse_options(args, specs, where_tbench, &pos);
    if (per_process != 1)
        throw config_error(where_tbench,
                           "option '--clients-per-process': only 1 is modelled");
    if (pos.empty())
        throw config_error(where_tbench, "You need to specify NPROCS (tbench N [server])");
    if (pos.size() > 2)
        throw config_error(where_tbench,
                           fmt::format("unexpected argument '{}' (tbench N [server])", pos[2]));
    tp.clients = static_cast<unsigned>(parse_integer(pos[0], "NPROCS", where_tbench, 1, 100'000));
    // A client and its server process each; 7.9 KB per client measured (3.9 KB per task), 5 KB
    // per task used (docs/testing.md).
    check_task_count(2.0 * tp.clients, 5e3, fmt::format("{} clients x 2", tp.clients),
                     where_tbench);
    if (pos.size() == 2) {
        tp.server = pos[1];
        if (tp.server != "127.0.0.1" && tp.server != "localhost")
            throw config_error(where_tbench,
                               fmt::format("server '{}' is not modelled (only loopback: "
                                           "127.0.0.1 or localhost)",
                                           tp.server));
    }
    if (!timelimit.empty()) {
        tp.timelimit = parse_seconds(timelimit, "-t", where_tbench);
        if (tp.timelimit <= 0)
            throw config_error(where_tbench, "option '-t': the time limit must be positive");
    }
    const auto slash = tp.loadfile.rfind('/');
    const std::string base = slash == std::string::npos ? tp.loadfile : tp.loadfile.substr(slash + 1);
    if (base != "client.txt" && base != "client-tiny.txt")
        throw config_error(where_tbench,
                           fmt::format("option '-c': loadfile '{}' is not modelled (client.txt or "
                                       "client-tiny.txt, both from the built-in op mix)",
                                       tp.loadfile));
    tp.loadfile = base;
    return tp;
}

std::string tbench_workload::command_line() const
{
    return fmt::format("tbench -t {} -c {} {} {}", static_cast<double>(tp_.timelimit) / 1e9,
                       tp_.loadfile, tp_.clients, tp_.server);
}

/*
 * kernel-independent bookkeeping: dbench.c sig_alarm(), run once a second by
 * the parent. Resets the counters at the end of the warm-up, flags the
 * clients done at the time limit, and prints the progress line.
 */
void tbench_workload::sig_alarm(sim_time now)
{
    double total_bytes = 0;
    u64 total_lines = 0;
    bool in_warmup = false;
    unsigned num_active = 0;
    unsigned num_finished = 0;
    const unsigned n = tp_.clients;
    for (const client& c : cl_) {
        total_bytes += static_cast<double>(c.bytes - c.bytes_done_warmup);
        if (c.bytes == 0)
            in_warmup = true;
        else
            ++num_active;
        total_lines += c.line;
        if (c.exited)
            ++num_finished;
    }
    const double t = static_cast<double>(now - tv_start_) / 1e9;
    const double warmup = static_cast<double>(warmup_) / 1e9;
    const double limit = static_cast<double>(tp_.timelimit) / 1e9;
    if (!in_warmup && warmup_ > 0 && t > warmup) {
        tv_start_ = now;
        warmup_ = 0;
        for (client& c : cl_) {
            c.bytes_done_warmup = c.bytes;
            c.worst_latency = 0;
            c.ops = {};
        }
        return;
    }
    if (t < warmup) {
        in_warmup = true;
    } else if (!in_warmup && !in_cleanup_ && t > limit) {
        for (client& c : cl_)
            c.done = true;
        tv_end_ = now;
        in_cleanup_ = true;
    }
    if (t < 1)
        return;
    sim_dur latency = 0;
    if (!in_cleanup_) {
        for (client& c : cl_) {
            latency = std::max(latency, c.max_latency);
            latency = std::max(latency, now - c.lasttime);
            c.max_latency = 0;
            c.worst_latency = std::max(c.worst_latency, latency);
        }
    }
    const double lat_ms = static_cast<double>(latency) / 1e6;
    if (in_warmup) {
        out_ += fmt::format("{:4}  {:8}  {:7.2f} MB/sec  warmup {:3.0f} sec  latency {:.03f} ms\n",
                            num_active, total_lines / n, 1e-6 * total_bytes / t, t, lat_ms);
    } else if (in_cleanup_) {
        out_ += fmt::format("{:4}  cleanup {:3.0f} sec\n", n - num_finished, t);
    } else {
        out_ += fmt::format("{:4}  {:8}  {:7.2f} MB/sec  execute {:3.0f} sec  latency {:.03f} ms\n",
                            n, total_lines / n, 1e-6 * total_bytes / t, t, lat_ms);
        throughput_ = 1e-6 * total_bytes / t;
        measured_ = true;
    }
}

/*
 * model: dbench.c main()/create_procs(), child.c child_run(), sockio.c and
 * tbench_srv.c, task by task:
 * - tbench_srv (a daemon started before the run, on CPU 0): tbench_srv.c
 *   listener() reaps with waitpid(-1, NULL, WNOHANG) (SIGCHLD is ignored, so
 *   nothing is reapable and the call walks all its live children:
 *   waitpid_nohang + wait_scan_child each), accept()s the oldest connection
 *   and fork()s a server process for it, in a loop; (model) it exits after N connections
 *   instead of listening on; the parent's close() of the accepted socket is
 *   not charged. It listens with listen(sock, 20): once 21 connections wait
 *   for its accept(), a client's SYN is dropped and its connect() waits for
 *   the retransmission (tcp_listener, net.h);
 * - tbench (the parent, on CPU 0): fork()s N clients; polls every 100 ms
 *   until all wait on the start semaphore ("N of N processes prepared for
 *   launch"); releases them; then every second runs sig_alarm(); once the
 *   clients are flagged done it wait()s for them and prints the summary;
 * - client: connect()s, exchanges 8 bytes each way with its server (sockio.c
 *   sio_setup()'s do_packets(child, 8, 8)), waits on the semaphore, then replays the loadfile
 *   (rewinding at its end) until flagged done, checked before every line:
 *   send the request, read the 4-byte reply header (socklib.c read_sock(): recv(MSG_WAITALL)),
 *   read the rest of the reply with recv(MSG_WAITALL|MSG_TRUNC) (do_packets(); sahlberg/dbench
 *   73ac2f13 sockio.c, unchanged from 2008's common backend format to dbench-5.00, and Debian 12's
 *   dbench 4.0-2.1 under strace): on TCP its bytes are discarded, not copied (lane
 *   faithfix); finally it closes the connection and exits;
 * - server: reads a 4-byte length, the rest of the request, sends the reply;
 *   until the connection is closed (read() returns 0), then exits.
 */
void tbench_workload::setup(syscalls& sys)
{
    const unsigned n = tp_.clients;
    lines_ = tbench_loadfile(tp_.loadfile);
    cl_.assign(n, client{});
    // dbench: warmup = timelimit / 5 in whole seconds.
    warmup_ = secs((tp_.timelimit / NSEC_PER_SEC) / 5);
    out_ = "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n";
    out_ += fmt::format("Running for {} seconds with load '{}' and minimum warmup {} secs\n",
                        static_cast<double>(tp_.timelimit) / 1e9, tp_.loadfile,
                        warmup_ / NSEC_PER_SEC);

    // tbench_srv.c listener(): listen(sock, 20).
    listener_ = std::make_unique<tcp_listener>(state_.make_counter("tbench_srv/listen", WF_SYNC),
                                               tbench_srv_backlog);
    tcp_listener& listen = *listener_;
    // dbench.c create_procs(): the children's semop() waits for zero, the parent's decrement
    // wakes them first-come first-woken (ipc/sem.c; struct counter's fifo).
    counter& release = state_.make_counter("tbench/barrier", 0);
    release.fifo = true;
    counter& exits = state_.make_counter("tbench/wait_chldexit", WF_SYNC);
    conn_.clear();
    accepted_client_.assign(n, 0);
    for (unsigned i = 0; i < n; ++i)
        conn_.emplace_back(&state_.make_channel<tcp_channel>(fmt::format("client{}/c2s", i)),
                           &state_.make_channel<tcp_channel>(fmt::format("client{}/s2c", i)));

    task_opts dopt;
    dopt.comm = "tbench_srv";
    dopt.cpu = 0;
    sys.spawn(make_task([&](task_context& t) { return run_daemon(t, listen); }), dopt);
    task_opts popt;
    popt.comm = "tbench";
    popt.cpu = 0;
    sys.spawn(make_task([&](task_context& t) { return run_parent(t, listen, release, exits); }),
              popt);
}

/*
 * kernel: kernel/exit.c do_wait() -> do_wait_thread(), 6.5 (sndrzt/linux-6.5
 * 4f5cdb332210): wait4() walks the caller's children list (wait_consider_task() on each)
 * and, with WNOHANG and none reapable, returns 0. A server leaves the daemon's list when
 * it exits (SIGCHLD ignored: exit_notify() releases it at once).
 */
task_code tbench_workload::run_daemon(task_context& t, tcp_listener& listen)
{
    const fork_opts server{.comm = "tbench_srv", .thread = false, .notify = nullptr};
    for (unsigned i = 0; i < tp_.clients; ++i) {
        const cost_params& c = t.costs();
        co_await t.syscall(c.waitpid_nohang + c.wait_scan_child * static_cast<sim_dur>(servers_alive_));
        co_await tcp_accept(t, listen);
        co_await t.fork([this, i](task_context& s) { return run_server(s, i); }, server);
        ++servers_alive_;
    }
}

task_code tbench_workload::run_server(task_context& t, unsigned k)
{
    // The k-th accept() returns the k-th connection established, client i's.
    const unsigned i = accepted_client_[k];
    cl_[i].server = &t.task();
    t.at_exit([this] { --servers_alive_; });
    channel& c2s = *conn_[i].first;
    channel& s2c = *conn_[i].second;
    // The client's setup exchange (sockio.c sio_setup(): do_packets(child, 8, 8)), answered
    // by server()'s loop like any request: a 4-byte length, 4 bytes, an 8-byte reply.
    if (!co_await t.read(c2s, 4) || !co_await t.read(c2s, 4))
        co_return;
    co_await t.write(s2c, 8);
    for (;;) {
        for (const tbench_line& l : lines_) {
            const bool header = co_await t.read(c2s, 4);
            if (!header)
                co_return; // the client closed the connection
            const bool request = co_await t.read(c2s, l.req - 4);
            if (!request)
                co_return;
            co_await t.write(s2c, l.rsp);
        }
    }
}

task_code tbench_workload::run_client(task_context& t, unsigned i, tcp_listener& listen,
                                      counter& release)
{
    channel& c2s = *conn_[i].first;
    channel& s2c = *conn_[i].second;
    client& c = cl_[i];
    // SYNs dropped while tbench_srv's accept queue is full; its accept()s take the
    // connections in the order they were established.
    u64 position = 0;
    co_await tcp_connect(t, listen, &position);
    accepted_client_[position] = i;
    // sockio.c sio_setup() ends with do_packets(child, 8, 8): an 8-byte request and the
    // server's 8-byte reply, before the client waits at the start barrier.
    co_await t.write(c2s, 8);
    if (!co_await t.read(s2c, 4) || !co_await t.recv_trunc(s2c, 4))
        co_return;
    c.task = &t.task();
    ++nr_ready_;
    co_await t.wait_for(release, 1, &cost_params::futex_wait); // semop() on the start barrier
    c.lasttime = t.now();
    bool eof = false;
    while (!c.done && !eof) {
        for (const tbench_line& l : lines_) {
            if (c.done)
                break;
            c.op_start = t.now();
            co_await t.write(c2s, l.req);
            const bool header = co_await t.read(s2c, 4);
            if (!header) {
                eof = true;
                break;
            }
            // sockio.c do_packets(): recv(sock, buf, recv_size-4, MSG_WAITALL|MSG_TRUNC)
            const bool reply = co_await t.recv_trunc(s2c, l.rsp - 4);
            if (!reply) {
                eof = true;
                break;
            }
            const sim_dur lat = t.now() - c.op_start;
            op_stats& s = c.ops[static_cast<int>(l.op)];
            ++s.count;
            s.total += lat;
            s.max = std::max(s.max, lat);
            c.max_latency = std::max(c.max_latency, lat);
            c.lasttime = t.now();
            c.bytes += l.payload;
            ++c.line;
        }
    }
    co_await t.close(c2s);
    c.exited = true;
}

task_code tbench_workload::run_parent(task_context& t, tcp_listener& listen, counter& release,
                                      counter& exits)
{
    const unsigned n = tp_.clients;
    const fork_opts client{.comm = "tbench", .thread = false, .notify = &exits};
    for (unsigned i = 0; i < n; ++i)
        co_await t.fork([this, i, &listen,
                         &release](task_context& c) { return run_client(c, i, listen, release); },
                        client);
    launch_start_ = t.now();
    auto prepared_line = [&] {
        out_ += fmt::format("{} of {} processes prepared for launch {:3.0f} sec\n", nr_ready_, n,
                            static_cast<double>(t.now() - launch_start_) / 1e9);
    };
    prepared_line();
    while (nr_ready_ < n) {
        co_await t.sleep(msecs(100));
        prepared_line();
    }
    const sim_time start = co_await t.gettime();
    state_.mark("start", start);
    out_ += "releasing clients\n";
    tv_start_ = t.now();
    co_await t.signal(release);
    while (!in_cleanup_) {
        co_await t.sleep(secs(1));
        sig_alarm(t.now());
    }
    co_await t.wait_for(exits, n, &cost_params::wait_child);
    sig_alarm(t.now());
    out_ += "\n";
    done_ = true;
    const sim_time stop = co_await t.gettime();
    state_.mark("stop", stop);
}

std::string tbench_workload::report() const
{
    std::string out = out_;
    if (!done_) {
        out += "# schedlab: not finished when the run stopped\n";
        return out;
    }
    // dbench.c report_latencies() + the final line of main().
    out += " Operation                Count    AvgLat    MaxLat\n";
    out += " --------------------------------------------------\n";
    sim_dur worst = 0;
    for (int o = 0; o < static_cast<int>(tbench_op::nr_ops); ++o) {
        op_stats sum;
        for (const client& c : cl_) {
            sum.count += c.ops[o].count;
            sum.total += c.ops[o].total;
            sum.max = std::max(sum.max, c.ops[o].max);
        }
        if (sum.count == 0)
            continue;
        out += fmt::format(" {:<22} {:7} {:9.03f} {:9.03f}\n", tbench_op_name(static_cast<tbench_op>(o)),
                           sum.count,
                           static_cast<double>(sum.total) / 1e6 / static_cast<double>(sum.count),
                           static_cast<double>(sum.max) / 1e6);
    }
    out += "\n";
    for (const client& c : cl_)
        worst = std::max(worst, c.worst_latency);
    out += fmt::format("Throughput {:g} MB/sec  {} clients  {} procs  max_latency={:.03f} ms\n",
                       throughput_, tp_.clients, tp_.clients, static_cast<double>(worst) / 1e6);
    if (listener_ && listener_->listen_overflows > 0)
        out += fmt::format("# schedlab: tbench_srv's accept queue overflowed: {} SYNs dropped "
                           "(LISTENOVERFLOWS), at most {} connections waited for accept()\n",
                           listener_->listen_overflows, listener_->max_queued);
    return out;
}

std::string tbench_workload::measured_nothing() const
{
    if (!done_ || measured_)
        return "";
    // dbench reports once a second and measures from the end of the warm-up (timelimit / 5
    // whole seconds, and until every client has moved bytes): no "execute" report, no figure.
    return fmt::format("tbench measured nothing: its {} s time limit ended before a "
                       "once-a-second report found every one of the {} clients past its warm-up; "
                       "give -t 2 or more (more clients need longer)",
                       static_cast<double>(tp_.timelimit) / 1e9, tp_.clients);
}

std::vector<workload_metric> tbench_workload::metrics() const
{
    if (!done_ || !measured_)
        return {};
    sim_dur worst = 0;
    for (const client& c : cl_)
        worst = std::max(worst, c.worst_latency);
    return {{"throughput", "MB/s", throughput_, true},
            {"max_latency", "ms", static_cast<double>(worst) / 1e6, false}};
}

std::unique_ptr<workload> make_tbench_workload(const std::vector<std::string>& args)
{
    return std::make_unique<tbench_workload>(parse_tbench_options(args));
}

} // namespace schedlab
