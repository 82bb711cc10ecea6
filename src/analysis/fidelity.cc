// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/fidelity.h"

#include "experiment/benchmarks.h"
#include "sim/config_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedlab {

namespace {

/// The machine the published figures were measured on.
constexpr const char* reference_machine = "bergamo-2s";
constexpr const char* newidle_file = "newidle_lb_counts.csv";

std::string trim(const std::string& s)
{
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return s.substr(b, e - b);
}

/// Comma-separated fields, each trimmed (the reference files have no quoting).
std::vector<std::string> split_csv(const std::string& line)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = line.find(',', start);
        out.push_back(trim(
            line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos)
            return out;
        start = comma + 1;
    }
}

/// The non-blank lines of a text with their 1-based line numbers.
std::vector<std::pair<int, std::string>> numbered_lines(const std::string& text)
{
    std::vector<std::pair<int, std::string>> out;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (!trim(line).empty())
            out.emplace_back(n, line);
    }
    return out;
}

/// A finite decimal number filling the whole field, else none.
std::optional<double> parse_number(const std::string& s)
{
    if (s.empty())
        return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

bool all_digits(const std::string& s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
        return std::isdigit(static_cast<unsigned char>(ch)) != 0;
    });
}

std::string at_line(const std::string& where, int line)
{
    return fmt::format("{}:{}", where, line);
}

std::string join_with(const std::vector<std::string>& v, const char* sep)
{
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? sep : "") + v[i];
    return s;
}

int sign(double x)
{
    return (x > 0) - (x < 0);
}

std::string read_text(const std::string& path, const char* what)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw config_error(path, fmt::format("cannot open the {}", what));
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

template <typename T> std::size_t index_of(const std::vector<T>& v, const T& x)
{
    return static_cast<std::size_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

} // namespace

const std::vector<reference_arm>& reference_arms()
{
    static const std::vector<reference_arm> arms = {
        {"tip", "tip-2023-08"},
        {"v3", "tip-2023-08+shared_runq_v3"},
        {"v3_tgfix", "tip-2023-08+shared_runq_v3+tg_ratelimit"},
        {"v3_tgfix_noopt", "tip-2023-08+shared_runq_v3_noopt+tg_ratelimit"},
    };
    return arms;
}

std::string canonical_kernel_spec(const std::string& spec)
{
    std::vector<std::string> terms;
    std::size_t start = 0;
    while (true) {
        const std::size_t plus = spec.find('+', start);
        terms.push_back(
            trim(spec.substr(start, plus == std::string::npos ? std::string::npos : plus - start)));
        if (plus == std::string::npos)
            break;
        start = plus + 1;
    }
    std::sort(terms.begin() + 1, terms.end());
    return join_with(terms, "+");
}

std::string reference_column_of(const std::string& arm_label)
{
    const std::string c = canonical_kernel_spec(arm_label);
    for (const reference_arm& a : reference_arms())
        if (canonical_kernel_spec(a.kernel) == c)
            return a.column;
    return "";
}

