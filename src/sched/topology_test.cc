// SPDX-License-Identifier: GPL-2.0-only
#include "sched/topology.h"

#include "machine/presets.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedlab {
namespace {

struct built {
    machine m;
    sched_topology t;
};

built build(const std::string& preset, topology_params tp = {})
{
    built b{make_machine_preset(preset), {}};
    b.t = build_sched_domains(b.m, tp);
    return b;
}

built build(const symmetric_machine_spec& spec, topology_params tp = {})
{
    built b{make_symmetric_machine(spec, "test"), {}};
    b.t = build_sched_domains(b.m, tp);
    return b;
}

std::vector<std::string> names(const sched_topology& t, int cpu)
{
    std::vector<std::string> v;
    for (const auto& sd : t.cpu(cpu).domains)
        v.push_back(sd->name);
    return v;
}

std::vector<std::string> spans(const sched_topology& t, int cpu)
{
    std::vector<std::string> v;
    for (const auto& sd : t.cpu(cpu).domains)
        v.push_back(sd->span.to_cpulist());
    return v;
}

using strings = std::vector<std::string>;

// sd_schedstat's += (a level's or a node's sum over CPUs) adds every counter, each to its own.
TEST(sd_schedstat, sum_adds_every_counter_to_its_own)
{
    sd_schedstat a, b;
    a.lb_count[CPU_IDLE] = 1;
    a.lb_hot_gained[CPU_NEWLY_IDLE] = 2;
    a.alb_pushed = 3;
    a.ttwu_move_balance = 4;
    b.lb_count[CPU_IDLE] = 10;
    b.lb_count[CPU_NOT_IDLE] = 20;
    b.lb_imbalance[CPU_NEWLY_IDLE] = 30;
    b.fbg_count[CPU_IDLE] = 40;
    b.alb_failed = 50;
    b.ttwu_wake_remote = 60;
    a += b;
    EXPECT_EQ(a.lb_count[CPU_IDLE], 11u);
    EXPECT_EQ(a.lb_count[CPU_NOT_IDLE], 20u);
    EXPECT_EQ(a.lb_count[CPU_NEWLY_IDLE], 0u);
    EXPECT_EQ(a.lb_imbalance[CPU_NEWLY_IDLE], 30u);
    EXPECT_EQ(a.lb_hot_gained[CPU_NEWLY_IDLE], 2u);
    EXPECT_EQ(a.fbg_count[CPU_IDLE], 40u);
    EXPECT_EQ(a.alb_failed, 50u);
    EXPECT_EQ(a.alb_pushed, 3u);
    EXPECT_EQ(a.ttwu_wake_remote, 60u);
    EXPECT_EQ(a.ttwu_move_balance, 4u);
    EXPECT_EQ(b.lb_count[CPU_IDLE], 10u) << "the right-hand side is left alone";
}

TEST(build_sched_domains, bergamo_cpu0_has_smt_mc_die_numa_spans)
{
    const built b = build("bergamo-2s");
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC", "DIE", "NUMA"}));
    EXPECT_EQ(spans(b.t, 0), (strings{"0,256", "0-7,256-263", "0-127,256-383", "0-511"}));
    const auto& d = b.t.cpu(0).domains;
    EXPECT_EQ(d[0]->span_weight, 2);
    EXPECT_EQ(d[1]->span_weight, 16);
    EXPECT_EQ(d[2]->span_weight, 256);
    EXPECT_EQ(d[3]->span_weight, 512);
}

TEST(build_sched_domains, bergamo_cpu300_is_a_second_thread_on_socket_0)
{
    const built b = build("bergamo-2s");
    EXPECT_EQ(spans(b.t, 300), (strings{"44,300", "40-47,296-303", "0-127,256-383", "0-511"}));
    EXPECT_EQ(spans(b.t, 200), (strings{"200,456", "200-207,456-463", "128-255,384-511", "0-511"}));
}

TEST(build_sched_domains, bergamo_groups_start_with_the_owning_cpu_child)
{
    const built b = build("bergamo-2s");
    const auto& d = b.t.cpu(300).domains;
    ASSERT_EQ(d[1]->groups.size(), 8u);
    EXPECT_EQ(d[1]->groups[0].span.to_cpulist(), "44,300");
    EXPECT_EQ(d[1]->groups[0].balance_cpu, 44);
    EXPECT_EQ(d[1]->groups[0].capacity, 2048u);
    // for_each_cpu_wrap from 300: 301, 302, 303 then 40...
    EXPECT_EQ(d[1]->groups[1].span.to_cpulist(), "45,301");
    EXPECT_EQ(d[1]->groups[4].span.to_cpulist(), "40,296");
    ASSERT_EQ(d[3]->groups.size(), 2u);
    EXPECT_EQ(d[3]->groups[0].span.to_cpulist(), "0-127,256-383");
    EXPECT_EQ(d[3]->groups[1].span.to_cpulist(), "128-255,384-511");
}

TEST(build_sched_domains, domain_parameters_follow_sd_init)
{
    const built b = build("bergamo-2s");
    const auto& d = b.t.cpu(0).domains;
    EXPECT_EQ(d[0]->imbalance_pct, 110u);
    EXPECT_EQ(d[0]->cache_nice_tries, 0u);
    EXPECT_EQ(d[1]->imbalance_pct, 117u);
    EXPECT_EQ(d[1]->cache_nice_tries, 1u);
    EXPECT_EQ(d[2]->cache_nice_tries, 1u);
    EXPECT_EQ(d[3]->cache_nice_tries, 2u);
    EXPECT_EQ(d[1]->min_interval, 16u);
    EXPECT_EQ(d[1]->max_interval, 32u);
    EXPECT_EQ(d[1]->balance_interval, 16u);
    EXPECT_EQ(d[1]->busy_factor, 16u);
    EXPECT_EQ(d[3]->min_interval, 512u);
    for (const auto& sd : d)
        EXPECT_FALSE(sd->has(SD_BALANCE_WAKE)) << sd->name;
    EXPECT_EQ(d[0]->flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
                               SD_SHARE_CPUCAPACITY | SD_SHARE_LLC | SD_PREFER_SIBLING);
    EXPECT_EQ(d[1]->flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
                               SD_SHARE_LLC | SD_PREFER_SIBLING);
    EXPECT_EQ(d[2]->flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
                               SD_PREFER_SIBLING);
}

TEST(build_sched_domains, smt_imbalance_pct_comes_from_topology_params)
{
    topology_params tp;
    tp.smt_imbalance_pct = 125;
    tp.imbalance_pct = 130;
    tp.busy_factor = 8;
    const built b = build("ryzen-7950x", tp);
    EXPECT_EQ(b.t.cpu(0).domains[0]->imbalance_pct, 125u);
    EXPECT_EQ(b.t.cpu(0).domains[1]->imbalance_pct, 130u);
    EXPECT_EQ(b.t.cpu(0).domains[2]->busy_factor, 8u);
}

TEST(build_sched_domains, package_level_is_named_pkg_when_asked)
{
    topology_params tp;
    tp.pkg_name = true;
    const built b = build("milan-2s", tp);
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC", "PKG", "NUMA"}));
}

TEST(build_sched_domains, milan_cpu5_shares_its_core_with_cpu133)
{
    const built b = build("milan-2s");
    EXPECT_EQ(spans(b.t, 5), (strings{"5,133", "0-7,128-135", "0-63,128-191", "0-255"}));
}

TEST(build_sched_domains, spr_has_no_die_level_because_it_equals_mc)
{
    const built b = build("spr-2s");
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC", "NUMA"}));
    EXPECT_EQ(spans(b.t, 0), (strings{"0,112", "0-55,112-167", "0-223"}));
    EXPECT_EQ(b.t.cpu(0).domains[1]->span_weight, 112);
    EXPECT_EQ(b.t.cpu(0).domains[1]->parent, b.t.cpu(0).domains[2].get());
    EXPECT_EQ(b.t.cpu(0).domains[2]->child, b.t.cpu(0).domains[1].get());
    EXPECT_EQ(b.t.cpu(0).domains[2]->groups[0].span.to_cpulist(), "0-55,112-167");
}

TEST(build_sched_domains, skylake_has_only_smt_and_mc)
{
    const built b = build("skylake-18c");
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC"}));
    EXPECT_EQ(spans(b.t, 7), (strings{"7,25", "0-35"}));
    EXPECT_EQ(b.t.cpu(0).sd_numa, nullptr);
}

TEST(build_sched_domains, ryzen_has_smt_mc_and_die)
{
    const built b = build("ryzen-7950x");
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC", "DIE"}));
    EXPECT_EQ(spans(b.t, 0), (strings{"0,16", "0-7,16-23", "0-31"}));
    EXPECT_EQ(spans(b.t, 9), (strings{"9,25", "8-15,24-31", "0-31"}));
}

TEST(build_sched_domains, interleaved_numbering_spans_even_cpus_on_socket_0)
{
    const built b = build("icelake-2s");
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC", "NUMA"}));
    const auto& mc = *b.t.cpu(0).domains[1];
    EXPECT_EQ(mc.span_weight, 64);
    for (int cpu = 0; cpu < 128; ++cpu)
        EXPECT_EQ(mc.span.test(cpu), cpu % 2 == 0) << cpu;
}

TEST(update_top_cache_domain, sd_llc_size_and_id_are_the_llc_span)
{
    const built b = build("bergamo-2s");
    EXPECT_EQ(b.t.cpu(300).sd_llc_size, 16);
    EXPECT_EQ(b.t.cpu(300).sd_llc_id, 40);
    EXPECT_EQ(b.t.cpu(300).sd_llc, b.t.cpu(300).domains[1].get());
    EXPECT_TRUE(b.t.cpus_share_cache(300, 40));
    EXPECT_TRUE(b.t.cpus_share_cache(300, 47));
    EXPECT_FALSE(b.t.cpus_share_cache(300, 48));

    const built s = build("spr-2s");
    EXPECT_EQ(s.t.cpu(130).sd_llc_size, 112);
    EXPECT_EQ(s.t.cpu(130).sd_llc_id, 0);
    EXPECT_EQ(s.t.cpu(60).sd_llc_id, 56);
}

TEST(update_top_cache_domain, llc_shared_is_one_struct_per_llc)
{
    const built b = build("bergamo-2s");
    EXPECT_EQ(b.t.llc_shared.size(), 32u);
    EXPECT_EQ(b.t.cpu(40).sd_llc_shared, b.t.cpu(300).sd_llc_shared);
    EXPECT_NE(b.t.cpu(0).sd_llc_shared, b.t.cpu(300).sd_llc_shared);
    EXPECT_EQ(b.t.cpu(300).sd_llc->shared, b.t.cpu(300).sd_llc_shared);
    EXPECT_EQ(b.t.cpu(300).sd_llc_shared->nr_busy_cpus, 16);
    EXPECT_EQ(b.t.cpu(300).domains[0]->shared, nullptr);
}

TEST(update_top_cache_domain, sd_numa_is_the_lowest_numa_domain)
{
    const built b = build("milan-2s");
    EXPECT_EQ(b.t.cpu(0).sd_numa, b.t.cpu(0).domains[3].get());
    EXPECT_EQ(b.t.cpu(0).sd_asym_cpucapacity, nullptr);
}

TEST(sd_init, numa_level_keeps_wake_affine_when_distance_is_within_node_reclaim_distance)
{
    machine m = make_machine_preset("bergamo-2s");
    ASSERT_EQ(m.node_reclaim_distance, 32);
    const sched_topology t = build_sched_domains(m, {});
    const sched_domain& numa = *t.cpu(0).domains[3];
    EXPECT_EQ(numa.flags, SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
                              SD_SERIALIZE | SD_OVERLAP | SD_NUMA);
    EXPECT_EQ(numa.numa_distance, 32);
}

TEST(sd_init, numa_level_drops_exec_fork_and_wake_affine_beyond_node_reclaim_distance)
{
    machine m = make_machine_preset("bergamo-2s");
    m.node_reclaim_distance = 30; // the kernel default outside AMD Zen
    const sched_topology t = build_sched_domains(m, {});
    const sched_domain& numa = *t.cpu(0).domains[3];
    EXPECT_EQ(numa.flags, SD_BALANCE_NEWIDLE | SD_SERIALIZE | SD_OVERLAP | SD_NUMA);
    EXPECT_FALSE(numa.has(SD_PREFER_SIBLING));
}

TEST(build_sched_domains, imb_numa_nr_is_the_number_of_llcs_in_the_node)
{
    const built b = build("bergamo-2s");
    EXPECT_EQ(b.t.cpu(0).domains[2]->imb_numa_nr, 16u);
    EXPECT_EQ(b.t.cpu(0).domains[3]->imb_numa_nr, 16u);
    EXPECT_EQ(b.t.cpu(0).domains[1]->imb_numa_nr, 0u);
    const built m = build("milan-2s");
    EXPECT_EQ(m.t.cpu(0).domains[2]->imb_numa_nr, 8u);
    EXPECT_EQ(m.t.cpu(0).domains[3]->imb_numa_nr, 8u);
    // one LLC per node: span / 8, computed on the DIE level before it is removed
    const built s = build("spr-2s");
    EXPECT_EQ(s.t.cpu(0).domains[2]->imb_numa_nr, 14u);
    topology_params tp;
    tp.numa_imb_6x = false;
    const built old = build("milan-2s", tp);
    EXPECT_EQ(old.t.cpu(0).domains[3]->imb_numa_nr, 0u);
}

TEST(sd_degenerate, machine_without_smt_has_no_smt_level)
{
    symmetric_machine_spec s;
    s.name = "nosmt";
    s.cores_per_socket = 8;
    s.cores_per_llc = 4;
    const built b = build(s);
    EXPECT_EQ(names(b.t, 0), (strings{"MC", "DIE"}));
    EXPECT_EQ(b.t.cpu(0).domains[0]->child, nullptr);
    EXPECT_EQ(b.t.cpu(0).domains[0]->groups.size(), 4u);
    EXPECT_EQ(b.t.cpu(0).domains[0]->groups[0].flags, 0u);
}

TEST(sd_parent_degenerate, cluster_level_survives_only_when_it_differs_from_smt)
{
    symmetric_machine_spec s;
    s.name = "cls";
    s.cores_per_socket = 8;
    s.threads_per_core = 2;
    s.cores_per_llc = 8;
    s.cores_per_cluster = 2;
    const built b = build(s);
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "CLS", "MC"}));
    EXPECT_EQ(spans(b.t, 0), (strings{"0,8", "0-1,8-9", "0-15"}));
    EXPECT_TRUE(b.t.cpu(0).domains[1]->has(SD_CLUSTER));
    EXPECT_EQ(b.t.cpu(0).sd_llc, b.t.cpu(0).domains[2].get());

    s.cores_per_cluster = 1;
    const built c = build(s);
    EXPECT_EQ(names(c.t, 0), (strings{"SMT", "MC"}));
}

