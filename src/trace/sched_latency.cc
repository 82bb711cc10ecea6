// SPDX-License-Identifier: GPL-2.0-only
#include "trace/sched_latency.h"

#include "sim/config_error.h"
#include "trace/ftrace_parse.h"
#include "trace/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

namespace schedlab {

namespace {

/// The select_task_rq entries of a decision log (`schedlab run --explain`), read as the
/// trace's time passes: only those within a microsecond of the current time are held.
class decision_reader {
public:
    explicit decision_reader(const std::string& path) : path_(path), in_(path)
    {
        // An ifstream opens a directory and then reads nothing: that was an empty log,
        // silently (every wakeup without its placement).
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec))
            throw config_error("--explain", fmt::format("'{}' is a directory, not a decision "
                                                        "log (schedlab run --explain FILE)",
                                                        path));
        if (!in_)
            throw config_error("--explain", fmt::format("cannot read '{}'", path));
    }

    /// The placement decision for a wakeup of `pid` at `ts`, if the log has one within
    /// the microsecond the two files print (both are written at the same simulated instant).
    std::optional<std::string> take(int pid, sim_time ts)
    {
        read_until(ts + slack);
        auto it = pending_.find(pid);
        if (it == pending_.end())
            return std::nullopt;
        auto& q = it->second;
        while (!q.empty() && q.front().first < ts - slack)
            q.pop_front();
        if (q.empty() || q.front().first > ts + slack)
            return std::nullopt;
        std::string text = std::move(q.front().second);
        q.pop_front();
        return text;
    }

private:
    static constexpr sim_dur slack = 1000; // the logs' microsecond rounding

    /// The longest decision log line read; the log's lines are under 1 KiB (a reason and a
    /// few numbers), so a longer one is not a log (a binary file, /dev/zero), refused before
    /// it is held whole.
    static constexpr std::size_t max_line_bytes = 65536;

    void read_until(sim_time ts)
    {
        std::string line;
        while (last_ts_ <= ts && next_line(line)) {
            ++line_no_;
            parse(line);
        }
    }

    /// std::getline() with a bound: false at the end of the file; config_error on a line
    /// longer than max_line_bytes or a read error (std::getline() turned std::bad_alloc on
    /// /dev/zero into a silent end of the log).
    bool next_line(std::string& line)
    {
        line.clear();
        std::streambuf* buf = in_.rdbuf();
        bool any = false;
        while (true) {
            const int ch = buf->sbumpc();
            if (ch == std::char_traits<char>::eof())
                return any;
            any = true;
            if (ch == '\n')
                return true;
            if (line.size() == max_line_bytes)
                throw config_error(fmt::format("{}:{}", path_, line_no_ + 1),
                                   fmt::format("a line longer than {} bytes: not a decision log "
                                               "(schedlab run --explain FILE)",
                                               max_line_bytes));
            line.push_back(static_cast<char>(ch));
        }
    }

    // "      0.002469 cpu0    select_task_rq   pid 41 (comm) prev cpu1 -> cpu1: ..."
    void parse(const std::string& line)
    {
        std::istringstream s(line);
        double secs = 0;
        std::string cpu, what;
        if (!(s >> secs >> cpu >> what) || !cpu.starts_with("cpu"))
            throw config_error(fmt::format("{}:{}", path_, line_no_),
                               "not a decision log line (schedlab run --explain FILE)");
        last_ts_ = static_cast<sim_time>(secs * 1e9 + 0.5);
        if (what != "select_task_rq")
            return;
        std::string rest;
        std::getline(s, rest);
        const std::size_t p = rest.find("pid ");
        if (p == std::string::npos)
            return;
        int pid = -1;
        const char* b = rest.data() + p + 4;
        if (std::from_chars(b, rest.data() + rest.size(), pid).ec != std::errc{})
            return;
        // The reason is what follows the placement ("prev cpuA -> cpuB: ").
        const std::size_t colon = rest.find(": ", p);
        pending_[pid].emplace_back(last_ts_,
                                   colon == std::string::npos ? rest : rest.substr(colon + 2));
    }

    std::string path_;
    std::ifstream in_;
    u64 line_no_ = 0;
    sim_time last_ts_ = -1;
    std::map<int, std::deque<std::pair<sim_time, std::string>>> pending_;
};

struct task_state {
    std::string comm;
    int pid = 0;
    sim_time on_cpu_since = -1;
    int cpu = -1;                 ///< the CPU it runs on, while on_cpu_since >= 0
    sim_time runnable_since = -1; ///< woken or preempted, not yet switched in
    s64 wakeup = -1;              ///< its last wakeup row (by number) still waiting to run
    latency_row row;
};

