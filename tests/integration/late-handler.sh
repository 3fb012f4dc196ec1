#!/bin/bash
# A sidecar stopped by SIGTERM that starts after the app is done (listed
# after it, started once it has exited) and sets up its SIGTERM handler
# only a second after its exec, as a program with start-up work does. The
# agent sees it at once and would signal it before the handler is there:
# it would die of SIGTERM (143) and fail the pod. Instead the agent looks
# at its root's signal masks (/proc/PID/status) until it takes SIGTERM,
# then signals it. Checked: the wait and its end are logged; the sidecar
# got SIGTERM after its handler was set up and exited 0; the summary says
# stopped, with exit code 0, and only the app fails the pod. Then the same
# with real nginx (stop=signal:QUIT), which sets up its handlers once it has
# read its configuration: it takes its QUIT and exits 0.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit

pod_start
ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
app_false_first fb
ctr_start proxy 1002 "$BIN/fluent-bit" --handler-delay 1s --log "$EVENTS"

expect_exit agent 20 0
expect_exit proxy 5 0
[ "$(events_count fluent-bit "got SIGTERM")" = 1 ] || fail "the sidecar did not take its SIGTERM"
grep -q "waiting for fb to catch SIGTERM" "$T/agent.log" || fail "the wait for the handler is not logged"
grep -q "fb is ready for SIGTERM: stopping" "$T/agent.log" || fail "the end of the wait is not logged"
no_process_left proxy
summary_is stopped sidecars 0 outcome
summary_is 0 sidecars 0 exit_code
fails_pod_app false 1

[ -x /usr/sbin/nginx ] || { say "no nginx: its round skipped"; exit 0; }
uid=$(id -u www-data 2>/dev/null) || uid=33
N=$T/nginx
nginx_conf "$N" "$uid"
new_pod
ctr_start agent "$uid" "$BIN/rearguard" -s 'name=nginx,match=nginx,stop=signal:QUIT' --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
agent_scanned
app_false_first nginx
ctr_start nginx "$uid" /usr/sbin/nginx -p "$N" -c "$N/nginx.conf" -e "$N/error.log" -g 'daemon off;'
expect_exit agent 20 0
expect_exit nginx 10 0
grep -q "nginx is ready for SIGQUIT: stopping" "$T/agent.log" || fail "the agent did not see nginx catch SIGQUIT"
no_process_left nginx
summary_is stopped sidecars 0 outcome
summary_is 0 sidecars 0 exit_code
fails_pod_app false 1
exit 0
