// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report opened in headless Chromium (Debian's chromium package):
 * every Vega-Lite chart must render (the page marks <body> with
 * data-charts-rendered="N" once every vega-embed promise resolved, and each
 * chart leaves an SVG with class "marks" in the DOM).
 */
#include "report/html.h"

#include "metrics/histogram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <regex>
#include <string_view>

#include <sys/wait.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

run_result sample_html_run(const std::string& arm, const std::string& load, double value, int idx)
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
    // distributions: latencies from 1 us, run lengths from 20 us, the second arm's longer
    log_histogram wakeup, run;
    for (u64 i = 1; i <= 2000; ++i) {
        wakeup.add(static_cast<u64>(1000 + scale * static_cast<double>(i * i)));
        run.add(static_cast<u64>(20000 + scale * 40 * static_cast<double>(i)));
    }
    r.summary.wakeup_latency_hist = wakeup.buckets(summary_histogram_sub_bits);
    r.summary.wakeup_latency_max_ns = wakeup.max();
    r.summary.run_length_hist = run.buckets(summary_histogram_sub_bits);
    r.summary.run_length_max_ns = run.max();
    return r;
}

comparison sample_comparison()
{
    std::vector<run_result> runs;
    for (const char* load : {"1", "2", "4"})
        for (int i = 0; i < 3; ++i) {
            runs.push_back(sample_html_run("A", load, std::stod(load) * (1.0 + 0.01 * i), i));
            runs.push_back(sample_html_run("B<&>", load, std::stod(load) * (0.9 + 0.02 * i), i));
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
    // 2 metrics, each an A/B change chart above the absolute one, the 2 distributions, +
    // schedstat charts: newly_idle lb_count and any ttwu_move_affine (busy lb_balanced is left
    // to the text table)
    EXPECT_EQ(html_chart_count(c), 8);
    const std::string html = render_html(c, {"/*vega*/", "/*vl*/", "/*embed*/", "/*d3*/"});
    EXPECT_THAT(html, HasSubstr("<body data-charts-expected=\"8\">"));
    EXPECT_THAT(html, HasSubstr("B&lt;&amp;&gt;"));
    EXPECT_EQ(count(html, "<script src"), 0u); // nothing loaded from elsewhere
    EXPECT_EQ(count(html, "/*d3*/"), 0u);      // d3 only with a timeline
    EXPECT_EQ(count(html, "class=\"chart"), 8u);
    EXPECT_EQ(count(html, "class=\"chart distribution\""), 2u);
    EXPECT_EQ(count(html, "class=\"chart change\""), 2u);
    // the change chart comes before the absolute chart of its metric
    EXPECT_LT(html.find("chart change\" id=\"chart-0\""), html.find("id=\"chart-1\""));
    EXPECT_THAT(html, HasSubstr("Amean     1"));
    EXPECT_THAT(html, HasSubstr("Test          : hackbench time"));
    // a "</" inside inlined script text cannot close the element
    const std::string js = render_html(c, {"var s = '</SCRIPT>'; var r = /</g;", "", "", ""});
    EXPECT_THAT(js, HasSubstr("var s = '<\\/SCRIPT>'; var r = /</g;"));
}

// Results written before the distributions were kept: no distribution charts, and the page
// says why.
TEST(render_html, results_without_distributions_draw_none)
{
    std::vector<run_result> runs;
    for (int i = 0; i < 2; ++i)
        for (const char* arm : {"A", "B"}) {
            run_result r = sample_html_run(arm, "1", 1 + i, i);
            r.summary.wakeup_latency_hist.clear();
            r.summary.run_length_hist.clear();
            runs.push_back(r);
        }
    const comparison c = compare_runs(runs);
    EXPECT_EQ(html_chart_count(c), 6); // 2 metrics x 2, 2 schedstat
    const std::string html = render_html(c, {"", "", "", ""});
    EXPECT_THAT(html, HasSubstr("The runs carry no distributions"));
    EXPECT_EQ(count(html, "class=\"chart distribution\""), 0u);
}

/// `make test-asan` sets SCHEDLAB_SKIP_BROWSER=1 for its `ctest`: the browser tests below then
/// render their page (our code, which runs under the sanitizers there) and skip the step that
/// opens it in headless Chromium or takes its screenshot (Chromium is not our code and is not
/// instrumented). `make test` (the Release stage of CI) runs them whole. True when it is set
/// (and not "0"); then removes `paths`, the pages the test wrote.
bool skip_browser_step(std::initializer_list<std::string> paths)
{
    const char* v = std::getenv("SCHEDLAB_SKIP_BROWSER");
    if (!v || !*v || std::string_view(v) == "0")
        return false;
    for (const std::string& p : paths)
        std::remove(p.c_str());
    return true;
}

constexpr const char* browser_skipped =
    "the page rendered; its Chromium step is skipped (SCHEDLAB_SKIP_BROWSER, which make test-asan "
    "sets; make test runs it)";

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
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-chart-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-charts-rendered"), "8") << "charts did not render";
    EXPECT_NE(dom.find("(rendered)</title>"), std::string::npos);
    // every chart drew points or lines (data-empty-charts names those that did not)
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "");
    // one SVG scene graph per chart
    EXPECT_EQ(count(dom, "class=\"marks\""), 8u);
    // the distributions' load picker
    EXPECT_NE(dom.find("<select"), std::string::npos);
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
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_THAT(attribute(dom, "data-script-error"), HasSubstr("injected"));
    // charts 2 and 3 are ops' change and absolute charts
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "chart-2 chart-3");
    if (!::testing::Test::HasFailure())
        std::remove(path.c_str());
}

