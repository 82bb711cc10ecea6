// SPDX-License-Identifier: GPL-2.0-only
/*
 * netperf TCP_RR / UDP_RR: see netperf.h.
 */
#include "workload/netperf.h"

#include "sched/syscalls.h"
#include "sim/config_error.h"
#include "workload/options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace schedlab {

namespace {
const char* const where_netperf = "netperf";

/// "a,b" or "a" (both) as netperf's break_args() splits test-specific values.
std::pair<std::string, std::string> split_pair(const std::string& v)
{
    const auto comma = v.find(',');
    if (comma == std::string::npos)
        return {v, v};
    return {v.substr(0, comma), v.substr(comma + 1)};
}

u64 size_value(const std::string& v, const std::string& opt, u64 max)
{
    return static_cast<u64>(
        parse_integer(v, opt, where_netperf, 1, static_cast<long long>(max)));
}

/*
 * The omni selectors modelled: netperf's name, its column title (doc/netperf.texi), and
 * for a latency the metric it becomes and whether it prints whole (else two decimals).
 */
struct selector_info {
    netperf_selector sel;
    const char* name;
    const char* title;
    const char* metric;
    bool whole;
};
constexpr selector_info selector_table[] = {
    {netperf_selector::min_latency, "MIN_LATENCY", "Minimum Latency Microseconds", "latency_min",
     true},
    {netperf_selector::max_latency, "MAX_LATENCY", "Maximum Latency Microseconds", "latency_max",
     true},
    {netperf_selector::p50_latency, "P50_LATENCY", "50th Percentile Latency Microseconds",
     "latency_p50", true},
    {netperf_selector::p90_latency, "P90_LATENCY", "90th Percentile Latency Microseconds",
     "latency_p90", true},
    {netperf_selector::p99_latency, "P99_LATENCY", "99th Percentile Latency Microseconds",
     "latency_p99", true},
    {netperf_selector::mean_latency, "MEAN_LATENCY", "Mean Latency Microseconds", "latency_mean",
     false},
    {netperf_selector::stddev_latency, "STDDEV_LATENCY", "Stddev Latency Microseconds",
     "latency_stddev", false},
    {netperf_selector::throughput, "THROUGHPUT", "Throughput", nullptr, false},
    {netperf_selector::throughput_units, "THROUGHPUT_UNITS", "Throughput Units", nullptr, false},
};

/// A latency selector's value (us) from a histogram; 0 for the others.
double latency_value(netperf_selector s, const netperf_histogram& h)
{
    switch (s) {
    case netperf_selector::min_latency: return static_cast<double>(h.min());
    case netperf_selector::max_latency: return static_cast<double>(h.max());
    case netperf_selector::p50_latency: return static_cast<double>(h.percentile(50));
    case netperf_selector::p90_latency: return static_cast<double>(h.percentile(90));
    case netperf_selector::p99_latency: return static_cast<double>(h.percentile(99));
    case netperf_selector::mean_latency: return h.mean();
    case netperf_selector::stddev_latency: return h.stddev();
    case netperf_selector::throughput:
    case netperf_selector::throughput_units: break;
    }
    return 0;
}

const selector_info& info_of(netperf_selector s)
{
    return selector_table[static_cast<std::size_t>(s)];
}

/// "A,b;c" as netperf splits an output selection: commas and semicolons, names in any case.
std::vector<netperf_selector> parse_selectors(const std::string& list, char opt)
{
    std::vector<netperf_selector> out;
    std::string names;
    for (const auto& si : selector_table) {
        if (!names.empty())
            names += ", ";
        names += si.name;
    }
    std::size_t at = 0;
    while (at <= list.size()) {
        const std::size_t end = std::min(list.find_first_of(",;", at), list.size());
        std::string name = list.substr(at, end - at);
        at = end + 1;
        if (name.empty())
            continue;
        std::string upper = name;
        for (char& c : upper)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const auto it = std::find_if(std::begin(selector_table), std::end(selector_table),
                                     [&](const selector_info& si) { return upper == si.name; });
        if (it == std::end(selector_table))
            throw config_error("netperf (test-specific, after --)",
                               fmt::format("option '-{}': output selector '{}' is not modelled "
                                           "(modelled: {})",
                                           opt, name, names));
        out.push_back(it->sel);
    }
    if (out.empty())
        throw config_error("netperf (test-specific, after --)",
                           fmt::format("option '-{}': no output selector given (modelled: {})",
                                       opt, names));
    return out;
}
} // namespace

