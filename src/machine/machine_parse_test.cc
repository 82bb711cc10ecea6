// SPDX-License-Identifier: GPL-2.0-only
#include "machine/machine_parse.h"

#include "machine/presets.h"
#include "sim/config_error.h"

#include "sim/test_support.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace schedlab {
namespace {

namespace fs = std::filesystem;

using test_support::error_of;

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// JSON

TEST(machine_from_json, round_trips_every_preset_through_machine_to_json)
{
    for (const auto& p : machine_presets()) {
        const machine m = make_machine_preset(p.name);
        const std::string text = machine_to_json(m);
        EXPECT_EQ(machine_from_json(text, p.name + ".json"), m) << p.name;
    }
}

TEST(machine_from_json, generate_form_builds_the_symmetric_machine)
{
    const std::string text = R"({
  "format": "schedlab-machine-v1",
  "name": "milan-nps4",
  "description": "Milan 2S in NPS4",
  "vendor": "amd",
  "generate": {
    "sockets": 2, "cores_per_socket": 64, "threads_per_core": 2, "cores_per_llc": 8,
    "nodes_per_socket": 4, "numbering": "first_threads_then_siblings",
    "near_distance": 12, "remote_distance": 32
  }
})";
    const machine m = machine_from_json(text, "nps4.json");
    EXPECT_EQ(m.name, "milan-nps4");
    EXPECT_EQ(m.nr_cpus(), 256);
    EXPECT_EQ(m.nr_nodes(), 8);
    EXPECT_EQ(m.node_reclaim_distance, 32);
    EXPECT_EQ(m.smt_mask(5).to_cpulist(), "5,133");
    EXPECT_EQ(m.numa_distance[0][1], 12);
    EXPECT_EQ(m.numa_distance[0][4], 32);
}

TEST(machine_from_json, cpus_form_defaults_cluster_node_and_capacity)
{
    const std::string text = R"({"format": "schedlab-machine-v1", "cpus": [
      {"cpu": 1, "core": 0, "llc": 0, "package": 0},
      {"cpu": 0, "core": 0, "llc": 0, "package": 0}]})";
    const machine m = machine_from_json(text, "dir/two.json");
    EXPECT_EQ(m.name, "two");
    EXPECT_EQ(m.nr_cpus(), 2);
    EXPECT_EQ(m.cpus[1].cluster, 0);
    EXPECT_EQ(m.cpus[1].capacity, 1024u);
    EXPECT_EQ(m.numa_distance, (std::vector<std::vector<int>>{{10}}));
    EXPECT_EQ(m.node_reclaim_distance, 30);
}

TEST(machine_from_json, malformed_json_names_file_line_and_column)
{
    const std::string text = "{\n  \"format\": \"schedlab-machine-v1\",\n  \"name\": oops\n}\n";
    const std::string err = error_of([&] { machine_from_json(text, "bad.json"); });
    EXPECT_TRUE(contains(err, "bad.json:3:")) << err;
    EXPECT_TRUE(contains(err, "malformed JSON")) << err;
}

TEST(machine_from_json, unknown_key_is_an_error_with_a_hint)
{
    const std::string text = R"({"format": "schedlab-machine-v1",
      "generate": {"sockets": 1, "cores_per_sockett": 4, "threads_per_core": 1}})";
    const std::string err = error_of([&] { machine_from_json(text, "m.json"); });
    EXPECT_TRUE(contains(err, "m.json: generate.cores_per_sockett: unknown key")) << err;
    EXPECT_TRUE(contains(err, "did you mean 'cores_per_socket'?")) << err;

    const std::string top = R"({"format": "schedlab-machine-v1", "vendr": "amd",
      "cpus": [{"cpu": 0, "core": 0, "llc": 0, "package": 0}]})";
    EXPECT_TRUE(
        contains(error_of([&] { machine_from_json(top, "m.json"); }), "did you mean 'vendor'?"));
}

TEST(machine_from_json, missing_or_wrong_format_is_an_error)
{
    EXPECT_TRUE(contains(error_of([] { machine_from_json(R"({"cpus": []})", "f.json"); }),
                         "f.json: format: missing"));
    EXPECT_TRUE(contains(
        error_of([] { machine_from_json(R"({"format": "schedlab-machine-v9"})", "f.json"); }),
        "unsupported format 'schedlab-machine-v9'"));
}

