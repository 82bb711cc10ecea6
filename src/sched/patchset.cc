// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patch-set registry (patchset.h): a new patch set is its file and its
 * line here.
 */
#include "sched/patchset.h"

#include <algorithm>

namespace schedlab {

namespace {
constexpr const sched_patchset* sched_patchsets[] = {
    &shared_runq_patchset, &sis_short_patchset, &stacking_patchset, &ni_random_patchset,
    &tg_ratelimit_patchset};

template <typename H> void add_hook(std::vector<H>& v, H h)
{
    if (h)
        v.push_back(h);
}
} // namespace

const sched_patchset* find_patchset(std::string_view group)
{
    for (const sched_patchset* ps : sched_patchsets)
        if (group == ps->group)
            return ps;
    return nullptr;
}

std::span<const sched_patchset* const> sched_patchset_registry() { return sched_patchsets; }

bool patchset_hooks::has(const sched_patchset& ps) const
{
    return std::find(sets.begin(), sets.end(), &ps) != sets.end();
}

bool patchset_hooks::add(const sched_patchset& ps)
{
    if (has(ps))
        return false;
    sets.push_back(&ps);
    add_hook(enqueue_entity, ps.enqueue_entity);
    add_hook(dequeue_entity, ps.dequeue_entity);
    add_hook(feat_set, ps.feat_set);
    add_hook(wake_affine_idle, ps.wake_affine_idle);
    add_hook(select_idle_cpu, ps.select_idle_cpu);
    add_hook(record_wakee, ps.record_wakee);
    add_hook(wake_wide, ps.wake_wide);
    add_hook(wakeup_gran, ps.wakeup_gran);
    add_hook(newidle_enter, ps.newidle_enter);
    add_hook(newidle_gate_domain, ps.newidle_gate_domain);
    add_hook(newidle_overloaded, ps.newidle_overloaded);
    add_hook(newidle_skip_domain, ps.newidle_skip_domain);
    add_hook(newidle_domain, ps.newidle_domain);
    add_hook(newidle_balanced, ps.newidle_balanced);
    add_hook(update_tg_load_avg, ps.update_tg_load_avg);
    return true;
}

} // namespace schedlab
