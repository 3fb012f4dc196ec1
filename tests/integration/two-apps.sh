#!/bin/bash
# Two apps that end at different times, without --apps: the sidecar is
# stopped only after the second one exits.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit quick slow
pod_start
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --dir "$EMPTYDIR" --log-format json \
	--termination-log "$RUN/termination-log"
agent_scanned
ctr_start quick 1001 "$BIN/quick" --run 500ms --log "$EVENTS"
ctr_start slow 1003 "$BIN/slow" --run 2500ms --exit 0 --log "$EVENTS"

expect_exit agent 15 0
quick=$(event_ms quick "exit 0")
slow=$(event_ms slow "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$quick" ] && [ -n "$slow" ] && [ -n "$term" ] || fail "missing events"
[ "$term" -ge "$slow" ] || fail "sidecar stopped at $term, before the second app exited at $slow"
assert_between "$((term - slow))" 0 3000 "ms from the last app's exit to the SIGTERM"
assert_between "$((slow - quick))" 1500 10000 "the apps ended at different times"
summary_is 0 apps 1 exit_code
[ "$(grep -c 'app container exited' "$T/agent.log")" = 2 ] || fail "both exits logged"
# --log-format json: every line one object with ts, level and msg; the last one carries the summary.
/usr/bin/python3 - "$T/agent.log" <<'PY' || fail "the JSON log is not one object per line"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
assert all({"ts", "level", "msg"} <= o.keys() for o in objs)
assert objs[-1]["msg"] == "finished" and objs[-1]["summary"]["sidecars"][0]["outcome"] == "stopped"
assert any(o.get("role") == "app" and o.get("name") == "slow" for o in objs)
PY
say "quick exit -> slow exit -> SIGTERM: 0, $((slow - quick)), $((term - quick)) ms"
