// SPDX-License-Identifier: GPL-2.0-only
/*
 * tbench: options, the client/server process pairs, the loadfile model, the
 * warm-up rule and dbench's output.
 */
#include "workload/tbench.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::test_env;

std::string tbench_error(const std::vector<std::string>& args)
{
    return test_support::error_of([&] { parse_tbench_options(args); }, "(accepted)");
}

TEST(tbench_options, clients_time_loadfile_and_server)
{
    tbench_params tp = parse_tbench_options({"8"});
    EXPECT_EQ(tp.clients, 8u);
    EXPECT_EQ(tp.timelimit, secs(5));
    EXPECT_EQ(tp.loadfile, "client.txt");
    tp = parse_tbench_options({"-c", "/usr/share/dbench/client-tiny.txt", "-t", "1.5", "64",
                               "127.0.0.1"});
    EXPECT_EQ(tp.clients, 64u);
    EXPECT_EQ(tp.timelimit, msecs(1500));
    EXPECT_EQ(tp.loadfile, "client-tiny.txt");
    EXPECT_EQ(tp.server, "127.0.0.1");
    tp = parse_tbench_options({"--timelimit=3", "4", "localhost"});
    EXPECT_EQ(tp.timelimit, secs(3));
}

TEST(tbench_options, bad_and_unmodelled_options_are_rejected_by_name)
{
    EXPECT_THAT(tbench_error({}), HasSubstr("NPROCS"));
    EXPECT_THAT(tbench_error({"0"}), HasSubstr("NPROCS"));
    EXPECT_THAT(tbench_error({"x"}), HasSubstr("NPROCS"));
    EXPECT_THAT(tbench_error({"4", "10.1.1.1"}), HasSubstr("'10.1.1.1' is not modelled"));
    EXPECT_THAT(tbench_error({"4", "127.0.0.1", "extra"}), HasSubstr("'extra'"));
    EXPECT_THAT(tbench_error({"-t", "0", "4"}), HasSubstr("'-t'"));
    EXPECT_THAT(tbench_error({"-t", "-3", "4"}), HasSubstr("'-t'"));
    EXPECT_THAT(tbench_error({"-c", "nfs.txt", "4"}), HasSubstr("'nfs.txt' is not modelled"));
    EXPECT_THAT(tbench_error({"-R", "10", "4"}), HasSubstr("'-R' is not modelled"));
    EXPECT_THAT(tbench_error({"--clients-per-process", "2", "4"}),
                HasSubstr("'--clients-per-process'"));
    EXPECT_THAT(tbench_error({"--bogus", "4"}), HasSubstr("'--bogus'"));
}

TEST(tbench_loadfile, is_fixed_and_follows_the_op_mix_and_sockio_sizes)
{
    const auto a = tbench_loadfile("client.txt");
    const auto b = tbench_loadfile("client.txt");
    ASSERT_EQ(a.size(), 1000u);
    EXPECT_EQ(tbench_loadfile("client-tiny.txt").size(), 357u);
    u64 reads = 0;
    u64 writes = 0;
    u64 creates = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].op, b[i].op);
        EXPECT_EQ(a[i].req, b[i].req);
        const tbench_line& l = a[i];
        EXPECT_GT(l.req, 4u);
        EXPECT_GT(l.rsp, 4u);
        if (l.op == tbench_op::ReadX) {
            ++reads;
            EXPECT_EQ(l.req, 59u);
            EXPECT_EQ(l.rsp, 59 + l.payload);
        } else if (l.op == tbench_op::WriteX) {
            ++writes;
            EXPECT_EQ(l.req, 59 + l.payload);
            EXPECT_EQ(l.rsp, 55u);
        } else {
            EXPECT_EQ(l.payload, 0u) << tbench_op_name(l.op);
            creates += l.op == tbench_op::NTCreateX;
        }
    }
    // ReadX ~27%, WriteX ~8.5%, NTCreateX ~17% of the lines.
    EXPECT_NEAR(static_cast<double>(reads) / 1000, 0.27, 0.05);
    EXPECT_NEAR(static_cast<double>(writes) / 1000, 0.085, 0.03);
    EXPECT_NEAR(static_cast<double>(creates) / 1000, 0.17, 0.04);
}

