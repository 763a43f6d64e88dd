#!/usr/bin/env bash
# bench-agent-notices.sh BIN [DURATION=600] [GPUS=8] [JOBS=16] [WINDOW=60s]:
# the agent's CPU and memory with the notice rules on, beside the same node
# with them off, both at the same time.
#
# It runs scripts/bench-agent.sh twice in parallel, each on its own
# simulated node, work directory, database and agent: "off" as
# bench-agent.sh runs it, "on" with a [notices] section (every rule on,
# windows of WINDOW, so that rules fire within the run; a stand-in
# sendmail that keeps each message and a stand-in squeue that names the
# job, so delivery runs end to end without a mail server or slurmctld).
# Running both at once puts the machine's other load on both alike, so the
# ratio is the figure to read.
#
# bench-agent.sh's jobs burn at 15-60 % on every GPU, two jobs a GPU, with
# 4-19 GiB of an 80 GiB card: no GPU is idle and every GPU is shared, so
# every rule is evaluated on every reading of every job's GPU and none
# fires (the oversized rule skips shared GPUs): the figure is the steady
# cost the rules add to the sampling tick, the question of issue #16
# ("must not slow the sampling loop"). The delivery path runs only when a
# rule fires; the "on" run prints how many did.
#
# bench-agent.sh starts "$BIN agent --config FILE"; here BIN is a small
# wrapper per run that records the agent's PID and, for the "on" run,
# appends the [notices] section to that file before it execs the real
# binary (same PID). The figures: CPU (utime+stime ÷ wall) and VmHWM as
# bench-agent.sh prints them, the mean VmRSS sampled here every 5 s over
# the measured DURATION, and the notices the "on" run decided and mailed.
#
# Exits non-zero when either run fails, never because a target is missed.
set -euo pipefail
BIN=${1:?usage: bench-agent-notices.sh GPUPROF_BIN [DURATION_S] [GPUS] [JOBS] [WINDOW]}
DURATION=${2:-600}
GPUS=${3:-8}
JOBS=${4:-16}
WINDOW=${5:-60s}
WARMUP=10 # bench-agent.sh's warm-up before it measures
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "bench-agent-notices: $BIN is not executable" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)

W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-notices.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "${BENCH_KEEP:-}" = 1 ]; then echo "bench-agent-notices: work directory kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT

mkdir -p "$W/mail"
cat >"$W/sendmail" <<SH
#!/bin/sh
cat >"$W/mail/\$(date +%s%N)-\$\$.eml"
SH
cat >"$W/squeue" <<'SH'
#!/bin/sh
echo 'normal|bench'
SH
chmod +x "$W/sendmail" "$W/squeue"

cat >"$W/notices.toml" <<TOML

[notices]
enabled = true
from = "gpuprof <gpuprof@bench.example>"
address = "{user}@bench.example"
sendmail = "$W/sendmail"
squeue = "$W/squeue"
daily_cap = 0
home_opt_out = ""

[notices.idle_gpu]
window = "$WINDOW"

[notices.idle_job]
window = "$WINDOW"

[notices.unused_gpus]
window = "$WINDOW"

[notices.oversized]
window = "$WINDOW"
shards = "yes"
TOML

# wrapper RUN [NOTICES]: a stand-in for BIN that records the agent's PID
# and, with NOTICES set, turns the rules on in the agent's configuration.
wrapper() {
	mkdir -p "$W/$1"
	cat >"$W/$1/gpuprof" <<SH
#!/bin/sh
if [ "\$1" = agent ] && [ "\$2" = --config ]; then
	echo \$\$ >"$W/$1/agent.pid"
	if [ -n "$2" ]; then cat "$W/notices.toml" >>"\$3"; echo "\$3" >"$W/$1/config.path"; fi
fi
exec "$BIN" "\$@"
SH
	chmod +x "$W/$1/gpuprof"
}
wrapper off ""
wrapper on yes

for run in off on; do
	BENCH_KEEP=1 "$HERE/bench-agent.sh" "$W/$run/gpuprof" "$DURATION" "$GPUS" "$JOBS" >"$W/$run/out" 2>"$W/$run/err" &
	PIDS+=($!)
	echo $! >"$W/$run/bench.pid"
done

for run in off on; do
	for _ in $(seq 200); do [ -s "$W/$run/agent.pid" ] && break; sleep 0.05; done
	[ -s "$W/$run/agent.pid" ] || { echo "bench-agent-notices: the $run agent did not start" >&2; cat "$W/$run/err" >&2; exit 1; }
