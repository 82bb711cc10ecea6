// SPDX-License-Identifier: GPL-2.0-only
#include "report/fidelity_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace schedlab {

namespace {

constexpr int cell_width = 23; // "%9.2f [%6.2f](%5.2f)" as render_amd prints a cell

std::string cell_text(const std::optional<amd_cell>& c, const char* missing)
{
    if (!c)
        return fmt::format("{:>{}}", missing, cell_width);
    auto num = [](double x) {
        return std::isnan(x) ? std::string("nan") : fmt::format("{:.2f}", x);
    };
    return fmt::format("{:>9} [{:>6}]({:>5})", num(c->norm), num(c->pct_imp), num(c->cv));
}


std::string opt_ratio(const std::optional<double>& x)
{
    return x ? fmt::format("{:.2f}", *x) : "-";
}

/// A factor between two rates: three significant figures.
std::string opt_factor(const std::optional<double>& x)
{
    if (!x)
        return "-";
    return *x >= 100 ? fmt::format("{:.0f}", *x) : fmt::format("{:.3g}", *x);
}

/// A rate per CPU per second: three significant figures down to 0.001.
std::string opt_rate(const std::optional<double>& x)
{
    if (!x)
        return "-";
    if (*x >= 100)
        return fmt::format("{:.0f}", *x);
    if (*x >= 10)
        return fmt::format("{:.1f}", *x);
    if (*x >= 1)
        return fmt::format("{:.2f}", *x);
    return fmt::format("{:.3f}", *x);
}

} // namespace

std::string render_fidelity_count(const fidelity_count& c)
{
    if (c.scored == 0)
        return "sign agreement: 0 of 0 rows (-)";
    return fmt::format("sign agreement: {} of {} rows ({:.0f}%), {} within a factor of 2", c.agree,
                       c.scored, c.pct(), c.within_2x);
}

std::string render_fidelity_table(const fidelity_table& t, double threshold)
{
    const std::string rule(66, '=');
    std::string out = rule + "\n";
    out += fmt::format("Test          : {} ({})\n", t.name, t.file);
    if (t.source.empty()) {
        out += fmt::format("Ours          : not run ({} published rows)\n", t.labels.size());
        out += rule + "\n";
        return out;
    }
    out += fmt::format("Ours          : {}\n", t.source);
    if (t.norm_key.empty())
        out += "Norm          : none of ours (tip's mean is 0 or missing in every row)\n";
    else
        out += fmt::format("Norm          : ours relative to tip at {}, AMD's to tip in its first "
                           "row\n",
                           t.norm_key);
    out += rule + "\n";

    std::size_t lw = 9;
    for (const std::string& l : t.labels)
        lw = std::max(lw, l.size());
    std::string head = fmt::format("{:<{}}", "Case:", lw + 5);
    for (const std::string& a : t.arms)
        head += fmt::format("{:>{}}  ", a + "[pct imp](CV)", cell_width);
    while (!head.empty() && head.back() == ' ')
        head.pop_back();
    out += head + "\n";

    const std::size_t nr_arms = t.arms.size();
    for (std::size_t r = 0; r * nr_arms < t.rows.size(); ++r) {
        std::string ours = fmt::format("{:>{}} ours", t.labels[r], lw);
        std::string amd = fmt::format("{:>{}} AMD ", "", lw);
        for (std::size_t a = 0; a < nr_arms; ++a) {
            const fidelity_row& row = t.rows[r * nr_arms + a];
            const char* mark = !row.scored ? "  " : row.agree ? " +" : " x";
            ours += cell_text(row.ours, "not run") + mark;
            amd += cell_text(row.published, "not published") + "  ";
        }
        while (!amd.empty() && amd.back() == ' ')
            amd.pop_back();
        while (!ours.empty() && ours.back() == ' ')
            ours.pop_back();
        out += ours;
        out += '\n';
        out += amd;
        out += '\n';
    }
    out += fmt::format("'+' our pct imp has AMD's sign, 'x' it has not (cells whose published "
                       "|pct imp| >= {:g})\n",
                       threshold);
    out += render_fidelity_count(t.count) + "\n";
    return out;
}

std::string render_newidle(const fidelity_report& r)
{
    if (!r.newidle_ours)
        return "";
    std::string out = fmt::format(
        "tbench newly-idle load_balance() calls per domain level, per CPU per second\n"
        "  ours: lb_count summed over CPUs / (CPUs x simulated s of the whole run), mean of "
        "runs;\n"
        "        without = {}, with = {}\n"
        "  AMD:  newidle_lb_counts.csv (v3_tgfix_noopt with NO_SHARED_RUNQ / SHARED_RUNQ): "
        "sched-scoreboard's\n"
        "        per-CPU mean of a run's schedstat delta, / {:g} s (tbench -t {:g})\n",
        r.newidle_ours->without_arm, r.newidle_ours->with_arm, published_newidle_run_s,
        published_newidle_run_s);
    out += fmt::format("{:<6} {:>7}  {:>9} {:>9} {:>7}  {:>9} {:>9} {:>7}  {:>9}\n", "domain",
                       "clients", "ours w/o", "ours with", "ratio", "AMD w/o", "AMD with", "ratio",
                       "w/o o/AMD");
    for (const newidle_row& n : r.newidle)
        out += fmt::format("{:<6} {:>7}  {:>9} {:>9} {:>7}  {:>9} {:>9} {:>7}  {:>9}\n", n.domain,
                           n.clients, opt_rate(n.ours_without_rate), opt_rate(n.ours_with_rate),
                           opt_ratio(newidle_ratio(n.ours_without, n.ours_with)),
                           opt_rate(n.ref_without_rate), opt_rate(n.ref_with_rate),
                           opt_ratio(newidle_ratio(n.ref_without, n.ref_with)),
                           opt_factor(newidle_ratio(n.ref_without_rate, n.ours_without_rate)));
    return out;
}

std::string render_fidelity(const fidelity_report& r)
{
    std::string out = fmt::format("# schedlab fidelity: SHARED_RUNQ v3 on bergamo-2s, published "
                                  "tables from {}\n",
                                  r.reference_dir);
    out += fmt::format("# scored: the non-tip cells whose published |pct imp| >= {:g} and that "
                       "both sides ran\n",
                       r.threshold);
    for (const std::string& n : r.notes)
        out += fmt::format("# note: {}\n", n);
    // Appended piecewise: "\n" + std::string trips GCC 12's -Wrestrict at -O3.
    for (const fidelity_table& t : r.tables) {
        out += '\n';
        out += render_fidelity_table(t, r.threshold);
    }
    const std::string newidle = render_newidle(r);
    if (!newidle.empty()) {
        out += '\n';
        out += newidle;
    }

    out += "\nScore\n";
    std::size_t nw = 7;
    for (const fidelity_table& t : r.tables)
        nw = std::max(nw, t.name.size());
    for (const fidelity_table& t : r.tables)
        out +=
            fmt::format("  {:<{}}  {}\n", t.name, nw,
                        t.source.empty() ? std::string("not run") : render_fidelity_count(t.count));
    out += fmt::format("  {:<{}}  {}\n", "overall", nw, render_fidelity_count(r.total));
    return out;
}

} // namespace schedlab
