// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipes, AF_UNIX stream sockets, futexes, barriers: blocking and wakeup rules.
 */
#include "workload/channel.h"

#include "support/workload_env.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using testing::spawn_scripted;
using testing::test_env;

/// Writes `bytes` to `ch` directly from a scripted task; must not block.
int direct_write(syscalls& k, task_struct& p, channel& ch, u64 bytes)
{
    io_call c{.want = bytes};
    const bool ok = ch.write(k, p, c);
    EXPECT_TRUE(ok) << "direct write of " << bytes << " bytes to " << ch.name() << " blocked";
    return c.nr_woken;
}

TEST(pipe_write, reader_is_woken_only_when_the_pipe_was_empty)
{
    test_env t(2);
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    task_struct& reader = t.spawn(program_builder().read(pipe, 1000).build(), st, "reader");
    t.k.run(msecs(1));
    ASSERT_EQ(reader.__state, TASK_INTERRUPTIBLE);
    ASSERT_TRUE(pipe.rd_wait().contains(reader));

    int woken = 0;
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            for (int i = 0; i < 10; ++i)
                woken += direct_write(k, p, pipe, 100); // ten writes in one burst
            return task_action::do_exit();
        },
        "writer");
    t.k.run(msecs(10));

    // Only the first write found the pipe empty: one wake_up() call, one task woken.
    EXPECT_EQ(pipe.rd_wait().nr_wake_calls(), 1u);
    EXPECT_EQ(woken, 1);
    EXPECT_EQ(pipe.stats().bytes_read, 1000u);
    EXPECT_EQ(pipe.stats().reads, 1u) << "the reader found all ten messages at once";
    EXPECT_TRUE(t.k.all_exited());
}

/// Runs one write or read of `bytes` on `ch` from a task on `cpu`; returns the CPU it ran on.
int one_op(test_env& t, channel& ch, bool write, int cpu, u64 bytes = 100)
{
    int ran_on = -1;
    spawn_scripted(
        t.k,
        [&, write](syscalls& k, task_struct& p, int) {
            io_call c{.want = bytes};
            EXPECT_TRUE(write ? ch.write(k, p, c) : ch.read(k, p, c));
            ran_on = p.cpu;
            return task_action::do_exit();
        },
        write ? "writer" : "reader", cpu);
    t.k.run(t.sim.now() + msecs(1));
    return ran_on;
}

TEST(pipe_channel, state_lines_follow_the_pipe_and_data_lines_are_pulled_by_a_reader_elsewhere)
{
    test_env t(2);
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    ASSERT_EQ(one_op(t, pipe, true, 0), 0);
    ASSERT_EQ(one_op(t, pipe, true, 0), 0); // merges into the first buffer, warm tail line
    EXPECT_EQ(pipe.stats().line_transfers, 0u) << "one CPU: nothing moves";
    ASSERT_EQ(one_op(t, pipe, false, 1), 1);
    // The state lines come over, and bytes 0-99 of the buffer: lines 0 and 1.
    EXPECT_EQ(pipe.stats().line_transfers, pipe_channel::PIPE_STATE_LINES + 2);
    ASSERT_EQ(one_op(t, pipe, false, 0), 0);
    // The state lines go back; bytes 100-199 were written here and are still warm.
    EXPECT_EQ(pipe.stats().line_transfers, 2 * pipe_channel::PIPE_STATE_LINES + 2);
}

TEST(pipe_channel, data_the_private_caches_lost_comes_from_the_llc)
{
    test_env t(2);
    workload_state st;
    pipe_channel& warm = st.make_pipe("warm");
    pipe_channel& cold = st.make_pipe("cold");
    ASSERT_EQ(one_op(t, cold, true, 0, 200), 0);
    // More than the private caches hold passes through CPU 0 meanwhile.
    t.k.charges().cm().data_touch(0, static_cast<u64>(t.k.charges().params().l2_kib) * 1024);
    ASSERT_EQ(one_op(t, warm, true, 0, 200), 0);
    ASSERT_EQ(one_op(t, warm, false, 0, 200), 0);
    EXPECT_EQ(warm.stats().line_transfers, 0u);
    ASSERT_EQ(one_op(t, cold, false, 0, 200), 0);
    EXPECT_EQ(cold.stats().line_transfers, 4u) << "200 bytes from offset 0: four lines";
}

