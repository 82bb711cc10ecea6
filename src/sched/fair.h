// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The fair class's functions that are not members of class kernel: free
 * functions of the kernel's names taking the kernel instance first, as the rt
 * class's (rt.h; docs/architecture.md "Where a new class goes"). The kernel's
 * fair.c keeps them static; here each file of the class declares its part.
 * Load balancing (fair_balance.cc) is declared in fair_balance.h, SHARED_RUNQ
 * (fair_shared_runq.cc) in fair_shared_runq.h.
 */
#include "sched/sched.h"

namespace schedlab {

class kernel;
struct sched_domain;
struct sched_group;
struct sg_lb_stats;

/* ---- fair_eevdf.cc: EEVDF (6.6 on) ---- */
void avg_vruntime_add(cfs_rq& cfs, const sched_entity& se);
void avg_vruntime_sub(cfs_rq& cfs, const sched_entity& se);
u64 avg_vruntime(const cfs_rq& cfs);
bool entity_eligible(const cfs_rq& cfs, const sched_entity& se);
void update_entity_lag(kernel& k, cfs_rq& cfs, sched_entity& se);
void place_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
void update_deadline(kernel& k, cfs_rq& cfs, sched_entity& se);
sched_entity* pick_eevdf(kernel& k, cfs_rq& cfs);
/// The fair tasks of r the balancer counts: rq->cfs.h_nr_running, or from 6.14 (6.18
/// profile) rq->cfs.h_nr_runnable, without the sched_delayed ones.
unsigned cfs_h_nr_counted(const kernel& k, const rq& r);
/// kernel: cfs_rq->h_nr_running - cfs_rq->h_nr_delayed (6.12.10's PELT, se_update_runnable()),
/// cfs_rq->h_nr_runnable (v6.13+): the queued tasks below cfs that are not sched_delayed.
inline unsigned cfs_h_nr_runnable(const cfs_rq& cfs)
{
    return cfs.h_nr_running - cfs.h_nr_delayed;
}
/// set_delayed() / clear_delayed() and the h_nr_delayed of enqueue_task_fair() /
/// dequeue_entities(): a sched_delayed task counted or uncounted on its cfs_rq and the root.
void account_h_nr_delayed(rq& r, cfs_rq& cfs, int delta);
void set_protect_slice(kernel& k, cfs_rq& cfs, sched_entity& se);
bool protect_slice(const sched_entity& se);
void cancel_protect_slice(sched_entity& se);
void check_preempt_wakeup_eevdf(kernel& k, rq& r, task_struct& p, int wake_flags);
sched_entity* pick_next_entity_eevdf(kernel& k, cfs_rq& cfs);
void enqueue_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
bool delay_dequeue_eevdf(kernel& k, rq& r, task_struct& p);
/// reweight_entity() of an EEVDF entity, the profile's form (eevdf_reweight_form): before
/// the weight changes (se queued; returns V) and after it (old_weight: the weight before).
u64 reweight_dequeue_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se);
void reweight_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se, u32 old_weight,
                           u64 avruntime);

/* ---- fair_cfs.cc: CFS (<= 6.5) ---- */
u64 sched_slice(const kernel& k, const cfs_rq& cfs, const sched_entity& se);
u64 sched_vslice(const kernel& k, const cfs_rq& cfs, const sched_entity& se);
void place_entity_cfs(kernel& k, cfs_rq& cfs, sched_entity& se, bool initial);
u64 wakeup_gran(const kernel& k, const sched_entity& curr, const sched_entity& se);
int wakeup_preempt_entity(const kernel& k, const sched_entity& curr, const sched_entity& se);
void check_preempt_tick(kernel& k, cfs_rq& cfs, sched_entity& curr);
sched_entity* pick_next_entity_cfs(kernel& k, cfs_rq& cfs, sched_entity* curr);
void check_preempt_wakeup_cfs(kernel& k, rq& r, task_struct& p, int wake_flags);
void enqueue_entity_cfs(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);

/* ---- fair_select.cc: wakeup placement ---- */
u64 jiffies(const kernel& k);
bool available_idle_cpu(const kernel& k, int cpu);
bool sched_idle_cpu(const kernel& k, int cpu);
void record_wakee(kernel& k, task_struct& p);
int wake_wide(kernel& k, task_struct& p);
int wake_affine_idle(kernel& k, int this_cpu, int prev_cpu, int sync);
int wake_affine_weight(kernel& k, const sched_domain& sd, task_struct& p, int this_cpu,
                       int prev_cpu, int sync);
int wake_affine(kernel& k, sched_domain& sd, task_struct& p, int this_cpu, int prev_cpu, int sync);
int __select_idle_cpu(kernel& k, int cpu, task_struct& p);
void update_idle_core(kernel& k, rq& r);
int select_idle_core(kernel& k, task_struct& p, int core, cpumask& cpus, int& idle_cpu_out);
int select_idle_smt(kernel& k, task_struct& p, int target);
int select_idle_cpu(kernel& k, task_struct& p, sched_domain& sd, bool has_idle_core, int target);
int select_idle_sibling(kernel& k, task_struct& p, int prev, int target);
void update_sg_wakeup_stats(kernel& k, const sched_domain& sd, const sched_group& group,
                            sg_lb_stats& sgs, task_struct& p);
