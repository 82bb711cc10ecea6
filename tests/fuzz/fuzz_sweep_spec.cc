// SPDX-License-Identifier: GPL-2.0-only
/* Sweep specs (`schedlab sweep SPEC`, docs/sweeps.md): TOML, or JSON when the input starts with
 * '{' or '['; specs that parse are planned too (machines, kernels, benchmark command lines and
 * load lists resolved) when every machine is a preset other than host and the sweep is small. Machine files are
 * fuzzed by fuzz_machine_json, the run-count bound by sweep_test. */
#include "experiment/sweep.h"
#include "fuzz_support.h"
#include "machine/presets.h"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    const std::string text = fuzz::text_of(data, size);
    const bool json = !text.empty() && (text[0] == '{' || text[0] == '[');
    fuzz::expect_clean([&] {
        const sweep_spec spec = parse_sweep_spec(text, json ? "fuzz.json" : "fuzz.toml", !json);
        std::size_t runs = 0;
        for (const auto& b : spec.benchmarks)
            runs += std::max<std::size_t>(1, b.loads.size());
        runs *= spec.machines.size() * spec.kernels.size() * static_cast<std::size_t>(spec.runs);
        const std::vector<machine_preset_info> presets = machine_presets();
        const bool presets_only =
            std::all_of(spec.machines.begin(), spec.machines.end(), [&](const std::string& m) {
                return std::any_of(presets.begin(), presets.end(),
                                   [&](const machine_preset_info& p) {
                                       return p.name == m && m != "host";
                                   });
            });
        if (presets_only && runs <= 500)
            plan_sweep(spec);
    });
    return 0;
}
