// SPDX-License-Identifier: GPL-2.0-only
#include "report/timeline_html.h"

#include "report/html_util.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace schedlab {

namespace {

using ojson = nlohmann::ordered_json;

/*
 * The data, compact: times in ns from the window's start; per CPU a flat array of
 * (start, end, pid) runs; wakeups as flat (waking, waker cpu, run, run cpu, pid), sorted by
 * run; migrations as flat (ts, pid, orig, dest); cpus as (cpu, llc, node); per CPU a flat
 * array of (start, end, state) idle periods (power:cpu_idle).
 */
ojson timeline_json(const timeline& t)
{
    ojson cpus = ojson::array(), slices = ojson::array(), wakeups = ojson::array(),
          migrations = ojson::array(), comms = ojson::object(), idle = ojson::array();
    for (std::size_t cpu = 0; cpu < t.slices.size(); ++cpu) {
        cpus.push_back({cpu, cpu < t.cpu_llc.size() ? t.cpu_llc[cpu] : 0,
                        cpu < t.cpu_node.size() ? t.cpu_node[cpu] : 0});
        ojson runs = ojson::array();
        for (const timeline_slice& s : t.slices[cpu]) {
            runs.push_back(s.start - t.from);
            runs.push_back(s.end - t.from);
            runs.push_back(s.pid);
        }
        slices.push_back(std::move(runs));
        ojson periods = ojson::array();
        if (cpu < t.idle.size())
            for (const timeline_idle& p : t.idle[cpu]) {
                periods.push_back(p.start - t.from);
                periods.push_back(p.end - t.from);
                periods.push_back(p.state);
            }
        idle.push_back(std::move(periods));
    }
    for (const timeline_wakeup& w : t.wakeups)
        for (const s64 v : {w.waking - t.from, s64{w.waker_cpu}, w.run - t.from, s64{w.run_cpu},
                            s64{w.pid}})
            wakeups.push_back(v);
    for (const timeline_migration& m : t.migrations)
        for (const s64 v : {m.ts - t.from, s64{m.pid}, s64{m.orig_cpu}, s64{m.dest_cpu}})
            migrations.push_back(v);
    for (const auto& [pid, comm] : t.comms)
        comms[std::to_string(pid)] = comm;
    return {{"from", t.from}, {"span", t.to - t.from},     {"cut", t.cut},
            {"cpus", cpus},   {"slices", slices},          {"wakeups", wakeups},
            {"migrations", migrations}, {"comms", comms}, {"idle", idle}};
}

// The page code: d3 (npm) for the scales, the axis and zoom; drawing on a canvas. The axis and
// the hover text give simulated time (ms from the run's start, as --trace prints it in s).
constexpr const char* timeline_js = R"js(
(function () {
  'use strict';
  var root = document.getElementById('timeline');
  var D = JSON.parse(document.getElementById('timeline-data').textContent);
  var span = Math.max(1, D.span), nr = D.cpus.length;
  // runs in view beyond which the rows are LLCs (auto): fewer where CPU rows are 3 px high
  var SLICE_BUDGET = nr > 300 ? 2000 : 20000;
  var MARK_BUDGET = 1500; // wakeup arrows / migration marks drawn at most
  var order = D.cpus.map(function (c) { return c[0]; }).sort(function (a, b) {
    var x = D.cpus[a], y = D.cpus[b];
    return x[2] - y[2] || x[1] - y[1] || x[0] - y[0];
  });
  var rowOf = new Int32Array(nr);
  order.forEach(function (cpu, r) { rowOf[cpu] = r; });
  var llcs = [];
  order.forEach(function (cpu) {
    var c = D.cpus[cpu], g = llcs[llcs.length - 1];
    if (!g || g.llc !== c[1] || g.node !== c[2]) {
      g = {llc: c[1], node: c[2], cpus: [], row: llcs.length};
      llcs.push(g);
    }
    g.cpus.push(cpu);
  });
  var llcOf = new Int32Array(nr);
  llcs.forEach(function (g, i) { g.cpus.forEach(function (cpu) { llcOf[cpu] = i; }); });

  var gutter = 120;
  var width = Math.max(500, root.clientWidth || 1000), plotW = width - gutter - 24; // room for the last tick label
  var cpuRowH = Math.max(3, Math.min(14, Math.floor(640 / nr)));
  var llcRowH = Math.max(8, Math.min(22, Math.floor(640 / llcs.length)));

  var controls = d3.select(root).append('div').attr('class', 'timeline-controls');
  controls.append('label').text('rows ');
  var modeSel = controls.append('select').attr('id', 'timeline-rows');
  [['auto', 'auto (LLCs when zoomed out)'], ['cpu', 'CPUs'], ['llc', 'LLCs']].forEach(function (o) {
    modeSel.append('option').attr('value', o[0]).text(o[1]);
  });
  var reset = controls.append('button').text('reset zoom');
  var info = controls.append('span').attr('class', 'timeline-info');
  // idle periods by the C-state entered (power:cpu_idle; cpu_idle_state::state), pale under the runs
  var CSTATES = [['poll', '#f6e7b4'], ['C1', '#c7dcef'], ['deep C-state', '#8fb0d6']];
  function cstateName(s) { return s < CSTATES.length ? CSTATES[s][0] : 'state ' + s; }
  function cstateColour(s) { return CSTATES[Math.min(s, CSTATES.length - 1)][1]; }
  var legend = d3.select(root).append('div').attr('class', 'timeline-legend');
  legend.append('span').text('idle: ');
  CSTATES.concat([['no C-state recorded', '#f1f1f1']]).forEach(function (c) {
    var item = legend.append('span').attr('class', 'timeline-legend-item');
    item.append('span').attr('class', 'swatch')
        .style('display', 'inline-block').style('width', '12px').style('height', '10px')
        .style('margin', '0 4px 0 10px').style('border', '1px solid #999')
        .style('background', c[1]);
    item.append('span').text(c[0]);
  });
  var axisSvg = d3.select(root).append('svg').attr('width', width).attr('height', 28);
  var axisG = axisSvg.append('g').attr('transform', 'translate(0,26)');
  var canvas = d3.select(root).append('canvas').node();
  var note = d3.select(root).append('p').attr('class', 'timeline-note');
  var ctx = canvas.getContext('2d');
  var dpr = window.devicePixelRatio || 1;
  var x0 = d3.scaleLinear().domain([0, span]).range([0, plotW]);
  var xs = x0, mode = 'cpu', height = 0;

  var colours = new Map();
  function colour(pid) {
    var c = colours.get(pid);
    if (!c) {
      c = d3.interpolateSinebow((pid * 0.6180339887) % 1);
      colours.set(pid, c);
    }
    return c;
  }
  function comm(pid) { return (D.comms[pid] || '?') + '-' + pid; }
  // first run of a CPU (flat start, end, pid) that ends after t
  function firstEndingAfter(s, t) {
    var lo = 0, hi = s.length / 3;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (s[mid * 3 + 1] <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  function firstAtOrAfter(a, stride, off, t) {
    var lo = 0, hi = a.length / stride;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (a[mid * stride + off] < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  function runsInView(t0, t1) {
    var n = 0;
    for (var cpu = 0; cpu < nr; ++cpu) {
      var s = D.slices[cpu];
      n += firstAtOrAfter(s, 3, 0, t1) - firstEndingAfter(s, t0);
    }
    return n;
  }
  function resize(h) {
    if (h === height) return;
    height = h;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.width = width + 'px';
    canvas.style.height = h + 'px';
  }
  // the runs of one CPU in view: those a pixel or wider drawn, narrower ones summed per pixel
  function eachRun(cpu, t0, t1, wide, narrow) {
    var s = D.slices[cpu];
    for (var i = firstEndingAfter(s, t0); i * 3 < s.length && s[i * 3] < t1; ++i) {
      var a = Math.max(0, xs(s[i * 3])), b = Math.min(plotW, xs(s[i * 3 + 1]));
      if (b - a >= 1) wide(a, b, s[i * 3 + 2]);
      else narrow(a, b);
    }
  }
  function addCover(bins, a, b) {
    for (var px = Math.floor(a); px < b && px < plotW; ++px)
      bins[px] += Math.min(b, px + 1) - Math.max(a, px);
  }
  function labels(rowH, rowsPerGroup) {
    ctx.textBaseline = 'top';
    var y = 0, lastNode = -1;
    llcs.forEach(function (g) {
      var gh = rowsPerGroup(g) * rowH;
      if (g.node !== lastNode) {
        ctx.fillStyle = '#000';
        ctx.fillRect(0, y, width, 1);
        lastNode = g.node;
      } else {
        ctx.fillStyle = '#bbb';
        ctx.fillRect(0, y, width, 1);
      }
      ctx.fillStyle = '#222';
      ctx.font = Math.min(11, Math.max(8, gh - 1)) + 'px sans-serif';
      if (gh >= 8)
        ctx.fillText('node ' + g.node + ' LLC ' + g.llc, 2, y + 1);
      ctx.font = '11px sans-serif';
      if (mode === 'cpu' && rowH >= 10)
        g.cpus.forEach(function (cpu, k) {
          if (k > 0 || gh < 22) ctx.fillText('cpu' + cpu, 80, y + k * rowH);
        });
      y += gh;
    });
  }
  function draw() {
    var t0 = xs.domain()[0], t1 = xs.domain()[1];
    var want = modeSel.property('value');
    var inView = runsInView(t0, t1);
    mode = want === 'auto' ? (inView > SLICE_BUDGET ? 'llc' : 'cpu') : want;
    var drawn = 0, idleDrawn = 0, notes = [];
    var rowH = mode === 'cpu' ? cpuRowH : llcRowH;
    resize((mode === 'cpu' ? nr : llcs.length) * rowH + 1);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.fillStyle = '#f1f1f1'; // idle
    ctx.fillRect(gutter, 0, plotW, height);
    ctx.save();
    ctx.translate(gutter, 0);
    ctx.beginPath();
    ctx.rect(0, 0, plotW, height); // arrows from before the view stop at its edge
    ctx.clip();
    var bins = new Float64Array(Math.ceil(plotW) + 1);
    if (mode === 'cpu') {
      order.forEach(function (cpu, r) {
        var y = r * rowH, h = Math.max(1, rowH - (rowH > 4 ? 1 : 0));
        var P = D.idle[cpu] || [];
        for (var k = firstEndingAfter(P, t0); k * 3 < P.length && P[k * 3] < t1; ++k) {
          var ia = Math.max(0, xs(P[k * 3])), ib = Math.min(plotW, xs(P[k * 3 + 1]));
          if (ib - ia < 0.5) continue; // sub-pixel idle: the runs' grey says enough
          ctx.fillStyle = cstateColour(P[k * 3 + 2]);
          ctx.fillRect(ia, y, ib - ia, h);
          ++idleDrawn;
        }
        bins.fill(0);
        var touched = false;
        eachRun(cpu, t0, t1, function (a, b, pid) {
          ctx.fillStyle = colour(pid);
          ctx.fillRect(a, y, b - a, h);
          ++drawn;
        }, function (a, b) {
          addCover(bins, a, b);
          touched = true;
        });
        if (!touched) return;
        for (var px = 0; px < plotW; ++px)
          if (bins[px] > 0) {
            ctx.fillStyle = 'rgba(40,40,40,' + Math.min(1, 0.15 + bins[px]) + ')';
            ctx.fillRect(px, y, 1, h);
            ++drawn;
          }
      });
      var centre = function (cpu) { return rowOf[cpu] * rowH + rowH / 2; };
      var W = D.wakeups, i0 = firstAtOrAfter(W, 5, 2, t0), i1 = firstAtOrAfter(W, 5, 2, t1);
      if (i1 - i0 <= MARK_BUDGET) {
        ctx.strokeStyle = 'rgba(0,0,0,0.55)';
        ctx.fillStyle = 'rgba(0,0,0,0.55)';
        ctx.lineWidth = 1;
        for (var i = i0; i < i1; ++i) {
          var xa = xs(W[i * 5]), ya = centre(W[i * 5 + 1]);
          var xb = xs(W[i * 5 + 2]), yb = centre(W[i * 5 + 3]);
          ctx.beginPath();
          ctx.moveTo(xa, ya);
          ctx.lineTo(xb, yb);
          ctx.stroke();
          var ang = Math.atan2(yb - ya, xb - xa);
          ctx.beginPath();
          ctx.moveTo(xb, yb);
          ctx.lineTo(xb - 6 * Math.cos(ang - 0.4), yb - 6 * Math.sin(ang - 0.4));
          ctx.lineTo(xb - 6 * Math.cos(ang + 0.4), yb - 6 * Math.sin(ang + 0.4));
          ctx.fill();
          ++drawn;
        }
      } else {
        notes.push((i1 - i0) + ' wakeups in view: zoom in to see them as arrows');
      }
      var M = D.migrations, j0 = firstAtOrAfter(M, 4, 0, t0), j1 = firstAtOrAfter(M, 4, 0, t1);
      if (j1 - j0 <= MARK_BUDGET) {
        ctx.fillStyle = '#d62728';
        for (var j = j0; j < j1; ++j) {
          var xm = xs(M[j * 4]), ym = rowOf[M[j * 4 + 3]] * rowH;
          ctx.beginPath();
          ctx.moveTo(xm, ym);
          ctx.lineTo(xm - 4, ym - 1);
          ctx.lineTo(xm + 4, ym - 1);
          ctx.lineTo(xm, ym + Math.min(rowH, 7));
          ctx.fill();
          ++drawn;
        }
      } else {
        notes.push((j1 - j0) + ' migrations in view: zoom in to see them');
      }
    } else {
      llcs.forEach(function (g, r) {
        bins.fill(0);
        g.cpus.forEach(function (cpu) {
          eachRun(cpu, t0, t1, function (a, b) { addCover(bins, a, b); },
                  function (a, b) { addCover(bins, a, b); });
        });
        for (var px = 0; px < plotW; ++px) {
          var f = bins[px] / g.cpus.length;
          if (f > 0) {
            ctx.fillStyle = d3.interpolateBlues(0.2 + 0.8 * Math.min(1, f));
            ctx.fillRect(px, r * rowH, 1, rowH - 1);
            ++drawn;
          }
        }
      });
      notes.push('rows are LLCs, shaded by the fraction of their CPUs busy; ' + inView +
                 ' runs in view' + (want === 'auto' ? ' (zoom in for CPUs)' : ''));
    }
    ctx.restore();
    labels(rowH, function (g) { return mode === 'cpu' ? g.cpus.length : 1; });
    axisG.call(d3.axisTop(xs.copy().range([gutter, gutter + plotW]))
                 .ticks(Math.max(2, Math.floor(plotW / 90)))
                 .tickFormat(function (ns) { return d3.format('~g')((D.from + ns) / 1e6) + ' ms'; }));
    note.text(notes.join('; '));
    root.setAttribute('data-mode', mode);
    root.setAttribute('data-drawn', String(drawn));
    root.setAttribute('data-idle-drawn', String(idleDrawn));
  }

  var zoom = d3.zoom()
    .scaleExtent([1, Math.max(1, span / 1000)])
    .extent(function () { return [[0, 0], [plotW, Math.max(1, height)]]; })
    .translateExtent([[0, -Infinity], [plotW, Infinity]])
    .on('zoom', function (ev) { xs = ev.transform.rescaleX(x0); draw(); });
  d3.select(canvas).call(zoom);
  modeSel.on('change', draw);
  reset.on('click', function () { d3.select(canvas).call(zoom.transform, d3.zoomIdentity); });
  canvas.addEventListener('mousemove', function (ev) {
    var rect = canvas.getBoundingClientRect();
    var mx = ev.clientX - rect.left - gutter, my = ev.clientY - rect.top;
    if (mx < 0) return;
    var t = xs.invert(mx), ms = function (ns) { return d3.format('.4~f')((D.from + ns) / 1e6); };
    if (mode === 'cpu') {
      var cpu = order[Math.floor(my / cpuRowH)];
      if (cpu === undefined) return;
      var s = D.slices[cpu], i = firstEndingAfter(s, t), text = 'idle';
      var P = D.idle[cpu] || [], k = firstEndingAfter(P, t);
      if (k * 3 < P.length && P[k * 3] <= t)
        text = 'idle in ' + cstateName(P[k * 3 + 2]) + ' ' + ms(P[k * 3]) + '-' + ms(P[k * 3 + 1]) +
               ' ms';
      if (i * 3 < s.length && s[i * 3] <= t)
        text = comm(s[i * 3 + 2]) + ' ran ' + ms(s[i * 3]) + '-' + ms(s[i * 3 + 1]) + ' ms (' +
               d3.format('.4~f')((s[i * 3 + 1] - s[i * 3]) / 1e3) + ' us)';
      info.text(' cpu' + cpu + ' (node ' + D.cpus[cpu][2] + ', LLC ' + D.cpus[cpu][1] + ') at ' +
                ms(t) + ' ms: ' + text);
    } else {
      var g = llcs[Math.floor(my / llcRowH)];
      if (g) info.text(' node ' + g.node + ' LLC ' + g.llc + ' (' + g.cpus.length + ' CPUs) at ' +
                       ms(t) + ' ms');
    }
  });
  draw();
})();
)js";

} // namespace

std::string timeline_section(const timeline& t)
{
    std::string h;
    h += "<section id=\"timeline-section\">\n<h2>Per-CPU timeline</h2>\n";
    h += "<p>" + html_escape(t.title) + "</p>\n";
    h += fmt::format("<p>Window {:.6f} s to {:.6f} s of simulated time{}. Rows are CPUs grouped "
                     "by NUMA node and LLC (black line: a new node, grey: a new LLC); coloured "
                     "bars: the task running (one colour per pid); pale shades: idle, by the "
                     "C-state the CPU entered (power:cpu_idle: poll, C1 or deep; see the legend), "
                     "the light grey background: idle with no C-state recorded; grey: runs "
                     "narrower than a pixel, darker the busier; arrows: wakeups, from "
                     "the waker's CPU at sched_waking (or sched_wakeup_new) to the CPU where the "
                     "wakee was switched in, at that time; red marks: sched_migrate_task, on the "
                     "destination CPU. Zoom with the wheel, pan by dragging; hover for the "
                     "task.</p>\n",
                     static_cast<double>(t.from) / 1e9, static_cast<double>(t.to) / 1e9,
                     t.cut ? " (cut short: the record limit was reached; narrow the window with "
                             "--timeline-window)"
                           : "");
    h += "<div id=\"timeline\"></div>\n";
    h += "<script type=\"application/json\" id=\"timeline-data\">" +
         script_safe(timeline_json(t).dump()) + "</script>\n";
    h += std::string("<script>") + timeline_js + "</script>\n";
    h += "</section>\n";
    return h;
}

} // namespace schedlab
