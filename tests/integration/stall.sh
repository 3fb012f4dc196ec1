#!/bin/bash
# The agent stopped (SIGSTOP) while it expects an app, as a node too busy
# to give it the processor would hold it: the app lives and dies in that
# time, and no look can see it. The agent says what happened when it runs
# again: how long it did not run while a container was expected, and what
# does not depend on its timing (rearguard run, apps/NAME). The longest
# such stall is the summary's stalled_ms; the app never seen, it waits for
# it until --startup-timeout, and says so. (That an agent never stalled
# says nothing of the kind is test-decide's: here the machine may stall
# it.)
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
pod_start
fake_start proxy 1002 fluent-bit
shipper_agent --startup-timeout 3s
agent_scanned
kill -STOP "$(ctr_pid agent)"
at_exit 'kill -CONT "$(ctr_pid agent)" 2>/dev/null || true'
stopped=$(now_ms)
ctr_start app 1001 "$BIN/job" --run 10ms --log "$EVENTS"
expect_exit app 10 0
sleep 0.5
kill -CONT "$(ctr_pid agent)"
held=$(($(now_ms) - stopped))
ctr_wait agent 15
[ "$RC" != timeout ] || fail "the agent did not end after --startup-timeout"
grep -q "the agent did not run for .* while a container was expected" "$T/agent.log" ||
	fail "the stall is not said: $(grep -c . "$T/agent.log") lines of log"
summary_is startup-timeout reason
stalled=$(json_get "$RUN/termination-log" stalled_ms | cut -d. -f1)
[ "$stalled" -ge 500 ] && [ "$stalled" -le "$((held + 2000))" ] ||
	fail "stalled_ms $stalled, want from 500 to the $held ms the agent was stopped"
say "stopped $held ms; the agent said a stall of $stalled ms, and exited $RC at --startup-timeout"

exit 0
