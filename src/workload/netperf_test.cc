// SPDX-License-Identifier: GPL-2.0-only
/*
 * netperf TCP_RR / UDP_RR: options, the strict request/response alternation,
 * a forked netserver per instance, the transaction rate and its output.
 */
#include "workload/netperf.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using testing::test_env;

std::string netperf_error(const std::vector<std::string>& args)
{
    return test_support::error_of([&] { parse_netperf_options(args); }, "(accepted)");
}

TEST(netperf_options, defaults_sizes_and_lengths)
{
    netperf_params np = parse_netperf_options({});
    EXPECT_FALSE(np.udp);
    EXPECT_EQ(np.duration, secs(10));
    EXPECT_EQ(np.req, 1u);
    EXPECT_EQ(np.rsp, 1u);
    EXPECT_EQ(np.instances, 1u);

    np = parse_netperf_options({"-4", "-H", "127.0.0.1", "-t", "UDP_RR", "-l", "-500", "-c", "-C",
                                "--instances", "8", "--", "-r", "100,200", "-D"});
    EXPECT_TRUE(np.udp);
    EXPECT_EQ(np.transactions, 500u);
    EXPECT_EQ(np.req, 100u);
    EXPECT_EQ(np.rsp, 200u);
    EXPECT_EQ(np.instances, 8u);
    EXPECT_TRUE(np.cpu_util);
    // "-r 100" sets both sizes, as netperf's break_args() does.
    np = parse_netperf_options({"-t", "TCP_RR", "--", "-r", "100"});
    EXPECT_EQ(np.req, 100u);
    EXPECT_EQ(np.rsp, 100u);
}

TEST(netperf_options, bad_and_unmodelled_options_are_rejected_by_name)
{
    EXPECT_THAT(netperf_error({"-t", "TCP_STREAM"}), HasSubstr("'TCP_STREAM' is not modelled"));
    EXPECT_THAT(netperf_error({"-H", "10.0.0.2"}), HasSubstr("'-H'"));
    EXPECT_THAT(netperf_error({"-l", "0"}), HasSubstr("'-l'"));
    EXPECT_THAT(netperf_error({"-l", "ten"}), HasSubstr("'-l'"));
    EXPECT_THAT(netperf_error({"--instances", "0"}), HasSubstr("'--instances'"));
    EXPECT_THAT(netperf_error({"-T", "0,1"}), HasSubstr("'-T' is not modelled"));
    EXPECT_THAT(netperf_error({"--", "-k", "THROUGHPUT,LOCAL_CPU_UTIL"}),
                HasSubstr("output selector 'LOCAL_CPU_UTIL' is not modelled"));
    EXPECT_THAT(netperf_error({"--", "-o", "p50_latency,p95_latency"}),
                HasSubstr("option '-o': output selector 'p95_latency'"));
    EXPECT_THAT(netperf_error({"--", "-O", ",;"}), HasSubstr("option '-O': no output selector"));
    EXPECT_THAT(netperf_error({"--", "-o", "MIN_LATENCY", "-k", "MAX_LATENCY"}), HasSubstr("give one"));
    EXPECT_THAT(netperf_error({"-t", "UDP_RR", "--", "-r", "70000"}), HasSubstr("'-r'"));
    EXPECT_THAT(netperf_error({"--", "-r", "0"}), HasSubstr("'-r'"));
    EXPECT_THAT(netperf_error({"--bogus"}), HasSubstr("'--bogus'"));
}

TEST(netperf_options, output_selectors_in_any_case_split_by_commas_and_semicolons)
{
    const netperf_params np = parse_netperf_options(
        {"-j", "--", "-o", "min_latency,Mean_Latency;P99_LATENCY,throughput,THROUGHPUT_UNITS"});
    EXPECT_EQ(np.output, netperf_output::csv);
    ASSERT_EQ(np.selectors.size(), 5u);
    EXPECT_EQ(np.selectors[0], netperf_selector::min_latency);
    EXPECT_EQ(np.selectors[1], netperf_selector::mean_latency);
    EXPECT_EQ(np.selectors[2], netperf_selector::p99_latency);
    EXPECT_EQ(np.selectors[4], netperf_selector::throughput_units);
    EXPECT_TRUE(np.latency());
    EXPECT_FALSE(parse_netperf_options({"--", "-k", "THROUGHPUT"}).latency());
    EXPECT_EQ(parse_netperf_options({}).output, netperf_output::classic);
}

