// SPDX-License-Identifier: GPL-2.0-only
/* --kernel PROFILE[+delta][+FEATURE] and --features LIST: the first line is the kernel spec, the
 * rest the feature list. */
#include "fuzz_support.h"
#include "sched/profiles.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    const std::string text = fuzz::text_of(data, size);
    const std::size_t nl = text.find('\n');
    fuzz::expect_clean([&] {
        kernel_config kc = make_kernel_config(text.substr(0, nl), "--kernel");
        if (nl != std::string::npos)
            apply_features(kc, text.substr(nl + 1), "--features");
        kc.features_string();
        kc.delta_string();
    });
    return 0;
}
