#!/bin/bash
# Zero-config: no --sidecar at all. Two meshes' proxies (the Istio and Cloud
# SQL stand-ins, with their real command lines) are detected by their
# processes, each with its evidence, and stopped with their presets; a
# one-shot run of a sidecar's program (vault kv get) is an app, which the
# drain waits for; --sidecar auto adds detection to an explicit spec.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job vault fluent-bit
pod_start
standin_start istio 1337 pilot-agent proxy sidecar
standin_start sql 1337 cloud-sql-proxy --quitquitquit --health-check --exit-zero-on-sigterm --port=5432 p:r:i
ctr_start agent 1337 "$BIN/rearguard" --apps 2 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
wait_for 10 test -e "$EMPTYDIR/ready" || fail "no ready file: the detected sidecars were not polled ready"
fake_start app 1001 job --run 300ms
fake_start secrets 1001 vault kv get secret/db --run 1200ms
expect_exit agent 15 0
grep -q 'sidecar detected sidecar=istio evidence="argv\[0\]=pilot-agent, argv\[1\]=proxy' "$T/agent.log" ||
	fail "the Istio detection and its evidence are not logged"
grep -q 'sidecar detected sidecar=cloudsql' "$T/agent.log" || fail "the Cloud SQL detection is not logged"
grep -q "a sidecar's program run once: an app, not a sidecar.*vault" "$T/agent.log" ||
	fail "vault kv get is not logged as an app"
[ -n "$(event_ms pilot-agent "stop request received")" ] || fail "istio got no stop request"
[ -n "$(event_ms cloud-sql-proxy "stop request received")" ] || fail "cloud-sql-proxy got no stop request"
in_order "$(event_ms vault "exit 0")" "$(event_ms cloud-sql-proxy "stop request received")" \
	"the one-shot vault run's exit -> cloud-sql-proxy's stop request"
expect_exit istio 5 0
expect_exit sql 5 0
# The two detected, and no other.
summary_len sidecars 2
summary_is stopped sidecars 0 outcome
summary_is stopped sidecars 1 outcome

say "auto beside an explicit spec"
new_pod
standin_start istio 1337 pilot-agent proxy sidecar
fake_start logs 1337 fluent-bit
ctr_start agent 1337 "$BIN/rearguard" -s 'match=fluent-bit' -s auto --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
fake_start app 1001 job --run 300ms
expect_exit agent 15 0
[ -n "$(event_ms pilot-agent "stop request received")" ] || fail "the detected istio got no stop request"
[ -n "$(event_ms fluent-bit "got SIGTERM")" ] || fail "the explicit sidecar was not stopped"
summary_is fluent-bit sidecars 0 name
summary_is istio sidecars 1 name
exit 0
