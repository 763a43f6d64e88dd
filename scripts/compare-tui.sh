#!/usr/bin/env bash
# compare-tui.sh OLD_BIN NEW_BIN [OUT]: the terminal UI of two gpuprof
# builds, side by side in two private tmux servers of the same size, given
# the same keys at the same moment, and every screen captured and compared.
# For a behaviour-neutral change (issue #41) every screen must be identical,
# or the difference listed. compare-outputs.sh covers the other reading
# commands; this is the TUI's half.
#
# Databases: the demo (scripts/demo.sh run with OLD_BIN: its node database
# and its simulated month), read by both builds. Runs: the node database
# and the month, as root (an admin: --all) and as another user (bob, who
# owns jobs in the month; the demo's node jobs run as root, so bob's list
# there is empty). Each run walks the list (move, sort, reverse, last and
# first job, a page down), a job's detail (scroll, bottom), the month's
# summary (the month before), the help, a filter (and a job's detail
# under it), and the state and time-window filters. Both builds are
# started and given each key at the same time, so times shown relative to
# now ("3m ago") read the same. Needs root and tmux.
set -euo pipefail
OLD=$(readlink -f "${1:?usage: compare-tui.sh OLD_BIN NEW_BIN [OUT]}")
NEW=$(readlink -f "${2:?usage: compare-tui.sh OLD_BIN NEW_BIN [OUT]}")
OUT=${3:-$(mktemp -d /tmp/compare-tui.XXXXXX)}
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
chmod 755 "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OTHER=${OTHER_USER:-bob}
id "$OTHER" >/dev/null 2>&1 || useradd -M -u "${OTHER_UID:-2717}" "$OTHER"
COLS=${COLS:-120}
ROWS=${ROWS:-40}

echo "compare-tui: old $OLD, new $NEW, under $OUT"
if [ ! -e "$OUT/demo/month.db" ]; then
	"$ROOT/scripts/demo.sh" "$OLD" "$OUT/demo" >"$OUT/demo.log" 2>&1
	kill "$(cat "$OUT/demo/agent.pid" 2>/dev/null)" 2>/dev/null || true
	sleep 1
fi
chmod -R a+rX "$OUT/demo"
CONF="$OUT/demo/gpuprof.toml"
MONTH="$OUT/demo/month.db"

# The key steps: NAME|tmux key names (one step may send several keys; a
# literal text is given as lit:TEXT).
steps=(
	"start|"
	"down2|j j"
	"sort|s"
	"sort2|s"
	"reverse|S"
	"detail|Enter"
	"detail-down|j j j"
	"detail-bottom|G"
	"back|Escape"
	"summary|m"
	"summary-before|["
	"summary-down|j j"
	"summary-back|Escape"
	"help|?"
	"help-closed|x"
	"last|G"
	"first|g"
	"pagedown|NPage"
	"filter-prompt|/"
	"filter|lit:debug Enter"
	"filter-detail|Enter"
	"filter-back|Escape"
	"filter-clear|/ BSpace BSpace BSpace BSpace BSpace Enter"
	"state|f"
	"state2|f"
	"window|t"
	"window2|t"
)

tm() { tmux -S "$OUT/tmux-$1.sock" -f /dev/null "${@:2}"; }

# settle: capture both panes until two captures 0.3 s apart agree for both
# (at most 10 s), then write them as step files.
settle() { # RUN STEP
	local run=$1 step=$2 i a1 b1 a2 b2
	a1=$(tm old capture-pane -p -t tui)
	b1=$(tm new capture-pane -p -t tui)
	for i in $(seq 1 33); do
		sleep 0.3
		a2=$(tm old capture-pane -p -t tui)
		b2=$(tm new capture-pane -p -t tui)
		if [ "$a1" = "$a2" ] && [ "$b1" = "$b2" ] && [ -n "${a2//[[:space:]]/}" ]; then
			break
		fi
		a1=$a2
		b1=$b2
	done
	printf '%s\n' "$a2" >"$OUT/old/$run/$step.txt"
	printf '%s\n' "$b2" >"$OUT/new/$run/$step.txt"
}

send() { # KEYS...
	local k
	for k in "$@"; do
		for tag in old new; do
			if [[ $k == lit:* ]]; then
				tm "$tag" send-keys -t tui -l "${k#lit:}"
			else
				tm "$tag" send-keys -t tui "$k"
			fi
		done
		sleep 0.3
	done
}

run_tui() { # RUN USER ARGS...
	local run=$1 user=$2
	shift 2
	mkdir -p "$OUT/old/$run" "$OUT/new/$run"
	local tag bin c
	for tag in old new; do
		bin=$OLD
		[ "$tag" = new ] && bin=$NEW
		c="env NO_COLOR=1 TZ=UTC TERM=xterm-256color $bin --config $CONF tui $*"
		[ "$user" != root ] && c="runuser -u $user -- $c"
		tm "$tag" new-session -d -s tui -x "$COLS" -y "$ROWS" "$c; sleep 600"
	done
	local s name keys
	for s in "${steps[@]}"; do
		name=${s%%|*}
		keys=${s#*|}
		# shellcheck disable=SC2086
		[ -n "$keys" ] && send $keys
		settle "$run" "$name"
	done
	for tag in old new; do tm "$tag" kill-server 2>/dev/null || true; done
}

run_tui node-root root --all
run_tui node-"$OTHER" "$OTHER"
run_tui month-root root --db "$MONTH" --all
run_tui month-"$OTHER" "$OTHER" --db "$MONTH"

# Lines that carry the binary's own path are not output.
norm() { sed -e "s#$OLD#BIN#g; s#$NEW#BIN#g" "$1"; }
# shellcheck source=scripts/compare-lib.sh
. "$ROOT/scripts/compare-lib.sh"
compare_old_new "$OUT" '*.txt' compare-tui screens
