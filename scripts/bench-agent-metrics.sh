#!/usr/bin/env bash
# bench-agent-metrics.sh BIN [DURATION=600] [GPUS=8] [JOBS=16] [SCRAPE=15]:
# the agent's CPU and memory with /metrics scraped every SCRAPE seconds,
# beside the same node without the endpoint, both at the same time.
#
# It runs scripts/bench-agent.sh twice in parallel, each on its own
# simulated node, work directory, database and agent: "plain" as
# bench-agent.sh runs it, "metrics" with agent.metrics_listen on a free
# loopback port and a scraper that GETs /metrics every SCRAPE seconds with
# the Accept header Prometheus sends (so the OpenMetrics path is the one
# measured). Running both at once puts the machine's other load on both
# alike, so the ratio is the figure to read.
#
# bench-agent.sh starts "$BIN agent --config FILE"; here BIN is a small
# wrapper per run that records the agent's PID and, for the metrics run,
# adds metrics_listen to that file's [agent] section before it execs the
# real binary (same PID). The figures: CPU (utime+stime ÷ wall) and VmHWM
# as bench-agent.sh prints them, and the mean VmRSS, sampled here every 5 s
# over the measured DURATION, plus the scrapes done and their mean time.
#
# Exits non-zero when either run fails or no scrape succeeded, never
# because a target is missed.
set -euo pipefail
BIN=${1:?usage: bench-agent-metrics.sh GPUPROF_BIN [DURATION_S] [GPUS] [JOBS] [SCRAPE_S]}
DURATION=${2:-600}
GPUS=${3:-8}
JOBS=${4:-16}
SCRAPE=${5:-15}
WARMUP=10 # bench-agent.sh's warm-up before it measures
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "bench-agent-metrics: $BIN is not executable" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
command -v curl >/dev/null || { echo "bench-agent-metrics: needs curl" >&2; exit 2; }

W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-metrics.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "${BENCH_KEEP:-}" = 1 ]; then echo "bench-agent-metrics: work directory kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ADDR=127.0.0.1:$PORT

# wrapper RUN [METRICS_ADDR]: a stand-in for BIN that records the agent's PID.
# (METRICS_ADDR empty: the plain run.)
wrapper() {
	mkdir -p "$W/$1"
	cat >"$W/$1/gpuprof" <<SH
#!/bin/sh
if [ "\$1" = agent ] && [ "\$2" = --config ]; then
	echo \$\$ >"$W/$1/agent.pid"
	if [ -n "$2" ]; then sed -i '/^\[agent\]/a metrics_listen = "$2"' "\$3"; fi
fi
exec "$BIN" "\$@"
SH
	chmod +x "$W/$1/gpuprof"
}
wrapper plain ""
wrapper metrics "$ADDR"

for run in plain metrics; do
	"$HERE/bench-agent.sh" "$W/$run/gpuprof" "$DURATION" "$GPUS" "$JOBS" >"$W/$run/out" 2>"$W/$run/err" &
	PIDS+=($!)
	echo $! >"$W/$run/bench.pid"
done

for run in plain metrics; do
	for _ in $(seq 200); do [ -s "$W/$run/agent.pid" ] && break; sleep 0.05; done
	[ -s "$W/$run/agent.pid" ] || { echo "bench-agent-metrics: the $run agent did not start" >&2; cat "$W/$run/err" >&2; exit 1; }
done
PA=$(cat "$W/plain/agent.pid")
PM=$(cat "$W/metrics/agent.pid")

# The scraper: what Prometheus would ask for, every SCRAPE seconds.
ACCEPT='application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.1'
(
	while :; do
		if t=$(curl -sf -o "$W/metrics/last.txt" -w '%{time_total}' -H "Accept: $ACCEPT" "http://$ADDR/metrics"); then
			echo "$t" >>"$W/metrics/scrapes"
		else
			echo fail >>"$W/metrics/scrapes"
		fi
		sleep "$SCRAPE"
	done
) &
SCRAPER=$!
PIDS+=("$SCRAPER")

