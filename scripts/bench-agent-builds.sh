#!/usr/bin/env bash
# bench-agent-builds.sh BIN_A BIN_B [DURATION=600] [GPUS=8] [JOBS=16]: the
# agent's CPU and memory of two builds of gpuprof (before and after a
# change) on the same busy simulated node, both at the same time
# (scripts/bench-agent-pair.sh; each run is scripts/bench-agent.sh).
#
# Exits non-zero when either run fails, never because a target is missed.
set -euo pipefail
A=${1:?usage: bench-agent-builds.sh BIN_A BIN_B [DURATION_S] [GPUS] [JOBS]}
B=${2:?usage: bench-agent-builds.sh BIN_A BIN_B [DURATION_S] [GPUS] [JOBS]}
DURATION=${3:-600}
GPUS=${4:-8}
JOBS=${5:-16}
PAIR=bench-agent-builds
. "$(dirname "$0")/bench-agent-pair.sh"
pair_init
pair_run a "$A"
pair_run b "$B"
pair_start "$DURATION" "$GPUS" "$JOBS"
pair_measure "$DURATION"
pair_wait
echo "node: $GPUS simulated GPUs, $JOBS jobs, interval 1s, $DURATION s measured, both runs at once"
echo "A: $A ($(wc -c <"$A") bytes), B: $B ($(wc -c <"$B") bytes)"
pair_table a b "A" "B"
