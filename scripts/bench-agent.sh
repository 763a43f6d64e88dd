#!/usr/bin/env bash
# bench-agent.sh BIN [DURATION=600] [GPUS=8] [JOBS=16]: the agent's CPU and
# memory on a busy simulated node, and the bytes a job costs in the database.
#
# A simulated node with GPUS GPUs, the agent sampling every second (the
# default), and JOBS jobs started through the prolog, job k on GPU k mod
# GPUS (16 jobs on 8 GPUs: two jobs share every GPU, the per-process
# attribution path). Each job runs a `gpuprof simgpu burn` with its
# SLURM_JOB_ID in the environment, as a CUDA program under Slurm would.
#
# After a 10 s warm-up, the agent's utime+stime (/proc/PID/stat) and wall
# time are taken at the start and end of DURATION seconds: CPU % of one
# core = Δcpu / Δwall. VmRSS and VmHWM (/proc/PID/status) are read at the
# end. Then the burns stop, the epilogs finish the jobs, the agent stops,
# and the database is measured: size on disk per job, per-table bytes
# (dbstat), the per-job summary rows, and the bytes of the per-GPU state
# JSON and of its time series (gpu_series) per GPU-hour.
#
# Exits non-zero on errors (agent dying, jobs not recorded), never because a
# target is missed. BENCH_KEEP=1 keeps the work directory. JOBS=0 measures
# the agent with nothing to sample: its floor (the timers, the scans of idle
# GPUs, the persister's rounds).
set -euo pipefail
BIN=${1:?usage: bench-agent.sh GPUPROF_BIN [DURATION_S] [GPUS] [JOBS]}
DURATION=${2:-600}
GPUS=${3:-8}
JOBS=${4:-16}
WARMUP=10
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "bench-agent: $BIN is not executable" >&2; exit 2; }
PY=$(python3 -c 'import sys; print(sys.executable)')
HZ=$(getconf CLK_TCK)