reference_table parse_reference_table(const std::string& text, const std::string& where)
{
    const auto lines = numbered_lines(text);
    if (lines.empty())
        throw config_error(where, "empty reference table");
    reference_table t;
    t.file = where;

    // Header: the row column, then <arm>_norm,<arm>_pct_imp,<arm>_cv per arm.
    const auto& [hline, htext] = lines.front();
    const std::vector<std::string> head = split_csv(htext);
    if (head.size() < 4 || (head.size() - 1) % 3 != 0)
        throw config_error(at_line(where, hline),
                           fmt::format("expected the row column then <arm>_norm,<arm>_pct_imp,"
                                       "<arm>_cv per arm; found {} columns",
                                       head.size()));
    t.row_header = head[0];
    if (t.row_header.empty())
        throw config_error(at_line(where, hline), "the first column has no name");
    for (std::size_t i = 1; i < head.size(); i += 3) {
        const std::string& n = head[i];
        if (!n.ends_with("_norm") || n.size() == 5)
            throw config_error(at_line(where, hline),
                               fmt::format("column {} is '{}', expected <arm>_norm", i + 1, n));
        const std::string arm = n.substr(0, n.size() - 5);
        if (head[i + 1] != arm + "_pct_imp" || head[i + 2] != arm + "_cv")
            throw config_error(at_line(where, hline),
                               fmt::format("columns {} and {} are '{}' and '{}', expected "
                                           "{}_pct_imp and {}_cv",
                                           i + 2, i + 3, head[i + 1], head[i + 2], arm, arm));
        const bool known = std::any_of(reference_arms().begin(), reference_arms().end(),
                                       [&](const reference_arm& a) { return arm == a.column; });
        if (!known) {
            std::vector<std::string> names;
            for (const reference_arm& a : reference_arms())
                names.push_back(a.column);
            throw config_error(at_line(where, hline),
                               fmt::format("unknown arm '{}' (known: {})", arm, join_with(names, ", ")));
        }
        if (index_of(t.arms, arm) != t.arms.size())
            throw config_error(at_line(where, hline), fmt::format("arm '{}' appears twice", arm));
        t.arms.push_back(arm);
    }
    if (t.arms.front() != "tip")
        throw config_error(at_line(where, hline),
                           fmt::format("the first arm is '{}'; pct imp is against tip, which must "
                                       "come first",
                                       t.arms.front()));

    for (std::size_t li = 1; li < lines.size(); ++li) {
        const auto& [n, line] = lines[li];
        const std::vector<std::string> f = split_csv(line);
        if (f.size() != head.size())
            throw config_error(at_line(where, n),
                               fmt::format("expected {} fields, found {}", head.size(), f.size()));
        if (f[0].empty())
            throw config_error(at_line(where, n), "empty row label");
        // "4-groups" is load 4; "512" is load 512; "Copy" is the STREAM op.
        std::string key = f[0], suffix;
        const std::size_t dash = f[0].find('-');
        if (dash != std::string::npos && dash + 1 < f[0].size() &&
            all_digits(f[0].substr(0, dash))) {
            key = f[0].substr(0, dash);
            suffix = f[0].substr(dash);
        }
        if (index_of(t.keys, key) != t.keys.size())
            throw config_error(at_line(where, n), fmt::format("row '{}' appears twice", f[0]));
        if (t.label_suffix.empty())
            t.label_suffix = suffix;
        std::vector<amd_cell> row;
        for (std::size_t a = 0; a < t.arms.size(); ++a) {
            double v[3];
            for (std::size_t k = 0; k < 3; ++k) {
                const std::size_t col = 1 + 3 * a + k;
                const std::optional<double> x = parse_number(f[col]);
                if (!x)
                    throw config_error(at_line(where, n),
                                       fmt::format("column {} ({}): '{}' is not a number", col + 1,
                                                   head[col], f[col]));
                v[k] = *x;
            }
            row.push_back({v[0], v[1], v[2]});
        }
        t.labels.push_back(f[0]);
        t.keys.push_back(key);
        t.cells.push_back(std::move(row));
    }
    if (t.keys.empty())
        throw config_error(where, "the reference table has a header but no rows");
    return t;
}

std::vector<newidle_reference_row> parse_newidle_reference(const std::string& text,
                                                           const std::string& where)
{
    const auto lines = numbered_lines(text);
    if (lines.empty())
        throw config_error(where, "empty newidle table");
    const std::vector<std::string> expected = {"domain", "clients", "no_shared_runq",
                                               "shared_runq"};
    if (split_csv(lines.front().second) != expected)
        throw config_error(at_line(where, lines.front().first),
                           fmt::format("expected the header '{}'", join_with(expected, ",")));
    std::vector<newidle_reference_row> out;
    for (std::size_t li = 1; li < lines.size(); ++li) {
        const auto& [n, line] = lines[li];
        const std::vector<std::string> f = split_csv(line);
        if (f.size() != expected.size())
            throw config_error(at_line(where, n), fmt::format("expected {} fields, found {}",
                                                              expected.size(), f.size()));
        if (f[0].empty())
            throw config_error(at_line(where, n), "empty domain level");
        if (!all_digits(f[1]))
            throw config_error(at_line(where, n),
                               fmt::format("clients '{}' is not a whole number", f[1]));
        newidle_reference_row r{f[0], f[1], 0, 0};
        for (std::size_t col = 2; col < 4; ++col) {
            const std::optional<double> x = parse_number(f[col]);
            if (!x || *x < 0)
                throw config_error(at_line(where, n),
                                   fmt::format("column {} ({}): '{}' is not a count", col + 1,
                                               expected[col], f[col]));
            (col == 2 ? r.no_shared_runq : r.shared_runq) = *x;
        }
        for (const newidle_reference_row& o : out)
            if (o.domain == r.domain && o.clients == r.clients)
                throw config_error(at_line(where, n), fmt::format("{} at {} clients appears twice",
                                                                  r.domain, r.clients));
        out.push_back(std::move(r));
    }
    if (out.empty())
        throw config_error(where, "the newidle table has a header but no rows");
    return out;
}

