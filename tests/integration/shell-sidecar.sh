#!/bin/bash
# A sidecar started as sh -c 'prog' without exec: the container's root is
# the shell, which gets the stop signal (stop=signal:TERM) and dies of it;
# its child, orphaned, never hears of the stop and is killed by the SIGKILL
# at the end of the escalation, as under the kubelet. The agent said so at
# start-up (the root is a shell: use exec), and warns of the shell's 143.
# The same sidecar with exec: no warning, the program itself gets SIGTERM
# and exits 0, no escalation.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin shipper job

# shell_sidecar CODE: a container whose shell runs CODE ("$0" "$@": the shipper and its options);
# returns once the shipper runs.
shell_sidecar() {
	rm -f "$RUN/shipper.up"
	ctr_start shipper 1002 /bin/sh -c "$1" "$BIN/shipper" --log "$EVENTS" --started "$RUN/shipper.up"
	wait_for 5 test -e "$RUN/shipper.up" || fail "the shipper did not start"
}
agent() {
	ctr_start agent 1002 "$BIN/rearguard" -s 'name=shipper,match=shipper,stop=signal:TERM' --apps 1 \
		--stop-timeout 1s --kill-after 1s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
	agent_scanned
	# Pre-flight comes before the app (the agent logs its view of the pod at the first scan).
	sleep 0.3
	cp "$T/agent.log" "$RUN/agent-before-app.log"
	ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"
	expect_exit agent 20 0
}

say "sh -c 'prog' without exec"
pod_start
shell_sidecar '"$0" "$@"'
[ "$(ctr_left shipper | wc -l)" = 2 ] || fail "want the shell and the shipper in the container"
agent
expect_exit shipper 1 143
no_process_left shipper
hint=$(grep -E '^[^ ]+ warn .*sidecar=shipper' "$RUN/agent-before-app.log" | grep -i 'shell' | grep 'exec' || true)
[ "$(printf '%s' "$hint" | grep -c .)" = 1 ] ||
	fail "want one warning at start-up that the root is a shell without exec: $(grep warn "$RUN/agent-before-app.log")"
[ "$(agent_lines 'warn .*sidecar=shipper.*(shell.*exec|exec.*shell)|warn .*(shell.*exec|exec.*shell).*sidecar=shipper')" = 1 ] ||
	fail "the shell warning was not logged once"
[ "$(events_count shipper "got SIG")" = 0 ] || fail "the orphan got a signal it could handle: $(grep shipper "$EVENTS")"
[ "$(events_count shipper "exit")" = 0 ] || fail "the orphan exited by itself"
[ "$(agent_lines 'sent SIGTERM sidecar=shipper processes=1$')" -ge 1 ] || fail "SIGTERM did not go to the shell"
[ "$(agent_lines 'sent SIGKILL sidecar=shipper processes=1$')" = 1 ] || fail "the orphan was not killed"
lat=$(json_get "$RUN/termination-log" sidecars 0 stop_latency_ms)
assert_between "${lat%.*}" 900 6000 "ms from SIGTERM to the orphan gone (after --stop-timeout 1s, --kill-after 1s)"
summary_is 143 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log" sidecar:shipper:143
say "orphan killed ${lat%.*} ms after the shell's SIGTERM"

say "sh -c 'exec prog'"
new_pod
shell_sidecar 'exec "$0" "$@"'
agent
expect_exit shipper 1 0
no_process_left shipper
[ "$(agent_lines 'warn .*(shell|exec)')" = 0 ] || fail "a shell warning without a shell: $(grep warn "$T/agent.log")"
[ "$(events_count shipper "got SIGTERM")" = 1 ] || fail "the shipper did not get SIGTERM"
[ "$(agent_lines 'sent SIGKILL')" = 0 ] || fail "an escalation"
summary_is stopped sidecars 0 outcome
summary_is 0 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log"
exit 0
