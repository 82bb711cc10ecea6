// SPDX-License-Identifier: GPL-2.0-only
#include "machine/machine_costs.h"

#include "sim/config_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace schedlab {

const cost_info* find_cost(const std::string& name)
{
    for (const auto& ci : cost_table())
        if (name == ci.name)
            return &ci;
    return nullptr;
}

std::vector<std::string> cost_names()
{
    std::vector<std::string> names;
    for (const auto& ci : cost_table())
        names.emplace_back(ci.name);
    return names;
}

namespace {

bool ends_with(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/* Costs that are sizes, bandwidths or shares: zero would divide by zero or stop progress. */
bool must_be_positive(const std::string& name)
{
    return name == "l2_kib" || name == "llc_kib" || ends_with(name, "_mbs") || name == "smt_pct";
}

} // namespace

void check_cost_value(const std::string& name, long long value, const std::string& where)
{
    if (!find_cost(name)) {
        const std::string hint = nearest_name(name, cost_names());
        throw config_error(where, fmt::format("unknown cost '{}'{}; see `schedlab costs`", name,
                                              hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
    if (value < 0)
        throw config_error(where, fmt::format("cost {}: {} is negative", name, value));
    if (ends_with(name, "_pct") && value > 100)
        throw config_error(where, fmt::format("cost {}: {} is not a percentage (0..100)", name,
                                              value));
    if (find_cost(name)->unit == std::string_view("bool") && value > 1)
        throw config_error(where, fmt::format("cost {}: {} is not 0 or 1", name, value));
    if (value > max_cost_value(*find_cost(name)))
        throw config_error(where, fmt::format("cost {}: {} is implausibly large (limit {} {})",
                                              name, value, max_cost_value(*find_cost(name)),
                                              find_cost(name)->unit));
    if (value == 0 && must_be_positive(name))
        throw config_error(where, fmt::format("cost {} must be positive", name));
}

void set_machine_cost(machine& m, const std::string& name, long long value,
                      const std::string& source, const std::string& where)
{
    check_cost_value(name, value, where);
    set_cost_value(m.costs, name, value);
    m.costs_source[name] = source;
}

std::string cost_source(const machine& m, const std::string& name)
{
    if (auto it = m.costs_source.find(name); it != m.costs_source.end())
        return it->second;
    const cost_info* ci = find_cost(name);
    if (!ci)
        return "";
    return ci->source[0] ? std::string("default: ") + ci->source : "default (no source given)";
}

// ----------------------------------------------------------------------------------------------
// sysfs

namespace {

namespace fs = std::filesystem;

std::optional<std::string> slurp_line(const fs::path& p)
{
    std::ifstream in(p);
    if (!in)
        return std::nullopt;
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' '))
        line.pop_back();
    return line;
}

std::optional<long long> to_number(const std::string& s)
{
    long long v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

/* "2048K" (the kernel's format), "32M" or plain bytes, in KiB. */
std::optional<long long> size_kib(const std::string& s)
{
    if (s.empty())
        return std::nullopt;
    const char unit = s.back();
    if (unit == 'K' || unit == 'M' || unit == 'G') {
        auto v = to_number(s.substr(0, s.size() - 1));
        if (!v)
            return std::nullopt;
        return unit == 'K' ? *v : unit == 'M' ? *v * 1024 : *v * 1024 * 1024;
    }
    auto v = to_number(s);
    if (!v)
        return std::nullopt;
    return *v / 1024;
}

/* The lowest-numbered cpuN directory that has `sub` in it. */
std::optional<int> first_cpu_with(const fs::path& root, const std::string& sub)
{
    std::error_code ec;
    std::optional<int> best;
    for (const auto& e : fs::directory_iterator(root, ec)) {
        const std::string n = e.path().filename().string();
        if (n.size() < 4 || n.rfind("cpu", 0) != 0)
            continue;
        auto id = to_number(n.substr(3));
        if (!id || !fs::exists(e.path() / sub, ec))
            continue;
        if (!best || *id < *best)
            best = static_cast<int>(*id);
    }
    return best;
}

void read_cache_sizes(machine& m, const fs::path& root)
{
    const auto cpu = first_cpu_with(root, "cache");
    if (!cpu)
        return;
    const fs::path dir = root / fmt::format("cpu{}", *cpu) / "cache";
    struct found {
        int level = 0;
        long long kib = 0;
        std::string text, index;
    };
    std::optional<found> l2, llc;
    for (int i = 0; i < 16; ++i) {
        const fs::path idx = dir / fmt::format("index{}", i);
        auto level = slurp_line(idx / "level");
        auto type = slurp_line(idx / "type");
        auto size = slurp_line(idx / "size");
        if (!level || !type || !size)
            continue;
        auto lv = to_number(*level);
        auto kib = size_kib(*size);
        if (!lv || !kib || *kib <= 0 || (*type != "Data" && *type != "Unified"))
            continue;
        const found f{static_cast<int>(*lv), *kib, *size, fmt::format("cpu{}/cache/index{}", *cpu, i)};
        if (f.level == 2)
            l2 = f;
        if (!llc || f.level > llc->level)
            llc = f;
    }
    if (l2)
        set_machine_cost(m, "l2_kib", l2->kib,
                         fmt::format("sysfs {}/size ({})", l2->index, l2->text), root.string());
    if (llc && llc->level >= 2)
        set_machine_cost(m, "llc_kib", llc->kib,
                         fmt::format("sysfs {}/size ({}, level {})", llc->index, llc->text,
                                     llc->level),
                         root.string());
}

/* The flags of /proc/cpuinfo's first processor ("flags : fpu vme ..."); nullopt without one
 * (not x86, or no file). */
std::optional<std::vector<std::string>> cpuinfo_flags(const fs::path& cpuinfo)
{
    std::ifstream in(cpuinfo);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) != 0)
            continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            return std::nullopt;
        std::istringstream words(line.substr(colon + 1));
        std::vector<std::string> flags;
        for (std::string w; words >> w;)
            flags.push_back(w);
        return flags;
    }
    return std::nullopt;
}

/*
 * kernel: kernel/sched/idle.c cpuidle_idle_call() and default_idle_call(), 6.18: with no
 * cpuidle driver (sysfs cpuidle/current_driver "none") do_idle() calls default_idle_call(),
 * which clears the idle task's TIF_POLLING_NRFLAG (current_clr_polling_and_test()) and
 * runs arch_cpu_idle(); on x86 that is the routine select_idle_routine() chose
 * (arch/x86/kernel/process.c): HLT (default_idle) unless prefer_mwait_c1_over_halt(),
 * which needs X86_FEATURE_MWAIT, the "monitor" flag of /proc/cpuinfo. Without it the
 * idle CPU halts and does not poll, so a wakeup sends it an IPI (cstate_polls 0). With
 * "monitor" the choice depends on CPUID leaf 5 and CPU bugs not read here: the default
 * stays.
 */
void read_idle_routine(machine& m, const fs::path& root, const fs::path& cpuinfo)
{
    if (slurp_line(root / "cpuidle" / "current_driver").value_or("") != "none")
        return;
    const auto flags = cpuinfo_flags(cpuinfo);
    if (!flags || std::find(flags->begin(), flags->end(), "monitor") != flags->end())
        return;
    set_machine_cost(m, "cstate_polls", 0,
                     fmt::format("sysfs cpuidle/current_driver 'none' and no 'monitor' flag in "
                                 "{}: no cpuidle driver, so idle is default_idle_call() and x86's "
                                 "HLT (no MWAIT), not polling: waking an idle CPU sends an IPI",
                                 cpuinfo.string()),
                     (root / "cpuidle" / "current_driver").string());
}

void read_cpuidle(machine& m, const fs::path& root)
{
    const auto cpu = first_cpu_with(root, "cpuidle");
    if (!cpu)
        return;
    const fs::path dir = root / fmt::format("cpu{}", *cpu) / "cpuidle";
    const std::string driver = slurp_line(root / "cpuidle" / "current_driver").value_or("?");
    struct state {
        int index;
        std::string name;
        long long latency_us, residency_us;
    };
    std::vector<state> states;
    for (int i = 0; i < 16; ++i) {
        const fs::path s = dir / fmt::format("state{}", i);
        auto name = slurp_line(s / "name");
        auto lat = slurp_line(s / "latency");
        auto res = slurp_line(s / "residency");
        if (!name || !lat || !res)
            continue;
        if (*name == "POLL")
            continue;
        if (auto dis = slurp_line(s / "disable"); dis && *dis != "0")
            continue;
        auto l = to_number(*lat), r = to_number(*res);
        if (!l || !r || *l < 0 || *r < 0)
            continue;
        states.push_back({i, *name, *l, *r});
    }
    if (states.empty())
        return;
    auto describe = [&](const state& s, const char* what) {
        return fmt::format("sysfs cpu{}/cpuidle/state{} '{}' (driver {}): {} {} us", *cpu, s.index,
                           s.name, driver, what, what[0] == 'e' ? s.latency_us : s.residency_us);
    };
    const state& shallow = states.front();
    const state& deep = states.back();
    const std::string where = (root / fmt::format("cpu{}", *cpu) / "cpuidle").string();
    set_machine_cost(m, "cstate_c1_exit", shallow.latency_us * 1000,
                     describe(shallow, "exit latency"), where);
    set_machine_cost(m, "cstate_c1_residency", shallow.residency_us * 1000,
                     describe(shallow, "target residency"), where);
    const std::string only = states.size() == 1 ? " (the only enabled state)" : "";
    set_machine_cost(m, "cstate_deep_exit", deep.latency_us * 1000,
                     describe(deep, "exit latency") + only, where);
    set_machine_cost(m, "cstate_deep_residency", deep.residency_us * 1000,
                     describe(deep, "target residency") + only, where);
    // intel_idle enters every state with MWAIT and TIF_POLLING_NRFLAG set; haltpoll
    // (KVM guests) halts, so wakeups need IPIs. acpi_idle mixes FFH MWAIT, HLT and
    // IO-port states: it keeps the default.
    if (driver == "intel_idle")
        set_machine_cost(m, "cstate_polls", 1,
                         fmt::format("sysfs cpuidle/current_driver '{}': MWAIT states poll "
                                     "need_resched",
                                     driver),
                         where);
    else if (driver == "haltpoll")
        set_machine_cost(m, "cstate_polls", 0,
                         fmt::format("sysfs cpuidle/current_driver '{}': idle states halt (HLT), "
                                     "so waking an idle CPU sends an IPI",
                                     driver),
                         where);
}

} // namespace

