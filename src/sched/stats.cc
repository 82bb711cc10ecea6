// SPDX-License-Identifier: GPL-2.0-only
#include "sched/stats.h"

#include "sched/core.h"
#include "sched/fair_shared_runq.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

namespace schedlab {

std::string cpumask_hex(const cpumask& m)
{
    const int nbits = m.nr_cpu_ids();
    const int nwords = (nbits + 31) / 32;
    std::string s;
    for (int w = nwords - 1; w >= 0; --w) {
        u32 word = 0;
        for (int b = 0; b < 32; ++b)
            if (m.test(w * 32 + b))
                word |= 1u << b;
        if (w == nwords - 1) {
            const int bits = nbits - w * 32;
            const int digits = (bits + 3) / 4;
            s += fmt::format("{:0{}x}", word, digits);
        } else {
            s += fmt::format(",{:08x}", word);
        }
    }
    return s;
}

// kernel: kernel/sched/stats.c show_schedstat(), 6.6: same fields, order and spacing.
std::string schedstat_v15(const kernel& k)
{
    std::string s = "version 15\n";
    s += fmt::format("timestamp {}\n", jiffies(k));
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu) {
        const rq& r = k.cpu_rq(cpu);
        const rq_schedstat& st = r.stats;
        s += fmt::format("cpu{} {} 0 {} {} {} {} {} {} {}\n", cpu, st.yld_count, st.sched_count,
                         st.sched_goidle, st.ttwu_count, st.ttwu_local, st.rq_cpu_time,
                         st.run_delay, st.pcount);
        int dcount = 0;
        for (const auto& sd : k.topology().cpu(cpu).domains) {
            const sd_schedstat& d = sd->stats;
            s += fmt::format("domain{} {}", dcount++, cpumask_hex(sd->span));
            for (int itype = CPU_IDLE; itype < CPU_MAX_IDLE_TYPES; ++itype)
                s += fmt::format(" {} {} {} {} {} {} {} {}", d.lb_count[itype],
                                 d.lb_balanced[itype], d.lb_failed[itype], d.lb_imbalance[itype],
                                 d.lb_gained[itype], d.lb_hot_gained[itype], d.lb_nobusyq[itype],
                                 d.lb_nobusyg[itype]);
            s += fmt::format(" {} {} {} {} {} {} {} {} {} {} {} {}\n", d.alb_count, d.alb_failed,
                             d.alb_pushed, d.sbe_count, d.sbe_balanced, d.sbe_pushed, d.sbf_count,
                             d.sbf_balanced, d.sbf_pushed, d.ttwu_wake_remote, d.ttwu_move_affine,
                             d.ttwu_move_balance);
        }
    }
    return s;
}