double ms(sim_dur ns)
{
    return static_cast<double>(ns) / 1e6;
}

std::string stamp(sim_time ns)
{
    return fmt::format("{:.6f}", static_cast<double>(ns) / 1e9);
}

std::string task_name(const std::string& comm, int pid)
{
    return fmt::format("{}[{}]", comm.empty() ? "?" : comm, pid);
}

bool less_by(const latency_row& a, const latency_row& b, const std::vector<std::string>& keys)
{
    const auto avg = [](const latency_row& r) {
        return r.delays ? r.total_delay / static_cast<sim_dur>(r.delays) : 0;
    };
    for (const std::string& k : keys) {
        sim_dur x = 0, y = 0;
        if (k == "runtime")
            x = a.runtime, y = b.runtime;
        else if (k == "switch")
            x = static_cast<sim_dur>(a.switches), y = static_cast<sim_dur>(b.switches);
        else if (k == "avg")
            x = avg(a), y = avg(b);
        else if (k == "max")
            x = a.max_delay, y = b.max_delay;
        else if (k == "pid")
            x = -a.pid, y = -b.pid;
        if (x != y)
            return x > y; // the largest first
    }
    return a.pid < b.pid;
}

std::vector<std::string> sort_keys(const std::string& spec)
{
    std::vector<std::string> keys;
    std::string k;
    std::istringstream s(spec);
    while (std::getline(s, k, ',')) {
        k.erase(0, k.find_first_not_of(' '));
        k.erase(k.find_last_not_of(' ') + 1);
        if (k != "runtime" && k != "switch" && k != "avg" && k != "max" && k != "pid")
            throw config_error("--sort", fmt::format("'{}' is not a sort key: runtime, switch, "
                                                     "avg, max or pid (comma-separated)",
                                                     k));
        keys.push_back(k);
    }
    if (keys.empty())
        throw config_error("--sort", "no sort key given");
    return keys;
}

/* One pass over a trace's events: each task's runtime and delays, and the wakeup rows. */
class latency_pass {
public:
    latency_pass(const latency_options& o, const wakeup_sink& sink, latency_result& res,
                 std::optional<decision_reader>& decisions, const sched_trace_reader& r)
        : o(o), sink(sink), res(res), decisions(decisions), r_(r)
    {
    }

    void event(ftrace_event& e)
    {
        if (e.cpu >= static_cast<int>(cpu_seen.size()))
            cpu_seen.resize(static_cast<std::size_t>(e.cpu) + 1, false);
        // A task running on a CPU at the trace's start: its runtime counts from there.
        if (!cpu_seen[static_cast<std::size_t>(e.cpu)]) {
            cpu_seen[static_cast<std::size_t>(e.cpu)] = true;
            if (e.curr_pid > 0 && !e.inferred) {
                task_state& t = task(e.curr_pid, {});
                if (t.on_cpu_since < 0)
                    t.on_cpu_since = e.ts;
            }
        }
        switch (e.type) {
        case ftrace_event_type::sched_switch:
            switched(e);
            break;
        case ftrace_event_type::sched_waking:
            ++res.sched_waking_events;
            if (o.wakeups)
                targets.waking(e.cpu, e.pid, e.target_cpu, e.in_task_context());
            waking(e);
            break;
        case ftrace_event_type::sched_wakeup_new:
            waking(e);
            break;
        case ftrace_event_type::sched_wakeup:
            woken(e);
            break;
        case ftrace_event_type::sched_process_fork:
            task(e.pid, e.comm);
            task(e.pid2, e.comm2);
            break;
        case ftrace_event_type::sched_process_exec:
            if (e.pid > 0)
                task(e.pid, {}); // its comm changes at the next event naming it
            break;
        default:
            break;
        }
    }

    /* The trace ended: the wakees that have not run are complete as they are. */
    void finish()
    {
        res.targets = targets.counts();
        for (pending_wakeup& p : window) // the trace ended before these wakees ran
            p.open = false;
        pass_on();
    }