void netperf_histogram::add(u64 usec)
{
    u64 lo = usec, scale = 1;
    while (lo >= 100) { // two significant digits above 100 us
        lo /= 10;
        scale *= 10;
    }
    ++buckets_[lo * scale];
    ++n_;
    min_ = std::min(min_, usec);
    max_ = std::max(max_, usec);
    const auto v = static_cast<double>(usec);
    sum_ += v;
    sumsq_ += v * v;
}

void netperf_histogram::merge(const netperf_histogram& o)
{
    for (const auto& [lo, n] : o.buckets_)
        buckets_[lo] += n;
    n_ += o.n_;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
    sum_ += o.sum_;
    sumsq_ += o.sumsq_;
}

double netperf_histogram::mean() const
{
    return n_ ? sum_ / static_cast<double>(n_) : 0.0;
}

double netperf_histogram::stddev() const
{
    if (n_ < 2)
        return 0.0;
    const double n = static_cast<double>(n_), m = sum_ / n;
    return std::sqrt(std::max(0.0, (sumsq_ - n * m * m) / (n - 1)));
}

u64 netperf_histogram::percentile(double p) const
{
    if (!n_)
        return 0;
    const auto rank =
        std::max<u64>(1, static_cast<u64>(std::ceil(p / 100.0 * static_cast<double>(n_))));
    u64 seen = 0;
    for (const auto& [lo, n] : buckets_) {
        seen += n;
        if (seen >= rank)
            return lo;
    }
    return buckets_.rbegin()->first;
}

bool netperf_params::latency() const
{
    return std::any_of(selectors.begin(), selectors.end(), [](netperf_selector s) {
        return s != netperf_selector::throughput && s != netperf_selector::throughput_units;
    });
}

