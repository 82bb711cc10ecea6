// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loopback network model: who pays for what, wakeups, flow control,
 * UDP drops, end of file.
 */
#include "workload/net.h"

#include "support/workload_env.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using testing::no_jitter;
using testing::test_env;

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
    t.spawn_pinned(program_builder()
                       .write(ch, n)
                       .user([&](syscalls&, task_struct&) {
                           at_wake = receiver->se.sum_exec_runtime;
                           return sim_dur{0};
                       })
                       .build(),
                   st, "sender", 0);
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

} // namespace
} // namespace schedlab
