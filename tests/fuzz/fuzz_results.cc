// SPDX-License-Identifier: GPL-2.0-only
/* Result files of run --json and compare --json (schedlab-result-v1 / -results-v1), as report
 * and fidelity read them, and what report writes back. */
#include "experiment/result_json.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    fuzz::expect_clean([&] {
        const std::vector<run_result> runs = parse_results(fuzz::text_of(data, size), "fuzz.json");
        parse_results(results_to_string(runs, {}), "round-trip.json");
    });
    return 0;
}