TEST(netperf_histogram, exact_below_100_us_then_two_significant_digits)
{
    netperf_histogram h;
    EXPECT_EQ(h.percentile(50), 0u);
    for (u64 v : {5, 7, 99, 123, 129, 4567})
        h.add(v);
    EXPECT_EQ(h.count(), 6u);
    EXPECT_EQ(h.min(), 5u);
    EXPECT_EQ(h.max(), 4567u);
    EXPECT_EQ(h.percentile(1), 5u);
    EXPECT_EQ(h.percentile(50), 99u);    // nearest rank 3 of 6
    EXPECT_EQ(h.percentile(66.7), 120u); // 123 and 129 share the bucket [120, 130)
    EXPECT_EQ(h.percentile(100), 4500u);
    EXPECT_NEAR(h.mean(), (5 + 7 + 99 + 123 + 129 + 4567) / 6.0, 1e-9);
    netperf_histogram g;
    g.add(1);
    g.merge(h);
    EXPECT_EQ(g.count(), 7u);
    EXPECT_EQ(g.min(), 1u);
    EXPECT_EQ(g.percentile(100), 4500u);
}

struct np_run {
    std::unique_ptr<netperf_workload> w;
    std::unique_ptr<test_env> t;
};

np_run run_netperf(const std::vector<std::string>& args, int cores = 2, u64 seed = 1)
{
    np_run r;
    r.t = std::make_unique<test_env>(cores, seed);
    r.w = std::make_unique<netperf_workload>(parse_netperf_options(args));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(30));
    return r;
}

TEST(netperf, tcp_rr_alternates_one_request_and_one_response_per_transaction)
{
    const np_run r = run_netperf({"-t", "TCP_RR", "-l", "-300", "--", "-r", "100,200"});
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    const auto& in = r.w->instances().at(0);
    EXPECT_EQ(in.trans, 300u);
    EXPECT_EQ(in.to_server->stats().writes, 300u);
    EXPECT_EQ(in.to_client->stats().writes, 300u);
    EXPECT_EQ(in.to_server->stats().bytes_read, 300u * 100);
    EXPECT_EQ(in.to_client->stats().bytes_read, 300u * 200);
    // Strictly one message in flight: never more than one request or response queued.
    EXPECT_EQ(in.to_server->stats().max_bytes_queued, 100u);
    EXPECT_EQ(in.to_client->stats().max_bytes_queued, 200u);
    // Every transaction puts each side to sleep once waiting for the other.
    EXPECT_GE(in.to_client->stats().reader_sleeps, 299u);
    EXPECT_GE(in.to_server->stats().reader_sleeps, 299u);
}

TEST(netperf, every_instance_has_its_own_forked_netserver_child)
{
    const np_run r = run_netperf({"-l", "-50", "--instances", "3"}, 4);
    ASSERT_TRUE(r.w->finished());
    const auto& tasks = r.t->k.tasks();
    // netserver daemon + sh + 3 netperf + 3 netserver children.
    EXPECT_EQ(tasks.size(), 8u);
    const int daemon = tasks[0]->pid;
    EXPECT_EQ(tasks[0]->comm, "netserver");
    std::set<int> servers;
    for (const auto& in : r.w->instances()) {
        ASSERT_NE(in.server, nullptr);
        ASSERT_NE(in.client, nullptr);
        EXPECT_EQ(in.server->comm, "netserver");
        EXPECT_EQ(in.server->parent_pid, daemon);
        EXPECT_EQ(in.client->comm, "netperf");
        EXPECT_NE(in.server->tgid, in.client->tgid);
        servers.insert(in.server->pid);
        EXPECT_EQ(in.trans, 50u);
    }
    EXPECT_EQ(servers.size(), 3u);
}

/*
 * netserver.c create_listens() listens on the control port with listen(temp_socket, 1024)
 * (HewlettPackard/netperf afc51ff9764741da4ed6702651fba9d9c23f8557): 1025 connections may
 * wait for its accept() before a SYN is dropped (net.h tcp_listener), so no run of up to
 * 1024 instances can overflow it.
 */
TEST(netperf, netserver_accepts_every_control_connection_from_a_backlog_of_1024)
{
    const np_run r = run_netperf({"-l", "-50", "--instances", "3"}, 4);
    ASSERT_TRUE(r.w->finished());
    ASSERT_NE(r.w->listener(), nullptr);
    EXPECT_EQ(r.w->listener()->max_ack_backlog, 1024u);
    EXPECT_EQ(r.w->listener()->accepted, 3u);
    EXPECT_EQ(r.w->listener()->listen_overflows, 0u);
    EXPECT_GE(r.w->listener()->max_queued, 1u);
    EXPECT_THAT(r.w->report(), Not(HasSubstr("overflowed")));
}