    /* The rows: per pid, or merged by comm (perf sched latency's default). */
    void rows()
    {
        std::map<std::string, latency_row> by_comm;
        for (auto& [pid, t] : tasks) {
            if (t.row.switches == 0 && t.row.delays == 0 && t.row.runtime == 0)
                continue; // never ran in the trace
            latency_row row = t.row;
            row.comm = t.comm;
            row.pid = pid;
            res.total_runtime += row.runtime;
            res.total_switches += row.switches;
            if (!o.merge_by_comm) {
                res.rows.push_back(std::move(row));
                continue;
            }
            auto [it, fresh] = by_comm.try_emplace(row.comm, row);
            if (fresh)
                continue;
            latency_row& m = it->second;
            ++m.merged;
            m.pid = std::min(m.pid, row.pid);
            m.runtime += row.runtime;
            m.switches += row.switches;
            m.delays += row.delays;
            m.total_delay += row.total_delay;
            if (row.max_delay > m.max_delay ||
                (row.max_delay == m.max_delay && row.max_start < m.max_start)) {
                m.max_delay = row.max_delay;
                m.max_start = row.max_start;
                m.max_end = row.max_end;
                m.max_cpu = row.max_cpu;
            }
        }
        for (auto& [comm, row] : by_comm)
            res.rows.push_back(std::move(row));
    }

private:
    // Wakeup rows from the oldest not yet passed on; row number n is window[n - window_base].
    // A row is open while its wakee has not run (task_state::wakeup names it).
    struct pending_wakeup {
        wakeup_row row;
        bool open = false;
    };

    task_state& task(int pid, std::string_view comm)
    {
        task_state& t = tasks[pid];
        t.pid = pid;
        if (!comm.empty())
            t.comm = comm;
        return t;
    }

    void emit(const wakeup_row& w)
    {
        if (sink)
            sink(w);
        else
            res.wakeups.push_back(w);
    }

    wakeup_row& row_of(s64 n) { return window[static_cast<std::size_t>(n - window_base)].row; }

    void close_row(task_state& t)
    {
        if (t.wakeup >= 0)
            window[static_cast<std::size_t>(t.wakeup - window_base)].open = false;
        t.wakeup = -1;
    }

    void pass_on() // the rows that are complete, and past the window's bound
    {
        while (!window.empty() &&
               (!window.front().open || (sink && window.size() > o.wakeup_window))) {
            if (window.front().open) {
                ++res.wakeups_cut;
                tasks[window.front().row.wakee].wakeup = -1;
            }
            emit(window.front().row);
            window.pop_front();
            ++window_base;
        }
    }

    /* sched_switch: prev's runtime ends (it waits if preempted), next's delay ends. */
    void switched(ftrace_event& e)
    {
        res.inferred_switch_ins += e.inferred;
        // An inferred switch-in from idle, placed as schedlab replay places it
        // (docs/replay.md): the idle CPU's last event, or the task's last wakeup if later,
        // plus the median wakeup-to-switch delay recorded so far, never after the event
        // that revealed it.
        if (e.inferred && e.pid == 0) {
            const sim_dur median = r_.quirks().median_idle_wakeup_to_switch();
            const auto w = last_wakeup.find(e.pid2);
            if (median >= 0)
                e.ts = std::min(e.ts,
                                std::max(e.ts_lo, w == last_wakeup.end() ? 0 : w->second) + median);
        }
        if (o.wakeups)
            targets.switched(e.cpu, e.pid, e.prev_runnable(), e.prev_dead(), e.pid2);
        if (e.pid > 0) {
            task_state& t = task(e.pid, e.comm);
            if (t.on_cpu_since >= 0)
                t.row.runtime += e.ts - t.on_cpu_since;
            t.on_cpu_since = -1;
            ++t.row.switches;
            // Preempted (R, R+; "?" after an inferred task-to-task switch): it waits from now.
            if (e.prev_runnable() && t.runnable_since < 0)
                t.runnable_since = e.ts;
        }
        if (e.pid2 > 0) {
            task_state& t = task(e.pid2, e.comm2);
            if (t.runnable_since >= 0) {
                const sim_dur d = e.ts - t.runnable_since;
                ++t.row.delays;
                t.row.total_delay += d;
                if (d > t.row.max_delay || t.row.max_cpu < 0) {
                    t.row.max_delay = d;
                    t.row.max_start = t.runnable_since;
                    t.row.max_end = e.ts;
                    t.row.max_cpu = e.cpu;
                }
            }
            t.runnable_since = -1;
            t.on_cpu_since = e.ts;
            t.cpu = e.cpu;
            if (t.wakeup >= 0) {
                wakeup_row& w = row_of(t.wakeup);
                w.ran = e.ts;
                w.ran_cpu = e.cpu;
                close_row(t);
                pass_on();
            }
        }
    }

    /* The task a waking or wakeup event names (none for pid 0), woken now. */
    task_state* woken_task(const ftrace_event& e)
    {
        if (e.pid <= 0)
            return nullptr;
        last_wakeup[e.pid] = e.ts;
        return &task(e.pid, e.comm);
    }

