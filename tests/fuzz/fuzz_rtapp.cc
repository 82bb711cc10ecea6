// SPDX-License-Identifier: GPL-2.0-only
/* rt-app JSON files (docs/workloads.md): the reader, then the rt-app model's checks. */
#include "fuzz_support.h"
#include "workload/rt_app.h"
#include "workload/rtapp_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    fuzz::expect_clean([&] {
        const auto root = rtj_parse(fuzz::text_of(data, size), "fuzz.json");
        rtapp_parse(*root, "fuzz.json");
    });
    return 0;
}
