#!/bin/bash
# Apps whose containers live less than a rescan interval: the agent expects
# 20 (--apps 20), and each runs for 40 ms, the runtime's init included,
# one after the other. A rescan every 100 ms alone would miss about one in
# five, and the agent would wait for the missing ones until
# --startup-timeout. The agent looks at the pod's pid counter every 10 ms
# while a process is expected, and a pid handed out brings the rescan
# forward, also when a rescan began after the pid was handed out but
# before its process showed in /proc: every app is seen, with its exit
# code, and the sidecar is stopped once the last one is done.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
alias_bin fluent-bit
APPS=20

pod_start

fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --apps "$APPS" --app '^job$' \
	--startup-timeout 60s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
# The mechanism under test, not the machine's load: an app lives 40 ms, and a build beside the
# test may keep the agent off the processor longer than that, which no looking can make up for
# (docs/decisions.md, "Rescans while a container is expected"). At a real-time priority the agent
# gets the processor when its timer fires, as it would on a node with room to spare.
chrt -f -p 10 "$(ctr_pid agent)" >/dev/null 2>&1 ||
	say "the agent runs at its normal priority (chrt refused): a loaded machine may starve it"
for i in $(seq "$APPS"); do
	# Each with its own exit code, so that each report is the app's own.
	ctr_start "app$i" 1001 "$BIN/job" --run 40ms --exit "$((i % 3))" --log "$EVENTS"
	ctr_wait "app$i" 5
	[ "$RC" = "$((i % 3))" ] || fail "app$i exited $RC, want $((i % 3))"
done
# Well before --startup-timeout: every app was seen, each with its own code.
expect_exit agent 20 0
# The termination log has the short form for so many containers; the log line has them all.
codes=$(/usr/bin/python3 -c '
import json, sys
line = [l for l in open(sys.argv[1]) if " finished " in l][-1]
apps = json.loads(line.split(" summary=", 1)[1])["apps"]
print(" ".join(str(a["exit_code"]) for a in sorted(apps, key=lambda a: a["container"])))' "$T/agent.log")
want=$(for i in $(seq "$APPS"); do printf '%s ' "$((i % 3))"; done)
[ "$codes " = "$want" ] || fail "the apps' exit codes, in the order they started: $codes, want $want"
# The whole summary (done): the termination log's short form for 22 containers (558 bytes each) puts
# the failed apps first, and the sidecar's entry fits only when its figures are short.
[ "$(json_get "$EMPTYDIR/done" sidecars 0 outcome)" = stopped ] ||
	fail "the sidecar's outcome in done: $(json_get "$EMPTYDIR/done" sidecars 0 outcome)"
say "$(agent_lines "container exited before a rescan saw its program run") of $APPS exited before a rescan saw their program"
exit 0
