// SPDX-License-Identifier: GPL-2.0-only
#include "sched/profiles.h"

#include "sched/ext_load.h"

#include "sim/config_error.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace schedlab {

namespace {

struct feat_default {
    sched_feat_id id;
    bool on;
};

struct profile_def {
    const char* name;
    const char* description;
    fair_policy policy;
    std::vector<feat_default> feats;
    kernel_behaviour behaviour;
    bool main;
};

/*
 * The tip bases take the code differences of the nearest release whose tree was read
 * (docs/kernels.md): 5.15-rc3 -> 5.15, tip-2023-02 -> 6.1, tip-2023-08 -> 6.5,
 * tip-2023-12 -> 6.6 plus Aaron Lu's ratelimit, merged into tip in Sep 2023 (docs/kernels.md).
 */
kernel_behaviour behaviour_of(const char* version)
{
    std::string v = version;
    if (v == "5.15-rc3")
        v = "5.15";
    else if (v == "tip-2023-02")
        v = "6.1";
    else if (v == "tip-2023-08")
        v = "6.5";
    else if (v == "tip-2023-12")
        v = "6.6";
    const bool v6_12 = v == "6.12" || v == "6.18";
    if (v6_12)
        v = "6.6"; // the code paths below did not change; delayed dequeue is a feature bit
    kernel_behaviour b;
    b.old_wake_affine_stats = v == "5.15" || v == "6.1";
    b.wf_current_cpu = v == "6.6";
    // select_idle_sibling()'s recent_used_cpu affinity test: p->recent_used_cpu (already prev)
    // in 5.15.0 (sndrzt/linux-5.15 75c6ad16ec64) and 6.1-rc7 (krr-io/linux-6.1.0 2a410d07ec5e),
    // since 89aafd67f28c (v5.15-rc1, so 5.15-rc3 too); recent_used_cpu from ae2ad293d6be
    // (20230620080747.359122-1-linmiaohe@huawei.com, tip sched/urgent 2023-07-10, v6.5-rc2;
    // v6.5 at sndrzt/linux-6.5 4f5cdb332210): not in tip-2023-02; tip-2023-08 takes 6.5's.
    // The 6.1 profile keeps 6.1-rc7's form (the fix reached 6.1.y as a stable backport).
    b.sis_recent_used_cpu_tests_prev = v == "5.15" || v == "6.1";
    // The cluster-first wakeup scan: b95303e0aeaf, 8881e1639f1f and 22165f61d0c4 (v6.8) were
    // pushed to tip sched/core on 2023-10-24 with 984ffb6a4366 ("sched/fair: Remove SIS_PROP";
    // post-receive Message-Id 169813739010.6998.14875206550201051812@gitolite.kernel.org), so
    // tip-2023-12 (Dec 2023, no SIS_PROP in its profile) has them; its tree was not read. Read
    // in 6.12.19 (wishday/linux-6.12.y 21ae40e85ea7) and 6.18.2 (gfunkmonk/linux-6.18.2).
    b.sis_cluster_first = v6_12 || std::string(version) == "tip-2023-12";
    b.numa_imb_nr = v != "5.15";
    b.newidle_5_15 = v == "5.15";
    // check_preempt_tick()'s cap at sysctl_sched_latency: 79ba1e607d68, applied to tip
    // sched/core on 2023-01-15 (tip-bot Message-ID
    // 167377360979.4906.12177832193233588440.tip-bot2@tip-bot2), v6.3; SIS_SHORT v6's base
    // (tip-2023-02) is tip:sched/core on 7c4a5b89a0b5, applied there on 2023-02-11.
    b.cfs_tick_ideal_capped = v == "6.5" || std::string(version) == "tip-2023-02";
    // ttwu_queue_cond(): 5.15 (sndrzt/linux-5.15 75c6ad16ec64) queues inside the LLC only
    // an on_cpu wakee (WF_ON_CPU) whose CPU runs at most one task; 6.1 (krr-io/linux-6.1.0
    // 2a410d07ec5e, v6.1-rc7) and 6.5 (sndrzt/linux-6.5 f5744aac0f31) any wakee for an idle
    // CPU that is not the waker's (lane cfsaudit).
    b.ttwu_queue_idle_cpu = v != "5.15";
    // sched_ttwu_pending(): WRITE_ONCE(rq->ttwu_pending, 0) before rq_lock_irqsave() since
    // 126c2092e5c8 (v5.8), so in 5.15-rc3 too; read in 5.15.0 (sndrzt/linux-5.15 75c6ad16ec64),
    // 5.15.100 (zcjie1/linux-5.15.100 52bed7a9a5ad), 6.1-rc7 (krr-io/linux-6.1.0 2a410d07ec5e)
    // and 6.1.10 (maverickjb/linux-6.1.10 85997a9193fc). After the enqueues from d6962c4fe8f9
    // (tip sched/core 2022-11-16, v6.2-rc1; Tianchen Ding, v2
    // 20221104023601.12844-1-dtcccc@linux.alibaba.com; 6.5's clear is just before
    // rq_unlock_irqrestore()), which tip-2023-02 and later have.
    b.ttwu_pending_clear_early = v == "5.15" || std::string(version) == "6.1";
    b.swb_newidle_bails_out = v != "5.15"; // read: docs/kernel-map.md, should_we_balance
    b.newidle_break_on_swb = v6_12;        // read: docs/kernel-map.md, sched_balance_newidle
    // place_entity()'s and sched_slice()'s SCHED_IDLE-entity variants: in 6.1-rc7
    // (krr-io/linux-6.1.0 2a410d07ec5e) and 6.5, not in 5.15.0 (lane cfsaudit).
    b.cfs_idle_entity_gran = v != "5.15";
    /*
     * Load-balancer changes of the 6.5 and 6.6 merge windows. tip-2023-08 (88c56cfeaec4,
     * 2023-08-02) is 6.5 code plus tip sched/core's 6.6 material that was in by then:
     * Ricardo Neri's b1bfeab9b002 and Tim Chen's fee1759e4f04 were applied on 2023-07-13
     * (in next-20230717); EEVDF came after 88c56cfeaec4 (tip push of 2023-08-10).
     */
    const bool six_six_lb = v == "6.6" || std::string(version) == "tip-2023-08";
    b.swb_idle_core_first = six_six_lb;
    // Its fix (Keisuke Nishimura, posted Sep 2023, queued after the 6.6 merge window)
    // is in 6.6 but not in tip-2023-08.
    b.swb_first_idle_smt_only = v == "6.6";
    b.smt_balance = six_six_lb;
    // Tim Chen's 7ff1693236f5 (sibling_imbalance()), applied to tip sched/core on 2023-07-13
    // with fee1759e4f04 (its tip-bot mail's CommitterDate; lane balaudit).
    b.sibling_imbalance = six_six_lb;
    // Its fix 450e749707bc (tip sched/urgent 2023-09-13, v6.6-rc2): in 6.6, not in tip-2023-08.
    b.smt_balance_fix = v == "6.6";
    // Ricardo Neri's 5fd6d7f43958 and Dietmar Eggemann's runnable boosting: v6.5 pull.
    b.fully_busy_keeps_smt = v == "6.5" || v == "6.6";
    b.runnable_boost = v == "6.5" || v == "6.6";
    // detach_tasks()' migrate_util test: "util > env->imbalance" in the trees of 5.15.0
    // (sndrzt/linux-5.15), 6.1-rc7 (krr-io/linux-6.1.0), 6.5 (sndrzt/linux-6.5) and 6.6.87
    // (Yunbaby8/linux-6.6.87-lab); shr_bound(util, nr_balance_failed) in 6.12.10
    // (wishday/linux-6.12.y) and 6.18.2 (gfunkmonk/linux-6.18.2) (lane balaudit).
    b.util_shr_bound = v6_12;
    // b0defa7ae03e's loop_max exception and "stop if we tried all running tasks": in 6.1-rc7
    // and 6.5 (and v6.6.0); not yet in 5.15.0, reverted by 2feab2492deb (tip sched/urgent
    // 2024-07-01, v6.10-rc7) before 6.12 and 6.18.2. 6.6.87's tree has the revert as a stable
    // backport; the 6.6 profile keeps v6.6.0's form (lane balaudit).
    b.detach_pinned_retry = !(v6_12 || v == "5.15");
    b.config_preemption = true;
    b.tg_load_avg_ratelimit = std::string(version) == "tip-2023-12" || v6_12;
    b.util_est_fastup_always = v6_12;
    // Xuewen Yan's wake_affine_idle() fix for delayed dequeue, v6.15
    // (20250303105241.17251-2-xuewen.yan@unisoc.com): 6.18 has it; the 6.12 profile keeps
    // v6.12's test (whether a 6.12.y stable release took it is not checked).
    b.wa_idle_sync_skips_delayed = std::string(version) == "6.18";
    // sched_ext's built-in idle policy as 6.18.2's kernel/sched/ext_idle.c has it
    // (gfunkmonk/linux-6.18.2 062668f4d006): the LLC and NUMA preference (dfa4ed29b18c and its
    // NUMA sequel), the sync block's cache-affine prev, is_prev_allowed and the kfunc's one-CPU
    // shortcut; 6.12.19 (wishday/linux-6.12.y 21ae40e85ea7) has none of them. The releases
    // between were not read.
    b.scx_select_cpu_6_18 = std::string(version) == "6.18";
    // "sched/topology: Rename 'DIE' domain to 'PKG'" (f577cd57bfaa) entered tip sched/core on
    // 2023-10-12 (v6.7): tip-2023-12 and the releases from 6.7 on name the level PKG.
    b.pkg_domain_name = std::string(version) == "tip-2023-12" || v6_12;
    // "sched/rt: Remove default bandwidth control" (5f6bd380c7bd) and the fair server
    // (d741f297bcea) are v6.12; 612f769edd06 entered tip sched/core on 2023-09-25 (v6.7),
    // so tip-2023-12 has it.
    b.rt_bandwidth_default = !v6_12;
    b.fair_server = v6_12;
    b.empty_group_keeps_weight = v6_12;
    // update_cfs_group(): reweight_entity() whatever the shares in 6.5 (sndrzt/linux-6.5
    // 4f5cdb33, fair.c 3529-3551), 6.1-rc7 and 5.15.0 (lane peltaudit); tip-2023-08 predates
    // eab03c23c2a1 (Nov 2023); the 6.6 profile follows 6.6.87, which has the test.
    b.reweight_unchanged_shares = v == "5.15" || v == "6.1" || v == "6.5";
    b.rt_overload_pushable = v6_12 || std::string(version) == "tip-2023-12";
    b.sched_ext = v6_12;
    // "sched: Add Lazy preemption model" (20241007075055.331243614@infradead.org, PREEMPT_LAZY)
    // was merged for v6.13: 6.18 has it (read at gfunkmonk/linux-6.18.2 57dc26c98e5e:
    // kernel/Kconfig.preempt, kernel/sched/core.c sched_dynamic_mode()), 6.12 does not.
    b.has_preempt_lazy = std::string(version) == "6.18";
    // 6.17's RUN_TO_PARITY by se->vprot (read at gfunkmonk/linux-6.18.2 57dc26c98e5e:
    // set_protect_slice(), protect_slice(), update_curr(), check_preempt_wakeup_fair()).
    b.eevdf_protect_slice = std::string(version) == "6.18";
    // yield_task_fair()'s "Forfeit the remaining vruntime" (same tree; 6.12.10 has only
    // deadline += slice).
    b.yield_forfeits_vruntime = std::string(version) == "6.18";
    // update_sg_lb_stats(), update_sg_wakeup_stats(), sched_balance_find_src_rq() read
    // rq->cfs.h_nr_runnable (same tree; 6.12.10 reads h_nr_running).
    b.lb_counts_runnable = std::string(version) == "6.18";
    /*
     * reweight_entity() of a queued entity (eevdf_reweight_form): v6.6.0 keeps the vruntime;
     * tip-2023-12 has eab03c23c2a1 and 5068d84054b7 (applied Nov 2023, in v6.8's tree);
     * 6.12.10 (wishday/linux-6.12.y ff9796ed9e8b) has Tianchen Ding's fixes of them (v6.9);
     * 6.18.2 (gfunkmonk/linux-6.18.2 57dc26c98e5e) re-places the entity. The 6.6 profile is
     * the v6.6 release: 6.6.y carries the v6.9 form as a stable backport (6.6.87 has it).
     */
    b.eevdf_reweight = std::string(version) == "6.18"        ? eevdf_reweight_form::place_entity
                       : std::string(version) == "6.12"      ? eevdf_reweight_form::v_before_dequeue
                       : std::string(version) == "tip-2023-12" ? eevdf_reweight_form::v_after_dequeue
                                                             : eevdf_reweight_form::keep_vruntime;
    /*
     * The menu governor (drivers/cpuidle/governors/menu.c): 5484e31bbbff ("cpuidle: menu:
     * Skip tick_nohz_get_sleep_length() call in some cases") went to linux-pm's
     * pm-cpuidle-gov branch on 2023-08-17, for v6.6, so tip-2023-08 (6.5 code) has the
     * timer-first form and tip-2023-12 (v6.7-rc) the typical-first one; 6.18 has v6.15's
     * get_typical_interval() and state walk (cpuidle_menu.h).
     */
    b.menu = std::string(version) == "6.18" ? menu_version::v6_18
             : v == "6.6"                   ? menu_version::typical_first
                                            : menu_version::timer_first;
    return b;
}

#define F(name, on) feat_default{__SCHED_FEAT_##name, on}

/*
 * Feature lists per kernel, read from each version's kernel/sched/features.h
 * (the trees of docs/kernels.md). SIS_PROP on / SIS_UTIL absent in vanilla
 * 5.15 is inferred (the 5.15.100 tree carries a SIS_UTIL backport); SIS_UTIL arrived in v6.0.
 */
const std::vector<profile_def>& profile_defs()
{
    static const std::vector<feat_default> v6_6 = {
        F(PLACE_LAG, true), F(PLACE_DEADLINE_INITIAL, true), F(RUN_TO_PARITY, true),
        F(NEXT_BUDDY, false), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
        F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
        F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, false), F(SIS_UTIL, true),
        F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
        F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
        F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
        F(HZ_BW, true)};
    static const std::vector<feat_default> v6_5 = {
        F(GENTLE_FAIR_SLEEPERS, true), F(START_DEBIT, true), F(NEXT_BUDDY, false),
        F(LAST_BUDDY, true), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
        F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
        F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, false), F(SIS_UTIL, true),
        F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
        F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
        F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
        F(ALT_PERIOD, true), F(BASE_SLICE, true), F(HZ_BW, true)};
    static const std::vector<feat_default> v6_1 = {
        F(GENTLE_FAIR_SLEEPERS, true), F(START_DEBIT, true), F(NEXT_BUDDY, false),
        F(LAST_BUDDY, true), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
        F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
        F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, false), F(SIS_UTIL, true),
        F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
        F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
        F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
        F(ALT_PERIOD, true), F(BASE_SLICE, true)};
    static const std::vector<feat_default> v5_15 = {
        F(GENTLE_FAIR_SLEEPERS, true), F(START_DEBIT, true), F(NEXT_BUDDY, false),
        F(LAST_BUDDY, true), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
        F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
        F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, true),
        F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
        F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
        F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
        F(ALT_PERIOD, true), F(BASE_SLICE, true)};
    // No SIS_PROP: v6.8's features.h (sndrzt/linux-6.8 f116ff45a, Ubuntu's 6.8.0-31 source)
    // has none; that its removal came before 418146e39891 (v6.7) is from memory, not read.
    // v6.8 has no UTIL_EST_FASTUP either (Vincent Guittot's removal, posted 2023-12-01):
    // whether tip had applied it by 418146e39891 was not found, so the profile keeps it.
    static const std::vector<feat_default> tip_2023_12 = [] {
        std::vector<feat_default> v;
        for (const auto& f : v6_6)
            if (f.id != __SCHED_FEAT_SIS_PROP)
                v.push_back(f);
        return v;
    }();

    /*
     * 6.12 (LTS): read from a public 6.12-era kernel/sched/features.h (DELAY_DEQUEUE,
     * DELAY_ZERO, PLACE_REL_DEADLINE, PREEMPT_SHORT present; SIS_PROP, UTIL_EST_FASTUP
     * and HZ_BW gone), not checked against the v6.12 tag itself.
     */
    static const std::vector<feat_default> v6_12 = {
        F(PLACE_LAG, true), F(PLACE_DEADLINE_INITIAL, true), F(PLACE_REL_DEADLINE, true),
        F(RUN_TO_PARITY, true), F(PREEMPT_SHORT, true), F(NEXT_BUDDY, false),
        F(CACHE_HOT_BUDDY, true), F(DELAY_DEQUEUE, true), F(DELAY_ZERO, true),
        F(WAKEUP_PREEMPTION, true), F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
        F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_UTIL, true),
        F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
        F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
        F(WA_BIAS, true), F(UTIL_EST, true), F(LATENCY_WARN, false)};

    /*
     * 6.18.y stable from 6.18.5: kernel/sched/features.h of 6.18.2 (gfunkmonk/linux-6.18.2
     * 57dc26c98e5e: 6.12's list with PICK_BUDDY added after NEXT_BUDDY and DOUBLE_TICK
     * gone) plus NI_RANDOM, which v6.19's "sched/fair: Proportional newidle balance"
     * (33cf66d88306) appended after LATENCY_WARN and 6.18.5 took as a backport.
     */
    static const std::vector<feat_default> v6_18 = [] {
        std::vector<feat_default> v;
        for (const auto& f : v6_12) {
            if (f.id == __SCHED_FEAT_DOUBLE_TICK)
                continue;
            v.push_back(f);
            if (f.id == __SCHED_FEAT_NEXT_BUDDY)
                v.push_back(F(PICK_BUDDY, true));
        }
        v.push_back(F(NI_RANDOM, true));
        return v;
    }();

    static const std::vector<profile_def> defs = {
        {"6.18",
         "v6.18.y (LTS, from 6.18.5): 6.12 as modelled plus NI_RANDOM, newidle balancing "
         "proportional to its success rate (mainline v6.19, backported)",
         fair_policy::eevdf, v6_18, {}, true},
        {"6.12",
         "v6.12 (LTS): EEVDF as 6.6 plus delayed dequeue (DELAY_DEQUEUE, DELAY_ZERO), the "
         "tg->load_avg ratelimit, no SIS_PROP",
         fair_policy::eevdf, v6_12, {}, true},
        {"6.6", "v6.6: first EEVDF release (pick_eevdf, lag placement, RUN_TO_PARITY)",
         fair_policy::eevdf, v6_6, {}, true},
        {"6.5", "v6.5: the last CFS release (vruntime, buddies, wakeup granularity)",
         fair_policy::cfs, v6_5, {}, true},
        {"6.1", "v6.1: CFS with SIS_UTIL (SIS_PROP off)", fair_policy::cfs, v6_1, {}, true},
        {"5.15", "v5.15: CFS with SIS_PROP (no SIS_UTIL; 5.15 newidle gate)", fair_policy::cfs,
         v5_15, {}, true},
        {"tip-2023-12",
         "tip 418146e39891 (Dec 2023, ~v6.7-rc): EEVDF as 6.6 with v6.7's reweight_eevdf(), "
         "tg->load_avg ratelimit merged, no SIS_PROP; SHARED_RUNQ v4 base",
         fair_policy::eevdf, tip_2023_12, {}, false},
        {"tip-2023-08",
         "tip 88c56cfeaec4 (Aug 2023): the last CFS-era tip, as 6.5; SHARED_RUNQ v3 base",
         fair_policy::cfs, v6_5, {}, false},
        {"tip-2023-02",
         "tip of v6.2-rc6 (Feb 2023): CFS with SIS_UTIL, as 6.1; SIS_SHORT v6 base",
         fair_policy::cfs, v6_1, {}, false},
        {"5.15-rc3", "v5.15-rc3: CFS with SIS_PROP, as 5.15; Mel Gorman's stacking series base",
         fair_policy::cfs, v5_15, {}, false},
    };
    return defs;
}
/*
 * Named patch sets ("deltas"), docs/kernels.md. A delta makes its features available with
 * the default its evaluations ran them with and sets the kernel_behaviour fields that are
 * code changes of the series. Deltas of one `group` exclude each other.
 */
