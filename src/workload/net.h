// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A loopback network model: one direction of a TCP connection or of a UDP
 * "connection" (a connected datagram socket pair) over 127.0.0.1, as a
 * channel (channel.h) the program ops read and write.
 *
 * Where the CPU time goes. On loopback the kernel runs the receive path in
 * the sender's context: loopback_xmit() hands the skb to netif_rx(), which
 * queues it on this CPU's backlog and raises NET_RX; the softirq runs when
 * the sender's __dev_queue_xmit() re-enables bottom halves
 * (local_bh_enable() -> do_softirq()), on the sender's CPU, before send()
 * returns. process_backlog() -> ip_rcv() -> tcp_v4_rcv()/udp_rcv() queues
 * the data on the receiving socket and calls sk_data_ready, which wakes the
 * reader with WF_SYNC (sock_def_readable(): wake_up_interruptible_sync_poll()).
 * So a send() here costs tcp_send (or udp_send) + the copy + softirq_rx per
 * skb, all charged to the sender's CPU, and its effect (data queued, reader
 * woken) happens at the end of that time. The reader pays tcp_recv (or
 * udp_recv) + the copy. Nothing is charged to a third CPU: there is no
 * ksoftirqd deferral and no RPS/RFS steering on loopback by default.
 *
 * Not modelled: the socket lock and its backlog (a send while the reader
 * holds the lock would defer the receive processing to release_sock() on the
 * reader's CPU), delayed ACKs, Nagle (netperf/tbench set TCP_NODELAY and keep
 * one message in flight), congestion control, GRO/GSO, connection set-up and
 * teardown costs, packet loss (loopback drops only on a full UDP receive
 * buffer, which is counted), SO_RCVLOWAT other than 1, MSG_WAITALL.
 */
#include "workload/channel.h"
#include "workload/task.h"

#include <algorithm>
#include <deque>
#include <string>

namespace schedlab {

/// Socket parameters of the loopback model (Linux's sysctl defaults, as each field says).
struct tcp_params {
    /// sk_sndbuf: net.ipv4.tcp_wmem[1] (16384), what netperf prints as the local send size.
    u64 sk_sndbuf = 16'384;
    /// sk_rcvbuf: net.ipv4.tcp_rmem[1] (131072 since 4.20).
    u64 sk_rcvbuf = 131'072;
    /// Largest skb on lo: the 64 KiB GSO limit of the 65536-byte loopback MTU.
    u64 max_skb = 65'536;
    u64 skb_overhead = 768; ///< truesize - payload (sk_buff + shared info), as for AF_UNIX
};

struct udp_params {
    u64 sk_sndbuf = 212'992; ///< net.core.wmem_default
    u64 sk_rcvbuf = 212'992; ///< net.core.rmem_default
    u64 skb_overhead = 768;
    /// The largest UDP payload over IPv4 (65535 - 8 - 20): larger sends fail with EMSGSIZE.
    static constexpr u64 max_payload = 65'507;
};

/*
 * One direction of an established loopback TCP connection: the writers hold
 * the sending socket, the reader the receiving one.
 * kernel: net/ipv4/tcp.c tcp_sendmsg_locked() / tcp_recvmsg(), tcp_input.c
 * tcp_data_queue() / tcp_rcv_space_adjust(), net/core/stream.c
 * sk_stream_wait_memory() / sk_stream_write_space(), 6.6:
 * - a send of n bytes is split into skbs of at most max_skb bytes; each is
 *   received (queued on the reader's socket) in the sender's context and
 *   wakes the reader's sleepers with WF_SYNC if there are any;
 * - a reader returns as soon as it copied at least one byte (SO_RCVLOWAT 1),
 *   up to what it asked for; it sleeps non-exclusively (sk_wait_data());
 * - flow control: the sender may queue while the bytes sent and not yet read
 *   (in truesize) stay below sk_rcvbuf + sk_sndbuf, i.e. a full receive
 *   window plus a full send queue; then it sleeps (sk_stream_wait_memory(),
 *   non-exclusive) and is woken, without WF_SYNC, once the reader has brought
 *   the in-flight amount down to 2/3 of that limit (sk_stream_write_space()'s
 *   "free space >= half of what is queued").
 * model: the window update and the ACKs that free the sender's memory are
 * folded into the reader's read: the sender's queue drains exactly when the
 * reader consumes data. Real TCP frees the send queue on ACK (at receive
 * time) and throttles on the advertised window instead.
 */
class tcp_channel final : public channel {
public:
    explicit tcp_channel(std::string name, tcp_params params = {})
        : channel(std::move(name)), params_(params)
    {
    }