namespace {

/* netperf's global options (before "--"): the test, its length, the host, the banner. */
void parse_netperf_global(const std::vector<std::string>& global, netperf_params& np)
{
    std::string test = "TCP_RR";
    std::string length;
    std::string banner;
    std::string units;
    std::string unused;
    bool ipv4 = false;
    bool ipv6 = false;
    bool local_cpu = false;
    bool remote_cpu = false;
    bool keep_histogram = false;
    const std::vector<option_spec> gspecs = {
        {.short_name = 't', .long_name = "", .text = &test, .help = "test name"},
        {.short_name = 'l', .text = &length, .help = "test length: seconds, or -transactions"},
        {.short_name = 'H', .text = &np.host, .help = "remote host (loopback only)"},
        {.short_name = '4', .flag = &ipv4, .help = "IPv4"},
        {.short_name = '6', .flag = &ipv6, .unsupported = "IPv6 is not modelled (loopback IPv4 only)"},
        {.short_name = 'c', .flag = &local_cpu, .help = "local CPU utilisation (not modelled)"},
        {.short_name = 'C', .flag = &remote_cpu, .help = "remote CPU utilisation (not modelled)"},
        {.short_name = 'P', .text = &banner, .help = "0: no test banner"},
        {.short_name = 'j', .flag = &keep_histogram,
         .help = "keep latency statistics (implied by a latency output selector)"},
        {.short_name = 'f', .text = &units, .help = "output units (stream tests only)"},
        {.short_name = 'D', .text = &unused,
         .unsupported = "interim (demo) results are not modelled"},
        {.short_name = 'i', .text = &unused,
         .unsupported = "confidence-interval iterations are not modelled"},
        {.short_name = 'I', .text = &unused,
         .unsupported = "confidence-interval iterations are not modelled"},
        {.short_name = 'T', .text = &unused, .unsupported = "CPU binding is not modelled yet"},
        {.short_name = 'L', .text = &unused,
         .unsupported = "a local address other than loopback is not modelled"},
        {.short_name = 'p', .text = &unused,
         .unsupported = "the control port does not matter on loopback"},
        {.long_name = "instances",
         .uinteger = &np.instances,
         .help = "schedlab only: run N netperf processes concurrently"},
        {.long_name = "netserver-foreground",
         .flag = &np.netserver_foreground,
         .help = "schedlab only: netserver was started with -D (no daemonize(), so in the "
                 "shell's session and autogroup); default: daemonized (setsid(), an "
                 "autogroup of its own)"},
    };
    parse_options(global, gspecs, where_netperf);
    np.cpu_util = local_cpu || remote_cpu;
    (void)ipv4;
    (void)keep_histogram;

    if (test == "TCP_RR")
        np.udp = false;
    else if (test == "UDP_RR")
        np.udp = true;
    else
        throw config_error(where_netperf,
                           fmt::format("option '-t': test '{}' is not modelled (TCP_RR, UDP_RR)",
                                       test));
    if (!length.empty()) {
        // netperf: seconds, or -N for N transactions. Seconds may have a fraction here (netperf
        // takes whole seconds), since short simulated runs are common.
        if (length[0] == '-') {
            np.transactions = static_cast<u64>(
                -parse_integer(length, "-l", where_netperf, -1'000'000'000'000LL, -1));
        } else {
            np.duration = parse_seconds(length, "-l", where_netperf);
            if (np.duration <= 0 || np.duration > secs(1'000'000))
                throw config_error(where_netperf, fmt::format("option '-l': {} is not a test "
                                                              "length (0 < seconds <= 1000000)",
                                                              length));
        }
    }
    if (np.host != "localhost" && np.host != "127.0.0.1")
        throw config_error(where_netperf,
                           fmt::format("option '-H': host '{}' is not modelled (only loopback: "
                                       "localhost or 127.0.0.1)",
                                       np.host));
    if (!banner.empty()) {
        if (banner != "0" && banner != "1")
            throw config_error(where_netperf,
                               fmt::format("option '-P' expects 0 or 1, got '{}'", banner));
        np.banner = banner == "1";
    }
    if (np.instances == 0)
        throw config_error(where_netperf, "option '--instances' must be at least 1");
    // A netperf and a netserver child per instance, with the data and control connections:
    // 7.5 KB per instance measured (3.8 KB per task), 4 KB per task used (docs/testing.md).
    check_task_count(2.0 * np.instances, 4e3, fmt::format("{} instances x 2", np.instances),
                     where_netperf);
}

/* The test-specific options (after "--"): sizes, socket buffers, output selectors. */
void parse_netperf_test_specific(const std::vector<std::string>& test_specific, netperf_params& np)
{
    std::string unused;
    std::string rr;
    std::string lsock;
    std::string rsock;
    std::string keyval;
    std::string csv;
    std::string human;
    const std::vector<option_spec> tspecs = {
        {.short_name = 'r', .text = &rr, .help = "request,response sizes"},
        {.short_name = 'D', .flag = &np.nodelay, .help = "TCP_NODELAY"},
        {.short_name = 's', .text = &lsock, .help = "local socket send,recv buffer sizes"},
        {.short_name = 'S', .text = &rsock, .help = "remote socket send,recv buffer sizes"},
        {.short_name = 'k', .text = &keyval, .help = "output selectors, as key=value lines"},
        {.short_name = 'o', .text = &csv, .help = "output selectors, as CSV"},
        {.short_name = 'O', .text = &human, .help = "output selectors, as columns"},
        {.short_name = 'b', .text = &unused, .unsupported = "bursts are not modelled"},
        {.short_name = 'P', .text = &unused,
         .unsupported = "data ports do not matter on loopback"},
    };
    parse_options(test_specific, tspecs, "netperf (test-specific, after --)");
    // netperf: the last of -k, -o, -O overrides the others; here giving two is an error.
    if (static_cast<int>(!keyval.empty()) + static_cast<int>(!csv.empty()) +
            static_cast<int>(!human.empty()) >
        1)
        throw config_error("netperf (test-specific, after --)",
                           "options '-k', '-o' and '-O' each choose the output style: give one");
    if (!keyval.empty()) {
        np.output = netperf_output::keyval;
        np.selectors = parse_selectors(keyval, 'k');
    } else if (!csv.empty()) {
        np.output = netperf_output::csv;
        np.selectors = parse_selectors(csv, 'o');
    } else if (!human.empty()) {
        np.output = netperf_output::human;
        np.selectors = parse_selectors(human, 'O');
    }
    const u64 max_size = np.udp ? udp_params::max_payload : (1ULL << 30);
    if (!rr.empty()) {
        const auto [a, b] = split_pair(rr);
        np.req = size_value(a, "-r", max_size);
        np.rsp = size_value(b, "-r", max_size);
    }
    const u64 max_buf = 1ULL << 30;
    if (!lsock.empty()) {
        const auto [a, b] = split_pair(lsock);
        np.local_sndbuf = size_value(a, "-s", max_buf);
        np.local_rcvbuf = size_value(b, "-s", max_buf);
    }
    if (!rsock.empty()) {
        const auto [a, b] = split_pair(rsock);
        np.remote_sndbuf = size_value(a, "-S", max_buf);
        np.remote_rcvbuf = size_value(b, "-S", max_buf);
    }
}

} // namespace