struct delta_def {
    const char* name;
    const char* description;
    const char* source;
    const char* group;
    std::vector<feat_default> feats;
    void (*apply)(kernel_behaviour&);
    bool cfs_only = false; ///< changes CFS code (wakeup_gran) that EEVDF profiles do not have
};

const std::vector<delta_def>& delta_defs()
{
    static const std::vector<delta_def> defs = {
        // The patch's own default is off; the evaluations ran it switched on, so the delta
        // turns it on ("+shared_runq_v3+NO_SHARED_RUNQ" is the patched kernel, feature off).
        {"shared_runq_v3",
         "SHARED_RUNQ v3 (pushes at every tree insertion; pull first in newidle_balance, gate on "
         "sd_llc->parent), feature on",
         "David Vernet, v3 6/7 and 7/7, 20230809221218.163894-1-void@manifault.com (base tip "
         "88c56cfeaec4)",
         "shared_runq", {F(SHARED_RUNQ, true)},
         [](kernel_behaviour& b) { b.shared_runq_version = 3; }},
        {"shared_runq_v3_noopt",
         "SHARED_RUNQ v3 with its newidle gate change reverted (Gautham Shenoy's \"noopt\"), "
         "feature on",
         "Gautham Shenoy, ZOc7i7wM0x4hF4vL@BLR-5CG11610CF.amd.com (on v3)", "shared_runq",
         {F(SHARED_RUNQ, true)},
         [](kernel_behaviour& b) {
             b.shared_runq_version = 3;
             b.shared_runq_noopt = true;
         }},
        {"shared_runq_v4",
         "SHARED_RUNQ v4 (no push onto an empty rq; pull only if rd->overload; <= LLC domains "
         "skipped), feature on",
         "David Vernet, v4 6/8 and 7/8, 20231212003141.216236-1-void@manifault.com (base tip "
         "418146e39891)",
         "shared_runq", {F(SHARED_RUNQ, true)},
         [](kernel_behaviour& b) { b.shared_runq_version = 4; }},
        {"tg_ratelimit",
         "Aaron Lu's tg->load_avg ratelimit (\"tgfix\"): one update per cfs_rq per ms; merged "
         "for v6.7, so tip-2023-12 has it without the delta",
         "Aaron Lu, RFC 20230816024831.682107-2-aaron.lu@intel.com; merged as tip afc1996859a2",
         "tg_ratelimit", {F(TG_LOAD_AVG_RATELIMIT, true)}, nullptr},
        {"sis_short_v6",
         "SIS_SHORT v6: dur_avg, and short wakees of short wakers stay on the waker's CPU "
         "(wake_affine_idle; select_idle_cpu at 50-83% LLC util)",
         "Chen Yu, v6 1/2 and 2/2, cover.1677069490.git.yu.c.chen@intel.com (base v6.2-rc6 tip)",
         "sis_short", {F(SIS_SHORT, true)}, nullptr},
        {"stacking",
         "Mel Gorman's \"Reduce stacking and overscheduling\": patch 1 COUPLE_WAKEE_FLIPS "
         "(record_wakee/wake_wide), patch 2 SCALE_WAKEUP_GRAN (CFS wakeup_gran)",
         "Mel Gorman, 20211021145603.5313-1-mgorman@techsingularity.net and the Oct 28 2021 "
         "posting; patch 2 as resent 20220124100312.32573-1-mgorman@techsingularity.net "
         "(base 5.15-rc3)",
         "stacking", {F(COUPLE_WAKEE_FLIPS, true), F(SCALE_WAKEUP_GRAN, true)}, nullptr, true},
    };
    return defs;
}