TEST(unix_stream, a_reader_on_another_cpu_pulls_the_socket_state_and_the_skb)
{
    test_env t(2);
    workload_state st;
    unix_stream_channel& sock = st.make_socketpair("s");
    ASSERT_EQ(one_op(t, sock, true, 0), 0);
    ASSERT_EQ(one_op(t, sock, true, 0), 0);
    ASSERT_EQ(one_op(t, sock, false, 0), 0);
    EXPECT_EQ(sock.stats().line_transfers, 0u) << "written and read warm on one CPU";
    ASSERT_EQ(one_op(t, sock, false, 1), 1);
    EXPECT_EQ(sock.stats().line_transfers,
              unix_stream_channel::UNIX_STATE_LINES + unix_stream_channel::SKB_LINES + 2);
}

TEST(pipe_write, writer_blocks_when_64k_are_queued_and_resumes_when_the_reader_drains)
{
    test_env t(2);
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    task_struct& writer = t.spawn(
        program_builder().loop(700, [&](program_builder& b) { b.write(pipe, 100); }).build(), st,
        "writer");
    task_struct& reader = t.spawn(program_builder()
                                      .sleep(msecs(10))
                                      .loop(700, [&](program_builder& b) { b.read(pipe, 100); })
                                      .build(),
                                  st, "reader");
    t.k.run(msecs(5));

    // 16 pages of 40 merged 100-byte messages each: 640 messages, 64000 bytes.
    EXPECT_EQ(pipe.stats().writes, 640u);
    EXPECT_EQ(pipe.bytes_queued(), 64'000u);
    EXPECT_EQ(pipe.nr_buffers(), 16u);
    EXPECT_TRUE(pipe.full());
    EXPECT_EQ(writer.__state, TASK_INTERRUPTIBLE);
    EXPECT_TRUE(pipe.wr_wait().contains(writer));

    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(pipe.stats().bytes_read, 70'000u);
    EXPECT_GE(pipe.stats().writer_sleeps, 1u);
    EXPECT_GT(writer.exit_time, msecs(10));
    EXPECT_GT(reader.exit_time, msecs(10));
}

TEST(pipe_write, page_sized_writes_cannot_merge_so_only_16_fit)
{
    test_env t(1);
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            for (int i = 0; i < 16; ++i)
                direct_write(k, p, pipe, pipe_channel::PAGE_SIZE);
            io_call c{.want = 1};
            EXPECT_FALSE(pipe.write(k, p, c)) << "a 17th buffer does not fit";
            EXPECT_EQ(c.done, 0u);
            return task_action::sleep();
        },
        "writer");
    t.k.run(msecs(1));
    EXPECT_EQ(pipe.bytes_queued(), 16 * pipe_channel::PAGE_SIZE);
    EXPECT_EQ(pipe.wr_wait().size(), 1u);
}

TEST(pipe_read, blocked_read_is_retried_and_short_reads_loop)
{
    test_env t(2);
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    task_struct& reader = t.spawn(program_builder().read(pipe, 100).build(), st, "reader");
    t.spawn(
        program_builder().sleep(msecs(1)).write(pipe, 60).sleep(msecs(1)).write(pipe, 40).build(),
        st, "writer");
    t.k.run(secs(1));

    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(pipe.stats().bytes_read, 100u);
    EXPECT_EQ(pipe.stats().reads, 2u) << "60 bytes, then a second read() for the other 40";
    EXPECT_EQ(pipe.stats().reader_sleeps, 2u);
    EXPECT_GT(reader.exit_time, msecs(2));
    EXPECT_EQ(reader.nvcsw, 2u + 1u) << "two sleeps, plus do_exit()'s final schedule()";
}