W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-agent.XXXXXX")
AGENT_PID=
BURNS=()
cleanup() {
	for p in "${BURNS[@]}"; do kill "$p" 2>/dev/null || true; done
	if [ -n "$AGENT_PID" ]; then kill "$AGENT_PID" 2>/dev/null || true; wait "$AGENT_PID" 2>/dev/null || true; fi
	if [ "${BENCH_KEEP:-}" = 1 ]; then echo "bench-agent: work directory kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT

mkdir -p "$W/dev"
for ((i = 0; i < GPUS; i++)); do : >"$W/dev/nvidia$i"; done
echo "Name=gpu Type=h100 File=$W/dev/nvidia[0-$((GPUS - 1))]" >"$W/gres.conf"
CONF=$W/gpuprof.toml
cat >"$CONF" <<CONF
cluster   = "bench"
node      = "gpu01"
db        = "$W/gpuprof.db"
spool_dir = "$W/spool"
socket    = "$W/agent.sock"
log_file  = "$W/gpuprof.log"

[agent]
gpu      = "sim"
interval = "1s"
# flush_interval and series_points: the defaults (10s, 1024)

[hooks]
deadline  = "2s"
gres_conf = "$W/gres.conf"

[sim]
dir    = "$W/sim"
gpus   = $GPUS
model  = "NVIDIA H100 80GB HBM3"
memory = "80GiB"
CONF

"$BIN" agent --config "$CONF" >>"$W/gpuprof.log" 2>&1 </dev/null &
AGENT_PID=$!
for _ in $(seq 100); do [ -S "$W/agent.sock" ] && break; sleep 0.05; done
[ -S "$W/agent.sock" ] || { echo "bench-agent: agent did not start:" >&2; cat "$W/gpuprof.log" >&2; exit 1; }

# The simulated programs run as the caller: the agent charges a program
# only to a job its real uid owns.
hookenv() { # JOB GPU CONTEXT
	echo SLURM_SCRIPT_CONTEXT="$3" SLURM_JOB_ID="$1" SLURM_JOB_USER=user$(($1 % 4)) \
		SLURM_JOB_UID="$(id -u)" SLURM_JOB_GID=1000 SLURM_JOB_ACCOUNT=lab \
		SLURM_JOB_PARTITION=gpu SLURMD_NODENAME=gpu01 SLURM_CLUSTER_NAME=bench SLURM_JOB_GPUS="$2"
}

for ((k = 0; k < JOBS; k++)); do
	job=$((5000 + k)) gpu=$((k % GPUS))
	# shellcheck disable=SC2046 # word splitting of hookenv is intended
	env -i $(hookenv $job $gpu prolog_slurmd) "$BIN" prolog --config "$CONF"
	env -i PATH=/usr/bin:/bin SLURM_JOB_ID=$job CUDA_VISIBLE_DEVICES=$gpu \
		"$BIN" simgpu burn --config "$CONF" --mem "$((4 + k))GiB" --util $((15 + 3 * k)) --name "train$k" \
		>>"$W/burn.log" 2>&1 </dev/null &
	BURNS+=($!)
done

# cpu_ticks PID: utime + stime (fields 14, 15; the comm field has no spaces here).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
alive() { kill -0 "$AGENT_PID" 2>/dev/null || { echo "bench-agent: agent died:" >&2; tail -20 "$W/gpuprof.log" >&2; exit 1; }; }

sleep "$WARMUP"
alive
c0=$(cpu_ticks "$AGENT_PID")
t0=$(date +%s%N)
rss_max=0
end=$(($(date +%s) + DURATION))
while [ "$(date +%s)" -lt "$end" ]; do
	sleep $((end - $(date +%s) < 10 ? end - $(date +%s) : 10)) || true
	alive
	r=$(status_kb "$AGENT_PID" VmRSS)
	[ "$r" -gt "$rss_max" ] && rss_max=$r
done
c1=$(cpu_ticks "$AGENT_PID")
t1=$(date +%s%N)
rss=$(status_kb "$AGENT_PID" VmRSS)
hwm=$(status_kb "$AGENT_PID" VmHWM)
# VmRSS counts the binary's file pages too (shared, clean, reclaimable; a
# kernel with large page-cache folios maps its text 2 MiB at a time):
# RssAnon is the agent's own memory.
# Pss shares each file page among the processes mapping it (here the
# agent alone, mostly: the hooks have exited).
export BENCH_RSS_ANON BENCH_RSS_FILE BENCH_PSS
BENCH_RSS_ANON=$(status_kb "$AGENT_PID" RssAnon)
BENCH_RSS_FILE=$(status_kb "$AGENT_PID" RssFile)
BENCH_PSS=$(awk '$1 == "Pss:" {print $2}' "/proc/$AGENT_PID/smaps_rollup" 2>/dev/null || true)
running=$("$PY" -c 'import sys,json
# the agent answers its socket; a status request lists the running jobs
import socket
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"op\":\"status\"}\n")
print(len(json.loads(s.makefile().readline()).get("running") or []))' "$W/agent.sock")

for p in "${BURNS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${BURNS[@]}"; do wait "$p" 2>/dev/null || true; done
BURNS=()
for ((k = 0; k < JOBS; k++)); do
	# shellcheck disable=SC2046
	env -i $(hookenv $((5000 + k)) $((k % GPUS)) epilog_slurmd) SLURM_JOB_EXIT_CODE=0 "$BIN" epilog --config "$CONF"
done
sleep 2
alive
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || { echo "bench-agent: agent exited with $?" >&2; exit 1; }
AGENT_PID=

"$PY" - "$W/gpuprof.db" "$JOBS" "$GPUS" "$DURATION" "$HZ" "$c0" "$c1" "$t0" "$t1" "$rss" "$hwm" "$rss_max" "$running" <<'PY'
import os, sqlite3, sys
db = sys.argv[1]
jobs, gpus, duration, hz = map(int, sys.argv[2:6])
c0, c1, t0, t1, rss, hwm, rss_max, running = map(int, sys.argv[6:14])

cpu_s = (c1 - c0) / hz
wall_s = (t1 - t0) / 1e9
print(f"node: {gpus} simulated GPUs, {jobs} jobs ({jobs // gpus if jobs >= gpus else min(jobs, 1)} per GPU), interval 1s, {duration} s measured")
print(f"agent saw {running} running jobs at the end of the measurement")
print(f"agent CPU: {cpu_s:.2f} s over {wall_s:.1f} s wall = {100 * cpu_s / wall_s:.3f} % of one core"
      f" (resolution {100 / hz / wall_s:.3f} %)")
print(f"agent memory: VmRSS {rss / 1024:.1f} MiB at the end, max VmRSS seen {rss_max / 1024:.1f} MiB, VmHWM {hwm / 1024:.1f} MiB")
anon, filed = os.environ.get("BENCH_RSS_ANON", ""), os.environ.get("BENCH_RSS_FILE", "")
if anon and filed:
    print(f"agent memory at the end: RssAnon {int(anon) / 1024:.1f} MiB (its own), RssFile {int(filed) / 1024:.1f} MiB (the binary's pages)")
pss = os.environ.get("BENCH_PSS", "")
if pss:
    print(f"agent memory at the end: Pss {int(pss) / 1024:.1f} MiB")

c = sqlite3.connect(db)
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
n, bad = c.execute("SELECT count(*), sum(status != 'finished' OR source != 'agent' OR partial) FROM jobs").fetchone()
if n != jobs or bad:
    print(f"bench-agent: {n} jobs in the database ({bad} not finished cleanly by the agent), want {jobs}", file=sys.stderr)
    sys.exit(1)
if jobs == 0:
    print("database: no jobs, no bytes per job")
    sys.exit(0)
size = os.path.getsize(db) + (os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0)
page = c.execute("PRAGMA page_size").fetchone()[0]
free = c.execute("PRAGMA freelist_count").fetchone()[0] * page
print(f"database: {size} bytes on disk ({free} free), {size / jobs:.0f} bytes per job")
print("per table and index with data (dbstat, pages incl. overflow):")
empty = empty_bytes = 0
for name, pages, payload in c.execute("SELECT name, sum(pgsize), sum(payload) FROM dbstat GROUP BY name ORDER BY name"):
    if not payload:  # an empty table or index still holds its root page
        empty, empty_bytes = empty + 1, empty_bytes + pages
        continue
    print(f"  {name:<32} {pages:>9} bytes in pages, {payload:>9} payload, {payload / jobs:>8.0f} payload per job")
print(f"  ({empty} empty tables and indexes: {empty_bytes} bytes of root pages, a fixed cost)")

# A jobs row as stored: the sum of its columns' lengths.
cols = [r[1] for r in c.execute("PRAGMA table_info(jobs)")]
row = " + ".join(f'coalesce(length("{x}"), 0)' for x in cols)
jrow = c.execute(f"SELECT avg({row}) FROM jobs").fetchone()[0]
gcols = [r[1] for r in c.execute("PRAGMA table_info(job_gpus)") if r[1] != "state"]
grow = " + ".join(f'coalesce(length("{x}"), 0)' for x in gcols)
gsum, gstate, samples, gpu_h, nrows = c.execute(f"""
    SELECT avg({grow}), sum(length(state)), sum(samples),
           sum((j."end" - j."start") / 3600.0), count(*)
    FROM job_gpus g JOIN jobs j USING (cluster, job_id, node)""").fetchone()
gseries = chunks = 0  # a database of a gpuprof before schema 6 keeps its series in state
if c.execute("SELECT 1 FROM sqlite_schema WHERE name = 'gpu_series'").fetchone():
    gseries, chunks = c.execute("SELECT coalesce(sum(length(points)), 0), count(*) FROM gpu_series").fetchone()
print(f"per-job summary: jobs row {jrow:.0f} bytes of column data; job_gpus row without state {gsum:.0f} bytes")
print(f"state JSON (profile.GPU without its series): {gstate / nrows:.0f} bytes per GPU of a job")
print(f"series points (gpu_series, {chunks} chunks; binary since issue #42, JSON before): {gseries / nrows:.0f} bytes per GPU of a job, "
      f"{samples / nrows:.0f} samples each, {gpu_h:.3f} GPU-hours in all")
tot = gstate + gseries
print(f"state JSON and series per GPU-hour: {tot / gpu_h:.0f} bytes ({tot / samples:.1f} bytes per sample)")
PY
if [ "$JOBS" -gt 0 ]; then
	show=$("$BIN" show --config "$CONF" --json 5000 | wc -c)
	echo "gpuprof show --json of one job (1 GPU, $DURATION s): $show bytes"
fi
