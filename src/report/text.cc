// SPDX-License-Identifier: GPL-2.0-only
#include "report/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace schedlab {

namespace {

std::string rtrim(std::string s)
{
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    return s;
}

/// The row key of a load: the load itself, or the metric name when there is no load list.
std::string op_name(const comparison& c, std::size_t load, const metric_comparison& m)
{
    return c.loads[load].empty() ? m.name : c.loads[load];
}

/// `v` with `dp` decimals in `width` columns; "-" where it is not a number (a CV of a mean of
/// 0, a change from 0): a table never prints nan or inf.
std::string fixed(double v, int width, int dp, bool plus = false)
{
    if (!std::isfinite(v))
        return fmt::format("{:>{}}", "-", width);
    return plus ? fmt::format("{:+{}.{}f}", v, width, dp) : fmt::format("{:{}.{}f}", v, width, dp);
}

std::string table_name(const std::string& base, const comparison& c, const metric_comparison& m)
{
    return c.metrics.size() > 1 ? base + "-" + m.name : base;
}

} // namespace

std::pair<std::string, std::string> mmtests_split_name(const std::string& name)
{
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '-') {
            // keep "-rcN" with the version
            if (name.compare(i + 1, 2, "rc") == 0 && i + 3 < name.size() &&
                std::isdigit(static_cast<unsigned char>(name[i + 3]))) {
                std::size_t j = i + 3;
                while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])))
                    ++j;
                if (j == name.size())
                    return {name, ""};
                if (name[j] == '-')
                    return {name.substr(0, j), name.substr(j + 1)};
                i = j - 1;
                continue;
            }
            return {name.substr(0, i), name.substr(i + 1)};
        }
    }
    const std::size_t plus = name.find('+');
    if (plus != std::string::npos)
        return {name.substr(0, plus), name.substr(plus + 1)};
    return {name, ""};
}

/* ---- mmtests compare-kernels ---- */

std::string render_mmtests(const comparison& c)
{
    constexpr int field = 12; // FieldLength
    const int dp = c.mmtests_decimals;
    std::string out;
    for (const metric_comparison& m : c.metrics) {
        const bool hb = m.higher_is_better;
        const std::vector<std::string> stats = {"Min", hb ? "Hmean" : "Amean", "Stddev",
                                                "CoeffVar", "Max", hb ? "BHmean-95" : "BAmean-95"};
        std::size_t sw = 0, ow = 0;
        for (const auto& s : stats)
            sw = std::max(sw, s.size());
        for (std::size_t l = 0; l < c.loads.size(); ++l)
            ow = std::max(ow, op_name(c, l, m).size());

        if (!out.empty())
            out += "\n";
        out += table_name(c.mmtests_name, c, m) + "\n";
        std::string line1(sw + 1 + ow, ' '), line2(sw + 1 + ow, ' ');
        for (const std::string& arm : c.arms) {
            const auto [top, bottom] = mmtests_split_name(arm);
            line1 += fmt::format("{:>{}}", top, field + 11);
            line2 += fmt::format("{:>{}}", bottom, field + 11);
        }
        out += rtrim(line1) + "\n" + rtrim(line2) + "\n";

        for (std::size_t s = 0; s < stats.size(); ++s) {
            for (std::size_t l = 0; l < c.loads.size(); ++l) {
                std::string row = fmt::format("{:<{}} {:<{}}", stats[s], sw, op_name(c, l, m), ow);
                for (const arm_cell& cell : m.cells[l]) {
                    double v = 0, pct = 0;
                    switch (s) {
                    case 0: v = cell.s.min; pct = cell.mm_pct_min; break;
                    case 1: v = cell.mm_mean; pct = cell.mm_pct_mean; break;
                    case 2: v = cell.mm_stddev; pct = cell.mm_pct_stddev; break;
                    case 3: v = cell.mm_coeffvar; pct = cell.mm_pct_coeffvar; break;
                    case 4: v = cell.s.max; pct = cell.mm_pct_max; break;
                    default: v = cell.mm_best95; pct = cell.mm_pct_best95; break;
                    }
                    row += fixed(v, field, dp);
                    if (s == 1 && cell.significant)
                        row += fmt::format(" *{}%*", fixed(pct, 7, 2));
                    else
                        row += fmt::format(" ({}%)", fixed(pct, 7, 2));
                }
                out += row + "\n";
            }
        }
    }
    return out;
}

/* ---- AMD norm [pct imp](CV) ---- */

namespace {

std::string amd_units(const metric_comparison& m)
{
    if (m.name == "time" && m.unit == "s")
        return "Normalized time in seconds";
    return fmt::format("Normalized {} ({})", m.name, m.unit);
}

} // namespace