// The benchmark's own latency percentiles (schbench's wakeup_p50/p99 in us) get a chart per load.
TEST(render_html, latency_percentiles_per_load_render)
{
    std::vector<run_result> runs;
    for (const char* load : {"1", "4", "16"})
        for (int i = 0; i < 2; ++i)
            for (const char* arm : {"A", "B"}) {
                run_result r = sample_html_run(arm, load, 1, i);
                const double l = std::stod(load), b = arm[0] == 'B' ? 0.8 : 1.0;
                r.metrics = {{"wakeup_p50", "us", b * 3 * l + i, false},
                             {"wakeup_p99", "us", b * 40 * l + i, false},
                             {"rps_p50", "requests/s", 1000 * l, true}};
                runs.push_back(r);
            }
    const comparison c = compare_runs(runs);
    // 3 metrics x (change + absolute), 1 percentile chart (rps_p50 is no latency), 2 dists, 2
    EXPECT_EQ(html_chart_count(c), 11);
    const std::string path = ::testing::TempDir() + "/schedlab-report-pct.html";
    write_html_report(path, c);
    const std::string html = [&] {
        std::ifstream f(path);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }();
    EXPECT_EQ(count(html, "class=\"chart percentiles\""), 1u);
    EXPECT_THAT(html, HasSubstr("hackbench: wakeup latency percentiles per load"));
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-charts-rendered"), "11");
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "");
    std::remove(path.c_str());
}

