#!/usr/bin/env bash
# bench-agent-realcost.sh BIN [DURATION=300] [GPUS=8] [JOBS=16]: the agent's
# CPU and memory on the busy simulated node of scripts/bench-agent.sh with
# every NVML call charged its cost on a real H200 ([sim] real_cost: the
# energy counter 4 ms a read, GPM 56 µs a sample, the rest ≤ 12 µs; see
# gpu/sim/realcost.go), before and after issue #28, all at once
# (scripts/bench-agent-pair.sh), beside the uncharged node:
#
#   before: the energy counter read with every sample ([agent]
#           energy_every below the 1 s interval) on GPUs without GPM (the
#           node's model an A100), as the agent before issue #28 read them;
#   after:  the defaults: the counter read at each job's start and end and
#           at most once a minute between, GPM sampled every second (H100);
#   sim:    the defaults on the simulated node as it is, uncharged (its
#           calls take microseconds and it has no energy counter): the
#           node of the other agent benchmarks, for comparison.
#
# One binary for all: the old behaviour is a configuration of the new one,
# so the stub charges both alike. Exits non-zero when any run fails,
# never because a target is missed.
set -euo pipefail
BIN=${1:?usage: bench-agent-realcost.sh GPUPROF_BIN [DURATION_S] [GPUS] [JOBS]}
DURATION=${2:-300}
GPUS=${3:-8}
JOBS=${4:-16}
PAIR=bench-agent-realcost
. "$(dirname "$0")/bench-agent-pair.sh"
pair_init
cat >"$W/before.sh" <<'SH'
sed -i -e 's/^interval = "1s"$/&\nenergy_every = "500ms"/' \
	-e 's/^\[sim\]$/&\nreal_cost = true/' \
	-e 's/^model  = .*/model  = "NVIDIA A100-SXM4-80GB"/' "$1"
SH
cat >"$W/after.sh" <<'SH'
sed -i -e 's/^\[sim\]$/&\nreal_cost = true/' "$1"
SH
pair_run before "$BIN" "$W/before.sh"
pair_run after "$BIN" "$W/after.sh"
pair_run sim "$BIN"
pair_start "$DURATION" "$GPUS" "$JOBS"
pair_measure "$DURATION"
for run in before after; do
	grep -q '^real_cost = true$' "$(cat "$W/$run/config.path")" || pair_fail "the $run run's configuration lacks real_cost"
done
pair_wait
echo "node: $GPUS simulated GPUs, $JOBS jobs, interval 1s, $DURATION s measured, the three runs at once"
echo "before, after: every NVML call charged its H200 cost; before: energy counter every sample, no GPM (A100); after: counter at most every minute, GPM every second (H100)"
echo "sim: the defaults on the uncharged simulated node (H100, GPM, no energy counter)"
echo "binary: $BIN ($(wc -c <"$BIN") bytes)"
pair_table before after "before" "after"
echo
pair_table sim after "sim (uncharged)" "after"