std::string render_amd(const comparison& c)
{
    const std::string rule(66, '=');
    std::string out;
    for (const metric_comparison& m : c.metrics) {
        std::vector<std::string> labels;
        for (std::size_t l = 0; l < c.loads.size(); ++l) {
            if (c.loads[l].empty())
                labels.push_back(m.name);
            else if (!c.load_name.empty())
                labels.push_back(c.loads[l] + "-" + c.load_name);
            else
                labels.push_back(c.loads[l]);
        }
        std::size_t lw = 9;
        for (const auto& s : labels)
            lw = std::max(lw, s.size());

        if (!out.empty())
            out += "\n\n";
        out += rule + "\n";
        out += fmt::format("Test          : {}\n",
                           c.metrics.size() > 1 ? c.amd_test + " " + m.name : c.amd_test);
        out += fmt::format("Units         : {}\n", amd_units(m));
        out += fmt::format("Interpretation: {}\n",
                           m.higher_is_better ? "Higher is better" : "Lower is better");
        out += "Statistic     : AMean\n";
        out += rule + "\n";
        // As posted: the first heading ends over its column's end, later ones follow 4 spaces
        // apart (and may overhang their column by up to those 4). A column is 23 wide, or wider
        // when its heading would overhang it further (a long arm name), so the rows stay under
        // their headings instead of drifting left of them.
        std::string head = "Case:";
        std::vector<std::size_t> width(c.arms.size(), 23);
        std::size_t col_end = lw;
        for (std::size_t a = 0; a < c.arms.size(); ++a) {
            const std::string h = c.arms[a] + "[pct imp](CV)";
            if (a == 0)
                head += fmt::format("{:>{}}", h, std::max(lw + 23 - 5, h.size() + 1));
            else
                head += "    " + h;
            width[a] = std::max<std::size_t>(23, head.size() - std::min(head.size(), col_end + 4));
            col_end += width[a];
        }
        out += head + "\n";
        for (std::size_t l = 0; l < c.loads.size(); ++l) {
            std::string row = fmt::format("{:>{}}", labels[l], lw);
            for (std::size_t a = 0; a < c.arms.size(); ++a) {
                const arm_cell& cell = m.cells[l][a];
                row += fmt::format("{:>{}}",
                                   fmt::format("{} [{}]({})", fixed(cell.amd_norm, 9, 2),
                                               fixed(cell.amd_pct_imp, 6, 2),
                                               fixed(cell.amd_cv, 5, 2)),
                                   width[a]);
            }
            out += row + "\n";
        }
    }
    return out;
}

/* ---- lkp %stddev %change %stddev ---- */

std::string lkp_row(const std::vector<double>& avgs, const std::vector<double>& stddev_pcts,
                    const std::vector<double>& changes, const std::string& key)
{
    const bool absolute = key.ends_with("%") || key.starts_with("perf-profile");
    std::string s;
    for (std::size_t i = 0; i < avgs.size(); ++i) {
        if (i > 0) {
            const double p = changes[i - 1];
            const std::string num = !std::isfinite(p)      ? fixed(p, 10, 1)
                                    : std::fabs(p) < 100000 ? fmt::format("{:+10.1f}", p)
                                                           : fmt::format("{:+10.2g}", p);
            s += absolute ? num + "  " : num + "% ";
        }
        const double avg = avgs[i];
        if (!std::isfinite(avg) || std::fabs(avg) < 1000)
            s += fixed(avg, 10, 2);
        else if (std::fabs(avg) > 100000000)
            s += fmt::format("{:10.4g}", avg);
        else
            s += fmt::format("{:10d}", static_cast<long long>(avg)); // Ruby %d truncates
        if (stddev_pcts[i] > 2)
            s += fmt::format(" \u00b1{:3d}%", static_cast<long long>(stddev_pcts[i]));
        else
            s += "      ";
    }
    return s + "  " + key;
}

