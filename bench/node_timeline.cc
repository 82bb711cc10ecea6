// SPDX-License-Identifier: GPL-2.0-only
/*
 * node_timeline: one run as `schedlab run` does it, with a table of what each NUMA node did
 * in each interval of simulated time (lane tb512l: `git show 9376ffa:docs/validation.md`,
 * "tbench at 512 clients past the start-up (lane tb512l, 2026-12-04)"). Per interval and node:
 * the share of the node's CPU time with a task current (the run summary's busy), the tasks
 * queued (sum of rq->nr_running) at the interval's end, the tasks whose task_cpu() is on the
 * node (asleep or not), the tasks that
 * crossed into the node (set_task_cpu() at a wakeup or otherwise: a balance pass or a
 * stopper), and the NUMA-level load-balance counters of the node's CPUs (the balancing CPU's
 * node: lb_count, lb_balanced, lb_failed, lb_gained and lb_hot_gained per idle type, the
 * active balances), with the NUMA domains' nr_balance_failed at the interval's end.
 *
 * Reads only: the schedule (its digest) is the run's without the table. A study tool, never a
 * test. Usage:
 *   node_timeline [--machine M] [--kernel K] [--seed S] [--interval SEC] [--time-limit SEC]
 *                 -- BENCHMARK ARGS...
 */
#include "experiment/run.h"
#include "sched/core.h"
#include "sched/stats.h"
#include "sched/topology.h"
#include "trace/tracepoints.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace schedlab {
namespace {

constexpr int nr_types = CPU_MAX_IDLE_TYPES;
const char* const type_name[nr_types] = {"idle", "busy", "newidle"};

struct node_counts {
    sim_dur busy = 0;
    u64 in_wake = 0;  ///< tasks set_task_cpu()'d into the node at a wakeup from the other node
    u64 in_other = 0; ///< ... otherwise (balance passes, active balance, affinity)
};

class node_sampler final : public trace_sink {
public:
    node_sampler(sim_dur interval) : interval_(interval), next_(interval) {}

    void attach(const kernel& k)
    {
        k_ = &k;
        const machine& m = k.mach();
        nodes_ = m.nr_nodes();
        node_of_.resize(static_cast<std::size_t>(m.nr_cpus()));
        cpus_of_.assign(static_cast<std::size_t>(nodes_), 0);
        for (int c = 0; c < m.nr_cpus(); ++c) {
            node_of_[static_cast<std::size_t>(c)] = m.cpus[static_cast<std::size_t>(c)].node;
            ++cpus_of_[static_cast<std::size_t>(m.cpus[static_cast<std::size_t>(c)].node)];
        }
        since_.assign(node_of_.size(), -1);
        nbf_seen_.assign(node_of_.size(), 0);
        cur_.assign(static_cast<std::size_t>(nodes_), node_counts{});
        prev_lb_ = read_lb();
        fmt::print("# interval {:.3f} s; per node N: busy% (task current), queued (sum of "
                   "nr_running at the end), tasks (task_cpu on N), in-wake/in-other (tasks that "
                   "crossed into N), NUMA-level lb of N's CPUs per idle type "
                   "count/balanced/failed/gained(hot), alb count/pushed, nr_balance_failed "
                   "max and CPUs above cache_nice_tries\n",
                   static_cast<double>(interval_) * 1e-9);
    }

    void sched_switch(const trace_sched_switch& e) override
    {
        tick(e.ts);
        waking_pid_ = -1;
        const auto c = static_cast<std::size_t>(e.cpu);
        if (e.prev_pid != 0 && since_[c] >= 0)
            cur_[static_cast<std::size_t>(node_of_[c])].busy += e.ts - since_[c];
        since_[c] = e.next_pid != 0 ? e.ts : -1;
    }
    void sched_waking(const trace_sched_wakeup& e) override
    {
        tick(e.ts);
        waking_pid_ = e.pid;
    }
    void sched_wakeup(const trace_sched_wakeup& e) override
    {
        tick(e.ts);
        waking_pid_ = -1;
    }
    void sched_wakeup_new(const trace_sched_wakeup& e) override
    {
        tick(e.ts);
        waking_pid_ = -1;
        set_cpu(e.pid, e.target_cpu);
    }
    void sched_migrate_task(const trace_sched_migrate_task& e) override
    {
        tick(e.ts);
        const int from = node_of_[static_cast<std::size_t>(e.orig_cpu)];
        const int to = node_of_[static_cast<std::size_t>(e.dest_cpu)];
        if (from != to) {
            node_counts& n = cur_[static_cast<std::size_t>(to)];
            if (e.pid == waking_pid_)
                ++n.in_wake;
            else
                ++n.in_other;
        }
        waking_pid_ = -1;
        set_cpu(e.pid, e.dest_cpu);
    }
    void sched_process_exit(const trace_sched_process& e) override
    {
        tick(e.ts);
        waking_pid_ = -1;
        if (static_cast<std::size_t>(e.pid) < cpu_of_.size())
            cpu_of_[static_cast<std::size_t>(e.pid)] = -1;
    }

