// SPDX-License-Identifier: GPL-2.0-only
#include "machine/presets.h"

#include "machine/machine_parse.h"
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

TEST(machine_presets, lists_every_preset_in_a_fixed_order_with_host_last)
{
    const auto presets = machine_presets();
    ASSERT_GE(presets.size(), 6u);
    EXPECT_EQ(presets[0].name, "bergamo-2s");
    EXPECT_EQ(presets[1].name, "milan-2s");
    EXPECT_EQ(presets[2].name, "spr-2s");
    EXPECT_EQ(presets[3].name, "ryzen-7950x");
    EXPECT_EQ(presets[4].name, "skylake-18c");
    EXPECT_EQ(presets.back().name, "host");
    for (const auto& p : presets)
        EXPECT_FALSE(p.description.empty()) << p.name;
}

TEST(make_machine_preset, bergamo_has_512_cpus_in_32_llcs_and_amd_numbering)
{
    const machine m = make_machine_preset("bergamo-2s");
    EXPECT_EQ(m.nr_cpus(), 512);
    EXPECT_EQ(m.nr_cores(), 256);
    EXPECT_EQ(m.nr_llcs(), 32);
    EXPECT_EQ(m.nr_packages(), 2);
    EXPECT_EQ(m.nr_nodes(), 2);
    EXPECT_EQ(m.vendor, "amd");
    EXPECT_EQ(m.node_reclaim_distance, 32);
    EXPECT_EQ(m.numa_distance, (std::vector<std::vector<int>>{{10, 32}, {32, 10}}));
    EXPECT_EQ(m.smt_mask(0).to_cpulist(), "0,256");
    EXPECT_EQ(m.cpus[128].package, 1);
    EXPECT_EQ(m.cpus[384].package, 1);
}

TEST(make_machine_preset, milan_sibling_of_cpu5_is_cpu133)
{
    const machine m = make_machine_preset("milan-2s");
    EXPECT_EQ(m.nr_cpus(), 256);
    EXPECT_EQ(m.smt_mask(5).to_cpulist(), "5,133");
    EXPECT_EQ(m.llc_mask(5).to_cpulist(), "0-7,128-135");
}

TEST(make_machine_preset, spr_is_intel_with_slit_21_and_one_llc_per_socket)
{
    const machine m = make_machine_preset("spr-2s");
    EXPECT_EQ(m.nr_cpus(), 224);
    EXPECT_EQ(m.vendor, "intel");
    EXPECT_EQ(m.node_reclaim_distance, 30);
    EXPECT_EQ(m.numa_distance[0][1], 21);
    EXPECT_EQ(m.llc_mask(0).weight(), 112);
    EXPECT_EQ(m.smt_mask(0).to_cpulist(), "0,112");
}

TEST(make_machine_preset, desktop_presets_have_one_node)
{
    const machine r = make_machine_preset("ryzen-7950x");
    EXPECT_EQ(r.nr_cpus(), 32);
    EXPECT_EQ(r.nr_llcs(), 2);
    EXPECT_EQ(r.nr_nodes(), 1);
    const machine s = make_machine_preset("skylake-18c");
    EXPECT_EQ(s.nr_cpus(), 36);
    EXPECT_EQ(s.nr_llcs(), 1);
    EXPECT_EQ(s.smt_mask(17).to_cpulist(), "17,35");
}

TEST(make_machine_preset, unknown_name_suggests_the_nearest_preset)
{
    const std::string err = error_of([] { make_machine_preset("milan2s"); });
    EXPECT_NE(err.find("unknown machine 'milan2s'"), std::string::npos) << err;
    EXPECT_NE(err.find("did you mean 'milan-2s'?"), std::string::npos) << err;
    EXPECT_NE(err.find("see `schedlab machines`"), std::string::npos) << err;
}

TEST(make_machine_preset, host_reads_this_machine)
{
    const machine m = make_machine_preset("host");
    EXPECT_GE(m.nr_cpus(), 1);
    EXPECT_EQ(m.name, "host");
    EXPECT_NO_THROW(m.validate("host"));
}

TEST(make_symmetric_machine, siblings_adjacent_pairs_cpus_2k_and_2k_plus_1)
{
    symmetric_machine_spec s;
    s.name = "adj";
    s.sockets = 2;
    s.cores_per_socket = 4;
    s.threads_per_core = 2;
    s.numbering = cpu_numbering::siblings_adjacent;
    const machine m = make_symmetric_machine(s, "test");
    EXPECT_EQ(m.smt_mask(0).to_cpulist(), "0-1");
    EXPECT_EQ(m.smt_mask(5).to_cpulist(), "4-5");
    EXPECT_EQ(m.pkg_mask(0).to_cpulist(), "0-7");
    EXPECT_EQ(m.pkg_mask(8).to_cpulist(), "8-15");
    EXPECT_EQ(m.numbering, "siblings_adjacent");
}