const std::vector<fidelity_benchmark>& fidelity_benchmarks()
{
    // clang-format off
    static const std::vector<fidelity_benchmark> table = {
        {"hackbench",           "hackbench.csv",            "perf bench sched messaging", "time",             0},
        {"tbench",              "tbench.csv",               "tbench",                     "throughput",       0},
        {"netperf",             "netperf.csv",              "netperf",                    "trans/s/instance", 0},
        {"schbench wakeup p99", "schbench_wakeup_p99.csv",  "schbench",                   "wakeup_p99",       0},
        {"schbench request p99","schbench_request_p99.csv", "schbench",                   "request_p99",      0},
        {"schbench throughput", "schbench_throughput.csv",  "schbench",                   "rps_p50",          0},
        {"stream-10",           "stream10.csv",             "stream",                     "",                 10},
        {"stream-100",          "stream100.csv",            "stream",                     "",                 100},
    };
    // clang-format on
    return table;
}

measured_table measured_from_comparison(const comparison& c, const fidelity_benchmark& b,
                                        const std::string& where)
{
    const std::string tip = reference_arms().front().kernel;
    if (c.arms.empty() || reference_column_of(c.arms.front()) != "tip")
        throw config_error(where, fmt::format("the baseline arm (the first --kernel) is '{}'; the "
                                              "published pct imp is against {}: run compare "
                                              "with --kernel {} first",
                                              c.arms.empty() ? "" : c.arms.front(), tip, tip));
    measured_table t;
    std::vector<std::size_t> arm_index; // comparison arm of each measured arm
    for (std::size_t a = 0; a < c.arms.size(); ++a) {
        const std::string col = reference_column_of(c.arms[a]);
        if (!col.empty() && index_of(t.arms, col) == t.arms.size()) {
            t.arms.push_back(col);
            arm_index.push_back(a);
        }
    }
    int runs = 0; // the most any arm has at every load
    for (int n : c.runs_per_arm)
        runs = std::max(runs, n);
    const std::string machine = c.arm_provenance.empty() ? "?" : c.arm_provenance.front().machine;

    auto cell_of = [](const arm_cell& cell) -> std::optional<measured_cell> {
        if (cell.s.samples.empty())
            return std::nullopt;
        return measured_cell{cell.s.amean, cell.amd_pct_imp, cell.amd_cv};
    };
    if (*b.metric) {
        const auto m =
            std::find_if(c.metrics.begin(), c.metrics.end(),
                         [&](const metric_comparison& mc) { return mc.name == b.metric; });
        if (m == c.metrics.end())
            throw config_error(where, fmt::format("the runs report no metric '{}'", b.metric));
        t.source =
            fmt::format("{} ({}), {}, {} runs per arm", c.benchmark, b.metric, machine, runs);
        for (std::size_t l = 0; l < c.loads.size(); ++l) {
            t.keys.push_back(c.loads[l]);
            std::vector<std::optional<measured_cell>> row;
            for (std::size_t a : arm_index)
                row.push_back(cell_of(m->cells[l][a]));
            t.cells.push_back(std::move(row));
        }
    } else {
        // STREAM: one load, every metric (Copy, Scale, Add, Triad) a row.
        if (c.loads.size() != 1)
            throw config_error(where, fmt::format("{} loads of {}; the published table has one "
                                                  "(all CPUs): give the runs of one --threads",
                                                  c.loads.size(), c.benchmark));
        t.source = fmt::format("{}, {}, {} runs per arm", c.benchmark, machine, runs);
        for (const metric_comparison& m : c.metrics) {
            t.keys.push_back(m.name);
            std::vector<std::optional<measured_cell>> row;
            for (std::size_t a : arm_index)
                row.push_back(cell_of(m.cells[0][a]));
            t.cells.push_back(std::move(row));
        }
    }
    return t;
}

