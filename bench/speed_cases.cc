// SPDX-License-Identifier: GPL-2.0-only
/*
 * schedlab_speed: the speed table of issue 14. For each case, a whole run as
 * `schedlab run` does it (prepare_run + execute_run: machine, topology,
 * workload, summary), in a process of its own, then in that same process a
 * bare heap loop (std::priority_queue push + pop) holding as many pending
 * events as the run held on average. It prints, per case: events, simulated
 * seconds, the process's CPU seconds, events per CPU-second, simulated
 * seconds per CPU-second, ns per event, peak RSS, the event queue's traffic
 * (scheduled, cancelled, mean live and heap entries per pop) and the bare
 * loop's rate with the run's ratio to it.
 *
 *   schedlab_speed                         every case of the table, once
 *   schedlab_speed --repeat 3              each case 3 times, the run with the least CPU time
 *   schedlab_speed --case bergamo          only cases whose name contains "bergamo"
 *   schedlab_speed --machine M [--kernel K] -- BENCHMARK ARGS...   one ad-hoc case
 *
 * CPU time is the process's (CLOCK_PROCESS_CPUTIME_ID), so another job on the
 * machine disturbs it less than wall time; compare builds by interleaving
 * their runs. Peak RSS is the case process's (wait4), not this one's.
 */
#include "experiment/run.h"
#include "sched/core.h"
#include "sim/rng.h"
#include "sim/simulation.h"

#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <map>
#include <optional>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

