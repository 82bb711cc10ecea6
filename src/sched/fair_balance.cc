// SPDX-License-Identifier: GPL-2.0-only
/*
 * Load balancing (kernel/sched/fair.c; what was read per function: docs/kernel-map.md):
 * sched_balance_rq() (the kernel's load_balance() before 6.10) with find_busiest_group /
 * find_busiest_queue / detach_tasks, periodic balancing per domain
 * (sched_balance_domains(), ex rebalance_domains()), NOHZ idle balancing and
 * its kicks, newly-idle balancing (sched_balance_newidle(), ex
 * newidle_balance()) with its avg_idle / max_newidle_lb_cost gates, active
 * balancing, the root-domain overload flag and SIS_UTIL's nr_idle_scan.
 *
 * Follows 6.5 (== 6.1/6.6 for most of it); 5.15's newidle gate and decay and
 * 6.6's idle-core preference in should_we_balance(), group_smt_balance and
 * sibling_imbalance() are profile behaviours (docs/kernel-map.md, lane balaudit).
 * Not modelled: 6.6's SMT-vs-non-SMT group rules (asymmetric groups),
 * misfit and asym-packing (no asymmetric capacity), NUMA balancing (fbq
 * types, migrate_degrades_locality), LBF_DST_PINNED retries on another
 * destination CPU and the sg_imbalanced() affinity flag, RT/IRQ capacity
 * pressure (check_cpu_capacity is always false).
 *
 * Time: a balancing attempt is instantaneous in simulated time; its cost
 * (lb_base + lb_scan_per_cpu per CPU read + lb_migrate_task per task; an attempt
 * should_we_balance() turns away: its rq line reads only) feeds
 * max_newidle_lb_cost and is charged to the CPU running it as overhead (the kicked CPU
 * for a nohz idle balance); the periodic and the nohz walks go on at their next level
 * when that work is done.
 */
#include "sched/fair_balance.h"

#include "sched/core.h"

#include "sim/bug.h"

#include <algorithm>
#include <limits>