/*
 * nettest_omni.c send_omni_inner() (HewlettPackard/netperf afc51ff9764741da4ed6702651fba9d9c23f8557):
 * netperf sends the test's request on the control connection and sleeps in
 * recv_response_n() until its netserver child, forked at accept(), has created and
 * listen()ed on its data socket (recv_omni(): listen(s_listen, 5)) and answered; only
 * then does it start its timer and connect() the data connection, which the child
 * accept()s. At the end the child closes the data connection, sends its results, and
 * netperf shuts the control connection down (netlib.c shutdown_control()).
 */
TEST(netperf, the_timer_starts_after_the_childs_response_on_the_control_connection)
{
    for (const char* test : {"TCP_RR", "UDP_RR"}) {
        SCOPED_TRACE(test);
        const np_run r = run_netperf({"-t", test, "-l", "-50"}, 2);
        ASSERT_TRUE(r.w->finished());
        EXPECT_TRUE(r.t->k.all_exited());
        const auto& in = r.w->instances().at(0);
        ASSERT_NE(in.server, nullptr);
        // The child was forked after the control connect() and answered before the timer.
        EXPECT_GT(in.start, in.server->start_time);
        EXPECT_EQ(in.ctl_to_server->stats().writes, 1u); // the request
        EXPECT_EQ(in.ctl_to_server->stats().bytes_read, netperf_workload::control_bytes);
        EXPECT_EQ(in.ctl_to_client->stats().writes, 2u); // the response, the results
        EXPECT_EQ(in.ctl_to_client->stats().bytes_read, 2 * netperf_workload::control_bytes);
        EXPECT_GE(in.ctl_to_client->stats().reader_sleeps, 1u); // netperf waited for the child
        EXPECT_TRUE(in.ctl_to_server->write_closed());
        EXPECT_TRUE(in.ctl_to_client->write_closed());
        EXPECT_TRUE(in.to_client->write_closed()); // the child closed the data connection
        EXPECT_EQ(in.trans, 50u);
        if (std::string(test) == "TCP_RR") {
            ASSERT_NE(in.data_listen, nullptr);
            EXPECT_EQ(in.data_listen->max_ack_backlog, netperf_workload::data_backlog);
            EXPECT_EQ(in.data_listen->accepted, 1u);
            EXPECT_EQ(in.data_listen->listen_overflows, 0u);
        } else {
            EXPECT_EQ(in.data_listen, nullptr); // recv_omni(): UDP needs no accept()
        }
    }
}

/*
 * netserver forks a child per accept(), so the k-th control connection established
 * is served by the k-th child forked, whichever instance's it is.
 */
TEST(netperf, the_kth_control_connection_accepted_is_served_by_the_kth_child)
{
    const np_run r = run_netperf({"-l", "-50", "--instances", "6"}, 4);
    ASSERT_TRUE(r.w->finished());
    std::vector<std::pair<u64, int>> by_position;
    for (const auto& in : r.w->instances()) {
        ASSERT_NE(in.server, nullptr);
        by_position.emplace_back(in.position, in.server->pid);
    }
    std::sort(by_position.begin(), by_position.end());
    for (std::size_t k = 0; k < by_position.size(); ++k) {
        EXPECT_EQ(by_position[k].first, k);
        if (k > 0) {
            EXPECT_GT(by_position[k].second, by_position[k - 1].second) << "child " << k;
        }
    }
}

/*
 * netserver daemonizes unless started with -D (src/netserver.c daemonize(): fork(), then
 * setsid() in the child; HewlettPackard/netperf afc51ff9764741da4ed6702651fba9d9c23f8557),
 * and setsid() gives the session a new autogroup (ksys_setsid() ->
 * sched_autogroup_create_attach()); its per-connection children inherit it (fork:
 * sched_autogroup_fork()). The netperf processes are the shell's, the first autogroup.
 * --netserver-foreground (netserver -D): one autogroup for all.
 */
