#!/usr/bin/env bash
# bench-plan.sh BEFORE AFTER [SIZES] [BUDGETS]: the whole simulated
# capacity plan (internal/benchplan: Analyse + SimulatePlan) of the months
# internal/planmonth makes, by two builds of benchplan side by side in one
# run — for each size, GOMAXPROCS=1 then 2, BEFORE then AFTER — printing a
# Markdown row per run (plan time, replays, scheduler steps, peak RSS,
# verdict, whether the plan's JSON is byte-identical to BEFORE's) and the
# ratio AFTER/BEFORE. SIZES is a list of JOBSxGPUS[u] (u: the uniform
# month of BenchmarkSimulatePlan), default "1500x8 15000x56 60000x240
# 250000x1000". BUDGETS is benchplan's budget flags for both builds
# (default: the flags that make both use the same budgets, BEFORE's
# defaults). Exits non-zero only on errors, never on a figure.
# Build the two with: go build -o B ./internal/benchplan (in a checkout of
# each commit, with this commit's internal/benchplan and internal/planmonth
# copied in when the older one lacks them).
set -euo pipefail
BEFORE=${1:?usage: bench-plan.sh BEFORE_BIN AFTER_BIN [SIZES] [BUDGETS]}
AFTER=${2:?usage: bench-plan.sh BEFORE_BIN AFTER_BIN [SIZES] [BUDGETS]}
SIZES=${3:-1500x8 15000x56 60000x240 250000x1000}
BUDGETS=${4:--replay-budget 5000000 -step-budget 100000000}
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-plan.XXXXXX")
trap 'rm -rf "$W"' EXIT
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "budgets: $BUDGETS"
echo
echo "| month | GOMAXPROCS | build | plan (s) | replays | steps | peak RSS (MiB) | verdict | same JSON as before | after / before |"
echo "|---|---|---|---|---|---|---|---|---|---|"
field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1" | tr -d '"'; }
for size in $SIZES; do
	uniform=() label=$size
	case $size in *u) uniform=(-uniform) size=${size%u} label="$size (uniform)" ;; esac
	jobs=${size%x*} gpus=${size#*x}
	for procs in 1 2; do
		for build in before after; do
			bin=$BEFORE
			[ "$build" = after ] && bin=$AFTER
			# shellcheck disable=SC2086 # BUDGETS is a list of flags
			GOMAXPROCS=$procs "$bin" -jobs "$jobs" -gpus "$gpus" "${uniform[@]}" $BUDGETS -out "$W/$build.json" >"$W/$build.line"
		done
		same=no
		cmp -s "$W/before.json" "$W/after.json" && same=yes
		for build in before after; do
			l=$W/$build.line
			ratio=""
			if [ "$build" = after ]; then
				ratio=$(awk -v a="$(field "$l" plan_s)" -v b="$(field "$W/before.line" plan_s)" 'BEGIN {printf "%.3f", a / b}')
			fi
			printf '| %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s |\n' "$label" "$procs" "$build" "$(field "$l" plan_s)" \
				"$(field "$l" replays)" "$(field "$l" steps)" "$(field "$l" max_rss_mib)" "$(field "$l" verdict)" \
				"$([ "$build" = after ] && echo "$same" || echo "")" "$ratio"
		done
	done
done
