// SPDX-License-Identifier: GPL-2.0-only
#include "machine/machine_costs.h"

#include "machine/machine_parse.h"
#include "machine/presets.h"
#include "sim/config_error.h"

#include "sim/test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

namespace schedlab {
namespace {

namespace fs = std::filesystem;

using test_support::error_of;

void write(const fs::path& p, const std::string& text)
{
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

/* Sets (or unsets, with nullopt) an environment variable for the scope. */
class scoped_env {
public:
    scoped_env(const char* name, std::optional<std::string> value) : name_(name)
    {
        if (const char* old = std::getenv(name))
            old_ = old;
        if (value)
            ::setenv(name, value->c_str(), 1);
        else
            ::unsetenv(name);
    }
    ~scoped_env()
    {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

const std::vector<std::string> named_presets = {"bergamo-2s",  "milan-2s",    "spr-2s",
                                                "ryzen-7950x", "skylake-18c", "icelake-2s"};

sim_dur value_of(const machine& m, const std::string& name)
{
    for (const auto& [n, v] : cost_list(m.costs))
        if (n == name)
            return v;
    ADD_FAILURE() << "no cost " << name;
    return -1;
}

// ---- presets

TEST(preset_costs, every_named_preset_has_hardware_costs_each_with_a_source)
{
    for (const auto& name : named_presets) {
        const machine m = make_machine_preset(name);
        EXPECT_GE(m.costs_source.size(), 8u) << name;
        for (const auto& [cost, source] : m.costs_source) {
            EXPECT_NE(find_cost(cost), nullptr) << name << ": " << cost;
            EXPECT_GT(source.size(), 10u) << name << ": " << cost;
        }
        // Every value that differs from costs.def says why.
        const auto values = cost_list(m.costs);
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (values[i].second != cost_table()[i].default_value) {
                EXPECT_TRUE(m.costs_source.count(values[i].first))
                    << name << ": " << values[i].first;
            }
        }
        for (const char* c : {"llc_kib", "l2_kib", "line_llc", "cstate_deep_exit",
                              "cstate_deep_residency", "mem_bw_node_mbs"})
            EXPECT_TRUE(m.costs_source.count(c)) << name << ": " << c;
    }
}

TEST(preset_costs, intel_cstates_come_from_the_intel_idle_tables)
{
    const machine milan = make_machine_preset("milan-2s");
    EXPECT_EQ(value_of(milan, "line_llc"), 25);
    EXPECT_EQ(value_of(milan, "line_pkg"), 115);
    EXPECT_EQ(value_of(milan, "line_remote"), 301);
    for (const char* c : {"line_llc", "line_pkg", "line_remote"})
        EXPECT_NE(milan.costs_source.at(c).find("EPYC 7763"), std::string::npos) << c;
    const machine spr = make_machine_preset("spr-2s");
    EXPECT_EQ(value_of(spr, "cstate_deep_exit"), 290000);
    EXPECT_EQ(value_of(spr, "cstate_deep_residency"), 800000);
    EXPECT_NE(spr.costs_source.at("cstate_deep_exit").find("spr_cstates"), std::string::npos);
    const machine icx = make_machine_preset("icelake-2s");
    EXPECT_EQ(value_of(icx, "cstate_deep_exit"), 170000);
    const machine skx = make_machine_preset("skylake-18c");
    EXPECT_EQ(value_of(skx, "cstate_deep_exit"), 133000);
    EXPECT_EQ(value_of(skx, "cstate_c1_exit"), 2000);
}

TEST(preset_costs, epyc_presets_charge_a_measured_deep_wake_not_the_declared_latency)
{
    for (const char* name : {"bergamo-2s", "milan-2s"}) {
        const machine m = make_machine_preset(name);
        EXPECT_EQ(value_of(m, "cstate_deep_exit"), 400000) << name << ": ACPI's declared C2";
        EXPECT_EQ(value_of(m, "cstate_deep_wake"), 10000) << name;
        EXPECT_NE(m.costs_source.at("cstate_deep_wake").find("14526"), std::string::npos);
    }
    // No measured figure for the others: 0, the declared exit latency is charged.
    EXPECT_EQ(value_of(make_machine_preset("spr-2s"), "cstate_deep_wake"), 0);
    EXPECT_EQ(value_of(make_machine_preset("ryzen-7950x"), "cstate_deep_wake"), 0);
}

TEST(preset_costs, cache_line_transfers_grow_with_distance)
{
    for (const auto& name : named_presets) {
        const machine m = make_machine_preset(name);
        EXPECT_LT(value_of(m, "line_smt"), value_of(m, "line_llc")) << name;
        EXPECT_LT(value_of(m, "line_llc"), value_of(m, "line_remote")) << name;
        if (m.nr_llcs() > m.nr_packages()) { // an "other LLC of the package" exists
            EXPECT_LT(value_of(m, "line_llc"), value_of(m, "line_pkg")) << name;
        }
        if (m.nr_packages() > 1 && m.nr_llcs() > m.nr_packages()) {
            EXPECT_LT(value_of(m, "line_pkg"), value_of(m, "line_remote")) << name;
        }
        EXPECT_LE(value_of(m, "mem_bw_llc_mbs"), value_of(m, "mem_bw_node_mbs")) << name;
    }
    EXPECT_EQ(value_of(make_machine_preset("ryzen-7950x"), "line_llc"), 17);
    EXPECT_EQ(value_of(make_machine_preset("bergamo-2s"), "llc_kib"), 16384);
}

/*
 * The big presets' line transfers are medians of published core-to-core
 * measurements of their CPU (half a CAS round trip), not estimates.
 */
TEST(preset_costs, line_transfers_come_from_measured_core_to_core_figures)
{
    const machine bergamo = make_machine_preset("bergamo-2s");
    EXPECT_EQ(value_of(bergamo, "line_llc"), 33);
    EXPECT_EQ(value_of(bergamo, "line_pkg"), 110);
    EXPECT_EQ(value_of(bergamo, "line_remote"), 204);
    EXPECT_EQ(value_of(bergamo, "line_smt"), 13);
    for (const char* c : {"line_smt", "line_llc", "line_pkg", "line_remote"}) {
        const std::string& src = bergamo.costs_source.at(c);
        EXPECT_EQ(src.rfind("measured", 0), 0u) << c << ": " << src;
        EXPECT_NE(src.find("EPYC 9754"), std::string::npos) << c << ": " << src;
    }
    const machine milan = make_machine_preset("milan-2s");
    EXPECT_EQ(value_of(milan, "line_smt"), 10);
    EXPECT_NE(milan.costs_source.at("line_smt").find("EPYC 7763"), std::string::npos);
    const machine spr = make_machine_preset("spr-2s");
    EXPECT_EQ(value_of(spr, "line_llc"), 55);
    EXPECT_NE(spr.costs_source.at("line_llc").find("w9-3475X"), std::string::npos);
    EXPECT_EQ(value_of(spr, "line_remote"), 135);
    EXPECT_NE(spr.costs_source.at("line_remote").find("Sapphire Rapids"), std::string::npos);
    const machine icx = make_machine_preset("icelake-2s");
    EXPECT_EQ(value_of(icx, "line_llc"), 51);
    EXPECT_EQ(value_of(icx, "line_remote"), 108);
    EXPECT_EQ(value_of(icx, "line_smt"), 8);
    for (const char* c : {"line_smt", "line_llc", "line_remote"}) {
        const std::string& src = icx.costs_source.at(c);
        EXPECT_EQ(src.rfind("measured", 0), 0u) << c << ": " << src;
        EXPECT_NE(src.find("Platinum 8375C"), std::string::npos) << c << ": " << src;
    }
}

TEST(preset_costs, presets_differ_where_the_hardware_does)
{
    EXPECT_NE(make_machine_preset("milan-2s").costs, make_machine_preset("spr-2s").costs);
    EXPECT_NE(make_machine_preset("milan-2s").costs, make_machine_preset("bergamo-2s").costs);
}

// ---- checks

TEST(check_cost_value, rejects_unknown_names_with_a_hint_and_bad_values)
{
    EXPECT_NE(error_of([] { check_cost_value("line_lcc", 1, "f.json"); })
                  .find("unknown cost 'line_lcc' (did you mean 'line_llc'?)"),
              std::string::npos);
    EXPECT_NE(error_of([] { check_cost_value("line_llc", -1, "f.json"); }).find("negative"),
              std::string::npos);
    EXPECT_NE(error_of([] { check_cost_value("smt_pct", 101, "x"); }).find("percentage"),
              std::string::npos);
    EXPECT_NE(error_of([] { check_cost_value("cstate_polls", 2, "x"); }).find("not 0 or 1"),
              std::string::npos);
    EXPECT_EQ(error_of([] { check_cost_value("cstate_polls", 0, "x"); }), "");
    EXPECT_NE(error_of([] { check_cost_value("llc_kib", 0, "x"); }).find("must be positive"),
              std::string::npos);
    EXPECT_NE(error_of([] { check_cost_value("mem_bw_node_mbs", 0, "x"); }).find("positive"),
              std::string::npos);
    EXPECT_EQ(error_of([] { check_cost_value("context_switch", 0, "x"); }), "");
    EXPECT_EQ(error_of([] { check_cost_value("copy_per_kib", 0, "x"); }), "");
    EXPECT_EQ(error_of([] { check_cost_value("jitter_pct", 100, "x"); }), "");
}

TEST(check_cost_value, bounds_each_unit_so_costs_cannot_overflow_the_clock)
{
    // Issue 16: cstate_deep_exit=2^63-1 wrapped the clock (SIM_BUG_ON(when < now_)).
    EXPECT_EQ(error_of([] { check_cost_value("cstate_deep_exit", 9223372036854775807LL, "x"); }),
              "x: cost cstate_deep_exit: 9223372036854775807 is implausibly large (limit "
              "100000000000 ns)");
    EXPECT_EQ(error_of([] { check_cost_value("wakeup", 100'000'000'000LL, "x"); }), "");
    EXPECT_NE(error_of([] {
                  check_cost_value("wakeup_remote_lines", 10'001, "x");
              }).find("limit 10000 lines"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  check_cost_value("copy_per_kib", 1'000'001, "x");
              }).find("limit 1000000 ns/KiB"),
              std::string::npos);
    cost_params c;
    EXPECT_EQ(error_of([&] { set_cost(c, "wakeup=4611686018427387904", "--cost"); }),
              "--cost: cost 'wakeup': 4611686018427387904 is implausibly large (limit "
              "100000000000 ns)");
    EXPECT_EQ(error_of([&] { set_cost(c, "wakeup=99999999999999999999", "--cost"); }),
              "--cost: cost 'wakeup': '99999999999999999999' is not a non-negative integer "
              "(unit: ns)");
    // The message names the cost's own unit: schbench_math_var is a percentage.
    EXPECT_EQ(error_of([&] { set_cost(c, "schbench_math_var=-5", "--cost"); }),
              "--cost: cost 'schbench_math_var': '-5' is not a non-negative integer (unit: %)");
    // A run's --cost is checked as a machine file's cost is: no zero-sized cache.
    EXPECT_NE(error_of([&] { apply_cost_override(c, "llc_kib=0", "--cost"); }).find("positive"),
              std::string::npos);
}

TEST(cost_source, is_the_machine_s_own_else_the_costs_def_one)
{
    machine m = make_machine_preset("spr-2s");
    EXPECT_NE(cost_source(m, "cstate_deep_exit").find("intel_idle"), std::string::npos);
    EXPECT_EQ(cost_source(m, "pipe_write").rfind("default: ", 0), 0u);
    EXPECT_EQ(cost_source(m, "wait_child"), "default (no source given)");
}

// ---- the listing

TEST(costs_report, lists_every_cost_with_value_unit_meaning_and_source)
{
    const machine m = make_machine_preset("milan-2s");
    const std::string text = costs_report(m);
    for (const auto& ci : cost_table())
        EXPECT_NE(text.find(ci.name), std::string::npos) << ci.name;
    EXPECT_NE(text.find("# costs of machine milan-2s"), std::string::npos);
    EXPECT_NE(text.find("l2_kib                  *          512 KiB"), std::string::npos) << text;
    EXPECT_NE(text.find("source: Zen3: 512 KiB L2 per core"), std::string::npos);
    EXPECT_NE(text.find("source: default: estimate: 1-3 us per direct switch"),
              std::string::npos);
}

TEST(costs_report, applies_cost_overrides_and_names_them)
{
    const machine m = make_machine_preset("ryzen-7950x");
    const std::string text = costs_report(m, {"line_llc=5"});
    EXPECT_NE(text.find("line_llc                *            5 ns"), std::string::npos) << text;
    EXPECT_NE(text.find("source: --cost line_llc=5"), std::string::npos);
    EXPECT_NE(error_of([&] { costs_report(m, {"line_lcc=5"}); }).find("--cost: unknown cost"),
              std::string::npos);
    EXPECT_NE(error_of([&] { costs_report(m, {"llc_kib=0"}); }).find("must be positive"),
              std::string::npos);
}

TEST(check_cost_overrides_unique, a_cost_named_twice_is_refused_naming_both)
{
    EXPECT_NO_THROW(check_cost_overrides_unique({"line_llc=5", "line_pkg=9"}, "--cost"));
    EXPECT_EQ(error_of([] {
                  check_cost_overrides_unique({"line_llc=5", "x=1", "line_llc=7"}, "--cost");
              }),
              "--cost: 'line_llc' is given twice ('line_llc=5' and 'line_llc=7'); give each cost "
              "once");
    const machine m = make_machine_preset("ryzen-7950x");
    EXPECT_NE(error_of([&] {
                  costs_report(m, {"smt_pct=50", "smt_pct=60"});
              }).find("given twice"),
              std::string::npos);
}

// ---- machine files

const char* tiny_generate = R"({
  "format": "schedlab-machine-v1",
  "name": "tiny",
  "generate": {"sockets": 1, "cores_per_socket": 4, "threads_per_core": 2},
  "costs": COSTS
})";

machine parse_with_costs(const std::string& costs)
{
    std::string text = tiny_generate;
    text.replace(text.find("COSTS"), 5, costs);
    return machine_from_json(text, "tiny.json");
}

TEST(machine_file_costs, reads_objects_with_sources_and_plain_numbers)
{
    const machine m = parse_with_costs(
        R"({"line_llc": {"value": 33, "source": "my measurement"}, "smt_pct": 55})");
    EXPECT_EQ(m.costs.line_llc, 33);
    EXPECT_EQ(m.costs.smt_pct, 55);
    EXPECT_EQ(m.costs_source.at("line_llc"), "my measurement");
    EXPECT_EQ(m.costs_source.at("smt_pct"), "tiny.json (no source given)");
    EXPECT_EQ(m.costs.context_switch, cost_params{}.context_switch);
    EXPECT_EQ(m.costs_source.count("context_switch"), 0u);
}

TEST(machine_file_costs, the_explicit_cpus_form_takes_costs_too)
{
    const char* text = R"({"format": "schedlab-machine-v1",
      "cpus": [{"cpu": 0, "core": 0, "llc": 0, "package": 0}],
      "costs": {"ipi_wakeup": {"value": 2500, "source": "guess"}}})";
    const machine m = machine_from_json(text, "one.json");
    EXPECT_EQ(m.costs.ipi_wakeup, 2500);
    EXPECT_EQ(m.costs_source.at("ipi_wakeup"), "guess");
}

TEST(machine_file_costs, bad_costs_are_errors_naming_the_file_and_field)
{
    EXPECT_EQ(error_of([] { parse_with_costs(R"({"line_lcc": 20})"); }),
              "tiny.json: costs.line_lcc: unknown cost 'line_lcc' (did you mean 'line_llc'?); "
              "`schedlab costs` lists them");
    EXPECT_NE(error_of([] { parse_with_costs(R"({"line_llc": "fast"})"); })
                  .find("tiny.json: costs.line_llc: expected an integer"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_with_costs(R"({"line_llc": -3})"); })
                  .find("tiny.json: costs.line_llc: -3 is out of range"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_with_costs(R"({"line_llc": {"value": 3, "sorce": "x"}})"); })
                  .find("costs.line_llc.sorce: unknown key 'sorce' (did you mean 'source'?)"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_with_costs(R"({"line_llc": {"source": "x"}})"); })
                  .find("costs.line_llc.value: missing"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_with_costs(R"({"smt_pct": 150})"); })
                  .find("tiny.json: costs.smt_pct: cost smt_pct: 150 is not a percentage"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_with_costs(R"([1, 2])"); }).find("costs: expected an object"),
              std::string::npos);
}