TEST(make_symmetric_machine, sockets_interleaved_puts_even_cpus_on_socket_0)
{
    const machine m = make_machine_preset("icelake-2s");
    EXPECT_EQ(m.nr_cpus(), 128);
    EXPECT_EQ(m.cpus[0].package, 0);
    EXPECT_EQ(m.cpus[1].package, 1);
    EXPECT_EQ(m.cpus[2].package, 0);
    EXPECT_EQ(m.cpus[65].package, 1);
    EXPECT_EQ(m.smt_mask(0).to_cpulist(), "0,64");
    EXPECT_EQ(m.smt_mask(1).to_cpulist(), "1,65");
    EXPECT_EQ(m.llc_mask(0).weight(), 64);
}

TEST(make_symmetric_machine, clusters_and_nodes_per_socket_divide_the_socket)
{
    symmetric_machine_spec s;
    s.name = "nps2";
    s.vendor = "amd";
    s.sockets = 2;
    s.cores_per_socket = 16;
    s.threads_per_core = 2;
    s.cores_per_llc = 4;
    s.cores_per_cluster = 2;
    s.nodes_per_socket = 2;
    s.near_distance = 12;
    s.remote_distance = 32;
    const machine m = make_symmetric_machine(s, "test");
    EXPECT_EQ(m.nr_nodes(), 4);
    EXPECT_EQ(m.numa_distance[0], (std::vector<int>{10, 12, 32, 32}));
    EXPECT_EQ(m.node_mask(1).to_cpulist(), "8-15,40-47");
    EXPECT_EQ(m.cluster_mask(0).to_cpulist(), "0-1,32-33");
    EXPECT_EQ(m.node_reclaim_distance, 32);
}

TEST(make_symmetric_machine, rejects_an_llc_that_does_not_divide_the_node)
{
    symmetric_machine_spec s;
    s.name = "bad";
    s.cores_per_socket = 12;
    s.cores_per_llc = 8;
    const std::string err = error_of([&] { make_symmetric_machine(s, "bad.json"); });
    EXPECT_NE(err.find("bad.json: cores per node (12) is not a multiple of cores_per_llc 8"),
              std::string::npos)
        << err;
}

TEST(parse_cpu_numbering, unknown_scheme_suggests_the_nearest)
{
    const std::string err = error_of([] { parse_cpu_numbering("siblings_adjacnt", "f.json"); });
    EXPECT_NE(err.find("did you mean 'siblings_adjacent'?"), std::string::npos) << err;
}

TEST(load_machine, accepts_a_preset_name)
{
    EXPECT_EQ(load_machine("milan-2s").nr_cpus(), 256);
}

TEST(load_machine, missing_path_is_a_config_error)
{
    const std::string err = error_of([] { load_machine("/nonexistent/machine.json"); });
    EXPECT_NE(err.find("/nonexistent/machine.json: no such machine file"), std::string::npos)
        << err;
    const std::string err2 = error_of([] { load_machine("bergamo"); });
    EXPECT_NE(err2.find("did you mean 'bergamo-2s'?"), std::string::npos) << err2;
}

TEST(load_machine, detects_json_and_lscpu_files_by_content)
{
    const fs::path dir = test_support::temp_dir("schedlab_presets_test_", "load");
    const machine ryzen = make_machine_preset("ryzen-7950x");
    {
        std::ofstream(dir / "ryzen.json") << machine_to_json(ryzen);
        std::ofstream(dir / "box.txt") << "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n"
                                          "0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n"
                                          "2,0,0,0,,0,0,0,0\n3,1,0,0,,1,1,1,0\n";
        std::ofstream(dir / "notes.txt") << "hello\n";
    }
    EXPECT_EQ(load_machine((dir / "ryzen.json").string()), ryzen);
    const machine box = load_machine((dir / "box.txt").string());
    EXPECT_EQ(box.nr_cpus(), 4);
    EXPECT_EQ(box.smt_mask(0).to_cpulist(), "0,2");
    const std::string err = error_of([&] { load_machine((dir / "notes.txt").string()); });
    EXPECT_NE(err.find("not a machine file"), std::string::npos) << err;
    fs::remove_all(dir);
}

TEST(load_machine, endless_inputs_and_directories_are_refused_before_reading_them_whole)
{
    EXPECT_EQ(error_of([] { load_machine("/dev/zero"); }),
              "/dev/zero: the machine file is larger than the 16 MiB limit");
    EXPECT_EQ(error_of([] { load_machine("/tmp"); }), "/tmp: is a directory, not a machine file");
}
} // namespace
} // namespace schedlab
