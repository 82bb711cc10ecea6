// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hardware costs of each named preset that have a per-platform basis,
 * each with its source. "estimate:" marks values reasoned from related
 * figures rather than read from a measurement of that platform. Costs not
 * listed keep their costs.def default (and its source). `schedlab costs
 * PRESET` prints the result.
 */
#include "machine/machine_costs.h"

#include <string>
#include <vector>

namespace schedlab {

namespace {

struct preset_cost {
    const char* preset;
    const char* cost;
    long long value;
    const char* source;
};

/* Shared reasons. */
constexpr const char* acpi_c1 =
    "acpi_idle on AMD: C1 is the _CST FFH MWAIT state, 1 us as firmware usually reports it "
    "[unverified for these boards]";
constexpr const char* acpi_c1_res =
    "acpi_idle: target_residency = latency x latency_factor (2) (drivers/acpi/processor_idle.c)";
constexpr const char* acpi_cc6 =
    "AMD CC6 is ACPI C2 (I/O-port _CST entry) under acpi_idle; ~400 us reported for it on an "
    "EPYC 7502P (Zen2) in FreeBSD review D47444; firmware-specific, assumed for this platform "
    "[unverified]";
constexpr const char* acpi_cc6_res =
    "acpi_idle: target_residency = latency x latency_factor (2) (drivers/acpi/processor_idle.c)";
constexpr const char* epyc_deep_wake =
    "gVisor pull request 14526 (google/gvisor, merged; described 2026-08-31), measured with its "
    "cstate_wake_probe (a futex wake to an idle CPU, by the cpuidle state entered): AMD EPYC's "
    "deepest state ~5-15 us, despite advertised latencies similar to Intel's, whose C6 wakes "
    "measured ~150-230 us; the midpoint, 10 us. The EPYC generation is not named, and the "
    "figure includes the wake path itself (~2 us there)";
/*
 * Core-to-core figures: nviennot/core-to-core-latency's CAS ping-pong on one
 * line between two pinned threads, reported as half the round trip (one
 * transfer, as line_* is). The medians below are of the pairs at each distance
 * in the CSVs, read by this project (docs/validation.md, "The line's price from
 * published core-to-core figures").
 */
constexpr const char* c2c_bergamo_2s_smt =
    "measured, half a CAS round trip: median 12.7 ns (p10-p90 12.7-12.7 ns) over the 256 pairs "
    "of SMT siblings (CPU n and n + 256) in the same run as line_llc (dual EPYC 9754, fwyzard, "
    "KCORES/core-to-core-latency-plus 456cc116)";
constexpr const char* c2c_milan_smt =
    "measured, half a CAS round trip: median 10.2 ns (p10-p90 10.2-10.2 ns) over the 128 pairs "
    "of SMT siblings (CPU n and n + 128) in the same run as line_llc (dual EPYC 7763, fwyzard, "
    "KCORES/core-to-core-latency-plus 456cc116)";
constexpr const char* c2c_icelake_smt =
    "measured, half a CAS round trip: median 8.0 ns (p10-p90 8.0-8.2 ns) over the 64 pairs of "
    "SMT siblings (CPU n and n + 64) in the same run as line_llc (dual Xeon Platinum 8375C, "
    "nviennot/core-to-core-latency 8dee07c2)";
constexpr const char* c2c_bergamo_2s_llc =
    "measured, half a CAS round trip: median 32.6 ns over the 3,584 pairs of CPUs of one CCX "
    "on different cores (p10-p90 31-35 ns) on a dual EPYC 9754 (fwyzard's run, "
    "nviennot/core-to-core-latency pull request 101, 2024-06-06; KCORES/core-to-core-latency-plus "
    "456cc116cca7ca2fe1d9dd99a38102e8f033f0fe, results/Dual AMD EPYC 9754 128-Core Processor "
    "by-fwyzard.csv); 33.0 ns on a single EPYC 9754 (nviennot/core-to-core-latency issue 94)";
constexpr const char* c2c_bergamo_2s_pkg =
    "measured, half a CAS round trip: median 109.7 ns (p10-p90 104-114 ns) over the pairs in "
    "different CCXs of one socket, in the same run as line_llc (dual EPYC 9754, fwyzard, "
    "KCORES/core-to-core-latency-plus 456cc116); 109.6 ns on a single EPYC 9754 "
    "(nviennot/core-to-core-latency issue 94). No CCD locality: the other CCX of the same CCD "
    "costs the same. In that run the other socket's pairs show ~206 ns, which "
    "nviennot/core-to-core-latency issue 155 attributes to the tool reusing a line a third core "
    "held; not charged here";
constexpr const char* c2c_bergamo_2s_remote =
    "measured, half a CAS round trip: median 203.6 ns (p10-p90 199-208 ns) over the 65,536 "
    "cross-socket pairs in the same run as line_llc (dual EPYC 9754, fwyzard, "
    "KCORES/core-to-core-latency-plus 456cc116); a dual EPYC 9654 (Genoa, the same SP5 "
    "platform; nviennot/core-to-core-latency issue 89) gives 191.6 ns";
constexpr const char* c2c_spr_llc =
    "measured on a sibling, half a CAS round trip: median 55.3 ns (p10-p90 46-64 ns) over the "
    "630 pairs of a Xeon w9-3475X, 36 Golden Cove cores of Sapphire Rapids' four-tile XCC "
    "package (ReinForce-II's run, nviennot/core-to-core-latency issue 84, 2023-04-17; "
    "KCORES/core-to-core-latency-plus 456cc116, results/Intel Xeon W9-3475X 2.2GHz 36Cores "
    "2023-Q2 by-ReinForce-II.csv). No run on a Xeon Platinum 84xx was found; Chips and Cheese's "
    "dual Sapphire Rapids chart ('Testing AMD's Bergamo: Zen 4c Spam', 2024-06-22) is under "
    "100 ns within a socket as summarised (the chart itself was not read)";
constexpr const char* c2c_spr_remote =
    "measured, as summarised: Chips and Cheese's dual Sapphire Rapids core-to-core chart "
    "('Testing AMD's Bergamo: Zen 4c Spam', 2024-06-22; each pair incrementing one value in "
    "turn) is ~120-150 ns across sockets in a summary of the article (the chart itself was not "
    "read; the SKU is not given there): the midpoint. Ice Lake's UPI for comparison: 107.8 and "
    "110.9 ns (medians, half a CAS round trip) on dual 32-core Xeon Platinum 8375C and 8358 "
    "(nviennot/core-to-core-latency results and its issue 89)";
constexpr const char* c2c_icelake_llc =
    "measured, half a CAS round trip: median 51.3 ns (p10-p90 46.0-56.4 ns) over the 3,968 "
    "pairs of cores of one socket on a dual 32-core Xeon Platinum 8375C (Ice Lake-SP, AWS "
    "c6i.metal; nviennot/core-to-core-latency 8dee07c2, results/Intel(R) Xeon(R) Platinum "
    "8375C CPU @ 2.90GHz.csv; SMT siblings excluded)";
constexpr const char* c2c_icelake_remote =
    "measured, half a CAS round trip: median 107.8 ns (p10-p90 103.3-112.0 ns) over the 4,096 "
    "cross-socket pairs of cores in the same run as line_llc (dual Xeon Platinum 8375C, "
    "nviennot/core-to-core-latency 8dee07c2)";
constexpr const char* c2c_milan_llc =
    "measured, half a CAS round trip: median 25 ns over the pairs of CPUs of one CCX on a dual "
    "EPYC 7763, the 64-core Milan (fwyzard's run, nviennot/core-to-core-latency pull request "
    "101, 2024-06-06; KCORES/core-to-core-latency-plus 456cc116, results/Dual AMD EPYC 7763 "
    "64-Core Processor by-fwyzard.csv; 25.5 ns over its first 128 CPUs, one per core); a dual "
    "48-core EPYC 7R13 (AWS c6a.metal, nviennot/core-to-core-latency 8dee07c2, results/AMD EPYC "
    "7R13 48-Core Processor.csv) gives 22.7 ns";
constexpr const char* c2c_milan_pkg =
    "measured, half a CAS round trip: median 114.6 ns (p10-p90 106-133 ns) over the 3,584 pairs "
    "of cores in different CCXs of one socket in the same run as line_llc (dual EPYC 7763, "
    "KCORES/core-to-core-latency-plus 456cc116; its first 128 CPUs, one per core; the sockets' "
    "medians 123.0 and 112.7 ns); the dual EPYC 7R13 gives 107.6 ns on its first socket";
constexpr const char* c2c_milan_remote =
    "measured, half a CAS round trip: median 301.2 ns (p10-p90 291-318 ns) over the 4,096 "
    "cross-socket pairs of cores in the same run as line_llc (dual EPYC 7763, "
    "KCORES/core-to-core-latency-plus 456cc116, its first 128 CPUs, one per core). The dual "
    "48-core EPYC 7R13 (AWS c6a.metal) gives 197.1 ns: the platform's socket link matters, and "
    "the benchmark machines' was not reported";
constexpr const char* intel_mesh_refill =
    "estimate: a mesh L3 hit takes roughly twice a Zen CCX's, so the costs.def default (60) x ~1.7";

const std::vector<preset_cost>& preset_cost_table()
{
    static const std::vector<preset_cost> table = {
        // ---- bergamo-2s: Zen4c, 16 MB L3 per 8-core CCX, two CCX per CCD, 12 x DDR5-4800 per socket
        {"bergamo-2s", "llc_kib", 16384, "TechPowerUp news 309741 (2023, citing SemiAnalysis): a Zen4c CCD is two 8-core CCX with 16 MB L3 each"},
        {"bergamo-2s", "l2_kib", 1024, "Zen4c keeps Zen4's 1 MiB L2 per core (AMD product documentation)"},
        {"bergamo-2s", "line_smt", 13, c2c_bergamo_2s_smt},
        {"bergamo-2s", "line_llc", 33, c2c_bergamo_2s_llc},
        {"bergamo-2s", "line_pkg", 110, c2c_bergamo_2s_pkg},
        {"bergamo-2s", "line_remote", 204, c2c_bergamo_2s_remote},
        {"bergamo-2s", "mem_bw_llc_mbs", 32000, "estimate: one GMI link per 16-core CCD (~64 GB/s read) shared by its two CCX"},
        {"bergamo-2s", "mem_bw_node_mbs", 345000, "estimate: 12 x DDR5-4800 = 460.8 GB/s peak per socket (NPS1 node), ~75% sustained"},
        {"bergamo-2s", "cstate_c1_exit", 1000, acpi_c1},
        {"bergamo-2s", "cstate_c1_residency", 2000, acpi_c1_res},
        {"bergamo-2s", "cstate_deep_exit", 400000, acpi_cc6},
        {"bergamo-2s", "cstate_deep_residency", 800000, acpi_cc6_res},
        {"bergamo-2s", "cstate_deep_wake", 10000, epyc_deep_wake},

        // ---- milan-2s: Zen3, 32 MB L3 per 8-core CCX (= CCD), 8 x DDR4-3200 per socket
        {"milan-2s", "llc_kib", 32768, "AMD EPYC 7003 (Milan) specifications: CCX = CCD = 8 cores sharing 32 MB L3 (sd_llc_size 16 in K Prateek Nayak's 31aeb639-1d66-2d12-1673-c19fed0ab33a@amd.com)"},
        {"milan-2s", "l2_kib", 512, "Zen3: 512 KiB L2 per core (AnandTech EPYC Milan review, topology page)"},
        {"milan-2s", "line_smt", 10, c2c_milan_smt},
        {"milan-2s", "line_llc", 25, c2c_milan_llc},
        {"milan-2s", "line_pkg", 115, c2c_milan_pkg},
        {"milan-2s", "line_remote", 301, c2c_milan_remote},
        {"milan-2s", "refill_mem_per_kib", 250, "AnandTech EPYC 7002 (Rome) review (2019): DRAM ~113-134 ns (NPS4/NPS1) x 16 lines per KiB / memory-level parallelism ~8 (estimate)"},
        {"milan-2s", "mem_bw_llc_mbs", 51200, "estimate: one CCD's GMI read link, 32 B per fabric clock at 1.6 GHz"},
        {"milan-2s", "mem_bw_node_mbs", 150000, "estimate: 8 x DDR4-3200 = 204.8 GB/s peak per socket (NPS1 node), ~75% sustained"},
        {"milan-2s", "cstate_c1_exit", 1000, acpi_c1},
        {"milan-2s", "cstate_c1_residency", 2000, acpi_c1_res},
        {"milan-2s", "cstate_deep_exit", 400000, acpi_cc6},
        {"milan-2s", "cstate_deep_residency", 800000, acpi_cc6_res},
        {"milan-2s", "cstate_deep_wake", 10000, epyc_deep_wake},

        // ---- spr-2s: 56 Golden Cove cores per socket on a 4-tile mesh, 8 x DDR5-4800 per socket
        {"spr-2s", "llc_kib", 107520, "56 cores x 1.875 MiB L3 slice = 105 MiB per socket (Intel: Xeon Platinum 8480+, 105 MB)"},
        {"spr-2s", "l2_kib", 2048, "Sapphire Rapids: 2 MiB L2 per core (Intel product documentation; costs.def notes it too)"},
        {"spr-2s", "line_llc", 55, c2c_spr_llc},
        {"spr-2s", "line_remote", 135, c2c_spr_remote},
        {"spr-2s", "refill_llc_per_kib", 100, intel_mesh_refill},
        {"spr-2s", "mem_bw_llc_mbs", 230000, "estimate: the LLC is the whole socket, so as mem_bw_node_mbs"},
        {"spr-2s", "mem_bw_node_mbs", 230000, "estimate: 8 x DDR5-4800 = 307.2 GB/s peak per socket, ~75% sustained"},
        {"spr-2s", "cstate_c1_exit", 1000, "intel_idle spr_cstates: C1 exit_latency 1 us"},
        {"spr-2s", "cstate_c1_residency", 1000, "intel_idle spr_cstates: C1 target_residency 1 us"},
        {"spr-2s", "cstate_deep_exit", 290000, "intel_idle spr_cstates: C6 exit_latency 290 us"},
        {"spr-2s", "cstate_deep_residency", 800000, "intel_idle spr_cstates: C6 target_residency 800 us"},

        // ---- ryzen-7950x: Zen4 desktop, 2 CCX of 8 cores with 32 MB L3 each, 2 x DDR5
        {"ryzen-7950x", "llc_kib", 32768, "AnandTech 7950X review: 32 MB L3 per 8-core CCD"},
        {"ryzen-7950x", "l2_kib", 1024, "Zen4: 1 MiB L2 per core (AnandTech 7950X review)"},
        {"ryzen-7950x", "line_llc", 17, "AnandTech, AMD Ryzen 9 7950X review (2022), core-to-core latency: 15-19 ns within the L3"},
        {"ryzen-7950x", "line_pkg", 80, "AnandTech, AMD Ryzen 9 7950X review (2022), core-to-core latency: up to 79.5 ns between CCDs"},
        {"ryzen-7950x", "refill_mem_per_kib", 160, "estimate: desktop DDR5 latency ~75-85 ns (vs the ~120 ns server figure behind the default) x 16 lines per KiB / MLP ~8"},
        {"ryzen-7950x", "mem_bw_llc_mbs", 50000, "estimate: one CCD's GMI read link, 32 B per fabric clock at ~2 GHz = 64 GB/s peak, ~80% sustained"},
        {"ryzen-7950x", "mem_bw_node_mbs", 62000, "estimate: 2 x DDR5-5200 = 83.2 GB/s peak, ~75% sustained"},
        {"ryzen-7950x", "cstate_c1_exit", 1000, acpi_c1},
        {"ryzen-7950x", "cstate_c1_residency", 2000, acpi_c1_res},
        {"ryzen-7950x", "cstate_deep_exit", 400000, "estimate: assumed as on EPYC (acpi_idle ACPI C2 = CC6, ~400 us, FreeBSD review D47444 on a 7502P); desktop firmware may report less [unverified]"},
        {"ryzen-7950x", "cstate_deep_residency", 800000, acpi_cc6_res},

        // ---- skylake-18c: Skylake server core (1 MiB L2, 1.375 MiB L3 per core), mesh
        {"skylake-18c", "llc_kib", 25344, "18 cores x 1.375 MiB L3 slice = 24.75 MiB (Skylake-SP/X non-inclusive L3)"},
        {"skylake-18c", "l2_kib", 1024, "Skylake-SP/X: 1 MiB L2 per core"},
        {"skylake-18c", "line_llc", 45, "estimate: 18-core mesh; core-to-core several times a Zen CCX's (AnandTech 7950X review) but one die"},
        {"skylake-18c", "refill_llc_per_kib", 100, intel_mesh_refill},
        {"skylake-18c", "mem_bw_llc_mbs", 95000, "estimate: as mem_bw_node_mbs, the LLC is the whole socket"},
        {"skylake-18c", "mem_bw_node_mbs", 95000, "estimate: 6 x DDR4-2666 = 128 GB/s peak if a Xeon SP (a Skylake-X desktop has 4 channels), ~75% sustained"},
        {"skylake-18c", "cstate_c1_exit", 2000, "intel_idle skx_cstates: C1 exit_latency 2 us"},
        {"skylake-18c", "cstate_c1_residency", 2000, "intel_idle skx_cstates: C1 target_residency 2 us"},
        {"skylake-18c", "cstate_deep_exit", 133000, "intel_idle skx_cstates: C6 exit_latency 133 us"},
        {"skylake-18c", "cstate_deep_residency", 600000, "intel_idle skx_cstates: C6 target_residency 600 us"},

        // ---- icelake-2s: 32 Sunny Cove cores per socket (1.25 MiB L2, 1.5 MiB L3 each), 8 x DDR4-3200
        {"icelake-2s", "llc_kib", 49152, "32 cores x 1.5 MiB L3 slice = 48 MiB per socket (Ice Lake-SP)"},
        {"icelake-2s", "l2_kib", 1280, "Ice Lake-SP: 1.25 MiB L2 per core"},
        {"icelake-2s", "line_smt", 8, c2c_icelake_smt},
        {"icelake-2s", "line_llc", 51, c2c_icelake_llc},
        {"icelake-2s", "line_remote", 108, c2c_icelake_remote},
        {"icelake-2s", "refill_llc_per_kib", 100, intel_mesh_refill},
        {"icelake-2s", "mem_bw_llc_mbs", 150000, "estimate: as mem_bw_node_mbs, the LLC is the whole socket"},
        {"icelake-2s", "mem_bw_node_mbs", 150000, "estimate: 8 x DDR4-3200 = 204.8 GB/s peak per socket, ~75% sustained"},
        {"icelake-2s", "cstate_c1_exit", 1000, "intel_idle icx_cstates: C1 exit_latency 1 us"},
        {"icelake-2s", "cstate_c1_residency", 1000, "intel_idle icx_cstates: C1 target_residency 1 us"},
        {"icelake-2s", "cstate_deep_exit", 170000, "intel_idle icx_cstates: C6 exit_latency 170 us"},
        {"icelake-2s", "cstate_deep_residency", 600000, "intel_idle icx_cstates: C6 target_residency 600 us"},
    };
    return table;
}

} // namespace

void apply_preset_costs(machine& m)
{
    for (const auto& pc : preset_cost_table())
        if (m.name == pc.preset)
            set_machine_cost(m, pc.cost, pc.value, pc.source, m.name);
}

} // namespace schedlab
