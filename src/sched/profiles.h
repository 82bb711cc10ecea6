// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Kernel profiles: which fair-class policy, which features (and their
 * defaults) and which tunables a given kernel version has. A profile
 * spec is "NAME" optionally followed by "+FEATURE" or "+NO_FEATURE" tokens
 * ("6.6+NO_RUN_TO_PARITY"); --features applies further toggles.
 */
#include "sched/cpuidle_menu.h"
#include "sched/features.h"
#include "sched/params.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

struct ext_policy_handle;

struct kernel_profile_info {
    std::string name;
    std::string description;
    bool main = true; ///< a release profile (a column of `schedlab features`); false: a tip base
};

/// A named patch set applied on top of a profile ("tip-2023-08+shared_runq_v3"): it makes
/// its features available with their defaults and changes kernel_behaviour. Lower case.
struct kernel_delta_info {
    std::string name;
    std::string description;
    std::string source;                  ///< where the patch set was posted
    std::vector<sched_feat_id> features; ///< features the delta provides
    std::string group; ///< the patch set ("shared_runq"); deltas of one group exclude each other
};

/// Version differences that are code changes rather than feature bits (docs/kernels.md).
/*
 * The kernel's preemption model: CONFIG_PREEMPT_DYNAMIC's `preempt=` boot choice (kernel
 * term `+preempt=none|voluntary|full|lazy`, docs/kernels.md). The default is `voluntary`, the
 * model the kernels the profiles stand for are built with: x86's own defconfig sets
 * CONFIG_PREEMPT_VOLUNTARY=y (arch/x86/configs/x86_64_defconfig, read at torvalds/linux
 * 34069d12e239 and 05909cd9a0c8), and so does Debian 12's kernel (PREEMPT_VOLUNTARY with
 * PREEMPT_DYNAMIC: data/reference/kernel-configs/debian12-linux-image-6.1.0-57-amd64.preempt.txt).
 * The Kconfig choice's own default, PREEMPT_NONE (kernel/Kconfig.preempt), is what a config
 * made from scratch gets; the shared traces' guest runs it (`+preempt=none`:
 * data/reference/kernel-configs/guest-6.18.44-fc.preempt.txt).
 * `lazy` is PREEMPT_LAZY (v6.13+; the `6.18` profile only): a preemptible kernel whose fair
 * class asks for a reschedule with TIF_NEED_RESCHED_LAZY (resched_curr_lazy()), acted on at
 * the return to user mode and promoted to TIF_NEED_RESCHED by the next tick (core.cc).
 * `instant` is not a kernel's: it is schedlab's behaviour before the models existed (a
 * reschedule acts at its resched_curr() or IPI, wherever the current task is, even before
 * a waker's own wakeup cost), kept as `+preempt=instant` to reproduce older schedules.
 */
enum class preempt_model : u8 {
    instant,   ///< schedlab's old default: no preemption model (every reschedule acts at once)
    none,      ///< PREEMPT_NONE: kernel code runs to its return to user mode (or blocks)
    voluntary, ///< PREEMPT_VOLUNTARY (the default): none plus might_resched() at the call's inner
               ///< points
    full,      ///< PREEMPT (full): preemptible kernel, a waker at its preempt_enable()
    lazy,      ///< PREEMPT_LAZY (v6.13+): full for every class but fair, whose reschedule
               ///< waits for the return to user mode or the next tick
};
const char* preempt_model_name(preempt_model m);

/*
 * reweight_entity() of a queued EEVDF entity (in the model: an autogroup's entity on the
 * root, whose weight follows calc_group_shares()). Not queued, every form scales the vlag
 * by old/new weight.
 */
