# compare-lib.sh: sourced by compare-outputs.sh and compare-tui.sh, the one
# home of their last step.
#
# compare_old_new OUT PATTERN NAME NOUN: diffs every OUT/old/*/PATTERN with
# its twin under OUT/new/, both read through the caller's norm function;
# prints each pair that differs (its first 20 lines of diff), then "NAME: N
# NOUN identical, M differ (NOUN under OUT)"; returns non-zero when any pair
# differs.
compare_old_new() {
	local out=$1 pattern=$2 name=$3 noun=$4 same=0 differ=0 f g
	for f in "$out"/old/*/$pattern; do
		g=${f/\/old\//\/new\/}
		if diff -q <(norm "$f") <(norm "$g") >/dev/null; then
			same=$((same + 1))
		else
			differ=$((differ + 1))
			echo "DIFFERS: ${f#"$out"/old/}"
			diff <(norm "$f") <(norm "$g") | head -20 || true
		fi
	done
	echo "$name: $same $noun identical, $differ differ ($noun under $out)"
	[ "$differ" = 0 ]
}