    bool write(syscalls& sys, task_struct& p, io_call& c) override;
    bool read(syscalls& sys, task_struct& p, io_call& c) override;
    bool poll(syscalls& sys, task_struct& p) override;
    /// kernel: tcp_recvmsg_locked() copies skb after skb while `len` is left and data is queued.
    u64 read_ready(const io_call& c) const override { return std::min(c.want - c.done, bytes_); }
    sim_dur write_cost(const cost_params& c) const override { return c.tcp_send; }
    sim_dur read_cost(const cost_params& c) const override { return c.tcp_recv; }
    /*
     * kernel: net/ipv4/tcp.c tcp_recvmsg_locked(), 6.5 (sndrzt/linux-6.5 4f5cdb332210; the
     * same in 5.15.0 and 6.18.2): under MSG_TRUNC the found_ok_skb path skips
     * skb_copy_datagram_msg() and goes on as for a copy (copied_seq, tcp_rcv_space_adjust(),
     * tcp_eat_recv_skb()): the receive path's work (tcp_recv) without the copy
     * (copy_per_kib).
     */
    bool discards_truncated() const override { return true; }
    /// tcp_send + copy + one softirq_rx per skb (the receive path runs in the sender's context).
    sim_dur write_syscall_cost(const cost_params& c, u64 bytes) const override;
    u64 bytes_queued() const override { return bytes_; }

    u64 in_flight_truesize() const { return truesize_; }
    u64 limit() const { return params_.sk_rcvbuf + params_.sk_sndbuf; }
    std::size_t nr_skbs() const { return skbs_.size(); }
    u64 nr_segments(u64 bytes) const;
    const tcp_params& params() const { return params_; }

private:
    struct skb {
        u64 len;
        u64 truesize;
    };
    tcp_params params_;
    std::deque<skb> skbs_; ///< the reader's sk_receive_queue
    u64 bytes_ = 0;
    u64 truesize_ = 0;
};

/*
 * One direction of a pair of connected loopback UDP sockets.
 * kernel: net/ipv4/udp.c udp_sendmsg() / __udp_queue_rcv_skb() /
 * udp_recvmsg(), net/core/datagram.c __skb_wait_for_more_packets(), 6.6:
 * every send is one datagram (one skb, received in the sender's context);
 * loopback_xmit() orphans the skb, so the sender's sk_wmem_alloc is released
 * at once and a sender never blocks; the receiver drops a datagram when its
 * sk_rmem_alloc is at sk_rcvbuf (counted in drops()); a reader sleeps
 * exclusively and is woken with WF_SYNC (sock_def_readable()); a read returns
 * exactly one datagram, truncated to the buffer (MSG_TRUNC discards the rest).
 * model: a send larger than max_payload is a bug of the benchmark model (the
 * option parsers reject it, as the kernel would with EMSGSIZE).
 */
class udp_channel final : public channel {
public:
    explicit udp_channel(std::string name, udp_params params = {})
        : channel(std::move(name)), params_(params)
    {
    }

    bool write(syscalls& sys, task_struct& p, io_call& c) override;
    bool read(syscalls& sys, task_struct& p, io_call& c) override;
    bool poll(syscalls& sys, task_struct& p) override;
    /// kernel: udp_recvmsg() copies one datagram, truncated to the buffer.
    u64 read_ready(const io_call& c) const override
    {
        return dgrams_.empty() ? 0 : std::min(c.want - c.done, dgrams_.front().len);
    }
    sim_dur write_cost(const cost_params& c) const override { return c.udp_send; }
    sim_dur read_cost(const cost_params& c) const override { return c.udp_recv; }
    /// udp_send + copy + softirq_rx (one datagram).
    sim_dur write_syscall_cost(const cost_params& c, u64 bytes) const override;
    u64 bytes_queued() const override { return bytes_; }