std::string format_cpu_accounting(const kernel& k, sim_time begin)
{
    const sim_dur duration = k.now() - begin;
    const int n = k.nr_cpu_ids();
    cpu_time_accounting total;
    for (int cpu = 0; cpu < n; ++cpu) {
        const cpu_time_accounting a = k.charges().cpu_accounting(k.cpu_rq(cpu));
        total.task += a.task;
        total.idle_exit += a.idle_exit;
        total.carried += a.carried;
        for (int c = 0; c < ACCT_NR; ++c) {
            total.spent[c] += a.spent[c];
            total.idle_work[c] += a.idle_work[c];
        }
    }
    const double all = static_cast<double>(duration) * n;
    auto pct = [&](sim_dur v) { return all > 0 ? 100.0 * static_cast<double>(v) / all : 0.0; };
    auto ms = [](sim_dur v) { return static_cast<double>(v) / 1e6; };
    sim_dur busy = total.task;
    std::string kernel_line;
    for (int c = 0; c < ACCT_NR; ++c) {
        busy += total.spent[c];
        if (total.spent[c])
            kernel_line += fmt::format("  {} {:.3f} ({:.1f}%)", acct_cat_name(static_cast<acct_cat>(c)),
                                       ms(total.spent[c]), pct(total.spent[c]));
    }
    const sim_dur idle = static_cast<sim_dur>(all) - busy;
    std::string s = fmt::format("# cpu time (ms, % of {} cpus x {:.6f} s): tasks {:.3f} ({:.1f}%)  "
                                "idle {:.3f} ({:.1f}%)\n",
                                n, static_cast<double>(duration) / 1e9, ms(total.task),
                                pct(total.task), ms(idle), pct(idle));
    if (!kernel_line.empty())
        s += "#   kernel, with a task current:" + kernel_line + "\n";
    std::string idle_line;
    for (int c = 0; c < ACCT_NR; ++c)
        if (total.idle_work[c])
            idle_line += fmt::format("  {} {:.3f}", acct_cat_name(static_cast<acct_cat>(c)),
                                     ms(total.idle_work[c]));
    if (total.idle_exit)
        idle_line += fmt::format("  C-state exits {:.3f}", ms(total.idle_exit));
    if (total.carried)
        idle_line += fmt::format("  (of which carried into busy time {:.3f})", ms(total.carried));
    if (!idle_line.empty())
        s += "#   of the idle time, kernel work:" + idle_line + "\n";
    const wakeup_costs& w = k.charges().cm().wakeup_cost_totals();
    u64 run_delay = 0, pcount = 0;
    for (int cpu = 0; cpu < n; ++cpu) {
        run_delay += k.cpu_rq(cpu).stats.run_delay;
        pcount += k.cpu_rq(cpu).stats.pcount;
    }
    auto avg_us = [](sim_dur total_ns, u64 count) {
        return count ? static_cast<double>(total_ns) / static_cast<double>(count) / 1000.0 : 0.0;
    };
    s += fmt::format("# wakeup delays: {} IPIs to busy cpus (avg {:.2f} us), {} idle exits (avg "
                     "{:.2f} us, {} from the deep state); runqueue wait avg {:.2f} us per run "
                     "({} runs); {} wakeups enqueued by the waker on another cpu's runqueue\n",
                     w.ipis, avg_us(w.ipi_delay, w.ipis), w.idle_exits,
                     avg_us(w.idle_exit_delay, w.idle_exits), w.idle_exits_deep,
                     avg_us(static_cast<sim_dur>(run_delay), pcount), pcount,
                     w.remote_activations);
    const nohz_state& nz = k.lb().nohz;
    s += fmt::format("# nohz: {} tick stops, {} idle entries keeping the tick, {} kept ticks on "
                     "idle cpus; {} ILB kicks, {} rebalances of tickless cpus by ILBs\n",
                     nz.tick_stops, nz.idle_entries_tick_kept, nz.idle_ticks, nz.ilb_kicks,
                     nz.nohz_balances);
    // The model's own figures (the kernel has no schedstat for the balancing lock).
    const lb_state::serialize_lock& bl = k.lb().balancing;
    if (bl.balanced || bl.skipped)
        s += fmt::format("# SD_SERIALIZE levels (the periodic balance's `balancing` lock): {} "
                         "balanced, {} due but skipped while another CPU held it\n",
                         bl.balanced, bl.skipped);
    return s;
}