TEST(machine_file_costs, every_preset_round_trips_with_its_costs_and_sources)
{
    for (const auto& name : named_presets) {
        const machine m = make_machine_preset(name);
        const std::string text = machine_to_json(m);
        EXPECT_NE(text.find("\"costs\": {"), std::string::npos) << name;
        const machine back = machine_from_json(text, name + ".json");
        EXPECT_EQ(back.costs, m.costs) << name;
        EXPECT_EQ(back.costs_source, m.costs_source) << name;
        EXPECT_TRUE(back == m) << name;
    }
}

TEST(machine_file_costs, default_costs_write_no_costs_object)
{
    symmetric_machine_spec s;
    s.name = "plain";
    s.cores_per_socket = 2;
    const machine m = make_symmetric_machine(s, "test");
    EXPECT_EQ(machine_to_json(m).find("\"costs\""), std::string::npos);
}

TEST(machine_file_costs, a_changed_cost_without_a_source_is_written_as_a_number)
{
    symmetric_machine_spec s;
    s.name = "plain";
    s.cores_per_socket = 2;
    machine m = make_symmetric_machine(s, "test");
    m.costs.line_llc = 44;
    const std::string text = machine_to_json(m);
    EXPECT_NE(text.find("\"line_llc\": 44"), std::string::npos) << text;
    const machine back = machine_from_json(text, "plain.json");
    EXPECT_EQ(back.costs, m.costs);
    EXPECT_EQ(back.costs_source.at("line_llc"), "plain.json (no source given)");
}