/*
 * model: the loadfile carries client.txt's sizes (dbench 4.0, 458344 lines: 124199 ReadX of
 * mean ret_size 11852.7 bytes, 39502 WriteX of mean size 25719.6, 5428.4 payload bytes a
 * line; bench/tbhost/loadfile_sizes.py). The earlier drawn mix (512 B .. 64 KiB, mean about
 * 22 KiB each) carried ~8500 bytes a line, 1.57 times the file's.
 */
TEST(tbench_loadfile, carries_client_txt_sizes_and_op_counts)
{
    const auto lines = tbench_loadfile("client.txt");
    u64 payload = 0;
    u64 reads = 0;
    u64 writes = 0;
    u64 reads_4k = 0;
    u64 reads_60k = 0;
    u64 finds_empty = 0;
    u64 finds = 0;
    for (const tbench_line& l : lines) {
        payload += l.payload;
        if (l.op == tbench_op::ReadX) {
            ++reads;
            reads_4k += l.payload == 4096;
            reads_60k += l.payload == 61440;
        }
        writes += l.op == tbench_op::WriteX;
        if (l.op == tbench_op::Find) {
            ++finds;
            finds_empty += l.rsp == 39;
        }
    }
    // The file's shares of 1000 lines: ReadX 270.97, WriteX 86.18, FIND_FIRST 60.58.
    EXPECT_EQ(reads, 271u);
    EXPECT_EQ(writes, 86u);
    EXPECT_EQ(finds, 61u);
    EXPECT_NEAR(static_cast<double>(payload) / static_cast<double>(lines.size()), 5428.4, 100);
    // ReadX: 67.0% of 4096 bytes, 13.4% of 61440; FIND_FIRST: 51.6% find nothing.
    EXPECT_NEAR(static_cast<double>(reads_4k) / static_cast<double>(reads), 0.670, 0.01);
    EXPECT_NEAR(static_cast<double>(reads_60k) / static_cast<double>(reads), 0.134, 0.01);
    EXPECT_NEAR(static_cast<double>(finds_empty) / static_cast<double>(finds), 0.516, 0.02);
    const auto tiny = tbench_loadfile("client-tiny.txt");
    u64 tiny_payload = 0;
    for (const tbench_line& l : tiny)
        tiny_payload += l.payload;
    EXPECT_NEAR(static_cast<double>(tiny_payload) / static_cast<double>(tiny.size()), 5428.4, 150);
}

struct tb_run {
    std::unique_ptr<tbench_workload> w;
    std::unique_ptr<test_env> t;
};

tb_run run_tbench(const std::vector<std::string>& args, int cores, u64 seed = 1)
{
    tb_run r;
    r.t = std::make_unique<test_env>(cores, seed);
    r.t->k.set_check_level(check_level::sampled, 64); // long runs: sampled self-checks
    r.w = std::make_unique<tbench_workload>(parse_tbench_options(args));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(30));
    return r;
}