    /* sched_waking, sched_wakeup_new: the task waits from now; a wakeup row. */
    void waking(const ftrace_event& e)
    {
        task_state* const wakee = woken_task(e);
        if (!wakee)
            return;
        task_state& t = *wakee;
        const bool is_new = e.type == ftrace_event_type::sched_wakeup_new;
        const bool on_cpu = t.on_cpu_since >= 0;
        if (!on_cpu && t.runnable_since < 0)
            t.runnable_since = e.ts;
        if (!o.wakeups)
            return;
        wakeup_row w;
        w.ts = e.ts;
        w.cpu = e.cpu;
        w.waker = e.curr_pid;
        if (const auto it = tasks.find(e.curr_pid); it != tasks.end())
            w.waker_comm = it->second.comm;
        w.wakee = e.pid;
        w.wakee_comm = t.comm;
        w.is_new = is_new;
        if (is_new)
            w.target_cpu = e.target_cpu;
        else
            w.prev_cpu = e.target_cpu;
        if (on_cpu) { // woken while still on its CPU (inside __schedule()): no placement
            w.ran = e.ts;
            w.ran_cpu = t.cpu >= 0 ? t.cpu : e.cpu;
        }
        if (decisions)
            if (auto why = decisions->take(e.pid, e.ts)) {
                w.reason = std::move(*why);
                ++res.explained;
            }
        ++res.wakeups_total;
        close_row(t); // an earlier wakeup it did not run after: complete as it is
        window.push_back({std::move(w), !on_cpu});
        if (!on_cpu)
            t.wakeup = window_base + static_cast<s64>(window.size()) - 1;
        pass_on();
    }

    /* sched_wakeup: the CPU the wakeup placed the task on. */
    void woken(const ftrace_event& e)
    {
        task_state* const wakee = woken_task(e);
        if (!wakee)
            return;
        task_state& t = *wakee;
        if (t.wakeup >= 0) {
            wakeup_row& w = row_of(t.wakeup);
            if (w.target_cpu < 0)
                w.target_cpu = e.target_cpu;
        }
    }

    const latency_options& o;
    const wakeup_sink& sink;
    latency_result& res;
    std::optional<decision_reader>& decisions;
    const sched_trace_reader& r_;
    std::unordered_map<int, task_state> tasks;
    std::deque<pending_wakeup> window;
    s64 window_base = 0;
    std::vector<bool> cpu_seen;
    std::unordered_map<int, sim_time> last_wakeup; // pid -> its last waking or wakeup
    wakeup_target_tracker targets{0};
};

/* A schedlab result (--json) or another JSON document: no events to read. */
void refuse_json(const std::string& path)
{
    std::ifstream in(path);
    char c = 0;
    while (in.get(c) && (c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
    }
    if (in && c == '{')
        throw config_error(path, "a JSON document (a schedlab result?) holds no scheduler "
                                 "events: give the trace of the run (schedlab run --trace "
                                 "FILE) or a recorded one");
}

} // namespace

latency_result sched_latency(const std::string& path, const latency_options& o,
                             const wakeup_sink& sink)
{
    const std::vector<std::string> keys = sort_keys(o.sort);
    std::optional<decision_reader> decisions;
    if (!o.explain_path.empty())
        decisions.emplace(o.explain_path);

    sched_trace_reader r(path); // first: it refuses a pipe, which the check below would drain
    refuse_json(path);
    latency_result res;
    res.path = path;
    res.wakeup_window = o.wakeup_window;
    latency_pass pass(o, sink, res, decisions, r);
    ftrace_event e;
    trace_progress progress(std::cerr, "reading " + path, trace_progress_wanted(o.quiet));
    while (r.next(e)) {
        progress.update_with([&] { return r.bytes_read(); }, r.file_bytes());
        pass.event(e);
    }
    if (r.stats().events == 0)
        throw config_error(path, "no trace events: an empty trace, or not ftrace text");
    pass.finish();
    pass.rows();
    std::sort(res.rows.begin(), res.rows.end(),
              [&](const latency_row& a, const latency_row& b) { return less_by(a, b, keys); });
    return res;
}