#undef F

const profile_def* find_profile(const std::string& name)
{
    for (const auto& d : profile_defs())
        if (name == d.name)
            return &d;
    return nullptr;
}

const delta_def* find_delta(const std::string& name)
{
    for (const auto& d : delta_defs())
        if (name == d.name)
            return &d;
    return nullptr;
}

std::vector<std::string> delta_names()
{
    std::vector<std::string> v;
    for (const auto& d : delta_defs())
        v.emplace_back(d.name);
    return v;
}

/// ", provided by +a / +b" for a feature some deltas make available, else "".
std::string deltas_providing(sched_feat_id f)
{
    std::string s;
    for (const auto& d : delta_defs())
        for (const auto& fd : d.feats)
            if (fd.id == f)
                s += fmt::format("{}+{}", s.empty() ? "" : " / ", d.name);
    return s;
}

std::vector<std::string> profile_names()
{
    std::vector<std::string> v;
    for (const auto& d : profile_defs())
        v.emplace_back(d.name);
    return v;
}

std::vector<std::string> feature_names()
{
    std::vector<std::string> v;
    for (const auto& f : sched_feat_table())
        v.emplace_back(f.name);
    return v;
}

void apply_one(kernel_config& kc, std::string token, const std::string& where)
{
    bool on = true;
    std::string name = token;
    if (name.rfind("NO_", 0) == 0) {
        on = false;
        name = name.substr(3);
    }
    const sched_feat_info* fi = sched_feat_lookup(name);
    if (!fi) {
        std::string hint = nearest_name(name, feature_names());
        throw config_error(where, fmt::format("unknown sched feature '{}'{}; see `schedlab "
                                              "features`",
                                              token,
                                              hint.empty() ? ""
                                                           : fmt::format(" (did you mean '{}{}'?)",
                                                                         on ? "" : "NO_", hint)));
    }
    if (!kc.has_feature(fi->id)) {
        const std::string via = deltas_providing(fi->id);
        throw config_error(where, fmt::format("sched feature {} does not exist in kernel {}{}; "
                                              "see `schedlab features`",
                                              fi->name, kc.base,
                                              via.empty() ? ""
                                                          : fmt::format(" (a kernel delta "
                                                                        "provides it: {})",
                                                                        via)));
    }
    kc.features.set(fi->id, on);
    if (!fi->modelled)
        kc.warnings.push_back(fmt::format("feature {} is accepted but its mechanism is not "
                                          "modelled; it changes nothing",
                                          fi->name));
}

} // namespace