TEST(machine_file_costs, lscpu_imports_get_default_costs_saying_so)
{
    const char* text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n";
    const machine m = machine_from_lscpu(text, "box.lscpu");
    EXPECT_EQ(m.costs, cost_params{});
    ASSERT_EQ(m.costs_source.size(), cost_table().size());
    for (const auto& [name, source] : m.costs_source)
        EXPECT_EQ(source, "default (lscpu gives no costs)") << name;
    EXPECT_EQ(costs_report(m).find("source: default: "), std::string::npos);
}

// ---- sysfs

TEST(read_sysfs_costs, reads_cache_sizes_and_the_enabled_cpuidle_states)
{
    const fs::path root = test_support::temp_dir("schedlab_costs_test_", "sysfs");
    const fs::path cache = root / "cpu0" / "cache";
    auto index = [&](int i, const char* level, const char* type, const char* size) {
        write(cache / ("index" + std::to_string(i)) / "level", level);
        write(cache / ("index" + std::to_string(i)) / "type", type);
        write(cache / ("index" + std::to_string(i)) / "size", size);
    };
    index(0, "1", "Data", "48K");
    index(1, "1", "Instruction", "32K");
    index(2, "2", "Unified", "2048K");
    index(3, "3", "Unified", "105M");
    write(root / "cpuidle" / "current_driver", "intel_idle\n");
    auto state = [&](int i, const char* name, const char* lat, const char* res, const char* dis) {
        const fs::path s = root / "cpu0" / "cpuidle" / ("state" + std::to_string(i));
        write(s / "name", std::string(name) + "\n");
        write(s / "latency", lat);
        write(s / "residency", res);
        write(s / "disable", dis);
    };
    state(0, "POLL", "0", "0", "0");
    state(1, "C1", "1", "1", "0");
    state(2, "C1E", "2", "4", "0");
    state(3, "C6", "290", "800", "0");
    state(4, "C8", "400", "1000", "1"); // disabled: ignored

    machine m = make_machine_preset("skylake-18c");
    read_sysfs_costs(m, root.string());
    EXPECT_EQ(m.costs.l2_kib, 2048);
    EXPECT_EQ(m.costs.llc_kib, 105 * 1024);
    EXPECT_EQ(m.costs.cstate_c1_exit, 1000);
    EXPECT_EQ(m.costs.cstate_c1_residency, 1000);
    EXPECT_EQ(m.costs.cstate_deep_exit, 290000);
    EXPECT_EQ(m.costs.cstate_deep_residency, 800000);
    EXPECT_EQ(m.costs_source.at("l2_kib"), "sysfs cpu0/cache/index2/size (2048K)");
    EXPECT_EQ(m.costs_source.at("cstate_deep_exit"),
              "sysfs cpu0/cpuidle/state3 'C6' (driver intel_idle): exit latency 290 us");
    fs::remove_all(root);
}

