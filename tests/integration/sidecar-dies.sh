#!/bin/bash
# A sidecar SIGKILLed while the apps run (the out-of-memory killer, or a
# person), under restartPolicy Never: nothing restarts it.
# Without --on-sidecar-exit the agent says what happened and what it means,
# and leaves the apps alone: they get no signal, and the agent drains once
# they end. With --on-sidecar-exit=fail it stops the apps as the kubelet
# would: SIGTERM to each app container's main process, SIGKILL to every
# process of one still running --kill-after later; an app of another uid,
# which it may not signal, is logged with the fix; then the other sidecar
# is stopped as usual. The summary says why, with every exit code. Under
# OnFailure the kubelet restarts the sidecar, the option does nothing, and
# the agent stops the new container after the app.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit vector job stubborn other

# proxy_killed [AGENT_OPTION...]: a pod of the sidecar fb, the agent (with AGENT_OPTIONs) and an app
# that runs until it is signalled; once the agent saw the app, fb is SIGKILLed.
proxy_killed() {
	new_pod
	fake_start proxy 1002 fluent-bit
	ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --apps 1 "$@" \
		--dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
	agent_scanned
	fake_start app 1002 job --run 5m
	wait_for 10 grep -q "role=app" "$T/agent.log" || fail "the agent did not see the app"
	kill -KILL "$(ctr_pid proxy)"
	expect_exit proxy 5 137
}

# Without the option.
proxy_killed --kill-after 1s
wait_for 10 grep -q "sidecar fb was killed by SIGKILL (exit code 137) while the apps ran" "$T/agent.log" ||
	fail "the sidecar's death is not explained"
grep -q "under restartPolicy Never nothing restarts it" "$T/agent.log" || fail "what it means is not said"
grep -q "on-sidecar-exit=fail stops them instead" "$T/agent.log" || fail "the option is not named"
if grep -q "a stop over HTTP" "$T/agent.log"; then fail "advice about a stop that was never sent"; fi
ctr_running app || fail "the app was stopped without --on-sidecar-exit=fail"
ctr_running agent || fail "the agent did not wait for the app"
[ "$(events_count job 'got SIG')" = 0 ] || fail "the app got a signal without --on-sidecar-exit=fail"
kill -TERM "$(ctr_pid app)"
expect_exit app 5 0
expect_exit agent 20 0
summary_is apps-done reason
summary_is exited-before-stop sidecars 0 outcome
summary_is 137 sidecars 0 exit_code
summary_is 0 apps 0 exit_code
summary_is null apps 0 signal
fails_pod_is "$RUN/termination-log" "sidecar:fb:137"
# Kept beside the second pod's (RG_KEEP=1 keeps them both).
cp "$T/agent.log" "$T/agent-warn.log"

# Under OnFailure the kubelet restarts the sidecar (a new container, the same program): the agent
# says so, takes the new one for the same sidecar, and stops it after the app.
proxy_killed --restart-policy OnFailure --on-sidecar-exit fail
wait_for 10 grep -q "the kubelet restarts a container that exited non-zero" "$T/agent.log" ||
	fail "OnFailure: the restart is not foretold"
grep -q "the apps are not stopped: under restartPolicy OnFailure" "$T/agent.log" ||
	fail "OnFailure: --on-sidecar-exit=fail does not say why it does nothing"
fake_start proxy-restarted 1002 fluent-bit
# The app runs on, unsignalled: the SIGTERM that ends it is the test's.
ctr_running app || fail "OnFailure: the app was stopped"
[ "$(events_count job 'got SIG')" = 0 ] || fail "OnFailure: the app got a signal from the agent"
kill -TERM "$(ctr_pid app)"
expect_exit app 5 0
expect_exit agent 20 0
expect_exit proxy-restarted 5 0
[ "$(events_count fluent-bit 'got SIGTERM')" = 1 ] || fail "the restarted sidecar was not stopped"
in_order "$(event_ms job "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" \
	"OnFailure: the app's exit -> the restarted sidecar's SIGTERM"
summary_is stopped sidecars 0 outcome

# With --on-sidecar-exit=fail.
new_pod
fake_start proxy 1002 fluent-bit
fake_start shipper 1002 vector
ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' -s 'name=vec,match=vector' --apps 3 \
	--on-sidecar-exit fail --kill-after 1s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
fake_start job 1002 job --run 5m --on TERM:die
fake_start stubborn 1002 stubborn --run 5m --on TERM:ignore --children 2
fake_start other 1001 other --run 5m
wait_for 10 apps_seen 3 || fail "the agent did not see the three apps"
[ "$(events_count fluent-bit 'got SIG')$(events_count job 'got SIG')" = 00 ] || fail "a signal before the death"
kill -KILL "$(ctr_pid proxy)"
expect_exit proxy 5 137
expect_exit job 10 143
expect_exit stubborn 10 137
no_process_left stubborn
[ "$(events_count job 'got SIGTERM')" = 1 ] || fail "the app did not get SIGTERM"
[ "$(events_count stubborn 'got SIGTERM')" -ge 1 ] || fail "the stubborn app did not get SIGTERM first"
wait_for 10 grep -q "not permitted to signal the app" "$T/agent.log" || fail "EPERM is not logged"
grep "not permitted to signal the app" "$T/agent.log" | grep -q "securityContext.runAsUser" ||
	fail "EPERM does not name the fix"
# The app of another uid runs on; the sidecars stay for it, as for any app.
ctr_running other || fail "the app of another uid was stopped"
ctr_running shipper || fail "the other sidecar was stopped while an app ran"
kill -TERM "$(ctr_pid other)"
expect_exit other 5 0
expect_exit agent 20 0
expect_exit shipper 5 0
[ "$(events_count vector 'got SIGTERM')" = 1 ] || fail "the other sidecar was not stopped"
grep -q "stopping the apps as the kubelet would" "$T/agent.log" || fail "the stop of the apps is not logged"
summary_is sidecar-exited reason
summary_is exited-before-stop sidecars 0 outcome
summary_is 137 sidecars 0 exit_code
summary_is stopped sidecars 1 outcome
summary_is job apps 0 name
summary_is 143 apps 0 exit_code
summary_is SIGTERM apps 0 signal
summary_is stubborn apps 1 name
summary_is 137 apps 1 exit_code
summary_is SIGKILL apps 1 signal
summary_is other apps 2 name
summary_is null apps 2 signal
summary_is 0 apps 2 exit_code
fails_pod_is "$RUN/termination-log" "sidecar:fb:137" "app:job:143" "app:stubborn:137"
exit 0