TEST(tbench, each_client_talks_to_its_own_forked_server_until_the_time_limit)
{
    // -t 0.5: the first report (1 s after the release) is past the limit.
    const tb_run r = run_tbench({"-t", "0.5", "-c", "client-tiny.txt", "2"}, 2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    const sim_time release = *r.w->state().mark_time("start");
    const auto& tasks = r.t->k.tasks();
    ASSERT_EQ(tasks.size(), 6u); // tbench_srv, tbench, 2 clients, 2 servers
    EXPECT_EQ(tasks[0]->comm, "tbench_srv");
    const int daemon = tasks[0]->pid;
    const int parent = tasks[1]->pid;
    for (const auto& c : r.w->clients()) {
        ASSERT_NE(c.task, nullptr);
        ASSERT_NE(c.server, nullptr);
        EXPECT_EQ(c.task->parent_pid, parent);
        EXPECT_EQ(c.server->parent_pid, daemon);
        EXPECT_EQ(c.server->comm, "tbench_srv");
        EXPECT_TRUE(c.exited);
        EXPECT_GT(c.line, 1000u);
        // Flagged done by that report, the client stops within one op.
        EXPECT_LT(c.task->exit_time, release + secs(1) + msecs(1));
        EXPECT_GT(c.task->exit_time, release + secs(1));
        // A server exits when its client closes the connection.
        EXPECT_GE(c.server->exit_time, c.task->exit_time - msecs(1));
    }
    EXPECT_THAT(r.w->report(), HasSubstr("releasing clients\n   2  cleanup   1 sec\n"));
    // tbench_srv.c: listen(sock, 20); two connections never fill it.
    ASSERT_NE(r.w->listener(), nullptr);
    EXPECT_EQ(r.w->listener()->max_ack_backlog, 20u);
    EXPECT_EQ(r.w->listener()->listen_overflows, 0u);
    EXPECT_THAT(r.w->report(), Not(HasSubstr("overflowed")));
}

/*
 * model: sockio.c sio_setup() ends with do_packets(child, 8, 8), so before the start
 * barrier each client sends 8 bytes and waits for its new server's 8-byte reply
 * (tbench_srv.c server(): length, payload, reply like any request). Each direction
 * carries those 8 bytes on top of the loadfile lines the client completed.
 */
TEST(tbench, each_client_exchanges_8_bytes_with_its_server_before_the_loadfile)
{
    const tb_run r = run_tbench({"-t", "0.5", "-c", "client-tiny.txt", "2"}, 2);
    ASSERT_TRUE(r.w->finished());
    const auto& lines = r.w->loadfile();
    for (unsigned i = 0; i < 2; ++i) {
        const auto& c = r.w->clients().at(i);
        u64 req = 0;
        u64 rsp = 0;
        for (u64 k = 0; k < c.line; ++k) {
            req += lines[k % lines.size()].req;
            rsp += lines[k % lines.size()].rsp;
        }
        const channel* c2s = nullptr;
        const channel* s2c = nullptr;
        for (const auto& ch : r.w->state().channels()) {
            if (ch->name() == fmt::format("client{}/c2s", i))
                c2s = ch.get();
            if (ch->name() == fmt::format("client{}/s2c", i))
                s2c = ch.get();
        }
        ASSERT_NE(c2s, nullptr);
        ASSERT_NE(s2c, nullptr);
        EXPECT_EQ(c2s->stats().bytes_written, 8 + req) << "client " << i;
        EXPECT_EQ(s2c->stats().bytes_written, 8 + rsp) << "client " << i;
        EXPECT_EQ(s2c->stats().bytes_read, 8 + rsp) << "client " << i;
    }
}

TEST(tbench, throughput_counts_payload_bytes_per_second_of_the_execute_window)
{
    const tb_run r = run_tbench({"-t", "1.5", "1"}, 2);
    ASSERT_TRUE(r.w->finished());
    const auto& c = r.w->clients().at(0);
    // No warm-up (1.5 / 5 < 1 s): the execute line at t ~ 1 s counts every byte so far.
    u64 reads = 0;
    for (const auto& s : c.ops)
        reads += s.count;
    EXPECT_EQ(reads, c.line);
    EXPECT_GT(r.w->throughput(), 0.0);
    // The printed figure is 1e-6 * bytes / t at the first report; bytes only grow afterwards.
    EXPECT_LE(r.w->throughput(), 1e-6 * static_cast<double>(c.bytes) / 0.999);
    const std::string out = r.w->report();
    EXPECT_THAT(out, HasSubstr("dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\n"
                               "Running for 1.5 seconds with load 'client.txt' and minimum "
                               "warmup 0 secs\n"));
    EXPECT_THAT(out, ContainsRegex("\n   1  +[0-9]+  +[0-9]+\\.[0-9][0-9] MB/sec  execute   1 sec  "
                                   "latency [0-9]+\\.[0-9][0-9][0-9] ms\n"));
    EXPECT_THAT(out, HasSubstr("\n Operation                Count    AvgLat    MaxLat\n"
                               " --------------------------------------------------\n"
                               " NTCreateX "));
    EXPECT_THAT(out, ContainsRegex("\nThroughput [0-9.]+ MB/sec  1 clients  1 procs  "
                                   "max_latency=[0-9]+\\.[0-9][0-9][0-9] ms\n$"));
    const auto m = r.w->metrics();
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m[0].name, "throughput");
    EXPECT_DOUBLE_EQ(m[0].value, r.w->throughput());
    EXPECT_EQ(r.w->measured_nothing(), "");
}