done
POFF=$(cat "$W/off/agent.pid")
PON=$(cat "$W/on/agent.pid")

rss_kb() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
sleep "$WARMUP"
end=$(($(date +%s) + DURATION))
while [ "$(date +%s)" -lt "$end" ]; do
	echo "$(rss_kb "$POFF") $(rss_kb "$PON")" >>"$W/rss"
	sleep 5
done

rc=0
for run in off on; do
	wait "$(cat "$W/$run/bench.pid")" || { rc=$?; echo "bench-agent-notices: the $run run failed ($rc):" >&2; cat "$W/$run/err" >&2; }
done
[ "$rc" = 0 ] || exit "$rc"

# The "on" run's database: bench-agent.sh kept its work directory (BENCH_KEEP
# above); it is the directory of the configuration the wrapper changed.
ONDIR=$(dirname "$(cat "$W/on/config.path")")
OFFDIR=$(sed -n 's/^bench-agent: work directory kept: //p' "$W/off/err")
python3 - "$W" "$DURATION" "$GPUS" "$JOBS" "$WINDOW" "$ONDIR/gpuprof.db" <<'PY'
import glob, re, sqlite3, sys
w, duration, gpus, jobs, window, db = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5], sys.argv[6]

def figures(run):
    out = open(f"{w}/{run}/out").read()
    cpu = re.search(r"agent CPU: ([\d.]+) s over ([\d.]+) s wall = ([\d.]+) % of one core \(resolution ([\d.]+) %\)", out)
    mem = re.search(r"VmRSS ([\d.]+) MiB at the end, max VmRSS seen ([\d.]+) MiB, VmHWM ([\d.]+) MiB", out)
    running = re.search(r"agent saw (\d+) running jobs", out)
    if not (cpu and mem and running):
        sys.exit(f"bench-agent-notices: cannot read the {run} run's figures:\n{out}")
    return dict(cpu_s=float(cpu[1]), wall=float(cpu[2]), pct=float(cpu[3]), res=float(cpu[4]),
                rss_end=float(mem[1]), rss_max=float(mem[2]), hwm=float(mem[3]), running=int(running[1]))

off, on = figures("off"), figures("on")
rows = [tuple(map(int, l.split())) for l in open(f"{w}/rss") if len(l.split()) == 2]
rows = [r for r in rows if r[0] and r[1]]
off["rss_mean"] = sum(r[0] for r in rows) / len(rows) / 1024
on["rss_mean"] = sum(r[1] for r in rows) / len(rows) / 1024
c = sqlite3.connect(db)
decided = c.execute("SELECT rule, status, count(*) FROM notices GROUP BY rule, status ORDER BY rule, status").fetchall()
mails = len(glob.glob(f"{w}/mail/*.eml"))

print(f"node: {gpus} simulated GPUs, {jobs} jobs, interval 1s, {duration} s measured, both runs at once; rule windows {window}")
print(f"running jobs seen at the end: off {off['running']}, on {on['running']}")
print("notices decided by the \"on\" agent: " + (", ".join(f"{n} {r} {s}" for r, s, n in decided) or "none") + f"; {mails} messages mailed")
print()
print("| figure | rules off | rules on | ratio |")
print("|---|---:|---:|---:|")
def row(name, key, fmt, unit=""):
    print(f"| {name} | {fmt.format(off[key])}{unit} | {fmt.format(on[key])}{unit} | {on[key] / off[key]:.2f} |")
print(f"| agent CPU, s over wall | {off['cpu_s']:.2f} s / {off['wall']:.1f} s | {on['cpu_s']:.2f} s / {on['wall']:.1f} s | {on['cpu_s'] / off['cpu_s']:.2f} |")
row("agent CPU, % of one core", "pct", "{:.3f}", " %")
row("VmHWM", "hwm", "{:.1f}", " MiB")
row("mean VmRSS (every 5 s)", "rss_mean", "{:.1f}", " MiB")
row("VmRSS at the end", "rss_end", "{:.1f}", " MiB")
print(f"(CPU resolution {off['res']:.3f} % of one core; {len(rows)} RSS samples each)")
PY
if [ "${BENCH_KEEP:-}" != 1 ]; then rm -rf "$ONDIR" "$OFFDIR"; fi
