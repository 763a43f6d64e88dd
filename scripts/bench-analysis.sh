#!/usr/bin/env bash
# bench-analysis.sh [N=1000000] [ROUNDS=3]: the whole analysis (classify,
# profile, recommend, plan) over N planted jobs, interleaved with a raw
# sqlite3 aggregate scan of the same jobs in one table (A B A B …), in one
# run so machine noise hits both sides alike. With REPORT=1 each round adds
# side C, the whole monthly report (analyse, plan, workload summary, HTML,
# Markdown and JSON), and the ratio C/A. See tools/benchanalysis.
#
# Prints per-round times, the analysis's peak RSS (VmHWM, reset before each
# round; it includes the input), the input's heap size, medians and the
# ratio analysis/scan. Exits non-zero only on errors, never because a target
# (≤ 10 s, ≤ 1 GB RSS at N = 1,000,000) is missed. Without the sqlite3 CLI
# (apt package sqlite3) the scan runs through database/sql and says so.
set -euo pipefail
N=${1:-1000000}
ROUNDS=${2:-3}
GO=${GO:-go}
cd "$(dirname "$0")/.."
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-analysis.XXXXXX")
trap 'rm -rf "$W"' EXIT
"$GO" build -o "$W/benchanalysis" ./tools/benchanalysis
EXTRA=()
[ -n "${REPORT:-}" ] && EXTRA+=(-report)
"$W/benchanalysis" -n "$N" -rounds "$ROUNDS" -dir "$W" "${EXTRA[@]}"
