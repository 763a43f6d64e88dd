#!/usr/bin/env bash
# The collector at a site's scale (issue #42): one `gpuprof serve` taking the
# pushes of NODES simulated nodes whose jobs all end at once, over the real
# transport (HTTP, a munge credential per request, the real unmunge). Needs
# munged running and root. Prints pushes/s, push latency, the collector's
# CPU and RSS and a user's query latency during the burst
# (tools/benchingest); see docs/benchmarks.md, "One collector, 1,000 nodes".
#
# usage: scripts/bench-ingest.sh GPUPROF_BIN [NODES] [JOBS_PER_NODE] [GPUS_PER_JOB] [SECONDS]
set -euo pipefail
BIN=${1:?usage: bench-ingest.sh GPUPROF_BIN [NODES] [JOBS] [GPUS] [SECONDS]}
NODES=${2:-1000}
JOBS=${3:-2}
GPUS=${4:-4}
SECONDS_=${5:-600}
DIR=${BENCH_DIR:-$(mktemp -d)}
cd "$(dirname "$0")/.."
go build -o "$DIR/benchingest" ./tools/benchingest
"$DIR/benchingest" -bin "$BIN" -dir "$DIR/run" -nodes "$NODES" -jobs "$JOBS" -gpus "$GPUS" -seconds "$SECONDS_"