fidelity_count& fidelity_count::operator+=(const fidelity_count& o)
{
    scored += o.scored;
    agree += o.agree;
    within_2x += o.within_2x;
    return *this;
}

fidelity_table score_table(const fidelity_benchmark& b, const reference_table& ref,
                           const measured_table* ours, double threshold)
{
    fidelity_table t;
    t.name = b.name;
    t.file = b.file;
    t.arms = ref.arms;
    t.labels = ref.labels;
    std::vector<std::string> keys = ref.keys;

    // Our norm: the mean over tip's mean in the published first row (else our first row).
    double norm_base = 0;
    if (ours) {
        t.source = ours->source;
        const std::size_t tip = index_of(ours->arms, std::string("tip"));
        auto tip_mean = [&](std::size_t row) -> std::optional<double> {
            if (tip == ours->arms.size() || !ours->cells[row][tip] ||
                ours->cells[row][tip]->amean == 0)
                return std::nullopt;
            return ours->cells[row][tip]->amean;
        };
        std::vector<std::size_t> order;
        const std::size_t first = index_of(ours->keys, ref.keys.front());
        if (first != ours->keys.size())
            order.push_back(first);
        for (std::size_t r = 0; r < ours->keys.size(); ++r)
            order.push_back(r);
        for (std::size_t r : order)
            if (const auto m = tip_mean(r)) {
                norm_base = *m;
                t.norm_key = ours->keys[r];
                break;
            }
        for (const std::string& k : ours->keys)
            if (index_of(keys, k) == keys.size()) {
                keys.push_back(k);
                t.labels.push_back(k + ref.label_suffix);
            }
    }

    for (std::size_t r = 0; r < keys.size(); ++r) {
        const std::size_t our_row = ours ? index_of(ours->keys, keys[r]) : 0;
        for (std::size_t a = 0; a < ref.arms.size(); ++a) {
            fidelity_row row;
            row.key = keys[r];
            row.label = t.labels[r];
            row.arm = ref.arms[a];
            if (r < ref.keys.size())
                row.published = ref.cells[r][a];
            if (ours && our_row < ours->keys.size()) {
                const std::size_t our_arm = index_of(ours->arms, ref.arms[a]);
                if (our_arm < ours->arms.size() && ours->cells[our_row][our_arm]) {
                    const measured_cell& m = *ours->cells[our_row][our_arm];
                    row.ours = amd_cell{norm_base != 0 ? m.amean / norm_base : std::nan(""),
                                        m.pct_imp, m.cv};
                }
            }
            // Our pct imp is NaN when tip's mean is 0 (e.g. a run too short to measure).
            if (row.arm != "tip" && row.published && row.ours && row.published->pct_imp != 0 &&
                std::fabs(row.published->pct_imp) >= threshold &&
                std::isfinite(row.ours->pct_imp)) {
                const double p = row.published->pct_imp, o = row.ours->pct_imp;
                row.scored = true;
                row.agree = sign(o) == sign(p);
                row.within_2x = row.agree && std::fabs(o) >= std::fabs(p) / 2 &&
                                std::fabs(o) <= 2 * std::fabs(p);
                ++t.count.scored;
                t.count.agree += row.agree;
                t.count.within_2x += row.within_2x;
            }
            t.rows.push_back(std::move(row));
        }
    }
    return t;
}

