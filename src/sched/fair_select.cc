// SPDX-License-Identifier: GPL-2.0-only
/*
 * Task placement (kernel/sched/fair.c; docs/kernel-map.md): select_task_rq_fair() with
 * record_wakee / wake_wide / wake_affine, the select_idle_sibling() fast
 * path with its idle-core and SIS_PROP / SIS_UTIL scan limits, and the
 * fork/exec slow path find_idlest_cpu() / find_idlest_group().
 *
 * Kernel versions: the code follows 6.6; where 5.15, 6.1 or 6.5 differ
 * (the ttwu_move_affine counting of wake_affine, SIS_PROP vs SIS_UTIL) the
 * difference is selected by the profile's features or policy; so is what
 * later versions add (WF_CURRENT_CPU, v6.8's cluster-first scan).
 * Not modelled: asymmetric capacity (asym_fits_cpu, EAS), core scheduling
 * cookies, per-CPU kthread stacking, NUMA-balancing preferences.
 */
#include "sched/core.h"
#include "sched/fair_balance.h"

#include "sim/bug.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace schedlab {

namespace {
constexpr int nr_cpumask_bits = std::numeric_limits<int>::max(); // "no CPU" result

// kernel: kernel/sched/fair.c update_avg(), 6.6: an EWMA with weight 1/8.
void update_avg(u64& avg, u64 sample)
{
    const s64 diff = static_cast<s64>(sample) - static_cast<s64>(avg);
    avg = static_cast<u64>(static_cast<s64>(avg) + diff / 8);
}
} // namespace

/*
 * kernel: include/linux/jiffies.h, kernel/time/timer.c (v6.5, sndrzt/linux-6.5 4f5cdb332210):
 * jiffies_64 starts at INITIAL_JIFFIES at boot and counts the ticks since; sched_init(),
 * init_sched_fair_class() and sd_init() stamp rq->next_balance, wake_stamp, nohz.next_balance
 * and each domain's last_balance and last_decay_max_lb_cost with jiffies at boot.
 * model: the run starts on a tick boundary SCHED_CLOCK_AT_START / TICK_NSEC whole ticks after
 * boot (the uptime the rq clock starts at, sched.h), on a machine idle since its domains were
 * built, so those boot stamps (0 here) are that old when the run begins and every idle CPU's
 * periodic levels are overdue, as nothing balanced them (tickless idle CPUs balance only
 * through an ILB that nohz_balancer_kick() sends with NOHZ_BALANCE_KICK, which needs a busy
 * CPU with work to spread). Differs: counted from 0 at boot, not INITIAL_JIFFIES (2^32 - 300 HZ
 * on 64-bit); every scheduler use compares two jiffies (time_after() and kin, which a
 * constant offset cancels), so only /proc/schedstat's timestamp line shows it.
 */
u64 jiffies(const kernel& k)
{
    const u64 tick = k.config().params.tick_nsec();
    const u64 phase = k.config().params.tick_phase_ns % tick;
    return SCHED_CLOCK_AT_START / tick + (static_cast<u64>(k.now()) + tick - phase) / tick - 1;
}

bool available_idle_cpu(const kernel& k, int cpu)
{
    // kernel: core.c available_idle_cpu(): idle_cpu() and the vCPU is not preempted (never here).
    return k.idle_cpu(cpu);
}

bool sched_idle_cpu(const kernel& k, int cpu)
{
    // kernel: fair.c sched_idle_cpu(): every runnable task is SCHED_IDLE.
    const rq& r = k.cpu_rq(cpu);
    return r.nr_running && r.nr_running == rq_root_cfs(r).idle_h_nr_running;
}

/*
 * kernel: kernel/sched/fair.c record_wakee(), 5.15-6.12 (unchanged). Runs on
 * the waker: halves its wakee_flips once a second, and counts a flip each
 * time it wakes a different task than last time. Patch sets may add to the
 * wakee's flips first (the stacking series' COUPLE_WAKEE_FLIPS, fair_stacking.cc).
 */
void record_wakee(kernel& k, task_struct& p)
{
    task_struct& cur = *k.current();
    const u64 j = jiffies(k);
    if (j > cur.wakee_flip_decay_ts + k.config().params.hz) {
        cur.wakee_flips >>= 1;
        cur.wakee_flip_decay_ts = j;
    }
    if (cur.last_wakee != &p) {
        for (const auto hook : k.patches().record_wakee)
            hook(k, cur, p);
        cur.last_wakee = &p;
        cur.wakee_flips++;
    }
}

/*
 * kernel: kernel/sched/fair.c wake_wide(), 5.15-6.12. 1 (wake wide: skip
 * wake_affine) when both the waker's and the wakee's flips reach the LLC
 * size and the larger is at least llc_size times the smaller: a 1:N
 * relationship too wide for one LLC. A patch set may replace the rule (the
 * stacking series' COUPLE_WAKEE_FLIPS, fair_stacking.cc).
 */
int wake_wide(kernel& k, task_struct& p)
{
    u32 master = k.current()->wakee_flips;
    u32 slave = p.wakee_flips;
    const u32 factor = static_cast<u32>(k.topology().cpu(k.smp_processor_id()).sd_llc_size);
    if (master < slave)
        std::swap(master, slave);
    for (const auto hook : k.patches().wake_wide)
        if (const int wide = hook(k, master, slave, factor); wide >= 0)
            return wide;
    if (slave < factor || master < slave * factor)
        return 0;
    return 1;
}