TEST(read_sysfs_costs, no_cpuidle_driver_and_no_mwait_halts_so_idle_cpus_need_an_ipi)
{
    // kernel: kernel/sched/idle.c default_idle_call() (no cpuidle driver: sysfs prints
    // "none") clears TIF_POLLING_NRFLAG and calls arch_cpu_idle(); x86's is HLT unless
    // prefer_mwait_c1_over_halt(), which needs X86_FEATURE_MWAIT ("monitor" in
    // /proc/cpuinfo). This machine's sysfs and cpuinfo (a KVM guest: driver none, no
    // monitor flag) give cstate_polls 0; with "monitor", or with a driver, the default
    // (1) stays, as before.
    const fs::path root = test_support::temp_dir("schedlab_costs_test_", "noidle");
    write(root / "cpuidle" / "current_driver", "none\n");
    const fs::path halt = root / "cpuinfo_halt";
    write(halt, "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme de pse tsc msr "
                "pae mce cx8 apic sep hypervisor\n\nprocessor\t: 1\nflags\t\t: monitor\n");
    const fs::path mwait = root / "cpuinfo_mwait";
    write(mwait, "processor\t: 0\nflags\t\t: fpu vme monitor de pse\n");
    machine m = make_machine_preset("milan-2s");
    ASSERT_EQ(m.costs.cstate_polls, 1);
    const machine before = m;
    read_sysfs_costs(m, root.string(), mwait.string());
    EXPECT_TRUE(m == before) << "MWAIT may be the idle routine: the default stays";
    read_sysfs_costs(m, root.string(), (root / "no_such_file").string());
    EXPECT_TRUE(m == before) << "no cpuinfo flags: the default stays";
    read_sysfs_costs(m, root.string(), halt.string());
    EXPECT_EQ(m.costs.cstate_polls, 0) << "the first processor's flags: no monitor";
    EXPECT_NE(m.costs_source.at("cstate_polls").find("current_driver 'none'"), std::string::npos);
    machine driven = make_machine_preset("milan-2s");
    write(root / "cpuidle" / "current_driver", "acpi_idle\n");
    read_sysfs_costs(driven, root.string(), halt.string());
    EXPECT_EQ(driven.costs.cstate_polls, 1) << "a driver's states decide, not the HLT routine";
    fs::remove_all(root);
}

