// SPDX-License-Identifier: GPL-2.0-only
/*
 * The symmetric-machine generator and the named presets. Sources for every
 * preset's shape are in docs/machine-format.md; SLIT distances are typical
 * firmware values, not taken from the benchmark machines (unverified).
 */
#include "machine/presets.h"

#include "machine/machine_costs.h"
#include "machine/machine_parse.h"
#include "sim/config_error.h"
#include "sim/file_io.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedlab {

const char* to_string(cpu_numbering n)
{
    switch (n) {
    case cpu_numbering::first_threads_then_siblings:
        return "first_threads_then_siblings";
    case cpu_numbering::siblings_adjacent:
        return "siblings_adjacent";
    case cpu_numbering::sockets_interleaved:
        return "sockets_interleaved";
    }
    return "?";
}

std::vector<std::string> cpu_numbering_names()
{
    return {"first_threads_then_siblings", "siblings_adjacent", "sockets_interleaved"};
}

cpu_numbering parse_cpu_numbering(const std::string& name, const std::string& where)
{
    for (auto n : {cpu_numbering::first_threads_then_siblings, cpu_numbering::siblings_adjacent,
                   cpu_numbering::sockets_interleaved})
        if (name == to_string(n))
            return n;
    std::string hint = nearest_name(name, cpu_numbering_names());
    throw config_error(where,
                       fmt::format("unknown CPU numbering '{}'{}; expected one of "
                                   "first_threads_then_siblings, siblings_adjacent, "
                                   "sockets_interleaved",
                                   name, hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
}

machine make_symmetric_machine(const symmetric_machine_spec& spec, const std::string& where)
{
    auto need = [&](bool ok, const std::string& what) {
        if (!ok)
            throw config_error(where, what);
    };
    need(spec.sockets >= 1, fmt::format("sockets must be >= 1, got {}", spec.sockets));
    need(spec.cores_per_socket >= 1,
         fmt::format("cores_per_socket must be >= 1, got {}", spec.cores_per_socket));
    need(spec.threads_per_core >= 1,
         fmt::format("threads_per_core must be >= 1, got {}", spec.threads_per_core));
    need(spec.nodes_per_socket >= 1,
         fmt::format("nodes_per_socket must be >= 1, got {}", spec.nodes_per_socket));
    need(spec.cores_per_cluster >= 1,
         fmt::format("cores_per_cluster must be >= 1, got {}", spec.cores_per_cluster));
    need(spec.cores_per_llc >= 0,
         fmt::format("cores_per_llc must be >= 0 (0 = whole socket), got {}", spec.cores_per_llc));
    const int cores_per_llc = spec.cores_per_llc == 0 ? spec.cores_per_socket : spec.cores_per_llc;
    need(spec.cores_per_socket % spec.nodes_per_socket == 0,
         fmt::format("cores_per_socket {} is not a multiple of nodes_per_socket {}",
                     spec.cores_per_socket, spec.nodes_per_socket));
    const int cores_per_node = spec.cores_per_socket / spec.nodes_per_socket;
    need(cores_per_node % cores_per_llc == 0,
         fmt::format("cores per node ({}) is not a multiple of cores_per_llc {}: an LLC would "
                     "span NUMA nodes",
                     cores_per_node, cores_per_llc));
    need(cores_per_llc % spec.cores_per_cluster == 0,
         fmt::format("cores_per_llc {} is not a multiple of cores_per_cluster {}", cores_per_llc,
                     spec.cores_per_cluster));
    const long long total = 1LL * spec.sockets * spec.cores_per_socket * spec.threads_per_core;
    need(total <= max_nr_cpus,
         fmt::format("{} sockets x {} cores x {} threads = {} CPUs, more than the {} a kernel "
                     "supports (NR_CPUS on x86_64)",
                     spec.sockets, spec.cores_per_socket, spec.threads_per_core, total,
                     max_nr_cpus));
    need(spec.remote_distance > 10 || spec.sockets == 1,
         fmt::format("remote_distance {} must be greater than the local distance 10",
                     spec.remote_distance));
    need(spec.near_distance > 10 || spec.nodes_per_socket == 1,
         fmt::format("near_distance {} must be greater than the local distance 10",
                     spec.near_distance));

    machine m;
    m.name = spec.name;
    m.description = spec.description;
    m.vendor = spec.vendor;
    m.numbering = to_string(spec.numbering);
    m.node_reclaim_distance = spec.node_reclaim_distance != 0 ? spec.node_reclaim_distance
                              : spec.vendor == "amd"          ? 32
                                                              : 30;

    const int S = spec.sockets, cps = spec.cores_per_socket, T = spec.threads_per_core;
    const int C = S * cps;
    m.cpus.resize(static_cast<std::size_t>(total));
    for (int s = 0; s < S; ++s)
        for (int c = 0; c < cps; ++c)
            for (int t = 0; t < T; ++t) {
                const int g = s * cps + c;
                int cpu = 0;
                switch (spec.numbering) {
                case cpu_numbering::first_threads_then_siblings:
                    cpu = t * C + g;
                    break;
                case cpu_numbering::siblings_adjacent:
                    cpu = g * T + t;
                    break;
                case cpu_numbering::sockets_interleaved:
                    cpu = t * C + c * S + s;
                    break;
                }
                cpu_desc& d = m.cpus[cpu];
                d.core = g;
                d.cluster = g / spec.cores_per_cluster;
                d.llc = g / cores_per_llc;
                d.package = s;
                d.node = s * spec.nodes_per_socket + c / cores_per_node;
                d.capacity = 1024;
            }

    const int nodes = S * spec.nodes_per_socket;
    m.numa_distance.assign(nodes, std::vector<int>(nodes, 10));
    for (int i = 0; i < nodes; ++i)
        for (int j = 0; j < nodes; ++j)
            if (i != j)
                m.numa_distance[i][j] = i / spec.nodes_per_socket == j / spec.nodes_per_socket
                                            ? spec.near_distance
                                            : spec.remote_distance;
    m.validate(where);
    return m;
}

namespace {

/*
 * Shapes and their sources: docs/machine-format.md.
 * SLIT remote distances are the usual firmware values for these platforms
 * (32 on EPYC, 21 on Xeon 2S) and were not confirmed for the benchmark
 * machines themselves.
 */
const std::vector<symmetric_machine_spec>& preset_specs()
{
    static const std::vector<symmetric_machine_spec> specs = [] {
        std::vector<symmetric_machine_spec> v;
        symmetric_machine_spec s;

        s = {};
        s.name = "bergamo-2s";
        s.description = "AMD EPYC Zen4c Bergamo 2S: 2x128C/256T SMT2, 32 LLCs of 8 cores "
                        "(16 CPUs), NPS1, SLIT 10/32, 512 CPUs";
        s.vendor = "amd";
        s.sockets = 2, s.cores_per_socket = 128, s.threads_per_core = 2, s.cores_per_llc = 8;
        s.remote_distance = 32;
        v.push_back(s);

        s = {};
        s.name = "milan-2s";
        s.description = "AMD EPYC Zen3 Milan 2S: 2x64C/128T SMT2, 16 LLCs of 8 cores (16 CPUs), "
                        "NPS1, SLIT 10/32, 256 CPUs";
        s.vendor = "amd";
        s.sockets = 2, s.cores_per_socket = 64, s.threads_per_core = 2, s.cores_per_llc = 8;
        s.remote_distance = 32;
        v.push_back(s);

        s = {};
        s.name = "spr-2s";
        s.description = "Intel Sapphire Rapids 2S: 2x56C/112T SMT2, one 112-CPU LLC per socket, "
                        "SLIT 10/21, 224 CPUs";
        s.vendor = "intel";
        s.sockets = 2, s.cores_per_socket = 56, s.threads_per_core = 2, s.cores_per_llc = 0;
        s.remote_distance = 21;
        v.push_back(s);

        s = {};
        s.name = "ryzen-7950x";
        s.description = "AMD Ryzen 9 7950X: 16C/32T SMT2, 2 CCX of 8 cores (16 CPUs), one node";
        s.vendor = "amd";
        s.sockets = 1, s.cores_per_socket = 16, s.threads_per_core = 2, s.cores_per_llc = 8;
        v.push_back(s);

        s = {};
        s.name = "skylake-18c";
        s.description = "Intel Skylake 1S: 18C/36T SMT2, one 36-CPU LLC";
        s.vendor = "intel";
        s.sockets = 1, s.cores_per_socket = 18, s.threads_per_core = 2, s.cores_per_llc = 0;
        v.push_back(s);

        s = {};
        s.name = "icelake-2s";
        s.description = "Intel Ice Lake 2S: 2x32C/64T SMT2, one 64-CPU LLC per socket, sockets "
                        "interleaved (even CPUs on socket 0), SLIT 10/20";
        s.vendor = "intel";
        s.sockets = 2, s.cores_per_socket = 32, s.threads_per_core = 2, s.cores_per_llc = 0;
        s.numbering = cpu_numbering::sockets_interleaved;
        s.remote_distance = 20;
        v.push_back(s);
        return v;
    }();
    return specs;
}

const char* host_description = "this machine, read from /sys/devices/system/{cpu,node}";

std::vector<std::string> preset_names()
{
    std::vector<std::string> names;
    for (const auto& p : machine_presets())
        names.push_back(p.name);
    return names;
}

std::string read_file(const std::string& path)
{
    return read_input_file(path, path, max_machine_file_bytes, "machine file");
}

/* "AuthenticAMD" / "GenuineIntel" from /proc/cpuinfo, and the x86 family for init_amd_zn(). */
void read_cpuinfo_vendor(machine& m)
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    int family = -1;
    while (std::getline(in, line)) {
        auto value = [&] {
            auto colon = line.find(':');
            std::string v = colon == std::string::npos ? "" : line.substr(colon + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        };
        if (line.rfind("vendor_id", 0) == 0) {
            const std::string v = value();
            m.vendor = v == "AuthenticAMD" ? "amd" : v == "GenuineIntel" ? "intel" : "other";
        } else if (line.rfind("cpu family", 0) == 0) {
            family = std::atoi(value().c_str());
        }
        if (line.empty() && family >= 0)
            break; // first processor block is enough
    }
    // kernel: arch/x86/kernel/cpu/amd.c init_amd_zn() sets node_reclaim_distance = 32 (Zen, 0x17+)
    if (m.vendor == "amd" && family >= 0x17)
        m.node_reclaim_distance = 32;
}

} // namespace

std::vector<machine_preset_info> machine_presets()
{
    std::vector<machine_preset_info> v;
    for (const auto& s : preset_specs())
        v.push_back({s.name, s.description});
    v.push_back({"host", host_description});
    return v;
}

machine make_sysfs_host_machine()
{
    machine m = machine_from_sysfs();
    m.name = "host";
    m.description = host_description;
    read_cpuinfo_vendor(m);
    read_sysfs_costs(m);
    m.validate("host");
    return m;
}

namespace {

std::string env(const char* name)
{
    const char* v = std::getenv(name);
    return v ? v : "";
}

} // namespace

std::string default_host_machine_path()
{
    if (std::string p = env("SCHEDLAB_HOST_MACHINE"); !p.empty())
        return p;
    if (std::string xdg = env("XDG_CONFIG_HOME"); !xdg.empty())
        return (std::filesystem::path(xdg) / "schedlab" / "host.json").string();
    if (std::string home = env("HOME"); !home.empty())
        return (std::filesystem::path(home) / ".config" / "schedlab" / "host.json").string();
    return "";
}

std::string host_machine_file()
{
    if (std::string p = env("SCHEDLAB_HOST_MACHINE"); !p.empty())
        return p; // named explicitly: it must exist (load_host_file says so if not)
    const std::string p = default_host_machine_path();
    std::error_code ec;
    return !p.empty() && std::filesystem::is_regular_file(p, ec) ? p : "";
}

machine make_host_machine()
{
    const std::string file = host_machine_file();
    if (file.empty())
        return make_sysfs_host_machine();
    const bool from_env = !env("SCHEDLAB_HOST_MACHINE").empty();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        throw config_error(file, "no such machine file (named by SCHEDLAB_HOST_MACHINE for the "
                                 "host preset)");
    machine m = machine_from_json(read_file(file), file);
    const machine here = machine_from_sysfs();
    if (m.nr_cpus() != here.nr_cpus())
        throw config_error(file, fmt::format("describes {} CPUs but this machine has {}: it was "
                                             "calibrated elsewhere; run `schedlab calibrate` again{}",
                                             m.nr_cpus(), here.nr_cpus(),
                                             from_env ? " or unset SCHEDLAB_HOST_MACHINE"
                                                      : " or remove the file"));
    m.name = "host";
    m.description = fmt::format("{} (from {})", m.description, file);
    return m;
}

machine make_machine_preset(const std::string& name)
{
    for (const auto& s : preset_specs())
        if (s.name == name) {
            machine m = make_symmetric_machine(s, s.name);
            apply_preset_costs(m);
            return m;
        }
    if (name == "host")
        return make_host_machine();
    std::string hint = nearest_name(name, preset_names());
    if (hint.empty() && !name.empty()) // "bergamo" -> "bergamo-2s"
        for (const auto& candidate : preset_names())
            if (candidate.rfind(name, 0) == 0) {
                hint = candidate;
                break;
            }
    throw config_error("machine",
                       fmt::format("unknown machine '{}'{}; see `schedlab machines`", name,
                                   hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
}

machine load_machine(const std::string& spec)
{
    for (const auto& p : machine_presets())
        if (p.name == spec)
            return make_machine_preset(spec);

    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path path(spec);
    if (!fs::exists(path, ec)) {
        const bool looks_like_path =
            spec.find('/') != std::string::npos || spec.find('.') != std::string::npos;
        if (looks_like_path)
            throw config_error(spec, "no such machine file; a machine is a preset name (see "
                                     "`schedlab machines`), a .json machine file or `lscpu -p` "
                                     "output");
        return make_machine_preset(spec); // throws the did-you-mean error
    }
    if (fs::is_directory(path, ec))
        throw config_error(spec, "is a directory, not a machine file");

    const std::string text = read_file(spec);
    const auto first = text.find_first_not_of(" \t\r\n");
    if (path.extension() == ".json" || (first != std::string::npos && text[first] == '{'))
        return machine_from_json(text, spec);
    if (looks_like_lscpu(text))
        return machine_from_lscpu(text, spec);
    throw config_error(spec, "not a machine file: expected a schedlab-machine-v1 JSON file "
                             "(.json) or `lscpu -p` output (starting with its '# CPU,Core,...' "
                             "comment header)");
}

} // namespace schedlab
