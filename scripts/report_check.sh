#!/bin/sh
# report_check.sh REPORT.html SCREENSHOT.png
#
# Checks an `ptsghmc eval --report` page in a real headless browser (Debian's
# chromium), with networking switched off:
#   1. it renders: a full-page screenshot is written to SCREENSHOT.png (look
#      at it);
#   2. every <img> loads: a copy of the page with a small script added counts
#      the images whose naturalWidth is positive after the load event, and the
#      DOM chromium dumps must say all of them did. (The copy's
#      Content-Security-Policy also allows that inline script; the page
#      itself allows no script and no network request.)
set -eu
report=$1
shot=$2
[ -f "$report" ] || { echo "report_check: $report: no such file" >&2; exit 1; }
command -v chromium >/dev/null || { echo "report_check: chromium not installed (apt-get install chromium)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--proxy-server=127.0.0.1:9 --user-data-dir="$tmp/profile" "$@" 2>"$tmp/chromium.log"
}
abs=$(readlink -f "$report")

# 1. Screenshot of the page as written.
chrome --window-size=1200,4200 --screenshot="$(readlink -f "$(dirname "$shot")")/$(basename "$shot")" "file://$abs" >/dev/null
[ -s "$shot" ] || { echo "report_check: no screenshot written" >&2; cat "$tmp/chromium.log" >&2; exit 1; }

# 2. Every image loads.
sed -e "s/default-src 'none'/default-src 'none'; script-src 'unsafe-inline'/" \
	-e 's#</body>#<script>window.addEventListener("load", function () { var im = document.images, ok = 0; for (var i = 0; i < im.length; i++) { if (im[i].complete \&\& im[i].naturalWidth > 0) ok++; } var p = document.createElement("pre"); p.id = "imgcheck"; p.textContent = "IMAGES " + ok + " OF " + im.length + " LOADED"; document.body.appendChild(p); });</script></body>#' \
	"$abs" >"$tmp/check.html"
chrome --virtual-time-budget=10000 --dump-dom "file://$tmp/check.html" >"$tmp/dom.html"
line=$(grep -o 'IMAGES [0-9]* OF [0-9]* LOADED' "$tmp/dom.html" || true)
[ -n "$line" ] || { echo "report_check: the check script did not run" >&2; cat "$tmp/chromium.log" >&2; exit 1; }
set -- $line
echo "report_check: $report: $2 of $4 images loaded; screenshot $shot"
[ "$4" -gt 0 ] && [ "$2" = "$4" ]