bool kernel_config::has_feature(sched_feat_id f) const
{
    return std::find(available.begin(), available.end(), f) != available.end();
}

std::string kernel_config::features_string() const
{
    std::string s;
    for (sched_feat_id f : available) {
        if (!s.empty())
            s += ' ';
        if (!features.test(f))
            s += "NO_";
        s += sched_feat_table()[f].name;
    }
    return s;
}

std::string kernel_config::delta_string() const
{
    std::string s;
    for (const auto& d : deltas) {
        if (!s.empty())
            s += '+';
        s += d;
    }
    if (ext)
        s += (s.empty() ? "ext:" : "+ext:") + ext->name;
    for (sched_feat_id f : available) {
        if (features.test(f) == defaults.test(f))
            continue;
        if (!s.empty())
            s += '+';
        if (!features.test(f))
            s += "NO_";
        s += sched_feat_table()[f].name;
    }
    return s;
}

const std::vector<kernel_profile_info>& kernel_profiles()
{
    static const std::vector<kernel_profile_info> infos = [] {
        std::vector<kernel_profile_info> v;
        for (const auto& d : profile_defs())
            v.push_back({d.name, d.description, d.main});
        return v;
    }();
    return infos;
}

const std::vector<kernel_delta_info>& kernel_deltas()
{
    static const std::vector<kernel_delta_info> infos = [] {
        std::vector<kernel_delta_info> v;
        for (const auto& d : delta_defs()) {
            kernel_delta_info i{d.name, d.description, d.source, {}, d.group};
            for (const auto& fd : d.feats)
                i.features.push_back(fd.id);
            v.push_back(std::move(i));
        }
        return v;
    }();
    return infos;
}