/*
 * kernel: kernel/sched/fair.c wake_affine_idle()'s sync test with cfs_h_nr_delayed(),
 * v6.15+ (20250303105241.17251-2-xuewen.yan@unisoc.com): rq->nr_running less the
 * sched-delayed fair tasks (h_nr_queued - h_nr_runnable) is 1. The model counts the
 * delayed tasks on rq->cfs_tasks (they stay queued), and stops at a second task that
 * is not delayed.
 */
static bool runs_one_task_besides_delayed(const rq& r)
{
    // Tasks of other classes are never delayed.
    unsigned others = r.nr_running > rq_root_cfs(r).h_nr_running ? r.nr_running - rq_root_cfs(r).h_nr_running : 0;
    for (const task_struct* p : r.cfs_tasks) {
        if (!p->se.sched_delayed && ++others > 1)
            return false;
    }
    return others == 1;
}

/*
 * kernel: kernel/sched/fair.c wake_affine_idle(), 6.6 (== 5.15): prefer an
 * idle waker CPU sharing the cache with prev (then prev if it is idle too), a
 * sync wakeup from a CPU running only the waker, then an idle prev. From
 * v6.15 (the 6.18 profile) "running only the waker" leaves out sched-delayed
 * tasks; before, a delayed task on the waker's CPU counts in nr_running.
 * Patch sets may add a last choice (SIS_SHORT v6's hook A, fair_sis_short.cc).
 * model: the decision log names the rule that takes the waker's CPU, `wake_affine: waker
 * cpu (idle)` or `(sync)` here, `(weight)` in wake_affine_weight() (lane hb8v3).
 */
int wake_affine_idle(kernel& k, int this_cpu, int prev_cpu, int sync)
{
    if (available_idle_cpu(k, this_cpu) && k.topology().cpus_share_cache(this_cpu, prev_cpu)) {
        k.decisions().select_branch("wake_affine: waker cpu (idle)");
        return available_idle_cpu(k, prev_cpu) ? prev_cpu : this_cpu;
    }
    if (sync) {
        const rq& r = k.cpu_rq(this_cpu);
        if (k.config().behaviour.wa_idle_sync_skips_delayed ? runs_one_task_besides_delayed(r)
                                                            : r.nr_running == 1) {
            k.decisions().select_branch("wake_affine: waker cpu (sync)");
            return this_cpu;
        }
    }
    if (available_idle_cpu(k, prev_cpu))
        return prev_cpu;
    for (const auto hook : k.patches().wake_affine_idle)
        if (const int cpu = hook(k, this_cpu); cpu >= 0)
            return cpu;
    return nr_cpumask_bits;
}

// The decision log's `wake_affine_weight` entry (model, below): the loads each side sums and
// its factor (WA_BIAS; each side is also multiplied by the other CPU's capacity, not shown);
// factors 0: a sync waker's load above its CPU's ended the comparison early.
static void log_wake_affine_weight(kernel& k, const task_struct& p, int this_cpu, int prev_cpu,
                                   s64 this_load, s64 current_load, s64 task_load, s64 this_pct,
                                   s64 prev_pct, bool affine)
{
    if (!k.decisions().on())
        return;
    const s64 prev_load = static_cast<s64>(cpu_load(k.cpu_rq(prev_cpu)));
    k.decisions().log(
        k.now(), this_cpu, "wake_affine_weight",
        fmt::format("pid {}: this cpu{} load {} - waker {} + task_h {} (x{}) vs prev cpu{} "
                    "load {} - task_h {} (x{}){}: {}",
                    p.pid, this_cpu, this_load, current_load, task_load, this_pct, prev_cpu,
                    prev_load, task_load, prev_pct,
                    prev_pct == 0 ? ", the sync waker's load above its CPU's" : "",
                    affine ? "this" : "prev"));
}

/*
 * kernel: kernel/sched/fair.c wake_affine_weight(), 6.6 (== 5.15): move to
 * the waker's CPU if its load with p (minus the sync waker) is below prev's
 * load without p, with WA_BIAS tilting the comparison by half the domain's
 * imbalance margin towards prev.
 * model: with the decision log on, a `wake_affine_weight` entry gives the inputs (the root
 * cfs_rqs' cpu_load(), task_h_load() of the wakee and of a sync waker, the two factors) and
 * the pick (lane rplwaw), read after the kernel's arithmetic, so it changes no schedule.
 */
int wake_affine_weight(kernel& k, const sched_domain& sd, task_struct& p, int this_cpu,
                       int prev_cpu, int sync)
{
    k.decisions().select_branch("wake_affine: waker cpu (weight)");
    const s64 this_load = static_cast<s64>(cpu_load(k.cpu_rq(this_cpu)));
    s64 this_eff_load = this_load;
    s64 current_load = 0;
    if (sync) {
        current_load = static_cast<s64>(task_h_load(k, *k.current()));
        if (current_load > this_eff_load) {
            log_wake_affine_weight(k, p, this_cpu, prev_cpu, this_load, current_load, 0, 0, 0,
                                   true);
            return this_cpu;
        }
        this_eff_load -= current_load;
    }
    const s64 task_load = static_cast<s64>(task_h_load(k, p));
    this_eff_load += task_load;
    if (sched_feat_of(k, WA_BIAS))
        this_eff_load *= 100;
    this_eff_load *= capacity_of(k, prev_cpu);

    s64 prev_eff_load = static_cast<s64>(cpu_load(k.cpu_rq(prev_cpu)));
    prev_eff_load -= task_load;
    if (sched_feat_of(k, WA_BIAS))
        prev_eff_load *= 100 + (static_cast<s64>(sd.imbalance_pct) - 100) / 2;
    prev_eff_load *= capacity_of(k, this_cpu);
    // If sync, adjust the weight of prev_eff_load such that if prev_eff == this_eff
    // that select_idle_sibling() will consider stacking the wakee on top of the waker.
    if (sync)
        prev_eff_load += 1;
    const bool affine = this_eff_load < prev_eff_load;
    const bool bias = sched_feat_of(k, WA_BIAS);
    log_wake_affine_weight(k, p, this_cpu, prev_cpu, this_load, current_load, task_load,
                           bias ? 100 : 1,
                           bias ? 100 + (static_cast<s64>(sd.imbalance_pct) - 100) / 2 : 1, affine);
    return affine ? this_cpu : nr_cpumask_bits;
}