std::string format_feature_stats(const kernel& k)
{
    std::string s;
    if (shared_runq_active(k)) {
        const shared_runq_stats& st = k.srq().stats;
        u64 acq = 0, contended = 0;
        sim_dur wait = 0;
        for (const auto& srq : k.srq().shared_runqs)
            for (const auto& shard : srq->shards) {
                acq += shard.lock.acquisitions;
                contended += shard.lock.contended;
                wait += shard.lock.wait_total;
            }
        s += fmt::format("# SHARED_RUNQ v{}: pushes {}  removals {}  pops {} (moved {}, not moved "
                         "{}, heads not allowed {})  shard locks {} ({} contended, {:.3f} ms "
                         "waited)\n",
                         k.config().behaviour.shared_runq_version, st.pushes, st.removals, st.pops,
                         st.pulls_moved, st.pops_not_moved, st.head_not_allowed, acq, contended,
                         static_cast<double>(wait) / 1e6);
        // lockstat's holdtime-avg counts from the acquire: the lock's own line comes before
        const double per_acq = acq > 0 ? 1.0 / static_cast<double>(acq) : 0.0;
        s += fmt::format("# SHARED_RUNQ shard lock hold: avg {:.1f} ns (list nodes' lines {:.1f} "
                         "ns, {} taken from other CPUs); the lock's own line before it {:.1f} "
                         "ns; wait per contended acquisition {:.1f} ns; rq locks held "
                         "across them {:.3f} ms longer\n",
                         static_cast<double>(st.hold_ns) * per_acq,
                         static_cast<double>(st.node_line_ns) * per_acq, st.node_lines,
                         static_cast<double>(st.lock_line_ns) * per_acq,
                         contended > 0 ? static_cast<double>(wait) / static_cast<double>(contended)
                                       : 0.0,
                         static_cast<double>(st.rq_hold_ns) / 1e6);
    }
    u64 affine = 0, target = 0, coupled = 0;
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu) {
        affine += k.cpu_rq(cpu).stats.sis_short_affine;
        target += k.cpu_rq(cpu).stats.sis_short_target;
        coupled += k.cpu_rq(cpu).stats.wakee_flips_coupled;
    }
    if (k.config().has_feature(__SCHED_FEAT_SIS_SHORT) && k.feats().test(__SCHED_FEAT_SIS_SHORT))
        s += fmt::format("# SIS_SHORT: short-task placements {} in wake_affine_idle, {} in "
                         "select_idle_cpu\n",
                         affine, target);
    if (k.config().has_feature(__SCHED_FEAT_COUPLE_WAKEE_FLIPS) &&
        k.feats().test(__SCHED_FEAT_COUPLE_WAKEE_FLIPS))
        s += fmt::format("# COUPLE_WAKEE_FLIPS: flips given to wakees of heavy wakers {}\n", coupled);
    // The autogroups' tg->load_avg lines: their sums (the one group's figures when there is
    // one), then, when there are more, one line per group.
    task_group sum;
    for (const task_group* g : k.task_groups()) {
        sum.load_avg_updates += g->load_avg_updates;
        sum.load_avg_line.contended += g->load_avg_line.contended;
        sum.load_avg_line.wait_total += g->load_avg_line.wait_total;
        sum.load_avg_reads += g->load_avg_reads;
        sum.load_avg_read_misses += g->load_avg_read_misses;
        sum.load_avg_llc_hits += g->load_avg_llc_hits;
        sum.load_avg_read_wait += g->load_avg_read_wait;
        for (int i = 0; i < TG_WRITE_SITES; ++i) {
            sum.load_avg_site_calls[i] += g->load_avg_site_calls[i];
            sum.load_avg_site_writes[i] += g->load_avg_site_writes[i];
        }
        sum.load_avg_ratelimited += g->load_avg_ratelimited;
    }
    auto tg_line = [&](const task_group& tg, const std::string& name) {
        if (tg.load_avg_updates)
            s += fmt::format("# task group {}load_avg: {} updates, {} waited for the line ({:.3f} "
                             "ms); {} reads, {} fetched the line, {} a copy in their LLC ({:.3f} "
                             "ms waited)\n",
                             name, tg.load_avg_updates, tg.load_avg_line.contended,
                             static_cast<double>(tg.load_avg_line.wait_total) / 1e6,
                             tg.load_avg_reads, tg.load_avg_read_misses - tg.load_avg_llc_hits,
                             tg.load_avg_llc_hits, static_cast<double>(tg.load_avg_read_wait) / 1e6);
    };
    tg_line(sum, "");
    if (sum.load_avg_updates || sum.load_avg_ratelimited) {
        // update_tg_load_avg()'s callers: writes of calls that reached the 1/64 test.
        const auto& c = sum.load_avg_site_calls;
        const auto& w = sum.load_avg_site_writes;
        s += fmt::format("# task group load_avg writes by caller (writes/calls): attach {}/{}, "
                         "detach {}/{}, decay {}/{}, decay with removed load {}/{}, blocked "
                         "{}/{}; {} calls ratelimited\n",
                         w[TG_WRITE_ATTACH], c[TG_WRITE_ATTACH], w[TG_WRITE_DETACH],
                         c[TG_WRITE_DETACH], w[TG_WRITE_DECAY], c[TG_WRITE_DECAY],
                         w[TG_WRITE_REMOVED], c[TG_WRITE_REMOVED], w[TG_WRITE_BLOCKED],
                         c[TG_WRITE_BLOCKED], sum.load_avg_ratelimited);
    }
    if (k.task_groups().size() > 1)
        for (const task_group* g : k.task_groups())
            tg_line(*g, g->name + " ");
    return s;
}

