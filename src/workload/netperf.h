// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * netperf TCP_RR / UDP_RR over loopback (HewlettPackard/netperf
 * nettest_bsd.c): N concurrent netperf processes, each with
 * one data connection to a netserver child forked for it, ping-pong a
 * request of req bytes and a response of rsp bytes, one transaction in
 * flight, for -l seconds (or -l -N transactions).
 *
 * `--instances N` is schedlab's, not netperf's: it stands for the shell loop
 * "for i in 1..N: netperf ... &; wait" of the published evaluations (e.g.
 * Chen Yu's SIS_SHORT v6 cover, cover.1677069490.git.yu.c.chen@intel.com). Each instance prints netperf's own table; a
 * "# schedlab:" line then sums them.
 *
 * Not modelled: the control connection and netserver's per-test set-up
 * traffic, confidence intervals (-i/-I), interim results (-D), CPU
 * utilisation (-c/-C are accepted, and noted, but print no columns), output
 * selectors (-k/-o/-O), CPU binding (-T), bursts (-b), IPv6.
 */
#include "workload/net.h"
#include "workload/program.h"
#include "workload/workload.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct task_struct;

struct netperf_params {
    bool udp = false;          ///< -t UDP_RR (else TCP_RR)
    sim_dur duration = secs(10); ///< -l N > 0 (netperf's default: 10 s)
    u64 transactions = 0;      ///< -l -N: run N transactions instead of a time
    std::string host = "localhost"; ///< -H (loopback only)
    u64 req = 1;               ///< test-specific -r req[,rsp] (netperf's default 1,1)
    u64 rsp = 1;
    unsigned instances = 1;    ///< --instances (schedlab only)
    bool banner = true;        ///< -P 0 suppresses the "MIGRATED ... TEST" line
    bool cpu_util = false;     ///< -c / -C given (accepted, not modelled)
    bool nodelay = false;      ///< test-specific -D (TCP_NODELAY; no effect on one message in flight)
    u64 local_sndbuf = 0;      ///< test-specific -s send[,recv]; 0: the kernel default
    u64 local_rcvbuf = 0;
    u64 remote_sndbuf = 0;     ///< test-specific -S send[,recv]
    u64 remote_rcvbuf = 0;
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
        task_struct* client = nullptr;
        task_struct* server = nullptr;
        double rate() const;
    };
    const netperf_params& params() const { return np_; }
    const std::vector<instance>& instances() const { return inst_; }
    const workload_state& state() const { return state_; }

private:
    u64 sock_send_size(bool local) const;
    u64 sock_recv_size(bool local) const;
    task_code run_netserver(task_context& t, counter& listen);
    task_code run_server(task_context& t, unsigned i);
    task_code run_shell(task_context& t, counter& listen, counter& reaped);
    task_code run_netperf(task_context& t, unsigned i, counter& listen);

    netperf_params np_;
    workload_state state_;
    std::vector<instance> inst_;
};

std::unique_ptr<workload> make_netperf_workload(const std::vector<std::string>& args);

} // namespace schedlab