/*
 * kernel: kernel/sched/fair.c wake_affine(), 6.6. 6.5/6.6 count
 * ttwu_move_affine only when the waker's CPU was chosen; 5.15/6.1 also when
 * an idle prev was (the 5.15.100 and 6.1.10 trees): selected by the profile.
 */
int wake_affine(kernel& k, sched_domain& sd, task_struct& p, int this_cpu, int prev_cpu, int sync)
{
    int target = nr_cpumask_bits;
    if (sched_feat_of(k, WA_IDLE))
        target = wake_affine_idle(k, this_cpu, prev_cpu, sync);
    if (sched_feat_of(k, WA_WEIGHT) && target == nr_cpumask_bits)
        target = wake_affine_weight(k, sd, p, this_cpu, prev_cpu, sync);
    if (k.config().behaviour.old_wake_affine_stats) {
        if (target == nr_cpumask_bits)
            return prev_cpu;
    } else if (target != this_cpu) {
        return prev_cpu;
    }
    sd.stats.ttwu_move_affine++;
    return target;
}

/* ---- the fast path ---- */

// kernel: kernel/sched/fair.c __select_idle_cpu(), 6.6 (no core-scheduling cookies).
int __select_idle_cpu(kernel& k, int cpu, task_struct& /*p*/)
{
    if (available_idle_cpu(k, cpu) || sched_idle_cpu(k, cpu))
        return cpu;
    return -1;
}

/*
 * kernel: kernel/sched/fair.c __update_idle_core(), 6.6: when a CPU goes
 * idle and all its SMT siblings are idle too, its LLC has an idle core.
 */
void update_idle_core(kernel& k, rq& r)
{
    if (!k.charges().cm().smt_active())
        return;
    sched_domain_shared* sds = k.topology().cpu(r.cpu).sd_llc_shared;
    if (!sds || sds->has_idle_cores)
        return;
    for (const int cpu : k.charges().cm().smt_siblings(r.cpu)) {
        if (cpu == r.cpu)
            continue;
        if (!available_idle_cpu(k, cpu))
            return;
    }
    sds->has_idle_cores = true;
}

/*
 * kernel: kernel/sched/fair.c select_idle_core(), 6.6: the whole core idle
 * -> core; meanwhile remember the first idle allowed sibling as a fallback
 * and drop the core's siblings from the scan.
 */
int select_idle_core(kernel& k, task_struct& p, int core, cpumask& cpus, int& idle_cpu_out)
{
    bool idle = true;
    for (const int cpu : k.charges().cm().smt_siblings(core)) {
        if (!available_idle_cpu(k, cpu)) {
            idle = false;
            if (idle_cpu_out == -1) {
                if (sched_idle_cpu(k, cpu) && p.cpus_mask.test(cpu)) {
                    idle_cpu_out = cpu;
                    break;
                }
                continue;
            }
            break;
        }
        if (idle_cpu_out == -1 && p.cpus_mask.test(cpu))
            idle_cpu_out = cpu;
    }
    if (idle)
        return core;
    cpus.andnot(k.charges().cm().smt_mask(core));
    return -1;
}

// kernel: kernel/sched/fair.c select_idle_smt(), 6.6: an idle SMT sibling of target.
int select_idle_smt(kernel& k, task_struct& p, int target)
{
    for (const int cpu : k.charges().cm().smt_siblings(target)) {
        if (cpu == target || !p.cpus_mask.test(cpu))
            continue;
        if (available_idle_cpu(k, cpu) || sched_idle_cpu(k, cpu))
            return cpu;
    }
    return -1;
}

/*
 * kernel: kernel/sched/fair.c select_idle_cpu()'s cluster-first part, v6.8+ (8881e1639f1f,
 * read in 6.12.19 at wishday/linux-6.12.y 21ae40e85ea7 and 6.18.2): with sched_cluster_active and
 * an LLC whose first group (target's) was built from a CLS child (sg->flags & SD_CLUSTER), the
 * CPUs of target's cluster in `cpus` are scanned first, in wrap-around order from target + 1,
 * as the rest of the LLC then is; the cluster is then taken out of `cpus`. A found CPU, or the
 * depth running out (-1), is select_idle_cpu()'s answer; nullopt: go on with the rest.
 */
static std::optional<int> select_idle_cpu_in_cluster(kernel& k, task_struct& p,
                                                     const sched_domain& sd, cpumask& cpus,
                                                     bool has_idle_core, int target, int& nr,
                                                     int& idle_cpu_found, sim_dur& scan_cost)
{
    const sched_group& sg = sd.groups.front();
    if (!(sg.flags & SD_CLUSTER))
        return std::nullopt;
    std::optional<int> found;
    for_each_cpu_wrap(sg.span, target + 1, [&](int cpu) {
        if (!cpus.test(cpu))
            return true;
        const sim_dur probe = k.charges().params().idle_scan_probe +
                              k.charges().cm().line_cost(k.smp_processor_id(), cpu);
        if (has_idle_core) {
            scan_cost += probe;
            const int i = select_idle_core(k, p, cpu, cpus, idle_cpu_found);
            if (i >= 0)
                found = i;
        } else {
            // The depth runs out before this CPU is looked at.
            if (--nr <= 0) {
                found = -1;
                return false;
            }
            scan_cost += probe;
            idle_cpu_found = __select_idle_cpu(k, cpu, p);
            if (idle_cpu_found >= 0)
                found = idle_cpu_found;
        }
        return !found;
    });
    if (!found)
        cpus.andnot(sg.span);
    return found;
}