void read_sysfs_costs(machine& m, const std::string& cpu_root, const std::string& cpuinfo)
{
    const fs::path root(cpu_root);
    read_cache_sizes(m, root);
    read_cpuidle(m, root);
    read_idle_routine(m, root, cpuinfo);
}

// ----------------------------------------------------------------------------------------------
// the listing

void apply_cost_override(cost_params& c, const std::string& assignment, const std::string& where)
{
    set_cost(c, assignment, where); // parses and rejects unknown names and bad numbers
    const std::string name = assignment.substr(0, assignment.find('='));
    const auto list = cost_list(c);
    const auto it =
        std::find_if(list.begin(), list.end(), [&](const auto& kv) { return kv.first == name; });
    check_cost_value(name, it->second, where);
}

std::pair<std::size_t, std::string>
repeated_cost_override(const std::vector<std::string>& assignments)
{
    for (std::size_t i = 0; i < assignments.size(); ++i) {
        const std::string name = assignments[i].substr(0, assignments[i].find('='));
        for (std::size_t j = 0; j < i; ++j)
            if (assignments[j].substr(0, assignments[j].find('=')) == name)
                return {i, fmt::format("'{}' is given twice ('{}' and '{}'); give each cost once",
                                       name, assignments[j], assignments[i])};
    }
    return {std::string::npos, ""};
}

