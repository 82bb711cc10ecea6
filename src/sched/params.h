// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The scheduler's tunables (sysctl / debugfs knobs) and the CPU costs of the
 * operations a task performs. Both are plain values handed to a simulation
 * at construction; nothing here is global.
 */
#include "sim/time.h"

#include <string>
#include <utility>
#include <vector>

namespace schedlab {

/// Which fair-class policy the kernel profile runs.
enum class fair_policy { cfs, eevdf };

/// The kernel's normalised tunables, before the CPU-count scaling of
/// update_sysctl() / sched_init_granularity(). Names follow the sysctl/debugfs files.
struct sched_params {
    fair_policy policy = fair_policy::eevdf;
    u32 hz = 250;                             ///< CONFIG_HZ: tick = 1e9 / hz ns
    u64 base_slice_ns = 750'000;              ///< EEVDF sysctl_sched_base_slice (normalised)
    u64 latency_ns = 6'000'000;               ///< CFS sysctl_sched_latency (normalised)
    u64 min_granularity_ns = 750'000;         ///< CFS sysctl_sched_min_granularity (normalised)
    u64 wakeup_granularity_ns = 1'000'000;    ///< CFS sysctl_sched_wakeup_granularity (normalised)
    u64 migration_cost_ns = 500'000;          ///< sysctl_sched_migration_cost (not scaled)
    u32 nr_migrate = 32;                      ///< sysctl_sched_nr_migrate
    u32 nr_latency = 8;                       ///< CFS sched_nr_latency
    bool tunable_scaling_log = true;          ///< SCHED_TUNABLESCALING_LOG (the default)
    bool autogroup = true;                    ///< kernel.sched_autogroup_enabled (distribution default)

    u64 tick_nsec() const { return 1'000'000'000ULL / hz; }
};

/// The tunables after boot-time scaling for a machine of nr_cpus CPUs.
struct sched_tunables {
    u64 base_slice;       ///< sysctl_sched_base_slice
    u64 latency;          ///< sysctl_sched_latency
    u64 min_granularity;  ///< sysctl_sched_min_granularity
    u64 wakeup_granularity;
    u64 migration_cost;
    u32 nr_latency;
    u32 factor;           ///< 1 + ilog2(min(nr_cpus, 8)) with log scaling
};

/// kernel: kernel/sched/fair.c get_update_sysctl_factor() + update_sysctl(), 5.15-6.6.
sched_tunables scale_tunables(const sched_params& sp, int nr_cpus);

/*
 * CPU cost of each operation a task program performs, charged in simulated
 * time to the CPU running the task. Costs are named and overridable
 * (--cost NAME=NS); issue-level calibration per machine comes with the cost
 * model. The defaults are round figures of the right magnitude for a modern
 * x86 server core (kernel-model.md 7.2; benchmarks.md 1.3 "a few us").
 */
struct cost_params {
    sim_dur context_switch = 1'200;  ///< __schedule() + switch_to(), charged to the next task
    sim_dur pipe_write = 1'000;      ///< pipe_write() fixed cost
    sim_dur pipe_read = 900;         ///< pipe_read() fixed cost
    sim_dur socket_send = 1'800;     ///< unix_stream_sendmsg() fixed cost (skb alloc + queue)
    sim_dur socket_recv = 1'500;     ///< unix_stream_recvmsg() fixed cost
    sim_dur copy_per_kib = 60;       ///< copy_{from,to}_user per KiB
    sim_dur wakeup = 600;            ///< try_to_wake_up() of another task, charged to the waker
    sim_dur futex_wait = 400;        ///< futex_wait() entry
    sim_dur futex_wake = 300;        ///< futex_wake() fixed cost (plus one wakeup per woken task)
    sim_dur nanosleep = 500;         ///< hrtimer_nanosleep() arm
    sim_dur poll = 700;              ///< poll() on one fd
    sim_dur fork_process = 60'000;   ///< fork(): copy mm, files, ...
    sim_dur fork_thread = 15'000;    ///< clone(CLONE_VM|...)
    sim_dur exit = 20'000;           ///< do_exit()
    sim_dur wait_child = 2'000;      ///< wait4()/pthread_join() reaping one child
    sim_dur gettime = 50;            ///< clock_gettime() (vDSO)
    sim_dur tcp_send = 3'000;        ///< tcp_sendmsg() + tcp_write_xmit() + ip_output() to loopback_xmit()
    sim_dur tcp_recv = 2'000;        ///< tcp_recvmsg(): lock_sock, skb walk, tcp_cleanup_rbuf() ACK
    sim_dur udp_send = 2'200;        ///< udp_sendmsg(): route, skb build, ip_output() to loopback_xmit()
    sim_dur udp_recv = 1'300;        ///< udp_recvmsg(): dequeue one datagram (skb_recv_udp)
    sim_dur softirq_rx = 2'500;      ///< per skb: netif_rx() + NET_RX softirq (ip_rcv, tcp/udp_rcv, sk_data_ready)
    sim_dur exec = 100'000;          ///< execve(): tear down the mm, load an ELF binary (kernel part)
    sim_dur ipi_wakeup = 1'500;      ///< wake-list IPI delivery: sched_waking to sched_wakeup on the target
    sim_dur idle_scan_probe = 25;    ///< select_idle_cpu(): one CPU probed (SIS_PROP's scan time)
    sim_dur lb_base = 500;           ///< load_balance(): fixed cost of one attempt
    sim_dur lb_scan_per_cpu = 40;    ///< update_sg_lb_stats(): one CPU's rq statistics read
    sim_dur lb_migrate_task = 1'000; ///< detach_task() + attach_task() of one task
    u32 jitter_pct = 5;              ///< each charged cost varies uniformly by +-jitter_pct %
};

/// Sets one cost by name ("pipe_write=900"); throws config_error naming `where`.
void set_cost(cost_params& c, const std::string& assignment, const std::string& where);
/// Every cost name with its value, in declaration order ("name value" pairs).
std::vector<std::pair<std::string, sim_dur>> cost_list(const cost_params& c);

} // namespace schedlab