/*
 * kernel: kernel/sched/fair.c select_idle_cpu(), 6.6 (SIS_PROP as in 5.15).
 * Scans target's LLC in wrap-around order from target + 1: for a fully idle
 * core when the LLC has one (no limit), else for any idle CPU within the
 * scan depth - SIS_PROP's avg_idle / avg_scan_cost estimate, or SIS_UTIL's
 * nr_idle_scan + 1 (which gives up at once when it is 0). It walks the working
 * mask (sd's span and p's allowed CPUs), as the kernel's for_each_cpu_wrap(cpu,
 * cpus, target + 1) does, not the span: the same CPUs in the same order.
 * The scan's time (idle_scan_probe plus a cache-line read by distance per CPU
 * probed) is charged to the waking CPU and is what SIS_PROP subtracts; when
 * the depth runs out the kernel returns -1 before that bookkeeping (read in
 * 5.15 and v6.4-era fair.c), so such a scan neither updates avg_scan_cost nor
 * probes the CPU where it stopped.
 */
int select_idle_cpu(kernel& k, task_struct& p, sched_domain& sd, bool has_idle_core, int target)
{
    // kernel: this CPU's select_rq_mask. Model: CPU 0's for every CPU, since no two scans
    // overlap here; each CPU's own missed the host's L2 at most scans, 512 simulated CPUs
    // sharing one host's caches (cachegrind, docs/performance.md "Working masks").
    cpumask& cpus = k.lb().select_rq_mask(0);
    cpus.assign_and(sd.span, p.cpus_mask);
    int idle_cpu_found = -1;
    int nr = std::numeric_limits<int>::max();
    rq& this_rq = k.cpu_rq(k.smp_processor_id());
    sched_domain* this_sd = nullptr;
    sim_dur scan_cost = 0;
    // The scan's time is spent by the waking CPU.
    struct charge_on_exit {
        kernel& k;
        rq& r;
        sim_dur& cost;
        ~charge_on_exit() { k.charges().charge_cpu(r, cost, ACCT_IDLE_SCAN); }
    } charge{k, this_rq, scan_cost};
    idle_gap_stats& gap = k.lb().gap; // counting only
    gap.add(gap.sic_calls);
    gap.add(gap.sic_idle_core, has_idle_core ? 1 : 0);

    if (sched_feat_of(k, SIS_PROP) && !has_idle_core) {
        this_sd = k.topology().cpu(k.smp_processor_id()).sd_llc;
        if (!this_sd)
            return -1;
        // Age wake_avg_idle: halve it once per jiffy since the last wakeup.
        const u64 j = jiffies(k);
        while (this_rq.wake_stamp < j && this_rq.wake_avg_idle) {
            this_rq.wake_stamp++;
            this_rq.wake_avg_idle >>= 1;
        }
        const u64 avg_idle = this_rq.wake_avg_idle;
        const u64 avg_cost = this_sd->avg_scan_cost + 1;
        const u64 span_avg = static_cast<u64>(sd.span_weight) * avg_idle;
        if (span_avg > 4 * avg_cost)
            nr = static_cast<int>(std::min<u64>(span_avg / avg_cost, 1u << 30));
        else
            nr = 4;
    }
    if (sched_feat_of(k, SIS_UTIL)) {
        if (const sched_domain_shared* sds = k.topology().cpu(target).sd_llc_shared) {
            nr = sds->nr_idle_scan + 1;
            gap.add(gap.sic_nr_idle_scan_sum, static_cast<u64>(sds->nr_idle_scan));
            if (nr == 1) {
                gap.add(gap.sic_scan_zero);
                return -1;
            }
            // Patch sets may keep target without a scan (SIS_SHORT v6's hook B).
            for (const auto hook : k.patches().select_idle_cpu)
                if (hook(k, p, sd, has_idle_core, target, nr))
                    return target;
        }
    }
    if (k.config().behaviour.sis_cluster_first && k.topology().sched_cluster_active)
        if (const std::optional<int> i = select_idle_cpu_in_cluster(
                k, p, sd, cpus, has_idle_core, target, nr, idle_cpu_found, scan_cost)) {
            gap.add(*i >= 0 ? gap.sic_found : gap.sic_depth_out);
            return *i;
        }

    bool done = false;
    // As the kernel, over cpus itself, read as the walk goes: select_idle_core() takes a
    // scanned core's siblings out of it, so they are not visited.
    for_each_cpu_wrap(cpus, target + 1, [&](int cpu) {
        if (has_idle_core) {
            scan_cost += k.charges().params().idle_scan_probe + k.charges().cm().line_cost(k.smp_processor_id(), cpu);
            const int i = select_idle_core(k, p, cpu, cpus, idle_cpu_found);
            if (i >= 0) {
                idle_cpu_found = i;
                done = true;
                return false;
            }
        } else {
            // The depth runs out before this CPU is looked at.
            if (!--nr) {
                idle_cpu_found = -1;
                done = true;
                return false;
            }
            scan_cost += k.charges().params().idle_scan_probe + k.charges().cm().line_cost(k.smp_processor_id(), cpu);
            idle_cpu_found = __select_idle_cpu(k, cpu, p);
            if (idle_cpu_found >= 0)
                return false;
        }
        return true;
    });
    if (done) {
        // A fully idle core; or the scan depth ran out: "return -1" before the
        // SIS_PROP bookkeeping below (the scan's time is still spent).
        gap.add(idle_cpu_found >= 0 ? gap.sic_found : gap.sic_depth_out);
        return idle_cpu_found;
    }
    if (has_idle_core) {
        // A full scan found no idle core: the hint was stale.
        if (sched_domain_shared* sds = k.topology().cpu(target).sd_llc_shared)
            sds->has_idle_cores = false;
    }
    if (sched_feat_of(k, SIS_PROP) && this_sd && !has_idle_core) {
        const u64 time = static_cast<u64>(scan_cost);
        this_rq.wake_avg_idle -= std::min(this_rq.wake_avg_idle, time);
        update_avg(this_sd->avg_scan_cost, time);
    }
    gap.add(idle_cpu_found >= 0 ? gap.sic_found : gap.sic_none);
    return idle_cpu_found;
}

