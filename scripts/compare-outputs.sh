#!/usr/bin/env bash
# compare-outputs.sh OLD_BIN NEW_BIN [OUT]: every reading command of two
# gpuprof builds on the same databases, as the owner (root) and as another
# user, and a diff of what each printed. For a behaviour-neutral change
# (issue #41) every pair must be identical, or the difference listed.
#
# Databases: the demo (scripts/demo.sh run with OLD_BIN: its node database
# and its simulated month) and, unless SKIP_BIG=1, a 1,000,000-job month
# (tools/benchdb/mkbenchdb). Both builds read copies of the same files.
# Needs root (for the other user: runuser -u nobody).
set -euo pipefail
OLD=$(readlink -f "${1:?usage: compare-outputs.sh OLD_BIN NEW_BIN [OUT]}")
NEW=$(readlink -f "${2:?usage: compare-outputs.sh OLD_BIN NEW_BIN [OUT]}")
OUT=${3:-$(mktemp -d /tmp/compare-outputs.XXXXXX)}
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
chmod 755 "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The other user owns jobs in the demo's month (bob, uid 2717 there).
OTHER=${OTHER_USER:-bob}
id "$OTHER" >/dev/null 2>&1 || useradd -M -u "${OTHER_UID:-2717}" "$OTHER"

echo "compare-outputs: old $OLD, new $NEW, under $OUT"
"$ROOT/scripts/demo.sh" "$OLD" "$OUT/demo" >"$OUT/demo.log" 2>&1
kill "$(cat "$OUT/demo/agent.pid" 2>/dev/null)" 2>/dev/null || true
sleep 1
chmod -R a+rX "$OUT/demo"

LAST=$(date -d "$(date +%Y-%m-01) -1 month" +%Y-%m)
THIS=$(date +%Y-%m-01)
CONF="$OUT/demo/gpuprof.toml"
MONTH="$OUT/demo/month.db"
ACONF="$OUT/demo/analysis.toml"
# One of the month's jobs that belongs to the other user, one of another's.
MINE=$(sqlite3 "$MONTH" "SELECT min(job_id) FROM sched_jobs WHERE user = '$OTHER'")
THEIRS=$(sqlite3 "$MONTH" "SELECT min(job_id) FROM sched_jobs WHERE user <> '$OTHER'")

# One command per line: NAME|ARGS (run with --config CONF).
cmds=(
	"jobs|jobs"
	"jobs-limit|jobs --limit 3 --sort id"
	"jobs-json|jobs --json"
	"show|show 101"
	"show-json|show 101 --json"
	"notices|notices"
	"month-jobs|jobs --db $MONTH"
	"month-show-mine|show $MINE --db $MONTH"
	"month-show-theirs|show $THEIRS --db $MONTH"
	"profiles|profiles --db $MONTH --since $LAST-01 --until $THIS"
	"profiles-json|profiles --db $MONTH --since $LAST-01 --until $THIS --json"
	"recommend|recommend --db $MONTH --since $LAST-01 --until $THIS --analysis-config $ACONF"
	"recommend-json|recommend --db $MONTH --since $LAST-01 --until $THIS --analysis-config $ACONF --json"
	"plan|plan --db $MONTH --since $LAST-01 --until $THIS --analysis-config $ACONF"
	"plan-json|plan --db $MONTH --since $LAST-01 --until $THIS --analysis-config $ACONF --json"
	"whatif|whatif --db $MONTH --month $LAST --add 2xH100"
	"whatif-json|whatif --db $MONTH --month $LAST --add 2xH100 --json"
	"report-md|report --db $MONTH --month $LAST --format md --analysis-config $ACONF --out ."
	"report-json|report --db $MONTH --month $LAST --format json --analysis-config $ACONF --out ."
	"default-window|profiles --db $MONTH"
)

# A report writes files into the working directory: append them to the
# command's output, then remove them.
collect() {
	local f
	for f in "$1"/gpuprof-report-*; do
		[ -e "$f" ] || continue
		{ echo "== ${f##*/}"; cat "$f"; } >>"$1/$2.out"
		rm -f "$f"
	done
}

run_all() { # BIN TAG USER CONF CMDS...
	local bin=$1 tag=$2 user=$3 conf=$4
	shift 4
	local dir="$OUT/$tag/$user"
	mkdir -p "$dir"
	chmod 777 "$OUT/$tag" "$dir"
	local c name args
	for c in "$@"; do
		name=${c%%|*}
		args=${c#*|}
		if [ "$user" = root ]; then
			# shellcheck disable=SC2086
			(cd "$dir" && timeout 600 "$bin" --config "$conf" $args >"$dir/$name.out" 2>&1; echo "rc=$?" >>"$dir/$name.out") || true
			collect "$dir" "$name"
		else
			# shellcheck disable=SC2086
			(cd "$dir" && timeout 600 runuser -u "$OTHER" -- "$bin" --config "$conf" $args >"$dir/$name.out" 2>&1; echo "rc=$?" >>"$dir/$name.out") || true
			collect "$dir" "$name"
		fi
	done
}

for who in root "$OTHER"; do
	run_all "$OLD" old "$who" "$CONF" "${cmds[@]}"
	run_all "$NEW" new "$who" "$CONF" "${cmds[@]}"
done

if [ "${SKIP_BIG:-0}" != 1 ]; then
	BIG="$OUT/big"
	mkdir -p "$BIG"
	(cd "$ROOT" && go build -o "$BIG/mkbenchdb" ./tools/benchdb/mkbenchdb)
	"$BIG/mkbenchdb" -out "$BIG/big.db" >"$BIG/mk.log" 2>&1
	chmod -R a+rX "$BIG"
	cat >"$BIG/gpuprof.toml" <<CONF
cluster = "bench"
db = "$BIG/big.db"
CONF
	chmod a+r "$BIG/gpuprof.toml"
	big=(
		"big-jobs|jobs --limit 200"
		"big-profiles|profiles --since 2026-10-01 --until 2026-11-01"
		"big-profiles-json|profiles --since 2026-10-01 --until 2026-11-01 --json"
		"big-recommend|recommend --since 2026-10-01 --until 2026-11-01"
		"big-report-json|report --month 2026-10 --format json --out ."
		"big-report-md|report --month 2026-10 --format md --out ."
	)
	for who in root "$OTHER"; do
		run_all "$OLD" old "$who" "$BIG/gpuprof.toml" "${big[@]}"
		run_all "$NEW" new "$who" "$BIG/gpuprof.toml" "${big[@]}"
	done
fi

# Lines that carry the binary's own path or a run's wall time are not output.
# The store reads a large window with two readers at once and the analysis
# adds floating-point figures in the order they arrive: the last digits of
# a long decimal vary between two runs of the same build on the 1M-job
# month, so such a number is compared to 9 significant digits there. The
# task profiles add GPU time exactly since ccdba67 (the same in every
# order): big-profiles* are compared digit for digit.
norm() {
	sed -e "s#$OLD#BIN#g; s#$NEW#BIN#g" -e 's/"generated": "[^"]*"/"generated": "T"/; s/generated [0-9-]* [0-9:]* UTC/generated T/' "$1" |
		if [[ $1 == */big-* && $1 != */big-profiles* ]]; then perl -pe 's/(-?\d+\.\d{6,})/sprintf("%.9g", $1)/ge'; else cat; fi
}
# shellcheck source=scripts/compare-lib.sh
. "$ROOT/scripts/compare-lib.sh"
compare_old_new "$OUT" '*.out' compare-outputs outputs
