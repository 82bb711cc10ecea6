// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ext class's cost to the simulator next to the fair class's (issue 18: an
 * ext policy's hooks should cost no more per event than the fair class's): the
 * same hackbench run on the same machine, under 6.12 (EEVDF) and under 6.12
 * with each built-in ext policy. The schedules differ, so the figures to
 * compare are per unit of work the scheduler did: host CPU ns (this process's
 * CPU time, not wall time: the machine is shared) per simulated event and per
 * context switch.
 *
 *   build/bench/schedlab_bench --benchmark_filter=BM_class
 */
#include "bench_run.h"
#include "machine/presets.h"
#include "metrics/sched_summary.h"
#include "sched/core.h"
#include "workload/registry.h"

#include <benchmark/benchmark.h>

#include <ctime>

namespace schedlab {
namespace {

double process_cpu_s()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void BM_class(benchmark::State& state, const char* kernel_spec, const char* machine_name)
{
    const machine m = load_machine(machine_name);
    const kernel_config kc = make_kernel_config(kernel_spec);
    const std::vector<std::string> argv = {"perf", "bench", "sched", "messaging",
                                           "-g", "4", "-p", "-l", "100"};
    u64 events = 0, switches = 0;
    double host_s = 0;
    for (auto _ : state) {
        const double t0 = process_cpu_s();
        bench::run_workload_once(state, m, kc, argv,
                                 [&](simulation& sim, kernel& k, sched_summary&) {
                                     if (k.scx() && k.scx()->exit.kind)
                                         state.SkipWithError("the ext policy was ejected");
                                     events += sim.events_fired();
                                     for (int cpu = 0; cpu < k.nr_cpu_ids(); ++cpu)
                                         switches += k.cpu_rq(cpu).nr_switches;
                                 });
        host_s += process_cpu_s() - t0;
    }
    state.counters["ns/event"] = host_s * 1e9 / static_cast<double>(events);
    state.counters["ns/switch"] = host_s * 1e9 / static_cast<double>(switches);
    state.counters["events/run"] =
        static_cast<double>(events) / static_cast<double>(state.iterations());
    state.counters["switches/run"] =
        static_cast<double>(switches) / static_cast<double>(state.iterations());
}
BENCHMARK_CAPTURE(BM_class, milan_fair, "6.12", "milan-2s")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_class, milan_ext_simple, "6.12+ext:simple", "milan-2s")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_class, milan_ext_simple_fifo, "6.12+ext:simple_fifo", "milan-2s")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_class, milan_ext_llc, "6.12+ext:llc", "milan-2s")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_class, skylake_fair, "6.12", "skylake-18c")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_class, skylake_ext_simple, "6.12+ext:simple", "skylake-18c")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_class, skylake_ext_llc, "6.12+ext:llc", "skylake-18c")
    ->Unit(benchmark::kMillisecond);

} // namespace
} // namespace schedlab