const sched_group* find_idlest_group(kernel& k, const sched_domain& sd, task_struct& p,
                                     int this_cpu);
int find_idlest_group_cpu(kernel& k, const sched_group& group, task_struct& p, int this_cpu);
int find_idlest_cpu(kernel& k, sched_domain* sd, task_struct& p, int cpu, int prev_cpu,
                    u32 sd_flag);
int select_task_rq_fair(kernel& k, task_struct& p, int prev_cpu, int wake_flags);

/* ---- fair_sis_short.cc: SIS_SHORT v6, a patch set (patchset.h) ---- */
bool is_short_task(const kernel& k, const task_struct& p);
int sis_short_wake_affine(kernel& k, int this_cpu);
bool sis_short_select_idle_cpu(kernel& k, task_struct& p, const sched_domain& sd,
                               bool has_idle_core, int target, int nr);

/* ---- fair_pelt.cc: PELT readers and updates ---- */
unsigned long capacity_of(const kernel& k, int cpu);
unsigned long cpu_load(const rq& r);
unsigned long cpu_runnable(const rq& r);
unsigned long cpu_util_cfs(const kernel& k, int cpu);
unsigned long cpu_util_cfs_boost(const kernel& k, int cpu);
unsigned long cpu_load_without(kernel& k, const rq& r, const task_struct& p);
unsigned long cpu_runnable_without(const rq& r, const task_struct& p);
unsigned long cpu_util_without(const kernel& k, int cpu, const task_struct& p);
unsigned long task_h_load(kernel& k, const task_struct& p);
void update_cfs_rq_h_load(kernel& k, cfs_rq& gcfs);
long calc_group_shares(const cfs_rq& gcfs);
void update_load_avg_tg_se(cfs_rq& gcfs, int flags);
void se_update_runnable(sched_entity& se);
void update_cfs_group_se(kernel& k, sched_entity& se, int cpu);
unsigned long task_util_est(const task_struct& p);
void update_tg_load_avg(kernel& k, cfs_rq& cfs, int cpu, tg_write_site site = TG_WRITE_DECAY);
void update_cfs_group(kernel& k, cfs_rq& cfs, int cpu);
void update_load_avg(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
void update_blocked_averages(kernel& k, int cpu);
void remove_entity_load_avg(kernel& k, sched_entity& se);
void post_init_entity_util_avg(kernel& k, task_struct& p);

/* ---- fair.cc: the class hooks (fair_sched_class) and the entity level ---- */
u64 calc_delta_fair(u64 delta, const sched_entity& se);
/// calc_delta_fair() of an entity whose load.weight is `weight`.
u64 calc_delta_weight(u64 delta, u32 weight);
sched_entity* __pick_first_entity(const cfs_rq& cfs);
void __enqueue_entity(kernel& k, cfs_rq& cfs, sched_entity& se);
void __dequeue_entity(kernel& k, cfs_rq& cfs, sched_entity& se);
void update_min_vruntime(kernel& k, cfs_rq& cfs);
void update_curr(kernel& k, cfs_rq& cfs);
void clear_buddies(cfs_rq& cfs, sched_entity& se);
void account_entity_enqueue(cfs_rq& cfs, sched_entity& se);
void account_entity_dequeue(cfs_rq& cfs, sched_entity& se);
void enqueue_entity(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
void dequeue_entity(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
void set_next_entity(kernel& k, cfs_rq& cfs, sched_entity& se);
void put_prev_entity(kernel& k, cfs_rq& cfs, sched_entity& prev);
void put_prev_task_fair(kernel& k, rq& r, task_struct& prev);
void set_next_buddy(cfs_rq& cfs, sched_entity& se);
void set_next_group_entity(kernel& k, rq& r, cfs_rq& gcfs);
void put_prev_group_entity(kernel& k, rq& r);
sched_entity* pick_next_entity(kernel& k, cfs_rq& cfs, sched_entity* curr);
void enqueue_task_fair(kernel& k, rq& r, task_struct& p, int flags);
void requeue_delayed_entity(kernel& k, cfs_rq& cfs, sched_entity& se);
/// 6.12+: a delayed group entity picked on cfs leaves it (fair.cc).
void dequeue_delayed_group_entity(kernel& k, cfs_rq& cfs, sched_entity& se);
/// 6.12+ dequeue_entity() of a group entity whose group emptied: true if it stays
/// queued, sched_delayed (fair_eevdf.cc).
bool delay_group_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se);
bool dequeue_task_fair(kernel& k, rq& r, task_struct& p, int flags);
void block_delayed_task(kernel& k, rq& r, task_struct& p);
task_struct* pick_next_task_fair(kernel& k, rq& r, task_struct* prev);
void check_preempt_wakeup_fair(kernel& k, rq& r, task_struct& p, int wake_flags);
void migrate_task_rq_fair(kernel& k, task_struct& p, int new_cpu);
void task_tick_fair(kernel& k, rq& r, task_struct& curr);
void task_fork_fair(kernel& k, task_struct& p);
void yield_task_fair(kernel& k, rq& r);

} // namespace schedlab
