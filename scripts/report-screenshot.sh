#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Screenshot one section of an HTML report in headless Chromium (the PNGs in docs/).
#   scripts/report-screenshot.sh REPORT.html SECTION OUT.png [WIDTH HEIGHT]
# SECTION is the id of a <section> of the report (charts, distributions, timeline-section,
# schedstat, ...); the others are hidden. The page is checked first, as the tests check it:
# exit 1 without a screenshot when a script failed, the charts did not render, or a chart
# (or the timeline) drew nothing.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 REPORT.html SECTION OUT.png [WIDTH HEIGHT]" >&2
    exit 2
fi
report=$1 section=$2 out=$3 width=${4:-1000} height=${5:-1200}
[ -r "$report" ] || { echo "$0: cannot read $report" >&2; exit 2; }
grep -q "<section id=\"$section\">" "$report" ||
    { echo "$0: $report has no <section id=\"$section\">" >&2; exit 2; }
tmp=$(mktemp -d /tmp/schedlab-screenshot-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chromium_run() {
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-dev-shm-usage --hide-scrollbars --virtual-time-budget=20000 \
        --user-data-dir="$tmp/profile" --window-size="$width,$height" "$@" 2>/dev/null
}
attr() { grep -o "$1=\"[^\"]*\"" "$tmp/dom.html" | head -1 | sed 's/^[^"]*"//; s/"$//'; }

cp "$report" "$tmp/report.html"
chromium_run --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" || true
if grep -q 'data-script-error=' "$tmp/dom.html"; then
    echo "$0: $report: a script failed: $(attr data-script-error)" >&2
    exit 1
fi
if ! grep -q 'data-charts-rendered=' "$tmp/dom.html"; then
    echo "$0: $report: the charts did not render ($(attr data-chart-error))" >&2
    exit 1
fi
empty=$(attr data-empty-charts)
if [ -n "$empty" ]; then
    echo "$0: $report: drew nothing: $empty" >&2
    exit 1
fi

style="<style>body>h1,body>p,section{display:none}section#$section{display:block}</style>"
sed "s|</head>|$style</head>|" "$report" >"$tmp/page.html"
chromium_run --screenshot="$out" "file://$tmp/page.html"
[ -s "$out" ] || { echo "$0: chromium wrote no screenshot" >&2; exit 1; }