TEST(pipe_read, reader_of_a_full_pipe_wakes_one_writer_which_rechecks_for_room)
{
    test_env t(3);
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            for (int i = 0; i < 15; ++i)
                direct_write(k, p, pipe, pipe_channel::PAGE_SIZE);
            direct_write(k, p, pipe, pipe_channel::PAGE_SIZE - 50); // no room to merge 100 bytes
            return task_action::do_exit();
        },
        "filler", 0);
    t.k.run(msecs(1));
    ASSERT_TRUE(pipe.full());
    task_struct& a = t.spawn_pinned(program_builder().write(pipe, 100).build(), st, "a", 1);
    t.k.run(msecs(2));
    task_struct& b = t.spawn_pinned(program_builder().write(pipe, 100).build(), st, "b", 2);
    t.k.run(msecs(3));
    ASSERT_EQ(pipe.wr_wait().size(), 2u);

    // Read 100 bytes of the oldest page: no buffer is freed, yet one writer is woken.
    int woken = -1;
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            io_call c{.want = 100};
            EXPECT_TRUE(pipe.read(k, p, c));
            woken = c.nr_woken;
            return task_action::do_exit();
        },
        "reader1", 0);
    t.k.run(msecs(4));
    EXPECT_EQ(woken, 1);
    EXPECT_EQ(pipe.wr_wait().size(), 2u) << "the woken writer found no room and slept again";
    EXPECT_EQ(a.__state, TASK_INTERRUPTIBLE);

    // Free a whole buffer: one writer gets it and, leaving the pipe full, wakes nobody.
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            io_call c{.want = pipe_channel::PAGE_SIZE - 100};
            EXPECT_TRUE(pipe.read(k, p, c));
            EXPECT_EQ(c.done, pipe_channel::PAGE_SIZE - 100);
            return task_action::do_exit();
        },
        "reader2", 0);
    t.k.run(msecs(5));
    EXPECT_TRUE(pipe.full());
    EXPECT_EQ(pipe.wr_wait().size(), 1u);
    EXPECT_EQ(pipe.stats().writes, 16u + 1u);
    EXPECT_NE(a.__state == TASK_DEAD, b.__state == TASK_DEAD) << "exactly one writer finished";
}

TEST(pipe_poll, pollers_are_all_woken_by_one_write)
{
    test_env t(4);
    workload_state st;
    pipe_channel& wake = st.make_pipe("wake");
    for (int i = 0; i < 5; ++i)
        t.spawn(program_builder().poll(wake).build(), st, fmt::format("poller{}", i));
    t.k.run(msecs(1));
    ASSERT_EQ(wake.rd_wait().size(), 5u);
    int woken = 0;
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            woken = direct_write(k, p, wake, 1);
            return task_action::do_exit();
        },
        "kicker");
    t.k.run(secs(1));
    EXPECT_EQ(woken, 5) << "poll entries are non-exclusive: a thundering herd";
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(wake.bytes_queued(), 1u) << "poll does not consume";
}

TEST(unix_stream, sender_blocks_when_sndbuf_is_exhausted)
{
    test_env t(2);
    workload_state st;
    unix_stream_channel& sock = st.make_socketpair("s");
    const unix_stream_params& sp = sock.params();
    ASSERT_EQ(sock.truesize(100), 128u + sp.skb_overhead);
    task_struct& writer = t.spawn(
        program_builder().loop(300, [&](program_builder& b) { b.write(sock, 100); }).build(), st,
        "writer");
    t.spawn(program_builder()
                .sleep(msecs(10))
                .loop(300, [&](program_builder& b) { b.read(sock, 100).run(usecs(20)); })
                .build(),
            st, "reader"); // a reader slower than the writer
    t.k.run(msecs(5));

    // Allocation is allowed while sk_wmem_alloc < sk_sndbuf: ceil(212992 / 896) = 238 skbs.
    const u64 ts = sock.truesize(100);
    const u64 in_flight = (sp.sk_sndbuf + ts - 1) / ts;
    EXPECT_EQ(in_flight, 238u);
    EXPECT_EQ(sock.nr_skbs(), in_flight);
    EXPECT_EQ(sock.sk_wmem_alloc(), in_flight * ts);
    EXPECT_EQ(writer.__state, TASK_INTERRUPTIBLE);
    EXPECT_TRUE(sock.wr_wait().contains(writer));

    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(sock.stats().bytes_read, 30'000u);
    // Woken once, when the reader brought sk_wmem_alloc down to sk_sndbuf / 4
    // (59 skbs), not as soon as one skb was freed; the 62 remaining messages
    // then fit without blocking again.
    EXPECT_EQ(sock.stats().writer_sleeps, 1u);
    EXPECT_EQ(sock.wr_wait().nr_woken(), 1u);
}

TEST(unix_stream, sleeping_reader_is_woken_by_the_first_skb_and_reads_across_skbs)
{
    test_env t(2);
    workload_state st;
    unix_stream_channel& sock = st.make_socketpair("s");
    t.spawn(program_builder().read(sock, 1000).build(), st, "reader");
    t.k.run(msecs(1));
    int woken = 0;
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            for (int i = 0; i < 10; ++i)
                woken += direct_write(k, p, sock, 100);
            return task_action::do_exit();
        },
        "writer");
    t.k.run(secs(1));
    EXPECT_EQ(woken, 1);
    EXPECT_EQ(sock.stats().reads, 1u);
    EXPECT_EQ(sock.stats().bytes_read, 1000u);
    EXPECT_EQ(sock.sk_wmem_alloc(), 0u);
}

