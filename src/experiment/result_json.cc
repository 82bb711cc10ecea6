// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/result_json.h"

#include "sim/config_error.h"
#include "sim/file_io.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace schedlab {

using ojson = nlohmann::ordered_json;
using json = nlohmann::ordered_json; // keeps the file's member order (schedstat domains)

namespace {

/// A stored distribution: {"sub_bits", "lowest_ns": [...], "count": [...]}, non-empty buckets.
ojson hist_to_json(const histogram_buckets& b)
{
    ojson lowest = ojson::array(), count = ojson::array();
    for (const auto& [lo, n] : b) {
        lowest.push_back(lo);
        count.push_back(n);
    }
    return {{"sub_bits", summary_histogram_sub_bits}, {"lowest_ns", lowest}, {"count", count}};
}

} // namespace

nlohmann::ordered_json to_json(const run_result& r)
{
    const run_provenance& p = r.provenance;
    ojson costs = ojson::object();
    for (const auto& [name, v] : p.costs)
        costs[name] = v;
    ojson prov = {
        {"schedlab_version", p.schedlab_version},
        {"git_sha", p.git_sha},
        {"machine", p.machine},
        {"machine_spec", p.machine_spec},
        {"nr_cpus", p.nr_cpus},
        {"kernel_spec", p.kernel_spec},
        {"kernel_base", p.kernel_base},
        {"policy", p.policy},
        {"features_arg", p.features_arg},
        {"features", p.features},
        {"feature_delta", p.feature_delta},
        {"costs_ns", costs},
        {"seed", p.seed},
        {"argv", p.argv},
        {"command_line", p.command_line},
        {"time_limit_s", p.time_limit_s},
    };
    ojson metrics = ojson::array();
    for (const auto& m : r.metrics)
        metrics.push_back({{"name", m.name},
                           {"unit", m.unit},
                           {"value", m.value},
                           {"higher_is_better", m.higher_is_better}});
    const run_sched_summary& s = r.summary;
    std::vector<s64> idle_ns; // per CPU: the span less its busy time (not read back: derived)
    for (const s64 b : s.busy_ns)
        idle_ns.push_back(s.simulated_ns - b);
    ojson summary = {
        {"simulated_ns", s.simulated_ns},
        {"switches", s.switches},
        {"voluntary", s.voluntary},
        {"involuntary", s.involuntary},
        {"migrations", s.migrations},
        {"forks", s.forks},
        {"wakeups", s.wakeups},
        {"wakeup_latency_count", s.wakeup_latency_count},
        {"wakeup_latency_p50_ns", s.wakeup_latency_p50_ns},
        {"wakeup_latency_p99_ns", s.wakeup_latency_p99_ns},
        {"wakeup_latency_max_ns", s.wakeup_latency_max_ns},
        {"run_length_count", s.run_length_count},
        {"run_length_p50_ns", s.run_length_p50_ns},
        {"run_length_p99_ns", s.run_length_p99_ns},
        {"run_length_max_ns", s.run_length_max_ns},
        {"busy_ns", s.busy_ns},
        {"idle_ns", idle_ns},
        {"wakeup_latency_hist", hist_to_json(s.wakeup_latency_hist)},
        {"run_length_hist", hist_to_json(s.run_length_hist)},
        {"wakeup_targets", wakeup_targets_to_json(s.wakeup_targets)},
    };
    ojson j = {
        {"format", result_format_v1},
        {"provenance", prov},
        {"arm", r.arm},
        {"load", r.load},
        {"run_index", r.run_index},
        {"finished", r.finished},
        {"metrics", metrics},
        {"sched_summary", summary},
        {"schedule_digest", fmt::format("{:016x}", r.schedule_digest)},
        {"events_fired", r.events_fired},
    };
    if (!r.measured_nothing.empty())
        j["measured_nothing"] = r.measured_nothing;
    if (r.schedstat) {
        // domain -> idle type -> counter -> value, in the order recorded
        ojson st = ojson::object();
        for (const auto& c : *r.schedstat)
            st[c.domain][c.idle_type][c.counter] = c.value;
        j["schedstat"] = st;
    }
    j["benchmark_output"] = r.benchmark_output;
    j["summary_text"] = r.summary_text;
    return j;
}

ojson wakeup_targets_to_json(const wakeup_target_counts& c)
{
    ojson j = ojson::object(), by_other = ojson::object();
    for (int t = 0; t < nr_wakeup_targets; ++t) {
        const auto cls = static_cast<wakeup_target>(t);
        j[wakeup_target_name(cls)] = c.of(cls);
        by_other[wakeup_target_name(cls)] = c.placed[static_cast<int>(waker_kind::other)][t];
    }
    j["not_placed"] = c.not_placed;
    j["not_run"] = c.not_run;
    j["by_interrupt_or_untraced"] = by_other;
    return j;
}