/*
 * kernel: kernel/sched/fair.c select_idle_sibling(), 6.6 (5.15.0 and 6.1-rc7 the same but
 * their recent_used_cpu affinity test, which takes p->recent_used_cpu after it became prev:
 * 89aafd67f28c, v5.15-rc1, fixed by ae2ad293d6be, v6.5-rc2; the 5.15 and 6.1 profiles and
 * their tips, kernel_behaviour::sis_recent_used_cpu_tests_prev). target if idle; prev if idle
 * and cache-affine; the task's recent_used_cpu; an idle SMT sibling of prev when the LLC has no
 * idle core; then select_idle_cpu(); else target, where stacking happens. v6.8+ on a machine
 * with clusters (the 6.12, 6.18 and tip-2023-12 profiles, kernel_behaviour::sis_cluster_first):
 * prev and recent_used_cpu outside target's cluster wait until select_idle_cpu() found nothing
 * (22165f61d0c4). Not modelled: the asym-capacity variant and the per-CPU-kthread stacking rule
 * (no kernel threads here).
 */
int select_idle_sibling(kernel& k, task_struct& p, int prev, int target)
{
    k.decisions().sis_branch("target idle");
    if (available_idle_cpu(k, target) || sched_idle_cpu(k, target))
        return target;

    // v6.8+ on a machine with clusters (22165f61d0c4): an idle prev or recent_used_cpu outside
    // target's cluster is kept for after select_idle_cpu(), which scans that cluster first.
    const bool cluster_active =
        k.config().behaviour.sis_cluster_first && k.topology().sched_cluster_active;
    int prev_aff = -1;
    k.decisions().sis_branch("prev idle");
    if (prev != target && k.topology().cpus_share_cache(prev, target) &&
        (available_idle_cpu(k, prev) || sched_idle_cpu(k, prev))) {
        if (!cluster_active || k.topology().cpus_share_resources(prev, target))
            return prev;
        prev_aff = prev;
    }

    int recent_used_cpu = p.recent_used_cpu;
    p.recent_used_cpu = prev;
    // 5.15/6.1 test p->recent_used_cpu, now prev, for p's affinity (until ae2ad293d6be, v6.5).
    const int recent_allowed_cpu =
        k.config().behaviour.sis_recent_used_cpu_tests_prev ? p.recent_used_cpu : recent_used_cpu;
    k.decisions().sis_branch("recent_used_cpu idle");
    if (recent_used_cpu != prev && recent_used_cpu != target &&
        k.topology().cpus_share_cache(recent_used_cpu, target) &&
        (available_idle_cpu(k, recent_used_cpu) || sched_idle_cpu(k, recent_used_cpu)) &&
        p.cpus_mask.test(recent_allowed_cpu)) {
        if (!cluster_active || k.topology().cpus_share_resources(recent_used_cpu, target))
            return recent_used_cpu;
    } else {
        recent_used_cpu = -1;
    }

    sched_domain* sd = k.topology().cpu(target).sd_llc;
    k.decisions().sis_branch("no LLC domain: target");
    if (!sd)
        return target;

    bool has_idle_core = false;
    if (k.charges().cm().smt_active()) {
        const sched_domain_shared* sds = k.topology().cpu(target).sd_llc_shared;
        has_idle_core = sds && sds->has_idle_cores;
        if (!has_idle_core && k.topology().cpus_share_cache(prev, target)) {
            const int i = select_idle_smt(k, p, prev);
            k.decisions().sis_branch("idle SMT sibling of prev");
            if (i >= 0)
                return i;
        }
    }
    const int i = select_idle_cpu(k, p, *sd, has_idle_core, target);
    if (i >= 0) {
        k.decisions().sis_branch(has_idle_core ? "select_idle_cpu: idle core"
                                               : "select_idle_cpu: idle cpu");
        return i;
    }
    // Cluster machines (v6.8+): an idle prev or recent_used_cpu outside target's cluster.
    k.decisions().sis_branch("no idle cpu found: prev or recent_used_cpu outside the cluster");
    if (prev_aff >= 0)
        return prev_aff;
    if (recent_used_cpu >= 0)
        return recent_used_cpu;
    k.decisions().sis_branch("no idle cpu found: target (stacking)");
    return target;
}

/* ---- the slow path (fork / exec) ---- */

/*
 * kernel: kernel/sched/fair.c idle_cpu_without(), 6.5: idle_cpu() but for p as rq->curr, the
 * nr_running test left to the caller (it counts without p): only sched_exec()'s p, running
 * on its CPU, differs from idle_cpu(). model: the wake list's visibility and the switch to
 * idle (rq::in_schedule) as kernel::idle_cpu() reads them.
 */