bool profile_default(const std::string& base, sched_feat_id f)
{
    const profile_def* d = find_profile(base);
    if (!d)
        return false;
    for (const auto& fd : d->feats)
        if (fd.id == f)
            return fd.on;
    return false;
}

/// The profile of the tree each patch-set delta was posted against (its source names the base).
const char* posted_base(const std::string& delta)
{
    static const std::pair<const char*, const char*> bases[] = {
        {"shared_runq_v3", "tip-2023-08"}, {"shared_runq_v3_noopt", "tip-2023-08"},
        {"shared_runq_v4", "tip-2023-12"}, {"tg_ratelimit", "tip-2023-08"},
        {"sis_short_v6", "tip-2023-02"},   {"stacking", "5.15-rc3"},
    };
    for (const auto& [name, base] : bases)
        if (delta == name)
            return base;
    return nullptr;
}

const char* preempt_model_name(preempt_model m)
{
    switch (m) {
    case preempt_model::instant:
        return "instant";
    case preempt_model::none:
        return "none";
    case preempt_model::voluntary:
        return "voluntary";
    case preempt_model::full:
        return "full";
    case preempt_model::lazy:
        return "lazy";
    }
    return "?";
}

namespace {
/// `t` without the blanks around it (a kernel spec's terms: make_kernel_config()).
std::string trim_spec_term(const std::string& t)
{
    const auto b = t.find_first_not_of(" \t\n");
    return b == std::string::npos ? std::string()
                                  : t.substr(b, t.find_last_not_of(" \t\n") - b + 1);
}

/// A `preempt=MODEL` term of a kernel spec (make_kernel_config()): sets the model, once.
void apply_preempt_term(kernel_config& kc, const std::string& t, const std::string& spec,
                        bool& seen_preempt, const std::string& where)
{
    // kernel: the preempt= boot parameter of CONFIG_PREEMPT_DYNAMIC (kernel/sched/
    // core.c sched_dynamic_mode(); its none/voluntary/full names as documented in
    // Documentation/admin-guide/kernel-parameters.txt; not read in a 6.6/6.18 tree).
    if (seen_preempt)
        throw config_error(where, fmt::format("two preempt= terms in kernel spec '{}'; "
                                              "give one",
                                              spec));
    seen_preempt = true;
    const std::string m = trim_spec_term(t.substr(8));
    if (m == "none")
        kc.behaviour.preempt = preempt_model::none;
    else if (m == "voluntary")
        kc.behaviour.preempt = preempt_model::voluntary;
    else if (m == "full")
        kc.behaviour.preempt = preempt_model::full;
    else if (m == "lazy") {
        // kernel: sched_dynamic_mode() accepts "lazy" with ARCH_HAS_PREEMPT_LAZY (x86,
        // arm64, powerpc, riscv, s390, loongarch select it at 6.18); v6.13+ only.
        if (!kc.behaviour.has_preempt_lazy)
            throw config_error(where, fmt::format("kernel {} has no lazy preemption "
                                                  "(PREEMPT_LAZY is v6.13+): '{}' needs "
                                                  "the 6.18 profile",
                                                  kc.base, t));
        kc.behaviour.preempt = preempt_model::lazy;
    } else if (m == "instant") // schedlab's own: the schedules before the models
        kc.behaviour.preempt = preempt_model::instant;
    else
        throw config_error(where, fmt::format("unknown preemption model '{}' in kernel "
                                              "spec '{}': give preempt=none, "
                                              "preempt=voluntary, preempt=full, "
                                              "preempt=lazy (6.18) or preempt=instant "
                                              "(schedlab's own)",
                                              m, spec));
}
} // namespace

