// SPDX-License-Identifier: GPL-2.0-only
/*
 * The subcommands around the results store: sweep, export, store merge and
 * store list, and what compare, report and fidelity share with them (running
 * a plan into a store, reading stores and result files).
 */
#include "cli/commands.h"

#include "cli/cli_options.h"

#include "cli/interrupt.h"
#include "cli/mpi.h"
#include "experiment/result_json.h"
#include "experiment/runner.h"
#include "experiment/sweep.h"
#include "sim/config_error.h"
#include "sim/file_io.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fnmatch.h>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace schedlab {

void run_plan_into_store(std::ostream& err, results_store& store, const std::vector<run_spec>& runs,
                         const std::vector<std::string>& keys, const shard& sh, int jobs,
                         bool progress_tty)
{
    store_run_stats st;
    const std::vector<std::size_t> todo = missing_runs(store, keys, sh, st);
    if (st.stored_before > 0 || sh.count > 1)
        err << fmt::format("schedlab: {} runs planned{}; {} already in {}, {} to run\n", st.planned,
                           shard_note(sh, st), st.stored_before, store.path(), todo.size());
    if (todo.empty())
        return;
    store_writer writer(store, todo.size());
    const interrupt_guard guard([&](int signo) {
        const std::size_t written = writer.close_for_exit();
        err << interrupted_message(signal_name(signo), sh, st, written, store.path());
        err.flush();
    });
    progress_meter meter(err, progress_tty);
    run_missing(writer, runs, keys, todo, jobs, std::ref(meter));
}

namespace {

bool selected(const stored_experiment& e, const std::vector<std::string>& selectors)
{
    if (selectors.empty())
        return true;
    for (const std::string& s : selectors) {
        if (!s.empty() && std::all_of(s.begin(), s.end(), ::isdigit)) {
            if (std::to_string(e.id) == s)
                return true;
        } else if (fnmatch(s.c_str(), e.name.c_str(), 0) == 0) {
            return true;
        }
    }
    return false;
}

std::string join(const std::vector<std::string>& v, const char* sep)
{
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? sep : "") + v[i];
    return s;
}

} // namespace