TEST(read_sysfs_costs, missing_files_leave_the_defaults)
{
    const fs::path root = test_support::temp_dir("schedlab_costs_test_", "empty");
    machine m = make_machine_preset("milan-2s");
    const machine before = m;
    read_sysfs_costs(m, root.string());
    EXPECT_TRUE(m == before);
    fs::remove_all(root);
}

// ---- the host preset and the calibrated file

TEST(host_machine_file, the_env_variable_names_the_calibrated_file)
{
    const fs::path dir = test_support::temp_dir("schedlab_costs_test_", "hostenv");
    machine calibrated = make_sysfs_host_machine();
    set_machine_cost(calibrated, "context_switch", 2345, "measured by a test", "test");
    const fs::path file = dir / "calibrated.json";
    write(file, machine_to_json(calibrated));

    scoped_env e("SCHEDLAB_HOST_MACHINE", file.string());
    EXPECT_EQ(host_machine_file(), file.string());
    EXPECT_EQ(default_host_machine_path(), file.string());
    for (const machine& m : {make_machine_preset("host"), load_machine("host")}) {
        EXPECT_EQ(m.name, "host");
        EXPECT_EQ(m.costs.context_switch, 2345);
        EXPECT_EQ(m.costs_source.at("context_switch"), "measured by a test");
        EXPECT_NE(m.description.find(file.string()), std::string::npos);
    }
    fs::remove_all(dir);
}

