#!/usr/bin/env bash
# attack-load.sh BIN [DURATION_S] [CONNS]: issues 25's and 39's load test on loopback.
#
# A simulated node's agent (query socket) and `gpuprof serve` run as root
# on this host. One throwaway user (the attacker) holds CONNS connections
# to each (half-sent requests, stalled 16 MiB uploads, idle keep-alive
# connections), dials again whenever one is closed, and floods both with
# bad requests for DURATION_S seconds (tools/attackload). Issue 39's
# attackers come with it: the attacker's share of the query socket is
# taken from four uids of one person (its own and three subordinate uids
# in the agent's subuid_file), its connections to serve come from
# 127.0.0.1-5 (ATTACK_SRC), and JUNK more connections (default 64) send
# serve plausible junk munge credentials, each costing an unmunge.
# Meanwhile a
# second throwaway user runs `gpuprof jobs` once a second through each
# (the agent's query socket; serve with a real munge credential).
#
# Prints each victim query's time, each way's median, p95 and largest,
# how much each log grew,
# serve's and the agent's peak RSS, the agent's sampling (ticks missed,
# last sample age) and the refusal counters of serve's /metrics. Exits 1
# when a victim query failed or took more than 2 s, a log grew by 1 MB or
# more, or serve's RSS reached 200 MB.
#
# Needs root (two throwaway users, useradd/userdel), a running munged
# (munge's default socket), curl. Run it when the machine is otherwise
# quiet: the figures share its CPUs with everything else.
set -euo pipefail
BIN=${1:?usage: attack-load.sh GPUPROF_BIN [DURATION_S] [CONNS]}
DURATION=${2:-60}
CONNS=${3:-500}
JUNK=${JUNK:-64}
ATTACK_SRC=${ATTACK_SRC:-127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "attack-load: $BIN is not executable" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "attack-load: needs root (throwaway users)" >&2; exit 2; }
for c in useradd userdel setpriv curl munge; do
	command -v "$c" >/dev/null || { echo "attack-load: $c is needed" >&2; exit 2; }