/*
 * update_top_cache_domain()'s sd_share_id (v6.8+, b95303e0aeaf): the first CPU of the lowest
 * SD_CLUSTER domain, else sd_llc_id; cpus_share_resources() compares it; sched_cluster_active
 * is on when some CPU kept a CLS domain.
 */
TEST(update_top_cache_domain, sd_share_id_is_the_cluster_where_a_cls_domain_survives)
{
    symmetric_machine_spec s;
    s.name = "cls4";
    s.cores_per_socket = 8;
    s.cores_per_llc = 8;
    s.cores_per_cluster = 4;
    const built b = build(s);
    EXPECT_TRUE(b.t.sched_cluster_active);
    for (int cpu = 0; cpu < 8; ++cpu)
        EXPECT_EQ(b.t.cpu(cpu).sd_share_id, cpu < 4 ? 0 : 4) << cpu;
    EXPECT_TRUE(b.t.cpus_share_resources(1, 3));
    EXPECT_FALSE(b.t.cpus_share_resources(1, 5));
    EXPECT_TRUE(b.t.cpus_share_cache(1, 5));

    s.cores_per_cluster = 1;
    const built c = build(s);
    EXPECT_FALSE(c.t.sched_cluster_active);
    for (int cpu = 0; cpu < 8; ++cpu)
        EXPECT_EQ(c.t.cpu(cpu).sd_share_id, c.t.cpu(cpu).sd_llc_id) << cpu;
    EXPECT_TRUE(c.t.cpus_share_resources(1, 5));
}

