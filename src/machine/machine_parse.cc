// SPDX-License-Identifier: GPL-2.0-only
/*
 * Machine descriptions from files: the JSON machine format, `lscpu -p`
 * output and a sysfs tree (/sys/devices/system/{cpu,node}).
 *
 * All three produce a dense CPU numbering 0..n-1. lscpu and sysfs inputs
 * that list offline CPUs (or have holes) are renumbered in ascending order
 * and the machine's `numbering` says so. Container ids (core, cluster, LLC,
 * package, node) are renumbered densely in order of first appearance.
 */
#include "machine/machine_parse.h"

#include "machine/machine_costs.h"
#include "machine/presets.h"
#include "sim/config_error.h"
#include "sim/file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace schedlab {

namespace {

using nlohmann::json;

std::string did_you_mean(const std::string& token, const std::vector<std::string>& candidates)
{
    const std::string hint = nearest_name(token, candidates);
    return hint.empty() ? "" : " (did you mean '" + hint + "'?)";
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::optional<long long> to_integer(std::string_view s)
{
    s = trim(s);
    long long v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
        return std::nullopt;
    return v;
}

/* Dense ids in order of first appearance. */
template <typename Key> class id_map {
public:
    int operator()(const Key& k)
    {
        auto [it, fresh] = ids_.try_emplace(k, static_cast<int>(ids_.size()));
        return it->second;
    }
    int size() const { return static_cast<int>(ids_.size()); }

private:
    std::map<Key, int> ids_;
};

std::string renumber_note(const std::vector<int>& original)
{
    std::vector<int> missing;
    int expect = 0;
    for (int cpu : original) {
        for (; expect < cpu; ++expect)
            missing.push_back(expect);
        expect = cpu + 1;
    }
    if (missing.empty())
        return "";
    cpumask mask(expect);
    for (int cpu : missing)
        mask.set(cpu);
    return fmt::format("; CPUs renumbered densely (absent or offline: {})", mask.to_cpulist());
}

// ----------------------------------------------------------------------------------------------
// JSON

class json_reader {
public:
    explicit json_reader(const std::string& file) : file_(file) {}

    [[noreturn]] void fail(const std::string& path, const std::string& what) const
    {
        throw config_error(file_, path.empty() ? what : path + ": " + what);
    }

    void check_keys(const json& obj, const std::string& path,
                    const std::vector<std::string>& allowed) const
    {
        for (auto it = obj.begin(); it != obj.end(); ++it)
            if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
                fail(join(path, it.key()),
                     fmt::format("unknown key '{}'{}; allowed keys: {}", it.key(),
                                 did_you_mean(it.key(), allowed), fmt::join(allowed, ", ")));
    }

    const json& object(const json& j, const std::string& path) const
    {
        if (!j.is_object())
            fail(path, fmt::format("expected an object, got {}", describe(j)));
        return j;
    }

    int integer(const json& j, const std::string& path, long long lo, long long hi) const
    {
        if (!j.is_number_integer())
            fail(path, fmt::format("expected an integer, got {}", describe(j)));
        const long long v = j.is_number_unsigned()
                                ? static_cast<long long>(std::min<u64>(j.get<u64>(), 1ULL << 62))
                                : j.get<long long>();
        if (v < lo || v > hi)
            fail(path, fmt::format("{} is out of range [{}, {}]", v, lo, hi));
        return static_cast<int>(v);
    }

    std::string string(const json& j, const std::string& path) const
    {
        if (!j.is_string())
            fail(path, fmt::format("expected a string, got {}", describe(j)));
        return j.get<std::string>();
    }

    const json& array(const json& j, const std::string& path) const
    {
        if (!j.is_array())
            fail(path, fmt::format("expected an array, got {}", describe(j)));
        return j;
    }

    static std::string join(const std::string& path, const std::string& key)
    {
        return path.empty() ? key : path + "." + key;
    }

private:
    static std::string describe(const json& j)
    {
        if (j.is_null())
            return "null";
        std::string text = j.dump();
        if (text.size() > 40)
            text = text.substr(0, 37) + "...";
        return fmt::format("{} {}", j.type_name(), text);
    }

    const std::string& file_;
};

/* nlohmann reports a byte offset; turn it into line:col for the message's `where`. */
std::string line_col(std::string_view text, std::size_t byte)
{
    byte = std::min(byte, text.size());
    int line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < byte; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return fmt::format("{}:{}", line, col);
}

const std::vector<std::string> top_keys = {"format",   "name",      "description",
                                           "vendor",   "numbering", "node_reclaim_distance",
                                           "generate", "cpus",      "numa_distance",
                                           "costs"};
const std::vector<std::string> generate_keys = {
    "sockets",       "cores_per_socket", "threads_per_core",
    "cores_per_llc", "nodes_per_socket", "cores_per_cluster",
    "numbering",     "remote_distance",  "near_distance"};
const std::vector<std::string> cpu_keys = {"cpu",     "core", "cluster", "llc",
                                           "package", "node", "capacity"};

constexpr long long max_id = 1 << 20;

/*
 * "costs": {"line_llc": {"value": 20, "source": "..."}, "smt_pct": 60, ...}.
 * A plain number records that the file gave no source.
 */
struct cost_setting {
    std::string name;
    long long value;
    std::string source;
};

std::vector<cost_setting> read_costs(const json_reader& r, const json& doc, const std::string& where)
{
    std::vector<cost_setting> out;
    if (!doc.contains("costs"))
        return out;
    const json& costs = r.object(doc["costs"], "costs");
    for (auto it = costs.begin(); it != costs.end(); ++it) {
        const std::string path = "costs." + it.key();
        if (!find_cost(it.key()))
            r.fail(path, fmt::format("unknown cost '{}'{}; `schedlab costs` lists them", it.key(),
                                     did_you_mean(it.key(), cost_names())));
        cost_setting c{it.key(), 0, ""};
        const json* value = &it.value();
        if (it.value().is_object()) {
            r.check_keys(it.value(), path, {"value", "source"});
            if (!it.value().contains("value"))
                r.fail(path + ".value", "missing (a cost object is {\"value\": N, \"source\": \"...\"})");
            value = &it.value()["value"];
            if (it.value().contains("source"))
                c.source = r.string(it.value()["source"], path + ".source");
            if (c.source.empty())
                c.source = fmt::format("{} (no source given)", where);
        } else {
            c.source = fmt::format("{} (no source given)", where);
        }
        if (!value->is_number_integer())
            r.fail(value == &it.value() ? path : path + ".value",
                   "expected an integer (or an object {\"value\": N, \"source\": \"...\"})");
        c.value = r.integer(*value, value == &it.value() ? path : path + ".value", 0,
                            1'000'000'000'000LL);
        out.push_back(std::move(c));
    }
    return out;
}

void apply_costs(machine& m, const std::vector<cost_setting>& costs, const std::string& where)
{
    for (const auto& c : costs)
        set_machine_cost(m, c.name, c.value, c.source, where + ": costs." + c.name);
}

/* A machine file's text as JSON; config_error with its line and column if it is not JSON. */
json parse_machine_json(std::string_view text, const std::string& where)
{
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        throw config_error(where + ":" + line_col(text, nul + 1),
                           "a NUL byte: binary data, not a JSON machine file");
    check_json_depth(text, max_machine_json_depth, where);
    json doc;
    try {
        // A key given twice (a cost, "name") is refused: nlohmann would keep the last silently.
        doc = json::parse(text.begin(), text.end(),
                          refuse_repeated_keys<json>([&](const std::string& k) {
                              throw config_error(where, fmt::format("'{}': a key given twice in "
                                                                    "one object (JSON would keep "
                                                                    "the last silently)",
                                                                    k));
                          }));
    } catch (const json::parse_error& e) {
        std::string msg = e.what();
        // "[json.exception.parse_error.101] parse error at line 2, column 5: syntax error ..."
        if (auto pos = msg.find("column "); pos != std::string::npos)
            if (auto colon = msg.find(": ", pos); colon != std::string::npos)
                msg = msg.substr(colon + 2);
        throw config_error(where + ":" + line_col(text, e.byte), "malformed JSON: " + msg);
    } catch (const json::exception& e) {
        // out_of_range.406: a number beyond a double's range ("2E482")
        std::string msg = e.what();
        if (auto pos = msg.find("] "); pos != std::string::npos)
            msg = msg.substr(pos + 2);
        throw config_error(where, "malformed JSON: " + msg);
    }
    return doc;
}

/* The "generate" form: a symmetric machine from its counts. */
machine generated_machine(const json_reader& r, const json& doc, symmetric_machine_spec spec,
                          std::optional<int> reclaim, const std::vector<cost_setting>& costs,
                          const std::string& where)
{
    for (const char* key : {"numbering", "numa_distance"})
        if (doc.contains(key))
            r.fail(key, "not allowed with \"generate\" (the generator derives it); use "
                        "generate.numbering / generate.remote_distance, or the \"cpus\" form");
    const json& g = r.object(doc["generate"], "generate");
    r.check_keys(g, "generate", generate_keys);
    auto get = [&](const char* key, int& field, long long lo, long long hi) {
        if (g.contains(key))
            field = r.integer(g[key], std::string("generate.") + key, lo, hi);
    };
    for (const char* key : {"sockets", "cores_per_socket", "threads_per_core"})
        if (!g.contains(key))
            r.fail(std::string("generate.") + key, "missing (required)");
    get("sockets", spec.sockets, 1, 64);
    get("cores_per_socket", spec.cores_per_socket, 1, 4096);
    get("threads_per_core", spec.threads_per_core, 1, 8);
    get("cores_per_llc", spec.cores_per_llc, 0, 4096);
    get("nodes_per_socket", spec.nodes_per_socket, 1, 64);
    get("cores_per_cluster", spec.cores_per_cluster, 1, 4096);
    get("remote_distance", spec.remote_distance, 11, 255);
    get("near_distance", spec.near_distance, 11, 255);
    if (reclaim)
        spec.node_reclaim_distance = *reclaim;
    if (g.contains("numbering"))
        spec.numbering = parse_cpu_numbering(r.string(g["numbering"], "generate.numbering"),
                                             where + ": generate.numbering");
    machine gm = make_symmetric_machine(spec, where + ": generate");
    apply_costs(gm, costs, where);
    return gm;
}

/* The "cpus" form's CPUs: each CPU's core, cluster, LLC, package, node and capacity. */
void read_json_cpus(const json_reader& r, const json& doc, machine& m)
{
    const json& cpus = r.array(doc["cpus"], "cpus");
    if (cpus.empty())
        r.fail("cpus", "is empty; a machine has at least one CPU");
    if (cpus.size() > static_cast<std::size_t>(max_nr_cpus))
        r.fail("cpus", fmt::format("lists {} CPUs, more than the {} a kernel supports (NR_CPUS on "
                                   "x86_64)",
                                   cpus.size(), max_nr_cpus));
    m.cpus.resize(cpus.size());
    std::vector<int> seen(cpus.size(), -1);
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        const std::string path = fmt::format("cpus[{}]", i);
        const json& c = r.object(cpus[i], path);
        r.check_keys(c, path, cpu_keys);
        for (const char* key : {"cpu", "core", "llc", "package"})
            if (!c.contains(key))
                r.fail(path + "." + key, "missing (required: cpu, core, llc, package)");
        const int n = static_cast<int>(cpus.size());
        const int cpu = r.integer(c["cpu"], path + ".cpu", 0, n - 1);
        if (seen[cpu] >= 0)
            r.fail(path + ".cpu", fmt::format("cpu {} is listed twice (also at cpus[{}]); CPUs "
                                              "must be numbered 0..{} exactly once",
                                              cpu, seen[cpu], n - 1));
        seen[cpu] = static_cast<int>(i);
        cpu_desc& d = m.cpus[cpu];
        d.core = r.integer(c["core"], path + ".core", 0, max_id);
        d.cluster =
            c.contains("cluster") ? r.integer(c["cluster"], path + ".cluster", 0, max_id) : d.core;
        d.llc = r.integer(c["llc"], path + ".llc", 0, max_id);
        d.package = r.integer(c["package"], path + ".package", 0, max_id);
        d.node = c.contains("node") ? r.integer(c["node"], path + ".node", 0, 4095) : 0;
        d.capacity = c.contains("capacity")
                         ? static_cast<u32>(r.integer(c["capacity"], path + ".capacity", 1, 1024))
                         : 1024;
    }
}

/* The "cpus" form's node distance table (one node when it is absent). */
void read_numa_distance(const json_reader& r, const json& doc, machine& m)
{
    if (doc.contains("numa_distance")) {
        const json& rows = r.array(doc["numa_distance"], "numa_distance");
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const std::string path = fmt::format("numa_distance[{}]", i);
            const json& row = r.array(rows[i], path);
            if (row.size() != rows.size())
                r.fail(path, fmt::format("has {} entries but the table has {} rows; the distance "
                                         "table must be square",
                                         row.size(), rows.size()));
            std::vector<int> out;
            for (std::size_t j = 0; j < row.size(); ++j)
                out.push_back(r.integer(row[j], fmt::format("{}[{}]", path, j), 0, 255));
            m.numa_distance.push_back(std::move(out));
        }
    } else {
        int max_node = 0;
        for (const cpu_desc& d : m.cpus)
            max_node = std::max(max_node, d.node);
        if (max_node > 0)
            r.fail("numa_distance",
                   fmt::format("missing; required when CPUs are on {} nodes", max_node + 1));
        m.numa_distance = {{10}};
    }
}

} // namespace

