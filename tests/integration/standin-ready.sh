#!/bin/bash
# The stand-ins' --ready-after is a floor: "turned ready" is logged no sooner
# than the full delay after "started", in the log's own whole milliseconds.
# Tests compare those two lines (tests/cluster/gate.sh wants 5,000 ms for
# 5s); a stand-in that took its start before it logged it, rounded down, said
# 4,999 ms about one run in 25. 200 stand-ins with a 2 ms delay, in a
# network namespace of their own.
. "$RG_SRCDIR/tests/integration/lib.sh"

ln -sf standin "$BIN/cloud-sql-proxy"
cat >"$T/runs.sh" <<'RUNS'
ip link set lo up || exit 2
for i in $(seq 200); do
	rm -f "$1/ev"
	"$2" --ready-after 2ms --log "$1/ev" & p=$!
	for t in $(seq 2500); do
		grep -q "turned ready" "$1/ev" 2>/dev/null && break
		sleep 0.002
	done
	kill "$p"; wait "$p" 2>/dev/null
	# One that never turns ready says so at once, not after 200 such waits.
	grep -q "turned ready" "$1/ev" || { echo "run $i: never turned ready within 5 s"; exit 1; }
	awk -v run="$i" '/ started$/ { s = $1 } / turned ready$/ { r = $1 }
		END { if (r - s < 2) print "run " run ": ready " r - s " ms after its start" }' "$1/ev"
done
RUNS
unshare --net bash "$T/runs.sh" "$T" "$BIN/cloud-sql-proxy" >"$T/short" 2>&1 || fail "the runs failed: $(tail -n 3 "$T/short")"
[ ! -s "$T/short" ] || fail "$(wc -l <"$T/short") of 200 short of --ready-after 2ms, first: $(head -n 1 "$T/short")"
say "200 stand-ins, each ready no sooner than 2 ms after its logged start"
exit 0
