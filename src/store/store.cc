// SPDX-License-Identifier: GPL-2.0-only
#include "store/store.h"

#include "sim/config_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

namespace schedlab {

using ojson = nlohmann::ordered_json;

std::string run_key(const std::string& identity_hash, u64 seed)
{
    return sha256_hex(fmt::format("schedlab-run\n{}\nseed {}\n", identity_hash, seed));
}

namespace {

/// A compiled statement; errors name the store.
class stmt {
public:
    stmt(sqlite3* db, const char* sql, const std::string& where) : db_(db), where_(where)
    {
        if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
            fail("prepare");
    }
    ~stmt() { sqlite3_finalize(s_); }
    stmt(const stmt&) = delete;
    stmt& operator=(const stmt&) = delete;

    stmt& bind(int i, const std::string& v)
    {
        check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    stmt& bind(int i, s64 v)
    {
        check(sqlite3_bind_int64(s_, i, v));
        return *this;
    }
    stmt& bind(int i, double v)
    {
        // SQLite stores NaN as NULL; read back as NaN (column_double_or_nan).
        check(std::isnan(v) ? sqlite3_bind_null(s_, i) : sqlite3_bind_double(s_, i, v));
        return *this;
    }
    stmt& bind_blob(int i, const std::string& v)
    {
        check(sqlite3_bind_blob(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    /// true: a row is ready; false: done.
    bool step()
    {
        const int rc = sqlite3_step(s_);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        fail("step");
    }
    void run()
    {
        while (step()) {
        }
        reset();
    }
    void reset()
    {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }
    std::string text(int i) const
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s_, i));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, i))) : "";
    }
    std::string blob(int i) const
    {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(s_, i));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, i))) : "";
    }
    s64 int64(int i) const { return sqlite3_column_int64(s_, i); }
    bool is_null(int i) const { return sqlite3_column_type(s_, i) == SQLITE_NULL; }
    double real(int i) const
    {
        return sqlite3_column_type(s_, i) == SQLITE_NULL ? std::nan("")
                                                         : sqlite3_column_double(s_, i);
    }

private:
    void check(int rc)
    {
        if (rc != SQLITE_OK)
            fail("bind");
    }
    [[noreturn]] void fail(const char* what)
    {
        if (sqlite3_errcode(db_) == SQLITE_NOTADB)
            throw config_error(where_, "not an SQLite database, so not a schedlab store");
        throw config_error(where_, fmt::format("store error ({}): {}", what, sqlite3_errmsg(db_)));
    }

    sqlite3* db_;
    sqlite3_stmt* s_ = nullptr;
    std::string where_;
};

/// BEGIN IMMEDIATE ... COMMIT; rolled back unless committed.
class transaction {
public:
    transaction(sqlite3* db, const std::string& where) : db_(db), where_(where)
    {
        exec_sql("BEGIN IMMEDIATE");
    }
    ~transaction()
    {
        if (!done_)
            sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    void commit()
    {
        exec_sql("COMMIT");
        done_ = true;
    }

private:
    void exec_sql(const char* sql)
    {
        char* msg = nullptr;
        if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
            const std::string m = msg ? msg : sqlite3_errmsg(db_);
            sqlite3_free(msg);
            throw config_error(where_, fmt::format("store error ({}): {}", sql, m));
        }
    }
    sqlite3* db_;
    std::string where_;
    bool done_ = false;
};

// Decompressed results above this size are refused as corrupt rather than allocated.
constexpr unsigned long long max_result_bytes = 1ull << 30;

std::string compress(const std::string& text)
{
    std::string out(ZSTD_compressBound(text.size()), '\0');
    const std::size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
    if (ZSTD_isError(n))
        throw std::runtime_error(fmt::format("zstd: {}", ZSTD_getErrorName(n)));
    out.resize(n);
    return out;
}