    /// The last, partial interval, then the CPUs whose periodic (CPU_IDLE) NUMA-level passes
    /// reached find_busiest_group(): should_we_balance() let them balance.
    void finish(sim_time end)
    {
        tick(end);
        if (end > next_ - interval_)
            emit(end);
        fmt::print("# NUMA-level CPU_IDLE passes per CPU that reached find_busiest_group() "
                   "(cpu: passes, of them balancing, failed, gained; the largest "
                   "nr_balance_failed seen at an interval's end):\n#");
        int shown = 0;
        for (int c = 0; c < static_cast<int>(node_of_.size()); ++c) {
            const sched_domain* sd = numa_sd(*k_, c);
            if (!sd || sd->stats.fbg_count[CPU_IDLE] == 0)
                continue;
            const sd_schedstat& st = sd->stats;
            fmt::print(" cpu{}:{},{},{},{},{}", c, st.lb_count[CPU_IDLE], st.fbg_count[CPU_IDLE],
                       st.lb_failed[CPU_IDLE], st.lb_gained[CPU_IDLE],
                       nbf_seen_[static_cast<std::size_t>(c)]);
            if (++shown % 6 == 0)
                fmt::print("\n#");
        }
        fmt::print("\n");
    }

private:
    struct lb_snapshot {
        std::vector<sd_schedstat> per_node; ///< the NUMA domains' counters, summed per node
    };

    void set_cpu(int pid, int cpu)
    {
        const auto p = static_cast<std::size_t>(pid);
        if (p >= cpu_of_.size())
            cpu_of_.resize(p + 1, -1);
        cpu_of_[p] = cpu;
    }

    static const sched_domain* numa_sd(const kernel& k, int cpu)
    {
        for (const auto& sd : k.topology().cpu(cpu).domains)
            if (sd->name == "NUMA")
                return sd.get();
        return nullptr;
    }

    lb_snapshot read_lb() const
    {
        lb_snapshot s;
        s.per_node.assign(static_cast<std::size_t>(nodes_), sd_schedstat{});
        for (int c = 0; c < static_cast<int>(node_of_.size()); ++c)
            if (const sched_domain* sd = numa_sd(*k_, c))
                s.per_node[static_cast<std::size_t>(node_of_[static_cast<std::size_t>(c)])] +=
                    sd->stats;
        return s;
    }

    void tick(sim_time ts)
    {
        while (k_ && ts >= next_) {
            const sim_time b = next_;
            for (std::size_t c = 0; c < since_.size(); ++c)
                if (since_[c] >= 0 && since_[c] < b) {
                    cur_[static_cast<std::size_t>(node_of_[c])].busy += b - since_[c];
                    since_[c] = b;
                }
            emit(b);
            next_ += interval_;
        }
    }

