#!/bin/bash
# Start gating: tests/e2e/jobs/cloudsql.yaml through `rearguard inject
# --gate`: the proxy first, then the agent with its postStart hook
# `rearguard wait ready`, then the app. The proxy stand-in turns ready 5 s
# after its start; the kubelet starts the app only after the hook returned:
# the app's start (its status, and its first log line) comes after the
# stand-in logged "turned ready", and the Job completes.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy --ready-after 5s
inject tests/e2e/jobs/cloudsql.yaml --gate
order=$(/usr/bin/python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(" ".join(c["name"] for c in d["spec"]["template"]["spec"]["containers"]))' "$T/injected.yaml")
[ "$order" = "cloud-sql-proxy rearguard batch" ] || fail "inject --gate ordered the containers: $order"
job "$T/injected.yaml" --command 'batch=["sh", "-c", "echo started; sleep 1; echo billed"]'
job_wait Complete 180
evidence "gate: tests/e2e/jobs/cloudsql.yaml | rearguard inject --gate"

expect_code cloud-sql-proxy 0
expect_code rearguard 0
expect_code batch 0
ready=$(event_ms cloud-sql-proxy "turned ready")
proxy_started=$(event_ms cloud-sql-proxy "started")
in_order "$proxy_started" "$ready" - "the proxy's start -> ready"
[ "$GAP_MS" -ge 5000 ] || fail "the stand-in turned ready $GAP_MS ms after its start, before its 5 s"
# The app's first line is timed when the runtime read it: after the app started.
in_order "$ready" "$(log_ms batch started)" - "the proxy ready -> the app's first line"
gated=$GAP_MS
# The kubelet reports whole seconds: the app's start is not before the second the proxy turned ready in.
in_order "$((ready / 1000 * 1000))" "$(started_ms batch)" - "the proxy ready (its second) -> the app's startedAt"
in_order "$(started_ms cloud-sql-proxy)" "$(started_ms rearguard)" - "the proxy's startedAt -> the agent's"
summary_is stopped sidecars 0 outcome
say "proxy ready -> app's first line: $gated ms; apply -> Complete: $WALL_MS ms"
