// SPDX-License-Identifier: GPL-2.0-only
#include "report/html.h"

#include "report/html_util.h"
#include "report/text.h"
#include "report/timeline_html.h"
#include "sim/assets.h"
#include "sim/config_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace schedlab {

namespace {

using ojson = nlohmann::ordered_json;

std::string read_library(const std::string& rel)
{
    const embedded_asset* a = find_asset(rel);
    if (!a) // the build embeds every one (src/report/CMakeLists.txt): a build bug
        throw config_error("--html", fmt::format("the chart library {} is not built into this "
                                                 "schedlab",
                                                 rel));
    return std::string(a->bytes);
}

/// JSON numbers cannot be NaN or infinite: such values become null (no point drawn).
ojson num(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

std::string load_label(const comparison& c, std::size_t l, const std::string& fallback)
{
    return c.loads[l].empty() ? fallback : c.loads[l];
}

ojson arm_list(const comparison& c)
{
    ojson arms = ojson::array();
    for (const auto& a : c.arms)
        arms.push_back(a);
    return arms;
}

/// The x encoding of the charts against load: the loads in the comparison's order.
ojson load_x(const comparison& c, const ojson& load_order)
{
    return {{"field", "load"},
            {"type", "ordinal"},
            {"sort", load_order},
            {"title", c.load_name.empty() ? "load" : c.load_name},
            {"axis", {{"labelAngle", 0}}}};
}

/// One colour per arm, the same in every chart (the scale's domain is every arm).
ojson arm_colour(const comparison& c)
{
    return {{"field", "arm"},
            {"type", "nominal"},
            {"scale", {{"domain", arm_list(c)}}},
            {"legend", {{"orient", "top"}, {"title", nullptr}}}};
}

ojson metric_chart(const comparison& c, const metric_comparison& m)
{
    ojson values = ojson::array();
    ojson load_order = ojson::array();
    for (std::size_t l = 0; l < c.loads.size(); ++l) {
        load_order.push_back(load_label(c, l, m.name));
        for (std::size_t a = 0; a < c.arms.size(); ++a) {
            const arm_cell& cell = m.cells[l][a];
            const double mean = cell.s.amean, sd = cell.s.stddev_sample;
            values.push_back({{"arm", c.arms[a]},
                              {"load", load_label(c, l, m.name)},
                              {"mean", num(mean)},
                              {"lo", num(mean - sd)},
                              {"hi", num(mean + sd)},
                              {"cv", num(cell.amd_cv)},
                              {"pct_imp", num(cell.amd_pct_imp)},
                              {"n", cell.s.samples.size()}});
        }
    }
    const std::string y_title = fmt::format("{} ({}), mean of runs", m.name, m.unit);
    ojson tooltip = ojson::array({{{"field", "arm"}},
                                  {{"field", "load"}},
                                  {{"field", "mean"}, {"format", ".4~g"}},
                                  {{"field", "cv"}, {"title", "CV %"}, {"format", ".2f"}},
                                  {{"field", "pct_imp"}, {"title", "pct imp"}, {"format", ".2f"}},
                                  {{"field", "n"}, {"title", "runs"}}});
    return {
        {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
        {"title", fmt::format("{}: {} ({} is better)", c.amd_test, m.name,
                              m.higher_is_better ? "higher" : "lower")},
        {"width", 460},
        {"height", 280},
        {"data", {{"values", values}}},
        {"encoding", {{"x", load_x(c, load_order)}, {"color", arm_colour(c)}}},
        {"layer",
         ojson::array({{{"mark", {{"type", "line"}, {"point", true}}},
                        {"encoding",
                         {{"y",
                           {{"field", "mean"},
                            {"type", "quantitative"},
                            {"title", y_title},
                            {"scale", {{"zero", false}}}}},
                          {"tooltip", tooltip}}}},
                       {{"mark", {{"type", "rule"}, {"strokeWidth", 2}, {"opacity", 0.7}}},
                        {"encoding",
                         {{"y", {{"field", "lo"}, {"type", "quantitative"}, {"title", y_title}}},
                          {"y2", {{"field", "hi"}}}}}}})},
    };
}

/*
 * The A/B view of one metric: per load, each arm's change against the
 * baseline in % with the AMD table's sign (pct imp, positive = better), its
 * 95 % interval from the runs (arm_cell::pct_imp_ci) and the text tables'
 * significance star (mmtests' rule, arm_cell::significant). Colours are the
 * absolute chart's (the colour scale's domain is every arm).
 */
ojson change_chart(const comparison& c, const metric_comparison& m)
{
    ojson values = ojson::array();
    ojson load_order = ojson::array();
    for (std::size_t l = 0; l < c.loads.size(); ++l) {
        load_order.push_back(load_label(c, l, m.name));
        for (std::size_t a = 1; a < c.arms.size(); ++a) {
            const arm_cell& cell = m.cells[l][a];
            values.push_back({{"arm", c.arms[a]},
                              {"load", load_label(c, l, m.name)},
                              {"pct_imp", num(cell.amd_pct_imp)},
                              {"lo", num(cell.pct_imp_ci.lo)},
                              {"hi", num(cell.pct_imp_ci.hi)},
                              {"star", cell.significant ? "*" : ""},
                              {"welch_p", num(cell.welch.p)},
                              {"n", cell.s.samples.size()}});
        }
    }
    const std::string rule_name = c.rule == significance_rule::ci ? "mmtests 1.96 s intervals apart"
                                                                  : "mmtests t-test p < 0.10";
    ojson tooltip =
        ojson::array({{{"field", "arm"}},
                      {{"field", "load"}},
                      {{"field", "pct_imp"}, {"title", "pct imp %"}, {"format", "+.2f"}},
                      {{"field", "lo"}, {"title", "95% interval from"}, {"format", "+.2f"}},
                      {{"field", "hi"}, {"title", "to"}, {"format", "+.2f"}},
                      {{"field", "star"}, {"title", "significant (" + rule_name + ")"}},
                      {{"field", "welch_p"}, {"title", "Welch p"}, {"format", ".3g"}},
                      {{"field", "n"}, {"title", "runs"}}});
    const ojson y_scale = {{"zero", true}};
    // x, the arm's offset and colour for the layers of the data (the zero line has none)
    const ojson x = load_x(c, load_order);
    const ojson x_offset = {{"field", "arm"}, {"type", "nominal"}, {"sort", arm_list(c)}};
    const ojson color = arm_colour(c);
    const std::string y_title = "pct imp % (positive = better)";
    return {
        {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
        {"title",
         {{"text", fmt::format("{}: {}, change against {}", c.amd_test, m.name, c.arms[0])},
          {"subtitle", "pct imp as in the AMD table; bars: 95% interval from the runs (Welch); "
                       "*: significant as the mmtests table marks it"}}},
        {"width", 460},
        {"height", 200},
        {"layer",
         ojson::array(
             {{{"data", {{"values", ojson::array({ojson::object()})}}},
               {"mark", {{"type", "rule"}, {"color", "#888"}}},
               {"encoding", {{"y", {{"datum", 0}, {"type", "quantitative"}}}}}},
              {{"data", {{"values", values}}},
               {"encoding", {{"x", x}, {"xOffset", x_offset}, {"color", color}}},
               {"layer",
                ojson::array(
                    {{{"mark", {{"type", "rule"}, {"strokeWidth", 2}}},
                      {"encoding",
                       {{"y",
                         {{"field", "lo"},
                          {"type", "quantitative"},
                          {"title", y_title},
                          {"scale", y_scale}}},
                        {"y2", {{"field", "hi"}}}}}},
                     {{"mark", {{"type", "point"}, {"filled", true}, {"size", 50}}},
                      {"encoding",
                       {{"y",
                         {{"field", "pct_imp"},
                          {"type", "quantitative"},
                          {"title", y_title},
                          {"scale", y_scale}}},
                        {"tooltip", tooltip}}}},
                     {{"mark",
                       {{"type", "text"}, {"dy", -10}, {"fontSize", 16}, {"fontWeight", "bold"}}},
                      {"encoding",
                       {{"y", {{"field", "pct_imp"}, {"type", "quantitative"}}},
                        {"text", {{"field", "star"}}}}}}})}}})},
    };
}

/// The scheduler distributions a report draws: wakeup-to-run latency and run length.
struct distribution_kind {
    const char* id;
    const char* title;
    const char* what;
    histogram_buckets arm_distribution::*buckets;
    u64 arm_distribution::*max_ns;
};

constexpr distribution_kind distribution_kinds[] = {
    {"wakeup-latency", "wakeup-to-run latency",
     "sched_waking or sched_wakeup_new to the task's sched_switch in",
     &arm_distribution::wakeup_latency, &arm_distribution::wakeup_latency_max_ns},
    {"run-length", "run length", "a task's sched_switch in to its sched_switch out on that CPU",
     &arm_distribution::run_length, &arm_distribution::run_length_max_ns},
};

bool has_distribution(const comparison& c, const distribution_kind& k)
{
    for (const auto& row : c.distributions)
        for (const arm_distribution& d : row)
            if (!(d.*k.buckets).empty())
                return true;
    return false;
}

/*
 * The CDF of one cell's histogram as points (x: a bucket's upper end in us, y: the fraction
 * of samples up to it; the last bucket ends at the exact maximum), and the p50, p99 and max
 * marks on that curve: a quantile inside a bucket is placed where the drawn segment (linear
 * in log x) crosses its level.
 */
void cdf_points(const histogram_buckets& b, u64 max_ns, const std::string& arm,
                const std::string& load, ojson& curve, ojson& marks)
{
    u64 total = 0;
    for (const auto& [lo, n] : b)
        total += n;
    if (total == 0)
        return;
    auto us = [](double ns) { return ns / 1000.0; };
    auto point = [&](double x_ns, double y) {
        curve.push_back({{"arm", arm}, {"load", load}, {"x", us(x_ns)}, {"y", y}});
    };
    // the curve starts at 0 at the first bucket's lowest value (log x: not at 0 ns)
    double prev_x = std::max<double>(static_cast<double>(b.front().first), 1.0);
    double prev_y = 0;
    point(prev_x, 0);
    const double levels[] = {0.5, 0.99};
    const char* names[] = {"p50", "p99"};
    std::size_t next_level = 0;
    u64 seen = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        seen += b[i].second;
        const bool last = i + 1 == b.size();
        // no samples between the previous bucket's end and this one's start: flat there
        const double lo = std::max<double>(static_cast<double>(b[i].first), 1.0);
        if (i > 0 && lo > prev_x) {
            point(lo, prev_y);
            prev_x = lo;
        }
        const double end = last ? static_cast<double>(max_ns)
                                : static_cast<double>(log_histogram::bucket_end(
                                      b[i].first, summary_histogram_sub_bits));
        const double x = std::max(end, prev_x);
        const double y = static_cast<double>(seen) / static_cast<double>(total);
        const double x0 = prev_x, y0 = prev_y; // the segment drawn for this bucket
        while (next_level < 2 && y >= levels[next_level]) {
            const double f = y > y0 ? (levels[next_level] - y0) / (y - y0) : 1.0;
            const double at = x0 > 0 && x > 0 ? x0 * std::pow(x / x0, f) : x;
            marks.push_back({{"arm", arm},
                             {"load", load},
                             {"x", us(at)},
                             {"y", levels[next_level]},
                             {"mark", names[next_level]},
                             {"bucket", fmt::format("[{:.3f}, {:.3f}) us", us(static_cast<double>(b[i].first)),
                                                    us(x))}});
            ++next_level;
        }
        point(x, y);
        prev_x = x;
        prev_y = y;
    }
    marks.push_back({{"arm", arm},
                     {"load", load},
                     {"x", us(static_cast<double>(max_ns))},
                     {"y", 1.0},
                     {"mark", "max"},
                     {"bucket", "exact"}});
}

/// A load picker for charts of one load at a time (the last load first): its parameter and
/// filter; nothing with a single load.
void add_load_picker(const comparison& c, ojson& spec, const std::string& fallback)
{
    if (c.loads.size() < 2)
        return;
    ojson options = ojson::array();
    for (std::size_t l = 0; l < c.loads.size(); ++l)
        options.push_back(load_label(c, l, fallback));
    spec["params"] = ojson::array(
        {{{"name", "load_pick"},
          {"value", options.back()}, // the last load: the heaviest, in a rising load list
          {"bind",
           {{"input", "select"},
            {"options", options},
            {"name", (c.load_name.empty() ? std::string("load") : c.load_name) + " "}}}}});
    // each layer has its own data: the filter goes into every one
    for (ojson& layer : spec["layer"])
        layer["transform"] = ojson::array({{{"filter", "datum.load == load_pick"}}});
}

ojson distribution_chart(const comparison& c, const distribution_kind& k)
{
    ojson curve = ojson::array(), marks = ojson::array();
    for (std::size_t l = 0; l < c.loads.size(); ++l)
        for (std::size_t a = 0; a < c.arms.size(); ++a) {
            const arm_distribution& d = c.distributions[l][a];
            cdf_points(d.*k.buckets, d.*k.max_ns, c.arms[a], load_label(c, l, "all"), curve, marks);
        }
    const ojson x = {{"field", "x"},
                     {"type", "quantitative"},
                     {"scale", {{"type", "log"}}},
                     {"axis", {{"format", "~g"}, {"labelOverlap", true}}},
                     {"title", fmt::format("{} (us, log scale)", k.title)}};
    const ojson y = {{"field", "y"},
                     {"type", "quantitative"},
                     {"scale", {{"domain", {0, 1}}}},
                     {"axis", {{"format", "%"}}},
                     {"title", "fraction of samples (CDF)"}};
    const ojson color = arm_colour(c);
    ojson spec = {
        {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
        {"title",
         {{"text", fmt::format("{} per arm (all runs of the load)", k.title)},
          {"subtitle", fmt::format("{}; marks: p50, p99, max", k.what)}}},
        {"width", 460},
        {"height", 260},
        {"layer",
         ojson::array(
             {{{"data", {{"values", curve}}},
               {"mark", {{"type", "line"}, {"interpolate", "linear"}}},
               {"encoding", {{"x", x}, {"y", y}, {"color", color}}}},
              {{"data", {{"values", marks}}},
               {"mark", {{"type", "point"}, {"filled", true}, {"size", 70}}},
               {"encoding",
                {{"x", x},
                 {"y", y},
                 {"color", color},
                 {"shape",
                  {{"field", "mark"},
                   {"type", "nominal"},
                   {"scale", {{"domain", {"p50", "p99", "max"}}}},
                   {"legend", {{"orient", "top"}, {"title", nullptr}}}}},
                 {"tooltip", ojson::array({{{"field", "arm"}},
                                           {{"field", "load"}},
                                           {{"field", "mark"}},
                                           {{"field", "x"}, {"title", "us"}, {"format", ".4~g"}},
                                           {{"field", "bucket"}}})}}}}})},
    };
    add_load_picker(c, spec, "all");
    return spec;
}

/*
 * The benchmark's own latency percentiles (metrics named <what>_p<N> in a unit of time, e.g.
 * schbench's wakeup_p50 and wakeup_p99 in us): per <what>, the mean of the runs per load and
 * arm, one line per arm and percentile.
 */
struct percentile_group {
    std::string what, unit;
    std::vector<std::size_t> metrics; ///< indices into comparison::metrics
};

std::vector<percentile_group> percentile_groups(const comparison& c)
{
    static const std::regex name("(.+)_p([0-9]+(\\.[0-9]+)?)");
    std::vector<percentile_group> groups;
    for (std::size_t i = 0; i < c.metrics.size(); ++i) {
        const metric_comparison& m = c.metrics[i];
        std::smatch match;
        if (!std::regex_match(m.name, match, name) ||
            !(m.unit == "us" || m.unit == "ms" || m.unit == "ns" || m.unit == "s"))
            continue;
        auto g = std::find_if(groups.begin(), groups.end(), [&](const percentile_group& x) {
            return x.what == match[1].str() && x.unit == m.unit;
        });
        if (g == groups.end())
            g = groups.insert(groups.end(), {match[1].str(), m.unit, {}});
        g->metrics.push_back(i);
    }
    return groups;
}

ojson percentile_chart(const comparison& c, const percentile_group& g)
{
    ojson values = ojson::array(), load_order = ojson::array(), pcts = ojson::array();
    for (std::size_t i : g.metrics)
        pcts.push_back(c.metrics[i].name.substr(g.what.size() + 1));
    for (std::size_t l = 0; l < c.loads.size(); ++l) {
        load_order.push_back(load_label(c, l, "all"));
        for (std::size_t i : g.metrics)
            for (std::size_t a = 0; a < c.arms.size(); ++a) {
                const arm_cell& cell = c.metrics[i].cells[l][a];
                values.push_back({{"arm", c.arms[a]},
                                  {"load", load_label(c, l, "all")},
                                  {"pct", c.metrics[i].name.substr(g.what.size() + 1)},
                                  {"series", c.arms[a] + " " + c.metrics[i].name},
                                  {"value", num(cell.s.amean)},
                                  {"min", num(cell.s.min)},
                                  {"max", num(cell.s.max)},
                                  {"n", cell.s.samples.size()}});
            }
    }
    return {
        {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
        {"title",
         {{"text", fmt::format("{}: {} latency percentiles per load", c.amd_test, g.what)},
          {"subtitle", "as the benchmark reports them; mean of the runs (log scale)"}}},
        {"width", 460},
        {"height", 260},
        {"data", {{"values", values}}},
        {"mark", {{"type", "line"}, {"point", {{"filled", true}, {"size", 50}}}}},
        {"encoding",
         {{"x", load_x(c, load_order)},
          {"y",
           {{"field", "value"},
            {"type", "quantitative"},
            {"scale", {{"type", "log"}}},
            {"axis", {{"format", "~g"}}},
            {"title", fmt::format("{} latency ({})", g.what, g.unit)}}},
          {"color", arm_colour(c)},
          {"strokeDash",
           {{"field", "pct"},
            {"type", "nominal"},
            {"scale", {{"domain", pcts}}},
            {"legend", {{"orient", "top"}, {"title", "percentile"}}}}},
          {"shape", // one legend with the dashes: a shape per percentile too
           {{"field", "pct"},
            {"type", "nominal"},
            {"scale", {{"domain", pcts}}},
            {"legend", {{"orient", "top"}, {"title", "percentile"}}}}},
          {"detail", {{"field", "series"}}},
          {"tooltip", ojson::array({{{"field", "arm"}},
                                    {{"field", "load"}},
                                    {{"field", "pct"}, {"title", "percentile"}},
                                    {{"field", "value"}, {"title", "mean"}, {"format", ".4~g"}},
                                    {{"field", "min"}, {"format", ".4~g"}},
                                    {{"field", "max"}, {"format", ".4~g"}},
                                    {{"field", "n"}, {"title", "runs"}}})}}},
    };
}

/// Counters charted in the report (when non-zero); the text table has them all.
bool charted_counter(const std::string& idle_type, const std::string& counter)
{
    if (idle_type == "any")
        return counter == "alb_pushed" || counter == "ttwu_wake_remote" ||
               counter == "ttwu_move_affine";
    return counter == "lb_count" || counter == "lb_failed" || counter == "lb_gained" ||
           counter == "fbg_count";
}

struct schedstat_chart_key {
    std::string idle_type, counter;
};

std::vector<schedstat_chart_key> schedstat_charts(const comparison& c)
{
    std::vector<schedstat_chart_key> keys;
    for (const schedstat_row& r : c.schedstat) {
        if (!charted_counter(r.idle_type, r.counter))
            continue;
        bool nonzero = false;
        for (double v : r.mean)
            nonzero |= std::isfinite(v) && v != 0;
        if (!nonzero)
            continue;
        bool seen = false;
        for (const auto& k : keys)
            seen |= k.idle_type == r.idle_type && k.counter == r.counter;
        if (!seen)
            keys.push_back({r.idle_type, r.counter});
    }
    return keys;
}

ojson schedstat_chart(const comparison& c, const schedstat_chart_key& k)
{
    ojson values = ojson::array(), domains = ojson::array(), loads = ojson::array();
    for (std::size_t l = 0; l < c.loads.size(); ++l)
        loads.push_back(load_label(c, l, "all"));
    // Only the domain levels where the counter is non-zero in some arm at some load: a level
    // of zeros is an empty facet ("0.000000" axes) and says nothing the text table does not.
    std::vector<std::string> nonzero;
    for (const schedstat_row& r : c.schedstat)
        if (r.idle_type == k.idle_type && r.counter == k.counter)
            for (double v : r.mean)
                if (std::isfinite(v) && v != 0 &&
                    std::find(nonzero.begin(), nonzero.end(), r.domain) == nonzero.end())
                    nonzero.push_back(r.domain);
    for (const schedstat_row& r : c.schedstat) {
        if (r.idle_type != k.idle_type || r.counter != k.counter ||
            std::find(nonzero.begin(), nonzero.end(), r.domain) == nonzero.end())
            continue;
        if (std::find(domains.begin(), domains.end(), ojson(r.domain)) == domains.end())
            domains.push_back(r.domain);
        for (std::size_t a = 0; a < c.arms.size(); ++a)
            values.push_back({{"domain", r.domain},
                              {"load", r.load.empty() ? "all" : r.load},
                              {"arm", c.arms[a]},
                              {"value", num(r.mean[a])}});
    }
    return {
        {"$schema", "https://vega.github.io/schema/vega-lite/v6.json"},
        {"title",
         fmt::format("schedstat {} {} per domain level (mean per run)", k.idle_type, k.counter)},
        {"data", {{"values", values}}},
        {"facet",
         {{"field", "domain"}, {"type", "nominal"}, {"sort", domains}, {"title", nullptr}}},
        {"columns", 4},
        {"spec",
         {{"width", 170},
          {"height", 140},
          {"mark", {{"type", "line"}, {"point", true}}},
          {"encoding",
           {{"x", load_x(c, loads)},
            {"y",
             {{"field", "value"},
              {"type", "quantitative"},
              {"scale", {{"type", "symlog"}, {"zero", false}}},
              {"axis", {{"tickCount", 4}, {"format", "~s"}, {"labelOverlap", true}}},
              {"title", k.counter}}},
            {"color", arm_colour(c)},
            {"tooltip", ojson::array({{{"field", "arm"}},
                                      {{"field", "domain"}},
                                      {{"field", "load"}},
                                      {{"field", "value"}, {"format", ",.1f"}}})}}}}},
        {"resolve", {{"scale", {{"y", "independent"}}}}},
    };
}

/* The page's head: its title, style and the chart libraries (d3 for a timeline). */
std::string html_head(const std::string& title, const chart_libraries& libs, bool with_d3)
{
    std::string h;
    h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    h += "<title>" + html_escape(title) + "</title>\n";
    h += "<style>\n"
         "body{font-family:sans-serif;margin:2em;max-width:1100px}\n"
         "pre{background:#f6f6f6;padding:0.8em;overflow-x:auto;font-size:12px}\n"
         "table.prov{border-collapse:collapse;font-size:13px}\n"
         "table.prov td,table.prov th{border:1px solid #ccc;padding:3px 8px;text-align:left;"
         "vertical-align:top}\n"
         ".chart{margin:1em 0}\n"
         "</style>\n";
    // First, so that an error in the libraries or the charts' code is recorded too.
    h += "<script>window.addEventListener('error', function (e) {\n"
         "  document.documentElement.setAttribute('data-script-error', String(e.message));\n"
         "});</script>\n";
    h += "<script>" + script_safe(libs.vega) + "</script>\n";
    h += "<script>" + script_safe(libs.vega_lite) + "</script>\n";
    h += "<script>" + script_safe(libs.vega_embed) + "</script>\n";
    if (with_d3)
        h += "<script>" + script_safe(libs.d3) + "</script>\n";
    h += "</head>\n";
    return h;
}

/* Each arm's kernel, features, seeds and machine, and the comparison's warnings. */
std::string provenance_section(const comparison& c)
{
    std::string h;
    h += "<section id=\"provenance\">\n<h2>Provenance</h2>\n<table class=\"prov\">\n";
    h += "<tr><th>arm</th><th>runs</th><th>kernel</th><th>features changed</th><th>seeds</th>"
         "<th>schedlab</th><th>machine</th></tr>\n";
    for (std::size_t a = 0; a < c.arms.size(); ++a) {
        const run_provenance& p = c.arm_provenance[a];
        h += fmt::format("<tr><td>{}{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>from {}</td>"
                         "<td>{} (git {})</td><td>{} ({} CPUs)</td></tr>\n",
                         html_escape(c.arms[a]), a == 0 ? " (baseline)" : "", c.runs_per_arm[a],
                         html_escape(p.kernel_base), p.policy,
                         html_escape(p.feature_delta.empty() ? "-" : p.feature_delta), p.seed,
                         html_escape(p.schedlab_version), html_escape(p.git_sha),
                         html_escape(p.machine), p.nr_cpus);
    }
    h += "</table>\n";
    h += "<details><summary>Effective features per arm</summary>\n<pre>";
    for (std::size_t a = 0; a < c.arms.size(); ++a)
        h += html_escape(c.arms[a] + ": " + c.arm_provenance[a].features) + "\n";
    h += "</pre></details>\n";
    for (const std::string& w : c.warnings)
        h += "<p class=\"warning\">Warning: " + html_escape(w) + "</p>\n";
    h += "</section>\n";
    return h;
}

/*
 * The chart placeholders, numbered in the order of the specs: the metrics, the benchmark's
 * percentiles, the scheduler distributions, the timeline, the schedstat charts.
 */
std::string chart_sections(const comparison& c, std::size_t nr_percentiles,
                           std::size_t nr_distributions, std::size_t nr_schedstat,
                           const timeline* tl)
{
    std::string h;
    h += "<section id=\"charts\">\n<h2>Benchmark metrics</h2>\n";
    if (c.arms.size() > 1)
        h += "<p>Per metric, first the change of each arm against the baseline (" +
             html_escape(c.arms[0]) +
             ") per load: pct imp as in the AMD table (positive = better), bars the 95% "
             "interval of the difference of the means from the runs (Welch, over the "
             "baseline's mean), * where the mmtests table stars the row. Below it the mean of "
             "the runs per arm and load; bars: &#177; one sample standard deviation (the CV of "
             "the AMD table).</p>\n";
    else
        h += "<p>Mean of the runs per load; bars: &#177; one sample standard deviation (the CV "
             "of the AMD table).</p>\n";
    std::size_t chart = 0;
    for (std::size_t i = 0; i < c.metrics.size(); ++i) {
        h += fmt::format("<h3>{}</h3>\n", html_escape(c.metrics[i].name));
        if (c.arms.size() > 1)
            h += fmt::format("<div class=\"chart change\" id=\"chart-{}\"></div>\n", chart++);
        h += fmt::format("<div class=\"chart\" id=\"chart-{}\"></div>\n", chart++);
    }
    h += "</section>\n";

    if (nr_percentiles > 0) {
        h += "<section id=\"percentiles\">\n<h2>The benchmark's latency percentiles</h2>\n"
             "<p>As the benchmark prints them, per load: the mean of the runs, one line per arm "
             "and percentile, on a log axis.</p>\n";
        for (std::size_t i = 0; i < nr_percentiles; ++i)
            h += fmt::format("<div class=\"chart percentiles\" id=\"chart-{}\"></div>\n",
                             chart++);
        h += "</section>\n";
    }

    h += "<section id=\"distributions\">\n<h2>Scheduler distributions</h2>\n";
    if (nr_distributions == 0) {
        h += "<p>The runs carry no distributions (result files written before they were "
             "kept).</p>\n";
    } else {
        h += "<p>From the tracepoints of every run of an arm at the chosen load, summed: the "
             "cumulative fraction of samples up to each value, on a log axis (histogram buckets "
             "of 16 per octave, so a value is placed within 6.25 %; the max is exact).</p>\n";
        for (std::size_t i = 0; i < nr_distributions; ++i)
            h += fmt::format("<div class=\"chart distribution\" id=\"chart-{}\"></div>\n",
                             chart++);
    }
    h += "</section>\n";

    if (tl)
        h += timeline_section(*tl);

    h += "<section id=\"schedstat\">\n<h2>Schedstat differences</h2>\n";
    if (c.schedstat.empty()) {
        h += "<p>The runs carry no schedstat counters.</p>\n";
    } else {
        h += "<p>Load-balance counters summed over CPUs per domain level, mean per run "
             "(/proc/schedstat v15 fields; fbg_count = find_busiest_group() calls).</p>\n";
        for (std::size_t i = 0; i < nr_schedstat; ++i)
            h += fmt::format("<div class=\"chart\" id=\"chart-{}\"></div>\n", chart++);
        h += "<details><summary>Every counter</summary>\n<pre>" + html_escape(render_schedstat(c)) +
             "</pre></details>\n";
    }
    h += "</section>\n";
    return h;
}

/* The text tables (mmtests, AMD, lkp) and the provenance, as the terminal prints them. */
std::string tables_section(const comparison& c)
{
    std::string h;
    h += "<section id=\"tables\">\n<h2>Tables</h2>\n";
    h += "<h3>mmtests compare-kernels</h3>\n<pre>" + html_escape(render_mmtests(c)) + "</pre>\n";
    h += "<h3>AMD norm [pct imp](CV)</h3>\n<pre>" + html_escape(render_amd(c)) + "</pre>\n";
    h += "<h3>lkp %stddev %change %stddev</h3>\n<pre>" + html_escape(render_lkp(c)) + "</pre>\n";
    h += "<pre>" + html_escape(render_provenance(c)) + "</pre>\n";
    h += "</section>\n";
    return h;
}

/* The specs and the code that embeds them, recording on the page what rendered. */
std::string embed_charts(const ojson& specs)
{
    std::string h;
    h += "<script type=\"application/json\" id=\"chart-specs\">" + script_safe(specs.dump()) +
         "</script>\n";
    h += "<script>\n"
         "(function () {\n"
         "  var specs = JSON.parse(document.getElementById('chart-specs').textContent);\n"
         "  Promise.all(specs.map(function (spec, i) {\n"
         "    return vegaEmbed('#chart-' + i, spec, {renderer: 'svg', actions: false});\n"
         "  })).then(function () {\n"
         "    // every chart draws its data as points: a chart without one drew no data\n"
         "    var empty = [];\n"
         "    specs.forEach(function (spec, i) {\n"
         "      var el = document.getElementById('chart-' + i);\n"
         "      if (!el.querySelector('g.mark-symbol.role-mark > path'))\n"
         "        empty.push('chart-' + i);\n"
         "    });\n"
         "    var tl = document.getElementById('timeline');\n"
         "    if (tl && tl.getAttribute('data-drawn') === '0')\n"
         "      empty.push('timeline');\n"
         "    document.body.setAttribute('data-empty-charts', empty.join(' '));\n"
         "    document.body.setAttribute('data-charts-rendered', String(specs.length));\n"
         "    document.title += ' (rendered)';\n"
         "  }).catch(function (e) {\n"
         "    document.body.setAttribute('data-chart-error', String(e));\n"
         "  });\n"
         "})();\n"
         "</script>\n";
    return h;
}

} // namespace

chart_libraries load_chart_libraries()
{
    return {read_library("vega/build/vega.min.js"),
            read_library("vega-lite/build/vega-lite.min.js"),
            read_library("vega-embed/build/vega-embed.min.js"), read_library("d3/dist/d3.min.js")};
}

int html_chart_count(const comparison& c)
{
    const std::size_t per_metric = c.arms.size() > 1 ? 2 : 1; // the A/B change, the absolute
    std::size_t dist = 0;
    for (const distribution_kind& k : distribution_kinds)
        dist += has_distribution(c, k) ? 1 : 0;
    return static_cast<int>(per_metric * c.metrics.size() + percentile_groups(c).size() + dist +
                            schedstat_charts(c).size());
}

std::string render_html(const comparison& c, const chart_libraries& libs, const timeline* tl)
{
    ojson specs = ojson::array();
    for (const metric_comparison& m : c.metrics) {
        if (c.arms.size() > 1)
            specs.push_back(change_chart(c, m));
        specs.push_back(metric_chart(c, m));
    }
    const std::vector<percentile_group> pct_groups = percentile_groups(c);
    for (const percentile_group& g : pct_groups)
        specs.push_back(percentile_chart(c, g));
    std::vector<const distribution_kind*> dists;
    for (const distribution_kind& k : distribution_kinds)
        if (has_distribution(c, k)) {
            dists.push_back(&k);
            specs.push_back(distribution_chart(c, k));
        }
    const std::vector<schedstat_chart_key> ss_keys = schedstat_charts(c);
    for (const auto& k : ss_keys)
        specs.push_back(schedstat_chart(c, k));

    // one arm, one load, one run: the page of `schedlab run --html`
    const bool one_run =
        c.arms.size() == 1 && c.loads.size() == 1 && c.runs_per_arm == std::vector<int>{1};
    const std::string title = fmt::format("schedlab {}: {} on {}", one_run ? "run" : "compare",
                                          c.mmtests_name, c.arm_provenance.front().machine);
    std::string h = html_head(title, libs, tl != nullptr);
    h += fmt::format("<body data-charts-expected=\"{}\">\n", specs.size());
    h += "<h1>" + html_escape(title) + "</h1>\n";
    h += "<p>Benchmark: <code>" + html_escape(c.benchmark) + "</code></p>\n";
    h += provenance_section(c);
    h += chart_sections(c, pct_groups.size(), dists.size(), ss_keys.size(), tl);
    h += tables_section(c);
    h += embed_charts(specs);
    h += "</body>\n</html>\n";
    return h;
}

void write_html_report(output_file& f, const comparison& c, const timeline* tl)
{
    f.write(render_html(c, load_chart_libraries(), tl));
    f.commit();
}

void write_html_report(const std::string& path, const comparison& c, const timeline* tl)
{
    output_file f(path, "--html");
    write_html_report(f, c, tl);
}

} // namespace schedlab