enum class eevdf_reweight_form {
    /// v6.6.0: the vruntime stays; the deadline's distance from it scales by old/new weight.
    keep_vruntime,
    /// eab03c23c2a1 ("sched/eevdf: Fix vruntime adjustment on reweight") with 5068d84054b7
    /// (20231117080106.12890-1-s921975628@gmail.com, update_min_vruntime() after): the lag
    /// and the deadline scale about V; V read after a non-curr se left the tree, and
    /// update_curr() only for curr. Read in v6.8 (sndrzt/linux-6.8 f116ff45a, Ubuntu 6.8.0-31).
    v_after_dequeue,
    /// Tianchen Ding's two fixes of eab03c23c2a1 (Mar 2024, v6.9; in 6.6.87 and 6.12.10):
    /// update_curr() whoever curr is, V read before the dequeue, the lag clamped (entity_lag()).
    v_before_dequeue,
    /// 6.18.2: update_entity_lag() and the relative deadline, both scaled by old/new weight,
    /// then place_entity() (the lag inflation, the deadline restored relative).
    place_entity,
};

struct kernel_behaviour {
    /// The preemption model (`+preempt=`); voluntary by default (see preempt_model).
    preempt_model preempt = preempt_model::voluntary;
    /// v6.13+: the kernel has PREEMPT_LAZY (`+preempt=lazy` is accepted)
    bool has_preempt_lazy = false;
    bool old_wake_affine_stats = false;   ///< 5.15/6.1: an idle prev also counts ttwu_move_affine
    bool wf_current_cpu = false;          ///< 6.6: WF_CURRENT_CPU honoured by select_task_rq_fair
    bool wa_idle_sync_skips_delayed = false; ///< v6.15+: wake_affine_idle()'s sync test leaves sched-delayed tasks out of nr_running
    /// 6.18 (kernel/sched/ext_idle.c, read at 6.18.2): scx_select_cpu_dfl()'s LLC and NUMA
    /// preference (scx_idle_update_selcpu_topology()), an idle prev sharing the waker's LLC
    /// first in the sync block, prev tested only when p may run there; the
    /// scx_bpf_select_cpu_dfl() kfunc also from ops.enqueue(), with select_cpu_from_kfunc()'s
    /// one-CPU shortcut. false: 6.12.19's (ext.c)
    bool scx_select_cpu_6_18 = false;
    /// 5.15, 6.1 (89aafd67f28c, v5.15-rc1, until ae2ad293d6be, v6.5-rc2): select_idle_sibling()
    /// tests p->recent_used_cpu, already overwritten with prev, against p->cpus_ptr; false: the
    /// old recent_used_cpu it returns
    bool sis_recent_used_cpu_tests_prev = false;
    /// v6.8+ (8881e1639f1f, 22165f61d0c4): with sched_cluster_active, select_idle_cpu() scans
    /// target's cluster first and select_idle_sibling() returns an idle prev or recent_used_cpu
    /// at once only if it shares target's cluster (cpus_share_resources())
    bool sis_cluster_first = false;
    bool numa_imb_nr = true;              ///< 6.x imb_numa_nr; false: 5.15's "< 25% busy" rule
    bool newidle_5_15 = false;            ///< 5.15 newidle gate (migration_cost) and sticky decay
    bool cfs_tick_ideal_capped = true;    ///< 6.5 caps check_preempt_tick's ideal at sched_latency
    bool cfs_idle_entity_gran = true;     ///< 6.1+: place_entity()'s sleeper threshold and sched_slice()'s floor for a SCHED_IDLE entity; false: 5.15 (none)
    bool ttwu_queue_idle_cpu = true;      ///< 6.1+ ttwu_queue_cond(): an idle CPU of the waker's LLC takes the wake list; false: 5.15's (on_cpu wakees only)
    /// 5.15, 6.1 (126c2092e5c8, v5.8, until d6962c4fe8f9, v6.2-rc1): sched_ttwu_pending() clears
    /// rq->ttwu_pending before rq_lock_irqsave(), so until its first enqueue other CPUs'
    /// idle_cpu() sees the CPU idle; false: cleared after the enqueues
    bool ttwu_pending_clear_early = false;
    /// v6.0+ (792b9f65a568): should_we_balance() returns 0 for a newly idle CPU with a task
    /// or a queued wakeup; false: 5.15's 1 for every newly-idle call
    bool swb_newidle_bails_out = true;
    /// v6.10+ (c829d6818b60): sched_balance_newidle()'s loop breaks on `pulled_task ||
    /// !continue_balancing`, so a task or wakeup that came during a domain's pass ends it
    /// at the next domain's should_we_balance() bail-out (that domain's lb_count and
    /// out_balanced); false: the break on `nr_running > 0 || ttwu_pending` after the pass
    bool newidle_break_on_swb = false;
    bool swb_idle_core_first = false;     ///< 6.6 should_we_balance prefers a fully idle core (b1bfeab9b002)
    bool swb_first_idle_smt_only = false; ///< v6.6-rc: only the first idle SMT sibling balances (Keisuke Nishimura's fix of b1bfeab9b002)
    bool sibling_imbalance = false;       ///< 6.6 sibling_imbalance() (7ff1693236f5): prefer sibling by tasks per core, none for a busy CPU
    bool smt_balance_fix = false;         ///< v6.6-rc2 450e749707bc: group_smt_balance with an idle CPU picked as has_spare; sibling_imbalance()'s "<= 1"
    bool smt_balance = false;             ///< 6.6 group_smt_balance: an idle CPU pulls from a busy SMT core (fee1759e4f04)
    bool fully_busy_keeps_smt = false;    ///< 6.5: a fully busy SMT group stays busiest on an avg_load tie (5fd6d7f43958)
    bool runnable_boost = false;          ///< 6.5: migrate_util compares max(util, runnable) ('runnable boosting')
    /// detach_tasks()' migrate_util bound relaxed as migrate_load's, shr_bound(util,
    /// nr_balance_failed): in 6.12.10 and 6.18.2, not in 5.15.0, 6.1-rc7, 6.5 or 6.6.87
    bool util_shr_bound = false;
    /// b0defa7ae03e (v6.0): detach_tasks() goes past loop_max while every task seen was pinned
    /// away, and load_balance() repeats after LBF_NEED_BREAK only while env.loop <
    /// busiest->nr_running; reverted by 2feab2492deb (v6.10-rc7, in 6.6.87's stable tree)
    bool detach_pinned_retry = true;
    bool config_preemption = true;        ///< CONFIG_PREEMPTION: newidle detaches one task at most
    bool tg_load_avg_ratelimit = false;   ///< v6.7+ (tip afc1996859a2): tg->load_avg at most once per ms
    bool util_est_fastup_always = false;  ///< v6.8+: UTIL_EST_FASTUP's behaviour without the feature bit
    bool pkg_domain_name = false;         ///< v6.7+ (f577cd57bfaa): the package level is "PKG", not "DIE"
    /// <= v6.11: the root rt_rq is throttled by def_rt_bandwidth (sched_rt_runtime_us per
    /// sched_rt_period_us); v6.12 left that to RT groups (5f6bd380c7bd) and gave fair tasks
    /// the fair server (a dl_server) instead.
    bool rt_bandwidth_default = true;
    bool fair_server = false;             ///< v6.12+: the fair server (not modelled, docs/classes.md)
    /// v6.13, in 6.12.y (66951e4860d3, 20250110115720.GA17405@noisy.programming.kicks-ass.net):
    /// update_cfs_group() keeps an empty group's entity weight (for DELAY_DEQUEUE).
    bool empty_group_keeps_weight = false;
    /// 5.15-6.5 (and their tip bases): update_cfs_group() calls reweight_entity() even when
    /// the shares did not move; from "sched/eevdf: Fix vruntime adjustment on reweight"
    /// (eab03c23c2a1, v6.7; its v2 20231115033647.80785-2-wuyun.abel@bytedance.com; in
    /// 6.6.87) only when se->load.weight != shares.
    bool reweight_unchanged_shares = false;
    /// v6.7+ (612f769edd06): rd->rto_mask follows rt_rq->pushable_tasks; before, a CPU is
    /// RT-overloaded with two queued RT tasks one of which may migrate (update_rt_migration).
    bool rt_overload_pushable = false;
    /// v6.17+ (read at 6.18.2, gfunkmonk/linux-6.18.2 57dc26c98e5e): RUN_TO_PARITY by
    /// se->vprot (set_protect_slice() at the pick, protect_slice() in pick_eevdf()), and
    /// update_curr() reschedules whenever curr is no longer protected, not only at its deadline.
    bool eevdf_protect_slice = false;
    /// 6.18 (same tree): yield_task_fair() of an eligible curr forfeits its vruntime up to
    /// its deadline before the deadline moves one slice on; an ineligible one keeps both.
    bool yield_forfeits_vruntime = false;
    /// v6.14+ (read at 6.18.2): the load balancer's and find_idlest_group()'s task counts
    /// are rq->cfs.h_nr_runnable, which leaves sched_delayed tasks out.
    bool lb_counts_runnable = false;
    /// reweight_entity() of a queued entity (eevdf_reweight_form).
    eevdf_reweight_form eevdf_reweight = eevdf_reweight_form::keep_vruntime;
    /// v6.12+ (f0e1a0643a59): CONFIG_SCHED_CLASS_EXT, the ext class (`+ext:POLICY`).
    bool sched_ext = false;
    // SHARED_RUNQ (David Vernet, 2023), set by the shared_runq_* deltas (docs/kernels.md).
    int shared_runq_version = 0;          ///< 0 = patch absent, 3 or 4
    bool shared_runq_noopt = false;       ///< Gautham's v3 "noopt": v3's newidle gate change reverted
    int shared_runq_shard_size = 6;       ///< SHARED_RUNQ_SHARD_SZ
    /// The menu cpuidle governor's form (cpuidle_menu.h): the next timer first up to v6.5,
    /// the typical interval first from v6.6 (5484e31bbbff), v6.15's reworks in 6.18.
    menu_version menu = menu_version::typical_first;
};

