// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The results store: an SQLite database (WAL mode) holding one row per
 * finished run, keyed by a hash of everything that determines the run
 * (run_identity() and the seed), so a run is simulated once and found again by
 * any later compare, sweep, report or export. docs/sweeps.md describes the
 * schema; store_schema_version numbers it.
 *
 * Besides the runs, a store records experiments: what a `compare` invocation
 * or one (machine, benchmark) of a `sweep` asked for - arms in order (the first
 * the baseline), loads, seeds - and the keys of its runs in plan order. Tables
 * are built from an experiment, so they do not depend on the order in which
 * runs finished or on which process ran them.
 *
 * A store is used from one thread at a time (the runner serialises its
 * callbacks); several processes may share one file (SQLite's locking, with a
 * busy timeout), but on a network file system use one store per process and
 * `schedlab store merge` (WAL needs shared memory between the processes).
 */
#include "experiment/result_json.h"
#include "experiment/run.h"
#include "sim/sha256.h" // sha256_hex: the keys

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace schedlab {

inline constexpr int store_schema_version = 1;
/// SQLite's application_id of a schedlab store ("SchL").
inline constexpr int store_application_id = 0x5363684c;

/// A run's key: the hash of its identity's hash (sha256_hex(run_identity())) and its seed.
std::string run_key(const std::string& identity_hash, u64 seed);

/// One experiment as a store records it.
struct stored_experiment {
    s64 id = 0;       ///< assigned by the store
    std::string kind; ///< "compare" or "sweep"
    std::string
        name; ///< e.g. "shared-runq-v3/bergamo-2s/tbench"; compare: "<benchmark> on <machine>"
    std::string machine; ///< as given (--machine, or the sweep's machines entry)
    experiment_info
        info; ///< command, arms (the first the baseline), loads, load option, runs, seed
    struct entry {
        std::string key;
        std::string arm, load;
        int run_index = 0;
    };
    std::vector<entry> runs; ///< plan order
};

/// How much of each run to read.
enum class store_detail {
    /// What the tables need: finished, metrics, and the provenance members a
    /// comparison checks (machine, argv, seed, time limit); the first run of
    /// each arm carries its whole provenance. Fast enough for 100k runs.
    tables,
    /// Every member, as the run was written (schedstat, outputs, summary).
    full,
};

struct merge_stats {
    std::size_t runs_added = 0, runs_present = 0;
    std::size_t experiments_added = 0;
};

class results_store {
public:
    /// Opens a store; with `create` a missing file (and its directory) is
    /// created. Throws config_error(where, ...) naming the file when it cannot
    /// be opened or written, is not a schedlab store, or has a newer schema.
    results_store(const std::string& path, bool create, const std::string& where = "--store");
    ~results_store();
    results_store(const results_store&) = delete;
    results_store& operator=(const results_store&) = delete;

    const std::string& path() const { return path_; }

    /// For each key, whether the store holds that run.
    std::vector<bool> contains(const std::vector<std::string>& keys);
    /// Writes one run in its own transaction. A run already stored is kept as it is
    /// (returns false); a stored run with another schedule digest under the same key
    /// is a determinism bug and throws.
    bool put(const std::string& key, const run_result& r);

    /// Records an experiment, or finds the same one (kind, name, info other than the
    /// command, and runs) recorded before; returns its id.
    s64 record_experiment(const stored_experiment& e);
    /// Every experiment in id order, with its runs.
    std::vector<stored_experiment> experiments();

    /// The stored runs of an experiment in plan order (runs not stored yet are
    /// left out), with arm, load and run index as the experiment names them.
    std::vector<run_result> load(const stored_experiment& e, store_detail detail,
                                 std::vector<std::string>* keys = nullptr);
    /// How many of an experiment's runs are stored.
    std::size_t stored_count(const stored_experiment& e);
    /// Every run, in key order.
    void for_each_run(const std::function<void(const std::string& key, run_result&& r)>& fn);
    std::size_t run_count();

    /// Copies another store's runs and experiments into this one (in one
    /// transaction). A key both hold with different schedule digests is an error.
    merge_stats merge_from(const std::string& other_path);

    /// Closes the database (checkpointing the WAL); further calls throw.
    void close();

private:
    void exec(const char* sql);
    sqlite3* db();

    std::string path_, where_;
    sqlite3* db_ = nullptr;
};

/// The per-user default store: $SCHEDLAB_STORE, else
/// $XDG_DATA_HOME/schedlab/results.sqlite, else ~/.local/share/schedlab/results.sqlite.
std::string default_store_path();

/// True when `path` is a regular file starting with SQLite's header.
bool looks_like_store(const std::string& path);

} // namespace schedlab
