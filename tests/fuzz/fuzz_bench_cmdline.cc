// SPDX-License-Identifier: GPL-2.0-only
/* Benchmark command lines (the argv after `schedlab run --`), one word per line or NUL-separated:
 * the workload table's parsers and the load-list substitution of compare. */
#include "fuzz_support.h"
#include "workload/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace schedlab;
    const std::vector<std::string> argv = fuzz::words_of(fuzz::text_of(data, size));
    fuzz::expect_clean([&] {
        // rt-app names a file: the rt-app target covers its contents; here no file is read.
        if (!argv.empty() && argv[0] == "rt-app")
            return;
        const auto w = make_workload(argv);
        w->command_line();
        w->name();
    });
    fuzz::expect_clean([&] {
        if (!argv.empty() && argv[0] != "rt-app")
            make_workload(with_load(argv, argv.back()))->command_line();
    });
    return 0;
}