TEST(host_machine_file, a_missing_named_file_is_an_error)
{
    const fs::path dir = test_support::temp_dir("schedlab_costs_test_", "hostmissing");
    const std::string file = (dir / "nope.json").string();
    scoped_env e("SCHEDLAB_HOST_MACHINE", file);
    EXPECT_EQ(error_of([] { make_machine_preset("host"); }),
              file + ": no such machine file (named by SCHEDLAB_HOST_MACHINE for the host preset)");
    fs::remove_all(dir);
}

TEST(host_machine_file, xdg_config_home_is_used_when_the_file_is_there)
{
    const fs::path dir = test_support::temp_dir("schedlab_costs_test_", "xdg");
    scoped_env e1("SCHEDLAB_HOST_MACHINE", std::nullopt);
    scoped_env e2("XDG_CONFIG_HOME", dir.string());
    const fs::path file = dir / "schedlab" / "host.json";
    EXPECT_EQ(default_host_machine_path(), file.string());
    EXPECT_EQ(host_machine_file(), ""); // not there yet: plain sysfs
    EXPECT_EQ(make_machine_preset("host").costs_source.count("ipi_wakeup"), 0u);

    machine calibrated = make_sysfs_host_machine();
    set_machine_cost(calibrated, "ipi_wakeup", 4321, "measured", "test");
    write(file, machine_to_json(calibrated));
    EXPECT_EQ(host_machine_file(), file.string());
    EXPECT_EQ(make_machine_preset("host").costs.ipi_wakeup, 4321);
    fs::remove_all(dir);
}

