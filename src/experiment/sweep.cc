// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/sweep.h"

#include "experiment/run.h"

#include "machine/machine_costs.h"
#include "sim/config_error.h"
#include "sim/file_io.h"
#include "workload/registry.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace schedlab {

namespace {

using ojson = nlohmann::ordered_json;

/// A parsed spec as JSON, with the TOML line of each key path ("runs", "benchmarks[1].loads").
struct spec_doc {
    ojson j;
    std::map<std::string, int> lines;
    std::string file;

    std::string at(const std::string& path) const
    {
        const auto it = lines.find(path);
        return it != lines.end() ? fmt::format("{}:{}", file, it->second) : file;
    }
    [[noreturn]] void fail(const std::string& path, const std::string& msg) const
    {
        throw config_error(at(path), path.empty() ? msg : fmt::format("'{}': {}", path, msg));
    }
};

ojson toml_to_json(const toml::node& n, const std::string& path, spec_doc& d)
{
    d.lines[path] = static_cast<int>(n.source().begin.line);
    if (const toml::table* t = n.as_table()) {
        ojson o = ojson::object();
        for (auto&& [k, v] : *t) {
            const std::string key(k.str());
            o[key] = toml_to_json(v, path.empty() ? key : path + "." + key, d);
        }
        return o;
    }
    if (const toml::array* a = n.as_array()) {
        ojson arr = ojson::array();
        for (std::size_t i = 0; i < a->size(); ++i)
            arr.push_back(toml_to_json(*a->get(i), fmt::format("{}[{}]", path, i), d));
        return arr;
    }
    if (const auto* s = n.as_string())
        return s->get();
    if (const auto* i = n.as_integer())
        return i->get();
    if (const auto* f = n.as_floating_point())
        return f->get();
    if (const auto* b = n.as_boolean())
        return b->get();
    d.fail(path, "dates and times have no meaning in a sweep spec");
}

spec_doc parse_doc(const std::string& text, const std::string& file, bool toml_syntax)
{
    spec_doc d;
    d.file = file;
    if (toml_syntax) {
        try {
            const toml::table t = toml::parse(text, file);
            d.j = toml_to_json(t, "", d);
        } catch (const toml::parse_error& e) {
            throw config_error(
                fmt::format("{}:{}:{}", file, e.source().begin.line, e.source().begin.column),
                std::string(e.description()));
        }
    } else {
        // A key given twice in one object is refused, as toml++ refuses it in TOML: nlohmann
        // keeps the last one silently ({"machines": [A], "machines": [B]} swept only B).
        const auto refuse_repeats = refuse_repeated_keys<ojson>([&](const std::string& k) {
            throw config_error(file, fmt::format("'{}': a key given twice in one object "
                                                 "(JSON would keep the last silently)",
                                                 k));
        });
        try {
            d.j = ojson::parse(text, refuse_repeats);
        } catch (const ojson::exception& e) {
            // parse errors, and out_of_range for a number beyond a double's range (1e400)
            throw config_error(file, fmt::format("not valid JSON: {}", e.what()));
        }
    }
    if (!d.j.is_object())
        d.fail("", "a sweep spec is a table (TOML) or an object (JSON)");
    return d;
}

std::string type_name(const ojson& v)
{
    if (v.is_number_integer())
        return "an integer";
    if (v.is_number())
        return "a number";
    if (v.is_string())
        return "a string";
    if (v.is_array())
        return "an array";
    if (v.is_object())
        return "a table";
    if (v.is_boolean())
        return "a boolean";
    return "null";
}

std::string get_string(const spec_doc& d, const ojson& v, const std::string& path)
{
    if (!v.is_string())
        d.fail(path, fmt::format("expected a string, found {}", type_name(v)));
    return v.get<std::string>();
}

/// An array of strings; with `one_ok` a single string is an array of one.
std::vector<std::string> get_strings(const spec_doc& d, const ojson& v, const std::string& path,
                                     bool one_ok)
{
    if (one_ok && v.is_string())
        return {v.get<std::string>()};
    if (!v.is_array())
        d.fail(path, fmt::format("expected an array of strings, found {}", type_name(v)));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i)
        out.push_back(get_string(d, v[i], fmt::format("{}[{}]", path, i)));
    return out;
}

/// An integer in [lo, hi].
s64 get_int(const spec_doc& d, const ojson& v, const std::string& path, s64 lo, s64 hi)
{
    if (!v.is_number_integer())
        d.fail(path, fmt::format("expected an integer, found {}", type_name(v)));
    if (v.is_number_unsigned() && v.get<u64>() > static_cast<u64>(hi))
        d.fail(path, fmt::format("{} is out of range ({} to {})", v.get<u64>(), lo, hi));
    const s64 x = v.get<s64>();
    if (x < lo || x > hi)
        d.fail(path, fmt::format("{} is out of range ({} to {})", x, lo, hi));
    return x;
}