netperf_params parse_netperf_options(const std::vector<std::string>& argv)
{
    netperf_params np;
    // Global options, then "--" and the test-specific ones (netperf's convention).
    std::vector<std::string> global;
    std::vector<std::string> test_specific;
    bool seen_dashdash = false;
    for (const std::string& a : argv) {
        if (!seen_dashdash && a == "--") {
            seen_dashdash = true;
            continue;
        }
        (seen_dashdash ? test_specific : global).push_back(a);
    }

    parse_netperf_global(global, np);
    parse_netperf_test_specific(test_specific, np);
    return np;
}

std::string netperf_workload::command_line() const
{
    std::string s =
        fmt::format("netperf --instances {} -t {} -H {} -l {}", np_.instances,
                    np_.udp ? "UDP_RR" : "TCP_RR", np_.host,
                    np_.transactions ? fmt::format("{}", -static_cast<long long>(np_.transactions))
                                     : fmt::format("{}", static_cast<double>(np_.duration) / 1e9));
    if (np_.netserver_foreground)
        s += " --netserver-foreground";
    if (!np_.banner)
        s += " -P 0";
    s += fmt::format(" -- -r {},{}", np_.req, np_.rsp);
    if (np_.local_sndbuf)
        s += fmt::format(" -s {},{}", np_.local_sndbuf, np_.local_rcvbuf);
    if (np_.remote_sndbuf)
        s += fmt::format(" -S {},{}", np_.remote_sndbuf, np_.remote_rcvbuf);
    if (np_.nodelay)
        s += " -D";
    if (np_.output != netperf_output::classic) {
        s += np_.output == netperf_output::keyval ? " -k "
             : np_.output == netperf_output::csv  ? " -o "
                                                  : " -O ";
        for (std::size_t i = 0; i < np_.selectors.size(); ++i)
            s += fmt::format("{}{}", i ? "," : "", info_of(np_.selectors[i]).name);
    }
    return s;
}

u64 netperf_workload::sock_send_size(bool local) const
{
    const u64 set = local ? np_.local_sndbuf : np_.remote_sndbuf;
    if (set)
        return set;
    return np_.udp ? udp_params{}.sk_sndbuf : tcp_params{}.sk_sndbuf;
}

u64 netperf_workload::sock_recv_size(bool local) const
{
    const u64 set = local ? np_.local_rcvbuf : np_.remote_rcvbuf;
    if (set)
        return set;
    return np_.udp ? udp_params{}.sk_rcvbuf : tcp_params{}.sk_rcvbuf;
}

double netperf_workload::instance::rate() const
{
    if (end <= start || start < 0)
        return 0;
    return static_cast<double>(trans) / (static_cast<double>(end - start) / 1e9);
}