std::string format_idle_gap(const kernel& k)
{
    const idle_gap_stats& g = k.lb().gap;
    if (!g.on)
        return "# idle-gap counters: not kept in this run (run_hooks::idle_gaps)\n";
    const sim_time now = k.now();
    idle_gap_stats::span_state m = g.machine;
    m.advance(now);
    idle_gap_stats::span_state l; // the LLCs' sums
    for (idle_gap_stats::span_state s : g.llcs) {
        s.advance(now);
        l.idle_ns += s.idle_ns;
        l.idle_waiting_ns += s.idle_waiting_ns;
        l.waiting_ns += s.waiting_ns;
        l.waiting_idle_ns += s.waiting_idle_ns;
    }
    const auto pct = [](u64 a, u64 b) {
        return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0;
    };
    const auto s_of = [](u64 ns) { return static_cast<double>(ns) / 1e9; };
    std::string s =
        "# idle gap (model's counters; nr_running == 0 is idle, nr_running - 1 waiting)\n";
    s += fmt::format("#   idle {:.3f} CPU-s: {:.1f}% of it while a task of the CPU's LLC waited, "
                     "{:.1f}% while one of the machine did\n",
                     s_of(m.idle_ns), pct(l.idle_waiting_ns, l.idle_ns),
                     pct(m.idle_waiting_ns, m.idle_ns));
    s += fmt::format("#   waiting {:.3f} task-s: {:.1f}% of it while a CPU of the task's LLC was "
                     "idle, {:.1f}% while one of the machine was\n",
                     s_of(m.waiting_ns), pct(l.waiting_idle_ns, l.waiting_ns),
                     pct(m.waiting_idle_ns, m.waiting_ns));
    s += "#   idle spells by length: count, CPU-s | of those, begun while a task of the LLC "
         "waited: count, CPU-s, avg_idle at the start >= the gate to the LLC's pass, lasted >= "
         "that gate, mean avg_idle and gate (us)\n";
    for (std::size_t b = 0; b < g.spells.size(); ++b) {
        const auto& sp = g.spells[b];
        if (!sp.count)
            continue;
        const double lo = b ? static_cast<double>(idle_gap_stats::spell_bounds[b - 1]) / 1000 : 0.0;
        const std::string range =
            b < idle_gap_stats::spell_bounds.size()
                ? fmt::format("{:g}-{:g} us", lo,
                              static_cast<double>(idle_gap_stats::spell_bounds[b]) / 1000)
                : fmt::format(">= {:g} us", lo);
        const auto mean_us = [&](u64 sum) {
            return sp.llc_waiting
                       ? static_cast<double>(sum) / static_cast<double>(sp.llc_waiting) / 1e3
                       : 0.0;
        };
        s += fmt::format("#     {:<14} {:>10} {:>10.3f} | {:>10} {:>10.3f} {:>10} {:>10} {:>8.1f} "
                         "{:>8.1f}\n",
                         range, sp.count, s_of(sp.ns), sp.llc_waiting, s_of(sp.llc_waiting_ns),
                         sp.gate_open, sp.longer_than_gate, mean_us(sp.avg_idle_sum),
                         mean_us(sp.gate_sum));
    }
    s += fmt::format("#   wakeups placed {}: {:.1f}% on a CPU with no task; wait to run avg "
                     "{:.2f} us after those ({}), {:.2f} us after the others ({})\n",
                     g.wakeups, pct(g.placed_on_idle, g.wakeups),
                     g.waits_after_idle ? static_cast<double>(g.wait_after_idle_ns) /
                                              static_cast<double>(g.waits_after_idle) / 1e3
                                        : 0.0,
                     g.waits_after_idle,
                     g.waits_after_busy ? static_cast<double>(g.wait_after_busy_ns) /
                                              static_cast<double>(g.waits_after_busy) / 1e3
                                        : 0.0,
                     g.waits_after_busy);
    std::vector<idle_gap_stats::placement_count> pl = g.placements;
    std::stable_sort(pl.begin(), pl.end(),
                     [](const auto& a, const auto& b) { return a.count > b.count; });
    for (const auto& c : pl)
        s += fmt::format(
            "#     {:>10} ({:>5.1f}%, {:>5.1f}% of them on a CPU with no task)  {}{}{}\n", c.count,
            pct(c.count, g.wakeups), pct(c.on_idle, c.count), c.select ? c.select : "?",
            c.sis ? "; select_idle_sibling: " : "", c.sis ? c.sis : "");
    const u64 sis_util_calls = g.sic_calls; // with SIS_UTIL every call reads nr_idle_scan
    s += fmt::format("#   select_idle_cpu: {} calls ({} with has_idle_core): nr_idle_scan 0 "
                     "(no scan) {}, depth ran out {}, found {}, none in the LLC {}; nr_idle_scan "
                     "read avg {:.2f}\n",
                     g.sic_calls, g.sic_idle_core, g.sic_scan_zero, g.sic_depth_out, g.sic_found,
                     g.sic_none,
                     sis_util_calls ? static_cast<double>(g.sic_nr_idle_scan_sum) /
                                          static_cast<double>(sis_util_calls)
                                    : 0.0);
    u64 value_ns = g.scan_value_ns, zero_ns = g.scan_zero_ns;
    for (std::size_t i = 0; i < g.scan_value.size(); ++i) {
        const u64 dt = now > g.scan_since[i] ? static_cast<u64>(now - g.scan_since[i]) : 0;
        value_ns += dt * static_cast<u64>(g.scan_value[i]);
        if (g.scan_value[i] == 0)
            zero_ns += dt;
    }
    const u64 llc_ns = static_cast<u64>(now) * g.scan_value.size();
    s += fmt::format(
        "#   SIS_UTIL nr_idle_scan: {} updates (sum_util / llc_weight avg {:.1f}), {} "
        "changes; time-weighted avg {:.2f} per LLC, 0 for {:.1f}% of the LLCs' time\n",
        g.scan_calls,
        g.scan_calls ? static_cast<double>(g.scan_util_sum) / static_cast<double>(g.scan_calls)
                     : 0.0,
        g.scan_updates, llc_ns ? static_cast<double>(value_ns) / static_cast<double>(llc_ns) : 0.0,
        pct(zero_ns, llc_ns));
    return s;
}