rss_kb() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
sleep "$WARMUP"
end=$(($(date +%s) + DURATION))
while [ "$(date +%s)" -lt "$end" ]; do
	echo "$(rss_kb "$PA") $(rss_kb "$PM")" >>"$W/rss"
	sleep 5
done
kill "$SCRAPER" 2>/dev/null || true

rc=0
for run in plain metrics; do
	wait "$(cat "$W/$run/bench.pid")" || { rc=$?; echo "bench-agent-metrics: the $run run failed ($rc):" >&2; cat "$W/$run/err" >&2; }
done
[ "$rc" = 0 ] || exit "$rc"

python3 - "$W" "$DURATION" "$GPUS" "$JOBS" "$SCRAPE" <<'PY'
import re, sys
w, duration, gpus, jobs, scrape = sys.argv[1], *map(int, sys.argv[2:6])

def figures(run):
    out = open(f"{w}/{run}/out").read()
    cpu = re.search(r"agent CPU: ([\d.]+) s over ([\d.]+) s wall = ([\d.]+) % of one core \(resolution ([\d.]+) %\)", out)
    mem = re.search(r"VmRSS ([\d.]+) MiB at the end, max VmRSS seen ([\d.]+) MiB, VmHWM ([\d.]+) MiB", out)
    running = re.search(r"agent saw (\d+) running jobs", out)
    if not (cpu and mem and running):
        sys.exit(f"bench-agent-metrics: cannot read the {run} run's figures:\n{out}")
    return dict(cpu_s=float(cpu[1]), wall=float(cpu[2]), pct=float(cpu[3]), res=float(cpu[4]),
                rss_end=float(mem[1]), rss_max=float(mem[2]), hwm=float(mem[3]), running=int(running[1]))

p, m = figures("plain"), figures("metrics")
rows = [tuple(map(int, l.split())) for l in open(f"{w}/rss") if len(l.split()) == 2]
rows = [r for r in rows if r[0] and r[1]]
p["rss_mean"] = sum(r[0] for r in rows) / len(rows) / 1024
m["rss_mean"] = sum(r[1] for r in rows) / len(rows) / 1024
scrapes = [l.strip() for l in open(f"{w}/metrics/scrapes")]
ok = [float(s) for s in scrapes if s != "fail"]
if not ok:
    sys.exit("bench-agent-metrics: no scrape of /metrics succeeded")
series = sum(1 for l in open(f"{w}/metrics/last.txt") if l and not l.startswith("#"))

print(f"node: {gpus} simulated GPUs, {jobs} jobs, interval 1s, {duration} s measured, both runs at once")
print(f"metrics run: {len(ok)} scrapes every {scrape} s ({len(scrapes) - len(ok)} failed), "
      f"mean {1000 * sum(ok) / len(ok):.1f} ms, max {1000 * max(ok):.1f} ms, {series} samples in the last one")
print(f"running jobs seen at the end: plain {p['running']}, metrics {m['running']}")
print()
print(f"| figure | without /metrics | scraped every {scrape} s | ratio |")
print("|---|---:|---:|---:|")
def row(name, key, fmt, unit=""):
    print(f"| {name} | {fmt.format(p[key])}{unit} | {fmt.format(m[key])}{unit} | {m[key] / p[key]:.2f} |")
print(f"| agent CPU, s over wall | {p['cpu_s']:.2f} s / {p['wall']:.1f} s | {m['cpu_s']:.2f} s / {m['wall']:.1f} s | {m['cpu_s'] / p['cpu_s']:.2f} |")
row("agent CPU, % of one core", "pct", "{:.3f}", " %")
row("VmHWM", "hwm", "{:.1f}", " MiB")
row("mean VmRSS (every 5 s)", "rss_mean", "{:.1f}", " MiB")
row("VmRSS at the end", "rss_end", "{:.1f}", " MiB")
print(f"(CPU resolution {p['res']:.3f} % of one core; {len(rows)} RSS samples each)")
PY
