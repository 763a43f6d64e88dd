#!/usr/bin/env bash
# fidelity-counterfactual.sh [full|reduced]: issue 36's counterfactual
# check of `gpuprof whatif` against the real Slurm (e2e
# TestWhatIfCounterfactual): one workload runs on a test cluster of one
# node of 8 GPUs and on one of 6 (contrib/slurm/testcluster.sh,
# TESTCLUSTER_GPUS), priority/multifactor with fair-share between three
# accounts and age, two partitions; from each run's records alone the
# replay of the other cluster (--remove 2xgpu, --add 2xgpu) is compared
# with the other real run: per partition mean, p50 and p95 wait, and the
# start order's rank correlation. full (the default) is issue 36's 72
# jobs of 20–90 s with a second run of each cluster for Slurm's own
# spread, the four runs side by side (-parallel 4; each run 10–13
# minutes, sleeping jobs: about 14 minutes in all); reduced is CI's 36
# jobs of 15–35 s (about 4 minutes). Needs root (Slurm daemons, useradd) and apt or an
# installed Slurm; builds bin/gpuprof first. Prints the machine, the
# commit and the date, then the test's log, whose table lines are what
# docs/whatif.md records ("A real Slurm, counterfactual"). The exit
# status is the test's. GPUPROF_FIDELITY_KEEP=DIR keeps each run's
# evidence (sacct, slurmctld's log, whatif's JSON) in DIR/<run>.
set -euo pipefail
mode=${1:-full}
case $mode in full | reduced) ;; *)
	echo "usage: fidelity-counterfactual.sh [full|reduced]" >&2
	exit 2
	;;
esac
cd "$(dirname "$0")/.."
make build >/dev/null
echo "machine: $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' (dirty)'); $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: GPUPROF_COUNTERFACTUAL=$mode go test -count=1 -v -parallel 4 -run 'TestWhatIfCounterfactual\$' ./e2e"
GPUPROF_BIN=$PWD/bin/gpuprof GPUPROF_COUNTERFACTUAL=$mode go test -count=1 -v -parallel 4 -timeout 40m -run 'TestWhatIfCounterfactual$' ./e2e