namespace schedlab {

namespace {
constexpr unsigned SCHED_NR_MIGRATE_BREAK = 32;
constexpr unsigned long MAX_PINNED_INTERVAL = 512; // ms
constexpr long NUMA_IMBALANCE_MIN = 2;

const char* idle_name(cpu_idle_type t)
{
    switch (t) {
    case CPU_IDLE:
        return "idle";
    case CPU_NOT_IDLE:
        return "busy";
    case CPU_NEWLY_IDLE:
        return "newidle";
    default:
        return "?";
    }
}
} // namespace

/* ---- group classification ---- */

namespace {
// kernel: fair.c group_is_overloaded(), 6.5.
bool group_is_overloaded(unsigned imbalance_pct, const sg_lb_stats& sgs)
{
    if (sgs.sum_nr_running <= sgs.group_weight)
        return false;
    if (sgs.group_capacity * 100 < sgs.group_util * imbalance_pct)
        return true;
    if (sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100)
        return true;
    return false;
}

// kernel: fair.c group_has_capacity(), 6.5.
bool group_has_capacity(unsigned imbalance_pct, const sg_lb_stats& sgs)
{
    if (sgs.sum_nr_running < sgs.group_weight)
        return true;
    if (sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100)
        return false;
    if (sgs.group_capacity * 100 > sgs.group_util * imbalance_pct)
        return true;
    return false;
}
} // namespace

/*
 * kernel: kernel/sched/fair.c group_classify(), 6.5 (no sg_imbalanced, misfit or
 * asym packing); 6.6's group_smt_balance (fee1759e4f04) after overloaded.
 */
group_type group_classify(unsigned imbalance_pct, const sched_group& /*group*/,
                          const sg_lb_stats& sgs)
{
    if (group_is_overloaded(imbalance_pct, sgs))
        return group_overloaded;
    if (sgs.group_smt_balance)
        return group_smt_balance;
    if (!group_has_capacity(imbalance_pct, sgs))
        return group_fully_busy;
    return group_has_spare;
}

/*
 * kernel: kernel/sched/fair.c adjust_numa_imbalance(), 5.19-6.x: allow a small
 * imbalance (<= 2 tasks) while the destination would run at most imb_numa_nr
 * tasks ("if (dst_running > imb_numa_nr) return imbalance;" since cb29a5c19d2d,
 * 20220520103519.1863-4-mgorman@techsingularity.net; 5.18's allow_numa_imbalance()
 * had "<"). 5.15 (numa_imb_nr off): allow_numa_imbalance(running, weight), below a
 * quarter of the weight (the pre-5.18 lines of 2cfb7a1b031b's diff).
 */
long adjust_numa_imbalance(const kernel& k, long imbalance, long dst_running, long imb_numa_nr)
{
    const bool allow = k.config().behaviour.numa_imb_nr ? dst_running <= imb_numa_nr
                                                        : dst_running < (imb_numa_nr >> 2);
    if (!allow)
        return imbalance;
    if (imbalance <= NUMA_IMBALANCE_MIN)
        return 0;
    return imbalance;
}

// kernel: kernel/sched/fair.c get_sd_balance_interval(), 6.5. In jiffies.
unsigned long get_sd_balance_interval(const kernel& k, const sched_domain& sd, bool cpu_busy)
{
    unsigned long interval = sd.balance_interval;
    if (cpu_busy)
        interval *= sd.busy_factor;
    // msecs_to_jiffies(): round up
    const unsigned long ms_per_jiffy_num = 1000;
    interval = (interval * k.config().params.hz + ms_per_jiffy_num - 1) / ms_per_jiffy_num;
    if (cpu_busy)
        interval -= 1;
    const unsigned long max_load_balance_interval =
        static_cast<unsigned long>(k.config().params.hz) *
        static_cast<unsigned long>(k.nr_cpu_ids()) / 10;
    return std::clamp<unsigned long>(interval, 1, std::max<unsigned long>(1, max_load_balance_interval));
}

/*
 * kernel: kernel/sched/fair.c update_newidle_cost(), 6.x: a new maximum is
 * taken at once; otherwise the maximum decays by 253/256 once a second.
 * Returns true when it decayed. 5.15 decays in sched_balance_domains instead.
 */
bool update_newidle_cost(kernel& k, sched_domain& sd, u64 cost)
{
    const u64 j = jiffies(k);
    if (cost > sd.max_newidle_lb_cost) {
        sd.max_newidle_lb_cost = cost;
        sd.last_decay_max_lb_cost = j;
    } else if (j > sd.last_decay_max_lb_cost + k.config().params.hz) {
        sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
        sd.last_decay_max_lb_cost = j;
        return true;
    }
    return false;
}

/* ---- find_busiest_group ---- */

/*
 * kernel: kernel/sched/fair.c should_we_balance(), 6.5; 6.6 and tip-2023-08
 * (profile behaviour swb_idle_core_first, b1bfeab9b002) prefer the first idle
 * CPU of a fully idle core over an idle SMT sibling of a busy core; with 6.6's
 * fix only the first such sibling balances, tip-2023-08 lets the group's first
 * CPU balance as well. Newly idle CPUs always balance, unless (v6.0+,
 * swb_newidle_bails_out, 792b9f65a568) a task or a wakeup is already here;
 * 5.15.0 returns 1 for every newly-idle call.
 *
 * Its price (env.swb_cost): each idle_cpu() of another CPU reads that CPU's rq (curr and
 * idle; nr_running and ttwu_pending when those match), and 6.6's is_core_idle() reads the
 * siblings' up to the first busy one; the reader is the CPU running the code
 * (smp_processor_id(): dst_cpu, or the kicked CPU of a nohz idle balance, which reads
 * every line from where it is). model: a line by distance per CPU read, as
 * update_sg_lb_stats() is charged (the model does not track which rq lines another CPU
 * wrote since this one last read them, so a read of an unchanged rq costs a transfer
 * too); no fixed part per read: idle_cpu() is three compares, against update_sg_lb_stats()'s
 * sums (lb_scan_per_cpu). The newly-idle return reads only this CPU's own rq: free.
 */
bool should_we_balance(kernel& k, lb_env& env)
{
    if (!env.cpus->test(env.dst_cpu))
        return false;
    if (env.idle == CPU_NEWLY_IDLE) {
        if (k.config().behaviour.swb_newidle_bails_out &&
            (env.dst_rq->nr_running > 0 || env.dst_rq->ttwu_pending))
            return false;
        return true;
    }
    const sched_group& sg = env.sd->groups.front();
    cpumask& swb_cpus = k.lb().should_we_balance_tmpmask(env.dst_cpu);
    swb_cpus.assign_and(sg.balance_mask, *env.cpus);
    const int reader = k.smp_processor_id(); // dst_cpu, or the kicked CPU in a nohz walk
    auto idle_cpu = [&](int cpu) {
        env.swb_cost += k.charges().cm().line_cost(reader, cpu);
        return k.idle_cpu(cpu);
    };
    int idle_smt = -1;
    for (int cpu = swb_cpus.first(); cpu < swb_cpus.nr_cpu_ids(); cpu = swb_cpus.next(cpu + 1)) {
        if (!idle_cpu(cpu))
            continue;
        if (k.config().behaviour.swb_idle_core_first && !env.sd->has(SD_SHARE_CPUCAPACITY)) {
            bool core_idle = true; // is_core_idle(): up to the first busy sibling
            for (const int sib : k.charges().cm().smt_siblings(cpu))
                if (sib != cpu && !idle_cpu(sib)) {
                    core_idle = false;
                    break;
                }
            if (!core_idle) {
                if (idle_smt == -1)
                    idle_smt = cpu;
                swb_cpus.andnot(k.charges().cm().smt_mask(cpu));
                continue;
            }
        }
        return cpu == env.dst_cpu;
    }
    if (k.config().behaviour.swb_first_idle_smt_only) {
        if (idle_smt != -1)
            return idle_smt == env.dst_cpu;
    } else if (idle_smt == env.dst_cpu) {
        return true; // b1bfeab9b002 as merged: the group's first CPU may balance too
    }
    return sg.balance_cpu == env.dst_cpu;
}

/*
 * kernel: kernel/sched/fair.c update_sg_lb_stats(), 6.5: load, util,
 * runnable and task counts of a group's CPUs; SG_OVERLOAD when any has more
 * than one task. `info` is what the walk reads of the group (sd_lb_groups()).
 */
void update_sg_lb_stats(kernel& k, lb_env& env, sd_lb_stats& sds, const sched_group& group,
                        const sched_domain::lb_group& info, sg_lb_stats& sgs, bool& sg_overload)
{
    sgs = sg_lb_stats{};
    // The sums of an unchanged group are the ones read last time; the cost of reading
    // them is charged all the same, as update_sg_lb_stats() reads them. An idle CPU whose
    // wakeup is queued is asked idle_cpu() now: the answer depends on who looks when.
    group_lb_sums* kept = nullptr;
    if (sds.all_cpus && info.id >= 0) {
        k.lb().flush();
        kept = &k.lb().group_sums[static_cast<std::size_t>(info.id)];
        if (!kept->valid)
            sum_group_lb_stats(k, group, *kept);
    }
    if (kept) {
        const group_lb_sums& c = *kept;
#ifndef NDEBUG
        group_lb_sums fresh;
        sum_group_lb_stats(k, group, fresh);
        SIM_BUG_ON(fresh != c,
                   "stale load-balance sums of group {} (cpu{}..): a change of its CPUs was not "
                   "reported by lb_stats_changed()",
                   group.id, group.span.first());
#endif
        sgs.group_load = c.load;
        sgs.group_util = c.util;
        sgs.group_runnable = c.runnable;
        sgs.sum_h_nr_running = c.h_nr_running;
        sgs.sum_nr_running = c.nr_running;
        sgs.idle_cpus = c.idle_cpus;
        if (c.pending) { // the group's CPUs among the few with a queued wakeup
            unsigned seen = 0;
            for (const int i : k.lb().pending_cpus())
                if (group.span.test(i)) {
                    ++seen;
                    if (k.idle_cpu(i))
                        sgs.idle_cpus++;
                }
            SIM_BUG_ON(seen != c.pending, "group {} (cpu{}..): {} CPUs with a queued wakeup, {} listed",
                       info.id, group.span.first(), c.pending, seen);
        }
        sg_overload |= c.overload();
        env.cpus_scanned += static_cast<u64>(info.weight);
        env.scan_cost += info.scan_cost;
    } else {
        update_sg_lb_stats_scan(k, env, group, sgs, sg_overload);
    }
    sgs.group_capacity = info.capacity;
    sgs.group_weight = static_cast<unsigned>(info.weight);
    // 6.6 smt_balance(): an idle CPU sees another SMT core running more than one task.
    if (k.config().behaviour.smt_balance && &group != sds.local && env.idle != CPU_NOT_IDLE &&
        (info.flags & SD_SHARE_CPUCAPACITY) && sgs.sum_h_nr_running > 1)
        sgs.group_smt_balance = true;
    sgs.group_type_ = group_classify(env.sd->imbalance_pct, group, sgs);
    if (sgs.group_type_ == group_overloaded)
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
}

// One CPU's part of update_sg_lb_stats()'s sums.
group_lb_sums cpu_lb_contrib(const kernel& k, int cpu)
{
    const rq& r = k.cpu_rq(cpu);
    group_lb_sums c;
    c.valid = true;
    c.load = cpu_load(r);
    c.util = cpu_util_cfs(k, cpu);
    c.runnable = cpu_runnable(r);
    c.h_nr_running = cfs_h_nr_counted(k, r); // 6.18: h_nr_runnable
    c.nr_running = r.nr_running;
    c.nr_overloaded = r.nr_running > 1 ? 1 : 0;
    if (!r.nr_running && r.curr == r.idle) {
        if (r.ttwu_pending)
            c.pending = 1;
        else if (!r.in_schedule)
            c.idle_cpus = 1; // idle_cpu()
    }
    return c;
}

namespace {
// sums += add - sub, field by field (unsigned: exact, whatever the order).
void replace_part(group_lb_sums& sums, const group_lb_sums& sub, const group_lb_sums& add)
{
    sums.nr_overloaded += add.nr_overloaded - sub.nr_overloaded;
    sums.load += add.load - sub.load;
    sums.util += add.util - sub.util;
    sums.runnable += add.runnable - sub.runnable;
    sums.nr_running += add.nr_running - sub.nr_running;
    sums.h_nr_running += add.h_nr_running - sub.h_nr_running;
    sums.idle_cpus += add.idle_cpus - sub.idle_cpus;
    sums.pending += add.pending - sub.pending;
}
} // namespace

// update_sg_lb_stats()'s sums over a group's CPUs, all of them.
void sum_group_lb_stats(const kernel& k, const sched_group& group, group_lb_sums& c)
{
    c = group_lb_sums{};
    for_each_cpu(i, group.span)
    {
        replace_part(c, group_lb_sums{}, cpu_lb_contrib(k, i));
    }
    c.valid = true;
}

/*
 * What update_sd_lb_stats() reads of each of sd's groups when balancing for `dst_cpu`
 * (sched_domain::lb_group): the reading's cost (lb_scan_per_cpu + a cache line per CPU, by
 * distance from `reader`, the CPU running the balance: smp_processor_id(), dst_cpu but for
 * a nohz idle balance, where it is the kicked CPU), the group's id, capacity, weight and
 * flags, and whether it is dst_cpu's own. Kept per domain; rebuilt only if another CPU
 * balances with it, or another CPU reads it.
 */
const std::vector<sched_domain::lb_group>& sd_lb_groups(kernel& k, sched_domain& sd, int dst_cpu,
                                                        int reader)
{
    if (sd.lb_groups_cpu == dst_cpu && sd.lb_groups_reader == reader &&
        sd.lb_groups.size() == sd.groups.size())
        return sd.lb_groups;
    sd.lb_groups.clear();
    for (const sched_group& g : sd.groups) {
        sched_domain::lb_group info;
        for_each_cpu(i, g.span)
        {
            info.scan_cost += k.charges().params().lb_scan_per_cpu + k.charges().cm().line_cost(reader, i);
        }
        info.id = g.id;
        info.capacity = g.capacity;
        info.weight = g.group_weight;
        info.flags = g.flags;
        info.local = g.span.test(dst_cpu);
        sd.lb_groups.push_back(info);
    }
    sd.lb_groups_cpu = dst_cpu;
    sd.lb_groups_reader = reader;
    return sd.lb_groups;
}

// update_sg_lb_stats() over the group's CPUs that env.cpus still holds.
void update_sg_lb_stats_scan(kernel& k, lb_env& env, const sched_group& group, sg_lb_stats& sgs,
                             bool& sg_overload)
{
    const int reader = k.smp_processor_id(); // the CPU running the balance: see sd_lb_groups()
    for_each_cpu(i, group.span) {
        if (!env.cpus->test(i))
            continue;
        ++env.cpus_scanned;
        env.scan_cost += k.charges().params().lb_scan_per_cpu + k.charges().cm().line_cost(reader, i);
        const rq& r = k.cpu_rq(i);
        sgs.group_load += cpu_load(r);
        sgs.group_util += cpu_util_cfs(k, i);
        sgs.group_runnable += cpu_runnable(r);
        sgs.sum_h_nr_running += cfs_h_nr_counted(k, r); // 6.18: h_nr_runnable
        const unsigned nr_running = r.nr_running;
        sgs.sum_nr_running += nr_running;
        if (nr_running > 1)
            sg_overload = true;
        if (!nr_running && k.idle_cpu(i))
            sgs.idle_cpus++;
    }
}

// kernel: kernel/sched/fair.c update_sd_pick_busiest(), 6.5 (symmetric capacity); 6.6's
// group_smt_balance case (450e749707bc) by profile.
bool update_sd_pick_busiest(kernel& k, lb_env& /*env*/, sd_lb_stats& sds, const sched_group& /*sg*/,
                            const sg_lb_stats& sgs)
{
    const sg_lb_stats& busiest = sds.busiest_stat;
    if (!sgs.sum_h_nr_running)
        return false; // nothing the fair class could pull
    if (sgs.group_type_ > busiest.group_type_)
        return true;
    if (sgs.group_type_ < busiest.group_type_)
        return false;
    switch (sgs.group_type_) {
    case group_overloaded:
        if (sgs.avg_load <= busiest.avg_load)
            return false;
        break;
    case group_imbalanced:
    case group_asym_packing:
    case group_misfit_task:
        return false;
    case group_smt_balance:
        // 6.6 (450e749707bc, above): either group with an idle CPU is compared as has_spare
        if (k.config().behaviour.smt_balance_fix && (sgs.idle_cpus != 0 || busiest.idle_cpus != 0))
            return !(sgs.idle_cpus > busiest.idle_cpus ||
                     (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running));
        [[fallthrough]];
    case group_fully_busy:
        if (!k.config().behaviour.fully_busy_keeps_smt) {
            if (sgs.avg_load <= busiest.avg_load)
                return false; // before 6.5: the first of equals stays
            break;
        }
        if (sgs.avg_load < busiest.avg_load)
            return false;
        if (sgs.avg_load == busiest.avg_load && sds.busiest &&
            (sds.busiest->flags & SD_SHARE_CPUCAPACITY))
            return false; // 6.5 (5fd6d7f43958): SMT groups need more help: keep the SMT one
        break;
    case group_has_spare:
        if (sgs.idle_cpus > busiest.idle_cpus)
            return false;
        if (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running)
            return false;
        break;
    }
    return true;
}

/*
 * kernel: kernel/sched/fair.c update_idle_cpu_scan(), 6.x (SIS_UTIL): the
 * LLC-sized domain's periodic balance sets how many CPUs select_idle_cpu()
 * may scan: llc_weight * (1 - min(1, (util * pct / 100)^2)).
 */
void update_idle_cpu_scan(kernel& k, lb_env& env, unsigned long sum_util)
{
    if (!sched_feat_of(k, SIS_UTIL) || env.idle == CPU_NEWLY_IDLE)
        return;
    const cpu_sched_domains& cd = k.topology().cpu(env.dst_cpu);
    const int llc_weight = cd.sd_llc_size;
    if (env.sd->span_weight != llc_weight || !cd.sd_llc_shared)
        return;
    const u64 x = sum_util / static_cast<u64>(llc_weight);
    idle_gap_stats& gap = k.lb().gap; // counting only
    gap.add(gap.scan_calls);
    gap.add(gap.scan_util_sum, x);
    const u64 pct = env.sd->imbalance_pct;
    u64 tmp = x * x * pct * pct / (10000ULL * SCHED_CAPACITY_SCALE);
    tmp = std::min<u64>(tmp, SCHED_CAPACITY_SCALE);
    u64 y = SCHED_CAPACITY_SCALE - tmp;
    y = y * static_cast<u64>(llc_weight) / SCHED_CAPACITY_SCALE;
    if (gap.on && static_cast<int>(y) != cd.sd_llc_shared->nr_idle_scan) // counting only
        gap.nr_idle_scan_set(k.lb().llc_index(env.dst_cpu), static_cast<int>(y), k.now());
    cd.sd_llc_shared->nr_idle_scan = static_cast<int>(y);
}

/*
 * model: counting only. The gate a spell is compared with: newidle_balance()'s (6.5) tests
 * on the way to its LLC's pass, the first domain's max_newidle_lb_cost and then
 * curr_cost + sd->max_newidle_lb_cost at each level, with each level's cost taken as its
 * max_newidle_lb_cost: their sum up to sd_llc.
 */
void idle_gap_note(kernel& k, const rq& r)
{
    if (!k.lb().gap.on)
        return;
    u64 gate = 0;
    if (r.nr_running == 0) {
        const cpu_sched_domains& cd = k.topology().cpu(r.cpu);
        for (const auto& sd : cd.domains) {
            gate += sd->max_newidle_lb_cost;
            if (sd.get() == cd.sd_llc)
                break;
        }
    }
    k.lb().gap.nr_running_changed(r.cpu, r.nr_running, k.now(), r.avg_idle, gate);
}

/*
 * kernel: kernel/sched/fair.c update_sd_lb_stats(), 6.5: statistics of every
 * group, the busiest non-local one, and at the top level the root domain's
 * overload flag (rewritten only here).
 */
void update_sd_lb_stats(kernel& k, lb_env& env, sd_lb_stats& sds)
{
    bool sg_overload = false;
    unsigned long sum_util = 0;
    sds.busiest_stat.idle_cpus = std::numeric_limits<unsigned>::max();
    sds.busiest_stat.group_type_ = group_has_spare;
    sds.all_cpus = *env.cpus == env.sd->span;
    sds.group_index = 0;
    const auto& groups = sd_lb_groups(k, *env.sd, env.dst_cpu, k.smp_processor_id());
    for (const sched_group& sg : env.sd->groups) {
        const sched_domain::lb_group& info = groups[sds.group_index];
        const bool local_group = info.local; // sg.span.test(env.dst_cpu)
        sg_lb_stats tmp;
        sg_lb_stats& sgs = local_group ? sds.local_stat : tmp;
        if (local_group)
            sds.local = &sg;
        update_sg_lb_stats(k, env, sds, sg, info, sgs, sg_overload);
        if (!local_group && update_sd_pick_busiest(k, env, sds, sg, sgs)) {
            sds.busiest = &sg;
            sds.busiest_stat = sgs;
        }
        sds.total_load += sgs.group_load;
        sds.total_capacity += sgs.group_capacity;
        sum_util += sgs.group_util;
        ++sds.group_index;
    }
    // 6.5: the child domain's SD_PREFER_SIBLING
    if (env.sd->child)
        sds.prefer_sibling = env.sd->child->has(SD_PREFER_SIBLING);
    if (!env.sd->parent)
        k.rd().overload = sg_overload; // set_rd_overload()
    update_idle_cpu_scan(k, env, sum_util);
}

/*
 * kernel: kernel/sched/fair.c sibling_imbalance(), 6.6 / tip-2023-08 (7ff1693236f5, applied to
 * tip sched/core on 2023-07-13 with fee1759e4f04; read at 6.6.87, Yunbaby8/linux-6.6.87-lab,
 * and the same at 6.12.10 and 6.18.2, where `!env->idle` is CPU_NOT_IDLE): the tasks prefer
 * sibling would move. A busy CPU (CPU_NOT_IDLE) gets 0, so from 6.6 only an idle CPU spreads
 * the tasks of a group with spare capacity; groups of as many cores: the difference of their
 * task counts; else the difference of nr_running per core, rounded, and 2 for an empty local
 * group against a busiest with more than one task where that rounds to at most 1 (6.6, by
 * 450e749707bc, "sched/fair: Fix SMT4 group_smt_balance handling", tip sched/urgent
 * 2023-09-13, tip-bot Message-ID 169461068361.27769.13031358982665213840.tip-bot2@tip-bot2)
 * or to 0 (7ff1693236f5 as applied, tip-2023-08). Profiles before 6.6 (5.15-6.5): the
 * difference of the task counts, for every CPU (behaviour sibling_imbalance off).
 */
long sibling_imbalance(const kernel& k, const lb_env& env, const sd_lb_stats& sds,
                       const sg_lb_stats& busiest, const sg_lb_stats& local)
{
    const auto diff = [](long a, long b) { return a > b ? a - b : 0; }; // lsub_positive()
    if (!k.config().behaviour.sibling_imbalance)
        return diff(static_cast<long>(busiest.sum_nr_running), static_cast<long>(local.sum_nr_running));
    if (env.idle == CPU_NOT_IDLE || !busiest.sum_nr_running)
        return 0;
    const long ncores_busiest = sds.busiest->cores;
    const long ncores_local = sds.local->cores;
    if (ncores_busiest == ncores_local)
        return diff(static_cast<long>(busiest.sum_nr_running), static_cast<long>(local.sum_nr_running));
    long imbalance = diff(ncores_local * static_cast<long>(busiest.sum_nr_running),
                          ncores_busiest * static_cast<long>(local.sum_nr_running));
    imbalance = (2 * imbalance + ncores_local + ncores_busiest) / (ncores_local + ncores_busiest);
    // 7ff1693236f5 (tip-2023-08): "== 0"; 6.6's fix 450e749707bc: "<= 1"
    const bool few = k.config().behaviour.smt_balance_fix ? imbalance <= 1 : imbalance == 0;
    if (few && local.sum_nr_running == 0 && busiest.sum_nr_running > 1)
        imbalance = 2;
    return imbalance;
}

// kernel: kernel/sched/fair.c calculate_imbalance(), 6.5 (symmetric capacity); 6.6's sibling_imbalance().
void calculate_imbalance(kernel& k, lb_env& env, sd_lb_stats& sds)
{
    sg_lb_stats& local = sds.local_stat;
    sg_lb_stats& busiest = sds.busiest_stat;

    if (busiest.group_type_ == group_smt_balance) {
        // 6.6: reduce the number of tasks sharing a core's capacity.
        env.migration_type_ = migrate_task;
        env.imbalance = 1;
        return;
    }
    if (busiest.group_type_ == group_imbalanced) {
        env.migration_type_ = migrate_task;
        env.imbalance = 1;
        return;
    }
    if (local.group_type_ == group_has_spare) {
        if (busiest.group_type_ > group_fully_busy && !env.sd->has(SD_SHARE_LLC)) {
            // Fill local's spare capacity from an overloaded busiest.
            env.migration_type_ = migrate_util;
            env.imbalance = static_cast<long>(std::max(local.group_capacity, local.group_util) -
                                              local.group_util);
            if (env.idle != CPU_NOT_IDLE && env.imbalance == 0) {
                env.migration_type_ = migrate_task;
                env.imbalance = 1;
            }
            return;
        }
        if (busiest.group_weight == 1 || sds.prefer_sibling) {
            // Spread the running tasks evenly over the groups.
            env.migration_type_ = migrate_task;
            env.imbalance = sibling_imbalance(k, env, sds, busiest, local);
        } else {
            // No overload: even out the number of idle CPUs.
            env.migration_type_ = migrate_task;
            env.imbalance = std::max<long>(0, static_cast<long>(local.idle_cpus) -
                                                  static_cast<long>(busiest.idle_cpus));
        }
        if (!k.config().behaviour.numa_imb_nr) {
            // 5.15.0 (sndrzt/linux-5.15): the count is halved first, and the NUMA allowance
            // (the busiest group's count and weight, before 5.18's 2cfb7a1b031b) zeroes a
            // halved imbalance of up to NUMA_IMBALANCE_MIN; 6.1-rc7 and 6.5 halve after it.
            env.imbalance >>= 1;
            if (env.sd->has(SD_NUMA))
                env.imbalance = adjust_numa_imbalance(k, env.imbalance,
                                                      static_cast<long>(busiest.sum_nr_running),
                                                      static_cast<long>(busiest.group_weight));
            return;
        }
        if (env.sd->has(SD_NUMA))
            env.imbalance = adjust_numa_imbalance(k, env.imbalance,
                                                  static_cast<long>(local.sum_nr_running) + 1,
                                                  static_cast<long>(env.sd->imb_numa_nr));
        env.imbalance >>= 1; // number of tasks to move
        return;
    }
    if (local.group_type_ < group_overloaded) {
        local.avg_load = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity;
        if (local.avg_load >= busiest.avg_load) {
            env.imbalance = 0;
            return;
        }
        sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity;
        if (local.avg_load >= sds.avg_load) {
            env.imbalance = 0;
            return;
        }
    }
    // Both are (or will be) overloaded: move load towards the domain average.
    env.migration_type_ = migrate_load;
    const long b = (static_cast<long>(busiest.avg_load) - static_cast<long>(sds.avg_load)) *
                   static_cast<long>(busiest.group_capacity);
    const long l = (static_cast<long>(sds.avg_load) - static_cast<long>(local.avg_load)) *
                   static_cast<long>(local.group_capacity);
    env.imbalance = std::min(b, l) / static_cast<long>(SCHED_CAPACITY_SCALE);
}

/*
 * kernel: kernel/sched/fair.c find_busiest_group() (sched_balance_find_src_group()
 * from 6.10), 6.5: is there an imbalance worth fixing, and from which group.
 */
const sched_group* find_busiest_group(kernel& k, lb_env& env)
{
    env.sd->stats.fbg_count[env.idle]++;
    sd_lb_stats sds;
    update_sd_lb_stats(k, env, sds);
    env.imbalance = 0;
    if (!sds.busiest)
        return nullptr;
    sg_lb_stats& busiest = sds.busiest_stat;
    sg_lb_stats& local = sds.local_stat;

    if (busiest.group_type_ != group_imbalanced) {
        if (local.group_type_ > busiest.group_type_)
            return nullptr;
        if (local.group_type_ == group_overloaded) {
            if (local.avg_load >= busiest.avg_load)
                return nullptr;
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity;
            if (local.avg_load >= sds.avg_load)
                return nullptr;
            if (100 * busiest.avg_load <= env.sd->imbalance_pct * local.avg_load)
                return nullptr;
        }
        // 6.5: busiest's tasks > local's + 1; 6.6: sibling_imbalance() > 1 (none when busy)
        const bool force_sibling = sds.prefer_sibling && local.group_type_ == group_has_spare &&
                                   sibling_imbalance(k, env, sds, busiest, local) > 1;
        if (!force_sibling && busiest.group_type_ != group_overloaded) {
            if (env.idle == CPU_NOT_IDLE)
                return nullptr; // let an idle CPU pull instead
            if (busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1)
                return nullptr;
            if (busiest.sum_h_nr_running == 1)
                return nullptr;
        }
    }
    calculate_imbalance(k, env, sds);
    return env.imbalance ? sds.busiest : nullptr;
}

/*
 * kernel: kernel/sched/fair.c find_busiest_queue() (sched_balance_find_src_rq()
 * from 6.10), 6.5: the CPU of the busiest group to pull from, by the
 * migration type's measure.
 */
rq* find_busiest_queue(kernel& k, lb_env& env, const sched_group& group)
{
    rq* busiest = nullptr;
    unsigned long busiest_util = 0, busiest_load = 0, busiest_capacity = 1;
    unsigned busiest_nr = 0;
    for_each_cpu(i, group.span) {
        if (!env.cpus->test(i))
            continue;
        rq& r = k.cpu_rq(i);
        const unsigned nr_running = cfs_h_nr_counted(k, r); // 6.18: h_nr_runnable
        if (!nr_running)
            continue;
        const unsigned long capacity = capacity_of(k, i);
        switch (env.migration_type_) {
        case migrate_load: {
            const unsigned long load = cpu_load(r);
            // A single task heavier than the imbalance would only move the imbalance.
            if (nr_running == 1 && static_cast<long>(load) > env.imbalance)
                break;
            if (load * busiest_capacity > busiest_load * capacity) {
                busiest_load = load;
                busiest_capacity = capacity;
                busiest = &r;
            }
            break;
        }
        case migrate_util: {
            const unsigned long util =
                k.config().behaviour.runnable_boost ? cpu_util_cfs_boost(k, i) : cpu_util_cfs(k, i);
            if (nr_running <= 1)
                continue;
            if (busiest_util < util) {
                busiest_util = util;
                busiest = &r;
            }
            break;
        }
        case migrate_task:
            if (busiest_nr < nr_running) {
                busiest_nr = nr_running;
                busiest = &r;
            }
            break;
        case migrate_misfit:
            break;
        }
    }
    return busiest;
}

/* ---- moving tasks ---- */

/*
 * kernel: kernel/sched/fair.c task_hot(), 6.5: cache hot if it last started
 * running on its CPU less than migration_cost ago; never across SMT siblings;
 * buddies are hot with CACHE_HOT_BUDDY.
 */
int task_hot(kernel& k, task_struct& p, lb_env& env)
{
    if (p.policy == SCHED_IDLE)
        return 0;
    if (env.sd->has(SD_SHARE_CPUCAPACITY))
        return 0;
    const cfs_rq& cfs = task_cfs_rq(*env.src_rq, p); // cfs_rq_of(&p->se)
    if (sched_feat_of(k, CACHE_HOT_BUDDY) && env.dst_rq->nr_running &&
        (cfs.next == &p.se || cfs.last == &p.se))
        return 1;
    if (k.tunables().migration_cost == 0)
        return 0;
    const s64 delta = static_cast<s64>(env.src_rq->clock_task - p.se.exec_start);
    return delta < static_cast<s64>(k.tunables().migration_cost) ? 1 : 0;
}

/*
 * kernel: kernel/sched/fair.c can_migrate_task(), 6.5: not if pinned away
 * from dst, not the running task, and not cache hot unless balancing has
 * failed more than cache_nice_tries times (counted as lb_hot_gained). With
 * 6.12's delayed dequeue (checked against 6.13): a delayed (sleeping) task
 * moves only to balance load; it stays delayed on the destination.
 */
int can_migrate_task(kernel& k, task_struct& p, lb_env& env)
{
    if (p.se.sched_delayed && env.migration_type_ != migrate_load)
        return 0;
    if (!p.cpus_mask.test(env.dst_cpu))
        return 0;
    env.flags &= ~LBF_ALL_PINNED;
    if (env.src_rq->curr == &p)
        return 0;
    if (env.flags & LBF_ACTIVE_LB)
        return 1;
    const int tsk_cache_hot = task_hot(k, p, env);
    if (tsk_cache_hot <= 0 || env.sd->nr_balance_failed > env.sd->cache_nice_tries) {
        if (tsk_cache_hot == 1)
            env.sd->stats.lb_hot_gained[env.idle]++;
        return 1;
    }
    return 0;
}

/*
 * kernel: kernel/sched/fair.c detach_tasks(), 6.5: walk the source's
 * cfs_tasks from the least recently run, detaching what the migration type
 * allows, at most loop_max, one at a time when newly idle on
 * CONFIG_PREEMPTION kernels.
 */
int detach_tasks(kernel& k, lb_env& env)
{
    std::list<task_struct*>& tasks = env.src_rq->cfs_tasks;
    int detached = 0;
    if (env.src_rq->nr_running <= 1) {
        env.flags &= ~LBF_ALL_PINNED;
        return 0;
    }
    if (env.imbalance <= 0)
        return 0;
    // Visit each task at most once per call: rotation moves skipped tasks to the head.
    std::size_t budget = tasks.size();
    while (!tasks.empty() && budget-- > 0) {
        if (env.idle != CPU_NOT_IDLE && env.src_rq->nr_running <= 1)
            break;
        env.loop++;
        // b0defa7ae03e (6.1-6.6): past loop_max only while every task seen was pinned away
        if (env.loop > env.loop_max &&
            !(k.config().behaviour.detach_pinned_retry && (env.flags & LBF_ALL_PINNED)))
            break;
        if (env.loop > env.loop_break) {
            env.loop_break += SCHED_NR_MIGRATE_BREAK;
            env.flags |= LBF_NEED_BREAK;
            break;
        }
        task_struct& p = *tasks.back();
        bool take = can_migrate_task(k, p, env) != 0;
        if (take) {
            switch (env.migration_type_) {
            case migrate_load: {
                const unsigned long load = std::max<unsigned long>(task_h_load(k, p), 1);
                if (sched_feat_of(k, LB_MIN) && load < 16 && !env.sd->nr_balance_failed) {
                    take = false;
                    break;
                }
                const unsigned shift = std::min<unsigned>(env.sd->nr_balance_failed, 63);
                if (static_cast<long>(load >> shift) > env.imbalance) {
                    take = false;
                    break;
                }
                env.imbalance -= static_cast<long>(load);
                break;
            }
            case migrate_util: {
                const unsigned long util = task_util_est(p);
                // 6.12+: shr_bound(util, nr_balance_failed), relaxed after failures as for
                // load; 5.15-6.6 compare the task's util itself (profile util_shr_bound).
                const unsigned shift = k.config().behaviour.util_shr_bound
                                           ? std::min<unsigned>(env.sd->nr_balance_failed, 63)
                                           : 0;
                if (static_cast<long>(util >> shift) > env.imbalance) {
                    take = false;
                    break;
                }
                env.imbalance -= static_cast<long>(util);
                break;
            }
            case migrate_task:
                env.imbalance--;
                break;
            case migrate_misfit:
                take = false;
                break;
            }
        }
        if (!take) {
            // list_move(&p->se.group_node, tasks): rotate to the head
            tasks.splice(tasks.begin(), tasks, std::prev(tasks.end()));
            continue;
        }
        // detach_task(): deactivate_task(DEQUEUE_NOCLOCK) + set_task_cpu()
        k.deactivate_task(*env.src_rq, p, DEQUEUE_NOCLOCK);
        k.set_task_cpu(p, env.dst_cpu);
        env.tasks.push_back(&p);
        ++detached;
        if (k.config().behaviour.config_preemption && env.idle == CPU_NEWLY_IDLE)
            break;
        if (env.imbalance <= 0)
            break;
    }
    env.sd->stats.lb_gained[env.idle] += static_cast<u64>(detached);
    return detached;
}

/*
 * kernel: kernel/sched/fair.c attach_tasks(), 5.15-6.18: enqueue each on dst, then the
 * wakeup-preemption check. detach_tasks() list_add()s each detached task at the head of
 * env->tasks and attach_tasks() takes list_first_entry() each time, so the tasks are attached
 * in the reverse of their detach order (read at 6.5, sndrzt/linux-6.5; the same in 5.15.0 and
 * 6.1-rc7); env.tasks holds them in detach order.
 */
void attach_tasks(kernel& k, lb_env& env)
{
    rq& r = *env.dst_rq;
    k.update_rq_clock(r);
    for (auto it = env.tasks.rbegin(); it != env.tasks.rend(); ++it) {
        k.activate_task(r, **it, ENQUEUE_NOCLOCK);
        k.wakeup_preempt(r, **it, 0);
    }
    env.tasks.clear();
}

// kernel: kernel/sched/fair.c need_active_balance() + imbalanced_active_balance(), 6.5.
bool need_active_balance(lb_env& env)
{
    return env.migration_type_ == migrate_task &&
           env.sd->nr_balance_failed > env.sd->cache_nice_tries + 2;
}

namespace {
/*
 * kernel: load_balance()'s rq_lock_irqsave(busiest) .. detach_tasks() .. rq_unlock(busiest),
 * and attach_tasks()'s rq_lock(env->dst_rq), v6.5. model: each lock's hold is
 * rq_lock_hold, held on across the tg->load_avg line time of the detaches or attaches
 * under it (cpu_charges::hold_across_lines()).
 */
int detach_tasks_locked(kernel& k, lb_env& env)
{
    const int this_cpu = k.smp_processor_id(); // the CPU running the balance: see sched_balance_rq()
    k.charges().lock_and_charge(env.src_rq->lock, this_cpu, k.charges().params().rq_lock_hold);
    int detached = 0;
    k.charges().under_lock(env.src_rq->lock, this_cpu, [&] { detached = detach_tasks(k, env); });
    return detached;
}

void attach_tasks_locked(kernel& k, lb_env& env)
{
    const int this_cpu = k.smp_processor_id();
    k.charges().lock_and_charge(env.dst_rq->lock, this_cpu, k.charges().params().rq_lock_hold);
    k.charges().under_lock(env.dst_rq->lock, this_cpu, [&] { attach_tasks(k, env); });
}
} // namespace

/*
 * kernel: kernel/sched/fair.c load_balance() (sched_balance_rq() from 6.10),
 * 6.5. Returns the number of tasks pulled to this_cpu. The schedstat
 * counters follow the kernel's accounting exactly (lb_nobusyg/lb_nobusyq
 * are subsets of lb_balanced).
 *
 * kernel: an attempt should_we_balance() turns away (6.5 load_balance(), 6.18.2
 * sched_balance_rq(): sndrzt/linux-6.5 4f5cdb332210, gfunkmonk/linux-6.18.2 062668f4d006)
 * does cpumask_and() of the span, schedstat_inc(lb_count), should_we_balance()'s walk,
 * then out_balanced: the parent's sgc->imbalance test, schedstat_inc(lb_balanced),
 * nr_balance_failed = 0 and (not newly idle) the interval doubling, all on this CPU's
 * own sched_domain. model: it costs its should_we_balance() reads (env.swb_cost) and
 * nothing fixed: no lb_base (500 ns, "lb_env setup, group walk overhead", no source),
 * which prices the attempts that walk the groups; the mask copy, the counters and the
 * parent's sgc line (read-mostly; its writers are not tracked) are not charged. An
 * attempt that walks the groups pays lb_base + its scan, its should_we_balance() reads
 * inside lb_base. Its cost (last_lb_cost) is also the newly-idle domain_cost's work.
 * The rq locks it takes are taken by the CPU running it, smp_processor_id(): this_cpu,
 * except in a nohz idle balance, where it is the kicked CPU (nohz_idle_balance_step()),
 * which the caller charges with last_lb_cost too.
 */
int sched_balance_rq(kernel& k, int this_cpu, rq& this_rq, sched_domain& sd, cpu_idle_type idle,
                     int& continue_balancing)
{
    lb_env env;
    env.sd = &sd;
    env.dst_cpu = this_cpu;
    env.dst_rq = &this_rq;
    env.idle = idle;
    env.loop_break = SCHED_NR_MIGRATE_BREAK;
    // cpumask_and(cpus, sched_domain_span(sd), cpu_active_mask): all CPUs are active. The
    // balanced CPU's mask, where the kernel's is the executing CPU's (the kicked CPU's for a
    // NOHZ idle balance): no two uses of one mask overlap here, so which one does not matter.
    env.cpus = &k.lb().load_balance_mask(this_cpu);
    *env.cpus = sd.span;
    sd.stats.lb_count[idle]++;
    int ld_moved = 0;
    bool balanced = false;
    bool walked = false; // find_busiest_group() ran (lb_base + env.scan_cost)
    const char* outcome = "";

    for (;;) { // redo:
        if (!should_we_balance(k, env)) {
            continue_balancing = 0;
            balanced = true;
            outcome = "not this cpu's turn (should_we_balance)";
            break;
        }
        walked = true;
        const sched_group* group = find_busiest_group(k, env);
        if (!group) {
            sd.stats.lb_nobusyg[idle]++;
            balanced = true;
            outcome = "balanced: no busiest group";
            break;
        }
        rq* busiest = find_busiest_queue(k, env, *group);
        if (!busiest) {
            sd.stats.lb_nobusyq[idle]++;
            balanced = true;
            outcome = "balanced: no busiest queue";
            break;
        }
        SIM_BUG_ON(busiest == env.dst_rq, "cpu{}: busiest queue is the destination", this_cpu);
        sd.stats.lb_imbalance[idle] += static_cast<u64>(std::max<long>(env.imbalance, 0));
        env.src_cpu = busiest->cpu;
        env.src_rq = busiest;
        env.flags |= LBF_ALL_PINNED;
        if (busiest->nr_running > 1) {
            env.loop_max = std::min<unsigned>(k.config().params.nr_migrate, busiest->nr_running);
            for (;;) { // more_balance:
                k.update_rq_clock(*busiest);
                const int cur = detach_tasks_locked(k, env);
                if (cur) {
                    attach_tasks_locked(k, env);
                    ld_moved += cur;
                }
                if (env.flags & LBF_NEED_BREAK) {
                    env.flags &= ~LBF_NEED_BREAK;
                    // b0defa7ae03e (6.1-6.6): stop once every running task was tried
                    if (!k.config().behaviour.detach_pinned_retry || env.loop < busiest->nr_running)
                        continue;
                }
                break;
            }
            if (env.flags & LBF_ALL_PINNED) {
                env.cpus->clear(busiest->cpu);
                if (!env.cpus->is_subset_of(sd.groups.front().balance_mask)) {
                    env.loop = 0;
                    env.loop_break = SCHED_NR_MIGRATE_BREAK;
                    continue; // goto redo
                }
                // out_all_pinned: counted as balanced; the interval may grow to 512 ms
                balanced = true;
                ld_moved = 0;
                outcome = "balanced: all tasks pinned";
                break;
            }
        }
        break;
    }

    // out_one_pinned: nothing moved; a periodic balance backs off (the interval doubles, up
    // to MAX_PINNED_INTERVAL while every task seen was pinned away from this CPU).
    auto out_one_pinned = [&] {
        if (idle != CPU_NEWLY_IDLE &&
            (((env.flags & LBF_ALL_PINNED) && sd.balance_interval < MAX_PINNED_INTERVAL) ||
             sd.balance_interval < sd.max_interval))
            sd.balance_interval *= 2;
    };
    if (balanced) {
        sd.stats.lb_balanced[idle]++;
        sd.nr_balance_failed = 0;
        out_one_pinned();
        if (k.decisions().on()) // every balance attempt comes here: format only for a kept log
            k.decisions().log(k.now(), this_cpu, "load_balance",
                              fmt::format("{} {}: {}", sd.name, idle_name(idle), outcome));
        // An attempt turned away before any group walk pays should_we_balance()'s reads,
        // not lb_base (see the function's comment).
        k.lb().last_lb_cost += walked ? k.charges().params().lb_base + env.scan_cost : env.swb_cost;
        return 0;
    }

    bool active_balance = false;
    if (!ld_moved) {
        sd.stats.lb_failed[idle]++;
        if (idle != CPU_NEWLY_IDLE)
            sd.nr_balance_failed++;
        if (need_active_balance(env)) {
            rq& busiest = *env.src_rq;
            // A running task that may not run here (the idle task is pinned to its own
            // CPU) cannot be pushed: out_one_pinned, which skips the interval reset.
            if (!busiest.curr->cpus_mask.test(this_cpu)) {
                out_one_pinned();
                if (k.decisions().on())
                    k.decisions().log(k.now(), this_cpu, "load_balance",
                                      fmt::format("{} {}: failed; busiest cpu{}'s running task is "
                                                  "pinned away (out_one_pinned)",
                                                  sd.name, idle_name(idle), env.src_cpu));
                k.lb().last_lb_cost += k.charges().params().lb_base + env.scan_cost;
                return 0;
            }
            env.flags &= ~LBF_ALL_PINNED;
            if (!busiest.active_balance) {
                busiest.active_balance = true;
                busiest.push_cpu = this_cpu;
                active_balance = true;
                // stop_one_cpu_nowait(): the stopper preempts busiest's current task.
                k.sim().after(0, event_prio::ipi, &k.lb(),
                              lb_state::EV_ACTIVE_LB | static_cast<u32>(busiest.cpu));
            }
            // Since v5.13 (23fb06d9602b, LBF_ACTIVE_LB) nr_balance_failed is not forced to
            // cache_nice_tries + 1 here: it keeps counting, so need_active_balance() below
            // still holds and the interval is reset.
        }
        outcome = active_balance ? "failed: active balance started" : "failed to move a task";
    } else {
        sd.nr_balance_failed = 0;
        outcome = "pulled";
    }
    if (!active_balance || need_active_balance(env))
        sd.balance_interval = sd.min_interval;
    if (k.decisions().on())
        k.decisions().log(k.now(), this_cpu, "load_balance",
                          fmt::format("{} {}: {} {} task(s) from cpu{} (imbalance {} as {})",
                                      sd.name, idle_name(idle), outcome, ld_moved, env.src_cpu,
                                      env.imbalance, static_cast<int>(env.migration_type_)));
    k.lb().last_lb_cost += k.charges().params().lb_base + env.scan_cost +
                           static_cast<sim_dur>(ld_moved) * k.charges().params().lb_migrate_task;
    return ld_moved;
}

/*
 * kernel: kernel/sched/stop_task.c + fair.c active_load_balance_cpu_stop() and
 * detach_one_task(), 6.5: on the busiest CPU the stopper preempts the running
 * task; then the least recently run fair task that may run on push_cpu
 * (cfs_tasks from the tail, can_migrate_task() with LBF_ACTIVE_LB: cache
 * hotness ignored) moves there, which is the preempted task only when it is
 * the last one allowed. Success resets the domain's nr_balance_failed. The
 * target's idleness is not re-checked. Differs: the stopper thread itself is
 * not a task here (its two context switches are not charged).
 * kernel: the stopper takes the busiest rq's lock (rq_lock_irq()) before its checks and
 * drops it after detach_one_task(); attach_one_task() then takes the target's (rq_lock())
 * around the enqueue (6.5 sndrzt/linux-6.5 4f5cdb332210 and 6.18.2 gfunkmonk/linux-6.18.2
 * 062668f4d006 alike; no double_lock_balance() here). model: both acquisitions are charged
 * to the busiest CPU (their waits, lines and rq_lock_hold), each held across the
 * tg->load_avg line time under it (lane rqlocks; before, neither was charged). Differs: the
 * attach is done at the stopper's instant, not after the waits it was charged.
 */
void active_load_balance_cpu_stop(kernel& k, rq& busiest)
{
    const int push_cpu = busiest.push_cpu;
    busiest.active_balance = false;
    k.set_this_cpu(busiest.cpu);
    cpu_charges& ch = k.charges();
    ch.lock_and_charge(busiest.lock, busiest.cpu, ch.params().rq_lock_hold); // rq_lock_irq()
    const u64 line_before = ch.line_ns(busiest.cpu);
    // "Is there any task to move?": the kernel's nr_running <= 1 counts the stopper.
    if (rq_root_cfs(busiest).h_nr_running < 1)
        return;
    sched_domain* sd = nullptr;
    for (auto& tmp : k.topology().cpu(push_cpu).domains)
        if (tmp->span.test(busiest.cpu)) {
            sd = tmp.get();
            break;
        }
    if (!sd)
        return;
    sd->stats.alb_count++;
    // The stopper preempts the running task: it is queued like the others now.
    task_struct* curr = busiest.curr->is_idle_task() ? nullptr : busiest.curr;
    if (curr) {
        k.stop_burst(busiest);
        k.update_rq_clock(busiest);
        update_curr(k, task_cfs_rq(busiest, *curr));
    }
    lb_env env;
    env.sd = sd;
    env.dst_cpu = push_cpu;
    env.dst_rq = &k.cpu_rq(push_cpu);
    env.src_cpu = busiest.cpu;
    env.src_rq = &busiest;
    env.idle = CPU_IDLE;
    env.flags = LBF_ACTIVE_LB;
    task_struct* p = nullptr;
    for (auto it = busiest.cfs_tasks.rbegin(); it != busiest.cfs_tasks.rend(); ++it) {
        task_struct& cand = **it;
        if (&cand == curr) {
            // can_migrate_task() for the preempted task: no longer on the CPU.
            if (cand.cpus_mask.test(push_cpu) &&
                !(cand.se.sched_delayed && env.migration_type_ != migrate_load)) {
                p = &cand;
                break;
            }
            continue;
        }
        if (can_migrate_task(k, cand, env)) {
            p = &cand;
            break;
        }
    }
    if (!p) {
        sd->stats.alb_failed++;
        if (curr) {
            busiest.need_resched = true;
            k.__schedule(busiest, true);
        }
        return;
    }
    if (p == curr)
        put_prev_entity(k, task_cfs_rq(busiest, *p), p->se);
    // detach_task()
    k.deactivate_task(busiest, *p, DEQUEUE_NOCLOCK);
    k.set_task_cpu(*p, push_cpu);
    sd->stats.lb_gained[CPU_IDLE]++;
    sd->stats.alb_pushed++;
    sd->nr_balance_failed = 0; // "Active balancing done, reset the failure counter."
    ch.hold_across_lines(busiest.lock, busiest.cpu, line_before); // rq_unlock(busiest_rq)
    // attach_one_task(): the target's lock, enqueue, then the wakeup-preemption check.
    rq& dst = k.cpu_rq(push_cpu);
    ch.lock_and_charge(dst.lock, busiest.cpu, ch.params().rq_lock_hold);
    ch.under_lock(dst.lock, busiest.cpu, [&] {
        k.update_rq_clock(dst);
        k.activate_task(dst, *p, ENQUEUE_NOCLOCK);
        k.wakeup_preempt(dst, *p, 0);
    });
    if (k.decisions().on())
        k.decisions().log(k.now(), busiest.cpu, "active_balance",
                          fmt::format("pushed pid {} to cpu{}", p->pid, push_cpu));
    // The stopper's CPU schedules again when it finishes.
    if (curr) {
        busiest.need_resched = true;
        k.__schedule(busiest, true);
    }
}

/*
 * kernel: kernel/sched/fair.c rebalance_domains() (sched_balance_domains()
 * from 6.10), 6.x; the decay of max_newidle_lb_cost by version (newidle_ops). For each domain whose
 * interval has passed, balance; then record when to come back. `idle` (and with it `busy`,
 * which picks each interval) is read again only after a load_balance() that moved tasks,
 * as the kernel does ("the LBF_DST_PINNED logic could have changed env->dst_cpu"); a CPU
 * that got work otherwise keeps balancing as CPU_IDLE, and should_we_balance() (which
 * reads idle_cpu() of every CPU, this one included) then clears continue_balancing when
 * another CPU of the group is idle, which ends the walk (decay-only visits aside).
 * At an SD_SERIALIZE (NUMA) level the walk first tries the kernel-wide `balancing` lock
 * (lb_state::serialize_lock; read in 5.15.0, 6.1.0, 6.5.0, 6.6.87, 6.12.19 and 6.18.2, all
 * with the trylock before the interval check); held by another CPU, the level is skipped
 * (`goto out`): not balanced, its last_balance kept, and a due level puts next_balance in
 * the past, so the CPU's next tick raises SCHED_SOFTIRQ again. The softirq holds the lock
 * until the level's work is done (sched_balance_softirq_level()), and so does the kicked
 * CPU's nohz_idle_balance() walk for a level it balances on another CPU's behalf
 * (nohz_idle_balance_step()).
 * Differs: 6.18.10 takes it inside sched_balance_rq(), after should_we_balance() and only
 * for a due level, and a failure counts as balanced (last_balance = jiffies): Tim Chen's
 * "Skip sched_balance_running cmpxchg when balance is not due" (tip 2265c5d4deef), with
 * Peter Zijlstra's "Have SD_SERIALIZE affect newidle balancing" (tip 22c929d23ebf); not
 * modelled (the 6.18 profile is 6.18.2's code here).
 *
 * In three parts so that the softirq, and the nohz idle balance walk, can run one level
 * per event:
 * sched_balance_domains_begin() sets the locals, sched_balance_domains_step() visits
 * domains up to and including the next one that balances (true when the walk is over),
 * sched_balance_domains_end() stores the result.
 */
void sched_balance_domains_begin(kernel& k, rq& r, cpu_idle_type idle, lb_state::balance_walk& w)
{
    w.level = 0;
    w.continue_balancing = 1;
    w.idle = idle;
    w.busy = idle != CPU_IDLE && !sched_idle_cpu(k, r.cpu);
    w.next_balance = jiffies(k) + 60 * k.config().params.hz;
    w.update_next_balance = false;
    w.need_decay = false;
    w.max_cost = 0;
    w.holds_balancing = false;
}

bool sched_balance_domains_step(kernel& k, rq& r, lb_state::balance_walk& w)
{
    const int cpu = r.cpu;
    auto& domains = k.topology().cpu(cpu).domains;
    while (w.level < domains.size()) {
        sched_domain& sd = *domains[w.level++];
        k.lb().newidle().decay(k, sd, w.need_decay);
        w.max_cost += sd.max_newidle_lb_cost;
        if (!w.continue_balancing) {
            if (w.need_decay)
                continue;
            return true; // break
        }
        unsigned long interval = get_sd_balance_interval(k, sd, w.busy);
        bool balanced = false;
        const bool due = jiffies(k) >= sd.last_balance + interval;
        // The trylock comes before the interval check; on failure `goto out`: no balance,
        // last_balance and interval as they were, so a due level leaves next_balance in
        // the past and the next tick raises SCHED_SOFTIRQ again.
        const bool need_serialize = sd.has(SD_SERIALIZE);
        lb_state::serialize_lock& balancing = k.lb().balancing;
        if (need_serialize && balancing.held(k.now())) {
            if (due)
                balancing.skipped++;
        } else if (due) {
            if (sched_balance_rq(k, cpu, r, sd, w.idle, w.continue_balancing)) {
                w.idle = k.idle_cpu(cpu) ? CPU_IDLE : CPU_NOT_IDLE;
                w.busy = w.idle != CPU_IDLE && !sched_idle_cpu(k, cpu);
            }
            sd.last_balance = jiffies(k);
            interval = get_sd_balance_interval(k, sd, w.busy);
            balanced = true;
            if (need_serialize) {
                balancing.balanced++;
                w.holds_balancing = true; // the softirq holds it until this work is done
            }
        }
        // out:
        if (w.next_balance > sd.last_balance + interval) {
            w.next_balance = sd.last_balance + interval;
            w.update_next_balance = true;
        }
        if (balanced)
            return w.level >= domains.size();
    }
    return true;
}

void sched_balance_domains_end(kernel& k, rq& r, lb_state::balance_walk& w)
{
    if (w.need_decay)
        r.max_idle_balance_cost = std::max<u64>(k.tunables().migration_cost, w.max_cost);
    if (w.update_next_balance)
        r.next_balance = w.next_balance;
}

namespace {
/*
 * The domain loop of newidle_balance() from this_rq.newidle.next on. With `defer`
 * it stops after the first domain it balances, leaving the rest to
 * sched_balance_newidle_resume() (this_rq.newidle.active). Returns pulled_task.
 *
 * The kernel measures each domain's cost as elapsed time: t0 = sched_clock_cpu()
 * before update_blocked_averages() (charged to the first domain, 5.16+) and t1 after
 * each load_balance(). The model's elapsed time is its balancing work (lb_base,
 * scans, moves) plus every other charge to this CPU meanwhile: rq-lock and
 * tg->load_avg waits and transfers, remote rq lines (cpu_charge_state::charged_ns).
 * `pending_elapsed` is what update_blocked_averages() took (its rq lock's wait, line
 * and hold, its tg->load_avg line time), counted into the first domain balanced.
 * 5.15 takes t0 per domain, after update_blocked_averages() (!blocked_averages_in_cost).
 */
int newidle_domain_loop(kernel& k, rq& this_rq, u64 pending_elapsed, bool defer)
{
    const int this_cpu = this_rq.cpu;
    const newidle_ops& nl = k.lb().newidle();
    rq::newidle_walk& w = this_rq.newidle;
    auto update_next = [&](const sched_domain& sd) {
        const u64 next = sd.last_balance + get_sd_balance_interval(k, sd, false);
        if (w.next_balance > next)
            w.next_balance = next;
    };
    const cpu_charge_state& charged = k.charges().cpu(this_cpu);
    u64 t0 = charged.charged_ns;
    u64 lb_work = 0; // the balancing work itself, charged below as ACCT_BALANCE
    int pulled_task = 0;
    bool balanced_one = false;
    w.active = false;
    const auto& domains = k.topology().cpu(this_cpu).domains;
    while (w.next < domains.size()) {
        if (defer && balanced_one) {
            w.active = true; // the next domain waits for this one's pass (resume)
            break;
        }
        sched_domain& sd = *domains[w.next++];
        int continue_balancing = 1;
        if (std::any_of(k.patches().newidle_skip_domain.begin(),
                        k.patches().newidle_skip_domain.end(),
                        [&](const auto hook) { return hook(k, sd); }))
            continue; // SHARED_RUNQ v4: the shared queue covers the LLC
        const bool too_costly = this_rq.avg_idle < w.curr_cost + sd.max_newidle_lb_cost;
        if (nl.next_balance_before_balancing || too_costly)
            update_next(sd);
        if (too_costly) {
            if (k.decisions().on()) // format only for a kept log
                k.decisions().log(k.now(), this_cpu, "newidle_balance",
                                  fmt::format("{} too costly: avg_idle={} < curr_cost={} + "
                                              "max_newidle_lb_cost={}",
                                              sd.name, this_rq.avg_idle, w.curr_cost,
                                              sd.max_newidle_lb_cost));
            break;
        }
        if (sd.has(SD_BALANCE_NEWIDLE)) {
            u32 weight = 1;
            for (const auto hook : k.patches().newidle_domain) // NI_RANDOM: by success rate
                weight = hook(k, this_rq, sd);
            if (weight == 0)
                continue;
            k.lb().last_lb_cost = 0;
            pulled_task =
                sched_balance_rq(k, this_cpu, this_rq, sd, CPU_NEWLY_IDLE, continue_balancing);
            for (const auto hook : k.patches().newidle_balanced) // NI_RANDOM: the success rate
                hook(k, sd, pulled_task ? weight : 0);
            const u64 t1 = charged.charged_ns;
            const u64 work = static_cast<u64>(k.lb().last_lb_cost);
            const u64 domain_cost = work + pending_elapsed + (t1 - t0);
            t0 = t1;
            lb_work += work;
            pending_elapsed = 0;
            nl.record_cost(k, sd, domain_cost);
            if (k.decisions().on()) // the kernel's domain_cost, as update_newidle_cost() sees it
                k.decisions().log(k.now(), this_cpu, "newidle_balance",
                                  fmt::format("{} domain_cost={} (balancing {}, waits {}) "
                                              "max_newidle_lb_cost={}",
                                              sd.name, domain_cost, work, domain_cost - work,
                                              sd.max_newidle_lb_cost));
            w.curr_cost += domain_cost;
            balanced_one = true;
        }
        if (!nl.next_balance_before_balancing)
            update_next(sd);
        // v6.10+ (c829d6818b60): a task or wakeup here ends the loop at the next domain's
        // should_we_balance() bail-out; before, right after this domain's pass
        const bool stop = k.config().behaviour.newidle_break_on_swb
                              ? !continue_balancing
                              : this_rq.nr_running > 0 || this_rq.ttwu_pending;
        if (!pulled_task && stop && !k.config().behaviour.newidle_break_on_swb)
            ++(this_rq.nr_running > 0 ? sd.stats.newidle_stop_task : sd.stats.newidle_stop_wakeup);
        if (pulled_task || stop)
            break;
    }
    if (w.curr_cost > this_rq.max_idle_balance_cost)
        this_rq.max_idle_balance_cost = w.curr_cost;
    if (this_rq.next_balance > w.next_balance)
        this_rq.next_balance = w.next_balance;
    k.charges().charge_cpu(this_rq, static_cast<sim_dur>(lb_work), ACCT_BALANCE);
    return pulled_task;
}
} // namespace

namespace {
void update_blocked_averages_locked(kernel& k, int cpu);

/*
 * kernel: newidle_balance()'s raw_spin_rq_lock(this_rq) after its domain loop (5.15.0
 * sndrzt/linux-5.15 75c6ad16ec64, 6.5 sndrzt/linux-6.5 4f5cdb332210, 6.18.2's
 * sched_balance_newidle() gfunkmonk/linux-6.18.2 062668f4d006 alike), after the last t1,
 * so in no domain's cost nor in curr_cost; the pick goes on under it. model: this CPU
 * takes its lock again (lock_and_charge()): its wait for a waker or balancer that took it
 * while the loop ran, the lock's line from that holder and rq_lock_hold, the model's price
 * of a short path under an rq lock (here the rest of the pick). Lane rqlocks; before, the
 * relock was free and the pick's one hold was __schedule()'s.
 */
void newidle_relock(kernel& k, rq& this_rq)
{
    k.charges().lock_and_charge(this_rq.lock, this_rq.cpu, k.charges().params().rq_lock_hold);
}
} // namespace

/*
 * kernel: kernel/sched/fair.c newidle_balance() (sched_balance_newidle() from
 * 6.10), 6.1-6.6, and 5.15's gate and cost accounting (newidle_ops): when a CPU is about to go
 * idle, pull from the domains bottom-up while the expected idle time (avg_idle) exceeds the cost
 * spent so far plus the domain's max_newidle_lb_cost; nothing at all unless the root domain is
 * overloaded. After each domain's pass the loop stops if a task was pulled or this rq has a task or
 * a queued wakeup
 * (`pulled_task || nr_running > 0 || ttwu_pending`, read at v6.5, sndrzt/linux-6.5
 * 4f5cdb332210, and 6.6.87; the ttwu_pending term is e5e678e4fea2, v5.13, and is in 5.15.0).
 * From c829d6818b60 (v6.10; read in 6.12.19 and 6.18.2) it breaks on `pulled_task ||
 * !continue_balancing` (kernel_behaviour::newidle_break_on_swb): the loop goes on to the
 * next domain (update_next_balance(), the avg_idle gate, NI_RANDOM's die), whose
 * sched_balance_rq() counts lb_count, bails out at should_we_balance() (792b9f65a568),
 * clears continue_balancing and takes out_balanced (lb_balanced, nr_balance_failed = 0),
 * and that domain's cost is recorded. Patch sets hook in where their
 * patches edit this function (patchset.h): SHARED_RUNQ v3 pulls on entry and
 * gates on the domain above the LLC, v4 pulls once the root domain is
 * overloaded and skips the SMT/LLC domains (fair_shared_runq.cc); NI_RANDOM
 * tries each domain with its recent success rate (fair_ni_random.cc). Past the gate it
 * drops this rq's lock and update_blocked_averages() takes it again
 * (update_blocked_averages_locked(); 5.15.0, 6.1.0, 6.5, 6.6.87, 6.12.y and 6.18.2 alike;
 * lane faithfix), and after the loop raw_spin_rq_lock(this_rq) takes it once more
 * (newidle_relock(), lane rqlocks).
 * model: the whole function runs in the pick at one instant, but when prev is a
 * task (the CPU is going idle from it) only the first domain's pass does: the
 * next domain is considered once this CPU has done the work charged before it
 * (sched_balance_newidle_resume(), called when rq::in_schedule ends), so a wakeup
 * queued for this CPU during a pass ends the loop as in the kernel. Before, every
 * pass ran at once and such a wakee waited for all of them. A wake list's IPI (and the
 * tick, an hrtimer) that comes meanwhile is taken after the switch to idle, as in the
 * kernel, whose __schedule() has interrupts off throughout: the loop breaks on
 * ttwu_pending, returns 0 with idle_stamp kept, and the avg_idle sample runs to the IPI's
 * enqueue (kernel::irqs_on_after_schedule(), lane nibirq). The end of the
 * function (max_idle_balance_cost, next_balance) is applied after each pass; the
 * kernel applies it once, with the same result.
 */
int sched_balance_newidle(kernel& k, rq& this_rq)
{
    const int this_cpu = this_rq.cpu;
    const newidle_ops& nl = k.lb().newidle();
    this_rq.newidle = {};
    if (this_rq.ttwu_pending)
        return 0;
    for (const auto hook : k.patches().newidle_enter) // SHARED_RUNQ v3: pull first
        if (const int pulled = hook(k, this_rq))
            return pulled;
    this_rq.idle_stamp = this_rq.clock; // measure the balancing itself as idle time
    this_rq.newidle.next_balance = jiffies(k) + k.config().params.hz;
    int pulled_task = 0;
    sched_domain* base = k.topology().cpu(this_cpu).sd();
    sched_domain* gate_sd = base;
    for (const auto hook : k.patches().newidle_gate_domain) // SHARED_RUNQ v3: above the LLC
        gate_sd = hook(k, this_cpu, gate_sd);

    const newidle_gate gate = nl.gate(k, this_rq, gate_sd);
    if (gate == newidle_gate::abort)
        return 0;
    if (gate == newidle_gate::pulled) {
        pulled_task = 1; // a patch set pulled a task: the common epilogue
    } else if (gate == newidle_gate::closed || !base) {
        if (gate_sd) {
            const u64 next = gate_sd->last_balance + get_sd_balance_interval(k, *gate_sd, false);
            if (this_rq.newidle.next_balance > next)
                this_rq.newidle.next_balance = next;
        }
        if (k.decisions().on()) // every idle entry can come here: format only for a kept log
            k.decisions().log(
                k.now(), this_cpu, "newidle_balance",
                fmt::format("gate closed: overload={} avg_idle={} gate {} max_newidle_lb_cost={}",
                            k.rd().overload, this_rq.avg_idle, gate_sd ? gate_sd->name : "-",
                            gate_sd ? gate_sd->max_newidle_lb_cost : 0));
    } else {
        if (k.decisions().on())
            k.decisions().log(k.now(), this_cpu, "newidle_balance",
                              fmt::format("gate open: avg_idle={} gate {} max_newidle_lb_cost={}",
                                          this_rq.avg_idle, gate_sd ? gate_sd->name : "-",
                                          gate_sd ? gate_sd->max_newidle_lb_cost : 0));
        // raw_spin_rq_unlock(this_rq); t0 before update_blocked_averages() (5.16+), or
        // after it (5.15): see the loop. update_blocked_averages() takes this rq's lock
        // again itself (rq_lock_irqsave()): its wait, the lock's line and its hold are
        // elapsed time, in the first domain's cost from 5.16.
        const u64 t_before = k.charges().cpu(this_cpu).charged_ns;
        update_blocked_averages_locked(k, this_cpu);
        const u64 pending_elapsed = nl.blocked_averages_in_cost
                                        ? k.charges().cpu(this_cpu).charged_ns - t_before
                                        : 0;
        const bool defer = !this_rq.curr->is_idle_task();
        pulled_task = newidle_domain_loop(k, this_rq, pending_elapsed, defer);
        if (!this_rq.newidle.active) // the loop is over: raw_spin_rq_lock(this_rq)
            newidle_relock(k, this_rq);
    }
    if (rq_root_cfs(this_rq).h_nr_running && !pulled_task)
        pulled_task = 1;
    if (this_rq.next_balance > this_rq.newidle.next_balance)
        this_rq.next_balance = this_rq.newidle.next_balance;
    if (pulled_task) {
        this_rq.idle_stamp = 0;
        this_rq.newidle.active = false;
    }
    return pulled_task;
}

/*
 * kernel: newidle_balance()'s domain loop, continued (see sched_balance_newidle()):
 * this CPU has done the work before the next domain. Stop if a task or a wakeup is
 * here (the loop's break; from v6.10 that next domain bails out at should_we_balance()
 * first), else balance the next domain (its avg_idle gate first). Once the loop is over
 * this rq's lock is taken again (newidle_relock()). Returns true if it charged another
 * pass or the relock, whose end calls this again. model: the wakee's reschedule
 * waits for this CPU's owed work (EV_RESCHED) and this comes first at that instant, so
 * the pick follows the loop as in the kernel.
 */
bool sched_balance_newidle_resume(kernel& k, rq& this_rq)
{
    rq::newidle_walk& w = this_rq.newidle;
    if (!w.active)
        return false;
    w.active = false;
    if (!this_rq.curr->is_idle_task()) // another __schedule() took over, with its own lock
        return false;
    k.set_this_cpu(this_rq.cpu);
    // A wake list's IPI that came during the passes waits for interrupts to be enabled
    // (kernel::irqs_on_after_schedule()), so ttwu_pending is what stops the loop. One whose
    // handler began before __schedule() and cleared ttwu_pending early (5.15, 6.1) but has
    // not enqueued yet (ttwu_activating) counts as pending: in the kernel that handler
    // would have finished first, with interrupts off.
    // Up to 6.6 the loop broke after the last pass; from 6.10 the next domain bails out.
    const bool stop = !this_rq.ttwu_activating.empty() ||
                      ((this_rq.nr_running > 0 || this_rq.ttwu_pending) &&
                       !k.config().behaviour.newidle_break_on_swb);
    if (!stop) {
        k.update_rq_clock(this_rq);
        if (newidle_domain_loop(k, this_rq, 0, true))
            this_rq.idle_stamp = 0;
    } else if (!k.config().behaviour.newidle_break_on_swb && w.next > 0) { // counting only
        sd_schedstat& st = k.topology().cpu(this_rq.cpu).domains[w.next - 1]->stats;
        ++(this_rq.nr_running > 0 ? st.newidle_stop_task : st.newidle_stop_wakeup);
    }
    if (!w.active)
        newidle_relock(k, this_rq);
    return w.active || k.charges().owed_until(this_rq) > k.now();
}

/* ---- triggers: the tick, NOHZ idle balancing ---- */

// kernel: kernel/sched/fair.c trigger_load_balance(), 6.5: raise SCHED_SOFTIRQ when due; maybe kick an ILB.
void trigger_load_balance(kernel& k, rq& r)
{
    if (jiffies(k) >= r.next_balance)
        k.sim().after(0, event_prio::softirq, &k.lb(),
                      lb_state::EV_SOFTIRQ | static_cast<u32>(r.cpu));
    nohz_balancer_kick(k, r);
}

namespace {
/*
 * kernel: update_blocked_averages() (sched_balance_update_blocked_averages() from 6.10),
 * 6.5 and 5.15.0, 6.1.0, 6.6.87, 6.12.y, 6.18.2 alike: it takes `cpu`'s rq lock
 * (rq_lock_irqsave()) around its updates, on the CPU running it. model: that CPU
 * (smp_processor_id(): the CPU itself in its softirq, the kicked CPU in a nohz walk) takes
 * the lock (its wait, the lock's line from its last holder by distance, and rq_lock_hold,
 * the model's price of a short path under an rq lock) and holds it across the tg->load_avg
 * line time of the writes under it (update_tg_load_avg(), charged to it already). Lane
 * nohzcost; before, the update was free. The newly-idle balance calls it too (lane
 * faithfix): newidle_balance() drops this rq's lock (raw_spin_rq_unlock()), reads t0 and
 * calls update_blocked_averages(this_cpu), which takes the lock again, so the CPU waits
 * for a waker holding it, and from 5.16 the first domain's cost includes the wait, the
 * lock's line and the hold (9e9af819db5d). Before, the model took no lock there and priced
 * the update as lb_scan_per_cpu (40 ns, no source). Differs: the CPU's own hold from
 * __schedule() is not released first (a CPU never waits for its own hold), so a waker
 * that would slip in between waits behind both holds instead.
 */
void update_blocked_averages_locked(kernel& k, int cpu)
{
    const int this_cpu = k.smp_processor_id();
    rq& r = k.cpu_rq(cpu);
    k.charges().lock_and_charge(r.lock, this_cpu, k.charges().params().rq_lock_hold);
    k.charges().under_lock(r.lock, this_cpu, [&] { update_blocked_averages(k, cpu); });
}

/*
 * kernel: kernel/sched/fair.c update_nohz_stats(), 6.5 (sndrzt/linux-6.5 4f5cdb332210;
 * the same in 5.15.0, 6.1.0, 6.6.87, 6.12.y and 6.18.2): a CPU's blocked averages are
 * updated by the walk only if it has blocked load (rq->has_blocked_load, set at each tick
 * stop, cleared once nothing is left to decay) and not yet in this jiffy
 * (rq->last_blocked_load_update_tick). Differs: its result, nohz.has_blocked for the next
 * NOHZ_STATS_KICK, is not kept (no stats-only kicks, nohz.h).
 */
void update_nohz_stats(kernel& k, rq& r)
{
    if (!r.has_blocked_load)
        return;
    if (!k.lb().nohz.idle_cpus_mask.test(r.cpu))
        return;
    if (jiffies(k) <= r.last_blocked_load_update_tick) // !time_after(jiffies, ...)
        return;
    update_blocked_averages_locked(k, r.cpu);
}

bool nohz_idle_balance_begin(kernel& k, rq& ilb_rq);

/*
 * kernel: __do_softirq() runs SCHED_SOFTIRQ again when it was raised during the run; then
 * run_rebalance_domains() does the nohz idle balance if a kick's IPI set its flags
 * (nohz_csd_func(): rq->nohz_idle_balance), else the CPU's own periodic balance. model: at
 * the end of either walk on r's CPU.
 */
void sched_balance_softirq_again(kernel& k, rq& r)
{
    lb_state::balance_walk& w = k.lb().softirq_walk(r.cpu);
    lb_state::nohz_walk& nw = k.lb().ilb_walk(r.cpu);
    if (nw.kicked) {
        nw.kicked = false;
        // The same run: nohz_idle_balance() returning true ends it, whatever raised it.
        const bool raised = w.raised;
        w.raised = false;
        if (nohz_idle_balance_begin(k, r))
            return;
        w.raised = raised;
    }
    if (w.raised) {
        w.raised = false;
        sched_balance_softirq(k, r);
    }
}
} // namespace

/*
 * kernel: kernel/sched/fair.c run_rebalance_domains(), 6.5 (the SCHED_SOFTIRQ handler),
 * and kernel/softirq.c __do_softirq(): the handler runs to its end whatever arrives
 * meanwhile (need_resched() only stops __do_softirq() restarting for softirqs raised
 * again), and a task woken onto this CPU meanwhile (its enqueue, or a wakelist IPI's
 * sched_ttwu_pending(), is a hardirq taken inside the softirq) is picked after it. model:
 * each level's load_balance() runs when the previous level's work is done (the CPU's owed
 * work, cpu_charges::owed_until()), its cost charged at once; the next level, or the end,
 * is an EV_SOFTIRQ_LEVEL event then, ordered before a deferred __schedule() of that
 * instant. The tick raising SCHED_SOFTIRQ again during a run makes one more run after it.
 * Differs: when the CPU was running a task, a wakeup-preemption may switch tasks while
 * the levels go on (the kernel switches after the softirq).
 */
void sched_balance_softirq(kernel& k, rq& r)
{
    lb_state::balance_walk& w = k.lb().softirq_walk(r.cpu);
    if (w.active || k.lb().ilb_walk(r.cpu).active) {
        w.raised = true;
        return;
    }
    k.set_this_cpu(r.cpu);
    const cpu_idle_type idle = r.idle_balance ? CPU_IDLE : CPU_NOT_IDLE;
    update_blocked_averages_locked(k, r.cpu); // charged to this CPU (lane nohzcost)
    sched_balance_domains_begin(k, r, idle, w);
    w.active = true;
    sched_balance_softirq_level(k, r);
}

// model: the softirq's walk goes on at its next level (see sched_balance_softirq()).
void sched_balance_softirq_level(kernel& k, rq& r)
{
    lb_state::balance_walk& w = k.lb().softirq_walk(r.cpu);
    k.set_this_cpu(r.cpu);
    k.lb().last_lb_cost = 0;
    const bool done = sched_balance_domains_step(k, r, w);
    // This level's work delays whatever runs on this CPU, and the next level.
    k.charges().charge_cpu(r, k.lb().last_lb_cost, ACCT_BALANCE);
    k.lb().last_lb_cost = 0;
    if (w.holds_balancing) { // spin_unlock(&balancing) when the level's work is done
        k.lb().balancing.until = k.charges().owed_until(r);
        w.holds_balancing = false;
    }
    if (!done) {
        k.sim().at(k.charges().owed_until(r), event_prio::softirq_level, &k.lb(),
                   lb_state::EV_SOFTIRQ_LEVEL | static_cast<u32>(r.cpu));
        return;
    }
    sched_balance_domains_end(k, r, w);
    w.active = false;
    sched_balance_softirq_again(k, r);
}

/*
 * kernel: kernel/sched/fair.c nohz_balance_enter_idle(), 6.5: a CPU whose
 * tick stops joins nohz.idle_cpus_mask and stops counting as busy in its LLC.
 */
void nohz_balance_enter_idle(kernel& k, rq& r)
{
    r.has_blocked_load = true; // before the nohz_tick_stopped test, as the kernel's
    if (!k.lb().nohz.stop_tick(r.cpu))
        return;
    k.lb().nohz.tick_stops++;
    if (sched_domain_shared* sds = k.topology().cpu(r.cpu).sd_llc_shared)
        sds->nr_busy_cpus--;
}

// kernel: kernel/sched/fair.c nohz_balance_exit_idle(), 6.5: at the first busy tick after idling.
void nohz_balance_exit_idle(kernel& k, rq& r)
{
    if (!k.lb().nohz.restart_tick(r.cpu))
        return;
    if (sched_domain_shared* sds = k.topology().cpu(r.cpu).sd_llc_shared)
        sds->nr_busy_cpus++;
}

/*
 * kernel: kernel/sched/fair.c nohz_balancer_kick(), 6.5: from a busy tick,
 * kick an idle CPU to balance on behalf of all tickless idle CPUs when this
 * rq has >= 2 tasks or its LLC has more than one busy CPU (no asym or
 * capacity-pressure reasons here, and no blocked-load-only kicks).
 */
void nohz_balancer_kick(kernel& k, rq& r)
{
    if (r.idle_balance)
        return;
    nohz_balance_exit_idle(k, r);
    if (k.lb().nohz.idle_cpus_mask.empty())
        return;
    if (jiffies(k) < k.lb().nohz.next_balance)
        return;
    bool kick = r.nr_running >= 2;
    if (!kick)
        if (const sched_domain_shared* sds = k.topology().cpu(r.cpu).sd_llc_shared)
            kick = sds->nr_busy_cpus > 1;
    if (kick)
        kick_ilb(k);
}

/*
 * kernel: kernel/sched/fair.c kick_ilb() + find_new_ilb(), 6.5: a balance kick
 * sets nohz.next_balance to jiffies + 1 (since v5.8, "sched/fair: fix nohz next
 * idle balance", 20200609123748.18636-1-vincent.guittot@linaro.org; it was
 * incremented before), then IPIs the first idle tickless CPU.
 */
void kick_ilb(kernel& k)
{
    k.lb().nohz.next_balance = jiffies(k) + 1;
    if (k.lb().nohz.ilb_kicked)
        return;
    int ilb = -1;
    for_each_cpu(cpu, k.lb().nohz.idle_cpus_mask) if (k.idle_cpu(cpu))
    {
        ilb = cpu;
        break;
    }
    if (ilb < 0)
        return;
    k.lb().nohz.ilb_kicked = true;
    k.lb().nohz.ilb_kicks++;
    k.sim().after(k.charges().params().ipi_wakeup, event_prio::ipi, &k.lb(),
                  lb_state::EV_ILB | static_cast<u32>(ilb));
}

/*
 * kernel: kernel/sched/fair.c nohz_csd_func() (core.c) -> SCHED_SOFTIRQ ->
 * run_rebalance_domains() -> nohz_idle_balance() -> _nohz_idle_balance(), 6.5
 * (sndrzt/linux-6.5 4f5cdb332210): the kick's IPI clears the CPU's kick flags and raises
 * SCHED_SOFTIRQ only if the CPU is idle and has no reschedule pending; then the kicked
 * CPU walks nohz.idle_cpus_mask from this_cpu + 1, wrapping (itself last). For each CPU
 * still idle_cpu(), it stops if need_resched() (its own, set when a task is woken onto it;
 * nohz.next_balance then keeps its value), updates the CPU's blocked averages
 * (update_nohz_stats()), and if jiffies has reached that CPU's rq->next_balance runs
 * rebalance_domains(rq, CPU_IDLE) for it; the earliest rq->next_balance seen becomes
 * nohz.next_balance at the end. All of it runs on the kicked CPU, one CPU after another:
 * the walk lasts the sum of its balances, and each later balance sees the machine as the
 * earlier ones left it. model: the walk is a sequence of events (nohz_idle_balance_step()),
 * one level of a balanced CPU's domains each (sched_balance_domains_step(), as the CPU's own
 * softirq walk), its work (last_lb_cost: lb_base, scans, moves) charged to the kicked CPU,
 * the next step when that work is done (cpu_charges::owed_until()), ordered before a
 * deferred __schedule() of that instant (event_prio::softirq_level); a task woken onto the
 * kicked CPU meanwhile is picked once the walk stops at its next need_resched() check.
 * The mask is read as the walk goes (for_each_cpu_wrap() reads it live). The rq lines that
 * should_we_balance() and update_sg_lb_stats() read are priced from the kicked CPU, the
 * reader (smp_processor_id(); before lane nohzcost, from the balanced CPU, env.dst_cpu).
 * Each visited CPU's update_nohz_stats() (its blocked averages under its rq lock, when it
 * has blocked load and not yet this jiffy) and each due CPU's rq clock update under its
 * lock are charged to the kicked CPU too (update_blocked_averages_locked(); lane
 * nohzcost), and a visit that cost something moves the walk's next CPU past it.
 * Differs: no NOHZ_STATS_KICK / NOHZ_NEXT_KICK only kicks (nohz.h); 5.15 walks the mask from CPU 0, skipping this_cpu,
 * and balances this_cpu after it (not modelled: every profile wraps).
 * Before this model (lane nohzwalk), the whole walk ran at one instant, uncharged, and
 * stopped also when the kicked CPU was no longer idle_cpu().
 */
void nohz_idle_balance(kernel& k, rq& ilb_rq)
{
    k.lb().nohz.ilb_kicked = false; // nohz_csd_func(): the kick flags are cleared
    lb_state::nohz_walk& nw = k.lb().ilb_walk(ilb_rq.cpu);
    if (nw.active || k.lb().softirq_walk(ilb_rq.cpu).active) {
        nw.kicked = true; // SCHED_SOFTIRQ runs again after the run under way
        return;
    }
    nohz_idle_balance_begin(k, ilb_rq);
}

namespace {
// Starts a walk; false if the CPU is not idle or has a reschedule pending.
bool nohz_idle_balance_begin(kernel& k, rq& ilb_rq)
{
    const int this_cpu = ilb_rq.cpu;
    // nohz_csd_func(): rq->idle_balance = idle_cpu(cpu); no softirq unless idle and
    // !need_resched()
    if (!k.idle_cpu(this_cpu) || ilb_rq.need_resched)
        return false;
    lb_state::nohz_walk& nw = k.lb().ilb_walk(this_cpu);
    nw = lb_state::nohz_walk{};
    nw.active = true;
    nw.start = this_cpu + 1;
    nw.pos = this_cpu + 1;
    nw.next_balance = jiffies(k) + 60 * k.config().params.hz;
    nw.started = k.now();
    nohz_idle_balance_step(k, ilb_rq);
    return true;
}

// for_each_cpu_wrap()'s next CPU of the live mask, or -1 at the end of the walk.
int nohz_walk_next_cpu(const cpumask& mask, lb_state::nohz_walk& nw)
{
    const int n = mask.nr_cpu_ids();
    if (!nw.wrapped) {
        const int cpu = nw.pos < n ? mask.next(nw.pos) : n;
        if (cpu < n) {
            nw.pos = cpu + 1;
            return cpu;
        }
        nw.wrapped = true;
        nw.pos = 0;
    }
    const int cpu = mask.next(nw.pos);
    if (cpu < n && cpu < nw.start) {
        nw.pos = cpu + 1;
        return cpu;
    }
    return -1;
}

void nohz_idle_balance_end(kernel& k, rq& ilb_rq, bool abort)
{
    lb_state::nohz_walk& nw = k.lb().ilb_walk(ilb_rq.cpu);
    if (!abort && nw.update_next_balance)
        k.lb().nohz.next_balance = nw.next_balance;
    nw.active = false;
    if (k.decisions().on())
        k.decisions().log(k.now(), ilb_rq.cpu, "nohz_idle_balance",
                          fmt::format("walk: {} cpus visited, {} balanced, work {} ns (+{} ns rq locks "
                                      "and blocked averages) over {} ns{}",
                                      nw.visited, nw.balanced, nw.work, nw.upkeep,
                                      k.now() - nw.started,
                                      abort ? " (stopped: need_resched)" : ""));
    sched_balance_softirq_again(k, ilb_rq);
}
} // namespace

// model: the kicked CPU's walk goes on (see nohz_idle_balance()): up to and including the
// next level of a CPU's domains that balances, or to the end of the walk.
void nohz_idle_balance_step(kernel& k, rq& ilb_rq)
{
    const int this_cpu = ilb_rq.cpu;
    lb_state::nohz_walk& nw = k.lb().ilb_walk(this_cpu);
    SIM_BUG_ON(!nw.active, "cpu{}: a nohz idle balance step with no walk under way", this_cpu);
    bool worked = false;
    while (!worked) {
        k.set_this_cpu(this_cpu); // smp_processor_id() is the kicked CPU throughout
        if (nw.balance_cpu < 0) {
            const int balance_cpu = nohz_walk_next_cpu(k.lb().nohz.idle_cpus_mask, nw);
            if (balance_cpu < 0) {
                nohz_idle_balance_end(k, ilb_rq, false);
                return;
            }
            if (!k.idle_cpu(balance_cpu))
                continue;
            if (ilb_rq.need_resched) {
                nohz_idle_balance_end(k, ilb_rq, true);
                return;
            }
            rq& r = k.cpu_rq(balance_cpu);
            const u64 charged = k.charges().cpu(this_cpu).charged_ns;
            update_nohz_stats(k, r);
            k.set_this_cpu(this_cpu);
            ++nw.visited;
            if (jiffies(k) >= r.next_balance) {
                // rq_lock_irqsave(); update_rq_clock(); rq_unlock_irqrestore(): the lock's
                // wait and line by distance; its hold (a clock read) is not priced
                k.charges().lock_and_charge(r.lock, this_cpu, 0);
                k.update_rq_clock(r);
                nw.upkeep += k.charges().cpu(this_cpu).charged_ns - charged;
                sched_balance_domains_begin(k, r, CPU_IDLE, nw.domains);
                nw.balance_cpu = balance_cpu;
                ++nw.balanced;
                k.lb().nohz.nohz_balances++;
            } else {
                if (nw.next_balance > r.next_balance) {
                    nw.next_balance = r.next_balance;
                    nw.update_next_balance = true;
                }
                // the next CPU once this one's blocked-average update is done, if any
                const u64 spent = k.charges().cpu(this_cpu).charged_ns - charged;
                nw.upkeep += spent;
                worked = spent > 0;
                continue;
            }
        }
        rq& r = k.cpu_rq(nw.balance_cpu);
        k.lb().last_lb_cost = 0;
        const bool done = sched_balance_domains_step(k, r, nw.domains);
        const sim_dur cost = k.lb().last_lb_cost;
        k.lb().last_lb_cost = 0;
        if (cost > 0) {
            k.charges().charge_cpu(ilb_rq, cost, ACCT_BALANCE);
            nw.work += static_cast<u64>(cost);
            worked = true;
        }
        if (nw.domains.holds_balancing) { // spin_unlock(&balancing) when the level's work is done
            k.lb().balancing.until = k.charges().owed_until(ilb_rq);
            nw.domains.holds_balancing = false;
        }
        if (done) {
            sched_balance_domains_end(k, r, nw.domains);
            if (nw.next_balance > r.next_balance) {
                nw.next_balance = r.next_balance;
                nw.update_next_balance = true;
            }
            nw.balance_cpu = -1;
        }
    }
    k.set_this_cpu(this_cpu);
    nw.next_step = k.charges().owed_until(ilb_rq);
    k.sim().at(nw.next_step, event_prio::softirq_level, &k.lb(),
               lb_state::EV_NOHZ_STEP | static_cast<u32>(this_cpu));
}

/* ---- the balancing state and its events ---- */

void lb_state::init(const sched_topology& topo, int nr_cpus)
{
    newidle_ = k_.config().behaviour.newidle_5_15 ? &newidle_5_15_ops : &newidle_5_16_ops;
    group_sums.assign(topo.groups().size(), group_lb_sums{});
    // Every CPU's part is read at the first flush(); a group is summed whole when first read.
    const cpumask empty(nr_cpus);
    masks_.assign(static_cast<std::size_t>(nr_cpus), cpu_masks{empty, empty, empty});
    walks_.assign(static_cast<std::size_t>(nr_cpus), balance_walk{});
    ilb_walks_.assign(static_cast<std::size_t>(nr_cpus), nohz_walk{});
    balancing = {};
    cpu_part_.assign(static_cast<std::size_t>(nr_cpus), group_lb_sums{});
    cpu_dirty_.assign(static_cast<std::size_t>(nr_cpus), true);
    pending_cpus_.clear();
    dirty_cpus_.resize(static_cast<std::size_t>(nr_cpus));
    for (int cpu = 0; cpu < nr_cpus; ++cpu)
        dirty_cpus_[static_cast<std::size_t>(cpu)] = cpu;
    std::vector<std::vector<int>> ids(static_cast<std::size_t>(nr_cpus));
    for (const sched_group* g : topo.groups())
        for_each_cpu(cpu, g->span)
        {
            ids[static_cast<std::size_t>(cpu)].push_back(g->id);
        }
    cpu_group_ids_.clear();
    cpu_group_first_.assign(1, 0);
    for (const std::vector<int>& of_cpu : ids) {
        cpu_group_ids_.insert(cpu_group_ids_.end(), of_cpu.begin(), of_cpu.end());
        cpu_group_first_.push_back(cpu_group_ids_.size());
    }
    std::vector<int> llc_of(static_cast<std::size_t>(nr_cpus), -1);
    std::vector<int> llc_weight(topo.llc_shared.size(), 0);
    for (int cpu = 0; cpu < nr_cpus; ++cpu)
        for (std::size_t l = 0; l < topo.llc_shared.size(); ++l)
            if (topo.llc_shared[l].get() == topo.cpu(cpu).sd_llc_shared) {
                llc_of[static_cast<std::size_t>(cpu)] = static_cast<int>(l);
                llc_weight[l] = topo.cpu(cpu).sd_llc_size;
            }
    gap.init(llc_of, llc_weight);
}

void lb_state::flush()
{
    for (const int cpu : dirty_cpus_) {
        const auto c = static_cast<std::size_t>(cpu);
        const group_lb_sums now = cpu_lb_contrib(k_, cpu);
        for (const int g : cpu_groups(cpu)) {
            group_lb_sums& sums = group_sums[static_cast<std::size_t>(g)];
            if (sums.valid)
                replace_part(sums, cpu_part_[c], now);
        }
        if (now.pending != cpu_part_[c].pending) {
            if (now.pending) {
                pending_cpus_.push_back(cpu);
            } else {
                const auto it = std::find(pending_cpus_.begin(), pending_cpus_.end(), cpu);
                SIM_BUG_ON(it == pending_cpus_.end(),
                           "cpu{}'s queued wakeup ended but it was not listed as pending", cpu);
                *it = pending_cpus_.back();
                pending_cpus_.pop_back();
            }
        }
        cpu_part_[c] = now;
        cpu_dirty_[c] = false;
    }
    dirty_cpus_.clear();
}

void lb_state::check_sums(int cpu, std::string& errs)
{
    flush();
    for (const int g : cpu_groups(cpu)) {
        const group_lb_sums& kept = group_sums[static_cast<std::size_t>(g)];
        if (!kept.valid)
            continue;
        const sched_group& group = *k_.topology().groups()[static_cast<std::size_t>(g)];
        group_lb_sums fresh;
        sum_group_lb_stats(k_, group, fresh);
        if (fresh != kept)
            errs += fmt::format("stale load-balance sums of group {} (cpu{}..): a change of its "
                                "CPUs was not reported by lb_stats_changed()\n",
                                group.id, group.span.first());
    }
}

void lb_state::check_walk(int cpu, std::string& errs)
{
    if (static_cast<std::size_t>(cpu) >= ilb_walks_.size())
        return;
    const nohz_walk& nw = ilb_walk(cpu);
    if (nw.active && nw.next_step < k_.now())
        errs += fmt::format("cpu{}'s nohz idle balance walk was left half-done: its next step was "
                            "due at t={}\n",
                            cpu, nw.next_step);
    if (!nw.active && nw.balance_cpu >= 0)
        errs += fmt::format("cpu{}'s nohz idle balance walk ended in cpu{}'s balance\n", cpu,
                            nw.balance_cpu);
}

void lb_state::fire(u64 arg)
{
    const int cpu = static_cast<int>(static_cast<u32>(arg));
    switch (arg & ~0xffffffffULL) {
    case EV_SOFTIRQ:
        k_.count_event(kernel::EV_SOFTIRQ);
        sched_balance_softirq(k_, k_.cpu_rq(cpu));
        break;
    case EV_ILB:
        k_.count_event(kernel::EV_ILB);
        k_.set_this_cpu(cpu);
        nohz_idle_balance(k_, k_.cpu_rq(cpu));
        break;
    case EV_ACTIVE_LB:
        k_.count_event(kernel::EV_ACTIVE_LB);
        active_load_balance_cpu_stop(k_, k_.cpu_rq(cpu));
        break;
    case EV_SOFTIRQ_LEVEL:
        k_.count_event(kernel::EV_SOFTIRQ);
        sched_balance_softirq_level(k_, k_.cpu_rq(cpu));
        break;
    case EV_NOHZ_STEP:
        k_.count_event(kernel::EV_ILB);
        nohz_idle_balance_step(k_, k_.cpu_rq(cpu));
        break;
    default:
        SIM_BUG_ON(true, "lb_state: unknown event {:#x}", arg);
    }
}

} // namespace schedlab
