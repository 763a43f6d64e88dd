#!/usr/bin/env bash
# bench-stale.sh BIN: how long a spooled job whose epilog never comes stays
# "running" before the agent closes it, on the wall clock.
#
# A simulated node (no Slurm): slurm.conf names the cluster and an empty
# SlurmdSpoolDir (slurmd holds no step of any job). Two prologs run while
# sqlite3 holds the database in BEGIN EXCLUSIVE and no agent runs, so both
# records go to the spool:
#   old    a job that started an hour ago: the agent, started afterwards,
#          finds slurmd holds no step of it and keeps its row as an orphan
#          (no readings), closed at the second reconcile check;
#   young  a job that started just now: it may still be between allocation
#          and its first step, so the agent samples it until it is older
#          than reconcileMinAge (2 min), then closes it at the second check
#          without a step.
# Neither epilog ever runs. Prints, per job, the seconds from the agent's
# start until `gpuprof show` reports it finished, and the end it was given.
set -euo pipefail
BIN=${1:?usage: bench-stale.sh GPUPROF_BIN}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
command -v sqlite3 >/dev/null || { echo "bench-stale: sqlite3 is needed" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-stale.XXXXXX")
AGENT_PID= LOCK_PID=
cleanup() {
	[ -n "$AGENT_PID" ] && { kill "$AGENT_PID" 2>/dev/null || true; wait "$AGENT_PID" 2>/dev/null || true; }
	[ -n "$LOCK_PID" ] && { kill "$LOCK_PID" 2>/dev/null || true; wait "$LOCK_PID" 2>/dev/null || true; }
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/slurmd" "$W/sim"
printf 'ClusterName=benchstale\nSlurmdSpoolDir=%s\n' "$W/slurmd" >"$W/slurm.conf"
cat >"$W/gpuprof.toml" <<CONF
db = "$W/gpuprof.db"
spool_dir = "$W/spool"
socket = "$W/agent.sock"
log_file = "$W/gpuprof.log"
slurm_conf = "$W/slurm.conf"
[agent]
gpu = "sim"
interval = "1s"
flush_interval = "2s"
[hooks]
deadline = "2s"
[sim]
dir = "$W/sim"
gpus = 2
CONF
# Create the database (the agent does on its first start), then lock it.
"$BIN" agent --config "$W/gpuprof.toml" >"$W/agent0.out" 2>&1 &
AGENT_PID=$!
for _ in $(seq 100); do [ -S "$W/agent.sock" ] && break; sleep 0.1; done
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true; AGENT_PID=
mkfifo "$W/lock.in"
sqlite3 "$W/gpuprof.db" <"$W/lock.in" >"$W/lock.out" 2>&1 &
LOCK_PID=$!
exec 9>"$W/lock.in"
printf '.timeout 10000\nBEGIN EXCLUSIVE;\nSELECT %s;\n' "'locked'" >&9
for _ in $(seq 100); do grep -q locked "$W/lock.out" 2>/dev/null && break; sleep 0.1; done
now=$(date +%s)
prolog() { # job start gpu
	env -i SLURM_JOB_ID="$1" SLURM_JOB_USER=alice SLURM_JOB_UID=1001 SLURM_JOB_GID=1001 \
		SLURMD_NODENAME=gpu01 SLURM_CLUSTER_NAME=benchstale SLURM_JOB_PARTITION=gpu \
		SLURM_JOB_ACCOUNT=lab SLURM_JOB_GPUS="$3" SLURM_JOB_START_TIME="$2" \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin "$BIN" prolog --config "$W/gpuprof.toml"
}
prolog 101 $((now - 3600)) 0
prolog 102 "$now" 1
ls "$W/spool"/*.hookstart.json >/dev/null || { echo "bench-stale: the prologs did not spool" >&2; exit 1; }
printf 'COMMIT;\n' >&9; exec 9>&-; wait "$LOCK_PID" 2>/dev/null || true; LOCK_PID=

start=$(date +%s.%N)
"$BIN" agent --config "$W/gpuprof.toml" >"$W/agent.out" 2>&1 &
AGENT_PID=$!
declare -A done_at=([none]=)
closed=0
while [ "$closed" -lt 2 ]; do
	for job in 101 102; do
		[ -n "${done_at[$job]:-}" ] && continue
		if "$BIN" show "$job" --config "$W/gpuprof.toml" --json 2>/dev/null | grep -q '"status": *"finished"'; then
			done_at[$job]=$(date +%s.%N)
			closed=$((closed + 1))
			end=$("$BIN" show "$job" --config "$W/gpuprof.toml" --json | python3 -c 'import json,sys; v=json.load(sys.stdin)[0]; p=v["profiles"][0]; print(p["end"], "samples", sum(g.get("samples",0) for g in p.get("gpus",[])))')
			printf 'job %s (%s): closed %.1f s after the agent started; end %s\n' "$job" \
				"$([ "$job" = 101 ] && echo 'started 1 h before' || echo 'started just before')" \
				"$(awk -v a="${done_at[$job]}" -v b="$start" 'BEGIN{print a-b}')" "$end"
		fi
	done
	if [ $(($(date +%s) - ${start%.*})) -gt 420 ]; then
		echo "bench-stale: not closed after 7 minutes" >&2; tail -20 "$W/gpuprof.log" >&2; exit 1
	fi
	sleep 1
done