static bool idle_cpu_without(const kernel& k, const rq& r, const task_struct& p)
{
    if (r.curr != &p)
        return k.idle_cpu(r.cpu);
    return !r.ttwu_pending_seen_by(k.smp_processor_id(), k.now());
}

/*
 * kernel: kernel/sched/fair.c update_sg_wakeup_stats(), 6.6: a group's
 * statistics as they would be without p (cpu_load_without() & co.).
 */
void update_sg_wakeup_stats(kernel& k, const sched_domain& sd, const sched_group& group,
                                    sg_lb_stats& sgs, task_struct& p)
{
    sgs = sg_lb_stats{};
    for_each_cpu(i, group.span) {
        rq& r = k.cpu_rq(i);
        sgs.group_load += cpu_load_without(k, r, p);
        sgs.group_util += cpu_util_without(k, i, p);
        sgs.group_runnable += cpu_runnable_without(r, p);
        const unsigned local = (p.cpu == i && task_on_rq_queued(p) && r.curr == &p) ? 1 : 0;
        sgs.sum_h_nr_running += cfs_h_nr_counted(k, r) - local; // 6.18: h_nr_runnable
        const unsigned nr_running = r.nr_running - local;
        sgs.sum_nr_running += nr_running;
        if (!nr_running && idle_cpu_without(k, r, p))
            sgs.idle_cpus++;
    }
    sgs.group_capacity = group.capacity;
    sgs.group_weight = static_cast<unsigned>(group.group_weight);
    sgs.group_type_ = group_classify(sd.imbalance_pct, group, sgs);
    if (sgs.group_type_ == group_fully_busy || sgs.group_type_ == group_overloaded)
        sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
}

// kernel: kernel/sched/fair.c update_pick_idlest(), 6.6.
static bool update_pick_idlest(const sched_group* idlest, const sg_lb_stats& idlest_sgs,
                               const sg_lb_stats& sgs)
{
    if (!idlest)
        return true;
    if (sgs.group_type_ < idlest_sgs.group_type_)
        return true;
    if (sgs.group_type_ > idlest_sgs.group_type_)
        return false;
    switch (sgs.group_type_) {
    case group_overloaded:
    case group_fully_busy:
        if (idlest_sgs.avg_load <= sgs.avg_load)
            return false;
        break;
    case group_imbalanced:
    case group_asym_packing:
    case group_smt_balance:
        return false;
    case group_misfit_task:
        return false;
    case group_has_spare:
        if (idlest_sgs.idle_cpus > sgs.idle_cpus)
            return false;
        if (idlest_sgs.idle_cpus == sgs.idle_cpus && idlest_sgs.group_util <= sgs.group_util)
            return false;
        break;
    }
    return true;
}

/*
 * kernel: kernel/sched/fair.c find_idlest_group(), 6.6: the least busy group
 * of sd (by group type, then load or idle CPUs); NULL when the local group
 * is good enough. NUMA domains keep the task local while the destination
 * would run at most imb_numa_nr tasks, capped by the CPUs the task may use
 * there, and the idle CPUs differ by at most 2 (adjust_numa_imbalance()).
 */
const sched_group* find_idlest_group(kernel& k, const sched_domain& sd, task_struct& p,
                                     int this_cpu)
{
    const sched_group* idlest = nullptr;
    const sched_group* local = nullptr;
    sg_lb_stats local_sgs, tmp_sgs, idlest_sgs;
    for (const sched_group& group : sd.groups) {
        if (!group.span.intersects(p.cpus_mask))
            continue;
        const bool local_group = group.span.test(this_cpu);
        sg_lb_stats& sgs = local_group ? local_sgs : tmp_sgs;
        if (local_group)
            local = &group;
        update_sg_wakeup_stats(k, sd, group, sgs, p);
        if (!local_group && update_pick_idlest(idlest, idlest_sgs, sgs)) {
            idlest = &group;
            idlest_sgs = sgs;
        }
    }
    if (!idlest)
        return nullptr;
    if (!local)
        return idlest;
    if (local_sgs.group_type_ < idlest_sgs.group_type_)
        return nullptr;
    if (local_sgs.group_type_ > idlest_sgs.group_type_)
        return idlest;

    switch (local_sgs.group_type_) {
    case group_overloaded:
    case group_fully_busy: {
        const unsigned long imbalance = NICE_0_LOAD * (sd.imbalance_pct - 100) / 100;
        // Across NUMA nodes the remote side carries the imbalance: stay local unless
        // it is clearly less loaded (57abff067a08, v5.5).
        if (sd.has(SD_NUMA) && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load)
            return nullptr;
        if (idlest_sgs.avg_load >= local_sgs.avg_load + imbalance)
            return nullptr;
        if (100 * local_sgs.avg_load <= sd.imbalance_pct * idlest_sgs.avg_load)
            return nullptr;
        break;
    }
    case group_imbalanced:
    case group_asym_packing:
    case group_misfit_task:
    case group_smt_balance:
        return idlest;
    case group_has_spare:
        if (sd.has(SD_NUMA) && !k.config().behaviour.numa_imb_nr) {
            // Before 5.18 (2cfb7a1b031b, 20220203144652.12540-2-mgorman@techsingularity.net):
            // stay local while fewer than a quarter of the domain's CPUs run tasks there.
            if (static_cast<long>(local_sgs.sum_nr_running) < (sd.span_weight >> 2))
                return nullptr;
        } else if (sd.has(SD_NUMA)) {
            // f5b2eeb49991 (v5.19): no more than the task may use of the local node. The
            // kernel tests p->nr_cpus_allowed != NR_CPUS, true for every task on a machine
            // with fewer CPUs than the build's NR_CPUS, so the model always takes the min.
            const long imb_numa_nr =
                std::min(static_cast<long>((local->span & p.cpus_mask).weight()),
                         static_cast<long>(sd.imb_numa_nr));
            const long imbalance =
                std::abs(static_cast<long>(local_sgs.idle_cpus) - static_cast<long>(idlest_sgs.idle_cpus));
            if (!adjust_numa_imbalance(
                    k, imbalance, static_cast<long>(local_sgs.sum_nr_running) + 1, imb_numa_nr))
                return nullptr;
        }
        if (local_sgs.idle_cpus >= idlest_sgs.idle_cpus)
            return nullptr;
        break;
    }
    return idlest;
}

