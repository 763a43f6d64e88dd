#!/usr/bin/env bash
# compare-import.sh OLD NEW: the same sacct inputs imported by two gpuprof
# binaries into fresh databases, and the databases compared byte for byte
# (`sqlite3 DB .dump`, with the columns that hold the clock set to 0), as
# are the imports' outputs (less their jobs/s). The inputs: a
# tools/mksacct allocs file of JOBS jobs (default 238,710: a bulk load);
# every sacct fixture under slurmext/testdata in turn into one database,
# and those of sacct/ and real/ again into another; 20,000 allocs, then
# 20,000 jobs with steps, then 40,000 allocs into a third (updates; batch
# transactions); the steps then the 40,000 into a fourth. Exits 1 on a
# difference. Heavy: run it under the shared lock.
set -euo pipefail
OLD=$(cd "$(dirname "${1:?usage: compare-import.sh OLD NEW}")" && pwd)/$(basename "$1")
NEW=$(cd "$(dirname "${2:?usage: compare-import.sh OLD NEW}")" && pwd)/$(basename "$2")
JOBS=${JOBS:-238710}
cd "$(dirname "$0")/.."
T=$PWD/slurmext/testdata
W=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-compare-import.XXXXXX")
trap 'rm -rf "$W"' EXIT
go build -o "$W/mksacct" ./tools/mksacct/mksacct
"$W/mksacct" -jobs "$JOBS" -allocs -out "$W/big.txt"
"$W/mksacct" -jobs 20000 -allocs -out "$W/a20k.txt"
"$W/mksacct" -jobs 20000 -out "$W/s20k.txt"
"$W/mksacct" -jobs 40000 -allocs -out "$W/a40k.txt"

# imports BIN DIR: every import into DIR's databases, their log in DIR/log.
imports() {
	local bin=$1 o=$2 f
	mkdir -p "$o"
	imp() { local db=$1; shift; echo "== ${*#"$W"/}" >>"$o/log"; "$bin" --db "$o/$db.db" import sacct --cluster lab "$@" >>"$o/log" 2>&1 && echo "rc 0" >>"$o/log" || echo "rc $?" >>"$o/log"; }
	imp big --file "$W/big.txt"
	for f in "$T"/real/*.txt "$T"/real/*.json "$T"/sacct/* "$T"/handmade/*.txt "$T"/sacctjson/*; do imp fix --file "$f"; done
	for f in "$T"/sacct/* "$T"/real/*.txt; do imp fix2 --file "$f"; done
	for f in a20k s20k a40k; do imp mix --file "$W/$f.txt"; done
	for f in s20k a40k; do imp mix2 --file "$W/$f.txt"; done
	for db in big fix fix2 mix mix2; do
		sqlite3 "$o/$db.db" "UPDATE sched_jobs SET updated_at = 0; UPDATE import_state SET updated_at = 0; UPDATE sched_events SET reported_at = 0"
		sqlite3 "$o/$db.db" .dump >"$o/$db.dump"
	done
	sed -E 's/; [0-9]+ jobs\/s$//' "$o/log" >"$o/log.norm"
}
imports "$OLD" "$W/old"
imports "$NEW" "$W/new"
same=1
for f in big fix fix2 mix mix2; do
	if cmp -s "$W/old/$f.dump" "$W/new/$f.dump"; then
		echo "$f: same .dump ($(wc -l <"$W/new/$f.dump") lines, sha256 $(sha256sum <"$W/new/$f.dump" | cut -c1-16))"
	else
		echo "$f: .dump DIFFERS"; same=0
	fi
done
if diff "$W/old/log.norm" "$W/new/log.norm"; then
	echo "outputs: the same ($(grep -c '^rc 0' "$W/new/log.norm") imports exit 0, $(grep -c '^rc [1-9]' "$W/new/log.norm") not)"
else
	same=0
fi
[ "$same" = 1 ]
