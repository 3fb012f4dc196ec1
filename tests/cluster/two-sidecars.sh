#!/bin/bash
# Two apps and two sidecars (tests/cluster/jobs/two-sidecars.yaml): Debian's
# nginx (a master and two workers), stopped with SIGQUIT, and the Cloud SQL
# proxy stand-in, stopped through its endpoint. Both apps fetch a page from
# nginx. The sidecars are stopped in reverse --sidecar order: the proxy
# logged its exit (its own clock) before nginx's master logged the SIGQUIT
# (the runtime's log time, which can only be later than the line), and the
# proxy finished no later than nginx (the kubelet's finish times). Every
# container exits 0 and the Job completes.
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_nginx
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy --ready-after 300ms
job tests/cluster/jobs/two-sidecars.yaml
job_wait Complete 180
evidence "two-sidecars: two apps, the Cloud SQL proxy and nginx (SIGQUIT)"

for c in rearguard cloud-sql-proxy nginx extract load; do
	expect_code "$c" 0
done
codes_agree app:0=extract app:1=load cloudsql=cloud-sql-proxy nginx=nginx
for c in extract load; do
	ctr_logs "$c" | grep -q '^served by ' || fail "$c got no page from nginx: $(ctr_logs "$c")"
done
summary_is stopped sidecars 0 outcome
summary_is stopped sidecars 1 outcome
summary_is signal:QUIT sidecars 0 method
workers=$(ctr_logs nginx | grep -cE 'start worker process [0-9]+$')
[ "$workers" = 2 ] || fail "nginx started $workers workers, want 2 (none respawned mid-stop)"
proxy_exit=$(event_ms cloud-sql-proxy 'exit 0')
nginx_quit=$(log_ms nginx 'signal 3 (SIGQUIT) received')
in_order "$(event_ms cloud-sql-proxy 'stop request received')" "$proxy_exit" - "the proxy: its stop request -> its exit"
in_order "$proxy_exit" "$nginx_quit" - "the proxy's exit -> nginx's SIGQUIT (reverse order)"
gap=$GAP_MS
in_order "$(finished_ms cloud-sql-proxy)" "$(finished_ms nginx)" - "the proxy finished -> nginx finished"
last_app=$(printf '%s\n' "$(finished_ms extract)" "$(finished_ms load)" | sort -n | tail -n 1)
in_order "$last_app" "$(finished_ms cloud-sql-proxy)" - "the last app finished -> the proxy finished"
say "the proxy's exit -> nginx's SIGQUIT: $gap ms; apply -> Complete: $WALL_MS ms"