TEST(sd_parent_degenerate, numa_in_package_replaces_die_with_node_and_adds_levels)
{
    symmetric_machine_spec s;
    s.name = "nps4";
    s.vendor = "amd";
    s.sockets = 2;
    s.cores_per_socket = 32;
    s.threads_per_core = 2;
    s.cores_per_llc = 4;
    s.nodes_per_socket = 4;
    s.near_distance = 12;
    s.remote_distance = 32;
    const built b = build(s);
    EXPECT_EQ(names(b.t, 0), (strings{"SMT", "MC", "NODE", "NUMA", "NUMA"}));
    EXPECT_EQ(spans(b.t, 0), (strings{"0,64", "0-3,64-67", "0-7,64-71", "0-31,64-95", "0-127"}));
    const auto& d = b.t.cpu(0).domains;
    EXPECT_FALSE(d[2]->has(SD_NUMA));
    EXPECT_EQ(d[3]->numa_distance, 12);
    EXPECT_EQ(d[4]->numa_distance, 32);
    EXPECT_EQ(d[3]->groups.size(), 4u);
    EXPECT_EQ(b.t.cpu(0).sd_numa, d[3].get());
    // imb_numa_nr: NODE spans 2 LLCs; the first NUMA level spans 64 CPUs, the second 128
    EXPECT_EQ(d[2]->imb_numa_nr, 2u);
    EXPECT_EQ(d[3]->imb_numa_nr, 2u);
    EXPECT_EQ(d[4]->imb_numa_nr, 4u);
}