std::string decompress(const std::string& blob, const std::string& where)
{
    const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
        size > max_result_bytes)
        throw config_error(where, "a stored result is not a valid zstd frame (corrupt store?)");
    std::string out(static_cast<std::size_t>(size), '\0');
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), blob.data(), blob.size());
    if (ZSTD_isError(n) || n != size)
        throw config_error(where, "a stored result does not decompress (corrupt store?)");
    return out;
}

const char* const schema_sql = R"sql(
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,   -- this store's own number of the run
    key              TEXT NOT NULL UNIQUE,  -- run_key(): SHA-256 of identity hash and seed
    machine          TEXT NOT NULL,         -- the machine's name
    nr_cpus          INTEGER NOT NULL,
    kernel_spec      TEXT NOT NULL,
    features_arg     TEXT NOT NULL,
    features         TEXT NOT NULL,         -- effective, as sched/features prints them
    argv             TEXT NOT NULL,         -- JSON array: the benchmark command line
    command_line     TEXT NOT NULL,         -- its canonical form
    load             TEXT NOT NULL,
    seed             INTEGER NOT NULL,      -- the u64 seed, two's complement
    time_limit_s     REAL NOT NULL,
    finished         INTEGER NOT NULL,
    measured_nothing TEXT NOT NULL,         -- finished, but the benchmark measured nothing: why
    schedule_digest  TEXT NOT NULL,
    events_fired     INTEGER NOT NULL,
    schedlab_version TEXT NOT NULL,
    git_sha          TEXT NOT NULL
);
-- The whole run, apart from the rows above so that a scan of runs reads small rows only.
CREATE TABLE results (
    run              INTEGER PRIMARY KEY REFERENCES runs (id),
    result           BLOB NOT NULL          -- zstd(schedlab-result-v1 JSON)
);
CREATE TABLE metrics (
    run              INTEGER NOT NULL REFERENCES runs (id),
    ordinal          INTEGER NOT NULL,      -- the benchmark's order
    name             TEXT NOT NULL,
    unit             TEXT NOT NULL,
    value            REAL,                  -- NULL: NaN
    higher_is_better INTEGER NOT NULL,
    PRIMARY KEY (run, ordinal)
) WITHOUT ROWID;
CREATE TABLE experiments (
    id      INTEGER PRIMARY KEY,
    ident   TEXT NOT NULL UNIQUE,           -- SHA-256 of kind, name, machine, info and runs
    kind    TEXT NOT NULL,                  -- compare or sweep
    name    TEXT NOT NULL,
    machine TEXT NOT NULL,
    info    TEXT NOT NULL                   -- JSON: command, arms, loads, load_option, runs, seed
);
CREATE TABLE experiment_runs (
    experiment INTEGER NOT NULL REFERENCES experiments (id),
    position   INTEGER NOT NULL,            -- plan order
    key        TEXT NOT NULL,
    arm        TEXT NOT NULL,
    load       TEXT NOT NULL,
    run_index  INTEGER NOT NULL,
    PRIMARY KEY (experiment, position)
) WITHOUT ROWID;
)sql";

const char* const run_columns =
    "key, machine, nr_cpus, kernel_spec, features_arg, features, argv, command_line, load, seed, "
    "time_limit_s, finished, measured_nothing, schedule_digest, events_fired, schedlab_version, "
    "git_sha";

ojson info_to_json(const experiment_info& info, bool with_command)
{
    ojson j = ojson::object();
    if (with_command)
        j["command"] = info.command;
    j["arms"] = info.arms;
    j["loads"] = info.loads;
    j["load_option"] = info.load_option;
    j["runs"] = info.runs;
    j["seed"] = info.seed;
    return j;
}

experiment_info info_from_json(const std::string& text, const std::string& where)
{
    experiment_info info;
    try {
        const ojson j = ojson::parse(text);
        info.command = j.value("command", "");
        info.arms = j.at("arms").get<std::vector<std::string>>();
        info.loads = j.at("loads").get<std::vector<std::string>>();
        info.load_option = j.at("load_option").get<std::string>();
        info.runs = j.at("runs").get<int>();
        info.seed = j.at("seed").get<u64>();
    } catch (const ojson::exception& e) {
        throw config_error(where, fmt::format("an experiment's info is malformed: {}", e.what()));
    }
    return info;
}

