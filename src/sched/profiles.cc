// SPDX-License-Identifier: GPL-2.0-only
#include "sched/profiles.h"

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
};

kernel_behaviour behaviour_of(const char* version)
{
    const std::string v = version;
    kernel_behaviour b;
    b.old_wake_affine_stats = v == "5.15" || v == "6.1";
    b.wf_current_cpu = v == "6.6";
    b.numa_imb_nr = v != "5.15";
    b.newidle_5_15 = v == "5.15";
    b.cfs_tick_ideal_capped = v == "6.5";
    b.swb_idle_core_first = v == "6.6";
    b.config_preemption = true;
    return b;
}

#define F(name, on) feat_default{__SCHED_FEAT_##name, on}

/*
 * Feature lists per kernel, read from each version's kernel/sched/features.h
 * (kernel-model.md 0.1 and 1.3). SIS_PROP on / SIS_UTIL absent in vanilla
 * 5.15 is kernel-model.md's [unverified] reading; SIS_UTIL arrived in v6.0.
 */
const std::vector<profile_def>& profile_defs()
{
    static const std::vector<profile_def> defs = {
        {"6.6", "v6.6: first EEVDF release (pick_eevdf, lag placement, RUN_TO_PARITY)",
         fair_policy::eevdf,
         {F(PLACE_LAG, true), F(PLACE_DEADLINE_INITIAL, true), F(RUN_TO_PARITY, true),
          F(NEXT_BUDDY, false), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
          F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
          F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, false), F(SIS_UTIL, true),
          F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
          F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
          F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
          F(HZ_BW, true)}},
        {"6.5", "v6.5: the last CFS release (vruntime, buddies, wakeup granularity)",
         fair_policy::cfs,
         {F(GENTLE_FAIR_SLEEPERS, true), F(START_DEBIT, true), F(NEXT_BUDDY, false),
          F(LAST_BUDDY, true), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
          F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
          F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, false), F(SIS_UTIL, true),
          F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
          F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
          F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
          F(ALT_PERIOD, true), F(BASE_SLICE, true), F(HZ_BW, true)}},
        {"6.1", "v6.1: CFS with SIS_UTIL (SIS_PROP off)", fair_policy::cfs,
         {F(GENTLE_FAIR_SLEEPERS, true), F(START_DEBIT, true), F(NEXT_BUDDY, false),
          F(LAST_BUDDY, true), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
          F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
          F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, false), F(SIS_UTIL, true),
          F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
          F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
          F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
          F(ALT_PERIOD, true), F(BASE_SLICE, true)}},
        {"5.15", "v5.15: CFS with SIS_PROP (no SIS_UTIL; 5.15 newidle gate)", fair_policy::cfs,
         {F(GENTLE_FAIR_SLEEPERS, true), F(START_DEBIT, true), F(NEXT_BUDDY, false),
          F(LAST_BUDDY, true), F(CACHE_HOT_BUDDY, true), F(WAKEUP_PREEMPTION, true),
          F(HRTICK, false), F(HRTICK_DL, false), F(DOUBLE_TICK, false),
          F(NONTASK_CAPACITY, true), F(TTWU_QUEUE, true), F(SIS_PROP, true),
          F(WARN_DOUBLE_CLOCK, false), F(RT_PUSH_IPI, true), F(RT_RUNTIME_SHARE, false),
          F(LB_MIN, false), F(ATTACH_AGE_LOAD, true), F(WA_IDLE, true), F(WA_WEIGHT, true),
          F(WA_BIAS, true), F(UTIL_EST, true), F(UTIL_EST_FASTUP, true), F(LATENCY_WARN, false),
          F(ALT_PERIOD, true), F(BASE_SLICE, true)}},
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
    if (!kc.has_feature(fi->id))
        throw config_error(where, fmt::format("sched feature {} does not exist in kernel {}; see "
                                              "`schedlab features`",
                                              fi->name, kc.base));
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
    for (sched_feat_id f : available) {
        if (features.test(f) == profile_default(base, f))
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
            v.push_back({d.name, d.description});
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

kernel_config make_kernel_config(const std::string& spec, const std::string& where)
{
    std::vector<std::string> parts;
    std::stringstream ss(spec);
    for (std::string part; std::getline(ss, part, '+');)
        parts.push_back(part);
    if (parts.empty() || parts[0].empty())
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
    kc.behaviour = behaviour_of(d->name);
    for (const auto& fd : d->feats) {
        std::size_t pos = 0;
        while (pos < kc.available.size() && kc.available[pos] < fd.id)
            ++pos;
        kc.available.insert(kc.available.begin() + static_cast<long>(pos), fd.id);
        kc.features.set(fd.id, fd.on);
    }
    for (std::size_t i = 1; i < parts.size(); ++i) {
        if (parts[i].empty())
            throw config_error(where, fmt::format("empty '+' term in kernel spec '{}'", spec));
        apply_one(kc, parts[i], where);
    }
    return kc;
}

void apply_features(kernel_config& kc, const std::string& list, const std::string& where)
{
    std::string token;
    auto flush = [&] {
        if (!token.empty())
            apply_one(kc, token, where);
        token.clear();
    };
    for (char c : list) {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n')
            flush();
        else
            token += c;
    }
    flush();
}

} // namespace schedlab
