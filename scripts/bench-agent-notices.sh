#!/usr/bin/env bash
# bench-agent-notices.sh BIN [DURATION=600] [GPUS=8] [JOBS=16] [WINDOW=60s]:
# the agent's CPU and memory with the notice rules on, beside the same node
# with them off, both at the same time.
#
# Two runs of scripts/bench-agent.sh at once (scripts/bench-agent-pair.sh):
# "off" as bench-agent.sh runs it, "on" with a [notices] section (every rule on,
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
# Beside the pair's figures: the notices the "on" run decided and mailed.
#
# Exits non-zero when either run fails, never because a target is missed.
set -euo pipefail
BIN=${1:?usage: bench-agent-notices.sh GPUPROF_BIN [DURATION_S] [GPUS] [JOBS] [WINDOW]}
DURATION=${2:-600}
GPUS=${3:-8}
JOBS=${4:-16}
WINDOW=${5:-60s}
PAIR=bench-agent-notices
. "$(dirname "$0")/bench-agent-pair.sh"
pair_init

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

cat >"$W/notices.sh" <<EDIT
cat "$W/notices.toml" >>"\$1"
EDIT
pair_run off "$BIN"
pair_run on "$BIN" "$W/notices.sh"
pair_start "$DURATION" "$GPUS" "$JOBS"
pair_measure "$DURATION"
pair_wait

python3 - "$W" "$DURATION" "$GPUS" "$JOBS" "$WINDOW" "$(pair_dir on)/gpuprof.db" <<'PY'
import glob, sqlite3, sys
w, duration, gpus, jobs, window, db = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5], sys.argv[6]
c = sqlite3.connect(db)
decided = c.execute("SELECT rule, status, count(*) FROM notices GROUP BY rule, status ORDER BY rule, status").fetchall()
mails = len(glob.glob(f"{w}/mail/*.eml"))
print(f"node: {gpus} simulated GPUs, {jobs} jobs, interval 1s, {duration} s measured, both runs at once; rule windows {window}")
print("notices decided by the \"on\" agent: " + (", ".join(f"{n} {r} {s}" for r, s, n in decided) or "none") + f"; {mails} messages mailed")
PY
pair_table off on "rules off" "rules on"