TEST(host_machine_file, home_config_is_the_last_fallback)
{
    const fs::path dir = test_support::temp_dir("schedlab_costs_test_", "home");
    scoped_env e1("SCHEDLAB_HOST_MACHINE", std::nullopt);
    scoped_env e2("XDG_CONFIG_HOME", std::nullopt);
    scoped_env e3("HOME", dir.string());
    EXPECT_EQ(default_host_machine_path(), (dir / ".config" / "schedlab" / "host.json").string());
    fs::remove_all(dir);
}

TEST(host_machine_file, a_file_from_another_machine_is_an_error)
{
    const fs::path dir = test_support::temp_dir("schedlab_costs_test_", "hostother");
    machine other = make_machine_preset("milan-2s"); // 256 CPUs: not this machine
    const fs::path file = dir / "other.json";
    write(file, machine_to_json(other));
    scoped_env e("SCHEDLAB_HOST_MACHINE", file.string());
    const std::string err = error_of([] { make_machine_preset("host"); });
    if (make_sysfs_host_machine().nr_cpus() != 256) {
        EXPECT_NE(err.find("describes 256 CPUs but this machine has"), std::string::npos) << err;
        EXPECT_NE(err.find("unset SCHEDLAB_HOST_MACHINE"), std::string::npos) << err;
    }
    fs::remove_all(dir);
}

} // namespace
} // namespace schedlab
