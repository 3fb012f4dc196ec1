#!/bin/bash
# A sidecar of another uid, and an agent without CAP_KILL: the agent cannot
# signal it, says how to fix that, and exits 1.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
alias_bin job
pod_start
ctr_start proxy 1337 "$BIN/fluent-bit" --log "$EVENTS" --started "$RUN/proxy.up"
wait_for 5 test -e "$RUN/proxy.up" || fail "sidecar did not start"
ctr_start agent 1002 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 200ms

ctr_wait agent 10
[ "$RC" = 1 ] || fail "agent exited $RC, want 1"
grep -q "not permitted to signal the sidecar" "$T/agent.log" || fail "no EPERM error line"
grep -q "runAsUser" "$T/agent.log" && grep -q "KILL capability" "$T/agent.log" || fail "the fix is not named"
ctr_running proxy || fail "the sidecar should still run: nobody could stop it"
[ "$(json_get "$RUN/termination-log" sidecars 0 outcome)" = not-permitted ] || fail "summary outcome"
[ "$(json_get "$RUN/termination-log" exit_code)" = 1 ] || fail "summary exit_code"