machine machine_from_json(std::string_view text, const std::string& where)
{
    json doc = parse_machine_json(text, where);
    const json_reader r(where);
    if (!doc.is_object())
        r.fail("", fmt::format("a machine file is a JSON object ({{\"format\": \"{}\", ...}}), "
                               "got {}",
                               machine_format_v1, doc.is_null() ? "null" : doc.type_name()));
    r.check_keys(doc, "", top_keys);

    if (!doc.contains("format"))
        r.fail("format", fmt::format("missing; a machine file starts with \"format\": \"{}\"",
                                     machine_format_v1));
    const std::string format = r.string(doc["format"], "format");
    if (format != machine_format_v1)
        r.fail("format", fmt::format("unsupported format '{}'; this schedlab reads '{}'", format,
                                     machine_format_v1));

    const bool has_generate = doc.contains("generate"), has_cpus = doc.contains("cpus");
    if (has_generate == has_cpus)
        r.fail("", has_generate ? "has both \"generate\" and \"cpus\"; use one form"
                                : "needs either a \"generate\" object or a \"cpus\" array");

    std::string name = doc.contains("name") ? r.string(doc["name"], "name")
                                            : std::filesystem::path(where).stem().string();
    std::string description =
        doc.contains("description") ? r.string(doc["description"], "description") : "";
    std::string vendor = doc.contains("vendor") ? r.string(doc["vendor"], "vendor") : "other";
    if (vendor != "amd" && vendor != "intel" && vendor != "other")
        r.fail("vendor", fmt::format("'{}' is not one of amd, intel, other{}", vendor,
                                     did_you_mean(vendor, {"amd", "intel", "other"})));
    std::optional<int> reclaim;
    if (doc.contains("node_reclaim_distance"))
        reclaim = r.integer(doc["node_reclaim_distance"], "node_reclaim_distance", 10, 255);
    const std::vector<cost_setting> costs = read_costs(r, doc, where);

    if (has_generate) {
        symmetric_machine_spec spec;
        spec.name = name;
        spec.description = description;
        spec.vendor = vendor;
        return generated_machine(r, doc, std::move(spec), reclaim, costs, where);
    }

    machine m;
    m.name = std::move(name);
    m.description = std::move(description);
    m.vendor = std::move(vendor);
    m.numbering = doc.contains("numbering") ? r.string(doc["numbering"], "numbering") : "explicit";
    m.node_reclaim_distance = reclaim ? *reclaim : m.vendor == "amd" ? 32 : 30;

    read_json_cpus(r, doc, m);
    read_numa_distance(r, doc, m);
    apply_costs(m, costs, where);
    m.validate(where);
    return m;
}

