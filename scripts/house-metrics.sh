#!/usr/bin/env bash
# house-metrics.sh [REV]: the house metrics of docs/benchmarks.md for one
# revision (default HEAD) of this repository: pairs of places sharing runs
# of 6 or more lines in the non-test Go, shell and contrib sources (the
# `duplicates` tool of the development machines), and functions over 100
# lines (tools/funclen). Reads a copy of the revision; writes nothing in
# the checkout.
set -euo pipefail
rev=${1:-HEAD}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/house-metrics.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$rev" | tar -x -C "$tmp"
echo "revision $(git -C "$root" rev-parse --short "$rev")"
(cd "$tmp" && go run ./tools/funclen | tail -1)
find "$tmp" -name '*_test.go' -delete
find "$tmp" -path '*/testdata/*' -type f -delete
find "$tmp" -type f ! -name '*.go' ! -name '*.sh' ! -path '*/contrib/*' -delete
if command -v duplicates >/dev/null; then
	(cd "$tmp" && duplicates --seconds 300 --most 200) >"$tmp.dup"
	head -1 "$tmp.dup"
	echo "pairs listed in $tmp.dup"
else
	echo "duplicates: not on this machine (the development machines' tool)"
fi
