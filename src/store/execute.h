// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Running a plan into a results store: every run's key, the runs the store
 * lacks (of this shard), and a writer that stores each result as it finishes,
 * so an interrupted compare or sweep keeps every finished run and the same
 * command finishes only what is missing.
 */
#include "experiment/plan.h"
#include "experiment/runner.h"
#include "store/store.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace schedlab {

/// Each run's key (run_key of its identity and seed); each distinct input is prepared once.
std::vector<std::string> plan_keys(const std::vector<run_spec>& runs);

/// A compare plan as a store records it, with every run's key (plan_keys). `name`
/// "": "<benchmark without its load> on <machine>".
stored_experiment stored_experiment_of(const compare_plan& plan, const std::string& kind,
                                       const std::string& machine, const std::string& name = "");

/// One of N slices of a plan (--shard i/N): run i of the plan is in shard i mod N.
struct shard {
    std::size_t index = 0; ///< 0-based
    std::size_t count = 1;
    bool contains(std::size_t plan_index) const { return plan_index % count == index; }
};

/// Parses "i/N" with 1 <= i <= N (shards are numbered from 1, as Slurm's --array=1-N).
shard parse_shard(const std::string& text, const std::string& where = "--shard");

/// Stores results as they finish, counting them; safe to call from the runner's threads.
class store_writer {
public:
    store_writer(results_store& store, std::size_t to_run);
    /// Writes one result (serialised with interrupt()).
    void put(const std::string& key, const run_result& r);
    std::size_t written() const;
    /// Waits for a write in progress, then closes the store: no later put reaches it.
    /// Returns the number of runs written. For a signal handler's thread.
    std::size_t close_for_exit();

private:
    results_store& store_;
    mutable std::mutex lock_;
    std::size_t to_run_, written_ = 0;
    bool closed_ = false;
};

struct store_run_stats {
    std::size_t planned = 0;       ///< runs of the plan
    std::size_t in_shard = 0;      ///< of those, in this shard
    std::size_t stored_before = 0; ///< of those, already in the store
    std::size_t ran = 0;           ///< simulated and written now
};

/// " (shard 2 of 8: 13 runs)", or "" for the whole plan.
std::string shard_note(const shard& sh, const store_run_stats& st);

/// What an interrupted run into a store kept and how to resume, for `signal_name`.
std::string interrupted_message(const char* signal_name, const shard& sh, const store_run_stats& st,
                                std::size_t written, const std::string& store_path);

/// The plan's runs of `sh` that the store lacks, as plan indices.
std::vector<std::size_t> missing_runs(results_store& store, const std::vector<std::string>& keys,
                                      const shard& sh, store_run_stats& stats);

/// Runs the given plan indices on `jobs` threads, writing each result through
/// `writer` as it finishes. `stop` as in run_each.
void run_missing(store_writer& writer, const std::vector<run_spec>& runs,
                 const std::vector<std::string>& keys, const std::vector<std::size_t>& todo,
                 int jobs, const progress_fn& progress, const std::atomic<bool>* stop = nullptr);

} // namespace schedlab