std::size_t for_each_input(const std::vector<std::string>& files,
                           const std::vector<std::string>& experiments, store_detail detail,
                           bool merge_files, const input_fn& fn)
{
    std::vector<std::string> paths = files;
    if (paths.empty()) {
        const std::string d = default_store_path();
        if (d.empty())
            throw config_error("inputs", "none given, and no default store ($HOME is not set): "
                                         "give result files or a store");
        std::error_code ec;
        if (!std::filesystem::exists(d, ec))
            throw config_error(d, "the default store does not exist yet (compare and sweep create "
                                  "it); give result files or a store");
        paths.push_back(d);
    }
    std::vector<std::string> stores, jsons;
    for (const std::string& p : paths)
        (looks_like_store(p) ? stores : jsons).push_back(p);
    if (!stores.empty() && !jsons.empty())
        throw config_error(jsons.front(),
                           fmt::format("a result file, and {} is a store: give result "
                                       "files or stores, not both",
                                       stores.front()));
    if (!jsons.empty()) {
        if (!experiments.empty())
            throw config_error("--experiment", "selects experiments of a store, and the inputs are "
                                               "result files");
        std::vector<input_runs> ins;
        std::map<std::string, std::string> seen; // run identity -> "FILE runs[i]"
        for (const std::string& f : jsons) {     // every file is read before anything is printed
            std::vector<run_result> runs = read_results_file(f);
            if (merge_files) {
                // The same run (arm, load, seed and command) given twice would be counted twice.
                int i = 0;
                for (const run_result& r : runs) {
                    const std::string id =
                        fmt::format("{}\n{}\n{}\n{}", r.arm_label(), r.load, r.provenance.seed,
                                    r.provenance.command_line);
                    const std::string here = fmt::format("{} runs[{}]", f, i++);
                    if (const auto [it, fresh] = seen.emplace(id, here); !fresh)
                        throw config_error(
                            f, fmt::format("{} (arm {}, load {}, seed {}) is the same run as {}; "
                                           "give each run once",
                                           here, r.arm_label(), r.load.empty() ? "-" : r.load,
                                           r.provenance.seed, it->second));
                }
            }
            if (merge_files && !ins.empty()) {
                ins.back().label += " " + f;
                for (run_result& r : runs)
                    ins.back().runs.push_back(std::move(r));
            } else {
                ins.push_back({f, std::move(runs), {}, 0});
            }
        }
        for (std::size_t i = 0; i < ins.size(); ++i) {
            ins[i].planned = ins[i].runs.size();
            fn(std::move(ins[i]), ins.size());
        }
        return ins.size();
    }
    // Which experiments, checked before any is read; then one at a time, so a report of a
    // large store holds one experiment's runs at a time.
    std::vector<std::unique_ptr<results_store>> open;
    std::vector<std::pair<std::size_t, stored_experiment>> chosen;
    std::vector<bool> used(experiments.size(), false);
    for (const std::string& path : stores) {
        open.push_back(std::make_unique<results_store>(path, false, ""));
        const std::vector<stored_experiment> all = open.back()->experiments();
        if (all.empty())
            throw config_error(path, "the store records no experiment yet");
        for (const stored_experiment& e : all) {
            if (!selected(e, experiments))
                continue;
            for (std::size_t i = 0; i < experiments.size(); ++i)
                used[i] = used[i] || selected(e, {experiments[i]});
            chosen.emplace_back(open.size() - 1, e);
        }
    }
    for (std::size_t i = 0; i < experiments.size(); ++i)
        if (!used[i])
            throw config_error("--experiment", fmt::format("'{}' matches no experiment of {} "
                                                           "(`schedlab store list` lists them)",
                                                           experiments[i], join(stores, ", ")));
    for (const auto& [store, e] : chosen) {
        input_runs in;
        in.label = fmt::format("{}experiment {} {}", stores.size() > 1 ? stores[store] + ": " : "",
                               e.id, e.name);
        in.runs = open[store]->load(e, detail, &in.keys);
        in.planned = e.runs.size();
        fn(std::move(in), chosen.size());
    }
    return chosen.size();
}

