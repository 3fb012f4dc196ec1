#!/bin/bash
# The agent as a non-root uid without any capability (the sidecar's uid, as
# the manifests run it): discovery, pidfds and the stop all work.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
alias_bin job
pod_start
ctr_start proxy 65532 "$BIN/fluent-bit" --log "$EVENTS" --started "$RUN/proxy.up"
wait_for 5 test -e "$RUN/proxy.up" || fail "sidecar did not start"
ctr_start agent 65532 "$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
caps=$(awk '/^CapEff/ {print $2}' "/proc/$(ctr_pid agent)/status")
[ "$caps" = 0000000000000000 ] || fail "agent has capabilities: $caps"
uid=$(awk '/^Uid/ {print $2}' "/proc/$(ctr_pid agent)/status")
[ "$uid" = 65532 ] || fail "agent runs as uid $uid"
ctr_start app 1001 "$BIN/job" --run 500ms --exit 0 --log "$EVENTS"
ctr_wait agent 10
[ "$RC" = 0 ] || fail "agent exited $RC"
grep -q "pidfd=yes" "$T/agent.log" || fail "pidfds not used without privileges"
[ "$(json_get "$RUN/termination-log" apps 0 exit_code)" = 0 ] || fail "exit code of another uid's app unknown"
[ "$(json_get "$RUN/termination-log" sidecars 0 outcome)" = stopped ] || fail "sidecar not stopped"
