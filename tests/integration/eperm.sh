#!/bin/bash
# A sidecar of another uid, and an agent without CAP_KILL: the agent cannot
# signal it, says how to fix that, and exits 1.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fake_start proxy 1337 fluent-bit
shipper_agent
agent_scanned
ctr_start app 1001 "$BIN/job" --run 200ms

expect_exit agent 10 1
grep -q "not permitted to signal the sidecar" "$T/agent.log" || fail "no EPERM error line"
grep -q "runAsUser" "$T/agent.log" && grep -q "KILL capability" "$T/agent.log" || fail "the fix is not named"
ctr_running proxy || fail "the sidecar should still run: nobody could stop it"
summary_is not-permitted sidecars 0 outcome
summary_is 1 exit_code
# kubectl describe pod shows the termination message's start: the cause comes first.
grep -q '^{"error":"sidecar [^"]* not stopped: not permitted to signal it; run rearguard as its uid' \
	"$RUN/termination-log" || fail "the termination message does not begin with the cause: $(head -c 200 "$RUN/termination-log")"
