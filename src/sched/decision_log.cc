// SPDX-License-Identifier: GPL-2.0-only
/* The decision log (decision_log.h). */
#include "sched/decision_log.h"

#include <utility>

namespace schedlab {

void decision_log::log(sim_time ts, int cpu, const char* what, std::string text)
{
    if (sink_)
        sink_->decision({ts, cpu, what, std::move(text)});
}

std::string decision_log::last_placement() const
{
    std::string s = select_branch_ ? select_branch_ : "";
    if (sis_branch_) {
        s += "; select_idle_sibling: ";
        s += sis_branch_;
    }
    return s;
}

} // namespace schedlab
