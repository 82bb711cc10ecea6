// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes a synthetic results store of many runs, for timing `schedlab report`
 * and `schedlab export` on a store the size of a large sweep (issue 19: a
 * store of 100k runs answers `report` in under a second; docs/sweeps.md has
 * the figures and commands).
 *
 *   bench/store_gen OUT.sqlite [RUNS=100000] [EXPERIMENTS=100]
 *
 * Every run is a copy of one real run (hackbench on milan-2s: 256 CPUs of
 * busy time, schedstat of every domain level) with its own arm, load, seed,
 * metric value and key, so the rows and compressed results have the sizes
 * of real ones. Each experiment has 4 arms x 10 loads and RUNS / EXPERIMENTS
 * / 40 runs per arm and load.
 */
#include "experiment/run.h"
#include "store/store.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace schedlab;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: store_gen OUT.sqlite [RUNS=100000] [EXPERIMENTS=100]\n");
        return 2;
    }
    const std::string out = argv[1];
    const long total = argc > 2 ? std::atol(argv[2]) : 100000;
    const long nr_exp = argc > 3 ? std::atol(argv[3]) : 100;
    const std::vector<std::string> arms = {"6.6", "6.6+NO_RUN_TO_PARITY", "6.6+NO_PLACE_LAG",
                                           "6.5"};
    const int nr_loads = 10;
    const long per_cell = total / (nr_exp * static_cast<long>(arms.size()) * nr_loads);
    if (total <= 0 || nr_exp <= 0 || per_cell < 1) {
        std::fprintf(stderr, "store_gen: RUNS must be at least 40 x EXPERIMENTS\n");
        return 2;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run_spec spec;
    spec.machine = "milan-2s";
    spec.kernel = "6.6";
    spec.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "5"};
    const run_result base = execute_run(spec);

    results_store store(out, true);
    long written = 0;
    for (long e = 0; e < nr_exp; ++e) {
        stored_experiment x;
        x.kind = "sweep";
        x.name = fmt::format("synthetic/milan-2s/hackbench-l{}", 5 + e);
        x.machine = "milan-2s";
        x.info.command = "store_gen";
        x.info.arms = arms;
        for (int l = 1; l <= nr_loads; ++l)
            x.info.loads.push_back(std::to_string(l));
        x.info.load_option = "-g";
        x.info.runs = static_cast<int>(per_cell);
        x.info.seed = 1;
        for (int l = 1; l <= nr_loads; ++l) {
            for (std::size_t a = 0; a < arms.size(); ++a) {
                for (long r = 0; r < per_cell; ++r) {
                    run_result run = base;
                    run.arm = arms[a];
                    run.load = std::to_string(l);
                    run.run_index = static_cast<int>(r);
                    run.provenance.kernel_spec = arms[a];
                    run.provenance.seed = static_cast<u64>(1 + r);
                    run.provenance.argv = {"perf", "bench",  "sched", "messaging",
                                           "-g",   run.load, "-l",    std::to_string(5 + e)};
                    // a deterministic spread around the real figure
                    const double noise = 1.0 + 0.01 * static_cast<double>((r * 7 + a * 3) % 11);
                    for (workload_metric& m : run.metrics)
                        m.value *= noise * (1.0 + 0.1 * l);
                    run.schedule_digest = base.schedule_digest ^ static_cast<u64>(written);
                    const std::string key = sha256_hex(fmt::format("{}/{}/{}/{}", e, a, l, r));
                    store.put(key, run);
                    x.runs.push_back({key, run.arm, run.load, run.run_index});
                    ++written;
                }
            }
        }
        store.record_experiment(x);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: %ld runs in %ld experiments, written in %.1f s\n", out.c_str(), written,
                nr_exp, s);
    return 0;
}
