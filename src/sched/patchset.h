// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Patch sets that hook into the scheduler, registered by name: each is one
 * file defining one `sched_patchset` and one line in sched_patchsets[]
 * (patchset.cc). A patch set is registered under the name of the kernel
 * delta group that applies it (profiles.cc: "shared_runq" for
 * +shared_runq_v3), and a patch that a later kernel merged says which
 * kernels have it without a delta (`merged`: NI_RANDOM in 6.18.5, the
 * tg->load_avg ratelimit from v6.7). The kernel's constructor collects the
 * hooks of the patch sets its kernel applies (patchset_hooks), so a kernel
 * without them runs no patch-set code at the hook points; a hook that the
 * patch's feature bit switches at run time tests that bit itself.
 *
 * model: the kernel has no such registry: each patch edits fair.c in place,
 * under its feature bit or unconditionally. A hook here is called where the
 * patch's code sits in the function it edits (the field's comment names the
 * place), and does what that code does.
 *
 * Registered: SHARED_RUNQ (v3/v4: tree hooks, boot-time state, feature
 * switch, newly-idle pull and gates), SIS_SHORT v6 (two placement hooks),
 * the stacking series (COUPLE_WAKEE_FLIPS, SCALE_WAKEUP_GRAN), NI_RANDOM and
 * the tg->load_avg ratelimit. SIS_SHORT's dur_avg is still kept by
 * dequeue_task_fair() in every kernel (it is cheap and read only by the hooks).
 */
#include "sched/features.h"
#include "sim/time.h"

#include <span>
#include <string_view>
#include <vector>

namespace schedlab {

class kernel;
struct cfs_rq;
struct kernel_config;
struct rq;
struct sched_domain;
struct sched_entity;
struct task_struct;

struct sched_patchset {
    const char* group; ///< the delta group (kernel_delta_info::group), or the patch's name
    /// Kernels that have the patch merged, with no delta (optional: only deltas apply it).
    bool (*merged)(const kernel_config& kc);

    /// The kernel's constructor, once the runqueues and domains exist (optional).
    void (*init)(kernel& k);
    /// __enqueue_entity(), after p's entity entered the timeline of rq (optional).
    void (*enqueue_entity)(kernel& k, rq& rq, task_struct& p);
    /// __dequeue_entity(), after p's entity left the timeline (optional).
    void (*dequeue_entity)(kernel& k, task_struct& p);
    /// A feature switched at run time (/sys/kernel/debug/sched/features) (optional).
    void (*feat_set)(kernel& k, sched_feat_id f, bool was, bool on);
    /// wake_affine_idle(), when none of its own choices applies: a CPU, or -1 (optional).
    int (*wake_affine_idle)(kernel& k, int this_cpu);
    /// select_idle_cpu(), once SIS_UTIL set the scan depth nr: true to return target
    /// without a scan (optional).
    bool (*select_idle_cpu)(kernel& k, task_struct& p, const sched_domain& sd,
                            bool has_idle_core, int target, int nr);
    /// record_wakee(), when the current task wakes another wakee than last time (optional).
    void (*record_wakee)(kernel& k, task_struct& waker, task_struct& wakee);
    /// wake_wide(): 0 or 1 in place of the kernel's rule, or -1 to keep it (optional).
    int (*wake_wide)(kernel& k, u32 master, u32 slave, u32 factor);
    /// wakeup_gran() (CFS): the wakeup granularity for curr, from gran (optional).
    u64 (*wakeup_gran)(const kernel& k, const sched_entity& curr, u64 gran);
    /// sched_balance_newidle() on entry, before idle_stamp and every gate: nonzero is
    /// returned at once (a pull, or -1 for a popped task that could not move) (optional).
    int (*newidle_enter)(kernel& k, rq& this_rq);
    /// sched_balance_newidle(): the domain whose max_newidle_lb_cost gates the whole
    /// pass, from `sd`, this CPU's lowest (optional).
    sched_domain* (*newidle_gate_domain)(kernel& k, int this_cpu, sched_domain* sd);
    /// sched_balance_newidle(), once the root domain is overloaded, before the cost
    /// gate: 1 pulled a task (no domain is balanced), -1 to return 0 at once, 0 to go
    /// on (optional).
    int (*newidle_overloaded)(kernel& k, rq& this_rq);
    /// sched_balance_newidle()'s domain loop: true to skip sd (optional).
    bool (*newidle_skip_domain)(kernel& k, const sched_domain& sd);
    /// sched_balance_newidle(), before balancing sd: the weight a success counts with,
    /// or 0 to skip sd (optional; without it every domain is balanced with weight 1).
    u32 (*newidle_domain)(kernel& k, rq& this_rq, sched_domain& sd);
    /// sched_balance_newidle(), after balancing sd: `success` is the weight if a task
    /// was pulled, else 0 (optional).
    void (*newidle_balanced)(kernel& k, sched_domain& sd, u32 success);
    /// update_tg_load_avg(), on entry for a cfs_rq of a group: true to skip the
    /// update (optional).
    bool (*update_tg_load_avg)(kernel& k, const cfs_rq& cfs);
};

extern const sched_patchset shared_runq_patchset; ///< fair_shared_runq.cc
extern const sched_patchset sis_short_patchset;   ///< fair_sis_short.cc
extern const sched_patchset stacking_patchset;    ///< fair_stacking.cc
extern const sched_patchset ni_random_patchset;   ///< fair_ni_random.cc
extern const sched_patchset tg_ratelimit_patchset; ///< fair_tg_ratelimit.cc

/// The registered patch set of a delta group, or null if none hooks in.
const sched_patchset* find_patchset(std::string_view group);
/// Every registered patch set, in registration order.
std::span<const sched_patchset* const> sched_patchset_registry();

/// The hooks of the patch sets one kernel applies, by hook point, in the order the
/// patch sets were added (kernel::register_patchsets()).
struct patchset_hooks {
    std::vector<const sched_patchset*> sets;
    std::vector<decltype(sched_patchset::enqueue_entity)> enqueue_entity;
    std::vector<decltype(sched_patchset::dequeue_entity)> dequeue_entity;
    std::vector<decltype(sched_patchset::feat_set)> feat_set;
    std::vector<decltype(sched_patchset::wake_affine_idle)> wake_affine_idle;
    std::vector<decltype(sched_patchset::select_idle_cpu)> select_idle_cpu;
    std::vector<decltype(sched_patchset::record_wakee)> record_wakee;
    std::vector<decltype(sched_patchset::wake_wide)> wake_wide;
    std::vector<decltype(sched_patchset::wakeup_gran)> wakeup_gran;
    std::vector<decltype(sched_patchset::newidle_enter)> newidle_enter;
    std::vector<decltype(sched_patchset::newidle_gate_domain)> newidle_gate_domain;
    std::vector<decltype(sched_patchset::newidle_overloaded)> newidle_overloaded;
    std::vector<decltype(sched_patchset::newidle_skip_domain)> newidle_skip_domain;
    std::vector<decltype(sched_patchset::newidle_domain)> newidle_domain;
    std::vector<decltype(sched_patchset::newidle_balanced)> newidle_balanced;
    std::vector<decltype(sched_patchset::update_tg_load_avg)> update_tg_load_avg;

    /// Adds ps's hooks (false, and nothing added, if ps was added already).
    bool add(const sched_patchset& ps);
    bool has(const sched_patchset& ps) const;
};

} // namespace schedlab
