// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loopback TCP and UDP channels: see net.h.
 */
#include "workload/net.h"

#include "sched/syscalls.h"
#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

/* ------------------------------------------------------------------------ */
/* TCP                                                                        */

u64 tcp_channel::nr_segments(u64 bytes) const
{
    return std::max<u64>(1, (bytes + params_.max_skb - 1) / params_.max_skb);
}

sim_dur tcp_channel::write_syscall_cost(const cost_params& c, u64 bytes) const
{
    return c.tcp_send + copy_cost(c, bytes) +
           static_cast<sim_dur>(nr_segments(bytes)) * c.softirq_rx;
}

// kernel: tcp_sendmsg_locked() + the loopback receive path (see the class comment).
bool tcp_channel::write(syscalls& sys, task_struct& p, io_call& c)
{
    while (c.done < c.want) {
        if (truesize_ >= limit()) {
            wr_wait_.add(p); // sk_stream_wait_memory(): non-exclusive
            c.waited = true;
            ++stats_.writer_sleeps;
            return false;
        }
        const u64 len = std::min(params_.max_skb, c.want - c.done);
        const u64 ts = len + params_.skb_overhead;
        skbs_.push_back({len, ts});
        truesize_ += ts;
        bytes_ += len;
        c.done += len;
        stats_.bytes_written += len;
        note_queued();
        // tcp_data_ready() -> sock_def_readable(), in the sender's softirq.
        if (rd_wait_.has_sleeper())
            c.nr_woken += rd_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    }
    ++stats_.writes;
    return true;
}

// kernel: tcp_recvmsg() (see the class comment).
bool tcp_channel::read(syscalls& sys, task_struct& p, io_call& c)
{
    if (at_eof(c))
        return true;
    if (skbs_.empty()) {
        rd_wait_.add(p); // sk_wait_data(): non-exclusive
        c.waited = true;
        ++stats_.reader_sleeps;
        return false;
    }
    const bool writer_blocked = truesize_ >= limit();
    while (c.done < c.want && !skbs_.empty()) {
        skb& s = skbs_.front();
        const u64 chunk = std::min(s.len, c.want - c.done);
        s.len -= chunk;
        bytes_ -= chunk;
        c.done += chunk;
        stats_.bytes_read += chunk;
        if (s.len == 0) {
            truesize_ -= s.truesize;
            skbs_.pop_front();
        }
    }
    ++stats_.reads;
    // sk_stream_write_space(): wake the senders once a third of the room is back.
    if ((writer_blocked || wr_wait_.has_sleeper()) && truesize_ * 3 <= limit() * 2)
        c.nr_woken += wr_wait_.wake_up_all(sys, 0);
    return true;
}

// kernel: tcp_poll(): readable once data is queued (or the peer closed).
bool tcp_channel::poll(syscalls& sys, task_struct& p)
{
    (void)sys;
    if (!skbs_.empty() || write_closed_)
        return true;
    rd_wait_.add(p);
    ++stats_.reader_sleeps;
    return false;
}

/* ------------------------------------------------------------------------ */
/* UDP                                                                        */

sim_dur udp_channel::write_syscall_cost(const cost_params& c, u64 bytes) const
{
    return c.udp_send + copy_cost(c, bytes) + c.softirq_rx;
}

// kernel: udp_sendmsg() + the loopback receive path (see the class comment).
bool udp_channel::write(syscalls& sys, task_struct& p, io_call& c)
{
    (void)p;
    SIM_BUG_ON(c.want > udp_params::max_payload, "{}: UDP datagram of {} bytes", name_, c.want);
    const u64 ts = c.want + params_.skb_overhead;
    c.done = c.want;
    stats_.bytes_written += c.want;
    ++stats_.writes;
    // __udp_queue_rcv_skb() -> __sock_queue_rcv_skb(): drop when the receive buffer is full.
    if (rmem_alloc_ >= params_.sk_rcvbuf) {
        ++drops_;
        return true;
    }
    dgrams_.push_back({c.want, ts});
    rmem_alloc_ += ts;
    bytes_ += c.want;
    note_queued();
    if (rd_wait_.has_sleeper())
        c.nr_woken += rd_wait_.wake_up(sys, 1, WF_SYNC, c.walk);
    return true;
}

// kernel: udp_recvmsg() (see the class comment).
bool udp_channel::read(syscalls& sys, task_struct& p, io_call& c)
{
    (void)sys;
    if (at_eof(c))
        return true;
    if (dgrams_.empty()) {
        rd_wait_.add_exclusive(p); // __skb_wait_for_more_packets(): exclusive
        c.waited = true;
        ++stats_.reader_sleeps;
        return false;
    }
    const dgram d = dgrams_.front();
    dgrams_.pop_front();
    rmem_alloc_ -= d.truesize;
    bytes_ -= d.len;
    const u64 got = std::min(d.len, c.want - c.done);
    c.done += got;
    stats_.bytes_read += got;
    ++stats_.reads;
    return true;
}

bool udp_channel::poll(syscalls& sys, task_struct& p)
{
    (void)sys;
    if (!dgrams_.empty() || write_closed_)
        return true;
    rd_wait_.add(p);
    ++stats_.reader_sleeps;
    return false;
}

task_code tcp_connect(task_context& t, tcp_listener& l, u64* position)
{
    sim_dur rto = tcp_listener::timeout_init;
    for (unsigned backoff = 0; l.acceptq_is_full();) {
        ++l.listen_overflows; // tcp_conn_request(): the SYN is dropped
        co_await t.timeout_exact(rto);
        // tcp_retransmit_timer(): the SYN is resent, icsk_backoff++, and the timeout
        // doubles once the linear ones are used up.
        if (++backoff > tcp_listener::syn_linear_timeouts)
            rto = std::min(2 * rto, tcp_listener::rto_max);
    }
    if (position)
        *position = l.established.value;
    co_await t.signal(l.established);
    l.max_queued = std::max(l.max_queued, l.ack_backlog());
}

task_code tcp_accept(task_context& t, tcp_listener& l)
{
    co_await t.wait_for(l.established, l.accepted + 1, &cost_params::tcp_recv);
    ++l.accepted; // reqsk_queue_remove(): sk_acceptq_removed()
}

} // namespace schedlab
