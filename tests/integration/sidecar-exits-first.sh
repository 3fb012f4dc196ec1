#!/bin/bash
# A sidecar that exits before the apps, as one does on a pod deletion
# without a preStop hook: the kubelet's SIGTERM reaches every container at
# once, and the sidecar exits at once while the app finishes its work.
# First the sidecar alone gets its SIGTERM while the app runs; then all
# three get theirs together, the agent held (SIGSTOP) until the app and the
# sidecar have both exited, so that it learns of both exits in one breath.
# Checked each time: the sidecar's exit is a warning; the summary says
# exited-before-stop (not stopped, not not-found) with its exit code; no
# signal was sent to it; the agent exits 0 after the app.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job

# start: the sidecar, the agent, and an app that takes a while to end on SIGTERM.
start() {
	new_pod
	fake_start proxy 1002 fluent-bit
	ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log"
	agent_scanned
	fake_start app 1001 job --run 30s --on TERM:delay:300ms:0
	wait_for 10 grep -q "role=app" "$T/agent.log" || fail "the agent did not see the app"
}

# checked WARNING: what must hold once the agent is done.
checked() {
	expect_exit agent 20 0
	expect_exit app 5 0
	grep -q "sidecar container exited $1" "$T/agent.log" || fail "no warning that the sidecar exited $1"
	[ "$(agent_lines 'sent SIG')" = 0 ] || fail "a signal was sent: $(grep 'sent SIG' "$T/agent.log")"
	summary_is exited-before-stop sidecars 0 outcome
	summary_is 0 sidecars 0 exit_code
	summary_is 0 apps 0 exit_code
}

start
kill -TERM "$(ctr_pid proxy)"
expect_exit proxy 5 0
kill -TERM "$(ctr_pid app)"
checked "before the apps were done"

for _ in 1 2 3; do
	start
	kill -STOP "$(ctr_pid agent)"
	kill -TERM "$(ctr_pid proxy)" "$(ctr_pid app)"
	expect_exit proxy 5 0
	expect_exit app 5 0
	kill -TERM "$(ctr_pid agent)"
	kill -CONT "$(ctr_pid agent)"
	checked "before"
done
exit 0