done
munge -n </dev/null >/dev/null 2>&1 || { echo "attack-load: munged does not answer" >&2; exit 2; }
GO=${GO:-go}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-attack.XXXXXX")
chmod 0755 "$W"
AGENT_PID= SERVE_PID= ATTACK_PID= ATTACK_PIDS=
SUFFIX=$$
ATTACKER=gpuprof-la-$SUFFIX VICTIM=gpuprof-lv-$SUFFIX
cleanup() {
	for p in $ATTACK_PIDS $ATTACK_PID $SERVE_PID $AGENT_PID; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	userdel "$ATTACKER" 2>/dev/null || true
	userdel "$VICTIM" 2>/dev/null || true
	if [ "${ATTACK_KEEP:-}" = 1 ]; then echo "attack-load: work directory kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
useradd --system --no-create-home --shell /usr/sbin/nologin "$ATTACKER"
useradd --system --no-create-home --shell /usr/sbin/nologin "$VICTIM"
# The attacker's subordinate uids (what useradd gives a regular user and
# newuidmap lets them run processes as): a range no account uses.
SUBBASE=$((3000000 + (SUFFIX % 1000) * 65536))

(cd "$ROOT" && "$GO" build -o "$W/attackload" ./tools/attackload)
chmod 0755 "$W/attackload"
mkdir -p "$W/state" "$W/run" "$W/central" "$W/sim"
chmod 0700 "$W/state" "$W/central" # the databases: root's
chmod 0755 "$W/run"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cat >"$W/agent.toml" <<CONF
cluster      = "attack"
node         = "gpu01"
db           = "$W/state/node.db"
spool_dir    = "$W/state/spool"
socket       = "$W/run/agent.sock"
query_socket = "$W/run/query.sock"
log_file     = "$W/agent.log"
subuid_file  = "$W/subuid"
[agent]
gpu            = "sim"
interval       = "1s"
metrics_listen = "unix:$W/run/metrics.sock"
[sim]
dir  = "$W/sim"
gpus = 2
CONF
cat >"$W/serve.toml" <<CONF
cluster   = "attack"
db        = "$W/central/central.db"
spool_dir = "$W/central/spool"
log_file  = "$W/serve.log"
[serve]
listen         = "127.0.0.1:$PORT"
slurm_user     = "root"
metrics_listen = "unix:$W/run/serve-metrics.sock"
CONF
# The victim's two ways in: the agent's query socket (the database is
# root's), and the collector.
cat >"$W/victim-local.toml" <<CONF
db           = "$W/state/node.db"
query_socket = "$W/run/query.sock"
CONF
cat >"$W/victim-serve.toml" <<CONF
db        = "$W/state/none.db"
collector = "http://127.0.0.1:$PORT"
CONF
chmod 0644 "$W"/*.toml
echo "$ATTACKER:$SUBBASE:65536" >"$W/subuid"
chmod 0644 "$W/subuid"

"$BIN" agent --config "$W/agent.toml" >>"$W/agent.out" 2>&1 </dev/null &
AGENT_PID=$!
"$BIN" serve --config "$W/serve.toml" >>"$W/serve.out" 2>&1 </dev/null &
SERVE_PID=$!
for _ in $(seq 100); do
	[ -S "$W/run/query.sock" ] && (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
	sleep 0.1
done
[ -S "$W/run/query.sock" ] || { echo "attack-load: the agent did not start" >&2; cat "$W/agent.out" "$W/agent.log" >&2; exit 1; }

as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups -- "$@"; }
ms() { echo $(($(date +%s%N) / 1000000)); }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
scrape() { curl -s --unix-socket "$1" http://localhost/metrics; }

# Warm up once without an attack: the victim must be answered at all.
for way in local serve; do
	as "$VICTIM" "$BIN" jobs --config "$W/victim-$way.toml" >/dev/null 2>"$W/victim-warmup.err" || {
		echo "attack-load: the victim's gpuprof jobs ($way) fails without an attack:" >&2
		cat "$W/victim-warmup.err" >&2
		exit 1
	}
done
dropped0=$(scrape "$W/run/metrics.sock" | awk '/^gpuprof_agent_samples_dropped_total\{reason="tick_missed"\}/ {print $2}')
agent_log0=$(size "$W/agent.log") serve_log0=$(size "$W/serve.log")

# The query socket from four uids of one person, CONNS/4 each; serve from
# the attacker's own uid, from every ATTACK_SRC address, with junk.

for u in "$ATTACKER" $((SUBBASE + 1)) $((SUBBASE + 2)) $((SUBBASE + 3)); do
	setpriv --reuid="$u" --regid="$u" --clear-groups -- "$W/attackload" -socket "$W/run/query.sock" \
		-conns $((CONNS / 4)) -flood 2 -duration "${DURATION}s" >"$W/attack-sock-$u.out" 2>&1 &
	ATTACK_PIDS="$ATTACK_PIDS $!"
done
as "$ATTACKER" "$W/attackload" -serve "127.0.0.1:$PORT" -src "$ATTACK_SRC" -junk "$JUNK" \
	-conns "$CONNS" -duration "${DURATION}s" >"$W/attack.out" 2>&1 &
ATTACK_PID=$!
sleep 2 # the attack in full swing

fail=0 worst=0 n=0 serve_rss=0 agent_rss=0
end=$(($(date +%s) + DURATION - 4))
while [ "$(date +%s)" -lt "$end" ]; do
	for way in local serve; do
		t0=$(ms)
		if as "$VICTIM" "$BIN" jobs --config "$W/victim-$way.toml" >/dev/null 2>"$W/victim.err"; then
			status=ok
		else
			status="FAILED: $(tr '\n' ' ' <"$W/victim.err")"
			fail=1
		fi
		took=$(($(ms) - t0))
		echo "$took" >>"$W/took-$way"
		n=$((n + 1))
		[ "$took" -gt "$worst" ] && worst=$took
		[ "$took" -gt 2000 ] && { fail=1; status="$status (over 2 s)"; }
		echo "victim $way: ${took} ms $status" | tee -a "$W/victim.log"
	done
	r=$(rss "$SERVE_PID"); [ "$r" -gt "$serve_rss" ] && serve_rss=$r
	r=$(rss "$AGENT_PID"); [ "$r" -gt "$agent_rss" ] && agent_rss=$r
	sleep 1
done
wait "$ATTACK_PID" || true
for p in $ATTACK_PIDS; do wait "$p" || true; done
ATTACK_PID= ATTACK_PIDS=
r=$(rss "$SERVE_PID"); [ "$r" -gt "$serve_rss" ] && serve_rss=$r

agent_grew=$(($(size "$W/agent.log") - agent_log0)) serve_grew=$(($(size "$W/serve.log") - serve_log0))
metrics=$(scrape "$W/run/metrics.sock")
dropped1=$(awk '/^gpuprof_agent_samples_dropped_total\{reason="tick_missed"\}/ {print $2}' <<<"$metrics")
last=$(awk '/^gpuprof_agent_last_sample_timestamp_seconds / {print $2}' <<<"$metrics")
cat "$W"/attack-sock-*.out "$W/attack.out"
echo "victim: $n queries, the slowest ${worst} ms"
for way in local serve; do
	sort -n "$W/took-$way" | awk -v way="$way" '{v[NR] = $1} END {
		i = int(NR * 0.95 + 0.999); if (i < 1) i = 1; if (i > NR) i = NR
		printf "victim %s: %d queries, median %d ms, p95 %d ms, max %d ms\n", way, NR, v[int((NR + 1) / 2)], v[i], v[NR] }'
done
echo "victim failures: $(grep -c FAILED "$W/victim.log" || true)"
echo "log growth during the attack: agent ${agent_grew} bytes, serve ${serve_grew} bytes"
echo "peak RSS: serve $((serve_rss / 1024)) MiB, agent $((agent_rss / 1024)) MiB"
echo "agent sampling: ticks missed during the attack $(awk -v a="${dropped0:-0}" -v b="${dropped1:-0}" 'BEGIN {print b - a}'), last sample $(awk -v l="${last:-0}" -v n="$(date +%s)" 'BEGIN {printf "%.1f", n - l}') s ago"
echo "serve's refusals:"
scrape "$W/run/serve-metrics.sock" | grep '^gpuprof_serve_requests_refused_total' | sed 's/^/  /'
[ "$agent_grew" -lt 1000000 ] && [ "$serve_grew" -lt 1000000 ] || { echo "attack-load: a log grew by 1 MB or more" >&2; fail=1; }
[ "$serve_rss" -lt $((200 * 1024)) ] || { echo "attack-load: serve's RSS reached 200 MB" >&2; fail=1; }
[ "$fail" = 0 ] || { echo "attack-load: FAILED" >&2; exit 1; }
echo "attack-load: passed"