std::string render_lkp(const comparison& c)
{
    std::string out;
    const std::string param = !c.lkp_load_param.empty() ? c.lkp_load_param : c.load_name;
    for (std::size_t l = 0; l < c.loads.size(); ++l) {
        out += std::string(89, '=') + "\n";
        if (c.loads[l].empty() || param.empty())
            out += fmt::format("testcase:\n  {}\n\n", c.lkp_testcase);
        else
            out += fmt::format("{}/testcase:\n  {}/{}\n\n", param, c.loads[l], c.lkp_testcase);
        // lkp's commit axis; as in the kernel test robot's reports, each id with its subject
        // (here the arm's name)
        out += "commit: \n";
        for (std::size_t a = 0; a < c.arms.size(); ++a)
            out += fmt::format("  {} (\"{}\")\n", c.arm_ids[a], c.arms[a]);
        out += "\n";
        std::string names = fmt::format("{:>16} ", c.arm_ids[0].substr(0, 16));
        std::string dashes = std::string(16, '-') + " ";
        for (std::size_t a = 1; a < c.arms.size(); ++a) {
            names += fmt::format("{:>27} ", c.arm_ids[a].substr(0, 27));
            dashes += std::string(27, '-') + " ";
        }
        out += names + "\n" + dashes + "\n";
        out += "         %stddev";
        for (std::size_t a = 1; a < c.arms.size(); ++a)
            out += "     %change         %stddev";
        out += "\n             \\  ";
        for (std::size_t a = 1; a < c.arms.size(); ++a)
            out += "        |                \\  ";
        out += "\n";
        for (const lkp_stat& st : c.lkp) {
            std::vector<double> avgs, sds, changes;
            for (std::size_t a = 0; a < c.arms.size(); ++a) {
                const lkp_cell& cell = st.cells[l][a];
                avgs.push_back(cell.avg);
                sds.push_back(cell.stddev_pct);
                if (a > 0)
                    changes.push_back(cell.change);
            }
            out += lkp_row(avgs, sds, changes, st.key) + "\n";
        }
        out += "\n";
    }
    return out;
}

/* ---- schedstat differences ---- */

std::string render_schedstat(const comparison& c)
{
    if (c.schedstat.empty())
        return "";
    std::string out;
    const std::string load_head = c.load_name.empty() ? "load" : c.load_name;
    std::size_t dw = 6, lw = load_head.size();
    for (const schedstat_row& r : c.schedstat) {
        dw = std::max(dw, r.domain.size());
        lw = std::max(lw, r.load.size());
    }
    std::size_t cw = 14;
    for (const auto& a : c.arms)
        cw = std::max(cw, a.size());
    std::string current;
    for (const schedstat_row& r : c.schedstat) {
        const std::string title = r.idle_type + " " + r.counter;
        if (title != current) {
            if (!current.empty())
                out += "\n";
            current = title;
            out += fmt::format("schedstat {} {}: mean per run, summed over CPUs\n", r.idle_type,
                               r.counter);
            std::string head = fmt::format("{:<{}}  {:>{}}", "domain", dw, load_head, lw);
            for (std::size_t a = 0; a < c.arms.size(); ++a)
                head += fmt::format("  {:>{}}{}", c.arms[a], cw, a ? "           " : "");
            out += rtrim(head) + "\n";
        }
        std::string row = fmt::format("{:<{}}  {:>{}}", r.domain, dw, r.load, lw);
        for (std::size_t a = 0; a < c.arms.size(); ++a) {
            row += fmt::format("  {:>{}.1f}", r.mean[a], cw);
            if (a && std::isnan(r.pct_change[a]))
                row += "  (     new)"; // from zero: no percentage
            else if (a)
                row += fmt::format(" ({:+7.2f}%)", r.pct_change[a]);
        }
        out += row + "\n";
    }
    return out;
}

std::string render_provenance(const comparison& c, bool significance)
{
    std::string out;
    const run_provenance& p0 = c.arm_provenance.front();
    out += fmt::format("# schedlab {} (git {}): machine {} ({} CPUs), benchmark: {}\n",
                       p0.schedlab_version, p0.git_sha, p0.machine, p0.nr_cpus, c.benchmark);
    for (std::size_t a = 0; a < c.arms.size(); ++a) {
        const run_provenance& p = c.arm_provenance[a];
        out += fmt::format("# {} {}: {} runs, kernel {} ({}){}{}\n", a == 0 ? "baseline" : "arm",
                           c.arms[a], c.runs_per_arm[a], p.kernel_base, p.policy,
                           p.feature_delta.empty() ? "" : ", features changed: " + p.feature_delta,
                           p.features_arg.empty() ? "" : ", --features " + p.features_arg);
    }
    if (significance) // only the mmtests table stars its rows
        out += fmt::format("# significance: {}\n",
                           c.rule == significance_rule::ci
                               ? "mmtests 2024+ rule (* = the mean +- 1.96 stddev intervals do not "
                                 "overlap)"
                               : "mmtests 2018-2024 rule (* = t-test p < 0.10)");
    for (const std::string& w : c.warnings)
        out += "# warning: " + w + "\n";
    return out;
}

} // namespace schedlab
