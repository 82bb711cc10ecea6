// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The per-CPU timeline of one run in the HTML report: the data of a
 * metrics/timeline.h recording as JSON, and the page code that draws it on a
 * canvas (d3 from npm for the scales, the axis and zoom). CPUs are rows
 * grouped by NUMA node and LLC; tasks are coloured bars, the gaps idle;
 * wakeups are arrows from the waker's CPU at sched_waking to the wakee's CPU
 * at its switch-in; migrations are marked at their destination. Drawing is
 * bounded per view: runs narrower than a pixel are summed into the pixel, and
 * when the view holds more runs than a budget (zoomed out; 20 000, or 2 000 on
 * machines of more than 300 CPUs, whose CPU rows are 3 px) the rows are LLCs,
 * shaded by the fraction of their CPUs busy. Arrows and migration marks are
 * drawn when at most a bounded number is in view.
 */
#include "metrics/timeline.h"

#include <string>

namespace schedlab {

/// The <section id="timeline"> of a report: heading, controls, the canvas holder, the data
/// and the code (which needs d3 loaded before it). `html_escape`d text only.
std::string timeline_section(const timeline& t);

} // namespace schedlab