namespace {

/// Member access that names what is missing or mistyped.
class reader {
public:
    reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

    const json& at(const char* key) const
    {
        if (!j_.is_object() || !j_.contains(key))
            throw config_error(where_, fmt::format("missing member \"{}\"", key));
        return j_.at(key);
    }
    template <typename T>
    T get(const char* key) const
    {
        return convert<T>(at(key), where_, fmt::format("member \"{}\"", key));
    }

    /// A JSON value as T: integers must be integers within T's range (nlohmann's own get<>
    /// would truncate them, or cast an out-of-range float with undefined behaviour).
    template <typename T>
    static T convert(const json& v, const std::string& where, const std::string& what)
    {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if (!v.is_number_integer())
                throw config_error(where,
                                   fmt::format("{} is not an integer ({})", what, v.type_name()));
            const bool fits = v.is_number_unsigned()
                                  ? v.get<u64>() <= static_cast<u64>(std::numeric_limits<T>::max())
                                  : std::in_range<T>(v.get<s64>());
            if (!fits)
                throw config_error(where, fmt::format("{} is out of range ({})", what, v.dump()));
            return v.get<T>();
        } else if constexpr (std::is_same_v<T, std::vector<s64>> ||
                             std::is_same_v<T, std::vector<u64>>) {
            if (!v.is_array())
                throw config_error(where,
                                   fmt::format("{} is not an array ({})", what, v.type_name()));
            T out;
            for (std::size_t i = 0; i < v.size(); ++i)
                out.push_back(convert<typename T::value_type>(v[i], where,
                                                              fmt::format("{}[{}]", what, i)));
            return out;
        } else {
            try {
                return v.get<T>();
            } catch (const json::exception&) {
                throw config_error(where,
                                   fmt::format("{} has the wrong type ({})", what, v.type_name()));
            }
        }
    }
    template <typename T>
    T get_or(const char* key, T fallback) const
    {
        return j_.is_object() && j_.contains(key) ? get<T>(key) : fallback;
    }
    reader sub(const char* key) const { return reader(at(key), where_ + "." + key); }
    const json& raw() const { return j_; }
    const std::string& where() const { return where_; }

private:
    const json& j_;
    std::string where_;
};

histogram_buckets hist_from_json(const reader& parent, const char* key)
{
    histogram_buckets out;
    if (!parent.raw().is_object() || !parent.raw().contains(key))
        return out;
    const reader h = parent.sub(key);
    const int sub_bits = h.get<int>("sub_bits");
    if (sub_bits != summary_histogram_sub_bits)
        throw config_error(h.where(), fmt::format("sub_bits {} is not {} (written by another "
                                                  "schedlab?)",
                                                  sub_bits, summary_histogram_sub_bits));
    const auto lowest = h.get<std::vector<u64>>("lowest_ns");
    const auto count = h.get<std::vector<u64>>("count");
    if (lowest.size() != count.size())
        throw config_error(h.where(), fmt::format("lowest_ns has {} buckets and count {}",
                                                  lowest.size(), count.size()));
    for (std::size_t i = 0; i < lowest.size(); ++i) {
        if (i > 0 && lowest[i] <= lowest[i - 1])
            throw config_error(h.where(), fmt::format("lowest_ns[{}] = {} does not ascend", i,
                                                      lowest[i]));
        out.emplace_back(lowest[i], count[i]);
    }
    return out;
}

/// Optional: a file written before the wakeup targets were kept has none (all zero).
wakeup_target_counts wakeup_targets_from_json(const reader& parent, const char* key)
{
    wakeup_target_counts c;
    if (!parent.raw().is_object() || !parent.raw().contains(key))
        return c;
    const reader w = parent.sub(key);
    const reader by_other = w.sub("by_interrupt_or_untraced");
    for (int t = 0; t < nr_wakeup_targets; ++t) {
        const char* name = wakeup_target_name(static_cast<wakeup_target>(t));
        const u64 all = w.get<u64>(name), other = by_other.get<u64>(name);
        if (other > all)
            throw config_error(
                by_other.where(),
                fmt::format("{} = {} is more than the {} of every waker", name, other, all));
        c.placed[static_cast<int>(waker_kind::task)][t] = all - other;
        c.placed[static_cast<int>(waker_kind::other)][t] = other;
    }
    c.not_placed = w.get<u64>("not_placed");
    c.not_run = w.get<u64>("not_run");
    return c;
}

} // namespace