TEST(build_sched_domains, single_cpu_machine_has_no_domains)
{
    symmetric_machine_spec s;
    s.name = "up";
    const built b = build(s);
    EXPECT_TRUE(b.t.cpu(0).domains.empty());
    EXPECT_EQ(b.t.cpu(0).sd(), nullptr);
    EXPECT_EQ(b.t.cpu(0).sd_llc_size, 1);
    EXPECT_EQ(b.t.cpu(0).sd_llc_id, 0);
    EXPECT_EQ(sched_domain_debug(b.t, b.m, false), "CPU0 attaching NULL sched-domain.\n");
}

TEST(build_sched_domains, asymmetric_capacities_set_asym_flags)
{
    symmetric_machine_spec s;
    s.name = "biglittle";
    s.cores_per_socket = 8;
    s.cores_per_cluster = 4;
    s.cores_per_llc = 8;
    machine m = make_symmetric_machine(s, "test");
    for (int cpu = 4; cpu < 8; ++cpu)
        m.cpus[cpu].capacity = 512;
    const sched_topology t = build_sched_domains(m, {});
    EXPECT_EQ(names(t, 0), (strings{"CLS", "MC"}));
    const auto& d = t.cpu(0).domains;
    EXPECT_FALSE(d[0]->has(SD_ASYM_CPUCAPACITY));
    EXPECT_TRUE(d[1]->has(SD_ASYM_CPUCAPACITY_FULL));
    EXPECT_FALSE(d[0]->has(SD_PREFER_SIBLING));
    EXPECT_EQ(t.cpu(0).sd_asym_cpucapacity, d[1].get());
    EXPECT_EQ(d[1]->groups[1].capacity, 2048u);
}

