#!/bin/bash
# Zero config: the agent has no --sidecar and no REARGUARD_SIDECARS. Two
# proxies (the Istio and Cloud SQL stand-ins, with their real command
# lines) are detected by their processes, and the agent logs each detection
# with its evidence; both are stopped by their presets' endpoints and the
# Job completes.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_busybox
# pilot-agent's command is the manifest's (argv[1] must be "proxy").
image_proxy docker.io/istio/proxyv2 /usr/local/bin/pilot-agent
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy --ready-after 300ms
job tests/cluster/jobs/zero-config.yaml
job_wait Complete 180
evidence "zero-config: no --sidecar, pilot-agent and cloud-sql-proxy detected"

for c in rearguard istio-proxy cloud-sql-proxy app; do
	expect_code "$c" 0
done
ctr_logs rearguard >"$T/agent.log"
/usr/bin/python3 - "$T/agent.log" <<'PY' || fail "the agent's log does not show both detections"
import json, sys
found = {}
for line in open(sys.argv[1]):
    try:
        l = json.loads(line)
    except ValueError:
        continue
    if l.get("msg") == "sidecar detected":
        found[l.get("sidecar")] = l.get("evidence")
for name, want in (("istio", "argv[0]=pilot-agent"), ("cloudsql", "cloud-sql-proxy")):
    print("# detected %s: %s" % (name, found.get(name)))
    if want not in (found.get(name) or ""):
        sys.exit(1)
PY
summary
[ "$(jq_py "$T/summary.json" 'len(d["sidecars"])')" = 2 ] || fail "the summary has not 2 sidecars: $(cat "$T/summary.json")"
summary_is '[]' fails_pod
[ -n "$(event_ms istio-proxy "stop request received")" ] || fail "pilot-agent (istio-proxy) got no stop request"
[ -n "$(event_ms cloud-sql-proxy "stop request received")" ] || fail "cloud-sql-proxy got no stop request"
say "apply -> Complete: $WALL_MS ms"