kernel_config make_kernel_config(const std::string& spec_in, const std::string& where)
{
    // Blanks around the spec and its terms are ignored, as --features ignores them.
    const std::string spec = trim_spec_term(spec_in);
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) { // "6.6+" has an empty last term (getline would drop it)
        const std::size_t plus = spec.find('+', start);
        parts.push_back(
            trim_spec_term(spec.substr(start, plus == std::string::npos ? plus : plus - start)));
        if (plus == std::string::npos)
            break;
        start = plus + 1;
    }
    if (parts[0].empty())
        throw config_error(where, "empty kernel profile; see `schedlab kernels`");

    const profile_def* d = find_profile(parts[0]);
    if (!d) {
        std::string hint = nearest_name(parts[0], profile_names());
        throw config_error(where, fmt::format("unknown kernel profile '{}'{}; see `schedlab "
                                              "kernels`",
                                              parts[0],
                                              hint.empty() ? ""
                                                           : fmt::format(" (did you mean '{}'?)",
                                                                         hint)));
    }
    kernel_config kc;
    kc.spec = spec;
    kc.base = d->name;
    kc.params.policy = d->policy;
    // kernel: kernel/sched/fair.c sysctl_sched_base_slice / normalized_sysctl_sched_base_slice,
    // 6.18.2 (gfunkmonk/linux-6.18.2 062668f4d006): 700000ULL, "0.70 msec * (1 + ilog(ncpus))",
    // since 2ae891b82695 ("sched: Reduce the default slice to avoid tasks getting an extra
    // tick", v6.15); 0.75 ms before it (6.6.87, 6.12.10: the 6.12 profile's trees are older
    // than 6.12.y's backport of it, stable review Message-ID
    // 20250527162500.375899078@linuxfoundation.org). The tip bases keep 0.75 ms.
    if (std::string(d->name) == "6.18")
        kc.params.base_slice_ns = 700'000;
    kc.behaviour = behaviour_of(d->name);
    auto make_available = [&kc](const feat_default& fd) {
        std::size_t pos = 0;
        while (pos < kc.available.size() && kc.available[pos] < fd.id)
            ++pos;
        if (pos == kc.available.size() || kc.available[pos] != fd.id)
            kc.available.insert(kc.available.begin() + static_cast<long>(pos), fd.id);
        kc.features.set(fd.id, fd.on);
        kc.defaults.set(fd.id, fd.on);
    };
    for (const auto& fd : d->feats)
        make_available(fd);

    // Deltas first (lower case), whatever their position, then the feature toggles.
    std::vector<std::string> toggles;
    std::vector<const delta_def*> applied;
    bool seen_preempt = false;
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::string& t = parts[i];
        if (t.empty())
            throw config_error(where, fmt::format("empty '+' term in kernel spec '{}'", spec));
        if (t.rfind("ext:", 0) == 0) {
            if (kc.ext)
                throw config_error(where, fmt::format("two ext policies in kernel spec '{}'; give "
                                                      "one",
                                                      spec));
            if (!kc.behaviour.sched_ext)
                throw config_error(where, fmt::format("kernel {} has no sched_ext (the ext class "
                                                      "is v6.12+): '{}' needs 6.12 or later",
                                                      kc.base, t));
            kc.ext = load_ext_policy(trim_spec_term(t.substr(4)), where);
            continue;
        }
        if (t.rfind("preempt=", 0) == 0) {
            apply_preempt_term(kc, t, spec, seen_preempt, where);
            continue;
        }
        if (std::none_of(t.begin(), t.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
            toggles.push_back(t);
            continue;
        }
        const delta_def* dd = find_delta(t);
        if (!dd) {
            std::string hint = nearest_name(t, delta_names());
            throw config_error(where, fmt::format("unknown kernel delta '{}'{}; see `schedlab "
                                                  "kernels` (features are upper case)",
                                                  t,
                                                  hint.empty()
                                                      ? ""
                                                      : fmt::format(" (did you mean '{}'?)",
                                                                    hint)));
        }
        for (const delta_def* other : applied)
            if (std::string(other->group) == dd->group)
                throw config_error(where, fmt::format("kernel deltas '{}' and '{}' are versions "
                                                      "of one patch set; give one",
                                                      other->name, dd->name));
        if (dd->cfs_only && kc.params.policy != fair_policy::cfs)
            throw config_error(where, fmt::format("kernel delta '{}' changes CFS code; kernel {} "
                                                  "runs EEVDF",
                                                  dd->name, kc.base));
        if (std::string(dd->name) == "tg_ratelimit" && kc.behaviour.tg_load_avg_ratelimit)
            throw config_error(where, fmt::format("kernel {} already rate-limits tg->load_avg "
                                                  "updates (merged in v6.7); drop +tg_ratelimit",
                                                  kc.base));
        if (const char* base = posted_base(dd->name); base && kc.base != base)
            kc.warnings.push_back(fmt::format("kernel delta '{}' was posted against {}, not {}: "
                                              "this models a port nobody posted (its source: {})",
                                              dd->name, base, kc.base, dd->source));
        applied.push_back(dd);
        kc.deltas.emplace_back(dd->name);
        for (const auto& fd : dd->feats)
            make_available(fd);
        if (dd->apply)
            dd->apply(kc.behaviour);
    }
    for (const auto& t : toggles)
        apply_one(kc, t, where);
    return kc;
}

void apply_features(kernel_config& kc, const std::string& list, const std::string& where)
{
    std::string token;
    int applied = 0;
    auto flush = [&] {
        if (!token.empty()) {
            apply_one(kc, token, where);
            ++applied;
        }
        token.clear();
    };
    for (char c : list) {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n')
            flush();
        else
            token += c;
    }
    flush();
    if (applied == 0)
        throw config_error(where, fmt::format("'{}' names no feature; give NAME or NO_NAME, comma "
                                              "separated (`schedlab features` lists them)",
                                              list));
}

} // namespace schedlab
