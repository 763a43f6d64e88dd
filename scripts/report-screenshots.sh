#!/usr/bin/env bash
# report-screenshots.sh: the screenshots of docs/report.md ("What the
# charts look like", issue #38). Plans two planted months (tools/planmonth:
# 20,000 jobs on 160 GPUs at 80 % occupancy, and 400 jobs on 16 GPUs at
# 30 %), writes each one's HTML report, opens it in headless Chromium at
# 1,000 px and cuts the headline table and the daily, heat-map, purchase
# and wait charts out of the page into docs/img/report-{large,small}-*.png.
# Needs chromium on PATH; takes a few minutes (the 20,000-job plan).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "machine: $(nproc) CPUs; $(date -u '+%F %T UTC'); commit $(git rev-parse --short HEAD); $(chromium --version 2>/dev/null || echo 'no chromium')"
REPORT_SCREENSHOTS="$PWD/docs/img" ${GO:-go} test -count=1 -run '^TestReportScreenshots$' -v -timeout 30m ./report