std::optional<newidle_measurement> measured_newidle(const comparison& c,
                                                    const std::vector<run_result>& runs)
{
    auto arm_with_column = [&](const char* col) {
        for (std::size_t a = 0; a < c.arms.size(); ++a)
            if (reference_column_of(c.arms[a]) == col)
                return a;
        return c.arms.size();
    };
    std::size_t with = arm_with_column("v3_tgfix_noopt");
    if (with == c.arms.size())
        with = arm_with_column("v3");
    if (with == c.arms.size())
        return std::nullopt;
    std::size_t without = c.arms.size();
    const std::string off = canonical_kernel_spec(c.arms[with] + "+NO_SHARED_RUNQ");
    for (std::size_t a = 0; a < c.arms.size(); ++a)
        if (canonical_kernel_spec(c.arms[a]) == off)
            without = a;
    if (without == c.arms.size())
        without = arm_with_column("tip");
    if (without == c.arms.size())
        return std::nullopt;

    newidle_measurement m;
    m.without_arm = c.arms[without];
    m.with_arm = c.arms[with];
    // CPUs x simulated seconds of the runs that carry the counters, mean over them: the
    // counters run from the start of the run to its end, as a schedstat delta around the
    // whole benchmark does.
    auto cpu_seconds = [&](const std::string& arm, const std::string& load) {
        double sum = 0;
        int n = 0;
        for (const run_result& r : runs)
            if (r.finished && r.schedstat && r.arm_label() == arm &&
                (r.load.empty() ? "-" : r.load) == (load.empty() ? "-" : load)) {
                sum += static_cast<double>(r.provenance.nr_cpus) *
                       static_cast<double>(r.summary.simulated_ns) / 1e9;
                ++n;
            }
        return n ? sum / n : 0.0;
    };
    for (const schedstat_row& r : c.schedstat) {
        if (r.idle_type != "newly_idle" || r.counter != "lb_count")
            continue;
        if (std::isnan(r.mean[without]) || std::isnan(r.mean[with]))
            continue;
        m.cells.push_back({r.domain, r.load, r.mean[without], r.mean[with],
                           cpu_seconds(m.without_arm, r.load), cpu_seconds(m.with_arm, r.load)});
    }
    if (m.cells.empty())
        return std::nullopt;
    return m;
}

std::vector<newidle_row> match_newidle(const std::vector<newidle_reference_row>& ref,
                                       const newidle_measurement& ours)
{
    auto rate = [](double count, double cpu_s) -> std::optional<double> {
        if (cpu_s <= 0)
            return std::nullopt;
        return count / cpu_s;
    };
    auto ours_into = [&](newidle_row& row, const newidle_measurement::cell& o) {
        row.ours_without = o.without;
        row.ours_with = o.with;
        row.ours_without_rate = rate(o.without, o.without_cpu_s);
        row.ours_with_rate = rate(o.with, o.with_cpu_s);
    };
    std::vector<newidle_row> out;
    std::vector<bool> used(ours.cells.size(), false);
    for (const newidle_reference_row& r : ref) {
        newidle_row row;
        row.domain = r.domain;
        row.clients = r.clients;
        row.ref_without = r.no_shared_runq;
        row.ref_with = r.shared_runq;
        row.ref_without_rate = r.no_shared_runq / published_newidle_run_s;
        row.ref_with_rate = r.shared_runq / published_newidle_run_s;
        for (std::size_t i = 0; i < ours.cells.size(); ++i)
            if (ours.cells[i].domain == r.domain && ours.cells[i].clients == r.clients) {
                ours_into(row, ours.cells[i]);
                used[i] = true;
            }
        out.push_back(std::move(row));
    }
    for (std::size_t i = 0; i < ours.cells.size(); ++i)
        if (!used[i]) {
            newidle_row row;
            row.domain = ours.cells[i].domain;
            row.clients = ours.cells[i].clients;
            ours_into(row, ours.cells[i]);
            out.push_back(std::move(row));
        }
    return out;
}

std::optional<double> newidle_ratio(const std::optional<double>& without,
                                    const std::optional<double>& with)
{
    if (!without || !with || *without == 0)
        return std::nullopt;
    return *with / *without;
}

reference_data read_reference_dir(const std::string& dir)
{
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw config_error(dir, "the reference directory does not exist (--reference DIR)");
    reference_data d;
    d.dir = dir;
    for (const fidelity_benchmark& b : fidelity_benchmarks()) {
        const std::string path = (std::filesystem::path(dir) / b.file).string();
        d.tables.push_back(parse_reference_table(read_text(path, "reference table"), path));
    }
    const std::string path = (std::filesystem::path(dir) / newidle_file).string();
    d.newidle = parse_newidle_reference(read_text(path, "reference table"), path);
    return d;
}

