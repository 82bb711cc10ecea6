// SPDX-License-Identifier: GPL-2.0-only
/* The machine JSON format (docs/machine-format.md), and what a machine built from it feeds. */
#include "fuzz_support.h"
#include "machine/machine_parse.h"
#include "sched/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    fuzz::expect_clean([&] {
        const machine m = machine_from_json(fuzz::text_of(data, size), "fuzz.json");
        // What topology and every run do with it next: the sched domains, the file written
        // back (calibrate) and read again.
        if (m.nr_cpus() <= fuzz::max_topology_cpus)
            build_sched_domains(m, topology_params{});
        machine_from_json(machine_to_json(m), "round-trip.json");
    });
    return 0;
}
