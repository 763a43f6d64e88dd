#!/usr/bin/env bash
# bench-month.sh BIN [ROUNDS=3]: `gpuprof profiles`, `recommend` and
# `report` over a month of a million jobs (tools/benchdb: 1,000,000
# scheduler records in October 2026), once with its ~20,000 GPU profiles
# and once as sacct-only history (the same database with the profiles
# deleted), each beside a raw sqlite3 scan of the same records, interleaved
# so the machine's noise hits both. Prints wall time and peak RSS per round
# and the medians. Exits non-zero only on errors, never because a target
# (≤ 10 s, ≤ 1 GB RSS each) is missed. BENCH_KEEP=1 keeps the work
# directory.
set -euo pipefail
BIN=$(cd "$(dirname "${1:?usage: bench-month.sh GPUPROF_BIN [ROUNDS]}")" && pwd)/$(basename "$1")
ROUNDS=${2:-3}
GO=${GO:-go}
cd "$(dirname "$0")/.."
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-month.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$GO" build -o "$W/mkbenchdb" ./tools/benchdb/mkbenchdb
"$W/mkbenchdb" -out "$W/month.db" -every 2600ms
cp "$W/month.db" "$W/sacct.db"
sqlite3 "$W/sacct.db" 'DELETE FROM job_gpus; DELETE FROM jobs; VACUUM;'
echo "databases: $(du -m "$W/month.db" | cut -f1) MiB with profiles, $(du -m "$W/sacct.db" | cut -f1) MiB sacct-only"
calc() { awk "BEGIN {printf \"%.2f\", $*}"; }
run() {
	local t0 t1
	t0=$(date +%s.%N)
	/usr/bin/time -f '%M' -o "$W/rss" "$@" >/dev/null
	t1=$(date +%s.%N)
	RSS=$(( $(cat "$W/rss") / 1024 ))
	WALL=$(calc "$t1 - $t0")
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
SCAN='SELECT "partition", account, count(*), sum(req_gpus * ("end" - "start")) / 3600.0, avg("start" - submit) FROM sched_jobs GROUP BY 1, 2;'
WINDOW=(--since 2026-10-01 --until 2026-11-01)
for db in month sacct; do
	for cmd in profiles recommend report; do
		case $cmd in
		report) args=(report --db "$W/$db.db" --month 2026-10 --out "$W/out-$db" --compare 1) ;;
		*) args=("$cmd" --db "$W/$db.db" "${WINDOW[@]}") ;;
		esac
		T=() M=() S=()
		for r in $(seq "$ROUNDS"); do
			run "$BIN" "${args[@]}"
			T+=("$WALL") M+=("$RSS")
			run sqlite3 "$W/$db.db" "$SCAN"
			S+=("$WALL")
		done
		mt=$(median "${T[@]}") mm=$(median "${M[@]}") ms=$(median "${S[@]}")
		echo "$db $cmd: rounds ${T[*]} s, median $mt s, peak RSS median $mm MiB ($(calc "$mm * 1048576 / 1e9") GB); scan median $ms s; ratio $(calc "$mt / $ms")×"
	done
done
