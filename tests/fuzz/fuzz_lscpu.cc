// SPDX-License-Identifier: GPL-2.0-only
/* `lscpu -p` output as a machine (docs/machine-format.md). */
#include "fuzz_support.h"
#include "machine/machine_parse.h"
#include "sched/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    const std::string text = fuzz::text_of(data, size);
    fuzz::expect_clean([&] {
        looks_like_lscpu(text);
        const machine m = machine_from_lscpu(text, "fuzz.lscpu");
        if (m.nr_cpus() <= fuzz::max_topology_cpus)
            build_sched_domains(m, topology_params{});
    });
    return 0;
}