/*
 * kernel: kernel/sched/fair.c find_idlest_group_cpu(), 6.5-6.6: an idle CPU in the
 * shallowest idle state (the smallest declared exit_latency of idle_get_state()),
 * among equal states the most recently idled (latest rq->idle_stamp), else the
 * least loaded. A CPU with no cpuidle state (the kernel's idle == NULL: between
 * the switch to idle and cpuidle_enter_state()) competes on idle_stamp against the
 * shallowest state found so far. Differs: the model's idle CPU is always in a state
 * once switched to idle (cpu_charges::cpuidle_enter(): state 0 polls, exit 0), so
 * the NULL branch is reached only by a CPU that left its state (idle.since < 0);
 * the first idle CPU is taken even with idle_stamp 0, where the kernel's NULL
 * branch needs a later stamp than 0 (a boot CPU never idled through
 * sched_balance_newidle()).
 */
int find_idlest_group_cpu(kernel& k, const sched_group& group, task_struct& p, int this_cpu)
{
    if (group.group_weight == 1)
        return group.span.first();
    unsigned long min_load = std::numeric_limits<unsigned long>::max();
    int least_loaded_cpu = this_cpu;
    int shallowest_idle_cpu = -1;
    u64 latest_idle_timestamp = 0;
    sim_dur min_exit_latency = std::numeric_limits<sim_dur>::max();
    for_each_cpu(i, group.span) {
        if (!p.cpus_mask.test(i))
            continue;
        if (sched_idle_cpu(k, i))
            return i;
        if (available_idle_cpu(k, i)) {
            const rq& r = k.cpu_rq(i);
            const cpu_idle_state& idle = k.charges().idle_state(r);
            const bool in_state = idle.since >= 0;
            const sim_dur exit_latency = in_state ? k.charges().cm().declared_exit_latency(idle) : 0;
            if (in_state && exit_latency < min_exit_latency) {
                min_exit_latency = exit_latency;
                latest_idle_timestamp = r.idle_stamp;
                shallowest_idle_cpu = i;
            } else if ((!in_state || exit_latency == min_exit_latency) &&
                       (shallowest_idle_cpu == -1 || r.idle_stamp > latest_idle_timestamp)) {
                latest_idle_timestamp = r.idle_stamp;
                shallowest_idle_cpu = i;
            }
        } else if (shallowest_idle_cpu == -1) {
            const unsigned long load = cpu_load(k.cpu_rq(i));
            if (load < min_load) {
                min_load = load;
                least_loaded_cpu = i;
            }
        }
    }
    return shallowest_idle_cpu != -1 ? shallowest_idle_cpu : least_loaded_cpu;
}

/*
 * model: the share (percent) of one cache-line transfer by distance that reading one more
 * CPU's runqueue costs find_idlest_cpu(). update_sg_wakeup_stats() and
 * find_idlest_group_cpu() (v6.5 fair.c) read every CPU of the mask at an address known in
 * advance (cpu_rq(i)), so the loads of successive CPUs are independent and the core keeps
 * several lines in flight; select_idle_cpu()'s probes, which stop at the first idle CPU,
 * keep the whole line. Measured on this project's KVM guest (AMD EPYC family 26,
 * 2026-12-05 20:46-20:47 UTC, load 6-7; bench/validation/scan-overlap.c, six runs with
 * 256 and 512 runqueues): a loop reading 4 non-adjacent lines of each runqueue, last
 * written by the other vCPU, takes 33-38 ns per runqueue against 126-137 ns per line read
 * by a pointer chase of the same lines: 24-30%, median 25.5%, taken as 26%. Estimated: the 4 lines
 * (what v6.5's loop reads per CPU: rq->nr_running, cfs.h_nr_running, the cfs_rq's sched_avg line,
 * rq->curr and ttwu_pending) and that the share holds at a 512-CPU machine's three distances (two
 * vCPUs measure one). The per-runqueue time includes the loop's own arithmetic, which
 * idle_scan_probe prices as well.
 */
constexpr sim_dur slow_path_line_pct = 26;

/*
 * model: what the slow path's reads of `cpus` cost the scanning CPU: per CPU the fixed part
 * of a select_idle_cpu() probe (costs.def idle_scan_probe, "a few loads of another CPU's
 * rq") and slow_path_line_pct of one line by distance (cost_model::line_cost()), the lines
 * of successive CPUs overlapping. The kernel has no such price: its loads simply take the
 * time.
 */
static sim_dur slow_path_read_cost(const kernel& k, const cpumask& cpus, int this_cpu)
{
    sim_dur probes = 0;
    sim_dur lines = 0;
    for_each_cpu(i, cpus)
    {
        probes += k.charges().params().idle_scan_probe;
        lines += k.charges().cm().line_cost(this_cpu, i);
    }
    return probes + lines * slow_path_line_pct / 100;
}

