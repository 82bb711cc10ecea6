// SPDX-License-Identifier: GPL-2.0-only
#include "store/execute.h"

#include "experiment/benchmarks.h"
#include "sim/config_error.h"

#include <fmt/format.h>

#include <charconv>
#include <map>

namespace schedlab {

std::vector<std::string> plan_keys(const std::vector<run_spec>& runs)
{
    std::map<std::string, std::string> identity_hash; // inputs_but_seed -> hash of run_identity
    std::vector<std::string> keys;
    keys.reserve(runs.size());
    for (const run_spec& r : runs) {
        const std::string inputs = inputs_but_seed(r);
        auto it = identity_hash.find(inputs);
        if (it == identity_hash.end())
            it = identity_hash.emplace(inputs, sha256_hex(run_identity(*prepare_run(r)))).first;
        keys.push_back(run_key(it->second, r.seed));
    }
    return keys;
}

stored_experiment stored_experiment_of(const compare_plan& plan, const std::string& kind,
                                       const std::string& machine, const std::string& name)
{
    stored_experiment e;
    e.kind = kind;
    e.machine = machine;
    e.info = plan.info;
    e.name = name;
    if (e.name.empty() && !plan.runs.empty()) {
        std::string bench;
        for (const std::string& a : argv_without_load(plan.runs.front().workload_argv))
            bench += (bench.empty() ? "" : " ") + a;
        e.name = fmt::format("{} on {}", bench, machine);
    }
    const std::vector<std::string> keys = plan_keys(plan.runs);
    for (std::size_t i = 0; i < plan.runs.size(); ++i)
        e.runs.push_back({keys[i], plan.runs[i].arm, plan.runs[i].load, plan.runs[i].run_index});
    return e;
}

shard parse_shard(const std::string& text, const std::string& where)
{
    const auto slash = text.find('/');
    auto number = [&](std::string_view s, std::size_t& v) {
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && p == s.data() + s.size() && !s.empty();
    };
    std::size_t i = 0, n = 0;
    if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), i) ||
        !number(std::string_view(text).substr(slash + 1), n))
        throw config_error(where,
                           fmt::format("'{}' is not i/N (e.g. 2/8: the second of 8 shards)", text));
    if (n < 1 || n > 1'000'000)
        throw config_error(where, fmt::format("{} shards: give 1 to 1000000", n));
    if (i < 1 || i > n)
        throw config_error(where,
                           fmt::format("shard {} of {}: shards are numbered 1 to {}", i, n, n));
    return {i - 1, n};
}

store_writer::store_writer(results_store& store, std::size_t to_run)
    : store_(store), to_run_(to_run)
{
}

void store_writer::put(const std::string& key, const run_result& r)
{
    const std::lock_guard<std::mutex> g(lock_);
    if (closed_)
        return; // the process is exiting on a signal
    store_.put(key, r);
    ++written_;
}

std::size_t store_writer::written() const
{
    const std::lock_guard<std::mutex> g(lock_);
    return written_;
}

std::size_t store_writer::close_for_exit()
{
    const std::lock_guard<std::mutex> g(lock_);
    closed_ = true;
    store_.close();
    return written_;
}

std::string shard_note(const shard& sh, const store_run_stats& st)
{
    return sh.count > 1
               ? fmt::format(" (shard {} of {}: {} runs)", sh.index + 1, sh.count, st.in_shard)
               : "";
}

std::string interrupted_message(const char* signal_name, const shard& sh, const store_run_stats& st,
                                std::size_t written, const std::string& store_path)
{
    const std::size_t kept = st.stored_before + written;
    return fmt::format("\nschedlab: interrupted ({}): {} of the {} runs{} are in the store {} ({} "
                       "finished in this invocation; the runs in flight are dropped). The same "
                       "command runs only the {} left.\n",
                       signal_name, kept, st.in_shard, shard_note(sh, st), store_path, written,
                       st.in_shard - kept);
}

std::vector<std::size_t> missing_runs(results_store& store, const std::vector<std::string>& keys,
                                      const shard& sh, store_run_stats& stats)
{
    stats.planned = keys.size();
    std::vector<std::string> mine;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < keys.size(); ++i)
        if (sh.contains(i)) {
            mine.push_back(keys[i]);
            index.push_back(i);
        }
    stats.in_shard = mine.size();
    const std::vector<bool> have = store.contains(mine);
    std::vector<std::size_t> todo;
    for (std::size_t j = 0; j < mine.size(); ++j) {
        if (have[j])
            ++stats.stored_before;
        else
            todo.push_back(index[j]);
    }
    return todo;
}

void run_missing(store_writer& writer, const std::vector<run_spec>& runs,
                 const std::vector<std::string>& keys, const std::vector<std::size_t>& todo,
                 int jobs, const progress_fn& progress, const std::atomic<bool>* stop)
{
    std::vector<run_spec> specs;
    specs.reserve(todo.size());
    for (std::size_t i : todo)
        specs.push_back(runs[i]);
    run_each(
        specs, jobs, [&](std::size_t j, run_result&& r) { writer.put(keys[todo[j]], r); }, progress,
        stop);
}

} // namespace schedlab
