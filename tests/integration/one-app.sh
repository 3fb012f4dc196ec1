#!/bin/bash
# One app and one signal-stopped sidecar: the app works for a second and
# exits 0; the agent stops the sidecar right after and exits 0, leaving the
# summary in the termination log and as its last log line.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/rearguard" --sidecar 'match=fluent-bit,stop=signal:TERM' --apps 1 \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 1s --exit 0 --log "$EVENTS"

expect_exit agent 15 0
expect_exit proxy 5 0
expect_exit app 1 0

app_exit=$(event_ms job "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events: app exit '$app_exit', sidecar SIGTERM '$term'"
assert_between "$((term - app_exit))" 0 3000 "ms from app exit to the sidecar's SIGTERM"
say "app exit -> sidecar SIGTERM: $((term - app_exit)) ms"

[ -s "$RUN/termination-log" ] || fail "no summary in the termination log"
summary_is 0 exit_code
summary_is apps-done reason
summary_is job apps 0 name
summary_is 0 apps 0 exit_code
summary_is stopped sidecars 0 outcome
summary_is signal:TERM sidecars 0 method
last=$(tail -n 1 "$T/agent.log")
case $last in *finished*'"outcome":"stopped"'*) ;; *) fail "last log line is not the summary: $last" ;; esac
grep -q 'role=pause' "$T/agent.log" || fail "the container table does not show pause"
grep -q 'role=sidecar sidecar=fluent-bit' "$T/agent.log" || fail "the table does not show the sidecar"
grep -Eq 'container (appeared|role changed).*role=app.*name=job' "$T/agent.log" || fail "the app's arrival is not logged"
exit 0