run_result run_result_from_json(const json& j, const std::string& where)
{
    const reader rd(j, where);
    const std::string format = rd.get<std::string>("format");
    if (format != result_format_v1)
        throw config_error(where, fmt::format("format \"{}\" is not {} (written by a newer schedlab?)",
                                              format, result_format_v1));
    run_result r;
    const reader p = rd.sub("provenance");
    run_provenance& pv = r.provenance;
    pv.schedlab_version = p.get<std::string>("schedlab_version");
    pv.git_sha = p.get<std::string>("git_sha");
    pv.machine = p.get<std::string>("machine");
    pv.machine_spec = p.get<std::string>("machine_spec");
    pv.nr_cpus = p.get<int>("nr_cpus");
    pv.kernel_spec = p.get<std::string>("kernel_spec");
    pv.kernel_base = p.get<std::string>("kernel_base");
    pv.policy = p.get<std::string>("policy");
    pv.features_arg = p.get_or<std::string>("features_arg", "");
    pv.features = p.get<std::string>("features");
    pv.feature_delta = p.get_or<std::string>("feature_delta", "");
    if (!p.at("costs_ns").is_object())
        throw config_error(p.where(), "member \"costs_ns\" is not an object");
    for (const auto& [name, v] : p.at("costs_ns").items())
        pv.costs.emplace_back(name, reader::convert<s64>(v, p.where(), "costs_ns." + name));
    pv.seed = p.get<u64>("seed");
    pv.argv = p.get<std::vector<std::string>>("argv");
    pv.command_line = p.get<std::string>("command_line");
    pv.time_limit_s = p.get<double>("time_limit_s");

    r.arm = rd.get_or<std::string>("arm", "");
    r.load = rd.get_or<std::string>("load", "");
    r.run_index = rd.get_or<int>("run_index", 0);
    r.finished = rd.get<bool>("finished");
    r.measured_nothing = rd.get_or<std::string>("measured_nothing", "");
    const json& metrics = rd.at("metrics");
    if (!metrics.is_array())
        throw config_error(where, "member \"metrics\" is not an array");
    for (std::size_t i = 0; i < metrics.size(); ++i) {
        const reader m(metrics[i], fmt::format("{}.metrics[{}]", where, i));
        // A NaN value (a benchmark that measured nothing) is written as null: read it back.
        const bool nan = m.at("value").is_null();
        r.metrics.push_back({m.get<std::string>("name"), m.get<std::string>("unit"),
                             nan ? std::nan("") : m.get<double>("value"),
                             m.get<bool>("higher_is_better")});
    }
    const reader s = rd.sub("sched_summary");
    run_sched_summary& rs = r.summary;
    rs.simulated_ns = s.get<s64>("simulated_ns");
    rs.switches = s.get<u64>("switches");
    rs.voluntary = s.get<u64>("voluntary");
    rs.involuntary = s.get<u64>("involuntary");
    rs.migrations = s.get<u64>("migrations");
    rs.wakeups = s.get<u64>("wakeups");
    rs.wakeup_latency_count = s.get<u64>("wakeup_latency_count");
    rs.wakeup_latency_p50_ns = s.get<u64>("wakeup_latency_p50_ns");
    rs.wakeup_latency_p99_ns = s.get<u64>("wakeup_latency_p99_ns");
    rs.wakeup_latency_max_ns = s.get<u64>("wakeup_latency_max_ns");
    rs.busy_ns = s.get<std::vector<s64>>("busy_ns");
    rs.forks = s.get_or<u64>("forks", 0); // optional: files written before it was kept
    // optional: files written before the distributions were kept have neither
    rs.run_length_count = s.get_or<u64>("run_length_count", 0);
    rs.run_length_p50_ns = s.get_or<u64>("run_length_p50_ns", 0);
    rs.run_length_p99_ns = s.get_or<u64>("run_length_p99_ns", 0);
    rs.run_length_max_ns = s.get_or<u64>("run_length_max_ns", 0);
    rs.wakeup_latency_hist = hist_from_json(s, "wakeup_latency_hist");
    rs.wakeup_targets = wakeup_targets_from_json(s, "wakeup_targets");
    rs.run_length_hist = hist_from_json(s, "run_length_hist");

    const std::string digest = rd.get<std::string>("schedule_digest");
    try {
        std::size_t used = 0;
        r.schedule_digest = std::stoull(digest, &used, 16);
        if (used != digest.size())
            throw std::invalid_argument(digest);
    } catch (const std::exception&) {
        throw config_error(where, fmt::format("schedule_digest \"{}\" is not hexadecimal", digest));
    }
    r.events_fired = rd.get<u64>("events_fired");

    if (j.contains("schedstat")) {
        std::vector<schedstat_counter> counters;
        const json& st = j.at("schedstat");
        if (!st.is_object())
            throw config_error(where, "member \"schedstat\" is not an object");
        for (const auto& [domain, idle_types] : st.items()) {
            if (!idle_types.is_object())
                throw config_error(where, fmt::format("schedstat.{} is not an object", domain));
            for (const auto& [idle, fields] : idle_types.items()) {
                if (!fields.is_object())
                    throw config_error(
                        where, fmt::format("schedstat.{}.{} is not an object", domain, idle));
                for (const auto& [name, value] : fields.items()) {
                    if (!value.is_number())
                        throw config_error(where, fmt::format("schedstat.{}.{}.{} is not a number",
                                                              domain, idle, name));
                    counters.push_back({domain, idle, name, value.get<double>()});
                }
            }
        }
        r.schedstat = std::move(counters);
    }
    r.benchmark_output = rd.get_or<std::string>("benchmark_output", "");
    r.summary_text = rd.get_or<std::string>("summary_text", "");
    return r;
}