namespace schedlab {
namespace {

struct speed_case {
    std::string name;
    std::string machine; ///< preset, or a file relative to the source tree when it starts with @
    std::string kernel;
    std::vector<std::string> argv;
};

/// The table of issue 14 ("Measured on the landed HEAD").
std::vector<speed_case> table()
{
    return {
        {"milan-2s messaging -g 20 -p -l 1000",
         "milan-2s",
         "6.6",
         {"perf", "bench", "sched", "messaging", "-g", "20", "-p", "-l", "1000"}},
        {"ryzen-7950x messaging -g 4 -p -l 1000",
         "ryzen-7950x",
         "6.6",
         {"perf", "bench", "sched", "messaging", "-g", "4", "-p", "-l", "1000"}},
        {"bergamo-2s tbench -t 0.2 256", "bergamo-2s", "6.6", {"tbench", "-t", "0.2", "256"}},
        {"1024 CPUs tbench -t 0.2 512",
         "@tests/golden/bergamo-4s-1024.json",
         "6.6",
         {"tbench", "-t", "0.2", "512"}},
    };
}

std::string resolve(const std::string& machine)
{
    return machine.starts_with("@") ? std::string(SCHEDLAB_SOURCE_DIR) + "/" + machine.substr(1)
                                    : machine;
}

double cpu_seconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/* ---- the bare heap loop ---- */

struct bare_event {
    sim_time when;
    s8 prio;
    u64 seq;
    event_handler* handler;
    u64 arg;
};

struct bare_later {
    bool operator()(const bare_event& a, const bare_event& b) const
    {
        if (a.when != b.when)
            return a.when > b.when;
        if (a.prio != b.prio)
            return a.prio > b.prio;
        return a.seq > b.seq;
    }
};

struct count_handler final : event_handler {
    u64 fired = 0;
    void fire(u64 arg) override { fired += arg; }
};

/// Events per CPU-second of a std::priority_queue pop + fire + push loop holding
/// `pending` events, each pushed 1..100 us after the one popped.
double bare_heap_rate(std::size_t pending, u64 ops)
{
    count_handler h;
    rng_stream rng(1, "bare-heap");
    std::vector<bare_event> storage;
    storage.reserve(pending + 1);
    std::priority_queue<bare_event, std::vector<bare_event>, bare_later> q(bare_later{},
                                                                           std::move(storage));
    u64 seq = 0;
    for (std::size_t i = 0; i < pending; ++i)
        q.push({static_cast<sim_time>(rng.below(100000)), 20, ++seq, &h, 1});
    const double t0 = cpu_seconds();
    for (u64 n = 0; n < ops; ++n) {
        const bare_event e = q.top();
        q.pop();
        e.handler->fire(e.arg);
        q.push({e.when + 1 + static_cast<sim_time>(rng.below(100000)), e.prio, ++seq, e.handler,
                e.arg});
    }
    const double t1 = cpu_seconds();
    if (h.fired != ops)
        std::abort();
    return static_cast<double>(ops) / (t1 - t0);
}

/* ---- one case, in the child process ---- */

struct case_result {
    double cpu_s = 0;
    double sim_s = 0;
    u64 events = 0;
    u64 scheduled = 0;
    u64 cancelled = 0;
    double live_mean = 0;
    double heap_mean = 0;
    double bare_rate = 0;
    long peak_rss_kib = 0;
    int nr_cpus = 0;
    bool finished = false;
    std::string digest;
    u64 switches = 0;  ///< context switches (rq->nr_switches summed)
    std::string kinds; ///< the kernel's events by kind, comma-separated counts
};

std::string encode(const case_result& r)
{
    return fmt::format("RESULT cpu_s={:.6f} sim_s={:.9f} events={} scheduled={} cancelled={} "
                       "live_mean={:.3f} heap_mean={:.3f} bare_rate={:.1f} cpus={} finished={} "
                       "digest={} switches={} kinds={}\n",
                       r.cpu_s, r.sim_s, r.events, r.scheduled, r.cancelled, r.live_mean,
                       r.heap_mean, r.bare_rate, r.nr_cpus, r.finished ? 1 : 0, r.digest,
                       r.switches, r.kinds);
}

std::optional<case_result> decode(const std::string& text)
{
    const auto at = text.find("RESULT ");
    if (at == std::string::npos)
        return std::nullopt;
    std::map<std::string, std::string> kv;
    std::istringstream in(text.substr(at + 7));
    std::string tok;
    while (in >> tok) {
        const auto eq = tok.find('=');
        if (eq != std::string::npos)
            kv[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    case_result r;
    try {
        r.cpu_s = std::stod(kv.at("cpu_s"));
        r.sim_s = std::stod(kv.at("sim_s"));
        r.events = std::stoull(kv.at("events"));
        r.scheduled = std::stoull(kv.at("scheduled"));
        r.cancelled = std::stoull(kv.at("cancelled"));
        r.live_mean = std::stod(kv.at("live_mean"));
        r.heap_mean = std::stod(kv.at("heap_mean"));
        r.bare_rate = std::stod(kv.at("bare_rate"));
        r.nr_cpus = std::stoi(kv.at("cpus"));
        r.finished = kv.at("finished") == "1";
        r.digest = kv.at("digest");
        r.switches = std::stoull(kv.at("switches"));
        r.kinds = kv.at("kinds");
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return r;
}

int run_case_here(const speed_case& c)
{
    run_spec spec;
    spec.machine = resolve(c.machine);
    spec.kernel = c.kernel;
    spec.workload_argv = c.argv;
    case_result r;
    run_hooks hooks;
    hooks.after_run = [&](const kernel& k) {
        const simulation& sim = k.sim();
        r.scheduled = sim.queue().scheduled_total();
        r.cancelled = sim.queue().cancelled_total();
        const double fired = static_cast<double>(std::max<u64>(1, sim.events_fired()));
        r.live_mean = static_cast<double>(sim.pending_sum()) / fired;
        r.heap_mean = static_cast<double>(sim.heap_entries_sum()) / fired;
        for (const u64 n : k.events_by_kind())
            r.kinds += fmt::format("{}{}", r.kinds.empty() ? "" : ",", n);
    };
    const double t0 = cpu_seconds();
    const run_result res = execute_run(spec, hooks);
    r.cpu_s = cpu_seconds() - t0;
    r.sim_s = static_cast<double>(res.summary.simulated_ns) * 1e-9;
    r.events = res.events_fired;
    r.nr_cpus = res.provenance.nr_cpus;
    r.finished = res.finished;
    r.digest = fmt::format("{:016x}", res.schedule_digest);
    r.switches = res.summary.switches;
    const auto pending = static_cast<std::size_t>(std::max(1.0, r.live_mean + 0.5));
    r.bare_rate = bare_heap_rate(pending, 10'000'000);
    std::fputs(encode(r).c_str(), stdout);
    return 0;
}

/* ---- the parent: one child process per run ---- */

struct child_outcome {
    std::optional<case_result> result;
    long peak_rss_kib = 0;
    std::string error;
};

child_outcome spawn_case(const speed_case& c)
{
    child_outcome out;
    int fds[2];
    if (pipe(fds) != 0) {
        out.error = std::strerror(errno);
        return out;
    }
    std::vector<std::string> args = {"/proc/self/exe", "--child", "--machine", c.machine,
                                     "--kernel",       c.kernel,  "--"};
    args.insert(args.end(), c.argv.begin(), c.argv.end());
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        out.error = std::strerror(errno);
        return out;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        std::vector<char*> cargv;
        for (auto& a : args)
            cargv.push_back(a.data());
        cargv.push_back(nullptr);
        execv("/proc/self/exe", cargv.data());
        _exit(127);
    }
    close(fds[1]);
    std::string text;
    char buf[4096];
    for (;;) {
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    close(fds[0]);
    int status = 0;
    rusage ru{};
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    out.peak_rss_kib = ru.ru_maxrss;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        out.error = fmt::format("case process failed (status {:#x})", status);
        return out;
    }
    out.result = decode(text);
    if (!out.result)
        out.error = "no result line from the case process";
    return out;
}

void print_header()
{
    fmt::print(
        "{:<40} {:>5} {:>10} {:>8} {:>8} {:>9} {:>9} {:>8} {:>9} {:>7} {:>13} {:>9} {:>6} {:>16} "
        "{:>9} {:>5}\n",
        "case", "CPUs", "events", "sim s", "CPU s", "Mev/CPUs", "sim s/CPUs", "ns/ev", "RSS MiB",
        "cancel%", "live/heap", "bare Mev/s", "ratio", "digest", "switches", "ev/sw");
}

double per_switch(u64 n, u64 switches)
{
    return static_cast<double>(n) / static_cast<double>(std::max<u64>(1, switches));
}

void print_row(const std::string& name, const case_result& r, long rss_kib)
{
    const double rate = static_cast<double>(r.events) / r.cpu_s;
    fmt::print("{:<40} {:>5} {:>10} {:>8.4f} {:>8.2f} {:>9.2f} {:>9.3f} {:>8.0f} {:>9.1f} {:>7.1f} "
               "{:>6.0f}/{:<6.0f} {:>9.1f} {:>6.3f} {:>16} {:>9} {:>5.2f}{}\n",
               name, r.nr_cpus, r.events, r.sim_s, r.cpu_s, rate * 1e-6, r.sim_s / r.cpu_s,
               1e9 / rate, static_cast<double>(rss_kib) / 1024.0,
               100.0 * static_cast<double>(r.cancelled) /
                   static_cast<double>(std::max<u64>(1, r.scheduled)),
               r.live_mean, r.heap_mean, r.bare_rate * 1e-6, rate / r.bare_rate, r.digest,
               r.switches, per_switch(r.events, r.switches), r.finished ? "" : "  (time limit)");
    // The kernel's events by kind, each also per context switch.
    std::string line = "    by kind:";
    std::istringstream in(r.kinds);
    std::string n;
    for (int k = 0; k < kernel::nr_event_kinds && std::getline(in, n, ','); ++k)
        line += fmt::format(" {} {} ({:.2f}/sw)", kernel::event_kind_name(k), n,
                            per_switch(std::stoull(n), r.switches));
    fmt::print("{}\n", line);
    std::fflush(stdout);
}

constexpr const char* usage_text =
    "usage: schedlab_speed [--repeat N] [--case SUBSTRING]...\n"
    "       schedlab_speed [--repeat N] --machine M [--kernel K] [--name NAME] -- "
    "BENCHMARK ARGS...\n";

/// -h / --help: what the tool prints and its two forms (docs/performance.md, "How to measure").
int help()
{
    std::printf("schedlab_speed: the speed table of issue 14 (docs/performance.md, \"How to "
                "measure\").\n"
                "Each case runs as `schedlab run` does, in a process of its own, then a bare "
                "std::priority_queue loop\n"
                "holding the run's mean pending events; it prints events, simulated and CPU "
                "seconds, their rates,\n"
                "ns per event, peak RSS, the queue's traffic and the ratio to the bare loop.\n"
                "%s"
                "  --repeat N        run each case N times (1-100) and keep the least CPU time\n"
                "  --case SUBSTRING  only the cases whose name contains it (repeatable)\n"
                "  --machine M       an ad-hoc case on preset or machine file M\n"
                "  --kernel K        its kernel spec (default 6.6)\n"
                "  --name NAME       its name in the table\n",
                usage_text);
    return 0;
}

int usage(const char* why)
{
    std::fprintf(stderr, "schedlab_speed: %s\n%s", why, usage_text);
    return 2;
}

} // namespace
} // namespace schedlab

int main(int argc, char** argv)
{
    using namespace schedlab;
    std::vector<std::string> args(argv + 1, argv + argc);
    int repeat = 1;
    bool child = false;
    std::vector<std::string> filters;
    std::optional<speed_case> adhoc;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const char* flag) -> std::optional<std::string> {
            if (i + 1 >= args.size())
                return std::nullopt;
            (void)flag;
            return args[++i];
        };
        if (a == "-h" || a == "--help") {
            return help();
        } else if (a == "--child") {
            child = true;
        } else if (a == "--repeat") {
            const auto v = value("--repeat");
            char* end = nullptr;
            const long n = v ? std::strtol(v->c_str(), &end, 10) : 0;
            if (!v || *end || n < 1 || n > 100)
                return usage("--repeat takes a count from 1 to 100");
            repeat = static_cast<int>(n);
        } else if (a == "--case") {
            const auto v = value("--case");
            if (!v)
                return usage("--case takes a substring of a case name");
            filters.push_back(*v);
        } else if (a == "--machine" || a == "--kernel" || a == "--name") {
            const auto v = value(a.c_str());
            if (!v)
                return usage(fmt::format("{} takes a value", a).c_str());
            if (!adhoc)
                adhoc = speed_case{"", "", "6.6", {}};
            (a == "--machine"  ? adhoc->machine
             : a == "--kernel" ? adhoc->kernel
                               : adhoc->name) = *v;
        } else if (a == "--") {
            if (!adhoc)
                return usage("a benchmark after -- needs --machine");
            adhoc->argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
            break;
        } else {
            return usage(fmt::format("unknown argument '{}'", a).c_str());
        }
    }
    if (adhoc && (adhoc->machine.empty() || adhoc->argv.empty()))
        return usage("an ad-hoc case needs --machine and a benchmark after --");

