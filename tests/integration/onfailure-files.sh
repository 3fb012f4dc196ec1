#!/bin/bash
# restartPolicy OnFailure with exit codes from files only: the agent runs
# under a seccomp filter that makes PIDFD_GET_INFO fail (as on kernels before
# 6.13; tests/helpers/enosys --pidfd-info), and the app is wrapped in
# rearguard run, which reports. A reported failure keeps the sidecar for the
# restart; the restarted attempt reports 0 and the sidecar is stopped at
# once, not after --restart-grace.
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
assert_between "$((term - ok_exit))" 0 1000 "ms from the reported success to the SIGTERM"
summary_is restarted apps 0 state
summary_is 3 apps 0 exit_code
summary_is 0 apps 1 exit_code
summary_is 0 apps 1 report exit_code
exit 0
