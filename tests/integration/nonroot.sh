#!/bin/bash
# The agent as a non-root uid without any capability (the sidecar's uid, as
# the manifests run it): discovery, pidfds and the stop all work.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
fake_start proxy 65532 fluent-bit
AGENT_UID=65532 shipper_agent
agent_scanned
caps=$(awk '/^CapEff/ {print $2}' "/proc/$(ctr_pid agent)/status")
[ "$caps" = 0000000000000000 ] || fail "agent has capabilities: $caps"
uid=$(awk '/^Uid/ {print $2}' "/proc/$(ctr_pid agent)/status")
[ "$uid" = 65532 ] || fail "agent runs as uid $uid"
ctr_start app 1001 "$BIN/job" --run 500ms --exit 0 --log "$EVENTS"
expect_exit agent 10 0
grep -q "pidfd=yes" "$T/agent.log" || fail "pidfds not used without privileges"
summary_is 0 apps 0 exit_code
summary_is stopped sidecars 0 outcome
