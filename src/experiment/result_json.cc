// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/result_json.h"

#include "sim/config_error.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace schedlab {

using ojson = nlohmann::ordered_json;
using json = nlohmann::ordered_json; // keeps the file's member order (schedstat domains)

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
    ojson summary = {
        {"simulated_ns", s.simulated_ns},
        {"switches", s.switches},
        {"voluntary", s.voluntary},
        {"involuntary", s.involuntary},
        {"migrations", s.migrations},
        {"wakeups", s.wakeups},
        {"wakeup_latency_count", s.wakeup_latency_count},
        {"wakeup_latency_p50_ns", s.wakeup_latency_p50_ns},
        {"wakeup_latency_p99_ns", s.wakeup_latency_p99_ns},
        {"wakeup_latency_max_ns", s.wakeup_latency_max_ns},
        {"busy_ns", s.busy_ns},
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
        const json& v = at(key);
        try {
            return v.get<T>();
        } catch (const json::exception&) {
            throw config_error(where_, fmt::format("member \"{}\" has the wrong type ({})", key,
                                                   v.type_name()));
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
    for (const auto& [name, v] : p.at("costs_ns").items())
        pv.costs.emplace_back(name, v.get<s64>());
    pv.seed = p.get<u64>("seed");
    pv.argv = p.get<std::vector<std::string>>("argv");
    pv.command_line = p.get<std::string>("command_line");
    pv.time_limit_s = p.get<double>("time_limit_s");

    r.arm = rd.get_or<std::string>("arm", "");
    r.load = rd.get_or<std::string>("load", "");
    r.run_index = rd.get_or<int>("run_index", 0);
    r.finished = rd.get<bool>("finished");
    const json& metrics = rd.at("metrics");
    if (!metrics.is_array())
        throw config_error(where, "member \"metrics\" is not an array");
    for (std::size_t i = 0; i < metrics.size(); ++i) {
        const reader m(metrics[i], fmt::format("{}.metrics[{}]", where, i));
        r.metrics.push_back({m.get<std::string>("name"), m.get<std::string>("unit"),
                             m.get<double>("value"), m.get<bool>("higher_is_better")});
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
        for (const auto& [domain, idle_types] : st.items())
            for (const auto& [idle, fields] : idle_types.items())
                for (const auto& [name, value] : fields.items()) {
                    if (!value.is_number())
                        throw config_error(where, fmt::format("schedstat.{}.{}.{} is not a number",
                                                              domain, idle, name));
                    counters.push_back({domain, idle, name, value.get<double>()});
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
    std::ofstream f(path, std::ios::binary);
    if (!f)
        throw config_error(where, fmt::format("cannot write '{}'", path));
    f << text;
    if (!f.flush())
        throw config_error(where, fmt::format("error writing '{}'", path));
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

std::vector<run_result> parse_results(const std::string& text, const std::string& where)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
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
    } else {
        throw config_error(where, fmt::format("unknown format \"{}\" (expected {} or {})", format,
                                              result_format_v1, results_format_v1));
    }
    return out;
}

std::vector<run_result> read_results_file(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw config_error(path, "cannot open the result file");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse_results(ss.str(), path);
}

} // namespace schedlab