TEST(machine_from_json, wrong_field_type_names_the_json_path)
{
    const std::string text = R"({"format": "schedlab-machine-v1", "cpus": [
      {"cpu": 0, "core": 0, "llc": 0, "package": 0},
      {"cpu": 1, "core": "one", "llc": 0, "package": 0}]})";
    const std::string err = error_of([&] { machine_from_json(text, "t.json"); });
    EXPECT_TRUE(contains(err, "t.json: cpus[1].core: expected an integer, got string")) << err;
}

TEST(machine_from_json, duplicate_cpu_is_an_error)
{
    const std::string text = R"({"format": "schedlab-machine-v1", "cpus": [
      {"cpu": 0, "core": 0, "llc": 0, "package": 0},
      {"cpu": 0, "core": 1, "llc": 0, "package": 0}]})";
    EXPECT_TRUE(contains(error_of([&] { machine_from_json(text, "d.json"); }),
                         "d.json: cpus[1].cpu: cpu 0 is listed twice"));
}

TEST(machine_from_json, bad_distance_tables_name_the_file_and_field)
{
    const std::string head = R"({"format": "schedlab-machine-v1", "cpus": [
      {"cpu": 0, "core": 0, "llc": 0, "package": 0, "node": 0},
      {"cpu": 1, "core": 1, "llc": 1, "package": 1, "node": 1}], "numa_distance": )";
    const std::string asym =
        error_of([&] { machine_from_json(head + "[[10, 20], [21, 10]]}", "a.json"); });
    EXPECT_TRUE(contains(asym, "a.json: numa_distance is asymmetric")) << asym;
    const std::string ragged =
        error_of([&] { machine_from_json(head + "[[10, 20], [20]]}", "r.json"); });
    EXPECT_TRUE(contains(ragged, "r.json: numa_distance[1]: has 1 entries")) << ragged;
    const std::string local =
        error_of([&] { machine_from_json(head + "[[10, 20], [20, 12]]}", "l.json"); });
    EXPECT_TRUE(contains(local, "l.json: numa_distance[1][1] is 12")) << local;
    const std::string remote =
        error_of([&] { machine_from_json(head + "[[10, 9], [9, 10]]}", "x.json"); });
    EXPECT_TRUE(contains(remote, "must be greater than the local distance")) << remote;
    const std::string missing =
        error_of([&] { machine_from_json(head.substr(0, head.rfind(',')) + "}", "m.json"); });
    EXPECT_TRUE(contains(missing, "m.json: numa_distance: missing")) << missing;
}

TEST(machine_from_json, generate_and_cpus_together_is_an_error)
{
    const std::string text = R"({"format": "schedlab-machine-v1", "cpus": [],
      "generate": {"sockets": 1, "cores_per_socket": 1, "threads_per_core": 1}})";
    EXPECT_TRUE(contains(error_of([&] { machine_from_json(text, "g.json"); }), "use one form"));
}

// ---------------------------------------------------------------------------------------------
// lscpu -p

/* Modelled on `lscpu -p` from a 2-socket, 4-core-per-socket, SMT2 box with NUMA per socket. */
const char* lscpu_sample = R"(# The following is the parsable format, which can be fed to other
# programs. Each different item in every column has an unique ID
# starting usually from zero.
# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,2,0,0,,2,2,2,0
3,3,0,0,,3,3,3,0
4,4,1,1,,4,4,4,1
5,5,1,1,,5,5,5,1
6,6,1,1,,6,6,6,1
7,7,1,1,,7,7,7,1
8,0,0,0,,0,0,0,0
9,1,0,0,,1,1,1,0
10,2,0,0,,2,2,2,0
11,3,0,0,,3,3,3,0
12,4,1,1,,4,4,4,1
13,5,1,1,,5,5,5,1
14,6,1,1,,6,6,6,1
15,7,1,1,,7,7,7,1
)";

