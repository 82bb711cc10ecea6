// SPDX-License-Identifier: GPL-2.0-only
#include "machine/costs.h"

#include "machine/machine_costs.h"
#include "sim/config_error.h"

#include <charconv>

namespace schedlab {

const std::vector<cost_info>& cost_table()
{
    static const std::vector<cost_info> table = {
#define COST(name, def, unit, help, source) {#name, def, unit, help, source},
#include "machine/costs.def"
#undef COST
    };
    return table;
}

namespace {
template <typename F> void for_each_cost(cost_params& c, F&& f)
{
#define COST(name, def, unit, help, source) f(#name, c.name);
#include "machine/costs.def"
#undef COST
}
} // namespace

std::vector<std::pair<std::string, sim_dur>> cost_list(const cost_params& c)
{
    std::vector<std::pair<std::string, sim_dur>> v;
    cost_params copy = c;
    for_each_cost(copy, [&](const char* name, sim_dur& val) { v.emplace_back(name, val); });
    return v;
}

long long max_cost_value(const cost_info& ci)
{
    // Bounds of input, not of the model: each far beyond any real machine, and small enough
    // that costs multiplied together (ns/KiB x KiB, lines x ns) and added to the clock stay
    // within sim_time's int64 nanoseconds.
    const std::string_view unit = ci.unit;
    if (unit == "%")
        return 100;
    if (unit == "bool")
        return 1;
    if (unit == "lines")
        return 10'000; // a runqueue's working set is tens of lines
    if (unit == "ns/KiB")
        return 1'000'000; // 1 ms per KiB: 1 MB/s, slower than any memory
    if (unit == "KiB")
        return 1LL << 30; // a 1 TiB cache
    if (unit == "MB/s")
        return 1'000'000'000; // 1 PB/s
    return 100'000'000'000LL; // ns: 100 s for one operation
}

bool set_cost_value(cost_params& c, const std::string& name, sim_dur value)
{
    bool found = false;
    for_each_cost(c, [&](const char* n, sim_dur& val) {
        if (name == n) {
            val = value;
            found = true;
        }
    });
    return found;
}

void set_cost(cost_params& c, const std::string& assignment, const std::string& where)
{
    const auto eq = assignment.find('=');
    if (eq == std::string::npos)
        throw config_error(where, fmt::format("'{}' is not NAME=NANOSECONDS", assignment));
    const std::string name = assignment.substr(0, eq);
    const std::string value = assignment.substr(eq + 1);
    s64 v = 0;
    const auto res = std::from_chars(value.data(), value.data() + value.size(), v);
    if (res.ec != std::errc() || res.ptr != value.data() + value.size() || v < 0) {
        // The cost's own unit when the name is known (ns, %, KiB, MB/s, bool), else ns.
        const char* unit = find_cost(name) ? find_cost(name)->unit : "ns";
        throw config_error(where, fmt::format("cost '{}': '{}' is not a non-negative integer "
                                              "(unit: {})",
                                              name, value, unit));
    }
    if (!find_cost(name)) {
        std::vector<std::string> names;
        for (const auto& ci : cost_table())
            names.emplace_back(ci.name);
        const std::string hint = nearest_name(name, names);
        throw config_error(where, fmt::format("unknown cost '{}'{}; see `schedlab costs`", name,
                                              hint.empty() ? ""
                                                           : fmt::format(" (did you mean '{}'?)",
                                                                         hint)));
    }
    // Zero is allowed even where a machine file may not set it: tests switch costs off.
    if (std::string_view(find_cost(name)->unit) == "%" && v > 100)
        throw config_error(where, fmt::format("{} must be between 0 and 100", name));
    if (std::string_view(find_cost(name)->unit) == "bool" && v > 1)
        throw config_error(where, fmt::format("{} must be 0 or 1", name));
    if (v > max_cost_value(*find_cost(name)))
        throw config_error(where, fmt::format("cost '{}': {} is implausibly large (limit {} {})",
                                              name, value, max_cost_value(*find_cost(name)),
                                              find_cost(name)->unit));
    set_cost_value(c, name, v);
}

} // namespace schedlab