std::string experiment_ident(const stored_experiment& e)
{
    ojson runs = ojson::array();
    for (const auto& r : e.runs)
        runs.push_back({r.key, r.arm, r.load, r.run_index});
    const ojson j = {{"kind", e.kind},
                     {"name", e.name},
                     {"machine", e.machine},
                     {"info", info_to_json(e.info, false)},
                     {"runs", runs}};
    return sha256_hex(j.dump());
}

} // namespace

results_store::results_store(const std::string& path, bool create, const std::string& where)
    : path_(path), where_(where.empty() ? path : where + " " + path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool exists = fs::exists(path, ec);
    if (!exists && !create)
        throw config_error(where_, "no such store");
    if (exists && !fs::is_regular_file(path, ec))
        throw config_error(where_, "not a regular file");
    if (!exists) {
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && !fs::exists(parent, ec) && !fs::create_directories(parent, ec))
            throw config_error(where_, fmt::format("cannot create the directory '{}': {}",
                                                   parent.string(), ec.message()));
    }
    int rc = sqlite3_open_v2(path.c_str(), &db_,
                             SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), nullptr);
    bool read_only = false;
    if (rc != SQLITE_OK && exists && !create) {
        sqlite3_close(db_);
        db_ = nullptr;
        rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
        read_only = true;
    }
    if (rc != SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw config_error(where_, fmt::format("cannot open: {}", msg));
    }
    sqlite3_busy_timeout(db_, 30000); // another process writing the same store
    // Reads through a memory map instead of a read() per page, and a 64 MiB page cache:
    // reports scan every run of an experiment (docs/sweeps.md has the figures).
    sqlite3_exec(db_, "PRAGMA mmap_size=1073741824; PRAGMA cache_size=-65536", nullptr, nullptr,
                 nullptr);
    try {
        // A writer checks and creates under one write lock (BEGIN IMMEDIATE): several sweeps or
        // compares started together on a new store serialise here, exactly one creates the
        // schema and the others find it whole. WAL is switched on before (a journal-mode
        // change cannot be made inside a transaction; on a store already in WAL it is a no-op).
        if (!read_only) {
            // Several openers switching a new file to WAL at once get SQLITE_BUSY without the
            // busy handler (the switch needs every other connection gone): retried for as long
            // as the busy timeout would wait.
            for (int attempt = 0;; ++attempt) {
                const int wal =
                    sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
                if (wal == SQLITE_OK)
                    break;
                if (wal != SQLITE_BUSY || attempt == 3000)
                    exec("PRAGMA journal_mode=WAL"); // the error, as any other statement's
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        std::optional<transaction> txn;
        if (!read_only)
            txn.emplace(db_, where_);
        s64 app_id = 0, version = 0, tables = 0;
        {
            stmt a(db_, "PRAGMA application_id", where_);
            if (a.step())
                app_id = a.int64(0);
            stmt v(db_, "PRAGMA user_version", where_);
            if (v.step())
                version = v.int64(0);
            stmt t(db_, "SELECT count(*) FROM sqlite_master", where_);
            if (t.step())
                tables = t.int64(0);
        }
        if (app_id == 0 && tables == 0) {
            if (read_only)
                throw config_error(where_, "an empty database, not a schedlab store");
            exec(schema_sql);
            exec(fmt::format("PRAGMA application_id={}", store_application_id).c_str());
            exec(fmt::format("PRAGMA user_version={}", store_schema_version).c_str());
        } else if (app_id != store_application_id) {
            throw config_error(where_, "an SQLite database, but not a schedlab store");
        } else if (version > store_schema_version) {
            throw config_error(where_, fmt::format("store schema {} is newer than this schedlab "
                                                   "reads ({}); use a newer schedlab",
                                                   version, store_schema_version));
        } else if (version < 1) {
            throw config_error(where_, fmt::format("store schema {} is not valid", version));
        }
        if (txn)
            txn->commit();
        if (!read_only)
            exec("PRAGMA synchronous=NORMAL"); // WAL: durable at every commit but an OS crash
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

results_store::~results_store()
{
    sqlite3_close(db_);
}

void results_store::close()
{
    if (db_)
        sqlite3_close(db_);
    db_ = nullptr;
}

sqlite3* results_store::db()
{
    if (!db_)
        throw config_error(where_, "the store is closed");
    return db_;
}

void results_store::exec(const char* sql)
{
    char* msg = nullptr;
    if (sqlite3_exec(db(), sql, nullptr, nullptr, &msg) != SQLITE_OK) {
        std::string m = msg ? msg : sqlite3_errmsg(db_);
        sqlite3_free(msg);
        if (m.find("file is not a database") != std::string::npos)
            m = "not an SQLite database, so not a schedlab store";
        throw config_error(where_, m);
    }
}

std::vector<bool> results_store::contains(const std::vector<std::string>& keys)
{
    std::vector<bool> out;
    out.reserve(keys.size());
    stmt q(db(), "SELECT 1 FROM runs WHERE key = ?1", where_);
    for (const std::string& k : keys) {
        q.bind(1, k);
        out.push_back(q.step());
        q.reset();
    }
    return out;
}

bool results_store::put(const std::string& key, const run_result& r)
{
    const run_provenance& p = r.provenance;
    const std::string digest = fmt::format("{:016x}", r.schedule_digest);
    transaction txn(db(), where_);
    {
        stmt old(db_, "SELECT schedule_digest, finished FROM runs WHERE key = ?1", where_);
        old.bind(1, key);
        if (old.step()) {
            if (old.text(0) != digest || (old.int64(1) != 0) != r.finished)
                throw config_error(
                    where_,
                    fmt::format(
                        "run {} is stored with schedule digest {} but ran again with {}: the same "
                        "inputs gave two schedules (a determinism bug; please report it with both "
                        "results)",
                        key, old.text(0), digest));
            return false;
        }
    }
    stmt ins(db_,
             "INSERT INTO runs (key, machine, nr_cpus, kernel_spec, features_arg, features, argv, "
             "command_line, load, seed, time_limit_s, finished, measured_nothing, "
             "schedule_digest, events_fired, schedlab_version, git_sha) VALUES (?1, ?2, ?3, ?4, "
             "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
             where_);
    ins.bind(1, key)
        .bind(2, p.machine)
        .bind(3, static_cast<s64>(p.nr_cpus))
        .bind(4, p.kernel_spec)
        .bind(5, p.features_arg)
        .bind(6, p.features)
        .bind(7, ojson(p.argv).dump())
        .bind(8, p.command_line)
        .bind(9, r.load)
        .bind(10, static_cast<s64>(p.seed))
        .bind(11, p.time_limit_s)
        .bind(12, static_cast<s64>(r.finished))
        .bind(13, r.measured_nothing)
        .bind(14, digest)
        .bind(15, static_cast<s64>(r.events_fired))
        .bind(16, p.schedlab_version)
        .bind(17, p.git_sha);
    ins.run();
    const s64 id = sqlite3_last_insert_rowid(db_);
    stmt res(db_, "INSERT INTO results (run, result) VALUES (?1, ?2)", where_);
    res.bind(1, id).bind_blob(2, compress(to_json(r).dump()));
    res.run();
    stmt met(db_,
             "INSERT INTO metrics (run, ordinal, name, unit, value, higher_is_better) VALUES "
             "(?1, ?2, ?3, ?4, ?5, ?6)",
             where_);
    for (std::size_t i = 0; i < r.metrics.size(); ++i) {
        const workload_metric& m = r.metrics[i];
        met.bind(1, id)
            .bind(2, static_cast<s64>(i))
            .bind(3, m.name)
            .bind(4, m.unit)
            .bind(5, m.value)
            .bind(6, static_cast<s64>(m.higher_is_better));
        met.run();
    }
    txn.commit();
    return true;
}

s64 results_store::record_experiment(const stored_experiment& e)
{
    const std::string ident = experiment_ident(e);
    transaction txn(db(), where_);
    stmt ins(db_,
             "INSERT OR IGNORE INTO experiments (ident, kind, name, machine, info) VALUES "
             "(?1, ?2, ?3, ?4, ?5)",
             where_);
    ins.bind(1, ident)
        .bind(2, e.kind)
        .bind(3, e.name)
        .bind(4, e.machine)
        .bind(5, info_to_json(e.info, true).dump());
    ins.run();
    const bool added = sqlite3_changes(db_) == 1;
    stmt id_q(db_, "SELECT id FROM experiments WHERE ident = ?1", where_);
    id_q.bind(1, ident);
    if (!id_q.step())
        throw config_error(where_, "an experiment just recorded is missing");
    const s64 id = id_q.int64(0);
    if (added) {
        stmt r(db_,
               "INSERT INTO experiment_runs (experiment, position, key, arm, load, run_index) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
               where_);
        for (std::size_t i = 0; i < e.runs.size(); ++i) {
            const auto& x = e.runs[i];
            r.bind(1, id)
                .bind(2, static_cast<s64>(i))
                .bind(3, x.key)
                .bind(4, x.arm)
                .bind(5, x.load)
                .bind(6, static_cast<s64>(x.run_index));
            r.run();
        }
    }
    txn.commit();
    return id;
}

std::vector<stored_experiment> results_store::experiments()
{
    std::vector<stored_experiment> out;
    std::map<s64, std::size_t> by_id;
    stmt q(db(), "SELECT id, kind, name, machine, info FROM experiments ORDER BY id", where_);
    while (q.step()) {
        stored_experiment e;
        e.id = q.int64(0);
        e.kind = q.text(1);
        e.name = q.text(2);
        e.machine = q.text(3);
        e.info = info_from_json(q.text(4), where_);
        by_id[e.id] = out.size();
        out.push_back(std::move(e));
    }
    stmt r(db_,
           "SELECT experiment, key, arm, load, run_index FROM experiment_runs "
           "ORDER BY experiment, position",
           where_);
    while (r.step()) {
        const auto it = by_id.find(r.int64(0));
        if (it == by_id.end())
            continue;
        out[it->second].runs.push_back(
            {r.text(1), r.text(2), r.text(3), static_cast<int>(r.int64(4))});
    }
    return out;
}

namespace {

run_result decode_result(const std::string& blob, const std::string& key, const std::string& where)
{
    const std::string text = decompress(blob, where);
    ojson j;
    try {
        j = ojson::parse(text);
    } catch (const ojson::exception& e) {
        throw config_error(where,
                           fmt::format("run {}: stored result is not JSON: {}", key, e.what()));
    }
    return run_result_from_json(j, fmt::format("{}: run {}", where, key));
}

} // namespace

std::size_t results_store::stored_count(const stored_experiment& e)
{
    stmt q(db(),
           "SELECT count(*) FROM experiment_runs er JOIN runs r ON r.key = er.key "
           "WHERE er.experiment = ?1",
           where_);
    q.bind(1, e.id);
    return q.step() ? static_cast<std::size_t>(q.int64(0)) : 0;
}

std::vector<run_result> results_store::load(const stored_experiment& e, store_detail detail,
                                            std::vector<std::string>* keys_out)
{
    std::vector<run_result> out;
    if (detail == store_detail::full) {
        stmt q(db(),
               "SELECT er.position, er.key, er.arm, er.load, er.run_index, x.result "
               "FROM experiment_runs er JOIN runs r ON r.key = er.key "
               "JOIN results x ON x.run = r.id "
               "WHERE er.experiment = ?1 ORDER BY er.position",
               where_);
        q.bind(1, e.id);
        while (q.step()) {
            run_result r = decode_result(q.blob(5), q.text(1), where_);
            r.arm = q.text(2);
            r.load = q.text(3);
            r.run_index = static_cast<int>(q.int64(4));
            out.push_back(std::move(r));
            if (keys_out)
                keys_out->push_back(q.text(1));
        }
        return out;
    }

    // One row per (run, metric), in plan order: the members a comparison reads, nothing more.
    stmt q(db(),
           "SELECT er.position, er.key, er.arm, er.load, er.run_index, r.id, r.finished, "
           "r.machine, r.nr_cpus, r.kernel_spec, r.features_arg, r.argv, r.seed, r.time_limit_s, "
           "r.schedule_digest, r.measured_nothing, m.name, m.unit, m.value, m.higher_is_better "
           "FROM experiment_runs er JOIN runs r ON r.key = er.key "
           "LEFT JOIN metrics m ON m.run = r.id "
           "WHERE er.experiment = ?1 ORDER BY er.position, m.ordinal",
           where_);
    q.bind(1, e.id);
    std::vector<std::string> keys;
    std::vector<s64> ids;
    // most runs share a few command lines
    std::map<std::string, std::vector<std::string>> argv_cache;
    s64 position = -1;
    while (q.step()) {
        if (q.int64(0) != position) {
            position = q.int64(0);
            run_result r;
            r.arm = q.text(2);
            r.load = q.text(3);
            r.run_index = static_cast<int>(q.int64(4));
            ids.push_back(q.int64(5));
            r.finished = q.int64(6) != 0;
            run_provenance& p = r.provenance;
            p.machine = q.text(7);
            p.nr_cpus = static_cast<int>(q.int64(8));
            p.kernel_spec = q.text(9);
            p.features_arg = q.text(10);
            const std::string argv = q.text(11);
            auto cached = argv_cache.find(argv);
            if (cached == argv_cache.end()) {
                try {
                    cached =
                        argv_cache.emplace(argv, ojson::parse(argv).get<std::vector<std::string>>())
                            .first;
                } catch (const ojson::exception&) {
                    throw config_error(where_, fmt::format("run {}: its argv is not a JSON array "
                                                           "of strings",
                                                           q.text(1)));
                }
            }
            p.argv = cached->second;
            p.seed = static_cast<u64>(q.int64(12));
            p.time_limit_s = q.real(13);
            r.schedule_digest = std::strtoull(q.text(14).c_str(), nullptr, 16);
            r.measured_nothing = q.text(15);
            keys.push_back(q.text(1));
            out.push_back(std::move(r));
        }
        if (q.is_null(16))
            continue; // a run without metrics
        out.back().metrics.push_back({q.text(16), q.text(17), q.real(18), q.int64(19) != 0});
    }
    // The whole provenance of each arm's first finished run (the comparison's arm_provenance).
    std::vector<std::string> arms_done;
    stmt blob(db_, "SELECT result FROM results WHERE run = ?1", where_);
    for (std::size_t i = 0; i < out.size(); ++i) {
        run_result& r = out[i];
        if (!r.finished || std::find(arms_done.begin(), arms_done.end(), r.arm) != arms_done.end())
            continue;
        arms_done.push_back(r.arm);
        blob.bind(1, ids[i]);
        if (blob.step())
            r.provenance = decode_result(blob.blob(0), keys[i], where_).provenance;
        blob.reset();
    }
    if (keys_out)
        *keys_out = std::move(keys);
    return out;
}

void results_store::for_each_run(
    const std::function<void(const std::string& key, run_result&& r)>& fn)
{
    stmt q(db(), "SELECT r.key, x.result FROM runs r JOIN results x ON x.run = r.id ORDER BY r.key",
           where_);
    while (q.step()) {
        const std::string key = q.text(0);
        fn(key, decode_result(q.blob(1), key, where_));
    }
}

std::size_t results_store::run_count()
{
    stmt q(db(), "SELECT count(*) FROM runs", where_);
    return q.step() ? static_cast<std::size_t>(q.int64(0)) : 0;
}

merge_stats results_store::merge_from(const std::string& other_path)
{
    // Open it as a store first: the same checks (a store, a schema this reads).
    {
        results_store other(other_path, false, "store merge");
    }
    merge_stats st;
    {
        stmt att(db(), "ATTACH DATABASE ?1 AS src", where_);
        att.bind(1, other_path);
        att.run();
    }
    struct detach {
        sqlite3* db;
        ~detach() { sqlite3_exec(db, "DETACH DATABASE src", nullptr, nullptr, nullptr); }
    } detach_guard{db_};
    transaction txn(db_, where_);
    {
        stmt conflict(db_,
                      "SELECT a.key, a.schedule_digest, b.schedule_digest FROM src.runs a "
                      "JOIN main.runs b ON a.key = b.key "
                      "WHERE a.schedule_digest != b.schedule_digest OR a.finished != b.finished "
                      "LIMIT 1",
                      where_);
        if (conflict.step())
            throw config_error(
                other_path,
                fmt::format("run {} has schedule digest {} here and {} in {}: the same inputs "
                            "gave two schedules (a determinism bug; please report it)",
                            conflict.text(0), conflict.text(1), conflict.text(2), path_));
    }
    {
        stmt present(db_, "SELECT count(*) FROM src.runs WHERE key IN (SELECT key FROM main.runs)",
                     where_);
        if (present.step())
            st.runs_present = static_cast<std::size_t>(present.int64(0));
    }
    exec(fmt::format("INSERT OR IGNORE INTO main.runs ({0}) SELECT {0} FROM src.runs ORDER BY key",
                     run_columns)
             .c_str());
    st.runs_added = static_cast<std::size_t>(sqlite3_changes(db_));
    exec("INSERT OR IGNORE INTO main.results (run, result) SELECT mr.id, sx.result "
         "FROM src.results sx JOIN src.runs sr ON sr.id = sx.run JOIN main.runs mr ON mr.key = "
         "sr.key");
    exec("INSERT OR IGNORE INTO main.metrics (run, ordinal, name, unit, value, higher_is_better) "
         "SELECT mr.id, sm.ordinal, sm.name, sm.unit, sm.value, sm.higher_is_better "
         "FROM src.metrics sm JOIN src.runs sr ON sr.id = sm.run JOIN main.runs mr ON mr.key = "
         "sr.key");
    exec("INSERT OR IGNORE INTO main.experiments (ident, kind, name, machine, info) "
         "SELECT ident, kind, name, machine, info FROM src.experiments ORDER BY id");
    st.experiments_added = static_cast<std::size_t>(sqlite3_changes(db_));
    exec("INSERT OR IGNORE INTO main.experiment_runs (experiment, position, key, arm, load, "
         "run_index) SELECT me.id, sr.position, sr.key, sr.arm, sr.load, sr.run_index "
         "FROM src.experiment_runs sr JOIN src.experiments se ON se.id = sr.experiment "
         "JOIN main.experiments me ON me.ident = se.ident");
    txn.commit();
    return st;
}

std::string default_store_path()
{
    namespace fs = std::filesystem;
    if (const char* s = std::getenv("SCHEDLAB_STORE"); s && *s)
        return s;
    // XDG Base Directory: a relative $XDG_DATA_HOME is invalid and ignored.
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x == '/')
        return (fs::path(x) / "schedlab" / "results.sqlite").string();
    if (const char* h = std::getenv("HOME"); h && *h)
        return (fs::path(h) / ".local" / "share" / "schedlab" / "results.sqlite").string();
    return "";
}

bool looks_like_store(const std::string& path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return false;
    std::ifstream f(path, std::ios::binary);
    char head[16] = {};
    f.read(head, sizeof head);
    return f.gcount() == 16 &&
           std::string_view(head, 16) == std::string_view("SQLite format 3\0", 16);
}

} // namespace schedlab
