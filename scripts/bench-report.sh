#!/usr/bin/env bash
# bench-report.sh BIN [ROUNDS=3]: `gpuprof report` end to end over a
# database of a million jobs in one month (tools/benchdb: 1,000,000
# scheduler records in October 2026, ~20,000 GPU profiles), beside a raw
# sqlite3 scan of the same records, interleaved (A B A B …) so the machine's
# noise hits both. Prints wall time and peak RSS per round and the ratio.
# Exits non-zero only on errors, never because the target (≤ 15 s) is
# missed. BENCH_KEEP=1 keeps the work directory.
set -euo pipefail
BIN=$(cd "$(dirname "${1:?usage: bench-report.sh GPUPROF_BIN [ROUNDS]}")" && pwd)/$(basename "$1")
ROUNDS=${2:-3}
GO=${GO:-go}
cd "$(dirname "$0")/.."
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-report.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" build -o "$W/mkbenchdb" ./tools/benchdb/mkbenchdb
start=$(date +%s.%N)
"$W/mkbenchdb" -out "$W/month.db"
calc() { awk "BEGIN {printf \"%.2f\", $*}"; }
echo "database: $(du -m "$W/month.db" | cut -f1) MiB, built in $(calc "$(date +%s.%N) - $start") s"

# peak RSS of a command, in MiB, from /usr/bin/time when it is there.
run() {
	local t0 t1
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%M' -o "$W/rss" "$@" >/dev/null
		RSS=$(( $(cat "$W/rss") / 1024 ))
	else
		"$@" >/dev/null
		RSS=-
	fi
	t1=$(date +%s.%N)
	WALL=$(calc "$t1 - $t0")
}
SCAN='SELECT "partition", account, count(*), sum(req_gpus * ("end" - "start")) / 3600.0, avg("start" - submit) FROM sched_jobs GROUP BY 1, 2;'
A=() B=()
for r in $(seq "$ROUNDS"); do
	run "$BIN" report --db "$W/month.db" --month 2026-10 --out "$W/out" --compare 1
	A+=("$WALL"); echo "round $r A gpuprof report: $WALL s, peak RSS $RSS MiB"
	run sqlite3 "$W/month.db" "$SCAN"
	B+=("$WALL"); echo "round $r B sqlite3 scan:     $WALL s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ma=$(median "${A[@]}") mb=$(median "${B[@]}")
verdict=MISSED
awk "BEGIN {exit !($ma <= 15)}" && verdict=met
echo "medians: report $ma s, scan $mb s, ratio $(calc "$ma / $mb")×; target ≤ 15 s: $verdict"
ls -l "$W/out"
