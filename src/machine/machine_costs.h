// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A machine's costs with their sources: setting one by name with its
 * reason, the per-preset values (preset_costs.cc), the costs this host's
 * sysfs tells (cache sizes, cpuidle states) and the `schedlab costs`
 * listing. The declarations (names, defaults, units, meanings and the
 * default's source) are in costs.def.
 */
#include "machine/machine.h"

#include <string>
#include <utility>
#include <vector>

namespace schedlab {

/// The costs.def entry of a cost, or nullptr.
const cost_info* find_cost(const std::string& name);

/// Every cost name, in costs.def order (for did-you-mean hints).
std::vector<std::string> cost_names();

/*
 * Checks a value for a cost: an unknown name (with a did-you-mean hint), a
 * negative value, a percentage above 100 or a zero size / bandwidth /
 * SMT share is a config_error naming `where`.
 */
void check_cost_value(const std::string& name, long long value, const std::string& where);

/// A --cost NAME=VALUE of a run: set_cost(), then check_cost_value() (sizes, bandwidths and
/// smt_pct must be positive there, as in a machine file).
void apply_cost_override(cost_params& c, const std::string& assignment, const std::string& where);

/// config_error(where, ...) when two of a run's --cost NAME=VALUE assignments name the same
/// cost: the last would win silently, which is more often a slip than a wish.
void check_cost_overrides_unique(const std::vector<std::string>& assignments,
                                 const std::string& where);

/// The index of the first assignment naming a cost an earlier one named, with what is wrong
/// ("'NAME' is given twice ('NAME=A' and 'NAME=B'); give each cost once"); npos and "" when
/// every cost is named once. For a caller that names the place itself (a sweep spec's line).
std::pair<std::size_t, std::string>
repeated_cost_override(const std::vector<std::string>& assignments);

/// Sets a cost of the machine and records why; checks it as check_cost_value() does.
void set_machine_cost(machine& m, const std::string& name, long long value,
                      const std::string& source, const std::string& where);

/// Where the machine's value of a cost comes from: its own source, else the costs.def one.
std::string cost_source(const machine& m, const std::string& name);

/// The costs a named preset has beyond the costs.def defaults (no-op for other names).
void apply_preset_costs(machine& m);

/*
 * The costs this machine's sysfs tells: L2 and LLC sizes from
 * cache/index* and the shallowest and deepest enabled cpuidle states of the
 * first CPU; with no cpuidle driver ("none"), cstate_polls 0 when `cpuinfo`'s flags lack
 * "monitor" (x86 halts: no MWAIT). Missing files leave the defaults.
 */
void read_sysfs_costs(machine& m, const std::string& cpu_root = "/sys/devices/system/cpu",
                      const std::string& cpuinfo = "/proc/cpuinfo");

/*
 * The `schedlab costs` listing: every cost with value, unit, meaning and
 * source. `overrides` are --cost NAME=VALUE terms, applied on top (their
 * source is "--cost").
 */
std::string costs_report(const machine& m, const std::vector<std::string>& overrides = {});

} // namespace schedlab