TEST(sched_domain_check, every_preset_builds_sound_domains_with_covering_groups)
{
    for (const auto& p : machine_presets()) {
        const built b = build(p.name);
        for (int cpu = 0; cpu < b.m.nr_cpus(); ++cpu) {
            EXPECT_TRUE(sched_domain_check(b.t, cpu).empty()) << p.name << " cpu" << cpu;
            for (const auto& sd : b.t.cpu(cpu).domains) {
                cpumask covered(b.m.nr_cpus());
                for (const auto& sg : sd->groups)
                    covered |= sg.span;
                EXPECT_EQ(covered, sd->span) << p.name << " cpu" << cpu << " " << sd->name;
                EXPECT_TRUE(sd->groups.front().span.test(cpu)) << p.name << " " << sd->name;
            }
        }
    }
}

TEST(sched_domain_check, reports_a_group_that_misses_the_cpu)
{
    built b = build("ryzen-7950x");
    sched_group_list& groups = b.t.cpu(0).domains[1]->groups;
    std::vector<u32> order;
    for (std::size_t g = 0; g < groups.size(); ++g)
        order.push_back(static_cast<u32>(&groups[g] - groups.base()));
    std::swap(order[0], order[1]);
    groups = sched_group_list(groups.base(), static_cast<u32>(order.size()), 0, order.data());
    const auto errs = sched_domain_check(b.t, 0);
    ASSERT_FALSE(errs.empty());
    EXPECT_NE(errs.front().find("domain->groups does not contain CPU0"), std::string::npos)
        << errs.front();
}

