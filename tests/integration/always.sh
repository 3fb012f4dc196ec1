#!/bin/bash
# restartPolicy Always, a long-running pod's life: Debian's nginx as the
# sidecar (stopped by SIGQUIT), apps that the kubelet restarts. An app
# that exits 0, then one that fails: nothing is drained, nginx runs on,
# each exit is said with what Always makes of it, and the restart is
# matched to the attempt it replaces. A drain file is ignored, and said.
# The sidecar's container dies (SIGKILL to every process of it) and the
# kubelet starts it again: the agent neither stops nor waits for it, and
# says so. Then the pod is deleted (SIGTERM to the agent and the app): the
# deletion's look finds the sidecar's new container, which is stopped
# after the app, with SIGQUIT; the agent exits 0, its summary says how
# long it held the sidecar.
. "$RG_SRCDIR/tests/integration/lib.sh"

need_program /usr/sbin/nginx nginx
alias_bin job
pod_start
N=$T/nginx
nginx_conf "$N" 1002

# lines_are PATTERN N: the agent's log has N lines matching PATTERN (for wait_for, which runs it again).
lines_are() {
	[ "$(agent_lines "$1")" = "$2" ]
}

# nginx_start NAME: a container NAME running nginx as uid 1002; returns once it runs.
nginx_start() {
	rm -f "$N/nginx.pid"
	ctr_start "$1" 1002 /usr/sbin/nginx -p "$N" -c "$N/nginx.conf" -g 'daemon off;'
	wait_for 10 test -s "$N/nginx.pid" || fail "nginx did not start"
}

nginx_start proxy
ctr_start agent 1002 "$BIN/rearguard" -s 'name=nginx,match=nginx,stop=signal:QUIT' --apps 1 \
	--restart-policy Always --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
grep -q 'restart_policy=Always' "$T/agent.log" || fail "the agent does not say its restart policy"

# The app exits 0, then its restart fails: the kubelet restarts both.
ctr_start app 1001 "$BIN/job" --run 300ms --exit 0 --log "$EVENTS"
expect_exit app 5 0
wait_for 5 grep -q "app exited under restartPolicy Always: the kubelet restarts it" "$T/agent.log" ||
	fail "the app's exit is not explained"
# Restarts are looked for once a second: this one lives long enough to be seen.
ctr_start app-2 1001 "$BIN/job" --run 1500ms --exit 3 --log "$EVENTS"
expect_exit app-2 5 3
wait_for 5 lines_are 'app exited under restartPolicy Always' 2 || fail "the second exit is not said"
ctr_start app-3 1001 "$BIN/job" --log "$EVENTS" --started "$RUN/app.up"
wait_for 5 test -e "$RUN/app.up" || fail "the third attempt did not start"
wait_for 5 lines_are 'app restarted' 2 || fail "the restarts are not matched: $(grep -c 'role=app' "$T/agent.log") apps"
sleep 1
ctr_running proxy || fail "nginx was stopped while the pod runs"
ctr_running agent || fail "the agent ended while the pod runs"
[ ! -e "$EMPTYDIR/apps-done" ] || fail "apps-done written while the pod runs"

# A drain file: ignored.
put_atomic "$EMPTYDIR/drain" ""
wait_for 5 grep -q "drain file ignored: under restartPolicy Always" "$T/agent.log" || fail "the drain file is not refused"
sleep 0.5
ctr_running proxy || fail "nginx was stopped for the drain file"

# The sidecar's container dies, and the kubelet starts it again.
kill -KILL $(ctr_left proxy)
expect_exit proxy 5 137
wait_for 5 grep -q "Under restartPolicy Always the kubelet restarts it" "$T/agent.log" ||
	fail "the sidecar's death is not explained"
nginx_start proxy-2
sleep 1
ctr_running agent || fail "the agent ended after the sidecar died"
[ "$(agent_lines 'sent SIG')" = 0 ] || fail "the agent signalled something while the pod runs"

# The deletion: SIGTERM to the agent and to the app, at once.
kill -TERM "$(ctr_pid agent)" "$(ctr_pid app-3)"
expect_exit app-3 5 0
expect_exit agent 20 0
expect_exit proxy-2 5 0
in_order "$(exit_ms app-3)" "$(exit_ms proxy-2)" "the app's exit -> the restarted nginx's"
[ "$(agent_lines 'sent SIGQUIT sidecar=nginx processes=1$')" = 1 ] ||
	fail "the restarted nginx did not get one SIGQUIT: $(grep 'sent SIG' "$T/agent.log")"
summary_is apps-done reason
summary_is stopped sidecars 0 outcome
summary_is restarted apps 0 state
summary_is restarted apps 1 state
summary_is exited apps 2 state
[ "$(json_get "$RUN/termination-log" held_ms)" != null ] || fail "the summary does not say how long it held"
fails_pod_is "$RUN/termination-log"
