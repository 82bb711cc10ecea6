// SPDX-License-Identifier: GPL-2.0-only
/*
 * Throughput of the simulation core: events per second of a whole hackbench
 * run (scheduler + workload + tracepoint sinks), next to a bare push/pop loop
 * on the same event queue holding a comparable number of pending events. The
 * ratio says how much of the per-event cost is the model rather than the queue.
 *
 *   build/bench/schedlab_bench [--benchmark_filter=...]
 */
#include "bench_run.h"
#include "machine/presets.h"
#include "metrics/sched_summary.h"
#include "sched/core.h"
#include "sim/event_queue.h"
#include "workload/registry.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <map>

namespace schedlab {
namespace {

struct null_handler final : event_handler {
    u64 fired = 0;
    void fire(u64) override { ++fired; }
};

/// Pops the earliest event and pushes one a pseudo-random delay later, keeping
/// `pending` events queued: the steady state of a simulation's queue.
void BM_event_queue_push_pop(benchmark::State& state)
{
    const auto pending = static_cast<int>(state.range(0));
    event_queue q;
    null_handler h;
    rng_stream rng(1, "bench");
    for (int i = 0; i < pending; ++i)
        q.schedule(static_cast<sim_time>(rng.below(100000)), event_prio::task_work, &h, 0);
    u64 n = 0;
    for (auto _ : state) {
        const auto ev = q.pop();
        ev.handler->fire(ev.arg);
        q.schedule(ev.when + 1 + static_cast<sim_time>(rng.below(100000)), event_prio::task_work,
                   &h, 0);
        ++n;
    }
    state.counters["events/s"] = benchmark::Counter(static_cast<double>(n),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_event_queue_push_pop)->Arg(64)->Arg(512);

/// A whole `perf bench sched messaging` run on a machine preset.
void BM_hackbench(benchmark::State& state, const char* machine_name,
                  std::vector<std::string> argv)
{
    const machine m = load_machine(machine_name);
    const kernel_config kc = make_kernel_config("6.6");
    u64 events = 0;
    for (auto _ : state)
        bench::run_workload_once(state, m, kc, argv,
                                 [&](simulation& sim, kernel&, sched_summary& summary) {
                                     events += sim.events_fired();
                                     benchmark::DoNotOptimize(summary.finish(sim.now()));
                                 });
    state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                    benchmark::Counter::kIsRate);
    state.counters["events/run"] =
        static_cast<double>(events) / static_cast<double>(state.iterations());
}
BENCHMARK_CAPTURE(BM_hackbench, skylake_g4_pipe, "skylake-18c",
                  {"perf", "bench", "sched", "messaging", "-g", "4", "-p", "-l", "100"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_hackbench, milan_g4_pipe, "milan-2s",
                  {"perf", "bench", "sched", "messaging", "-g", "4", "-p", "-l", "100"})
    ->Unit(benchmark::kMillisecond);

/// Prints the usual table, then the events/s ratio of each hackbench run to the bare queue.
class ratio_reporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override
    {
        ConsoleReporter::ReportRuns(runs);
        for (const auto& r : runs) {
            const auto it = r.counters.find("events/s");
            if (it != r.counters.end())
                rates_[r.benchmark_name()] = it->second.value;
        }
    }
    void Finalize() override
    {
        ConsoleReporter::Finalize();
        double bare = 0;
        for (const auto& [name, rate] : rates_)
            if (name == "BM_event_queue_push_pop/512")
                bare = rate;
        if (bare <= 0)
            return;
        std::printf("\nevents/s relative to the bare queue loop (512 pending events):\n");
        for (const auto& [name, rate] : rates_)
            if (name.rfind("BM_hackbench", 0) == 0)
                std::printf("  %-40s %12.0f events/s = %.3f x bare (%.0f events/s)\n",
                            name.c_str(), rate, rate / bare, bare);
    }

private:
    std::map<std::string, double> rates_;
};

} // namespace
} // namespace schedlab

int main(int argc, char** argv)
{
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    schedlab::ratio_reporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
