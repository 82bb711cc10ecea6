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
    // 2 metrics + schedstat charts: newly_idle lb_count and any ttwu_move_affine
    // (busy lb_balanced is left to the text table)
    EXPECT_EQ(html_chart_count(c), 4);
    const std::string html = render_html(c, {"/*vega*/", "/*vl*/", "/*embed*/"});
    EXPECT_THAT(html, HasSubstr("<body data-charts-expected=\"4\">"));
    EXPECT_THAT(html, HasSubstr("B&lt;&amp;&gt;"));
    EXPECT_EQ(count(html, "<script src"), 0u); // nothing loaded from elsewhere
    EXPECT_EQ(count(html, "class=\"chart\""), 4u);
    EXPECT_THAT(html, HasSubstr("Amean     1"));
    EXPECT_THAT(html, HasSubstr("Test          : hackbench time"));
    // a "</" inside inlined script text cannot close the element
    const std::string js = render_html(c, {"var s = '</SCRIPT>'; var r = /</g;", "", ""});
    EXPECT_THAT(js, HasSubstr("var s = '<\\/SCRIPT>'; var r = /</g;"));
}

TEST(render_html, every_chart_renders_in_headless_chromium)
{
    const comparison c = sample_comparison();
    const std::string dir = ::testing::TempDir();
    const std::string path = dir + "/schedlab-report-test.html";
    write_html_report(path, c); // the chart libraries are built in: no node_modules needed

    int status = 0;
    run_command("command -v chromium >/dev/null 2>&1", status);
    ASSERT_EQ(status, 0) << "Debian's chromium is needed for this test: scripts/install-deps.sh "
                            "installs it";
    char profile_tmpl[] = "/tmp/schedlab-chromium-XXXXXX";
    ASSERT_NE(mkdtemp(profile_tmpl), nullptr);
    const std::string cmd =
        std::string("chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--disable-dev-shm-usage --virtual-time-budget=20000 --user-data-dir=") +
        profile_tmpl + " --dump-dom file://" + path + " 2>/dev/null";
    const std::string dom = run_command(cmd, status);
    run_command(std::string("rm -rf ") + profile_tmpl, status);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    const std::size_t err = dom.find("data-chart-error=\"");
    EXPECT_EQ(err, std::string::npos) << dom.substr(err == std::string::npos ? 0 : err, 300);
    EXPECT_NE(dom.find("data-charts-rendered=\"4\""), std::string::npos) << "charts did not render";
    EXPECT_NE(dom.find("(rendered)</title>"), std::string::npos);
    // one SVG scene graph per chart
    EXPECT_EQ(count(dom, "class=\"marks\""), 4u);
    std::remove(path.c_str());
}

} // namespace
} // namespace schedlab