TEST(machine_from_lscpu, parses_the_default_parsable_format)
{
    ASSERT_TRUE(looks_like_lscpu(lscpu_sample));
    const machine m = machine_from_lscpu(lscpu_sample, "box.lscpu");
    EXPECT_EQ(m.nr_cpus(), 16);
    EXPECT_EQ(m.nr_cores(), 8);
    EXPECT_EQ(m.nr_packages(), 2);
    EXPECT_EQ(m.smt_mask(0).to_cpulist(), "0,8");
    EXPECT_EQ(m.llc_mask(0).to_cpulist(), "0-3,8-11");
    EXPECT_EQ(m.cluster_mask(1).to_cpulist(), "1,9");
    EXPECT_EQ(m.node_mask(1).to_cpulist(), "4-7,12-15");
    EXPECT_EQ(m.numa_distance, (std::vector<std::vector<int>>{{10, 20}, {20, 10}}));
    EXPECT_EQ(m.name, "box");
}

TEST(machine_from_lscpu, parses_the_cache_column_variant)
{
    const char* text = "# CPU,Core,Socket,Node,L1d:L1i:L2:L3\n"
                       "0,0,0,,0:0:0:0\n1,1,0,,1:1:0:0\n2,2,0,,2:2:1:1\n3,3,0,,3:3:1:1\n";
    const machine m = machine_from_lscpu(text, "variant");
    EXPECT_EQ(m.nr_cpus(), 4);
    EXPECT_EQ(m.nr_nodes(), 1);
    EXPECT_EQ(m.llc_mask(0).to_cpulist(), "0-1");
    EXPECT_EQ(m.cluster_mask(0).to_cpulist(), "0-1"); // L2 shared by cores 0 and 1
    EXPECT_EQ(m.smt_width(), 1);
}

TEST(machine_from_lscpu, skips_offline_cpus_and_renumbers)
{
    const char* text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n"
                       "0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,,,,,,,,\n3,1,0,0,,1,1,1,0\n";
    const machine m = machine_from_lscpu(text, "off");
    EXPECT_EQ(m.nr_cpus(), 3);
    EXPECT_EQ(m.smt_mask(1).to_cpulist(), "1-2");
    EXPECT_TRUE(contains(m.numbering, "offline: 2")) << m.numbering;
}

TEST(machine_from_lscpu, malformed_lines_are_errors_naming_the_line)
{
    const char* short_line = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0\n";
    EXPECT_TRUE(contains(error_of([&] { machine_from_lscpu(short_line, "s.txt"); }),
                         "s.txt:3: 3 fields, but the header names 9 columns"));
    const char* bad_number = "# CPU,Core,Socket\n0,x,0\n";
    EXPECT_TRUE(contains(error_of([&] { machine_from_lscpu(bad_number, "n.txt"); }),
                         "n.txt:2: Core column: 'x' is not a non-negative integer"));
    const char* dup = "# CPU,Core,Socket\n0,0,0\n0,1,0\n";
    EXPECT_TRUE(contains(error_of([&] { machine_from_lscpu(dup, "d.txt"); }),
                         "d.txt:3: CPU 0 is listed twice"));
    EXPECT_TRUE(contains(error_of([] { machine_from_lscpu("0,0,0\n", "h.txt"); }),
                         "h.txt: no '# CPU,Core,Socket,...' header"));
    EXPECT_FALSE(looks_like_lscpu("hello\n0,0,0\n"));
}

// ---------------------------------------------------------------------------------------------
// sysfs

class fake_sysfs {
public:
    fake_sysfs()
    {
        root_ = fs::temp_directory_path() / ("schedlab_sysfs_" + std::to_string(::getpid()));
        fs::remove_all(root_);
        fs::create_directories(root_ / "cpu");
        fs::create_directories(root_ / "node");
    }
    ~fake_sysfs() { fs::remove_all(root_); }

    void write(const std::string& rel, const std::string& text)
    {
        const fs::path p = root_ / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << text << "\n";
    }
    std::string cpu_root() const { return (root_ / "cpu").string(); }
    std::string node_root() const { return (root_ / "node").string(); }

private:
    fs::path root_;
};