/*
 * model: netperf's TCP_RR / UDP_RR as the omni test runs them (WANT_MIGRATION, hence
 * "MIGRATED ... TEST": nettest_omni.c send_tcp_rr() -> send_omni_inner() in netperf,
 * recv_omni() in the netserver child; HewlettPackard/netperf
 * afc51ff9764741da4ed6702651fba9d9c23f8557), task by task:
 * - netserver (a daemon started before the run, on CPU 0, in a session of its
 *   own: daemonize()'s setsid(), so its own autogroup; with
 *   --netserver-foreground, `netserver -D`, in the shell's): accept()s each
 *   control connection from its listen socket (netserver.c create_listens():
 *   listen(temp_socket, 1024), a tcp_listener, net.h; a SYN past 1025 waiting
 *   connections is dropped and resent after 1 s) and fork()s a child for it (in
 *   its session; accept_connection() -> spawn_child()), then (model) exits once it
 *   has accepted `instances` connections instead of listening on. Unlike
 *   tbench_srv it does not walk its children before each accept(): spawn_child()
 *   reaps with waitpid(-1, NULL, WNOHANG) only #if !defined(HAVE_SETSID), and
 *   configure.ac finds setsid() on Linux;
 * - sh (the shell loop of the evaluations): fork()+exec()s `instances`
 *   netperf processes, then wait()s for them;
 * - netperf: connect()s the control connection (netlib.c establish_control();
 *   the daemon wakes), sends the test's request on it (send_request_n()) and
 *   sleeps until its child's response (recv_response_n()); takes its start time
 *   (start_timer(), cpu_start()); TCP_RR connect()s the data connection to the
 *   port the response named (connect_data_socket(), in the loop's first pass;
 *   the child's accept() wakes), then loops "send the request, recv until the
 *   whole response arrived" until the -l time has passed (checked before each
 *   transaction, as the SIGALRM flag times_up is) or -l -N transactions are
 *   done; shuts the data connection down (disconnect_data_socket(): TCP_RR
 *   shutdown(SHUT_WR) and recv() until the child's close; UDP_RR closes) and takes
 *   its end time (cpu_stop()); receives the child's results on the control
 *   connection (recv_response_n()), shuts it down and waits for the child's close
 *   (netlib.c shutdown_control()), then exits;
 * - netserver child (the k-th accepted connection's): receives the request
 *   (process_requests() -> recv_request()), creates its data socket and, for
 *   TCP_RR, listen()s on it (recv_omni(): listen(s_listen, 5)), sends the
 *   response, accept()s the data connection; loops "recv until the whole request
 *   arrived, send the response" until the connection is closed (recv() returns
 *   0), closes it, sends the results on the control connection, and exits once
 *   recv_request() sees netperf's shutdown (close(server_sock)).
 * Each direction of a connection is one tcp_channel or udp_channel (net.h); a
 * control message is 656 bytes (control_bytes).
 * Differs: the sockets' creation, bind(), listen(), getsockname() and setsockopt()
 * calls, the daemon's select() and close() of the accepted socket and its children's
 * file set-up (close_listens(), open_debug_file()) are not charged; netperf's timer
 * and the child's (SIGALRM) are not modelled (the length is checked against the
 * clock); netperf's output is not charged; the daemon's lifetime; send sizes are those
 * of -r, receive buffers are the defaults.
 */