/// A timeline of `nr_cpus` CPUs in LLCs of 8 over 2 nodes: every CPU runs `runs` tasks in turn
/// with gaps idle in C-states 0, 1, 2 in turn, each run woken from the next CPU, some migrated.
timeline sample_timeline(int nr_cpus, int runs)
{
    timeline t;
    t.from = 1'000'000;
    t.to = t.from + static_cast<sim_time>(runs) * 10'000;
    t.title = "testbox <&>";
    t.slices.resize(static_cast<std::size_t>(nr_cpus));
    t.idle.resize(static_cast<std::size_t>(nr_cpus));
    for (int cpu = 0; cpu < nr_cpus; ++cpu) {
        t.cpu_llc.push_back(cpu / 8);
        t.cpu_node.push_back(cpu < nr_cpus / 2 ? 0 : 1);
        for (int i = 0; i < runs; ++i) {
            const sim_time start = t.from + i * 10'000 + (cpu % 7) * 300;
            const int pid = 100 + (cpu * 3 + i) % 50;
            t.slices[static_cast<std::size_t>(cpu)].push_back({start, start + 6'000, pid});
            t.comms[pid] = "task" + std::to_string(pid);
            t.idle[static_cast<std::size_t>(cpu)].push_back(
                {start + 6'000, start + 10'000, static_cast<u32>(i % 3)});
        }
    }
    for (int i = 0; i < runs; ++i)
        for (int cpu = 0; cpu < std::min(nr_cpus, 4); ++cpu) {
            const sim_time run = t.from + i * 10'000 + (cpu % 7) * 300;
            t.wakeups.push_back({run - 2'000, (cpu + 1) % nr_cpus, run, cpu, 100 + cpu});
        }
    for (int i = 0; i < runs; i += 3)
        t.migrations.push_back({t.from + i * 10'000 + 100, 100, 1, 0});
    return t;
}

std::string render_timeline_page(const timeline& t, const std::string& name)
{
    const std::string path = ::testing::TempDir() + "/" + name;
    write_html_report(path, sample_comparison(), &t);
    return path;
}

// The per-CPU timeline draws on a canvas: runs, wakeup arrows and migrations per CPU.
TEST(render_html, the_timeline_draws_cpu_rows_in_headless_chromium)
{
    const std::string path = render_timeline_page(sample_timeline(16, 40), "schedlab-tl.html");
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-charts-rendered"), "8");
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "");
    EXPECT_EQ(attribute(dom, "data-mode"), "cpu");
    // 16 x 40 runs, 4 x 40 wakeups, 14 migrations: all in view, each drawn once
    EXPECT_EQ(attribute(dom, "data-drawn"), std::to_string(16 * 40 + 4 * 40 + 14));
    EXPECT_EQ(attribute(dom, "data-idle-drawn"), std::to_string(16 * 40)); // each gap, shaded
    EXPECT_THAT(dom, HasSubstr("testbox &lt;&amp;&gt;"));
    std::remove(path.c_str());
}

// 512 CPUs with 60 000 runs in view: the rows become LLCs, and what is drawn stays bounded by
// the pixels (64 LLC rows x the plot's width), not by the runs.
TEST(render_html, a_512_cpu_timeline_aggregates_to_llcs_when_zoomed_out)
{
    const std::string path = render_timeline_page(sample_timeline(512, 120), "schedlab-tl512.html");
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-mode"), "llc");
    const long drawn = std::stol(attribute(dom, "data-drawn"));
    EXPECT_GT(drawn, 0);
    EXPECT_LE(drawn, 64 * 1100);
    EXPECT_THAT(dom, HasSubstr("rows are LLCs"));
    std::remove(path.c_str());
}

// Zooming in with the wheel (d3's zoom) narrows the view until its runs fit the CPU rows.
TEST(render_html, zooming_in_on_a_512_cpu_timeline_shows_cpu_rows)
{
    const std::string path = render_timeline_page(sample_timeline(512, 120), "schedlab-tlz.html");
    std::string page;
    {
        std::ifstream f(path);
        page.assign(std::istreambuf_iterator<char>(f), {});
    }
    // after the page's own scripts: one wheel event over the plot, 2^10 times closer
    const std::string wheel =
        "<script>(function () {\n"
        "  var c = document.querySelector('#timeline canvas'), r = c.getBoundingClientRect();\n"
        "  document.body.setAttribute('data-mode-before',\n"
        "    document.getElementById('timeline').getAttribute('data-mode'));\n"
        "  c.dispatchEvent(new WheelEvent('wheel', {deltaY: -5000, clientX: r.left + 400,\n"
        "    clientY: r.top + 20, bubbles: true, cancelable: true, view: window}));\n"
        "})();</script>\n";
    page.insert(page.rfind("</body>"), wheel);
    {
        std::ofstream f(path);
        f << page;
    }
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-mode-before"), "llc");
    EXPECT_EQ(attribute(dom, "data-mode"), "cpu");
    EXPECT_GT(std::stol(attribute(dom, "data-drawn")), 0);
    std::remove(path.c_str());
}

/// scripts/report-screenshot.sh on a page; its exit status, and its stderr in `msg`.
int screenshot(const std::string& page, const std::string& section, const std::string& png,
               std::string& msg)
{
    int status = 0;
    msg =
        run_command(std::string("bash ") + SCHEDLAB_SOURCE_DIR + "/scripts/report-screenshot.sh " +
                        page + " " + section + " " + png + " 2>&1",
                    status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The screenshots of docs/compare.md: written for a page that rendered, refused (exit 1,
// no PNG) for one with a script error or a chart that drew nothing.
TEST(render_html, the_screenshot_script_refuses_a_broken_page)
{
    // the three pages: one that renders, one with a script error, a timeline that draws nothing
    const std::string good = render_timeline_page(sample_timeline(16, 40), "schedlab-shot.html");
    comparison c = sample_comparison();
    chart_libraries libs = load_chart_libraries();
    libs.vega_embed += "\n;(function () { throw new Error('injected'); })();\n";
    const std::string broken = ::testing::TempDir() + "/schedlab-shot-broken.html";
    {
        std::ofstream f(broken);
        f << render_html(c, libs);
    }
    timeline t = sample_timeline(4, 0);
    t.to = t.from + 1000;
    const std::string empty = render_timeline_page(t, "schedlab-shot-empty.html");
    if (skip_browser_step({good, broken, empty}))
        GTEST_SKIP() << browser_skipped;

    const std::string png = ::testing::TempDir() + "/schedlab-shot.png";
    std::string msg;
    for (const char* section : {"distributions", "timeline-section"}) {
        std::remove(png.c_str());
        EXPECT_EQ(screenshot(good, section, png, msg), 0) << section << ": " << msg;
        std::ifstream f(png, std::ios::binary);
        std::string bytes(std::istreambuf_iterator<char>(f), {});
        EXPECT_TRUE(bytes.starts_with("\x89PNG")) << section;
        EXPECT_GT(bytes.size(), 10000u) << section; // a chart, not a blank page
    }
    // a script error
    std::remove(png.c_str());
    EXPECT_EQ(screenshot(broken, "charts", png, msg), 1);
    EXPECT_THAT(msg, HasSubstr("a script failed: Uncaught Error: injected"));
    EXPECT_FALSE(std::ifstream(png).good());
    // a timeline that drew nothing
    EXPECT_EQ(screenshot(empty, "charts", png, msg), 1);
    EXPECT_THAT(msg, HasSubstr("drew nothing: timeline"));
    EXPECT_FALSE(std::ifstream(png).good());
    for (const std::string& p : {good, broken, empty})
        std::remove(p.c_str());
}

// A timeline with nothing in its window is reported as an empty chart.
TEST(render_html, an_empty_timeline_is_reported)
{
    timeline t = sample_timeline(4, 0);
    t.to = t.from + 1000;
    const std::string path = render_timeline_page(t, "schedlab-tl-empty.html");
    if (skip_browser_step({path}))
        GTEST_SKIP() << browser_skipped;
    const std::string dom = dom_in_chromium(path);
    ASSERT_FALSE(dom.empty()) << "chromium printed nothing";
    EXPECT_EQ(attribute(dom, "data-script-error"), "(none)");
    EXPECT_EQ(attribute(dom, "data-drawn"), "0");
    EXPECT_EQ(attribute(dom, "data-empty-charts"), "timeline");
    std::remove(path.c_str());
}

} // namespace
} // namespace schedlab
