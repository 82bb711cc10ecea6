// SPDX-License-Identifier: GPL-2.0-only
#include "sched/features.h"

namespace schedlab {

const std::vector<sched_feat_info>& sched_feat_table()
{
    static const std::vector<sched_feat_info> table = {
#define SCHED_FEAT(name, modelled, help) {__SCHED_FEAT_##name, #name, modelled, help},
#include "sched/features.def"
#undef SCHED_FEAT
    };
    return table;
}

const sched_feat_info* sched_feat_lookup(std::string_view name)
{
    for (const auto& f : sched_feat_table())
        if (name == f.name)
            return &f;
    return nullptr;
}

} // namespace schedlab
