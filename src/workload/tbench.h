// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * tbench: dbench's network mode (sahlberg/dbench dbench.c, child.c,
 * sockio.c, tbench_srv.c). `tbench N [server]` forks N
 * client processes; each connects over loopback TCP to tbench_srv, which
 * forks one server process per connection, and replays the loadfile, one
 * strictly synchronous request/response exchange per line, until the time
 * limit. Throughput counts the ReadX/WriteX payload bytes after the warm-up.
 *
 * The loadfile is a model of dbench 4.0's client.txt (458344 lines): a fixed sequence of
 * 1000 lines (357 for client-tiny.txt) with the file's op mix and its ReadX/WriteX sizes and
 * Find entry counts (tbench_loadfile(); the counts from the file as Debian 12's dbench
 * package installs it), with sockio's request/reply sizes per op.
 *
 * `-t SECONDS` is dbench's time limit; dbench's default is 600 s, schedlab's
 * is 5 s (fractions allowed) so that a plain run stays short. The warm-up is
 * t/5 (dbench's rule) and ends at the first one-second report after it, so a
 * run lasts warm-up + t. Not modelled: --target-rate pacing, loadfile
 * timestamps, per-client results, --clients-per-process > 1, the cleanup
 * phase's file deletions (clients just close the connection).
 */
#include "workload/net.h"
#include "workload/program.h"
#include "workload/workload.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

struct tbench_params {
    unsigned clients = 0;          ///< the NPROCS positional argument
    sim_dur timelimit = secs(5);   ///< -t/--timelimit (dbench: 600)
    std::string loadfile = "client.txt"; ///< -c/--loadfile: client.txt or client-tiny.txt (model)
    std::string server = "127.0.0.1"; ///< the server positional argument (loopback only)
};

tbench_params parse_tbench_options(const std::vector<std::string>& args);

/// One line kind of the loadfile, as sockio turns it into one exchange.
enum class tbench_op : u8 {
    NTCreateX, Close, Rename, Unlink, Deltree, Mkdir, Qpathinfo, Qfileinfo, Qfsinfo,
    Sfileinfo, Find, WriteX, ReadX, LockX, UnlockX, Flush, nr_ops
};
const char* tbench_op_name(tbench_op o);

struct tbench_line {
    tbench_op op;
    u64 req;     ///< request bytes (4-byte length header included)
    u64 rsp;     ///< reply bytes (4-byte header included)
    u64 payload; ///< ReadX/WriteX data bytes counted in the throughput (0 for others)
};

/// The modelled loadfile (a fixed sequence; see the file comment).
std::vector<tbench_line> tbench_loadfile(const std::string& name);

class tbench_workload final : public workload {
public:
    explicit tbench_workload(tbench_params tp) : tp_(std::move(tp)) {}

    std::string name() const override { return "tbench"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override { return done_; }
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;

    struct op_stats {
        u64 count = 0;
        sim_dur total = 0;
        sim_dur max = 0;
    };
    struct client {
        u64 bytes = 0;
        u64 bytes_done_warmup = 0;
        u64 line = 0;
        bool done = false;
        bool exited = false;
        sim_time op_start = 0;
        sim_time lasttime = 0;
        sim_dur max_latency = 0;   ///< since the last report
        sim_dur worst_latency = 0;
        std::array<op_stats, static_cast<int>(tbench_op::nr_ops)> ops{};
        task_struct* task = nullptr;
        task_struct* server = nullptr;
    };
    const tbench_params& params() const { return tp_; }
    const std::vector<client>& clients() const { return cl_; }
    const std::vector<tbench_line>& loadfile() const { return lines_; }
    double throughput() const { return throughput_; }
    std::string measured_nothing() const override;
    const workload_state& state() const { return state_; }
    /// tbench_srv's listening socket (its accept queue's overflows), after setup().
    const tcp_listener* listener() const { return listener_.get(); }
    /// tbench_srv.c listener(): listen(sock, 20).
    static constexpr u32 tbench_srv_backlog = 20;

private:
    void sig_alarm(sim_time now);
    task_code run_daemon(task_context& t, tcp_listener& listen);
    task_code run_server(task_context& t, unsigned i);
    task_code run_parent(task_context& t, tcp_listener& listen, counter& release, counter& exits);
    task_code run_client(task_context& t, unsigned i, tcp_listener& listen, counter& release);

    tbench_params tp_;
    std::vector<tbench_line> lines_;
    workload_state state_;
    std::vector<client> cl_;
    std::vector<std::pair<channel*, channel*>> conn_; ///< client i's (c2s, s2c) connection
    std::unique_ptr<tcp_listener> listener_;
    std::vector<unsigned> accepted_client_; ///< the k-th connection established: client i's
    std::string out_;
    sim_time tv_start_ = 0;
    sim_time tv_end_ = 0;
    sim_dur warmup_ = 0;
    bool in_cleanup_ = false;
    bool done_ = false;
    double throughput_ = 0;
    bool measured_ = false; ///< an "execute" progress line set throughput_
    unsigned nr_ready_ = 0;
    unsigned servers_alive_ = 0; ///< tbench_srv's live children (its waitpid() walks them)
    sim_time launch_start_ = 0;
};

std::unique_ptr<workload> make_tbench_workload(const std::vector<std::string>& args);

} // namespace schedlab