void netperf_workload::setup(syscalls& sys)
{
    const unsigned n = np_.instances;
    inst_.assign(n, instance{});
    accepted_.assign(n, 0);
    data_listeners_.clear();
    // netserver.c create_listens(): listen(temp_socket, 1024) on the control port.
    listener_ = std::make_unique<tcp_listener>(state_.make_counter("netserver/listen", WF_SYNC),
                                               netserver_backlog);
    tcp_listener& listen = *listener_;
    counter& reaped = state_.make_counter("sh/wait_chldexit", WF_SYNC);

    tcp_params tp_c2s;
    tp_c2s.sk_sndbuf = sock_send_size(true);
    tp_c2s.sk_rcvbuf = sock_recv_size(false);
    tcp_params tp_s2c;
    tp_s2c.sk_sndbuf = sock_send_size(false);
    tp_s2c.sk_rcvbuf = sock_recv_size(true);
    udp_params up_c2s;
    up_c2s.sk_rcvbuf = sock_recv_size(false);
    udp_params up_s2c;
    up_s2c.sk_rcvbuf = sock_recv_size(true);

    for (unsigned i = 0; i < n; ++i) {
        instance& in = inst_[i];
        if (np_.udp) {
            in.to_server = &state_.make_channel<udp_channel>(fmt::format("udp{}/c2s", i), up_c2s);
            in.to_client = &state_.make_channel<udp_channel>(fmt::format("udp{}/s2c", i), up_s2c);
        } else {
            in.to_server = &state_.make_channel<tcp_channel>(fmt::format("tcp{}/c2s", i), tp_c2s);
            in.to_client = &state_.make_channel<tcp_channel>(fmt::format("tcp{}/s2c", i), tp_s2c);
            // recv_omni(): listen(s_listen, 5) on the child's data socket.
            in.data_listen = &data_listeners_.emplace_back(
                state_.make_counter(fmt::format("netserver{}/data_listen", i), WF_SYNC),
                data_backlog);
        }
        // The control connection: the sockets' defaults (netperf sets no size on it).
        in.ctl_to_server = &state_.make_channel<tcp_channel>(fmt::format("ctl{}/c2s", i));
        in.ctl_to_client = &state_.make_channel<tcp_channel>(fmt::format("ctl{}/s2c", i));
    }

    task_opts dopt;
    dopt.comm = "netserver";
    dopt.cpu = 0;
    dopt.setsid = !np_.netserver_foreground; // daemonize(): setsid()
    sys.spawn(make_task([&](task_context& t) { return run_netserver(t, listen); }), dopt);
    task_opts sopt;
    sopt.comm = "sh";
    sopt.cpu = 0;
    sys.spawn(make_task([&](task_context& t) { return run_shell(t, listen, reaped); }), sopt);
}

task_code netperf_workload::run_netserver(task_context& t, tcp_listener& listen)
{
    const fork_opts child{.comm = "netserver", .thread = false, .notify = nullptr};
    for (unsigned k = 0; k < np_.instances; ++k) {
        co_await tcp_accept(t, listen);
        co_await t.fork([this, k](task_context& c) { return run_server(c, k); }, child);
    }
}

// process_requests() -> recv_omni(), for the k-th control connection accepted.
task_code netperf_workload::run_server(task_context& t, unsigned k)
{
    instance& in = inst_[accepted_[k]];
    in.server = &t.task();
    // recv_request(): the test's request.
    if (!co_await t.read(*in.ctl_to_server, control_bytes))
        co_return;
    // recv_omni(): the data socket listens (TCP_RR), then send_response_n() names its port.
    co_await t.write(*in.ctl_to_client, control_bytes);
    if (in.data_listen)
        co_await tcp_accept(t, *in.data_listen);
    // Until the connection is closed (recv() returns 0).
    for (;;) {
        const bool got = co_await t.read(*in.to_server, np_.req);
        if (!got)
            break;
        co_await t.write(*in.to_client, np_.rsp);
    }
    co_await t.close(*in.to_client); // close_data_socket()
    // send_response_n(): the results; recv_request() then returns 0 at netperf's
    // shutdown_control(), and the child closes the control connection and exits.
    co_await t.write(*in.ctl_to_client, control_bytes);
    while (co_await t.read(*in.ctl_to_server, control_bytes)) {
    }
    co_await t.close(*in.ctl_to_client);
}

task_code netperf_workload::run_shell(task_context& t, tcp_listener& listen, counter& reaped)
{
    const fork_opts child{.comm = "netperf", .thread = false, .notify = &reaped};
    for (unsigned i = 0; i < np_.instances; ++i)
        co_await t.fork([this, i, &listen](task_context& c) { return run_netperf(c, i, listen); },
                        child);
    for (unsigned i = 0; i < np_.instances; ++i)
        co_await t.wait_for(reaped, i + 1, &cost_params::wait_child);
    const sim_time stop = co_await t.gettime();
    state_.mark("stop", stop);
}