/// The first index whose value appeared earlier, or npos (hashed: a 16 MiB spec can hold
/// millions of entries, so no pairwise scan).
std::size_t first_repeat(const std::vector<std::string>& v)
{
    std::unordered_set<std::string_view> seen;
    seen.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!seen.insert(v[i]).second)
            return i;
    return std::string::npos;
}

void no_duplicates(const spec_doc& d, const std::vector<std::string>& v, const std::string& path)
{
    if (const std::size_t i = first_repeat(v); i != std::string::npos)
        d.fail(fmt::format("{}[{}]", path, i), fmt::format("'{}' is given twice", v[i]));
}

std::vector<std::string> split_words(const std::string& s)
{
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

/// The benchmark's default name: its command words before the first option
/// ("perf-bench-sched-messaging" -> the AMD test name when known).
std::string default_benchmark_name(const std::vector<std::string>& argv)
{
    if (const benchmark_info* b = find_benchmark(argv))
        return b->amd_test;
    std::string name;
    for (const std::string& a : argv) {
        if (a.starts_with("-"))
            break;
        name += (name.empty() ? "" : "-") + a;
    }
    return name;
}

/// "1,2,4": a load list as the benchmark's load option takes it.
std::string load_list(const std::vector<std::string>& loads)
{
    std::string list;
    for (const std::string& l : loads)
        list += (list.empty() ? "" : ",") + l;
    return list;
}

sweep_benchmark parse_benchmark(const spec_doc& d, const ojson& b, const std::string& path)
{
    if (!b.is_object())
        d.fail(path, fmt::format("expected a table with a command, found {}", type_name(b)));
    sweep_benchmark out;
    for (const auto& [key, v] : b.items()) {
        const std::string p = path + "." + key;
        if (key == "name") {
            out.name = get_string(d, v, p);
            if (out.name.empty() || out.name.find('/') != std::string::npos)
                d.fail(p, "a benchmark name is not empty and has no '/'");
        } else if (key == "command") {
            out.argv =
                v.is_string() ? split_words(v.get<std::string>()) : get_strings(d, v, p, false);
            if (out.argv.empty())
                d.fail(p, "the command is empty");
        } else if (key == "loads") {
            if (!v.is_array() || v.empty())
                d.fail(p, "expected a non-empty array of loads (integers or strings)");
            for (std::size_t i = 0; i < v.size(); ++i) {
                const std::string pi = fmt::format("{}[{}]", p, i);
                if (v[i].is_number_integer())
                    out.loads.push_back(std::to_string(get_int(d, v[i], pi, 0, 1'000'000'000)));
                else if (v[i].is_string())
                    out.loads.push_back(v[i].get<std::string>());
                else
                    d.fail(pi, fmt::format("expected an integer or a string, found {}",
                                           type_name(v[i])));
                if (out.loads.back().empty() || out.loads.back().find(',') != std::string::npos)
                    d.fail(pi, "a load is one value (no commas)");
            }
            no_duplicates(d, out.loads, p);
        } else {
            d.fail(p, "unknown key (a benchmark has name, command and loads)");
        }
    }
    if (out.argv.empty())
        d.fail(path, "a benchmark needs a command, e.g. command = \"tbench -t 2\"");
    if (out.name.empty())
        out.name = default_benchmark_name(out.argv);
    if (!out.loads.empty()) {
        // The load list goes into the command's own load option, as compare takes it.
        try {
            with_load(out.argv, load_list(out.loads));
        } catch (const config_error& e) {
            d.fail(path + ".loads", e.what());
        }
    }
    return out;
}

} // namespace

sweep_spec parse_sweep_spec(const std::string& text, const std::string& file, bool toml_syntax)
{
    if (!toml_syntax)
        check_json_depth(text, 64, file); // a spec nests three deep
    const spec_doc d = parse_doc(text, file, toml_syntax);
    sweep_spec s;
    s.file = file;
    s.name = std::filesystem::path(file).stem().string();
    bool have_kernels = false, have_machines = false;
    for (const auto& [key, v] : d.j.items()) {
        if (key == "name") {
            s.name = get_string(d, v, key);
            if (s.name.empty() || s.name.find('/') != std::string::npos)
                d.fail(key, "a sweep name is not empty and has no '/'");
        } else if (key == "machines") {
            s.machines = get_strings(d, v, key, true);
            have_machines = true;
        } else if (key == "kernels") {
            s.kernels = get_strings(d, v, key, false);
            have_kernels = true;
        } else if (key == "features") {
            s.features = get_string(d, v, key);
        } else if (key == "costs") {
            s.costs = get_strings(d, v, key, false);
            // Refused here, at the repeat's line; planning would name --cost, not the spec.
            if (auto [i, why] = repeated_cost_override(s.costs); i != std::string::npos)
                d.fail(fmt::format("costs[{}]", i), why);
        } else if (key == "runs") {
            s.runs = static_cast<int>(get_int(d, v, key, 1, 100'000));
        } else if (key == "seed") {
            if (v.is_number_unsigned())
                s.seed = v.get<u64>();
            else
                s.seed = static_cast<u64>(get_int(d, v, key, 0, INT64_MAX));
        } else if (key == "time_limit") {
            if (!v.is_number())
                d.fail(key, fmt::format("expected seconds, found {}", type_name(v)));
            s.time_limit_s = v.get<double>();
            // The bound of run --time-limit (max_time_limit_s): a spec allowed up to 1e9 s and
            // a value past 10^6 failed only later, at planning, without the spec's line.
            if (!(s.time_limit_s > 0) || !std::isfinite(s.time_limit_s) ||
                s.time_limit_s > max_time_limit_s)
                d.fail(key, fmt::format("{} is not a number of seconds in (0, {}]",
                                        s.time_limit_s, max_time_limit_s));
        } else if (key == "check") {
            s.check = get_string(d, v, key);
            if (s.check != "sampled" && s.check != "every")
                d.fail(key, fmt::format("'{}' is neither 'sampled' nor 'every'", s.check));
        } else if (key == "benchmarks") {
            if (!v.is_array() || v.empty())
                d.fail(key, "expected one or more [[benchmarks]] tables");
            for (std::size_t i = 0; i < v.size(); ++i)
                s.benchmarks.push_back(parse_benchmark(d, v[i], fmt::format("benchmarks[{}]", i)));
        } else {
            const std::string hint =
                nearest_name(key, {"name", "machines", "kernels", "features", "costs", "runs",
                                   "seed", "time_limit", "check", "benchmarks"});
            d.fail(key, hint.empty() ? "unknown key"
                                     : fmt::format("unknown key (did you mean '{}'?)", hint));
        }
    }
    if (!have_machines || s.machines.empty())
        d.fail("", "no machines (machines = [\"bergamo-2s\"])");
    if (!have_kernels || s.kernels.empty())
        d.fail("", "no kernels (kernels = [\"6.6\", \"6.6+NO_RUN_TO_PARITY\"]: the arms, the "
                   "first the baseline)");
    if (s.benchmarks.empty())
        d.fail("", "no benchmarks ([[benchmarks]] with command = \"...\")");
    no_duplicates(d, s.machines, "machines");
    no_duplicates(d, s.kernels, "kernels");
    std::vector<std::string> names;
    for (const auto& b : s.benchmarks)
        names.push_back(b.name);
    if (const std::size_t i = first_repeat(names); i != std::string::npos)
        d.fail(fmt::format("benchmarks[{}]", i),
               fmt::format("a second benchmark named '{}': give each a name = \"...\"", names[i]));
    // A spec's lists are bounded only by its size (16 MiB), so the product can wrap around:
    // counted with overflow checks.
    std::size_t total = 0;
    bool wrapped = false;
    for (const auto& b : s.benchmarks)
        wrapped |= __builtin_add_overflow(total, std::max<std::size_t>(1, b.loads.size()), &total);
    for (const std::size_t factor :
         {s.machines.size(), s.kernels.size(), static_cast<std::size_t>(s.runs)})
        wrapped |= __builtin_mul_overflow(total, factor, &total);
    if (wrapped || total > max_sweep_runs)
        d.fail("", fmt::format("the sweep has {} runs; at most {} fit in one sweep (split it "
                               "into several specs sharing a store)",
                               wrapped ? std::string("more than 2^64") : std::to_string(total),
                               max_sweep_runs));
    return s;
}

sweep_spec read_sweep_spec(const std::string& path)
{
    const std::string text = read_input_file(path, path, 16u << 20, "sweep spec");
    return parse_sweep_spec(text, path, !path.ends_with(".json"));
}

sweep_plan plan_sweep(const sweep_spec& spec)
{
    sweep_plan out;
    for (const std::string& machine : spec.machines) {
        for (const sweep_benchmark& b : spec.benchmarks) {
            compare_spec c;
            c.machine = machine;
            c.arms = spec.kernels;
            c.features = spec.features;
            c.costs = spec.costs;
            c.runs = spec.runs;
            c.seed = spec.seed;
            c.time_limit_s = spec.time_limit_s;
            c.check = spec.check;
            c.workload_argv = b.argv;
            if (!b.loads.empty())
                c.workload_argv = with_load(b.argv, load_list(b.loads));
            sweep_experiment e;
            e.name = fmt::format("{}/{}/{}", spec.name, machine, b.name);
            e.machine = machine;
            try {
                e.plan = plan_compare(c);
            } catch (const config_error& err) {
                throw config_error(spec.file,
                                   fmt::format("{} on {}: {}", b.name, machine, err.what()));
            }
            e.plan.info.command = "schedlab sweep " + spec.file;
            for (const run_spec& r : e.plan.runs) {
                out.runs.push_back(r);
                out.experiment_of.push_back(out.experiments.size());
            }
            out.experiments.push_back(std::move(e));
        }
    }
    return out;
}

} // namespace schedlab
