// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loopback network model: who pays for what, wakeups, flow control,
 * UDP drops, end of file.
 */
#include "workload/net.h"

#include "support/workload_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace schedlab {
namespace {

using testing::no_jitter;
using testing::test_env;

/// The sender of the receive-path tests: writes `n` bytes to `ch` from CPU 0, then records in
/// `at_wake` the receiver's CPU time at that point (the send has woken it).
void spawn_tcp_sender(test_env& t, workload_state& st, tcp_channel& ch, u64 n,
                      task_struct*& receiver, u64& at_wake)
{
    t.spawn_pinned(program_builder()
                       .write(ch, n)
                       .user([&receiver, &at_wake](syscalls&, task_struct&) {
                           at_wake = receiver->se.sum_exec_runtime;
                           return sim_dur{0};
                       })
                       .build(),
                   st, "sender", 0);
}

TEST(tcp_channel, the_receive_path_is_charged_to_the_senders_cpu)
{
    const cost_params c = no_jitter();
    test_env t(2, 1, "6.6", c);
    workload_state st;
    tcp_channel& ch = st.make_channel<tcp_channel>("c2s");
    // 100 KiB: two skbs (64 KiB + 36 KiB), so two passes of the receive path.
    const u64 n = 100 * 1024;
    task_struct* receiver = nullptr;
    u64 at_wake = 0; // the receiver's CPU time when the send has woken it
    spawn_tcp_sender(t, st, ch, n, receiver, at_wake);
    receiver = &t.spawn_pinned(program_builder().read(ch, n).build(), st, "receiver", 1);
    t.k.run(secs(1));
    ASSERT_TRUE(t.k.all_exited());
    EXPECT_EQ(ch.nr_segments(n), 2u);
    EXPECT_EQ(ch.stats().bytes_read, n);

    const sim_dur send = c.tcp_send + copy_cost(c, n) + 2 * c.softirq_rx;
    const sim_dur exit = c.exit;
    // cpu0: the send (with both softirq passes) and the exit; the receiver's wakeup costs it one wakeup.
    const sim_dur cpu0 = t.k.charges().cpu(0).busy_time;
    EXPECT_GE(cpu0, send + exit);
    EXPECT_LE(cpu0, send + exit + c.wakeup + c.context_switch);
    // cpu1: the receiver pays tcp_recv, finds the queue empty and sleeps (sk_wait_data());
    // woken, it copies the 100 KiB (skb_copy_datagram_msg()) and exits. Each switch-in costs
    // it context_switch: the start and the wakeup.
    EXPECT_EQ(static_cast<sim_dur>(at_wake), c.context_switch + c.tcp_recv)
        << "no copy before the wait";
    EXPECT_EQ(static_cast<sim_dur>(receiver->se.sum_exec_runtime - at_wake),
              c.context_switch + copy_cost(c, n) + exit)
        << "the copy after the wakeup";
    const sim_dur cpu1 = t.k.charges().cpu(1).busy_time;
    EXPECT_EQ(cpu1, 2 * c.context_switch + c.tcp_recv + copy_cost(c, n) + exit);
    EXPECT_LT(cpu1, cpu0) << "the softirq work must not land on the receiver's CPU";
}

/// recv(MSG_WAITALL|MSG_TRUNC) of `n` bytes, as tbench's client reads a reply's body.
task_code faithfix_recv_trunc(task_context& t, channel& ch, u64 n)
{
    const bool got = co_await t.recv_trunc(ch, n);
    (void)got;
}

/*
 * Lane faithfix: tcp_recvmsg_locked() (sndrzt/linux-6.5 4f5cdb332210 net/ipv4/tcp.c; the same
 * in 5.15.0 and 6.18.2) skips skb_copy_datagram_msg() under MSG_TRUNC and consumes the bytes
 * as it would after a copy. The receiver of the test above, reading with recv_trunc(): the
 * same tcp_recv before its wait, nothing after it but the switch-in and the exit, and all
 * 100 KiB consumed. (Checked: before lane faithfix, with read() in its place as tbench's
 * client had, the copy was charged: 6000 ns more at 60 ns/KiB.) On a UDP channel MSG_TRUNC
 * copies (udp_recvmsg() copies up to the buffer and reports the datagram's length).
 */
TEST(tcp_channel, a_recv_with_msg_trunc_consumes_the_bytes_without_their_copy)
{
    const cost_params c = no_jitter();
    test_env t(2, 1, "6.6", c);
    workload_state st;
    tcp_channel& ch = st.make_channel<tcp_channel>("c2s");
    const u64 n = 100 * 1024;
    ASSERT_GT(copy_cost(c, n), 0);
    task_struct* receiver = nullptr;
    u64 at_wake = 0;
    spawn_tcp_sender(t, st, ch, n, receiver, at_wake);
    receiver = &t.spawn_pinned(
        make_task([&](task_context& tc) { return faithfix_recv_trunc(tc, ch, n); }), "receiver",
        1);
    t.k.run(secs(1));
    ASSERT_TRUE(t.k.all_exited());
    EXPECT_EQ(ch.stats().bytes_read, n);
    EXPECT_EQ(ch.bytes_queued(), 0u);
    EXPECT_EQ(static_cast<sim_dur>(at_wake), c.context_switch + c.tcp_recv);
    EXPECT_EQ(static_cast<sim_dur>(receiver->se.sum_exec_runtime - at_wake),
              c.context_switch + c.exit)
        << "no copy after the wakeup";
    EXPECT_TRUE(ch.discards_truncated());
    udp_channel udp("u");
    EXPECT_FALSE(udp.discards_truncated());
}

TEST(tcp_channel, a_reader_returns_what_is_queued_and_sees_eof_after_close)
{
    test_env t(2);
    workload_state st;
    tcp_channel& ch = st.make_channel<tcp_channel>("c2s");
    counter& got = st.make_counter("after-loop");
    t.spawn(program_builder().write(ch, 10).write(ch, 20).close(ch).build(), st, "writer", 0);
    // The reader loops on 1000-byte reads until EOF breaks its loop.
    t.spawn(program_builder()
                .loop(100, [&](program_builder& b) { b.read(ch, 1000); })
                .signal(got)
                .build(),
            st, "reader", 1);
    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(ch.stats().bytes_read, 30u);
    EXPECT_EQ(got.value, 1u) << "EOF must leave the loop, not end the program";
}

TEST(tcp_channel, a_writer_blocks_at_the_window_and_wakes_at_two_thirds)
{
    tcp_params tp;
    tp.sk_sndbuf = 4096;
    tp.sk_rcvbuf = 8192;
    tp.skb_overhead = 0;
    test_env t(2);
    workload_state st;
    tcp_channel& ch = st.make_channel<tcp_channel>("c2s", tp);
    ASSERT_EQ(ch.limit(), 12288u);
    task_struct& w = t.spawn_pinned(
        program_builder().loop(8, [&](program_builder& b) { b.write(ch, 4096); }).build(), st,
        "writer", 0);
    // The reader waits until the writer is stuck, then reads 1 KiB at a time.
    counter& go = st.make_counter("go");
    t.spawn_pinned(program_builder()
                       .wait_for(go, 1)
                       .loop(32, [&](program_builder& b) { b.read(ch, 1024); })
                       .build(),
                   st, "reader", 1);
    t.k.run(msecs(5));
    EXPECT_EQ(ch.in_flight_truesize(), 12288u) << "three 4 KiB writes fill the limit";
    EXPECT_EQ(w.__state, TASK_INTERRUPTIBLE);
    EXPECT_EQ(ch.stats().writer_sleeps, 1u);
    ++go.value;
    go.waiters.wake_up_all(t.k.sys(), 0);
    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(ch.stats().bytes_read, 8u * 4096);
    EXPECT_LE(ch.stats().max_bytes_queued, 12288u + 4096u);
}

TEST(udp_channel, datagrams_are_read_one_per_call_truncated_and_dropped_when_full)
{
    udp_params up;
    up.sk_rcvbuf = 3000;
    up.skb_overhead = 0;
    test_env t(2);
    workload_state st;
    udp_channel& ch = st.make_channel<udp_channel>("dgram", up);
    counter& go = st.make_counter("go");
    // Four 1000-byte datagrams into a 3000-byte buffer: the fourth is dropped.
    t.spawn_pinned(program_builder().loop(4, [&](program_builder& b) { b.write(ch, 1000); })
                       .signal(go)
                       .build(),
                   st, "sender", 0);
    t.spawn_pinned(program_builder()
                       .wait_for(go, 1)
                       .read(ch, 600) // one datagram, 400 bytes discarded
                       .read(ch, 1000)
                       .read(ch, 1000)
                       .build(),
                   st, "receiver", 1);
    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(ch.drops(), 1u);
    EXPECT_EQ(ch.stats().bytes_written, 4000u);
    EXPECT_EQ(ch.stats().bytes_read, 2600u);
    EXPECT_EQ(ch.nr_datagrams(), 0u);
}

task_struct& spawn_net_task(test_env& e, std::unique_ptr<task_behaviour> b, const std::string& comm,
                            int cpu)
{
    task_opts o;
    o.comm = comm;
    o.cpu = cpu;
    return e.k.spawn(std::move(b), o);
}

task_code tcp_connector(task_context& t, tcp_listener& l, sim_time& connected)
{
    co_await tcp_connect(t, l);
    connected = t.now();
}

/// Sleeps `first`, then accepts `n` connections.
task_code tcp_acceptor(task_context& t, tcp_listener& l, sim_dur first, unsigned n)
{
    co_await t.sleep(first);
    for (unsigned i = 0; i < n; ++i)
        co_await tcp_accept(t, l);
}

/*
 * kernel: sk_acceptq_is_full() is sk_ack_backlog > sk_max_ack_backlog, so listen(fd, 20)
 * holds 21 established connections; tcp_conn_request() drops the 22nd's SYN and its
 * connect() waits for the retransmission at TCP_TIMEOUT_INIT (1 s), which finds the queue
 * drained by then.
 */
TEST(tcp_listener, the_22nd_connection_on_a_backlog_of_20_is_dropped_and_retried_after_1_s)
{
    test_env e(4, 1, "6.6", no_jitter());
    workload_state st;
    tcp_listener l(st.make_counter("listen", WF_SYNC), 20);
    EXPECT_EQ(l.max_ack_backlog, 20u);
    const unsigned n = 30;
    std::vector<sim_time> at(n, -1);
    // The accept()er is away for 10 ms while the 30 connect()s arrive.
    spawn_net_task(e, make_task([&](task_context& t) { return tcp_acceptor(t, l, msecs(10), n); }),
                   "daemon", 0);
    for (unsigned i = 0; i < n; ++i)
        spawn_net_task(e, make_task([&, i](task_context& t) { return tcp_connector(t, l, at[i]); }),
                       "client", 1 + static_cast<int>(i % 3));
    e.k.run(secs(2));
    EXPECT_TRUE(e.k.all_exited());
    EXPECT_EQ(l.accepted, n);
    EXPECT_EQ(l.listen_overflows, n - 21) << "one drop for each connection past the 21st";
    EXPECT_EQ(l.max_queued, 21u);
    std::vector<sim_time> sorted = at;
    std::sort(sorted.begin(), sorted.end());
    for (unsigned i = 0; i < 21; ++i)
        EXPECT_LT(sorted[i], msecs(10)) << "connection " << i + 1 << " fits the queue";
    for (unsigned i = 21; i < n; ++i) {
        EXPECT_GE(sorted[i], secs(1)) << "connection " << i + 1 << " waits for its SYN's resend";
        EXPECT_LT(sorted[i], secs(1) + msecs(10)) << "connection " << i + 1;
    }
}

TEST(tcp_listener, the_backlog_is_capped_at_somaxconn)
{
    workload_state st;
    const tcp_listener l(st.make_counter("listen", WF_SYNC), 100'000);
    EXPECT_EQ(l.max_ack_backlog, 4096u);
}

/*
 * kernel: 6.5 tcp_retransmit_timer(): a SYN_SENT socket keeps icsk_rto while icsk_backoff
 * <= tcp_syn_linear_timeouts (4), then doubles it: the SYN goes out at 0, 1, 2, 3, 4, 5, 7
 * and 11 s.
 */
TEST(tcp_listener, a_dropped_syn_is_resent_after_1_s_four_more_times_then_at_doubling_intervals)
{
    test_env e(2, 1, "6.6", no_jitter());
    workload_state st;
    tcp_listener l(st.make_counter("listen", WF_SYNC), 0); // one connection fits
    sim_time first = -1;
    sim_time second = -1;
    spawn_net_task(e, make_task([&](task_context& t) { return tcp_connector(t, l, first); }), "c1",
                   0);
    spawn_net_task(e, make_task([&](task_context& t) { return tcp_connector(t, l, second); }), "c2",
                   1);
    // Nobody accepts: the second connect()'s SYN is dropped at every try.
    const std::vector<std::pair<sim_dur, u64>> drops_by = {
        {msecs(500), 1},  {msecs(1500), 2}, {msecs(2500), 3}, {msecs(3500), 4},  {msecs(4500), 5},
        {msecs(5500), 6}, {msecs(6900), 6}, {msecs(7100), 7}, {msecs(10900), 7}, {msecs(11100), 8}};
    for (const auto& [when, drops] : drops_by) {
        e.k.run(when);
        EXPECT_EQ(l.listen_overflows, drops) << "at " << when / 1'000'000 << " ms";
    }
    EXPECT_GE(first, 0);
    EXPECT_EQ(second, -1);
}

} // namespace
} // namespace schedlab