/*
 * kernel: kernel/sched/fair.c find_idlest_cpu() (sched_balance_find_dst_cpu()
 * from 6.10), 6.6: descend from the highest balancing domain, each level
 * picking the idlest group then its idlest CPU.
 * model: the scan's reads (update_sg_wakeup_stats() reads every CPU of each group that
 * intersects p's mask, find_idlest_group_cpu() the group's CPUs p may use; v6.5 fair.c)
 * are charged to the scanning CPU when it is done, as a select_idle_cpu() probe's fixed part
 * and a share of a line per CPU (ACCT_IDLE_SCAN, slow_path_read_cost()); the path's next step
 * (wake_up_new_task()'s activate_task(), sched_exec()'s stopper) waits for them
 * (cpu_charges::owed_until()). Differs: find_idlest_group_cpu()'s early return at a SCHED_IDLE CPU
 * is priced as the whole group; spawn() (the run's tasks, as if forked by init before it) is not
 * charged.
 */
int find_idlest_cpu(kernel& k, sched_domain* sd, task_struct& p, int cpu, int prev_cpu, u32 sd_flag)
{
    if (!sd->span.intersects(p.cpus_mask))
        return prev_cpu;
    const int this_cpu = k.smp_processor_id();
    rq& this_rq = k.cpu_rq(this_cpu);
    sim_dur scan_cost = 0;
    int new_cpu = cpu;
    while (sd) {
        if (!(sd->flags & sd_flag)) {
            sd = sd->child;
            continue;
        }
        for (const sched_group& g : sd->groups)
            if (g.span.intersects(p.cpus_mask))
                scan_cost += slow_path_read_cost(k, g.span, this_cpu);
        const sched_group* group = find_idlest_group(k, *sd, p, cpu);
        if (!group) {
            sd = sd->child;
            continue;
        }
        if (group->group_weight > 1)
            scan_cost += slow_path_read_cost(k, group->span & p.cpus_mask, this_cpu);
        new_cpu = find_idlest_group_cpu(k, *group, p, cpu);
        if (new_cpu == cpu) {
            sd = sd->child;
            continue;
        }
        // Now try balancing at a lower domain level of new_cpu.
        cpu = new_cpu;
        const int weight = sd->span_weight;
        sd = nullptr;
        for (auto& tmp : k.topology().cpu(cpu).domains) {
            if (weight <= tmp->span_weight)
                break;
            if (tmp->flags & sd_flag)
                sd = tmp.get();
        }
    }
    if (!this_rq.curr->is_idle_task()) // a task's fork or exec; not spawn()
        k.charges().charge_cpu(this_rq, scan_cost, ACCT_IDLE_SCAN);
    return new_cpu;
}

/*
 * kernel: kernel/sched/fair.c select_task_rq_fair(), 6.6 (5.15-6.5 the same
 * but for WF_CURRENT_CPU). Wakeups: record_wakee, then wake_affine in the
 * lowest SD_WAKE_AFFINE domain spanning both the waker's CPU and prev unless
 * wake_wide(), then select_idle_sibling(). Fork/exec: the slow path from the
 * highest domain with SD_BALANCE_FORK/EXEC. sync is WF_SYNC unless current is PF_EXITING
 * (5.15.0 to 6.18.2): an exiting child's wakeup of its parent is not sync; only this local
 * sync is cleared, other readers of wake_flags see WF_SYNC.
 */
int select_task_rq_fair(kernel& k, task_struct& p, int prev_cpu, int wake_flags)
{
    const int sync = ((wake_flags & WF_SYNC) && !(k.current()->flags & PF_EXITING)) ? 1 : 0;
    const u32 sd_flag = static_cast<u32>(wake_flags & 0xF);
    const int cpu = k.smp_processor_id();
    int new_cpu = prev_cpu;
    bool want_affine = false;
    sched_domain* sd = nullptr;
    k.decisions().select_begin("prev");

    if (wake_flags & WF_TTWU) {
        record_wakee(k, p);
        if (k.config().behaviour.wf_current_cpu && (wake_flags & WF_CURRENT_CPU) &&
            p.cpus_mask.test(cpu)) {
            k.decisions().select_branch("WF_CURRENT_CPU");
            return cpu;
        }
        want_affine = !wake_wide(k, p) && p.cpus_mask.test(cpu);
        if (!want_affine)
            k.decisions().select_branch(p.cpus_mask.test(cpu) ? "wake_wide"
                                                              : "waker cpu not allowed");
    }

    for (auto& tmp : k.topology().cpu(cpu).domains) {
        if (want_affine && tmp->has(SD_WAKE_AFFINE) && tmp->span.test(prev_cpu)) {
            if (cpu != prev_cpu) {
                // wake_affine_idle() and wake_affine_weight() name the rule that chose cpu
                k.decisions().select_branch("wake_affine: waker cpu");
                new_cpu = wake_affine(k, *tmp, p, cpu, prev_cpu, sync);
                if (new_cpu != cpu)
                    k.decisions().select_branch("wake_affine: prev");
            } else {
                k.decisions().select_branch("waker cpu is prev");
            }
            sd = nullptr;
            break;
        }
        if (tmp->flags & sd_flag)
            sd = tmp.get();
        else if (!want_affine)
            break;
    }

    if (sd) {
        k.decisions().select_branch("find_idlest_cpu (slow path)");
        new_cpu = find_idlest_cpu(k, sd, p, cpu, prev_cpu, sd_flag);
    } else if (wake_flags & WF_TTWU) {
        new_cpu = select_idle_sibling(k, p, prev_cpu, new_cpu);
    }
    return new_cpu;
}

} // namespace schedlab