std::vector<level_schedstat> schedstat_per_level(const kernel& k)
{
    std::vector<level_schedstat> levels;
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu)
        for (const auto& sd : k.topology().cpu(cpu).domains) {
            auto it = std::find_if(levels.begin(), levels.end(),
                                   [&](const level_schedstat& l) { return l.name == sd->name; });
            if (it == levels.end()) {
                levels.push_back({sd->name, sd->span_weight, {}});
                it = std::prev(levels.end());
            }
            it->sum += sd->stats;
        }
    return levels;
}

std::string schedstat_table(const kernel& k)
{
    const std::vector<level_schedstat> levels = schedstat_per_level(k);
    static const char* idle_names[] = {"idle", "busy", "newidle"};
    std::string s = "# schedstat per domain level (sum over CPUs)\n";
    s += fmt::format("# {:<10} {:<8} {:>10} {:>10} {:>8} {:>10} {:>8} {:>6} {:>8} {:>8} {:>10}\n",
                     "level", "type", "lb_count", "balanced", "failed", "imbalance", "gained",
                     "hot", "nobusyq", "nobusyg", "fbg_calls");
    for (const auto& level : levels) {
        const std::string& name = level.name;
        const sd_schedstat& t = level.sum;
        for (int i = 0; i < CPU_MAX_IDLE_TYPES; ++i)
            s += fmt::format("# {:<10} {:<8} {:>10} {:>10} {:>8} {:>10} {:>8} {:>6} {:>8} {:>8} {:>10}\n",
                             i == 0 ? fmt::format("{}({})", name, level.span_weight) : "", idle_names[i],
                             t.lb_count[i], t.lb_balanced[i], t.lb_failed[i], t.lb_imbalance[i],
                             t.lb_gained[i], t.lb_hot_gained[i], t.lb_nobusyq[i],
                             t.lb_nobusyg[i], t.fbg_count[i]);
        s += fmt::format("# {:<10} active balance: count {} failed {} pushed {}; wakeups: remote "
                         "{} affine {}; newidle loop ended after this pass on a task {}, on a "
                         "queued wakeup {}\n",
                         "", t.alb_count, t.alb_failed, t.alb_pushed, t.ttwu_wake_remote,
                         t.ttwu_move_affine, t.newidle_stop_task, t.newidle_stop_wakeup);
    }
    return s;
}

} // namespace schedlab