// kernel: unix_stream_sendmsg() (6.6) takes each skb's size as the rest of the write capped
// at sk_sndbuf / 2 - 64 and at SKB_MAX_HEAD(0) + UNIX_SKB_FRAGS_SZ (36 544 bytes here): a
// 100 000-byte write queues 36 544 + 36 544 + 26 912 (one skb of sk_sndbuf / 2 - 64 = 106 432
// before the second cap); with a 16 KiB sk_sndbuf the first cap (8128) is the smaller.
void expect_skbs_of_one_write(u64 sndbuf, u64 want, const std::vector<u64>& sizes)
{
    test_env t(2);
    workload_state st;
    unix_stream_params sp;
    sp.sk_sndbuf = sndbuf;
    unix_stream_channel& sock = st.make_socketpair("s", sp);
    spawn_scripted(
        t.k,
        [&](syscalls& k, task_struct& p, int) {
            direct_write(k, p, sock, want);
            return task_action::do_exit();
        },
        "writer");
    t.k.run(secs(1));
    u64 wmem = 0;
    for (u64 n : sizes)
        wmem += sock.truesize(n);
    EXPECT_EQ(sock.nr_skbs(), sizes.size()) << sndbuf << " " << want;
    EXPECT_EQ(sock.sk_wmem_alloc(), wmem) << sndbuf << " " << want;
    EXPECT_EQ(sock.bytes_queued(), want) << sndbuf << " " << want;
}

TEST(unix_stream, a_large_write_is_split_at_the_kernels_skb_size)
{
    ASSERT_EQ(unix_stream_params{}.skb_max, 36'544u);
    expect_skbs_of_one_write(212'992, 100'000, {36'544, 36'544, 26'912});
    expect_skbs_of_one_write(212'992, 36'544, {36'544});
    expect_skbs_of_one_write(16'384, 10'000, {8'128, 1'872});
}

TEST(futex, wait_sleeps_only_while_the_value_matches)
{
    test_env t(2);
    workload_state st;
    futex& f = st.make_futex("f", 0);
    task_struct& waiter =
        t.spawn(program_builder().futex_wait(f, 0).mark("waiter").build(), st, "waiter");
    task_struct& mismatch =
        t.spawn(program_builder().futex_wait(f, 7).mark("mismatch").build(), st, "mismatch");
    t.spawn(program_builder().sleep(msecs(1)).futex_store(f, 1).futex_wake(f, 1).build(), st,
            "waker");
    t.k.run(secs(1));

    EXPECT_TRUE(t.k.all_exited());
    EXPECT_GE(*st.mark_time("waiter"), msecs(1));
    EXPECT_LT(*st.mark_time("mismatch"), usecs(100)) << "EAGAIN: the value was not 7";
    EXPECT_EQ(mismatch.nvcsw, 1u) << "only do_exit()'s final schedule()";
    EXPECT_EQ(waiter.nvcsw, 2u) << "one sleep, plus do_exit()";
}

TEST(futex, wake_wakes_at_most_nr_waiters_in_fifo_order)
{
    test_env t(4);
    workload_state st;
    futex& f = st.make_futex("f", 0);
    t.spawn(program_builder().futex_wait(f, 0).mark("first").build(), st, "first");
    t.k.run(usecs(100));
    t.spawn(program_builder().futex_wait(f, 0).mark("second").build(), st, "second");
    t.k.run(usecs(200));
    t.spawn(program_builder().futex_wake(f, 1).sleep(msecs(1)).futex_wake(f, 1).build(), st,
            "waker");
    t.k.run(secs(1));

    ASSERT_TRUE(st.mark_time("first") && st.mark_time("second"));
    EXPECT_LT(*st.mark_time("first"), msecs(1));
    EXPECT_GE(*st.mark_time("second"), msecs(1));
    EXPECT_TRUE(t.k.all_exited());
}

TEST(barrier, every_party_leaves_after_the_last_arrival)
{
    test_env t(3);
    workload_state st;
    barrier& b = st.make_barrier("b", 3);
    for (int i = 1; i <= 3; ++i)
        t.spawn(program_builder()
                    .loop(2, [&](program_builder& l) { l.run(msecs(i)).barrier_wait(b); })
                    .mark(fmt::format("t{}", i))
                    .build(),
                st, fmt::format("t{}", i));
    t.k.run(secs(1));

    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(b.generation, 2u);
    EXPECT_EQ(b.arrived, 0u);
    for (int i = 1; i <= 3; ++i)
        EXPECT_GE(*st.mark_time(fmt::format("t{}", i)), msecs(6)) << "t" << i;
}

} // namespace
} // namespace schedlab
