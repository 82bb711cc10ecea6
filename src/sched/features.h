// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Per-simulation scheduler feature bits, the kernel's sched_feat() idea
 * without the global: each simulation carries its own sched_features value.
 */
#include "sim/time.h"

#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace schedlab {

enum sched_feat_id : int {
#define SCHED_FEAT(name, modelled, help) __SCHED_FEAT_##name,
#include "sched/features.def"
#undef SCHED_FEAT
    __SCHED_FEAT_NR,
};

struct sched_feat_info {
    sched_feat_id id;
    const char* name;
    bool modelled;
    const char* help;
};

/// Every feature schedlab knows, in features.def order.
const std::vector<sched_feat_info>& sched_feat_table();
/// Looks a name up (exact kernel spelling, upper case); nullptr if unknown.
const sched_feat_info* sched_feat_lookup(std::string_view name);

class sched_features {
public:
    bool test(sched_feat_id f) const { return bits_.test(f); }
    void set(sched_feat_id f, bool on) { bits_.set(f, on); }
    friend bool operator==(const sched_features&, const sched_features&) = default;

private:
    std::bitset<__SCHED_FEAT_NR> bits_;
};

} // namespace schedlab

/// sched_feat(PLACE_LAG), read from the rq's kernel as in kernel/sched/sched.h.
#define sched_feat(x) (feats().test(::schedlab::__SCHED_FEAT_##x))
/// sched_feat(x) in a function of a class's file, which reaches its kernel as `k`.
#define sched_feat_of(k, x) ((k).feats().test(::schedlab::__SCHED_FEAT_##x))
