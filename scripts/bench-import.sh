#!/usr/bin/env bash
# bench-import.sh BIN [ROUNDS=1]: `gpuprof import sacct --file` of a
# 1,000,000-job sacct text file into a fresh database, beside
# `sqlite3 .import` of the same file into a plain table, in the same run
# (A B A B …, so the machine's noise hits both). The file comes from
# tools/mksacct (seed 1) in gpuprof's own field order with epoch times,
# in two shapes:
#   steps:  what gpuprof's own sacct command prints (a header line, each
#           job followed by its batch, extern and srun steps with Slurm's
#           GPU readings): 1,000,000 jobs on about 3.4 million lines;
#   allocs: sacct -X --noheader, one line a job: 1,000,000 lines.
# Prints, per shape and round, both wall times, CPU seconds (user +
# system), peak RSS and the ratios. With BIN2 (another build, such as the
# one before a change), each round runs it too, between BIN and the
# .import, so both are measured in the same run. Exits non-zero only on
# errors, never because the target (issue #41: CPU ratio ≤ 5) is missed.
# SHAPES="steps allocs" picks shapes; BENCH_KEEP=1 keeps the work
# directory; JOBS changes the number of jobs.
set -euo pipefail
BIN=$(cd "$(dirname "${1:?usage: bench-import.sh GPUPROF_BIN [ROUNDS [BIN2]]}")" && pwd)/$(basename "$1")
ROUNDS=${2:-1}
BIN2=
[ -z "${3:-}" ] || BIN2=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
GO=${GO:-go}
JOBS=${JOBS:-1000000}
SHAPES=${SHAPES:-steps allocs}
cd "$(dirname "$0")/.."
command -v sqlite3 >/dev/null || { echo "bench-import.sh: needs the sqlite3 command-line shell" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-import.sh: needs /usr/bin/time (GNU time) for peak RSS" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-import.XXXXXX")
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$W"' EXIT

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
echo "machine: $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo); $(date -u '+%F %T UTC'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$("$BIN" --version 2>/dev/null | head -1 || echo 'gpuprof version ?'); sqlite3 $(sqlite3 --version | cut -d' ' -f1-2)"
[ -z "$BIN2" ] || echo "BIN2: $("$BIN2" --version 2>/dev/null | head -1 || echo 'gpuprof version ?')"
"$GO" build -o "$W/mksacct" ./tools/mksacct/mksacct

calc() { awk "BEGIN {printf \"%.2f\", $*}"; }
# run NAME CMD…: wall time (WALL, s), CPU time (CPU, s: user + system)
# and peak RSS (RSS, MiB) of CMD, its stdout in $W/NAME.out.
run() {
	local name=$1 t0 t1 m u s
	shift
	t0=$(date +%s.%N)
	/usr/bin/time -f '%M %U %S' -o "$W/rss" "$@" >"$W/$name.out"
	t1=$(date +%s.%N)
	WALL=$(calc "$t1 - $t0")
	read -r m u s < <(tail -1 "$W/rss")
	RSS=$(( m / 1024 ))
	CPU=$(calc "$u + $s")
}
# importA NAME BIN: BIN's import of $f into a fresh database; its WALL,
# CPU and RSS as run's.
importA() {
	rm -f "$W"/import.db*
	run "$1" "$2" --db "$W/import.db" import sacct --file "$f"
	grep -q "^$JOBS jobs read: $JOBS new" "$W/$1.out" ||
		{ echo "gpuprof import did not take every job:"; cat "$W/$1.out"; exit 1; } >&2
	echo "round $r $1 gpuprof import sacct --file: $WALL s, CPU $CPU s, peak RSS $RSS MiB, database $(( $(stat -c %s "$W/import.db") >> 20 )) MiB"
}

for shape in $SHAPES; do
	f="$W/$shape.txt"
	case $shape in
	steps) flags=() ;;
	allocs) flags=(-allocs) ;;
	*) echo "bench-import.sh: unknown shape $shape" >&2; exit 1 ;;
	esac
	"$W/mksacct" -jobs "$JOBS" "${flags[@]}" -out "$f"
	echo "== $shape: $JOBS jobs, $(wc -l <"$f") lines, $(( $(stat -c %s "$f") >> 20 )) MiB"
	for r in $(seq "$ROUNDS"); do
		rm -f "$W"/plain.db*
		importA A "$BIN"
		a=$WALL a_cpu=$CPU
		if [ -n "$BIN2" ]; then
			importA A2 "$BIN2"
			a2=$WALL a2_cpu=$CPU
		fi
		if [ "$shape" = allocs ]; then
			# No header line: name the columns, or .import would take the
			# first job for them.
			sqlite3 "$W/plain.db" "CREATE TABLE plain ($(seq -s, -f 'c%g' 1 "$(head -1 "$f" | awk -F'|' '{print NF}')"))"
		fi
		run sqlite3 sqlite3 "$W/plain.db" '.mode list' '.separator |' ".import $f plain"
		b=$WALL b_cpu=$CPU
		echo "round $r B sqlite3 .import:             $b s, CPU $b_cpu s, peak RSS $RSS MiB, $(sqlite3 "$W/plain.db" 'SELECT count(*) FROM plain') rows"
		verdict=MISSED
		awk "BEGIN {exit !($a_cpu <= 5 * $b_cpu)}" && verdict=met
		echo "round $r $shape ratio $(calc "$a / $b")× wall, $(calc "$a_cpu / $b_cpu")× CPU; target ≤ 5× CPU (issue #41): $verdict"
		[ -z "$BIN2" ] || echo "round $r $shape BIN2 ratio $(calc "$a2 / $b")× wall, $(calc "$a2_cpu / $b_cpu")× CPU"
	done
	rm -f "$f"
done
