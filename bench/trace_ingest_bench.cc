// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ingest rate of real traces (issue 17: >= 1 M events per second): the ftrace
 * text parser alone, with the switch-in inference, and the replay's two passes
 * with the behaviour rebuilt, over data/traces/perf_pipe_l50000 (400 005
 * events, 0.67 s of a 2-CPU guest), from its xz file and from plain text.
 *
 *   build/bench/schedlab_bench --benchmark_filter=trace
 */
#include "trace/ftrace_parse.h"
#include "workload/replay.h"

#include <benchmark/benchmark.h>
#include <lzma.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace schedlab {
namespace {

const std::string xz_trace =
    std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/perf_pipe_l50000.trace.txt.xz";

/// The trace decompressed once into the temporary directory (with the parser's own reader).
const std::string& plain_trace()
{
    static const std::string path = [] {
        const std::string p =
            (std::filesystem::temp_directory_path() / "schedlab-bench-perf_pipe_l50000.trace.txt")
                .string();
        std::ifstream in(xz_trace, std::ios::binary);
        const std::string xz((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
        std::string out(64 << 20, '\0');
        std::size_t in_pos = 0, out_pos = 0;
        u64 memlimit = UINT64_MAX;
        if (lzma_stream_buffer_decode(&memlimit, 0, nullptr, reinterpret_cast<const u8*>(xz.data()),
                                      &in_pos, xz.size(), reinterpret_cast<u8*>(out.data()),
                                      &out_pos, out.size()) != LZMA_OK)
            std::fprintf(stderr, "cannot decompress %s\n", xz_trace.c_str());
        std::ofstream(p, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out_pos));
        return p;
    }();
    return path;
}

template <class Reader> void read_all(benchmark::State& state, const std::string& path)
{
    u64 events = 0;
    for (auto _ : state) {
        Reader r(path);
        ftrace_event e;
        while (r.next(e))
            ++events;
    }
    state.counters["events/s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

void BM_trace_ftrace_reader_xz(benchmark::State& s)
{
    read_all<ftrace_reader>(s, xz_trace);
}
void BM_trace_ftrace_reader_plain(benchmark::State& s)
{
    read_all<ftrace_reader>(s, plain_trace());
}
void BM_trace_sched_reader_plain(benchmark::State& s)
{
    read_all<sched_trace_reader>(s, plain_trace());
}

/// load_replay_trace: two passes and the behaviour; events/s counts one pass's events.
void BM_trace_load_replay(benchmark::State& state)
{
    u64 events = 0;
    for (auto _ : state) {
        const replay_trace t = load_replay_trace(plain_trace(), {});
        events += t.parse.events;
        benchmark::DoNotOptimize(t.tasks.size());
    }
    state.counters["events/s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_trace_ftrace_reader_xz)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_trace_ftrace_reader_plain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_trace_sched_reader_plain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_trace_load_replay)->Unit(benchmark::kMillisecond);

} // namespace
} // namespace schedlab