std::string results_to_string(const std::vector<run_result>& runs, const experiment_info& info)
{
    ojson j = {
        {"format", results_format_v1},
        {"experiment",
         {{"command", info.command},
          {"arms", info.arms},
          {"loads", info.loads},
          {"load_option", info.load_option},
          {"runs", info.runs},
          {"seed", info.seed}}},
    };
    ojson arr = ojson::array();
    for (const auto& r : runs)
        arr.push_back(to_json(r));
    j["runs"] = std::move(arr);
    return j.dump(1) + "\n";
}

namespace {

void write_text(const std::string& path, const std::string& text, const std::string& where)
{
    write_output_file(path, text, where);
}

} // namespace

void write_results_file(const std::string& path, const std::vector<run_result>& runs,
                        const experiment_info& info)
{
    write_text(path, results_to_string(runs, info), "--json");
}

void write_result_file(const std::string& path, const run_result& r)
{
    write_text(path, to_json(r).dump(1) + "\n", "--json");
}

namespace {

/// The "experiment" member of a results file: well-formed, and describing the runs it holds.
void check_experiment(const json& e, const std::vector<run_result>& runs, const std::string& where)
{
    const reader rd(e, where);
    const auto arms = rd.get<std::vector<std::string>>("arms");
    const auto loads = rd.get<std::vector<std::string>>("loads");
    const int nr_runs = rd.get<int>("runs");
    rd.get<u64>("seed");
    rd.get<std::string>("load_option");
    if (arms.empty())
        throw config_error(where, "\"arms\" is empty; a comparison has at least one arm");
    if (nr_runs < 1)
        throw config_error(where, fmt::format("\"runs\" is {}; a comparison has at least one "
                                              "run per arm and load",
                                              nr_runs));
    for (const run_result& r : runs) {
        if (std::find(arms.begin(), arms.end(), r.arm) == arms.end())
            throw config_error(where, fmt::format("a run of arm '{}', which \"arms\" does not "
                                                  "list",
                                                  r.arm));
        if (!loads.empty() && std::find(loads.begin(), loads.end(), r.load) == loads.end())
            throw config_error(where, fmt::format("a run at load '{}', which \"loads\" does not "
                                                  "list",
                                                  r.load));
        if (r.run_index < 0 || r.run_index >= nr_runs)
            throw config_error(where, fmt::format("a run with index {}, outside the {} runs per "
                                                  "arm and load",
                                                  r.run_index, nr_runs));
    }
}

} // namespace

std::vector<run_result> parse_results(const std::string& text, const std::string& where)
{
    json j;
    try {
        check_json_depth(text, max_json_depth, where);
        j = json::parse(text);
    } catch (const json::exception& e) {
        // parse errors, and out_of_range for a number beyond a double's range (1e400)
        throw config_error(where, fmt::format("not valid JSON: {}", e.what()));
    }
    if (!j.is_object() || !j.contains("format") || !j["format"].is_string())
        throw config_error(where, "not a schedlab result file (no \"format\" member)");
    const std::string format = j["format"].get<std::string>();
    std::vector<run_result> out;
    if (format == result_format_v1) {
        out.push_back(run_result_from_json(j, where));
    } else if (format == results_format_v1) {
        if (!j.contains("runs") || !j["runs"].is_array())
            throw config_error(where, "member \"runs\" is missing or not an array");
        const json& arr = j["runs"];
        for (std::size_t i = 0; i < arr.size(); ++i)
            out.push_back(run_result_from_json(arr[i], fmt::format("{}: runs[{}]", where, i)));
        if (j.contains("experiment"))
            check_experiment(j["experiment"], out, where + ": experiment");
    } else {
        throw config_error(where, fmt::format("unknown format \"{}\" (expected {} or {})", format,
                                              result_format_v1, results_format_v1));
    }
    return out;
}

std::vector<run_result> read_results_file(const std::string& path)
{
    return parse_results(read_input_file(path, path, max_results_file_bytes, "result file"), path);
}

} // namespace schedlab