// Issue 16: `tbench N -t 1` printed "Throughput 0 MB/sec" and compare tabled NaN.
TEST(tbench, a_run_that_ends_before_any_execute_report_measured_nothing)
{
    const tb_run r = run_tbench({"-t", "0.5", "-c", "client-tiny.txt", "2"}, 2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.w->metrics().empty());
    EXPECT_THAT(r.w->measured_nothing(),
                HasSubstr("tbench measured nothing: its 0.5 s time limit ended before"));
}

TEST(tbench, the_warmup_is_a_fifth_of_the_time_limit_and_resets_the_counters)
{
    // -t 5: warm-up 1 s; the first report (just after 1 s) resets the counters
    // and the clock silently, then 5 s of execute, of which 4 reports print.
    const tb_run r = run_tbench({"-t", "5", "-c", "client-tiny.txt", "1"}, 1);
    ASSERT_TRUE(r.w->finished());
    const sim_time release = *r.w->state().mark_time("start");
    const std::string out = r.w->report();
    EXPECT_THAT(out, HasSubstr("minimum warmup 1 secs\n"));
    EXPECT_THAT(out, ContainsRegex("releasing clients\n   1  +[0-9]+  +[0-9.]+ MB/sec  execute   1 sec"));
    EXPECT_THAT(out, ContainsRegex("MB/sec  execute   4 sec  latency"));
    EXPECT_THAT(out, ::testing::Not(ContainsRegex("execute   5 sec")));
    const auto& c = r.w->clients().at(0);
    EXPECT_GT(c.bytes_done_warmup, 0u) << "the warm-up bytes are excluded";
    // The last execute line (t = 4 s) is the throughput: about the post-warm-up
    // bytes over the 5 s that followed; counting the warm-up too would be 20% more.
    const double after = 1e-6 * static_cast<double>(c.bytes - c.bytes_done_warmup) / 5.0;
    EXPECT_NEAR(r.w->throughput(), after, 0.03 * after);
    // The client ran 1 s of warm-up + 5 s.
    EXPECT_GT(c.task->exit_time, release + secs(6));
    EXPECT_LT(c.task->exit_time, release + secs(6) + msecs(1));
}

TEST(tbench, the_same_seed_gives_the_same_schedule)
{
    const tb_run a = run_tbench({"-t", "0.5", "-c", "client-tiny.txt", "2"}, 2, 3);
    const tb_run b = run_tbench({"-t", "0.5", "-c", "client-tiny.txt", "2"}, 2, 3);
    EXPECT_EQ(a.t->k.schedule_digest(), b.t->k.schedule_digest());
    EXPECT_EQ(a.w->report(), b.w->report());
}

/*
 * kernel: tbench_srv.c listener() calls waitpid(-1, NULL, WNOHANG) before each accept();
 * do_wait_thread() walks every live child (SIGCHLD ignored: none is reapable). With 10 ms a
 * child, the walks before the 2nd, 3rd and 4th accept() cost 10, 20 and 30 ms, so the
 * servers are forked near 0, 10, 30 and 60 ms.
 */
TEST(tbench, tbench_srv_walks_its_live_children_before_each_accept)
{
    cost_params c = testing::no_jitter();
    c.waitpid_nohang = 0;
    c.wait_scan_child = msecs(10);
    test_env t(4, 1, "6.6", c);
    t.k.set_check_level(check_level::sampled, 64);
    tbench_workload w(parse_tbench_options({"-t", "0.5", "-c", "client-tiny.txt", "4"}));
    w.setup(t.k.sys());
    t.k.run(secs(30));
    ASSERT_TRUE(w.finished());
    for (unsigned k = 0; k < 4; ++k) {
        const task_struct* s = w.clients().at(k).server;
        ASSERT_NE(s, nullptr);
        const sim_time walks = msecs(10) * static_cast<sim_dur>(k * (k + 1) / 2);
        EXPECT_GE(s->start_time, walks) << "server " << k;
        EXPECT_LT(s->start_time, walks + msecs(1)) << "server " << k;
    }
}

} // namespace
} // namespace schedlab