    u64 drops() const { return drops_; }
    std::size_t nr_datagrams() const { return dgrams_.size(); }
    const udp_params& params() const { return params_; }

private:
    struct dgram {
        u64 len;
        u64 truesize;
    };
    udp_params params_;
    std::deque<dgram> dgrams_;
    u64 bytes_ = 0;
    u64 rmem_alloc_ = 0;
    u64 drops_ = 0;
};

/*
 * A listening loopback TCP socket's accept queue and the connect()s that fill it.
 * kernel: 6.5 (sndrzt/linux-6.5 4f5cdb332210):
 * - net/socket.c __sys_listen() caps the backlog at net.core.somaxconn (SOMAXCONN, 4096
 *   since 5.4), af_inet.c inet_listen() makes it sk_max_ack_backlog;
 * - include/net/sock.h sk_acceptq_is_full(): sk_ack_backlog > sk_max_ack_backlog, so
 *   backlog + 1 established connections wait for accept();
 * - net/ipv4/tcp_input.c tcp_conn_request(): a SYN that finds the accept queue full is
 *   dropped (LINUX_MIB_LISTENOVERFLOWS), nothing answers it;
 * - net/ipv4/tcp_output.c tcp_connect() arms the SYN's retransmission timer at icsk_rto =
 *   TCP_TIMEOUT_INIT (1 s, tcp.c tcp_init_sock()); tcp_timer.c tcp_retransmit_timer()
 *   resends the SYN and keeps the timeout while icsk_backoff <= tcp_syn_linear_timeouts (4,
 *   tcp_ipv4.c; new in 6.5), then doubles it: the SYN is resent 1, 2, 3, 4, 5, 7, 11, ...
 *   s after the first;
 * - inet_connection_sock.c inet_csk_accept() takes the queue's head
 *   (reqsk_queue_remove(): sk_acceptq_removed()).
 * On loopback the whole handshake runs in the connecting task's context (the SYN, the
 * listener's SYN-ACK, the client's ACK that completes the child and wakes the accept()er
 * with WF_SYNC through sk_data_ready), so a connect() that is not dropped is one instant.
 * model: the established counter (WF_SYNC) is what accept() waits on; a SYN is dropped
 * when the connections established and not accepted are more than max_ack_backlog; the
 * connecting task then sleeps for the retransmission timeout and tries again.
 * Differs: the retransmission (and the handshake it completes) runs in the timer's softirq
 * on the CPU that armed it, which wakes the connecting task (sk_state_change, not sync) and
 * then the accept()er; the model wakes the connecting task by its own timer, exact to the
 * nanosecond (a timer_list fires on a jiffy, up to 1/8 later in the timer wheel's outer
 * levels), and it wakes the accept()er when it runs. Not modelled: the drop of a final ACK
 * that finds the queue full (tcp_v4_syn_recv_sock() -> tcp_check_req()'s listen_overflow,
 * tcp_abort_on_overflow 0), which needs the queue to fill between one connect()'s SYN and
 * its ACK, an instant here; the SYN-queue (request sock) limit and SYN cookies, as the
 * request socks live only within that instant; connect()'s ETIMEDOUT after
 * tcp_syn_retries (6) + tcp_syn_linear_timeouts (4) retransmissions (over a minute).
 */
struct tcp_listener {
    static constexpr u32 somaxconn = 4096;             ///< net.core.somaxconn (SOMAXCONN)
    static constexpr sim_dur timeout_init = secs(1);   ///< TCP_TIMEOUT_INIT
    static constexpr sim_dur rto_max = secs(120);      ///< TCP_RTO_MAX
    static constexpr unsigned syn_linear_timeouts = 4; ///< net.ipv4.tcp_syn_linear_timeouts

    /// listen(fd, backlog) with `established` as its accept wait queue (WF_SYNC).
    tcp_listener(counter& established, u32 backlog)
        : established(established), max_ack_backlog(std::min(backlog, somaxconn))
    {
    }
    /// sk_ack_backlog: established connections not yet accept()ed.
    u64 ack_backlog() const { return established.value - accepted; }
    /// kernel: sk_acceptq_is_full().
    bool acceptq_is_full() const { return ack_backlog() > max_ack_backlog; }

    counter& established;
    u32 max_ack_backlog;
    u64 accepted = 0;
    u64 listen_overflows = 0; ///< SYNs dropped (LINUX_MIB_LISTENOVERFLOWS)
    u64 max_queued = 0;       ///< the largest sk_ack_backlog seen
};

/// connect() to `l` over loopback: retries its SYN while the accept queue is full.
/// `position` (optional) gets the connection's place in the accept queue's order: the
/// accept() that returns it is the (position + 1)-th (inet_csk_accept() takes the head).
task_code tcp_connect(task_context& t, tcp_listener& l, u64* position = nullptr);
/// accept() on `l`: waits for an established connection (tcp_recv charged first).
task_code tcp_accept(task_context& t, tcp_listener& l);

/// Both directions of a loopback connection: `to_server` and `to_client`.
struct loopback_connection {
    channel* to_server = nullptr;
    channel* to_client = nullptr;
};

} // namespace schedlab
