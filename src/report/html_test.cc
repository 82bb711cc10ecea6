// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report opened in headless Chromium (Debian's chromium package):
 * every Vega-Lite chart must render (the page marks <body> with
 * data-charts-rendered="N" once every vega-embed promise resolved, and each
 * chart leaves an SVG with class "marks" in the DOM).
 */
#include "report/html.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

run_result sample_run(const std::string& arm, const std::string& load, double value, int idx)
{
    run_result r;
    r.provenance.machine = "testbox";
    r.provenance.nr_cpus = 8;
    r.provenance.kernel_spec = arm;
    r.provenance.kernel_base = "6.6";
    r.provenance.policy = "EEVDF";
    r.provenance.schedlab_version = "0.1.0";
    r.provenance.git_sha = "abc";
    r.provenance.argv = {"perf", "bench", "sched", "messaging", "-g", load, "-p"};
    r.arm = arm;
    r.load = load;
    r.run_index = idx;
    r.finished = true;
    r.metrics = {{"time", "s", value, false}, {"ops", "ops/s", 1000 / value, true}};
    const double scale = arm == "B<&>" ? 3 : 1; // an arm name that needs escaping
    r.schedstat = std::vector<schedstat_counter>{
        {"SMT", "newly_idle", "lb_count", 100 * scale + idx},
        {"MC", "newly_idle", "lb_count", 50 * scale * std::stod(load)},
        {"MC", "busy", "lb_balanced", 7},
        {"MC", "any", "ttwu_move_affine", 3 * scale}};
    return r;
}

comparison sample_comparison()
{
    std::vector<run_result> runs;
    for (const char* load : {"1", "2", "4"})
        for (int i = 0; i < 3; ++i) {
            runs.push_back(sample_run("A", load, std::stod(load) * (1.0 + 0.01 * i), i));
            runs.push_back(sample_run("B<&>", load, std::stod(load) * (0.9 + 0.02 * i), i));
        }
    return compare_runs(runs);
}

std::string run_command(const std::string& cmd, int& status)
{
    FILE* f = popen(cmd.c_str(), "r");
    std::string out;
    if (!f) {
        status = -1;
        return out;
    }
    std::array<char, 65536> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
        out.append(buf.data(), n);
    status = pclose(f);
    return out;
}

std::size_t count(const std::string& s, const std::string& what)
{
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
        ++n;
    return n;
}

TEST(render_html, is_self_contained_and_escapes_names)
{
    const comparison c = sample_comparison();
    // 2 metrics, each an A/B change chart above the absolute one, + schedstat charts:
    // newly_idle lb_count and any ttwu_move_affine (busy lb_balanced is left to the text table)
    EXPECT_EQ(html_chart_count(c), 6);
    const std::string html = render_html(c, {"/*vega*/", "/*vl*/", "/*embed*/"});
    EXPECT_THAT(html, HasSubstr("<body data-charts-expected=\"6\">"));
    EXPECT_THAT(html, HasSubstr("B&lt;&amp;&gt;"));
    EXPECT_EQ(count(html, "<script src"), 0u); // nothing loaded from elsewhere
    EXPECT_EQ(count(html, "class=\"chart"), 6u);
    EXPECT_EQ(count(html, "class=\"chart change\""), 2u);
    // the change chart comes before the absolute chart of its metric
    EXPECT_LT(html.find("chart change\" id=\"chart-0\""), html.find("id=\"chart-1\""));
    EXPECT_THAT(html, HasSubstr("Amean     1"));
    EXPECT_THAT(html, HasSubstr("Test          : hackbench time"));
    // a "</" inside inlined script text cannot close the element
    const std::string js = render_html(c, {"var s = '</SCRIPT>'; var r = /</g;", "", ""});
    EXPECT_THAT(js, HasSubstr("var s = '<\\/SCRIPT>'; var r = /</g;"));
}

/// The DOM of the page at `path` after headless Chromium ran its scripts; "" on failure.
std::string dom_in_chromium(const std::string& path)
{
    int status = 0;
    run_command("command -v chromium >/dev/null 2>&1", status);
    if (status != 0) {
        ADD_FAILURE() << "Debian's chromium is needed for this test: scripts/install-deps.sh "
                         "installs it";
        return "";
    }
    char profile_tmpl[] = "/tmp/schedlab-chromium-XXXXXX";
    if (!mkdtemp(profile_tmpl)) {
        ADD_FAILURE() << "mkdtemp";
        return "";
    }
    const std::string cmd =
        std::string("chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--disable-dev-shm-usage --virtual-time-budget=20000 --user-data-dir=") +
        profile_tmpl + " --dump-dom file://" + path + " 2>/dev/null";
    const std::string dom = run_command(cmd, status);
    run_command(std::string("rm -rf ") + profile_tmpl, status);
    return dom;
}

std::string attribute(const std::string& dom, const std::string& name)
{
    const std::size_t at = dom.find(name + "=\"");
    if (at == std::string::npos)
        return "(none)";
    const std::size_t from = at + name.size() + 2;
    return dom.substr(from, dom.find('"', from) - from);
}

TEST(render_html, every_chart_renders_in_headless_chromium)
{
    const comparison c = sample_comparison();
    const std::string path = ::testing::TempDir() + "/schedlab-report-test.html";
    write_html_report(path, c); // the chart libraries are built in: no node_modules needed
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-chart-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-charts-rendered"), "6") << "charts did not render";
    EXPECT_NE(dom.find("(rendered)</title>"), std::string::npos);
    // every chart drew points or lines (data-empty-charts names those that did not)
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "");
    // one SVG scene graph per chart
    EXPECT_EQ(count(dom, "class=\"marks\""), 6u);
    std::remove(path.c_str());
}

// The checks above can fail: a chart with no data and an error in a script are both reported.
TEST(render_html, an_empty_chart_and_a_script_error_are_reported)
{
    comparison c = sample_comparison();
    for (auto& row : c.metrics[1].cells) // "ops": no mean to draw in either chart
        for (arm_cell& cell : row)
            cell.s.amean = cell.amd_pct_imp = std::nan("");
    chart_libraries libs = load_chart_libraries();
    libs.vega_embed += "\n;(function () { throw new Error('injected'); })();\n";
    const std::string path = ::testing::TempDir() + "/schedlab-report-broken.html";
    {
        std::ofstream f(path);
        f << render_html(c, libs);
    }
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_THAT(attribute(dom, "data-script-error"), HasSubstr("injected"));
    // charts 2 and 3 are ops' change and absolute charts
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "chart-2 chart-3");
    if (!::testing::Test::HasFailure())
        std::remove(path.c_str());
}

} // namespace
} // namespace schedlab
