// SPDX-License-Identifier: GPL-2.0-only
#include "sched/stats.h"

#include "sched/core.h"

#include <fmt/format.h>

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
    s += fmt::format("timestamp {}\n", k.jiffies());
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

std::string schedstat_table(const kernel& k)
{
    // Sum per level name, in bottom-up order of first appearance.
    std::vector<std::string> order;
    std::map<std::string, sd_schedstat> sum;
    std::map<std::string, int> span;
    for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu)
        for (const auto& sd : k.topology().cpu(cpu).domains) {
            if (!sum.count(sd->name)) {
                order.push_back(sd->name);
                span[sd->name] = sd->span_weight;
            }
            sd_schedstat& t = sum[sd->name];
            const sd_schedstat& d = sd->stats;
            for (int i = 0; i < CPU_MAX_IDLE_TYPES; ++i) {
                t.lb_count[i] += d.lb_count[i];
                t.lb_balanced[i] += d.lb_balanced[i];
                t.lb_failed[i] += d.lb_failed[i];
                t.lb_imbalance[i] += d.lb_imbalance[i];
                t.lb_gained[i] += d.lb_gained[i];
                t.lb_hot_gained[i] += d.lb_hot_gained[i];
                t.lb_nobusyq[i] += d.lb_nobusyq[i];
                t.lb_nobusyg[i] += d.lb_nobusyg[i];
                t.fbg_count[i] += d.fbg_count[i];
            }
            t.alb_count += d.alb_count;
            t.alb_failed += d.alb_failed;
            t.alb_pushed += d.alb_pushed;
            t.ttwu_wake_remote += d.ttwu_wake_remote;
            t.ttwu_move_affine += d.ttwu_move_affine;
        }
    static const char* idle_names[] = {"idle", "busy", "newidle"};
    std::string s = "# schedstat per domain level (sum over CPUs)\n";
    s += fmt::format("# {:<10} {:<8} {:>10} {:>10} {:>8} {:>10} {:>8} {:>6} {:>8} {:>8} {:>10}\n",
                     "level", "type", "lb_count", "balanced", "failed", "imbalance", "gained",
                     "hot", "nobusyq", "nobusyg", "fbg_calls");
    for (const auto& name : order) {
        const sd_schedstat& t = sum[name];
        for (int i = 0; i < CPU_MAX_IDLE_TYPES; ++i)
            s += fmt::format("# {:<10} {:<8} {:>10} {:>10} {:>8} {:>10} {:>8} {:>6} {:>8} {:>8} {:>10}\n",
                             i == 0 ? fmt::format("{}({})", name, span[name]) : "", idle_names[i],
                             t.lb_count[i], t.lb_balanced[i], t.lb_failed[i], t.lb_imbalance[i],
                             t.lb_gained[i], t.lb_hot_gained[i], t.lb_nobusyq[i],
                             t.lb_nobusyg[i], t.fbg_count[i]);
        s += fmt::format("# {:<10} active balance: count {} failed {} pushed {}; wakeups: remote "
                         "{} affine {}\n",
                         "", t.alb_count, t.alb_failed, t.alb_pushed, t.ttwu_wake_remote,
                         t.ttwu_move_affine);
    }
    return s;
}

} // namespace schedlab