namespace {

/// The value of "--ntimes N" in a canonical STREAM command line, or 0.
int stream_ntimes(const std::string& command_line)
{
    const std::string opt = " --ntimes ";
    const std::size_t at = command_line.find(opt);
    if (at == std::string::npos)
        return 0;
    return std::atoi(command_line.c_str() + at + opt.size());
}

} // namespace

fidelity_report score_fidelity(const reference_data& ref, const std::vector<results_input>& inputs,
                               double threshold)
{
    fidelity_report rep;
    rep.reference_dir = ref.dir;
    rep.threshold = threshold;
    if (inputs.empty())
        throw config_error("fidelity", "give at least one results file (schedlab compare --json)");

    // Group runs by benchmark command line: several files may hold one benchmark's loads.
    struct group {
        std::string benchmark;
        std::vector<std::string> files;
        std::vector<run_result> runs;
    };
    std::vector<group> groups;
    for (const results_input& in : inputs) {
        if (in.runs.empty())
            throw config_error(in.file, "the results file holds no runs");
        for (const run_result& r : in.runs) {
            const std::string b = join_with(argv_without_load(r.provenance.argv), " ");
            auto g = std::find_if(groups.begin(), groups.end(),
                                  [&](const group& x) { return x.benchmark == b; });
            if (g == groups.end()) {
                groups.push_back({b, {}, {}});
                g = groups.end() - 1;
            }
            if (g->files.empty() || g->files.back() != in.file)
                g->files.push_back(in.file);
            g->runs.push_back(r);
        }
    }

    const std::vector<fidelity_benchmark>& benches = fidelity_benchmarks();
    std::vector<std::optional<measured_table>> measured(benches.size());
    std::vector<std::string> measured_by(benches.size());
    for (const group& g : groups) {
        const std::string where = join_with(g.files, ", ");
        comparison c;
        try {
            c = compare_runs(g.runs);
        } catch (const config_error& e) {
            throw config_error(where, e.what());
        }
        const std::string& cl = g.runs.front().provenance.command_line;
        std::vector<std::size_t> matched;
        bool workload_known = false;
        for (std::size_t i = 0; i < benches.size(); ++i) {
            const std::string w = benches[i].workload;
            if (cl != w && !cl.starts_with(w + " "))
                continue;
            workload_known = true;
            if (benches[i].stream_ntimes && benches[i].stream_ntimes != stream_ntimes(cl))
                continue;
            matched.push_back(i);
        }
        if (!workload_known)
            throw config_error(where, fmt::format("no published table for '{}': the suite has "
                                                  "hackbench (perf bench sched messaging), tbench, "
                                                  "netperf, schbench and stream",
                                                  c.benchmark));
        if (matched.empty())
            throw config_error(where, fmt::format("stream --ntimes {}: the published STREAM tables "
                                                  "are for --ntimes 10 and 100",
                                                  stream_ntimes(cl)));

        for (const std::string& w : c.warnings)
            rep.notes.push_back(fmt::format("{}: {}", where, w));
        const std::string machine = c.arm_provenance.front().machine;
        if (machine != reference_machine)
            rep.notes.push_back(fmt::format("{}: ran on {}; the published figures are from {}",
                                            where, machine, reference_machine));
        for (const std::string& a : c.arms)
            if (reference_column_of(a).empty())
                rep.notes.push_back(
                    fmt::format("{}: arm {} models no published column; left out", where, a));
        if (cl.starts_with("netperf ") && cl.find("-t UDP_RR") != std::string::npos)
            rep.notes.push_back(
                fmt::format("{}: UDP_RR; the published netperf runs are TCP_RR", where));

        for (std::size_t i : matched) {
            const fidelity_benchmark& b = benches[i];
            if (*b.metric &&
                std::none_of(c.metrics.begin(), c.metrics.end(),
                             [&](const metric_comparison& m) { return m.name == b.metric; })) {
                rep.notes.push_back(
                    fmt::format("{}: the runs report no {} ({} not run)", where, b.metric, b.file));
                continue;
            }
            if (measured[i])
                throw config_error(where, fmt::format("{} would be scored twice: the runs of '{}' "
                                                      "({}) and of '{}'",
                                                      b.file, c.benchmark, where, measured_by[i]));
            measured[i] = measured_from_comparison(c, b, where);
            measured_by[i] = fmt::format("{} ({})", c.benchmark, where);
            if (std::string(b.workload) == "tbench")
                if (auto nm = measured_newidle(c, g.runs)) {
                    rep.newidle = match_newidle(ref.newidle, *nm);
                    rep.newidle_ours = std::move(nm);
                }
        }
    }

    for (std::size_t i = 0; i < benches.size(); ++i) {
        rep.tables.push_back(score_table(benches[i], ref.tables[i],
                                         measured[i] ? &*measured[i] : nullptr, threshold));
        rep.total += rep.tables.back().count;
    }
    return rep;
}

