// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * One whole workload run inside a Google Benchmark loop, shared by the benches
 * that time complete runs (core_loop_bench.cc's BM_hackbench,
 * ext_class_bench.cc's BM_class): a fresh simulation and kernel, the summary
 * sink, the workload set up and run to the end. `after` sees the kernel and the
 * summary before they go; a run that does not finish is reported as an error.
 */
#include "machine/machine.h"
#include "metrics/sched_summary.h"
#include "sched/core.h"
#include "workload/registry.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace schedlab::bench {

template <class After>
void run_workload_once(benchmark::State& state, const machine& m, const kernel_config& kc,
                       const std::vector<std::string>& argv, After&& after)
{
    simulation sim(7);
    run_context ctx(sim, m, cost_params{});
    kernel k(sim, m, kc, ctx);
    sched_summary summary(m.nr_cpus());
    k.add_sink(&summary);
    auto w = make_workload(argv);
    w->setup(k.sys());
    k.run(secs(600));
    if (!w->finished())
        state.SkipWithError("the workload did not finish");
    after(sim, k, summary);
}

} // namespace schedlab::bench
