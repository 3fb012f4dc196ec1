#!/bin/bash
# Two HTTP sidecars, Istio and the Cloud SQL proxy: the ready file waits
# for both; the stop goes in reverse --sidecar order, the Cloud SQL proxy
# first, and Istio's stop request only once the Cloud SQL proxy is gone.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
pod_start
# Each turns ready last in one of two pods: the file waits for the later one, whichever it is.
standin_start mesh 1337 pilot-agent --ready-after 300ms
standin_start db 65532 cloud-sql-proxy --quitquitquit --health-check --ready-after 1s --term-drain 0
ctr_start agent 1002 "$BIN/rearguard" --sidecar istio --sidecar cloudsql --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
ready_file_after cloud-sql-proxy 5
ready_file_after envoy 1
new_pod
standin_start mesh 1337 pilot-agent --ready-after 1s
standin_start db 65532 cloud-sql-proxy --quitquitquit --health-check --ready-after 300ms --term-drain 0
ctr_start agent 1002 "$BIN/rearguard" --sidecar istio --sidecar cloudsql --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
ready_file_after envoy 5
ready_file_after cloud-sql-proxy 1
[ "$(cat "$EMPTYDIR/ready")" = "$(printf 'istio\ncloudsql')" ] || fail "the ready file does not name both"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 200ms --log "$EVENTS"

expect_exit agent 10 0
expect_exit db 2 0
expect_exit mesh 2 0
db_stop=$(event_ms cloud-sql-proxy "stop request received")
db_exit=$(event_ms cloud-sql-proxy "exit 0")
mesh_stop=$(event_ms pilot-agent "stop request received")
[ -n "$db_stop" ] && [ -n "$db_exit" ] && [ -n "$mesh_stop" ] || fail "missing events"
[ "$db_exit" -le "$mesh_stop" ] || fail "Istio's stop ($mesh_stop) came before the Cloud SQL proxy was gone ($db_exit)"
summary_is stopped sidecars 0 outcome
summary_is stopped sidecars 1 outcome
exit 0