int cmd_sweep(std::ostream& out, std::ostream& err, const sweep_options& o)
{
    if (o.jobs < 0 || o.jobs > max_jobs)
        throw config_error("--jobs", fmt::format("{} is outside [1, {}]", o.jobs, max_jobs));
    const shard sh = o.shard.empty() ? shard{} : parse_shard(o.shard);
    if (o.store_path.empty())
        throw config_error("--store", "a sweep keeps its runs in a store: give --store FILE");
    const sweep_spec spec = read_sweep_spec(o.spec_path);
    const sweep_plan plan = plan_sweep(spec);
    std::vector<stored_experiment> exps;
    std::vector<std::string> keys;
    for (const sweep_experiment& e : plan.experiments) {
        exps.push_back(stored_experiment_of(e.plan, "sweep", e.machine, e.name));
        for (const auto& r : exps.back().runs)
            keys.push_back(r.key);
    }
    mpi_world& world = mpi_world::get();
    const int jobs = o.jobs > 0 ? o.jobs : world.size() > 1 ? 1 : default_jobs();

    if (o.dry_run) {
        if (!world.is_root())
            return 0;
        std::error_code ec;
        std::unique_ptr<results_store> store;
        if (std::filesystem::exists(o.store_path, ec))
            store = std::make_unique<results_store>(o.store_path, false);
        out << fmt::format("{:<40} {:>7} {:>7} {:>7}\n", "EXPERIMENT", "RUNS", "STORED", "TO RUN");
        std::size_t total = 0, stored = 0, to_run = 0, pos = 0;
        for (const stored_experiment& e : exps) {
            std::vector<std::string> mine;
            for (std::size_t i = 0; i < e.runs.size(); ++i, ++pos)
                if (sh.contains(pos))
                    mine.push_back(e.runs[i].key);
            std::vector<bool> have(mine.size(), false);
            if (store)
                have = store->contains(mine);
            const auto n_have =
                static_cast<std::size_t>(std::count(have.begin(), have.end(), true));
            out << fmt::format("{:<40} {:>7} {:>7} {:>7}\n", e.name, e.runs.size(), n_have,
                               mine.size() - n_have);
            total += e.runs.size();
            stored += n_have;
            to_run += mine.size() - n_have;
        }
        out << fmt::format("{:<40} {:>7} {:>7} {:>7}\n", "total", total, stored, to_run);
        if (sh.count > 1)
            out << fmt::format("(stored and to run: of shard {} of {})\n", sh.index + 1, sh.count);
        return 0;
    }

    if (world.size() > 1) {
        // Rank 0 owns the store; the others take runs from it and send back results.
        std::unique_ptr<results_store> store;
        if (world.is_root()) {
            store = std::make_unique<results_store>(o.store_path, true);
            for (const stored_experiment& e : exps)
                store->record_experiment(e);
        }
        world.run_plan(err, store.get(), plan.runs, keys, sh, jobs, o.progress_tty);
        if (!world.is_root())
            return 0;
    } else {
        results_store store(o.store_path, true);
        for (const stored_experiment& e : exps)
            store.record_experiment(e);
        run_plan_into_store(err, store, plan.runs, keys, sh, jobs, o.progress_tty);
    }

    results_store store(o.store_path, false);
    std::size_t stored = 0, unfinished = 0;
    const std::vector<bool> have = store.contains(keys);
    stored = static_cast<std::size_t>(std::count(have.begin(), have.end(), true));
    for (const stored_experiment& e : store.experiments())
        if (std::any_of(exps.begin(), exps.end(), [&](const auto& x) { return x.name == e.name; }))
            for (const run_result& r : store.load(e, store_detail::tables))
                unfinished += !r.finished;
    out << fmt::format("sweep {}: {} experiments, {} of {} runs stored in {}\n", spec.name,
                       exps.size(), stored, keys.size(), o.store_path);
    if (unfinished)
        out << fmt::format("{} runs did not finish within the {} s simulated time limit (the "
                           "tables leave them out)\n",
                           unfinished, spec.time_limit_s);
    out << fmt::format("tables: schedlab report {} --experiment '{}/*'\n", o.store_path, spec.name);
    return 0;
}

