#!/usr/bin/env bash
# bench-plan.sh SIZES NAME=BIN[,FLAGS] ...: the whole simulated capacity
# plan (tools/benchplan: Analyse + SimulatePlan) of the months
# tools/planmonth makes, by several builds of benchplan side by side in
# one run — for each size, GOMAXPROCS=1 then 2, each build in turn — one
# Markdown row per run: plan time, replays, scheduler steps, peak RSS,
# CPU seconds (user + system), verdict, purchase, whether the plan's JSON
# is byte-identical to the first build's, and the time as a ratio of the
# first build's. SIZES is a list of JOBSxGPUS[@OCCUPANCY][u] (u: the
# uniform month of BenchmarkSimulatePlan; OCCUPANCY 0.7 unless given),
# e.g. "1500x8 15000x56 60000x240@0.8 250000x1000". PROCS (default
# "1 2") are the GOMAXPROCS values run. On a shared machine the CPU
# seconds are the figure to compare: the wall time grows with the load
# the header line records. FLAGS are benchplan flags for
# that build, commas for spaces (e.g. -replay-budget,5000000,-step-budget,
# 100000000 to hold a newer build to an older one's budgets). Exits
# non-zero only on errors, never on a figure.
# Build each with: go build -o BIN ./tools/benchplan (in a checkout of
# each commit, with this commit's tools/benchplan and tools/planmonth
# copied in when the older one lacks them).
set -euo pipefail
SIZES=${1:?usage: bench-plan.sh SIZES NAME=BIN[,FLAGS] ...}
shift
[ $# -ge 1 ] || { echo "usage: bench-plan.sh SIZES NAME=BIN[,FLAGS] ..." >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-plan.XXXXXX")
trap 'rm -rf "$W"' EXIT
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "$@"; do echo "build: $b"; done
echo
echo "| month | GOMAXPROCS | build | plan (s) | CPU (s) | replays | steps | peak RSS (MiB) | verdict | purchase | JSON as the first build's | time / first build's |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1" | tr -d '"'; }
for size in $SIZES; do
	uniform=() label=$size occ=0.7
	case $size in *u) uniform=(-uniform) size=${size%u} label="$size (uniform)" ;; esac
	case $size in *@*) occ=${size#*@} size=${size%@*} ;; esac
	jobs=${size%x*} gpus=${size#*x}
	for procs in ${PROCS:-1 2}; do
		first=""
		for b in "$@"; do
			name=${b%%=*} spec=${b#*=}
			bin=${spec%%,*} flags=()
			[ "$bin" != "$spec" ] && IFS=, read -r -a flags <<<"${spec#*,}"
			GOMAXPROCS=$procs /usr/bin/time -f '%U %S' -o "$W/$name.cpu" "$bin" -jobs "$jobs" -gpus "$gpus" -occupancy "$occ" "${uniform[@]}" "${flags[@]}" -out "$W/$name.json" >"$W/$name.line"
			same="" ratio=""
			if [ -z "$first" ]; then
				first=$name
			else
				same=no
				cmp -s "$W/$first.json" "$W/$name.json" && same=yes
				ratio=$(awk -v a="$(field "$W/$name.line" plan_s)" -v b="$(field "$W/$first.line" plan_s)" 'BEGIN {printf "%.3f", a / b}')
			fi
			l=$W/$name.line
			cpu=$(awk '{printf "%.1f", $1 + $2}' "$W/$name.cpu")
			buy=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["simulated"]; print(", ".join("%d %s" % (p["gpus"], p["model"].split()[1]) for p in s.get("purchase") or []) or "none")' "$W/$name.json" 2>/dev/null || echo "?")
			printf '| %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$procs" "$name" "$(field "$l" plan_s)" "$cpu" \
				"$(field "$l" replays)" "$(field "$l" steps)" "$(field "$l" max_rss_mib)" "$(field "$l" verdict)" "$buy" "$same" "$ratio"
		done
	done
done
