// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Patch sets that hook into the scheduler (never-merged series the profiles
 * apply as kernel deltas, profiles.cc), registered by the name of their delta
 * group ("shared_runq"): each is one file defining one `sched_patchset` and
 * one line in sched_patchsets[] (patchset.cc). The kernel's constructor
 * collects the hooks of the patch sets its deltas apply, so a kernel without
 * them runs no patch-set code at the hook points; a hook that the patch's
 * feature bit switches at run time tests that bit itself.
 *
 * Only the hooks of the patch sets moved here so far exist: SHARED_RUNQ's
 * (v3/v4) tree hooks, boot-time state and feature switch, and SIS_SHORT v6's
 * two placement hooks, and the stacking series' COUPLE_WAKEE_FLIPS and
 * SCALE_WAKEUP_GRAN. SHARED_RUNQ's newly-idle pull, SIS_SHORT's dur_avg,
 * NI_RANDOM and the tg->load_avg ratelimit still sit at their call sites
 * behind their feature bits or kernel_behaviour.
 */
#include "sched/features.h"
#include "sim/time.h"

#include <string_view>

namespace schedlab {

class kernel;
struct rq;
struct sched_domain;
struct sched_entity;
struct task_struct;

struct sched_patchset {
    const char* group; ///< the delta group (kernel_delta_info::group)

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
};

extern const sched_patchset shared_runq_patchset; ///< fair_shared_runq.cc
extern const sched_patchset sis_short_patchset;   ///< fair_sis_short.cc
extern const sched_patchset stacking_patchset;    ///< fair_stacking.cc

/// The registered patch set of a delta group, or null if none hooks in.
const sched_patchset* find_patchset(std::string_view group);

} // namespace schedlab