namespace {

std::string csv_field(const std::string& s)
{
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string csv_number(double v)
{
    return std::isnan(v) ? "NaN" : fmt::format("{}", v); // shortest round-trip form
}

} // namespace

int cmd_export(std::ostream& out, std::ostream&, const export_options& o)
{
    if (o.format != "csv" && o.format != "json")
        throw config_error("--format", fmt::format("'{}' is neither csv nor json", o.format));
    if (o.schedstat && o.format != "csv")
        throw config_error("--schedstat", "is for --format csv (JSON holds the counters anyway)");
    output_file file;
    if (!o.output.empty())
        file = output_file(o.output, "--output"); // checked before anything is read
    const bool full = o.format == "json" || o.schedstat;
    const store_detail detail = full ? store_detail::full : store_detail::tables;
    std::string text;
    if (o.format == "json") {
        nlohmann::ordered_json exps = nlohmann::ordered_json::array();
        for_each_input(o.files, o.experiments, detail, false, [&](input_runs&& in, std::size_t) {
            nlohmann::ordered_json runs = nlohmann::ordered_json::array();
            for (std::size_t i = 0; i < in.runs.size(); ++i) {
                nlohmann::ordered_json r = to_json(in.runs[i]);
                if (i < in.keys.size())
                    r["key"] = in.keys[i];
                runs.push_back(std::move(r));
            }
            exps.push_back(
                {{"name", in.label}, {"planned", in.planned}, {"runs", std::move(runs)}});
        });
        const nlohmann::ordered_json j = {{"format", "schedlab-export-v1"},
                                          {"experiments", std::move(exps)}};
        text = j.dump(1) + "\n";
    } else {
        std::ostringstream csv;
        csv << "experiment,arm,load,run_index,seed,machine,nr_cpus,kernel_spec,features_arg,"
               "benchmark,finished,"
            << (o.schedstat ? "domain,idle_type,counter,value"
                            : "metric,unit,value,higher_is_better")
            << ",schedule_digest,key\n";
        for_each_input(o.files, o.experiments, detail, false, [&](input_runs&& in, std::size_t) {
            for (std::size_t i = 0; i < in.runs.size(); ++i) {
                const run_result& r = in.runs[i];
                const run_provenance& p = r.provenance;
                const std::string head = fmt::format(
                    "{},{},{},{},{},{},{},{},{},{},{},", csv_field(in.label),
                    csv_field(r.arm_label()), csv_field(r.load), r.run_index, p.seed,
                    csv_field(p.machine), p.nr_cpus, csv_field(p.kernel_spec),
                    csv_field(p.features_arg), csv_field(join(argv_without_load(p.argv), " ")),
                    r.finished ? 1 : 0);
                const std::string tail = fmt::format(",{:016x},{}\n", r.schedule_digest,
                                                     i < in.keys.size() ? in.keys[i] : "");
                if (o.schedstat) {
                    if (r.schedstat)
                        for (const schedstat_counter& c : *r.schedstat)
                            csv << head << csv_field(c.domain) << ',' << c.idle_type << ','
                                << c.counter << ',' << csv_number(c.value) << tail;
                } else {
                    for (const workload_metric& m : r.metrics)
                        csv << head << csv_field(m.name) << ',' << csv_field(m.unit) << ','
                            << csv_number(m.value) << ',' << (m.higher_is_better ? 1 : 0) << tail;
                }
            }
        });
        text = csv.str();
    }
    if (file.is_open()) {
        file.write(text);
        file.commit();
    } else {
        out << text;
    }
    return 0;
}

int cmd_store_merge(std::ostream& out, const std::string& output,
                    const std::vector<std::string>& inputs)
{
    if (inputs.empty())
        throw config_error("store merge", "give the stores to merge after the output store");
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const std::string& in : inputs)
        if (fs::exists(output, ec) && fs::equivalent(in, output, ec))
            throw config_error(in, "is the output store itself");
    for (const std::string& in : inputs) // every input is a store before anything is written
        results_store check(in, false, "store merge");
    results_store dst(output, true, "store merge");
    for (const std::string& in : inputs) {
        const merge_stats st = dst.merge_from(in);
        out << fmt::format("{}: {} runs added, {} already present; {} experiments added\n", in,
                           st.runs_added, st.runs_present, st.experiments_added);
    }
    out << fmt::format("{}: {} runs, {} experiments\n", output, dst.run_count(),
                       dst.experiments().size());
    return 0;
}

int cmd_store_list(std::ostream& out, const std::string& path)
{
    const std::string p = path.empty() ? default_store_path() : path;
    if (p.empty())
        throw config_error("store list", "no store given and no default store ($HOME is not set)");
    results_store s(p, false, "");
    const std::vector<stored_experiment> exps = s.experiments();
    out << fmt::format("# {}: {} runs, {} experiments (schema {})\n", p, s.run_count(), exps.size(),
                       store_schema_version);
    out << fmt::format("{:>4} {:>15}  {:<7} {}\n", "ID", "STORED/PLANNED", "KIND", "NAME  [ARMS]");
    for (const stored_experiment& e : exps)
        out << fmt::format("{:>4} {:>15}  {:<7} {}  [{}]\n", e.id,
                           fmt::format("{}/{}", s.stored_count(e), e.runs.size()), e.kind, e.name,
                           join(e.info.arms, ", "));
    return 0;
}

