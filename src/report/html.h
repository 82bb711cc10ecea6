// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The HTML report: one self-contained file with the provenance, the three
 * text tables, per metric the A/B view (each arm's change against the
 * baseline per load: AMD's pct imp with a 95 % interval and mmtests'
 * significance star) above the absolute chart (statistic against load, one
 * line per arm, +- one standard deviation bars: the CV band) and, when the runs carry
 * them, charts of the schedstat counters per domain level. Charts are
 * Vega-Lite specifications rendered by vega-embed; the three libraries
 * (npm packages vega, vega-lite, vega-embed) are inlined, so the file needs
 * no network. When every chart has rendered, the page sets
 * <body data-charts-rendered="N"> and the title gains " (rendered)", and
 * data-empty-charts lists the charts that drew no point or line; on a
 * failure, data-chart-error holds the message, and any script error is in
 * <html data-script-error>. A page with a timeline (one run's, timeline_html.h)
 * marks the drawing with data-drawn (what was drawn, 0: nothing) and data-mode (cpu, llc)
 * on <div id="timeline">, and an empty one is listed in data-empty-charts as "timeline".
 * The distributions (wakeup-to-run latency and run length, CDFs per arm at a chosen load)
 * and the benchmark's own latency percentiles per load are charts like the others.
 */
#include "analysis/compare.h"
#include "metrics/timeline.h"
#include "sim/file_io.h"

#include <string>

namespace schedlab {

/// The JavaScript of the charting libraries, built into the binary.
struct chart_libraries {
    std::string vega, vega_lite, vega_embed;
    std::string d3; ///< the timeline's scales, axis and zoom (inlined only with a timeline)
};

/*
 * The libraries as the build embedded them (npm packages vega, vega-lite and vega-embed at the
 * versions of package-lock.json; cmake/SchedlabAssets.cmake): no node_modules at run time.
 */
chart_libraries load_chart_libraries();

/// The number of charts render_html() draws for a comparison.
int html_chart_count(const comparison& c);

/// The page; with a timeline (timeline_html.h) it also has the per-CPU timeline of that run.
std::string render_html(const comparison& c, const chart_libraries& libs,
                        const timeline* tl = nullptr);

/// render_html + write (atomically); throws config_error("--html", ...) when the file cannot
/// be written.
void write_html_report(const std::string& path, const comparison& c, const timeline* tl = nullptr);
/// ... into an output file opened earlier, and commits it.
void write_html_report(output_file& f, const comparison& c, const timeline* tl = nullptr);

} // namespace schedlab