void print_latency(std::ostream& out, const latency_result& r)
{
    const std::string rule(150, '-');
    out << " " << rule << "\n";
    out << fmt::format("  {:<22}|{:>14} |{:>9} | {:<15} | {:<15} | {:<25} | {:<23} | {}\n", "Task",
                       "Runtime ms", "Switches", "Avg delay ms", "Max delay ms", "Max delay start",
                       "Max delay end", "Max delay on");
    out << " " << rule << "\n";
    for (const latency_row& row : r.rows) {
        const std::string name = row.merged > 1 ? fmt::format("{}:({})", row.comm, row.merged)
                                                : fmt::format("{}:{}", row.comm, row.pid);
        const sim_dur avg = row.delays ? row.total_delay / static_cast<sim_dur>(row.delays) : 0;
        out << fmt::format("  {:<22}|{:11.3f} ms |{:9} | avg:{:8.3f} ms | max:{:8.3f} ms | "
                           "max start: {:>12} s | max end: {:>12} s | {}\n",
                           name, ms(row.runtime), row.switches, ms(avg), ms(row.max_delay),
                           row.delays ? stamp(row.max_start) : "-",
                           row.delays ? stamp(row.max_end) : "-",
                           row.max_cpu >= 0 ? fmt::format("cpu{}", row.max_cpu) : "-");
    }
    out << " " << std::string(115, '-') << "\n";
    out << fmt::format("  {:<22}|{:11.3f} ms |{:9} |\n", "TOTAL:", ms(r.total_runtime),
                       r.total_switches);
    out << " " << std::string(51, '-') << "\n";
    if (r.inferred_switch_ins > 0)
        out << fmt::format("\n  {} switch-ins were not recorded; each is placed as schedlab "
                           "replay places it (the idle CPU's last event plus the median "
                           "recorded wakeup-to-switch delay so far, never after the event that "
                           "revealed it)\n",
                           r.inferred_switch_ins);
    if (r.wakeups.empty())
        return;
    print_wakeups_header(out);
    for (const wakeup_row& w : r.wakeups)
        out << format_wakeup_row(w);
    print_wakeups_footer(out, r);
}

void print_wakeups_header(std::ostream& out)
{
    out << fmt::format("\n{:>15}  {:>5}  {:<24} {:<34} {:>5} {:>6}  {:<7} {:>10}  {}\n", "time",
                       "cpu", "waker", "wakee", "prev", "target", "ran on", "delay ms",
                       "placement (--explain)");
}

std::string format_wakeup_row(const wakeup_row& w)
{
    const std::string waker =
        w.waker == 0 ? std::string("<idle>") : task_name(w.waker_comm, w.waker);
    const std::string wakee =
        (w.is_new ? "new: " : "awakened: ") + task_name(w.wakee_comm, w.wakee);
    const auto cpu = [](int c) { return c >= 0 ? fmt::format("{}", c) : std::string("-"); };
    return fmt::format("{:>15}  [{:03}]  {:<24} {:<34} {:>5} {:>6}  {:<7} {:>10}  {}\n",
                       stamp(w.ts), w.cpu, waker, wakee, cpu(w.prev_cpu), cpu(w.target_cpu),
                       w.ran_cpu >= 0 ? fmt::format("cpu{}", w.ran_cpu) : "-",
                       w.ran >= 0 ? fmt::format("{:.3f}", ms(w.ran - w.ts)) : "-", w.reason);
}

void print_wakeups_footer(std::ostream& out, const latency_result& r)
{
    out << fmt::format("\n  {} wakeups, {} with their placement from the decision log\n",
                       r.wakeups_total, r.explained);
    if (r.sched_waking_events == 0) {
        out << "  no sched_waking events (record sched:sched_waking): the wakeups' previous "
               "CPUs and wakers are unknown, so are their targets\n";
    } else {
        const wakeup_target_counts& c = r.targets;
        const u64 placed = c.placed_by(waker_kind::task) + c.placed_by(waker_kind::other);
        const auto pct = [&](u64 n) {
            return fmt::format("{} ({:.0f}%)", n,
                               placed ? 100.0 * static_cast<double>(n) / static_cast<double>(placed)
                                      : 0.0);
        };
        out << fmt::format("  wakeup targets (where a sched_waking's wakee ran next): the "
                           "waker's CPU {}, its previous CPU {}, both (the waking on its "
                           "previous CPU) {}, another CPU {}; {} of these by an interrupt or "
                           "the idle task; not placed (woken running or runnable) {}, not run "
                           "{}\n",
                           pct(c.of(wakeup_target::waker)), pct(c.of(wakeup_target::prev)),
                           pct(c.of(wakeup_target::both)), pct(c.of(wakeup_target::other)),
                           c.placed_by(waker_kind::other), c.not_placed, c.not_run);
    }
    if (r.wakeups_cut > 0)
        out << fmt::format("  {} of them printed before their wakee ran, its delay unknown "
                           "('-'): {} later wakeups were waiting behind them\n",
                           r.wakeups_cut, r.wakeup_window);
}

} // namespace schedlab
