// SPDX-License-Identifier: GPL-2.0-only
#include "machine/machine.h"

#include "sim/config_error.h"

#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

/* 2 sockets x 2 cores x SMT2, one LLC per socket, AMD-style numbering: sibling of n is n + 4. */
machine small_2s()
{
    machine m;
    m.name = "small";
    m.vendor = "other";
    for (int t = 0; t < 2; ++t)
        for (int core = 0; core < 4; ++core) {
            cpu_desc d;
            d.core = core;
            d.cluster = core;
            d.llc = core / 2;
            d.package = core / 2;
            d.node = core / 2;
            m.cpus.push_back(d);
        }
    m.numa_distance = {{10, 21}, {21, 10}};
    return m;
}

std::string validate_error(const machine& m)
{
    try {
        m.validate("test.json");
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "test.json");
        return e.what();
    }
    return "";
}

TEST(machine_masks, smt_llc_node_and_package_masks_follow_the_ids)
{
    const machine m = small_2s();
    EXPECT_EQ(m.smt_mask(1).to_cpulist(), "1,5");
    EXPECT_EQ(m.cluster_mask(5).to_cpulist(), "1,5");
    EXPECT_EQ(m.llc_mask(2).to_cpulist(), "2-3,6-7");
    EXPECT_EQ(m.pkg_mask(0).to_cpulist(), "0-1,4-5");
    EXPECT_EQ(m.node_mask(1).to_cpulist(), "2-3,6-7");
    EXPECT_EQ(m.all().to_cpulist(), "0-7");
}

TEST(machine_masks, counts_cores_llcs_packages_and_smt_width)
{
    const machine m = small_2s();
    EXPECT_EQ(m.nr_cpus(), 8);
    EXPECT_EQ(m.nr_nodes(), 2);
    EXPECT_EQ(m.nr_cores(), 4);
    EXPECT_EQ(m.nr_llcs(), 2);
    EXPECT_EQ(m.nr_packages(), 2);
    EXPECT_EQ(m.smt_width(), 2);
}

TEST(machine_validate, accepts_a_consistent_machine)
{
    EXPECT_NO_THROW(small_2s().validate("test"));
}

TEST(machine_validate, rejects_an_empty_machine)
{
    machine m;
    EXPECT_NE(validate_error(m).find("no CPUs"), std::string::npos);
}

TEST(machine_validate, rejects_a_core_spanning_packages)
{
    machine m = small_2s();
    m.cpus[4].package = 1; // cpu 4 is core 0's sibling on package 0
    m.cpus[4].node = 1;
    m.cpus[4].llc = 1;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("core 0 spans packages"), std::string::npos) << err;
}

TEST(machine_validate, rejects_an_llc_spanning_packages)
{
    machine m = small_2s();
    for (auto& c : m.cpus)
        c.llc = 0;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("llc 0 spans packages"), std::string::npos) << err;
}

TEST(machine_validate, rejects_smt_siblings_with_different_llcs)
{
    machine m = small_2s();
    m.cpus[5].llc = 7;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("core 1 spans llcs"), std::string::npos) << err;
}

TEST(machine_validate, rejects_node_ids_out_of_range)
{
    machine m = small_2s();
    m.cpus[3].node = 2;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("cpu 3: node 2 is out of range"), std::string::npos) << err;
}

TEST(machine_validate, rejects_a_non_square_distance_table)
{
    machine m = small_2s();
    m.numa_distance[1] = {21};
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("not square"), std::string::npos) << err;
}

TEST(machine_validate, rejects_a_local_distance_other_than_10)
{
    machine m = small_2s();
    m.numa_distance[1][1] = 11;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("numa_distance[1][1] is 11"), std::string::npos) << err;
}

TEST(machine_validate, rejects_an_asymmetric_distance_table)
{
    machine m = small_2s();
    m.numa_distance[0][1] = 32;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("asymmetric"), std::string::npos) << err;
}

TEST(machine_validate, rejects_a_remote_distance_not_above_local)
{
    machine m = small_2s();
    m.numa_distance[0][1] = m.numa_distance[1][0] = 10;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("must be greater than the local distance"), std::string::npos) << err;
}

TEST(machine_validate, rejects_a_node_without_cpus)
{
    machine m = small_2s();
    m.numa_distance = {{10, 21, 21}, {21, 10, 21}, {21, 21, 10}};
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("node 2 has no CPUs"), std::string::npos) << err;
}

TEST(machine_validate, rejects_an_unknown_vendor_and_zero_capacity)
{
    machine m = small_2s();
    m.vendor = "arm";
    m.cpus[0].capacity = 0;
    m.cpus[4].capacity = 0;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("vendor 'arm'"), std::string::npos) << err;
    EXPECT_NE(err.find("cpu 0: capacity 0"), std::string::npos) << err;
}

TEST(machine_validate, rejects_smt_siblings_with_different_capacities)
{
    machine m = small_2s();
    m.cpus[4].capacity = 512;
    const std::string err = validate_error(m);
    EXPECT_NE(err.find("SMT siblings of core 0 have different capacities"), std::string::npos)
        << err;
}

} // namespace
} // namespace schedlab
