// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * netperf TCP_RR / UDP_RR over loopback (HewlettPackard/netperf
 * nettest_omni.c, the omni test the classic names migrate to): N concurrent
 * netperf processes, each with a control connection to netserver, which
 * forks a child for it, and one data connection to that child, ping-pong a
 * request of req bytes and a response of rsp bytes, one transaction in
 * flight, for -l seconds (or -l -N transactions). The set-up and the results
 * go over the control connection (netperf.cc's model comment).
 *
 * `--instances N` is schedlab's, not netperf's: it stands for the shell loop
 * "for i in 1..N: netperf ... &; wait" of the published evaluations (e.g.
 * Chen Yu's SIS_SHORT v6 cover, cover.1677069490.git.yu.c.chen@intel.com). Each instance prints netperf's own table; a
 * "# schedlab:" line then sums them.
 *
 * netserver: started before the run, by default it daemonizes (netserver.c
 * daemonize(): fork(), then setsid() in the child, HewlettPackard/netperf
 * afc51ff9764741da4ed6702651fba9d9c23f8557), so it and the children it forks
 * per connection (spawn_child()) are a session of their own: with autogroup on
 * an autogroup apart from the netperf processes' (the shell's session).
 * `--netserver-foreground` (schedlab's) stands for `netserver -D`, which skips
 * daemonize(): netserver stays in the shell's session and autogroup.
 *
 * Not modelled: the socket calls' own costs, confidence intervals (-i/-I),
 * interim results (-D), CPU utilisation (-c/-C are accepted, and noted, but
 * print no columns), output selectors other than the latency statistics and
 * the throughput (below), CPU
 * binding (-T), bursts (-b), IPv6.
 *
 * Output selectors (test-specific -k, -o or -O, doc/netperf.texi "Omni Output
 * Selection"): MIN_LATENCY, MAX_LATENCY, P50_LATENCY, P90_LATENCY,
 * P99_LATENCY, MEAN_LATENCY, STDDEV_LATENCY (microseconds, per transaction:
 * from before the request's send to after the response's last recv; netperf
 * keeps them with the global -j, accepted here and implied by the selectors)
 * and THROUGHPUT, THROUGHPUT_UNITS; any other selector is an
 * error naming it. They replace the classic table with keyval (-k), CSV (-o)
 * or human-readable columns (-O); the latencies also become metrics
 * (latency_min, latency_p50, ..., in us) that compare and the HTML report's
 * percentile chart read. Recording them only observes: the clock reads
 * netperf makes per transaction are not charged, so the schedule is the same.
 */
#include "workload/net.h"
#include "workload/program.h"
#include "workload/workload.h"

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

/// An omni output selector this model prints (netperf's names, doc/netperf.texi).
enum class netperf_selector : u8 {
    min_latency, max_latency, p50_latency, p90_latency, p99_latency, mean_latency,
    stddev_latency, throughput, throughput_units
};
enum class netperf_output : u8 { classic, keyval, csv, human }; ///< none, -k, -o, -O

/*
 * model: netperf's latency histogram (netlib.c HIST, in microseconds, with -j the
 * expanded rows of 100 buckets per decade, doc/netperf.texi): here values below
 * 100 us are exact and larger ones keep two significant digits; a percentile is
 * the lowest value of the nearest-rank sample's bucket. Min, max, mean and the
 * standard deviation are exact. Not checked against netlib.c's bucket edges.
 */
class netperf_histogram {
public:
    void add(u64 usec);
    void merge(const netperf_histogram& o);
    u64 count() const { return n_; }
    u64 min() const { return n_ ? min_ : 0; }
    u64 max() const { return max_; }
    double mean() const;
    double stddev() const;
    u64 percentile(double p) const; ///< p in (0, 100]; 0 when empty

private:
    std::map<u64, u64> buckets_; ///< bucket's lowest value -> samples
    u64 n_ = 0, min_ = ~0ULL, max_ = 0;
    double sum_ = 0, sumsq_ = 0;
};

struct netperf_params {
    bool udp = false;          ///< -t UDP_RR (else TCP_RR)
    sim_dur duration = secs(10); ///< -l N > 0 (netperf's default: 10 s)
    u64 transactions = 0;      ///< -l -N: run N transactions instead of a time
    std::string host = "localhost"; ///< -H (loopback only)
    u64 req = 1;               ///< test-specific -r req[,rsp] (netperf's default 1,1)
    u64 rsp = 1;
    unsigned instances = 1;    ///< --instances (schedlab only)
    /// --netserver-foreground (schedlab only): netserver was started with -D, so it stayed
    /// in the shell's session; by default it daemonized (setsid()), a session of its own.
    bool netserver_foreground = false;
    bool banner = true;        ///< -P 0 suppresses the "MIGRATED ... TEST" line
    bool cpu_util = false;     ///< -c / -C given (accepted, not modelled)
    bool nodelay = false;      ///< test-specific -D (TCP_NODELAY; no effect on one message in flight)
    u64 local_sndbuf = 0;      ///< test-specific -s send[,recv]; 0: the kernel default
    u64 local_rcvbuf = 0;
    u64 remote_sndbuf = 0;     ///< test-specific -S send[,recv]
    u64 remote_rcvbuf = 0;
    netperf_output output = netperf_output::classic; ///< test-specific -k / -o / -O
    std::vector<netperf_selector> selectors;          ///< their selectors, in order
    bool latency() const; ///< a latency selector was asked for: keep the histogram
};

/// Parses netperf's options (the argv after "netperf"); config_error names a bad one.
netperf_params parse_netperf_options(const std::vector<std::string>& args);

class netperf_workload final : public workload {
public:
    explicit netperf_workload(netperf_params np) : np_(np) {}

    std::string name() const override { return np_.udp ? "netperf/UDP_RR" : "netperf/TCP_RR"; }
    std::string command_line() const override;
    void setup(syscalls& sys) override;
    bool finished() const override;
    std::string report() const override;
    std::vector<workload_metric> metrics() const override;

    struct instance {
        sim_time start = -1;
        sim_time end = -1;
        u64 trans = 0;
        channel* to_server = nullptr;
        channel* to_client = nullptr;
        /// The control connection (TCP, for UDP_RR too): netperf's requests, the child's responses.
        channel* ctl_to_server = nullptr;
        channel* ctl_to_client = nullptr;
        /// The child's data listen socket (TCP_RR only; null for UDP_RR).
        tcp_listener* data_listen = nullptr;
        /// Its control connection's place in netserver's accept order (its child's).
        u64 position = 0;
        task_struct* client = nullptr;
        task_struct* server = nullptr;
        netperf_histogram latency; ///< per transaction, in us (only with a latency selector)
        double rate() const;
    };
    const netperf_params& params() const { return np_; }
    const std::vector<instance>& instances() const { return inst_; }
    const workload_state& state() const { return state_; }
    /// netserver's control listen socket (set up by setup()).
    const tcp_listener* listener() const { return listener_.get(); }
    /// netserver.c create_listens(): listen(temp_socket, 1024).
    static constexpr u32 netserver_backlog = 1024;
    /// nettest_omni.c recv_omni(): listen(s_listen, backlog) with backlog = 5.
    static constexpr u32 data_backlog = 5;
    /// A control message: sizeof(union netperf_request_struct) or netperf_response_struct
    /// (netlib.h: two ints and MAXSPECDATA = 162 ints), sent and received whole.
    static constexpr u64 control_bytes = (2 + 162) * 4;

private:
    u64 sock_send_size(bool local) const;
    u64 sock_recv_size(bool local) const;
    std::string omni_output(const instance& in) const;
    task_code run_netserver(task_context& t, tcp_listener& listen);
    task_code run_server(task_context& t, unsigned i);
    task_code run_shell(task_context& t, tcp_listener& listen, counter& reaped);
    task_code run_netperf(task_context& t, unsigned i, tcp_listener& listen);

    netperf_params np_;
    workload_state state_;
    std::vector<instance> inst_;
    std::unique_ptr<tcp_listener> listener_;
    std::deque<tcp_listener> data_listeners_;
    /// The k-th connection netserver accepts is instance accepted_[k]'s.
    std::vector<unsigned> accepted_;
};

std::unique_ptr<workload> make_netperf_workload(const std::vector<std::string>& args);

} // namespace schedlab
