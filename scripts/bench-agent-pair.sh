# shellcheck shell=bash
# bench-agent-pair.sh: sourced (not run) by the benchmarks that run two
# copies of scripts/bench-agent.sh at the same time and set their figures
# side by side: bench-agent-builds.sh (two builds), bench-agent-metrics.sh
# (/metrics scraped or not), bench-agent-notices.sh (notice rules on or
# off). Running both at once puts the machine's other load on both alike,
# so the ratio is the figure to read.
#
# Each run is bench-agent.sh on its own simulated node, work directory,
# database and agent. bench-agent.sh starts "$BIN agent --config FILE"; here
# BIN is a small wrapper per run that records the agent's PID and runs the
# run's edit script (if any) on FILE before it execs the real binary (same
# PID). The figures: CPU (utime+stime ÷ wall), VmHWM, RssAnon and Pss as
# bench-agent.sh prints them, and the mean VmRSS, sampled every 5 s over
# the measured duration.
#
#   PAIR=name                   # names the work directory and the messages
#   . "$HERE/bench-agent-pair.sh"
#   pair_init                   # $W, removed on exit unless BENCH_KEEP=1
#   pair_run RUN BIN [EDIT]     # EDIT: a file of shell run as `sh EDIT CONFIG`
#   pair_start DURATION GPUS JOBS
#   pair_measure DURATION       # returns when the measured span is over
#   pair_wait                   # both runs finished well, else exits
#   pair_table A B "label A" "label B"
PAIR_RUNS=()
PAIR_PIDS=()
PAIR_WARMUP=10 # bench-agent.sh's warm-up before it measures
PAIR_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

pair_fail() { echo "$PAIR: $*" >&2; exit 1; }

pair_init() {
	W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-$PAIR.XXXXXX")
	trap pair_cleanup EXIT
}

pair_cleanup() {
	local run
	for p in "${PAIR_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "${BENCH_KEEP:-}" = 1 ]; then
		echo "$PAIR: work directory kept: $W" >&2
		return
	fi
	for run in "${PAIR_RUNS[@]}"; do
		[ -s "$W/$run/config.path" ] && rm -rf "$(pair_dir "$run")"
	done
	rm -rf "$W"
}

# pair_run RUN BIN [EDIT]: the wrapper of run RUN.
pair_run() {
	local run=$1 bin edit=${3:-}
	bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
	[ -x "$bin" ] || pair_fail "$bin is not executable"
	mkdir -p "$W/$run"
	cat >"$W/$run/gpuprof" <<SH
#!/bin/sh
if [ "\$1" = agent ] && [ "\$2" = --config ]; then
	echo \$\$ >"$W/$run/agent.pid"
	echo "\$3" >"$W/$run/config.path"
	if [ -n "$edit" ]; then sh "$edit" "\$3"; fi
fi
exec "$bin" "\$@"
SH
	chmod +x "$W/$run/gpuprof"
	PAIR_RUNS+=("$run")
}

# pair_start DURATION GPUS JOBS: both bench-agent.sh runs, their work
# directories (pair_dir) kept until the script exits, so that callers can
# read the databases (BENCH_KEEP=1 keeps them and $W).
pair_start() {
	local run
	for run in "${PAIR_RUNS[@]}"; do
		BENCH_KEEP=1 "$PAIR_HERE/bench-agent.sh" "$W/$run/gpuprof" "$1" "$2" "$3" >"$W/$run/out" 2>"$W/$run/err" &
		PAIR_PIDS+=($!)
		echo $! >"$W/$run/bench.pid"
	done
	for run in "${PAIR_RUNS[@]}"; do
		for _ in $(seq 200); do [ -s "$W/$run/agent.pid" ] && break; sleep 0.05; done
		[ -s "$W/$run/agent.pid" ] || { cat "$W/$run/err" >&2; pair_fail "the $run agent did not start"; }
	done
}

# pair_dir RUN: the work directory bench-agent.sh made for run RUN.
pair_dir() { dirname "$(cat "$W/$1/config.path")"; }