    if (child) {
        if (!adhoc)
            return usage("--child needs a case");
        try {
            return run_case_here(*adhoc);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "schedlab_speed: %s\n", e.what());
            return 2;
        }
    }

    std::vector<speed_case> cases;
    if (adhoc) {
        if (adhoc->name.empty()) {
            adhoc->name = adhoc->machine;
            for (const auto& a : adhoc->argv)
                adhoc->name += " " + a;
        }
        cases.push_back(*adhoc);
    } else {
        for (const auto& c : table())
            if (filters.empty() || std::any_of(filters.begin(), filters.end(), [&](auto& f) {
                    return c.name.find(f) != std::string::npos;
                }))
                cases.push_back(c);
        if (cases.empty())
            return usage("no case matches --case");
    }

    fmt::print("# schedlab_speed: git {}, {} run(s) per case (the one with the least CPU time); "
               "bare = std::priority_queue at the run's mean live pending events\n",
               schedlab_git_sha(), repeat);
    print_header();
    int failures = 0;
    for (const auto& c : cases) {
        std::optional<case_result> best;
        long best_rss = 0;
        for (int i = 0; i < repeat; ++i) {
            const child_outcome o = spawn_case(c);
            if (!o.result) {
                std::fprintf(stderr, "schedlab_speed: %s: %s\n", c.name.c_str(), o.error.c_str());
                ++failures;
                break;
            }
            if (!best || o.result->cpu_s < best->cpu_s) {
                best = o.result;
                best_rss = o.peak_rss_kib;
            }
        }
        if (best)
            print_row(c.name, *best, best_rss);
    }
    return failures ? 1 : 0;
}