// send_omni_inner(): the control exchange, -l seconds (or -l -N transactions) of
// request/response, the results, shutdown_control().
task_code netperf_workload::run_netperf(task_context& t, unsigned i, tcp_listener& listen)
{
    instance& in = inst_[i];
    co_await t.exec(); // the exec() of the netperf binary
    // establish_control(): connect() (the daemon's accept() returns); its k-th accept()
    // forks the child that serves this instance.
    co_await tcp_connect(t, listen, &in.position);
    accepted_[in.position] = i;
    // send_request_n(), then recv_response_n(): the child answers once its data socket listens.
    co_await t.write(*in.ctl_to_server, control_bytes);
    if (!co_await t.read(*in.ctl_to_client, control_bytes))
        co_return;
    const sim_time start = co_await t.gettime(); // cpu_start()
    state_.mark(fmt::format("netperf{}/start", i), start);
    in.client = &t.task();
    in.start = t.now();
    if (in.data_listen)
        co_await tcp_connect(t, *in.data_listen); // connect_data_socket()
    const bool keep = np_.latency();
    for (u64 n = 0; np_.transactions ? n < np_.transactions : t.now() - in.start < np_.duration;
         ++n) {
        const sim_time sent = t.now(); // netperf's HIST timestamps: read, not charged
        co_await t.write(*in.to_server, np_.req);
        const bool got = co_await t.read(*in.to_client, np_.rsp);
        if (!got)
            break;
        ++in.trans;
        if (keep)
            in.latency.add(static_cast<u64>(t.now() - sent) / 1000);
    }
    // disconnect_data_socket(): TCP shutdown(SHUT_WR), then recv() until the child's close.
    co_await t.close(*in.to_server);
    if (!np_.udp)
        while (co_await t.read(*in.to_client, 1)) {
        }
    in.end = t.now(); // cpu_stop()
    // recv_response_n(): the child's results; shutdown_control(): shutdown(SHUT_WR), then
    // select() until the child closes the control connection.
    co_await t.read(*in.ctl_to_client, control_bytes);
    co_await t.close(*in.ctl_to_server);
    while (co_await t.read(*in.ctl_to_client, control_bytes)) {
    }
}

bool netperf_workload::finished() const
{
    return state_.mark_time("stop").has_value();
}

std::vector<workload_metric> netperf_workload::metrics() const
{
    if (!finished() || inst_.empty())
        return {};
    double sum = 0;
    for (const instance& in : inst_)
        sum += in.rate();
    std::vector<workload_metric> m = {
        {"trans/s", "trans/s", sum, true},
        {"trans/s/instance", "trans/s", sum / static_cast<double>(inst_.size()), true}};
    // The latency selectors asked for, over every instance's transactions: metrics named
    // <what>_p<N> in a time unit are the HTML report's percentile chart.
    netperf_histogram all;
    for (const instance& in : inst_)
        all.merge(in.latency);
    for (const netperf_selector s : np_.selectors)
        if (const char* name = info_of(s).metric)
            m.push_back({name, "us", latency_value(s, all), false});
    return m;
}