/* 2 sockets x 2 cores x SMT2, AMD numbering (sibling of n is n + 4), one node per socket. */
void populate(fake_sysfs& fs_)
{
    fs_.write("cpu/online", "0-7");
    for (int cpu = 0; cpu < 8; ++cpu) {
        const int core = cpu % 4, pkg = core / 2;
        const std::string siblings = fmt::format("{},{}", core, core + 4);
        const std::string llc = pkg == 0 ? "0-1,4-5" : "2-3,6-7";
        const std::string dir = fmt::format("cpu/cpu{}/", cpu);
        fs_.write(dir + "topology/physical_package_id", std::to_string(pkg));
        fs_.write(dir + "topology/core_id", std::to_string(core % 2));
        fs_.write(dir + "topology/thread_siblings_list", siblings);
        fs_.write(dir + "topology/cluster_cpus_list", siblings);
        const std::vector<std::tuple<int, const char*, std::string>> caches = {
            {1, "Data", siblings},
            {1, "Instruction", siblings},
            {2, "Unified", siblings},
            {3, "Unified", llc}};
        for (std::size_t i = 0; i < caches.size(); ++i) {
            const std::string c = dir + fmt::format("cache/index{}/", i);
            fs_.write(c + "level", std::to_string(std::get<0>(caches[i])));
            fs_.write(c + "type", std::get<1>(caches[i]));
            fs_.write(c + "shared_cpu_list", std::get<2>(caches[i]));
        }
    }
    fs_.write("cpu/cpu8/online", "0"); // possible but offline: no topology directory
    fs_.write("node/online", "0-1");
    fs_.write("node/node0/cpulist", "0-1,4-5");
    fs_.write("node/node1/cpulist", "2-3,6-7");
    fs_.write("node/node0/distance", "10 32");
    fs_.write("node/node1/distance", "32 10");
}

TEST(machine_from_sysfs, reads_a_fake_sysfs_tree)
{
    fake_sysfs f;
    populate(f);
    const machine m = machine_from_sysfs(f.cpu_root(), f.node_root());
    EXPECT_EQ(m.nr_cpus(), 8);
    EXPECT_EQ(m.smt_mask(1).to_cpulist(), "1,5");
    EXPECT_EQ(m.cluster_mask(1).to_cpulist(), "1,5");
    EXPECT_EQ(m.llc_mask(0).to_cpulist(), "0-1,4-5");
    EXPECT_EQ(m.pkg_mask(6).to_cpulist(), "2-3,6-7");
    EXPECT_EQ(m.node_mask(1).to_cpulist(), "2-3,6-7");
    EXPECT_EQ(m.numa_distance, (std::vector<std::vector<int>>{{10, 32}, {32, 10}}));
    EXPECT_EQ(m.cpus[0].capacity, 1024u);
}

TEST(machine_from_sysfs, reads_cpu_capacity_and_defaults_distances)
{
    fake_sysfs f;
    populate(f);
    fs::remove(fs::path(f.node_root()) / "node0" / "distance");
    fs::remove(fs::path(f.node_root()) / "node1" / "distance");
    for (int cpu = 0; cpu < 8; ++cpu)
        f.write(fmt::format("cpu/cpu{}/cpu_capacity", cpu), cpu % 4 < 2 ? "1024" : "512");
    const machine m = machine_from_sysfs(f.cpu_root(), f.node_root());
    EXPECT_EQ(m.numa_distance[0][1], 20);
    EXPECT_EQ(m.cpus[2].capacity, 512u);
    EXPECT_EQ(m.cpus[4].capacity, 1024u);
}

TEST(machine_from_sysfs, malformed_files_name_the_file)
{
    fake_sysfs f;
    populate(f);
    f.write("cpu/cpu3/topology/physical_package_id", "zero");
    const std::string err = error_of([&] { machine_from_sysfs(f.cpu_root(), f.node_root()); });
    EXPECT_TRUE(contains(err, "cpu3/topology/physical_package_id: expected an integer")) << err;
    EXPECT_TRUE(contains(error_of([] { machine_from_sysfs("/nonexistent/cpu", "/nonexistent"); }),
                         "/nonexistent/cpu: no such directory"));
}

TEST(machine_from_sysfs, real_sysfs_gives_a_valid_machine)
{
    const machine m = machine_from_sysfs();
    EXPECT_GE(m.nr_cpus(), 1);
    EXPECT_NO_THROW(m.validate("/sys"));
}

