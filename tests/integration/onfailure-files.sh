#!/bin/bash
# restartPolicy OnFailure with exit codes from files only: the agent runs
# under a seccomp filter that makes PIDFD_GET_INFO fail (as on kernels before
# 6.13; tests/helpers/enosys --pidfd-info), and the app is wrapped in
# rearguard run, which reports. A reported failure keeps the sidecar for the
# restart; the restarted attempt reports 0 and the sidecar is stopped at
# once, not after --restart-grace. Second pod: two apps under rearguard run
# (their main processes have the same name): each report goes to its own
# container, so neither waits for a restart.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/enosys" --pidfd-info -- "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 \
	--restart-policy OnFailure --restart-grace 30s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/rearguard" run --no-wait --dir "$EMPTYDIR" --name job -- \
	"$BIN/job" --run 300ms --exit 3 --name attempt1 --log "$EVENTS"
expect_exit app 5 3
sleep 1
ctr_running proxy || fail "the sidecar was stopped after a reported failure"
grep -q "exit codes of other containers are unknown on this kernel" "$T/agent.log" ||
	fail "the kernel path was not off"
grep -q "app failed under restartPolicy OnFailure: keeping the sidecars for its restart" "$T/agent.log" ||
	fail "the wait for the restart is not explained"

# The kubelet's restart: a new container with the same command.
ctr_start app-restarted 1001 "$BIN/rearguard" run --no-wait --dir "$EMPTYDIR" --name job -- \
	"$BIN/job" --run 500ms --exit 0 --name attempt2 --log "$EVENTS"
expect_exit agent 10 0
ok_exit=$(event_ms attempt2 "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$ok_exit" ] && [ -n "$term" ] || fail "missing events"
assert_between "$((term - ok_exit))" 0 3000 "ms from the reported success to the SIGTERM"
summary_is restarted apps 0 state
summary_is 3 apps 0 exit_code
summary_is 0 apps 1 exit_code
summary_is 0 apps 1 report exit_code

new_pod
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 "$BIN/enosys" --pidfd-info -- "$BIN/rearguard" -s 'match=fluent-bit' --apps 2 \
	--restart-policy OnFailure --restart-grace 30s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start a 1001 "$BIN/rearguard" run --no-wait --dir "$EMPTYDIR" --name a -- \
	"$BIN/job" --run 2s --name a --log "$EVENTS"
ctr_start b 1003 "$BIN/rearguard" run --no-wait --dir "$EMPTYDIR" -- "$BIN/job" --run 1s --name b --log "$EVENTS"
expect_exit agent 10 0
last_exit=$(event_ms a "exit 0")
term=$(event_ms fluent-bit "got SIGTERM")
[ -n "$last_exit" ] && [ -n "$term" ] || fail "missing events in the second pod"
assert_between "$((term - last_exit))" 0 3000 "ms from the last app's report to the SIGTERM"
for name in a job; do
	grep -q "runs rearguard run: its report will be apps/NAME container=[0-9]* report=$name" "$T/agent.log" ||
		fail "the run name $name is not noted"
done
[ "$(grep -c 'matches no app container' "$T/agent.log")" = 0 ] || fail "a report was not matched to its container"
exit 0