/*
 * The groups of every non-NUMA domain, in the order the CPU's own wrap-around walk
 * of its span meets them (build_sched_groups() of each CPU, as the kernel runs it):
 * each group is the span of the walked CPU's domain one level below, or the CPU.
 */
std::vector<std::string> walk_groups(const sched_topology& t, int cpu, const sched_domain& sd)
{
    std::vector<std::string> out;
    cpumask covered(sd.span.nr_cpu_ids());
    for_each_cpu_wrap(sd.span, cpu, [&](int i) {
        if (covered.test(i))
            return true;
        cpumask span(sd.span.nr_cpu_ids());
        span.set(i);
        for (const auto& other : t.cpu(i).domains)
            if (other->span == sd.span && other->child)
                span = other->child->span;
        out.push_back(span.to_cpulist());
        covered |= span;
        return true;
    });
    return out;
}

void expect_groups_as_each_cpu_walks(const machine& m, const sched_topology& t)
{
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu)
        for (const auto& sd : t.cpu(cpu).domains) {
            if (sd->has(SD_OVERLAP))
                continue;
            std::vector<std::string> listed;
            for (const sched_group& sg : sd->groups)
                listed.push_back(sg.span.to_cpulist());
            ASSERT_EQ(listed, walk_groups(t, cpu, *sd))
                << m.name << " cpu" << cpu << " " << sd->name;
        }
}

TEST(build_sched_groups, shared_rings_list_the_groups_in_each_cpus_own_walk_order)
{
    for (const auto& p : machine_presets()) {
        const built b = build(p.name);
        expect_groups_as_each_cpu_walks(b.m, b.t);
    }
    for (const char* numbering :
         {"first_threads_then_siblings", "siblings_adjacent", "sockets_interleaved"}) {
        symmetric_machine_spec s;
        s.sockets = 2, s.cores_per_socket = 12, s.threads_per_core = 2, s.cores_per_llc = 3;
        s.nodes_per_socket = 2, s.remote_distance = 32, s.near_distance = 12;
        s.numbering = parse_cpu_numbering(numbering, "test");
        const built b = build(s);
        expect_groups_as_each_cpu_walks(b.m, b.t);
    }
}

// SMT siblings numbered so that a walk from cpu2 meets {2,4} then {1,3}, while the
// ring (walked from cpu0) has {0,5}, {1,3}, {2,4}: cpu2 gets an order of its own.
TEST(build_sched_groups, a_cpu_whose_walk_is_no_rotation_of_the_ring_keeps_its_own_order)
{
    machine m;
    m.name = "odd-siblings";
    m.vendor = "other";
    for (const int core : {0, 1, 2, 1, 2, 0})
        m.cpus.push_back(cpu_desc{core, core, 0, 0, 0, 1024});
    m.numa_distance = {{10}};
    const sched_topology t = build_sched_domains(m, {});
    expect_groups_as_each_cpu_walks(m, t);
    const sched_domain& mc = *t.cpu(2).domains[1];
    ASSERT_EQ(mc.groups.size(), 3u);
    EXPECT_EQ(mc.groups[1].span.to_cpulist(), "1,3");
    EXPECT_EQ(mc.groups[2].span.to_cpulist(), "0,5");
    EXPECT_EQ(&mc.groups[0], &t.cpu(4).domains[1]->groups[0]) << "still the shared group objects";
}

// build_sched_groups() shares a span's groups between its CPUs (get_group()): one group
// object per child unit and level, not one per CPU, numbered by sched_group::id.
TEST(build_sched_groups, groups_are_shared_by_the_cpus_of_a_span)
{
    const built b = build("bergamo-2s");
    const auto& d0 = b.t.cpu(0).domains;
    const auto& d1 = b.t.cpu(1).domains;
    ASSERT_EQ(d0.size(), d1.size());
    for (std::size_t i = 1; i < d0.size(); ++i)
        EXPECT_EQ(d0[i]->groups.base(), d1[i]->groups.base()) << d0[i]->name;
    // 512 SMT threads + 256 cores + 32 LLCs + 2 nodes' rings of 2 node groups
    EXPECT_EQ(b.t.groups().size(), 512u + 256 + 32 + 4);
    for (std::size_t id = 0; id < b.t.groups().size(); ++id)
        EXPECT_EQ(b.t.groups()[id]->id, static_cast<int>(id));
}

