#!/bin/bash
# One app and one signal-stopped sidecar: the app works for a second and
# exits 0; the agent stops the sidecar right after and exits 0, leaving the
# summary in the termination log and as its last log line.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
alias_bin job
pod_start
ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS" --started "$RUN/proxy.up"
wait_for 5 test -e "$RUN/proxy.up" || fail "sidecar did not start"
ctr_start agent 1002 "$BIN/rearguard" --sidecar 'match=fluent-bit,stop=signal:TERM' --apps 1 \
	--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 1s --exit 0 --log "$EVENTS"

ctr_wait agent 15
[ "$RC" = 0 ] || fail "agent exited $RC"
ctr_wait proxy 5
[ "$RC" = 0 ] || fail "sidecar exited $RC, not 0 after its SIGTERM"
ctr_wait app 1
[ "$RC" = 0 ] || fail "app exited $RC"

app_exit=$(event_ms job "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$app_exit" ] && [ -n "$term" ] || fail "missing events: app exit '$app_exit', sidecar SIGTERM '$term'"
assert_between "$((term - app_exit))" 0 1000 "ms from app exit to the sidecar's SIGTERM"
say "app exit -> sidecar SIGTERM: $((term - app_exit)) ms"

[ -s "$RUN/termination-log" ] || fail "no summary in the termination log"
[ "$(json_get "$RUN/termination-log" exit_code)" = 0 ] || fail "summary exit_code"
[ "$(json_get "$RUN/termination-log" reason)" = apps-done ] || fail "summary reason"
[ "$(json_get "$RUN/termination-log" apps 0 name)" = job ] || fail "summary app name"
[ "$(json_get "$RUN/termination-log" apps 0 exit_code)" = 0 ] || fail "summary app exit code"
[ "$(json_get "$RUN/termination-log" sidecars 0 outcome)" = stopped ] || fail "summary sidecar outcome"
[ "$(json_get "$RUN/termination-log" sidecars 0 method)" = signal:TERM ] || fail "summary method"
last=$(tail -n 1 "$T/agent.log")
case $last in *finished*'"outcome":"stopped"'*) ;; *) fail "last log line is not the summary: $last" ;; esac
grep -q 'role=pause' "$T/agent.log" || fail "the container table does not show pause"
grep -q 'role=sidecar sidecar=fluent-bit' "$T/agent.log" || fail "the table does not show the sidecar"
grep -Eq 'container (appeared|role changed).*role=app.*name=job' "$T/agent.log" || fail "the app's arrival is not logged"
exit 0