    void emit(sim_time end)
    {
        const sim_time begin = next_ - interval_;
        const lb_snapshot now = read_lb();
        std::vector<int> tasks(static_cast<std::size_t>(nodes_), 0);
        for (const int cpu : cpu_of_)
            if (cpu >= 0)
                ++tasks[static_cast<std::size_t>(node_of_[static_cast<std::size_t>(cpu)])];
        std::string line = fmt::format("{:7.3f}", static_cast<double>(end) * 1e-9);
        for (int nd = 0; nd < nodes_; ++nd) {
            const auto i = static_cast<std::size_t>(nd);
            const node_counts& n = cur_[i];
            const sd_schedstat& a = now.per_node[i];
            const sd_schedstat& p = prev_lb_.per_node[i];
            unsigned queued = 0;
            u32 nbf_max = 0;
            int nbf_over = 0;
            for (int c = 0; c < static_cast<int>(node_of_.size()); ++c) {
                if (node_of_[static_cast<std::size_t>(c)] != nd)
                    continue;
                queued += k_->cpu_rq(c).nr_running;
                if (const sched_domain* sd = numa_sd(*k_, c)) {
                    nbf_max = std::max(nbf_max, sd->nr_balance_failed);
                    u32& seen = nbf_seen_[static_cast<std::size_t>(c)];
                    seen = std::max(seen, sd->nr_balance_failed);
                    if (sd->nr_balance_failed > sd->cache_nice_tries)
                        ++nbf_over;
                }
            }
            const double span = static_cast<double>(end - begin) * cpus_of_[i];
            line += fmt::format(" | n{} {:5.1f}% q{:4} t{:4} in {}/{}", nd,
                                span > 0 ? 100.0 * static_cast<double>(n.busy) / span : 0.0, queued,
                                tasks[i], n.in_wake, n.in_other);
            for (int t = 0; t < nr_types; ++t)
                line += fmt::format(
                    " {} {}/{}/{}/{}({})", type_name[t], a.lb_count[t] - p.lb_count[t],
                    a.lb_balanced[t] - p.lb_balanced[t], a.lb_failed[t] - p.lb_failed[t],
                    a.lb_gained[t] - p.lb_gained[t], a.lb_hot_gained[t] - p.lb_hot_gained[t]);
            line += fmt::format(" alb {}/{} nbf {}:{}", a.alb_count - p.alb_count,
                                a.alb_pushed - p.alb_pushed, nbf_max, nbf_over);
        }
        fmt::print("{}\n", line);
        std::fflush(stdout);
        prev_lb_ = now;
        cur_.assign(static_cast<std::size_t>(nodes_), node_counts{});
    }

    const kernel* k_ = nullptr;
    sim_dur interval_;
    sim_time next_;
    int nodes_ = 0;
    std::vector<int> node_of_, cpus_of_, cpu_of_;
    std::vector<sim_time> since_;
    std::vector<u32> nbf_seen_;
    std::vector<node_counts> cur_;
    lb_snapshot prev_lb_;
    int waking_pid_ = -1;
};

} // namespace
} // namespace schedlab

int main(int argc, char** argv)
{
    using namespace schedlab;
    CLI::App app{"One run with a per-interval table of each NUMA node's busy share, tasks, "
                 "crossings and NUMA-level balance counters"};
    run_spec spec;
    spec.machine = "bergamo-2s";
    spec.kernel = "tip-2023-08";
    double interval_s = 0.5;
    app.add_option("-m,--machine", spec.machine, "machine preset or file");
    app.add_option("-k,--kernel", spec.kernel, "kernel profile with +FEATURE terms");
    app.add_option("-s,--seed", spec.seed, "seed");
    app.add_option("--interval", interval_s, "interval in simulated seconds")
        ->check(CLI::Range(1e-6, 1e6));
    app.add_option("--time-limit", spec.time_limit_s, "stop after this many simulated seconds")
        ->check(CLI::Range(1e-9, 1e6));
    app.add_option("benchmark", spec.workload_argv, "the benchmark command line after --")
        ->required();
    CLI11_PARSE(app, argc, argv);
    try {
        node_sampler sampler(static_cast<sim_dur>(interval_s * 1e9));
        run_hooks hooks;
        hooks.extra_sinks.push_back(&sampler);
        hooks.before_run = [&](const kernel& k) { sampler.attach(k); };
        std::string schedstat;
        hooks.after_run = [&](const kernel& k) {
            sampler.finish(k.now());
            schedstat = schedstat_table(k);
        };
        const run_result res = execute_run(spec, hooks);
        fmt::print("{}\n{}{}# schedule digest {:016x}\n", res.benchmark_output, res.summary_text,
                   schedstat, res.schedule_digest);
        return res.finished ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "node_timeline: %s\n", e.what());
        return 2;
    }
}
