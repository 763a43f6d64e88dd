#!/usr/bin/env bash
# bench-agent-metrics.sh BIN [DURATION=600] [GPUS=8] [JOBS=16] [SCRAPE=15]:
# the agent's CPU and memory with /metrics scraped every SCRAPE seconds,
# beside the same node without the endpoint, both at the same time
# (scripts/bench-agent-pair.sh; each run is scripts/bench-agent.sh).
#
# "plain" is bench-agent.sh as it runs; "metrics" has agent.metrics_listen
# on a free loopback port and a scraper that GETs /metrics every SCRAPE
# seconds with the Accept header Prometheus sends (so the OpenMetrics path
# is the one measured). Beside the pair's figures: the scrapes done and
# their mean time.
#
# Exits non-zero when either run fails or no scrape succeeded, never
# because a target is missed.
set -euo pipefail
BIN=${1:?usage: bench-agent-metrics.sh GPUPROF_BIN [DURATION_S] [GPUS] [JOBS] [SCRAPE_S]}
DURATION=${2:-600}
GPUS=${3:-8}
JOBS=${4:-16}
SCRAPE=${5:-15}
command -v curl >/dev/null || { echo "bench-agent-metrics: needs curl" >&2; exit 2; }
PAIR=bench-agent-metrics
. "$(dirname "$0")/bench-agent-pair.sh"
pair_init

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ADDR=127.0.0.1:$PORT
cat >"$W/listen.sh" <<EDIT
sed -i '/^\[agent\]/a metrics_listen = "$ADDR"' "\$1"
EDIT
pair_run plain "$BIN"
pair_run metrics "$BIN" "$W/listen.sh"
pair_start "$DURATION" "$GPUS" "$JOBS"

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
PAIR_PIDS+=("$SCRAPER")

pair_measure "$DURATION"
kill "$SCRAPER" 2>/dev/null || true
pair_wait

python3 - "$W" "$DURATION" "$GPUS" "$JOBS" "$SCRAPE" <<'PY'
import sys
w, duration, gpus, jobs, scrape = sys.argv[1], *map(int, sys.argv[2:6])
scrapes = [l.strip() for l in open(f"{w}/metrics/scrapes")]
ok = [float(s) for s in scrapes if s != "fail"]
if not ok:
    sys.exit("bench-agent-metrics: no scrape of /metrics succeeded")
series = sum(1 for l in open(f"{w}/metrics/last.txt") if l and not l.startswith("#"))
print(f"node: {gpus} simulated GPUs, {jobs} jobs, interval 1s, {duration} s measured, both runs at once")
print(f"metrics run: {len(ok)} scrapes every {scrape} s ({len(scrapes) - len(ok)} failed), "
      f"mean {1000 * sum(ok) / len(ok):.1f} ms, max {1000 * max(ok):.1f} ms, {series} samples in the last one")
PY
pair_table plain metrics "without /metrics" "scraped every $SCRAPE s"