std::string machine_to_json(const machine& m)
{
    auto str = [](const std::string& s) { return json(s).dump(); };
    std::string out = "{\n";
    out += fmt::format("  \"format\": {},\n", str(machine_format_v1));
    out += fmt::format("  \"name\": {},\n", str(m.name));
    out += fmt::format("  \"description\": {},\n", str(m.description));
    out += fmt::format("  \"vendor\": {},\n", str(m.vendor));
    out += fmt::format("  \"numbering\": {},\n", str(m.numbering));
    out += fmt::format("  \"node_reclaim_distance\": {},\n", m.node_reclaim_distance);
    out += "  \"numa_distance\": [";
    for (std::size_t i = 0; i < m.numa_distance.size(); ++i)
        out += fmt::format("{}[{}]", i ? ", " : "", fmt::join(m.numa_distance[i], ", "));
    out += "],\n";
    /* Costs that differ from costs.def or carry a source, in costs.def order. */
    std::vector<std::string> costs;
    const auto values = cost_list(m.costs);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto& [name, v] = values[i];
        const auto src = m.costs_source.find(name);
        if (src != m.costs_source.end())
            costs.push_back(fmt::format("    {}: {{\"value\": {}, \"source\": {}}}", str(name), v,
                                        str(src->second)));
        else if (v != cost_table()[i].default_value)
            costs.push_back(fmt::format("    {}: {}", str(name), v));
    }
    if (!costs.empty())
        out += fmt::format("  \"costs\": {{\n{}\n  }},\n", fmt::join(costs, ",\n"));
    out += "  \"cpus\": [\n";
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu) {
        const cpu_desc& d = m.cpus[cpu];
        out += fmt::format("    {{\"cpu\": {}, \"core\": {}, \"cluster\": {}, \"llc\": {}, "
                           "\"package\": {}, \"node\": {}, \"capacity\": {}}}{}\n",
                           cpu, d.core, d.cluster, d.llc, d.package, d.node, d.capacity,
                           cpu + 1 < m.nr_cpus() ? "," : "");
    }
    out += "  ]\n}\n";
    return out;
}