pair_measure() {
	local pids=() run line p end
	for run in "${PAIR_RUNS[@]}"; do pids+=("$(cat "$W/$run/agent.pid")"); done
	sleep "$PAIR_WARMUP"
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		line=
		for p in "${pids[@]}"; do
			line="$line $(awk '$1 == "VmRSS:" {print $2}' "/proc/$p/status" 2>/dev/null || echo 0)"
		done
		echo "$line" >>"$W/rss"
		sleep 5
	done
}

pair_wait() {
	local run rc=0
	for run in "${PAIR_RUNS[@]}"; do
		wait "$(cat "$W/$run/bench.pid")" || { rc=$?; echo "$PAIR: the $run run failed ($rc):" >&2; cat "$W/$run/err" >&2; }
	done
	[ "$rc" = 0 ] || exit "$rc"
}

# pair_table A B LABEL_A LABEL_B: the figures of runs A and B, and B ÷ A.
pair_table() {
	python3 - "$W" "$1" "$2" "$3" "$4" "${PAIR_RUNS[@]}" <<'PY'
import re, sys
w, a, b, la, lb, *runs = sys.argv[1:]

def figures(run):
    out = open(f"{w}/{run}/out").read()
    cpu = re.search(r"agent CPU: ([\d.]+) s over ([\d.]+) s wall = ([\d.]+) % of one core \(resolution ([\d.]+) %\)", out)
    mem = re.search(r"VmRSS ([\d.]+) MiB at the end, max VmRSS seen ([\d.]+) MiB, VmHWM ([\d.]+) MiB", out)
    anon = re.search(r"RssAnon ([\d.]+) MiB", out)
    pss = re.search(r"Pss ([\d.]+) MiB", out)
    running = re.search(r"agent saw (\d+) running jobs", out)
    if not (cpu and mem and running):
        sys.exit(f"cannot read the {run} run's figures:\n{out}")
    f = dict(cpu_s=float(cpu[1]), wall=float(cpu[2]), pct=float(cpu[3]), res=float(cpu[4]),
             rss_end=float(mem[1]), hwm=float(mem[3]), running=int(running[1]))
    if anon: f["anon"] = float(anon[1])
    if pss: f["pss"] = float(pss[1])
    return f

fa, fb = figures(a), figures(b)
rows = [list(map(int, l.split())) for l in open(f"{w}/rss") if len(l.split()) == len(runs)]
rows = [r for r in rows if all(r)]
for f, run in ((fa, a), (fb, b)):
    i = runs.index(run)
    f["rss_mean"] = sum(r[i] for r in rows) / len(rows) / 1024
print(f"running jobs seen at the end: {la} {fa['running']}, {lb} {fb['running']}")
print()
print(f"| figure | {la} | {lb} | ratio |")
print("|---|---:|---:|---:|")
def row(name, key, fmt, unit=""):
    if key in fa and key in fb:
        print(f"| {name} | {fmt.format(fa[key])}{unit} | {fmt.format(fb[key])}{unit} | {fb[key] / fa[key]:.2f} |")
print(f"| agent CPU, s over wall | {fa['cpu_s']:.2f} s / {fa['wall']:.1f} s | {fb['cpu_s']:.2f} s / {fb['wall']:.1f} s | {fb['cpu_s'] / fa['cpu_s']:.2f} |")
row("agent CPU, % of one core", "pct", "{:.3f}", " %")
row("VmHWM", "hwm", "{:.1f}", " MiB")
row("mean VmRSS (every 5 s)", "rss_mean", "{:.1f}", " MiB")
row("VmRSS at the end", "rss_end", "{:.1f}", " MiB")
row("RssAnon at the end", "anon", "{:.1f}", " MiB")
row("Pss at the end", "pss", "{:.1f}", " MiB")
print(f"(CPU resolution {fa['res']:.3f} % of one core; {len(rows)} RSS samples each)")
PY
}