void check_cost_overrides_unique(const std::vector<std::string>& assignments,
                                 const std::string& where)
{
    if (auto [i, why] = repeated_cost_override(assignments); i != std::string::npos)
        throw config_error(where, why);
}

std::string costs_report(const machine& base, const std::vector<std::string>& overrides)
{
    check_cost_overrides_unique(overrides, "--cost");
    machine m = base;
    for (const auto& o : overrides) {
        apply_cost_override(m.costs, o, "--cost");
        m.costs_source[o.substr(0, o.find('='))] = "--cost " + o;
    }

    std::string out = fmt::format("# costs of machine {}{}\n", m.name,
                                  m.description.empty() ? "" : ": " + m.description);
    out += "# '*': this machine's value differs from the costs.def default\n";
    out += fmt::format("{:<24}  {:>12} {:<7} {}\n", "COST", "VALUE", "UNIT", "MEANING / SOURCE");
    const auto values = cost_list(m.costs);
    const auto& table = cost_table();
    for (std::size_t i = 0; i < table.size(); ++i) {
        const cost_info& ci = table[i];
        const sim_dur v = values[i].second;
        out += fmt::format("{:<24}{} {:>12} {:<7} {}\n", ci.name, v != ci.default_value ? "*" : " ",
                           v, ci.unit, ci.help);
        out += fmt::format("{:<46} source: {}\n", "", cost_source(m, ci.name));
    }
    out += "\nOverride for one run with `schedlab run --cost NAME=VALUE`; a machine file sets "
           "them with its \"costs\" object (docs/machine-format.md); `schedlab calibrate` "
           "measures this host's.\n";
    return out;
}

} // namespace schedlab