// ----------------------------------------------------------------------------------------------
// The command line of sweep, export and store (CLI11)

void add_sweep_command(CLI::App& app, int& rc)
{
    auto swo = std::make_shared<sweep_options>();
    auto* sweep = app.add_subcommand(
        "sweep", "Run a sweep spec (TOML or JSON: machines x kernels x benchmarks with their "
                 "loads x seeds) into a results store, resumably; under mpirun the ranks share "
                 "the runs (docs/sweeps.md)");
    sweep->add_option("spec", swo->spec_path, "The sweep spec (.toml, or .json)")->required();
    sweep->add_option("--store", swo->store_path,
                      "Results store (default: $SCHEDLAB_STORE, else "
                      "$XDG_DATA_HOME/schedlab/results.sqlite or "
                      "~/.local/share/schedlab/results.sqlite)");
    sweep
        ->add_option("-j,--jobs", swo->jobs,
                     "Parallel runs (default: the hardware threads; under MPI, 1 per rank)")
        ->check(number_in(1, max_jobs, false, ""));
    sweep->add_option("--shard", swo->shard,
                      "Run only shard i of N (i/N, from 1): run k of the plan is in shard "
                      "k mod N + 1; merge the shards' stores with `schedlab store merge`");
    sweep->add_flag("-n,--dry-run", swo->dry_run,
                    "Print each experiment's runs, how many are stored and how many would run");
    sweep->callback([swo, &rc] {
        swo->progress_tty = isatty(fileno(stderr)) != 0;
        if (swo->store_path.empty())
            swo->store_path = default_store_path();
        rc = cmd_sweep(std::cout, std::cerr, *swo);
        mpi_world::finalize();
    });
}

void add_export_command(CLI::App& app, int& rc)
{
    auto exo = std::make_shared<export_options>();
    auto* export_cmd = app.add_subcommand(
        "export", "Write runs as CSV (one row per run and metric; for pandas and R) or JSON, "
                  "from a results store or result files");
    add_input_options(export_cmd, exo->files, "Stores or result files (default: the default store)",
                      exo->experiments, " (id or name pattern; repeatable)");
    export_cmd->add_option("--format", exo->format, "csv or json")
        ->capture_default_str()
        ->check(CLI::IsMember({"csv", "json"}));
    export_cmd->add_flag("--schedstat", exo->schedstat,
                         "CSV of the schedstat counters (one row per run, domain level, idle type "
                         "and counter) instead of the metrics");
    export_cmd->add_option("-o,--output", exo->output, "Write to FILE (default: standard output)");
    export_cmd->callback([exo, &rc] { rc = cmd_export(std::cout, std::cerr, *exo); });
}

void add_store_command(CLI::App& app, int& rc)
{
    struct options {
        std::string merge_out;
        std::vector<std::string> merge_in;
        std::string list_store;
    };
    auto o = std::make_shared<options>();
    auto* store_cmd = app.add_subcommand("store", "Manage results stores: merge, list");
    store_cmd->require_subcommand(1);
    auto* store_merge = store_cmd->add_subcommand(
        "merge", "Copy the runs and experiments of stores (e.g. the shards of a sweep) into "
                 "OUTPUT; runs already there are kept once");
    store_merge->add_option("output", o->merge_out, "The store to merge into (created if missing)")
        ->required();
    store_merge->add_option("inputs", o->merge_in, "Stores to merge")->required();
    store_merge->callback([o, &rc] { rc = cmd_store_merge(std::cout, o->merge_out, o->merge_in); });
    auto* store_list = store_cmd->add_subcommand(
        "list", "List a store's experiments: id, runs stored of planned, name and arms");
    store_list->add_option("store", o->list_store, "The store (default: the default store)");
    store_list->callback([o, &rc] { rc = cmd_store_list(std::cout, o->list_store); });
}

} // namespace schedlab