TEST(netperf, netserver_is_a_session_and_an_autogroup_of_its_own_unless_in_the_foreground)
{
    const np_run d = run_netperf({"-l", "-50", "--instances", "2"}, 2);
    ASSERT_TRUE(d.w->finished());
    const task_group* shell = &d.t->k.autogroup();
    const task_struct& daemon = *d.t->k.tasks()[0];
    ASSERT_EQ(daemon.comm, "netserver");
    ASSERT_NE(daemon.sched_task_group, nullptr);
    EXPECT_NE(daemon.sched_task_group, shell);
    EXPECT_EQ(d.t->k.task_groups().size(), 2u);
    for (const auto& in : d.w->instances()) {
        EXPECT_EQ(in.server->sched_task_group, daemon.sched_task_group);
        EXPECT_EQ(in.client->sched_task_group, shell);
    }
    EXPECT_EQ(d.w->command_line().find("--netserver-foreground"), std::string::npos);

    const np_run f = run_netperf({"-l", "-50", "--instances", "2", "--netserver-foreground"}, 2);
    ASSERT_TRUE(f.w->finished());
    EXPECT_EQ(f.t->k.tasks()[0]->sched_task_group, &f.t->k.autogroup());
    EXPECT_EQ(f.t->k.task_groups().size(), 1u);
    for (const auto& in : f.w->instances())
        EXPECT_EQ(in.server->sched_task_group, in.client->sched_task_group);
    EXPECT_NE(f.w->command_line().find("--netserver-foreground"), std::string::npos);
}

TEST(netperf, udp_rr_runs_over_datagrams_without_drops)
{
    const np_run r = run_netperf({"-t", "UDP_RR", "-l", "-200"});
    ASSERT_TRUE(r.w->finished());
    const auto& in = r.w->instances().at(0);
    const auto* c2s = dynamic_cast<const udp_channel*>(in.to_server);
    ASSERT_NE(c2s, nullptr);
    EXPECT_EQ(c2s->drops(), 0u);
    EXPECT_EQ(in.trans, 200u);
    EXPECT_THAT(r.w->report(), HasSubstr("MIGRATED UDP REQUEST/RESPONSE TEST"));
    EXPECT_THAT(r.w->report(), HasSubstr("\n212992 212992 1        1       "));
}

TEST(netperf, the_rate_is_transactions_over_the_measured_time_and_instances_sum)
{
    const np_run one = run_netperf({"-l", "-400"}, 2);
    const np_run four = run_netperf({"-l", "-400", "--instances", "4"}, 2);
    const auto& in = one.w->instances().at(0);
    EXPECT_NEAR(in.rate(), 400.0 / (static_cast<double>(in.end - in.start) / 1e9), 1e-6);
    const auto m1 = one.w->metrics();
    ASSERT_EQ(m1.size(), 2u);
    EXPECT_EQ(m1[0].name, "trans/s");
    EXPECT_DOUBLE_EQ(m1[0].value, in.rate());
    const auto m4 = four.w->metrics();
    double sum = 0;
    for (const auto& i : four.w->instances())
        sum += i.rate();
    EXPECT_DOUBLE_EQ(m4[0].value, sum);
    EXPECT_DOUBLE_EQ(m4[1].value, sum / 4);
    // Four pairs on two CPUs: each instance gets less than a lone pair.
    EXPECT_LT(m4[1].value, m1[1].value);
}

TEST(netperf, a_timed_test_stops_after_its_length)
{
    // -l 1 would run a million events; the time-based loop is checked on a
    // short run by overriding nothing: 1 s at ~50k trans/s is the smallest real length.
    const np_run r = run_netperf({"-l", "1", "-P", "0"}, 2);
    ASSERT_TRUE(r.w->finished());
    const auto& in = r.w->instances().at(0);
    const double elapsed = static_cast<double>(in.end - in.start) / 1e9;
    EXPECT_GE(elapsed, 1.0);
    EXPECT_LT(elapsed, 1.001);
    EXPECT_THAT(r.w->report(),
                MatchesRegex("Local /Remote\n"
                             "Socket Size   Request  Resp\\.   Elapsed  Trans\\.\n"
                             "Send   Recv   Size     Size    Time     Rate\n"
                             "bytes  Bytes  bytes    bytes   secs\\.    per sec\n"
                             "\n"
                             "16384  131072 1        1       1\\.00     [0-9]+\\.[0-9][0-9]\n"
                             "16384  131072\n"
                             "\n"
                             "# schedlab: 1 instance: .*\n"));
}

TEST(netperf, the_same_seed_gives_the_same_schedule)
{
    const np_run a = run_netperf({"-l", "-200", "--instances", "3"}, 2, 5);
    const np_run b = run_netperf({"-l", "-200", "--instances", "3"}, 2, 5);
    const np_run c = run_netperf({"-l", "-200", "--instances", "3"}, 2, 6);
    EXPECT_EQ(a.t->k.schedule_digest(), b.t->k.schedule_digest());
    EXPECT_EQ(a.w->report(), b.w->report());
    EXPECT_NE(a.t->k.schedule_digest(), c.t->k.schedule_digest());
}

