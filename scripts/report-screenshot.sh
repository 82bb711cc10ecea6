#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Screenshot one section of an HTML report in headless Chromium (the PNGs in docs/).
#   scripts/report-screenshot.sh REPORT.html SECTION OUT.png [WIDTH HEIGHT]
# SECTION is the id of a <section> of the report (charts, schedstat, ...); the others are hidden.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 REPORT.html SECTION OUT.png [WIDTH HEIGHT]" >&2
    exit 2
fi
report=$1 section=$2 out=$3 width=${4:-1000} height=${5:-1200}
[ -r "$report" ] || { echo "$0: cannot read $report" >&2; exit 2; }
tmp=$(mktemp -d /tmp/schedlab-screenshot-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
style="<style>body>h1,body>p,section{display:none}section#$section{display:block}</style>"
sed "s|</head>|$style</head>|" "$report" >"$tmp/page.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --hide-scrollbars --virtual-time-budget=20000 \
    --user-data-dir="$tmp/profile" --window-size="$width,$height" \
    --screenshot="$out" "file://$tmp/page.html" 2>/dev/null
[ -s "$out" ] || { echo "$0: chromium wrote no screenshot" >&2; exit 1; }