// ----------------------------------------------------------------------------------------------
// lscpu -p

namespace {

std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    for (;;) {
        const auto pos = s.find(sep, start);
        out.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
        if (pos == std::string_view::npos)
            return out;
        start = pos + 1;
    }
}

std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> lines = split(text, '\n');
    for (auto& l : lines)
        if (!l.empty() && l.back() == '\r')
            l.remove_suffix(1);
    return lines;
}

/* "L1d", "L2", "L3": a cache column name; returns its level or 0. */
int cache_level(std::string_view name)
{
    name = trim(name);
    if (name.size() < 2 || (name[0] != 'L' && name[0] != 'l') || !std::isdigit(name[1]))
        return 0;
    std::size_t i = 1;
    int level = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) {
        level = level * 10 + (name[i++] - '0');
        if (level > 9)
            return 0; // no cache level has two digits: not a cache column
    }
    for (; i < name.size(); ++i)
        if (!std::isalpha(static_cast<unsigned char>(name[i])))
            return 0;
    return level;
}

bool is_header(std::string_view line)
{
    if (line.empty() || line[0] != '#')
        return false;
    for (auto tok : split(line.substr(1), ','))
        if (trim(tok) == "CPU")
            return true;
    return false;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

} // namespace

bool looks_like_lscpu(std::string_view text)
{
    for (auto line : lines_of(text)) {
        line = trim(line);
        if (line.empty())
            continue;
        if (line.rfind("# The following is the parsable format", 0) == 0 || is_header(line))
            return true;
        if (line[0] != '#')
            return false;
    }
    return false;
}

