#!/bin/bash
# A plain Job with the Cloud SQL Auth Proxy (tests/e2e/jobs/cloudsql.yaml,
# no rearguard, none of the proxy's stop flags) through `rearguard inject`,
# played on podman with the stand-in proxy, which serves the stop endpoint
# only when started with --quitquitquit and exits 143 on SIGTERM unless
# --exit-zero-on-sigterm, as the real one does. The Job completes: every
# container exits 0 and the proxy is stopped by its own endpoint.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy --ready-after 300ms
inject_job tests/e2e/jobs/cloudsql.yaml
[ "$(injected 'list(t["spec"]["containers"])[0]["name"]')" = rearguard ] || fail "the agent is not first"
[ "$(injected 'c["cloud-sql-proxy"]["args"][:3]')" = "['--quitquitquit', '--health-check', '--exit-zero-on-sigterm']" ] ||
	fail "the proxy's flags were not added: $(injected 'c["cloud-sql-proxy"]["args"]')"
[ "$(injected 'env["REARGUARD_SIDECARS"], env["REARGUARD_APPS"], t["spec"]["shareProcessNamespace"]')" = "('cloudsql', '1', True)" ] ||
	fail "agent configuration: $(injected 'env')"
play "$T/injected.yaml" --command 'batch=["sh", "-c", "echo billing; sleep 2; touch /e2e/app-exit; echo billed"]'
pod_wait 60

expect_code batch 0
expect_code cloud-sql-proxy 0
expect_code rearguard 0
in_order "$(marker_ms app-exit)" "$(event_ms cloud-sql-proxy "stop request received")" 5000 \
	"the app's exit -> the stop request"
[ -z "$(event_ms cloud-sql-proxy "got SIGTERM")" ] || fail "the proxy needed a signal"
summary_is stopped sidecars 0 outcome
summary_is 0 apps 0 exit_code
say "app exit -> stop request received: $GAP_MS ms; pod wall time $WALL_MS ms"