TEST(netperf, latency_selectors_print_as_netperf_and_only_observe)
{
    const np_run plain = run_netperf({"-l", "-300", "--instances", "2"}, 2, 3);
    const np_run csv = run_netperf({"-l", "-300", "--instances", "2", "--", "-o",
                                    "MIN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,"
                                    "MEAN_LATENCY,STDDEV_LATENCY,THROUGHPUT,THROUGHPUT_UNITS"},
                                   2, 3);
    // recording the latencies leaves the schedule alone
    EXPECT_EQ(plain.t->k.schedule_digest(), csv.t->k.schedule_digest());
    ASSERT_TRUE(csv.w->finished());
    for (const auto& in : csv.w->instances()) {
        EXPECT_EQ(in.latency.count(), 300u);
        EXPECT_LE(in.latency.min(), in.latency.percentile(50));
        EXPECT_LE(in.latency.percentile(99), in.latency.max());
    }
    EXPECT_THAT(csv.w->report(),
                MatchesRegex("(MIGRATED TCP REQUEST/RESPONSE TEST [^\n]*\n"
                             "Minimum Latency Microseconds,50th Percentile Latency Microseconds,"
                             "90th Percentile Latency Microseconds,99th Percentile Latency "
                             "Microseconds,Maximum Latency Microseconds,Mean Latency "
                             "Microseconds,Stddev Latency Microseconds,Throughput,Throughput "
                             "Units\n"
                             "[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+\\.[0-9][0-9],"
                             "[0-9]+\\.[0-9][0-9],[0-9]+\\.[0-9][0-9],Trans/s\n){2}"
                             "# schedlab: 2 instances: .*\n"));
    // the metrics: over both instances, named as the percentile chart wants them
    const auto m = csv.w->metrics();
    ASSERT_EQ(m.size(), 9u);
    EXPECT_EQ(m[0].name, "trans/s");
    EXPECT_EQ(m[2].name, "latency_min");
    EXPECT_EQ(m[3].name, "latency_p50");
    EXPECT_EQ(m[4].name, "latency_p90");
    EXPECT_EQ(m[5].name, "latency_p99");
    EXPECT_EQ(m[6].name, "latency_max");
    EXPECT_EQ(m[7].name, "latency_mean");
    EXPECT_EQ(m[8].name, "latency_stddev");
    for (std::size_t i = 2; i < m.size(); ++i) {
        EXPECT_EQ(m[i].unit, "us");
        EXPECT_FALSE(m[i].higher_is_better);
    }
    EXPECT_GT(m[2].value, 0);
    EXPECT_LE(m[2].value, m[3].value);
    EXPECT_LE(m[3].value, m[4].value);
    EXPECT_LE(m[4].value, m[5].value);
    EXPECT_LE(m[5].value, m[6].value);
    // a transaction is two wakeups on 2 CPUs: the mean latency is within 2x of 1/rate
    const double per_trans_us = 1e6 / m[1].value;
    EXPECT_GT(m[7].value, per_trans_us / 2);
    EXPECT_LT(m[7].value, per_trans_us * 2);
    EXPECT_EQ(plain.w->metrics().size(), 2u); // no selectors: no latency metrics
}

TEST(netperf, keyval_and_human_output)
{
    const np_run k = run_netperf({"-l", "-100", "-P", "0", "--", "-k", "p99_latency,THROUGHPUT"});
    EXPECT_THAT(k.w->report(), MatchesRegex("P99_LATENCY=[0-9]+\nTHROUGHPUT=[0-9]+\\.[0-9][0-9]\n"
                                            "# schedlab: .*\n"));
    const np_run h = run_netperf({"-l", "-100", "-P", "0", "--", "-O", "MEAN_LATENCY"});
    EXPECT_THAT(h.w->report(), MatchesRegex("[0-9]+\\.[0-9][0-9] *\n# schedlab: .*\n"));
    const np_run hb = run_netperf({"-l", "-100", "--", "-O", "P50_LATENCY,THROUGHPUT_UNITS"});
    EXPECT_THAT(hb.w->report(), HasSubstr("\n50th         Throughput \n"
                                          "Percentile   Units      \n"
                                          "Latency                 \n"
                                          "Microseconds            \n"));
}

} // namespace
} // namespace schedlab