namespace {

/* The columns of `lscpu -p` output, found by name in its header comment. */
struct lscpu_columns {
    /* A cache's column and sub-index (caches in one colon-separated column), with its level. */
    struct cache_col {
        int column, sub, level;
        std::string name;
    };
    int header_line = -1; ///< the header's index in the lines
    int ncols = 0;
    int col_cpu = -1, col_core = -1, col_socket = -1, col_node = -1, col_online = -1;
    std::vector<cache_col> caches;
    std::optional<cache_col> llc_col; ///< the highest-level cache
    std::optional<cache_col> l2_col;  ///< the L2 when the LLC is above it (the cluster)
};

/* One online CPU's row of `lscpu -p` output. */
struct lscpu_row {
    int cpu, core, socket, node;
    long long llc, l2; // -1: unknown
    int line;
};

/* The header comment and the columns it names; config_error without one or a CPU column. */
lscpu_columns find_lscpu_columns(const std::vector<std::string_view>& lines,
                                 const std::string& where)
{
    lscpu_columns k;
    for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
        const auto line = trim(lines[i]);
        if (line.empty() || line[0] != '#')
            break;
        if (is_header(line))
            k.header_line = i;
    }
    if (k.header_line < 0)
        throw config_error(where,
                           "no '# CPU,Core,Socket,...' header comment: not `lscpu -p` "
                           "output (run `lscpu -p` or `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE`)");

    const auto header = split(trim(lines[k.header_line]).substr(1), ',');
    k.ncols = static_cast<int>(header.size());
    for (int c = 0; c < k.ncols; ++c) {
        const std::string name = lower(trim(header[c]));
        if (name == "cpu")
            k.col_cpu = c;
        else if (name == "core")
            k.col_core = c;
        else if (name == "socket")
            k.col_socket = c;
        else if (name == "node")
            k.col_node = c;
        else if (name == "online")
            k.col_online = c;
        else {
            const auto subs = split(trim(header[c]), ':');
            bool all_caches = !subs.empty();
            for (auto s : subs)
                all_caches = all_caches && cache_level(s) > 0;
            if (all_caches)
                for (int s = 0; s < static_cast<int>(subs.size()); ++s)
                    k.caches.push_back({c, s, cache_level(subs[s]), std::string(trim(subs[s]))});
        }
    }
    const std::string header_where = fmt::format("{}:{}", where, k.header_line + 1);
    if (k.col_cpu < 0)
        throw config_error(header_where, "header has no CPU column");

    for (const auto& c : k.caches) {
        if (!k.llc_col || c.level >= k.llc_col->level)
            k.llc_col = c;
        if (c.level == 2 && !k.l2_col)
            k.l2_col = c;
    }
    if (k.l2_col && k.llc_col && k.llc_col->level <= 2)
        k.l2_col.reset(); // the L2 is the LLC: no separate cluster level
    return k;
}

/* The online CPUs' rows, by CPU number; config_error naming the line for a malformed one. */
std::vector<lscpu_row> read_lscpu_rows(const std::vector<std::string_view>& lines,
                                       const lscpu_columns& k, const std::string& where)
{
    using cache_col = lscpu_columns::cache_col;
    std::vector<lscpu_row> rows;
    std::set<int> cpus_seen;
    for (int i = k.header_line + 1; i < static_cast<int>(lines.size()); ++i) {
        const auto line = trim(lines[i]);
        if (line.empty() || line[0] == '#')
            continue;
        const std::string at = fmt::format("{}:{}", where, i + 1);
        const auto fields = split(line, ',');
        if (static_cast<int>(fields.size()) != k.ncols)
            throw config_error(at, fmt::format("{} fields, but the header names {} columns",
                                               fields.size(), k.ncols));
        auto number = [&](int col, const char* what) -> std::optional<long long> {
            if (col < 0)
                return std::nullopt;
            const auto f = trim(fields[col]);
            if (f.empty() || f == "-")
                return std::nullopt;
            auto v = to_integer(f);
            if (!v || *v < 0)
                throw config_error(
                    at, fmt::format("{} column: '{}' is not a non-negative integer", what, f));
            return v;
        };
        auto cache_id = [&](const cache_col* c) -> long long {
            if (!c)
                return -1;
            const auto subs = split(trim(fields[c->column]), ':');
            if (trim(fields[c->column]).empty())
                throw config_error(at, fmt::format("the {} cache id is empty for an online CPU "
                                                   "(lscpu prints one for each; leave the column "
                                                   "out if the machine has no {})",
                                                   c->name, c->name));
            if (c->sub >= static_cast<int>(subs.size()))
                throw config_error(at, fmt::format("cache column has {} values, the header names "
                                                   "more caches",
                                                   subs.size()));
            const auto f = trim(subs[c->sub]);
            if (f.empty() || f == "-")
                throw config_error(at, fmt::format("the {} cache id is empty for an online CPU "
                                                   "(lscpu prints one for each; leave the column "
                                                   "out if the machine has no {})",
                                                   c->name, c->name));
            auto v = to_integer(f);
            if (!v || *v < 0)
                throw config_error(
                    at, fmt::format("{} cache id '{}' is not a non-negative integer", c->name, f));
            return *v;
        };
        const auto cpu = number(k.col_cpu, "CPU");
        if (!cpu)
            throw config_error(at, "CPU column is empty");
        if (*cpu >= max_nr_cpus)
            throw config_error(at, fmt::format("CPU {} is out of range (a kernel numbers at most "
                                               "{} CPUs)",
                                               *cpu, max_nr_cpus));
        if (!cpus_seen.insert(static_cast<int>(*cpu)).second)
            throw config_error(at, fmt::format("CPU {} is listed twice", *cpu));
        if (k.col_online >= 0) {
            const auto f = lower(trim(fields[k.col_online]));
            if (f == "n" || f == "no" || f == "0")
                continue;
        }
        const auto core = number(k.col_core, "Core");
        const auto socket = number(k.col_socket, "Socket");
        if ((k.col_core >= 0 && !core) || (k.col_socket >= 0 && !socket))
            continue; // offline CPU: lscpu -a -p leaves its topology fields empty
        const auto node = number(k.col_node, "Node");
        rows.push_back({static_cast<int>(*cpu),
                        core ? static_cast<int>(*core) : static_cast<int>(*cpu),
                        socket ? static_cast<int>(*socket) : 0, node ? static_cast<int>(*node) : 0,
                        cache_id(k.llc_col ? &*k.llc_col : nullptr),
                        cache_id(k.l2_col ? &*k.l2_col : nullptr), i + 1});
    }
    if (rows.empty())
        throw config_error(where, "no online CPUs listed after the header");
    std::sort(rows.begin(), rows.end(),
              [](const lscpu_row& a, const lscpu_row& b) { return a.cpu < b.cpu; });
    return rows;
}

} // namespace