nlohmann::ordered_json fidelity_to_json(const fidelity_report& r)
{
    using json = nlohmann::ordered_json;
    auto count = [](const fidelity_count& c) {
        return json{{"scored", c.scored},
                    {"agree", c.agree},
                    {"within_2x", c.within_2x},
                    {"agree_pct", c.pct()}};
    };
    auto cell = [](const std::optional<amd_cell>& c) -> json {
        if (!c)
            return nullptr;
        return json{{"norm", c->norm}, {"pct_imp", c->pct_imp}, {"cv", c->cv}};
    };
    auto opt = [](const std::optional<double>& x) -> json { return x ? json(*x) : json(nullptr); };
    json tables = json::array();
    for (const fidelity_table& t : r.tables) {
        json rows = json::array();
        for (const fidelity_row& row : t.rows) {
            std::string kernel;
            for (const reference_arm& a : reference_arms())
                if (row.arm == a.column)
                    kernel = a.kernel;
            rows.push_back(json{{"label", row.label},
                                {"key", row.key},
                                {"arm", row.arm},
                                {"kernel", kernel},
                                {"published", cell(row.published)},
                                {"ours", cell(row.ours)},
                                {"scored", row.scored},
                                {"agree", row.agree},
                                {"within_2x", row.within_2x}});
        }
        json jt = {{"name", t.name},
                   {"file", t.file},
                   {"source", t.source.empty() ? json(nullptr) : json(t.source)},
                   {"norm_row", t.norm_key.empty() ? json(nullptr) : json(t.norm_key)}};
        jt.update(count(t.count));
        jt["rows"] = rows;
        tables.push_back(jt);
    }
    json j = {
        {"format", fidelity_format_v1}, {"reference", r.reference_dir}, {"threshold", r.threshold}};
    j["total"] = count(r.total);
    j["benchmarks"] = tables;
    if (r.newidle_ours) {
        json rows = json::array();
        for (const newidle_row& n : r.newidle)
            rows.push_back(json{{"domain", n.domain},
                                {"clients", n.clients},
                                {"published_no_shared_runq", opt(n.ref_without)},
                                {"published_shared_runq", opt(n.ref_with)},
                                {"published_ratio", opt(newidle_ratio(n.ref_without, n.ref_with))},
                                {"ours_without", opt(n.ours_without)},
                                {"ours_with", opt(n.ours_with)},
                                {"ours_ratio", opt(newidle_ratio(n.ours_without, n.ours_with))},
                                {"published_no_shared_runq_per_cpu_s", opt(n.ref_without_rate)},
                                {"published_shared_runq_per_cpu_s", opt(n.ref_with_rate)},
                                {"ours_without_per_cpu_s", opt(n.ours_without_rate)},
                                {"ours_with_per_cpu_s", opt(n.ours_with_rate)},
                                {"ours_over_published_without",
                                 opt(newidle_ratio(n.ref_without_rate, n.ours_without_rate))}});
        j["newidle_lb_count"] =
            json{{"without_arm", r.newidle_ours->without_arm},
                 {"with_arm", r.newidle_ours->with_arm},
                 {"published_counts", "per-CPU mean over one run (sched-scoreboard all_cpus "
                                      "(avg))"},
                 {"published_run_s", published_newidle_run_s},
                 {"ours_counts", "summed over CPUs over the whole run, mean of runs"},
                 {"rows", rows}};
    } else {
        j["newidle_lb_count"] = nullptr;
    }
    j["notes"] = r.notes;
    return j;
}

} // namespace schedlab
