#!/usr/bin/env bash
# make demo: a simulated GPU node and a handful of simulated Slurm jobs,
# recorded through the real path — the agent samples the simulated GPUs, the
# prolog/epilog hooks run with the environment slurmd would give them,
# jobcomp with the one slurmctld gives it, and `gpuprof simgpu burn` stands
# in for the CUDA programs. Then a simulated month of a small cluster through
# the same path on a virtual clock (gpuprof demo month) and its task
# profiles. No root, Slurm or GPU needed. Everything goes under OUT (default
# ./demo-out).
set -euo pipefail
BIN=${1:?usage: demo.sh GPUPROF_BIN [OUT]}
OUT=${2:-demo-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# Fresh state each run.
if [ -f "$OUT/agent.pid" ]; then kill "$(cat "$OUT/agent.pid")" 2>/dev/null || true; fi
rm -rf "$OUT/sim" "$OUT/spool" "$OUT/dev" "$OUT"/gpuprof.db* "$OUT/gpuprof.log" "$OUT/agent.sock" "$OUT/slurm.conf" "$OUT/gres.conf"
mkdir -p "$OUT/dev"
for i in 0 1 2 3; do : > "$OUT/dev/nvidia$i"; done   # stand-ins for /dev/nvidiaN (minor = N)

# The simulated cluster's own slurm.conf and gres.conf (cluster "demo": the
# node gpu01 of part one and the four nodes of the month below), and a
# configuration that points at them: nothing in the demo reads /etc/slurm,
# so its plan, what-if and report are the same on every machine, whatever
# slurm.conf it has (docs/configuration.md, "Which slurm.conf describes a
# cluster").
"$BIN" demo conf --out "$OUT" >/dev/null

cat > "$OUT/gpuprof.toml" <<CONF
cluster    = "demo"
node       = "gpu01"
db         = "$OUT/gpuprof.db"
spool_dir  = "$OUT/spool"
socket     = "$OUT/agent.sock"
log_file   = "$OUT/gpuprof.log"
slurm_conf = "$OUT/slurm.conf"

[clusters.demo]
slurm_conf = "$OUT/slurm.conf"
gres_conf  = "$OUT/gres.conf"

[agent]
gpu            = "sim"
interval       = "250ms"
flush_interval = "1s"

[hooks]
deadline  = "2s"
gres_conf = "$OUT/gres.conf"

[sim]
dir    = "$OUT/sim"
gpus   = 4
model  = "NVIDIA H100 80GB HBM3"
memory = "80GiB"
CONF
export GPUPROF_CONFIG="$OUT/gpuprof.toml"

"$BIN" agent >>"$OUT/gpuprof.log" 2>&1 </dev/null &
echo $! > "$OUT/agent.pid"
trap 'kill "$(cat "$OUT/agent.pid")" 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -S "$OUT/agent.sock" ] && break; sleep 0.1; done

# run_job ID USER GPUS EXIT [burn args...]
# Runs prolog, the "job" (a simulated CUDA program with SLURM_JOB_ID in its
# environment, as under Slurm), epilog and slurmctld's jobcomp, like Slurm
# does.
run_job() {
	local id=$1 user=$2 gpus=$3 exit_code=$4; shift 4
	# The simulated program runs as you: the agent charges a program only to
	# a job its real uid owns, so every demo job is yours, whatever its user.
	local uid submit=$(( $(date +%s) - ${id: -1} * 7 )) start=$(date +%s)
	uid=$(id -u)
	local hookenv=(SLURM_JOB_ID="$id" SLURM_JOB_USER="$user" SLURM_JOB_UID=$uid
		SLURM_JOB_GID=1000 SLURMD_NODENAME=gpu01 SLURM_CLUSTER_NAME=demo SLURM_JOB_PARTITION=gpu
		SLURM_JOB_ACCOUNT=lab SLURM_JOB_GPUS="$gpus")
	env -i "${hookenv[@]}" SLURM_SCRIPT_CONTEXT=prolog_slurmd "$BIN" prolog --config "$GPUPROF_CONFIG"
	if [ $# -gt 0 ]; then
		SLURM_JOB_ID=$id CUDA_VISIBLE_DEVICES=$gpus "$BIN" simgpu burn "$@" || true
	else
		sleep 2   # holds its GPU and never touches it
	fi
	env -i "${hookenv[@]}" SLURM_SCRIPT_CONTEXT=epilog_slurmd SLURM_JOB_EXIT_CODE=$((exit_code * 256)) "$BIN" epilog --config "$GPUPROF_CONFIG"
	local state=COMPLETED
	[ "$exit_code" = 0 ] || state=FAILED
	env -i PATH=/usr/bin:/bin JOBID="$id" ARRAYJOBID=0 ARRAYTASKID=4294967294 UID=$uid GID=1000 \
		USERNAME="$user" GROUPNAME=lab JOBNAME="demo-$user-$id" JOBSTATE=$state PARTITION=gpu QOS=normal \
		ACCOUNT=lab CLUSTER=demo NODES=gpu01 NODECNT=1 PROCS=4 SUBMIT=$submit START=$start END=$(date +%s) \
		LIMIT=01:00:00 EXITCODE="$exit_code:0" DERIVED_EC=0:0 BATCH=yes WORK_DIR=/home/$user \
		"$BIN" jobcomp --config "$GPUPROF_CONFIG"
}

echo "demo: simulated node with 4 × H100 80GB; running 7 jobs (about 8 s)…"
pids=()
run_job 101 alice 0,1 0 --mem 60GiB,58GiB --util 92,88 --for 6s & pids+=($!)   # 2-GPU training
run_job 102 bob   2   0 --mem 6GiB --util 35 --for 5s & pids+=($!)              # small job on a shard…
run_job 103 carol 2   0 --mem 9GiB --util 20 --for 5s & pids+=($!)              # …sharing GPU 2
run_job 104 dave  3   0 --mem 77GiB --util 15 --for 4s & pids+=($!)             # framework preallocates the card
wait "${pids[@]}"
pids=()
run_job 105 erin  3   0 & pids+=($!)                                            # GPU held, never touched
run_job 106 bob   2   3 --mem 12GiB --util 60 --for 3s & pids+=($!)             # fails with exit 3
run_job 107 alice 1   0 --mem 2GiB --util 50 --for 100ms & pids+=($!)           # shorter than the interval
wait "${pids[@]}"
sleep 2.5   # let the agent's persister write the last profiles and jobcomp's spooled records

echo
"$BIN" jobs
echo
"$BIN" show 101
echo
echo "database: $OUT/gpuprof.db   log: $OUT/gpuprof.log   config: $OUT/gpuprof.toml"

# Part two: two simulated months of a small cluster (four nodes of three GPU
# models, eleven users in three accounts) through the same recording path —
# agent, prolog/epilog requests, jobcomp — on a virtual clock. The second is
# the last complete calendar month before today (UTC), the one the report
# picks without --month; the first gives its comparison something to compare.
kill "$(cat "$OUT/agent.pid")" 2>/dev/null || true
THIS=$(date -u +%Y-%m-01)
LAST=$(date -u -d "$THIS -1 month" +%Y-%m)
echo
echo "demo: simulating two months of a 4-node cluster (20–60 s)…"
"$BIN" demo month --out "$OUT" --seed 1 --months 2
echo
"$BIN" profiles --db "$OUT/month.db" --since "$LAST-01" --until "$THIS"

# The lab's planning inputs: it expects 20 % more demand a year, waits
# three months for hardware, and has prices for buying against renting.
cp "$(dirname "$0")/demo-analysis.toml" "$OUT/analysis.toml"

# Recommendations, each with its effect replayed on the queue simulator,
# and the capacity plan: policy first, then the smallest purchase.
for sub in recommend plan; do
	echo
	"$BIN" "$sub" --db "$OUT/month.db" --since "$LAST-01" --until "$THIS" --analysis-config "$OUT/analysis.toml" ||
		echo "demo: gpuprof $sub failed (see above)" >&2
done

# What two more H100s would do to the month's queue, after the replay of
# today's cluster is calibrated against what happened (docs/whatif.md).
echo
"$BIN" whatif --db "$OUT/month.db" --month "$LAST" --add 2xH100 || echo "demo: gpuprof whatif failed (see above)" >&2

# The workload report for admins (HTML with charts, Markdown, JSON) of the
# last complete month, which is what the report picks without --month; it
# compares that month with the one before.
echo
echo "demo: writing the month's workload report…"
"$BIN" report --db "$OUT/month.db" --out "$OUT/report" --analysis-config "$OUT/analysis.toml"
echo
echo "report: open $OUT/report/gpuprof-report-$LAST.html in a browser (it needs no network);"
echo "        the Markdown and JSON are beside it. Browse the jobs: $BIN tui --db $OUT/month.db"
