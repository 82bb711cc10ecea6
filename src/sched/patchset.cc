// SPDX-License-Identifier: GPL-2.0-only
/*
 * The patch-set registry (patchset.h): a new patch set is its file and its
 * line here.
 */
#include "sched/patchset.h"

namespace schedlab {

namespace {
constexpr const sched_patchset* sched_patchsets[] = {&shared_runq_patchset, &sis_short_patchset,
                                                     &stacking_patchset};
} // namespace

const sched_patchset* find_patchset(std::string_view group)
{
    for (const sched_patchset* ps : sched_patchsets)
        if (group == ps->group)
            return ps;
    return nullptr;
}

} // namespace schedlab