TEST(sd_flags_to_string, lists_kernel_names_in_bit_order)
{
    EXPECT_EQ(sd_flags_to_string(SD_SHARE_LLC | SD_BALANCE_NEWIDLE | SD_NUMA),
              "SD_BALANCE_NEWIDLE SD_SHARE_LLC SD_NUMA");
    EXPECT_EQ(sd_flags_to_string(0), "");
    EXPECT_STREQ(sd_flag_name(SD_OVERLAP), "SD_OVERLAP");
}

TEST(sched_domain_debug, prints_the_kernel_boot_log_format)
{
    const built b = build("ryzen-7950x");
    const std::string out = sched_domain_debug(b.t, b.m, false);
    const std::string cpu0 =
        "CPU0 attaching sched-domain(s):\n"
        " domain-0: span=0,16 level=SMT\n"
        "  groups: 0:{ span=0 }, 16:{ span=16 }\n"
        "  domain-1: span=0-7,16-23 level=MC\n"
        "   groups: 0:{ span=0,16 cap=2048 }, 1:{ span=1,17 cap=2048 }, 2:{ span=2,18 cap=2048 "
        "}, 3:{ span=3,19 cap=2048 }, 4:{ span=4,20 cap=2048 }, 5:{ span=5,21 cap=2048 }, 6:{ "
        "span=6,22 cap=2048 }, 7:{ span=7,23 cap=2048 }\n"
        "   domain-2: span=0-31 level=DIE\n"
        "    groups: 0:{ span=0-7,16-23 cap=16384 }, 8:{ span=8-15,24-31 cap=16384 }\n"
        "CPU1 attaching sched-domain(s):\n";
    EXPECT_EQ(out.substr(0, cpu0.size()), cpu0);
    EXPECT_NE(out.find("CPU31 attaching sched-domain(s):\n domain-0: span=15,31 level=SMT\n  "
                       "groups: 31:{ span=31 }, 15:{ span=15 }\n"),
              std::string::npos);
}

TEST(sched_domain_debug, verbose_adds_flags_and_parameters)
{
    const built b = build("ryzen-7950x");
    const std::string out = sched_domain_debug(b.t, b.m, true);
    EXPECT_NE(out.find("  flags: SD_BALANCE_NEWIDLE SD_BALANCE_EXEC SD_BALANCE_FORK SD_WAKE_AFFINE "
                       "SD_SHARE_CPUCAPACITY SD_SHARE_LLC SD_PREFER_SIBLING\n"),
              std::string::npos)
        << out.substr(0, 600);
    EXPECT_NE(out.find("  min_interval=2 max_interval=4 balance_interval=2 busy_factor=16 "
                       "imbalance_pct=110 cache_nice_tries=0 imb_numa_nr=0\n"),
              std::string::npos);
    EXPECT_NE(out.find("imbalance_pct=117 cache_nice_tries=1 imb_numa_nr=2\n"), std::string::npos);
}

// Issue 16: a 1 x 2048-core single-LLC machine took 2.7 GB for `schedlab topology`, 4000 CPUs
// more than 14 GB, when every CPU's domains owned their groups. With the groups shared (issue
// 14) the spans of the per-CPU domains dominate: CPUs^2 bits per level. The estimate follows
// the structures (docs/performance.md has the measured peak RSS) and is checked before building.
TEST(sched_domains_bytes_estimate, grows_with_the_square_of_the_cpus)
{
    auto one_llc = [](int cores) {
        symmetric_machine_spec s;
        s.sockets = 1;
        s.cores_per_socket = cores;
        s.threads_per_core = 1;
        s.cores_per_llc = cores;
        return make_symmetric_machine(s, "test");
    };
    const double mib = 1024.0 * 1024;
    const double e1024 = sched_domains_bytes_estimate(one_llc(1024));
    EXPECT_GT(e1024, 1 * mib);
    EXPECT_LT(e1024, 16 * mib);
    const double e2048 = sched_domains_bytes_estimate(one_llc(2048));
    EXPECT_GT(e2048 / e1024, 2.2); // towards 4 as the spans (n bits on each of n CPUs) dominate
    EXPECT_LT(e2048 / e1024, 4.5);
    EXPECT_LT(sched_domains_bytes_estimate(make_machine_preset("bergamo-2s")), 16 * mib);
}
} // namespace
} // namespace schedlab