/*
 * Columns are found by name from the header comment, so both the default
 * `lscpu -p` ("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3", one column per cache)
 * and `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` ("...,L1d:L1i:L2:L3", caches in
 * one colon-separated column) parse. The LLC is the highest-level cache (L3
 * when present), the cluster the L2 when the LLC is above it. lscpu prints
 * no NUMA distances: nodes get the ACPI defaults 10 (local) / 20 (remote).
 * A CPU with an empty Core or Socket field, or "N" in an Online column, is
 * offline and left out; missing Node / cache columns mean one node / one
 * LLC per socket.
 */
machine machine_from_lscpu(std::string_view text, const std::string& where)
{
    const auto lines = lines_of(text);
    const lscpu_columns k = find_lscpu_columns(lines, where);
    const std::vector<lscpu_row> rows = read_lscpu_rows(lines, k, where);

    std::set<int> node_ids;
    for (const lscpu_row& r : rows)
        node_ids.insert(r.node);
    std::map<int, int> node_index;
    for (int id : node_ids)
        node_index.emplace(id, static_cast<int>(node_index.size()));

    machine m;
    m.name = std::filesystem::path(where).stem().string();
    m.description = fmt::format("imported from `lscpu -p` output {}", where);
    m.vendor = "other";
    id_map<std::pair<int, int>> core_ids;                      // (socket, core)
    id_map<std::pair<int, long long>> llc_ids;                 // (socket, LLC id)
    id_map<std::tuple<int, long long, long long>> cluster_ids; // (socket, LLC, L2 or core)
    id_map<int> package_ids;
    std::vector<int> original;
    for (const lscpu_row& r : rows) {
        cpu_desc d;
        d.core = core_ids({r.socket, r.core});
        d.llc = llc_ids({r.socket, r.llc}); // unknown LLC (-1): one per socket
        d.cluster = cluster_ids({r.socket, r.llc, r.l2 >= 0 ? r.l2 : -2 - d.core});
        d.package = package_ids(r.socket);
        d.node = node_index.at(r.node);
        m.cpus.push_back(d);
        original.push_back(r.cpu);
    }
    m.numbering = "as listed by lscpu" + renumber_note(original);
    const int nodes = static_cast<int>(node_index.size());
    m.numa_distance.assign(nodes, std::vector<int>(nodes, 20));
    for (int i = 0; i < nodes; ++i)
        m.numa_distance[i][i] = 10;
    for (const auto& ci : cost_table()) // the defaults, saying why
        m.costs_source[ci.name] = "default (lscpu gives no costs)";
    m.validate(where);
    return m;
}

// ----------------------------------------------------------------------------------------------
// sysfs

