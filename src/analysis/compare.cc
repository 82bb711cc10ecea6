// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/compare.h"

#include "experiment/benchmarks.h"
#include "sim/config_error.h"
#include "sim/rng.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace schedlab {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep)
{
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? sep : "") + v[i];
    return s;
}

template <typename T>
std::size_t index_of_or_add(std::vector<T>& v, const T& x)
{
    const auto it = std::find(v.begin(), v.end(), x);
    if (it != v.end())
        return static_cast<std::size_t>(it - v.begin());
    v.push_back(x);
    return v.size() - 1;
}

sample_stats make_stats(std::vector<double> x)
{
    sample_stats s;
    s.amean = amean(x);
    s.hmean = hmean(x);
    s.median = median(x);
    s.min = min_of(x);
    s.max = max_of(x);
    s.stddev_sample = stddev_sample(x);
    s.stddev_population = stddev_population(x);
    s.samples = std::move(x);
    return s;
}

void fill_own(arm_cell& c, bool higher_is_better)
{
    const sample_stats& s = c.s;
    if (higher_is_better) {
        c.mm_mean = s.hmean;
        c.mm_stddev = hstddev(s.samples);
    } else {
        c.mm_mean = s.amean;
        c.mm_stddev = s.stddev_sample;
    }
    c.mm_coeffvar = coeff_var(c.mm_stddev, c.mm_mean);
    c.mm_best95 = best_mean(s.samples, 95, higher_is_better, higher_is_better);
    c.amd_cv = coeff_var(s.stddev_sample, s.amean);
}

void fill_against(arm_cell& c, const arm_cell& base, bool higher_is_better, significance_rule rule,
                  bool is_base)
{
    // mmtests: positive = better; Stddev and CoeffVar always in the lower-is-better form.
    auto pct = [&](double b, double n) {
        return higher_is_better ? mmtests_pdiff(b, n) : mmtests_pndiff(b, n);
    };
    c.mm_pct_min = pct(base.s.min, c.s.min);
    c.mm_pct_mean = pct(base.mm_mean, c.mm_mean);
    c.mm_pct_max = pct(base.s.max, c.s.max);
    c.mm_pct_best95 = pct(base.mm_best95, c.mm_best95);
    c.mm_pct_stddev = mmtests_pndiff(base.mm_stddev, c.mm_stddev);
    c.mm_pct_coeffvar = mmtests_pndiff(base.mm_coeffvar, c.mm_coeffvar);
    c.ci = mmtests_ci_test(base.mm_mean, base.s.stddev_sample, c.mm_mean, c.s.stddev_sample);
    c.mm_ttest = mmtests_t_test(base.mm_mean, base.s.samples, c.mm_mean, c.s.samples);
    c.welch = welch_t_test(base.s.samples, c.s.samples);
    c.significant =
        !is_base && (rule == significance_rule::ci ? c.ci.significant : c.mm_ttest.significant);

    c.amd_norm = c.s.amean / base.s.amean;
    c.amd_pct_imp = amd_pct_imp(base.s.amean, c.s.amean, higher_is_better);
    if (!is_base && base.s.amean != 0) {
        const interval d = welch_difference_interval(base.s.samples, c.s.samples);
        const double k = 100.0 / base.s.amean;
        c.pct_imp_ci =
            higher_is_better ? interval{d.lo * k, d.hi * k} : interval{-d.hi * k, -d.lo * k};
    }
}

/// lkp's avg and %stddev of one arm at one load (lib/stats.rb, lib/compare.rb calc_avg_stddev).
lkp_cell lkp_own(const std::vector<double>& x)
{
    lkp_cell c;
    c.avg = amean(x);
    c.stddev_pct = c.avg != 0 ? 100.0 * stddev_population(x) / c.avg : 0;
    return c;
}

} // namespace

std::string arm_id(const run_provenance& p)
{
    std::string identity = p.kernel_base + "\n" + p.policy + "\n" + p.features + "\n";
    for (const auto& [name, ns] : p.costs)
        identity += fmt::format("{}={}\n", name, ns);
    // An ext policy (+ext:NAME or +ext:PATH) sets no feature: its term names the arm too.
    // Appended only when present, so the ids of every other configuration stay as they were.
    for (std::size_t at = p.kernel_spec.find("+ext:"); at != std::string::npos;
         at = p.kernel_spec.find("+ext:", at + 1))
        identity += p.kernel_spec.substr(at + 1, p.kernel_spec.find('+', at + 1) - at - 1) + "\n";
    return fmt::format("{:016x}", fnv1a64(identity));
}