/// The resolved kernel an arm runs: everything a simulation needs to know.
struct kernel_config {
    std::string spec;               ///< as given, e.g. "6.6+NO_RUN_TO_PARITY"
    std::string base;               ///< profile name, e.g. "6.6"
    std::vector<std::string> deltas; ///< named patch sets applied, in spec order
    sched_params params;
    kernel_behaviour behaviour;
    sched_features features;        ///< effective feature bits
    sched_features defaults;        ///< the profile's defaults with the deltas' applied
    std::vector<sched_feat_id> available; ///< features this kernel has, features.def order
    std::vector<std::string> warnings;    ///< e.g. toggled features that are not modelled
    /// The ext policy of a "+ext:NAME" term (ext_load.h), or null: no ext class.
    std::shared_ptr<const ext_policy_handle> ext;

    bool has_feature(sched_feat_id f) const;
    /// Like /sys/kernel/debug/sched/features: "PLACE_LAG NO_NEXT_BUDDY ...".
    std::string features_string() const;
    /// The deltas, then the toggles that differ from the defaults (profile + deltas),
    /// "+"-joined ("" if none): "shared_runq_v3+NO_SHARED_RUNQ".
    std::string delta_string() const;
};

const std::vector<kernel_profile_info>& kernel_profiles();
const std::vector<kernel_delta_info>& kernel_deltas();

/// Resolves "NAME[+delta...][+FEAT...][+ext:POLICY]" (deltas are lower case and applied
/// before the toggles, whatever their position; ext:POLICY loads an ext policy, 6.12+). Throws config_error naming `where` for an
/// unknown profile or feature, with a did-you-mean hint.
kernel_config make_kernel_config(const std::string& spec, const std::string& where = "--kernel");

/// Applies a comma- or space-separated list of "NAME" / "NO_NAME" toggles, as
/// `echo NO_NAME > /sys/kernel/debug/sched/features` would. Throws config_error.
void apply_features(kernel_config& kc, const std::string& list, const std::string& where);

/// The profile default of a feature (false if the kernel lacks it; deltas not included).
bool profile_default(const std::string& base, sched_feat_id f);

} // namespace schedlab