// One instance's omni output: keyval (-k), CSV (-o) or columns (-O), as doc/netperf.texi shows.
std::string netperf_workload::omni_output(const instance& in) const
{
    std::vector<std::string> values, titles;
    for (const netperf_selector s : np_.selectors) {
        const selector_info& si = info_of(s);
        const double v = latency_value(s, in.latency);
        if (s == netperf_selector::throughput)
            values.push_back(fmt::format("{:.2f}", in.rate()));
        else if (s == netperf_selector::throughput_units)
            values.push_back("Trans/s");
        else if (si.whole)
            values.push_back(fmt::format("{}", static_cast<u64>(v)));
        else
            values.push_back(fmt::format("{:.2f}", v));
        titles.push_back(info_of(s).title);
    }
    std::string out;
    switch (np_.output) {
    case netperf_output::keyval:
        for (std::size_t i = 0; i < values.size(); ++i)
            out += fmt::format("{}={}\n", info_of(np_.selectors[i]).name, values[i]);
        break;
    case netperf_output::csv:
        if (np_.banner)
            out += fmt::format("{}\n", fmt::join(titles, ","));
        out += fmt::format("{}\n", fmt::join(values, ","));
        break;
    case netperf_output::human: {
        // Four title lines, a word per line (the rest on the last), columns one wider than
        // their widest line or value.
        std::vector<std::vector<std::string>> lines(titles.size(), std::vector<std::string>(4));
        std::vector<std::size_t> width(titles.size());
        for (std::size_t c = 0; c < titles.size(); ++c) {
            std::size_t l = 0, at = 0;
            const std::string& t = titles[c];
            while (at < t.size()) {
                const std::size_t sp = std::min(t.find(' ', at), t.size());
                std::string& line = lines[c][l];
                if (!line.empty())
                    line += ' ';
                line.append(t, at, sp - at);
                if (l < 3)
                    ++l;
                at = sp + 1;
            }
            width[c] = values[c].size();
            for (const std::string& line : lines[c])
                width[c] = std::max(width[c], line.size());
            ++width[c];
        }
        if (np_.banner)
            for (std::size_t l = 0; l < 4; ++l) {
                for (std::size_t c = 0; c < titles.size(); ++c)
                    out += fmt::format("{:<{}}", lines[c][l], width[c]);
                out += "\n";
            }
        for (std::size_t c = 0; c < titles.size(); ++c)
            out += fmt::format("{:<{}}", values[c], width[c]);
        out += "\n";
        break;
    }
    case netperf_output::classic:
        break;
    }
    return out;
}

std::string netperf_workload::report() const
{
    std::string out;
    const char* proto = np_.udp ? "UDP" : "TCP";
    double sum = 0;
    double lo = 0;
    double hi = 0;
    for (std::size_t i = 0; i < inst_.size(); ++i) {
        const instance& in = inst_[i];
        if (np_.banner)
            out += fmt::format("MIGRATED {} REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 "
                               "AF_INET to {} () port 0 AF_INET : first burst 0\n",
                               proto, np_.host);
        if (in.end < 0) {
            out += "# schedlab: this instance did not finish when the run stopped\n";
            continue;
        }
        const double elapsed = static_cast<double>(in.end - in.start) / 1e9;
        const double rate = in.rate();
        sum += rate;
        lo = i == 0 ? rate : std::min(lo, rate);
        hi = i == 0 ? rate : std::max(hi, rate);
        if (np_.output != netperf_output::classic) {
            out += omni_output(in);
            continue;
        }
        out += "Local /Remote\n"
               "Socket Size   Request  Resp.   Elapsed  Trans.\n"
               "Send   Recv   Size     Size    Time     Rate\n"
               "bytes  Bytes  bytes    bytes   secs.    per sec\n\n";
        out += fmt::format("{:<6} {:<6} {:<6}   {:<6}  {:<6.2f}   {:7.2f}\n", sock_send_size(true),
                           sock_recv_size(true), np_.req, np_.rsp, elapsed, rate);
        out += fmt::format("{:<6} {:<6}\n\n", sock_send_size(false), sock_recv_size(false));
    }
    if (np_.cpu_util)
        out += "# schedlab: -c/-C (CPU utilisation) is not modelled; see the scheduler summary\n";
    if (listener_ && listener_->listen_overflows > 0)
        out += fmt::format("# schedlab: netserver's accept queue overflowed: {} SYNs dropped "
                           "(LISTENOVERFLOWS), at most {} connections waited for accept()\n",
                           listener_->listen_overflows, listener_->max_queued);
    if (finished())
        out += fmt::format("# schedlab: {} instance{}: {:.2f} trans/s in total, {:.2f} per "
                           "instance (min {:.2f}, max {:.2f})\n",
                           inst_.size(), inst_.size() == 1 ? "" : "s", sum,
                           sum / static_cast<double>(inst_.size()), lo, hi);
    else
        out += "# schedlab: not finished when the run stopped\n";
    return out;
}

std::unique_ptr<workload> make_netperf_workload(const std::vector<std::string>& args)
{
    return std::make_unique<netperf_workload>(parse_netperf_options(args));
}

} // namespace schedlab