TEST(parse_cpulist, expands_ranges_and_rejects_garbage)
{
    EXPECT_EQ(parse_cpulist("0-2,5,7-8\n", "x"), (std::vector<int>{0, 1, 2, 5, 7, 8}));
    EXPECT_TRUE(parse_cpulist("", "x").empty());
    EXPECT_TRUE(contains(error_of([] { parse_cpulist("3-1", "f"); }), "f: malformed CPU list"));
}

// ---------------------------------------------------------------------------------------------
// Issue 16: bad input is an error naming it, never a crash or a runaway

TEST(machine_from_json, numbers_beyond_a_double_are_errors_not_aborts)
{
    EXPECT_EQ(error_of([] { machine_from_json("2E482", "x.json"); }),
              "x.json: malformed JSON: number overflow parsing '2E482'");
}

TEST(machine_from_json, binary_null_and_deeply_nested_files_are_named)
{
    EXPECT_EQ(error_of([] { machine_from_json(std::string("\0{}", 3), "z.json"); }),
              "z.json:1:1: a NUL byte: binary data, not a JSON machine file");
    EXPECT_EQ(error_of([] { machine_from_json("null", "n.json"); }),
              "n.json: a machine file is a JSON object ({\"format\": \"schedlab-machine-v1\", "
              "...}), got null");
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    EXPECT_EQ(error_of([&] { machine_from_json(deep, "d.json"); }),
              "d.json:1:33: nested more than 32 levels deep");
}

TEST(machine_from_json, a_key_given_twice_is_refused_not_the_last_kept)
{
    EXPECT_EQ(
        error_of([] { machine_from_json(R"({"name": "a", "name": "b"})", "r.json"); }),
        "r.json: 'name': a key given twice in one object (JSON would keep the last silently)");
    // In a nested object too (a cost given twice); the same key in two objects is fine.
    EXPECT_EQ(error_of([] {
                  machine_from_json(R"({"costs": {"line_llc": 5, "line_llc": 7}})", "c.json");
              }),
              "c.json: 'line_llc': a key given twice in one object (JSON would keep the last "
              "silently)");
}

TEST(machine_from_json, more_cpus_than_a_kernel_supports_are_refused_before_reading_them)
{
    std::string text = R"({"format": "schedlab-machine-v1", "cpus": [)";
    for (int i = 0; i <= max_nr_cpus; ++i)
        text += fmt::format(R"({}{{"cpu": {}, "core": {}, "llc": 0, "package": 0}})", i ? "," : "",
                            i, i);
    text += "]}";
    EXPECT_EQ(error_of([&] { machine_from_json(text, "big.json"); }),
              "big.json: cpus: lists 8193 CPUs, more than the 8192 a kernel supports (NR_CPUS on "
              "x86_64)");
    const std::string gen = R"({"format": "schedlab-machine-v1", "generate": {"sockets": 64,
        "cores_per_socket": 4096, "threads_per_core": 8}})";
    EXPECT_TRUE(contains(error_of([&] { machine_from_json(gen, "g.json"); }),
                         "64 sockets x 4096 cores x 8 threads = 2097152 CPUs, more than the 8192"));
}

TEST(machine_from_lscpu, cache_levels_and_cpu_numbers_do_not_overflow)
{
    // "L9999999999" overflowed an int (UBSan); it is not a cache column.
    const machine m = machine_from_lscpu("# CPU,Core,Socket,Node,,L9999999999\n0,0,0,0,,0\n", "l");
    EXPECT_EQ(m.nr_cpus(), 1);
    EXPECT_TRUE(contains(error_of([] { machine_from_lscpu("# CPU,Core\n8192,0\n", "c.txt"); }),
                         "c.txt:2: CPU 8192 is out of range"));
}

TEST(machine_from_lscpu, an_empty_cache_id_of_an_online_cpu_is_an_error)
{
    // It used to become "unknown" silently, changing the LLCs.
    const char* text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,\n1,1,0,0,,1,1,1,\n";
    EXPECT_EQ(error_of([&] { machine_from_lscpu(text, "e.txt"); }),
              "e.txt:2: the L3 cache id is empty for an online CPU (lscpu prints one for each; "
              "leave the column out if the machine has no L3)");
}
} // namespace
} // namespace schedlab
