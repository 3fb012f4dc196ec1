#!/bin/bash
# rearguard run as an app container's entrypoint: it waits for the agent's
# ready, runs the job, forwards signals to it, writes apps/job with its exit
# code and exits with that code; the agent drains on the report. Then: a command
# that does not exist (127), and ready that never comes (124, not started).
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fake_start proxy 1002 fluent-bit
ctr_start app 1001 "$BIN/rearguard" run --dir "$EMPTYDIR" --name job -- \
	"$BIN/job" --on TERM:exit:7 --log "$EVENTS" --started "$RUN/job.up"
sleep 0.5
[ -z "$(event_ms job started)" ] || fail "the job started before ready"
grep -q "waiting for ready" "$T/app.log" || fail "the wait is not logged"
# The agent writes ready once the sidecar (no ready URL) is seen.
shipper_agent
wait_for 5 test -e "$RUN/job.up" || fail "the job did not start after the agent's ready"
grep -q "wrote the ready file" "$T/agent.log" || fail "the agent did not write ready"

kill -HUP "$(ctr_pid app)"
wait_for 5 grep -q "job .* got SIGHUP" "$EVENTS" || fail "SIGHUP was not forwarded"
kill -USR1 "$(ctr_pid app)"
wait_for 5 grep -q "job .* got SIGOTHER" "$EVENTS" || fail "SIGUSR1 was not forwarded"
kill -TERM "$(ctr_pid app)"
expect_exit app 5 7
expect_exit agent 10 0
[ "$(cat "$EMPTYDIR/apps/job")" = 7 ] || fail "apps/job says '$(cat "$EMPTYDIR/apps/job")', want 7"
[ "$(stat -c %a "$EMPTYDIR/apps/job")" = 644 ] || fail "apps/job is not readable by all"
summary_is 7 apps 0 exit_code
summary_is job apps 0 report name
grep -q "differ" "$T/agent.log" && fail "the report and the kernel's code should agree"

# A command that does not exist.
new_pod
ctr_start app 1001 "$BIN/rearguard" run --no-wait --dir "$EMPTYDIR" -- no-such-job --flag
expect_exit app 5 127
grep -q "command not found command=no-such-job" "$T/app.log" || fail "no clear line: $(cat "$T/app.log")"
[ "$(cat "$EMPTYDIR/apps/no-such-job")" = 127 ] || fail "apps/no-such-job does not say 127"

# ready never comes.
ctr_start app2 1001 "$BIN/rearguard" run --timeout 500ms --dir "$EMPTYDIR" --name job -- \
	"$BIN/job" --log "$EVENTS"
expect_exit app2 5 124
[ -z "$(event_ms job started)" ] || fail "the job started without ready"
grep -q "ready did not appear within 500ms: not starting the command" "$T/app2.log" ||
	fail "the timeout is not explained"
[ "$(cat "$EMPTYDIR/apps/job")" = 124 ] || fail "apps/job does not say 124"

# SIGTERM while waiting for ready (the pod is deleted): no start, 143.
ctr_start app3 1001 "$BIN/rearguard" run --dir "$EMPTYDIR" --name job -- "$BIN/job" --log "$EVENTS"
wait_for 5 grep -q "waiting for ready" "$T/app3.log" || fail "not waiting"
kill -TERM "$(ctr_pid app3)"
expect_exit app3 5 143
[ -z "$(event_ms job started)" ] || fail "the job started after SIGTERM"
exit 0
