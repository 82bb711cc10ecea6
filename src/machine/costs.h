// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The costs of a machine: system calls and scheduler paths, interrupts and
 * idle states, cache-line transfers and cache refills by distance, SMT
 * sharing, memory bandwidth and lock hold times. Declared once in
 * costs.def; each machine (preset, file or calibration) carries its values
 * and, where they differ from the defaults, their sources.
 */
#include "sim/time.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace schedlab {

struct cost_params {
#define COST(name, def, unit, help, source) sim_dur name = def;
#include "machine/costs.def"
#undef COST
    friend bool operator==(const cost_params&, const cost_params&) = default;
};

struct cost_info {
    const char* name;
    sim_dur default_value;
    const char* unit;
    const char* help;
    const char* source;
};

/// Every cost, in costs.def order.
const std::vector<cost_info>& cost_table();

/// Sets one cost by name ("pipe_write=900"); throws config_error naming `where`.
void set_cost(cost_params& c, const std::string& assignment, const std::string& where);
/// The largest value a cost may be given, by its unit (a machine file or --cost).
long long max_cost_value(const cost_info& ci);
/// Sets one cost by name and value; returns false if the name is unknown.
bool set_cost_value(cost_params& c, const std::string& name, sim_dur value);
/// Every cost name with its value, in costs.def order.
std::vector<std::pair<std::string, sim_dur>> cost_list(const cost_params& c);

/// Where a machine's cost values come from, for the ones that differ from costs.def.
using cost_sources = std::map<std::string, std::string>;

} // namespace schedlab