std::vector<int> parse_cpulist(std::string_view list, const std::string& where)
{
    std::vector<int> cpus;
    list = trim(list);
    if (list.empty())
        return cpus;
    for (auto part : split(list, ',')) {
        part = trim(part);
        const auto dash = part.find('-');
        auto lo = to_integer(part.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : to_integer(part.substr(dash + 1));
        if (!lo || !hi || *lo < 0 || *hi < *lo || *hi >= max_nr_cpus)
            throw config_error(where, fmt::format("malformed CPU list '{}' (expected e.g. "
                                                  "\"0-3,8,10-11\")",
                                                  list));
        for (long long cpu = *lo; cpu <= *hi; ++cpu)
            cpus.push_back(static_cast<int>(cpu));
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

namespace {

namespace fs = std::filesystem;

std::optional<std::string> slurp(const fs::path& p)
{
    std::ifstream in(p);
    if (!in)
        return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::optional<long long> read_int(const fs::path& p)
{
    auto text = slurp(p);
    if (!text)
        return std::nullopt;
    auto v = to_integer(*text);
    if (!v)
        throw config_error(p.string(), fmt::format("expected an integer, got '{}'", trim(*text)));
    return v;
}

std::optional<std::vector<int>> read_list(const fs::path& p)
{
    auto text = slurp(p);
    if (!text)
        return std::nullopt;
    return parse_cpulist(*text, p.string());
}

/* Numbered entries "<prefix>N" of a directory, ascending. */
std::vector<int> numbered_entries(const fs::path& dir, std::string_view prefix)
{
    std::vector<int> ids;
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0)
            continue;
        if (auto v = to_integer(std::string_view(name).substr(prefix.size()));
            v && *v >= 0 && *v < max_nr_cpus) // (node ids are below the CPU count too)
            ids.push_back(static_cast<int>(*v));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace

namespace {

/* One online CPU's topology as sysfs tells it, keyed by the first CPU of each span. */
struct sysfs_cpu {
    int cpu;
    int package;
    int core_key;    // first CPU of the core's thread siblings
    int cluster_key; // first CPU of the cluster
    int llc_key;     // first CPU sharing the LLC; -1 unknown
    u32 capacity;
};

/* cpuN's topology, caches and capacity; nullopt for an offline CPU (no topology/). */
std::optional<sysfs_cpu> read_sysfs_cpu(const fs::path& root, int cpu)
{
    std::error_code ec;
    const fs::path dir = root / fmt::format("cpu{}", cpu);
    const fs::path topo = dir / "topology";
    if (!fs::is_directory(topo, ec))
        return std::nullopt; // offline
    sysfs_cpu r{cpu, 0, cpu, cpu, -1, 1024};
    if (auto pkg = read_int(topo / "physical_package_id"); pkg && *pkg >= 0)
        r.package = static_cast<int>(*pkg);
    std::vector<int> siblings = {cpu};
    if (auto s = read_list(topo / "thread_siblings_list"))
        siblings = *s;
    else if (auto s2 = read_list(topo / "core_cpus_list"))
        siblings = *s2;
    if (siblings.empty() || std::find(siblings.begin(), siblings.end(), cpu) == siblings.end())
        throw config_error((topo / "thread_siblings_list").string(),
                           fmt::format("does not contain cpu{} itself", cpu));
    r.core_key = siblings.front();

    /* Caches: highest-level data/unified cache is the LLC, a level-2 one the cluster. */
    std::optional<std::vector<int>> l2;
    int llc_level = 0;
    for (int idx : numbered_entries(dir / "cache", "index")) {
        const fs::path c = dir / "cache" / fmt::format("index{}", idx);
        auto level = read_int(c / "level");
        auto type = slurp(c / "type");
        auto shared = read_list(c / "shared_cpu_list");
        if (!level || !shared || shared->empty())
            continue;
        if (type && trim(*type) == "Instruction")
            continue;
        if (*level == 2)
            l2 = shared;
        if (*level > llc_level) {
            llc_level = static_cast<int>(*level);
            r.llc_key = shared->front();
        }
    }
    std::optional<std::vector<int>> cluster = read_list(topo / "cluster_cpus_list");
    if (!cluster && l2 && llc_level > 2)
        cluster = l2;
    /* A cluster must hold the whole core; otherwise ignore it (CLS then equals SMT). */
    if (cluster &&
        std::includes(cluster->begin(), cluster->end(), siblings.begin(), siblings.end()))
        r.cluster_key = cluster->front();
    else
        r.cluster_key = r.core_key;
    if (auto cap = read_int(dir / "cpu_capacity"); cap && *cap > 0)
        r.capacity = static_cast<u32>(std::min<long long>(*cap, 1024));
    return r;
}

/* The online nodes that hold the CPUs, renumbered in ascending order (-1: no nodes). */
struct sysfs_nodes {
    std::vector<int> sys_nodes;     ///< the online nodes' sysfs numbers
    std::map<int, int> node_of_cpu; ///< cpu -> sysfs node
    std::set<int> used_nodes;       ///< {-1} when a CPU is outside every node
    std::map<int, int> node_index;  ///< sysfs node -> the machine's
};

/* NUMA nodes: cpu -> node from nodeN/cpulist. */
sysfs_nodes read_sysfs_nodes(const fs::path& nroot, const std::vector<sysfs_cpu>& raws)
{
    sysfs_nodes n;
    n.sys_nodes = numbered_entries(nroot, "node");
    if (auto online = read_list(nroot / "online"); online && !online->empty()) {
        std::vector<int> keep;
        std::set_intersection(n.sys_nodes.begin(), n.sys_nodes.end(), online->begin(),
                              online->end(), std::back_inserter(keep));
        n.sys_nodes = std::move(keep);
    }
    for (int node : n.sys_nodes)
        if (auto list = read_list(nroot / fmt::format("node{}", node) / "cpulist"))
            for (int cpu : *list)
                n.node_of_cpu.emplace(cpu, node);
    for (const sysfs_cpu& r : raws)
        n.used_nodes.insert(n.node_of_cpu.count(r.cpu) ? n.node_of_cpu[r.cpu] : -1);
    if (n.used_nodes.count(-1)) // CPUs outside any node (or no node directory): one node 0
        n.used_nodes = {-1};
    for (int node : n.used_nodes)
        n.node_index.emplace(node, static_cast<int>(n.node_index.size()));
    return n;
}

/* m.numa_distance's rows from nodeN/distance (the 10/20 defaults where there is none). */
void read_node_distances(machine& m, const fs::path& nroot, const sysfs_nodes& n)
{
    for (auto [sys_from, from] : n.node_index) {
        const fs::path p = nroot / fmt::format("node{}", sys_from) / "distance";
        auto text = slurp(p);
        if (!text)
            continue; // keep the 10/20 defaults
        std::vector<int> row;
        std::istringstream in(*text);
        std::string tok;
        while (in >> tok) {
            auto v = to_integer(tok);
            if (!v)
                throw config_error(p.string(), fmt::format("'{}' is not a distance", tok));
            row.push_back(static_cast<int>(*v));
        }
        /* The row has one entry per online node, in node order. */
        for (auto [sys_to, to] : n.node_index) {
            auto pos =
                std::find(n.sys_nodes.begin(), n.sys_nodes.end(), sys_to) - n.sys_nodes.begin();
            if (pos >= static_cast<long>(row.size()))
                throw config_error(p.string(), fmt::format("has {} entries, node{} needs "
                                                           "entry {}",
                                                           row.size(), sys_to, pos));
            m.numa_distance[from][to] = row[pos];
        }
    }
}

} // namespace

/*
 * Reads what the kernel exports about its own topology:
 *  cpuN/topology/{physical_package_id,core_id,thread_siblings_list,cluster_cpus_list},
 *  cpuN/cache/indexK/{level,type,shared_cpu_list} (the LLC is the highest level
 *  data or unified cache), cpuN/cpu_capacity (arm64/riscv), nodeN/{cpulist,distance}.
 * CPUs without a topology directory (offline) are left out. Nodes without CPUs
 * are dropped and the remaining nodes renumbered in ascending order.
 */
machine machine_from_sysfs(const std::string& cpu_root, const std::string& node_root)
{
    const fs::path root(cpu_root);
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        throw config_error(cpu_root, "no such directory (is sysfs mounted?)");

    std::vector<int> present = numbered_entries(root, "cpu");
    if (auto online = read_list(root / "online")) {
        std::vector<int> keep;
        std::set_intersection(present.begin(), present.end(), online->begin(), online->end(),
                              std::back_inserter(keep));
        present = std::move(keep);
    }

    std::vector<sysfs_cpu> raws;
    for (int cpu : present)
        if (auto r = read_sysfs_cpu(root, cpu))
            raws.push_back(*r);
    if (raws.empty())
        throw config_error(cpu_root, "no online CPUs with a topology/ directory found");

    /* NUMA nodes: cpu -> node from nodeN/cpulist, distances from nodeN/distance. */
    const fs::path nroot(node_root);
    const sysfs_nodes n = read_sysfs_nodes(nroot, raws);

    machine m;
    m.name = "sysfs";
    m.description = fmt::format("read from {}", cpu_root);
    m.vendor = "other";
    const int nodes = static_cast<int>(n.node_index.size());
    m.numa_distance.assign(nodes, std::vector<int>(nodes, 20));
    for (int i = 0; i < nodes; ++i)
        m.numa_distance[i][i] = 10;
    if (!n.used_nodes.count(-1))
        read_node_distances(m, nroot, n);

    id_map<std::pair<int, int>> core_ids, cluster_ids, llc_ids;
    id_map<int> package_ids;
    std::vector<int> original;
    for (const sysfs_cpu& r : raws) {
        cpu_desc d;
        d.core = core_ids({r.package, r.core_key});
        d.cluster = cluster_ids({r.package, r.cluster_key});
        d.llc = llc_ids({r.package, r.llc_key}); // unknown (-1): one LLC per package
        d.package = package_ids(r.package);
        const int sys_node = n.used_nodes.count(-1) ? -1 : n.node_of_cpu.at(r.cpu);
        d.node = n.node_index.at(sys_node);
        d.capacity = r.capacity;
        m.cpus.push_back(d);
        original.push_back(r.cpu);
    }
    m.numbering = "as numbered by the kernel" + renumber_note(original);
    m.validate(cpu_root);
    return m;
}

} // namespace schedlab