namespace {

/*
 * lkp's rows: per stat of the benchmark's lkp table (every metric as
 * "testcase.metric" for a benchmark without one), the value lkp's parser
 * would print for each run, then avg, %stddev and %change against the
 * baseline arm, and lkp's separation test.
 */
std::vector<lkp_stat>
lkp_stats(const comparison& cmp, const benchmark_info* b,
          const std::vector<std::vector<std::vector<const run_result*>>>& cells)
{
    std::vector<lkp_stat_info> defs;
    if (b)
        defs = b->lkp_stats;
    else
        for (const metric_comparison& m : cmp.metrics)
            defs.push_back({m.name, m.name, nullptr});
    std::vector<lkp_stat> out;
    for (const lkp_stat_info& d : defs) {
        const auto m =
            std::find_if(cmp.metrics.begin(), cmp.metrics.end(),
                         [&](const metric_comparison& mc) { return mc.name == d.metric; });
        if (m == cmp.metrics.end())
            continue; // e.g. schbench v2 reports no request latencies
        lkp_stat st{cmp.lkp_testcase + "." + d.key, {}};
        for (std::size_t l = 0; l < cmp.loads.size(); ++l) {
            std::vector<std::vector<double>> per_arm;
            for (std::size_t a = 0; a < cmp.arms.size(); ++a) {
                std::vector<double> x;
                for (const run_result* r : cells[l][a])
                    for (const workload_metric& wm : r->metrics)
                        if (wm.name == d.metric)
                            x.push_back(d.from_metric ? d.from_metric(r->provenance.argv, wm.value)
                                                      : wm.value);
                per_arm.push_back(std::move(x));
            }
            std::vector<lkp_cell> row;
            for (std::size_t a = 0; a < cmp.arms.size(); ++a) {
                lkp_cell c = lkp_own(per_arm[a]);
                if (a > 0) {
                    c.change = lkp_change(row[0].avg, c.avg);
                    c.changed = lkp_separated(per_arm[0], per_arm[a]);
                }
                row.push_back(c);
            }
            st.cells.push_back(std::move(row));
        }
        out.push_back(std::move(st));
    }
    return out;
}

/* The finished runs that measured something; the others are named in cmp.warnings. */
std::vector<const run_result*> finished_runs(const std::vector<run_result>& all_runs,
                                             comparison& cmp)
{
    std::vector<const run_result*> runs;
    for (const run_result& r : all_runs) {
        if (r.finished && !r.measured_nothing.empty())
            cmp.warnings.push_back(fmt::format("left out: arm {} load {} run {} (seed {}): {}",
                                               r.arm_label(), r.load.empty() ? "-" : r.load,
                                               r.run_index, r.provenance.seed, r.measured_nothing));
        else if (r.finished)
            runs.push_back(&r);
        else
            cmp.warnings.push_back(fmt::format(
                "left out: arm {} load {} run {} (seed {}) did not finish within {} s",
                r.arm_label(), r.load.empty() ? "-" : r.load, r.run_index, r.provenance.seed,
                r.provenance.time_limit_s));
    }
    if (runs.empty())
        throw config_error("results", "no finished runs to compare");

    return runs;
}

/* The runs' one benchmark (on one machine: config_error otherwise) and its tables' names. */
void name_benchmark(comparison& cmp, const std::vector<const run_result*>& runs)
{
    // One benchmark on one machine: the load is the only thing that may vary.
    const run_result& first = *runs.front();
    const std::vector<std::string> bench_argv = argv_without_load(first.provenance.argv);
    cmp.benchmark = join(bench_argv, " ");
    std::map<std::vector<std::string>, std::string> bench_of{
        {first.provenance.argv, cmp.benchmark}};
    for (const run_result* r : runs) {
        auto it = bench_of.find(r->provenance.argv); // runs share a few command lines
        if (it == bench_of.end())
            it = bench_of
                     .emplace(r->provenance.argv, join(argv_without_load(r->provenance.argv), " "))
                     .first;
        const std::string& b = it->second;
        if (b != cmp.benchmark)
            throw config_error("results", fmt::format("the runs are of different benchmarks: '{}' "
                                                      "and '{}'", cmp.benchmark, b));
        if (r->provenance.machine != first.provenance.machine)
            throw config_error("results", fmt::format("the runs are from different machines: {} "
                                                      "and {}", first.provenance.machine,
                                                      r->provenance.machine));
    }

    if (const benchmark_info* b = find_benchmark(first.provenance.argv)) {
        const std::vector<std::string> args(bench_argv.begin() + static_cast<long>(b->command.size()),
                                            bench_argv.end());
        cmp.mmtests_name = b->mmtests_name ? b->mmtests_name(args) : b->amd_test;
        cmp.amd_test = b->amd_test;
        cmp.lkp_testcase = b->lkp_testcase;
        cmp.lkp_load_param = b->lkp_load_param;
        cmp.load_name = b->load_name;
        cmp.mmtests_decimals = b->mmtests_decimals;
    } else {
        std::vector<std::string> words;
        for (const auto& a : bench_argv) {
            if (a.starts_with("-"))
                break;
            words.push_back(a);
        }
        cmp.mmtests_name = cmp.amd_test = cmp.lkp_testcase = join(words, "-");
    }
}

/* The runs of each (load, arm), in run order. */
using run_cells = std::vector<std::vector<std::vector<const run_result*>>>;

/* Arms, loads and metrics in order of first appearance; each metric's statistics per cell. */
run_cells compare_metrics(comparison& cmp, const std::vector<const run_result*>& runs,
                          significance_rule rule)
{
    // Arms, loads and metrics in order of first appearance.
    struct metric_key {
        std::string name, unit;
        bool higher_is_better;
    };
    std::vector<metric_key> metric_keys;
    std::vector<std::string> metric_names;
    std::vector<std::pair<std::size_t, std::size_t>> cell_of; // per run: (load, arm)
    for (const run_result* r : runs) {
        const std::size_t arm = index_of_or_add(cmp.arms, r->arm_label());
        if (arm == cmp.arm_provenance.size())
            cmp.arm_provenance.push_back(r->provenance);
        cell_of.emplace_back(index_of_or_add(cmp.loads, r->load), arm);
        for (const workload_metric& m : r->metrics)
            if (index_of_or_add(metric_names, m.name) == metric_keys.size())
                metric_keys.push_back({m.name, m.unit, m.higher_is_better});
    }
    if (metric_keys.empty())
        throw config_error("results", "the runs report no benchmark metrics");

    const std::size_t nr_arms = cmp.arms.size(), nr_loads = cmp.loads.size();
    // The runs of each (load, arm), in run order: one pass over the runs, not one per cell.
    run_cells cell_runs(nr_loads, std::vector<std::vector<const run_result*>>(nr_arms));
    for (std::size_t i = 0; i < runs.size(); ++i)
        cell_runs[cell_of[i].first][cell_of[i].second].push_back(runs[i]);
    cmp.runs_per_arm.assign(nr_arms, -1);
    for (const metric_key& mk : metric_keys) {
        metric_comparison mc;
        mc.name = mk.name;
        mc.unit = mk.unit;
        mc.higher_is_better = mk.higher_is_better;
        mc.mm_kind = mk.higher_is_better ? mean_kind::hmean : mean_kind::amean;
        mc.cells.assign(nr_loads, std::vector<arm_cell>(nr_arms));
        for (std::size_t l = 0; l < nr_loads; ++l) {
            for (std::size_t a = 0; a < nr_arms; ++a) {
                std::vector<double> x;
                for (const run_result* r : cell_runs[l][a]) {
                    for (const workload_metric& m : r->metrics)
                        if (m.name == mk.name)
                            x.push_back(m.value);
                }
                const int n = static_cast<int>(x.size());
                if (cmp.runs_per_arm[a] < 0 || n < cmp.runs_per_arm[a])
                    cmp.runs_per_arm[a] = n;
                if (x.empty())
                    cmp.warnings.push_back(fmt::format("no {} samples for arm {} at load {}",
                                                       mk.name, cmp.arms[a], cmp.loads[l]));
                mc.cells[l][a].s = make_stats(std::move(x));
                fill_own(mc.cells[l][a], mk.higher_is_better);
            }
            const arm_cell base = mc.cells[l][0];
            for (std::size_t a = 0; a < nr_arms; ++a)
                fill_against(mc.cells[l][a], base, mk.higher_is_better, rule, a == 0);
        }
        cmp.metrics.push_back(std::move(mc));
    }

    return cell_runs;
}

/* The wakeup-latency and run-length histograms of each cell's runs, pooled. */
void pool_distributions(comparison& cmp, const run_cells& cell_runs)
{
    const std::size_t nr_arms = cmp.arms.size(), nr_loads = cmp.loads.size();
    cmp.distributions.assign(nr_loads, std::vector<arm_distribution>(nr_arms));
    for (std::size_t l = 0; l < nr_loads; ++l)
        for (std::size_t a = 0; a < nr_arms; ++a) {
            log_histogram wakeup(summary_histogram_sub_bits), run(summary_histogram_sub_bits);
            arm_distribution& d = cmp.distributions[l][a];
            for (const run_result* r : cell_runs[l][a]) {
                for (const auto& [lo, n] : r->summary.wakeup_latency_hist)
                    wakeup.add(lo, n);
                for (const auto& [lo, n] : r->summary.run_length_hist)
                    run.add(lo, n);
                d.wakeup_latency_max_ns = std::max(d.wakeup_latency_max_ns,
                                                   r->summary.wakeup_latency_max_ns);
                d.run_length_max_ns = std::max(d.run_length_max_ns, r->summary.run_length_max_ns);
            }
            d.wakeup_latency = wakeup.buckets(summary_histogram_sub_bits);
            d.run_length = run.buckets(summary_histogram_sub_bits);
        }
}

/* schedstat: mean per (idle type, counter, domain, load) and arm, and the change. */
void compare_schedstat(comparison& cmp, const std::vector<const run_result*>& runs,
                       const run_cells& cell_runs)
{
    const std::size_t nr_arms = cmp.arms.size(), nr_loads = cmp.loads.size();
    struct ss_key {
        std::string idle_type, counter, domain;
        bool operator==(const ss_key&) const = default;
    };
    std::vector<ss_key> keys;
    for (const run_result* r : runs)
        if (r->schedstat)
            for (const schedstat_counter& c : *r->schedstat)
                index_of_or_add(keys, ss_key{c.idle_type, c.counter, c.domain});
    // group rows by (idle type, counter) in order of first appearance, keeping the domains' order
    std::vector<ss_key> groups;
    for (const ss_key& k : keys)
        index_of_or_add(groups, ss_key{k.idle_type, k.counter, ""});
    std::vector<ss_key> ordered;
    for (const ss_key& g : groups)
        for (const ss_key& k : keys)
            if (k.idle_type == g.idle_type && k.counter == g.counter)
                ordered.push_back(k);
    keys = std::move(ordered);
    // Per (load, arm): the sum of each counter over the cell's runs (in run order) and how
    // many runs carry schedstat, in one pass over each run's counters.
    std::map<std::tuple<std::string, std::string, std::string>, std::size_t> key_pos;
    for (std::size_t i = 0; i < keys.size(); ++i)
        key_pos.emplace(std::tuple{keys[i].idle_type, keys[i].counter, keys[i].domain}, i);
    std::vector<std::vector<std::vector<double>>> sums(
        nr_loads, std::vector<std::vector<double>>(nr_arms, std::vector<double>(keys.size(), 0)));
    std::vector<std::vector<int>> with_schedstat(nr_loads, std::vector<int>(nr_arms, 0));
    if (!keys.empty())
        for (std::size_t l = 0; l < nr_loads; ++l)
            for (std::size_t a = 0; a < nr_arms; ++a)
                for (const run_result* r : cell_runs[l][a]) {
                    if (!r->schedstat)
                        continue;
                    ++with_schedstat[l][a];
                    for (const schedstat_counter& c : *r->schedstat)
                        sums[l][a][key_pos.at({c.idle_type, c.counter, c.domain})] += c.value;
                }
    for (std::size_t k = 0; k < keys.size(); ++k) {
        for (std::size_t l = 0; l < nr_loads; ++l) {
            schedstat_row row{
                keys[k].idle_type, keys[k].counter, keys[k].domain, cmp.loads[l], {}, {}};
            for (std::size_t a = 0; a < nr_arms; ++a) {
                const int n = with_schedstat[l][a];
                row.mean.push_back(n ? sums[l][a][k] / n : std::nan(""));
            }
            for (std::size_t a = 0; a < nr_arms; ++a)
                row.pct_change.push_back(
                    row.mean[0] != 0   ? (row.mean[a] - row.mean[0]) / row.mean[0] * 100
                    : row.mean[a] == 0 ? 0
                                       : std::nan("")); // 0 -> 1 has no percentage
            cmp.schedstat.push_back(std::move(row));
        }
    }
}

} // namespace

comparison compare_runs(const std::vector<run_result>& all_runs, significance_rule rule)
{
    comparison cmp;
    cmp.rule = rule;
    const std::vector<const run_result*> runs = finished_runs(all_runs, cmp);
    name_benchmark(cmp, runs);
    const run_cells cell_runs = compare_metrics(cmp, runs, rule);
    pool_distributions(cmp, cell_runs);
    cmp.lkp = lkp_stats(cmp, find_benchmark(runs.front()->provenance.argv), cell_runs);
    for (const run_provenance& p : cmp.arm_provenance)
        cmp.arm_ids.push_back(arm_id(p));

    compare_schedstat(cmp, runs, cell_runs);
    return cmp;
}

} // namespace schedlab
